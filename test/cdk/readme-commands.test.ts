/**
 * Every `cdk deploy` / `cdk synth` command shown in README.md and docs/*.md builds: its
 * `-c key=value` context is fed to the same app wiring `bin/app.ts` uses (bundling skipped; the
 * synth test in app.test.ts bundles). A documented example that the app refuses fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { buildReconcilerApp } from '../../lib/app';

const DOCS = new URL('../../docs/', import.meta.url);
const README = [
  readFileSync(new URL('../../README.md', import.meta.url), 'utf8'),
  ...readdirSync(DOCS).filter((f) => f.endsWith('.md')).map((f) => readFileSync(new URL(f, DOCS), 'utf8')),
].join('\n');

/** The context of each `npx cdk deploy|synth ...` command in the README (continuation lines joined). */
function readmeCdkCommands(): { command: string; context: Record<string, string> }[] {
  const joined = README.replace(/\\\n\s*/g, ' ');
  const out: { command: string; context: Record<string, string> }[] = [];
  for (const m of joined.matchAll(/npx cdk (?:deploy|synth)\b([^\n`]*)/g)) {
    const context: Record<string, string> = {};
    // Quotes are removed as the shell removes them.
    for (const c of m[1].matchAll(/-c\s+([A-Za-z0-9_.:-]+)=(\S+)/g)) context[c[1]] = c[2].replace(/^'(.*)'$/, '$1');
    if (Object.keys(context).length > 0) out.push({ command: m[0].trim(), context });
  }
  return out;
}

describe('README cdk commands', () => {
  const commands = readmeCdkCommands();

  it('finds the documented commands', () => {
    expect(commands.length).toBeGreaterThanOrEqual(2);
    expect(commands.some((c) => c.context.createCluster === 'true')).toBe(true);
    expect(commands.some((c) => c.context.clusters !== undefined)).toBe(true);
  });

  it.each(commands)('builds: $command', ({ context }) => {
    const app = new App({ context: { ...context, 'aws:cdk:bundling-stacks': [] } });
    const stack = buildReconcilerApp(app);
    const template = Template.fromStack(stack);
    // The specs table and the task definition description cache.
    template.resourceCountIs('AWS::DynamoDB::Table', 2);
    template.resourceCountIs('AWS::Lambda::Function', 1);
  });
});

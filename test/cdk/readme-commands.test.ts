/**
 * Every `cdk deploy` / `cdk synth` command shown in README.md and docs/*.md builds: its
 * `-c key=value` context is fed to the same app wiring `bin/app.ts` uses (bundling skipped; the
 * synth test in app.test.ts bundles). A documented example that the app refuses fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { ENV, loadConfig } from '../../lambda/config';
import { ALLOW_LIST_ENV, allowListViolations } from '../../lambda/core/allow-lists';
import { parseSpecsYaml } from '../../lambda/core/spec-yaml';
import { buildReconcilerApp } from '../../lib/app';
import { flat } from '../support/iam-eval';

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

/**
 * The README's quick start (newcomer findings 1 and 3): its deploy is docs/deploy.md's quick start,
 * and the spec it then applies (the `<ManagedClusters>` output put in) is valid and admitted by the
 * allow-lists that deploy sets, while examples/web.yaml is not (the README says so).
 */
describe('the README quick start', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const deployPage = readFileSync(new URL('deploy.md', DOCS), 'utf8');
  const section = readme.slice(readme.indexOf('### 4. Deploy it'), readme.indexOf('\n## ', readme.indexOf('### 4. Deploy it')));
  const contextOf = (text: string) => {
    const m = /npx cdk deploy\b([^\n`]*)/.exec(text.replace(/\\\n\s*/g, ' '));
    return Object.fromEntries([...(m?.[1] ?? '').matchAll(/-c\s+([A-Za-z0-9_.:-]+)=(\S+)/g)].map((c) => [c[1], c[2]]));
  };
  /** The allow-lists the function of a deploy with `context` gets, as the function parses them. */
  const allowListsOf = (context: Record<string, string>) => {
    const stack = buildReconcilerApp(new App({ context: { ...context, 'aws:cdk:bundling-stacks': [] } }));
    const fn = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function'))[0];
    const vars = fn.Properties.Environment.Variables as Record<string, unknown>;
    const lists = Object.fromEntries(Object.values(ALLOW_LIST_ENV).filter((k) => k in vars).map((k) => [k, flat(vars[k])]));
    return loadConfig({ [ENV.specsTable]: 'specs', ...lists }).plan.allow;
  };
  const specOf = (yaml: string, file: string) => {
    const parsed = parseSpecsYaml(yaml, file);
    expect(parsed.errors).toEqual([]);
    const r = parsed.docs[0].result;
    if (!r.ok) throw new Error(`${file}: ${JSON.stringify(r.errors)}`);
    return r.spec;
  };

  it("deploys with docs/deploy.md's quick-start context", () => {
    const readmeContext = contextOf(section);
    expect(readmeContext.createCluster).toBe('true');
    const quickStart = deployPage.slice(deployPage.indexOf('Quick start ('));
    expect(readmeContext).toEqual(contextOf(quickStart));
  });

  it('applies a spec that deploy admits, in the cluster the ManagedClusters output names', () => {
    // Prepare
    const heredoc = /-f - <<'EOF'\n([\s\S]*?)\nEOF\n/.exec(section)?.[1];
    expect(heredoc).toContain('cluster: <ManagedClusters>');
    const spec = specOf((heredoc ?? '').replace('<ManagedClusters>', 'EcsReconciler-ReconcilerCluster1A2B3C4D-AbCdEfGh1234'), 'README.md');
    const web = specOf(readFileSync(new URL('../../examples/web.yaml', import.meta.url), 'utf8'), 'examples/web.yaml');

    // Act
    const allow = allowListsOf(contextOf(section));

    // Assess
    expect(allowListViolations(spec, allow)).toEqual([]);
    expect([...new Set(allowListViolations(web, allow).map((v) => v.list))].sort()).toEqual(['imageRegistries', 'secrets', 'securityGroups', 'subnets']);
    expect(section).toContain('`<ManagedClusters>` are the stack\'s outputs');
  });
});

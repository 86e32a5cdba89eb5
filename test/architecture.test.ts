/**
 * The arrows that must never exist (ARCHITECTURE.md): the core knows no SDK, no simulator and no
 * CDK; the Lambda's code never pulls in the CDK or the simulator.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(ROOT, dir))) {
    const p = join(dir, name);
    if (statSync(join(ROOT, p)).isDirectory()) out.push(...filesUnder(p));
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** Module specifiers of static and dynamic imports and re-exports, resolved to repo paths when relative. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const specs = [
    ...text.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/gm),
    ...text.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm),
    ...text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => m[1]);
  return specs.map((s) => (s.startsWith('.') ? relative(ROOT, resolve(ROOT, dirname(file), s)) : s));
}

const RULES: { case: string; files: string[]; forbidden: RegExp }[] = [
  { case: 'core -> AWS SDK', files: filesUnder('lambda/core'), forbidden: /^@aws-sdk\/|^@smithy\/|^@aws-lambda-powertools\// },
  { case: 'core -> adapters', files: filesUnder('lambda/core'), forbidden: /^lambda\/adapters(\/|$)/ },
  { case: 'core -> local', files: filesUnder('lambda/core'), forbidden: /^local(\/|$)/ },
  { case: 'core -> lib or CDK', files: filesUnder('lambda/core'), forbidden: /^lib(\/|$)|^aws-cdk-lib|^constructs$/ },
  {
    case: 'handler/adapters -> lib, CDK or local',
    files: ['lambda/handler.ts', 'lambda/config.ts', ...filesUnder('lambda/adapters')],
    forbidden: /^lib(\/|$)|^local(\/|$)|^aws-cdk-lib|^constructs$|^bin(\/|$)/,
  },
];

describe('architecture', () => {
  it.each(RULES)('no import $case', ({ files, forbidden }) => {
    expect(files.length).toBeGreaterThan(0);
    const offenders = files.flatMap((f) => importsOf(f).filter((s) => forbidden.test(s)).map((s) => `${f} imports ${s}`));
    expect(offenders).toEqual([]);
  });

  it('sees relative imports (the check itself works)', () => {
    expect(importsOf('lambda/core/planner.ts').some((s) => s.startsWith('lambda/core/'))).toBe(true);
    expect(importsOf('lambda/handler.ts').some((s) => s.startsWith('lambda/adapters/'))).toBe(true);
  });
});

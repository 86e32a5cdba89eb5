/**
 * The arrows that must never exist (docs/development.md, "The shape of the code"): the core knows no SDK, no simulator and no
 * CDK; the Lambda's code never pulls in the CDK or the simulator.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { dictionaryOffences } from './support/dictionary-lint';
import { unguardedStarts } from './support/outside-programs';

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
    case: 'handler/entry/adapters -> lib, CDK or local',
    files: ['lambda/handler.ts', 'lambda/config.ts', ...filesUnder('lambda/entry'), ...filesUnder('lambda/adapters')],
    forbidden: /^lib(\/|$)|^local(\/|$)|^aws-cdk-lib|^constructs$|^bin(\/|$)/,
  },
  {
    // The simulator is the oracle: an ECS of its own, so it must not share the reconciler's idea
    // of what a field means (shared limits and helpers such as ecs-limits and dict are fine).
    case: 'simulator -> vocabulary, spec or canonical task definition',
    files: filesUnder('local/sim'),
    forbidden: /^lambda\/core\/(vocab(\/|$)|reconcile(\/|$)|spec(-yaml)?$|taskdef$|canonical-json$|planner$|plan-service$)/,
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
    expect(importsOf('lambda/handler.ts').some((s) => s.startsWith('lambda/entry/'))).toBe(true);
  });
});

/**
 * Maps keyed by names users or AWS choose are `Map`s or null-prototype objects, and
 * lookups in objects of unknown origin go through `own()` (lambda/core/dict.ts). The fixture is
 * checked in the same program: the first bug found (`cl.services[key.service]` in the planner,
 * which made a service named `constructor` stop every pass) and its relatives must be reported.
 */
describe('dictionaries keyed by chosen names', () => {
  const FIXTURE = join(ROOT, 'lambda/core/__dictionary_lint_fixture__.ts');
  const FIXTURE_TEXT = `
import type { ObservedCluster, ServiceKey } from './types';
import { dict, own } from './dict';
export function bad(cl: ObservedCluster, key: ServiceKey, name: string, src: Record<string, string>) {
  const svc = cl.services[key.service]; // BAD read
  const tags: Record<string, string> = {}; // BAD empty plain object as a dictionary
  tags[name] = 'x'; // BAD write into a plain object
  let reassigned = dict<string>();
  reassigned = {};
  reassigned[name] = 'x'; // BAD: a let can be re-pointed at a plain object
  const found = name in src; // BAD
  Object.assign(tags, src); // BAD
  return { svc, found };
}
export function good(cl: ObservedCluster, key: ServiceKey, name: string, list: string[], i: number) {
  const svc = own(cl.services, key.service);
  const out = dict<string>();
  out[name] = 'x';
  const byName = new Map<string, string>([[name, 'x']]);
  const fixed = cl.services['web'];
  const third = list[i];
  const o = Object.assign({}, { a: 1 });
  delete out[name];
  return { svc, byName, fixed, third, o, has: Object.hasOwn(out, name) };
}
`;
  const files = ['lambda/core', 'lambda/adapters', 'bin', 'local']
    .flatMap(filesUnder)
    .filter((f) => f !== 'lambda/core/dict.ts') // the helpers themselves
    .map((f) => join(ROOT, f));
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  });
  if (!config) throw new Error('tsconfig.json could not be read');
  // One type-checked program for the whole code base (slow on a loaded machine: a generous timeout).
  let offences: ReturnType<typeof dictionaryOffences> | undefined;
  const all = () => (offences ??= dictionaryOffences(files, config.options, new Map([[FIXTURE, FIXTURE_TEXT]])));

  it('no lookup or store by a chosen name reaches Object.prototype in lambda/, bin/ or local/', { timeout: 300_000 }, () => {
    const found = all()
      .filter((o) => o.file !== FIXTURE)
      .map((o) => `${relative(ROOT, o.file)}:${o.line}: ${o.text} (${o.rule})`);
    expect(found).toEqual([]);
  });

  it('the rule catches the regressions in its fixture, and only those', { timeout: 300_000 }, () => {
    const lines = FIXTURE_TEXT.split('\n');
    const expected = lines.flatMap((l, i) => (l.includes('// BAD') ? [i + 1] : [])).sort((a, b) => a - b);
    const reported = [...new Set(all().filter((o) => o.file === FIXTURE).map((o) => o.line))].sort((a, b) => a - b);
    expect(expected.length).toBe(6);
    expect(reported).toEqual(expected);
  });
});

/**
 * Every outside program a test starts (moto's python3, the AWS CLI, cfn-lint, a browser) is
 * started under the tools guard (`needs()` in test/support/tools.ts), so that `npm test` passes
 * on a machine with Node.js alone. The fixture holds the ways a start escapes the guard.
 */
describe('outside programs only under the tools guard', () => {
  const FIXTURE = join(ROOT, 'test/__outside_programs_fixture__.test.ts');
  const FIXTURE_TEXT = `
import { execFile, execSync, spawn, spawnSync as run } from 'node:child_process';
import * as cp from 'node:child_process';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import { beforeAll, describe, it } from 'vitest';
import { startMoto } from './support/moto';
import { has, needs, toolCommand } from './support/tools';
const aws = promisify(execFile);
beforeAll(async () => {
  await startMoto(); // BAD a file-level hook runs whatever is skipped
});
async function boot() {
  return startMoto();
}
describe('no guard', () => {
  it('starts moto', async () => {
    await startMoto(); // BAD
    await boot(); // BAD through a helper
    spawn('python3', ['-m', 'moto.server']); // BAD
    run('cfn-lint', ['--version']); // BAD
    cp.spawnSync('/usr/bin/aws', ['--version']); // BAD
    execSync('aws ecs list-clusters'); // BAD
    await aws('aws', ['sts', 'get-caller-identity']); // BAD
    spawn('sh', ['-c', 'chromium --headless']); // BAD
    await chromium.launch(); // BAD
    spawn(toolCommand('cfn-lint') ?? 'x', []); // BAD
  });
  it('guards the wrong tool', needs('aws'), async () => {
    await startMoto(); // BAD
  });
});
describe('guarded', needs('moto'), () => {
  beforeAll(async () => {
    await startMoto();
    await boot();
  });
  it('also aws', { ...needs('aws'), timeout: 1 }, async () => {
    await aws('aws', ['ecs', 'list-clusters']);
  });
});
describe.each(['moto'])('%s', (impl) => {
  it.skipIf(!has('cfn-lint'))('lints', () => {
    run('cfn-lint', []);
  });
  beforeAll(async () => {
    if (toolCommand('moto') === null) return;
    await startMoto();
  });
  it('optional step', () => {
    if (has('aws')) execSync('aws --version');
    const ok = has('chromium') && chromium.launch();
    spawn('node', ['-e', '1']);
    spawn(process.execPath, []);
    return [impl, ok];
  });
});
`;
  const files = new Map(
    filesUnder('test')
      .filter((f) => f !== relative(ROOT, FIXTURE))
      .map((f) => [join(ROOT, f), readFileSync(join(ROOT, f), 'utf8')] as const),
  );
  const starts = unguardedStarts(new Map([...files, [FIXTURE, FIXTURE_TEXT]]));

  it('no test file starts an outside program except under needs() (or has() / toolCommand() for an optional step)', () => {
    const found = starts.filter((s) => s.file !== FIXTURE).map((s) => `${relative(ROOT, s.file)}:${s.line}: ${s.text} (needs('${s.tool}'))`);
    expect(found).toEqual([]);
  });

  it('the rule catches the escapes in its fixture, and only those', () => {
    const lines = FIXTURE_TEXT.split('\n');
    const expected = lines.flatMap((l, i) => (l.includes('// BAD') ? [i + 1] : []));
    const reported = [...new Set(starts.filter((s) => s.file === FIXTURE).map((s) => s.line))].sort((a, b) => a - b);
    expect(expected.length).toBe(12);
    expect(reported).toEqual(expected);
    // The real helper is found through its import: startMoto in test/support/moto.ts starts python3.
    expect(starts.filter((s) => s.file === FIXTURE && s.line === expected[0]).map((s) => s.tool)).toEqual(['moto']);
  });
});

/**
 * The suite on a machine with Node.js and nothing else: vitest itself, with python3 and aws gone
 * from PATH, on a small subset (one moto suite, the AWS CLI suite, one pure suite). The tool
 * detection of vitest.config.ts and `needs()` (test/support/tools.ts) skip what needs them and
 * say so in one line; with CI=true the same missing tool is an error.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { collect, REPO } from './cli/run-cli';
import { pathWithOnly } from './support/tools';

const VITEST = 'node_modules/vitest/vitest.mjs';
const SUBSET = ['test/moto-support.test.ts', 'test/config.test.ts', 'test/sim/cli.test.ts'];

/** This environment without vitest's own variables (the child is a run of its own) and without CI. */
function nodeOnlyEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('VITEST') && k !== 'CI' && k !== 'TEST' && k !== 'NODE_ENV') env[k] = v;
  return { ...env, PATH: pathWithOnly(['node']), NO_COLOR: '1', ...extra };
}

describe('the suite with only Node.js on PATH', () => {
  it('skips the suites that need moto and the AWS CLI, names them and the install command at the end, and passes the rest', async () => {
    // Act
    const r = await collect(
      spawn(process.execPath, [VITEST, 'run', ...SUBSET, '-t', 'moto support|loadConfig|the AWS CLI'], { cwd: REPO, env: nodeOnlyEnv() }),
      { timeoutMs: 240_000 },
    );

    // Assess
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Tests\s+\d+ passed \| \d+ skipped \(/);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.at(-1)).toMatch(
      /^Skipped \d+ tests that need moto, an independent AWS emulator \(python3 -m moto\.server\), the AWS CLI \(aws\), not found on PATH; install with: pip install "moto\[server\]" awscli$/,
    );
  }, 300_000);

  it('with CI=true, a missing tool fails the run and says which and how to install it', async () => {
    // Act
    const r = await collect(spawn(process.execPath, [VITEST, 'run', 'test/moto-support.test.ts'], { cwd: REPO, env: nodeOnlyEnv({ CI: 'true' }) }), {
      timeoutMs: 240_000,
    });

    // Assess
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toContain('CI is set and moto, an independent AWS emulator (python3 -m moto.server) is not on PATH: install with pip install "moto[server]"');
    expect(r.stdout).not.toMatch(/^Skipped /m);
  }, 300_000);
});

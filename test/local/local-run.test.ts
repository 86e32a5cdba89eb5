/**
 * `npm start` (`ecsr local`) end to end, in a child process as a user runs it: the scenario's
 * verdict and summary, a failed expectation's exit code and reason, and `--forever` serving the
 * CLI until Ctrl+C.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { baseEnv, collect, ecsr, REPO } from '../cli/run-cli';

describe('npm start (ecsr local)', () => {
  it('runs the scenario, prints the summary and exits 0 when every expectation held', async () => {
    // Act
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const r = await collect(spawn(npm, ['start', '--', '--speed', '1000000'], { cwd: REPO, env: baseEnv() }), { timeoutMs: 120_000 });

    // Assess
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/ecsr local: 4 specs from .*examples/);
    expect(r.stdout).toMatch(/\[\d\d:\d\d:\d\d \+5m00s\] UpdateService\(drift\) shop\/worker: desiredCount 6 -> 2/);
    for (const what of [
      'every pass ran to the end',
      'tasks stopped by hand come back',
      'a service scaled by hand is scaled back and the drift is reported',
      'an image change in a spec rolls out',
      'a spec deleted from the table prunes its service',
      'the unpullable image fails its rollout once and is not re-applied',
      'the lag alarm goes to ALARM for shop/ledger with the stop reason',
    ]) {
      expect(r.stdout).toContain(`PASS  ${what}`);
    }
    expect(r.stdout).toMatch(/ServiceLagBeyondGrace shop\/ledger -> ALARM .*CannotPullContainerError/);
    expect(r.stdout).toMatch(/│ UpdateService +│ 3 +│ 3 +│/);
    expect(r.stdout).toContain('Result: all 9 expectations held.');
  });

  it('exits non-zero with the reason when an expectation does not hold (PRUNE=false: no prune)', async () => {
    // Act
    const r = await ecsr(['local', '--speed', '1000000'], { env: baseEnv({ PRUNE: 'false' }), timeoutMs: 120_000 });

    // Assess
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('FAIL  a spec deleted from the table prunes its service: the pass after the deletion made no DeleteService for shop/thumbnails');
    expect(r.stderr).toContain('ecsr local: The scenario failed: 1 expectation did not hold.');
    expect(r.stderr).toContain('a spec deleted from the table prunes its service');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('--forever prints the endpoints, serves the CLI, and ends cleanly on Ctrl+C', async () => {
    // Prepare
    const child = spawn(process.execPath, ['bin/ecsr.js', 'local', '--forever', '--speed', '600'], { cwd: REPO, env: baseEnv() });
    const done = collect(child, { timeoutMs: 120_000 });
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    const deadline = Date.now() + 30_000;
    while (!/pass 1: /.test(out) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const exported = /export (.*)\n/.exec(out)?.[1] ?? '';
    const env = Object.fromEntries(exported.split(' ').map((kv) => kv.split('=') as [string, string]));

    // Act
    const get = await ecsr(['get', '-o', 'json'], { env: baseEnv(env) });
    child.kill('SIGINT');
    const r = await done;

    // Assess
    expect(env.AWS_ENDPOINT_URL_ECS).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(env.SPECS_TABLE).toBe('ecsr-specs');
    expect(get.code).toBe(0);
    expect((JSON.parse(get.stdout) as { service: string }[]).map((e) => e.service)).toEqual(['ledger', 'thumbnails', 'web', 'worker']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Summary: \d+ passes/);
    expect(r.stdout).not.toContain('Expectations:');
  });
});

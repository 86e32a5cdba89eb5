/**
 * `npm start` (`ecsr local`) end to end, in a child process as a user runs it: the scenario's
 * verdict and summary, a failed expectation's exit code and reason, `--forever` serving the CLI
 * (every command its banner suggests, run as printed) until Ctrl+C, and Ctrl+C on a terminal.
 */
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { describe, expect, it, onTestFinished } from 'vitest';
import { baseEnv, collect, ecsr, REPO } from '../cli/run-cli';
import { has, pathWithOnly } from '../support/tools';

const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** Whether a program runs here (`script` of util-linux for a pseudo-terminal). */
function installed(program: string, args: string[] = ['--version']): boolean {
  return spawnSync(program, args, { stdio: 'ignore' }).status === 0;
}

/**
 * Spawns a long-running command for the current test, and kills it if it is still running when
 * the test ends (a failed test must not leave servers behind; killing `script` hangs up its
 * terminal, which ends what runs in it).
 */
function spawnForTest(command: string, args: string[], opts: SpawnOptions): ChildProcess {
  const child = spawn(command, args, opts);
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return child;
}

/** Resolves with the child's output so far once `pattern` appears in it (or rejects after 60 s). */
function outputUntil(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no ${String(pattern)} within 60 s; output: ${out}`)), 60_000);
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (pattern.test(out)) {
        clearTimeout(timer);
        resolve(out);
      }
    });
  });
}

describe('npm start (ecsr local)', () => {
  it('runs the scenario with nothing but Node.js on PATH, prints the summary and exits 0 when every expectation held', async () => {
    // Prepare: node, npm and the shell npm runs scripts with; no python3, moto or AWS CLI.
    const env = baseEnv({ PATH: pathWithOnly(['node', NPM, 'sh']) });

    // Act
    const r = await collect(spawn(NPM, ['start', '--', '--speed', '1000000'], { cwd: REPO, env }), { timeoutMs: 120_000 });

    // Assess
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/ecsr local: 4 specs from examples\/shop\.yaml in table/);
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
    // The Metrics Insights alarm as a whole and its contributor are told apart.
    expect(r.stdout).toMatch(/ServiceLagBeyondGrace \[shop\/ledger\] -> ALARM .*CannotPullContainerError/);
    expect(r.stdout).toMatch(/ServiceLagBeyondGrace \(any service\) -> ALARM/);
    expect(r.stdout).not.toMatch(/ServiceLagBeyondGrace (shop\/ledger )?-> ALARM/);
    expect(r.stdout).toMatch(/│ UpdateService +│ 3 +│ 3 +│/);
    // The DescribeTaskDefinition errors before each family's first registration are said to be expected.
    const expected = /│ DescribeTaskDefinition +│ \d+ +│ \d+ +│ 0 +│ (\d+) \(expected\) +│/.exec(r.stdout);
    expect(Number(expected?.[1])).toBeGreaterThan(0);
    expect(r.stdout).toContain(`expected: ${expected?.[1]} DescribeTaskDefinition calls answered ClientException for a family not registered yet.`);
    expect(r.stdout).toContain('PASS  every pass observed ECS in the mode the run asked for: events:');
    expect(r.stdout).toMatch(/; events mode \(queue http:\/\/127\.0\.0\.1:\d+\/123456789012\/ecsr-events\);/);
    expect(r.stdout).toContain('Result: all 10 expectations held.');
  });

  it('exits non-zero with the reason when an expectation does not hold (PRUNE=false: no prune)', async () => {
    // Act
    const r = await ecsr(['local', '--speed', '1000000', '--table', 'other-specs'], { env: baseEnv({ PRUNE: 'false' }), timeoutMs: 120_000 });

    // Assess
    expect(r.stdout).toContain('in table other-specs');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('FAIL  a spec deleted from the table prunes its service: the pass after the deletion made no DeleteService for shop/thumbnails');
    expect(r.stderr).toContain('ecsr local: The scenario failed: 1 expectation did not hold.');
    expect(r.stderr).toContain('a spec deleted from the table prunes its service');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('--forever prints the endpoints, every command it suggests works as printed, and Ctrl+C (SIGINT) ends it with 0', async () => {
    // Prepare
    const child = spawnForTest(process.execPath, ['bin/ecsr.js', 'local', '--forever', '--speed', '600'], { cwd: REPO, env: baseEnv() });
    const done = collect(child, { timeoutMs: 180_000 });
    const banner = await outputUntil(child, /pass 1: /);
    const exportLine = /^ {2}(export .*)$/m.exec(banner)?.[1] ?? '';
    const env = Object.fromEntries(exportLine.replace(/^export /, '').split(' ').map((kv) => kv.split('=') as [string, string]));
    const suggested = banner
      .slice(banner.indexOf(exportLine) + exportLine.length)
      .split('\n\n')[0]
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '');

    // Act: each line in a shell after the printed export, as a person pastes them.
    const runs: { line: string; code: number | null; stdout: string; stderr: string }[] = [];
    for (const line of suggested) {
      if (line.startsWith('aws ') && !has('aws')) continue; // run when the AWS CLI is here (always in CI)
      const r = await collect(spawn('sh', ['-c', `${exportLine}; ${line}`], { cwd: REPO, env: baseEnv() }), { timeoutMs: 120_000 });
      runs.push({ line, ...r });
    }
    const get = await ecsr(['get', '-o', 'json'], { env: baseEnv(env) });
    const table = await ecsr(['get'], { env: baseEnv({ ...env, COLUMNS: '200' }) });
    child.kill('SIGINT');
    const r = await done;

    // Assess
    expect(env.AWS_ENDPOINT_URL_ECS).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(env.SPECS_TABLE).toBe('ecsr-specs');
    expect(suggested.filter((l) => l.startsWith('npm run ecsr -- '))).toEqual([
      'npm run ecsr -- get',
      'npm run ecsr -- plan',
      'npm run ecsr -- apply -f examples/web.yaml --wait    # creates prod/web in the empty cluster prod',
    ]);
    expect(suggested.some((l) => l.startsWith('curl '))).toBe(true);
    for (const run of runs) expect({ line: run.line, code: run.code, stderr: run.stderr.replace(/npm warn .*\n/g, '') }).toEqual({ line: run.line, code: 0, stderr: '' });
    expect(runs.find((x) => x.line.includes('apply'))?.stdout).toMatch(/prod\/web created\n[\s\S]*1 of 1 service converged in [\dhms]+ \(this computer's clock\), each stable for 30s \(ECS's clock\)\./);
    expect(runs.find((x) => x.line.startsWith('curl '))?.stdout).toMatch(/"taskArns":\["arn:aws:ecs:/);
    expect(get.code).toBe(0);
    expect((JSON.parse(get.stdout) as { cluster: string; service: string }[]).map((e) => `${e.cluster}/${e.service}`)).toEqual([
      'prod/web',
      'shop/ledger',
      'shop/thumbnails',
      'shop/web',
      'shop/worker',
    ]);
    // The banner says plainly that the simulated clock runs ahead; get shows the last pass (a heartbeat).
    expect(banner).toContain('The simulated clock runs 600x real time (--speed 600): a pass every simulated minute, every 0.1 s here.');
    expect(banner).toContain("Times in ECS and in the statuses run ahead of this computer's clock");
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^Last pass: \d+ at \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ simulated, [\dhms ]+ ago \(the local run's clock runs 600x real time, [\dhms]+ ahead of this computer's\); \d+ applied, \d+ failed(\.|; no pass since: is ecsr local still running\?)\n\n┌/);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Summary: \d+ passes/);
    expect(r.stdout).not.toContain('Expectations:');
  }, 180_000);

  it.skipIf(!installed('script', ['-V']))('Ctrl+C on a terminal ends npm start -- --forever with exit code 0 (not 130)', async () => {
    // Prepare: `script` gives the command a pseudo-terminal; ETX (Ctrl+C) typed into it.
    const child = spawnForTest('script', ['-qfec', `${NPM} start -- --forever --speed 600 --plain`, '/dev/null'], { cwd: REPO, env: baseEnv() });
    const done = collect(child, { timeoutMs: 120_000, keepStdinOpen: true });
    await outputUntil(child, /pass 2: /);

    // Act
    child.stdin?.end('\x03');
    const r = await done;

    // Assess
    expect(r.stdout).toMatch(/Summary: \d+ passes/);
    expect(r.code).toBe(0);
  }, 120_000);

  it('Ctrl+C (SIGINT) during the scenario still ends with 130 and no verdict', async () => {
    // Prepare
    const child = spawnForTest(process.execPath, ['bin/ecsr.js', 'local', '--speed', '60', '--plain'], { cwd: REPO, env: baseEnv() });
    const done = collect(child, { timeoutMs: 120_000 });
    await outputUntil(child, /pass 1: /);

    // Act
    child.kill('SIGINT');
    const r = await done;

    // Assess
    expect(r.code).toBe(130);
    expect(r.stderr).toBe('ecsr local: Interrupted before the scenario ended; no verdict.\n');
    expect(r.stdout).not.toContain('Expectations:');
  });
});

/**
 * `ecsr describe CLUSTER/SERVICE` and `ecsr get --watch`, end to end through the CLI (in process) against
 * dynalite and the ECS simulator: describe shows the spec, the status and its conditions, ECS's
 * deployments, events and tasks with their stop reasons; --watch ends by itself after --count
 * refreshes, and at Ctrl+C (SIGINT) with exit code 0.
 */
import { spawn, spawnSync } from 'node:child_process';
import { ECSClient, paginateListTasks } from '@aws-sdk/client-ecs';
import { beforeAll, describe, expect, it } from 'vitest';
import { explain } from '../../bin/commands/support/wait';
import type { ServiceStatus } from '../../lambda/core/types';
import type { LocalStack } from '../../local/stack';
import { spec, useCliStack } from './harness';
import { collect, REPO } from './run-cli';
import { ecsr } from '../support/cli-in-process';

describe('ecsr describe and get --watch', () => {
  const harness = useCliStack('d');
  let stack: LocalStack;
  let c: Awaited<ReturnType<ReturnType<typeof useCliStack>['aCase']>>;
  beforeAll(async () => {
    stack = harness.stack();
    c = await harness.aCase();
    const files = [spec(c.cluster, 'web'), spec(c.cluster, 'pay').replace('nginx:1.27', 'nginx:does-not-exist')].join('---\n');
    expect((await ecsr(['apply', '-f', c.file('s.yaml', files)], { env: c.env })).code).toBe(0);
    for (let i = 0; i < 40; i++) {
      await c.pass();
      const status = (await c.item('pay'))?.status as ServiceStatus | undefined;
      if (status?.failedSpecHash !== undefined && (await c.item('web'))?.status?.phase === 'Converged') break;
      stack.sim.clock.advance(60);
    }
  });

  it('describe shows the spec, status and conditions, deployments, events and the stopped tasks with their reasons', async () => {
    // Act
    const r = await ecsr(['describe', `${c.cluster}/pay`], { env: { ...c.env, COLUMNS: '100' } });

    // Assess
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const out = r.stdout;
    expect(out).toMatch(new RegExp(`^Service: +${c.cluster}/pay$`, 'm'));
    expect(out).toMatch(/^Spec \(hash [0-9a-f]+, seen by the last pass\):$/m);
    expect(out).toMatch(/^ {2}image: public\.ecr\.aws\/nginx\/nginx:does-not-exist$/m);
    expect(out).toMatch(/^ {2}Phase: +Degraded$/m);
    expect(out).toMatch(/Reason: +RolloutFailed: TaskFailedToStart: CannotPullContainerError/);
    // Every value of the status block starts in one column, the longest label's included.
    const statusBlock = out.slice(out.indexOf('Status (written by the reconciler):'), out.indexOf('\nConditions:'));
    const columns = [...statusBlock.matchAll(/^ {2}((?:Phase|Tasks|Reason|Lagging since|Task definition|Last action|Drift|Observed): +)\S/gm)].map((m) => [m[1].trim(), 2 + m[1].length]);
    expect(columns.map(([label]) => label)).toEqual(expect.arrayContaining(['Phase:', 'Tasks:', 'Reason:', 'Task definition:', 'Observed:']));
    expect(new Set(columns.map(([, column]) => column)), JSON.stringify(columns)).toEqual(new Set([19]));
    // A wrapped value continues under itself.
    for (const l of statusBlock.split('\n').filter((x) => /^ {3}/.test(x))) expect(l, l).toMatch(/^ {19}\S/);
    expect(out.replace(/\n {4}/g, ' ')).toMatch(/^ {2}Ready=False {2}RolloutFailed {2}since \S+ \S+ deployment ecs-svc\/\d+ of \S+ FAILED: ECS deployment circuit breaker/m);
    expect(out).toMatch(/^Deployments:$/m);
    expect(out).toMatch(/│ ecs-svc\/\d+ +│ PRIMARY +│ FAILED +│ d\d+-pay:1 +│ 0\/2 +│ [1-9]\d* +│/);
    expect(out).toMatch(/^ {2}ecs-svc\/\d+: FAILED: ECS deployment circuit breaker: tasks failed to start\.$/m);
    expect(out).toMatch(/^Events \(latest \d+, newest first\):$/m);
    expect(out).toMatch(/\(service pay\) .*deployment failed/);
    expect(out).toMatch(/│ [0-9a-f]+…? +│ STOPPED +│ d\d+-pay:1 +│/);
    expect(out).toMatch(/^Stop reasons:\n {2}[0-9a-f]{32}: TaskFailedToStart: CannotPullContainerError: /m);
    for (const l of out.split('\n')) expect(l.length, l).toBeLessThanOrEqual(100);
  });

  it('describe -o json carries ECS deployments, events and tasks as ECS names them', async () => {
    // Act
    const r = await ecsr(['describe', `${c.cluster}/pay`, '-o', 'json'], { env: c.env });

    // Assess
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as { valid: boolean; status: ServiceStatus; ecs: { deployments: { rolloutState: string }[]; events: unknown[]; tasks: { lastStatus: string; stopCode?: string }[] } };
    expect(doc.valid).toBe(true);
    expect(doc.status.phase).toBe('Degraded');
    expect(doc.ecs.deployments.map((d) => d.rolloutState)).toContain('FAILED');
    expect(doc.ecs.events.length).toBeGreaterThan(0);
    expect(doc.ecs.tasks.some((t) => t.lastStatus === 'STOPPED' && t.stopCode === 'TaskFailedToStart')).toBe(true);
  });

  it('describe and the --wait report show the most recently stopped tasks of a service with more than 100 (ListTasks\' page)', async () => {
    // Prepare: 10 tasks stopped by hand 12 times, a minute apart; only the last round says "newest".
    const d = await harness.aCase();
    expect((await ecsr(['apply', '-f', d.file('s.yaml', spec(d.cluster, 'web').replace('desiredCount: 2', 'desiredCount: 10'))], { env: d.env })).code).toBe(0);
    await d.pass();
    stack.sim.clock.advance(60);
    for (let round = 1; round <= 12; round++) {
      stack.sim.stopServiceTasks({ cluster: d.cluster, service: 'web', reason: round === 12 ? 'newest reason' : `old reason ${round}` });
      stack.sim.clock.advance(60);
    }
    const ecs = new ECSClient(stack.ecsClientConfig);
    try {
      let stopped = 0;
      for await (const p of paginateListTasks({ client: ecs }, { cluster: d.cluster, serviceName: 'web', desiredStatus: 'STOPPED' })) stopped += p.taskArns?.length ?? 0;
      expect(stopped).toBeGreaterThan(100);

      // Act
      const r = await ecsr(['describe', `${d.cluster}/web`, '--tasks', '10', '-o', 'json'], { env: d.env });
      const text = await ecsr(['describe', `${d.cluster}/web`, '--tasks', '10'], { env: { ...d.env, COLUMNS: '200' } });
      const report = await explain({ key: { cluster: d.cluster, service: 'web' }, hash: 'h', state: 'present' }, undefined, ecs);

      // Assess
      expect(r.code).toBe(0);
      const doc = JSON.parse(r.stdout) as { ecs: { tasks: { desiredStatus: string; stoppedReason?: string; stoppedAt?: string }[] } };
      const shown = doc.ecs.tasks.filter((t) => t.desiredStatus === 'STOPPED');
      expect(shown.map((t) => t.stoppedReason)).toEqual(Array(10).fill('newest reason'));
      const times = shown.map((t) => Date.parse(t.stoppedAt ?? ''));
      expect(times).toEqual([...times].sort((a, b) => b - a));
      expect(text.stdout).toMatch(/^Stop reasons:\n {2}[0-9a-f]{32}: UserInitiated: newest reason$/m);
      expect(text.stdout).not.toMatch(/old reason/);
      const stopLines = report.filter((l) => l.includes('stopped task'));
      expect(stopLines).toHaveLength(5);
      for (const l of stopLines) expect(l).toMatch(/: UserInitiated: newest reason$/);
    } finally {
      ecs.destroy();
    }
  });

  it('describe of a spec that is not in the table says so, exit code 1', async () => {
    const r = await ecsr(['describe', `${c.cluster}/nope`], { env: c.env });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`ecsr describe: There is no spec ${c.cluster}/nope in table ${c.table}.\n`);
  });

  it('get --watch --count 3 refreshes three times and ends by itself with exit code 0', async () => {
    // Act
    const r = await ecsr(['get', '--watch', '--interval', '100ms', '--count', '3'], { env: c.env });

    // Assess
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout.match(/^Every 100ms: ecsr get /gm)).toHaveLength(3);
    expect(r.stdout.match(new RegExp(`│ ${c.cluster}/web +│ Converged`, 'g'))).toHaveLength(3);
  });

  it.skipIf(spawnSync('script', ['-V']).status !== 0)('get --watch on a terminal shorter than the frame keeps its header on screen', async () => {
    // Prepare: a pseudo-terminal (script) of 10 rows; the frame (header, table, pay's reason) is taller.
    const env = Object.entries(c.env).map(([k, v]) => `${k}='${v}'`).join(' ');
    const child = spawn('script', ['-qfec', `stty rows 10 cols 80; env ${env} ${process.execPath} bin/ecsr.js get --watch --interval 100ms --count 2`, '/dev/null'], { cwd: REPO, env: c.env });

    // Act
    const r = await collect(child, { timeoutMs: 60_000 });

    // Assess: each frame is its first 8 lines and a line saying how many more there are.
    expect(r.code).toBe(0);
    const text = r.stdout.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
    expect(text).toMatch(/Every 100ms: ecsr get /);
    expect(text).toMatch(/… \d+ more lines?: a taller terminal shows them \(ecsr get prints everything\)/);
  });

  it('get --watch ends at Ctrl+C (SIGINT) with exit code 0', async () => {
    // Prepare
    const child = spawn(process.execPath, ['bin/ecsr.js', 'get', '--watch', '--interval', '1s'], { cwd: REPO, env: c.env });
    const done = collect(child, { timeoutMs: 60_000 });
    await new Promise<void>((resolve) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('└')) resolve();
      });
    });

    // Act
    child.kill('SIGINT');
    const r = await done;

    // Assess
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^Every 1s: ecsr get /m);
  });

  it('get --watch refuses -o json in one sentence', async () => {
    const r = await ecsr(['get', '--watch', '-o', 'json'], { env: c.env });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('ecsr get: --watch shows the table: use it with -o table or -o wide.\n');
  });
});

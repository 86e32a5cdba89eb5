/**
 * The day-to-day verbs on a running service, end to end through the CLI (in process) against
 * dynalite and the ECS simulator: `ecsr restart` (one UpdateService forceNewDeployment, only on a
 * managed, owned service) and `ecsr scale` (a conditional edit of the spec's desiredCount, which
 * the next pass sends to ECS), and `ecsr delete` saying what it deletes and asking first.
 */
import { PassThrough } from 'node:stream';
import { DescribeServicesCommand, ECSClient } from '@aws-sdk/client-ecs';
import { askYes, confirmOrRefuse } from '../../bin/commands/support/confirm';
import { afterAll, describe, expect, it } from 'vitest';
import { createHandMadeService, spec, useCliStack } from './harness';
import { ecsr } from '../support/cli-in-process';
import { SpecTable } from '../../bin/commands/support/spec-table';

const FAST = ['--interval', '200ms', '--stable-for', '30s'];
/** Each case runs several CLI commands and passes: generous on a busy machine (not a measure). */
const SLOW = 300_000;

describe('ecsr restart and ecsr scale', () => {
  const harness = useCliStack('vb');
  let ecs: ECSClient | undefined;
  const client = () => (ecs ??= new ECSClient(harness.stack().ecsClientConfig));
  afterAll(() => ecs?.destroy());
  type Case = Awaited<ReturnType<typeof harness.aCase>>;

  /** A case whose `web` converged (two tasks RUNNING). */
  async function converged(extra = ''): Promise<Case> {
    const c = await harness.aCase();
    expect((await ecsr(['apply', '-f', c.file('a.yaml', spec(c.cluster, 'web', extra))], { env: c.env })).code).toBe(0);
    for (let i = 0; i < 10 && (await c.item('web'))?.status?.phase !== 'Converged'; i++) {
      await c.pass();
      harness.stack().sim.clock.advance(60);
    }
    expect((await c.item('web'))?.status?.phase).toBe('Converged');
    return c;
  }
  const live = async (c: Case) => (await client().send(new DescribeServicesCommand({ cluster: c.cluster, services: ['web'] }))).services?.[0];

  it('restart sends one UpdateService with forceNewDeployment alone, and --wait sees the new tasks through', async () => {
    // Prepare
    const c = await converged();
    const before = c.writeCalls().length;
    const stop = c.passLoop();

    // Act
    const r = await ecsr(['restart', `${c.cluster}/web`, '--wait', ...FAST, '--timeout', '120s'], { env: c.env });
    await stop();

    // Assess: the only write is the restart; the passes while it rolled did not fight it.
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^${c.cluster}/web restarting: ECS started deployment ecs-svc/\\S+ of ${c.cluster}-web:1, which replaces every task\\.\\n`));
    expect(r.stdout).toMatch(/1 service converged/);
    const writes = c.writeCalls().slice(before);
    expect(writes.map((w) => [w.action, w.request])).toEqual([['UpdateService', { cluster: c.cluster, service: 'web', forceNewDeployment: true }]]);
    const svc = await live(c);
    expect(svc?.deployments?.map((d) => [d.status, d.rolloutState])).toEqual([['PRIMARY', 'COMPLETED']]);
    expect(svc?.runningCount).toBe(2);
  }, SLOW);

  it.each([
    { case: 'a spec that is not in the table', setup: async (_c: Case) => 'nope', stderr: /^ecsr restart: There is no spec \S+\/nope in table \S+: ecsr restart acts only on services the reconciler manages\.\n$/ },
    {
      case: 'a service the reconciler does not own',
      setup: async (c: Case) => {
        await createHandMadeService(harness.stack().ecsClientConfig, c.cluster, 'made');
        expect((await ecsr(['apply', '-f', c.file('m.yaml', spec(c.cluster, 'made'))], { env: c.env, timeoutMs: 120_000 })).code).toBe(0);
        return 'made';
      },
      stderr: /^ecsr restart: \S+\/made has no owner tag ecs-reconciler:owner=ecs-reconciler, so the reconciler leaves it alone and so does ecsr restart \(set adopt: true in its spec, or run ecsr import \S+\/made --apply\)\.\n$/,
    },
  ])('restart refuses $case and writes nothing to ECS', async ({ setup, stderr }) => {
    // Prepare
    const c = await converged();
    const service = await setup(c);
    const before = c.writeCalls().length;
    // Act
    const r = await ecsr(['restart', `${c.cluster}/${service}`], { env: c.env });
    // Assess
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(stderr);
    expect(c.writeCalls().slice(before)).toEqual([]);
  }, SLOW);

  it('scale writes desiredCount alone into the spec, and the next pass sends it to ECS', async () => {
    // Prepare
    const c = await converged();
    const itemBefore = await c.item('web');
    const stop = c.passLoop();

    // Act
    const r = await ecsr(['scale', `${c.cluster}/web`, '3', '--wait', ...FAST, '--timeout', '120s'], { env: c.env });
    await stop();
    const again = await ecsr(['scale', `${c.cluster}/web`, '3'], { env: c.env });

    // Assess
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^${c.cluster}/web desiredCount set: 2 -> 3\\n`));
    const { status: _s, ...spec } = (await c.item('web')) ?? {};
    const { status: _b, ...specBefore } = itemBefore ?? {};
    expect(spec).toEqual({ ...specBefore, desiredCount: 3 });
    expect((await live(c))?.runningCount).toBe(3);
    expect(again.stdout).toBe(`${c.cluster}/web desiredCount unchanged (3)\n`);
  }, SLOW);

  it.each([
    { case: 'an autoscaled spec', args: (c: Case) => ['scale', `${c.cluster}/auto`, '3'], stderr: /^ecsr scale: \S+\/auto is autoscaled: Application Auto Scaling owns its desiredCount, so ecsr scale writes nothing/ },
    { case: 'a spec that is not in the table', args: (c: Case) => ['scale', `${c.cluster}/nope`, '3'], stderr: /^ecsr scale: There is no spec \S+\/nope in table/ },
    { case: 'a count that is not a whole number', args: (c: Case) => ['scale', `${c.cluster}/web`, '-1'], stderr: /^ecsr scale: / },
    { case: 'a count above what ECS takes', args: (c: Case) => ['scale', `${c.cluster}/web`, '3000000000'], stderr: /^ecsr scale: \S+\/web: desiredCount: must be at most 2147483647/ },
  ])('scale refuses $case and writes nothing', async ({ args, stderr }) => {
    // Prepare
    const c = await harness.aCase();
    const auto = `cluster: ${c.cluster}\nservice: auto\nimage: public.ecr.aws/nginx/nginx:1.27\nautoscaled: true\n`;
    expect((await ecsr(['apply', '-f', c.file('s.yaml', `${spec(c.cluster, 'web')}---\n${auto}`)], { env: c.env })).code).toBe(0);
    const before = await c.items();
    // Act
    const r = await ecsr(args(c), { env: c.env });
    // Assess
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(stderr);
    expect(await c.items()).toEqual(before);
  }, SLOW);
});

describe('ecsr delete says what it deletes and asks first', () => {
  const harness = useCliStack('vd');

  /** A case with `web` applied and seen by a pass. */
  async function applied() {
    const c = await harness.aCase();
    expect((await ecsr(['apply', '-f', c.file('a.yaml', spec(c.cluster, 'web'))], { env: c.env })).code).toBe(0);
    await c.pass();
    return c;
  }

  it('--dry-run says what the deletion does and writes nothing', async () => {
    // Prepare
    const c = await applied();
    const before = await c.items();
    // Act
    const r = await ecsr(['delete', `${c.cluster}/web`, '--dry-run'], { env: c.env });
    // Assess
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `Deleting ${c.cluster}/web marks its spec absent: the next pass scales ECS service web in cluster ${c.cluster} to 0 tasks and deletes it (the last pass saw 0 running of 2 desired, phase Progressing).\nNothing was written (--dry-run).\n`,
    );
    expect(await c.items()).toEqual(before);
  }, SLOW);

  it('refuses without a terminal and without --yes, naming --yes, and writes nothing', async () => {
    // Prepare
    const c = await applied();
    const before = await c.items();
    // Act: a spawned CLI whose stdin is a pipe, as in a script
    const r = await ecsr(['delete', `${c.cluster}/web`], { env: c.env, input: '' });
    // Assess
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`ecsr delete: stdin is not a terminal, so nothing was asked and nothing was written: pass --yes to mark ${c.cluster}/web absent (--dry-run shows what it would do).\n`);
    expect(await c.items()).toEqual(before);
  }, SLOW);

  it('--yes marks the spec absent without asking', async () => {
    const c = await applied();
    const r = await ecsr(['delete', `${c.cluster}/web`, '--yes'], { env: c.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${c.cluster}/web marked absent; the next pass deletes the service.\n`);
    expect((await c.item('web'))?.state).toBe('absent');
  }, SLOW);
});

describe('the question before a destructive write', () => {
  /** A terminal that answers `answer` (undefined: the input ends), and what was printed. */
  function terminal(answer: string | undefined) {
    const input = Object.assign(new PassThrough(), { isTTY: true });
    const output = new PassThrough();
    let printed = '';
    output.on('data', (d: Buffer) => (printed += d.toString()));
    if (answer === undefined) input.end();
    else input.write(answer);
    return { prompt: { input, output }, printed: () => printed };
  }

  it.each([
    { answer: 'y\n', yes: true },
    { answer: 'YES\n', yes: true },
    { answer: '\n', yes: false },
    { answer: 'no\n', yes: false },
    { answer: undefined, yes: false },
  ])('answer $answer is yes: $yes', async ({ answer, yes }) => {
    const t = terminal(answer);
    expect(await askYes('Delete shop/api?', t.prompt)).toBe(yes);
    expect(t.printed()).toBe('Delete shop/api? [y/N] ');
  });

  it('a no on a terminal refuses; --yes does not ask', async () => {
    await expect(confirmOrRefuse('Delete shop/api?', 'mark shop/api absent', { prompt: terminal('n\n').prompt })).rejects.toThrow('Not confirmed; nothing was written.');
    const silent = terminal(undefined);
    await confirmOrRefuse('Delete shop/api?', 'mark shop/api absent', { yes: true, prompt: silent.prompt });
    expect(silent.printed()).toBe('');
  });
});

describe('ecsr purge removes the items of deleted specs', () => {
  const harness = useCliStack('vp');
  type Case = Awaited<ReturnType<typeof harness.aCase>>;

  /** A case with `gone` deleted (absent, phase Deleted) and `going` marked absent but not deleted yet. */
  async function withTombstone(): Promise<Case> {
    const c = await harness.aCase();
    const specs = `${spec(c.cluster, 'gone')}---\n${spec(c.cluster, 'kept')}`;
    expect((await ecsr(['apply', '-f', c.file('a.yaml', specs)], { env: c.env })).code).toBe(0);
    await c.pass();
    expect((await ecsr(['delete', `${c.cluster}/gone`, '--yes'], { env: c.env })).code).toBe(0);
    for (let i = 0; i < 10 && (await c.item('gone'))?.status?.phase !== 'Deleted'; i++) {
      await c.pass();
      harness.stack().sim.clock.advance(60);
    }
    expect((await c.item('gone'))?.status?.phase).toBe('Deleted');
    // `going` is marked absent after the last pass: no pass has deleted its service yet.
    expect((await ecsr(['apply', '-f', c.file('b.yaml', spec(c.cluster, 'going'))], { env: c.env })).code).toBe(0);
    expect((await ecsr(['delete', `${c.cluster}/going`, '--yes'], { env: c.env })).code).toBe(0);
    return c;
  }

  it('--dry-run lists the tombstone and the absent spec it keeps, and removes nothing', async () => {
    // Prepare
    const c = await withTombstone();
    const before = await c.items();
    // Act
    const r = await ecsr(['purge', c.cluster, '--dry-run'], { env: c.env });
    // Assess
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const observedAt = (await c.item('gone'))?.status?.observedAt as string;
    expect(r.stdout).toBe(
      [
        `Purging removes 1 tombstone from cluster ${c.cluster} of table ${c.table} (specs marked absent whose service a pass deleted):`,
        `  ${c.cluster}/gone  deleted, last seen ${observedAt}`,
        `Kept ${c.cluster}/going: marked absent, but its service is not deleted yet (phase none: no pass has seen it).`,
        'Nothing was removed (--dry-run).',
        '',
      ].join('\n'),
    );
    expect(await c.items()).toEqual(before);
  }, SLOW);

  it('refuses without a terminal and without --yes, naming --yes, and removes nothing', async () => {
    const c = await withTombstone();
    const before = await c.items();
    const r = await ecsr(['purge'], { env: c.env, input: '' });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`ecsr purge: stdin is not a terminal, so nothing was asked and nothing was written: pass --yes to remove 1 tombstone from table ${c.table} (--dry-run shows what it would do).\n`);
    expect(await c.items()).toEqual(before);
  }, SLOW);

  it('--yes removes the tombstone alone, keeps the others, and records the removal in the history', async () => {
    // Prepare
    const c = await withTombstone();
    // Act
    const r = await ecsr(['purge', '--yes'], { env: c.env });
    const history = await ecsr(['history', `${c.cluster}/gone`, '-o', 'json'], { env: c.env });
    // Assess
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`Removed ${c.cluster}/gone.\n1 tombstone removed; their history is kept (ecsr history CLUSTER/SERVICE, docs/history.md).\n`);
    expect(await c.item('gone')).toBeUndefined();
    expect((await c.item('going'))?.state).toBe('absent');
    expect((await c.item('kept'))?.state).not.toBe('absent');
    expect(history.code).toBe(0);
    const { revisions } = JSON.parse(history.stdout) as { revisions: { via?: string; removed?: boolean }[] };
    expect(revisions.map((v) => v.via)).toEqual(expect.arrayContaining(['ecsr purge', 'ecsr delete']));
    expect(revisions.find((v) => v.via === 'ecsr purge')?.removed).toBe(true);
  }, SLOW);

  it('keeps a tombstone brought back between the read and the removal (the DeleteItem is conditional)', async () => {
    // Prepare: the spec is present again, as a person's edit would make it after purge's Scan.
    const c = await withTombstone();
    const table = new SpecTable(c.table, harness.stack().doc);
    expect((await ecsr(['apply', '-f', c.file('c.yaml', spec(c.cluster, 'gone'))], { env: c.env })).code).toBe(0);
    // Act
    const outcome = await table.removeTombstone({ cluster: c.cluster, service: 'gone' });
    // Assess
    expect(outcome).toBe('changed');
    expect((await c.item('gone'))?.state).not.toBe('absent');
    expect((await c.item('gone'))?.status?.phase).toBe('Deleted');
  }, SLOW);

  it('says there is nothing to purge in a cluster without tombstones', async () => {
    const c = await harness.aCase();
    const r = await ecsr(['purge', c.cluster, '--yes'], { env: c.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`No tombstones in cluster ${c.cluster} of table ${c.table}: no spec marked absent has its service deleted (phase Deleted).\n`);
  }, SLOW);
});

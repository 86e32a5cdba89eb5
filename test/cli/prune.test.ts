/**
 * `ecsr prune --confirm CLUSTER` end to end, through the CLI (in process) against dynalite
 * and the ECS simulator: a cluster whose specs all vanished (an emptied or replaced table) is not
 * pruned (PruneBlocked) until a person confirms; the confirmation is an item in the table that the
 * next passes read (the Lambda needs no redeploy).
 */
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { Reason } from '../../lambda/core/status';
import type { LocalStack } from '../../local/stack';
import { spec, useCliStack } from './harness';
import { ecsr } from '../support/cli-in-process';

const SLOW = 120_000;

describe('ecsr prune --confirm', () => {
  const harness = useCliStack('p');
  let stack: LocalStack;
  beforeAll(() => {
    stack = harness.stack();
  });

  /** A case with `web` and `api` created, then every spec of the cluster removed from the table. */
  async function anEmptiedTable() {
    const c = await harness.aCase();
    const applied = await ecsr(['apply', '-f', c.file('s.yaml', `${spec(c.cluster, 'web')}---\n${spec(c.cluster, 'api')}`)], { env: c.env });
    expect(applied.code).toBe(0);
    await c.pass();
    for (const service of ['web', 'api']) {
      await stack.doc.send(new DeleteCommand({ TableName: c.table, Key: { cluster: c.cluster, service } }));
    }
    stack.sim.clock.advance(60);
    return c;
  }

  it('blocks the prune of a cluster with no spec left, then prunes it once confirmed', async () => {
    // Prepare
    const c = await anEmptiedTable();
    const blocked = await c.pass();
    // Act
    const confirmed = await ecsr(['prune', '--confirm', c.cluster], { env: c.env });
    stack.sim.clock.advance(60);
    const pruning = await c.pass();
    // Assess: nothing deleted before the confirmation, both after.
    expect(blocked.actions).toEqual([]);
    expect(blocked.statuses[`${c.cluster}/web`].phase).toBe('Blocked');
    expect(blocked.statuses[`${c.cluster}/web`].conditions.find((x) => x.type === 'Blocked')?.reason).toBe(Reason.PruneBlocked);
    expect(blocked.statuses[`${c.cluster}/web`].conditions.find((x) => x.type === 'Blocked')?.message).toContain(`ecsr prune --confirm ${c.cluster}`);
    expect(confirmed.code).toBe(0);
    expect(confirmed.stdout).toMatch(
      new RegExp(
        `^Prune of cluster ${c.cluster} confirmed until \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z: each pass until then deletes owned services without a spec there \\(at most 5 a pass\\)\\.\\n` +
          `Released the prune hold of cluster ${c.cluster}, held since [\\d:.TZ-]+ because a pass found no spec at all for cluster ${c.cluster}, where this reconciler owns 2 services\\.\\n$`,
      ),
    );
    const item = (await c.items()).find((i) => i.cluster === '#prune-confirmed');
    expect(item).toMatchObject({ service: c.cluster, expiresAt: expect.any(Number), confirmedBy: expect.any(String) });
    expect(pruning.actions.map((a) => `${a.type} ${a.service} ${a.outcome}`).sort()).toEqual(['DeleteService api applied', 'DeleteService web applied']);
  }, SLOW);

  it('get -o json of a cluster with no spec left prints no item and says its hold on stderr', async () => {
    // Prepare
    const c = await anEmptiedTable();
    await c.pass();
    // Act
    const r = await ecsr(['get', c.cluster, '-o', 'json'], { env: c.env });
    // Assess: stdout stays the (empty) list a program parses.
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([]);
    expect(r.stderr).toMatch(new RegExp(`^ecsr get: Prune held in cluster ${c.cluster} since .*ecsr prune --confirm ${c.cluster}`));
  }, SLOW);

  it('--reconcile runs the pass itself and says what it deleted', async () => {
    // Prepare
    const c = await anEmptiedTable();
    // Act
    const r = await ecsr(['prune', '--confirm', c.cluster, '--reconcile'], { env: c.env });
    // Assess
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Pass: 2 DeleteService action(s) in ${c.cluster}.`);
    expect(c.writeCalls().filter((x) => x.action === 'DeleteService').map((x) => x.request.service).sort()).toEqual(['api', 'web']);
  }, SLOW);

  it('a confirmation that has expired confirms nothing', async () => {
    // Prepare: confirmed for 30 minutes, then the passes' (virtual) clock moves 2 hours on.
    const c = await anEmptiedTable();
    const r = await ecsr(['prune', '--confirm', c.cluster, '--for', '30m'], { env: c.env });
    stack.sim.clock.advance(7200);
    // Act
    const s = await c.pass();
    // Assess
    expect(r.code).toBe(0);
    expect(s.actions).toEqual([]);
    expect(s.statuses[`${c.cluster}/web`].conditions.find((x) => x.type === 'Blocked')?.reason).toBe(Reason.PruneBlocked);
  }, SLOW);

  it('releases the prune hold a half-restored table left, and the next pass prunes the service whose spec is really gone', async () => {
    // Prepare: six services; four specs lost (more than half: held), three applied again one by one.
    const c = await harness.aCase();
    const names = ['s1', 's2', 's3', 's4', 's5', 's6'];
    const files = names.map((n) => c.file(`${n}.yaml`, spec(c.cluster, n)));
    expect((await ecsr(['apply', '-f', c.file('all.yaml', names.map((n) => spec(c.cluster, n)).join('---\n'))], { env: c.env })).code).toBe(0);
    await c.pass();
    for (const service of names.slice(2)) await stack.doc.send(new DeleteCommand({ TableName: c.table, Key: { cluster: c.cluster, service } }));
    stack.sim.clock.advance(60);
    const held = await c.pass();
    for (const f of files.slice(2, 5)) expect((await ecsr(['apply', '-f', f], { env: c.env })).code).toBe(0);
    stack.sim.clock.advance(60);
    const stillHeld = await c.pass();
    const get = await ecsr(['get'], { env: { ...c.env, COLUMNS: '400' } });
    const describe = await ecsr(['describe', `${c.cluster}/s1`], { env: { ...c.env, COLUMNS: '400' } });
    const listJson = await ecsr(['get', '-o', 'json'], { env: c.env });
    const oneJson = await ecsr(['get', `${c.cluster}/s1`, '-o', 'json'], { env: c.env });
    // Act
    const confirmed = await ecsr(['prune', '--confirm', c.cluster], { env: c.env });
    const itemsAfter = await c.items();
    stack.sim.clock.advance(60);
    const pruning = await c.pass();
    // Assess: nothing deleted while held, though one missing spec is within every limit.
    expect(held.actions).toEqual([]);
    expect(held.pruneHolds?.map((h) => h.cluster)).toEqual([c.cluster]);
    expect(stillHeld.actions).toEqual([]);
    expect(stillHeld.statuses[`${c.cluster}/s6`].conditions.find((x) => x.type === 'Blocked')?.message).toContain(`prune held since ${held.startedAt}`);
    expect(get.stdout).toContain(`Prune held in cluster ${c.cluster} since ${held.startedAt}: a pass found 4 of the 6 owned services of cluster ${c.cluster} without a spec (more than half)`);
    expect(get.stdout).toContain(`ecsr prune --confirm ${c.cluster}`);
    expect(describe.stdout).toMatch(new RegExp(`Prune hold: +Prune held in cluster ${c.cluster} since`));
    const hold = { cluster: c.cluster, since: held.startedAt, reason: expect.stringContaining('4 of the 6 owned services') };
    expect((JSON.parse(listJson.stdout) as { service: string; pruneHold?: unknown }[]).map((d) => [d.service, d.pruneHold])).toEqual(['s1', 's2', 's3', 's4', 's5'].map((s) => [s, hold]));
    expect(listJson.stderr).toBe('');
    expect(JSON.parse(oneJson.stdout)).toMatchObject({ service: 's1', pruneHold: hold });
    expect(confirmed.code).toBe(0);
    expect(confirmed.stdout).toContain(`Released the prune hold of cluster ${c.cluster}, held since ${held.startedAt} because a pass found 4 of the 6 owned services`);
    expect(itemsAfter.filter((i) => i.cluster === '#prune-hold')).toEqual([]);
    expect(pruning.actions.map((a) => `${a.type} ${a.service} ${a.outcome}`)).toEqual(['DeleteService s6 applied']);
    expect(pruning.pruneHolds).toBeUndefined();
  }, SLOW);

  it.each([
    { case: 'no cluster', args: ['prune'], stderr: /--confirm/ },
    { case: 'an ARN instead of a name', args: ['prune', '--confirm', 'arn:aws:ecs:eu-west-1:123456789012:cluster/web'], stderr: /--confirm needs an ECS cluster name/ },
    { case: 'more than a day', args: ['prune', '--confirm', 'web', '--for', '2d'], stderr: /--for must be more than 0 and at most 24h/ },
  ])('refuses $case', async ({ args, stderr }) => {
    const c = await harness.aCase();
    const r = await ecsr(args, { env: c.env });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(stderr);
    expect((await c.items()).filter((i) => i.cluster === '#prune-confirmed')).toEqual([]);
  }, SLOW);
});

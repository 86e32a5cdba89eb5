/**
 * Partial reads must never prune or create (dynalite + the ECS simulator): a spec Scan page that
 * fails, a ListServices page that fails beyond 100 services, a DescribeServices batch that fails,
 * a cluster that does not exist next to one that does.
 */
import { describe, expect, it } from 'vitest';
import { Reason } from '../../lambda/core/status';
import { localDoc } from '../runtime/support';
import { aSpecItem, runtimeWith, useSimHarness } from './support';

const name = (i: number) => `s${String(i).padStart(3, '0')}`;


/** A document client of its own whose spec Scan fails (HTTP 500, after the SDK's retries) on every page after the first. */
function docFailingScanAfterPage1(endpoint: string): ReturnType<typeof localDoc> {
  const doc = localDoc(endpoint);
  doc.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { ExclusiveStartKey?: unknown };
      if (context.commandName === 'ScanCommand' && input.ExclusiveStartKey) {
        throw Object.assign(new Error('We encountered an internal error'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } });
      }
      return next(args);
    },
    { step: 'initialize', name: 'failScanPage2' },
  );
  return doc;
}

describe('partial reads never prune', () => {
  const h = useSimHarness({ resetEach: { clusters: ['apps', 'other'] } });

  it('a spec Scan failing on page 2: owned services whose specs were not read are not pruned', async () => {
    // Prepare: five converged services; one spec deleted for real; Scan pages of 2 items, the
    // second page fails (after the SDK's retries) on a document client of its own.
    for (let i = 0; i < 5; i++) await h.putSpec(aSpecItem({ service: name(i), desiredCount: 1 }));
    await h.converge();
    await h.deleteSpec({ cluster: 'apps', service: name(0) });
    const doc = docFailingScanAfterPage1(h.db.endpoint);
    const runtime = runtimeWith(h, { doc, specPageSize: 2 });
    h.sim.advance(60);
    h.sim.clearCalls();

    // Act
    const s = await runtime.run({ holder: 'partial' });

    // Assess
    expect(s.specsComplete).toBe(false);
    expect(s.errors.join(' ')).toMatch(/Scan/);
    expect(s.actions).toEqual([]);
    expect(h.writes()).toEqual([]);
    const notRead = Object.entries(s.statuses).filter(([, st]) => st.conditions.some((c) => c.reason === Reason.SpecsIncomplete));
    expect(notRead.length).toBeGreaterThanOrEqual(1);
    for (let i = 0; i < 5; i++) expect((await h.describe('apps', name(i)))?.status).toBe('ACTIVE');
    doc.destroy();
  });

  it('a spec Scan failing part-way: items read are reconciled as usual, an absent one waits with SpecsIncomplete, nothing is deleted', async () => {
    // Prepare: s000 says state: absent, s001 is converged; Scan pages of 2 items (s000 and s001
    // on the first), later pages fail.
    for (let i = 0; i < 5; i++) await h.putSpec(aSpecItem({ service: name(i), desiredCount: 1 }));
    await h.converge();
    await h.editSpec({ cluster: 'apps', service: name(0) }, { state: 'absent' });
    const before = await h.status({ cluster: 'apps', service: name(1) });
    const doc = docFailingScanAfterPage1(h.db.endpoint);
    const runtime = runtimeWith(h, { doc, specPageSize: 2 });
    h.sim.advance(60);
    h.sim.clearCalls();
    const succeededBefore = h.metrics.data.filter((d) => d.name === 'PassSucceeded').length;

    // Act
    const s = await runtime.run({ holder: 'partial' });

    // Assess: the absent spec's item says why it was not deleted; the converged one is unchanged
    // (its spec was read whole); the pass says the read was partial and emits no PassSucceeded.
    expect(s.specsComplete).toBe(false);
    expect(s.errors).toEqual(expect.arrayContaining([expect.stringMatching(/^specs: .*Scan/)]));
    expect(h.writes()).toEqual([]);
    const absent = await h.status({ cluster: 'apps', service: name(0) });
    expect(absent?.phase).toBe('Pending');
    expect(absent?.conditions.find((c) => c.type === 'Incomplete')).toMatchObject({ status: 'True', reason: Reason.SpecsIncomplete });
    expect(await h.status({ cluster: 'apps', service: name(1) })).toEqual(before);
    expect((await h.describe('apps', name(0)))?.status).toBe('ACTIVE');
    expect(h.metrics.data.filter((d) => d.name === 'PassSucceeded').length).toBe(succeededBefore);
    doc.destroy();
  });

  it('more than 100 services, ListServices page 2 failing: nothing pruned; the next full read prunes', async () => {
    // Prepare: 120 converged services (ListServices pages of 100, DescribeServices batches of 10).
    for (let i = 0; i < 120; i++) await h.putSpec(aSpecItem({ service: name(i), desiredCount: 1 }));
    const converging = await h.converge(30);
    expect(converging.flatMap((s) => s.actions).filter((a) => a.outcome !== 'applied')).toEqual([]);
    await h.deleteSpec({ cluster: 'apps', service: name(119) });
    h.sim.injectFault({ action: 'ListServices', nth: 2, times: 3, errorType: 'ThrottlingException', message: 'Rate exceeded' });
    h.sim.clearCalls();
    h.sim.advance(60);

    // Act
    const partial = await h.pass('partial');
    h.sim.advance(60);
    const full = await h.pass('full');

    // Assess
    expect(partial.clusters.apps).toBe(false);
    expect(partial.actions).toEqual([]);
    expect(full.actions.map((a) => [a.type, a.service, a.outcome])).toEqual([['DeleteService', name(119), 'applied']]);
    expect(h.sim.calls({ action: 'CreateService' })).toEqual([]);
    expect(h.sim.calls({ action: 'DescribeServices' }).every((c) => (c.request.services as string[]).length <= 10)).toBe(true);
  });

  it('a DescribeServices batch failing: its services are neither pruned nor created again', async () => {
    // Prepare: 12 converged services (two batches); one spec deleted.
    for (let i = 0; i < 12; i++) await h.putSpec(aSpecItem({ service: name(i), desiredCount: 1 }));
    await h.converge();
    await h.deleteSpec({ cluster: 'apps', service: name(11) });
    h.sim.injectFault({ action: 'DescribeServices', nth: 2, times: 3, errorType: 'ServerException' });
    h.sim.clearCalls();
    h.sim.advance(60);

    // Act
    const s = await h.pass('partial');

    // Assess
    expect(s.actions).toEqual([]);
    expect(h.writes()).toEqual([]);
    // A service not read is not planned: it keeps its remembered status until a pass reads it.
    const stored = await h.status({ cluster: 'apps', service: name(10) });
    expect(stored?.lastAppliedSpecHash).toBeDefined();
    // (The stored status also carries the version of its write, which is not part of the memory.)
    const { version: _version, ...remembered } = stored as unknown as Record<string, unknown>;
    expect(s.statuses[`apps/${name(10)}`]).toEqual(remembered);
    expect(s.counts.servicesNotRead).toBe(1);
    expect(s.clusters.apps).toBe(false);
    expect(s.errors.some((e) => e.includes('DescribeServices'))).toBe(true);
  });

  it('two clusters, one missing: the missing one is reported, the other converges and prunes normally', async () => {
    // Prepare
    await h.putSpec(aSpecItem({ cluster: 'apps', service: 'web' }));
    await h.putSpec(aSpecItem({ cluster: 'other', service: 'api' }));
    await h.putSpec(aSpecItem({ cluster: 'other', service: 'tmp' }));
    await h.putSpec(aSpecItem({ cluster: 'gone', service: 'x' }));
    await h.putSpec(aSpecItem({ cluster: 'gone', service: 'y', state: 'absent' }));
    await h.passUntil((s) => ['apps/web', 'other/api', 'other/tmp'].every((id) => s.statuses[id]?.phase === 'Converged'));
    await h.deleteSpec({ cluster: 'other', service: 'tmp' });
    h.sim.advance(60);

    // Act
    const s = await h.pass('prune');

    // Assess
    expect(s.actions.map((a) => [a.type, a.cluster, a.service])).toEqual([['DeleteService', 'other', 'tmp']]);
    expect(s.statuses['gone/x']).toMatchObject({ phase: 'Blocked' });
    expect(s.statuses['gone/x'].conditions.find((c) => c.type === 'Blocked')?.reason).toBe(Reason.ClusterNotFound);
    expect(s.statuses['gone/y']).toMatchObject({ phase: 'Deleted' });
    expect(s.clusters).toMatchObject({ apps: true, other: true, gone: true });
  });
});

/**
 * The prune hold against the ECS simulator and dynalite: a table that loses most of a cluster's
 * specs and gets them back a few at a time (a person re-applying files one by one, a restore
 * script) must not prune the ones still missing once the count of missing ones falls under the
 * prune rules' limits. The hold is an item in the table; it ends when every owned service has a
 * spec again, or when a person confirms.
 */
import { describe, expect, it } from 'vitest';
import { DynamoSpecStore, PRUNE_HOLD_PARTITION } from '../../lambda/adapters/dynamo-spec-store';
import { ENV } from '../../lambda/config';
import type { PassSummary } from '../../lambda/core/pass';
import { Reason } from '../../lambda/core/status';
import { aSpecItem, useSimHarness } from './support';

const NAMES = Array.from({ length: 12 }, (_, i) => `s${String(i + 1).padStart(2, '0')}`);
const KEPT = NAMES[0];

describe('a prune hold outlives the pass that found a wiped table', () => {
  const h = useSimHarness();

  /** Twelve owned, converged services in `apps`; then every spec but the first removed. Returns their ARNs. */
  async function twelveOwnedServicesThenElevenSpecsLost(): Promise<Map<string, string>> {
    await h.reset({ env: { [ENV.managedClusters]: 'apps' } });
    for (const service of NAMES) await h.putSpec(aSpecItem({ service, desiredCount: 1 }));
    await h.converge();
    const arns = new Map<string, string>();
    for (const service of NAMES) arns.set(service, (await h.describe('apps', service))?.serviceArn ?? '');
    for (const service of NAMES) if (service !== KEPT) await h.deleteSpec({ cluster: 'apps', service });
    h.sim.advance(60);
    h.sim.clearCalls();
    return arns;
  }

  const restore = (service: string) => h.putSpec(aSpecItem({ service, desiredCount: 1 }));
  const holdItems = async () => {
    const read = await h.runtime.ports.specs.readAll();
    return read.pruneHolds ?? [];
  };
  /** Writes that could take a service away or make a new one: DeleteService, a scale to 0, CreateService. */
  const destructive = () =>
    h.sim
      .calls()
      .filter((c) => c.action === 'DeleteService' || c.action === 'CreateService' || (c.action === 'UpdateService' && c.request.desiredCount === 0))
      .map((c) => `${c.action} ${String(c.request.service ?? c.request.serviceName)}`);

  it('a restore two items a minute (1, 3, 5, 7, 9, 11, 12 specs) deletes and re-creates nothing', async () => {
    // Prepare
    const arns = await twelveOwnedServicesThenElevenSpecsLost();
    const missing = NAMES.filter((n) => n !== KEPT);
    // Act: a pass, then two specs back, a minute later the next pass.
    const summaries: PassSummary[] = [];
    for (;;) {
      summaries.push(await h.pass(`restore-${summaries.length}`));
      if (missing.length === 0) break;
      for (const service of missing.splice(0, 2)) await restore(service);
      h.sim.advance(60);
    }
    // Assess
    expect(summaries.map((s) => s.counts.specs)).toEqual([1, 3, 5, 7, 9, 11, 12]);
    expect(destructive()).toEqual([]);
    for (const service of NAMES) {
      const svc = await h.describe('apps', service);
      expect({ service, status: svc?.status, arn: svc?.serviceArn }).toEqual({ service, status: 'ACTIVE', arn: arns.get(service) });
    }
    // Every pass but the last holds the missing ones and says how to release the hold.
    for (const s of summaries.slice(0, -1)) {
      expect(s.pruneHolds?.map((x) => x.cluster)).toEqual(['apps']);
      expect(s.pruneHolds?.[0].release).toContain('ecsr prune --confirm apps');
      const orphans = Object.entries(s.statuses).filter(([id]) => !s.statuses[id].specHash);
      expect(orphans.length).toBe(12 - s.counts.specs);
      for (const [, st] of orphans) {
        const blocked = st.conditions.find((c) => c.type === 'Blocked');
        expect(blocked?.reason).toBe(Reason.PruneBlocked);
        expect(blocked?.message).toContain('ecsr prune --confirm apps');
      }
    }
    expect(summaries[3].pruneHolds?.[0]).toMatchObject({ missing: 5, reason: expect.stringContaining('11 of the 12 owned services') });
    // Whole again: the hold ended by itself, and the item is gone.
    const last = summaries.at(-1) as PassSummary;
    expect(last.pruneHolds).toBeUndefined();
    expect(last.pruneHoldsReleased).toEqual([{ cluster: 'apps', because: 'restored' }]);
    expect(await holdItems()).toEqual([]);
    expect((await h.item({ cluster: PRUNE_HOLD_PARTITION, service: 'apps' }))).toBeUndefined();
  });

  it('once released by a whole table, a spec deleted later is pruned as usual', async () => {
    // Prepare
    await twelveOwnedServicesThenElevenSpecsLost();
    await h.pass('held');
    for (const service of NAMES) if (service !== KEPT) await restore(service);
    h.sim.advance(60);
    await h.pass('whole');
    await h.deleteSpec({ cluster: 'apps', service: 's12' });
    h.sim.advance(60);
    h.sim.clearCalls();
    // Act
    const s = await h.pass('one deleted');
    // Assess
    expect(s.actions.map((a) => `${a.type} ${a.service} ${a.outcome}`)).toEqual(['DeleteService s12 applied']);
    expect(s.pruneHolds).toBeUndefined();
  });

  it('a confirmation releases the hold, and the next pass prunes the service whose spec is really gone', async () => {
    // Prepare: eleven of the twelve come back; s12's spec was deleted on purpose.
    await twelveOwnedServicesThenElevenSpecsLost();
    const first = await h.pass('held');
    for (const service of NAMES) if (service !== KEPT && service !== 's12') await restore(service);
    h.sim.advance(60);
    const stillHeld = await h.pass('still held');
    const store = new DynamoSpecStore(h.doc, h.table);
    // Act: what `ecsr prune --confirm apps` writes.
    await store.writePruneConfirmation({ cluster: 'apps', expiresAt: new Date(h.sim.clock.now().getTime() + 3600_000), confirmedBy: 'test' });
    h.sim.advance(60);
    const confirmed = await h.pass('confirmed');
    // Assess
    expect(first.actions).toEqual([]);
    expect(stillHeld.actions).toEqual([]);
    expect(stillHeld.pruneHolds?.[0]).toMatchObject({ cluster: 'apps', missing: 1 });
    expect(stillHeld.statuses['apps/s12'].conditions.find((c) => c.type === 'Blocked')?.message).toMatch(/prune held since .*1 still has none/);
    expect(confirmed.actions.map((a) => `${a.type} ${a.service} ${a.outcome}`)).toEqual(['DeleteService s12 applied']);
    expect(confirmed.pruneHoldsReleased).toEqual([{ cluster: 'apps', because: 'confirmed' }]);
    expect(await holdItems()).toEqual([]);
  });

  it('the hold is kept while the cluster cannot be read to the end, and never read as a spec', async () => {
    // Prepare
    await twelveOwnedServicesThenElevenSpecsLost();
    await h.pass('held');
    for (const service of NAMES) if (service !== KEPT) await restore(service);
    // Act: the fast path (a few keys) reads no cluster to the end, and no hold.
    const fast = await h.runtime.runFastPath([{ cluster: 'apps', service: 's02' }], { holder: 'fast' });
    // Assess
    expect(fast?.summary.outcome).toBe('completed');
    expect(fast?.summary.pruneHolds).toBeUndefined();
    expect(fast?.summary.pruneHoldsReleased).toBeUndefined();
    const read = await h.runtime.ports.specs.readAll();
    expect(read.specs.map((r) => r.key?.service).sort()).toEqual(NAMES);
    expect(read.pruneHolds).toEqual([{ cluster: 'apps', since: expect.any(String), reason: expect.stringContaining('of the 12 owned services') }]);
  });
});

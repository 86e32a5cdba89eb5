/**
 * Prune protection against the ECS simulator and dynalite: a table that holds no
 * spec at all for a cluster where the reconciler owns services (emptied, replaced, restored into a
 * new table) deletes nothing there until a person confirms with an item in the table; the
 * confirmation holds until it expires, and `maxDeletesPerPass` still applies.
 */
import { describe, expect, it } from 'vitest';
import { DynamoSpecStore } from '../../lambda/adapters/dynamo-spec-store';
import { ENV } from '../../lambda/config';
import { Reason } from '../../lambda/core/status';
import { aSpecItem, useSimHarness } from './support';

const NAMES = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7'];

describe('PruneBlocked until a person confirms', () => {
  const h = useSimHarness();

  async function sevenOwnedServicesThenAnEmptyTable(): Promise<void> {
    // As the construct deploys it: the managed clusters are observed even when no spec names them.
    await h.reset({ env: { [ENV.managedClusters]: 'apps' } });
    for (const service of NAMES) await h.putSpec(aSpecItem({ service, desiredCount: 1 }));
    await h.converge();
    for (const service of NAMES) await h.deleteSpec({ cluster: 'apps', service });
    h.sim.advance(60);
    h.sim.clearCalls();
  }
  const confirm = (expiresInSeconds: number) =>
    new DynamoSpecStore(h.doc, h.table).writePruneConfirmation({
      cluster: 'apps',
      expiresAt: new Date(h.sim.clock.now().getTime() + expiresInSeconds * 1000),
      confirmedBy: 'test',
    });

  it('an emptied table deletes nothing, pass after pass, and says why', async () => {
    // Prepare
    await sevenOwnedServicesThenAnEmptyTable();
    // Act
    const summaries = [];
    for (let i = 0; i < 3; i++) {
      summaries.push(await h.pass(`p${i}`));
      h.sim.advance(60);
    }
    // Assess
    expect(h.writes()).toEqual([]);
    for (const s of summaries) {
      expect(Object.keys(s.statuses).sort()).toEqual(NAMES.map((n) => `apps/${n}`));
      for (const st of Object.values(s.statuses)) {
        expect(st.conditions.find((c) => c.type === 'Blocked')?.reason).toBe(Reason.PruneBlocked);
      }
    }
  });

  it('once confirmed, passes prune it, at most MAX_DELETES_PER_PASS a pass', async () => {
    // Prepare
    await sevenOwnedServicesThenAnEmptyTable();
    await confirm(3600);
    // Act
    const first = await h.pass('first');
    h.sim.advance(60);
    const second = await h.pass('second');
    // Assess
    expect(first.actions.filter((a) => a.type === 'DeleteService')).toHaveLength(5);
    expect(second.actions.filter((a) => a.type === 'DeleteService')).toHaveLength(2);
    expect(h.sim.calls({ action: 'DeleteService', outcome: 'ok' })).toHaveLength(7);
  });

  it('an expired confirmation, or one for another cluster, confirms nothing', async () => {
    // Prepare
    await sevenOwnedServicesThenAnEmptyTable();
    await confirm(60);
    await new DynamoSpecStore(h.doc, h.table).writePruneConfirmation({ cluster: 'other', expiresAt: new Date(h.sim.clock.now().getTime() + 3600_000) });
    h.sim.advance(120);
    // Act
    const s = await h.pass('late');
    // Assess
    expect(s.actions).toEqual([]);
    expect(h.writes()).toEqual([]);
  });

  it('the confirmation item is never read as a spec', async () => {
    // Prepare
    await confirm(3600);
    // Act
    const read = await h.runtime.ports.specs.readAll();
    // Assess
    expect(read.specs).toEqual([]);
    expect(read.pruneConfirmations).toEqual([{ cluster: 'apps', expiresAt: expect.any(Date), confirmedBy: 'test' }]);
  });
});

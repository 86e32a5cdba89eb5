/**
 * Clusters the reconciler may not read (dynalite + the ECS simulator): IAM answering AccessDenied
 * to every call that names the cluster, as the construct's policy does for a cluster outside its
 * `clusters`. A permanent refusal is every spec's status there, in AWS's words; a transient
 * partial read (5xx) keeps today's caution: remembered statuses, no prune.
 */
import { describe, expect, it } from 'vitest';
import { statusRow } from '../../bin/commands/support/format';
import { SpecTable } from '../../bin/commands/support/spec-table';
import { Reason } from '../../lambda/core/status';
import { aSpecItem, useSimHarness } from './support';

const OLD = { cluster: 'other', service: 'old' };
const NEW = { cluster: 'other', service: 'new' };
const WEB = { cluster: 'apps', service: 'web' };
const DENIED = 'User: arn:aws:sts::123456789012:assumed-role/reconciler/fn is not authorized to perform: ecs:DescribeServices on resource: arn:aws:ecs:us-east-1:123456789012:service/other/*';

describe('a cluster the reconciler may not read', () => {
  const h = useSimHarness({ resetEach: { clusters: ['apps', 'other'] } });

  async function twoClustersConverged(): Promise<void> {
    await h.putSpec(aSpecItem({ desiredCount: 1 }));
    await h.putSpec(aSpecItem({ ...OLD, desiredCount: 1 }));
    await h.converge();
  }

  it('every call naming it denied: each spec there, old or new, gets ClusterAccessDenied with AWS\'s message; the other cluster converges', async () => {
    // Prepare: two converged services, then a new spec in the cluster that becomes unreadable.
    await twoClustersConverged();
    await h.putSpec(aSpecItem({ ...NEW, desiredCount: 1 }));
    h.sim.injectFault({ action: '*', cluster: 'other', errorType: 'AccessDeniedException', message: DENIED });
    h.sim.clearCalls();

    // Act
    h.sim.advance(60);
    const s = await h.pass('denied');

    // Assess
    for (const key of [OLD, NEW]) {
      const st = await h.status(key);
      expect(st?.phase).toBe('Blocked');
      const blocked = st?.conditions.find((c) => c.type === 'Blocked');
      expect(blocked?.reason).toBe(Reason.ClusterAccessDenied);
      expect(blocked?.message).toContain(DENIED);
      expect(st?.conditions.find((c) => c.type === 'Ready')?.status).toBe('Unknown');
      expect(st?.reason).toContain(DENIED);
      const row = statusRow((await new SpecTable(h.table, h.doc).get(key))!);
      expect(row.reason).toMatch(/^ClusterAccessDenied: cluster other cannot be read: .*AccessDeniedException/);
    }
    expect(s.statuses['other/new']?.phase).toBe('Blocked');
    expect((await h.status(WEB))?.phase).toBe('Converged');
    expect(h.writes()).toEqual([]);

    // Recovery: the permission back, the next pass reads the cluster and creates the new service.
    h.sim.clearFaults();
    expect((await h.describe('other', 'old'))?.status).toBe('ACTIVE');
    h.sim.advance(60);
    const back = await h.pass('allowed');
    expect(back.actions.map((a) => `${a.service} ${a.type} ${a.outcome}`)).toEqual(['new RegisterTaskDefinition applied', 'new CreateService applied']);
    expect((await h.status(OLD))?.phase).toBe('Converged');
  });

  it('a transient partial read (ServerException) is not a refusal: remembered statuses, no prune, no create', async () => {
    // Prepare
    await twoClustersConverged();
    await h.putSpec(aSpecItem({ ...NEW, desiredCount: 1 }));
    await h.deleteSpec(OLD);
    h.sim.injectFault({ action: '*', cluster: 'other', errorType: 'ServerException', message: 'Service unavailable' });
    h.sim.clearCalls();

    // Act
    h.sim.advance(60);
    const s = await h.pass('5xx');

    // Assess
    expect(h.writes()).toEqual([]);
    h.sim.clearFaults();
    expect((await h.describe('other', 'old'))?.status).toBe('ACTIVE');
    expect(s.clusters.other).toBe(false);
    expect(Object.values(s.statuses).some((st) => st.conditions.some((c) => c.reason === Reason.ClusterAccessDenied))).toBe(false);
  });
});

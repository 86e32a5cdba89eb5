/**
 * Stopped-task reasons are best effort (the ECS simulator and dynalite): ListTasks / DescribeTasks
 * failing for a lagging service leaves that service's `stoppedTasks` undefined and is reported, but
 * the cluster observation stays complete, so creates and prunes in the cluster go on.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { EcsObserver } from '../../lambda/adapters/ecs-observer';
import { Reason } from '../../lambda/core/status';
import { aSpecItem, useSimHarness } from '../break/support';

const UNPULLABLE = 'public.ecr.aws/nginx/unpullable:1.27';

describe('stopped-task reasons are best effort', () => {
  const h = useSimHarness();

  beforeEach(async () => {
    // A service whose tasks never start: it lags, so its stopped tasks are read each pass.
    await h.putSpec(aSpecItem({ service: 'broken', image: UNPULLABLE, desiredCount: 1 }));
    await h.pass('create-broken');
    h.sim.advance(90);
  });

  it.each([
    { case: 'ListTasks fails', action: 'ListTasks' },
    { case: 'DescribeTasks fails', action: 'DescribeTasks' },
  ])('observer: $case; the cluster is still complete, the service has no stoppedTasks, a warning says why', async ({ action }) => {
    // Prepare
    const observer = new EcsObserver(h.runtime.ecs);
    const healthy = await observer.observeCluster('apps', []);
    h.sim.injectFault({ action, fraction: 1, errorType: 'ServerException', message: 'We encountered an internal error' });

    // Act
    const observed = await observer.observeCluster('apps', []);

    // Assess
    expect(healthy.services.broken.stoppedTasks?.length).toBeGreaterThan(0);
    expect(observed.complete).toBe(true);
    expect(observed.error).toBeUndefined();
    expect(observed.services.broken).toBeDefined();
    expect(observed.services.broken.stoppedTasks).toBeUndefined();
    expect(observed.warnings).toHaveLength(1);
    expect(observed.warnings?.[0]).toMatch(new RegExp(`${action === 'ListTasks' ? 'ListTasks' : 'DescribeTasks'}.*service=broken.*internal error`));
    h.sim.clearFaults();
  });

  it('observer: no stopped-task read starts once shouldContinue says no', async () => {
    // Prepare
    h.sim.clearCalls();

    // Act
    const observed = await new EcsObserver(h.runtime.ecs).observeCluster('apps', [], { shouldContinue: () => false });

    // Assess
    expect(observed.complete).toBe(true);
    expect(observed.services.broken.runningCount).toBeLessThan(observed.services.broken.desiredCount);
    expect(observed.services.broken.stoppedTasks).toBeUndefined();
    expect(h.sim.calls({ action: 'ListTasks' })).toEqual([]);
    expect(h.sim.calls({ action: 'DescribeTasks' })).toEqual([]);
  });

  it('pass: a new service in the same cluster is still created, and the failed read is in the errors', async () => {
    // Prepare
    await h.putSpec(aSpecItem({ service: 'web', desiredCount: 1 }));
    h.sim.injectFault({ action: 'ListTasks', fraction: 1, errorType: 'ServerException', message: 'We encountered an internal error' });
    h.sim.clearCalls();

    // Act
    const s = await h.pass('with-failing-list-tasks');

    // Assess
    expect(h.sim.calls({ action: 'ListTasks' }).length).toBeGreaterThan(0);
    expect(s.clusters.apps).toBe(true);
    expect(s.readsComplete).toBe(true);
    expect(s.actions.map((a) => [a.service, a.type, a.outcome])).toEqual([
      ['web', 'RegisterTaskDefinition', 'applied'],
      ['web', 'CreateService', 'applied'],
    ]);
    expect(s.errors.some((e) => /ListTasks.*service=broken/.test(e))).toBe(true);
    const broken = s.statuses['apps/broken'];
    expect(broken.conditions.some((c) => c.reason === Reason.ObservationIncomplete)).toBe(false);
    expect(broken.runningCount).toBe(0);
    h.sim.clearFaults();
  });
});

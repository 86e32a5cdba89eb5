/**
 * A service ECS manages itself (Express Mode, `resourceManagementType: ECS`), against the
 * simulator: decoded without error, never written to (no UpdateService, RegisterTaskDefinition
 * or DeleteService), and its status says why. (The simulator knows only the FARGATE capacity
 * providers, so services on Managed Instances capacity are planned in
 * test/core/reconcile/reconcile.test.ts.)
 */
import { UpdateServiceCommand } from '@aws-sdk/client-ecs';
import { describe, expect, it } from 'vitest';
import { aSpecItem, personEcs, useSimHarness } from '../break/support';

const WEB = { cluster: 'apps', service: 'web' };

describe('services no spec may change', () => {
  const h = useSimHarness();

  it('an Express Mode service (resourceManagementType ECS) is never written to, even owned and drifted; its status says ECS manages it', async () => {
    // Prepare: a service the reconciler converged, then taken over by ECS, then scaled by hand.
    await h.putSpec(aSpecItem({ desiredCount: 2 }));
    await h.converge();
    h.sim.manageByEcs({ cluster: 'apps', service: 'web' });
    const ecs = personEcs(h);
    try {
      await ecs.send(new UpdateServiceCommand({ cluster: 'apps', service: 'web', desiredCount: 5 }));
    } finally {
      ecs.destroy();
    }
    await h.editSpec(WEB, { image: 'public.ecr.aws/nginx/nginx:1.28' });
    h.sim.clearCalls();

    // Act
    const summary = await h.pass('express');
    h.sim.advance(60);
    await h.pass('express-again');

    // Assert
    expect(h.writes()).toEqual([]);
    expect(summary.actions).toEqual([]);
    const status = await h.status(WEB);
    expect(status?.phase).toBe('Blocked');
    expect(JSON.stringify(status)).toMatch(/"ManagedByEcs".*managed by ECS itself \(Express Mode, resourceManagementType ECS\)/);
    expect((await h.describe('apps', 'web'))?.desiredCount).toBe(5);
  });

  it('a spec with state absent does not delete a service ECS manages', async () => {
    await h.putSpec(aSpecItem({ desiredCount: 1 }));
    await h.converge();
    h.sim.manageByEcs({ cluster: 'apps', service: 'web' });
    await h.editSpec(WEB, { state: 'absent' });
    h.sim.clearCalls();
    await h.pass('absent');
    expect(h.writes()).toEqual([]);
    expect((await h.describe('apps', 'web'))?.status).toBe('ACTIVE');
  });
});

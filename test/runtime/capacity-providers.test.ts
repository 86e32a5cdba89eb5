/**
 * Clusters without the FARGATE / FARGATE_SPOT capacity providers (issue 11 part 4), against the
 * ECS simulator (which refuses such a strategy with ECS's own InvalidParameterException): the
 * status names the missing provider and the fix instead of ECS's raw error, and the service is
 * created by the first pass after the provider is associated.
 */
import { CreateClusterCommand, ECSClient, PutClusterCapacityProvidersCommand } from '@aws-sdk/client-ecs';
import { describe, expect, it } from 'vitest';
import { ACTION_REJECTED_CONDITION } from '../../lambda/core/pass';
import { Reason } from '../../lambda/core/status';
import { aSpecItem, LOCAL, useSimHarness } from './support';

describe('a cluster without the capacity provider a spec uses', () => {
  const h = useSimHarness();

  async function aCluster(name: string, capacityProviders: string[]): Promise<ECSClient> {
    const ecs = new ECSClient({ ...LOCAL, endpoint: h.sim.endpoint });
    // `capacityProviders` is always sent, `[]` included: the simulator checks strategies only then.
    await ecs.send(new CreateClusterCommand({ clusterName: name, capacityProviders }));
    return ecs;
  }

  it.each([
    { case: 'no provider at all (capacityProviders: [])', has: [], spec: {}, names: 'has no FARGATE capacity provider' },
    { case: 'FARGATE only, the spec asks for FARGATE_SPOT', has: ['FARGATE'], spec: { capacityProvider: 'FARGATE_SPOT' }, names: 'has no FARGATE_SPOT capacity provider' },
  ])('$case: a status naming the provider and the fix, then created once it is added', async ({ has, spec, names }) => {
    // Prepare
    const ecs = await aCluster('bare', has);
    try {
      await h.putSpec(aSpecItem({ cluster: 'bare', desiredCount: 1, ...spec }));
      // Act
      const refused = await h.pass('refused');
      await ecs.send(new PutClusterCapacityProvidersCommand({ cluster: 'bare', capacityProviders: ['FARGATE', 'FARGATE_SPOT'], defaultCapacityProviderStrategy: [] }));
      h.sim.advance(60);
      const fixed = await h.pass('fixed');
      // Assess
      const status = await h.status({ cluster: 'bare', service: 'web' });
      const rejected = refused.statuses['bare/web'].conditions.find((c) => c.type === ACTION_REJECTED_CONDITION);
      expect(refused.statuses['bare/web'].phase).toBe('Degraded');
      expect(rejected?.reason).toBe(Reason.CapacityProviderMissing);
      expect(rejected?.message).toContain(`CreateService: cluster bare ${names}`);
      expect(rejected?.message).toContain('aws ecs put-cluster-capacity-providers --cluster bare --capacity-providers FARGATE FARGATE_SPOT');
      expect(rejected?.message).not.toMatch(/InvalidParameterException|specify a valid capacity provider/);
      expect(fixed.actions.map((a) => `${a.type} ${a.outcome}`)).toContain('CreateService applied');
      expect(status?.conditions.some((c) => c.type === ACTION_REJECTED_CONDITION)).toBe(false);
    } finally {
      ecs.destroy();
    }
  });
});

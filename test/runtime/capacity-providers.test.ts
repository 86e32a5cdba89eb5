/**
 * Clusters without the FARGATE / FARGATE_SPOT capacity providers, against the
 * ECS simulator (which refuses such a strategy with ECS's own InvalidParameterException): the
 * status names the missing provider and the fix instead of ECS's raw error, and the service is
 * created (or updated) by the first pass after the provider is associated. CreateService and
 * UpdateService are the only calls of the reconciler that carry a capacity provider strategy
 * (it never calls RunTask, StartTask or CreateTaskSet): both are covered.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CreateClusterCommand, ECSClient, PutClusterCapacityProvidersCommand } from '@aws-sdk/client-ecs';
import { describe, expect, it } from 'vitest';
import { ACTION_REJECTED_CONDITION } from '../../lambda/core/pass';
import { Reason } from '../../lambda/core/status';
import { aSpecItem, LOCAL, useSimHarness } from './support';

describe('a cluster without the capacity provider a spec uses', () => {
  const h = useSimHarness();

  async function aCluster(name: string, capacityProviders: string[] | undefined): Promise<ECSClient> {
    const ecs = new ECSClient({ ...LOCAL, endpoint: h.sim.endpoint });
    await ecs.send(new CreateClusterCommand({ clusterName: name, ...(capacityProviders ? { capacityProviders } : {}) }));
    return ecs;
  }

  it.each([
    // `aws ecs create-cluster --cluster-name bare`: a cluster made without naming providers has none.
    { case: 'created without naming providers', has: undefined, spec: {}, names: 'has no FARGATE capacity provider' },
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

describe('a spec switched to a capacity provider the cluster lacks', () => {
  const h = useSimHarness();

  it('UpdateService: a status naming FARGATE_SPOT and the fix, no raw ECS error; updated once the provider is added', async () => {
    // Prepare: a service running on FARGATE in a cluster that has FARGATE only.
    const ecs = new ECSClient({ ...LOCAL, endpoint: h.sim.endpoint });
    try {
      await ecs.send(new CreateClusterCommand({ clusterName: 'plain', capacityProviders: ['FARGATE'] }));
      await h.putSpec(aSpecItem({ cluster: 'plain', desiredCount: 1, capacityProvider: 'FARGATE' }));
      await h.converge(25);
      await h.editSpec({ cluster: 'plain', service: 'web' }, { capacityProvider: 'FARGATE_SPOT' });
      h.sim.advance(60);
      // Act
      const refused = await h.pass('refused');
      await ecs.send(new PutClusterCapacityProvidersCommand({ cluster: 'plain', capacityProviders: ['FARGATE', 'FARGATE_SPOT'], defaultCapacityProviderStrategy: [] }));
      h.sim.advance(60);
      const fixed = await h.pass('fixed');
      // Assess
      expect(refused.actions.map((a) => `${a.type} ${a.outcome}`)).toContain('UpdateService failed');
      const rejected = refused.statuses['plain/web'].conditions.find((c) => c.type === ACTION_REJECTED_CONDITION);
      expect(rejected?.reason).toBe(Reason.CapacityProviderMissing);
      expect(rejected?.message).toContain('UpdateService: cluster plain has no FARGATE_SPOT capacity provider');
      expect(rejected?.message).not.toContain('FARGATE and FARGATE_SPOT capacity providers');
      expect(rejected?.message).not.toMatch(/InvalidParameterException|not associated with the cluster/);
      expect(fixed.actions.map((a) => `${a.type} ${a.outcome}`)).toContain('UpdateService applied');
      const live = await h.describe('plain', 'web');
      expect(live?.capacityProviderStrategy?.map((s) => s.capacityProvider)).toEqual(['FARGATE_SPOT']);
    } finally {
      ecs.destroy();
    }
  });
});

describe('ECS calls that carry a capacity provider strategy', () => {
  it('the Lambda code sends CreateService and UpdateService only (no RunTask, StartTask, CreateTaskSet, PutClusterCapacityProviders)', () => {
    // ECS API Reference: the actions with a `capacityProviderStrategy` member.
    const withStrategy = ['CreateService', 'UpdateService', 'RunTask', 'CreateTaskSet', 'PutClusterCapacityProviders', 'CreateCluster', 'UpdateCluster'];
    const root = resolve(import.meta.dirname, '../../lambda');
    const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    const used = new Set<string>();
    for (const f of files) {
      const text = readFileSync(join(root, f), 'utf8');
      for (const m of text.matchAll(/\b([A-Z][A-Za-z]+)Command\b/g)) used.add(m[1]);
    }
    expect(used.size).toBeGreaterThan(5);
    expect(withStrategy.filter((a) => used.has(a)).sort()).toEqual(['CreateService', 'UpdateService']);
    expect(used.has('StartTask')).toBe(false);
  });
});

/**
 * What the simulator refuses as ECS does about the account around a service: capacity providers
 * the cluster does not have, subnets and security groups that do not exist (when the simulated
 * account's VPC is declared). Each refusal is ECS's InvalidParameterException in ECS's words, and
 * nothing is created or changed.
 */
import { describe, expect, it } from 'vitest';
import { EcsApiError, SimulatedEcs, startSimulator } from '../../local/sim';
import { aService, aTaskDefinition, SUBNETS } from './helpers';

const NOT_ASSOCIATED =
  'The specified capacity provider strategy cannot contain a capacity provider that is not associated with the cluster. Associate the capacity provider with the cluster or specify a valid capacity provider and try again.';
const VPC = { subnets: [...SUBNETS], securityGroups: ['sg-0123'] };

function refusal(fn: () => unknown): { type: string; message: string } {
  try {
    fn();
  } catch (e) {
    if (e instanceof EcsApiError) return { type: e.type, message: e.message };
    throw e;
  }
  throw new Error('the call was accepted');
}

const network = (subnets: string[], securityGroups: string[] = ['sg-0123']) => ({ awsvpcConfiguration: { subnets, securityGroups } });

describe('simulator: capacity providers the cluster does not have', () => {
  it.each([
    { case: 'CreateCluster without capacityProviders (as aws ecs create-cluster --cluster-name c1)', cluster: { clusterName: 'c1' }, provider: 'FARGATE' },
    { case: 'capacityProviders: []', cluster: { clusterName: 'c1', capacityProviders: [] }, provider: 'FARGATE' },
    { case: 'FARGATE only, FARGATE_SPOT asked', cluster: { clusterName: 'c1', capacityProviders: ['FARGATE'] }, provider: 'FARGATE_SPOT' },
  ])('$case: CreateService and RunTask are refused in ECS words, nothing created', ({ cluster, provider }) => {
    // Prepare
    const core = new SimulatedEcs({ throttling: false });
    core.call('CreateCluster', cluster);
    core.call('RegisterTaskDefinition', aTaskDefinition());
    const strategy = [{ capacityProvider: provider, weight: 1 }];

    // Act
    const create = refusal(() => core.call('CreateService', aService({ capacityProviderStrategy: strategy })));
    const run = refusal(() => core.call('RunTask', { cluster: 'c1', taskDefinition: 'web', capacityProviderStrategy: strategy, networkConfiguration: network(SUBNETS) }));

    // Assess
    expect(create).toEqual({ type: 'InvalidParameterException', message: NOT_ASSOCIATED });
    expect(run).toEqual({ type: 'InvalidParameterException', message: NOT_ASSOCIATED });
    expect(core.snapshot().clusters[0].services).toEqual([]);
    expect(core.snapshot().clusters[0].tasks).toEqual([]);
  });

  it('UpdateService to a provider the cluster lacks is refused, the service keeps its strategy', () => {
    // Prepare
    const core = new SimulatedEcs({ throttling: false });
    core.call('CreateCluster', { clusterName: 'c1', capacityProviders: ['FARGATE'] });
    core.call('RegisterTaskDefinition', aTaskDefinition());
    core.call('CreateService', aService());

    // Act
    const update = refusal(() =>
      core.call('UpdateService', { cluster: 'c1', service: 'web', capacityProviderStrategy: [{ capacityProvider: 'FARGATE_SPOT', weight: 1 }], forceNewDeployment: true }),
    );

    // Assess
    expect(update).toEqual({ type: 'InvalidParameterException', message: NOT_ASSOCIATED });
    const svc = (core.call('DescribeServices', { cluster: 'c1', services: ['web'] }) as { services: { capacityProviderStrategy: unknown }[] }).services[0];
    expect(svc.capacityProviderStrategy).toEqual([{ capacityProvider: 'FARGATE', weight: 1 }]);
  });

  it('clusters created at start have FARGATE and FARGATE_SPOT, as the console makes a Fargate cluster, also after a reset', () => {
    // Prepare
    const core = new SimulatedEcs({ throttling: false, clusters: ['c1'] });
    core.reset();
    core.call('RegisterTaskDefinition', aTaskDefinition());

    // Act
    core.call('CreateService', aService({ capacityProviderStrategy: [{ capacityProvider: 'FARGATE_SPOT', weight: 1 }] }));
    const described = core.call('DescribeClusters', { clusters: ['c1'] }) as { clusters: { capacityProviders: string[] }[] };

    // Assess
    expect(described.clusters[0].capacityProviders).toEqual(['FARGATE', 'FARGATE_SPOT']);
  });
});

describe('simulator: subnets and security groups that do not exist', () => {
  function withVpc(): SimulatedEcs {
    const core = new SimulatedEcs({ throttling: false, vpc: VPC, clusters: ['c1'] });
    core.call('RegisterTaskDefinition', aTaskDefinition());
    return core;
  }

  it.each([
    {
      case: 'an unknown subnet',
      nc: network([SUBNETS[0], 'subnet-0000000000000dead']),
      message: "Error retrieving subnet information for [subnet-0000000000000dead]: The subnet ID 'subnet-0000000000000dead' does not exist (ErrorCode: InvalidSubnetID.NotFound)",
    },
    {
      case: 'an unknown security group',
      nc: network(SUBNETS, ['sg-0123', 'sg-0000000000000dead']),
      message: "Error retrieving security group information for [sg-0000000000000dead]: The security group 'sg-0000000000000dead' does not exist (ErrorCode: InvalidGroup.NotFound)",
    },
  ])('$case: CreateService, UpdateService and RunTask are refused in ECS words, nothing changed', ({ nc, message }) => {
    // Prepare
    const core = withVpc();
    core.call('CreateService', aService({ serviceName: 'ok' }));

    // Act
    const create = refusal(() => core.call('CreateService', aService({ networkConfiguration: nc })));
    const update = refusal(() => core.call('UpdateService', { cluster: 'c1', service: 'ok', networkConfiguration: nc }));
    const run = refusal(() => core.call('RunTask', { cluster: 'c1', taskDefinition: 'web', launchType: 'FARGATE', networkConfiguration: nc }));

    // Assess
    for (const r of [create, update, run]) expect(r).toEqual({ type: 'InvalidParameterException', message });
    const services = core.snapshot().clusters[0].services;
    expect(services.map((s) => s.name)).toEqual(['ok']);
    expect(services[0].deployments).toHaveLength(1);
    const ok = (core.call('DescribeServices', { cluster: 'c1', services: ['ok'] }) as { services: { networkConfiguration: unknown }[] }).services[0];
    expect(ok.networkConfiguration).toEqual({ awsvpcConfiguration: { subnets: SUBNETS, securityGroups: ['sg-0123'], assignPublicIp: 'DISABLED' } });
  });

  it('takes the declared ones; without a declared VPC takes any id', () => {
    // Prepare
    const declared = withVpc();
    const open = new SimulatedEcs({ throttling: false, clusters: ['c1'] });
    open.call('RegisterTaskDefinition', aTaskDefinition());

    // Act
    declared.call('CreateService', aService());
    open.call('CreateService', aService({ networkConfiguration: network(['subnet-0000000000000dead'], ['sg-0000000000000dead']) }));

    // Assess
    expect(declared.snapshot().vpc).toEqual({ subnets: [...SUBNETS].sort(), securityGroups: ['sg-0123'] });
    expect(open.snapshot().vpc).toBeNull();
    expect(open.snapshot().clusters[0].services).toHaveLength(1);
  });

  it('POST /_sim/vpc declares the subnets and security groups that exist (out of band); a reset goes back to the option', async () => {
    // Prepare
    const sim = await startSimulator({ port: 0, throttling: false, clusters: ['c1'] });
    try {
      sim.call('RegisterTaskDefinition', aTaskDefinition());
      const post = (body: unknown) => fetch(`${sim.endpoint}/_sim/vpc`, { method: 'POST', body: JSON.stringify(body) }).then(async (r) => ({ status: r.status, body: await r.json() }));

      // Act
      const set = await post({ subnets: ['subnet-0aaa1111'], securityGroups: ['sg-0aaa1111'] });
      const refused = refusal(() => sim.call('CreateService', aService()));
      sim.call('CreateService', aService({ serviceName: 'fits', networkConfiguration: network(['subnet-0aaa1111'], ['sg-0aaa1111']) }));
      const bad = await post({ subnets: [''] });
      const commands = sim.controlLog().map((c) => c.command);
      const outcomes = sim.calls({ action: 'CreateService' }).map((c) => c.outcome);
      sim.reset();

      // Assess
      expect(set).toEqual({ status: 200, body: { vpc: { subnets: ['subnet-0aaa1111'], securityGroups: ['sg-0aaa1111'] } } });
      expect(refused.message).toBe(`Error retrieving subnet information for [${SUBNETS[0]}]: The subnet ID '${SUBNETS[0]}' does not exist (ErrorCode: InvalidSubnetID.NotFound)`);
      expect(bad.status).toBe(400);
      expect(commands).toEqual(['setVpc']);
      expect(outcomes).toEqual(['InvalidParameterException', 'ok']);
      expect(sim.snapshot().vpc).toBeNull();
    } finally {
      await sim.close();
    }
  });
});

/**
 * Fields the spec does not manage are never stripped by a correction: UpdateService replaces
 * `deploymentConfiguration` and `loadBalancers` whole, so when the pass corrects a managed member
 * of either, the request carries the live service's unmanaged members as ECS answered them
 * (strategy, bakeTimeInMinutes, lifecycleHooks, canary configuration, the circuit breaker's
 * thresholds; a load balancer's advancedConfiguration).
 */
import { describe, expect, it } from 'vitest';
import { toObservedService } from '../../lambda/adapters/ecs-observer';
import { importService } from '../../lambda/core/import-spec';
import { desiredServiceConfig, diffService } from '../../lambda/core/plan-service';
import { asFargateRegistration, concretize, importCases } from '../support/import-cases';
import { realServices } from '../support/real-fixtures';

type Json = Record<string, any>;

const DEFAULTS = { subnets: ['subnet-0a1b2c3d4e5f60001'], securityGroups: ['sg-0a1b2c3d4e5f60001'], executionRoleArn: 'arn:aws:iam::123456789012:role/ecsTaskExecutionRole' };
const TG_BLUE = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/web-blue/0123456789abcdef';
const TG_GREEN = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/web-green/fedcba9876543210';
const TG_ADMIN = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/web-admin/00112233445566ff';
const ADVANCED = {
  alternateTargetGroupArn: TG_GREEN,
  productionListenerRule: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener-rule/app/web/0123456789abcdef/0123456789abcdef/0123456789abcdef',
  roleArn: 'arn:aws:iam::123456789012:role/ecsInfrastructureRoleForLoadBalancers',
};
const UNMANAGED_DEPLOYMENT = {
  strategy: 'ROLLING',
  bakeTimeInMinutes: 0,
  lifecycleHooks: [{ hookTargetArn: 'arn:aws:lambda:us-east-1:123456789012:function:smoke', roleArn: 'arn:aws:iam::123456789012:role/hooks', lifecycleStages: ['POST_SCALE_UP'] }],
};
const UNMANAGED_BREAKER = { thresholdConfiguration: { type: 'COUNT', value: 3 }, resetOnHealthyTask: false };

/** A real Fargate answer imported, then the live service given what the spec does not manage. */
function imported() {
  const raw = concretize(structuredClone(realServices().find((s) => s.name === 'awscli-create-fargate')?.payloads[0] as Json));
  raw.networkConfiguration = { awsvpcConfiguration: { ...raw.networkConfiguration.awsvpcConfiguration, subnets: ['subnet-0123456789abcdef0'], securityGroups: ['sg-0123456789abcdef0'] } };
  const td = asFargateRegistration(importCases().find((k) => k.name === 'devguide-fargate-webserver')?.register as unknown as Json) as unknown as Json;
  const r = importService({ key: { cluster: 'c', service: raw.serviceName }, service: raw, observed: toObservedService(raw as never), taskDefinition: td, defaults: DEFAULTS, ownerId: 'o' });
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return { raw, spec: r.spec };
}

describe('a correction carries over what the spec does not manage', () => {
  it('deploymentConfiguration: a hand-edited minimumHealthyPercent is corrected with strategy, bake time, hooks and breaker thresholds kept', () => {
    const { raw, spec } = imported();
    const live = structuredClone(raw);
    live.deploymentConfiguration = {
      ...live.deploymentConfiguration,
      ...UNMANAGED_DEPLOYMENT,
      minimumHealthyPercent: 50,
      deploymentCircuitBreaker: { ...(live.deploymentConfiguration?.deploymentCircuitBreaker ?? { enable: false, rollback: false }), ...UNMANAGED_BREAKER },
    };
    const d = diffService(desiredServiceConfig(spec, DEFAULTS), toObservedService(live as never));
    expect(d.changes.map((c) => c.field)).toEqual(['deploymentConfiguration.minimumHealthyPercent']);
    expect(d.input.deploymentConfiguration).toMatchObject({ ...UNMANAGED_DEPLOYMENT, minimumHealthyPercent: 100, deploymentCircuitBreaker: UNMANAGED_BREAKER });
  });

  it('loadBalancers: a target group added by the spec is sent with the live advancedConfiguration of the one that stays', () => {
    const { raw, spec } = imported();
    const blue = { targetGroupArn: TG_BLUE, containerName: 'web', containerPort: 80 };
    const admin = { targetGroupArn: TG_ADMIN, containerName: 'web', containerPort: 9090 };
    const live = { ...structuredClone(raw), loadBalancers: [{ ...blue, advancedConfiguration: ADVANCED }] };
    const d = diffService(desiredServiceConfig({ ...spec, loadBalancers: [blue, admin] }, DEFAULTS), toObservedService(live as never));
    expect(d.changes.map((c) => c.field)).toEqual(['loadBalancers']);
    expect(d.input.loadBalancers).toEqual([{ ...blue, advancedConfiguration: ADVANCED }, admin]);
  });

  it('loadBalancers: after ECS swapped the target groups, the entry whose alternate is the spec target group gives its advancedConfiguration, the live one as alternate', () => {
    const { raw, spec } = imported();
    const blue = { targetGroupArn: TG_BLUE, containerName: 'web', containerPort: 80 };
    const admin = { targetGroupArn: TG_ADMIN, containerName: 'web', containerPort: 9090 };
    const swapped = { targetGroupArn: TG_GREEN, containerName: 'web', containerPort: 80, advancedConfiguration: { ...ADVANCED, alternateTargetGroupArn: TG_BLUE } };
    const live = { ...structuredClone(raw), loadBalancers: [swapped] };
    const d = diffService(desiredServiceConfig({ ...spec, loadBalancers: [blue, admin] }, DEFAULTS), toObservedService(live as never));
    expect(d.input.loadBalancers).toEqual([{ ...blue, advancedConfiguration: { ...ADVANCED, alternateTargetGroupArn: TG_GREEN } }, admin]);
  });
});

describe('import carries the live fields the spec declares, and names those it leaves unmanaged', () => {
  const LATTICE = [{ roleArn: 'arn:aws:iam::123456789012:role/ecsInfrastructureRoleForVpcLattice', targetGroupArn: 'arn:aws:vpc-lattice:us-east-1:123456789012:targetgroup/tg-0123456789abcdef0', portName: 'http' }];

  /** The developer guide's web server with its port mapping named, as a Lattice port name needs. */
  function namedPortTaskDefinition(): Json {
    const td = asFargateRegistration(importCases().find((k) => k.name === 'devguide-fargate-webserver')?.register as unknown as Json) as unknown as Json;
    for (const c of td.containerDefinitions) for (const m of c.portMappings ?? []) m.name = 'http';
    return td;
  }

  it('vpcLatticeConfigurations, which DescribeServices reports on the PRIMARY deployment, is imported into the spec', () => {
    const { raw } = imported();
    const live = structuredClone(raw);
    for (const d of live.deployments) if (d.status === 'PRIMARY') d.vpcLatticeConfigurations = LATTICE;
    const r = importService({ key: { cluster: 'c', service: live.serviceName }, service: live, observed: toObservedService(live as never), taskDefinition: namedPortTaskDefinition(), defaults: DEFAULTS, ownerId: 'o' });
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    expect(r.unmanaged).toEqual([]);
    expect(r.spec.vpcLatticeConfigurations).toEqual(LATTICE);
    // The imported spec is the live service: the comparison finds nothing to do.
    expect(diffService(desiredServiceConfig(r.spec, DEFAULTS), toObservedService(live as never)).input).toEqual({});
  });

  it('a Lattice port name the task does not have is refused, naming the field', () => {
    const { raw } = imported();
    const live = structuredClone(raw);
    for (const d of live.deployments) if (d.status === 'PRIMARY') d.vpcLatticeConfigurations = LATTICE;
    const td = asFargateRegistration(importCases().find((k) => k.name === 'devguide-fargate-webserver')?.register as unknown as Json) as unknown as Json;
    const r = importService({ key: { cluster: 'c', service: live.serviceName }, service: live, observed: toObservedService(live as never), taskDefinition: td, defaults: DEFAULTS, ownerId: 'o' });
    expect(r.ok ? [] : r.problems.map((p) => p.path)).toEqual(['spec.vpcLatticeConfigurations[0].portName']);
  });

  it('none for a service without them', () => {
    const { raw } = imported();
    const td = asFargateRegistration(importCases().find((k) => k.name === 'devguide-fargate-webserver')?.register as unknown as Json) as unknown as Json;
    const r = importService({ key: { cluster: 'c', service: raw.serviceName }, service: raw, observed: toObservedService(raw as never), taskDefinition: td, defaults: DEFAULTS, ownerId: 'o' });
    expect(r.ok && r.unmanaged).toEqual([]);
  });
});

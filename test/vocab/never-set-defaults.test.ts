/**
 * What DescribeServices answers today for fields a service never set (deploymentConfiguration
 * `strategy: "ROLLING"`, `bakeTimeInMinutes: 0`, docs/ecs-facts.md §13) is the same as a spec that
 * leaves them out: import accepts such a plain rolling service and writes nothing for them, and the
 * comparison finds no difference. The answers are the real ones of test/fixtures/real with these
 * two fields added as ECS adds them now.
 */
import { describe, expect, it } from 'vitest';
import { toObservedService } from '../../lambda/adapters/ecs-observer';
import { importService } from '../../lambda/core/import-spec';
import { desiredServiceConfig, diffService } from '../../lambda/core/plan-service';
import { asFargateRegistration, concretize, importCases } from '../support/import-cases';
import { realServices } from '../support/real-fixtures';

type Json = Record<string, any>;

const DEFAULTS = { subnets: ['subnet-0a1b2c3d4e5f60001'], securityGroups: ['sg-0a1b2c3d4e5f60001'], executionRoleArn: 'arn:aws:iam::123456789012:role/ecsTaskExecutionRole' };
const FARGATE_SERVICES = ['awscli-create-fargate', 'awscli-update-desired-count', 'awscli-update-task-definition', 'devguide-fargate-describe', 'awscli-update-az-rebalancing'];

/** A real Fargate service answer on valid network ids, as ECS answers it now. */
function answeredToday(name: string, deploymentConfiguration: Json = { strategy: 'ROLLING', bakeTimeInMinutes: 0 }): Json {
  const raw = concretize(structuredClone(realServices().find((s) => s.name === name)?.payloads[0] as Json));
  raw.networkConfiguration = { awsvpcConfiguration: { ...raw.networkConfiguration.awsvpcConfiguration, subnets: ['subnet-0123456789abcdef0', 'subnet-0123456789abcdef1'], securityGroups: ['sg-0123456789abcdef0'] } };
  for (const d of raw.deployments ?? []) {
    delete d.serviceConnectConfiguration;
    delete d.serviceConnectResources;
    delete d.volumeConfigurations;
  }
  raw.deploymentConfiguration = { ...raw.deploymentConfiguration, ...deploymentConfiguration };
  return raw;
}

function imported(raw: Json) {
  const td = asFargateRegistration(importCases().find((k) => k.name === 'devguide-fargate-webserver')?.register as unknown as Json) as unknown as Json;
  const observed = toObservedService(raw as never);
  return { observed, r: importService({ key: { cluster: 'c', service: raw.serviceName }, service: raw, observed, taskDefinition: td, defaults: DEFAULTS, ownerId: 'o' }) };
}

describe.each(FARGATE_SERVICES)('%s, answered with strategy ROLLING and bakeTimeInMinutes 0', (name) => {
  it('imports, writes neither field, and compares equal', () => {
    const { observed, r } = imported(answeredToday(name));
    expect(r.ok ? [] : r.problems).toEqual([]);
    if (!r.ok) return;
    expect(JSON.stringify(r.item)).not.toMatch(/strategy|bakeTime/);
    expect(diffService(desiredServiceConfig(r.spec, DEFAULTS), observed).changes).toEqual([]);
  });
});

describe('a deployment configuration the spec cannot describe', () => {
  it.each([
    ['strategy', { strategy: 'BLUE_GREEN', bakeTimeInMinutes: 10 }, ['service.deploymentConfiguration.strategy', 'service.deploymentConfiguration.bakeTimeInMinutes']],
    ['bake time under ROLLING', { strategy: 'ROLLING', bakeTimeInMinutes: 5 }, ['service.deploymentConfiguration.bakeTimeInMinutes']],
    ['canary', { strategy: 'CANARY', bakeTimeInMinutes: 0, canaryConfiguration: { canaryPercent: 10.0, canaryBakeTimeInMinutes: 5 } }, ['service.deploymentConfiguration.strategy', 'service.deploymentConfiguration.canaryConfiguration']],
  ])('is still refused by import, by field: %s', (_what, dc, paths) => {
    const { r } = imported(answeredToday('awscli-create-fargate', dc));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems.map((p) => p.path)).toEqual(paths);
  });
});

describe('availabilityZoneRebalancing, whose ECS default depends on the service', () => {
  const az = (live: 'ENABLED' | 'DISABLED' | undefined, wanted: 'ENABLED' | 'DISABLED' | undefined) => {
    const raw = answeredToday('awscli-create-fargate');
    if (live === undefined) delete raw.availabilityZoneRebalancing;
    else raw.availabilityZoneRebalancing = live;
    const { observed, r } = imported(raw);
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    const spec = { ...r.spec, availabilityZoneRebalancing: wanted } as typeof r.spec;
    if (spec.availabilityZoneRebalancing === undefined) delete (spec as { availabilityZoneRebalancing?: string }).availabilityZoneRebalancing;
    return diffService(desiredServiceConfig(spec, DEFAULTS), observed);
  };

  it('is not compared when the spec leaves it out: a service that has it DISABLED (or never had it) is not corrected', () => {
    expect(az('DISABLED', undefined).changes).toEqual([]);
    expect(az(undefined, undefined).changes).toEqual([]);
    expect(az('ENABLED', undefined).changes).toEqual([]);
  });

  it('is compared, and corrected, when the spec sets it', () => {
    const d = az('DISABLED', 'ENABLED');
    expect(d.changes).toEqual([{ field: 'availabilityZoneRebalancing', from: 'DISABLED', to: 'ENABLED' }]);
    expect(d.input).toEqual({ availabilityZoneRebalancing: 'ENABLED' });
    expect(az('ENABLED', 'DISABLED').changes.map((c) => c.field)).toEqual(['availabilityZoneRebalancing']);
  });

  it('is imported only when the live value is not ECS create default, so the import keeps managing a DISABLED service', () => {
    for (const [live, written] of [['ENABLED', undefined], ['DISABLED', 'DISABLED']] as const) {
      const raw = answeredToday('awscli-create-fargate');
      raw.availabilityZoneRebalancing = live;
      const { r } = imported(raw);
      expect(r.ok && r.item.availabilityZoneRebalancing).toBe(written ?? undefined);
    }
  });
});

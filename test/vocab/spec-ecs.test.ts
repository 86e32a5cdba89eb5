/**
 * The spec that speaks ECS: containers, task fields and service fields
 * parse with paths in their errors, render into the task definition and the service, and every
 * declared service field is managed (drift corrected), except what the deployment controller
 * does not let UpdateService change.
 */
import { describe, expect, it } from 'vitest';
import { desiredServiceConfig, diffService } from '../../lambda/core/plan-service';
import { plan } from '../../lambda/core/planner';
import { parseSpecItem } from '../../lambda/core/spec';
import { diffTaskDefinitions, renderTaskDefinition } from '../../lambda/core/taskdef';
import type { ServiceSpec } from '../../lambda/core/types';
import { SERVICE_FIELD_NAMES } from '../../lambda/core/vocab/service';
import { anObservedService, planOptions } from '../support/builders';

const ACCOUNT = '123456789012';
const TG = (n: string) => `arn:aws:elasticloadbalancing:eu-west-1:${ACCOUNT}:targetgroup/${n}/0123456789abcdef`;

/** App + FireLens log router + agent sidecar, EFS volume, two target groups. */
function realWorld(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    cluster: 'prod',
    service: 'shop',
    desiredCount: 2,
    cpu: 1024,
    memory: 2048,
    family: 'shop-live',
    executionRoleArn: `arn:aws:iam::${ACCOUNT}:role/shop-exec`,
    containers: [
      {
        name: 'app',
        image: `${ACCOUNT}.dkr.ecr.eu-west-1.amazonaws.com/shop:1.2.3`,
        cpu: 768,
        memory: 1536,
        portMappings: [
          { containerPort: 8080, name: 'http', appProtocol: 'http' },
          { containerPort: 9090, name: 'admin' },
        ],
        environment: [{ name: 'PORT', value: '8080' }],
        secrets: [{ name: 'DB_PASSWORD', valueFrom: `arn:aws:ssm:eu-west-1:${ACCOUNT}:parameter/shop/db` }],
        dependsOn: [{ containerName: 'log-router', condition: 'START' }],
        logConfiguration: { logDriver: 'awsfirelens', options: { Name: 'cloudwatch', region: 'eu-west-1' } },
        mountPoints: [{ sourceVolume: 'media', containerPath: '/srv/media' }],
        healthCheck: { command: ['CMD-SHELL', 'curl -f http://localhost:8080/health || exit 1'] },
      },
      {
        name: 'log-router',
        image: 'public.ecr.aws/aws-observability/aws-for-fluent-bit:stable',
        essential: true,
        firelensConfiguration: { type: 'fluentbit' },
        memoryReservation: 50,
      },
      {
        name: 'datadog-agent',
        image: 'public.ecr.aws/datadog/agent:7',
        essential: false,
        cpu: 128,
        memory: 256,
        environment: [{ name: 'ECS_FARGATE', value: 'true' }],
      },
    ],
    volumes: [{ name: 'media', efsVolumeConfiguration: { fileSystemId: 'fs-0123456789abcdef0', transitEncryption: 'ENABLED' } }],
    loadBalancers: [
      { targetGroupArn: TG('shop-http'), containerName: 'app', containerPort: 8080 },
      { targetGroupArn: TG('shop-admin'), containerName: 'app', containerPort: 9090 },
    ],
    launchType: 'FARGATE',
    platformVersion: '1.4.0',
    enableExecuteCommand: true,
    healthCheckGracePeriodSeconds: 60,
    ...overrides,
  };
}

function ok(item: Record<string, unknown>): ServiceSpec {
  const r = parseSpecItem(item);
  if (!r.ok) throw new Error(JSON.stringify(r.errors, null, 1));
  return r.spec;
}

describe('a real-world spec', () => {
  it('parses, and renders every container, the EFS volume and the live family', () => {
    const spec = ok(realWorld());
    const td = renderTaskDefinition(spec, { defaults: planOptions().defaults, ownerId: 'me' });
    expect(td.family).toBe('shop-live');
    expect(td.containerDefinitions?.map((c) => c.name)).toEqual(['app', 'log-router', 'datadog-agent']);
    expect(td.volumes).toEqual([{ name: 'media', efsVolumeConfiguration: { fileSystemId: 'fs-0123456789abcdef0', transitEncryption: 'ENABLED' } }]);
    // The rendered form compares equal to itself as ECS would describe it (defaults filled in).
    const described = structuredClone(td);
    for (const c of described.containerDefinitions ?? []) {
      c.cpu ??= 0;
      c.essential ??= true;
      c.mountPoints ??= [];
      c.volumesFrom ??= [];
      c.systemControls ??= [];
      for (const p of c.portMappings ?? []) Object.assign(p, { hostPort: p.containerPort, protocol: 'tcp' });
    }
    expect(diffTaskDefinitions(td, described)).toEqual([]);
  });

  it('sends both target groups and the service fields on CreateService', () => {
    const r = parseSpecItem(realWorld());
    if (!r.ok) throw new Error('invalid');
    const out = plan({
      specs: [r],
      specsComplete: true,
      observed: { clusters: { prod: { cluster: 'prod', complete: true, exists: true, services: {} } }, taskDefinitions: {} },
      remembered: {},
      options: planOptions(),
      now: new Date('2026-01-01T00:00:00Z'),
    });
    const create = out.actions.find((a) => a.type === 'CreateService');
    expect(create?.type === 'CreateService' && create.input).toMatchObject({
      launchType: 'FARGATE',
      platformVersion: '1.4.0',
      enableExecuteCommand: true,
      healthCheckGracePeriodSeconds: 60,
      propagateTags: 'SERVICE',
      loadBalancers: [
        { targetGroupArn: TG('shop-http'), containerName: 'app', containerPort: 8080 },
        { targetGroupArn: TG('shop-admin'), containerName: 'app', containerPort: 9090 },
      ],
    });
    expect(create?.type === 'CreateService' && create.input.capacityProviderStrategy).toBeUndefined();
  });
});

describe('cross-field rules name the path, the value and what is allowed', () => {
  const containers = (edit: (cs: Record<string, any>[]) => void) => {
    const item = realWorld();
    edit(item.containers as Record<string, any>[]);
    return item;
  };
  it.each([
    { case: 'dependsOn a missing container', item: containers((cs) => (cs[0].dependsOn[0].containerName = 'nope')), path: 'containers[0].dependsOn[0].containerName', message: /must name a container of the task/ },
    { case: 'a bad dependsOn condition', item: containers((cs) => (cs[0].dependsOn[0].condition = 'READY')), path: 'containers[0].dependsOn[0].condition', message: /must be one of "START", "COMPLETE", "SUCCESS", "HEALTHY"/ },
    { case: 'COMPLETE on an essential container', item: containers((cs) => (cs[0].dependsOn[0].condition = 'COMPLETE')), path: 'containers[0].dependsOn[0].condition', message: /must be START or HEALTHY for an essential container/ },
    { case: 'duplicate container names', item: containers((cs) => (cs[2].name = 'app')), path: 'containers[2].name', message: /must be unique/ },
    { case: 'a port name used twice', item: containers((cs) => (cs[0].portMappings[1].name = 'http')), path: 'containers[0].portMappings[1].name', message: /must be unique in the task/ },
    { case: 'container cpu above the task', item: containers((cs) => (cs[2].cpu = 512)), path: 'containers', message: /container cpu adds up to 1280 CPU units, above the task's cpu \(1024\)/ },
    { case: 'FireLens without a log router', item: containers((cs) => delete cs[1].firelensConfiguration), path: 'containers[0].logConfiguration.logDriver', message: /needs a log router/ },
    { case: 'EFS volume not mounted', item: containers((cs) => delete cs[0].mountPoints), path: 'volumes[0]', message: /is mounted by no container/ },
    { case: 'no essential container', item: containers((cs) => cs.forEach((c) => (c.essential = false))), path: 'containers', message: /at least one essential container/ },
    { case: 'a Fargate refusal', item: containers((cs) => (cs[2].privileged = true)), path: 'containers[2].privileged', message: /not supported on Fargate/ },
    { case: 'an unknown container key', item: containers((cs) => (cs[0].healthcheck = {})), path: 'containers[0].healthcheck', message: /did you mean "healthCheck"/ },
    { case: 'a load balancer on a port the container lacks', item: realWorld({ loadBalancers: [{ targetGroupArn: TG('x'), containerName: 'app', containerPort: 1234 }] }), path: 'loadBalancers[0].containerPort', message: /must be a containerPort of container "app"/ },
    { case: 'launchType with capacityProvider', item: realWorld({ capacityProvider: 'FARGATE_SPOT' }), path: 'launchType', message: /must not be given with capacityProvider/ },
    { case: 'shorthand container attribute without image', item: realWorld({ containerPort: 80 }), path: 'containerPort', message: /belongs to the shorthand container/ },
  ])('$case', ({ item, path, message }) => {
    const r = parseSpecItem(item);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const e = r.errors.find((x) => x.path === path);
    expect(e, JSON.stringify(r.errors)).toBeDefined();
    expect(e?.message).toMatch(message);
  });
});

describe('one rule for what the reconciler manages', () => {
  const spec = ok({ cluster: 'prod', service: 'web', image: 'nginx:1', desiredCount: 2 });
  const desired = desiredServiceConfig(spec, planOptions().defaults);
  it('corrects a hand edit of a field the spec leaves out, to its stated default', () => {
    const live = anObservedService({ platformVersion: '1.4.0', enableExecuteCommand: true, healthCheckGracePeriodSeconds: 30 });
    const d = diffService(desired, live);
    expect(d.changes).toEqual(
      expect.arrayContaining([
        { field: 'platformVersion', from: '1.4.0', to: 'LATEST' },
        { field: 'enableExecuteCommand', from: 'true', to: 'false' },
        { field: 'healthCheckGracePeriodSeconds', from: '30', to: '0' },
      ]),
    );
    expect(d.input).toMatchObject({ platformVersion: 'LATEST', enableExecuteCommand: false, healthCheckGracePeriodSeconds: 0 });
  });
  it('finds no difference on a service the reconciler created', () => {
    const declared = new Set<string>(SERVICE_FIELD_NAMES);
    expect(diffService(desired, anObservedService()).changes.filter((c) => declared.has(c.field))).toEqual([]);
  });
  it('never sends what ECS refuses under CODE_DEPLOY, and says so in ECS terms', () => {
    const r = parseSpecItem({ cluster: 'prod', service: 'web', image: 'nginx:1', desiredCount: 3, platformVersion: '1.4.0' });
    if (!r.ok) throw new Error('invalid');
    const live = anObservedService({ cluster: 'prod', deploymentController: { type: 'CODE_DEPLOY' } });
    const out = plan({
      specs: [r],
      specsComplete: true,
      observed: { clusters: { prod: { cluster: 'prod', complete: true, exists: true, services: { web: live } } }, taskDefinitions: {} },
      remembered: {},
      options: planOptions({ ownerId: live.tags['ecs-reconciler:owner'] ?? 'test-owner' }),
      now: new Date('2026-01-01T00:00:00Z'),
    });
    const update = out.actions.find((a) => a.type === 'UpdateService');
    if (update?.type === 'UpdateService') {
      expect(update.input.platformVersion).toBeUndefined();
      expect(update.input.taskDefinition).toBeUndefined();
    }
    const status = Object.values(out.statuses)[0];
    const blocked = status.conditions.find((c) => c.reason === 'NotUpdatable');
    expect(blocked?.message).toMatch(/CODE_DEPLOY deployment controller.*platformVersion/);
  });
});

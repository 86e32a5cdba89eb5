/**
 * The ECS observer and actuator against the ECS simulator over HTTP: the dynamics moto does not
 * model (DRAINING, stopped tasks, injected failures on the Nth call).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CreateClusterCommand, type ECSClient } from '@aws-sdk/client-ecs';
import { startSimulator, type Simulator } from '../../local/sim';
import { createEcsClient } from '../../lambda/adapters/clients';
import { EcsActuator } from '../../lambda/adapters/ecs-actuator';
import { clearTaskDefinitionCache, EcsObserver } from '../../lambda/adapters/ecs-observer';
import { OWNER_TAG_KEY } from '../../lambda/core/ports';
import { renderTaskDefinition, taskDefinitionFamily } from '../../lambda/core/taskdef';
import type { CreateServiceAction, DeleteServiceAction, RegisterTaskDefinitionAction, UpdateServiceAction } from '../../lambda/core/types';
import { aValidSpec, LOCAL } from '../runtime/support';

function registerAction(service: string, image = 'public.ecr.aws/nginx/nginx:1.27', cpu = 256): RegisterTaskDefinitionAction {
  const r = aValidSpec({ service, image });
  const input = renderTaskDefinition(r.spec, { defaults: { subnets: [], securityGroups: [] }, ownerId: 'o1' });
  return { type: 'RegisterTaskDefinition', cluster: 'apps', service, specHash: r.hash, reason: 'test', input: { ...input, cpu: String(cpu) } };
}

function createAction(service: string, desiredCount = 2, clientToken = `token-${service}`): CreateServiceAction {
  return {
    type: 'CreateService',
    cluster: 'apps',
    service,
    specHash: 'h',
    reason: 'test',
    input: {
      cluster: 'apps',
      serviceName: service,
      taskDefinition: taskDefinitionFamily({ cluster: 'apps', service }),
      desiredCount,
      capacityProviderStrategy: [{ capacityProvider: 'FARGATE', weight: 1 }],
      networkConfiguration: {
        awsvpcConfiguration: { subnets: ['subnet-0123456789abcdef0'], securityGroups: ['sg-0123456789abcdef0'], assignPublicIp: 'DISABLED' },
      },
      deploymentConfiguration: { minimumHealthyPercent: 100, maximumPercent: 200, deploymentCircuitBreaker: { enable: true, rollback: true } },
      tags: [{ key: OWNER_TAG_KEY, value: 'o1' }],
      clientToken,
    },
  };
}

const updateAction = (service: string, desiredCount: number): UpdateServiceAction => ({
  type: 'UpdateService',
  cluster: 'apps',
  service,
  specHash: 'h',
  reason: 'test',
  input: { cluster: 'apps', service, desiredCount },
  changes: [],
});

const deleteAction = (service: string): DeleteServiceAction => ({
  type: 'DeleteService',
  cluster: 'apps',
  service,
  reason: 'test',
  cause: 'absent',
  scaleToZero: true,
});

describe('ECS adapters against the simulator', () => {
  let sim: Simulator;
  let ecs: ECSClient;
  let observer: EcsObserver;
  let actuator: EcsActuator;

  beforeAll(async () => {
    sim = await startSimulator({});
  });
  afterAll(async () => {
    ecs?.destroy();
    await sim?.close();
  });
  beforeEach(async () => {
    sim.reset();
    clearTaskDefinitionCache();
    ecs?.destroy();
    ecs = createEcsClient({ clientConfig: { ...LOCAL, endpoint: sim.endpoint } }).ecs;
    await ecs.send(new CreateClusterCommand({ clusterName: 'apps', capacityProviders: ['FARGATE', 'FARGATE_SPOT'] }));
    observer = new EcsObserver(ecs);
    actuator = new EcsActuator(ecs, observer);
    sim.clearCalls();
  });

  it('collects stop codes and reasons only for services that lag', async () => {
    // Prepare: one healthy service, one whose image cannot be pulled.
    const results = await actuator.apply(
      [registerAction('good'), createAction('good', 1), registerAction('bad', 'public.ecr.aws/nginx/does-not-exist:1'), createAction('bad', 2)],
      () => true,
    );
    expect(results.every((r) => r.ok)).toBe(true);
    sim.advance(120);
    sim.clearCalls();

    // Act
    const observed = await observer.observeCluster('apps', []);

    // Assess
    expect(observed.complete).toBe(true);
    expect(observed.services.good.runningCount).toBe(1);
    expect(observed.services.good.stoppedTasks).toBeUndefined();
    const bad = observed.services.bad;
    expect(bad.runningCount).toBeLessThan(bad.desiredCount);
    expect(bad.stoppedTasks?.length).toBeGreaterThan(0);
    expect(bad.stoppedTasks?.[0]).toMatchObject({ stopCode: 'TaskFailedToStart' });
    expect(bad.stoppedTasks?.[0].stoppedReason).toMatch(/CannotPullContainerError/);
    const listTasks = sim.calls({ action: 'ListTasks' });
    expect(listTasks.map((c) => c.request)).toEqual([expect.objectContaining({ cluster: 'apps', serviceName: 'bad', desiredStatus: 'STOPPED' })]);
    expect(bad.events.length).toBeGreaterThan(0);
  });

  it('describes a DRAINING service by name, which ListServices no longer lists', async () => {
    // Prepare
    await actuator.apply([registerAction('web'), createAction('web', 1)], () => true);
    sim.advance(60);
    const [deleted] = await actuator.apply([deleteAction('web')], () => true);
    expect(deleted.ok).toBe(true);

    // Act
    const unnamed = await observer.observeCluster('apps', []);
    const named = await observer.observeCluster('apps', ['web']);

    // Assess
    expect(unnamed.services.web).toBeUndefined();
    expect(named.services.web?.status).toBe('DRAINING');
    expect(sim.calls({ action: 'UpdateService' }).at(-1)?.request).toMatchObject({ desiredCount: 0 });
  });

  it('marks the cluster partial when a DescribeServices batch fails after retries, keeping the rest', async () => {
    // Prepare: 12 services = two batches; the first batch fails on every attempt (3).
    const actions = Array.from({ length: 12 }, (_, i) => [registerAction(`s${i}`), createAction(`s${i}`, 0)]).flat();
    await actuator.apply(actions, () => true);
    sim.injectFault({ action: 'DescribeServices', errorType: 'ServerException', message: 'ECS had a bad day', times: 3 });

    // Act: one batch at a time, so the three failures hit the three attempts of the first batch.
    const observed = await new EcsObserver(ecs, { concurrency: 1 }).observeCluster('apps', []);

    // Assess
    expect(observed.complete).toBe(false);
    expect(observed.exists).toBe(true);
    expect(observed.error).toContain('ECS had a bad day');
    expect(Object.keys(observed.services)).toHaveLength(2);
    expect(sim.calls({ action: 'DescribeServices' }).map((c) => c.outcome)).toEqual(['ServerException', 'ServerException', 'ServerException', 'ok']);
  });

  it.each([
    {
      case: 'register burst limit -> throttled, dependent create skipped',
      // A ClientException to the SDK, so not retried by it: the next pass tries again.
      fault: { action: 'RegisterTaskDefinition', errorType: 'ClientException', message: 'Too many concurrent attempts to create a new revision of the specified family.', times: 1 },
      cpu: 256,
      first: 'throttled',
    },
    {
      case: 'invalid cpu/memory pair -> invalid with ECS message, dependent create skipped',
      fault: undefined,
      cpu: 4096,
      first: 'invalid',
    },
  ])('$case', async ({ fault, cpu, first }) => {
    // Prepare
    if (fault) sim.injectFault(fault);

    // Act
    const results = await actuator.apply([registerAction('web', 'public.ecr.aws/nginx/nginx:1.27', cpu), createAction('web'), registerAction('other'), createAction('other')], () => true);

    // Assess
    expect(results.map((r) => (r.ok ? 'ok' : r.errorClass))).toEqual([first, 'skipped', 'ok', 'ok']);
    expect(results[0].ok === false && results[0].message.length).toBeGreaterThan(0);
    expect(sim.calls({ action: 'CreateService' }).map((c) => c.request.serviceName)).toEqual(['other']);
  });

  it('a throttled UpdateService (after SDK retries) is reported as throttled', async () => {
    await actuator.apply([registerAction('web'), createAction('web', 1)], () => true);
    sim.injectFault({ action: 'UpdateService', errorType: 'ThrottlingException', message: 'Rate exceeded', times: 3 });
    const [r] = await actuator.apply([updateAction('web', 3)], () => true);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.errorClass).toBe('throttled');
    expect(sim.calls({ action: 'UpdateService' })).toHaveLength(3);
  });

  it('CreateService with the same clientToken twice gives one service', async () => {
    const results = await actuator.apply([registerAction('web'), createAction('web', 1, 'same-token'), createAction('web', 1, 'same-token')], () => true);
    expect(results.map((r) => r.ok)).toEqual([true, true, true]);
    const observed = await observer.observeCluster('apps', []);
    expect(Object.keys(observed.services)).toEqual(['web']);
  });
});

/**
 * The ECS observer and actuator against moto: an implementation of the ECS API we did not write,
 * to check request and response shapes.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CreateClusterCommand, DescribeServicesCommand, ListTaskDefinitionsCommand, type ECSClient } from '@aws-sdk/client-ecs';
import { startMoto, type MotoServer } from '../support/moto';
import { needs } from '../support/tools';
import { createEcsClient } from '../../lambda/adapters/clients';
import { EcsActuator, OUT_OF_TIME_MESSAGE } from '../../lambda/adapters/ecs-actuator';
import { clearTaskDefinitionCache, EcsObserver } from '../../lambda/adapters/ecs-observer';
import { OWNER_TAG_KEY } from '../../lambda/core/ports';
import { renderTaskDefinition, taskDefinitionFamily } from '../../lambda/core/taskdef';
import type {
  CreateServiceAction,
  DeleteServiceAction,
  RegisterTaskDefinitionAction,
  TagResourceAction,
  UpdateServiceAction,
} from '../../lambda/core/types';
import { aValidSpec, LOCAL, motoDefaultNetwork, recordCalls, type CallLog } from '../runtime/support';

const OWNER = 'test-owner';

describe('ECS adapters against moto', needs('moto'), () => {
  let moto: MotoServer;
  let ecs: ECSClient;
  let calls: CallLog;
  let network: { subnets: string[]; securityGroups: string[] };

  beforeAll(async () => {
    moto = await startMoto();
  });
  afterAll(async () => {
    ecs?.destroy();
    await moto?.stop();
  });
  beforeEach(async () => {
    await moto.reset();
    clearTaskDefinitionCache();
    ecs?.destroy();
    ecs = createEcsClient({ clientConfig: { ...LOCAL, endpoint: moto.endpoint } }).ecs;
    calls = recordCalls(ecs);
    network = await motoDefaultNetwork(moto.endpoint);
    await ecs.send(new CreateClusterCommand({ clusterName: 'apps' }));
    calls.reset();
  });

  function registerAction(service = 'web', image = 'public.ecr.aws/nginx/nginx:1.27'): RegisterTaskDefinitionAction {
    const r = aValidSpec({ service, image, subnets: network.subnets, securityGroups: network.securityGroups });
    return {
      type: 'RegisterTaskDefinition',
      cluster: 'apps',
      service,
      specHash: r.hash,
      reason: 'test',
      input: renderTaskDefinition(r.spec, { defaults: { subnets: [], securityGroups: [] }, ownerId: OWNER }),
    };
  }

  function createAction(service = 'web', desiredCount = 2): CreateServiceAction {
    return {
      type: 'CreateService',
      cluster: 'apps',
      service,
      reason: 'test',
      specHash: 'h1',
      input: {
        cluster: 'apps',
        serviceName: service,
        taskDefinition: taskDefinitionFamily({ cluster: 'apps', service }),
        desiredCount,
        capacityProviderStrategy: [{ capacityProvider: 'FARGATE', weight: 1 }],
        networkConfiguration: {
          awsvpcConfiguration: { subnets: network.subnets, securityGroups: network.securityGroups, assignPublicIp: 'DISABLED' },
        },
        deploymentConfiguration: {
          minimumHealthyPercent: 100,
          maximumPercent: 200,
          deploymentCircuitBreaker: { enable: true, rollback: true },
        },
        tags: [{ key: OWNER_TAG_KEY, value: OWNER }],
        clientToken: `ecsr-${service}-token`,
      },
    };
  }

  const updateAction = (service: string, desiredCount: number): UpdateServiceAction => ({
    type: 'UpdateService',
    cluster: 'apps',
    service,
    reason: 'test',
    specHash: 'h1',
    kind: 'drift',
    input: { cluster: 'apps', service, desiredCount },
    changes: [{ field: 'desiredCount', from: '2', to: String(desiredCount) }],
  });

  const deleteAction = (service: string): DeleteServiceAction => ({
    type: 'DeleteService',
    cluster: 'apps',
    service,
    reason: 'test',
    cause: 'orphan',
    scaleToZero: true,
  });

  it('registers, then creates with the registered ARN in place of the family name', async () => {
    // Prepare
    const reader = new EcsObserver(ecs);
    const actuator = new EcsActuator(ecs, reader);

    // Act
    const results = await actuator.apply([registerAction(), createAction()], () => true);

    // Assess
    expect(results.map((r) => r.ok)).toEqual([true, true]);
    const arn = results[0].ok ? results[0].taskDefinitionArn : undefined;
    expect(arn).toMatch(/task-definition\/apps-web:1$/);
    const create = calls.calls.find((c) => c.action === 'CreateService');
    expect(create?.input).toMatchObject({ taskDefinition: arn, clientToken: 'ecsr-web-token', tags: [{ key: OWNER_TAG_KEY, value: OWNER }] });
    const described = await ecs.send(new DescribeServicesCommand({ cluster: 'apps', services: ['web'] }));
    expect(described.services?.[0]?.taskDefinition).toBe(arn);
  });

  it('reuses the latest ACTIVE revision when it is canonically equal (no pile of revisions)', async () => {
    // Prepare: a first pass registered the revision and crashed before the update.
    const reader = new EcsObserver(ecs);
    const actuator = new EcsActuator(ecs, reader);
    await actuator.apply([registerAction()], () => true);
    calls.reset();

    // Act
    const [again] = await actuator.apply([registerAction()], () => true);

    // Assess
    expect(again.ok && again.detail).toMatch(/^reused .*apps-web:1$/);
    expect(calls.count('RegisterTaskDefinition')).toBe(0);
    expect(calls.calls.find((c) => c.action === 'DescribeTaskDefinition')?.input.taskDefinition).toBe('apps-web');
    const listed = await ecs.send(new ListTaskDefinitionsCommand({ familyPrefix: 'apps-web' }));
    expect(listed.taskDefinitionArns).toHaveLength(1);
  });

  it('registers a new revision when the content differs', async () => {
    const actuator = new EcsActuator(ecs, new EcsObserver(ecs));
    await actuator.apply([registerAction('web', 'public.ecr.aws/nginx/nginx:1.27')], () => true);
    const [next] = await actuator.apply([registerAction('web', 'public.ecr.aws/nginx/nginx:1.28')], () => true);
    expect(next.ok && next.taskDefinitionArn).toMatch(/apps-web:2$/);
  });

  it('observes services with tags as a map, task definitions once, and skips MISSING names', async () => {
    // Prepare
    const reader = new EcsObserver(ecs);
    const actuator = new EcsActuator(ecs, reader);
    await actuator.apply([registerAction('web'), createAction('web', 2), registerAction('api'), createAction('api', 1)], () => true);
    calls.reset();
    // A new container: the revisions just registered are cached by the one that registered them.
    clearTaskDefinitionCache();

    // Act
    const observed = await reader.observeCluster('apps', ['web', 'ghost']);
    const arns = Object.values(observed.services).map((s) => s.taskDefinition);
    const first = await reader.describeTaskDefinitions(arns);
    const second = await reader.describeTaskDefinitions(arns);

    // Assess
    expect(observed).toMatchObject({ cluster: 'apps', complete: true, exists: true });
    expect(Object.keys(observed.services).sort()).toEqual(['api', 'web']);
    expect(observed.services.web).toMatchObject({ serviceName: 'web', status: 'ACTIVE', desiredCount: 2 });
    expect(observed.services.web.tags).toEqual({ [OWNER_TAG_KEY]: OWNER });
    expect(observed.services.web.deployments[0]?.status).toBe('PRIMARY');
    const describe = calls.calls.filter((c) => c.action === 'DescribeServices');
    expect(describe).toHaveLength(1);
    expect(describe[0].input).toMatchObject({ cluster: 'apps', include: ['TAGS'] });
    expect(calls.calls.find((c) => c.action === 'ListServices')?.input.maxResults).toBe(100);
    expect(Object.keys(first).sort()).toEqual([...arns].sort());
    expect(first[arns[0]].containerDefinitions?.[0]?.image).toBeDefined();
    expect(second).toEqual(first);
    expect(calls.count('DescribeTaskDefinition')).toBe(2);
  });

  it('reports a missing cluster as exists: false, complete', async () => {
    const observed = await new EcsObserver(ecs).observeCluster('no-such-cluster', ['web']);
    expect(observed).toEqual({ cluster: 'no-such-cluster', complete: true, exists: false, services: {} });
  });

  it('answers undefined for a family without revisions', async () => {
    expect(await new EcsObserver(ecs).latestActiveTaskDefinition('apps-nothing')).toBeUndefined();
  });

  it('updates, tags and deletes (scaling to zero first)', async () => {
    // Prepare
    const reader = new EcsObserver(ecs);
    const actuator = new EcsActuator(ecs, reader);
    const [, created] = await actuator.apply([registerAction('web'), createAction('web', 2)], () => true);
    expect(created.ok).toBe(true);
    const arn = (await reader.observeCluster('apps', [])).services.web.serviceArn;
    const tag: TagResourceAction = {
      type: 'TagResource',
      cluster: 'apps',
      service: 'web',
      reason: 'adopt',
      resourceArn: arn,
      tags: [{ key: 'team', value: 'blue' }],
    };
    calls.reset();

    // Act
    const results = await actuator.apply([updateAction('web', 3), tag, deleteAction('web')], () => true);

    // Assess
    expect(results.map((r) => r.ok)).toEqual([true, true, true]);
    expect(calls.calls.map((c) => c.action)).toEqual(['UpdateService', 'TagResource', 'UpdateService', 'DeleteService']);
    expect(calls.calls[2].input).toEqual({ cluster: 'apps', service: 'web', desiredCount: 0 });
    const after = await ecs.send(new DescribeServicesCommand({ cluster: 'apps', services: ['web'], include: ['TAGS'] }));
    expect(after.services?.[0]?.status).toBe('INACTIVE');
    expect(after.services?.[0]?.tags).toEqual(expect.arrayContaining([{ key: 'team', value: 'blue' }]));
  });

  it.each([
    {
      case: 'a create in a missing cluster is not-found',
      action: () => ({ ...createAction('web'), cluster: 'nope', input: { ...createAction('web').input, cluster: 'nope', taskDefinition: 'apps-web' } }),
      errorClass: 'not-found',
    },
    {
      case: 'an update of a missing service is not-found',
      action: () => updateAction('ghost', 1),
      errorClass: 'not-found',
    },
    {
      case: 'a create with an unknown subnet is invalid, with the server message',
      action: () => {
        const a = createAction('web');
        return {
          ...a,
          input: {
            ...a.input,
            networkConfiguration: { awsvpcConfiguration: { subnets: ['subnet-0123456789abcdef0'], securityGroups: network.securityGroups, assignPublicIp: 'DISABLED' as const } },
          },
        };
      },
      errorClass: 'invalid',
    },
  ])('classifies failures: $case, and goes on with the next action', async ({ action, errorClass }) => {
    // Prepare
    const actuator = new EcsActuator(ecs, new EcsObserver(ecs));
    await actuator.apply([registerAction('web')], () => true);

    // Act
    const results = await actuator.apply([action() as CreateServiceAction, registerAction('other')], () => true);

    // Assess
    expect(results[0].ok).toBe(false);
    if (!results[0].ok) {
      expect(results[0].errorClass).toBe(errorClass);
      expect(results[0].message.length).toBeGreaterThan(0);
    }
    expect(results[1].ok).toBe(true);
  });

  it('starts no action once shouldContinue() says no; the rest are skipped for the next pass', async () => {
    // Prepare
    const actuator = new EcsActuator(ecs, new EcsObserver(ecs));
    let budget = 1;

    // Act
    const results = await actuator.apply([registerAction('web'), createAction('web'), registerAction('api')], () => budget-- > 0);

    // Assess
    expect(results.map((r) => (r.ok ? 'ok' : r.errorClass))).toEqual(['ok', 'skipped', 'skipped']);
    expect(results[1].ok === false && results[1].message).toBe(OUT_OF_TIME_MESSAGE);
    expect(calls.count('CreateService')).toBe(0);
  });
});

/**
 * Full passes with ECS and DynamoDB both on moto: the requests are right for an implementation we
 * did not write, and a second pass over a converged service makes no write calls.
 * moto's ECS is static (no tasks start; runningCount is MOTO_ECS_SERVICE_RUNNING at create and
 * desiredCount after an update), so only create / steady / drift are checked here.
 *
 * A gap of moto 5.2.1: CreateService drops `capacityProviderStrategy` and
 * `deploymentConfiguration` (its create_service takes neither), reports launchType EC2 where no
 * launch type was sent, and the default circuit breaker; UpdateService keeps them. A service ECS
 * reports on EC2 is one a spec cannot express, which the reconciler never touches, so the specs
 * here name `launchType: FARGATE` (kept by moto); the pass after a create then corrects the
 * circuit breaker once (the reconciler heals what the server lost), and the pass after that is
 * steady. Against real ECS and the simulator, the second pass is steady. The last case keeps the
 * default capacity provider strategy and checks the guard on moto's EC2 answer.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CreateClusterCommand, DescribeServicesCommand, UpdateServiceCommand } from '@aws-sdk/client-ecs';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { startMoto, type MotoServer } from '../support/moto';
import { needs } from '../support/tools';
import { ENV, loadConfig } from '../../lambda/config';
import { createRuntime, type Runtime } from '../../lambda/adapters/runtime';
import { clearTaskDefinitionCache } from '../../lambda/adapters/ecs-observer';
import { InMemoryMetricsSink } from '../../lambda/adapters/metrics';
import { RecordingLog } from '../../lambda/adapters/logger';
import { METRIC } from '../../lambda/core/metric-names';
import { OWNER_TAG_KEY } from '../../lambda/core/ports';
import { aSpecItem, createSpecsTable, LOCAL, motoDefaultNetwork, recordCalls, type CallLog } from './support';

describe('full passes on moto (ECS + DynamoDB)', needs('moto'), () => {
  let moto: MotoServer;
  let runtime: Runtime;
  let calls: CallLog;
  let metrics: InMemoryMetricsSink;
  let network: { subnets: string[]; securityGroups: string[] };

  beforeAll(async () => {
    moto = await startMoto({ MOTO_ECS_SERVICE_RUNNING: '2' });
  });
  afterAll(async () => {
    runtime?.ecs.destroy();
    runtime?.doc.destroy();
    await moto?.stop();
  });
  beforeEach(async () => {
    await moto.reset();
    clearTaskDefinitionCache();
    network = await motoDefaultNetwork(moto.endpoint);
    await createSpecsTable(moto.endpoint, 'specs');
    metrics = new InMemoryMetricsSink();
    const config = loadConfig({ [ENV.specsTable]: 'specs', [ENV.ownerId]: 'moto-test', [ENV.managedClusters]: 'apps' });
    runtime = createRuntime(config, {
      ecsClientConfig: { ...LOCAL, endpoint: moto.endpoint },
      dynamoClientConfig: { ...LOCAL, endpoint: moto.endpoint },
      metrics,
      log: new RecordingLog(),
    });
    calls = recordCalls(runtime.ecs);
    await runtime.ecs.send(new CreateClusterCommand({ clusterName: 'apps' }));
    await runtime.doc.send(
      new PutCommand({
        TableName: 'specs',
        Item: aSpecItem({ desiredCount: 2, launchType: 'FARGATE', subnets: network.subnets, securityGroups: network.securityGroups }),
      }),
    );
    calls.reset();
  });

  const describeWeb = async () =>
    (await runtime.ecs.send(new DescribeServicesCommand({ cluster: 'apps', services: ['web'], include: ['TAGS'] }))).services?.[0];
  const statusOfWeb = async () =>
    (await runtime.doc.send(new GetCommand({ TableName: 'specs', Key: { cluster: 'apps', service: 'web' } }))).Item?.status;

  /** Pass 1 creates; pass 2 restores the circuit breaker moto dropped on create (see above). */
  async function createAndSettle(): Promise<void> {
    await runtime.run({ holder: 'p1' });
    const settle = await runtime.run({ holder: 'p1b' });
    expect(settle.actions.flatMap((a) => a.changes?.map((c) => c.field) ?? [])).toEqual(['deploymentConfiguration.deploymentCircuitBreaker']);
  }

  it('creates from empty with the full request; once settled, a pass makes no write calls', async () => {
    // Act 1: create.
    const created = await runtime.run({ holder: 'p1' });

    // Assess 1
    expect(created.outcome).toBe('completed');
    expect(created.actions.map((a) => [a.type, a.outcome])).toEqual([
      ['RegisterTaskDefinition', 'applied'],
      ['CreateService', 'applied'],
    ]);
    const web = await describeWeb();
    expect(web?.desiredCount).toBe(2);
    expect(web?.taskDefinition).toMatch(/apps-web:1$/);
    expect(web?.tags).toEqual(expect.arrayContaining([{ key: OWNER_TAG_KEY, value: 'moto-test' }]));
    expect(await statusOfWeb()).toMatchObject({ lastAction: { type: 'CreateService' } });
    const createRequest = calls.calls.find((c) => c.action === 'CreateService')?.input;
    expect(createRequest).toMatchObject({
      cluster: 'apps',
      serviceName: 'web',
      desiredCount: 2,
      launchType: 'FARGATE',
      deploymentConfiguration: { deploymentCircuitBreaker: { enable: true, rollback: true } },
      networkConfiguration: { awsvpcConfiguration: { subnets: [...network.subnets].sort(), securityGroups: network.securityGroups } },
    });
    expect(String(createRequest?.clientToken)).toMatch(/^[!-~]{1,36}$/);

    expect(createRequest).not.toHaveProperty('capacityProviderStrategy');

    // Act 2: moto's gap healed, then steady.
    const healed = await runtime.run({ holder: 'p2' });
    expect(healed.actions.map((a) => [a.type, a.kind, a.outcome])).toEqual([['UpdateService', 'drift', 'applied']]);
    calls.reset();
    const steady = await runtime.run({ holder: 'p3' });

    // Assess 2
    expect(steady.actions).toEqual([]);
    expect(calls.writes()).toEqual([]);
    expect(calls.count('DescribeTaskDefinition')).toBe(0);
    expect(metrics.latest(METRIC.taskLag, { cluster: 'apps', service: 'web' })).toBe(0);
  });

  it('reverts drift made out of band (desiredCount) and counts it', async () => {
    // Prepare
    await createAndSettle();
    await runtime.ecs.send(new UpdateServiceCommand({ cluster: 'apps', service: 'web', desiredCount: 5 }));
    calls.reset();

    // Act
    const summary = await runtime.run({ holder: 'p2' });

    // Assess
    expect(summary.actions).toHaveLength(1);
    expect(summary.actions[0]).toMatchObject({ type: 'UpdateService', kind: 'drift', outcome: 'applied' });
    expect(summary.actions[0].changes).toEqual([{ field: 'desiredCount', from: '5', to: '2' }]);
    expect(calls.writes()).toEqual(['UpdateService']);
    expect((await describeWeb())?.desiredCount).toBe(2);
    expect(summary.counts.driftCorrections).toBe(1);
    expect(metrics.latest(METRIC.driftCorrections)).toBe(1);
    expect(await statusOfWeb()).toMatchObject({ drift: ['desiredCount 5 -> 2'] });
  });

  it('sends the capacity provider strategy on create, and leaves alone a service moto then reports on the EC2 launch type', async () => {
    // Prepare: the default spec (capacityProvider FARGATE).
    await runtime.doc.send(new PutCommand({ TableName: 'specs', Item: aSpecItem({ desiredCount: 2, subnets: network.subnets, securityGroups: network.securityGroups }) }));

    // Act
    await runtime.run({ holder: 'p1' });
    const createRequest = calls.calls.find((c) => c.action === 'CreateService')?.input;
    calls.reset();
    const after = await runtime.run({ holder: 'p2' });

    // Assess: the request names the strategy; moto's answer (launchType EC2) is capacity a spec
    // cannot express, so the next pass writes nothing to ECS and says why.
    expect(createRequest).toMatchObject({ capacityProviderStrategy: [{ capacityProvider: 'FARGATE', weight: 1 }] });
    expect((await describeWeb())?.launchType).toBe('EC2');
    expect(after.actions).toEqual([]);
    expect(calls.writes()).toEqual([]);
    expect(await statusOfWeb()).toMatchObject({ phase: 'Blocked', conditions: expect.arrayContaining([expect.objectContaining({ type: 'Blocked', reason: 'UnmanagedCapacity' })]) });
  });
});

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ClientException,
  ClusterContainsServicesException,
  ClusterNotFoundException,
  CreateClusterCommand,
  CreateServiceCommand,
  DeleteClusterCommand,
  DeleteServiceCommand,
  DeregisterTaskDefinitionCommand,
  DescribeClustersCommand,
  DescribeServicesCommand,
  InvalidParameterException,
  ListClustersCommand,
  ListServicesCommand,
  ListTagsForResourceCommand,
  RegisterTaskDefinitionCommand,
  ServiceNotActiveException,
  ServiceNotFoundException,
  TagResourceCommand,
  UntagResourceCommand,
  UpdateServiceCommand,
  type ECSClient,
} from '@aws-sdk/client-ecs';
import { startSimulator, type Simulator } from '../../local/sim';
import { aService, aTaskDefinition, advanceUntil, deploy, describeService, ecsClient } from './helpers';

const T0 = new Date('2025-01-01T00:00:00Z');

describe('simulator: clusters and services', () => {
  let sim: Simulator;
  let ecs: ECSClient;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0, startTime: T0, throttling: false, seed: 7 });
    ecs = ecsClient(sim);
  });
  afterAll(async () => {
    await sim?.close();
  });
  beforeEach(() => sim.reset());

  describe('clusters', () => {
    it('creates idempotently, lists, describes with MISSING failures, and deletes', async () => {
      // Act
      const a = await ecs.send(new CreateClusterCommand({ clusterName: 'a', tags: [{ key: 'k', value: 'v' }] }));
      const again = await ecs.send(new CreateClusterCommand({ clusterName: 'a' }));
      await ecs.send(new CreateClusterCommand({ clusterName: 'b' }));
      const listed = await ecs.send(new ListClustersCommand({}));
      const described = await ecs.send(new DescribeClustersCommand({ clusters: ['a', 'nope'], include: ['TAGS'] }));
      await ecs.send(new DeleteClusterCommand({ cluster: 'b' }));
      const afterDelete = await ecs.send(new ListClustersCommand({}));

      // Assess
      expect(a.cluster?.clusterArn).toBe('arn:aws:ecs:us-east-1:123456789012:cluster/a');
      expect(again.cluster?.clusterArn).toBe(a.cluster?.clusterArn);
      expect(listed.clusterArns).toHaveLength(2);
      expect(described.clusters?.[0]).toMatchObject({ clusterName: 'a', status: 'ACTIVE', tags: [{ key: 'k', value: 'v' }] });
      expect(described.failures).toEqual([{ arn: 'arn:aws:ecs:us-east-1:123456789012:cluster/nope', reason: 'MISSING' }]);
      expect(afterDelete.clusterArns).toEqual([a.cluster?.clusterArn]);
    });

    it('refuses to delete a cluster with active services', async () => {
      await deploy(ecs);
      const err = await ecs.send(new DeleteClusterCommand({ cluster: 'c1' })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ClusterContainsServicesException);
    });

    it('pre-creates the clusters given at start', async () => {
      const other = await startSimulator({ port: 0, clusters: ['pre-1', 'pre-2'] });
      try {
        const listed = await ecsClient(other).send(new ListClustersCommand({}));
        expect(listed.clusterArns?.map((a) => a.split('/').pop())).toEqual(['pre-1', 'pre-2']);
      } finally {
        await other.close();
      }
    });
  });

  describe('CreateService', () => {
    it('answers ECS defaults and the fields given: deployment configuration, network, tags, deployment', async () => {
      // Prepare
      await ecs.send(new CreateClusterCommand({ clusterName: 'c1', capacityProviders: ['FARGATE', 'FARGATE_SPOT'] }));
      const td = await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition()));

      // Act
      const out = await ecs.send(new CreateServiceCommand(aService({ tags: [{ key: 'owner', value: 'me' }] })));
      const described = await ecs.send(new DescribeServicesCommand({ cluster: 'c1', services: ['web'], include: ['TAGS'] }));
      const plain = await describeService(ecs, 'c1', 'web');

      // Assess
      const svc = described.services?.[0];
      expect(out.service?.serviceArn).toBe('arn:aws:ecs:us-east-1:123456789012:service/c1/web');
      expect(svc).toMatchObject({
        serviceName: 'web',
        clusterArn: 'arn:aws:ecs:us-east-1:123456789012:cluster/c1',
        status: 'ACTIVE',
        desiredCount: 2,
        taskDefinition: td.taskDefinition?.taskDefinitionArn,
        deploymentConfiguration: { minimumHealthyPercent: 100, maximumPercent: 200, deploymentCircuitBreaker: { enable: false, rollback: false } },
        networkConfiguration: { awsvpcConfiguration: { subnets: ['subnet-0a1b2c3d', 'subnet-4e5f6a7b'], securityGroups: ['sg-0123'], assignPublicIp: 'DISABLED' } },
        capacityProviderStrategy: [{ capacityProvider: 'FARGATE', weight: 1 }],
        platformVersion: 'LATEST',
        schedulingStrategy: 'REPLICA',
        deploymentController: { type: 'ECS' },
        createdAt: T0,
        tags: [{ key: 'owner', value: 'me' }],
      });
      expect(svc?.deployments).toEqual([
        expect.objectContaining({ status: 'PRIMARY', rolloutState: 'IN_PROGRESS', desiredCount: 2, taskDefinition: td.taskDefinition?.taskDefinitionArn }),
      ]);
      expect(svc?.deployments?.[0].id).toMatch(/^ecs-svc\/\d{19}$/);
      expect(plain.tags).toBeUndefined();
    });

    it.each([
      { case: 'no desiredCount', over: { desiredCount: undefined }, type: InvalidParameterException, message: 'desiredCount is required' },
      { case: 'launch type and strategy together', over: { launchType: 'FARGATE' as const }, type: InvalidParameterException, message: 'Specifying both a launch type and capacity provider strategy is not supported.' },
      { case: 'awsvpc without network configuration', over: { networkConfiguration: undefined }, type: InvalidParameterException, message: "Network Configuration must be provided when networkMode 'awsvpc' is specified." },
      { case: 'an unknown task definition', over: { taskDefinition: 'nope:1' }, type: ClientException, message: 'TaskDefinition not found.' },
      { case: 'a missing cluster', over: { cluster: 'nope' }, type: ClusterNotFoundException, message: 'Cluster not found.' },
      { case: 'minimumHealthyPercent above 100', over: { deploymentConfiguration: { minimumHealthyPercent: 150 } }, type: InvalidParameterException, message: 'minimumHealthyPercent' },
      { case: 'a clientToken longer than 36', over: { clientToken: 'x'.repeat(37) }, type: InvalidParameterException, message: 'clientToken' },
    ])('refuses $case', async ({ over, type, message }) => {
      await ecs.send(new CreateClusterCommand({ clusterName: 'c1', capacityProviders: ['FARGATE', 'FARGATE_SPOT'] }));
      await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition()));
      const err = await ecs.send(new CreateServiceCommand(aService(over))).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(type);
      expect((err as Error).message).toContain(message);
    });

    it('refuses a task definition that is not Fargate-compatible on Fargate', async () => {
      await ecs.send(new CreateClusterCommand({ clusterName: 'c1', capacityProviders: ['FARGATE', 'FARGATE_SPOT'] }));
      await ecs.send(
        new RegisterTaskDefinitionCommand({ family: 'web', networkMode: 'bridge', containerDefinitions: [{ name: 'a', image: 'x', memory: 128 }] }),
      );
      const err = await ecs.send(new CreateServiceCommand(aService({ networkConfiguration: undefined }))).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidParameterException);
      expect((err as Error).message).toBe('Task definition does not support launch_type FARGATE.');
    });

    it.each([
      { case: 'same clientToken, same parameters', token: 'tok-1', second: { clientToken: 'tok-1' }, idempotent: true },
      { case: 'no token twice, same parameters', token: undefined, second: {}, idempotent: true },
      { case: 'same clientToken, other parameters', token: 'tok-1', second: { clientToken: 'tok-1', desiredCount: 5 }, idempotent: false },
      { case: 'another clientToken', token: 'tok-1', second: { clientToken: 'tok-2' }, idempotent: false },
    ])('is idempotent only for the same token and parameters: $case', async ({ token, second, idempotent }) => {
      // Prepare
      await ecs.send(new CreateClusterCommand({ clusterName: 'c1', capacityProviders: ['FARGATE', 'FARGATE_SPOT'] }));
      await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition()));
      const first = await ecs.send(new CreateServiceCommand(aService({ clientToken: token })));

      // Act
      const out = await ecs.send(new CreateServiceCommand(aService(second))).catch((e: unknown) => e);

      // Assess
      if (idempotent) {
        expect(out).not.toBeInstanceOf(Error);
        expect((out as typeof first).service?.deployments?.[0].id).toBe(first.service?.deployments?.[0].id);
      } else {
        expect(out).toBeInstanceOf(InvalidParameterException);
        expect((out as Error).message).toBe('Creation of service was not idempotent.');
      }
    });
  });

  describe('UpdateService', () => {
    it.each([
      { case: 'desiredCount only', update: { desiredCount: 3 }, newDeployment: false },
      { case: 'deploymentConfiguration only', update: { deploymentConfiguration: { minimumHealthyPercent: 50 } }, newDeployment: false },
      { case: 'a new task definition', update: { taskDefinition: 'web:2' }, newDeployment: true },
      { case: 'forceNewDeployment', update: { forceNewDeployment: true }, newDeployment: true },
      { case: 'a network change', update: { networkConfiguration: { awsvpcConfiguration: { subnets: ['subnet-other'] } } }, newDeployment: true },
    ])('starts a new deployment only when it must: $case', async ({ update, newDeployment }) => {
      // Prepare
      await deploy(ecs);
      await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition({ image: 'nginx:2' })));
      const before = await describeService(ecs, 'c1', 'web');

      // Act
      await ecs.send(new UpdateServiceCommand({ cluster: 'c1', service: 'web', ...update }));

      // Assess
      const after = await describeService(ecs, 'c1', 'web');
      expect(after.deployments?.[0].id !== before.deployments?.[0].id).toBe(newDeployment);
      if (newDeployment) {
        expect(after.deployments?.map((d) => d.status)).toEqual(['PRIMARY', 'ACTIVE']);
      }
    });

    it('keeps what an update omits and changes what it gives', async () => {
      await deploy(ecs, { svc: { deploymentConfiguration: { deploymentCircuitBreaker: { enable: true, rollback: true } } } });

      const out = await ecs.send(
        new UpdateServiceCommand({ cluster: 'c1', service: 'web', desiredCount: 4, deploymentConfiguration: { maximumPercent: 150 } }),
      );

      expect(out.service).toMatchObject({
        desiredCount: 4,
        deploymentConfiguration: { minimumHealthyPercent: 100, maximumPercent: 150, deploymentCircuitBreaker: { enable: true, rollback: true } },
      });
    });

    it('needs forceNewDeployment to change the capacity provider strategy', async () => {
      await deploy(ecs);
      const strategy = [{ capacityProvider: 'FARGATE_SPOT', weight: 1 }];

      const refused = await ecs.send(new UpdateServiceCommand({ cluster: 'c1', service: 'web', capacityProviderStrategy: strategy })).catch((e: unknown) => e);
      const forced = await ecs.send(
        new UpdateServiceCommand({ cluster: 'c1', service: 'web', capacityProviderStrategy: strategy, forceNewDeployment: true }),
      );

      expect(refused).toBeInstanceOf(InvalidParameterException);
      expect((refused as Error).message).toContain('you must force a new deployment');
      expect(forced.service?.capacityProviderStrategy).toEqual(strategy);
    });

    it.each([
      { case: 'a missing service', service: 'nope', type: ServiceNotFoundException },
      { case: 'a missing cluster', cluster: 'nope', service: 'web', type: ClusterNotFoundException },
    ])('answers $case with the typed exception', async ({ cluster, service, type }) => {
      await deploy(ecs);
      const err = await ecs.send(new UpdateServiceCommand({ cluster: cluster ?? 'c1', service, desiredCount: 1 })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(type);
    });

    it('refuses an INACTIVE task definition', async () => {
      await deploy(ecs);
      await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition({ image: 'nginx:2' })));
      await ecs.send(new DeregisterTaskDefinitionCommand({ taskDefinition: 'web:2' }));
      const err = await ecs.send(new UpdateServiceCommand({ cluster: 'c1', service: 'web', taskDefinition: 'web:2' })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ClientException);
      expect((err as Error).message).toBe('TaskDefinition is inactive');
    });
  });

  describe('DeleteService and the service lifecycle', () => {
    it('refuses to delete a service scaled above 0 unless forced', async () => {
      await deploy(ecs);
      const err = await ecs.send(new DeleteServiceCommand({ cluster: 'c1', service: 'web' })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidParameterException);
      expect((err as Error).message).toBe('The service cannot be stopped while it is scaled above 0.');
    });

    it('goes ACTIVE -> DRAINING -> INACTIVE -> purged (MISSING), unlisted from DRAINING on', async () => {
      // Prepare: a running service.
      await deploy(ecs);
      await advanceUntil(sim, async () => (await describeService(ecs, 'c1', 'web')).runningCount === 2, { what: '2 running' });

      // Act: force delete.
      const deleted = await ecs.send(new DeleteServiceCommand({ cluster: 'c1', service: 'web', force: true }));
      const listedDraining = await ecs.send(new ListServicesCommand({ cluster: 'c1' }));
      const recreateWhileDraining = await ecs.send(new CreateServiceCommand(aService())).catch((e: unknown) => e);
      const updateWhileDraining = await ecs.send(new UpdateServiceCommand({ cluster: 'c1', service: 'web', desiredCount: 1 })).catch((e: unknown) => e);
      await advanceUntil(sim, async () => (await describeService(ecs, 'c1', 'web')).status === 'INACTIVE', { what: 'INACTIVE' });
      const inactive = await describeService(ecs, 'c1', 'web');
      sim.advance(3600);
      const purged = await ecs.send(new DescribeServicesCommand({ cluster: 'c1', services: ['web'] }));

      // Assess
      expect(deleted.service).toMatchObject({ status: 'DRAINING', desiredCount: 0 });
      expect(listedDraining.serviceArns).toEqual([]);
      expect(recreateWhileDraining).toBeInstanceOf(InvalidParameterException);
      expect((recreateWhileDraining as Error).message).toBe('Unable to Start a service that is still Draining.');
      expect(updateWhileDraining).toBeInstanceOf(ServiceNotActiveException);
      expect(inactive).toMatchObject({ status: 'INACTIVE', runningCount: 0, pendingCount: 0 });
      expect(purged.failures).toEqual([{ arn: 'arn:aws:ecs:us-east-1:123456789012:service/c1/web', reason: 'MISSING' }]);
    });

    it('creates a new service under the name of an INACTIVE one', async () => {
      await deploy(ecs, { svc: { desiredCount: 0 } });
      await ecs.send(new DeleteServiceCommand({ cluster: 'c1', service: 'web' }));
      await advanceUntil(sim, async () => (await describeService(ecs, 'c1', 'web')).status === 'INACTIVE');

      const out = await ecs.send(new CreateServiceCommand(aService({ desiredCount: 1 })));

      expect(out.service).toMatchObject({ status: 'ACTIVE', desiredCount: 1 });
    });
  });

  describe('DescribeServices and ListServices', () => {
    it.each([
      { case: 'default page size 10', maxResults: undefined, pages: [10, 10, 5] },
      { case: 'maxResults 100', maxResults: 100, pages: [25] },
      { case: 'maxResults 7', maxResults: 7, pages: [7, 7, 7, 4] },
    ])('pages 25 services: $case', async ({ maxResults, pages }) => {
      // Prepare
      await ecs.send(new CreateClusterCommand({ clusterName: 'c1', capacityProviders: ['FARGATE', 'FARGATE_SPOT'] }));
      await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition()));
      for (let i = 0; i < 25; i++) {
        await ecs.send(new CreateServiceCommand(aService({ serviceName: `svc-${String(i).padStart(2, '0')}`, desiredCount: 0 })));
      }

      // Act
      const sizes: number[] = [];
      const seen = new Set<string>();
      let nextToken: string | undefined;
      do {
        const out = await ecs.send(new ListServicesCommand({ cluster: 'c1', maxResults, nextToken }));
        sizes.push(out.serviceArns?.length ?? 0);
        for (const a of out.serviceArns ?? []) seen.add(a);
        nextToken = out.nextToken;
      } while (nextToken);

      // Assess
      expect(sizes).toEqual(pages);
      expect(seen.size).toBe(25);
    });

    it.each([
      { case: 'maxResults 0', input: { maxResults: 0 }, message: 'maxResults' },
      { case: 'maxResults 101', input: { maxResults: 101 }, message: 'maxResults' },
      { case: 'a forged nextToken', input: { nextToken: 'bm90LWEtdG9rZW4' }, message: 'Invalid NextToken.' },
    ])('refuses ListServices with $case', async ({ input, message }) => {
      await ecs.send(new CreateClusterCommand({ clusterName: 'c1', capacityProviders: ['FARGATE', 'FARGATE_SPOT'] }));
      const err = await ecs.send(new ListServicesCommand({ cluster: 'c1', ...input })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidParameterException);
      expect((err as Error).message).toContain(message);
    });

    it('limits DescribeServices to 10 services with ECS wording, and reports unknown names as MISSING', async () => {
      await deploy(ecs);

      const tooMany = await ecs
        .send(new DescribeServicesCommand({ cluster: 'c1', services: Array.from({ length: 11 }, (_, i) => `s${i}`) }))
        .catch((e: unknown) => e);
      const empty = await ecs.send(new DescribeServicesCommand({ cluster: 'c1', services: [] })).catch((e: unknown) => e);
      const mixed = await ecs.send(
        new DescribeServicesCommand({ cluster: 'c1', services: ['web', 'ghost', 'arn:aws:ecs:us-east-1:123456789012:service/c1/ghost2'] }),
      );

      expect(tooMany).toBeInstanceOf(InvalidParameterException);
      expect((tooMany as Error).message).toBe('service names can have at most 10 items.');
      expect(empty).toBeInstanceOf(InvalidParameterException);
      expect((empty as Error).message).toBe('Services cannot be empty.');
      expect(mixed.services?.map((s) => s.serviceName)).toEqual(['web']);
      expect(mixed.failures).toEqual([
        { arn: 'arn:aws:ecs:us-east-1:123456789012:service/c1/ghost', reason: 'MISSING' },
        { arn: 'arn:aws:ecs:us-east-1:123456789012:service/c1/ghost2', reason: 'MISSING' },
      ]);
    });
  });

  describe('tags', () => {
    it('tags and untags services and clusters; unknown resources get typed errors', async () => {
      // Prepare
      await deploy(ecs, { svc: { tags: [{ key: 'a', value: '1' }] } });
      const arn = 'arn:aws:ecs:us-east-1:123456789012:service/c1/web';

      // Act
      await ecs.send(new TagResourceCommand({ resourceArn: arn, tags: [{ key: 'b', value: '2' }, { key: 'a', value: 'changed' }] }));
      await ecs.send(new UntagResourceCommand({ resourceArn: arn, tagKeys: ['b'] }));
      await ecs.send(new TagResourceCommand({ resourceArn: 'arn:aws:ecs:us-east-1:123456789012:cluster/c1', tags: [{ key: 'c', value: '3' }] }));
      const service = await ecs.send(new ListTagsForResourceCommand({ resourceArn: arn }));
      const cluster = await ecs.send(new ListTagsForResourceCommand({ resourceArn: 'arn:aws:ecs:us-east-1:123456789012:cluster/c1' }));
      const missing = await ecs
        .send(new ListTagsForResourceCommand({ resourceArn: 'arn:aws:ecs:us-east-1:123456789012:service/c1/ghost' }))
        .catch((e: unknown) => e);
      const reserved = await ecs.send(new TagResourceCommand({ resourceArn: arn, tags: [{ key: 'aws:x', value: '1' }] })).catch((e: unknown) => e);

      // Assess
      expect(service.tags).toEqual([{ key: 'a', value: 'changed' }]);
      expect(cluster.tags).toEqual([{ key: 'c', value: '3' }]);
      expect(missing).toBeInstanceOf(ServiceNotFoundException);
      expect(reserved).toBeInstanceOf(InvalidParameterException);
    });
  });
});

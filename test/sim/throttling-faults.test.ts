import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  CreateClusterCommand,
  DescribeServicesCommand,
  ECSServiceException,
  InvalidParameterException,
  ListClustersCommand,
  RegisterTaskDefinitionCommand,
  ServerException,
  UpdateServiceCommand,
} from '@aws-sdk/client-ecs';
import type { FinalizeRequestMiddleware, MetadataBearer } from '@smithy/types';
import { THROTTLE_BUCKETS } from '../../lambda/core/ecs-limits';
import { SimulatedEcs, startSimulator, type Simulator } from '../../local/sim';
import { aTaskDefinition, deploy, ecsClient } from './helpers';

const T0 = new Date('2025-01-01T00:00:00Z');

describe('simulator: throttling, fault injection and the call log', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0, startTime: T0, seed: 13 });
  });
  afterAll(async () => {
    await sim?.close();
  });
  beforeEach(() => {
    sim.reset();
    sim.setThrottling(true);
  });

  describe('throttling', () => {
    it('answers the raw ThrottlingException (400, "Rate exceeded") beyond the burst when the SDK does not retry', async () => {
      // Prepare: cluster read has a burst of 50.
      const ecs = ecsClient(sim, { maxAttempts: 1 });
      const burst = THROTTLE_BUCKETS.clusterRead.burst;

      // Act
      const results = await Promise.allSettled(Array.from({ length: burst + 5 }, () => ecs.send(new ListClustersCommand({}))));

      // Assess
      const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as ECSServiceException);
      expect(rejected).toHaveLength(5);
      expect(rejected[0]).toBeInstanceOf(ECSServiceException);
      expect(rejected[0].name).toBe('ThrottlingException');
      expect(rejected[0].message).toBe('Rate exceeded');
      expect(rejected[0].$metadata.httpStatusCode).toBe(400);
      expect(sim.callCounts().ListClusters).toEqual({ total: burst + 5, ok: burst, throttled: 5, errors: 0 });
    });

    it('refills on the virtual clock at the documented rate', async () => {
      const ecs = ecsClient(sim, { maxAttempts: 1 });
      const { burst, refillPerSecond } = THROTTLE_BUCKETS.serviceModify;
      await deploy(ecsClient(sim));
      sim.clearCalls();

      const burstOut = await Promise.allSettled(Array.from({ length: burst }, () => ecs.send(new UpdateServiceCommand({ cluster: 'c1', service: 'web' }))));
      const rejectedNow = await ecs.send(new UpdateServiceCommand({ cluster: 'c1', service: 'web' })).catch((e: unknown) => e);
      sim.advance(1);
      const afterOneSecond = await Promise.allSettled(
        Array.from({ length: refillPerSecond + 1 }, () => ecs.send(new UpdateServiceCommand({ cluster: 'c1', service: 'web' }))),
      );

      // The deploy used one CreateService token from the same bucket.
      expect(burstOut.filter((r) => r.status === 'fulfilled').length).toBe(burst - 1);
      expect((rejectedNow as Error).name).toBe('ThrottlingException');
      expect(afterOneSecond.filter((r) => r.status === 'fulfilled')).toHaveLength(refillPerSecond);
    });

    it('lets the SDK retry a burst to success while the clock moves (throttled attempts are in the call log)', async () => {
      // Prepare: the SDK's default standard retry (3 attempts, backoff). A middleware inside the
      // retry loop holds each throttled answer until every first attempt has been answered, then
      // moves virtual time 1 s (once) before the SDK backs off, so the bucket has refilled by the
      // retries however long a busy machine stretches the real time between attempts.
      const ecs = ecsClient(sim);
      const burst = THROTTLE_BUCKETS.clusterRead.burst;
      const firstAttempts = burst + 10;
      let answered = 0;
      let openGate!: () => void;
      const allFirstAttemptsAnswered = new Promise<void>((resolve) => (openGate = resolve));
      let clockMoved = false;
      const holdThrottledAnswers: FinalizeRequestMiddleware<object, MetadataBearer> =
        (next) => async (args) => {
          const outcome = await next(args).then(
            (output) => ({ output }),
            (error: unknown) => ({ error }),
          );
          if (++answered === firstAttempts) openGate();
          if (!('error' in outcome)) return outcome.output;
          if ((outcome.error as Error).name === 'ThrottlingException') {
            await allFirstAttemptsAnswered;
            if (!clockMoved) sim.advance(1);
            clockMoved = true;
          }
          throw outcome.error;
        };
      ecs.middlewareStack.addRelativeTo(holdThrottledAnswers, { relation: 'after', toMiddleware: 'retryMiddleware', name: 'holdThrottledAnswers' });

      // Act
      const results = await Promise.allSettled(Array.from({ length: firstAttempts }, () => ecs.send(new ListClustersCommand({}))));

      // Assess
      expect(results.every((r) => r.status === 'fulfilled')).toBe(true);
      const counts = sim.callCounts().ListClusters;
      expect(counts.ok).toBe(firstAttempts);
      expect(counts.throttled).toBeGreaterThanOrEqual(10);
      expect(sim.calls({ action: 'ListClusters', outcome: 'ThrottlingException' })).toHaveLength(counts.throttled);
    });

    it('can be turned off', async () => {
      sim.setThrottling(false);
      const ecs = ecsClient(sim, { maxAttempts: 1 });
      const results = await Promise.allSettled(Array.from({ length: 80 }, () => ecs.send(new ListClustersCommand({}))));
      expect(results.every((r) => r.status === 'fulfilled')).toBe(true);
    });

    it('keeps one bucket per category: modify calls do not use up read tokens', async () => {
      const core = new SimulatedEcs({ startTime: T0 });
      const burst = THROTTLE_BUCKETS.taskDefinitionModify.burst;
      for (let i = 0; i < burst; i++) core.call('RegisterTaskDefinition', aTaskDefinition());
      expect(() => core.call('RegisterTaskDefinition', aTaskDefinition())).toThrow(expect.objectContaining({ type: 'ThrottlingException' }));
      expect(() => core.call('DescribeTaskDefinition', { taskDefinition: 'web' })).not.toThrow();
      core.close();
    });
  });

  describe('fault injection', () => {
    it('fails exactly the Nth call of an action with the chosen type, message and status', async () => {
      const ecs = ecsClient(sim, { maxAttempts: 1 });
      await deploy(ecsClient(sim));
      sim.injectFault({ action: 'DescribeServices', nth: 2, errorType: 'InvalidParameterException', message: 'injected: bad input' });

      const outcomes: string[] = [];
      for (let i = 0; i < 4; i++) {
        outcomes.push(
          await ecs.send(new DescribeServicesCommand({ cluster: 'c1', services: ['web'] })).then(
            () => 'ok',
            (e: Error) => `${e.name}: ${e.message}`,
          ),
        );
      }

      expect(outcomes).toEqual(['ok', 'InvalidParameterException: injected: bad input', 'ok', 'ok']);
      expect(sim.calls({ action: 'DescribeServices' }).map((c) => [c.outcome, c.injected ?? false])).toEqual([
        ['ok', false],
        ['InvalidParameterException', true],
        ['ok', false],
        ['ok', false],
      ]);
    });

    it('answers ServerException with 500 by default, which the SDK types and retries', async () => {
      const noRetry = ecsClient(sim, { maxAttempts: 1 });
      const withRetry = ecsClient(sim, { maxAttempts: 3 });
      sim.injectFault({ action: 'ListClusters', nth: 1 });
      const raw = await noRetry.send(new ListClustersCommand({})).catch((e: unknown) => e);
      sim.injectFault({ action: 'ListClusters', nth: 1 });

      const retried = await withRetry.send(new ListClustersCommand({}));

      expect(raw).toBeInstanceOf(ServerException);
      expect((raw as ServerException).$metadata.httpStatusCode).toBe(500);
      expect(retried.$metadata.attempts).toBe(2);
    });

    it('fails a seeded fraction of calls, the same ones for the same seed', () => {
      const run = () => {
        const core = new SimulatedEcs({ startTime: T0, seed: 21, throttling: false });
        core.call('CreateCluster', { clusterName: 'c1', capacityProviders: ['FARGATE', 'FARGATE_SPOT'] });
        core.injectFault({ action: '*', fraction: 0.3, errorType: 'ServerException' });
        const outcomes = Array.from({ length: 200 }, () => {
          try {
            core.call('ListClusters', {});
            return 'ok';
          } catch {
            return 'x';
          }
        }).join('');
        core.close();
        return outcomes;
      };
      const a = run();
      const failures = a.split('').filter((c) => c === 'x').length;
      expect(run()).toBe(a);
      expect(failures).toBeGreaterThan(35);
      expect(failures).toBeLessThan(85);
    });

    it.each([
      { case: 'nth and fraction together', spec: { action: 'ListClusters', nth: 1, fraction: 0.5 } },
      { case: 'a fraction above 1', spec: { action: 'ListClusters', fraction: 2 } },
      { case: 'no action', spec: { action: '' } },
    ])('refuses a fault spec with $case', ({ spec }) => {
      expect(() => sim.injectFault(spec)).toThrow();
    });
  });

  describe('call log and protocol edges', () => {
    it('records every call with virtual time, outcome and the key fields of the request', async () => {
      const ecs = ecsClient(sim, { maxAttempts: 1 });
      await ecs.send(new CreateClusterCommand({ clusterName: 'c1', capacityProviders: ['FARGATE', 'FARGATE_SPOT'] }));
      sim.advance(10);
      await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition()));
      await ecs.send(new UpdateServiceCommand({ cluster: 'c1', service: 'ghost', desiredCount: 3 })).catch(() => undefined);

      const calls = sim.calls();

      expect(calls.map((c) => [c.seq, c.action, c.outcome, c.at.toISOString()])).toEqual([
        [1, 'CreateCluster', 'ok', '2025-01-01T00:00:00.000Z'],
        [2, 'RegisterTaskDefinition', 'ok', '2025-01-01T00:00:10.000Z'],
        [3, 'UpdateService', 'ServiceNotFoundException', '2025-01-01T00:00:10.000Z'],
      ]);
      expect(calls[2].request).toEqual({ cluster: 'c1', service: 'ghost', desiredCount: 3 });
      expect(calls[1].request).toEqual({ family: 'web' });
      expect(sim.calls({ outcome: 'error' })).toHaveLength(1);
      expect(sim.calls({ since: new Date('2025-01-01T00:00:05Z') })).toHaveLength(2);
    });

    it('answers UnknownOperationException (400) for an action ECS does not have, and SerializationException for bad JSON', async () => {
      const post = (target: string, body: string) =>
        fetch(`${sim.endpoint}/`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': target },
          body,
        });

      const unknown = await post('AmazonEC2ContainerServiceV20141113.LaunchRockets', '{}');
      const otherService = await post('DynamoDB_20120810.ListTables', '{}');
      const badJson = await post('AmazonEC2ContainerServiceV20141113.ListClusters', '{nope');
      const ok = await post('AmazonEC2ContainerServiceV20141113.ListClusters', '');

      expect(unknown.status).toBe(400);
      expect(((await unknown.json()) as { __type: string }).__type).toBe('UnknownOperationException');
      expect(((await otherService.json()) as { __type: string }).__type).toBe('UnknownOperationException');
      expect(badJson.status).toBe(400);
      expect(((await badJson.json()) as { __type: string }).__type).toBe('SerializationException');
      expect(ok.status).toBe(200);
      expect(ok.headers.get('content-type')).toBe('application/x-amz-json-1.1');
      expect(ok.headers.get('x-amzn-requestid')).toMatch(/^[0-9a-f-]{36}$/);
      expect(await ok.json()).toEqual({ clusterArns: [] });
    });

    it('answers timestamps as epoch seconds on the wire', async () => {
      await ecsClient(sim).send(new CreateClusterCommand({ clusterName: 'c1', capacityProviders: ['FARGATE', 'FARGATE_SPOT'] }));
      sim.advance(1.5);
      const res = await fetch(`${sim.endpoint}/`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'AmazonEC2ContainerServiceV20141113.RegisterTaskDefinition' },
        body: JSON.stringify(aTaskDefinition()),
      });
      const body = (await res.json()) as { taskDefinition: { registeredAt: unknown } };
      expect(body.taskDefinition.registeredAt).toBe(T0.getTime() / 1000 + 1.5);
    });

    it('refuses invalid input types with ECS errors instead of crashing', async () => {
      const ecs = ecsClient(sim, { maxAttempts: 1 });
      await ecs.send(new CreateClusterCommand({ clusterName: 'c1', capacityProviders: ['FARGATE', 'FARGATE_SPOT'] }));
      const err = await ecs.send(new DescribeServicesCommand({ cluster: 'c1', services: undefined as unknown as string[] })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidParameterException);
    });
  });
});

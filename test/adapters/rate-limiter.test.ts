import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createServer, type Server } from 'node:http';
import { ListServicesCommand } from '@aws-sdk/client-ecs';
import { EcsRateLimiter, type LimiterTime } from '../../lambda/adapters/rate-limiter';
import { createEcsClient } from '../../lambda/adapters/clients';
import { ACTION_CATEGORY, THROTTLE_BUCKETS } from '../../lambda/core/ecs-limits';
import { LOCAL } from '../runtime/support';

/** Virtual milliseconds: sleeping advances time instantly. */
class VirtualTime implements LimiterTime {
  t = 0;
  nowMs(): number {
    return this.t;
  }
  async sleep(ms: number): Promise<void> {
    this.t += ms;
  }
}

describe('EcsRateLimiter', () => {
  it.each([
    { case: 'service modify at half budget', action: 'UpdateService', fraction: 0.5, calls: 30 },
    { case: 'service read at half budget', action: 'DescribeServices', fraction: 0.5, calls: 80 },
    { case: 'task definition modify at a tenth', action: 'RegisterTaskDefinition', fraction: 0.1, calls: 5 },
  ])('waits (never fails) beyond the scaled burst: $case', async ({ action, fraction, calls }) => {
    // Prepare
    const time = new VirtualTime();
    const limiter = new EcsRateLimiter(fraction, time);
    const category = action === 'UpdateService' ? 'serviceModify' : action === 'DescribeServices' ? 'serviceRead' : 'taskDefinitionModify';
    const { burst, refillPerSecond } = THROTTLE_BUCKETS[category];
    const scaledBurst = Math.max(1, Math.floor(burst * fraction));
    const scaledRefill = refillPerSecond * fraction;
    const done: number[] = [];

    // Act
    await Promise.all(Array.from({ length: calls }, (_, i) => limiter.acquire(action).then(() => done.push(i))));

    // Assess: first come, first served; the wait is what the scaled bucket dictates.
    expect(done).toEqual(Array.from({ length: calls }, (_, i) => i));
    expect(limiter.budget(category)).toEqual({ burst: scaledBurst, refillPerSecond: scaledRefill });
    const minimumMs = (Math.max(0, calls - scaledBurst) / scaledRefill) * 1000;
    expect(time.t).toBeGreaterThanOrEqual(minimumMs - 1);
    expect(time.t).toBeLessThanOrEqual(minimumMs + calls * 2);
    expect(limiter.snapshot()[category]?.calls).toBe(calls);
  });

  it('keeps categories apart: an exhausted write bucket does not slow reads', async () => {
    // Prepare: use up the service-modify burst.
    const time = new VirtualTime();
    const limiter = new EcsRateLimiter(0.5, time);
    for (let i = 0; i < limiter.budget('serviceModify').burst; i++) await limiter.acquire('CreateService');
    const before = time.t;

    // Act
    await limiter.acquire('ListServices');
    await limiter.acquire('DescribeTasks');

    // Assess
    expect(time.t).toBe(before);
    expect(limiter.snapshot().serviceRead?.waitedMs ?? 0).toBe(0);
  });

  it('refills with time', async () => {
    const time = new VirtualTime();
    const limiter = new EcsRateLimiter(0.5, time);
    const { burst, refillPerSecond } = limiter.budget('serviceModify');
    for (let i = 0; i < burst; i++) await limiter.acquire('UpdateService');
    time.t += (2 / refillPerSecond) * 1000; // two tokens' worth
    const before = time.t;
    await limiter.acquire('UpdateService');
    await limiter.acquire('UpdateService');
    expect(time.t).toBe(before);
    await limiter.acquire('UpdateService');
    expect(time.t).toBeGreaterThan(before);
  });

  it('does not limit actions outside the ECS throttling table', async () => {
    const time = new VirtualTime();
    const limiter = new EcsRateLimiter(0.01, time);
    for (let i = 0; i < 10; i++) await limiter.acquire('SomeFutureAction');
    expect(time.t).toBe(0);
    expect(limiter.snapshot()).toEqual({});
  });

  it('property: in any window from the start, calls never exceed the scaled burst plus refill', async () => {
    const actions = Object.keys(ACTION_CATEGORY);
    await fc.assert(
      fc.asyncProperty(
        fc.double({ min: 0.05, max: 1, noNaN: true }),
        fc.constantFrom(...actions),
        fc.array(fc.integer({ min: 0, max: 2000 }), { minLength: 1, maxLength: 150 }),
        async (fraction, action, gapsMs) => {
          // Prepare
          const time = new VirtualTime();
          const limiter = new EcsRateLimiter(fraction, time);
          const { burst, refillPerSecond } = limiter.budget(ACTION_CATEGORY[action]);
          const done: number[] = [];

          // Act: calls arrive after the given gaps (virtual milliseconds).
          for (const gap of gapsMs) {
            time.t += gap;
            await limiter.acquire(action);
            done.push(time.t);
          }

          // Assess
          done.forEach((t, i) => {
            expect(i + 1).toBeLessThanOrEqual(burst + (refillPerSecond * t) / 1000 + 1e-6);
          });
        },
      ),
      { numRuns: 200 },
    );
  });

  it.each([{ fraction: 0 }, { fraction: -0.5 }, { fraction: 1.5 }, { fraction: Number.NaN }])(
    'rejects a budget fraction of $fraction',
    ({ fraction }) => {
      expect(() => new EcsRateLimiter(fraction)).toThrow(RangeError);
    },
  );
});

describe('rate limit middleware on the ECSClient', () => {
  let server: Server;
  let endpoint = '';
  const seen: string[] = [];
  let failNext = 0;

  beforeAll(async () => {
    // A loopback ECS endpoint (JSON 1.1) that answers ServerException on demand, then success.
    server = createServer((req, res) => {
      seen.push(String(req.headers['x-amz-target']));
      req.resume();
      req.on('end', () => {
        res.setHeader('content-type', 'application/x-amz-json-1.1');
        if (failNext > 0) {
          failNext -= 1;
          res.statusCode = 500;
          res.end(JSON.stringify({ __type: 'ServerException', message: 'try again' }));
          return;
        }
        res.end(JSON.stringify({ serviceArns: [] }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const addr = server.address();
    endpoint = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('takes a token for every attempt, retries included, in the right category', async () => {
    // Prepare
    seen.length = 0;
    failNext = 1;
    const { ecs, limiter } = createEcsClient({ apiBudgetFraction: 0.5, clientConfig: { ...LOCAL, endpoint } });

    // Act
    await ecs.send(new ListServicesCommand({ cluster: 'apps' }));

    // Assess: one send, two attempts (standard retries), two serviceRead tokens.
    expect(seen).toEqual(['AmazonEC2ContainerServiceV20141113.ListServices', 'AmazonEC2ContainerServiceV20141113.ListServices']);
    expect(limiter.snapshot().serviceRead?.calls).toBe(2);
    ecs.destroy();
  });

  it('gives up after 3 attempts (standard retry mode)', async () => {
    seen.length = 0;
    failNext = 5;
    const { ecs, limiter } = createEcsClient({ clientConfig: { ...LOCAL, endpoint } });
    await expect(ecs.send(new ListServicesCommand({ cluster: 'apps' }))).rejects.toMatchObject({ name: 'ServerException' });
    expect(seen).toHaveLength(3);
    expect(limiter.snapshot().serviceRead?.calls).toBe(3);
    failNext = 0;
    ecs.destroy();
  });
});

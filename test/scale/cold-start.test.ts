/**
 * A new Lambda container over a fleet larger than one pass can describe (the ECS simulator with
 * ECS's throttling and dynalite; the rate limiter waits in simulated time). The first pass
 * describes task definitions only until its share of the time for observation is spent, caches each
 * description as it arrives, describes first where a change may be waiting, and plans with what it
 * has; the next passes finish the comparison.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { ListTaskDefinitionsCommand, RegisterTaskDefinitionCommand } from '@aws-sdk/client-ecs';
import { createEcsClient } from '../../lambda/adapters/clients';
import {
  clearTaskDefinitionCache,
  EcsObserver,
  MAX_CACHED_TASK_DEFINITIONS,
  rememberTaskDefinition,
  TASK_DEFINITION_CACHE_IDLE_SECONDS,
  taskDefinitionCacheSize,
} from '../../lambda/adapters/ecs-observer';
import { OBSERVATION_TIME_SHARE, LEASE_SAFETY_SECONDS, type PassSummary } from '../../lambda/core/pass';
import { ConditionType, Reason } from '../../lambda/core/status';
import type { ServiceStatus } from '../../lambda/core/types';
import { LOCAL } from '../runtime/support';
import { aSpecItem, personEcs, useSimHarness } from '../break/support';

const FLEET = 60;
const name = (i: number) => `s${String(i).padStart(3, '0')}`;
/**
 * A lease this short leaves 4 s to the pass, 2.2 s of them to observe: at half of ECS's
 * task-definition read budget (25 at once, then 10 per second) that describes about 47 of the 60.
 */
const SHORT_LEASE_SECONDS = 9;

function notDescribed(status: ServiceStatus | undefined) {
  return status?.conditions.find((c) => c.type === ConditionType.Incomplete && c.reason === Reason.TaskDefinitionNotDescribed);
}

describe('the first passes of a new container over a large fleet', () => {
  const h = useSimHarness({ resetEach: false });
  let stored: Record<string, ServiceStatus | undefined>;
  /** DescribeTaskDefinition calls by ARN while the fleet was created and converged. */
  let describedWhileCreating = 0;
  let cachedAfterCreating = 0;

  async function storedStatuses(): Promise<Record<string, ServiceStatus | undefined>> {
    const out: Record<string, ServiceStatus | undefined> = {};
    for (let i = 0; i < FLEET; i++) out[name(i)] = await h.status({ cluster: 'apps', service: name(i) });
    return out;
  }

  /** A pass of a container that has just started: empty task definition cache, short lease. */
  async function shortPass(holder: string): Promise<PassSummary> {
    h.sim.advance(60);
    h.sim.clearCalls();
    return h.runtime.run({ holder, leaseTtlSeconds: SHORT_LEASE_SECONDS });
  }

  beforeAll(async () => {
    await h.reset();
    for (let i = 0; i < FLEET; i++) await h.putSpec(aSpecItem({ service: name(i), desiredCount: 1 }));
    await h.converge(20);
    describedWhileCreating = h.sim.calls({ action: 'DescribeTaskDefinition' }).filter((c) => String(c.request.taskDefinition).startsWith('arn:')).length;
    cachedAfterCreating = taskDefinitionCacheSize();
    stored = await storedStatuses();
  });

  it('a container that registered the revisions never describes them: RegisterTaskDefinition\'s answer is cached', () => {
    expect(cachedAfterCreating).toBeGreaterThanOrEqual(FLEET);
    expect(describedWhileCreating).toBe(0);
  });

  it('describes until the observation deadline, writes no status for what it deferred, and the next pass describes only the rest', async () => {
    // Prepare: a new container.
    clearTaskDefinitionCache();
    expect(OBSERVATION_TIME_SHARE * (SHORT_LEASE_SECONDS - LEASE_SAFETY_SECONDS)).toBeLessThan(FLEET / 10);

    // Act
    const first = await shortPass('cold-1');
    const firstDescribes = h.sim.calls({ action: 'DescribeTaskDefinition' }).length;
    const cachedAfterFirst = taskDefinitionCacheSize();
    const second = await shortPass('cold-2');
    const secondDescribes = h.sim.calls({ action: 'DescribeTaskDefinition' }).length;
    const third = await shortPass('cold-3');

    // Assess: the first pass deferred part of the fleet and said so.
    expect(first.outcome).toBe('completed');
    expect(first.counts.taskDefinitionsPending).toBeGreaterThan(0);
    expect(firstDescribes + first.counts.taskDefinitionsPending).toBe(FLEET);
    expect(cachedAfterFirst).toBe(firstDescribes);
    const deferred = Object.entries(first.statuses).filter(([, st]) => notDescribed(st));
    expect(deferred).toHaveLength(first.counts.taskDefinitionsPending);
    for (const [, st] of deferred) {
      expect(st.phase).toBe('Converged');
      expect(notDescribed(st)?.message).toMatch(/not described yet/);
    }
    expect(first.errors).toEqual([]);
    expect(first.actions).toEqual([]);
    // Nothing changed in ECS: no status is rewritten for a deferral, in any of the passes.
    expect([first, second, third].map((s) => s.counts.statusesWritten)).toEqual([0, 0, 0]);
    expect(await storedStatuses()).toEqual(stored);
    // The second pass describes exactly what the first deferred; the third none.
    expect(secondDescribes).toBe(first.counts.taskDefinitionsPending);
    expect(second.counts.taskDefinitionsPending).toBe(0);
    expect(Object.values(second.statuses).filter((st) => notDescribed(st))).toEqual([]);
    expect(h.sim.calls({ action: 'DescribeTaskDefinition' })).toEqual([]);
    expect(third.counts.taskDefinitionsPending).toBe(0);
    expect(h.sim.callCounts().DescribeTaskDefinition?.throttled ?? 0).toBe(0);
  });

  it('keeps each description as it arrives, even when the describing never finishes (invocation cut off)', async () => {
    // Prepare: a new container whose rate limiter never grants another token after the burst, as
    // when the Lambda is frozen mid-pass.
    clearTaskDefinitionCache();
    const person = personEcs(h);
    const listed = await person.send(new ListTaskDefinitionsCommand({ status: 'ACTIVE', maxResults: 100 }));
    person.destroy();
    const arns = (listed.taskDefinitionArns ?? []).filter((a) => a.includes(':task-definition/apps-'));
    expect(arns.length).toBeGreaterThanOrEqual(FLEET);
    const { ecs, limiter } = createEcsClient({
      limiterTime: { nowMs: () => 0, sleep: () => new Promise<void>(() => undefined) },
      clientConfig: { ...LOCAL, endpoint: h.sim.endpoint },
    });
    const burst = limiter.budget('taskDefinitionRead').burst;
    h.sim.clearCalls();

    // Act: the call never resolves; look at the cache while it hangs.
    void new EcsObserver(ecs).describeTaskDefinitions(arns);

    // Assess
    await vi.waitFor(() => expect(h.sim.calls({ action: 'DescribeTaskDefinition' })).toHaveLength(burst), { timeout: 60_000 });
    await vi.waitFor(() => expect(taskDefinitionCacheSize()).toBe(burst), { timeout: 60_000 });
    ecs.destroy();
  });

  it('describes first where a change may wait: a changed spec and a task definition changed by hand are acted on in the first pass', async () => {
    // Prepare: the last three services in name order: two specs edited, one service pointed at
    // another task definition by a person. Then a new container.
    const last = [name(FLEET - 3), name(FLEET - 2), name(FLEET - 1)];
    const person = personEcs(h);
    const td = await person.send(
      new RegisterTaskDefinitionCommand({
        family: 'hand-made',
        networkMode: 'awsvpc',
        requiresCompatibilities: ['FARGATE'],
        cpu: '256',
        memory: '512',
        containerDefinitions: [{ name: last[0], image: 'public.ecr.aws/nginx/nginx:1.25', essential: true }],
      }),
    );
    person.destroy();
    h.sim.setTaskDefinition({ cluster: 'apps', service: last[0], taskDefinition: td.taskDefinition?.taskDefinitionArn ?? '' });
    for (const s of last.slice(1)) await h.editSpec({ cluster: 'apps', service: s }, { image: 'public.ecr.aws/nginx/nginx:1.28' });
    clearTaskDefinitionCache();

    // Act
    const first = await shortPass('priority');

    // Assess: part of the fleet was deferred, yet the three were compared and acted on.
    expect(first.counts.taskDefinitionsPending).toBeGreaterThan(0);
    const updates = first.actions.filter((a) => a.type === 'UpdateService').map((a) => [a.service, a.kind, a.outcome]);
    expect(updates).toEqual([
      [last[0], 'drift', 'applied'],
      [last[1], 'rollout', 'applied'],
      [last[2], 'rollout', 'applied'],
    ]);
    const described = new Set(h.sim.calls({ action: 'DescribeTaskDefinition' }).map((c) => c.request.taskDefinition));
    expect(described.has(td.taskDefinition?.taskDefinitionArn)).toBe(true);
  });
});

describe('a new container over several clusters', () => {
  const CLUSTERS = ['alpha', 'bravo', 'charlie'];
  const h = useSimHarness({ resetEach: false });

  beforeAll(async () => {
    await h.reset({ clusters: CLUSTERS });
    for (const cluster of CLUSTERS) {
      for (let i = 0; i < 12; i++) await h.putSpec(aSpecItem({ cluster, service: name(i), desiredCount: 1 }));
    }
    await h.converge(20);
  });

  it('describes the task definitions of the clusters already read while the others are still being read', async () => {
    // Prepare
    clearTaskDefinitionCache();
    h.sim.advance(60);
    h.sim.clearCalls();

    // Act
    const s = await h.pass('overlap');

    // Assess: ECS throttles the two kinds of reads in separate categories, so they overlap.
    const log = h.sim.calls().map((c) => c.action);
    expect(log.lastIndexOf('DescribeServices')).toBeGreaterThan(log.indexOf('DescribeTaskDefinition'));
    expect(log.filter((a) => a === 'DescribeTaskDefinition')).toHaveLength(3 * 12);
    expect(s.counts.taskDefinitionsPending).toBe(0);
    expect(s.actions).toEqual([]);
    expect(s.readsComplete).toBe(true);
  });

  it('observer: hands over each DescribeServices answer as it arrives, the same objects as in the result', async () => {
    // Prepare
    const batches: string[][] = [];
    const seen: unknown[] = [];

    // Act
    const observed = await new EcsObserver(h.runtime.ecs, { concurrency: 1 }).observeCluster('alpha', [], {
      onServices: (services) => {
        batches.push(services.map((x) => x.serviceName));
        seen.push(...services);
      },
    });

    // Assess: 12 services, DescribeServices takes 10 at a time.
    expect(batches.map((b) => b.length)).toEqual([10, 2]);
    expect(batches.flat().sort()).toEqual(Object.keys(observed.services).sort());
    for (const svc of seen) expect(Object.values(observed.services)).toContain(svc);
  });

  it('starts describing the task definitions services at rest ran last pass before ECS has listed them', async () => {
    // Prepare
    clearTaskDefinitionCache();
    h.sim.advance(60);
    h.sim.clearCalls();

    // Act
    const s = await h.pass('expected');

    // Assess
    const log = h.sim.calls().map((c) => c.action);
    expect(log.indexOf('DescribeTaskDefinition')).toBeGreaterThanOrEqual(0);
    expect(log.indexOf('DescribeTaskDefinition')).toBeLessThan(log.indexOf('DescribeServices'));
    expect(s.counts.taskDefinitionsPending).toBe(0);
    expect(s.errors).toEqual([]);
  });
});

describe('the in-memory description cache is bounded (peak RSS)', () => {
  const h = useSimHarness({ resetEach: false });
  const FEW = 12;

  beforeAll(async () => {
    clearTaskDefinitionCache();
    await h.reset();
    for (let i = 0; i < FEW; i++) await h.putSpec(aSpecItem({ service: name(i), desiredCount: 1 }));
    await h.converge(20);
  });

  it('drops the revisions a rollout replaced once no pass asked for them in an hour, keeps those in use, and describes nothing again', async () => {
    // Prepare: a rollout of half the services (new revisions registered and cached), to the end.
    for (let i = 0; i < FEW / 2; i++) await h.editSpec({ cluster: 'apps', service: name(i) }, { image: 'public.ecr.aws/nginx/nginx:1.28.0' });
    await h.converge(20);
    const withReplaced = taskDefinitionCacheSize();
    expect(withReplaced).toBeGreaterThanOrEqual(FEW + FEW / 2);

    // Act: an hour and a minute later (the container stayed warm), one pass.
    h.sim.advance(TASK_DEFINITION_CACHE_IDLE_SECONDS + 60);
    h.sim.clearCalls();
    const s = await h.pass('after-an-hour');

    // Assess: only the revisions the services run are left, and none had to be described again.
    expect(s.counts.actionsPlanned).toBe(0);
    expect(taskDefinitionCacheSize()).toBe(FEW);
    expect(h.sim.calls({ action: 'DescribeTaskDefinition' })).toEqual([]);
    h.sim.advance(60);
    h.sim.clearCalls();
    await h.pass('next');
    expect(h.sim.calls({ action: 'DescribeTaskDefinition' })).toEqual([]);
  });

  it(`keeps at most ${MAX_CACHED_TASK_DEFINITIONS} descriptions, the least recently used dropped first`, () => {
    clearTaskDefinitionCache();
    const td = (i: number) => ({ taskDefinitionArn: `arn:aws:ecs:us-east-1:123456789012:task-definition/f${i}:1`, family: `f${i}` });
    for (let i = 0; i <= MAX_CACHED_TASK_DEFINITIONS; i++) rememberTaskDefinition(td(i));
    expect(taskDefinitionCacheSize()).toBe(MAX_CACHED_TASK_DEFINITIONS);
    clearTaskDefinitionCache();
  });
});

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ListClustersCommand, RegisterTaskDefinitionCommand, type ECSClient } from '@aws-sdk/client-ecs';
import { startSimulator, type CallRecord, type SimSnapshot, type Simulator } from '../../local/sim';
import { aTaskDefinition, advanceUntil, deploy, describeService, ecsClient, serviceTasks } from './helpers';

const T0 = new Date('2025-01-01T00:00:00Z');

describe('simulator: control endpoint (/_sim/)', () => {
  let sim: Simulator;
  let ecs: ECSClient;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0, startTime: T0, throttling: false, seed: 17 });
    ecs = ecsClient(sim, { maxAttempts: 1 });
  });
  afterAll(async () => {
    await sim?.close();
  });
  beforeEach(() => {
    sim.reset();
    sim.setThrottling(false);
  });

  async function post(command: string, body: unknown = {}): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${sim.endpoint}/_sim/${command}`, { method: 'POST', body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  async function get<T>(path: string): Promise<T> {
    const res = await fetch(`${sim.endpoint}/_sim/${path}`);
    expect(res.status).toBe(200);
    return (await res.json()) as T;
  }

  async function runningService(desiredCount = 2): Promise<void> {
    await deploy(ecs, { svc: { desiredCount } });
    await advanceUntil(sim, async () => (await describeService(ecs, 'c1', 'web')).runningCount === desiredCount);
  }

  it('advances the clock and shows the whole state', async () => {
    await deploy(ecs);

    const advanced = await post('advance', { seconds: 90 });
    const state = await get<SimSnapshot>('state');
    const clock = await get<{ now: string; speed: number | null }>('clock');

    expect(advanced).toEqual({ status: 200, body: { now: '2025-01-01T00:01:30.000Z' } });
    expect(clock).toEqual({ now: '2025-01-01T00:01:30.000Z', speed: null });
    expect(state.clusters[0].name).toBe('c1');
    expect(state.clusters[0].services[0]).toMatchObject({ name: 'web', status: 'ACTIVE', desiredCount: 2, runningCount: 2 });
    expect(state.clusters[0].tasks.filter((t) => t.lastStatus === 'RUNNING')).toHaveLength(2);
    expect(state.failureRules.length).toBeGreaterThan(0);
  });

  it('changes desiredCount out of band: visible as drift, absent from the API call log, present in the control log', async () => {
    await runningService();
    const before = sim.calls().length;

    const out = await post('set-desired-count', { cluster: 'c1', service: 'web', desiredCount: 5 });
    const svc = await describeService(ecs, 'c1', 'web');
    const calls = sim.calls();

    expect(out.status).toBe(200);
    expect(svc.desiredCount).toBe(5);
    expect(calls.filter((c) => c.action === 'UpdateService')).toHaveLength(0);
    expect(calls).toHaveLength(before + 1); // the DescribeServices above
    const log = await get<{ commands: { command: string; outOfBand: boolean }[] }>('control-log');
    expect(log.commands.at(-1)).toMatchObject({ command: 'setDesiredCount', outOfBand: true });
  });

  it('changes the task definition out of band, which starts a deployment', async () => {
    await runningService();
    await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition({ image: 'nginx:2' })));

    const out = await post('set-task-definition', { cluster: 'c1', service: 'web', taskDefinition: 'web:2' });
    const svc = await describeService(ecs, 'c1', 'web');

    expect(out.body).toEqual({ taskDefinitionArn: 'arn:aws:ecs:us-east-1:123456789012:task-definition/web:2' });
    expect(svc.taskDefinition).toBe('arn:aws:ecs:us-east-1:123456789012:task-definition/web:2');
    expect(svc.deployments?.map((d) => d.status)).toEqual(['PRIMARY', 'ACTIVE']);
  });

  it('stops one task, or every task of a service, as UserInitiated', async () => {
    await runningService(3);
    const originals = await serviceTasks(ecs, 'c1', 'web');
    const one = originals[0];

    const single = await post('stop-task', { cluster: 'c1', task: one.taskArn, reason: 'clicked Stop' });
    // The scheduler has already launched a replacement for `one`: four live tasks are stopped.
    const all = await post('stop-service-tasks', { cluster: 'c1', service: 'web' });
    sim.advance(120);
    const stopped = await serviceTasks(ecs, 'c1', 'web', 'STOPPED');
    const byArn = new Map(stopped.map((t) => [t.taskArn, t]));

    expect(single.body).toEqual({ taskArn: one.taskArn });
    expect((all.body.taskArns as string[]).length).toBe(3);
    expect(byArn.get(one.taskArn)).toMatchObject({ lastStatus: 'STOPPED', stopCode: 'UserInitiated', stoppedReason: 'clicked Stop' });
    for (const t of originals.slice(1)) {
      expect(byArn.get(t.taskArn)).toMatchObject({ lastStatus: 'STOPPED', stopCode: 'UserInitiated', stoppedReason: 'Task stopped by user' });
    }
    expect(sim.calls({ action: 'StopTask' })).toHaveLength(0);
    expect((await describeService(ecs, 'c1', 'web')).runningCount).toBe(3);
  });

  it('replaces, prepends and resets failure rules', async () => {
    const replaced = await post('failure-rules', { rules: [{ match: 'flaky', mode: 'crash-loop', runSeconds: 5 }] });
    const prepended = await post('failure-rules', { rules: [{ match: 'slow', mode: 'slow-start' }], prepend: true });
    const listed = await get<{ rules: { match: string }[] }>('failure-rules');
    const reset = await post('reset-failure-rules');

    expect(replaced.body.rules).toEqual([{ match: 'flaky', mode: 'crash-loop', runSeconds: 5 }]);
    expect((prepended.body.rules as { match: string }[]).map((r) => r.match)).toEqual(['slow', 'flaky']);
    expect(listed.rules.map((r) => r.match)).toEqual(['slow', 'flaky']);
    expect((reset.body.rules as { match: string }[]).map((r) => r.match)).toContain('does-not-exist');
  });

  it('interrupts Spot tasks on demand', async () => {
    await deploy(ecs, { svc: { desiredCount: 2, capacityProviderStrategy: [{ capacityProvider: 'FARGATE_SPOT', weight: 1 }] } });
    await advanceUntil(sim, async () => (await describeService(ecs, 'c1', 'web')).runningCount === 2);

    const out = await post('interrupt-spot', { cluster: 'c1', service: 'web' });
    sim.advance(5);
    const stopping = await serviceTasks(ecs, 'c1', 'web', 'STOPPED');

    expect((out.body.taskArns as string[]).length).toBe(2);
    expect(stopping.every((t) => t.stopCode === 'SpotInterruption' && t.stoppedReason === 'Your Spot Task was interrupted.')).toBe(true);
  });

  it('injects faults, lists and clears them; the calls and counts endpoints show the outcome', async () => {
    const added = await post('faults', { action: 'ListClusters', nth: 1, errorType: 'ServerException', message: 'boom' });
    const listed = await get<{ faults: { id: number }[] }>('faults');
    const failed = await ecs.send(new ListClustersCommand({})).catch((e: Error) => e.name);
    await post('clear-faults');
    const ok = await ecs.send(new ListClustersCommand({})).then(() => 'ok');
    const calls = await get<{ calls: CallRecord[] }>('calls?action=ListClusters');
    const counts = await get<{ counts: Record<string, { total: number; errors: number }> }>('call-counts');

    expect(added.body.id).toEqual(expect.any(Number));
    expect(listed.faults.map((f) => f.id)).toEqual([added.body.id]);
    expect(failed).toBe('ServerException');
    expect(ok).toBe('ok');
    expect(calls.calls.map((c) => c.outcome)).toEqual(['ServerException', 'ok']);
    expect(counts.counts.ListClusters).toMatchObject({ total: 2, errors: 1 });
  });

  it('turns throttling and latency on and off', async () => {
    const throttling = await post('throttling', { enabled: true });
    const latency = await post('latency', { ms: 5 });
    const state = await get<SimSnapshot>('state');
    await post('latency', { ms: 0 });

    expect(throttling.body).toEqual({ enabled: true });
    expect(latency.body).toEqual({ ms: 5 });
    expect(state).toMatchObject({ throttling: true, latencyMs: 5 });
  });

  it('resets everything', async () => {
    await deploy(ecs);
    const out = await post('reset');
    const state = await get<SimSnapshot>('state');
    expect(out.status).toBe(200);
    expect(state.clusters).toEqual([]);
    expect(sim.calls()).toEqual([]);
  });

  it.each([
    { case: 'an unknown command', command: 'launch-rockets', body: {}, status: 404, error: 'UnknownCommand' },
    { case: 'a missing field', command: 'set-desired-count', body: { service: 'web' }, status: 400, error: 'InvalidInput' },
    { case: 'a negative advance', command: 'advance', body: { seconds: -5 }, status: 400, error: 'InvalidInput' },
    { case: 'an unknown failure mode', command: 'failure-rules', body: { rules: [{ match: 'x', mode: 'explode' }] }, status: 400, error: 'InvalidInput' },
    { case: 'an unknown cluster', command: 'set-desired-count', body: { cluster: 'ghost', service: 'web', desiredCount: 1 }, status: 400, error: 'ClusterNotFoundException' },
    { case: 'an unknown service', command: 'stop-service-tasks', body: { cluster: 'c1', service: 'ghost' }, status: 400, error: 'ServiceNotFoundException' },
  ])('answers $case with $status', async ({ command, body, status, error }) => {
    await post('reset');
    await fetch(`${sim.endpoint}/`, {
      method: 'POST',
      headers: { 'x-amz-target': 'AmazonEC2ContainerServiceV20141113.CreateCluster' },
      body: JSON.stringify({ clusterName: 'c1' }),
    });
    const out = await post(command, body);
    expect(out.status).toBe(status);
    expect(out.body.error).toBe(error);
  });

  it('answers 400 for a body that is not JSON', async () => {
    const res = await fetch(`${sim.endpoint}/_sim/advance`, { method: 'POST', body: '{not json' });
    expect(res.status).toBe(400);
  });
});

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  DescribeTasksCommand,
  ListTasksCommand,
  RegisterTaskDefinitionCommand,
  UpdateServiceCommand,
  type ECSClient,
  type Task,
} from '@aws-sdk/client-ecs';
import { circuitBreakerThreshold, ruleMatches, startSimulator, type Simulator } from '../../local/sim';
import { aTaskDefinition, advanceUntil, deploy, describeService, ecsClient, serviceTasks } from './helpers';

const T0 = new Date('2025-01-01T00:00:00Z');

describe('simulator: failure modes', () => {
  let sim: Simulator;
  let ecs: ECSClient;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0, startTime: T0, throttling: false, seed: 5 });
    ecs = ecsClient(sim);
  });
  afterAll(async () => {
    await sim?.close();
  });
  beforeEach(() => sim.reset());

  /** Every task the service ever had (running and stopped), described. */
  async function allTasks(service = 'web'): Promise<Task[]> {
    const arns = [
      ...((await ecs.send(new ListTasksCommand({ cluster: 'c1', serviceName: service }))).taskArns ?? []),
      ...((await ecs.send(new ListTasksCommand({ cluster: 'c1', serviceName: service, desiredStatus: 'STOPPED' }))).taskArns ?? []),
    ];
    if (arns.length === 0) return [];
    return (await ecs.send(new DescribeTasksCommand({ cluster: 'c1', tasks: arns }))).tasks ?? [];
  }

  async function firstStopped(service = 'web'): Promise<Task> {
    let stopped: Task | undefined;
    await advanceUntil(
      sim,
      async () => {
        stopped = (await allTasks(service)).find((t) => t.lastStatus === 'STOPPED');
        return stopped !== undefined;
      },
      { step: 2, what: 'a STOPPED task' },
    );
    return stopped as Task;
  }

  it('image cannot be pulled: STOPPED with TaskFailedToStart and CannotPullContainerError, never started', async () => {
    await deploy(ecs, { td: { image: 'registry.example.com/team/app:does-not-exist' }, svc: { desiredCount: 1 } });

    const t = await firstStopped();

    expect(t).toMatchObject({ desiredStatus: 'STOPPED', stopCode: 'TaskFailedToStart' });
    expect(t.stoppedReason).toBe(
      'CannotPullContainerError: pull image manifest has been retried 5 time(s): failed to resolve ref registry.example.com/team/app:does-not-exist: registry.example.com/team/app:does-not-exist: not found',
    );
    expect(t.startedAt).toBeUndefined();
    expect(t.containers?.[0]).toMatchObject({ lastStatus: 'STOPPED', reason: t.stoppedReason });
    expect(t.containers?.[0].exitCode).toBeUndefined();
    expect((await describeService(ecs, 'c1', 'web')).deployments?.[0].failedTasks).toBeGreaterThanOrEqual(1);
  });

  it('qualifies short image names the way containerd reports them', async () => {
    await deploy(ecs, { td: { image: 'unpullable' }, svc: { desiredCount: 1 } });
    const t = await firstStopped();
    expect(t.stoppedReason).toContain('failed to resolve ref docker.io/library/unpullable:latest');
  });

  it('essential container exits: RUNNING briefly, then STOPPED with EssentialContainerExited and exit code 1', async () => {
    await deploy(ecs, { td: { image: 'example/crashloop:1' }, svc: { desiredCount: 1 } });

    const t = await firstStopped();

    expect(t).toMatchObject({ stopCode: 'EssentialContainerExited', stoppedReason: 'Essential container in task exited' });
    expect(t.startedAt).toBeInstanceOf(Date);
    expect(t.containers?.[0]).toMatchObject({ lastStatus: 'STOPPED', exitCode: 1 });
  });

  it('health check failing: UNHEALTHY, then stopped by the scheduler with "Task failed container health checks"', async () => {
    await deploy(ecs, {
      td: {
        containerDefinitions: [
          { name: 'web', image: 'example/unhealthy:1', healthCheck: { command: ['CMD-SHELL', 'exit 1'], interval: 10, retries: 2 } },
        ],
      },
      svc: { desiredCount: 1 },
    });

    const t = await firstStopped();
    const svc = await describeService(ecs, 'c1', 'web');

    expect(t).toMatchObject({ stopCode: 'ServiceSchedulerInitiated', stoppedReason: 'Task failed container health checks', healthStatus: 'UNHEALTHY' });
    expect(t.containers?.[0].healthStatus).toBe('UNHEALTHY');
    expect(svc.events?.map((e) => e.message)).toContain(`(service web) (task ${t.taskArn?.split('/').pop()}) failed container health checks.`);
  });

  it('capacity exhausted: no task placed, a placement event once, tasks placed after the rule is switched off', async () => {
    // Prepare
    await deploy(ecs, { td: { image: 'example/no-capacity:1' }, svc: { desiredCount: 2 } });

    // Act
    sim.advance(300);
    const starved = await describeService(ecs, 'c1', 'web');
    const tasksWhileStarved = await allTasks();
    sim.setFailureRules([{ match: 'no-capacity', mode: 'ok' }], { prepend: true });
    await advanceUntil(sim, async () => (await describeService(ecs, 'c1', 'web')).runningCount === 2, { step: 5, maxSeconds: 180 });

    // Assess
    expect(starved).toMatchObject({ runningCount: 0, pendingCount: 0, desiredCount: 2 });
    expect(tasksWhileStarved).toEqual([]);
    const placement = (starved.events ?? []).filter((e) => e.message?.includes('was unable to place a task'));
    expect(placement).toHaveLength(1);
    expect(placement[0].message).toBe(
      '(service web) was unable to place a task. Reason: Capacity is unavailable at this time. Please try again later or in a different availability zone. For more information, see the Troubleshooting section of the Amazon ECS Developer Guide.',
    );
  });

  it('slow start: stays PENDING for minutes before RUNNING', async () => {
    await deploy(ecs, { td: { image: 'example/slow-start:1' }, svc: { desiredCount: 1 } });

    sim.advance(200);
    const [pending] = await serviceTasks(ecs, 'c1', 'web');
    await advanceUntil(sim, async () => (await describeService(ecs, 'c1', 'web')).runningCount === 1, { step: 10 });
    const [running] = await serviceTasks(ecs, 'c1', 'web');

    expect(pending.lastStatus).toBe('PENDING');
    expect(running.taskArn).toBe(pending.taskArn);
    const secondsToRunning = ((running.startedAt as Date).getTime() - (running.createdAt as Date).getTime()) / 1000;
    expect(secondsToRunning).toBeGreaterThanOrEqual(300);
  });

  it('Spot interruption: FARGATE_SPOT tasks stopped with SpotInterruption and replaced; FARGATE tasks unaffected', async () => {
    // Prepare: one task on FARGATE (base 1), the rest on FARGATE_SPOT.
    await deploy(ecs, {
      td: { image: 'example/spot-interrupt:1' },
      svc: {
        desiredCount: 3,
        capacityProviderStrategy: [
          { capacityProvider: 'FARGATE', weight: 0, base: 1 },
          { capacityProvider: 'FARGATE_SPOT', weight: 1 },
        ],
      },
    });

    // Act
    sim.advance(200);
    const tasks = await allTasks();

    // Assess
    const onDemand = tasks.filter((t) => t.capacityProviderName === 'FARGATE');
    const interrupted = tasks.filter((t) => t.stopCode === 'SpotInterruption');
    expect(onDemand).toHaveLength(1);
    expect(onDemand[0].lastStatus).toBe('RUNNING');
    expect(interrupted).toHaveLength(2);
    expect(interrupted.every((t) => t.capacityProviderName === 'FARGATE_SPOT' && t.stoppedReason === 'Your Spot Task was interrupted.')).toBe(true);
    expect(tasks.filter((t) => t.desiredStatus === 'RUNNING')).toHaveLength(3);
  });

  it.each([
    { desired: 1, threshold: 3 },
    { desired: 6, threshold: 3 },
    { desired: 7, threshold: 4 },
    { desired: 10, threshold: 5 },
    { desired: 399, threshold: 200 },
    { desired: 1000, threshold: 200 },
  ])('circuit breaker threshold for $desired tasks is $threshold', ({ desired, threshold }) => {
    expect(circuitBreakerThreshold(desired)).toBe(threshold);
  });

  it('circuit breaker with rollback: FAILED deployment, new PRIMARY on the last COMPLETED task definition, failed one drains', async () => {
    // Prepare: a steady service on rev 1 with the breaker and rollback on.
    const rev1 = await deploy(ecs, {
      svc: { desiredCount: 4, deploymentConfiguration: { deploymentCircuitBreaker: { enable: true, rollback: true } } },
    });
    await advanceUntil(sim, async () => (await describeService(ecs, 'c1', 'web')).deployments?.[0].rolloutState === 'COMPLETED');
    const completedId = (await describeService(ecs, 'c1', 'web')).deployments?.[0].id;
    await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition({ image: 'example/app:does-not-exist' })));

    // Act
    await ecs.send(new UpdateServiceCommand({ cluster: 'c1', service: 'web', taskDefinition: 'web:2' }));
    const failedId = (await describeService(ecs, 'c1', 'web')).deployments?.[0].id;
    await advanceUntil(sim, async () => (await describeService(ecs, 'c1', 'web')).deployments?.some((d) => d.rolloutState === 'FAILED') === true, { step: 2 });
    const rolledBack = await describeService(ecs, 'c1', 'web');
    await advanceUntil(sim, async () => (await describeService(ecs, 'c1', 'web')).deployments?.length === 1, { step: 5 });
    await advanceUntil(sim, async () => (await describeService(ecs, 'c1', 'web')).deployments?.[0].rolloutState === 'COMPLETED', { step: 5 });
    const recovered = await describeService(ecs, 'c1', 'web');

    // Assess
    const [primary, failed] = rolledBack.deployments ?? [];
    expect(rolledBack.taskDefinition).toBe(rev1);
    expect(primary).toMatchObject({
      status: 'PRIMARY',
      taskDefinition: rev1,
      rolloutState: 'IN_PROGRESS',
      rolloutStateReason: `ECS deployment circuit breaker: rolling back to deploymentId ${completedId}.`,
    });
    expect(failed).toMatchObject({
      id: failedId,
      status: 'ACTIVE',
      rolloutState: 'FAILED',
      rolloutStateReason: 'ECS deployment circuit breaker: tasks failed to start.',
    });
    expect(failed.failedTasks).toBe(circuitBreakerThreshold(4));
    const messages = (rolledBack.events ?? []).map((e) => e.message);
    expect(messages).toContain(`(service web) (deployment ${failedId}) deployment failed: tasks failed to start.`);
    expect(messages).toContain(`(service web) rolling back to deployment ${completedId}.`);
    expect(recovered).toMatchObject({ taskDefinition: rev1, runningCount: 4 });
    expect(recovered.deployments?.[0].id).not.toBe(completedId);
  });

  it('circuit breaker without rollback: the FAILED deployment stays PRIMARY and launches no more tasks', async () => {
    await deploy(ecs, {
      td: { image: 'example/app:does-not-exist' },
      svc: { desiredCount: 2, deploymentConfiguration: { deploymentCircuitBreaker: { enable: true, rollback: false } } },
    });

    await advanceUntil(sim, async () => (await describeService(ecs, 'c1', 'web')).deployments?.[0].rolloutState === 'FAILED', { step: 2 });
    const launchedAtFailure = (await allTasks()).length;
    sim.advance(1800);
    const svc = await describeService(ecs, 'c1', 'web');

    expect(svc.deployments).toHaveLength(1);
    expect(svc.deployments?.[0]).toMatchObject({ status: 'PRIMARY', rolloutState: 'FAILED', failedTasks: 3 });
    expect((await allTasks()).length).toBe(launchedAtFailure);
  });

  it('backs off launches after repeated failures and says so once', async () => {
    await deploy(ecs, { td: { image: 'example/app:does-not-exist' }, svc: { desiredCount: 1 } });

    sim.advance(1800);
    const tasks = await allTasks();
    const svc = await describeService(ecs, 'c1', 'web');

    // Without backoff a failing task is replaced about every 20 s (90 in 30 minutes).
    expect(tasks.length).toBeGreaterThan(3);
    expect(tasks.length).toBeLessThan(20);
    const created = tasks.map((t) => (t.createdAt as Date).getTime()).sort((a, b) => a - b);
    const gaps = created.slice(1).map((t, i) => t - created[i]);
    expect(gaps.at(-1)).toBeGreaterThan(gaps[0]);
    const impaired = (svc.events ?? []).filter((e) => e.message?.includes('is unable to consistently start tasks successfully'));
    expect(impaired).toHaveLength(1);
  });

  it('switches a RUNNING task to crash-looping when a rule for its image is added at run time', async () => {
    await deploy(ecs, { svc: { desiredCount: 1 } });
    await advanceUntil(sim, async () => (await describeService(ecs, 'c1', 'web')).runningCount === 1);
    const [healthy] = await serviceTasks(ecs, 'c1', 'web');

    sim.addFailureRule({ match: 'nginx/nginx:1.27', mode: 'crash-loop', runSeconds: 0, exitCode: 137 });
    sim.advance(60);
    const after = (await ecs.send(new DescribeTasksCommand({ cluster: 'c1', tasks: [healthy.taskArn as string] }))).tasks?.[0];

    expect(after).toMatchObject({ lastStatus: 'STOPPED', stopCode: 'EssentialContainerExited' });
    expect(after?.containers?.[0].exitCode).toBe(137);
  });

  it('answers a rule-specific stoppedReason for pull errors', async () => {
    sim.setFailureRules([{ match: '*private*', mode: 'pull-error', reason: 'CannotPullContainerError: pull access denied' }]);
    await deploy(ecs, { td: { image: 'corp/private-app:2' }, svc: { desiredCount: 1 } });
    const t = await firstStopped();
    expect(t.stoppedReason).toBe('CannotPullContainerError: pull access denied');
  });

  it.each([
    { case: 'substring', match: 'does-not-exist', image: 'a/b:does-not-exist-1', hit: true },
    { case: 'substring miss', match: 'crashloop', image: 'nginx:1', hit: false },
    { case: 'glob', match: '*.ecr.*/web:*', image: '1.dkr.ecr.us-east-1.amazonaws.com/web:7', hit: true },
    { case: 'glob anchored', match: 'web:*', image: 'x/web:1', hit: false },
    { case: 'regex', match: '/:v[0-9]+-bad$/', image: 'app:v12-bad', hit: true },
  ])('matches rules by image: $case', ({ match, image, hit }) => {
    expect(ruleMatches(match, image)).toBe(hit);
  });
});

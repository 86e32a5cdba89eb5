import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ClusterNotFoundException,
  CreateClusterCommand,
  CreateServiceCommand,
  DescribeTasksCommand,
  InvalidParameterException,
  ListTasksCommand,
  RegisterTaskDefinitionCommand,
  RunTaskCommand,
  ServiceNotFoundException,
  StopTaskCommand,
  type ECSClient,
  type Task,
} from '@aws-sdk/client-ecs';
import { startSimulator, type Simulator } from '../../local/sim';
import { SUBNETS, aTaskDefinition, advanceUntil, deploy, describeService, ecsClient, serviceTasks, taskId } from './helpers';

const T0 = new Date('2025-01-01T00:00:00Z');

describe('simulator: tasks', () => {
  let sim: Simulator;
  let ecs: ECSClient;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0, startTime: T0, throttling: false, seed: 3 });
    ecs = ecsClient(sim);
  });
  afterAll(async () => {
    await sim?.close();
  });
  beforeEach(() => sim.reset());

  it('starts a service task through PROVISIONING -> PENDING -> ACTIVATING -> RUNNING in 10-30 virtual seconds', async () => {
    // Prepare
    await deploy(ecs, { svc: { desiredCount: 1 } });

    // Act: sample the task every virtual second.
    const statuses: string[] = [];
    let task: Task | undefined;
    for (let s = 0; s <= 40; s++) {
      [task] = await serviceTasks(ecs, 'c1', 'web');
      if (task && statuses.at(-1) !== task.lastStatus) statuses.push(task.lastStatus as string);
      sim.advance(1);
    }

    // Assess
    expect(statuses).toEqual(['PROVISIONING', 'PENDING', 'ACTIVATING', 'RUNNING']);
    const t = task as Task;
    const secondsToRunning = ((t.startedAt as Date).getTime() - (t.createdAt as Date).getTime()) / 1000;
    expect(secondsToRunning).toBeGreaterThanOrEqual(9);
    expect(secondsToRunning).toBeLessThanOrEqual(30);
    expect(t).toMatchObject({
      desiredStatus: 'RUNNING',
      launchType: 'FARGATE',
      capacityProviderName: 'FARGATE',
      cpu: '256',
      memory: '512',
      group: 'service:web',
      connectivity: 'CONNECTED',
      platformVersion: '1.4.0',
    });
    expect(t.taskArn).toMatch(/^arn:aws:ecs:us-east-1:123456789012:task\/c1\/[0-9a-f]{32}$/);
    expect(t.startedBy).toMatch(/^ecs-svc\/\d{19}$/);
    expect(SUBNETS).toContain(t.attachments?.[0].details?.find((d) => d.name === 'subnetId')?.value);
    expect(t.containers?.[0]).toMatchObject({ name: 'web', lastStatus: 'RUNNING' });
    expect((t.pullStartedAt as Date) <= (t.pullStoppedAt as Date)).toBe(true);
  });

  it('is reproducible: the same seed and the same calls give the same task ids and times', async () => {
    const run = async () => {
      const other = await startSimulator({ port: 0, startTime: T0, seed: 99 });
      try {
        const c = ecsClient(other);
        await deploy(c);
        other.advance(60);
        return (await serviceTasks(c, 'c1', 'web')).map((t) => [t.taskArn, t.startedAt?.toISOString()]).sort();
      } finally {
        await other.close();
      }
    };
    const a = await run();
    const b = await run();
    expect(a).toHaveLength(2);
    expect(b).toEqual(a);
  });

  it('runs on real time x speed when started with a speed', async () => {
    // 600 virtual seconds per real second: tasks reach RUNNING within a fraction of a real second.
    const fast = await startSimulator({ port: 0, speed: 600, throttling: false });
    try {
      const c = ecsClient(fast);
      await deploy(c);
      const deadline = Date.now() + 10_000;
      let running = 0;
      while (running < 2 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        running = (await describeService(c, 'c1', 'web')).runningCount ?? 0;
      }
      expect(running).toBe(2);
      expect(fast.clock.speed).toBe(600);
    } finally {
      await fast.close();
    }
  });

  it('stops a task with StopTask (UserInitiated), keeps it describable for an hour, then answers MISSING; the scheduler replaces it', async () => {
    // Prepare
    await deploy(ecs, { svc: { desiredCount: 1 } });
    await advanceUntil(sim, async () => (await describeService(ecs, 'c1', 'web')).runningCount === 1);
    const [running] = await serviceTasks(ecs, 'c1', 'web');

    // Act
    const stopped = await ecs.send(new StopTaskCommand({ cluster: 'c1', task: taskId(running.taskArn), reason: 'maintenance' }));
    const lifecycle: string[] = [];
    for (let s = 0; s < 60; s++) {
      const t = (await ecs.send(new DescribeTasksCommand({ cluster: 'c1', tasks: [running.taskArn as string] }))).tasks?.[0];
      if (t && lifecycle.at(-1) !== t.lastStatus) lifecycle.push(t.lastStatus as string);
      sim.advance(1);
    }
    const final = (await ecs.send(new DescribeTasksCommand({ cluster: 'c1', tasks: [running.taskArn as string] }))).tasks?.[0];
    const listedStopped = await ecs.send(new ListTasksCommand({ cluster: 'c1', serviceName: 'web', desiredStatus: 'STOPPED' }));
    const replacement = await serviceTasks(ecs, 'c1', 'web');
    sim.advance(3600);
    const gone = await ecs.send(new DescribeTasksCommand({ cluster: 'c1', tasks: [running.taskArn as string] }));

    // Assess
    expect(stopped.task).toMatchObject({ desiredStatus: 'STOPPED', stopCode: 'UserInitiated', stoppedReason: 'maintenance' });
    expect(lifecycle).toEqual(['DEACTIVATING', 'STOPPING', 'DEPROVISIONING', 'STOPPED']);
    expect(final).toMatchObject({ lastStatus: 'STOPPED', stopCode: 'UserInitiated', stoppedReason: 'maintenance' });
    expect(final?.containers?.[0]).toMatchObject({ lastStatus: 'STOPPED', exitCode: 0 });
    expect(final?.stoppedAt).toBeInstanceOf(Date);
    expect(listedStopped.taskArns).toEqual([running.taskArn]);
    expect(replacement).toHaveLength(1);
    expect(replacement[0].taskArn).not.toBe(running.taskArn);
    expect(gone.tasks).toEqual([]);
    expect(gone.failures).toEqual([{ arn: running.taskArn, reason: 'MISSING' }]);
  });

  it('limits DescribeTasks to 100 tasks and reports unknown ones as MISSING', async () => {
    await ecs.send(new CreateClusterCommand({ clusterName: 'c1', capacityProviders: ['FARGATE', 'FARGATE_SPOT'] }));

    const tooMany = await ecs
      .send(new DescribeTasksCommand({ cluster: 'c1', tasks: Array.from({ length: 101 }, (_, i) => `t${i}`) }))
      .catch((e: unknown) => e);
    const empty = await ecs.send(new DescribeTasksCommand({ cluster: 'c1', tasks: [] })).catch((e: unknown) => e);
    const missing = await ecs.send(new DescribeTasksCommand({ cluster: 'c1', tasks: ['0123456789abcdef0123456789abcdef'] }));

    expect(tooMany).toBeInstanceOf(InvalidParameterException);
    expect((tooMany as Error).message).toBe('taskIds can have at most 100 items.');
    expect(empty).toBeInstanceOf(InvalidParameterException);
    expect((empty as Error).message).toBe('Tasks cannot be empty.');
    expect(missing.failures).toEqual([
      { arn: 'arn:aws:ecs:us-east-1:123456789012:task/c1/0123456789abcdef0123456789abcdef', reason: 'MISSING' },
    ]);
  });

  it('lists tasks by service, family, startedBy and desired status, 100 per page by default', async () => {
    // Prepare: web with 3 tasks, api with 2.
    await deploy(ecs, { svc: { desiredCount: 3 } });
    await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition({ family: 'api' })));
    await ecs.send(
      new RunTaskCommand({
        cluster: 'c1',
        taskDefinition: 'api',
        count: 2,
        launchType: 'FARGATE',
        startedBy: 'batch-7',
        networkConfiguration: { awsvpcConfiguration: { subnets: SUBNETS } },
      }),
    );
    sim.advance(60);
    const count = async (input: Omit<ConstructorParameters<typeof ListTasksCommand>[0], 'cluster'>) =>
      (await ecs.send(new ListTasksCommand({ cluster: 'c1', ...input }))).taskArns?.length;

    // Act + Assess
    expect(await count({})).toBe(5);
    expect(await count({ serviceName: 'web' })).toBe(3);
    expect(await count({ family: 'api' })).toBe(2);
    expect(await count({ startedBy: 'batch-7' })).toBe(2);
    expect(await count({ desiredStatus: 'STOPPED' })).toBe(0);
    const page1 = await ecs.send(new ListTasksCommand({ cluster: 'c1', maxResults: 2 }));
    const page2 = await ecs.send(new ListTasksCommand({ cluster: 'c1', maxResults: 2, nextToken: page1.nextToken }));
    expect(page1.taskArns).toHaveLength(2);
    expect(page2.taskArns).toHaveLength(2);
    expect(page2.taskArns?.some((a) => page1.taskArns?.includes(a))).toBe(false);
  });

  it.each([
    { case: 'an unknown service', input: { cluster: 'c1', serviceName: 'ghost' }, type: ServiceNotFoundException },
    { case: 'an unknown cluster', input: { cluster: 'ghost' }, type: ClusterNotFoundException },
    { case: 'maxResults above 100', input: { cluster: 'c1', maxResults: 101 }, type: InvalidParameterException },
  ])('refuses ListTasks for $case', async ({ input, type }) => {
    await ecs.send(new CreateClusterCommand({ clusterName: 'c1', capacityProviders: ['FARGATE', 'FARGATE_SPOT'] }));
    const err = await ecs.send(new ListTasksCommand(input)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(type);
  });

  it('refuses StopTask for a task it does not know', async () => {
    await ecs.send(new CreateClusterCommand({ clusterName: 'c1', capacityProviders: ['FARGATE', 'FARGATE_SPOT'] }));
    const err = await ecs.send(new StopTaskCommand({ cluster: 'c1', task: 'ffffffffffffffffffffffffffffffff' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidParameterException);
    expect((err as Error).message).toBe('The referenced task was not found.');
  });

  it('runs standalone tasks with RunTask and never replaces them', async () => {
    await ecs.send(new CreateClusterCommand({ clusterName: 'c1', capacityProviders: ['FARGATE', 'FARGATE_SPOT'] }));
    await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition({ family: 'job' })));

    const run = await ecs.send(
      new RunTaskCommand({
        cluster: 'c1',
        taskDefinition: 'job',
        launchType: 'FARGATE',
        networkConfiguration: { awsvpcConfiguration: { subnets: SUBNETS } },
        tags: [{ key: 'k', value: 'v' }],
      }),
    );
    sim.advance(60);
    const arn = run.tasks?.[0].taskArn as string;
    await ecs.send(new StopTaskCommand({ cluster: 'c1', task: arn }));
    sim.advance(120);
    const running = await ecs.send(new ListTasksCommand({ cluster: 'c1' }));
    const described = await ecs.send(new DescribeTasksCommand({ cluster: 'c1', tasks: [arn], include: ['TAGS'] }));

    expect(run.tasks).toHaveLength(1);
    expect(run.tasks?.[0]).toMatchObject({ lastStatus: 'PROVISIONING', group: 'family:job' });
    expect(running.taskArns).toEqual([]);
    expect(described.tasks?.[0]).toMatchObject({ lastStatus: 'STOPPED', stopCode: 'UserInitiated', stoppedReason: 'Task stopped by user', tags: [{ key: 'k', value: 'v' }] });
  });

  it.each([
    { case: 'service tags', propagateTags: 'SERVICE' as const, want: [{ key: 'from', value: 'service' }] },
    { case: 'task definition tags', propagateTags: 'TASK_DEFINITION' as const, want: [{ key: 'from', value: 'taskdef' }] },
    { case: 'nothing', propagateTags: 'NONE' as const, want: [] },
  ])('propagates $case to tasks, plus ECS managed tags when enabled', async ({ propagateTags, want }) => {
    await deploy(ecs, {
      td: { tags: [{ key: 'from', value: 'taskdef' }] },
      svc: { desiredCount: 1, propagateTags, enableECSManagedTags: true, tags: [{ key: 'from', value: 'service' }] },
    });
    sim.advance(5);
    const [t] = await serviceTasks(ecs, 'c1', 'web');
    const described = await ecs.send(new DescribeTasksCommand({ cluster: 'c1', tasks: [t.taskArn as string], include: ['TAGS'] }));
    expect(described.tasks?.[0].tags).toEqual([
      ...want,
      { key: 'aws:ecs:clusterName', value: 'c1' },
      { key: 'aws:ecs:serviceName', value: 'web' },
    ]);
    expect(t.tags).toEqual([]);
  });

  it('places nothing on EC2 (no container instances) and says so in the service events', async () => {
    await ecs.send(new CreateClusterCommand({ clusterName: 'c1', capacityProviders: ['FARGATE', 'FARGATE_SPOT'] }));
    await ecs.send(
      new RegisterTaskDefinitionCommand({ family: 'web', containerDefinitions: [{ name: 'a', image: 'nginx', memory: 128 }] }),
    );
    await ecs.send(new CreateServiceCommand({ cluster: 'c1', serviceName: 'web', taskDefinition: 'web', desiredCount: 1 }));

    sim.advance(30);

    const svc = await describeService(ecs, 'c1', 'web');
    expect(svc).toMatchObject({ runningCount: 0, pendingCount: 0 });
    expect(svc.events?.[0].message).toBe(
      '(service web) was unable to place a task because no container instance met all of its requirements. Reason: No Container Instances were found in your cluster. For more information, see the Troubleshooting section of the Amazon ECS Developer Guide.',
    );
  });
});

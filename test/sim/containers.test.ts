/**
 * Multi-container tasks at run time in the simulator: containers start in their
 * dependsOn order (START, COMPLETE, SUCCESS, HEALTHY), the task is RUNNING once its essential
 * containers run, an essential container's exit stops the task while a non-essential one's does
 * not, a dependency that is never met fails the task after the container's startTimeout, and a
 * task definition with named ports and an EFS volume runs and describes them back.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  CreateClusterCommand,
  DescribeTaskDefinitionCommand,
  DescribeTasksCommand,
  RegisterTaskDefinitionCommand,
  RunTaskCommand,
  type ContainerDefinition,
  type ECSClient,
  type Task,
} from '@aws-sdk/client-ecs';
import { startSimulator, type Simulator } from '../../local/sim';
import { SUBNETS, aTaskDefinition, ecsClient } from './helpers';

const T0 = new Date('2025-01-01T00:00:00Z');
const APP = 'public.ecr.aws/nginx/nginx:1.27';
const HEALTH = { command: ['CMD-SHELL', 'exit 0'], interval: 10, timeout: 5, retries: 3 };

describe('simulator: multi-container tasks', () => {
  let sim: Simulator;
  let ecs: ECSClient;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0, startTime: T0, throttling: false, seed: 11 });
    ecs = ecsClient(sim);
  });
  afterAll(async () => {
    await sim?.close();
  });
  beforeEach(async () => {
    sim.reset();
    await ecs.send(new CreateClusterCommand({ clusterName: 'c1', capacityProviders: ['FARGATE', 'FARGATE_SPOT'] }));
  });

  /** Registers `containers` (1024/2048 task) and runs one task of it; returns its ARN. */
  async function run(containers: ContainerDefinition[], extra: Record<string, unknown> = {}): Promise<string> {
    await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition({ family: 'multi', cpu: '1024', memory: '2048', containerDefinitions: containers, ...extra })));
    const out = await ecs.send(
      new RunTaskCommand({ cluster: 'c1', taskDefinition: 'multi', launchType: 'FARGATE', networkConfiguration: { awsvpcConfiguration: { subnets: SUBNETS } } }),
    );
    return out.tasks?.[0]?.taskArn as string;
  }

  async function describe1(arn: string): Promise<Task> {
    return (await ecs.send(new DescribeTasksCommand({ cluster: 'c1', tasks: [arn] }))).tasks?.[0] as Task;
  }

  /**
   * Samples the task every virtual second for `seconds`: per container, the second it was first
   * RUNNING and first STOPPED; and the second the task was first RUNNING.
   */
  async function timeline(arn: string, seconds: number) {
    const running = new Map<string, number>();
    const stopped = new Map<string, number>();
    let taskRunning: number | undefined;
    let last: Task | undefined;
    for (let s = 0; s <= seconds; s++) {
      last = await describe1(arn);
      if (last.lastStatus === 'RUNNING') taskRunning ??= s;
      for (const c of last.containers ?? []) {
        if (c.lastStatus === 'RUNNING' && !running.has(c.name as string)) running.set(c.name as string, s);
        if (c.lastStatus === 'STOPPED' && !stopped.has(c.name as string)) stopped.set(c.name as string, s);
      }
      sim.advance(1);
    }
    return { running, stopped, taskRunning, last: last as Task };
  }

  it('starts containers in dependsOn order: SUCCESS and COMPLETE after the init containers exit, HEALTHY after the health check, START after the start', async () => {
    // Prepare: two init containers, a sidecar with a health check, the app waiting for all three,
    // and a log shipper waiting for the app to start.
    const arn = await run([
      { name: 'app', image: APP, dependsOn: [{ containerName: 'migrate', condition: 'SUCCESS' }, { containerName: 'seed', condition: 'COMPLETE' }, { containerName: 'proxy', condition: 'HEALTHY' }] },
      { name: 'migrate', image: 'busybox:1.36', essential: false },
      { name: 'seed', image: 'busybox:1.36', essential: false },
      { name: 'proxy', image: 'envoyproxy/envoy:v1.30', essential: false, healthCheck: HEALTH },
      { name: 'shipper', image: 'fluent/fluent-bit:3', essential: false, dependsOn: [{ containerName: 'app', condition: 'START' }] },
    ]);

    // Act
    const { running, stopped, taskRunning, last } = await timeline(arn, 90);

    // Assess: what depends on nothing starts first, together.
    const first = running.get('migrate') as number;
    expect(running.get('seed')).toBe(first);
    expect(running.get('proxy')).toBe(first);
    // The init containers exit 0 and stay stopped; the app starts after both and after the proxy is healthy.
    expect(last.containers?.find((c) => c.name === 'migrate')).toMatchObject({ lastStatus: 'STOPPED', exitCode: 0 });
    const app = running.get('app') as number;
    expect(app).toBeGreaterThanOrEqual(stopped.get('migrate') as number);
    expect(app).toBeGreaterThanOrEqual(stopped.get('seed') as number);
    expect(app).toBeGreaterThanOrEqual(first + HEALTH.interval);
    expect(last.containers?.find((c) => c.name === 'proxy')?.healthStatus).toBe('HEALTHY');
    expect(running.get('shipper')).toBeGreaterThanOrEqual(app);
    // The task is RUNNING once its essential container (the app) is.
    expect(taskRunning).toBe(app);
    expect(last).toMatchObject({ lastStatus: 'RUNNING', desiredStatus: 'RUNNING' });
  });

  it('without dependsOn, starts every container at once', async () => {
    // Prepare, Act
    const arn = await run([
      { name: 'app', image: APP },
      { name: 'agent', image: 'amazon/cloudwatch-agent:latest', essential: false },
    ]);
    const { running, taskRunning } = await timeline(arn, 40);

    // Assess
    expect(running.get('agent')).toBe(running.get('app'));
    expect(taskRunning).toBe(running.get('app'));
  });

  it("a non-essential container's exit leaves the task running; an essential container's exit stops it", async () => {
    // Prepare: the agent's image crash-loops (the default rule for images containing "crashloop").
    const sidecarExits = await run([
      { name: 'app', image: APP },
      { name: 'agent', image: 'example/agent-crashloop:1', essential: false },
    ]);

    // Act
    const { last } = await timeline(sidecarExits, 120);

    // Assess
    expect(last.lastStatus).toBe('RUNNING');
    expect(last.containers?.find((c) => c.name === 'agent')).toMatchObject({ lastStatus: 'STOPPED', exitCode: 1 });
    expect(last.containers?.find((c) => c.name === 'app')?.lastStatus).toBe('RUNNING');

    // Prepare, Act: now the essential app crash-loops beside a healthy sidecar.
    const appExits = await run([
      { name: 'app', image: 'example/app-crashloop:1' },
      { name: 'agent', image: 'amazon/cloudwatch-agent:latest', essential: false },
    ]);
    const after = await timeline(appExits, 120);

    // Assess
    expect(after.last).toMatchObject({ lastStatus: 'STOPPED', stopCode: 'EssentialContainerExited', stoppedReason: 'Essential container in task exited' });
    expect(after.last.containers?.find((c) => c.name === 'app')?.exitCode).toBe(1);
  });

  it('fails the task when a dependency is not met within the startTimeout', async () => {
    // Prepare: the app waits for a proxy that never becomes healthy (its image matches "unhealthy").
    const arn = await run([
      { name: 'app', image: APP, startTimeout: 30, dependsOn: [{ containerName: 'proxy', condition: 'HEALTHY' }] },
      { name: 'proxy', image: 'example/proxy-unhealthy:1', healthCheck: HEALTH },
    ]);

    // Act
    const { last, running } = await timeline(arn, 120);

    // Assess
    expect(running.has('app')).toBe(false);
    expect(last).toMatchObject({
      lastStatus: 'STOPPED',
      stopCode: 'TaskFailedToStart',
      stoppedReason: 'Container app did not start: its dependencies (proxy HEALTHY) were not met within its startTimeout of 30 seconds',
    });
  });

  it('runs a task with named ports and an EFS volume, and describes both back', async () => {
    // Prepare, Act
    const arn = await run(
      [
        { name: 'app', image: APP, portMappings: [{ containerPort: 8080, name: 'http', appProtocol: 'http' }, { containerPort: 9090, name: 'metrics' }], mountPoints: [{ sourceVolume: 'shared', containerPath: '/data' }] },
        { name: 'agent', image: 'amazon/cloudwatch-agent:latest', essential: false, portMappings: [{ containerPort: 4317, name: 'otlp', appProtocol: 'grpc' }] },
      ],
      { volumes: [{ name: 'shared', efsVolumeConfiguration: { fileSystemId: 'fs-0123456789abcdef0', transitEncryption: 'ENABLED', authorizationConfig: { accessPointId: 'fsap-0123456789abcdef0', iam: 'ENABLED' } } }] },
    );
    const { last } = await timeline(arn, 40);
    const td = (await ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: 'multi' }))).taskDefinition;

    // Assess
    expect(last.lastStatus).toBe('RUNNING');
    expect(td?.containerDefinitions?.flatMap((c) => (c.portMappings ?? []).map((p) => [c.name, p.name, p.containerPort, p.hostPort, p.appProtocol]))).toEqual([
      ['app', 'http', 8080, 8080, 'http'],
      ['app', 'metrics', 9090, 9090, undefined],
      ['agent', 'otlp', 4317, 4317, 'grpc'],
    ]);
    expect(td?.volumes).toEqual([
      { name: 'shared', efsVolumeConfiguration: { fileSystemId: 'fs-0123456789abcdef0', transitEncryption: 'ENABLED', authorizationConfig: { accessPointId: 'fsap-0123456789abcdef0', iam: 'ENABLED' } } },
    ]);
  });
});

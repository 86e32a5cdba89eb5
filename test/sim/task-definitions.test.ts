import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ClientException,
  DeregisterTaskDefinitionCommand,
  DescribeTaskDefinitionCommand,
  ListTaskDefinitionFamiliesCommand,
  ListTaskDefinitionsCommand,
  ListTagsForResourceCommand,
  RegisterTaskDefinitionCommand,
  type ECSClient,
} from '@aws-sdk/client-ecs';
import { startSimulator, type Simulator } from '../../local/sim';
import { fargateMemoryValues } from '../../local/sim/task-definitions';
import { aTaskDefinition, ecsClient } from './helpers';

const T0 = new Date('2025-01-01T00:00:00Z');

describe('simulator: task definitions', () => {
  let sim: Simulator;
  let ecs: ECSClient;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0, startTime: T0, throttling: false });
    ecs = ecsClient(sim);
  });
  afterAll(async () => {
    await sim?.close();
  });
  beforeEach(() => sim.reset());

  it('answers the defaults ECS adds on RegisterTaskDefinition (docs/ecs-facts.md §6)', async () => {
    // Prepare
    const input = aTaskDefinition({
      cpu: '0.25 vCPU',
      memory: '0.5 GB',
      executionRoleArn: 'arn:aws:iam::123456789012:role/exec',
      containerDefinitions: [
        {
          name: 'web',
          image: 'public.ecr.aws/nginx/nginx:1.27',
          portMappings: [{ containerPort: 8080 }],
          healthCheck: { command: ['CMD-SHELL', 'curl -f http://localhost:8080/ || exit 1'] },
          logConfiguration: { logDriver: 'awslogs', options: { 'awslogs-group': '/ecs/web' } },
        },
      ],
    });

    // Act
    const reg = await ecs.send(new RegisterTaskDefinitionCommand(input));
    const td = (await ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: 'web' }))).taskDefinition;

    // Assess
    expect(td).toEqual(reg.taskDefinition);
    expect(td).toMatchObject({
      taskDefinitionArn: 'arn:aws:ecs:us-east-1:123456789012:task-definition/web:1',
      family: 'web',
      revision: 1,
      status: 'ACTIVE',
      cpu: '256',
      memory: '512',
      compatibilities: ['EC2', 'FARGATE'],
      requiresCompatibilities: ['FARGATE'],
      volumes: [],
      placementConstraints: [],
      registeredAt: T0,
      registeredBy: 'arn:aws:iam::123456789012:root',
    });
    expect(td?.containerDefinitions?.[0]).toEqual({
      name: 'web',
      image: 'public.ecr.aws/nginx/nginx:1.27',
      cpu: 0,
      essential: true,
      portMappings: [{ containerPort: 8080, hostPort: 8080, protocol: 'tcp' }],
      environment: [],
      mountPoints: [],
      volumesFrom: [],
      systemControls: [],
      healthCheck: { command: ['CMD-SHELL', 'curl -f http://localhost:8080/ || exit 1'], interval: 30, timeout: 5, retries: 3 },
      logConfiguration: { logDriver: 'awslogs', options: { 'awslogs-group': '/ecs/web' } },
    });
    expect(td?.requiresAttributes?.map((a) => a.name)).toEqual(
      expect.arrayContaining([
        'ecs.capability.task-eni',
        'ecs.capability.container-health-check',
        'com.amazonaws.ecs.capability.logging-driver.awslogs',
        'ecs.capability.execution-role-awslogs',
      ]),
    );
  });

  it.each([
    { case: 'vCPU units', cpu: '1024', memory: '2048', want: ['1024', '2048'] },
    { case: 'vCPU string', cpu: '1 vCPU', memory: '2 GB', want: ['1024', '2048'] },
    { case: 'lower case, no space', cpu: '2vcpu', memory: '4gb', want: ['2048', '4096'] },
    { case: 'fractional vCPU', cpu: '0.5 vCPU', memory: '1GB', want: ['512', '1024'] },
  ])('stores cpu/memory as numeric strings: $case', async ({ cpu, memory, want }) => {
    const reg = await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition({ cpu, memory })));
    expect([reg.taskDefinition?.cpu, reg.taskDefinition?.memory]).toEqual(want);
  });

  it.each([
    { case: '256 CPU with 4096 MiB', cpu: '256', memory: '4096', message: 'No Fargate configuration exists for given values: 256 CPU, 4096 memory.' },
    { case: '1024 CPU with 1024 MiB', cpu: '1024', memory: '1024', message: 'No Fargate configuration exists for given values: 1024 CPU, 1024 memory.' },
    { case: 'CPU not a Fargate size', cpu: '300', memory: '512', message: 'No Fargate configuration exists for given values: 300 CPU, 512 memory.' },
    { case: 'unparseable cpu', cpu: 'lots', memory: '512', message: "Invalid 'cpu' setting" },
    { case: 'no task cpu on Fargate', cpu: undefined, memory: '512', message: "Fargate requires that 'cpu' be defined at the task level." },
    { case: 'bridge network on Fargate', cpu: '256', memory: '512', networkMode: 'bridge' as const, message: "Fargate only supports network mode 'awsvpc'." },
  ])('refuses $case with ClientException', async ({ cpu, memory, message, networkMode }) => {
    const err = await ecs
      .send(new RegisterTaskDefinitionCommand({ ...aTaskDefinition({ cpu, memory }), ...(networkMode ? { networkMode } : {}) }))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClientException);
    expect((err as Error).message).toContain(message);
  });

  it.each([
    { case: 'awslogs on Fargate without an execution role', over: { logConfiguration: { logDriver: 'awslogs' as const, options: {} } }, message: 'execution role ARN to support log driver awslogs' },
    { case: 'a private ECR image without an execution role', over: { image: '123456789012.dkr.ecr.us-east-1.amazonaws.com/web:1' }, message: 'execution role ARN to support ECR images' },
    { case: 'a host port that differs in awsvpc', over: { portMappings: [{ containerPort: 80, hostPort: 8080 }] }, message: 'host ports and container ports in port mappings must match' },
  ])('refuses $case', async ({ over, message }) => {
    const err = await ecs
      .send(new RegisterTaskDefinitionCommand(aTaskDefinition({ containerDefinitions: [{ name: 'web', image: 'nginx', ...over }] })))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClientException);
    expect((err as Error).message).toContain(message);
  });

  it.each([
    { case: '10,000 environment variables (about 330 KB)', n: 10_000, width: 12 },
    { case: '4,000 environment variables (about 144 KB)', n: 4_000, width: 12 },
  ])('refuses a task definition over 64 KiB ($case) in ECS words, and registers nothing', async ({ n, width }) => {
    // Prepare
    const environment = Array.from({ length: n }, (_, i) => ({ name: `VAR_${String(i).padStart(5, '0')}`, value: 'x'.repeat(width) }));
    const input = aTaskDefinition({ containerDefinitions: [{ name: 'web', image: 'nginx', environment }] });

    // Act
    const err = await ecs.send(new RegisterTaskDefinitionCommand(input)).catch((e: unknown) => e);
    const families = await ecs.send(new ListTaskDefinitionFamiliesCommand({}));

    // Assess
    expect(err).toBeInstanceOf(ClientException);
    expect((err as Error).message).toMatch(/^Actual length: '\d+'\. Max allowed length is '65536' bytes\.$/);
    expect(Number(/'(\d+)'/.exec((err as Error).message)?.[1])).toBeGreaterThan(65_536);
    expect(families.families ?? []).toEqual([]);
  });

  it('refuses 11 containers in one task definition, as ECS does', async () => {
    const containerDefinitions = Array.from({ length: 11 }, (_, i) => ({ name: `c${i}`, image: 'nginx', essential: i === 0 }));
    const err = await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition({ containerDefinitions }))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClientException);
    expect((err as Error).message).toBe('Too many containers.');
  });

  it('accepts every documented Fargate pair and no other memory for a CPU size', () => {
    // Amazon ECS Developer Guide, "Task CPU and memory" (Linux).
    expect(fargateMemoryValues(256)).toEqual([512, 1024, 2048]);
    expect(fargateMemoryValues(512)).toEqual([1024, 2048, 3072, 4096]);
    expect(fargateMemoryValues(1024)[0]).toBe(2048);
    expect(fargateMemoryValues(4096).at(-1)).toBe(30720);
    expect(fargateMemoryValues(8192)).toContain(20480);
    expect(fargateMemoryValues(8192)).not.toContain(17408);
    expect(fargateMemoryValues(16384).at(-1)).toBe(122880);
    expect(fargateMemoryValues(128)).toEqual([]);
  });

  it('numbers revisions per family and resolves family, family:revision and ARN', async () => {
    // Prepare
    await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition({ image: 'nginx:1' })));
    await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition({ image: 'nginx:2' })));
    await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition({ family: 'other' })));
    const image = async (ref: string) =>
      (await ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: ref }))).taskDefinition?.containerDefinitions?.[0].image;

    // Act + Assess
    expect(await image('web')).toBe('nginx:2');
    expect(await image('web:1')).toBe('nginx:1');
    expect(await image('arn:aws:ecs:us-east-1:123456789012:task-definition/web:2')).toBe('nginx:2');
    const missing = await ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: 'web:9' })).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ClientException);
    expect((missing as Error).message).toBe('Unable to describe task definition.');
  });

  it('deregisters a revision to INACTIVE: still describable by revision, skipped by family and lists', async () => {
    // Prepare
    await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition({ image: 'nginx:1' })));
    await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition({ image: 'nginx:2' })));
    sim.advance(60);

    // Act
    const out = await ecs.send(new DeregisterTaskDefinitionCommand({ taskDefinition: 'web:2' }));

    // Assess
    expect(out.taskDefinition).toMatchObject({ status: 'INACTIVE', deregisteredAt: new Date(T0.getTime() + 60_000) });
    expect((await ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: 'web:2' }))).taskDefinition?.status).toBe('INACTIVE');
    expect((await ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: 'web' }))).taskDefinition?.revision).toBe(1);
    expect((await ecs.send(new ListTaskDefinitionsCommand({}))).taskDefinitionArns).toEqual([
      'arn:aws:ecs:us-east-1:123456789012:task-definition/web:1',
    ]);
    expect((await ecs.send(new ListTaskDefinitionsCommand({ status: 'INACTIVE' }))).taskDefinitionArns).toEqual([
      'arn:aws:ecs:us-east-1:123456789012:task-definition/web:2',
    ]);
  });

  it('lists definitions and families with paging, prefix and sort', async () => {
    // Prepare: web:1..3, api:1
    for (let i = 0; i < 3; i++) await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition()));
    await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition({ family: 'api' })));

    // Act
    const p1 = await ecs.send(new ListTaskDefinitionsCommand({ familyPrefix: 'web', maxResults: 2 }));
    const p2 = await ecs.send(new ListTaskDefinitionsCommand({ familyPrefix: 'web', maxResults: 2, nextToken: p1.nextToken }));
    const desc = await ecs.send(new ListTaskDefinitionsCommand({ familyPrefix: 'web', sort: 'DESC' }));
    const families = await ecs.send(new ListTaskDefinitionFamiliesCommand({}));
    const prefixed = await ecs.send(new ListTaskDefinitionFamiliesCommand({ familyPrefix: 'a' }));

    // Assess
    const rev = (arns: string[] | undefined) => (arns ?? []).map((a) => a.split('/').pop());
    expect(rev(p1.taskDefinitionArns)).toEqual(['web:1', 'web:2']);
    expect(rev(p2.taskDefinitionArns)).toEqual(['web:3']);
    expect(p2.nextToken).toBeUndefined();
    expect(rev(desc.taskDefinitionArns)).toEqual(['web:3', 'web:2', 'web:1']);
    expect(families.families).toEqual(['api', 'web']);
    expect(prefixed.families).toEqual(['api']);
  });

  it('keeps the tags given at registration: in the response, with include TAGS, and ListTagsForResource', async () => {
    const reg = await ecs.send(new RegisterTaskDefinitionCommand({ ...aTaskDefinition(), tags: [{ key: 'team', value: 'a' }] }));
    const withTags = await ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: 'web', include: ['TAGS'] }));
    const without = await ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: 'web' }));
    const listed = await ecs.send(new ListTagsForResourceCommand({ resourceArn: reg.taskDefinition?.taskDefinitionArn }));

    expect(reg.tags).toEqual([{ key: 'team', value: 'a' }]);
    expect(withTags.tags).toEqual([{ key: 'team', value: 'a' }]);
    expect(without.tags).toBeUndefined();
    expect(listed.tags).toEqual([{ key: 'team', value: 'a' }]);
  });

  it.each([
    { case: 'no containers', input: { family: 'x', containerDefinitions: [] }, message: 'Container list cannot be empty.' },
    { case: 'a container without image', input: { family: 'x', memory: '512', containerDefinitions: [{ name: 'a' }] }, message: 'Container.image should not be null or empty.' },
    { case: 'an invalid family', input: { family: 'bad family!', containerDefinitions: [{ name: 'a', image: 'x', memory: 128 }] }, message: 'Family name is invalid' },
    { case: 'no memory anywhere (EC2)', input: { family: 'x', containerDefinitions: [{ name: 'a', image: 'x' }] }, message: "At least one of 'memory' or 'memoryReservation' must be specified." },
  ])('refuses $case', async ({ input, message }) => {
    const err = await ecs.send(new RegisterTaskDefinitionCommand(input)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClientException);
    expect((err as Error).message).toContain(message);
  });
});

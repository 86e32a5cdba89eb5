/**
 * The simulator accepts, stores and describes the whole task definition vocabulary as ECS does:
 * every real task definition in test/fixtures/real/ registers and comes back with what was given
 * plus ECS's defaults (and, for the ones recorded from ECS, with at least what ECS answered), and
 * RegisterTaskDefinition refuses what ECS refuses, with ECS's error class and, where a public
 * report quotes it, ECS's wording.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ClientException,
  DescribeTaskDefinitionCommand,
  RegisterTaskDefinitionCommand,
  type ContainerDefinition,
  type ECSClient,
  type RegisterTaskDefinitionCommandInput,
} from '@aws-sdk/client-ecs';
import { startSimulator, type Simulator } from '../../local/sim';
import { realTaskDefinitions } from '../support/real-fixtures';
import { aTaskDefinition, ecsClient } from './helpers';

type Json = Record<string, unknown>;

/** Fields only ECS writes: a RegisterTaskDefinition request cannot carry them. */
const SERVER_ONLY = ['taskDefinitionArn', 'revision', 'status', 'requiresAttributes', 'compatibilities', 'registeredAt', 'registeredBy', 'deregisteredAt'];

/** The RegisterTaskDefinition request a real task definition was registered with (family made unique). */
function registrationOf(td: Json, family: string): RegisterTaskDefinitionCommandInput {
  const out: Json = { ...td, family };
  for (const k of SERVER_ONLY) delete out[k];
  // Answers from the classic console list every member, unset ones as null: ECS drops those.
  return JSON.parse(JSON.stringify(out, (_k, v: unknown) => (v === null ? undefined : v))) as RegisterTaskDefinitionCommandInput;
}

let sim: Simulator;
let ecs: ECSClient;
beforeAll(async () => {
  sim = await startSimulator({ port: 0, throttling: false });
  ecs = ecsClient(sim, { maxAttempts: 1 });
});
afterAll(async () => {
  await sim?.close();
});
beforeEach(() => sim.reset());

/**
 * Published examples that ECS itself refuses as they stand, with the refusal: the developer
 * guide's template of every field (empty placeholders) and its dependsOn syntax example (no memory
 * at container or task level).
 */
const REFUSED_AS_PUBLISHED = new Map<string, string>([
  ['devguide-template', 'Container.name should not be null or empty.'],
  ['devguide-appmesh-proxy', "Invalid setting for container 'app'. At least one of 'memory' or 'memoryReservation' must be specified."],
]);

const registrable = realTaskDefinitions().filter((f) => !REFUSED_AS_PUBLISHED.has(f.name));

describe.each([...REFUSED_AS_PUBLISHED])('real task definition %s', (name, message) => {
  it('is refused as ECS refuses it', async () => {
    const fixture = realTaskDefinitions().find((f) => f.name === name);
    const err = await ecs.send(new RegisterTaskDefinitionCommand(registrationOf(fixture?.payloads[0] as Json, `real-${name}`))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClientException);
    expect((err as Error).message).toBe(message);
  });
});

describe.each(registrable.map((f) => [f.name, f] as const))('real task definition %s', (name, fixture) => {
  const [td] = fixture.payloads as [Json];
  const family = `real-${name}`;

  it('registers and describes back everything given, with ECS defaults added', async () => {
    // Prepare
    const input = registrationOf(td, family);
    // Act
    const reg = await ecs.send(new RegisterTaskDefinitionCommand(input));
    const described = (await ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: family }))).taskDefinition as Json;
    // Assess
    expect(reg.taskDefinition?.taskDefinitionArn).toBe(described.taskDefinitionArn);
    // Tags are answered beside the task definition (include=TAGS), never inside it.
    const { containerDefinitions, cpu, memory, tags: _tags, ...taskFields } = input as unknown as Json;
    expect(described).toMatchObject(taskFields);
    if (cpu !== undefined) expect(described.cpu).toBe(String(cpu));
    if (memory !== undefined) expect(described.memory).toBe(String(memory));
    const awsvpc = input.networkMode === 'awsvpc';
    for (const given of containerDefinitions as ContainerDefinition[]) {
      const got = (described.containerDefinitions as ContainerDefinition[]).find((c) => c.name === given.name);
      const { portMappings, healthCheck, ...rest } = given;
      expect(got).toMatchObject(rest);
      expect(got).toMatchObject({ essential: given.essential ?? true, cpu: given.cpu ?? 0, environment: given.environment ?? [], mountPoints: given.mountPoints ?? [], volumesFrom: given.volumesFrom ?? [] });
      expect(got?.portMappings).toEqual(
        (portMappings ?? []).map((p) => ({ ...p, protocol: p.protocol ?? 'tcp', ...(awsvpc && p.containerPort !== undefined ? { hostPort: p.containerPort } : {}) })),
      );
      if (healthCheck) expect(got?.healthCheck).toEqual({ interval: 30, timeout: 5, retries: 3, ...healthCheck });
    }
  });

});

/** The fixtures recorded from an ECS answer: what ECS filled in is known for them. */
const answeredByEcs = registrable.filter((f) => 'taskDefinitionArn' in (f.payloads[0] as Json));

describe.each(answeredByEcs.map((f) => [f.name, f] as const))('ECS answer %s', (name, fixture) => {
  const [td] = fixture.payloads as [Json];
  const family = `real-${name}`;

  it('is answered with at least what ECS answered (the defaults ECS filled in)', async () => {
      await ecs.send(new RegisterTaskDefinitionCommand(registrationOf(td, family)));
      const described = (await ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: family }))).taskDefinition as Json;
      for (const real of td.containerDefinitions as ContainerDefinition[]) {
        const got = (described.containerDefinitions as ContainerDefinition[]).find((c) => c.name === real.name);
        // Every member ECS answered is answered the same (null members of old console answers aside).
        const expected = JSON.parse(JSON.stringify(real, (_k, v: unknown) => (v === null ? undefined : v))) as Json;
        expect(got).toMatchObject(expected);
      }
      expect(described.volumes).toEqual(JSON.parse(JSON.stringify(td.volumes ?? [], (_k, v: unknown) => (v === null ? undefined : v))));
      expect(described.placementConstraints).toEqual(td.placementConstraints ?? []);
  });
});

/** A two-container Fargate task definition (app + log router) to edit per refusal. */
function twoContainers(edit: (cs: ContainerDefinition[], td: RegisterTaskDefinitionCommandInput) => void): RegisterTaskDefinitionCommandInput {
  const td = aTaskDefinition({
    family: 'multi',
    cpu: '512',
    memory: '1024',
    containerDefinitions: [
      { name: 'app', image: 'public.ecr.aws/nginx/nginx:1.27', cpu: 256, memory: 512, portMappings: [{ containerPort: 80, name: 'http', appProtocol: 'http' }] },
      { name: 'log_router', image: 'public.ecr.aws/aws-observability/aws-for-fluent-bit:stable', essential: false, memoryReservation: 50, firelensConfiguration: { type: 'fluentbit' } },
    ],
  });
  edit(td.containerDefinitions as ContainerDefinition[], td);
  return td;
}

describe('RegisterTaskDefinition refuses what ECS refuses', () => {
  it('accepts the base case the refusals edit', async () => {
    await expect(ecs.send(new RegisterTaskDefinitionCommand(twoContainers(() => {})))).resolves.toBeDefined();
  });

  it.each([
    { case: 'no essential container', edit: (cs: ContainerDefinition[]) => (cs[0].essential = false), message: "Task definition doesn't have any essential container." },
    { case: 'dependsOn a missing container', edit: (cs: ContainerDefinition[]) => (cs[0].dependsOn = [{ containerName: 'envoy', condition: 'START' }]), message: "Container 'app' depends on container 'envoy', which is not in the task definition." },
    { case: 'dependsOn itself', edit: (cs: ContainerDefinition[]) => (cs[0].dependsOn = [{ containerName: 'app', condition: 'START' }]), message: "Container 'app' cannot depend on itself." },
    {
      case: 'a dependency cycle',
      edit: (cs: ContainerDefinition[]) => {
        cs[0].dependsOn = [{ containerName: 'log_router', condition: 'START' }];
        cs[1].dependsOn = [{ containerName: 'app', condition: 'START' }];
      },
      message: 'Container dependencies form a cycle: app -> log_router -> app.',
    },
    { case: 'an unknown condition', edit: (cs: ContainerDefinition[]) => (cs[0].dependsOn = [{ containerName: 'log_router', condition: 'READY' as 'START' }]), message: "Invalid dependency condition 'READY' for container 'app'. Valid values: START, COMPLETE, SUCCESS, HEALTHY." },
    {
      case: 'SUCCESS on an essential container',
      edit: (cs: ContainerDefinition[]) => {
        cs[1].essential = true;
        cs[0].dependsOn = [{ containerName: 'log_router', condition: 'SUCCESS' }];
      },
      message: 'A dependency container with SUCCESS or COMPLETE condition cannot be an essential container',
    },
    { case: 'HEALTHY on a container without a health check', edit: (cs: ContainerDefinition[]) => (cs[0].dependsOn = [{ containerName: 'log_router', condition: 'HEALTHY' }]), message: "Container 'app' depends on 'log_router' being HEALTHY, but 'log_router' has no healthCheck." },
    { case: 'container cpu above the task cpu', edit: (cs: ContainerDefinition[]) => (cs[1].cpu = 512), message: "The sum of all container 'cpu' values cannot be greater than the value of the task 'cpu'." },
    { case: 'container memory above the task memory', edit: (cs: ContainerDefinition[]) => (cs[1].memoryReservation = 600), message: "The sum of all container 'memoryReservation' (or 'memory') values cannot be greater than the value of the task 'memory'." },
    { case: 'memoryReservation above memory', edit: (cs: ContainerDefinition[]) => (cs[0].memoryReservation = 600), message: "Invalid setting for container 'app'. 'memoryReservation' (600) must not be greater than 'memory' (512)." },
    { case: 'a port name used twice', edit: (cs: ContainerDefinition[]) => (cs[1].portMappings = [{ containerPort: 24224, name: 'http' }]), message: "Port mapping name 'http' is used more than once in the task definition (containers 'app' and 'log_router')." },
    { case: 'a malformed port name', edit: (cs: ContainerDefinition[]) => (cs[0].portMappings = [{ containerPort: 80, name: 'HTTP' }]), message: "Invalid port mapping name 'HTTP' in container 'app': up to 64 lowercase letters, numbers, underscores and hyphens, not starting with a hyphen." },
    { case: 'an unknown appProtocol', edit: (cs: ContainerDefinition[]) => (cs[0].portMappings = [{ containerPort: 80, name: 'web', appProtocol: 'tcp' as 'http' }]), message: "Invalid 'appProtocol' 'tcp' in container 'app'. Valid values: http, http2, grpc." },
    { case: 'a health check interval out of bounds', edit: (cs: ContainerDefinition[]) => (cs[0].healthCheck = { command: ['CMD', 'true'], interval: 1 }), message: "Invalid 'healthCheck.interval' for container 'app': 1. It must be between 5 and 300." },
    { case: 'awsfirelens without a log router', edit: (cs: ContainerDefinition[]) => { cs[0].logConfiguration = { logDriver: 'awsfirelens' }; cs.pop(); }, message: "Container 'app' uses the awsfirelens log driver, but no container in the task definition has a firelensConfiguration (the log router)." },
    { case: 'two log routers', edit: (cs: ContainerDefinition[]) => (cs[0].firelensConfiguration = { type: 'fluentd' }), message: 'A task definition can have only one container with a firelensConfiguration (the log router).' },
    { case: 'a mount point naming no volume', edit: (cs: ContainerDefinition[]) => (cs[0].mountPoints = [{ sourceVolume: 'data', containerPath: '/data' }]), message: "Container 'app' mounts volume 'data', which is not defined in the task definition's volumes." },
    { case: 'volumesFrom naming no container', edit: (cs: ContainerDefinition[]) => (cs[0].volumesFrom = [{ sourceContainer: 'init' }]), message: "Container 'app' takes volumes from 'init', which is not another container of the task definition." },
    {
      case: 'an EFS access point without transit encryption',
      edit: (_cs: ContainerDefinition[], td: RegisterTaskDefinitionCommandInput) =>
        (td.volumes = [{ name: 'efs', efsVolumeConfiguration: { fileSystemId: 'fs-1234', authorizationConfig: { accessPointId: 'fsap-1', iam: 'ENABLED' } } }]),
      message: "Volume 'efs': transit encryption must be ENABLED when an EFS access point or IAM authorization is used.",
    },
    {
      case: 'an EFS access point with a root directory',
      edit: (_cs: ContainerDefinition[], td: RegisterTaskDefinitionCommandInput) =>
        (td.volumes = [{ name: 'efs', efsVolumeConfiguration: { fileSystemId: 'fs-1234', rootDirectory: '/data', transitEncryption: 'ENABLED', authorizationConfig: { accessPointId: 'fsap-1' } } }]),
      message: "Volume 'efs': the root directory must be omitted or '/' when an EFS access point is used.",
    },
    {
      case: 'two EBS volumes configured at launch',
      edit: (_cs: ContainerDefinition[], td: RegisterTaskDefinitionCommandInput) => (td.volumes = [{ name: 'a', configuredAtLaunch: true }, { name: 'b', configuredAtLaunch: true }]),
      message: 'Only one volume can be configured at launch (one Amazon EBS volume per task).',
    },
    { case: 'ephemeral storage above 200 GiB', edit: (_cs: ContainerDefinition[], td: RegisterTaskDefinitionCommandInput) => (td.ephemeralStorage = { sizeInGiB: 201 }), message: "Invalid 'ephemeralStorage.sizeInGiB' value: 201. It must be between 21 and 200 GiB." },
    { case: 'privileged on Fargate', edit: (cs: ContainerDefinition[]) => (cs[0].privileged = true), message: "Fargate does not support the 'privileged' parameter (container 'app')." },
    { case: 'a capability other than SYS_PTRACE on Fargate', edit: (cs: ContainerDefinition[]) => (cs[0].linuxParameters = { capabilities: { add: ['NET_ADMIN'] } }), message: "Fargate only supports adding the SYS_PTRACE kernel capability (container 'app' adds NET_ADMIN)." },
    { case: 'a host bind mount on Fargate', edit: (_cs: ContainerDefinition[], td: RegisterTaskDefinitionCommandInput) => (td.volumes = [{ name: 'h', host: { sourcePath: '/var/log' } }]), message: "Fargate does not support host.sourcePath (a bind mount from the host) volumes (volume 'h')." },
    { case: 'duplicate container names', edit: (cs: ContainerDefinition[]) => (cs[1].name = 'app'), message: "Duplicate container name 'app' in task definition." },
  ])('refuses $case', async ({ edit, message }) => {
    const err = await ecs.send(new RegisterTaskDefinitionCommand(twoContainers(edit))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClientException);
    expect((err as Error).message).toBe(message);
  });

  it('keeps a refused registration out of the family (nothing stored)', async () => {
    await ecs.send(new RegisterTaskDefinitionCommand(twoContainers((cs) => (cs[0].essential = false)))).catch(() => undefined);
    await expect(ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: 'multi' }))).rejects.toBeInstanceOf(ClientException);
  });

  it('lists the capabilities the vocabulary needs in requiresAttributes', async () => {
    const input = twoContainers((cs, td) => {
      cs[0].dependsOn = [{ containerName: 'log_router', condition: 'START' }];
      cs[0].logConfiguration = { logDriver: 'awsfirelens', options: { Name: 'cloudwatch' } };
      cs[0].mountPoints = [{ sourceVolume: 'efs', containerPath: '/data' }];
      td.volumes = [{ name: 'efs', efsVolumeConfiguration: { fileSystemId: 'fs-1234', transitEncryption: 'ENABLED', authorizationConfig: { iam: 'ENABLED' } } }];
    });
    const reg = await ecs.send(new RegisterTaskDefinitionCommand(input));
    const names = (reg.taskDefinition?.requiresAttributes ?? []).map((a) => a.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'ecs.capability.container-ordering',
        'ecs.capability.firelens.fluentbit',
        'com.amazonaws.ecs.capability.logging-driver.awsfirelens',
        'ecs.capability.efs',
        'ecs.capability.efsAuth',
      ]),
    );
  });
});

/**
 * Windows containers on Fargate and S3 Files volumes in the spec: accepted with ECS's rules (each
 * refusal naming the field), rendered into a task definition the simulator registers and answers
 * back equal, imported from a described task definition, and a hand edit of the operating system
 * family seen as a difference (docs/ecs-facts.md §15).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DescribeTaskDefinitionCommand, ECSClient, RegisterTaskDefinitionCommand } from '@aws-sdk/client-ecs';
import { toObservedService } from '../../lambda/adapters/ecs-observer';
import { importService } from '../../lambda/core/import-spec';
import { parseSpecItem, specHash } from '../../lambda/core/spec';
import { diffTaskDefinitions, renderTaskDefinition } from '../../lambda/core/taskdef';
import type { ServiceSpec, TaskDefinition } from '../../lambda/core/types';
import { startSimulator, type Simulator } from '../../local/sim';
import { concretize } from '../support/import-cases';
import { LOCAL_CLIENT_CONFIG } from '../support/moto';
import { realServices } from '../support/real-fixtures';

type Json = Record<string, any>;

const DEFAULTS = { subnets: ['subnet-0a1b2c3d4e5f60001'], securityGroups: ['sg-0a1b2c3d4e5f60001'], executionRoleArn: 'arn:aws:iam::123456789012:role/ecsTaskExecutionRole' };
const TASK_ROLE = 'arn:aws:iam::123456789012:role/app';
const FS = 'arn:aws:s3files:us-east-1:123456789012:file-system/fs-0123456789abcdef0';
const AP = 'arn:aws:s3files:us-east-1:123456789012:file-system/fs-0123456789abcdef0/access-point/fsap-0123456789abcdef0';
const IIS = 'mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022';

const windows = (over: Json = {}): Json => ({
  cluster: 'c',
  service: 'iis',
  desiredCount: 1,
  image: IIS,
  containerPort: 80,
  cpu: 1024,
  memory: 2048,
  operatingSystemFamily: 'WINDOWS_SERVER_2022_CORE',
  ...over,
});

const s3files = (over: Json = {}): Json => ({
  cluster: 'c',
  service: 'files',
  desiredCount: 1,
  containers: [{ name: 'app', image: 'public.ecr.aws/docker/library/busybox:1.36', essential: true, mountPoints: [{ sourceVolume: 'data', containerPath: '/data' }] }],
  taskRoleArn: TASK_ROLE,
  volumes: [{ name: 'data', s3filesVolumeConfiguration: { fileSystemArn: FS, accessPointArn: AP, transitEncryptionPort: 2999 } }],
  ...over,
});

function parsed(item: Json): ServiceSpec {
  const r = parseSpecItem(item);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.spec;
}

function errorsOf(item: Json): { path: string; message: string }[] {
  const r = parseSpecItem(item);
  return r.ok ? [] : r.errors.map((e) => ({ path: e.path, message: e.message }));
}

let sim: Simulator;
let ecs: ECSClient;
beforeAll(async () => {
  sim = await startSimulator({ port: 0, throttling: false });
  ecs = new ECSClient({ ...LOCAL_CLIENT_CONFIG, endpoint: sim.endpoint, maxAttempts: 1 });
});
afterAll(async () => {
  ecs?.destroy();
  await sim?.close();
});

/** Registers `input` on the simulator and answers DescribeTaskDefinition's task definition, as JSON. */
async function described(input: Json): Promise<Json> {
  const reg = await ecs.send(new RegisterTaskDefinitionCommand(input as never));
  const out = await ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: reg.taskDefinition?.taskDefinitionArn }));
  return JSON.parse(JSON.stringify(out.taskDefinition)) as Json;
}

function imported(live: Json): Json {
  const raw = concretize(structuredClone(realServices().find((s) => s.name === 'awscli-create-fargate')?.payloads[0] as Json));
  raw.networkConfiguration = { awsvpcConfiguration: { ...raw.networkConfiguration.awsvpcConfiguration, subnets: ['subnet-0123456789abcdef0'], securityGroups: ['sg-0123456789abcdef0'] } };
  const r = importService({ key: { cluster: 'c', service: raw.serviceName }, service: raw, observed: toObservedService(raw as never), taskDefinition: live, defaults: DEFAULTS, ownerId: 'o' });
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.item as Json;
}

describe('Windows containers on Fargate in the spec', () => {
  it('renders the family into runtimePlatform; the simulator answers it back equal; import writes it; a hand edit is a difference', async () => {
    const spec = parsed(windows());
    const rendered = renderTaskDefinition(spec, { defaults: DEFAULTS, ownerId: 'o' });
    expect(rendered.runtimePlatform).toEqual({ cpuArchitecture: 'X86_64', operatingSystemFamily: 'WINDOWS_SERVER_2022_CORE' });
    const live = await described(rendered as Json);
    expect(diffTaskDefinitions(rendered, live as TaskDefinition)).toEqual([]);
    expect(imported(live).operatingSystemFamily).toBe('WINDOWS_SERVER_2022_CORE');

    const edited = await described({ ...rendered, runtimePlatform: { cpuArchitecture: 'X86_64', operatingSystemFamily: 'WINDOWS_SERVER_2019_FULL' } });
    expect(diffTaskDefinitions(rendered, edited as TaskDefinition)).toEqual([{ field: 'runtimePlatform.operatingSystemFamily', from: 'WINDOWS_SERVER_2019_FULL', to: 'WINDOWS_SERVER_2022_CORE' }]);
  });

  it('LINUX written or omitted is the same spec, with the hash it always had', () => {
    const linux = { cluster: 'c', service: 'web', desiredCount: 1, image: 'public.ecr.aws/nginx/nginx:1.27' };
    expect(specHash(parsed({ ...linux, operatingSystemFamily: 'LINUX' }))).toBe(specHash(parsed(linux)));
    expect('operatingSystemFamily' in parsed({ ...linux, operatingSystemFamily: 'LINUX' })).toBe(false);
  });

  it.each([
    [{ cpu: 512, memory: 1024 }, 'cpu', /must be 1024, 2048, 4096 for Windows containers on Fargate .*got 512$/],
    [{ cpu: undefined, memory: undefined }, 'cpu', /got 256 \(256 is the default when cpu is omitted\)$/],
    [{ cpu: 8192, memory: 16384 }, 'cpu', /8192 and 16384 are Linux only/],
    [{ cpuArchitecture: 'ARM64' }, 'cpuArchitecture', /must be X86_64/],
    [{ capacityProvider: 'FARGATE_SPOT' }, 'capacityProvider', /Fargate Spot runs Linux tasks only/],
    [{ pidMode: 'task' }, 'pidMode', /is not supported for Windows containers on Fargate/],
    [{ ephemeralStorage: { sizeInGiB: 30 } }, 'ephemeralStorage', /is not supported/],
  ] as [Json, string, RegExp][])('refuses %j, naming %s', (over, path, message) => {
    const errors = errorsOf(windows(over));
    expect(errors.map((e) => e.path)).toEqual([path]);
    expect(errors[0].message).toMatch(message);
  });

  it('refuses a listed container parameter Windows containers lack, at its path', () => {
    const errors = errorsOf(windows({ image: undefined, containerPort: undefined, containers: [{ name: 'iis', image: IIS, essential: true, user: 'ContainerAdministrator', readonlyRootFilesystem: false }] }));
    expect(errors).toEqual([{ path: 'containers[0].user', message: expect.stringMatching(/is not supported for Windows containers on Fargate/) }]);
  });

  it('refuses a family Fargate does not run', () => {
    expect(errorsOf(windows({ operatingSystemFamily: 'WINDOWS_SERVER_2025_CORE' })).map((e) => e.path)).toEqual(['operatingSystemFamily']);
  });
});

describe('S3 Files volumes in the spec', () => {
  it('are rendered as written; the simulator answers them back equal; import keeps them', async () => {
    const spec = parsed(s3files());
    const rendered = renderTaskDefinition(spec, { defaults: DEFAULTS, ownerId: 'o' });
    const live = await described(rendered as Json);
    expect(live.volumes).toEqual([{ name: 'data', s3filesVolumeConfiguration: { fileSystemArn: FS, accessPointArn: AP, transitEncryptionPort: 2999 } }]);
    expect(diffTaskDefinitions(rendered, live as TaskDefinition)).toEqual([]);
    expect(imported(live).volumes).toEqual(s3files().volumes);
  });

  it('rootDirectory "/" is the default: the same task definition as none', async () => {
    const withRoot = s3files({ volumes: [{ name: 'data', s3filesVolumeConfiguration: { fileSystemArn: FS, rootDirectory: '/' } }] });
    const without = s3files({ volumes: [{ name: 'data', s3filesVolumeConfiguration: { fileSystemArn: FS } }] });
    const live = await described(renderTaskDefinition(parsed(withRoot), { defaults: DEFAULTS, ownerId: 'o' }) as Json);
    expect(diffTaskDefinitions(renderTaskDefinition(parsed(without), { defaults: DEFAULTS, ownerId: 'o' }), live as TaskDefinition)).toEqual([]);
  });

  it.each([
    ['no task role', { taskRoleArn: undefined }, 'volumes[0].s3filesVolumeConfiguration', /needs taskRoleArn/],
    ['an EFS id for the file system', { volumes: [{ name: 'data', s3filesVolumeConfiguration: { fileSystemArn: 'fs-0123456789abcdef0' } }] }, 'volumes[0].s3filesVolumeConfiguration.fileSystemArn', /S3 Files file system ARN/],
    ['a root directory with an access point', { volumes: [{ name: 'data', s3filesVolumeConfiguration: { fileSystemArn: FS, accessPointArn: AP, rootDirectory: '/srv' } }] }, 'volumes[0].s3filesVolumeConfiguration.rootDirectory', /must be omitted or "\/"/],
    ['EFS on the same volume', { volumes: [{ name: 'data', s3filesVolumeConfiguration: { fileSystemArn: FS }, efsVolumeConfiguration: { fileSystemId: 'fs-0123456789abcdef0' } }] }, 'volumes[0].efsVolumeConfiguration', /one kind only/],
  ] as [string, Json, string, RegExp][])('refuses %s', (_what, over, path, message) => {
    const errors = errorsOf(s3files(over));
    expect(errors.map((e) => e.path)).toContain(path);
    expect(errors.find((e) => e.path === path)?.message).toMatch(message);
  });
});

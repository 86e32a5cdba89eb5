/**
 * The simulator's RegisterTaskDefinition for Windows containers on Fargate and S3 Files volumes
 * (local/sim/platform-rules.ts), over HTTP with the AWS SDK: what ECS accepts is answered back as
 * sent, what it refuses is refused naming the field.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ClientException, DescribeTaskDefinitionCommand, RegisterTaskDefinitionCommand, type ECSClient, type RegisterTaskDefinitionCommandInput } from '@aws-sdk/client-ecs';
import { startSimulator, type Simulator } from '../../local/sim';
import { aTaskDefinition, ecsClient } from './helpers';

const TASK_ROLE = 'arn:aws:iam::123456789012:role/app';
const FS = 'arn:aws:s3files:us-east-1:123456789012:file-system/fs-0123456789abcdef0';
const AP = 'arn:aws:s3files:us-east-1:123456789012:file-system/fs-0123456789abcdef0/access-point/fsap-0123456789abcdef0';

/** A Windows Server 2022 Core task of 1 vCPU / 2 GiB with one IIS container. */
function windowsTask(over: Partial<RegisterTaskDefinitionCommandInput> = {}): RegisterTaskDefinitionCommandInput {
  return aTaskDefinition({
    family: 'win',
    cpu: '1024',
    memory: '2048',
    runtimePlatform: { operatingSystemFamily: 'WINDOWS_SERVER_2022_CORE', cpuArchitecture: 'X86_64' },
    containerDefinitions: [{ name: 'iis', image: 'mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022', portMappings: [{ containerPort: 80 }] }],
    ...over,
  });
}

describe('simulator: Windows on Fargate and S3 Files volumes', () => {
  let sim: Simulator;
  let ecs: ECSClient;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0, throttling: false });
    ecs = ecsClient(sim);
  });
  afterAll(async () => {
    ecs.destroy();
    await sim?.close();
  });
  beforeEach(() => sim.reset());

  const refusal = (input: RegisterTaskDefinitionCommandInput) =>
    ecs.send(new RegisterTaskDefinitionCommand(input)).then(
      () => 'accepted',
      (e: unknown) => (e instanceof ClientException ? e.message : `not a ClientException: ${String(e)}`),
    );

  it.each(['WINDOWS_SERVER_2019_FULL', 'WINDOWS_SERVER_2019_CORE', 'WINDOWS_SERVER_2022_FULL', 'WINDOWS_SERVER_2022_CORE'] as const)(
    'accepts %s on Fargate and answers its runtimePlatform and FARGATE compatibility back',
    async (os) => {
      await ecs.send(new RegisterTaskDefinitionCommand(windowsTask({ runtimePlatform: { operatingSystemFamily: os, cpuArchitecture: 'X86_64' } })));
      const td = (await ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: 'win' }))).taskDefinition;
      expect(td?.runtimePlatform).toEqual({ operatingSystemFamily: os, cpuArchitecture: 'X86_64' });
      expect(td?.compatibilities).toContain('FARGATE');
    },
  );

  it.each([
    [{ runtimePlatform: { operatingSystemFamily: 'WINDOWS_SERVER_2025_CORE' } }, /operating system family 'WINDOWS_SERVER_2025_CORE'/],
    [{ runtimePlatform: { operatingSystemFamily: 'WINDOWS_SERVER_2022_CORE', cpuArchitecture: 'ARM64' } }, /only the X86_64 CPU architecture/],
    [{ cpu: '512', memory: '1024' }, /cannot be less than 1 vCPU/],
    [{ cpu: '8192', memory: '16384' }, /support task cpu 1024, 2048, 4096 \(got 8192\)/],
    [{ cpu: '1024', memory: '1024' }, /No Fargate configuration exists for given values: 1024 CPU, 1024 memory/],
    [{ pidMode: 'task' }, /'pidMode'/],
    [{ ephemeralStorage: { sizeInGiB: 30 } }, /'ephemeralStorage'/],
  ] as [Partial<RegisterTaskDefinitionCommandInput>, RegExp][])('refuses a Windows Fargate task with %j', async (over, message) => {
    expect(await refusal(windowsTask(over))).toMatch(message);
  });

  it.each([
    ['linuxParameters', { linuxParameters: { initProcessEnabled: true } }],
    ['user', { user: 'ContainerAdministrator' }],
    ['readonlyRootFilesystem', { readonlyRootFilesystem: true }],
    ['ulimits', { ulimits: [{ name: 'nofile' as const, softLimit: 1024, hardLimit: 2048 }] }],
    ['dnsServers', { dnsServers: ['10.0.0.2'] }],
  ])('refuses %s on a Windows container on Fargate, naming it and the container', async (field, extra) => {
    const td = windowsTask();
    td.containerDefinitions = [{ ...td.containerDefinitions?.[0], ...extra } as never];
    expect(await refusal(td)).toBe(`Windows containers on Fargate do not support the '${field}' parameter (container 'iis').`);
  });

  it('takes readonlyRootFilesystem false (the default) on a Windows container', async () => {
    const td = windowsTask();
    td.containerDefinitions = [{ ...td.containerDefinitions?.[0], readonlyRootFilesystem: false } as never];
    expect(await refusal(td)).toBe('accepted');
  });

  it('refuses an operating system family the API does not have, on any compatibility', async () => {
    expect(await refusal(aTaskDefinition({ requiresCompatibilities: ['EC2'], runtimePlatform: { operatingSystemFamily: 'WINDOWS_3_1' as never } }))).toMatch(
      /^Invalid runtimePlatform.operatingSystemFamily 'WINDOWS_3_1'/,
    );
  });

  it('answers an S3 Files volume, enableFaultInjection and a mount of it back as registered', async () => {
    const volume = { name: 'data', s3filesVolumeConfiguration: { fileSystemArn: FS, accessPointArn: AP, rootDirectory: '/', transitEncryptionPort: 2999 } };
    const td = aTaskDefinition({ taskRoleArn: TASK_ROLE, volumes: [volume], enableFaultInjection: true });
    td.containerDefinitions = [{ ...td.containerDefinitions?.[0], mountPoints: [{ sourceVolume: 'data', containerPath: '/data' }] } as never];
    await ecs.send(new RegisterTaskDefinitionCommand(td));
    const out = (await ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: 'web' }))).taskDefinition;
    expect(out?.volumes).toEqual([volume]);
    expect(out?.enableFaultInjection).toBe(true);
    expect(out?.containerDefinitions?.[0].mountPoints).toEqual([{ sourceVolume: 'data', containerPath: '/data' }]);
  });

  it.each([
    ['no task role', {}, { fileSystemArn: FS }, /requires a task role \(volume 'data'\)/],
    ['no file system ARN', { taskRoleArn: TASK_ROLE }, {}, /fileSystemArn 'undefined' \(volume 'data'\)/],
    ['an EFS id for the ARN', { taskRoleArn: TASK_ROLE }, { fileSystemArn: 'fs-0123456789abcdef0' }, /fileSystemArn 'fs-0123456789abcdef0'/],
    ['an access point with a root directory', { taskRoleArn: TASK_ROLE }, { fileSystemArn: FS, accessPointArn: AP, rootDirectory: '/srv' }, /root directory must be omitted or '\/'/],
    ['a transit encryption port out of range', { taskRoleArn: TASK_ROLE }, { fileSystemArn: FS, transitEncryptionPort: 70000 }, /transitEncryptionPort 70000/],
  ] as [string, Partial<RegisterTaskDefinitionCommandInput>, Record<string, unknown>, RegExp][])('refuses an S3 Files volume with %s', async (_what, task, s3, message) => {
    expect(await refusal(aTaskDefinition({ ...task, volumes: [{ name: 'data', s3filesVolumeConfiguration: s3 as never }] }))).toMatch(message);
  });

  it('refuses an S3 Files volume that is also another kind of volume', async () => {
    const volumes = [{ name: 'data', configuredAtLaunch: true, s3filesVolumeConfiguration: { fileSystemArn: FS } }];
    expect(await refusal(aTaskDefinition({ taskRoleArn: TASK_ROLE, volumes }))).toMatch(/can specify only one of/);
  });
});

/**
 * The simulator's contract with its callers: what was sent comes back. One row per member the
 * simulator takes on CreateService, UpdateService and RegisterTaskDefinition, each sent over HTTP
 * with the AWS SDK and read back where ECS answers it (the service, its PRIMARY deployment, or
 * DescribeTaskDefinition); and ECS's answers for the members a service never set (the 2025
 * defaults, docs/ecs-facts.md §13). A member the simulator accepted and dropped fails its row.
 * Moto models none of these members, so the rows run on the simulator only
 * (test/sim/contract.test.ts holds what both implement).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  CreateServiceCommand,
  DescribeServicesCommand,
  DescribeTaskDefinitionCommand,
  RegisterTaskDefinitionCommand,
  UpdateServiceCommand,
  type CreateServiceCommandInput,
  type ECSClient,
  type RegisterTaskDefinitionCommandInput,
  type Service,
  type UpdateServiceCommandInput,
} from '@aws-sdk/client-ecs';
import { startSimulator, type Simulator } from '../../local/sim';
import { aService, aTaskDefinition, deploy, ecsClient } from './helpers';

type Json = Record<string, unknown>;

const TG_BLUE = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/web-blue/1111111111111111';
const TG_GREEN = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/web-green/2222222222222222';
const PROD_RULE = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener-rule/app/lb/1/2/prod';
const TEST_RULE = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener-rule/app/lb/1/2/test';
const ROLE = 'arn:aws:iam::123456789012:role/ecs-infrastructure';
const HOOK_FN = 'arn:aws:lambda:us-east-1:123456789012:function:check-green';
const LATTICE_TG = 'arn:aws:vpc-lattice:us-east-1:123456789012:targetgroup/tg-0123456789abcdef0';
const NAMESPACE = 'arn:aws:servicediscovery:us-east-1:123456789012:namespace/ns-0123456789abcdef';
const REGISTRY = 'arn:aws:servicediscovery:us-east-1:123456789012:service/srv-0123456789abcdef';

const ADVANCED_LB = {
  targetGroupArn: TG_BLUE,
  containerName: 'web',
  containerPort: 80,
  advancedConfiguration: { alternateTargetGroupArn: TG_GREEN, productionListenerRule: PROD_RULE, testListenerRule: TEST_RULE, roleArn: ROLE },
};
const HOOKS = [
  {
    targetType: 'AWS_LAMBDA' as const,
    hookTargetArn: HOOK_FN,
    roleArn: ROLE,
    lifecycleStages: ['POST_TEST_TRAFFIC_SHIFT' as const],
    hookDetails: { check: 'smoke', retries: 2 },
    timeoutConfiguration: { timeoutInMinutes: 30, action: 'ROLLBACK' as const },
  },
];
/** A task definition with a named port (Service Connect) and a volume configured at launch (EBS). */
const RICH_TASK = aTaskDefinition({
  containerDefinitions: [{ name: 'web', image: 'public.ecr.aws/nginx/nginx:1.27', portMappings: [{ containerPort: 80, name: 'http' }], mountPoints: [{ sourceVolume: 'ebs', containerPath: '/data' }] }],
  volumes: [{ name: 'ebs', configuredAtLaunch: true }],
});
const EBS = [{ name: 'ebs', managedEBSVolume: { roleArn: ROLE, sizeInGiB: 20, volumeType: 'gp3', encrypted: true } }];

/** Where ECS answers a member: on the service, or only on its PRIMARY deployment (docs/ecs-facts.md §13). */
type Where = 'service' | 'primary';
interface Row {
  readonly member: string;
  readonly where: Where;
  readonly value: unknown;
  /** Members the row's value needs beside it (e.g. an advancedConfiguration for a native strategy). */
  readonly with?: Json;
  /** Members UpdateService needs beside it (ECS refuses a strategy change without a new deployment). */
  readonly updateWith?: Json;
}

const deploymentConfiguration = (value: Json) => ({ minimumHealthyPercent: 100, maximumPercent: 200, ...value });

/** Every member the simulator takes on CreateService and on UpdateService, with a value not its default. */
const SERVICE_ROWS: readonly Row[] = [
  { member: 'desiredCount', where: 'service', value: 3 },
  { member: 'platformVersion', where: 'service', value: '1.4.0' },
  { member: 'healthCheckGracePeriodSeconds', where: 'service', value: 45, with: { loadBalancers: [{ targetGroupArn: TG_BLUE, containerName: 'web', containerPort: 80 }] } },
  { member: 'enableExecuteCommand', where: 'service', value: true },
  { member: 'enableECSManagedTags', where: 'service', value: true },
  { member: 'propagateTags', where: 'service', value: 'TASK_DEFINITION' },
  { member: 'availabilityZoneRebalancing', where: 'service', value: 'DISABLED' },
  { member: 'serviceRegistries', where: 'service', value: [{ registryArn: REGISTRY, containerName: 'web', containerPort: 80 }] },
  { member: 'loadBalancers', where: 'service', value: [ADVANCED_LB] },
  {
    member: 'capacityProviderStrategy',
    where: 'service',
    value: [
      { capacityProvider: 'FARGATE', weight: 1, base: 1 },
      { capacityProvider: 'FARGATE_SPOT', weight: 3, base: 0 },
    ],
    updateWith: { forceNewDeployment: true },
  },
  { member: 'networkConfiguration', where: 'service', value: { awsvpcConfiguration: { subnets: ['subnet-0a1b2c3d'], securityGroups: ['sg-0456'], assignPublicIp: 'ENABLED' } } },
  {
    member: 'deploymentConfiguration',
    where: 'service',
    value: deploymentConfiguration({
      minimumHealthyPercent: 50,
      maximumPercent: 150,
      deploymentCircuitBreaker: { enable: true, rollback: true, resetOnHealthyTask: false, thresholdConfiguration: { type: 'COUNT', value: 3 } },
      alarms: { alarmNames: ['web-5xx'], enable: true, rollback: true },
      strategy: 'ROLLING',
      bakeTimeInMinutes: 0,
      earlySuccessCriteria: { enable: true, healthyPercent: 80, sourceServiceRevisionCleanup: 'DEFERRED' },
    }),
  },
  { member: 'deploymentConfiguration', where: 'service', value: deploymentConfiguration({ deploymentCircuitBreaker: { enable: false, rollback: false }, strategy: 'BLUE_GREEN', bakeTimeInMinutes: 10, lifecycleHooks: HOOKS }), with: { loadBalancers: [ADVANCED_LB] } },
  { member: 'deploymentConfiguration', where: 'service', value: deploymentConfiguration({ deploymentCircuitBreaker: { enable: false, rollback: false }, strategy: 'LINEAR', bakeTimeInMinutes: 5, linearConfiguration: { stepPercent: 25, stepBakeTimeInMinutes: 3 } }), with: { loadBalancers: [ADVANCED_LB] } },
  { member: 'deploymentConfiguration', where: 'service', value: deploymentConfiguration({ deploymentCircuitBreaker: { enable: false, rollback: false }, strategy: 'CANARY', bakeTimeInMinutes: 5, canaryConfiguration: { canaryPercent: 10, canaryBakeTimeInMinutes: 15 } }), with: { loadBalancers: [ADVANCED_LB] } },
  { member: 'vpcLatticeConfigurations', where: 'primary', value: [{ roleArn: ROLE, targetGroupArn: LATTICE_TG, portName: 'http' }] },
  {
    member: 'serviceConnectConfiguration',
    where: 'primary',
    value: { enabled: true, namespace: NAMESPACE, services: [{ portName: 'http', discoveryName: 'web', clientAliases: [{ port: 80, dnsName: 'web.internal' }] }] },
  },
  { member: 'volumeConfigurations', where: 'primary', value: EBS },
];

/** The answer at `where` of one service. */
async function answerAt(ecs: ECSClient, where: Where, service = 'web'): Promise<Json> {
  const svc = (await ecs.send(new DescribeServicesCommand({ cluster: 'c1', services: [service] }))).services?.[0] as Service;
  return (where === 'service' ? svc : svc.deployments?.find((d) => d.status === 'PRIMARY')) as unknown as Json;
}

describe('simulator: what was sent comes back', () => {
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

  it.each(SERVICE_ROWS.map((r) => [`${r.member} ${JSON.stringify(r.value).slice(0, 60)}`, r] as const))('CreateService %s', async (_name, row) => {
    await deploy(ecs, { td: RICH_TASK, svc: { ...row.with, [row.member]: row.value } as Partial<CreateServiceCommandInput> });
    expect((await answerAt(ecs, row.where))[row.member]).toEqual(row.value);
  });

  it.each(SERVICE_ROWS.map((r) => [`${r.member} ${JSON.stringify(r.value).slice(0, 60)}`, r] as const))('UpdateService %s', async (_name, row) => {
    // Created with what the row needs beside its member (a native strategy needs its load balancer at create).
    await deploy(ecs, { td: RICH_TASK, svc: { ...row.with } as Partial<CreateServiceCommandInput> });
    const input = { cluster: 'c1', service: 'web', ...row.updateWith, [row.member]: row.value } as unknown as UpdateServiceCommandInput;
    const out = await ecs.send(new UpdateServiceCommand(input));
    if (row.where === 'service') expect((out.service as unknown as Json)[row.member]).toEqual(row.value);
    expect((await answerAt(ecs, row.where))[row.member]).toEqual(row.value);
  });

  it('answers ECS 2025 defaults for a service that never set them: strategy ROLLING, bake time 0, breaker off, AZ rebalancing ENABLED', async () => {
    await deploy(ecs, { svc: aService() });
    const svc = await answerAt(ecs, 'service');
    expect(svc.deploymentConfiguration).toEqual({ minimumHealthyPercent: 100, maximumPercent: 200, deploymentCircuitBreaker: { enable: false, rollback: false }, strategy: 'ROLLING', bakeTimeInMinutes: 0 });
    expect(svc.availabilityZoneRebalancing).toBe('ENABLED');
    // An update that names neither keeps them.
    await ecs.send(new UpdateServiceCommand({ cluster: 'c1', service: 'web', desiredCount: 1, deploymentConfiguration: { minimumHealthyPercent: 50 } }));
    const after = await answerAt(ecs, 'service');
    expect(after.deploymentConfiguration).toMatchObject({ minimumHealthyPercent: 50, strategy: 'ROLLING', bakeTimeInMinutes: 0 });
    expect(after.availabilityZoneRebalancing).toBe('ENABLED');
  });

  it.each([
    ['earlySuccessCriteria on a native strategy', { strategy: 'BLUE_GREEN', bakeTimeInMinutes: 5, earlySuccessCriteria: { enable: true } }, /only with the ROLLING deployment strategy/],
    ['earlySuccessCriteria below minimumHealthyPercent', { minimumHealthyPercent: 90, earlySuccessCriteria: { enable: true, healthyPercent: 80 } }, /must be at least minimumHealthyPercent \(90\)/],
    ['earlySuccessCriteria without enable', { earlySuccessCriteria: { healthyPercent: 100 } }, /enable can not be null/],
  ] as [string, Json, RegExp][])('refuses %s', async (_what, cfg, message) => {
    const sent = deploy(ecs, { svc: { loadBalancers: [ADVANCED_LB], deploymentConfiguration: cfg } as Partial<CreateServiceCommandInput> });
    await expect(sent).rejects.toThrow(message);
  });
});

/** Every task-level member the simulator takes on RegisterTaskDefinition, with a value not its default. */
const TASK_ROWS: readonly { member: string; value: unknown; with?: Partial<RegisterTaskDefinitionCommandInput> }[] = [
  { member: 'taskRoleArn', value: 'arn:aws:iam::123456789012:role/app' },
  { member: 'executionRoleArn', value: 'arn:aws:iam::123456789012:role/exec' },
  { member: 'runtimePlatform', value: { cpuArchitecture: 'ARM64', operatingSystemFamily: 'LINUX' } },
  { member: 'runtimePlatform', value: { cpuArchitecture: 'X86_64', operatingSystemFamily: 'WINDOWS_SERVER_2019_FULL' }, with: { cpu: '1024', memory: '2048' } },
  { member: 'runtimePlatform', value: { cpuArchitecture: 'X86_64', operatingSystemFamily: 'WINDOWS_SERVER_2022_CORE' }, with: { cpu: '4096', memory: '8192' } },
  { member: 'ephemeralStorage', value: { sizeInGiB: 50 } },
  { member: 'pidMode', value: 'task' },
  { member: 'enableFaultInjection', value: true },
  {
    member: 'proxyConfiguration',
    value: {
      type: 'APPMESH',
      containerName: 'web',
      properties: [
        { name: 'AppPorts', value: '80' },
        { name: 'IgnoredUID', value: '1337' },
        { name: 'IgnoredGID', value: '' },
        { name: 'EgressIgnoredPorts', value: '' },
        { name: 'EgressIgnoredIPs', value: '169.254.170.2,169.254.169.254' },
        { name: 'ProxyIngressPort', value: '15000' },
        { name: 'ProxyEgressPort', value: '15001' },
      ],
    },
  },
  {
    member: 'volumes',
    value: [
      { name: 'efs', efsVolumeConfiguration: { fileSystemId: 'fs-0123456789abcdef0', rootDirectory: '/', transitEncryption: 'ENABLED', authorizationConfig: { accessPointId: 'fsap-0123456789abcdef0', iam: 'ENABLED' } } },
      { name: 's3', s3filesVolumeConfiguration: { fileSystemArn: 'arn:aws:s3files:us-east-1:123456789012:file-system/fs-0123456789abcdef0', rootDirectory: '/data' } },
      { name: 'scratch' },
    ],
    with: { taskRoleArn: 'arn:aws:iam::123456789012:role/app' },
  },
];

/** Container members whose value ECS answers as sent (the defaults it adds are checked elsewhere). */
const CONTAINER_ROWS: readonly { member: string; value: unknown }[] = [
  { member: 'environment', value: [{ name: 'EMPTY', value: '' }, { name: 'LEVEL', value: 'info' }] },
  { member: 'dockerLabels', value: { team: 'web', empty: '' } },
  { member: 'command', value: ['nginx', '-g', 'daemon off;'] },
  { member: 'entryPoint', value: ['/docker-entrypoint.sh'] },
  { member: 'user', value: '101' },
  { member: 'workingDirectory', value: '/srv' },
  { member: 'readonlyRootFilesystem', value: true },
  { member: 'stopTimeout', value: 90 },
  { member: 'startTimeout', value: 60 },
  { member: 'versionConsistency', value: 'disabled' },
  { member: 'restartPolicy', value: { enabled: true, ignoredExitCodes: [0], restartAttemptPeriod: 120 } },
  { member: 'ulimits', value: [{ name: 'nofile', softLimit: 65536, hardLimit: 65536 }] },
  { member: 'linuxParameters', value: { initProcessEnabled: true, capabilities: { add: ['SYS_PTRACE'], drop: ['NET_RAW'] } } },
  { member: 'systemControls', value: [{ namespace: 'net.core.somaxconn', value: '1024' }] },
  { member: 'logConfiguration', value: { logDriver: 'awslogs', options: { 'awslogs-group': '/ecs/web', 'awslogs-region': 'us-east-1', 'awslogs-stream-prefix': '' } } },
];

describe('simulator: RegisterTaskDefinition answers what was sent', () => {
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

  const registered = async (input: RegisterTaskDefinitionCommandInput): Promise<Json> => {
    const reg = await ecs.send(new RegisterTaskDefinitionCommand(input));
    const out = await ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: reg.taskDefinition?.taskDefinitionArn }));
    return out.taskDefinition as unknown as Json;
  };

  it.each(TASK_ROWS.map((r) => [`${r.member} ${JSON.stringify(r.value).slice(0, 60)}`, r] as const))('task %s', async (_name, row) => {
    const td = await registered(aTaskDefinition({ executionRoleArn: 'arn:aws:iam::123456789012:role/exec', ...row.with, [row.member]: row.value }));
    expect(td[row.member]).toEqual(row.value);
  });

  it.each(CONTAINER_ROWS.map((r) => [r.member, r] as const))('container %s', async (_name, row) => {
    const base = aTaskDefinition({ executionRoleArn: 'arn:aws:iam::123456789012:role/exec' });
    const container = { ...base.containerDefinitions?.[0], [row.member]: row.value } as never;
    const td = await registered({ ...base, containerDefinitions: [container] });
    expect((td.containerDefinitions as Json[])[0][row.member]).toEqual(row.value);
  });
});

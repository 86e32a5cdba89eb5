/**
 * One contract, two implementations: the same ECS cases run against the simulator and against moto
 * (an independent AWS emulator, `test/support/moto.ts`). Where moto models ECS they must agree;
 * where they disagree, each case says which one matches AWS's documentation, and why, and expects
 * each implementation's own answer (so a change on either side shows up here).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ClientException,
  ClusterNotFoundException,
  CreateClusterCommand,
  CreateServiceCommand,
  DeleteServiceCommand,
  DescribeServicesCommand,
  DescribeTaskDefinitionCommand,
  DescribeTasksCommand,
  ECSClient,
  InvalidParameterException,
  ListServicesCommand,
  ListTasksCommand,
  RegisterTaskDefinitionCommand,
  ServiceNotFoundException,
  UpdateServiceCommand,
  type CreateServiceCommandInput,
  type RegisterTaskDefinitionCommandInput,
} from '@aws-sdk/client-ecs';
import { renderTaskDefinition, taskDefinitionsEqual } from '../../lambda/core/taskdef';
import type { ServiceSpec, TaskDefinition } from '../../lambda/core/types';
import { startSimulator, type Simulator } from '../../local/sim';
import { LOCAL_CLIENT_CONFIG, startMoto, type MotoServer } from '../support/moto';
import { needs, toolCommand } from '../support/tools';

type Impl = 'simulator' | 'moto';

interface Target {
  readonly ecs: ECSClient;
  /** A subnet and security group the implementation accepts (moto checks them in its EC2 model). */
  readonly subnet: string;
  readonly securityGroup: string;
}

/** moto's default VPC subnet and security group, read with the EC2 Query API (no EC2 SDK here). */
async function motoNetwork(endpoint: string): Promise<{ subnet: string; securityGroup: string }> {
  const query = async (action: string) => {
    const res = await fetch(`${endpoint}/`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: 'AWS4-HMAC-SHA256 Credential=test/20250101/us-east-1/ec2/aws4_request, SignedHeaders=host, Signature=0',
      },
      body: `Action=${action}&Version=2016-11-15`,
    });
    return res.text();
  };
  const subnet = /<subnetId>([^<]+)<\/subnetId>/.exec(await query('DescribeSubnets'))?.[1];
  const securityGroup = /<groupId>([^<]+)<\/groupId>/.exec(await query('DescribeSecurityGroups'))?.[1];
  if (!subnet || !securityGroup) throw new Error('moto has no default VPC subnet / security group');
  return { subnet, securityGroup };
}

const targets = {} as Record<Impl, Target>;
let sim: Simulator;
let moto: MotoServer;
let counter = 0;
/** A fresh name per case: both implementations keep state across cases. */
const unique = (prefix: string) => `${prefix}-${++counter}`;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, throttling: false });
  targets.simulator = {
    ecs: new ECSClient({ ...LOCAL_CLIENT_CONFIG, endpoint: sim.endpoint, maxAttempts: 1 }),
    subnet: 'subnet-0a1b2c3d4e5f60001',
    securityGroup: 'sg-0a1b2c3d4e5f60001',
  };
  // Without moto its half of the contract is skipped (needs('moto') below); the simulator's runs.
  if (toolCommand('moto') === null) return;
  moto = await startMoto();
  const net = await motoNetwork(moto.endpoint);
  targets.moto = {
    ecs: new ECSClient({ ...LOCAL_CLIENT_CONFIG, endpoint: moto.endpoint, maxAttempts: 1 }),
    ...net,
  };
});

afterAll(async () => {
  await Promise.all([sim?.close(), moto?.stop()]);
});

function taskDefinitionInput(family: string, over: Partial<RegisterTaskDefinitionCommandInput> = {}): RegisterTaskDefinitionCommandInput {
  return {
    family,
    networkMode: 'awsvpc',
    requiresCompatibilities: ['FARGATE'],
    cpu: '256',
    memory: '512',
    containerDefinitions: [
      {
        name: 'web',
        image: 'public.ecr.aws/nginx/nginx:1.27',
        portMappings: [{ containerPort: 80 }],
        environment: [{ name: 'MODE', value: 'demo' }],
        healthCheck: { command: ['CMD-SHELL', 'curl -f http://localhost/ || exit 1'] },
      },
    ],
    ...over,
  };
}

/** Cluster + task definition + service; returns the names. */
async function aService(
  t: Target,
  over: Partial<CreateServiceCommandInput> = {},
): Promise<{ cluster: string; service: string; family: string }> {
  const cluster = unique('contract');
  const family = unique('web');
  await t.ecs.send(new CreateClusterCommand({ clusterName: cluster, capacityProviders: ['FARGATE', 'FARGATE_SPOT'] }));
  await t.ecs.send(new RegisterTaskDefinitionCommand(taskDefinitionInput(family)));
  await t.ecs.send(
    new CreateServiceCommand({
      cluster,
      serviceName: 'web',
      taskDefinition: family,
      desiredCount: 2,
      launchType: 'FARGATE',
      networkConfiguration: { awsvpcConfiguration: { subnets: [t.subnet], securityGroups: [t.securityGroup] } },
      tags: [{ key: 'owner', value: 'contract' }],
      ...over,
    }),
  );
  return { cluster, service: 'web', family };
}

const IMPLS: Impl[] = ['simulator', 'moto'];

for (const impl of IMPLS) describe(`ECS contract: ${impl}`, impl === 'moto' ? needs('moto') : {}, () => {
  const t = () => targets[impl];

  describe('task definitions', () => {
    it('describes back what was registered, with the defaults both add', async () => {
      const family = unique('td');
      const reg = await t().ecs.send(new RegisterTaskDefinitionCommand(taskDefinitionInput(family)));
      const td = (await t().ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: family }))).taskDefinition;

      expect(td?.taskDefinitionArn).toBe(`arn:aws:ecs:us-east-1:123456789012:task-definition/${family}:1`);
      expect(td?.taskDefinitionArn).toBe(reg.taskDefinition?.taskDefinitionArn);
      expect(td).toMatchObject({
        family,
        revision: 1,
        status: 'ACTIVE',
        networkMode: 'awsvpc',
        cpu: '256',
        memory: '512',
        volumes: [],
        placementConstraints: [],
        compatibilities: ['EC2', 'FARGATE'],
        requiresCompatibilities: ['FARGATE'],
      });
      expect(td?.containerDefinitions?.[0]).toMatchObject({
        name: 'web',
        image: 'public.ecr.aws/nginx/nginx:1.27',
        cpu: 0,
        essential: true,
        environment: [{ name: 'MODE', value: 'demo' }],
        mountPoints: [],
        volumesFrom: [],
      });
    });

    // Where they differ, the simulator follows the Amazon ECS API reference (TaskDefinition,
    // PortMapping, HealthCheck) and what ECS answers (docs/ecs-facts.md §6); moto answers the input back.
    it.each([
      {
        field: 'portMappings (protocol defaults to tcp; awsvpc hostPort = containerPort: PortMapping)',
        pick: (td: TaskDefinition) => td.containerDefinitions?.[0].portMappings,
        expected: { simulator: [{ containerPort: 80, hostPort: 80, protocol: 'tcp' }], moto: [{ containerPort: 80 }] },
      },
      {
        field: 'healthCheck (interval 30, timeout 5, retries 3 by default: HealthCheck)',
        pick: (td: TaskDefinition) => td.containerDefinitions?.[0].healthCheck,
        expected: {
          simulator: { command: ['CMD-SHELL', 'curl -f http://localhost/ || exit 1'], interval: 30, timeout: 5, retries: 3 },
          moto: { command: ['CMD-SHELL', 'curl -f http://localhost/ || exit 1'] },
        },
      },
      {
        field: 'systemControls (an empty list appears: docs/ecs-facts.md §6)',
        pick: (td: TaskDefinition) => td.containerDefinitions?.[0].systemControls,
        expected: { simulator: [], moto: undefined },
      },
      {
        field: 'registeredBy (server-only field of TaskDefinition)',
        pick: (td: TaskDefinition) => td.registeredBy,
        expected: { simulator: 'arn:aws:iam::123456789012:root', moto: undefined },
      },
      {
        field: 'requiresAttributes (ECS lists the capabilities awsvpc and health checks need)',
        pick: (td: TaskDefinition) => (td.requiresAttributes as { name: string }[] | undefined)?.map((a) => a.name).includes('ecs.capability.task-eni'),
        expected: { simulator: true, moto: undefined },
      },
    ])('describes $field', async ({ pick, expected }) => {
      const family = unique('td');
      await t().ecs.send(new RegisterTaskDefinitionCommand(taskDefinitionInput(family)));
      const td = (await t().ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: family }))).taskDefinition as TaskDefinition;
      expect(pick(td)).toEqual(expected[impl]);
    });

    it.each([
      {
        // RegisterTaskDefinition: "cpu ... can be expressed as an integer using CPU units (1024) or as a
        // string using vCPUs (1 vCPU) ... When the task definition is registered, a vCPU value is
        // converted to an integer indicating the CPU units." Same for memory in GB. The simulator does.
        case: 'cpu "0.25 vCPU" and memory "0.5 GB" come back as numeric strings',
        input: { cpu: '0.25 vCPU', memory: '0.5 GB' },
        expected: { simulator: ['256', '512'], moto: ['0.25 vCPU', '0.5 GB'] },
      },
    ])('$case', async ({ input, expected }) => {
      const reg = await t().ecs.send(new RegisterTaskDefinitionCommand(taskDefinitionInput(unique('td'), input)));
      expect([reg.taskDefinition?.cpu, reg.taskDefinition?.memory]).toEqual(expected[impl]);
    });

    it('answers ClientException for a task definition that does not exist', async () => {
      const err = await t().ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: unique('ghost') })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ClientException);
      expect((err as Error).message).toBe('Unable to describe task definition.');
    });

    it('keeps tags given at registration (DescribeTaskDefinition include TAGS)', async () => {
      const family = unique('td');
      await t().ecs.send(new RegisterTaskDefinitionCommand({ ...taskDefinitionInput(family), tags: [{ key: 'team', value: 'a' }] }));
      const out = await t().ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: family, include: ['TAGS'] }));
      expect(out.tags).toEqual([{ key: 'team', value: 'a' }]);
    });

    it('refuses an invalid Fargate CPU/memory pair, or not', async () => {
      // "Task CPU and memory" (Amazon ECS Developer Guide): 256 CPU units allow 512, 1024 or 2048 MiB,
      // and ECS answers ClientException "No Fargate configuration exists for given values". moto
      // does not validate the pair; the simulator matches ECS.
      const expected = { simulator: 'ClientException', moto: 'registered' };
      const out = await t()
        .ecs.send(new RegisterTaskDefinitionCommand(taskDefinitionInput(unique('td'), { memory: '4096' })))
        .then(
          () => 'registered',
          (e: Error) => e.name,
        );
      expect(out).toBe(expected[impl]);
    });
  });

  describe('services', () => {
    it('answers the service fields both model after create', async () => {
      const { cluster, family } = await aService(t());
      const out = await t().ecs.send(new DescribeServicesCommand({ cluster, services: ['web'], include: ['TAGS'] }));
      const svc = out.services?.[0];

      expect(svc).toMatchObject({
        serviceArn: `arn:aws:ecs:us-east-1:123456789012:service/${cluster}/web`,
        serviceName: 'web',
        clusterArn: `arn:aws:ecs:us-east-1:123456789012:cluster/${cluster}`,
        status: 'ACTIVE',
        desiredCount: 2,
        launchType: 'FARGATE',
        taskDefinition: `arn:aws:ecs:us-east-1:123456789012:task-definition/${family}:1`,
        schedulingStrategy: 'REPLICA',
        deploymentController: { type: 'ECS' },
        loadBalancers: [],
        serviceRegistries: [],
        tags: [{ key: 'owner', value: 'contract' }],
      });
      expect(svc?.networkConfiguration?.awsvpcConfiguration).toMatchObject({ subnets: [t().subnet], securityGroups: [t().securityGroup] });
      expect(svc?.deployments).toEqual([expect.objectContaining({ status: 'PRIMARY', rolloutState: 'IN_PROGRESS', desiredCount: 2 })]);
    });

    // Where they differ after CreateService, the simulator follows the API reference:
    // DeploymentConfiguration ("maximumPercent ... default 200", "minimumHealthyPercent ... default
    // 100"; the circuit breaker comes back filled: docs/ecs-facts.md §6; strategy ROLLING and
    // bakeTimeInMinutes 0 as ECS answers them since its native strategies: §13), AwsVpcConfiguration
    // ("assignPublicIp ... The default value is DISABLED"), and CreateService ("platformVersion ...
    // If one isn't specified, the LATEST platform version is used"). moto leaves them out.
    it.each([
      {
        field: 'deploymentConfiguration',
        pick: (s: Record<string, unknown>) => s.deploymentConfiguration,
        expected: {
          simulator: { minimumHealthyPercent: 100, maximumPercent: 200, deploymentCircuitBreaker: { enable: false, rollback: false }, strategy: 'ROLLING', bakeTimeInMinutes: 0 },
          moto: undefined,
        },
      },
      {
        field: 'assignPublicIp',
        pick: (s: Record<string, unknown>) => (s.networkConfiguration as { awsvpcConfiguration: { assignPublicIp?: string } }).awsvpcConfiguration.assignPublicIp,
        expected: { simulator: 'DISABLED', moto: undefined },
      },
      {
        field: 'platformVersion',
        pick: (s: Record<string, unknown>) => s.platformVersion,
        expected: { simulator: 'LATEST', moto: undefined },
      },
    ])('answers $field defaults after create', async ({ pick, expected }) => {
      const { cluster } = await aService(t());
      const svc = (await t().ecs.send(new DescribeServicesCommand({ cluster, services: ['web'] }))).services?.[0];
      expect(pick(svc as Record<string, unknown>)).toEqual(expected[impl]);
    });

    it('answers the fields given on update: desiredCount, deploymentConfiguration, networkConfiguration', async () => {
      const { cluster } = await aService(t());
      const deploymentConfiguration = { minimumHealthyPercent: 50, maximumPercent: 150, deploymentCircuitBreaker: { enable: true, rollback: true } };

      const out = await t().ecs.send(
        new UpdateServiceCommand({
          cluster,
          service: 'web',
          desiredCount: 3,
          deploymentConfiguration,
          networkConfiguration: { awsvpcConfiguration: { subnets: [t().subnet], securityGroups: [t().securityGroup], assignPublicIp: 'ENABLED' } },
        }),
      );
      const described = (await t().ecs.send(new DescribeServicesCommand({ cluster, services: ['web'] }))).services?.[0];

      for (const svc of [out.service, described]) {
        expect(svc?.desiredCount).toBe(3);
        // The simulator also answers strategy and bakeTimeInMinutes, as ECS does (§13).
        expect(svc?.deploymentConfiguration).toMatchObject(deploymentConfiguration);
        expect(svc?.networkConfiguration).toEqual({
          awsvpcConfiguration: { subnets: [t().subnet], securityGroups: [t().securityGroup], assignPublicIp: 'ENABLED' },
        });
      }
    });

    it('refuses DeleteService while scaled above 0', async () => {
      const { cluster } = await aService(t());
      const err = await t().ecs.send(new DeleteServiceCommand({ cluster, service: 'web' })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidParameterException);
      expect((err as Error).message).toBe('The service cannot be stopped while it is scaled above 0.');
    });
  });

  describe('the multi-container and service vocabulary', () => {
    it('describes back a task with sidecars, dependsOn, named ports, FireLens and an EFS volume as registered', async () => {
      const family = unique('multi');
      const containers = [
        {
          name: 'app',
          image: 'public.ecr.aws/nginx/nginx:1.27',
          cpu: 256,
          memory: 512,
          essential: true,
          portMappings: [{ containerPort: 80, hostPort: 80, protocol: 'tcp' as const, name: 'http', appProtocol: 'http' as const }],
          dependsOn: [{ containerName: 'log_router', condition: 'START' as const }],
          mountPoints: [{ sourceVolume: 'shared', containerPath: '/data', readOnly: false }],
          logConfiguration: { logDriver: 'awsfirelens' as const, options: { Name: 'cloudwatch' } },
          ulimits: [{ name: 'nofile' as const, softLimit: 65536, hardLimit: 65536 }],
          dockerLabels: { team: 'shop' },
        },
        {
          name: 'log_router',
          image: 'public.ecr.aws/aws-observability/aws-for-fluent-bit:stable',
          essential: false,
          memoryReservation: 50,
          firelensConfiguration: { type: 'fluentbit' as const },
        },
      ];
      const volumes = [
        { name: 'shared', efsVolumeConfiguration: { fileSystemId: 'fs-12345678', transitEncryption: 'ENABLED' as const, authorizationConfig: { iam: 'ENABLED' as const, accessPointId: 'fsap-1234567890abcdef' } } },
      ];
      await t().ecs.send(new RegisterTaskDefinitionCommand(taskDefinitionInput(family, { cpu: '512', memory: '1024', containerDefinitions: containers, volumes, ephemeralStorage: { sizeInGiB: 30 } })));
      const td = (await t().ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: family }))).taskDefinition;
      // Both keep what was given; the simulator also adds ECS's defaults (cpu 0, empty lists, ...).
      expect(td?.containerDefinitions).toMatchObject(containers);
      // moto fills the EFS rootDirectory with "/" (EFSVolumeConfiguration: the root is used when it is
      // omitted); the simulator answers what was given, as ECS answers in the recorded answers that
      // omit it. Each implementation's answer is pinned.
      const efs = td?.volumes?.[0]?.efsVolumeConfiguration;
      expect(efs?.rootDirectory).toBe({ simulator: undefined, moto: '/' }[impl]);
      expect(td?.volumes).toEqual([{ ...volumes[0], efsVolumeConfiguration: { ...volumes[0].efsVolumeConfiguration, ...(efs?.rootDirectory ? { rootDirectory: '/' } : {}) } }]);
      expect(td?.ephemeralStorage).toEqual({ sizeInGiB: 30 });
    });

    it('refuses a dependsOn that names a missing container, or not', async () => {
      // ContainerDependency: the containerName must be a container of the task definition. moto does
      // not check it; the simulator refuses like ECS (ClientException).
      const expected = { simulator: 'ClientException', moto: 'registered' };
      const out = await t()
        .ecs.send(
          new RegisterTaskDefinitionCommand(
            taskDefinitionInput(unique('td'), {
              containerDefinitions: [{ name: 'web', image: 'public.ecr.aws/nginx/nginx:1.27', dependsOn: [{ containerName: 'ghost', condition: 'START' }] }],
            }),
          ),
        )
        .then(
          () => 'registered',
          (e: unknown) => (e as Error).name,
        );
      expect(out).toBe(expected[impl]);
    });

    it('answers the deployment controller, several target groups and the capacity provider strategy it was given', async () => {
      const tg = (n: string) => `arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/${n}/0123456789abcdef`;
      const loadBalancers = [
        { targetGroupArn: tg('blue'), containerName: 'web', containerPort: 80 },
        { targetGroupArn: tg('admin'), containerName: 'web', containerPort: 80 },
      ];
      const { cluster } = await aService(t(), {
        launchType: undefined,
        capacityProviderStrategy: [
          { capacityProvider: 'FARGATE', base: 1, weight: 1 },
          { capacityProvider: 'FARGATE_SPOT', weight: 2 },
        ],
        deploymentController: { type: 'CODE_DEPLOY' },
        loadBalancers,
      });
      const s = (await t().ecs.send(new DescribeServicesCommand({ cluster, services: ['web'] }))).services?.[0];
      expect(s?.deploymentController).toEqual({ type: 'CODE_DEPLOY' });
      expect(s?.loadBalancers).toEqual(loadBalancers);
      // Service.capacityProviderStrategy: "omitted if the service was created using a launch type";
      // given a strategy, ECS answers it. moto does not answer it; the simulator does.
      const strategy = [
        { capacityProvider: 'FARGATE', base: 1, weight: 1 },
        { capacityProvider: 'FARGATE_SPOT', weight: 2 },
      ];
      expect(s?.capacityProviderStrategy).toEqual({ simulator: strategy, moto: undefined }[impl]);
    });
  });

  describe('errors and failures', () => {
    it.each([
      { case: 'DescribeServices', call: (c: string) => new DescribeServicesCommand({ cluster: c, services: ['web'] }) },
      { case: 'ListServices', call: (c: string) => new ListServicesCommand({ cluster: c }) },
      { case: 'UpdateService', call: (c: string) => new UpdateServiceCommand({ cluster: c, service: 'web', desiredCount: 1 }) },
    ])('answers ClusterNotFoundException for a missing cluster: $case', async ({ call }) => {
      const err = await t().ecs.send(call(unique('ghost')) as never).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ClusterNotFoundException);
    });

    it.each([
      { case: 'UpdateService', call: (c: string) => new UpdateServiceCommand({ cluster: c, service: 'ghost', desiredCount: 1 }) },
      { case: 'DeleteService', call: (c: string) => new DeleteServiceCommand({ cluster: c, service: 'ghost' }) },
    ])('answers ServiceNotFoundException for a missing service: $case', async ({ call }) => {
      const cluster = unique('contract');
      await t().ecs.send(new CreateClusterCommand({ clusterName: cluster, capacityProviders: ['FARGATE', 'FARGATE_SPOT'] }));
      const err = await t().ecs.send(call(cluster) as never).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ServiceNotFoundException);
    });

    it('reports an unknown service in DescribeServices as a MISSING failure, not an error', async () => {
      const { cluster } = await aService(t());
      const out = await t().ecs.send(new DescribeServicesCommand({ cluster, services: ['web', 'ghost'] }));

      expect(out.services?.map((s) => s.serviceName)).toEqual(['web']);
      expect(out.failures?.map((f) => f.reason)).toEqual(['MISSING']);
      // The failure ARN: the simulator answers the long ARN format with the cluster name (Amazon ECS
      // Developer Guide, "Amazon Resource Names (ARNs) and IDs": the default for services since
      // 2021); moto answers the old short format.
      const expected = {
        simulator: `arn:aws:ecs:us-east-1:123456789012:service/${cluster}/ghost`,
        moto: 'arn:aws:ecs:us-east-1:123456789012:service/ghost',
      };
      expect(out.failures?.[0].arn).toBe(expected[impl]);
    });

    it.each([
      {
        // DescribeServices: "You may specify up to 10 services to describe in a single operation";
        // ECS answers InvalidParameterException "service names can have at most 10 items.". moto
        // describes all 11 (here as MISSING failures).
        case: 'DescribeServices with 11 services',
        call: (c: string) => new DescribeServicesCommand({ cluster: c, services: Array.from({ length: 11 }, (_, i) => `s${i}`) }),
        expected: { simulator: 'InvalidParameterException', moto: 'MISSING' },
      },
      {
        // ListTasks lists ServiceNotFoundException among its errors for a serviceName that does not exist.
        case: 'ListTasks for an unknown service',
        call: (c: string) => new ListTasksCommand({ cluster: c, serviceName: 'ghost' }),
        expected: { simulator: 'ServiceNotFoundException', moto: 'ok' },
      },
      {
        // DescribeTasks answers unknown tasks in failures[] with reason MISSING (like DescribeServices).
        case: 'DescribeTasks for an unknown task (failures answered)',
        call: (c: string) => new DescribeTasksCommand({ cluster: c, tasks: ['0123456789abcdef0123456789abcdef'] }),
        expected: { simulator: 'MISSING', moto: 'ok' },
      },
    ])('differs where moto does not model ECS: $case', async ({ call, expected }) => {
      const cluster = unique('contract');
      await t().ecs.send(new CreateClusterCommand({ clusterName: cluster, capacityProviders: ['FARGATE', 'FARGATE_SPOT'] }));
      const out = await t()
        .ecs.send(call(cluster) as never)
        .then(
          (r: unknown) => (r as { failures?: { reason?: string }[] }).failures?.[0]?.reason ?? 'ok',
          (e: Error) => e.name,
        );
      expect(out).toBe(expected[impl]);
    });
  });
});

describe('renderTaskDefinition round trip on the simulator', () => {
  function aSpec(over: Partial<ServiceSpec> = {}): ServiceSpec {
    return {
      cluster: 'apps',
      service: 'web',
      image: 'public.ecr.aws/nginx/nginx:1.27',
      desiredCount: 2,
      cpu: 256,
      memory: 512,
      containerPort: 80,
      environment: {},
      secrets: {},
      capacityProvider: 'FARGATE',
      cpuArchitecture: 'X86_64',
      state: 'present',
      adopt: false,
      autoscaled: false,
      tags: {},
      ...over,
    };
  }

  const options = (over: { logGroupPrefix?: string; executionRoleArn?: string } = {}) => ({
    ownerId: 'ecs-reconciler',
    defaults: { subnets: ['subnet-1'], securityGroups: ['sg-1'], region: 'us-east-1', ...over },
  });

  it.each([
    { case: 'a minimal spec', spec: aSpec(), opts: options() },
    {
      case: 'environment, secrets, command and health check',
      spec: aSpec({
        environment: { B: '2', A: '1' },
        secrets: { TOKEN: 'arn:aws:ssm:us-east-1:123456789012:parameter/token' },
        command: ['nginx', '-g', 'daemon off;'],
        healthCheck: { command: ['CMD-SHELL', 'curl -f http://localhost/ || exit 1'], intervalSeconds: 15 },
        executionRoleArn: 'arn:aws:iam::123456789012:role/exec',
        taskRoleArn: 'arn:aws:iam::123456789012:role/task',
      }),
      opts: options(),
    },
    {
      case: 'awslogs, ARM64, no container port, 1 vCPU / 2 GiB',
      spec: aSpec({ containerPort: undefined, cpuArchitecture: 'ARM64', cpu: 1024, memory: 2048 }),
      opts: options({ logGroupPrefix: '/ecs/', executionRoleArn: 'arn:aws:iam::123456789012:role/exec' }),
    },
  ])('registers and describes back $case as equal', async ({ spec, opts }) => {
    // Prepare
    const rendered = renderTaskDefinition(spec, opts);
    const ecs = targets.simulator.ecs;

    // Act
    const reg = await ecs.send(new RegisterTaskDefinitionCommand(rendered as unknown as RegisterTaskDefinitionCommandInput));
    const described = (await ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: reg.taskDefinition?.taskDefinitionArn })))
      .taskDefinition as unknown as TaskDefinition;

    // Assess: equal although ECS's defaults were added; and a real change is still seen.
    expect(described.containerDefinitions?.[0].essential).toBe(true);
    expect(taskDefinitionsEqual(rendered, described)).toBe(true);
    const changed = renderTaskDefinition({ ...spec, image: `${spec.image}-changed` }, opts);
    expect(taskDefinitionsEqual(changed, described)).toBe(false);
  });
});

/**
 * The simulator stores and describes the service vocabulary as ECS does (deployment alarms,
 * Availability Zone rebalancing, several load balancers, Service Connect and managed EBS volumes
 * per deployment, propagateTags, enableExecuteCommand, platformVersion, capacity provider base and
 * weight, the CODE_DEPLOY and EXTERNAL deployment controllers), fills ECS's defaults in described
 * answers, and refuses what ECS refuses, with InvalidParameterException.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  CreateClusterCommand,
  CreateServiceCommand,
  InvalidParameterException,
  RegisterTaskDefinitionCommand,
  UpdateServiceCommand,
  type CreateServiceCommandInput,
  type ECSClient,
  type UpdateServiceCommandInput,
} from '@aws-sdk/client-ecs';
import { startSimulator, type Simulator } from '../../local/sim';
import { aService, aTaskDefinition, describeService, ecsClient } from './helpers';

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

const TG_HTTP = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/web-http/0123456789abcdef';
const TG_ADMIN = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/web-admin/fedcba9876543210';

/** Cluster c1 (with a Service Connect namespace) and a task definition `web` with named ports and an EBS volume configured at launch. */
async function prepare(): Promise<string> {
  await ecs.send(new CreateClusterCommand({ clusterName: 'c1', capacityProviders: ['FARGATE', 'FARGATE_SPOT'], serviceConnectDefaults: { namespace: 'shop' } }));
  const reg = await ecs.send(
    new RegisterTaskDefinitionCommand(
      aTaskDefinition({
        volumes: [{ name: 'data', configuredAtLaunch: true }],
        containerDefinitions: [
          {
            name: 'web',
            image: 'public.ecr.aws/nginx/nginx:1.27',
            portMappings: [
              { containerPort: 80, name: 'http', appProtocol: 'http' },
              { containerPort: 9090, name: 'admin' },
            ],
            mountPoints: [{ sourceVolume: 'data', containerPath: '/data' }],
          },
        ],
      }),
    ),
  );
  return reg.taskDefinition?.taskDefinitionArn as string;
}

const create = (over: Partial<CreateServiceCommandInput> = {}) => ecs.send(new CreateServiceCommand(aService(over)));
const update = (over: Partial<UpdateServiceCommandInput>) => ecs.send(new UpdateServiceCommand({ cluster: 'c1', service: 'web', ...over }));
const refusal = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as Error);

describe('service vocabulary', () => {
  it('answers ECS defaults for what a CreateService leaves out', async () => {
    await prepare();
    await create();
    const s = await describeService(ecs, 'c1', 'web');
    expect(s).toMatchObject({
      deploymentController: { type: 'ECS' },
      healthCheckGracePeriodSeconds: 0,
      availabilityZoneRebalancing: 'ENABLED',
      propagateTags: 'NONE',
      enableECSManagedTags: false,
      enableExecuteCommand: false,
      platformVersion: 'LATEST',
      deploymentConfiguration: { maximumPercent: 200, minimumHealthyPercent: 100, deploymentCircuitBreaker: { enable: false, rollback: false } },
    });
    expect(s.deploymentConfiguration?.alarms).toBeUndefined();
    expect(s.taskSets).toBeUndefined();
  });

  it('answers deploymentConfiguration as ECS does now: strategy ROLLING and bakeTimeInMinutes 0 for a service that never set them', async () => {
    await prepare();
    const created = await create();
    const s = await describeService(ecs, 'c1', 'web');
    const answered = { deploymentCircuitBreaker: { enable: false, rollback: false }, maximumPercent: 200, minimumHealthyPercent: 100, strategy: 'ROLLING', bakeTimeInMinutes: 0 };
    expect(s.deploymentConfiguration).toEqual(answered);
    expect(created.service?.deploymentConfiguration).toEqual(answered);
    // An update that gives other members keeps them.
    const updated = await update({ deploymentConfiguration: { minimumHealthyPercent: 50 } });
    expect(updated.service?.deploymentConfiguration).toEqual({ ...answered, minimumHealthyPercent: 50 });
  });

  it('answers back the members of the native strategies it is given, and refuses an unknown strategy', async () => {
    await prepare();
    const hooks = [{ hookTargetArn: 'arn:aws:lambda:us-east-1:123456789012:function:check', roleArn: 'arn:aws:iam::123456789012:role/hooks', lifecycleStages: ['POST_SCALE_UP'] }];
    const breaker = { enable: true, rollback: true, thresholdConfiguration: { type: 'COUNT', value: 3 }, resetOnHealthyTask: false };
    const tg = (name: string) => `arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/${name}/0123456789abcdef`;
    const advancedConfiguration = {
      alternateTargetGroupArn: tg('web-green'),
      productionListenerRule: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener-rule/app/lb/1/2/3',
      roleArn: 'arn:aws:iam::123456789012:role/ecs-infrastructure',
    };
    const loadBalancers = [{ targetGroupArn: tg('web-blue'), containerName: 'web', containerPort: 80, advancedConfiguration }];
    await create({ loadBalancers, deploymentConfiguration: { strategy: 'CANARY', bakeTimeInMinutes: 5, canaryConfiguration: { canaryPercent: 10, canaryBakeTimeInMinutes: 5 }, lifecycleHooks: hooks, deploymentCircuitBreaker: breaker } as never });
    const s = await describeService(ecs, 'c1', 'web');
    expect(s.deploymentConfiguration).toMatchObject({ strategy: 'CANARY', bakeTimeInMinutes: 5, canaryConfiguration: { canaryPercent: 10, canaryBakeTimeInMinutes: 5 }, lifecycleHooks: hooks, deploymentCircuitBreaker: breaker });
    expect(s.loadBalancers).toEqual(loadBalancers);
    const err = await refusal(update({ deploymentConfiguration: { strategy: 'RECREATE' as never } }));
    expect(err).toBeInstanceOf(InvalidParameterException);
    expect(err?.message).toBe("Invalid deploymentConfiguration.strategy 'RECREATE'. Valid values: ROLLING, BLUE_GREEN, LINEAR, CANARY.");
  });

  it('stores and describes the fields a real service carries', async () => {
    await prepare();
    // Prepare: the fields a service carries that are answered as given.
    const given = {
      capacityProviderStrategy: [
        { capacityProvider: 'FARGATE', base: 1, weight: 1 },
        { capacityProvider: 'FARGATE_SPOT', weight: 3 },
      ],
      platformVersion: '1.4.0',
      enableExecuteCommand: true,
      enableECSManagedTags: true,
      propagateTags: 'SERVICE' as const,
      healthCheckGracePeriodSeconds: 60,
      availabilityZoneRebalancing: 'DISABLED' as const,
      loadBalancers: [
        { targetGroupArn: TG_HTTP, containerName: 'web', containerPort: 80 },
        { targetGroupArn: TG_ADMIN, containerName: 'web', containerPort: 9090 },
      ],
      serviceRegistries: [{ registryArn: 'arn:aws:servicediscovery:us-east-1:123456789012:service/srv-0123456789abcdef' }],
      deploymentConfiguration: { alarms: { alarmNames: ['web-5xx'], enable: true, rollback: true } },
    };
    // Act
    await create({
      ...given,
      serviceConnectConfiguration: { enabled: true, services: [{ portName: 'http', clientAliases: [{ port: 80 }] }] },
      volumeConfigurations: [{ name: 'data', managedEBSVolume: { roleArn: 'arn:aws:iam::123456789012:role/ecsInfrastructureRole', sizeInGiB: 100, volumeType: 'gp3' } }],
    });
    // Assess
    const s = await describeService(ecs, 'c1', 'web');
    expect(s).toMatchObject(given);
    // Service Connect and EBS volumes are answered per deployment, as ECS does (test/fixtures/real).
    expect(s).not.toHaveProperty('serviceConnectConfiguration');
    const d = s.deployments?.[0];
    expect(d?.serviceConnectConfiguration).toMatchObject({ enabled: true, namespace: expect.stringMatching(/^arn:aws:servicediscovery:/), services: [{ portName: 'http' }] });
    expect(d?.serviceConnectResources).toEqual([{ discoveryName: 'http', discoveryArn: expect.stringMatching(/^arn:aws:servicediscovery:us-east-1:\d{12}:service\/srv-/) }]);
    expect(d?.volumeConfigurations).toEqual([{ name: 'data', managedEBSVolume: expect.objectContaining({ sizeInGiB: 100 }) }]);
  });

  it('starts a deployment for a Service Connect change, and keeps AZ rebalancing when an update omits it', async () => {
    await prepare();
    await create({ availabilityZoneRebalancing: 'DISABLED' });
    const before = (await describeService(ecs, 'c1', 'web')).deployments?.[0]?.id;
    await update({ serviceConnectConfiguration: { enabled: true, services: [{ portName: 'admin' }] } });
    const s = await describeService(ecs, 'c1', 'web');
    expect(s.deployments?.[0]?.id).not.toBe(before);
    expect(s.deployments?.[0]?.serviceConnectResources?.map((r) => r.discoveryName)).toEqual(['admin']);
    expect(s.availabilityZoneRebalancing).toBe('DISABLED');
  });

  it.each([
    { case: 'a Service Connect port name the task definition has not', over: { serviceConnectConfiguration: { enabled: true, services: [{ portName: 'grpc' }] } }, message: "The Service Connect portName 'grpc' does not match the name of a port mapping in the task definition (http, admin)." },
    { case: 'an EBS volume not configured at launch', over: { volumeConfigurations: [{ name: 'logs', managedEBSVolume: { roleArn: 'arn:aws:iam::123456789012:role/r' } }] }, message: "The volume 'logs' is not a volume of the task definition that is configured at launch (configuredAtLaunch: true)." },
    { case: 'an unknown propagateTags', over: { propagateTags: 'TASK' as 'SERVICE' }, message: "Invalid propagateTags 'TASK'. Valid values: TASK_DEFINITION, SERVICE, NONE." },
    { case: 'an unknown deployment controller', over: { deploymentController: { type: 'BLUE_GREEN' as 'ECS' } }, message: "Invalid deploymentController type 'BLUE_GREEN'. Valid values: ECS, CODE_DEPLOY, EXTERNAL." },
    { case: 'CODE_DEPLOY without a load balancer', over: { deploymentController: { type: 'CODE_DEPLOY' as const } }, message: 'A service using the CODE_DEPLOY deployment controller needs a load balancer (blue/green shifts its traffic).' },
    { case: 'alarms enabled with no alarm', over: { deploymentConfiguration: { alarms: { alarmNames: [], enable: true, rollback: false } } }, message: 'deploymentConfiguration.alarms.alarmNames must name at least one alarm when enable is true.' },
    { case: 'six load balancers', over: { loadBalancers: Array.from({ length: 6 }, () => ({ targetGroupArn: TG_HTTP, containerName: 'web', containerPort: 80 })) }, message: 'loadBalancers can have at most 5 items.' },
  ])('CreateService refuses $case', async ({ over, message }) => {
    await prepare();
    const err = await refusal(create(over));
    expect(err).toBeInstanceOf(InvalidParameterException);
    expect(err?.message).toBe(message);
  });
});

describe('deployment controllers', () => {
  it('CODE_DEPLOY: runs the service, answers its controller, and refuses the updates CodeDeploy owns', async () => {
    const tdArn = await prepare();
    await create({ deploymentController: { type: 'CODE_DEPLOY' }, loadBalancers: [{ targetGroupArn: TG_HTTP, containerName: 'web', containerPort: 80 }] });
    // ECS's wording (aws/aws-cdk#23564), even with the same task definition.
    const err = await refusal(update({ taskDefinition: tdArn }));
    expect(err).toBeInstanceOf(InvalidParameterException);
    expect(err?.message).toBe('Unable to update task definition on services with a CODE_DEPLOY deployment controller. Use AWS CodeDeploy to trigger a new deployment.');
    const lb = await refusal(update({ loadBalancers: [] }));
    expect(lb?.message).toBe('Unable to update loadBalancers on services with a CODE_DEPLOY deployment controller. Use AWS CodeDeploy to trigger a new deployment.');
    // What the API reference lets it change.
    await update({ desiredCount: 3, healthCheckGracePeriodSeconds: 30, propagateTags: 'SERVICE', deploymentConfiguration: { minimumHealthyPercent: 50 } });
    const s = await describeService(ecs, 'c1', 'web');
    expect(s).toMatchObject({ deploymentController: { type: 'CODE_DEPLOY' }, desiredCount: 3, healthCheckGracePeriodSeconds: 30, propagateTags: 'SERVICE', taskDefinition: tdArn });
    expect(s.deploymentConfiguration?.minimumHealthyPercent).toBe(50);
  });

  it('EXTERNAL: no task definition needed, no deployments, task sets listed, and only the counts and tags updatable', async () => {
    await prepare();
    await ecs.send(new CreateServiceCommand({ cluster: 'c1', serviceName: 'web', deploymentController: { type: 'EXTERNAL' }, desiredCount: 1 }));
    const s = await describeService(ecs, 'c1', 'web');
    expect(s).toMatchObject({ deploymentController: { type: 'EXTERNAL' }, taskSets: [], deployments: [], desiredCount: 1 });
    expect(s.taskDefinition).toBeUndefined();
    await update({ desiredCount: 2 });
    expect((await describeService(ecs, 'c1', 'web')).desiredCount).toBe(2);
    const err = await refusal(update({ deploymentConfiguration: { maximumPercent: 150 } }));
    expect(err).toBeInstanceOf(InvalidParameterException);
    expect(err?.message).toBe('Unable to update deploymentConfiguration on services with a EXTERNAL deployment controller. Use a new task set (CreateTaskSet) to change it.');
  });
});

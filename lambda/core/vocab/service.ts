/**
 * The service vocabulary, declared once: the CreateService / UpdateService fields a spec can set
 * beyond the shorthand (Amazon ECS API reference, CreateService, UpdateService, Service,
 * Deployment), each with the value the reconciler wants when the spec leaves it out (ECS's own
 * create default, except `propagateTags`, see below), what an absent value in DescribeServices
 * means, whether changing it starts a new deployment, which deployment controllers let
 * UpdateService change it, and where DescribeServices reports it.
 *
 * The ownership rule (docs/spec.md, "What the reconciler manages"): every field declared here is
 * managed. When the live value differs from the spec's (or from the stated default when the spec
 * leaves it out), the next pass corrects it and reports the drift
 * (`platformVersion 1.4.0 -> LATEST`).
 */
import { type Field, bool, int, list, map, obj, oneOf, str } from './decl';
import {
  ALARM_NAME_RE,
  ANY_ARN_RE,
  CLOUD_MAP_ARN_RE,
  NAME_RE,
  PLATFORM_VERSION_RE,
  ROLE_ARN_ALLOWED,
  ROLE_ARN_RE,
  TARGET_GROUP_ARN_ALLOWED,
  TARGET_GROUP_ARN_RE,
} from './patterns';

/** ECS deployment controllers (Service.deploymentController.type; absent means ECS). */
export type DeploymentControllerType = 'ECS' | 'CODE_DEPLOY' | 'EXTERNAL';

export interface ServiceFieldDecl {
  /** Type, the reconciler's default when the spec leaves it out, doc. */
  readonly field: Field;
  /** What an absent value in DescribeServices means; defaults to `field.default`. */
  readonly absentMeans?: unknown;
  /** Whether an UpdateService that changes it starts a new deployment (docs/ecs-facts.md §7). */
  readonly startsDeployment: boolean;
  /**
   * Deployment controllers whose services UpdateService may change it for (Amazon ECS API
   * reference, UpdateService: with CODE_DEPLOY only desiredCount, deploymentConfiguration,
   * healthCheckGracePeriodSeconds, placement, enableECSManagedTags and propagateTags; with EXTERNAL
   * the same without deploymentConfiguration).
   */
  readonly controllers: readonly DeploymentControllerType[];
  /** DescribeServices reports it on the service, or only on its PRIMARY deployment. */
  readonly observedOn: 'service' | 'primaryDeployment';
  /**
   * ECS's default depends on the service (docs/ecs-facts.md §13): the field is compared only when
   * the spec sets it, and a spec that leaves it out does not manage it (so a service that predates
   * the field is not corrected every pass).
   */
  readonly comparedOnlyWhenSet?: true;
}

const ALL: readonly DeploymentControllerType[] = ['ECS', 'CODE_DEPLOY', 'EXTERNAL'];
const ECS_ONLY: readonly DeploymentControllerType[] = ['ECS'];

const containerName = str({ pattern: NAME_RE, allowed: 'must be 1-255 letters, numbers, hyphens or underscores (ECS container name)' });

/** ECS LoadBalancer of a service (target group, container and port). */
export const LOAD_BALANCER = obj({
  targetGroupArn: {
    type: str({ pattern: TARGET_GROUP_ARN_RE, allowed: TARGET_GROUP_ARN_ALLOWED }),
    required: true,
  },
  containerName: { type: containerName, required: true },
  containerPort: { type: int({ min: 1, max: 65535 }), required: true },
});

export const SERVICE_REGISTRY = obj({
  registryArn: { type: str({ pattern: CLOUD_MAP_ARN_RE, allowed: 'must be a Cloud Map service ARN (arn:aws:servicediscovery:REGION:ACCOUNT:service/srv-ID)' }), required: true },
  port: int({ min: 0, max: 65535 }),
  containerName,
  containerPort: int({ min: 0, max: 65535 }),
});

const LOG_CONFIGURATION_SC = obj({
  logDriver: { type: oneOf(['awslogs', 'splunk', 'awsfirelens']), required: true },
  options: map(str()),
  secretOptions: list(obj({ name: { type: str(), required: true }, valueFrom: { type: str(), required: true } }), { order: 'keyed', key: 'name', value: 'valueFrom' }),
});

/** ECS ServiceConnectConfiguration. */
export const SERVICE_CONNECT = obj({
  enabled: { type: bool(), required: true },
  namespace: str(),
  services: list(
    obj({
      portName: { type: str(), required: true },
      discoveryName: str(),
      clientAliases: list(obj({ port: { type: int({ min: 1, max: 65535 }), required: true }, dnsName: str() }), { order: 'set' }),
      ingressPortOverride: int({ min: 1, max: 65535 }),
      timeout: obj({ idleTimeoutSeconds: int({ min: 0 }), perRequestTimeoutSeconds: int({ min: 0 }) }),
      tls: obj({
        issuerCertificateAuthority: { type: obj({ awsPcaAuthorityArn: str({ pattern: ANY_ARN_RE, allowed: 'must be an ARN' }) }), required: true },
        kmsKey: str(),
        roleArn: str({ pattern: ROLE_ARN_RE, allowed: ROLE_ARN_ALLOWED }),
      }),
    }),
    { order: 'keyed', key: 'portName' },
  ),
  logConfiguration: LOG_CONFIGURATION_SC,
});

/** ECS ServiceVolumeConfiguration (EBS volumes the service attaches to its tasks). */
export const VOLUME_CONFIGURATION = obj({
  name: { type: str({ pattern: NAME_RE, allowed: 'must name a task definition volume (letters, numbers, hyphens, underscores)' }), required: true },
  managedEBSVolume: obj({
    roleArn: { type: str({ pattern: ROLE_ARN_RE, allowed: ROLE_ARN_ALLOWED }), required: true },
    encrypted: bool(),
    kmsKeyId: str(),
    volumeType: oneOf(['gp2', 'gp3', 'io1', 'io2', 'sc1', 'st1', 'standard']),
    sizeInGiB: int({ min: 1, max: 16384, unit: 'GiB' }),
    snapshotId: str(),
    volumeInitializationRate: int({ min: 100, max: 300, unit: 'MiB/s' }),
    iops: int({ min: 0 }),
    throughput: int({ min: 0, unit: 'MiB/s' }),
    tagSpecifications: list(
      obj({
        resourceType: { type: oneOf(['volume']), required: true },
        tags: list(obj({ key: { type: str(), required: true }, value: str() }), { order: 'keyed', key: 'key', value: 'value' }),
        propagateTags: oneOf(['TASK_DEFINITION', 'SERVICE', 'NONE']),
      }),
      { order: 'set' },
    ),
    filesystemType: oneOf(['ext3', 'ext4', 'xfs', 'ntfs']),
  }),
});

/** deploymentConfiguration.alarms (ECS DeploymentAlarms). */
export const DEPLOYMENT_ALARMS = obj({
  alarmNames: { type: list(str({ pattern: ALARM_NAME_RE, allowed: 'must be a CloudWatch alarm name' }), { order: 'set' }), required: true },
  enable: { type: bool(), required: true },
  rollback: { type: bool(), required: true },
});

/**
 * What DescribeServices answers inside `deploymentConfiguration` for a service that never set
 * these fields (docs/ecs-facts.md §13): the rolling strategy, and no bake time. A live value equal
 * to this is the same as the spec leaving the field out: never a difference, and import writes
 * nothing for it. Any other value is a deployment the spec cannot describe (blue/green, linear,
 * canary).
 */
export const DEPLOYMENT_CONFIGURATION_NEVER_SET: Readonly<Record<string, unknown>> = { strategy: 'ROLLING', bakeTimeInMinutes: 0 };

/** ECS CapacityProviderStrategyItem on Fargate. */
export const CAPACITY_PROVIDER_STRATEGY_ITEM = obj({
  capacityProvider: { type: oneOf(['FARGATE', 'FARGATE_SPOT']), required: true },
  weight: { type: int({ min: 0, max: 1000 }), default: 0 },
  base: { type: int({ min: 0, max: 100000 }), default: 0 },
});

/**
 * The service fields managed by the generic comparison, in report order. (desiredCount,
 * capacityProviderStrategy / launchType, networkConfiguration, deploymentConfiguration and
 * loadBalancers have their own comparison in `../plan-service.ts`, which predates this table.)
 */
export const SERVICE_FIELDS = {
  platformVersion: {
    field: {
      type: str({ pattern: PLATFORM_VERSION_RE, allowed: 'must be LATEST or a Fargate platform version such as 1.4.0' }),
      default: 'LATEST',
      doc: 'Fargate platform version (ECS default LATEST).',
    },
    startsDeployment: true,
    controllers: ECS_ONLY,
    observedOn: 'service',
  },
  healthCheckGracePeriodSeconds: {
    field: { type: int({ min: 0, max: 2147483647, unit: 'seconds' }), default: 0, doc: 'Seconds ECS ignores failing load balancer health checks after a task starts (ECS default 0).' },
    startsDeployment: false,
    controllers: ALL,
    observedOn: 'service',
  },
  enableExecuteCommand: {
    field: { type: bool(), default: false, doc: 'ECS Exec into the tasks (ECS default false; takes effect on new tasks).' },
    startsDeployment: false,
    controllers: ECS_ONLY,
    observedOn: 'service',
  },
  propagateTags: {
    field: {
      type: oneOf(['SERVICE', 'TASK_DEFINITION', 'NONE']),
      default: 'SERVICE',
      doc: "Tags copied to tasks (the reconciler's default SERVICE, the value it has always created services with; ECS's own is NONE).",
    },
    absentMeans: 'NONE',
    startsDeployment: false,
    controllers: ALL,
    observedOn: 'service',
  },
  enableECSManagedTags: {
    field: { type: bool(), default: false, doc: 'ECS adds aws:ecs:clusterName and aws:ecs:serviceName tags to tasks (ECS default false).' },
    startsDeployment: false,
    controllers: ALL,
    observedOn: 'service',
  },
  availabilityZoneRebalancing: {
    field: {
      type: oneOf(['ENABLED', 'DISABLED']),
      default: 'ENABLED',
      doc: 'ECS moves tasks to even out Availability Zones (ECS default for new services ENABLED; managed only when the spec sets it).',
    },
    startsDeployment: false,
    controllers: ECS_ONLY,
    observedOn: 'service',
    comparedOnlyWhenSet: true,
  },
  serviceRegistries: {
    field: { type: list(SERVICE_REGISTRY, { order: 'set', maxItems: 1 }), doc: 'Cloud Map registration (at most one).' },
    startsDeployment: true,
    controllers: ECS_ONLY,
    observedOn: 'service',
  },
  serviceConnectConfiguration: {
    field: { type: SERVICE_CONNECT, doc: 'ECS Service Connect.' },
    startsDeployment: true,
    controllers: ECS_ONLY,
    observedOn: 'primaryDeployment',
  },
  volumeConfigurations: {
    field: { type: list(VOLUME_CONFIGURATION, { order: 'keyed', key: 'name', maxItems: 1 }), doc: 'EBS volumes for task definition volumes with configuredAtLaunch.' },
    startsDeployment: true,
    controllers: ECS_ONLY,
    observedOn: 'primaryDeployment',
  },
} as const satisfies Record<string, ServiceFieldDecl>;

export type ServiceFieldName = keyof typeof SERVICE_FIELDS;
export const SERVICE_FIELD_NAMES = Object.keys(SERVICE_FIELDS) as ServiceFieldName[];

/** The declared service fields DescribeServices reports at `where` (`observedOn`). */
export type ServiceFieldObservedOn<where extends ServiceFieldDecl['observedOn']> = {
  [K in ServiceFieldName]: (typeof SERVICE_FIELDS)[K]['observedOn'] extends where ? K : never;
}[ServiceFieldName];

/** The declared service fields DescribeServices reports on the service itself. */
export const SERVICE_FIELDS_ON_SERVICE = SERVICE_FIELD_NAMES.filter(
  (name) => SERVICE_FIELDS[name].observedOn === 'service',
) as ServiceFieldObservedOn<'service'>[];

/** The declared service fields DescribeServices reports only on a deployment (read from the PRIMARY one). */
export const SERVICE_FIELDS_ON_DEPLOYMENT = SERVICE_FIELD_NAMES.filter(
  (name) => SERVICE_FIELDS[name].observedOn === 'primaryDeployment',
) as ServiceFieldObservedOn<'primaryDeployment'>[];

/** Fields of the hand-compared part, with the controllers UpdateService may change them for. */
export const CORE_SERVICE_FIELD_CONTROLLERS: Readonly<Record<string, readonly DeploymentControllerType[]>> = {
  desiredCount: ALL,
  taskDefinition: ECS_ONLY,
  capacityProviderStrategy: ECS_ONLY,
  networkConfiguration: ECS_ONLY,
  deploymentConfiguration: ['ECS', 'CODE_DEPLOY'],
  loadBalancers: ECS_ONLY,
};

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
import { type CanonicalValue, type Field, bool, decimal, int, isPlainObject, json, list, map, obj, oneOf, str } from './decl';
import {
  ALARM_NAME_RE,
  ANY_ARN_RE,
  CLOUD_MAP_ARN_RE,
  LAMBDA_FUNCTION_ARN_ALLOWED,
  LAMBDA_FUNCTION_ARN_RE,
  LATTICE_LISTENER_ARN_ALLOWED,
  LATTICE_LISTENER_ARN_RE,
  LATTICE_TARGET_GROUP_ARN_ALLOWED,
  LATTICE_TARGET_GROUP_ARN_RE,
  LISTENER_RULE_ARN_ALLOWED,
  LISTENER_RULE_ARN_RE,
  NAME_RE,
  PORT_NAME_RE,
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

const roleArn = str({ pattern: ROLE_ARN_RE, allowed: ROLE_ARN_ALLOWED });
const targetGroupArn = str({ pattern: TARGET_GROUP_ARN_RE, allowed: TARGET_GROUP_ARN_ALLOWED });

/**
 * The canonical form of an object holding a target group and, in its `advancedConfiguration`, an
 * alternate: the two as an unordered pair (the smaller first). ECS swaps the roles of the two
 * target groups after each successful blue/green, linear or canary deployment (docs/ecs-facts.md
 * §14), so a swap alone is no difference.
 */
function targetGroupPair(value: CanonicalValue): CanonicalValue {
  if (!isPlainObject(value) || !isPlainObject(value.advancedConfiguration)) return value;
  const a = value.targetGroupArn;
  const b = value.advancedConfiguration.alternateTargetGroupArn;
  if (typeof a !== 'string' || typeof b !== 'string' || a <= b) return value;
  return { ...value, targetGroupArn: b, advancedConfiguration: { ...value.advancedConfiguration, alternateTargetGroupArn: a } };
}

/**
 * ECS AdvancedConfiguration of a load balancer (native blue/green, linear and canary deployments):
 * the alternate target group the new revision's tasks register in, the production listener rule
 * ECS shifts, the optional test listener rule, and the role ECS assumes to change them.
 */
export const ADVANCED_CONFIGURATION = obj({
  alternateTargetGroupArn: { type: targetGroupArn, required: true, doc: 'Target group of the new revision during a deployment (ECS swaps it with targetGroupArn after each).' },
  productionListenerRule: { type: str({ pattern: LISTENER_RULE_ARN_RE, allowed: LISTENER_RULE_ARN_ALLOWED }), required: true, doc: 'Listener rule (ALB) or listener (NLB) of production traffic.' },
  testListenerRule: { type: str({ pattern: LISTENER_RULE_ARN_RE, allowed: LISTENER_RULE_ARN_ALLOWED }), doc: 'Listener rule (ALB) or listener (NLB) of test traffic.' },
  roleArn: { type: roleArn, required: true, doc: 'IAM role ECS assumes to change the listener rules and target groups.' },
});

/** ECS LoadBalancer of a service (target group, container and port; advancedConfiguration for native deployments). */
export const LOAD_BALANCER = obj(
  {
    targetGroupArn: { type: targetGroupArn, required: true },
    containerName: { type: containerName, required: true },
    containerPort: { type: int({ min: 1, max: 65535 }), required: true },
    advancedConfiguration: { type: ADVANCED_CONFIGURATION, doc: 'Alternate target group, listener rules and role of a BLUE_GREEN, LINEAR or CANARY deployment.' },
  },
  { canonicalize: targetGroupPair },
);

/** ECS VpcLatticeConfiguration (the VPC Lattice target group a service's tasks register in). */
export const VPC_LATTICE_CONFIGURATION = obj(
  {
    roleArn: { type: roleArn, required: true, doc: 'ECS infrastructure role that manages the Lattice registrations.' },
    targetGroupArn: { type: str({ pattern: LATTICE_TARGET_GROUP_ARN_RE, allowed: LATTICE_TARGET_GROUP_ARN_ALLOWED }), required: true },
    portName: {
      type: str({ pattern: PORT_NAME_RE, allowed: 'must name a port mapping of the task (lower-case letters, numbers, hyphens)' }),
      required: true,
    },
    advancedConfiguration: obj({
      alternateTargetGroupArn: { type: str({ pattern: LATTICE_TARGET_GROUP_ARN_RE, allowed: LATTICE_TARGET_GROUP_ARN_ALLOWED }), required: true },
      productionListenerRule: { type: str({ pattern: LATTICE_LISTENER_ARN_RE, allowed: LATTICE_LISTENER_ARN_ALLOWED }), required: true },
      testListenerRule: str({ pattern: LATTICE_LISTENER_ARN_RE, allowed: LATTICE_LISTENER_ARN_ALLOWED }),
    }),
  },
  { canonicalize: targetGroupPair },
);

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
      clientAliases: list(
        obj({
          port: { type: int({ min: 1, max: 65535 }), required: true },
          dnsName: str(),
          testTrafficRules: {
            type: obj({
              header: {
                type: obj({ name: { type: str({ minLength: 1 }), required: true }, value: obj({ exact: { type: str(), required: true } }) }),
                required: true,
              },
            }),
            doc: 'Requests with this header go to the new revision as test traffic during a native deployment.',
          },
        }),
        { order: 'set' },
      ),
      ingressPortOverride: int({ min: 1, max: 65535 }),
      timeout: obj({ idleTimeoutSeconds: int({ min: 0 }), perRequestTimeoutSeconds: int({ min: 0 }) }),
      tls: obj({
        issuerCertificateAuthority: { type: obj({ awsPcaAuthorityArn: str({ pattern: ANY_ARN_RE, allowed: 'must be an ARN' }) }), required: true },
        kmsKey: str(),
        roleArn,
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
    roleArn: { type: roleArn, required: true },
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

/** ECS DeploymentStrategy (`deploymentConfiguration.strategy`). */
export const DEPLOYMENT_STRATEGIES = ['ROLLING', 'BLUE_GREEN', 'LINEAR', 'CANARY'] as const;
export type DeploymentStrategy = (typeof DEPLOYMENT_STRATEGIES)[number];

/** ECS DeploymentLifecycleHookStage: where a lifecycle hook runs. */
export const LIFECYCLE_HOOK_STAGES = [
  'RECONCILE_SERVICE',
  'PRE_SCALE_UP',
  'POST_SCALE_UP',
  'TEST_TRAFFIC_SHIFT',
  'POST_TEST_TRAFFIC_SHIFT',
  'PRE_PRODUCTION_TRAFFIC_SHIFT',
  'PRODUCTION_TRAFFIC_SHIFT',
  'POST_PRODUCTION_TRAFFIC_SHIFT',
] as const;

/** Stages a PAUSE hook may not name (a traffic shift is not a point where ECS can wait; docs/ecs-facts.md §14). */
export const PAUSE_HOOK_REFUSED_STAGES: readonly string[] = ['TEST_TRAFFIC_SHIFT', 'PRODUCTION_TRAFFIC_SHIFT'];

const minutes = (max: number, min = 0) => int({ min, max, unit: 'minutes' });

/** ECS LinearConfiguration (strategy LINEAR): ECS's defaults 10.0 percent a step, 6 minutes between steps. */
export const LINEAR_CONFIGURATION = obj({
  stepPercent: { type: decimal({ min: 3, max: 100, step: 0.1, unit: 'percent' }), default: 10, doc: 'Percent of production traffic shifted a step (ECS default 10.0).' },
  stepBakeTimeInMinutes: { type: minutes(1440), default: 6, doc: 'Minutes between steps (ECS default 6).' },
});

/** ECS CanaryConfiguration (strategy CANARY): ECS's defaults 5.0 percent, 10 minutes. */
export const CANARY_CONFIGURATION = obj({
  canaryPercent: { type: decimal({ min: 0.1, max: 100, step: 0.1, unit: 'percent' }), default: 5, doc: 'Percent of production traffic shifted first (ECS default 5.0).' },
  canaryBakeTimeInMinutes: { type: minutes(1440), default: 10, doc: 'Minutes before the rest is shifted (ECS default 10).' },
});

/** ECS DeploymentLifecycleHook: a Lambda function ECS invokes, or a pause, at the stages named. */
export const LIFECYCLE_HOOK = obj({
  targetType: { type: oneOf(['AWS_LAMBDA', 'PAUSE']), default: 'AWS_LAMBDA', doc: 'AWS_LAMBDA (ECS default) invokes hookTargetArn; PAUSE waits for ecsr continue.' },
  hookTargetArn: { type: str({ pattern: LAMBDA_FUNCTION_ARN_RE, allowed: LAMBDA_FUNCTION_ARN_ALLOWED }), doc: 'The Lambda function (AWS_LAMBDA hooks).' },
  roleArn: { type: roleArn, doc: 'IAM role ECS assumes to invoke the function (AWS_LAMBDA hooks).' },
  lifecycleStages: { type: list(oneOf(LIFECYCLE_HOOK_STAGES), { order: 'set', minItems: 1 }), required: true },
  hookDetails: { type: json(), doc: 'Any JSON ECS passes to the function on each invocation.' },
  timeoutConfiguration: obj({
    timeoutInMinutes: { type: minutes(20160, 1), default: 1440, doc: 'Minutes ECS waits for the hook (ECS default 1440).' },
    action: { type: oneOf(['ROLLBACK', 'CONTINUE']), default: 'ROLLBACK', doc: 'What ECS does when the hook times out (ECS default ROLLBACK).' },
  }),
});

/**
 * ECS DeploymentCircuitBreaker with its thresholds (ECS's defaults: BOUNDED_PERCENT 50, the count
 * reset when a task turns healthy).
 */
export const CIRCUIT_BREAKER = obj({
  enable: { type: bool(), required: true },
  rollback: { type: bool(), required: true },
  thresholdConfiguration: {
    type: obj({
      type: { type: oneOf(['COUNT', 'BOUNDED_PERCENT', 'UNBOUNDED_PERCENT']), required: true },
      value: { type: int({ min: 0 }), required: true },
    }),
    default: { type: 'BOUNDED_PERCENT', value: 50 },
    doc: 'Failed tasks tolerated: COUNT, or a percent of desiredCount (ECS default BOUNDED_PERCENT 50).',
  },
  resetOnHealthyTask: { type: bool(), default: true },
}, {
  // rollback needs enable (deployment-rules.ts says so to the parser).
  jsonSchema: { if: { required: ['rollback'], properties: { rollback: { const: true } } }, then: { properties: { enable: { const: true } } } },
});

/** ECS DeploymentEarlySuccessCriteria (rolling deployments only). */
export const EARLY_SUCCESS_CRITERIA = obj({
  enable: { type: bool(), required: true },
  healthyPercent: int({ min: 0, max: 100, unit: 'percent of desiredCount' }),
  sourceServiceRevisionCleanup: oneOf(['BLOCKING', 'DEFERRED']),
});

/** The members of a deployment configuration after the circuit breaker, the same in both spellings. */
const DEPLOYMENT_STRATEGY_MEMBERS = {
  alarms: { type: DEPLOYMENT_ALARMS, doc: 'CloudWatch alarms that fail a deployment (ECS deploymentConfiguration.alarms).' },
  strategy: { type: oneOf(DEPLOYMENT_STRATEGIES), default: 'ROLLING', doc: 'ROLLING (ECS default), BLUE_GREEN, LINEAR or CANARY.' },
  bakeTimeInMinutes: { type: minutes(1440), default: 0, doc: 'Minutes both revisions run after the production traffic shift (ECS default 0).' },
  linearConfiguration: { type: LINEAR_CONFIGURATION, doc: 'Strategy LINEAR only.' },
  canaryConfiguration: { type: CANARY_CONFIGURATION, doc: 'Strategy CANARY only.' },
  lifecycleHooks: { type: list(LIFECYCLE_HOOK, { order: 'set' }), doc: 'Lambda functions or pauses at lifecycle stages (BLUE_GREEN, LINEAR, CANARY).' },
  earlySuccessCriteria: { type: EARLY_SUCCESS_CRITERIA, doc: 'Strategy ROLLING only: the deployment succeeds once this percent is healthy.' },
} as const;

const minimumHealthyPercent = { type: int({ min: 0, max: 100, unit: 'percent of desiredCount' }), default: 100, doc: 'Percent of desiredCount kept RUNNING during a deployment (ECS default 100).' } as const;
const maximumPercent = { type: int({ min: 100, max: 200, unit: 'percent of desiredCount' }), default: 200, doc: 'Upper limit of tasks during a deployment, percent of desiredCount (ECS default 200).' } as const;

/**
 * ECS DeploymentConfiguration, in ECS's shape: what the comparison walks on both sides, what
 * UpdateService is sent, and the spec's `deploymentConfiguration` spelling. A member equal to its
 * declared default is the same as its absence, so what DescribeServices answers for a service that
 * never set them (`strategy: ROLLING`, `bakeTimeInMinutes: 0`, docs/ecs-facts.md §13) is no
 * difference and import writes nothing for it.
 */
export const DEPLOYMENT_CONFIGURATION = obj({
  minimumHealthyPercent,
  maximumPercent,
  deploymentCircuitBreaker: { type: CIRCUIT_BREAKER, doc: 'Fail a deployment that cannot reach steady state, and roll back.' },
  ...DEPLOYMENT_STRATEGY_MEMBERS,
});

/**
 * The spec's `deployment` attribute: {@link DEPLOYMENT_CONFIGURATION} with the circuit breaker
 * named `circuitBreaker` (the name the spec has always had).
 */
export const DEPLOYMENT = obj({
  minimumHealthyPercent,
  maximumPercent,
  circuitBreaker: { type: CIRCUIT_BREAKER, doc: 'ECS deployment circuit breaker: fail a deployment that cannot reach steady state, and roll back.' },
  ...DEPLOYMENT_STRATEGY_MEMBERS,
});

/**
 * What DescribeServices answers inside `deploymentConfiguration` for a service that never set
 * these fields (docs/ecs-facts.md §13): the declared defaults of `strategy` and
 * `bakeTimeInMinutes`, which compare equal to their absence.
 */
export const DEPLOYMENT_CONFIGURATION_NEVER_SET: Readonly<Record<string, unknown>> = {
  strategy: DEPLOYMENT_CONFIGURATION.fields.strategy.default,
  bakeTimeInMinutes: DEPLOYMENT_CONFIGURATION.fields.bakeTimeInMinutes.default,
};

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
  vpcLatticeConfigurations: {
    field: {
      type: list(VPC_LATTICE_CONFIGURATION, { order: 'set' }),
      doc: 'VPC Lattice target groups the tasks register in, each with the ECS infrastructure role and the port name.',
    },
    startsDeployment: true,
    controllers: ECS_ONLY,
    // Not a member of Service: DescribeServices reports it per deployment (and on the service revision).
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

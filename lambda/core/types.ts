/**
 * The shared vocabulary of the reconciler core: the desired spec, the observed state of ECS, the
 * plan's actions and the status written back per service.
 *
 * Everything here is plain data. The core never imports `@aws-sdk/*`; the shapes that have an ECS
 * counterpart use ECS's own field names (Amazon ECS API reference, DescribeServices /
 * DescribeTaskDefinition / RegisterTaskDefinition), so an adapter maps SDK output in by copying.
 * The shapes the vocabulary declares (`./vocab/`) are not restated here: their types are
 * {@link Infer} of the declaration, so a field declared once is typed everywhere.
 */
import type { Described, Infer } from './vocab/decl';
import type {
  CAPACITY_PROVIDER_STRATEGY_ITEM,
  DEPLOYMENT_ALARMS,
  ADVANCED_CONFIGURATION,
  DEPLOYMENT,
  DEPLOYMENT_CONFIGURATION,
  LOAD_BALANCER,
  SERVICE_FIELDS,
  ServiceFieldObservedOn,
} from './vocab/service';
import type { CONTAINER, EPHEMERAL_STORAGE, PROXY_CONFIGURATION, TASK_DEFINITION, VOLUME } from './vocab/task';

// ---------------------------------------------------------------------------------------------
// The declared service fields, typed from their declarations
// ---------------------------------------------------------------------------------------------

type DeclaredServiceFields = typeof SERVICE_FIELDS;

/** Each declared service field's value (`./vocab/service.ts`), by name. */
export type ServiceFieldValues = {
  -readonly [K in keyof DeclaredServiceFields]: Infer<DeclaredServiceFields[K]['field']['type']>;
};

/** Each declared service field as DescribeServices may answer it ({@link Described}), by name. */
export type DescribedServiceFields = {
  -readonly [K in keyof DeclaredServiceFields]: Described<DeclaredServiceFields[K]['field']['type']>;
};

/** The declared service fields DescribeServices reports at `where`. */
export type ServiceFieldsObservedOn<where extends 'service' | 'primaryDeployment'> = ServiceFieldObservedOn<where>;

// ---------------------------------------------------------------------------------------------
// Keys
// ---------------------------------------------------------------------------------------------

/** The DynamoDB key of a spec item and the identity of an ECS service. */
export interface ServiceKey {
  /** ECS cluster name (not ARN). */
  readonly cluster: string;
  /** ECS service name. */
  readonly service: string;
}

/** `cluster/service`, the key used for maps of per-service data throughout the core. */
export type ServiceId = string;

export function serviceId(key: ServiceKey): ServiceId {
  return `${key.cluster}/${key.service}`;
}

// ---------------------------------------------------------------------------------------------
// Desired state: the validated spec
// ---------------------------------------------------------------------------------------------

export type CapacityProvider = 'FARGATE' | 'FARGATE_SPOT';
export type CpuArchitecture = 'X86_64' | 'ARM64';
/** The operating system families Fargate runs (`runtimePlatform.operatingSystemFamily`). */
export type FargateOperatingSystemFamily = 'LINUX' | 'WINDOWS_SERVER_2019_FULL' | 'WINDOWS_SERVER_2019_CORE' | 'WINDOWS_SERVER_2022_FULL' | 'WINDOWS_SERVER_2022_CORE';

/** Container health check, mapped to ECS `healthCheck` (times in seconds). */
export interface HealthCheckSpec {
  /** e.g. `["CMD-SHELL", "curl -f http://localhost/ || exit 1"]`. */
  readonly command: string[];
  readonly intervalSeconds?: number;
  readonly timeoutSeconds?: number;
  readonly retries?: number;
  readonly startPeriodSeconds?: number;
}

export interface LoadBalancerSpec {
  readonly targetGroupArn: string;
  readonly containerPort: number;
  /** Alternate target group, listener rules and role of a native deployment (`ADVANCED_CONFIGURATION`). */
  readonly advancedConfiguration?: Infer<typeof ADVANCED_CONFIGURATION>;
}

/**
 * The spec's `deployment` (`DEPLOYMENT`): ECS deploymentConfiguration with the circuit breaker named
 * `circuitBreaker`; minimumHealthyPercent (ECS default 100) and maximumPercent (200) in percent of
 * desiredCount, the strategy (ROLLING, BLUE_GREEN, LINEAR, CANARY), bake times in minutes,
 * lifecycle hooks and alarms.
 */
export type DeploymentSpec = Infer<typeof DEPLOYMENT>;

/** ECS DeploymentAlarms (`DEPLOYMENT_ALARMS`). */
export type DeploymentAlarms = Infer<typeof DEPLOYMENT_ALARMS>;

/** ECS LoadBalancer of a service: a target group and the container and port it sends to (`LOAD_BALANCER`). */
export type ServiceLoadBalancer = Infer<typeof LOAD_BALANCER>;

/** ECS CapacityProviderStrategyItem (Fargate providers, `CAPACITY_PROVIDER_STRATEGY_ITEM`). */
export type CapacityProviderStrategyItem = Infer<typeof CAPACITY_PROVIDER_STRATEGY_ITEM>;

/** A container of a spec: ECS ContainerDefinition as Fargate takes it (`CONTAINER`). */
export type ContainerSpec = Infer<typeof CONTAINER>;

/**
 * The parts of a spec that speak ECS directly: ECS's own field names and shapes, as
 * `aws ecs describe-task-definition` / `describe-services` print them, declared in
 * `lambda/core/vocab/`. All optional: a spec without them is the shorthand alone.
 */
export interface EcsSpecFields extends Readonly<Partial<ServiceFieldValues>> {
  /** Task definition family; undefined means `<cluster>-<service>`. */
  readonly family?: string;
  /** Containers (ECS ContainerDefinition), after the shorthand's container when `image` is set. */
  readonly containers?: ContainerSpec[];
  /** Task volumes (ECS Volume: EFS, bind mount, EBS configuredAtLaunch). */
  readonly volumes?: Infer<typeof VOLUME>[];
  readonly ephemeralStorage?: Infer<typeof EPHEMERAL_STORAGE>;
  readonly pidMode?: Infer<typeof TASK_DEFINITION.fields.pidMode.type>;
  readonly proxyConfiguration?: Infer<typeof PROXY_CONFIGURATION>;
  readonly enableFaultInjection?: boolean;
  /** `FARGATE`: the service uses the launch type instead of a capacity provider strategy. */
  readonly launchType?: 'FARGATE';
  readonly capacityProviderStrategy?: CapacityProviderStrategyItem[];
  readonly loadBalancers?: ServiceLoadBalancer[];
}

/**
 * A valid, normalized service spec: one DynamoDB item (partition key `cluster`, sort key
 * `service`). Defaults are already applied by the parser (see `lambda/core/spec.ts`).
 */
export interface ServiceSpec extends ServiceKey, EcsSpecFields {
  /**
   * Image of the shorthand container (the container named after the service), e.g.
   * `public.ecr.aws/nginx/nginx:1.27`; `''` when the spec has no shorthand container (only
   * `containers`, or `state: absent`).
   */
  readonly image: string;
  /** Tasks wanted. Undefined only when `autoscaled` is true. */
  readonly desiredCount?: number;
  /** Task CPU in vCPU units (1024 = 1 vCPU); one of Fargate's valid values. */
  readonly cpu: number;
  /** Task memory in MiB; valid for `cpu` on Fargate. */
  readonly memory: number;
  /** TCP port the container listens on. */
  readonly containerPort?: number;
  readonly environment: Readonly<Record<string, string>>;
  /** Environment variable name -> SSM parameter or Secrets Manager ARN. */
  readonly secrets: Readonly<Record<string, string>>;
  readonly command?: string[];
  /** awsvpc subnets; undefined means "use the reconciler's defaults". */
  readonly subnets?: string[];
  /** awsvpc security groups; undefined means "use the reconciler's defaults". */
  readonly securityGroups?: string[];
  /** Undefined means the reconciler's default (`ReconcilerDefaults.assignPublicIp`, false). */
  readonly assignPublicIp?: boolean;
  readonly capacityProvider: CapacityProvider;
  readonly cpuArchitecture: CpuArchitecture;
  /** Undefined means LINUX (ECS's default); the parser never keeps an explicit LINUX. */
  readonly operatingSystemFamily?: FargateOperatingSystemFamily;
  readonly taskRoleArn?: string;
  readonly executionRoleArn?: string;
  readonly healthCheck?: HealthCheckSpec;
  readonly loadBalancer?: LoadBalancerSpec;
  readonly deployment?: DeploymentSpec;
  /** `absent` means: delete this service. */
  readonly state: 'present' | 'absent';
  /** Take ownership of an existing service of this name. */
  readonly adopt: boolean;
  /** Application Auto Scaling owns desiredCount: it is never sent. */
  readonly autoscaled: boolean;
  /**
   * Observe-only: drift and lag are reported, nothing is created, updated, tagged or deleted.
   * Undefined follows the cluster (`PlanOptions.observeOnlyClusters`). Not part of the spec hash.
   */
  readonly observeOnly?: boolean;
  /**
   * Fields another controller owns, left as they are live (`./ignore.ts`): a service field, a
   * task definition field, `taskDefinition`, or `containerDefinitions[NAME].FIELD`.
   */
  readonly ignore?: string[];
  /**
   * Seconds running may lag desired before the service counts as lagging; undefined means the
   * reconciler's default (`PlanOptions.defaultLagGraceSeconds`, 300 unless configured).
   */
  readonly lagGraceSeconds?: number;
  readonly tags: Readonly<Record<string, string>>;
}

/** One problem with one attribute of a spec item. */
export interface SpecError {
  /** Attribute path, e.g. `healthCheck.retries` or `environment.MY VAR`. */
  readonly path: string;
  /** The offending value, shortened for display (at most ~80 characters). */
  readonly value: string;
  /** What is wrong and what is allowed. */
  readonly message: string;
}

/** Result of parsing one spec item; parsing never throws. */
export type SpecParseResult =
  | {
      readonly ok: true;
      readonly key: ServiceKey;
      readonly spec: ServiceSpec;
      /** Stable content hash of the spec (hex), independent of key order. */
      readonly hash: string;
    }
  | {
      readonly ok: false;
      /** Null only when the item has no usable `cluster` / `service` strings. */
      readonly key: ServiceKey | null;
      readonly errors: SpecError[];
    };

// ---------------------------------------------------------------------------------------------
// Task definitions (ECS shapes, the subset the reconciler renders and compares)
// ---------------------------------------------------------------------------------------------

export interface KeyValuePair {
  name?: string;
  value?: string;
}

export interface PortMapping {
  containerPort?: number;
  hostPort?: number;
  protocol?: string;
  name?: string;
  appProtocol?: string;
}

export interface ContainerDefinition {
  name?: string;
  image?: string;
  essential?: boolean;
  cpu?: number;
  memory?: number;
  memoryReservation?: number;
  command?: string[];
  entryPoint?: string[];
  environment?: KeyValuePair[];
  secrets?: { name?: string; valueFrom?: string }[];
  portMappings?: PortMapping[];
  mountPoints?: unknown[];
  volumesFrom?: unknown[];
  systemControls?: unknown[];
  healthCheck?: {
    command?: string[];
    interval?: number;
    timeout?: number;
    retries?: number;
    startPeriod?: number;
  };
  logConfiguration?: {
    logDriver?: string;
    options?: Record<string, string>;
    secretOptions?: unknown[];
  };
  [extra: string]: unknown;
}

/**
 * A task definition as RegisterTaskDefinition takes it, or as DescribeTaskDefinition returns it
 * (then with the server-only fields set). ECS field names.
 */
export interface TaskDefinition {
  family?: string;
  taskRoleArn?: string;
  executionRoleArn?: string;
  networkMode?: string;
  containerDefinitions?: ContainerDefinition[];
  requiresCompatibilities?: string[];
  /** vCPU units; ECS answers a numeric string ("256"). */
  cpu?: string;
  /** MiB; ECS answers a numeric string ("512"). */
  memory?: string;
  runtimePlatform?: { cpuArchitecture?: string; operatingSystemFamily?: string };
  volumes?: unknown[];
  placementConstraints?: unknown[];
  tags?: { key?: string; value?: string }[];
  // Server-only fields (DescribeTaskDefinition).
  taskDefinitionArn?: string;
  revision?: number;
  status?: string;
  requiresAttributes?: unknown[];
  compatibilities?: string[];
  registeredAt?: Date | string | number;
  registeredBy?: string;
  deregisteredAt?: Date | string | number;
  [extra: string]: unknown;
}

// ---------------------------------------------------------------------------------------------
// Observed state
// ---------------------------------------------------------------------------------------------

export type RolloutState = 'IN_PROGRESS' | 'COMPLETED' | 'FAILED';

/** ECS `Deployment` (DescribeServices `services[].deployments[]`): its state. */
export interface ObservedDeploymentState {
  id: string;
  /** PRIMARY is the newest; ACTIVE are older ones still draining; INACTIVE are done. */
  status: 'PRIMARY' | 'ACTIVE' | 'INACTIVE' | string;
  taskDefinition: string;
  desiredCount: number;
  runningCount: number;
  pendingCount: number;
  failedTasks: number;
  rolloutState?: RolloutState;
  rolloutStateReason?: string;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * An ECS `Deployment`: DescribeServices reports some declared service fields per deployment only
 * (Service Connect, EBS volumes: `observedOn: 'primaryDeployment'`), typed from their declarations.
 */
export type ObservedDeployment = ObservedDeploymentState & Partial<Pick<DescribedServiceFields, ServiceFieldsObservedOn<'primaryDeployment'>>>;

/** ECS `ServiceEvent`. */
export interface ObservedEvent {
  id: string;
  createdAt: Date;
  message: string;
}

/** A STOPPED task's reason, from DescribeTasks (docs/ecs-facts.md §5). */
export interface StoppedTask {
  taskArn: string;
  taskDefinitionArn?: string;
  /** TaskFailedToStart, EssentialContainerExited, UserInitiated, SpotInterruption, ... */
  stopCode?: string;
  stoppedReason?: string;
  stoppedAt?: Date;
  containers: { name: string; reason?: string; exitCode?: number; lastStatus?: string }[];
}

/**
 * One entry of a service's deployment history: a ListServiceDeployments `ServiceDeploymentBrief`
 * plus the task definition of its target service revision (DescribeServiceRevisions). ECS keeps
 * this history after `deployments[]` has forgotten a failed deployment, so a rollback is still
 * seen there when no status remembers it (Amazon ECS Developer Guide, "View service history using
 * Amazon ECS service deployments").
 */
export interface ObservedServiceDeployment {
  serviceDeploymentArn: string;
  /**
   * ECS ServiceDeploymentStatus: PENDING, IN_PROGRESS, SUCCESSFUL, STOPPED, STOP_REQUESTED,
   * ROLLBACK_REQUESTED, ROLLBACK_IN_PROGRESS, ROLLBACK_SUCCESSFUL, ROLLBACK_FAILED.
   */
  status: string;
  statusReason?: string;
  createdAt: Date;
  finishedAt?: Date;
  /** Task definition ARN of the target service revision; undefined when it could not be described. */
  targetTaskDefinition?: string;
  /**
   * The target service revision's configuration (DescribeServiceRevisions), undefined when it
   * could not be described: what tells a deployment of service settings alone (subnets, security
   * groups, load balancers, capacity providers...) from another one of the same task definition.
   */
  targetRevision?: ObservedServiceRevision;
  /**
   * What DescribeServiceDeployments answered for this deployment, read only for an ongoing one
   * and for the newest one that was rolled back; undefined when not read.
   */
  detail?: ObservedServiceDeploymentDetail;
}

/**
 * A service deployment as DescribeServiceDeployments answers it (Amazon ECS API reference,
 * "ServiceDeployment"): the strategy it runs, its lifecycle stage, the traffic its target revision
 * is asked to take, the hooks of its current stage, and why it was rolled back.
 */
export interface ObservedServiceDeploymentDetail {
  /** `deploymentConfiguration.strategy`: ROLLING, BLUE_GREEN, LINEAR, CANARY (an open string). */
  strategy?: string;
  /** RECONCILE_SERVICE ... BAKE_TIME, CLEAN_UP (an open string). */
  lifecycleStage?: string;
  /** When ECS last updated the deployment (the start of its current stage or traffic step, as far as ECS says). */
  updatedAt?: Date;
  /** Percent of production traffic the target revision is asked to take (0-100). */
  productionTrafficPercent?: number;
  /** Percent of test traffic the target revision is asked to take (0-100). */
  testTrafficPercent?: number;
  /** `deploymentConfiguration.bakeTimeInMinutes`. */
  bakeTimeInMinutes?: number;
  /** Minutes between traffic steps: `canaryBakeTimeInMinutes` or `stepBakeTimeInMinutes`. */
  stepBakeTimeInMinutes?: number;
  /** `lifecycleHookDetails[]`: the hooks of the current stage. */
  hooks?: { hookId?: string; targetType?: string; targetArn?: string; status?: string; expiresAt?: Date }[];
  /** `rollback.reason`. */
  rollbackReason?: string;
  /** `alarms.triggeredAlarmNames`. */
  triggeredAlarms?: string[];
  /** `deploymentCircuitBreaker` when ECS reports it TRIGGERED. */
  circuitBreaker?: { status?: string; failureCount?: number; threshold?: number };
}

/**
 * What an ECS service revision fixes for one deployment (Amazon ECS API reference,
 * "ServiceRevision"), in the shapes of {@link ObservedService}; Service Connect and EBS volumes
 * as DescribeServices reports them per deployment.
 */
export type ObservedServiceRevision = Pick<
  ObservedService,
  'taskDefinition' | 'launchType' | 'capacityProviderStrategy' | 'platformVersion' | 'networkConfiguration' | 'loadBalancers' | 'serviceRegistries'
> &
  Partial<Pick<DescribedServiceFields, ServiceFieldsObservedOn<'primaryDeployment'>>>;

/**
 * One ECS service as DescribeServices (include TAGS) returns it, ECS field names; the declared
 * service fields it reports on the service are typed from their declarations.
 */
export interface ObservedService extends Partial<Pick<DescribedServiceFields, ServiceFieldsObservedOn<'service'>>> {
  serviceArn: string;
  serviceName: string;
  clusterArn: string;
  status: 'ACTIVE' | 'DRAINING' | 'INACTIVE' | string;
  desiredCount: number;
  runningCount: number;
  pendingCount: number;
  /** Task definition ARN of the service (the PRIMARY deployment's). */
  taskDefinition: string;
  launchType?: string;
  capacityProviderStrategy?: { capacityProvider: string; weight?: number; base?: number }[];
  /** `ECS` for a service ECS manages itself (Express Mode); absent or `CUSTOMER` otherwise. */
  resourceManagementType?: string;
  platformVersion?: string;
  deploymentConfiguration?: {
    minimumHealthyPercent?: number;
    maximumPercent?: number;
    deploymentCircuitBreaker?: { enable: boolean; rollback: boolean };
    alarms?: { alarmNames?: string[]; enable?: boolean; rollback?: boolean };
    /**
     * The members the spec does not manage (strategy, bakeTimeInMinutes, lifecycleHooks, linear
     * and canary configuration, ...), as DescribeServices answered them, and those of the circuit
     * breaker beyond enable and rollback (thresholdConfiguration, resetOnHealthyTask): an
     * UpdateService that sends deploymentConfiguration carries them over, never strips them.
     * Read only when an UpdateService is built.
     */
    unmanaged?: Record<string, unknown>;
    unmanagedCircuitBreaker?: Record<string, unknown>;
  };
  /** Absent means ECS (the rolling deployment controller). */
  deploymentController?: { type?: string };
  networkConfiguration?: {
    awsvpcConfiguration?: {
      subnets?: string[];
      securityGroups?: string[];
      assignPublicIp?: 'ENABLED' | 'DISABLED' | string;
    };
  };
  /** `advancedConfiguration` (native blue/green) is not managed: carried over when loadBalancers are sent. */
  loadBalancers?: { targetGroupArn?: string; containerName?: string; containerPort?: number; advancedConfiguration?: Record<string, unknown> }[];
  deployments: ObservedDeployment[];
  /** Newest first, as ECS returns them. */
  events: ObservedEvent[];
  /** Tags as a map (ECS returns `[{key, value}]`). */
  tags: Record<string, string>;
  createdAt?: Date;
  /** Only filled for services whose running count lags (the observer's choice, docs/ecs-facts.md §5). */
  stoppedTasks?: StoppedTask[];
  /**
   * The service's newest service deployments, newest first; read only for services whose spec
   * renders another task definition than the live one and whose status does not already record
   * the failure ({@link Plan.deploymentHistoryWanted}); undefined when not read.
   */
  serviceDeployments?: ObservedServiceDeployment[];
  /** Why the deployment history was wanted but could not be read this pass (e.g. AccessDenied). */
  serviceDeploymentsError?: string;
  /** `Service.currentServiceDeployment`: the ARN of the service's current service deployment, when ECS names one. */
  currentServiceDeployment?: string;
}

/** What the observer saw of one cluster. */
export interface ObservedCluster {
  cluster: string;
  /** False when any list/describe call for this cluster failed: never prune on a partial read. */
  complete: boolean;
  /** Why the read is partial, when it is. */
  error?: string;
  /**
   * Best-effort reads that failed without making the observation partial (stopped-task reasons
   * of a lagging service: that service's `stoppedTasks` is then undefined). The pass reports them
   * in its summary's `errors`.
   */
  warnings?: string[];
  /** False when the cluster does not exist (ClusterNotFoundException). */
  exists: boolean;
  /**
   * Set when the cluster's reads were refused, not merely cut short: IAM answered AccessDenied to
   * ListServices or DescribeServices (reason `ClusterAccessDenied`), or the target's role could
   * not be assumed (reason `TargetUnreachable`). A later pass meets the same answer until a person
   * acts, so every spec of the cluster that was not read gets a status saying so (never a remembered
   * `Converged`). The message is AWS's. Nothing is pruned (`complete` is false).
   */
  refused?: { reason: string; message: string };
  /** By service name; includes DRAINING services named by specs. */
  services: Record<string, ObservedService>;
  /**
   * Names ECS answered for this pass (described, or `MISSING`), when the cluster was read only in
   * part (`complete: false`): a name here that is absent from `services` is known not to exist, so
   * its spec may be created; any other name was not read. Absent: only `complete` tells.
   */
  described?: ReadonlySet<string>;
}

export interface ObservedState {
  clusters: Record<string, ObservedCluster>;
  /** Described task definitions by ARN (revisions are immutable). */
  taskDefinitions: Record<string, TaskDefinition>;
  /**
   * Task definition ARNs in use that this pass did not describe because its time for observation
   * ran out (not a failure: a later pass describes them). Absent means none.
   */
  taskDefinitionsPending?: string[];
  /**
   * ECS's clock minus the reconciler's, in ms (from ECS's `Date` headers); absent or 0 when they
   * agree or it is unknown. ECS's timestamps are read in the reconciler's time with it.
   */
  ecsClockOffsetMs?: number;
}

// ---------------------------------------------------------------------------------------------
// Status (written to the item's `status` attribute; also the planner's memory between passes)
// ---------------------------------------------------------------------------------------------

export type Phase =
  | 'Pending'
  | 'Progressing'
  | 'Converged'
  | 'Degraded'
  | 'Invalid'
  | 'Blocked'
  | 'Deleting'
  | 'Deleted';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** Kubernetes-style condition. `lastTransitionTime` is kept while `status` does not change. */
export interface Condition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  /** ISO 8601. */
  lastTransitionTime: string;
}

export interface ServiceStatus {
  phase: Phase;
  conditions: Condition[];
  /** Hash of the spec this status reflects (observed generation). */
  specHash?: string;
  /** Tasks (live desiredCount for autoscaled services). */
  desiredCount: number;
  runningCount: number;
  pendingCount: number;
  /** ISO 8601 time since when running < desired; absent when not lagging. */
  laggingSince?: string;
  /** True when the lag has lasted longer than `lagGraceSeconds`. */
  lagBeyondGrace: boolean;
  /** Best available explanation: latest stop reason or service event. */
  reason?: string;
  /**
   * Spec hash ECS was last made to match (the planner sets it when it plans a create or rollout
   * for the hash; the pass reverts it when that action fails) or found to match (no difference
   * left). Same hash + live difference = drift; different hash = rollout.
   */
  lastAppliedSpecHash?: string;
  /** Spec hash whose rollout ended FAILED; not re-applied until the spec changes. */
  failedSpecHash?: string;
  /**
   * ECS service deployment ARN of the rollback that `failedSpecHash` was blamed on, when the
   * deployment history showed it. A later spec with the same task definition is a retry as long
   * as no newer rollback of it shows in the history.
   */
  failedServiceDeploymentArn?: string;
  /**
   * Id of the PRIMARY deployment seen running the desired task definition after the spec hash
   * was applied (cleared when a new rollout is planned). A later PRIMARY with another id and an
   * older task definition, while that deployment had not COMPLETED, is a rollback (docs/ecs-facts.md §4).
   */
  appliedDeploymentId?: string;
  /**
   * rolloutState of the deployment `appliedDeploymentId` at the last observation. Once COMPLETED,
   * a later change of the live task definition is drift, not a circuit-breaker rollback (ECS rolls
   * back only a deployment that is still in progress, docs/ecs-facts.md §4).
   */
  appliedRolloutState?: RolloutState;
  /**
   * Task definition ARN the service ran when the rollout of `lastAppliedSpecHash` was planned
   * (kept from the earlier rollout while that one had not COMPLETED); absent after a create, which
   * has no earlier deployment to return to ({@link firstRollout}). ECS's circuit breaker rolls back
   * to the last COMPLETED deployment (docs/ecs-facts.md §4): a new PRIMARY on any other task definition is
   * a person's change (drift), not a rollback. Absent in statuses written before it existed.
   */
  rolloutFromTaskDefinitionArn?: string;
  /**
   * `true` while the rollout of `lastAppliedSpecHash` is the service's first (CreateService, and a
   * rollout planned before that one COMPLETED): there is no earlier deployment for ECS to roll
   * back to, so no new PRIMARY is a rollback. Statuses written before it recorded this as
   * `rolloutFromTaskDefinitionArn: ""`, which is read as `firstRollout: true`.
   */
  firstRollout?: true;
  /**
   * `true` when the service is in observe-only mode (the spec's `observeOnly`, or its cluster in
   * the reconciler's observe-only clusters): reported, never changed.
   */
  observeOnly?: true;
  /**
   * In observe-only mode, what a pass would change and did not, one line per difference (e.g.
   * `desiredCount: 5 -> 3`, `service: absent -> created`); absent when nothing differs.
   */
  observedDrift?: string[];
  /** ISO time of the pass that recorded `drift`. */
  driftCorrectedAt?: string;
  /** Task definition ARN live at the last observation. */
  taskDefinitionArn?: string;
  /** Drift corrected by the last pass that corrected any, e.g. `desiredCount 5 -> 3`. */
  drift?: string[];
  /**
   * Last action applied to this service, written by the pass after applying (the planner only
   * carries it over from the remembered status).
   */
  lastAction?: { type: ActionType; at: string; summary: string; error?: string };
  /** Reason text -> ISO time first seen; stopped tasks vanish after ~1 hour (docs/ecs-facts.md §5). */
  reasonsFirstSeen?: Record<string, string>;
  /**
   * The last refusal of an action for this spec: ECS (or IAM in front of it) answered the call
   * with an error that the same call would meet again (AccessDenied, InvalidParameterException,
   * ClientException). While it stands, the status's phase is `Degraded` and the condition
   * `ActionRejected` carries ECS's message; the pass retries it with backoff
   * (`lambda/core/rejections.ts`, docs/operations.md "Refused actions").
   */
  rejection?: Rejection;
  /**
   * The native deployment (BLUE_GREEN, LINEAR, CANARY) ECS is running, as the last pass read it
   * from DescribeServiceDeployments; absent when none is running or it was not read.
   */
  deployment?: DeploymentProgress;
  /**
   * What the judgement that found nothing to change depended on ({@link JudgedVersion}), so that
   * the next pass, in this container or a new one, skips the comparison while none of it changed.
   * Absent after any other judgement (an action, a refusal, a lag, a failed rollout).
   */
  judged?: JudgedVersion;
  /** ISO time of the observation this status reflects. */
  observedAt: string;
}

/**
 * Where a native deployment stands (`ServiceStatus.deployment`). Only stable values, so that a
 * status is not written again every pass of a bake: the bake's end is a time, not a countdown.
 */
export interface DeploymentProgress {
  serviceDeploymentArn: string;
  /** BLUE_GREEN, LINEAR or CANARY. */
  strategy: string;
  /** ECS ServiceDeploymentStatus (IN_PROGRESS, ROLLBACK_IN_PROGRESS, ...). */
  status: string;
  /** ECS lifecycleStage (SCALE_UP, TEST_TRAFFIC_SHIFT, BAKE_TIME, ...). */
  lifecycleStage?: string;
  /** Percent of production traffic on the new revision (0-100). */
  productionTrafficPercent?: number;
  /** Percent of test traffic on the new revision (0-100). */
  testTrafficPercent?: number;
  /** ISO time the current bake (BAKE_TIME, or the wait between traffic steps) ends, as far as ECS's updatedAt tells. */
  bakeEndsAt?: string;
  /** A PAUSE hook waiting for `ecsr continue` (ContinueServiceDeployment): its hookId. */
  awaitingHookId?: string;
}

/**
 * The version of what a steady judgement saw (the `observedGeneration` idea of Kubernetes,
 * extended to the live side): the spec hash, the rendering options, the live task definition (its
 * ARN and canonical digest) and the digest of the live service's compared fields
 * (`lambda/core/observed-print.ts`). The same five again mean the same comparison, so its result
 * is taken without comparing.
 */
export interface JudgedVersion {
  specHash: string;
  /** `renderingKey` of the reconciler's defaults and owner id (`lambda/core/compare-cache.ts`). */
  rendering: string;
  taskDefinitionArn: string;
  /** `canonicalTaskDefinitionHash` of the live task definition's description. */
  taskDefinitionDigest: string;
  /** `serviceDigest` of the live service. */
  serviceDigest: string;
}

/** One refused action of a spec, remembered for the backoff (`ServiceStatus.rejection`). */
export interface Rejection {
  /** The refused call. */
  action: ActionType;
  /** Spec hash the refused call was made for: a spec with another hash is tried at once. */
  specHash?: string;
  /** Reason constant: `AccessDenied` (IAM), `EcsRejected` (the request), or a more precise one. */
  reason: string;
  /** `UpdateService: <ECS's message>`. */
  message: string;
  /** ISO time of the first refusal in this run of refusals. */
  since: string;
  /** Refusals in a row of this call for this spec hash (>= 1). */
  attempts: number;
  /** ISO time before which the pass does not call again for this spec hash. */
  retryAfter: string;
}

// ---------------------------------------------------------------------------------------------
// Plan
// ---------------------------------------------------------------------------------------------

export type ActionType =
  | 'RegisterTaskDefinition'
  | 'CreateService'
  | 'UpdateService'
  | 'DeleteService'
  | 'TagResource';

/** One field-level correction: `desiredCount 5 -> 3`. */
export interface FieldChange {
  field: string;
  from: string;
  to: string;
}

/** ECS CreateService input, the subset the reconciler sends (the declared fields typed from their declarations). */
export interface CreateServiceInput extends Partial<ServiceFieldValues> {
  cluster: string;
  serviceName: string;
  /**
   * Task definition ARN, or a family name when a RegisterTaskDefinition action for that family
   * precedes this one in the plan (the actuator substitutes the ARN it registered or reused).
   */
  taskDefinition: string;
  desiredCount?: number;
  /** Absent exactly when `launchType` is set. */
  capacityProviderStrategy?: { capacityProvider: string; weight: number; base?: number }[];
  platformVersion?: string;
  networkConfiguration: {
    awsvpcConfiguration: { subnets: string[]; securityGroups: string[]; assignPublicIp: 'ENABLED' | 'DISABLED' };
  };
  /** ECS DeploymentConfiguration (`DEPLOYMENT_CONFIGURATION`), the rolling members always given. */
  deploymentConfiguration: Infer<typeof DEPLOYMENT_CONFIGURATION> & {
    minimumHealthyPercent: number;
    maximumPercent: number;
    deploymentCircuitBreaker: Infer<typeof DEPLOYMENT_CONFIGURATION.fields.deploymentCircuitBreaker.type>;
  };
  loadBalancers?: ServiceLoadBalancer[];
  launchType?: 'FARGATE';
  tags: { key: string; value: string }[];
  /** Idempotency token, at most 36 ASCII characters (docs/ecs-facts.md §3). */
  clientToken: string;
}

/** ECS UpdateService input, only the fields that differ are set (the declared fields typed from their declarations). */
export interface UpdateServiceInput extends Partial<ServiceFieldValues> {
  cluster: string;
  service: string;
  taskDefinition?: string;
  desiredCount?: number;
  capacityProviderStrategy?: CreateServiceInput['capacityProviderStrategy'];
  networkConfiguration?: CreateServiceInput['networkConfiguration'];
  /** Without the circuit breaker for a service of the CODE_DEPLOY controller (ECS has it for ECS only). */
  deploymentConfiguration?: Omit<CreateServiceInput['deploymentConfiguration'], 'deploymentCircuitBreaker'> &
    Partial<Pick<CreateServiceInput['deploymentConfiguration'], 'deploymentCircuitBreaker'>> & {
      /** Members the spec does not manage, carried over from the live service. */
      readonly [unmanaged: string]: unknown;
    };
  /** With a live `advancedConfiguration` carried over. */
  loadBalancers?: (NonNullable<CreateServiceInput['loadBalancers']>[number] & { advancedConfiguration?: Record<string, unknown> })[];
  forceNewDeployment?: boolean;
}

interface ActionBase extends ServiceKey {
  /** Why, in one human sentence (logged and written to status). */
  readonly reason: string;
  /** Spec hash this action applies; absent for prunes of orphans. */
  readonly specHash?: string;
}

/**
 * ECS RegisterTaskDefinition input as the reconciler renders it: the declared task definition
 * (`TASK_DEFINITION`), typed from the declaration, with its family and tags.
 */
export type RegisterTaskDefinitionInput = Infer<typeof TASK_DEFINITION> & {
  family: string;
  containerDefinitions: ContainerSpec[];
  tags?: { key: string; value: string }[];
};

export interface RegisterTaskDefinitionAction extends ActionBase {
  readonly type: 'RegisterTaskDefinition';
  readonly input: RegisterTaskDefinitionInput;
}

export interface CreateServiceAction extends ActionBase {
  readonly type: 'CreateService';
  readonly input: CreateServiceInput;
}

/**
 * Why an UpdateService is planned: `rollout` applies a changed spec (its hash differs from the
 * status's `lastAppliedSpecHash`), `drift` undoes a change made to the live service by hand (same
 * hash), `adopt` reconciles a service adopted in the same pass. The pass counts `drift` actions
 * as DriftCorrections.
 */
export type UpdateKind = 'rollout' | 'drift' | 'adopt';

export interface UpdateServiceAction extends ActionBase {
  readonly type: 'UpdateService';
  readonly input: UpdateServiceInput;
  /** The drift being corrected, field by field (live -> desired). */
  readonly changes: FieldChange[];
  /** Set by the planner on every update it plans; optional only for older literals. */
  readonly kind?: UpdateKind;
}

export interface DeleteServiceAction extends ActionBase {
  readonly type: 'DeleteService';
  /** `absent`: the spec says so; `orphan`: an owned service has no spec (prune). */
  readonly cause: 'absent' | 'orphan';
  /** Scale to 0 with UpdateService before DeleteService (docs/ecs-facts.md §3). */
  readonly scaleToZero: boolean;
}

/**
 * ECS TagResource on a service: adds the owner tag (and the spec's tags) to a service the spec
 * adopts (`adopt: true`). Precedes the service's other actions in the plan.
 */
export interface TagResourceAction extends ActionBase {
  readonly type: 'TagResource';
  /** The service ARN. */
  readonly resourceArn: string;
  readonly tags: { key: string; value: string }[];
}

export type Action =
  | RegisterTaskDefinitionAction
  | CreateServiceAction
  | UpdateServiceAction
  | DeleteServiceAction
  | TagResourceAction;

export interface Plan {
  /** Ordered, deterministic. */
  readonly actions: Action[];
  /** One status per service the planner knows of (specs and owned services). */
  readonly statuses: Record<ServiceId, ServiceStatus>;
  /**
   * Services whose spec renders another task definition than the live one, whose status does not
   * already record that spec as failed, and whose deployment history
   * ({@link ObservedService.serviceDeployments}) was not read: the pass reads it and plans again,
   * so that a rollback ECS made is known even when the status that recorded it was never written.
   * Absent when there are none.
   */
  readonly deploymentHistoryWanted?: ServiceKey[];
  /**
   * The prune holds after this pass and what changed ({@link PruneHolds}); absent when no cluster
   * is held before or after it.
   */
  readonly pruneHolds?: PruneHolds;
}

/**
 * A cluster whose prunes stay held: a pass found there the signature of a wiped or half-restored
 * spec table (no spec at all for the cluster, more than half of its owned services without a
 * spec, or more prunes than `maxDeletesPerPass`) and held every prune. The rules look at one
 * pass's read; a table restored a few items at a time passes under them before it is whole (7 of
 * 12 specs back: 5 prunes, within both limits). The hold is the memory: every later pass keeps
 * holding the cluster's prunes until no owned service there lacks a spec any more, or a person
 * confirms (`ecsr prune --confirm CLUSTER`). Kept in the spec table by the spec store.
 */
export interface PruneHold {
  readonly cluster: string;
  /** ISO time of the pass that set the hold. */
  readonly since: string;
  /** What that pass found, in words (e.g. `11 of the 12 owned services ... have no spec`). */
  readonly reason: string;
}

/** A hold in force after a pass, with what that pass saw. */
export interface PruneHeld extends PruneHold {
  /** Owned services of the cluster without a spec, when this pass read the cluster and the whole table. */
  readonly missing?: number;
  /** How to release the hold, in words, with the command. */
  readonly release: string;
}

/** The planner's decision on the prune holds: what is in force after the pass, what to store, what to remove. */
export interface PruneHolds {
  /** Every hold in force after this pass, by cluster. */
  readonly held: PruneHeld[];
  /** Holds this pass sets (the store writes them). */
  readonly set: PruneHold[];
  /** Holds this pass releases (the store removes them), and why. */
  readonly cleared: { readonly cluster: string; readonly because: 'restored' | 'confirmed' }[];
}

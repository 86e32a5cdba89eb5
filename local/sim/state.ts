/**
 * The simulator's records: clusters, services with their deployments and events, tasks, task
 * definition revisions. Field names follow ECS's; times are epoch milliseconds of the virtual
 * clock and become Dates (epoch seconds on the wire) only when answered.
 */
import type {
  AwsVpcConfiguration,
  CapacityProviderStrategyItem,
  DeploymentAlarms,
  LoadBalancer,
  ServiceConnectConfiguration,
  ServiceConnectServiceResource,
  ServiceRegistry,
  ServiceVolumeConfiguration,
  TaskDefinition,
  VpcLatticeConfiguration,
} from '@aws-sdk/client-ecs';
import type { TimerHandle } from './clock';
import type { FailureRule } from './failure-modes';
import type { StopCode } from './messages';

export interface Tag {
  key: string;
  value: string;
}

export type LastStatus =
  | 'PROVISIONING'
  | 'PENDING'
  | 'ACTIVATING'
  | 'RUNNING'
  | 'DEACTIVATING'
  | 'STOPPING'
  | 'DEPROVISIONING'
  | 'STOPPED';

/** Task states that count as pending (DescribeServices `pendingCount`). */
export const PENDING_STATES: ReadonlySet<LastStatus> = new Set(['PROVISIONING', 'PENDING', 'ACTIVATING']);

export type HealthStatus = 'HEALTHY' | 'UNHEALTHY' | 'UNKNOWN';

export interface SimContainer {
  name: string;
  image: string;
  uuid: string;
  arn: string;
  essential: boolean;
  cpu: number;
  memory?: number;
  memoryReservation?: number;
  lastStatus: 'PENDING' | 'RUNNING' | 'STOPPED';
  healthStatus: HealthStatus;
  hasHealthCheck: boolean;
  exitCode?: number;
  reason?: string;
  /** The containers it waits for before it starts (ECS ContainerDependency). */
  dependsOn: { containerName: string; condition: 'START' | 'COMPLETE' | 'SUCCESS' | 'HEALTHY' }[];
  /** Seconds after it starts until its own health check passes (it has one). */
  healthyAfter?: number;
  /**
   * An init container: not essential, and another container waits for it to COMPLETE or
   * SUCCEED; it exits 0 after a while (the simulator runs no code).
   */
  init: boolean;
  /** ContainerDefinition.startTimeout, seconds. */
  startTimeout?: number;
  /** Virtual time it started (RUNNING), ms; the start order of the task's containers. */
  startedAt?: number;
}

export interface SimTask {
  id: string;
  arn: string;
  cluster: string;
  /** Set for tasks started by a service's scheduler. */
  service?: string;
  deploymentId?: string;
  taskDefinitionArn: string;
  startedBy?: string;
  group: string;
  lastStatus: LastStatus;
  desiredStatus: 'RUNNING' | 'STOPPED';
  healthStatus: HealthStatus;
  launchType: 'FARGATE' | 'EC2';
  capacityProviderName?: string;
  platformVersion: string;
  cpu?: string;
  memory?: string;
  availabilityZone: string;
  subnetId?: string;
  eniId: string;
  /** Id of the ENI attachment (DescribeTasks `attachments[].id`). */
  attachmentId: string;
  macAddress: string;
  privateIp: string;
  createdAt: number;
  pullStartedAt?: number;
  pullStoppedAt?: number;
  connectivityAt?: number;
  startedAt?: number;
  stoppingAt?: number;
  executionStoppedAt?: number;
  stoppedAt?: number;
  stopCode?: StopCode;
  stoppedReason?: string;
  containers: SimContainer[];
  tags: Tag[];
  version: number;
  /** The failure mode decided at launch from the images (may change while RUNNING). */
  rule: FailureRule;
  /** The image that matched `rule`. */
  ruleImage: string;
  /** Health check timing of the first essential container with one (seconds). */
  healthCheck?: { interval: number; retries: number; startPeriod: number };
  /** Pending lifecycle timers; cancelled when the task is stopped early. */
  timers: TimerHandle[];
  /** True once counted in its deployment's failedTasks. */
  countedFailed: boolean;
}

export type RolloutState = 'IN_PROGRESS' | 'COMPLETED' | 'FAILED';

/** What a deployment runs: the fields a new deployment snapshots from the service. */
export interface DeploymentTemplate {
  taskDefinition: string;
  launchType?: 'FARGATE' | 'EC2';
  capacityProviderStrategy?: CapacityProviderStrategyItem[];
  platformVersion?: string;
  networkConfiguration?: { awsvpcConfiguration: AwsVpcConfiguration };
  loadBalancers: LoadBalancer[];
  /** As answered in `deployments[]` (ECS answers Service Connect only per deployment). */
  serviceConnectConfiguration?: ServiceConnectConfiguration;
  /** The Cloud Map services ECS made for `serviceConnectConfiguration.services`. */
  serviceConnectResources?: ServiceConnectServiceResource[];
  /** Managed EBS volumes, answered per deployment like ECS. */
  volumeConfigurations?: ServiceVolumeConfiguration[];
  /** VPC Lattice target groups, answered per deployment and revision like ECS (not on the service). */
  vpcLatticeConfigurations?: VpcLatticeConfiguration[];
}

export interface SimDeployment extends DeploymentTemplate {
  id: string;
  /** The service revision this deployment runs (ECS's service revision of the template). */
  serviceRevisionArn: string;
  /** The service deployment this deployment belongs to (a rollback joins the one it undoes). */
  serviceDeploymentArn: string;
  status: 'PRIMARY' | 'ACTIVE';
  failedTasks: number;
  createdAt: number;
  updatedAt: number;
  rolloutState: RolloutState;
  rolloutStateReason: string;
}

/**
 * ECS `ServiceDeployment.status` (Amazon ECS API reference, "ServiceDeployment"). The simulator
 * produces IN_PROGRESS, SUCCESSFUL, STOPPED (superseded, or failed without rollback),
 * ROLLBACK_IN_PROGRESS, ROLLBACK_SUCCESSFUL and ROLLBACK_FAILED.
 */
export type ServiceDeploymentStatus =
  | 'PENDING'
  | 'SUCCESSFUL'
  | 'STOPPED'
  | 'STOP_REQUESTED'
  | 'IN_PROGRESS'
  | 'ROLLBACK_REQUESTED'
  | 'ROLLBACK_IN_PROGRESS'
  | 'ROLLBACK_SUCCESSFUL'
  | 'ROLLBACK_FAILED';

/** An ECS service revision: the immutable configuration one deployment rolls out. */
export interface SimServiceRevision {
  arn: string;
  createdAt: number;
  template: DeploymentTemplate;
}

/** An ECS service deployment (ListServiceDeployments / DescribeServiceDeployments). */
export interface SimServiceDeployment {
  arn: string;
  createdAt: number;
  startedAt: number;
  updatedAt: number;
  finishedAt?: number;
  stoppedAt?: number;
  /** Revisions that were running when it started. */
  sourceServiceRevisionArns: string[];
  targetServiceRevisionArn: string;
  status: ServiceDeploymentStatus;
  statusReason?: string;
  rollback?: { reason: string; startedAt: number; serviceRevisionArn: string };
  deploymentCircuitBreaker: { enable: boolean; rollback: boolean };
  minimumHealthyPercent: number;
  maximumPercent: number;
  /** The deployment configuration it started with (answered by DescribeServiceDeployments). */
  configuration?: DeploymentConfig;
  /** A BLUE_GREEN, LINEAR or CANARY deployment's stages, traffic and hooks (./native-deployments). */
  native?: NativeRun;
}

/** ECS's lifecycle stages of a native deployment, in order (ServiceDeploymentLifecycleStage). */
export const LIFECYCLE_STAGES = [
  'RECONCILE_SERVICE',
  'PRE_SCALE_UP',
  'SCALE_UP',
  'POST_SCALE_UP',
  'TEST_TRAFFIC_SHIFT',
  'POST_TEST_TRAFFIC_SHIFT',
  'PRODUCTION_TRAFFIC_SHIFT',
  'POST_PRODUCTION_TRAFFIC_SHIFT',
  'BAKE_TIME',
  'CLEAN_UP',
] as const;
export type LifecycleStage = (typeof LIFECYCLE_STAGES)[number];

/** What a lifecycle hook answers (Lambda hooks: hookStatus, callBackDelay in seconds, hookDetails). */
export interface HookAnswer {
  hookStatus: 'SUCCEEDED' | 'FAILED' | 'IN_PROGRESS';
  callBackDelay?: number;
  hookDetails?: unknown;
}

/** One invocation of one lifecycle hook at one stage (DescribeServiceDeployments `lifecycleHookDetails[]`). */
export interface SimHookRun {
  /** Hook stage and traffic step it runs at (a hook runs once per stage, per step of a shift). */
  key: string;
  /** The hook stage (DeploymentLifecycleHookStage: also PRE_PRODUCTION_TRAFFIC_SHIFT). */
  stage: string;
  hookId: string;
  targetType: 'AWS_LAMBDA' | 'PAUSE';
  targetArn?: string;
  status: 'AWAITING_ACTION' | 'IN_PROGRESS' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT';
  expiresAt: number;
  timeoutAction: 'ROLLBACK' | 'CONTINUE';
  /** An answer is awaited (an HTTP or asynchronous hook). */
  inFlight: boolean;
  /** Virtual time of the next invocation after an IN_PROGRESS answer. */
  nextInvokeAt?: number;
  /** Why it failed, for the rollback reason. */
  reason?: string;
}

/** The state of one native deployment. */
export interface NativeRun {
  strategy: 'BLUE_GREEN' | 'LINEAR' | 'CANARY';
  stage: LifecycleStage;
  blueDeploymentId: string;
  greenDeploymentId: string;
  blueRevisionArn: string;
  /** Percent of production and test traffic on the green target groups. */
  productionWeight: number;
  testWeight: number;
  /** Traffic shift steps taken so far. */
  step: number;
  /** The stage (or step) waits until this virtual time (a bake timer). */
  waitUntil?: number;
  /** The pre-production hooks ran (they belong to no stage of their own). */
  preProductionDone: boolean;
  /** Steps whose bake timer has run. */
  bakedStep: number;
  hooks: SimHookRun[];
  rolledBack: boolean;
}

export interface SimEvent {
  id: string;
  createdAt: number;
  message: string;
}

export interface DeploymentConfig {
  minimumHealthyPercent: number;
  maximumPercent: number;
  /** `enable` and `rollback` drive the scheduler; any other member given is kept and answered. */
  deploymentCircuitBreaker: { enable: boolean; rollback: boolean; [member: string]: unknown };
  /** CloudWatch alarms that fail a deployment; answered only once set. */
  alarms?: DeploymentAlarms;
  /** ROLLING unless given; ECS answers it for every service (docs/ecs-facts.md §13). */
  strategy: 'ROLLING' | 'BLUE_GREEN' | 'LINEAR' | 'CANARY';
  /** 0 unless given; answered for every service. */
  bakeTimeInMinutes: number;
  /**
   * Members of the native deployment strategies (lifecycleHooks, linearConfiguration,
   * canaryConfiguration), kept as given and answered back; the scheduler deploys every strategy
   * as a rolling update.
   */
  [member: string]: unknown;
}

/** Who deploys the service (DeploymentController.type). */
export type DeploymentControllerType = 'ECS' | 'CODE_DEPLOY' | 'EXTERNAL';

export interface SimService extends DeploymentTemplate {
  name: string;
  arn: string;
  cluster: string;
  status: 'ACTIVE' | 'DRAINING' | 'INACTIVE';
  desiredCount: number;
  deploymentConfiguration: DeploymentConfig;
  serviceRegistries: ServiceRegistry[];
  healthCheckGracePeriodSeconds?: number;
  deploymentController: DeploymentControllerType;
  availabilityZoneRebalancing: 'ENABLED' | 'DISABLED';
  placementConstraints: unknown[];
  placementStrategy: unknown[];
  enableECSManagedTags: boolean;
  propagateTags: string;
  enableExecuteCommand: boolean;
  tags: Tag[];
  createdAt: number;
  createdBy: string;
  /** `ECS` for a service ECS manages itself (Express Mode); answered only when set. */
  resourceManagementType?: 'CUSTOMER' | 'ECS';
  clientToken?: string;
  /** Canonical JSON of the CreateService parameters (idempotency check). */
  creationFingerprint: string;
  /** Newest first; the PRIMARY deployment is `deployments[0]`. */
  deployments: SimDeployment[];
  /** Newest first, at most 100 (ECS keeps the latest 100). */
  events: SimEvent[];
  /** Service deployments, newest first (ECS keeps the history of a service). */
  serviceDeployments: SimServiceDeployment[];
  /** Service revisions by ARN. */
  serviceRevisions: Map<string, SimServiceRevision>;
  /** ECS swaps the primary and alternate target groups after each native deployment. */
  targetGroupsSwapped?: boolean;
  /** The last deployment that reached COMPLETED (rollback target). */
  lastCompleted?: SimDeployment;
  // Scheduler bookkeeping.
  evaluation?: TimerHandle;
  retry?: TimerHandle;
  steady: boolean;
  consecutiveFailures: number;
  /** No launches before this virtual time (ECS's task launch backoff). */
  launchBackoffUntil: number;
  /** Warning message -> time emitted; repeated only after 6 hours or once resolved. */
  warnings: Map<string, number>;
  inactiveAt?: number;
  /** Launches in the current one-minute window (Fargate's per-service launch rate). */
  launchWindow?: { startMs: number; launched: number };
}

export interface SimCluster {
  name: string;
  arn: string;
  status: 'ACTIVE' | 'INACTIVE';
  tags: Tag[];
  settings: { name: string; value: string }[];
  /** Associated capacity providers (CreateCluster `capacityProviders`, PutClusterCapacityProviders). */
  capacityProviders: string[];
  defaultCapacityProviderStrategy: CapacityProviderStrategyItem[];
  /** The default Service Connect namespace (CreateCluster `serviceConnectDefaults.namespace`), as an ARN. */
  serviceConnectNamespace?: string;
  createdAt: number;
  services: Map<string, SimService>;
  tasks: Map<string, SimTask>;
}

export interface SimTaskDefinitionRevision {
  taskDefinition: TaskDefinition;
  tags: Tag[];
}

export interface SimFamily {
  name: string;
  /** Index = revision - 1. */
  revisions: SimTaskDefinitionRevision[];
}

/** All mutable state of one simulator; replaced wholesale on reset. */
export interface SimState {
  clusters: Map<string, SimCluster>;
  families: Map<string, SimFamily>;
}

export function emptyState(): SimState {
  return { clusters: new Map(), families: new Map() };
}

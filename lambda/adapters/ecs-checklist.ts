/**
 * The SDK's ECS shapes as a checklist: every member of `Service` (and of the CreateService and
 * UpdateService requests), `TaskDefinition` (and the RegisterTaskDefinition request) and
 * `ContainerDefinition` (and the task's `Volume` and `RuntimePlatform`) is named here, either `managed` (declared in the vocabulary,
 * `lambda/core/vocab/`, or a spec attribute the planner renders it from) or `unmanaged: <why>`.
 * The tables are typed by the SDK's own models: a member the SDK gains in an upgrade and that no
 * table names fails to compile, so an upgrade forces a decision; a `managed` entry the vocabulary
 * does not declare fails `test/adapters/ecs-checklist.test.ts`.
 */
import type {
  ContainerDefinition,
  CreateServiceCommandInput,
  RegisterTaskDefinitionCommandInput,
  RuntimePlatform,
  S3FilesVolumeConfiguration,
  Service,
  TaskDefinition,
  UpdateServiceCommandInput,
  Volume,
} from '@aws-sdk/client-ecs';

/** How the reconciler treats one SDK member. */
export type Coverage = 'managed' | `unmanaged: ${string}`;

/** One entry per member of `T`, no more, no fewer. */
export type Checklist<T> = { readonly [K in keyof Required<T>]: Coverage };

const STATE = 'unmanaged: state ECS reports, not configuration';
const SERVER = 'unmanaged: set by ECS (server-side, read-only)';
const EC2_ONLY = 'unmanaged: EC2 only (Fargate places tasks itself)';

export const SERVICE_CHECKLIST: Checklist<Service> = {
  serviceArn: SERVER,
  serviceName: 'managed',
  clusterArn: 'unmanaged: the spec key names the cluster',
  loadBalancers: 'managed',
  serviceRegistries: 'managed',
  status: STATE,
  desiredCount: 'managed',
  runningCount: STATE,
  pendingCount: STATE,
  launchType: 'managed',
  capacityProviderStrategy: 'managed',
  platformVersion: 'managed',
  platformFamily: 'unmanaged: follows the task definition (runtimePlatform)',
  taskDefinition: 'managed',
  deploymentConfiguration: 'managed',
  taskSets: 'unmanaged: task sets belong to the EXTERNAL and CODE_DEPLOY controllers',
  deployments: STATE,
  roleArn: "unmanaged: awsvpc services use ECS's service-linked role (import checks it)",
  events: STATE,
  createdAt: SERVER,
  currentServiceDeployment: STATE,
  currentServiceRevisions: STATE,
  placementConstraints: EC2_ONLY,
  placementStrategy: EC2_ONLY,
  networkConfiguration: 'managed',
  healthCheckGracePeriodSeconds: 'managed',
  schedulingStrategy: 'unmanaged: Fargate runs REPLICA services only (import checks it)',
  deploymentController: 'unmanaged: read to know what UpdateService may change; not yet supported in a spec',
  tags: 'managed',
  createdBy: SERVER,
  enableECSManagedTags: 'managed',
  propagateTags: 'managed',
  enableExecuteCommand: 'managed',
  availabilityZoneRebalancing: 'managed',
  resourceManagementType: 'unmanaged: read-only; services ECS manages itself are never touched',
};

const REQUEST_ONLY = {
  cluster: 'managed',
  deploymentController: SERVICE_CHECKLIST.deploymentController,
  serviceConnectConfiguration: 'managed',
  volumeConfigurations: 'managed',
  vpcLatticeConfigurations: 'unmanaged: not yet supported (kept as ECS has it: never sent)',
  gatewayConnectors: 'unmanaged: not yet supported (never sent)',
  monitoring: 'unmanaged: not yet supported; DescribeServices does not report it (service revisions only)',
} as const satisfies Record<string, Coverage>;

export const CREATE_SERVICE_CHECKLIST: Checklist<CreateServiceCommandInput> = {
  ...REQUEST_ONLY,
  serviceName: 'managed',
  taskDefinition: 'managed',
  availabilityZoneRebalancing: 'managed',
  loadBalancers: 'managed',
  serviceRegistries: 'managed',
  desiredCount: 'managed',
  clientToken: 'unmanaged: the idempotency token, derived from the spec hash',
  launchType: 'managed',
  capacityProviderStrategy: 'managed',
  platformVersion: 'managed',
  role: SERVICE_CHECKLIST.roleArn,
  deploymentConfiguration: 'managed',
  placementConstraints: EC2_ONLY,
  placementStrategy: EC2_ONLY,
  networkConfiguration: 'managed',
  healthCheckGracePeriodSeconds: 'managed',
  schedulingStrategy: SERVICE_CHECKLIST.schedulingStrategy,
  tags: 'managed',
  enableECSManagedTags: 'managed',
  propagateTags: 'managed',
  enableExecuteCommand: 'managed',
};

export const UPDATE_SERVICE_CHECKLIST: Checklist<UpdateServiceCommandInput> = {
  ...REQUEST_ONLY,
  service: 'managed',
  desiredCount: 'managed',
  taskDefinition: 'managed',
  capacityProviderStrategy: 'managed',
  deploymentConfiguration: 'managed',
  availabilityZoneRebalancing: 'managed',
  networkConfiguration: 'managed',
  placementConstraints: EC2_ONLY,
  placementStrategy: EC2_ONLY,
  platformVersion: 'managed',
  forceNewDeployment: 'unmanaged: sent with a capacity provider change and a retry, never a spec value',
  healthCheckGracePeriodSeconds: 'managed',
  enableExecuteCommand: 'managed',
  enableECSManagedTags: 'managed',
  loadBalancers: 'managed',
  propagateTags: 'managed',
  serviceRegistries: 'managed',
};

const FARGATE_REFUSES = 'unmanaged: Fargate refuses it (declared refused: a spec naming it is invalid)';

export const REGISTER_TASK_DEFINITION_CHECKLIST: Checklist<RegisterTaskDefinitionCommandInput> = {
  family: 'managed',
  taskRoleArn: 'managed',
  executionRoleArn: 'managed',
  networkMode: 'managed',
  containerDefinitions: 'managed',
  volumes: 'managed',
  placementConstraints: 'unmanaged: Fargate ignores task placement constraints (import refuses them)',
  requiresCompatibilities: 'managed',
  cpu: 'managed',
  memory: 'managed',
  tags: 'managed',
  pidMode: 'managed',
  ipcMode: FARGATE_REFUSES,
  proxyConfiguration: 'managed',
  inferenceAccelerators: FARGATE_REFUSES,
  ephemeralStorage: 'managed',
  runtimePlatform: 'managed',
  enableFaultInjection: 'managed',
  trustedExecutionConfiguration:
    'unmanaged: Managed Instances only (Nitro sandboxes on EC2 hosts); Fargate tasks have no isolation mode to set',
};

export const TASK_DEFINITION_CHECKLIST: Checklist<TaskDefinition> = {
  ...REGISTER_TASK_DEFINITION_CHECKLIST,
  taskDefinitionArn: SERVER,
  revision: SERVER,
  status: STATE,
  requiresAttributes: SERVER,
  compatibilities: SERVER,
  registeredAt: SERVER,
  deregisteredAt: SERVER,
  registeredBy: SERVER,
  deleteRequestedAt: SERVER,
};

export const CONTAINER_DEFINITION_CHECKLIST: Checklist<ContainerDefinition> = {
  name: 'managed',
  image: 'managed',
  repositoryCredentials: 'managed',
  cpu: 'managed',
  memory: 'managed',
  memoryReservation: 'managed',
  links: FARGATE_REFUSES,
  portMappings: 'managed',
  essential: 'managed',
  restartPolicy: 'managed',
  entryPoint: 'managed',
  command: 'managed',
  environment: 'managed',
  environmentFiles: 'managed',
  mountPoints: 'managed',
  volumesFrom: 'managed',
  linuxParameters: 'managed',
  secrets: 'managed',
  dependsOn: 'managed',
  startTimeout: 'managed',
  stopTimeout: 'managed',
  versionConsistency: 'managed',
  hostname: FARGATE_REFUSES,
  user: 'managed',
  workingDirectory: 'managed',
  disableNetworking: FARGATE_REFUSES,
  privileged: FARGATE_REFUSES,
  readonlyRootFilesystem: 'managed',
  dnsServers: FARGATE_REFUSES,
  dnsSearchDomains: FARGATE_REFUSES,
  extraHosts: FARGATE_REFUSES,
  dockerSecurityOptions: FARGATE_REFUSES,
  interactive: 'managed',
  pseudoTerminal: 'managed',
  dockerLabels: 'managed',
  ulimits: 'managed',
  logConfiguration: 'managed',
  healthCheck: 'managed',
  systemControls: 'managed',
  resourceRequirements: FARGATE_REFUSES,
  firelensConfiguration: 'managed',
  credentialSpecs: 'managed',
};

export const VOLUME_CHECKLIST: Checklist<Volume> = {
  name: 'managed',
  efsVolumeConfiguration: 'managed',
  s3filesVolumeConfiguration: 'managed',
  configuredAtLaunch: 'managed',
  host: FARGATE_REFUSES,
  dockerVolumeConfiguration: FARGATE_REFUSES,
  fsxWindowsFileServerVolumeConfiguration: FARGATE_REFUSES,
};

export const S3FILES_VOLUME_CONFIGURATION_CHECKLIST: Checklist<S3FilesVolumeConfiguration> = {
  fileSystemArn: 'managed',
  rootDirectory: 'managed',
  transitEncryptionPort: 'managed',
  accessPointArn: 'managed',
};

export const RUNTIME_PLATFORM_CHECKLIST: Checklist<RuntimePlatform> = {
  cpuArchitecture: 'managed',
  operatingSystemFamily: 'managed',
};

/**
 * The task definition vocabulary on Fargate, declared once: ContainerDefinition and its parts,
 * volumes and the task-level fields (Amazon ECS API reference, RegisterTaskDefinition,
 * ContainerDefinition, HealthCheck, PortMapping, LogConfiguration, Volume; Amazon ECS Developer
 * Guide, "Amazon ECS task definition parameters for Fargate"). Defaults are ECS's: what an absent
 * value means, and what DescribeTaskDefinition answers when the field was left out
 * (`docs/ecs-facts.md` §6).
 *
 * Everything about one shape is in one place: e.g. {@link HEALTH_CHECK} holds the fields of a
 * container health check, their ranges (seconds), ECS's defaults (30/5/3/0) and their docs; the
 * spec parser, the JSON Schema, rendering, the canonical comparison, import and the diff order are
 * all derived from it.
 */
import {
  type CanonicalContext,
  type StringNode,
  bool,
  int,
  isRecord,
  list,
  map,
  nameValueList,
  obj,
  oneOf,
  str,
} from './decl';
import {
  EFS_ACCESS_POINT_RE,
  EFS_ID_RE,
  ENV_NAME_RE,
  IMAGE_ALLOWED,
  IMAGE_RE,
  NAME_RE,
  PORT_NAME_RE,
  PORT_RANGE_RE,
  ROLE_ARN_ALLOWED,
  ROLE_ARN_RE,
  S3_OBJECT_ARN_RE,
  S3FILES_ACCESS_POINT_ARN_RE,
  S3FILES_FILE_SYSTEM_ARN_RE,
  SECRET_REF_ALLOWED,
  SECRET_REF_RE,
} from './patterns';

/** A field Fargate refuses: never set in a spec (`Infer` leaves it out). */
const refused = (why: string): { readonly type: StringNode; readonly refused: string } => ({ type: str(), refused: why });
const FARGATE = (what: string) => `is not supported on Fargate (${what}); remove it`;

const containerName = str({ pattern: NAME_RE, allowed: 'must be 1-255 letters, numbers, hyphens or underscores (ECS container name)' });
const strings = (order: 'ordered' | 'set') => list(str(), { order });

/** Container health check (ECS HealthCheck), seconds and attempts. */
export const HEALTH_CHECK = obj(
  {
    command: {
      type: list(str(), { order: 'ordered', minItems: 2 }),
      required: true,
      doc: 'e.g. ["CMD-SHELL", "curl -f http://localhost:8080/health || exit 1"]: "CMD" or "CMD-SHELL", then the command.',
    },
    interval: { type: int({ min: 5, max: 300, unit: 'seconds' }), default: 30, ecsFills: true, doc: 'Seconds between checks.' },
    timeout: { type: int({ min: 2, max: 120, unit: 'seconds' }), default: 5, ecsFills: true, doc: 'Seconds a check may take.' },
    retries: { type: int({ min: 1, max: 10 }), default: 3, ecsFills: true, doc: 'Failed checks before the container is unhealthy.' },
    startPeriod: {
      type: int({ min: 0, max: 300, unit: 'seconds' }),
      default: 0,
      doc: 'Seconds after start in which failures do not count.',
    },
  },
  { doc: 'Container health check (ECS healthCheck).' },
);

/** ECS PortMapping. In awsvpc (all of Fargate) `hostPort` equals `containerPort` or is absent. */
export const PORT_MAPPING = obj(
  {
    containerPort: int({ min: 0, max: 65535 }),
    hostPort: { type: int({ min: 0, max: 65535 }), ecsFills: true, doc: 'awsvpc: equals containerPort (ECS fills it in).' },
    protocol: { type: oneOf(['tcp', 'udp']), default: 'tcp', ecsFills: true },
    name: {
      type: str({ pattern: PORT_NAME_RE, allowed: 'must be 1-64 lower-case letters, digits and hyphens, not starting or ending with a hyphen (ECS port name)' }),
      doc: 'Port name, used by Service Connect.',
    },
    appProtocol: { type: oneOf(['http', 'http2', 'grpc']), doc: 'Application protocol, for Service Connect.' },
    containerPortRange: {
      type: str({ pattern: PORT_RANGE_RE, allowed: 'must be a port range FROM-TO (e.g. 8000-8010)' }),
      doc: 'A range of ports, instead of containerPort.',
    },
  },
  {
    normalize: (p: unknown, ctx: CanonicalContext) => {
      if (!isRecord(p)) return p;
      const out: Record<string, unknown> = { ...p };
      if (typeof out.protocol === 'string') out.protocol = out.protocol.toLowerCase();
      const dynamic = out.hostPort === undefined || out.hostPort === null || out.hostPort === 0;
      if (dynamic || (ctx.networkMode === 'awsvpc' && out.hostPort === out.containerPort)) delete out.hostPort;
      return out;
    },
  },
);

const secretList = nameValueList('valueFrom', str({ pattern: SECRET_REF_RE, allowed: SECRET_REF_ALLOWED }));

/** ECS LogConfiguration; Fargate takes awslogs, splunk and awsfirelens. */
export const LOG_CONFIGURATION = obj({
  logDriver: { type: oneOf(['awslogs', 'splunk', 'awsfirelens']), required: true, doc: 'Log driver (Fargate: awslogs, splunk, awsfirelens).' },
  options: { type: map(str()), doc: 'Driver options, e.g. awslogs-group, awslogs-stream-prefix, mode.' },
  secretOptions: { type: secretList, doc: 'Driver options from secrets, name to valueFrom.' },
});

/** ECS ContainerDefinition, as Fargate takes it (Linux). */
export const CONTAINER = obj(
  {
    name: { type: containerName, required: true },
    image: { type: str({ pattern: IMAGE_RE, allowed: IMAGE_ALLOWED }), required: true },
    repositoryCredentials: obj({ credentialsParameter: { type: str({ pattern: SECRET_REF_RE, allowed: SECRET_REF_ALLOWED }), required: true } }),
    essential: { type: bool(), default: true, ecsFills: true, doc: 'When it stops, the task stops (at least one container must be essential).' },
    cpu: { type: int({ min: 0, max: 16384, unit: 'CPU units' }), default: 0, ecsFills: true },
    memory: { type: int({ min: 6, unit: 'MiB' }), doc: 'Hard limit, MiB.' },
    memoryReservation: { type: int({ min: 6, unit: 'MiB' }), doc: 'Soft limit, MiB.' },
    portMappings: { type: list(PORT_MAPPING, { order: 'set' }), ecsFills: true },
    environment: { type: nameValueList('value', str(), {}), ecsFills: true, doc: 'Variables, [{name, value}].' },
    environmentFiles: {
      type: list(
        obj({
          value: { type: str({ pattern: S3_OBJECT_ARN_RE, allowed: 'must be an S3 object ARN (arn:aws:s3:::BUCKET/KEY.env)' }), required: true },
          type: { type: oneOf(['s3']), required: true },
        }),
        { order: 'ordered', maxItems: 10 },
      ),
    },
    secrets: { type: secretList, doc: 'Variables from SSM parameters or Secrets Manager, [{name, valueFrom}].' },
    command: strings('ordered'),
    entryPoint: strings('ordered'),
    workingDirectory: str(),
    user: str(),
    healthCheck: HEALTH_CHECK,
    dependsOn: {
      type: list(
        obj({
          containerName: { type: containerName, required: true },
          condition: { type: oneOf(['START', 'COMPLETE', 'SUCCESS', 'HEALTHY']), required: true },
        }),
        { order: 'keyed', key: 'containerName', value: 'condition' },
      ),
    },
    logConfiguration: LOG_CONFIGURATION,
    firelensConfiguration: obj({
      type: { type: oneOf(['fluentd', 'fluentbit']), required: true },
      options: map(str()),
    }),
    mountPoints: {
      type: list(
        obj({ sourceVolume: { type: str(), required: true }, containerPath: { type: str(), required: true }, readOnly: bool() }),
        { order: 'set' },
      ),
      ecsFills: true,
    },
    volumesFrom: {
      type: list(obj({ sourceContainer: { type: containerName, required: true }, readOnly: bool() }), { order: 'set' }),
      ecsFills: true,
    },
    ulimits: {
      type: list(
        obj({
          name: {
            type: oneOf(['core', 'cpu', 'data', 'fsize', 'locks', 'memlock', 'msgqueue', 'nice', 'nofile', 'nproc', 'rss', 'rtprio', 'rttime', 'sigpending', 'stack']),
            required: true,
          },
          softLimit: { type: int({ min: 0 }), required: true },
          hardLimit: { type: int({ min: 0 }), required: true },
        }),
        { order: 'keyed', key: 'name' },
      ),
    },
    dockerLabels: map(str()),
    linuxParameters: obj({
      capabilities: obj({
        add: { type: list(oneOf(['SYS_PTRACE']), { order: 'set' }), doc: 'Fargate adds only SYS_PTRACE.' },
        drop: list(str(), { order: 'set' }),
      }),
      initProcessEnabled: bool(),
      devices: refused(FARGATE('linuxParameters.devices')),
      sharedMemorySize: refused(FARGATE('linuxParameters.sharedMemorySize')),
      tmpfs: refused(FARGATE('linuxParameters.tmpfs')),
      maxSwap: refused(FARGATE('linuxParameters.maxSwap')),
      swappiness: refused(FARGATE('linuxParameters.swappiness')),
    }),
    readonlyRootFilesystem: bool(),
    interactive: bool(),
    pseudoTerminal: bool(),
    stopTimeout: { type: int({ min: 2, max: 120, unit: 'seconds' }), default: 30, doc: 'Fargate default 30 seconds.' },
    startTimeout: { type: int({ min: 2, max: 120, unit: 'seconds' }) },
    restartPolicy: obj({
      enabled: { type: bool(), required: true },
      ignoredExitCodes: list(int(), { order: 'set', maxItems: 50 }),
      restartAttemptPeriod: int({ min: 60, max: 1800, unit: 'seconds' }),
    }),
    systemControls: {
      type: list(obj({ namespace: { type: str(), required: true }, value: { type: str(), required: true } }), {
        order: 'keyed',
        key: 'namespace',
        value: 'value',
      }),
      ecsFills: true,
    },
    versionConsistency: { type: oneOf(['enabled', 'disabled']), default: 'enabled' },
    credentialSpecs: list(str(), { order: 'set' }),
    links: refused(FARGATE('links need the bridge network mode')),
    hostname: refused(FARGATE('hostname is not allowed in the awsvpc network mode')),
    disableNetworking: refused(FARGATE('disableNetworking')),
    privileged: refused(FARGATE('privileged')),
    dnsServers: refused(FARGATE('dnsServers')),
    dnsSearchDomains: refused(FARGATE('dnsSearchDomains')),
    extraHosts: refused(FARGATE('extraHosts')),
    dockerSecurityOptions: refused(FARGATE('dockerSecurityOptions')),
    resourceRequirements: refused(FARGATE('GPUs and inference accelerators')),
  },
  { doc: 'A container of the task (ECS ContainerDefinition), in ECS\'s own field names.' },
);

/**
 * ECS S3FilesVolumeConfiguration: an S3 Files file system mounted into the task. ECS needs a task
 * role for it, and with an access point a root directory omitted or `/` (cross-field rules:
 * ./platform-rules.ts).
 */
export const S3FILES_VOLUME_CONFIGURATION = obj(
  {
    fileSystemArn: {
      type: str({ pattern: S3FILES_FILE_SYSTEM_ARN_RE, allowed: 'must be an S3 Files file system ARN (arn:aws:s3files:REGION:ACCOUNT:file-system/ID)' }),
      required: true,
    },
    rootDirectory: { type: str(), default: '/', doc: 'Directory of the file system mounted as the root (ECS default /).' },
    transitEncryptionPort: int({ min: 0, max: 65535 }),
    accessPointArn: str({ pattern: S3FILES_ACCESS_POINT_ARN_RE, allowed: 'must be an S3 Files access point ARN (arn:aws:s3files:REGION:ACCOUNT:file-system/ID/access-point/ID)' }),
  },
  { doc: 'An Amazon S3 Files file system (ECS s3filesVolumeConfiguration); the task needs taskRoleArn.' },
);

/** ECS Volume on Fargate: EFS, S3 Files, a bind mount (name only), or EBS configured at launch. */
export const VOLUME = obj({
  name: { type: str({ pattern: NAME_RE, allowed: 'must be 1-255 letters, numbers, hyphens or underscores (ECS volume name)' }), required: true },
  efsVolumeConfiguration: obj({
    fileSystemId: { type: str({ pattern: EFS_ID_RE, allowed: 'must be an EFS file system id (fs-0123456789abcdef0)' }), required: true },
    rootDirectory: { type: str(), default: '/' },
    transitEncryption: { type: oneOf(['ENABLED', 'DISABLED']), default: 'DISABLED' },
    transitEncryptionPort: int({ min: 0, max: 65535 }),
    authorizationConfig: obj({
      accessPointId: str({ pattern: EFS_ACCESS_POINT_RE, allowed: 'must be an EFS access point id (fsap-0123456789abcdef0)' }),
      iam: { type: oneOf(['ENABLED', 'DISABLED']), default: 'DISABLED' },
    }),
  }),
  s3filesVolumeConfiguration: S3FILES_VOLUME_CONFIGURATION,
  configuredAtLaunch: { type: bool(), doc: 'EBS volume configured by the service (volumeConfigurations).' },
  host: refused(FARGATE('host paths; a volume with a name only is a bind mount')),
  dockerVolumeConfiguration: refused(FARGATE('Docker volumes')),
  fsxWindowsFileServerVolumeConfiguration: refused(FARGATE('FSx for Windows on Linux tasks')),
});

/** ECS ProxyConfiguration (App Mesh). */
export const PROXY_CONFIGURATION = obj({
  type: { type: oneOf(['APPMESH']), default: 'APPMESH' },
  containerName: { type: containerName, required: true },
  // ECS refuses a property without a value ("ProxyConfiguration properties value cannot be
  // null"); `""` is a value (IgnoredGID, EgressIgnoredPorts).
  properties: list(obj({ name: { type: str({ minLength: 1 }), required: true }, value: { type: str(), required: true, doc: 'The property\'s value; "" is a value (ECS refuses a property without one).' } }), { order: 'keyed', key: 'name', value: 'value' }),
});

export const EPHEMERAL_STORAGE = obj({
  sizeInGiB: { type: int({ min: 21, max: 200, unit: 'GiB' }), required: true, default: 20, doc: 'Fargate default 20 GiB; 21-200.' },
});

/**
 * The operating system families Fargate runs (Amazon ECS Developer Guide, "Amazon ECS task
 * definition parameters for Fargate", `operatingSystemFamily`); Windows Server 2025 and the older
 * families are in the API's enum but not documented for Fargate (docs/ecs-facts.md §15).
 */
export const FARGATE_OPERATING_SYSTEM_FAMILIES = ['LINUX', 'WINDOWS_SERVER_2019_FULL', 'WINDOWS_SERVER_2019_CORE', 'WINDOWS_SERVER_2022_FULL', 'WINDOWS_SERVER_2022_CORE'] as const;

/** Task `cpu` in vCPU units, `memory` in MiB: RegisterTaskDefinition also takes "0.25 vCPU", "2 GB". */
function resourceAmount(scaled: RegExp): (value: unknown) => unknown {
  return (value) => {
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
    if (typeof value !== 'string') return value;
    const s = value.trim();
    if (/^\d+$/.test(s)) return String(Number(s));
    const m = scaled.exec(s);
    if (m) {
      const amount = Number(m[1]) * 1024;
      if (Number.isInteger(amount)) return String(amount);
    }
    return value;
  };
}

/**
 * The task definition (RegisterTaskDefinition input, DescribeTaskDefinition answer without its
 * server-only fields). `networkMode` is made explicit by the canonical form before the walk.
 */
export const TASK_DEFINITION = obj({
  family: str({ pattern: NAME_RE, allowed: 'must be 1-255 letters, numbers, hyphens or underscores (ECS family)' }),
  networkMode: oneOf(['awsvpc', 'bridge', 'host', 'none']),
  requiresCompatibilities: list(oneOf(['EC2', 'FARGATE', 'EXTERNAL', 'MANAGED_INSTANCES']), { order: 'set' }),
  cpu: str({ normalize: resourceAmount(/^(\d+(?:\.\d+)?)\s*vcpus?$/i) }),
  memory: str({ normalize: resourceAmount(/^(\d+(?:\.\d+)?)\s*gb$/i) }),
  runtimePlatform: obj({
    cpuArchitecture: { type: oneOf(['X86_64', 'ARM64']), default: 'X86_64' },
    operatingSystemFamily: {
      // The API's whole enum, so that a described task definition of any family decodes; the
      // families Fargate runs are FARGATE_OPERATING_SYSTEM_FAMILIES.
      type: oneOf(['LINUX', 'WINDOWS_SERVER_2019_FULL', 'WINDOWS_SERVER_2019_CORE', 'WINDOWS_SERVER_2022_FULL', 'WINDOWS_SERVER_2022_CORE', 'WINDOWS_SERVER_2025_FULL', 'WINDOWS_SERVER_2025_CORE', 'WINDOWS_SERVER_2004_CORE', 'WINDOWS_SERVER_20H2_CORE', 'WINDOWS_SERVER_2016_FULL']),
      default: 'LINUX',
    },
  }),
  taskRoleArn: str({ pattern: ROLE_ARN_RE, allowed: ROLE_ARN_ALLOWED }),
  executionRoleArn: str({ pattern: ROLE_ARN_RE, allowed: ROLE_ARN_ALLOWED }),
  containerDefinitions: list(CONTAINER, { order: 'keyed', key: 'name' }),
  volumes: list(VOLUME, { order: 'keyed', key: 'name' }),
  ephemeralStorage: { type: EPHEMERAL_STORAGE },
  pidMode: { type: oneOf(['task']), doc: 'Fargate: only "task" (share the process namespace among containers).' },
  proxyConfiguration: PROXY_CONFIGURATION,
  enableFaultInjection: bool(),
  placementConstraints: list(obj({ type: oneOf(['memberOf']), expression: str() }), { order: 'set' }),
  ipcMode: { type: str(), refused: FARGATE('ipcMode') },
  inferenceAccelerators: { type: str(), refused: FARGATE('inference accelerators') },
});

/** Environment variable names, as the shorthand checks them. */
export { ENV_NAME_RE };

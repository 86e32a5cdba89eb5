/**
 * RegisterTaskDefinition as ECS does it: validation (Fargate CPU/memory pairs, awsvpc, execution
 * role needs) and the defaults ECS adds and answers back on DescribeTaskDefinition
 * (docs/ecs-facts.md §6; Amazon ECS Developer Guide "Task definition parameters", "Task CPU and memory").
 */
import type {
  ContainerDefinition,
  PortMapping,
  RegisterTaskDefinitionRequest,
  TaskDefinition,
} from '@aws-sdk/client-ecs';
import { clientException } from './errors';
import { listMember } from './protocol';
import { checkRuntimePlatform, checkS3FilesVolumes, fargatePlatformIncompatibility } from './platform-rules';
import { checkContainersAndVolumes, fargateIncompatibility, HEALTH_CHECK_DEFAULTS, vocabularyAttributes } from './task-definition-rules';

/** Valid Fargate memory values (MiB) for each task CPU value (vCPU units), Linux. */
export function fargateMemoryValues(cpu: number): number[] {
  const range = (from: number, to: number, step: number) => {
    const out: number[] = [];
    for (let m = from; m <= to; m += step) out.push(m);
    return out;
  };
  switch (cpu) {
    case 256:
      return [512, 1024, 2048];
    case 512:
      return range(1024, 4096, 1024);
    case 1024:
      return range(2048, 8192, 1024);
    case 2048:
      return range(4096, 16384, 1024);
    case 4096:
      return range(8192, 30720, 1024);
    case 8192:
      return range(16384, 61440, 4096);
    case 16384:
      return range(32768, 122880, 8192);
    default:
      return [];
  }
}

/** True when (cpu vCPU units, memory MiB) is a Fargate configuration. */
export function isValidFargatePair(cpu: number, memory: number): boolean {
  return fargateMemoryValues(cpu).includes(memory);
}

/**
 * Task `cpu` as ECS stores it: integer vCPU units as a numeric string. Accepts "256", 256,
 * "0.25 vCPU", "1vcpu" (case-insensitive).
 * @throws EcsApiError ClientException for anything else.
 */
export function normalizeCpu(value: string | number): string {
  const s = String(value).trim();
  if (/^\d+$/.test(s)) return String(Number(s));
  const m = /^(\d+(?:\.\d+)?)\s*vcpu$/i.exec(s);
  if (m) return String(Math.round(Number(m[1]) * 1024));
  throw clientException(`Invalid 'cpu' setting for task: "${s}". Use vCPU units (e.g. 256) or vCPUs (e.g. 0.25 vCPU).`);
}

/**
 * Task `memory` as ECS stores it: MiB as a numeric string. Accepts "512", 512, "1 GB", "2gb".
 * @throws EcsApiError ClientException for anything else.
 */
export function normalizeMemory(value: string | number): string {
  const s = String(value).trim();
  if (/^\d+$/.test(s)) return String(Number(s));
  const m = /^(\d+(?:\.\d+)?)\s*gb$/i.exec(s);
  if (m) return String(Math.round(Number(m[1]) * 1024));
  throw clientException(`Invalid 'memory' setting for task: "${s}". Use MiB (e.g. 512) or GB (e.g. 1 GB).`);
}

const FAMILY_RE = /^[A-Za-z0-9_-]{1,255}$/;

/**
 * Amazon ECS service quotas (Amazon ECS Developer Guide, "Amazon ECS service quotas";
 * docs/ecs-facts.md §12): the largest task definition in bytes, and its containers. ECS measures a
 * registration's JSON; here the request body without its tags (kept apart from the revision).
 */
const TASK_DEFINITION_MAX_BYTES = 65_536;
const CONTAINERS_PER_TASK_DEFINITION = 10;

/** The stored revision: what DescribeTaskDefinition answers, plus the tags given at registration. */
export interface RegisteredTaskDefinition {
  readonly taskDefinition: TaskDefinition;
  tags: { key: string; value: string }[];
}

export interface RegisterContext {
  readonly arn: string;
  readonly revision: number;
  readonly registeredAt: Date;
  readonly registeredBy: string;
}

/**
 * Validates a RegisterTaskDefinition request and builds the revision ECS would store.
 * @throws EcsApiError ClientException with ECS's wording for: invalid family, no containers, a
 *   container without name or image, duplicate container names, Fargate without awsvpc or
 *   task-level cpu/memory, an invalid Fargate cpu/memory pair ("No Fargate configuration exists
 *   for given values: 256 CPU, 4096 memory. ..."), awslogs or ECR images on Fargate without an
 *   execution role, awsvpc host ports different from container ports, missing container memory,
 *   and the multi-container checks of {@link checkContainersAndVolumes} (task-definition-rules.ts);
 *   Windows on Fargate and S3 Files volumes as ./platform-rules.ts checks them.
 */
export function buildTaskDefinition(req: RegisterTaskDefinitionRequest, ctx: RegisterContext): TaskDefinition {
  const family = checkFamily(req.family);
  const containers = checkShape(req);
  checkRuntimePlatform(req);
  const cpu = req.cpu !== undefined && req.cpu !== '' ? normalizeCpu(req.cpu) : undefined;
  const memory = req.memory !== undefined && req.memory !== '' ? normalizeMemory(req.memory) : undefined;
  const awsvpc = req.networkMode === 'awsvpc';
  const requiresFargate = (req.requiresCompatibilities ?? []).includes('FARGATE');
  if (requiresFargate) checkFargate(req, containers, cpu, memory);
  checkContainerSizesAndPorts(containers, memory, awsvpc);
  checkContainersAndVolumes(req, containers, cpu === undefined ? undefined : Number(cpu), memory === undefined ? undefined : Number(memory), requiresFargate);
  checkS3FilesVolumes(req);
  const fargateCompatible =
    awsvpc &&
    cpu !== undefined &&
    memory !== undefined &&
    isValidFargatePair(Number(cpu), Number(memory)) &&
    fargateIncompatibility(req, containers) === undefined &&
    fargatePlatformIncompatibility(req, containers, Number(cpu)) === undefined;
  return describedRevision(req, ctx, { family, containers, cpu, memory, fargateCompatible });
}

/** The family, checked. typeof first: RegExp.test would turn 5 or ["api"] into a valid-looking name. */
function checkFamily(family: unknown): string {
  if (typeof family !== 'string' || !FAMILY_RE.test(family)) {
    throw clientException(
      'Family name is invalid: up to 255 letters (uppercase and lowercase), numbers, underscores, and hyphens are allowed.',
    );
  }
  return family;
}

/** The request's lists and size, and each container's name and image; returns the containers. */
function checkShape(req: RegisterTaskDefinitionRequest): ContainerDefinition[] {
  const body = req as unknown as Record<string, unknown>;
  const containers = (listMember(body, 'containerDefinitions', 'structure') ?? []) as ContainerDefinition[];
  listMember(body, 'requiresCompatibilities', 'string');
  if (containers.length === 0) throw clientException('Container list cannot be empty.');
  if (containers.length > CONTAINERS_PER_TASK_DEFINITION) throw clientException('Too many containers.');
  const { tags: _tags, ...withoutTags } = body;
  const length = Buffer.byteLength(JSON.stringify(withoutTags), 'utf8');
  if (length > TASK_DEFINITION_MAX_BYTES) {
    // ECS's wording (docs/ecs-facts.md §12).
    throw clientException(`Actual length: '${length}'. Max allowed length is '${TASK_DEFINITION_MAX_BYTES}' bytes.`);
  }
  const names = new Set<string>();
  for (const c of containers) {
    if (!c.name || typeof c.name !== 'string') throw clientException('Container.name should not be null or empty.');
    if (!c.image || typeof c.image !== 'string') throw clientException('Container.image should not be null or empty.');
    listMember(c as Record<string, unknown>, 'portMappings', 'structure');
    if (names.has(c.name)) throw clientException(`Duplicate container name '${c.name}' in task definition.`);
    names.add(c.name);
  }
  return containers;
}

/** What a task definition requiring FARGATE needs: awsvpc, a valid task size, its platform, an execution role for awslogs and ECR. */
function checkFargate(req: RegisterTaskDefinitionRequest, containers: readonly ContainerDefinition[], cpu: string | undefined, memory: string | undefined): void {
  if (req.networkMode !== 'awsvpc') throw clientException("Fargate only supports network mode 'awsvpc'.");
  if (cpu === undefined) throw clientException("Fargate requires that 'cpu' be defined at the task level.");
  if (memory === undefined) throw clientException("Fargate requires that 'memory' be defined at the task level.");
  const platform = fargatePlatformIncompatibility(req, containers, Number(cpu));
  if (platform !== undefined) throw clientException(platform);
  if (!isValidFargatePair(Number(cpu), Number(memory))) {
    throw clientException(
      `No Fargate configuration exists for given values: ${cpu} CPU, ${memory} memory. See the Amazon ECS documentation for the valid values.`,
    );
  }
  for (const c of containers) {
    if (c.logConfiguration?.logDriver === 'awslogs' && !req.executionRoleArn) {
      throw clientException('Fargate requires task definition to have execution role ARN to support log driver awslogs.');
    }
    if (isEcrImage(c.image as string) && !req.executionRoleArn) {
      throw clientException('Fargate requires task definition to have execution role ARN to support ECR images.');
    }
  }
}

/** Container memory against the task's, and awsvpc's host ports. */
function checkContainerSizesAndPorts(containers: readonly ContainerDefinition[], memory: string | undefined, awsvpc: boolean): void {
  for (const c of containers) {
    if (memory === undefined && c.memory === undefined && c.memoryReservation === undefined) {
      throw clientException(
        `Invalid setting for container '${c.name}'. At least one of 'memory' or 'memoryReservation' must be specified.`,
      );
    }
    if (memory !== undefined && c.memory !== undefined && c.memory > Number(memory)) {
      throw clientException(`The 'memory' setting for container '${c.name}' is greater than for the task.`);
    }
    if (!awsvpc) continue;
    for (const p of c.portMappings ?? []) {
      if (p.hostPort !== undefined && p.hostPort !== 0 && p.hostPort !== p.containerPort) {
        throw clientException('When networkMode=awsvpc, the host ports and container ports in port mappings must match.');
      }
    }
  }
}

interface Checked {
  readonly family: string;
  readonly containers: readonly ContainerDefinition[];
  readonly cpu: string | undefined;
  readonly memory: string | undefined;
  readonly fargateCompatible: boolean;
}

/** The revision as DescribeTaskDefinition answers it: every member the request gave, and ECS's defaults. */
function describedRevision(req: RegisterTaskDefinitionRequest, ctx: RegisterContext, c: Checked): TaskDefinition {
  const networkMode = req.networkMode;
  const containerDefinitions = c.containers.map((x) => normalizeContainer(x, networkMode === 'awsvpc'));
  return {
    taskDefinitionArn: ctx.arn,
    containerDefinitions,
    family: c.family,
    ...(req.taskRoleArn ? { taskRoleArn: req.taskRoleArn } : {}),
    ...(req.executionRoleArn ? { executionRoleArn: req.executionRoleArn } : {}),
    ...(networkMode ? { networkMode } : {}),
    revision: ctx.revision,
    volumes: req.volumes ?? [],
    status: 'ACTIVE',
    requiresAttributes: requiresAttributes(req, containerDefinitions),
    placementConstraints: req.placementConstraints ?? [],
    compatibilities: c.fargateCompatible ? ['EC2', 'FARGATE'] : ['EC2'],
    ...(req.runtimePlatform ? { runtimePlatform: req.runtimePlatform } : {}),
    ...(req.requiresCompatibilities ? { requiresCompatibilities: [...req.requiresCompatibilities] } : {}),
    ...(c.cpu !== undefined ? { cpu: c.cpu } : {}),
    ...(c.memory !== undefined ? { memory: c.memory } : {}),
    ...(req.pidMode ? { pidMode: req.pidMode } : {}),
    ...(req.ipcMode ? { ipcMode: req.ipcMode } : {}),
    ...(req.proxyConfiguration ? { proxyConfiguration: req.proxyConfiguration } : {}),
    ...(req.ephemeralStorage ? { ephemeralStorage: req.ephemeralStorage } : {}),
    ...(req.inferenceAccelerators ? { inferenceAccelerators: req.inferenceAccelerators } : {}),
    ...(req.enableFaultInjection !== undefined ? { enableFaultInjection: req.enableFaultInjection } : {}),
    ...(req.trustedExecutionConfiguration ? { trustedExecutionConfiguration: req.trustedExecutionConfiguration } : {}),
    registeredAt: ctx.registeredAt,
    registeredBy: ctx.registeredBy,
  };
}

function isEcrImage(image: string): boolean {
  return /^\d{12}\.dkr\.ecr\.[a-z0-9-]+\.amazonaws\.com(\.cn)?\//.test(image);
}

/** One container with ECS's defaults filled in (docs/ecs-facts.md §6). */
export function normalizeContainer(c: ContainerDefinition, awsvpc: boolean): ContainerDefinition {
  const portMappings: PortMapping[] = (c.portMappings ?? []).map((p) => ({
    ...p,
    ...(p.containerPort !== undefined ? { containerPort: p.containerPort } : {}),
    ...(awsvpc && p.containerPort !== undefined ? { hostPort: p.containerPort } : {}),
    protocol: p.protocol ?? 'tcp',
  }));
  const out: ContainerDefinition = {
    ...c,
    cpu: c.cpu ?? 0,
    portMappings,
    essential: c.essential ?? true,
    environment: c.environment ?? [],
    mountPoints: c.mountPoints ?? [],
    volumesFrom: c.volumesFrom ?? [],
    systemControls: c.systemControls ?? [],
  };
  if (c.healthCheck) {
    out.healthCheck = {
      ...c.healthCheck,
      interval: c.healthCheck.interval ?? HEALTH_CHECK_DEFAULTS.interval,
      timeout: c.healthCheck.timeout ?? HEALTH_CHECK_DEFAULTS.timeout,
      retries: c.healthCheck.retries ?? HEALTH_CHECK_DEFAULTS.retries,
    };
  }
  return out;
}

function requiresAttributes(req: RegisterTaskDefinitionRequest, containers: ContainerDefinition[]): { name: string }[] {
  const names: string[] = [];
  const add = (...n: string[]) => {
    for (const x of n) if (!names.includes(x)) names.push(x);
  };
  if (req.networkMode === 'awsvpc') add('com.amazonaws.ecs.capability.docker-remote-api.1.18', 'ecs.capability.task-eni');
  if (req.taskRoleArn) add('com.amazonaws.ecs.capability.task-iam-role');
  for (const c of containers) {
    if (c.logConfiguration?.logDriver === 'awslogs') {
      add('com.amazonaws.ecs.capability.logging-driver.awslogs', 'com.amazonaws.ecs.capability.docker-remote-api.1.19');
      if (req.executionRoleArn) add('ecs.capability.execution-role-awslogs');
    }
    if (c.healthCheck) add('com.amazonaws.ecs.capability.docker-remote-api.1.24', 'ecs.capability.container-health-check');
    if (req.executionRoleArn && isEcrImage(c.image ?? '')) add('ecs.capability.execution-role-ecr-pull');
    for (const s of c.secrets ?? []) {
      if (s.valueFrom?.includes(':secretsmanager:')) add('ecs.capability.secrets.asm.environment-variables');
      else add('ecs.capability.secrets.ssm.environment-variables');
    }
  }
  add(...vocabularyAttributes(req, containers));
  return names.map((name) => ({ name }));
}

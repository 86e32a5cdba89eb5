/**
 * What RegisterTaskDefinition refuses beyond the basics, and the defaults ECS fills in, for the
 * multi-container vocabulary: essential containers, `dependsOn`, port names and `appProtocol`,
 * container cpu/memory against the task's, volumes (EFS with `authorizationConfig`, EBS
 * `configuredAtLaunch`, bind mounts), FireLens, health check bounds and Fargate's limits.
 *
 * The simulator is the reconciler's test oracle, so this table is its own: it does not import the
 * reconciler's declarations (lambda/core), and a disagreement between the two shows up in tests.
 *
 * Sources: Amazon ECS API reference (ContainerDefinition, ContainerDependency, PortMapping,
 * HealthCheck, EFSVolumeConfiguration, EFSAuthorizationConfig, TaskVolumeConfiguration,
 * EphemeralStorage, FirelensConfiguration, LinuxParameters), the developer guide's "Task
 * definition parameters for Fargate" and "Amazon ECS task definition differences for Fargate".
 * Messages are ECS's own where a public report quotes them (marked "ECS's wording"); otherwise
 * they are the simulator's, written in the same style and naming the container and field.
 */
import type { ContainerDefinition, RegisterTaskDefinitionRequest, Volume } from '@aws-sdk/client-ecs';
import { clientException } from './errors';

/** Defaults ECS adds to a container's `healthCheck` (API reference, HealthCheck). */
export const HEALTH_CHECK_DEFAULTS = { interval: 30, timeout: 5, retries: 3 } as const;

/** Documented bounds of a container health check (seconds; retries a count). */
const HEALTH_CHECK_BOUNDS: readonly { field: 'interval' | 'timeout' | 'retries' | 'startPeriod'; min: number; max: number }[] = [
  { field: 'interval', min: 5, max: 300 },
  { field: 'timeout', min: 2, max: 60 },
  { field: 'retries', min: 1, max: 10 },
  { field: 'startPeriod', min: 0, max: 300 },
];

export const DEPENDENCY_CONDITIONS = ['START', 'COMPLETE', 'SUCCESS', 'HEALTHY'] as const;
export type DependencyCondition = (typeof DEPENDENCY_CONDITIONS)[number];

const APP_PROTOCOLS = ['http', 'http2', 'grpc'];
/** PortMapping.name: up to 64 lowercase letters, digits, `_` and `-`, not starting with `-`. */
const PORT_NAME_RE = /^[a-z0-9_][a-z0-9_-]{0,63}$/;
/** EphemeralStorage.sizeInGiB on Fargate: 21..200 (20 GiB is the default, given by omission). */
const EPHEMERAL_STORAGE_GIB = { min: 21, max: 200 } as const;
/** Fargate's stopTimeout ceiling (seconds). */
const FARGATE_MAX_STOP_TIMEOUT = 120;

/**
 * Container fields Fargate refuses (developer guide, "task definition differences for Fargate").
 * Each entry: the field, whether a given value is present, and the wording.
 */
const FARGATE_UNSUPPORTED_CONTAINER_FIELDS: readonly { field: string; present: (c: ContainerDefinition) => boolean }[] = [
  { field: 'privileged', present: (c) => c.privileged === true },
  { field: 'links', present: (c) => (c.links ?? []).length > 0 },
  { field: 'dockerSecurityOptions', present: (c) => (c.dockerSecurityOptions ?? []).length > 0 },
  { field: 'extraHosts', present: (c) => (c.extraHosts ?? []).length > 0 },
  { field: 'hostname', present: (c) => c.hostname !== undefined },
  { field: 'linuxParameters.devices', present: (c) => (c.linuxParameters?.devices ?? []).length > 0 },
  { field: 'linuxParameters.sharedMemorySize', present: (c) => c.linuxParameters?.sharedMemorySize !== undefined },
  { field: 'linuxParameters.tmpfs', present: (c) => (c.linuxParameters?.tmpfs ?? []).length > 0 },
  { field: 'linuxParameters.maxSwap', present: (c) => c.linuxParameters?.maxSwap !== undefined },
  { field: 'linuxParameters.swappiness', present: (c) => c.linuxParameters?.swappiness !== undefined },
];

/** Task volume kinds Fargate refuses. */
const FARGATE_UNSUPPORTED_VOLUMES: readonly { kind: string; present: (v: Volume) => boolean }[] = [
  { kind: 'host.sourcePath (a bind mount from the host)', present: (v) => v.host?.sourcePath !== undefined },
  { kind: 'dockerVolumeConfiguration', present: (v) => v.dockerVolumeConfiguration !== undefined },
  { kind: 'fsxWindowsFileServerVolumeConfiguration', present: (v) => v.fsxWindowsFileServerVolumeConfiguration !== undefined },
];

/** Why a Fargate task definition is refused, or undefined: the container and task fields Fargate has not. */
export function fargateIncompatibility(req: RegisterTaskDefinitionRequest, containers: readonly ContainerDefinition[]): string | undefined {
  for (const c of containers) {
    for (const f of FARGATE_UNSUPPORTED_CONTAINER_FIELDS) {
      if (f.present(c)) return `Fargate does not support the '${f.field}' parameter (container '${c.name}').`;
    }
    const added = c.linuxParameters?.capabilities?.add ?? [];
    const bad = added.find((cap) => cap !== 'SYS_PTRACE');
    if (bad !== undefined) {
      return `Fargate only supports adding the SYS_PTRACE kernel capability (container '${c.name}' adds ${bad}).`;
    }
    if (c.stopTimeout !== undefined && c.stopTimeout > FARGATE_MAX_STOP_TIMEOUT) {
      return `Invalid 'stopTimeout' for container '${c.name}': ${c.stopTimeout}. Fargate allows at most ${FARGATE_MAX_STOP_TIMEOUT} seconds.`;
    }
  }
  for (const v of req.volumes ?? []) {
    for (const k of FARGATE_UNSUPPORTED_VOLUMES) {
      if (k.present(v)) return `Fargate does not support ${k.kind} volumes (volume '${v.name}').`;
    }
  }
  if (req.ipcMode !== undefined) return "Fargate does not support the 'ipcMode' parameter.";
  if (req.pidMode !== undefined && req.pidMode !== 'task') return "Fargate only supports the 'task' value for 'pidMode'.";
  return undefined;
}

/**
 * Checks the containers and volumes of a RegisterTaskDefinition request as ECS does.
 * @param taskCpu task-level cpu in vCPU units, when given.
 * @param taskMemory task-level memory in MiB, when given.
 * @param fargate the request requires FARGATE compatibility.
 * @throws EcsApiError ClientException naming the container and field for: no essential container,
 *   a `dependsOn` naming a missing container, itself, or forming a cycle, an unknown condition,
 *   SUCCESS/COMPLETE on an essential container, HEALTHY on a container without a health check;
 *   container cpu (or memory) summing above the task's; `memoryReservation` above `memory`; a
 *   port name used twice or malformed, an unknown `appProtocol`, `containerPort` together with
 *   `containerPortRange`; health check values out of bounds; a volume name used twice, a mount
 *   point or `volumesFrom` naming what does not exist; EFS access points or IAM authorization
 *   without transit encryption, or with a root directory other than `/`; more than one EBS
 *   volume configured at launch; FireLens misconfigurations; Fargate's ephemeral storage bounds
 *   and unsupported fields.
 */
export function checkContainersAndVolumes(
  req: RegisterTaskDefinitionRequest,
  containers: readonly ContainerDefinition[],
  taskCpu: number | undefined,
  taskMemory: number | undefined,
  fargate: boolean,
): void {
  const byName = new Map<string, ContainerDefinition>(containers.map((c) => [c.name as string, c]));

  // ECS's wording (Aws::ECS::Errors::ClientException quoted in eagletmt/hako#68).
  if (!containers.some((c) => c.essential !== false)) throw clientException("Task definition doesn't have any essential container.");

  checkDependencies(containers, byName);
  checkResources(containers, taskCpu, taskMemory);
  checkPorts(containers);
  checkHealthChecks(containers);
  checkVolumes(req, containers, byName);
  checkFirelens(containers);
  checkProxyConfiguration(req);

  if (req.ephemeralStorage !== undefined) {
    const size = req.ephemeralStorage.sizeInGiB;
    if (!Number.isInteger(size) || (size as number) < EPHEMERAL_STORAGE_GIB.min || (size as number) > EPHEMERAL_STORAGE_GIB.max) {
      throw clientException(
        `Invalid 'ephemeralStorage.sizeInGiB' value: ${String(size)}. It must be between ${EPHEMERAL_STORAGE_GIB.min} and ${EPHEMERAL_STORAGE_GIB.max} GiB.`,
      );
    }
  }
  if (fargate) {
    const why = fargateIncompatibility(req, containers);
    if (why !== undefined) throw clientException(why);
  }
}

function checkDependencies(containers: readonly ContainerDefinition[], byName: Map<string, ContainerDefinition>): void {
  for (const c of containers) {
    for (const d of c.dependsOn ?? []) {
      const target = byName.get(d.containerName as string);
      if (!d.containerName || target === undefined) {
        throw clientException(`Container '${c.name}' depends on container '${String(d.containerName)}', which is not in the task definition.`);
      }
      if (d.containerName === c.name) throw clientException(`Container '${c.name}' cannot depend on itself.`);
      if (!(DEPENDENCY_CONDITIONS as readonly string[]).includes(d.condition as string)) {
        throw clientException(
          `Invalid dependency condition '${String(d.condition)}' for container '${c.name}'. Valid values: ${DEPENDENCY_CONDITIONS.join(', ')}.`,
        );
      }
      if ((d.condition === 'SUCCESS' || d.condition === 'COMPLETE') && target.essential !== false) {
        // ECS's wording (quoted in boto/boto3#2436 and klothoplatform/klotho#892).
        throw clientException('A dependency container with SUCCESS or COMPLETE condition cannot be an essential container');
      }
      if (d.condition === 'HEALTHY' && target.healthCheck === undefined) {
        throw clientException(
          `Container '${c.name}' depends on '${target.name}' being HEALTHY, but '${target.name}' has no healthCheck.`,
        );
      }
    }
  }
  // A cycle would leave every container in it waiting for ever.
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string, path: string[]): void => {
    if (state.get(name) === 'done') return;
    if (state.get(name) === 'visiting') {
      throw clientException(`Container dependencies form a cycle: ${[...path, name].join(' -> ')}.`);
    }
    state.set(name, 'visiting');
    for (const d of byName.get(name)?.dependsOn ?? []) visit(d.containerName as string, [...path, name]);
    state.set(name, 'done');
  };
  for (const c of containers) visit(c.name as string, []);
}

function checkResources(containers: readonly ContainerDefinition[], taskCpu: number | undefined, taskMemory: number | undefined): void {
  for (const c of containers) {
    if (c.memory !== undefined && c.memoryReservation !== undefined && c.memoryReservation > c.memory) {
      throw clientException(
        `Invalid setting for container '${c.name}'. 'memoryReservation' (${c.memoryReservation}) must not be greater than 'memory' (${c.memory}).`,
      );
    }
  }
  if (taskCpu !== undefined) {
    const sum = containers.reduce((s, c) => s + (c.cpu ?? 0), 0);
    // ECS's wording (quoted in klothoplatform/klotho#892).
    if (sum > taskCpu) throw clientException("The sum of all container 'cpu' values cannot be greater than the value of the task 'cpu'.");
  }
  if (taskMemory !== undefined) {
    const sum = containers.reduce((s, c) => s + (c.memoryReservation ?? c.memory ?? 0), 0);
    if (sum > taskMemory) {
      throw clientException(
        "The sum of all container 'memoryReservation' (or 'memory') values cannot be greater than the value of the task 'memory'.",
      );
    }
  }
}

function checkPorts(containers: readonly ContainerDefinition[]): void {
  const names = new Map<string, string>();
  for (const c of containers) {
    for (const p of c.portMappings ?? []) {
      if (p.containerPort !== undefined && p.containerPortRange !== undefined) {
        throw clientException(`Container '${c.name}': a port mapping cannot have both 'containerPort' and 'containerPortRange'.`);
      }
      if (p.appProtocol !== undefined && !APP_PROTOCOLS.includes(p.appProtocol)) {
        throw clientException(`Invalid 'appProtocol' '${p.appProtocol}' in container '${c.name}'. Valid values: ${APP_PROTOCOLS.join(', ')}.`);
      }
      if (p.name === undefined) continue;
      if (!PORT_NAME_RE.test(p.name)) {
        throw clientException(
          `Invalid port mapping name '${p.name}' in container '${c.name}': up to 64 lowercase letters, numbers, underscores and hyphens, not starting with a hyphen.`,
        );
      }
      const owner = names.get(p.name);
      if (owner !== undefined) {
        throw clientException(`Port mapping name '${p.name}' is used more than once in the task definition (containers '${owner}' and '${c.name}').`);
      }
      names.set(p.name, c.name as string);
    }
  }
}

function checkHealthChecks(containers: readonly ContainerDefinition[]): void {
  for (const c of containers) {
    const hc = c.healthCheck;
    if (hc === undefined) continue;
    if (!Array.isArray(hc.command) || hc.command.length === 0) {
      throw clientException(`Invalid 'healthCheck' for container '${c.name}': 'command' must not be empty.`);
    }
    for (const b of HEALTH_CHECK_BOUNDS) {
      const v = hc[b.field];
      if (v !== undefined && (!Number.isInteger(v) || v < b.min || v > b.max)) {
        throw clientException(`Invalid 'healthCheck.${b.field}' for container '${c.name}': ${v}. It must be between ${b.min} and ${b.max}.`);
      }
    }
  }
}

/**
 * An App Mesh proxy property keeps `""` as its value, but a property without one is refused, in
 * ECS's words (the ClientException reported by users of aws-actions/amazon-ecs-deploy-task-definition
 * when a tool stripped the empty values).
 */
function checkProxyConfiguration(req: RegisterTaskDefinitionRequest): void {
  for (const p of req.proxyConfiguration?.properties ?? []) {
    if (typeof p?.value !== 'string') throw clientException('ProxyConfiguration properties value cannot be null.');
  }
}

function checkVolumes(
  req: RegisterTaskDefinitionRequest,
  containers: readonly ContainerDefinition[],
  byName: Map<string, ContainerDefinition>,
): void {
  const volumes = new Map<string, Volume>();
  let atLaunch = 0;
  for (const v of req.volumes ?? []) {
    if (!v.name) throw clientException('Volume.name should not be null or empty.');
    if (volumes.has(v.name)) throw clientException(`Duplicate volume name '${v.name}' in task definition.`);
    volumes.set(v.name, v);
    if (v.configuredAtLaunch === true) {
      atLaunch++;
      if (v.efsVolumeConfiguration || v.host || v.dockerVolumeConfiguration || v.fsxWindowsFileServerVolumeConfiguration) {
        throw clientException(`Volume '${v.name}' is configured at launch and cannot also have a volume configuration in the task definition.`);
      }
    }
    const efs = v.efsVolumeConfiguration;
    if (efs) {
      if (!efs.fileSystemId) throw clientException(`Volume '${v.name}': efsVolumeConfiguration.fileSystemId should not be null or empty.`);
      const auth = efs.authorizationConfig;
      const needsTls = auth?.iam === 'ENABLED' || auth?.accessPointId !== undefined;
      if (needsTls && efs.transitEncryption !== 'ENABLED') {
        throw clientException(
          `Volume '${v.name}': transit encryption must be ENABLED when an EFS access point or IAM authorization is used.`,
        );
      }
      if (auth?.accessPointId !== undefined && efs.rootDirectory !== undefined && efs.rootDirectory !== '/') {
        throw clientException(`Volume '${v.name}': the root directory must be omitted or '/' when an EFS access point is used.`);
      }
    }
  }
  if (atLaunch > 1) throw clientException('Only one volume can be configured at launch (one Amazon EBS volume per task).');
  for (const c of containers) {
    for (const m of c.mountPoints ?? []) {
      if (!m.sourceVolume || !volumes.has(m.sourceVolume)) {
        throw clientException(`Container '${c.name}' mounts volume '${String(m.sourceVolume)}', which is not defined in the task definition's volumes.`);
      }
      if (!m.containerPath) throw clientException(`Container '${c.name}': mountPoints.containerPath should not be null or empty.`);
    }
    for (const f of c.volumesFrom ?? []) {
      if (!f.sourceContainer || !byName.has(f.sourceContainer) || f.sourceContainer === c.name) {
        throw clientException(`Container '${c.name}' takes volumes from '${String(f.sourceContainer)}', which is not another container of the task definition.`);
      }
    }
  }
}

function checkFirelens(containers: readonly ContainerDefinition[]): void {
  const routers = containers.filter((c) => c.firelensConfiguration !== undefined);
  if (routers.length > 1) throw clientException('A task definition can have only one container with a firelensConfiguration (the log router).');
  for (const r of routers) {
    const type = r.firelensConfiguration?.type;
    if (type !== 'fluentbit' && type !== 'fluentd') {
      throw clientException(`Invalid firelensConfiguration.type '${String(type)}' for container '${r.name}'. Valid values: fluentd, fluentbit.`);
    }
  }
  for (const c of containers) {
    if (c.logConfiguration?.logDriver === 'awsfirelens' && routers.length === 0) {
      throw clientException(
        `Container '${c.name}' uses the awsfirelens log driver, but no container in the task definition has a firelensConfiguration (the log router).`,
      );
    }
  }
}

/** The capabilities ECS lists in `requiresAttributes` for the multi-container vocabulary. */
export function vocabularyAttributes(req: RegisterTaskDefinitionRequest, containers: readonly ContainerDefinition[]): string[] {
  const out: string[] = [];
  if (containers.some((c) => (c.dependsOn ?? []).length > 0 || c.startTimeout !== undefined || c.stopTimeout !== undefined)) {
    out.push('ecs.capability.container-ordering');
  }
  for (const c of containers) {
    if (c.firelensConfiguration) out.push(`ecs.capability.firelens.${c.firelensConfiguration.type}`);
    if (c.logConfiguration?.logDriver === 'awsfirelens') out.push('com.amazonaws.ecs.capability.logging-driver.awsfirelens');
  }
  const efs = (req.volumes ?? []).filter((v) => v.efsVolumeConfiguration);
  if (efs.length > 0) out.push('ecs.capability.efs');
  if (efs.some((v) => v.efsVolumeConfiguration?.authorizationConfig !== undefined)) out.push('ecs.capability.efsAuth');
  if ((req.volumes ?? []).some((v) => v.configuredAtLaunch === true)) out.push('ecs.capability.storage.ebs-task-volume-attach');
  return out;
}

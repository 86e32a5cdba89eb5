/**
 * What RegisterTaskDefinition checks of the task's platform and of its S3 Files volumes: Windows
 * containers on Fargate (operating system families, CPU architecture, task sizes, the parameters
 * Windows tasks do not have) and `volumes[].s3filesVolumeConfiguration`.
 *
 * The simulator's own table, like ./task-definition-rules.ts: it imports nothing from lambda/core.
 *
 * Sources: Amazon ECS API reference (RuntimePlatform, RegisterTaskDefinition `cpu` "The CPU units
 * cannot be less than 1 vCPU when you use Windows containers on Fargate", ContainerDefinition's
 * "This parameter is not supported for Windows containers" on links, linuxParameters, user,
 * disableNetworking, privileged, readonlyRootFilesystem, dnsServers, dnsSearchDomains and
 * ulimits, and on pidMode and ipcMode; S3FilesVolumeConfiguration); the Developer Guide's
 * "Amazon ECS task definition parameters for Fargate" (the task size table: Windows takes 1, 2 and
 * 4 vCPU), "Fargate task ephemeral storage" (not for Windows containers) and "Specify an Amazon S3
 * Files volume in your Amazon ECS task definition" (a task role is required); AWS Batch's
 * RuntimePlatform (X86_64 only and no EFS volume for Windows containers on Fargate). Fargate
 * Windows Server 2025 is not documented: refused, as the safe answer (docs/ecs-facts.md).
 */
import type { ContainerDefinition, RegisterTaskDefinitionRequest } from '@aws-sdk/client-ecs';
import { clientException } from './errors';

/** The operating system families Fargate runs. */
export const FARGATE_OPERATING_SYSTEM_FAMILIES = [
  'LINUX',
  'WINDOWS_SERVER_2019_FULL',
  'WINDOWS_SERVER_2019_CORE',
  'WINDOWS_SERVER_2022_FULL',
  'WINDOWS_SERVER_2022_CORE',
] as const;

/** Every value of the API's OSFamily enum. */
const OS_FAMILIES = [
  ...FARGATE_OPERATING_SYSTEM_FAMILIES,
  'WINDOWS_SERVER_2016_FULL',
  'WINDOWS_SERVER_2004_CORE',
  'WINDOWS_SERVER_20H2_CORE',
  'WINDOWS_SERVER_2025_FULL',
  'WINDOWS_SERVER_2025_CORE',
];
const CPU_ARCHITECTURES = ['X86_64', 'ARM64'];

/** Task CPU values (vCPU units) a Windows task on Fargate may have; the memory range is Linux's. */
export const FARGATE_WINDOWS_CPU_VALUES: readonly number[] = [1024, 2048, 4096];

/** Container parameters Windows containers do not have, and whether a container sets one (a boolean `false` is the default, not a setting). */
const WINDOWS_UNSUPPORTED_CONTAINER_FIELDS: readonly { field: string; present: (c: ContainerDefinition) => boolean }[] = [
  { field: 'links', present: (c) => (c.links ?? []).length > 0 },
  { field: 'linuxParameters', present: (c) => c.linuxParameters !== undefined },
  { field: 'user', present: (c) => c.user !== undefined },
  { field: 'disableNetworking', present: (c) => c.disableNetworking === true },
  { field: 'privileged', present: (c) => c.privileged === true },
  { field: 'readonlyRootFilesystem', present: (c) => c.readonlyRootFilesystem === true },
  { field: 'dnsServers', present: (c) => (c.dnsServers ?? []).length > 0 },
  { field: 'dnsSearchDomains', present: (c) => (c.dnsSearchDomains ?? []).length > 0 },
  { field: 'ulimits', present: (c) => (c.ulimits ?? []).length > 0 },
];

/** The request's operating system family; LINUX when it gives none. */
export function operatingSystemFamilyOf(req: RegisterTaskDefinitionRequest): string {
  return req.runtimePlatform?.operatingSystemFamily ?? 'LINUX';
}

/**
 * Checks `runtimePlatform` against the API's enums, whatever the compatibility.
 * @throws EcsApiError ClientException naming the member and the valid values.
 */
export function checkRuntimePlatform(req: RegisterTaskDefinitionRequest): void {
  const p = req.runtimePlatform;
  if (p === undefined) return;
  if (p.operatingSystemFamily !== undefined && !OS_FAMILIES.includes(p.operatingSystemFamily)) {
    throw clientException(`Invalid runtimePlatform.operatingSystemFamily '${String(p.operatingSystemFamily)}'. Valid values: ${OS_FAMILIES.join(', ')}.`);
  }
  if (p.cpuArchitecture !== undefined && !CPU_ARCHITECTURES.includes(p.cpuArchitecture)) {
    throw clientException(`Invalid runtimePlatform.cpuArchitecture '${String(p.cpuArchitecture)}'. Valid values: ${CPU_ARCHITECTURES.join(', ')}.`);
  }
}

/**
 * Why Fargate cannot run this task's platform, or undefined: an operating system family Fargate
 * has not, or a Windows task with ARM64, fewer than 1 vCPU or more than 4, or a parameter Windows
 * containers on Fargate do not have (named, with its container).
 * @param cpu task cpu in vCPU units.
 */
export function fargatePlatformIncompatibility(req: RegisterTaskDefinitionRequest, containers: readonly ContainerDefinition[], cpu: number): string | undefined {
  const os = operatingSystemFamilyOf(req);
  if (!(FARGATE_OPERATING_SYSTEM_FAMILIES as readonly string[]).includes(os)) {
    return `Fargate does not support the operating system family '${os}'. Valid values on Fargate: ${FARGATE_OPERATING_SYSTEM_FAMILIES.join(', ')}.`;
  }
  if (os === 'LINUX') return undefined;
  if (req.runtimePlatform?.cpuArchitecture === 'ARM64') return `Windows containers on Fargate support only the X86_64 CPU architecture (operating system family '${os}').`;
  if (cpu < 1024) return `The CPU units cannot be less than 1 vCPU when you use Windows containers on Fargate (task cpu ${cpu}).`;
  if (!FARGATE_WINDOWS_CPU_VALUES.includes(cpu)) return `Windows containers on Fargate support task cpu ${FARGATE_WINDOWS_CPU_VALUES.join(', ')} (got ${cpu}).`;
  for (const c of containers) {
    const f = WINDOWS_UNSUPPORTED_CONTAINER_FIELDS.find((x) => x.present(c));
    if (f) return `Windows containers on Fargate do not support the '${f.field}' parameter (container '${c.name}').`;
  }
  if (req.pidMode !== undefined) return "Windows containers on Fargate do not support the 'pidMode' parameter.";
  if (req.ephemeralStorage !== undefined) return "Windows containers on Fargate do not support the 'ephemeralStorage' parameter.";
  const efs = (req.volumes ?? []).find((v) => v.efsVolumeConfiguration !== undefined);
  if (efs) return `Windows containers on Fargate do not support efsVolumeConfiguration volumes (volume '${efs.name}').`;
  return undefined;
}

/** `arn:<partition>:s3files:<region>:<account>:file-system/<id>`, and its access points. */
const S3FILES_FILE_SYSTEM_ARN_RE = /^arn:aws[a-z-]*:s3files:[a-z0-9-]+:\d{12}:file-system\/[A-Za-z0-9-]+$/;
const S3FILES_ACCESS_POINT_ARN_RE = /^arn:aws[a-z-]*:s3files:[a-z0-9-]+:\d{12}:(file-system\/[A-Za-z0-9-]+\/)?access-point\/[A-Za-z0-9-]+$/;

/**
 * S3 Files volumes (named: ./task-definition-rules.ts checks names): no other volume kind beside it, a file system ARN, an access point only with the root directory
 * omitted or `/`, a transit encryption port 0-65535, and a task role on the task definition.
 * @throws EcsApiError ClientException naming the volume and the member.
 */
export function checkS3FilesVolumes(req: RegisterTaskDefinitionRequest): void {
  for (const v of req.volumes ?? []) {
    const s3 = v.s3filesVolumeConfiguration;
    if (s3 === undefined) continue;
    if (v.configuredAtLaunch === true || v.efsVolumeConfiguration || v.host || v.dockerVolumeConfiguration || v.fsxWindowsFileServerVolumeConfiguration) {
      throw clientException(`Volume '${v.name}' can specify only one of configuredAtLaunch, dockerVolumeConfiguration, efsVolumeConfiguration, s3filesVolumeConfiguration, fsxWindowsFileServerVolumeConfiguration or host.`);
    }
    if (typeof s3.fileSystemArn !== 'string' || !S3FILES_FILE_SYSTEM_ARN_RE.test(s3.fileSystemArn)) {
      throw clientException(`Invalid s3filesVolumeConfiguration.fileSystemArn '${String(s3.fileSystemArn)}' (volume '${v.name}'): an S3 Files file system ARN is required.`);
    }
    if (s3.accessPointArn !== undefined && !S3FILES_ACCESS_POINT_ARN_RE.test(s3.accessPointArn)) {
      throw clientException(`Invalid s3filesVolumeConfiguration.accessPointArn '${s3.accessPointArn}' (volume '${v.name}').`);
    }
    if (s3.accessPointArn !== undefined && s3.rootDirectory !== undefined && s3.rootDirectory !== '/') {
      throw clientException(`The root directory must be omitted or '/' when an access point is specified (volume '${v.name}').`);
    }
    const port = s3.transitEncryptionPort;
    if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
      throw clientException(`Invalid s3filesVolumeConfiguration.transitEncryptionPort ${String(port)} (volume '${v.name}'): it must be 0-65535.`);
    }
    if (!req.taskRoleArn) throw clientException(`A task definition with an S3 Files volume requires a task role (volume '${v.name}').`);
  }
}

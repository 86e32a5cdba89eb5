/**
 * Rules of a spec across fields for the task's platform and its S3 Files volumes: what
 * RegisterTaskDefinition or CreateService would refuse for Windows containers on Fargate (task
 * size, CPU architecture, Fargate Spot, the parameters Windows containers do not have) and for an
 * S3 Files volume (a task role, an access point's root directory, one kind of volume), found
 * before any call, each naming the field and what is allowed.
 *
 * Sources (docs/ecs-facts.md §15): Amazon ECS API reference (RegisterTaskDefinition `cpu`: "The
 * CPU units cannot be less than 1 vCPU when you use Windows containers on Fargate"; the
 * ContainerDefinition and RegisterTaskDefinition members "not supported for Windows containers";
 * CapacityProviderStrategyItem: Fargate Spot runs Linux tasks; Volume: one kind per volume;
 * S3FilesVolumeConfiguration), the Developer Guide ("Amazon ECS task definition parameters for
 * Fargate" task sizes, "Fargate task ephemeral storage"), AWS Batch's RuntimePlatform (X86_64 and
 * no EFS for Windows containers on Fargate).
 */
import { own } from '../dict';
import type { Issue } from './rules';

const rec = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const present = (v: unknown): boolean => v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0);

/** Task cpu values (vCPU units) Windows containers on Fargate take. */
export const FARGATE_WINDOWS_CPU_VALUES: readonly number[] = [1024, 2048, 4096];

/** Container parameters Windows containers do not have (booleans only when true: false is their default). */
const WINDOWS_UNSUPPORTED_CONTAINER_FIELDS: readonly { field: string; set: (v: unknown) => boolean }[] = [
  { field: 'linuxParameters', set: present },
  { field: 'user', set: present },
  { field: 'readonlyRootFilesystem', set: (v) => v === true },
  { field: 'ulimits', set: present },
];

/**
 * Every platform and S3 Files rule, on the raw item (read defensively: the rules run even when
 * single fields are invalid).
 * @param taskCpu the task cpu in effect, vCPU units (the default applied).
 */
export function checkPlatformRules(raw: Record<string, unknown>, taskCpu: number, issue: Issue): void {
  const os = raw.operatingSystemFamily;
  if (typeof os === 'string' && os.startsWith('WINDOWS_')) checkWindows(raw, os, taskCpu, issue);
  checkS3Files(raw, issue);
}

function checkWindows(raw: Record<string, unknown>, os: string, taskCpu: number, issue: Issue): void {
  const on = `for Windows containers on Fargate (operatingSystemFamily ${os})`;
  if (!FARGATE_WINDOWS_CPU_VALUES.includes(taskCpu)) {
    const dflt = raw.cpu === undefined ? ` (${taskCpu} is the default when cpu is omitted)` : '';
    issue(['cpu'], `must be ${FARGATE_WINDOWS_CPU_VALUES.join(', ')} ${on}: at least 1 vCPU, and 8192 and 16384 are Linux only; got ${taskCpu}${dflt}`, taskCpu);
  }
  if (raw.cpuArchitecture === 'ARM64') issue(['cpuArchitecture'], `must be X86_64 ${on}, got "ARM64"`, 'ARM64');
  if (raw.capacityProvider === 'FARGATE_SPOT') issue(['capacityProvider'], `must be FARGATE ${on}: Fargate Spot runs Linux tasks only`, 'FARGATE_SPOT');
  arr(raw.capacityProviderStrategy).forEach((item, i) => {
    if (rec(item)?.capacityProvider === 'FARGATE_SPOT') {
      issue(['capacityProviderStrategy', i, 'capacityProvider'], `must be FARGATE ${on}: Fargate Spot runs Linux tasks only`, 'FARGATE_SPOT');
    }
  });
  arr(raw.containers).forEach((c, i) => {
    const r = rec(c);
    for (const f of WINDOWS_UNSUPPORTED_CONTAINER_FIELDS) {
      if (r && f.set(own(r, f.field))) issue(['containers', i, f.field], `is not supported ${on}; remove it`, own(r, f.field));
    }
  });
  if (present(raw.pidMode)) issue(['pidMode'], `is not supported ${on}; remove it`, raw.pidMode);
  if (present(raw.ephemeralStorage)) issue(['ephemeralStorage'], `is not supported ${on} (ECS sizes their storage itself); remove it`, raw.ephemeralStorage);
  if (present(raw.proxyConfiguration)) issue(['proxyConfiguration'], `is not supported ${on} (App Mesh runs Linux tasks); remove it`, raw.proxyConfiguration);
  arr(raw.volumes).forEach((v, i) => {
    const efs = rec(v)?.efsVolumeConfiguration;
    if (present(efs)) issue(['volumes', i, 'efsVolumeConfiguration'], `is not supported ${on}; remove it`, efs);
  });
}

function checkS3Files(raw: Record<string, unknown>, issue: Issue): void {
  arr(raw.volumes).forEach((v, i) => {
    const r = rec(v);
    const s3 = rec(r?.s3filesVolumeConfiguration);
    if (!r || !s3) return;
    const where = ['volumes', i, 's3filesVolumeConfiguration'];
    if (raw.taskRoleArn === undefined) issue(where, 'needs taskRoleArn: ECS attaches an S3 Files file system with the task role', s3);
    if (s3.accessPointArn !== undefined && s3.rootDirectory !== undefined && s3.rootDirectory !== '/') {
      issue([...where, 'rootDirectory'], `must be omitted or "/" with an accessPointArn (the access point sets the path), got ${JSON.stringify(s3.rootDirectory)}`, s3.rootDirectory);
    }
    const other = ['efsVolumeConfiguration', 'configuredAtLaunch'].find((k) => (k === 'configuredAtLaunch' ? own(r, k) === true : present(own(r, k))));
    if (other !== undefined) issue(['volumes', i, other], 'must not be given with s3filesVolumeConfiguration: a volume is one kind only', own(r, other));
  });
}

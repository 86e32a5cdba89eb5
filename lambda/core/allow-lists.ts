/**
 * Allow-lists: the values a person who can write the spec table may choose for what reaches
 * outside the task (its network, the load balancers it joins, the secrets and roles it gets, the
 * images it runs, the file systems it mounts). A spec that chooses a value outside a list gets
 * `NotAllowed`, naming the field path, the value and the list, and no ECS write.
 *
 * Semantics, the same for every list:
 * - undefined (variable unset or empty): anything; `[]` (the variable is `NONE`): nothing;
 * - an entry ending in `*` matches every value that starts with the text before the `*` (`*`
 *   alone matches anything); any other entry matches that exact value (case-sensitive);
 * - image registries only: an entry without `/` and without `*` is a registry host and matches
 *   every image on that host (case-insensitive, Docker Hub is `docker.io`); an entry with `/`
 *   matches that repository path and everything below it (`ghcr.io/acme` matches
 *   `ghcr.io/acme/app:1`, not `ghcr.io/acme-evil/app`); images are compared in Docker's
 *   normalized form (`nginx` is `docker.io/library/nginx`);
 * - only values the spec itself gives are checked: the reconciler's own defaults (default subnets,
 *   security groups, assignPublicIp, execution role) come from the operator, not the table.
 *
 * Pure; no SDK. Environment variable and construct prop names live here, so the parser
 * (`lambda/config.ts`), the construct (`lib/`) and the messages cannot drift apart.
 */
import type { ServiceSpec } from './types';

/** Every allow-list: its environment variable, the construct prop that sets it, and what it lists. */
export const ALLOW_LIST = {
  subnets: { env: 'ALLOWED_SUBNETS', prop: 'allowedSubnets', lists: 'subnet ids' },
  securityGroups: { env: 'ALLOWED_SECURITY_GROUPS', prop: 'allowedSecurityGroups', lists: 'security group ids' },
  assignPublicIp: { env: 'ALLOWED_ASSIGN_PUBLIC_IP', prop: 'allowPublicIp', lists: 'ENABLED and/or DISABLED' },
  targetGroupArns: { env: 'ALLOWED_TARGET_GROUP_ARNS', prop: 'allowedTargetGroups', lists: 'target group ARNs' },
  secrets: {
    env: 'ALLOWED_SECRETS',
    prop: 'allowedSecrets',
    lists: 'valueFrom prefixes: Secrets Manager secret ARNs, SSM parameter ARNs or names',
  },
  taskRoleArns: { env: 'ALLOWED_TASK_ROLE_ARNS', prop: 'allowedTaskRoles', lists: 'IAM role ARNs' },
  executionRoleArns: { env: 'ALLOWED_EXECUTION_ROLE_ARNS', prop: 'allowedExecutionRoles', lists: 'IAM role ARNs' },
  imageRegistries: { env: 'ALLOWED_IMAGE_REGISTRIES', prop: 'allowedImageRegistries', lists: 'registry hosts or repository prefixes' },
  efsFileSystems: { env: 'ALLOWED_EFS_FILE_SYSTEMS', prop: 'allowedEfsFileSystems', lists: 'EFS file system ids' },
} as const;

export type AllowListName = keyof typeof ALLOW_LIST;

/** The configured lists; an undefined list means "anything", an empty list means "nothing". */
export type AllowLists = { readonly [K in AllowListName]?: readonly string[] };

/** The environment variable names of the lists, by list. */
export const ALLOW_LIST_ENV = Object.fromEntries(
  Object.entries(ALLOW_LIST).map(([k, v]) => [k, v.env]),
) as { readonly [K in AllowListName]: (typeof ALLOW_LIST)[K]['env'] };

/** One value of a spec outside one list. */
export interface AllowListViolation {
  /** Spec attribute path, e.g. `containers[1].secrets[0].valueFrom`, `subnets[0]`. */
  readonly path: string;
  readonly value: string;
  readonly list: AllowListName;
}

/** Whether allow-list `entry` admits `value` (exact, or prefix when the entry ends in `*`). */
export function entryMatches(entry: string, value: string): boolean {
  return entry.endsWith('*') ? value.startsWith(entry.slice(0, -1)) : entry === value;
}

/**
 * Registry host of an image reference, following Docker's reference grammar: the first
 * `/`-separated component is a registry when it contains `.` or `:` or is `localhost`; otherwise
 * (and for references without `/`) the image is on Docker Hub, registry `docker.io`. Docker Hub's
 * aliases `index.docker.io` and `registry-1.docker.io` map to `docker.io`. Lower case.
 */
export function imageRegistry(image: string): string {
  return normalizedImage(image).registry;
}

/** Docker's normalized form: registry host and repository path (`library/` for official images). */
function normalizedImage(image: string): { registry: string; reference: string } {
  const lower = image.toLowerCase();
  const slash = lower.indexOf('/');
  const first = slash < 0 ? '' : lower.slice(0, slash);
  const hasRegistry = slash >= 0 && (first.includes('.') || first.includes(':') || first === 'localhost');
  let registry = hasRegistry ? first : 'docker.io';
  if (registry === 'index.docker.io' || registry === 'registry-1.docker.io') registry = 'docker.io';
  let path = hasRegistry ? lower.slice(slash + 1) : lower;
  if (registry === 'docker.io' && !path.includes('/')) path = `library/${path}`;
  return { registry, reference: `${registry}/${path}` };
}

/** Whether image-registry entry `entry` admits `image` (see the module doc). */
export function imageAllowed(entry: string, image: string): boolean {
  const e = entry.toLowerCase();
  const { registry, reference } = normalizedImage(image);
  if (e.endsWith('*')) return reference.startsWith(e.slice(0, -1));
  if (!e.includes('/')) return registry === e;
  const rest = reference.slice(e.length);
  return reference.startsWith(e) && (rest === '' || /^[/:@]/.test(rest));
}

function admits(list: AllowListName, entries: readonly string[], value: string): boolean {
  return list === 'imageRegistries'
    ? entries.some((e) => imageAllowed(e, value))
    : entries.some((e) => entryMatches(e, value));
}

const rec = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Every value of `spec` that an allow-list governs, with its path (spec attribute names). */
export function allowListedValues(spec: ServiceSpec): { path: string; value: string; list: AllowListName }[] {
  const out: { path: string; value: string; list: AllowListName }[] = [];
  const add = (list: AllowListName, path: string, value: unknown) => {
    if (typeof value === 'string') out.push({ list, path, value });
  };
  spec.subnets?.forEach((s, i) => add('subnets', `subnets[${i}]`, s));
  spec.securityGroups?.forEach((g, i) => add('securityGroups', `securityGroups[${i}]`, g));
  if (spec.assignPublicIp !== undefined) add('assignPublicIp', 'assignPublicIp', spec.assignPublicIp ? 'ENABLED' : 'DISABLED');
  add('targetGroupArns', 'loadBalancer.targetGroupArn', spec.loadBalancer?.targetGroupArn);
  spec.loadBalancers?.forEach((l, i) => add('targetGroupArns', `loadBalancers[${i}].targetGroupArn`, l.targetGroupArn));
  add('taskRoleArns', 'taskRoleArn', spec.taskRoleArn);
  add('executionRoleArns', 'executionRoleArn', spec.executionRoleArn);
  if (spec.image !== '') add('imageRegistries', 'image', spec.image);
  for (const [name, valueFrom] of Object.entries(spec.secrets)) add('secrets', `secrets.${name}`, valueFrom);
  (spec.containers ?? []).forEach((c, i) => {
    const at = `containers[${i}]`;
    add('imageRegistries', `${at}.image`, c.image);
    arr(c.secrets).forEach((s, j) => add('secrets', `${at}.secrets[${j}].valueFrom`, rec(s)?.valueFrom));
    arr(rec(c.logConfiguration)?.secretOptions).forEach((s, j) =>
      add('secrets', `${at}.logConfiguration.secretOptions[${j}].valueFrom`, rec(s)?.valueFrom),
    );
    add('secrets', `${at}.repositoryCredentials.credentialsParameter`, str(rec(c.repositoryCredentials)?.credentialsParameter));
  });
  (spec.volumes ?? []).forEach((v, i) =>
    add('efsFileSystems', `volumes[${i}].efsVolumeConfiguration.fileSystemId`, rec(v.efsVolumeConfiguration)?.fileSystemId),
  );
  return out;
}

/** Whether `allow` sets any list (else {@link allowListViolations} finds nothing, whatever the spec). */
export function anyAllowList(allow: AllowLists): boolean {
  for (const name in ALLOW_LIST) if (allow[name as AllowListName] !== undefined) return true;
  return false;
}

/** What {@link allowListViolations} returns when no list is set (shared, frozen: every spec every pass). */
const NO_VIOLATIONS = Object.freeze([]) as unknown as AllowListViolation[];

/** The values of `spec` outside `allow`, in attribute order; [] when every value is allowed. */
export function allowListViolations(spec: ServiceSpec, allow: AllowLists): AllowListViolation[] {
  // No list set (the default): anything is allowed, and the spec's values need not be gathered.
  if (!anyAllowList(allow)) return NO_VIOLATIONS;
  return allowListedValues(spec).filter((v) => {
    const entries = allow[v.list];
    return entries !== undefined && !admits(v.list, entries, v.value);
  });
}

/**
 * One sentence per violation, naming the path, the value and the list (its variable and entries),
 * e.g. `subnets[0] subnet-bad is not in the allow-list ALLOWED_SUBNETS [subnet-a, subnet-b*]`.
 */
export function describeViolation(v: AllowListViolation, allow: AllowLists): string {
  const entries = allow[v.list] ?? [];
  const { env } = ALLOW_LIST[v.list];
  const value = v.list === 'imageRegistries' ? `${v.value} (registry ${imageRegistry(v.value)})` : v.value;
  return entries.length === 0
    ? `${v.path} ${value} is not allowed: the allow-list ${env} is empty (NONE)`
    : `${v.path} ${value} is not in the allow-list ${env} [${entries.join(', ')}]`;
}

/**
 * Canonical task definitions: render the RegisterTaskDefinition input for a spec, map a rendered
 * input and a DescribeTaskDefinition result into one canonical form, and diff two task definitions
 * field by field.
 *
 * Why a canonical form: ECS answers a registered task definition with defaults filled in, empty
 * lists added, numbers turned into strings, lists reordered and server-only fields attached
 * (`docs/ecs-facts.md` §6). Comparing raw JSON gives the "perpetual diff" that makes a
 * reconciler register a new revision, and roll every service, on every pass. Comparing canonical
 * forms does not, while any real difference, including one the reconciler never renders (a second
 * container, a volume added by hand), still shows as drift.
 *
 * Pure functions; no SDK imports (the core never imports `@aws-sdk/*`).
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json';
import { OWNER_TAG_KEY } from './ports';
import {
  type CanonicalValue,
  type Node,
  canonicalOf,
  compareStrings,
  deepEqual,
  allOptional,
  defaultAt,
  fieldOrderOf,
  isPlainObject,
} from './vocab/decl';
import { HEALTH_CHECK, TASK_DEFINITION } from './vocab/task';
import type { ContainerDefinition, ContainerSpec, FieldChange, RegisterTaskDefinitionInput, ServiceKey, ServiceSpec, TaskDefinition } from './types';
import type { ReconcilerDefaults } from './options';
import { own } from './dict';

// ---------------------------------------------------------------------------------------------
// Family and rendering
// ---------------------------------------------------------------------------------------------

/**
 * The task definition family of a service: `${cluster}-${service}`, e.g. `prod-web`.
 *
 * One family per service keeps revisions of different services apart and lets the reconciler find
 * "its" task definitions by name. ECS allows up to 255 letters, digits, hyphens and underscores in
 * a family (RegisterTaskDefinition `family`); cluster and service names use the same alphabet and
 * each allow 255 characters, so a very long pair can exceed the limit: the spec parser is where
 * that is rejected, not here.
 */
export function taskDefinitionFamily(key: ServiceKey): string {
  return `${key.cluster}-${key.service}`;
}

/** Options of {@link renderTaskDefinition}. */
export interface RenderOptions {
  readonly defaults: ReconcilerDefaults;
  /** Value of the owner tag ({@link OWNER_TAG_KEY}). */
  readonly ownerId: string;
}

/**
 * The RegisterTaskDefinition input for a spec (Amazon ECS API reference, RegisterTaskDefinition).
 *
 * Shape: family `${cluster}-${service}`; `networkMode: "awsvpc"`; `requiresCompatibilities:
 * ["FARGATE"]`; `cpu` as a string of vCPU units (1024 = 1 vCPU) and `memory` as a string of MiB;
 * `runtimePlatform` with the spec's `cpuArchitecture` and `operatingSystemFamily` (LINUX when omitted);
 * `taskRoleArn` from the spec; `executionRoleArn` from the spec, else `defaults.executionRoleArn`;
 * one essential container named after the service with `image`, `command`, `environment` (sorted
 * by name), `secrets` (name -> valueFrom, sorted), `portMappings` `[{containerPort, protocol:
 * "tcp"}]` when the spec has a `containerPort` (hostPort omitted: in awsvpc it equals
 * containerPort), `healthCheck` (intervalSeconds -> interval, timeoutSeconds -> timeout, retries,
 * startPeriodSeconds -> startPeriod; seconds), and an `awslogs` `logConfiguration` only when
 * `defaults.logGroupPrefix` is set (group `${prefix}${cluster}`, `awslogs-region` when
 * `defaults.region` is set, stream prefix = service name). Tags: the spec's tags (sorted by key)
 * plus the owner tag; tags are not part of the canonical comparison.
 *
 * Empty environment, secrets and command are left out rather than sent as `[]`; ECS treats both
 * alike. Never throws; the spec is assumed valid (see `lambda/core/spec.ts`).
 */
export function renderTaskDefinition(spec: ServiceSpec, options: RenderOptions): RegisterTaskDefinitionInput {
  const containers = spec.image !== '' || !spec.containers ? [shorthandContainer(spec, options)] : [];
  for (const c of spec.containers ?? []) containers.push(structuredClone(c));

  const td: RegisterTaskDefinitionInput = {
    family: spec.family ?? taskDefinitionFamily(spec),
    networkMode: 'awsvpc',
    requiresCompatibilities: ['FARGATE'],
    cpu: String(spec.cpu),
    memory: String(spec.memory),
    runtimePlatform: { cpuArchitecture: spec.cpuArchitecture, operatingSystemFamily: spec.operatingSystemFamily ?? 'LINUX' },
    containerDefinitions: containers,
  };
  if (spec.taskRoleArn !== undefined) td.taskRoleArn = spec.taskRoleArn;
  const executionRoleArn = spec.executionRoleArn ?? options.defaults.executionRoleArn;
  if (executionRoleArn !== undefined) td.executionRoleArn = executionRoleArn;
  // The task-level fields in ECS's names, copied as the spec gives them (declared in ./vocab/task).
  if (spec.volumes !== undefined) td.volumes = structuredClone(spec.volumes);
  if (spec.ephemeralStorage !== undefined) td.ephemeralStorage = { ...spec.ephemeralStorage };
  if (spec.pidMode !== undefined) td.pidMode = spec.pidMode;
  if (spec.proxyConfiguration !== undefined) td.proxyConfiguration = structuredClone(spec.proxyConfiguration);
  if (spec.enableFaultInjection !== undefined) td.enableFaultInjection = spec.enableFaultInjection;
  td.tags = [
    ...Object.entries(spec.tags)
      .filter(([key]) => key !== OWNER_TAG_KEY)
      .sort(([a], [b]) => compareStrings(a, b))
      .map(([key, value]) => ({ key, value })),
    { key: OWNER_TAG_KEY, value: options.ownerId },
  ];
  return td;
}

/** The shorthand's container, named after the service (see {@link renderTaskDefinition}). */
function shorthandContainer(spec: ServiceSpec, options: RenderOptions): ContainerSpec {
  const container: ContainerSpec = {
    name: spec.service,
    image: spec.image,
    essential: true,
  };
  if (spec.command && spec.command.length > 0) container.command = [...spec.command];
  const environment = Object.entries(spec.environment)
    .sort(([a], [b]) => compareStrings(a, b))
    .map(([name, value]) => ({ name, value }));
  if (environment.length > 0) container.environment = environment;
  const secrets = Object.entries(spec.secrets)
    .sort(([a], [b]) => compareStrings(a, b))
    .map(([name, valueFrom]) => ({ name, valueFrom }));
  if (secrets.length > 0) container.secrets = secrets;
  if (spec.containerPort !== undefined) {
    container.portMappings = [{ containerPort: spec.containerPort, protocol: 'tcp' }];
  }
  if (spec.healthCheck) {
    const hc = spec.healthCheck;
    const healthCheck: NonNullable<ContainerSpec['healthCheck']> = { command: [...hc.command] };
    if (hc.intervalSeconds !== undefined) healthCheck.interval = hc.intervalSeconds;
    if (hc.timeoutSeconds !== undefined) healthCheck.timeout = hc.timeoutSeconds;
    if (hc.retries !== undefined) healthCheck.retries = hc.retries;
    if (hc.startPeriodSeconds !== undefined) healthCheck.startPeriod = hc.startPeriodSeconds;
    container.healthCheck = healthCheck;
  }
  const { logGroupPrefix, region } = options.defaults;
  if (logGroupPrefix !== undefined && logGroupPrefix !== '') {
    const logOptions: Record<string, string> = { 'awslogs-group': `${logGroupPrefix}${spec.cluster}` };
    if (region !== undefined && region !== '') logOptions['awslogs-region'] = region;
    logOptions['awslogs-stream-prefix'] = spec.service;
    container.logConfiguration = { logDriver: 'awslogs', options: logOptions };
  }
  return container;
}

// ---------------------------------------------------------------------------------------------
// Canonical form
// ---------------------------------------------------------------------------------------------

export type { CanonicalValue } from './vocab/decl';

/**
 * The canonical form of a task definition: a JSON object with sorted keys in which
 *
 * - `containerDefinitions` is an object keyed by container name (order of containers carries no
 *   meaning); each container's `environment` is `{NAME: value}` and `secrets` is
 *   `{NAME: valueFrom}` (sets keyed by name); `command` and `entryPoint` keep their order;
 * - every value equal to ECS's declared default is removed, so that absent and default compare
 *   equal (see {@link canonicalTaskDefinition});
 * - server-only fields and tags are gone.
 *
 * Two task definitions are equal for the reconciler exactly when their canonical forms are
 * deeply equal.
 */
export interface CanonicalTaskDefinition {
  readonly [field: string]: CanonicalValue;
}

/**
 * Fields DescribeTaskDefinition adds that are not part of a revision's content (Amazon ECS API
 * reference, TaskDefinition). `tags` is here too: a revision's tags can change without a new
 * revision, and DescribeTaskDefinition returns them only with `include: ["TAGS"]`, outside the
 * task definition object.
 */
export const SERVER_ONLY_TASK_DEFINITION_FIELDS: readonly string[] = [
  'taskDefinitionArn',
  'revision',
  'status',
  'requiresAttributes',
  'compatibilities',
  'registeredAt',
  'registeredBy',
  'deregisteredAt',
  'deleteRequestedAt',
  'tags',
];

/** Health check defaults (Amazon ECS API reference, HealthCheck), from {@link HEALTH_CHECK}. */
export const HEALTH_CHECK_DEFAULTS = {
  interval: HEALTH_CHECK.fields.interval.default as number,
  timeout: HEALTH_CHECK.fields.timeout.default as number,
  retries: HEALTH_CHECK.fields.retries.default as number,
  startPeriod: HEALTH_CHECK.fields.startPeriod.default as number,
} as const;

/** The network mode a task definition without one gets: awsvpc on Fargate, else bridge. */
function networkModeOf(td: TaskDefinition): string {
  if (typeof td.networkMode === 'string' && td.networkMode !== '') return td.networkMode;
  return Array.isArray(td.requiresCompatibilities) && td.requiresCompatibilities.includes('FARGATE') ? 'awsvpc' : 'bridge';
}

/**
 * Maps a task definition, as rendered by {@link renderTaskDefinition} or as DescribeTaskDefinition
 * returns it, into its {@link CanonicalTaskDefinition}. Never throws: values it cannot interpret
 * are kept as they are, so they show as a difference instead of being hidden.
 *
 * The rules come from the declarations of `./vocab/task.ts` (docs/ecs-facts.md §6; Amazon ECS API
 * reference, TaskDefinition / ContainerDefinition), walked by `canonicalOf` (`./vocab/decl.ts`):
 * - server-only fields ({@link SERVER_ONLY_TASK_DEFINITION_FIELDS}) and `tags` are dropped;
 * - `null`, `[]`, `{}`, and `false` for a boolean without another default, are the same as
 *   absent, anywhere (ECS answers `mountPoints: []`, `volumesFrom: []`, `systemControls: []`,
 *   `secretOptions: []`, `enableFaultInjection: false`, `readOnly: false`...);
 * - a value equal to its declared ECS default is the same as absent: container `essential: true`,
 *   `cpu: 0`, `stopTimeout: 30`, `versionConsistency: "enabled"`, port `protocol: "tcp"`, health
 *   check `interval` 30, `timeout` 5, `retries` 3, `startPeriod` 0, `runtimePlatform` X86_64 /
 *   LINUX, `ephemeralStorage.sizeInGiB` 20, EFS `rootDirectory: "/"`, `transitEncryption` and
 *   `authorizationConfig.iam` DISABLED;
 * - `networkMode` absent = `awsvpc` when `requiresCompatibilities` names FARGATE, else `bridge`;
 * - task `cpu` as vCPU units and `memory` as MiB, both integer strings: `256`, `"256"` and
 *   `"0.25 vCPU"` are the same; `"2 GB"` is `"2048"` (RegisterTaskDefinition accepts these forms);
 * - keyed lists become maps by their key: containers by `name`, `environment` (name -> value,
 *   `""` when the value is missing), `secrets` and log `secretOptions` (name -> valueFrom),
 *   `dependsOn` (containerName -> condition), `ulimits` by name, `systemControls` by namespace,
 *   volumes by name; sets (`portMappings`, `mountPoints`, `volumesFrom`, `requiresCompatibilities`,
 *   `placementConstraints`) are sorted; `command`, `entryPoint`, `environmentFiles` keep order;
 * - port mappings: `hostPort` 0 or absent = dynamic, and in `awsvpc` equal to `containerPort`, so
 *   it is kept only where it says something else;
 * - every field the vocabulary does not declare is kept (after the generic rule above), so such
 *   fields are drift when they hold anything but an empty value.
 */
export function canonicalTaskDefinition(td: TaskDefinition): CanonicalTaskDefinition {
  const rest: Record<string, unknown> = { ...td };
  for (const field of SERVER_ONLY_TASK_DEFINITION_FIELDS) delete rest[field];
  const networkMode = networkModeOf(td);
  rest.networkMode = networkMode;
  const out = canonicalOf(TASK_DEFINITION, rest, { networkMode });
  return isPlainObject(out) ? out : {};
}

// ---------------------------------------------------------------------------------------------
// Diff
// ---------------------------------------------------------------------------------------------

/** How an absent value is shown in a {@link FieldChange}. */
export const ABSENT = '(none)';

const MAX_SHOWN_LENGTH = 100;

/**
 * Field-level differences between two task definitions, compared in canonical form
 * ({@link canonicalTaskDefinition}): `from` is the live value, `to` the desired one, both short
 * display strings (an absent value shows as its declared ECS default when it has one, else
 * {@link ABSENT}; JSON for lists and objects; at most about 100 characters). `[]` exactly when the
 * two are canonically equal.
 *
 * Paths use ECS field names: `cpu`, `taskRoleArn`, `runtimePlatform.cpuArchitecture`,
 * `containerDefinitions[web].image`, `containerDefinitions[web].environment.LOG_LEVEL`,
 * `containerDefinitions[web].secrets.DB_PASSWORD`, `containerDefinitions[web].portMappings`,
 * `containerDefinitions[web].healthCheck.interval`, `containerDefinitions[sidecar]` (a container
 * on one side only), `volumes[data].efsVolumeConfiguration.fileSystemId`. Objects present on both
 * sides are compared key by key; lists (`command`, `portMappings`...) and objects present on one
 * side only are reported whole. Order: fields in their declaration order (`./vocab/task.ts`),
 * then undeclared ones alphabetically; containers and map keys alphabetically. Never throws.
 */
export function diffTaskDefinitions(desired: TaskDefinition, live: TaskDefinition): FieldChange[] {
  const changes: FieldChange[] = [];
  diffObjects(canonicalTaskDefinition(live), canonicalTaskDefinition(desired), [], TASK_DEFINITION, changes);
  return changes;
}

/**
 * Version of the canonical form's rules. Part of every {@link canonicalTaskDefinitionHash}, so a
 * digest computed under older rules never matches one of today's: bump it whenever
 * {@link canonicalTaskDefinition} changes what it keeps, drops or fills in.
 */
export const CANONICAL_FORM_VERSION = 1;

/**
 * A digest of the canonical form ({@link canonicalTaskDefinition}): two task definitions have the
 * same digest exactly when {@link diffTaskDefinitions} finds no change between them (up to
 * SHA-256 collisions). Keys are sorted ({@link canonicalJson}), so construction order does not
 * matter. Never throws.
 * @returns `v<CANONICAL_FORM_VERSION>:` and 43 base64url characters; undefined when the canonical
 *   form holds a value JSON cannot carry (a bigint, a non-finite number): such a task definition
 *   has no digest and is always compared in full.
 */
export function canonicalTaskDefinitionHash(td: TaskDefinition): string | undefined {
  let text: string;
  try {
    text = canonicalJson(canonicalTaskDefinition(td));
  } catch {
    return undefined;
  }
  return `v${CANONICAL_FORM_VERSION}:${createHash('sha256').update(text).digest('base64url')}`;
}

/** True when the two task definitions are canonically equal (see {@link diffTaskDefinitions}). */
export function taskDefinitionsEqual(a: TaskDefinition, b: TaskDefinition): boolean {
  return diffTaskDefinitions(a, b).length === 0;
}

/** `bracket`: a member of a keyed list of objects (`containerDefinitions[web]`). */
type PathSegment = { readonly name: string; readonly bracket: boolean };

function diffObjects(
  live: Readonly<Record<string, CanonicalValue>>,
  desired: Readonly<Record<string, CanonicalValue>>,
  path: PathSegment[],
  node: Node | undefined,
  changes: FieldChange[],
): void {
  const keys = [...new Set([...Object.keys(live), ...Object.keys(desired)])];
  const order = fieldOrderOf(node);
  keys.sort((a, b) => {
    const ra = order.indexOf(a);
    const rb = order.indexOf(b);
    if (ra !== rb) return (ra === -1 ? order.length : ra) - (rb === -1 ? order.length : rb);
    return compareStrings(a, b);
  });
  for (const key of keys) {
    let child: Node | undefined;
    let bracket = false;
    if (node?.kind === 'object') child = own(node.fields, key)?.type;
    else if (node?.kind === 'map') child = node.value;
    else if (node?.kind === 'list' && node.order === 'keyed') {
      bracket = node.value === undefined;
      child = bracket ? node.item : node.item.kind === 'object' ? own(node.item.fields, node.value ?? '')?.type : undefined;
    }
    const fieldDefault = node?.kind === 'object' ? defaultAt(node, [key]) : undefined;
    diffValues(own(live, key), own(desired, key), [...path, { name: key, bracket }], child, fieldDefault, changes);
  }
}

function diffValues(
  live: CanonicalValue | undefined,
  desired: CanonicalValue | undefined,
  path: PathSegment[],
  node: Node | undefined,
  fieldDefault: CanonicalValue | undefined,
  changes: FieldChange[],
): void {
  if (deepEqual(live, desired)) return;
  if (isPlainObject(live) && isPlainObject(desired)) {
    diffObjects(live, desired, path, node, changes);
    return;
  }
  // An object of defaults only (runtimePlatform) on one side, or a map (dockerLabels, environment
  // as name -> value) on one side: compare entry by entry, so that the change reads
  // `runtimePlatform.cpuArchitecture X86_64 -> ARM64` or `environment.LOG_LEVEL (none) -> debug`.
  const entryWise = allOptional(node) || node?.kind === 'map' || (node?.kind === 'list' && node.order === 'keyed' && node.value !== undefined);
  if (entryWise && (live === undefined || isPlainObject(live)) && (desired === undefined || isPlainObject(desired))) {
    diffObjects(live ?? {}, desired ?? {}, path, node, changes);
    return;
  }
  const isMember = path[path.length - 1]?.bracket === true;
  // A keyed list shown whole is shown as the list of its members.
  const asList = (v: CanonicalValue | undefined) =>
    node?.kind === 'list' && node.order === 'keyed' && node.value === undefined && isPlainObject(v) ? Object.values(v) : v;
  changes.push({
    field: formatPath(path),
    from: show(asList(live), isMember, fieldDefault),
    to: show(asList(desired), isMember, fieldDefault),
  });
}

function formatPath(path: PathSegment[]): string {
  let out = '';
  for (const segment of path) {
    if (segment.bracket) out += `[${segment.name}]`;
    else out += out === '' ? segment.name : `.${segment.name}`;
  }
  return out;
}

function show(value: CanonicalValue | undefined, isMember: boolean, fieldDefault: CanonicalValue | undefined): string {
  if (value === undefined) return fieldDefault === undefined ? ABSENT : show(fieldDefault, false, undefined);
  if (isMember && isPlainObject(value) && typeof value.image === 'string') {
    return truncate(`container (image ${value.image})`);
  }
  if (typeof value === 'string') return truncate(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return truncate(JSON.stringify(value));
}

function truncate(s: string): string {
  return s.length <= MAX_SHOWN_LENGTH ? s : `${s.slice(0, MAX_SHOWN_LENGTH - 1)}…`;
}

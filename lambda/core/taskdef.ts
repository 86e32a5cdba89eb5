/**
 * Canonical task definitions: render the RegisterTaskDefinition input for a spec, map a rendered
 * input and a DescribeTaskDefinition result into one canonical form, and diff two task definitions
 * field by field.
 *
 * Why a canonical form: ECS answers a registered task definition with defaults filled in, empty
 * lists added, numbers turned into strings, lists reordered and server-only fields attached
 * (`../shared/docs/ECS-FACTS.md` §6). Comparing raw JSON gives the "perpetual diff" that makes a
 * reconciler register a new revision, and roll every service, on every pass. Comparing canonical
 * forms does not, while any real difference, including one the reconciler never renders (a second
 * container, a volume added by hand), still shows as drift.
 *
 * Pure functions; no SDK imports (the core never imports `@aws-sdk/*`).
 */
import { OWNER_TAG_KEY } from './ports';
import type { ContainerDefinition, FieldChange, ServiceKey, ServiceSpec, TaskDefinition } from './types';
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
 * `runtimePlatform` with the spec's `cpuArchitecture` and `operatingSystemFamily: "LINUX"`;
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
export function renderTaskDefinition(spec: ServiceSpec, options: RenderOptions): TaskDefinition & { family: string } {
  const container: ContainerDefinition = {
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
    const healthCheck: NonNullable<ContainerDefinition['healthCheck']> = { command: [...hc.command] };
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

  const td: TaskDefinition & { family: string } = {
    family: taskDefinitionFamily(spec),
    networkMode: 'awsvpc',
    requiresCompatibilities: ['FARGATE'],
    cpu: String(spec.cpu),
    memory: String(spec.memory),
    runtimePlatform: { cpuArchitecture: spec.cpuArchitecture, operatingSystemFamily: 'LINUX' },
    containerDefinitions: [container],
  };
  if (spec.taskRoleArn !== undefined) td.taskRoleArn = spec.taskRoleArn;
  const executionRoleArn = spec.executionRoleArn ?? options.defaults.executionRoleArn;
  if (executionRoleArn !== undefined) td.executionRoleArn = executionRoleArn;
  td.tags = [
    ...Object.entries(spec.tags)
      .filter(([key]) => key !== OWNER_TAG_KEY)
      .sort(([a], [b]) => compareStrings(a, b))
      .map(([key, value]) => ({ key, value })),
    { key: OWNER_TAG_KEY, value: options.ownerId },
  ];
  return td;
}

// ---------------------------------------------------------------------------------------------
// Canonical form
// ---------------------------------------------------------------------------------------------

/** A JSON value of the canonical form: no `null`, `undefined`, empty list or empty object. */
export type CanonicalValue = string | number | boolean | CanonicalValue[] | { readonly [key: string]: CanonicalValue };

/**
 * The canonical form of a task definition: a JSON object with sorted keys in which
 *
 * - `containerDefinitions` is an object keyed by container name (order of containers carries no
 *   meaning); each container's `environment` is `{NAME: value}` and `secrets` is
 *   `{NAME: valueFrom}` (sets keyed by name); `command` and `entryPoint` keep their order;
 * - every ECS default is made explicit or removed, so that absent and default compare equal
 *   (see {@link canonicalTaskDefinition} for the list);
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

/** Health check defaults (Amazon ECS API reference, HealthCheck): seconds and attempts. */
export const HEALTH_CHECK_DEFAULTS = { interval: 30, timeout: 5, retries: 3, startPeriod: 0 } as const;

/** `runtimePlatform` when absent: Fargate runs such tasks on Linux on x86-64. */
export const DEFAULT_RUNTIME_PLATFORM = { cpuArchitecture: 'X86_64', operatingSystemFamily: 'LINUX' } as const;

/**
 * Maps a task definition, as rendered by {@link renderTaskDefinition} or as DescribeTaskDefinition
 * returns it, into its {@link CanonicalTaskDefinition}. Never throws: values it cannot interpret
 * are kept as they are, so they show as a difference instead of being hidden.
 *
 * Rules (ECS-FACTS §6; Amazon ECS API reference, TaskDefinition / ContainerDefinition):
 * - server-only fields ({@link SERVER_ONLY_TASK_DEFINITION_FIELDS}) and `tags` are dropped;
 * - `null`, `[]`, `{}` and `false` are the same as absent, anywhere (ECS answers
 *   `mountPoints: []`, `volumesFrom: []`, `systemControls: []`, `secretOptions: []`,
 *   `enableFaultInjection: false`, `readOnly: false`...; every boolean in a task definition
 *   defaults to false except `essential`);
 * - `networkMode` absent = `awsvpc` when `requiresCompatibilities` names FARGATE, else `bridge`;
 *   `requiresCompatibilities` is a set;
 * - task `cpu` as vCPU units and `memory` as MiB, both integer strings: `256`, `"256"` and
 *   `"0.25 vCPU"` are the same; `"2 GB"` is `"2048"` (RegisterTaskDefinition accepts these forms);
 * - `runtimePlatform` absent = {@link DEFAULT_RUNTIME_PLATFORM}, field by field;
 * - `ephemeralStorage.sizeInGiB` 20 = absent (Fargate's default ephemeral storage, 20 GiB);
 * - containers are keyed by name; `essential` absent = true; `cpu: 0` = absent;
 *   `versionConsistency: "enabled"` = absent; `stopTimeout: 30` = absent (Fargate's default,
 *   seconds); `environment` and `secrets` become maps keyed by name (a duplicate name: last wins,
 *   as in Docker); an environment entry without `value` has value `""`;
 * - port mappings: `protocol` absent = `tcp`; `hostPort` 0 or absent = dynamic, and in `awsvpc`
 *   equal to `containerPort`, so it is kept only where it says something else; mappings are a set;
 * - health check: `interval` 30, `timeout` 5, `retries` 3 filled in, `startPeriod` 0 = absent
 *   ({@link HEALTH_CHECK_DEFAULTS}, seconds);
 * - log configuration: `options` is a map, `secretOptions` a set keyed by name;
 * - volumes are a set keyed by name; EFS `rootDirectory: "/"`, `transitEncryption: "DISABLED"`
 *   and `authorizationConfig.iam: "DISABLED"` = absent; `placementConstraints` is a set;
 * - every other field is kept (after the generic rule above), so fields the reconciler never
 *   renders are drift when they hold anything but a default.
 */
export function canonicalTaskDefinition(td: TaskDefinition): CanonicalTaskDefinition {
  const rest: Record<string, unknown> = { ...td };
  for (const field of SERVER_ONLY_TASK_DEFINITION_FIELDS) delete rest[field];
  const {
    networkMode,
    requiresCompatibilities,
    cpu,
    memory,
    runtimePlatform,
    ephemeralStorage,
    containerDefinitions,
    volumes,
    placementConstraints,
    ...others
  } = rest;

  const out: Record<string, unknown> = { ...others };
  const compatibilities = stringSet(requiresCompatibilities);
  out.requiresCompatibilities = compatibilities;
  const mode =
    typeof networkMode === 'string' && networkMode !== ''
      ? networkMode
      : (compatibilities ?? []).includes('FARGATE')
        ? 'awsvpc'
        : 'bridge';
  out.networkMode = mode;
  out.cpu = taskCpuUnits(cpu);
  out.memory = taskMemoryMiB(memory);
  const platform = isRecord(runtimePlatform) ? runtimePlatform : {};
  out.runtimePlatform = {
    ...platform,
    cpuArchitecture: nonEmpty(platform.cpuArchitecture) ?? DEFAULT_RUNTIME_PLATFORM.cpuArchitecture,
    operatingSystemFamily: nonEmpty(platform.operatingSystemFamily) ?? DEFAULT_RUNTIME_PLATFORM.operatingSystemFamily,
  };
  if (isRecord(ephemeralStorage) && ephemeralStorage.sizeInGiB === 20) {
    const { sizeInGiB: _fargateDefault, ...moreStorage } = ephemeralStorage;
    out.ephemeralStorage = moreStorage;
  } else {
    out.ephemeralStorage = ephemeralStorage;
  }
  out.volumes = Array.isArray(volumes) ? sortedSet(volumes.map(canonicalVolume), volumeKey) : volumes;
  out.placementConstraints = Array.isArray(placementConstraints)
    ? sortedSet(placementConstraints, (x) => JSON.stringify(prune(x) ?? null))
    : placementConstraints;
  const pruned = prune(out);
  const canonical: Record<string, CanonicalValue> = isPlainObject(pruned) ? { ...pruned } : {};
  if (Array.isArray(containerDefinitions)) {
    // Pruned one by one: `essential: false` must survive the generic "false = absent" rule.
    const containers = new Map<string, CanonicalValue>();
    containerDefinitions.forEach((c: unknown, i) => {
      const container: ContainerDefinition = isRecord(c) ? c : {};
      containers.set(nonEmpty(container.name) ?? `(unnamed #${i + 1})`, canonicalContainer(container, mode));
    });
    if (containers.size > 0) canonical.containerDefinitions = sortKeys(Object.fromEntries(containers));
  } else {
    const other = prune(containerDefinitions);
    if (other !== undefined) canonical.containerDefinitions = other;
  }
  return sortKeys(canonical);
}

function canonicalContainer(c: ContainerDefinition, networkMode: string): { readonly [key: string]: CanonicalValue } {
  const {
    name: _name,
    essential,
    cpu,
    environment,
    secrets,
    portMappings,
    healthCheck,
    logConfiguration,
    versionConsistency,
    stopTimeout,
    ...others
  } = c;
  const out: Record<string, unknown> = { ...others };
  out.cpu = cpu === 0 ? undefined : cpu;
  out.versionConsistency = versionConsistency === 'enabled' ? undefined : versionConsistency;
  out.stopTimeout = stopTimeout === 30 ? undefined : stopTimeout;
  out.environment = Array.isArray(environment)
    ? keyedByName(environment, (e) => (isRecord(e) ? (e.value ?? '') : e))
    : environment;
  out.secrets = Array.isArray(secrets) ? keyedByName(secrets, (s) => (isRecord(s) ? s.valueFrom : s)) : secrets;
  out.portMappings = Array.isArray(portMappings)
    ? sortedSet(
        portMappings.map((p) => canonicalPortMapping(p, networkMode)),
        (p) => JSON.stringify(p),
      )
    : portMappings;
  out.healthCheck = isRecord(healthCheck) ? canonicalHealthCheck(healthCheck) : healthCheck;
  out.logConfiguration = isRecord(logConfiguration) ? canonicalLogConfiguration(logConfiguration) : logConfiguration;
  const pruned = prune(out);
  // Set after pruning: essential defaults to true, so false is not "absent" here.
  return sortKeys({ ...(isPlainObject(pruned) ? pruned : {}), essential: essential !== false });
}

function canonicalPortMapping(p: unknown, networkMode: string): unknown {
  if (!isRecord(p)) return p;
  const { hostPort, protocol, ...others } = p;
  const out: Record<string, unknown> = { ...others, protocol: nonEmpty(protocol)?.toLowerCase() ?? 'tcp' };
  const dynamic = hostPort === undefined || hostPort === null || hostPort === 0;
  const sameAsContainer = hostPort === p.containerPort;
  if (!(dynamic || (networkMode === 'awsvpc' && sameAsContainer))) out.hostPort = hostPort;
  return prune(out);
}

function canonicalHealthCheck(hc: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {
    ...hc,
    interval: hc.interval ?? HEALTH_CHECK_DEFAULTS.interval,
    timeout: hc.timeout ?? HEALTH_CHECK_DEFAULTS.timeout,
    retries: hc.retries ?? HEALTH_CHECK_DEFAULTS.retries,
  };
  if (hc.startPeriod === undefined || hc.startPeriod === null || hc.startPeriod === HEALTH_CHECK_DEFAULTS.startPeriod) {
    delete out.startPeriod;
  }
  return out;
}

function canonicalLogConfiguration(lc: Record<string, unknown>): Record<string, unknown> {
  const { secretOptions, ...others } = lc;
  return {
    ...others,
    secretOptions: Array.isArray(secretOptions)
      ? keyedByName(secretOptions, (s) => (isRecord(s) ? s.valueFrom : s))
      : secretOptions,
  };
}

function canonicalVolume(v: unknown): unknown {
  if (!isRecord(v)) return v;
  const efs = v.efsVolumeConfiguration;
  if (!isRecord(efs)) return v;
  const out: Record<string, unknown> = { ...efs };
  if (out.rootDirectory === '/') delete out.rootDirectory;
  if (out.transitEncryption === 'DISABLED') delete out.transitEncryption;
  if (isRecord(out.authorizationConfig) && out.authorizationConfig.iam === 'DISABLED') {
    const { iam: _disabled, ...auth } = out.authorizationConfig;
    out.authorizationConfig = auth;
  }
  return { ...v, efsVolumeConfiguration: out };
}

function volumeKey(v: unknown): string {
  return isRecord(v) && typeof v.name === 'string' ? `${v.name}\u0000${JSON.stringify(prune(v) ?? null)}` : JSON.stringify(prune(v) ?? null);
}

/**
 * Task `cpu` in vCPU units as an integer string. RegisterTaskDefinition accepts an integer of CPU
 * units ("256") or vCPUs ("0.25 vCPU", "1 vcpu"); DescribeTaskDefinition answers the integer
 * string. Unparseable values are returned as given.
 */
function taskCpuUnits(value: unknown): unknown {
  return resourceAmount(value, /^(\d+(?:\.\d+)?)\s*vcpus?$/i, 1024);
}

/** Task `memory` in MiB as an integer string: "512", 512, "0.5 GB", "2GB" (1 GB = 1024 MiB). */
function taskMemoryMiB(value: unknown): unknown {
  return resourceAmount(value, /^(\d+(?:\.\d+)?)\s*gb$/i, 1024);
}

function resourceAmount(value: unknown, scaled: RegExp, factor: number): unknown {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') return value;
  const s = value.trim();
  if (/^\d+$/.test(s)) return String(Number(s));
  const m = scaled.exec(s);
  if (m) {
    const amount = Number(m[1]) * factor;
    if (Number.isInteger(amount)) return String(amount);
  }
  return value;
}

// ---------------------------------------------------------------------------------------------
// Diff
// ---------------------------------------------------------------------------------------------

/** How an absent value is shown in a {@link FieldChange}. */
export const ABSENT = '(none)';

const TASK_FIELD_ORDER = [
  'family',
  'networkMode',
  'requiresCompatibilities',
  'cpu',
  'memory',
  'runtimePlatform',
  'taskRoleArn',
  'executionRoleArn',
  'containerDefinitions',
  'volumes',
  'placementConstraints',
];

const CONTAINER_FIELD_ORDER = [
  'image',
  'essential',
  'command',
  'entryPoint',
  'environment',
  'secrets',
  'portMappings',
  'healthCheck',
  'logConfiguration',
  'cpu',
  'memory',
  'memoryReservation',
];

const MAX_SHOWN_LENGTH = 100;

/**
 * Field-level differences between two task definitions, compared in canonical form
 * ({@link canonicalTaskDefinition}): `from` is the live value, `to` the desired one, both short
 * display strings ({@link ABSENT} when absent, JSON for lists and objects, at most about 100
 * characters). `[]` exactly when the two are canonically equal.
 *
 * Paths use ECS field names: `cpu`, `taskRoleArn`, `runtimePlatform.cpuArchitecture`,
 * `containerDefinitions[web].image`, `containerDefinitions[web].environment.LOG_LEVEL`,
 * `containerDefinitions[web].secrets.DB_PASSWORD`, `containerDefinitions[web].portMappings`,
 * `containerDefinitions[web].healthCheck.interval`, `containerDefinitions[sidecar]` (a container
 * on one side only), `volumes`. Objects present on both sides are compared key by key; lists
 * (`command`, `portMappings`, `volumes`...) and objects present on one side only are reported
 * whole. Order: task fields in a fixed order (family, networkMode, requiresCompatibilities, cpu,
 * memory, runtimePlatform, roles, containers, volumes, placementConstraints, then others
 * alphabetically); containers and keys alphabetically. Never throws.
 */
export function diffTaskDefinitions(desired: TaskDefinition, live: TaskDefinition): FieldChange[] {
  const changes: FieldChange[] = [];
  diffObjects(canonicalTaskDefinition(live), canonicalTaskDefinition(desired), [], changes);
  return changes;
}

/** True when the two task definitions are canonically equal (see {@link diffTaskDefinitions}). */
export function taskDefinitionsEqual(a: TaskDefinition, b: TaskDefinition): boolean {
  return diffTaskDefinitions(a, b).length === 0;
}

type PathSegment = { kind: 'field'; name: string } | { kind: 'container'; name: string };

function diffObjects(
  live: Readonly<Record<string, CanonicalValue>>,
  desired: Readonly<Record<string, CanonicalValue>>,
  path: PathSegment[],
  changes: FieldChange[],
): void {
  const keys = [...new Set([...Object.keys(live), ...Object.keys(desired)])];
  keys.sort(keyOrder(path));
  const inContainers = path.length === 1 && path[0].kind === 'field' && path[0].name === 'containerDefinitions';
  for (const key of keys) {
    const segment: PathSegment = inContainers ? { kind: 'container', name: key } : { kind: 'field', name: key };
    diffValues(own(live, key), own(desired, key), [...path, segment], changes);
  }
}

function diffValues(
  live: CanonicalValue | undefined,
  desired: CanonicalValue | undefined,
  path: PathSegment[],
  changes: FieldChange[],
): void {
  if (deepEqual(live, desired)) return;
  if (isPlainObject(live) && isPlainObject(desired)) {
    diffObjects(live, desired, path, changes);
    return;
  }
  const isContainer = path[path.length - 1]?.kind === 'container';
  changes.push({ field: formatPath(path), from: show(live, isContainer), to: show(desired, isContainer) });
}

function keyOrder(path: PathSegment[]): (a: string, b: string) => number {
  const last = path[path.length - 1];
  const order = path.length === 0 ? TASK_FIELD_ORDER : last?.kind === 'container' ? CONTAINER_FIELD_ORDER : [];
  return (a, b) => {
    const ra = order.indexOf(a);
    const rb = order.indexOf(b);
    if (ra !== rb) return (ra === -1 ? order.length : ra) - (rb === -1 ? order.length : rb);
    return compareStrings(a, b);
  };
}

function formatPath(path: PathSegment[]): string {
  let out = '';
  for (const segment of path) {
    if (segment.kind === 'container') out += `[${segment.name}]`;
    else out += out === '' ? segment.name : `.${segment.name}`;
  }
  return out;
}

function show(value: CanonicalValue | undefined, isContainer: boolean): string {
  if (value === undefined) return ABSENT;
  if (isContainer && isPlainObject(value) && typeof value.image === 'string') {
    return truncate(`container (image ${value.image})`);
  }
  if (typeof value === 'string') return truncate(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return truncate(JSON.stringify(value));
}

function truncate(s: string): string {
  return s.length <= MAX_SHOWN_LENGTH ? s : `${s.slice(0, MAX_SHOWN_LENGTH - 1)}…`;
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x) && !(x instanceof Date);
}

function isPlainObject(x: CanonicalValue | undefined): x is { readonly [key: string]: CanonicalValue } {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function nonEmpty(x: unknown): string | undefined {
  return typeof x === 'string' && x !== '' ? x : undefined;
}

/** Code-point order, independent of the host's locale. */
function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function stringSet(x: unknown): string[] | undefined {
  if (!Array.isArray(x)) return undefined;
  return [...new Set(x.filter((s): s is string => typeof s === 'string'))].sort(compareStrings);
}

function sortedSet(items: unknown[], key: (x: unknown) => string): unknown[] {
  return items
    .map((item) => ({ item, k: key(item) }))
    .sort((a, b) => compareStrings(a.k, b.k))
    .map(({ item }) => item);
}

/** `[{name, ...}]` -> `{name: valueOf(entry)}`; entries without a string name are kept under `""`. */
function keyedByName(entries: unknown[], valueOf: (entry: unknown) => unknown): Record<string, unknown> {
  // Map, then fromEntries: a name such as `__proto__` stays an ordinary key.
  const byName = new Map<string, unknown>();
  for (const entry of entries) {
    const name = isRecord(entry) && typeof entry.name === 'string' ? entry.name : '';
    byName.set(name, valueOf(entry));
  }
  return Object.fromEntries(byName);
}

/**
 * The generic rule: drops `undefined`, `null`, `false`, empty lists and empty objects (after
 * pruning their contents), sorts object keys, turns Dates into ISO strings. Returns undefined when
 * nothing is left.
 */
function prune(x: unknown): CanonicalValue | undefined {
  if (x === undefined || x === null || x === false) return undefined;
  if (typeof x === 'string' || typeof x === 'number' || x === true) return x;
  if (x instanceof Date) return x.toISOString();
  if (Array.isArray(x)) {
    const items = x.map((item) => prune(item) ?? null).filter((item): item is CanonicalValue => item !== null);
    return items.length > 0 ? items : undefined;
  }
  if (typeof x === 'object') {
    const entries: [string, CanonicalValue][] = [];
    for (const key of Object.keys(x).sort(compareStrings)) {
      const v = prune(own(x as Record<string, unknown>, key));
      if (v !== undefined) entries.push([key, v]);
    }
    return entries.length > 0 ? Object.fromEntries(entries) : undefined;
  }
  return String(x);
}

function sortKeys<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.keys(o).sort(compareStrings).map((key) => [key, own(o, key) as T]));
}

function deepEqual(a: CanonicalValue | undefined, b: CanonicalValue | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => deepEqual(item, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(own(a, k), own(b, k)));
  }
  return false;
}

/**
 * The service spec, the desired state of one ECS service on Fargate: one DynamoDB item per
 * service (partition key `cluster`, sort key `service`), or one mapping in a YAML file.
 *
 * This module owns the spec's one source of truth, the zod schema {@link serviceSpecSchema}: the
 * parser ({@link parseSpecItem}), the content hash ({@link specHash}), the item writer
 * ({@link specToItem}), the YAML reader (`./spec-yaml`) and the JSON Schema file for editors
 * (`./spec-json-schema`, written by `npm run schema`) all derive from it.
 *
 * Validation rejects what ECS would reject (RegisterTaskDefinition, CreateService), citing the
 * limit in the message, so that a bad spec shows up in its item's status instead of as a failed
 * API call on every pass. Pure: no I/O, no clock, no SDK.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson } from './canonical-json';
import { OWNER_TAG_KEY } from './ports';
import type {
  ServiceFieldValues,
  ServiceKey,
  ServiceSpec,
  SpecError,
  SpecParseResult,
} from './types';
import { type Field, type Infer, knownKeysOf, list, zodOf } from './vocab/decl';
import { checkVocabularyRules } from './vocab/rules';
import {
  ADVANCED_CONFIGURATION,
  CAPACITY_PROVIDER_STRATEGY_ITEM,
  DEPLOYMENT,
  DEPLOYMENT_CONFIGURATION,
  LOAD_BALANCER,
  SERVICE_FIELDS,
  SERVICE_FIELD_NAMES,
  type ServiceFieldName,
} from './vocab/service';
import { checkPlatformRules } from './vocab/platform-rules';
import { CONTAINER, EPHEMERAL_STORAGE, FARGATE_OPERATING_SYSTEM_FAMILIES, HEALTH_CHECK, PROXY_CONFIGURATION, TASK_DEFINITION, VOLUME } from './vocab/task';
import { own } from './dict';
import {
  ENV_NAME_RE,
  IMAGE_ALLOWED,
  IMAGE_RE,
  NAME_RE,
  ROLE_ARN_ALLOWED,
  ROLE_ARN_RE,
  SECRET_REF_ALLOWED,
  SECRETS_MANAGER_ARN_RE,
  SECURITY_GROUP_RE,
  SSM_ARN_RE,
  SSM_NAME_RE,
  SUBNET_RE,
  TAG_CHARS_RE,
  TARGET_GROUP_ARN_ALLOWED,
  TARGET_GROUP_ARN_RE,
} from './vocab/patterns';
import { MAX_SPEC_ATTRIBUTES_BYTES, attributesSize } from './item-size';
import { ECS_QUOTAS } from './ecs-limits';
import { renderTaskDefinition } from './taskdef';
import { IGNORABLE_CONTAINER_FIELDS, IGNORABLE_SERVICE_FIELDS, IGNORABLE_TASK_DEFINITION_FIELDS, MAX_IGNORE_ENTRIES, ignorePathProblem } from './ignore';

export { canonicalJson } from './canonical-json';
export { parseSpecsYaml, type YamlSpecDoc, type YamlSpecError } from './spec-yaml';

// ---------------------------------------------------------------------------------------------
// Limits and defaults
// ---------------------------------------------------------------------------------------------

function steps(from: number, to: number, step: number): number[] {
  const out: number[] = [];
  for (let v = from; v <= to; v += step) out.push(v);
  return out;
}

/**
 * Valid task memory (MiB) per task CPU (vCPU units, 1024 = 1 vCPU) on Fargate, from the "Task
 * size" table of the Amazon ECS Developer Guide ("Amazon ECS task definition parameters for
 * Fargate"). 8192 and 16384 CPU need Linux platform version 1.4.0 or later.
 */
export const FARGATE_CPU_MEMORY: Readonly<Record<number, readonly number[]>> = Object.freeze({
  256: Object.freeze([512, 1024, 2048]),
  512: Object.freeze(steps(1024, 4096, 1024)),
  1024: Object.freeze(steps(2048, 8192, 1024)),
  2048: Object.freeze(steps(4096, 16384, 1024)),
  4096: Object.freeze(steps(8192, 30720, 1024)),
  8192: Object.freeze(steps(16384, 61440, 4096)),
  16384: Object.freeze(steps(32768, 122880, 8192)),
});

/** The valid task CPU values (vCPU units), ascending. */
export const FARGATE_CPU_VALUES: readonly number[] = Object.freeze(
  Object.keys(FARGATE_CPU_MEMORY)
    .map(Number)
    .sort((a, b) => a - b),
);

/** Values the parser fills in when an attribute is omitted. */
export const SPEC_DEFAULTS = Object.freeze({
  /** vCPU units. */
  cpu: 256,
  /** MiB. */
  memory: 512,
  capacityProvider: 'FARGATE',
  cpuArchitecture: 'X86_64',
  state: 'present',
  adopt: false,
  autoscaled: false,
} as const);

/** `[min, max]` of a declared whole-number field. */
function range(f: Field): readonly [number, number] {
  if (f.type.kind !== 'int' || f.type.min === undefined || f.type.max === undefined) throw new Error('range: not a bounded int');
  return [f.type.min, f.type.max] as const;
}

/**
 * Limits the parser enforces. Each is ECS's own unless marked "ours".
 * Sources: Amazon ECS API reference (CreateService, RegisterTaskDefinition, HealthCheck,
 * AwsVpcConfiguration, Tag) and the ECS Developer Guide ("Tagging your resources").
 */
export const SPEC_LIMITS = Object.freeze({
  /** Cluster and service names: 1-255 letters, numbers, hyphens, underscores. */
  nameMaxLength: 255,
  /** Task definition family `<cluster>-<service>`: at most 255 characters. */
  familyMaxLength: 255,
  /** Image reference, counted before any `@sha256:` digest. */
  imageMaxLength: 255,
  /** awsvpc: at most 16 subnets and 5 security groups. */
  maxSubnets: 16,
  maxSecurityGroups: 5,
  /** 50 tags per resource, one of which is the reconciler's owner tag. */
  maxTags: 49,
  tagKeyMaxLength: 128,
  tagValueMaxLength: 256,
  /** Seconds (ours: one day). */
  lagGraceSecondsMax: 86_400,
  /** Tasks: ECS declares desiredCount a 32-bit Integer (CreateService, UpdateService). */
  desiredCountMax: 2_147_483_647,
  /** ECS HealthCheck ranges, seconds (retries: count), from the declaration `HEALTH_CHECK`. */
  healthCheck: Object.freeze({
    intervalSeconds: range(HEALTH_CHECK.fields.interval),
    timeoutSeconds: range(HEALTH_CHECK.fields.timeout),
    retries: range(HEALTH_CHECK.fields.retries),
    startPeriodSeconds: range(HEALTH_CHECK.fields.startPeriod),
  }),
  /** Percent of desiredCount (maximumPercent upper bound: ours, see docs/spec.md, "The service spec"). */
  minimumHealthyPercent: [0, 100] as const,
  maximumPercent: [100, 200] as const,
});

// ---------------------------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------------------------

const DISPLAY_MAX = 80;

function shorten(text: string, max = DISPLAY_MAX): string {
  return text.length <= max ? text : `${text.slice(0, max - 3)}...`;
}

/** Marks a bigint in {@link jsonish}'s JSON, so that it is written as the bare number. */
const BIGINT_MARK = '\u0001bigint:';

/**
 * JSON for display, of anything an item can hold at any depth: a bigint (DynamoDB N beyond 2^53)
 * as its digits, a Set as a list, a binary as `<n bytes>`, a Map as a map. Never throws.
 */
function jsonish(value: unknown): string {
  if (value instanceof Uint8Array) return `<${value.length} bytes>`;
  try {
    const text = JSON.stringify(value, function (this: unknown, key: string, v: unknown) {
      // The holder's own value: JSON.stringify has already applied toJSON (Buffer) to `v`.
      const raw = own(this as Record<string, unknown>, key);
      if (typeof raw === 'bigint') return `${BIGINT_MARK}${raw}`;
      if (raw instanceof Uint8Array) return `<${raw.length} bytes>`;
      if (raw instanceof Set) return [...raw];
      if (raw instanceof Map) return Object.fromEntries([...raw].map(([k, x]) => [String(k), x]));
      return v;
    });
    if (text === undefined) return typeof value;
    return text.replace(/"\\u0001bigint:(-?\d+)"/g, '$1');
  } catch {
    return '(a value that cannot be shown: it contains itself)';
  }
}

/** The offending value as shown in {@link SpecError.value}: JSON, at most 80 characters. */
export function displayValue(value: unknown): string {
  return value === undefined ? '' : shorten(jsonish(value));
}

/** Kind and value, as a console user knows them: `string "3"`, `list ["a"]`, `null`, `12`. */
function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') return `string ${shorten(JSON.stringify(value), 60)}`;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value instanceof Set) {
    const kind = [...value].every((x) => typeof x === 'number') && value.size > 0 ? 'number set (NS)' : 'string set (SS)';
    return `${kind} ${shorten(jsonish(value), 60)}`;
  }
  if (value instanceof Uint8Array) return 'binary (B)';
  if (typeof value === 'bigint') return `${value}`;
  if (value instanceof Date) return `date ${jsonish(value)}`;
  if (value instanceof Map) return `ordered map (YAML !!omap or !!pairs) ${shorten(jsonish(value), 60)}`;
  if (Array.isArray(value)) return `list ${shorten(jsonish(value), 60)}`;
  if (typeof value === 'object') return `map ${shorten(jsonish(value), 60)}`;
  return typeof value;
}

/** Error parameter for a check: "<what is allowed>, got <value>". */
function fail(allowed: string): { error: (iss: { input?: unknown }) => string } {
  return { error: (iss) => `${allowed}, got ${describeValue(iss.input)}` };
}

const EXPECTED: Record<string, string> = {
  string: 'a string (DynamoDB type S)',
  number: 'a number (DynamoDB type N)',
  int: 'a whole number (DynamoDB type N)',
  boolean: 'a boolean (DynamoDB type BOOL)',
  array: 'a list (DynamoDB type L)',
  object: 'a map (DynamoDB type M)',
  record: 'a map (DynamoDB type M)',
};

/** Messages for issues whose schema sets none (wrong DynamoDB type, enum values). */
function genericMessage(iss: { code?: string; input?: unknown; expected?: string; values?: unknown[] }): string | undefined {
  if (iss.code === 'invalid_type') {
    if (iss.input === undefined) return 'is required';
    if (typeof iss.input === 'bigint') {
      return `is too large, got ${iss.input} (beyond 2^53, the largest whole number a JavaScript number holds exactly)`;
    }
    const expected = own(EXPECTED, iss.expected ?? '') ?? `a ${iss.expected}`;
    if (iss.expected === 'array' && iss.input instanceof Set) {
      return `must be ${expected}, got ${describeValue(iss.input)}: a set does not keep the order of its members`;
    }
    const hint = iss.input === null ? ' (remove the attribute to leave it unset)' : '';
    return `must be ${expected}, got ${describeValue(iss.input)}${hint}`;
  }
  if (iss.code === 'invalid_value' && iss.values) {
    return `must be one of ${iss.values.map((v) => JSON.stringify(v)).join(', ')}, got ${describeValue(iss.input)}`;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// The schema
// ---------------------------------------------------------------------------------------------

function wholeNumber(min: number, max: number | undefined, what: string) {
  const allowed =
    max === undefined ? `must be a whole number >= ${min}${what}` : `must be a whole number from ${min} to ${max}${what}`;
  const schema = integer(allowed).min(min, fail(allowed));
  return max === undefined ? schema : schema.max(max, fail(allowed));
}

/**
 * A whole number. Not `z.number().int()`: its issue aborts the parse of the whole item, so the
 * cross-attribute rules would not run and the user would see only some of the item's errors.
 */
function integer(allowed: string) {
  return z.number().refine(Number.isInteger, fail(allowed)).meta({ type: 'integer' });
}

function uniqueStrings(xs: string[]): boolean {
  return new Set(xs).size === xs.length;
}

const ecsName = (what: 'cluster' | 'service') =>
  z
    .string()
    .regex(NAME_RE, fail(`must be 1-255 letters, numbers, hyphens or underscores (ECS ${what} name)`))
    .describe(`ECS ${what} name${what === 'cluster' ? ' (DynamoDB partition key)' : ' (DynamoDB sort key)'}.`);

/**
 * `__proto__` as a map key: JavaScript objects cannot carry it as data (assigning it sets the
 * prototype), and zod's records skip it without an issue, so the variable or tag would vanish
 * without a word. {@link parseSpecItem} refuses it by name ({@link protoKeyErrors}); the JSON
 * Schema says so too.
 */
const PROTO_KEY = '__proto__';

const envName = z
  .string()
  .regex(ENV_NAME_RE, fail('must start with a letter or underscore and hold only letters, digits and underscores'))
  .meta({ not: { const: PROTO_KEY } });

const roleArn = (which: string) =>
  z
    .string()
    .regex(ROLE_ARN_RE, fail(ROLE_ARN_ALLOWED))
    .describe(which);

const secretRef = z
  .string()
  .refine(
    (s) => SSM_NAME_RE.test(s) || SSM_ARN_RE.test(s) || SECRETS_MANAGER_ARN_RE.test(s),
    fail(SECRET_REF_ALLOWED),
  )
  .meta({
    anyOf: [{ pattern: SSM_NAME_RE.source }, { pattern: SSM_ARN_RE.source }, { pattern: SECRETS_MANAGER_ARN_RE.source }],
  });

const tagKey = z
  .string()
  .min(1, fail(`must be 1-${SPEC_LIMITS.tagKeyMaxLength} characters (ECS tag key)`))
  .max(SPEC_LIMITS.tagKeyMaxLength, fail(`must be 1-${SPEC_LIMITS.tagKeyMaxLength} characters (ECS tag key)`))
  .regex(TAG_CHARS_RE, fail('must hold only letters, numbers, spaces and + - = . _ : / @ (ECS tag key)'))
  .refine((k) => !k.toLowerCase().startsWith('aws:'), fail('must not start with "aws:" (reserved by AWS)'))
  .refine((k) => k !== OWNER_TAG_KEY, fail(`must not be "${OWNER_TAG_KEY}" (reserved: the reconciler's owner tag)`))
  .meta({ not: { anyOf: [{ pattern: '^[Aa][Ww][Ss]:' }, { const: OWNER_TAG_KEY }, { const: PROTO_KEY }] } });

const ignorePath = z
  .string()
  .superRefine((path, ctx) => {
    const problem = ignorePathProblem(path);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  })
  .meta({
    anyOf: [
      { enum: ['taskDefinition', ...IGNORABLE_SERVICE_FIELDS, ...IGNORABLE_TASK_DEFINITION_FIELDS] },
      { pattern: `^containerDefinitions\\[(\\*|[A-Za-z0-9_-]{1,255})\\]\\.(${IGNORABLE_CONTAINER_FIELDS.join('|')})$` },
    ],
  });

const tagValue = z
  .string()
  .max(SPEC_LIMITS.tagValueMaxLength, fail(`must be at most ${SPEC_LIMITS.tagValueMaxLength} characters (ECS tag value)`))
  .regex(TAG_CHARS_RE, fail('must hold only letters, numbers, spaces and + - = . _ : / @ (ECS tag value)'));

const hc = SPEC_LIMITS.healthCheck;
const healthCheckSchema = z
  .strictObject({
    command: z
      .array(z.string())
      .refine(
        (c) => (c[0] === 'CMD' || c[0] === 'CMD-SHELL') && c.length >= 2,
        fail('must start with "CMD" or "CMD-SHELL" followed by the command (ECS healthCheck.command)'),
      )
      .meta({ minItems: 2, prefixItems: [{ enum: ['CMD', 'CMD-SHELL'] }] })
      .describe('e.g. ["CMD-SHELL", "curl -f http://localhost:8080/health || exit 1"].'),
    intervalSeconds: wholeNumber(hc.intervalSeconds[0], hc.intervalSeconds[1], ' (seconds, ECS healthCheck.interval)')
      .optional()
      .describe('Seconds between checks (ECS default 30).'),
    timeoutSeconds: wholeNumber(hc.timeoutSeconds[0], hc.timeoutSeconds[1], ' (seconds, ECS healthCheck.timeout)')
      .optional()
      .describe('Seconds a check may take (ECS default 5).'),
    retries: wholeNumber(hc.retries[0], hc.retries[1], ' (ECS healthCheck.retries)')
      .optional()
      .describe('Failed checks before the container counts as unhealthy (ECS default 3).'),
    startPeriodSeconds: wholeNumber(hc.startPeriodSeconds[0], hc.startPeriodSeconds[1], ' (seconds, ECS healthCheck.startPeriod)')
      .optional()
      .describe('Grace period after start in which failures do not count (ECS default: none).'),
  })
  .describe('Container health check (ECS healthCheck).');

const loadBalancerSchema = z
  .strictObject({
    targetGroupArn: z
      .string()
      .regex(TARGET_GROUP_ARN_RE, fail(TARGET_GROUP_ARN_ALLOWED)),
    containerPort: wholeNumber(1, 65535, ' (TCP port)').describe('Port of the container the target group sends to.'),
    advancedConfiguration: zodOf(ADVANCED_CONFIGURATION)
      .optional()
      .describe('Alternate target group, listener rules and role of a BLUE_GREEN, LINEAR or CANARY deployment.'),
  })
  .describe('Register the tasks in an Elastic Load Balancing target group.');

const deploymentSchema = zodOf(DEPLOYMENT)
  .meta({
    // minimumHealthyPercent 100 (also its default) with maximumPercent 100 cannot progress.
    if: { required: ['maximumPercent'], properties: { maximumPercent: { const: 100 } } },
    then: { required: ['minimumHealthyPercent'], properties: { minimumHealthyPercent: { maximum: 99 } } },
  })
  .describe(
    'Deployment settings (ECS deploymentConfiguration, the circuit breaker named circuitBreaker): ROLLING (the default) with ' +
      'minimumHealthyPercent and maximumPercent, or ECS\'s native BLUE_GREEN, LINEAR and CANARY with bake time, ' +
      'linearConfiguration, canaryConfiguration and lifecycleHooks.',
  );

const cpuSchema = z
  .number()
  .refine(
    (v) => FARGATE_CPU_VALUES.includes(v),
    fail(`must be one of ${FARGATE_CPU_VALUES.join(', ')} (Fargate task CPU units, 1024 = 1 vCPU)`),
  )
  .meta({ enum: [...FARGATE_CPU_VALUES] });

/**
 * The attributes that speak ECS, each derived from its declaration in `./vocab/`:
 * ECS's own names and shapes, as `aws ecs describe-task-definition` and `describe-services`
 * print them.
 */
const ECS_SPEC_SHAPE = {
  family: zodOf(TASK_DEFINITION.fields.family.type)
    .optional()
    .describe('Task definition family; default <cluster>-<service> (import keeps a live family).'),
  containers: zodOf(list(CONTAINER, { order: 'ordered', minItems: 1, maxItems: 10 }))
    .optional()
    .describe(
      'Containers in ECS ContainerDefinition form (sidecars: log routers, agents, proxies). With image, they follow the ' +
        'shorthand container (named after the service); without image, they are all of the task.',
    ),
  volumes: zodOf(list(VOLUME, { order: 'ordered', maxItems: 20 }))
    .optional()
    .describe('Task volumes (ECS Volume): EFS (efsVolumeConfiguration), S3 Files (s3filesVolumeConfiguration), bind mounts (a name only), EBS (configuredAtLaunch).'),
  ephemeralStorage: zodOf(EPHEMERAL_STORAGE)
    .optional()
    .describe('Task ephemeral storage above the Fargate default of 20 GiB (21-200).'),
  pidMode: zodOf(TASK_DEFINITION.fields.pidMode.type).optional().describe('"task": containers share the process namespace.'),
  proxyConfiguration: zodOf(PROXY_CONFIGURATION).optional().describe('App Mesh proxy (ECS proxyConfiguration).'),
  enableFaultInjection: z.boolean().optional().describe('ECS fault injection for the task (default false).'),
  launchType: z.enum(['FARGATE']).optional().describe('Use the FARGATE launch type instead of a capacity provider strategy.'),
  capacityProviderStrategy: zodOf(list(CAPACITY_PROVIDER_STRATEGY_ITEM, { order: 'set', minItems: 1, maxItems: 2 }))
    .optional()
    .describe('FARGATE and FARGATE_SPOT with base and weight (instead of capacityProvider).'),
  deploymentConfiguration: zodOf(DEPLOYMENT_CONFIGURATION)
    .optional()
    .describe('deployment under its ECS name and shape (deploymentCircuitBreaker for circuitBreaker); the parser keeps it as deployment.'),
  loadBalancers: zodOf(list(LOAD_BALANCER, { order: 'set', minItems: 1, maxItems: 5 }))
    .optional()
    .describe('Target groups, each with the container name and port it sends to (instead of loadBalancer).'),
  ...serviceFieldShape(),
};

/** The declared service fields' schemas, each typed from its declaration. */
function serviceFieldShape(): { [K in ServiceFieldName]: z.ZodOptional<z.ZodType<ServiceFieldValues[K]>> } {
  const shape: Partial<Record<ServiceFieldName, z.ZodType>> = {};
  for (const name of SERVICE_FIELD_NAMES) {
    const f: Field = SERVICE_FIELDS[name].field;
    shape[name] = zodOf(f.type).optional().describe(f.doc ?? name);
  }
  return shape as { [K in ServiceFieldName]: z.ZodOptional<z.ZodType<ServiceFieldValues[K]>> };
}

/** The spec's attributes without the cross-attribute rules; its keys are the spec attributes. */
const specObject = z.strictObject({
  cluster: ecsName('cluster'),
  service: ecsName('service'),
  image: z
    .string()
    .regex(IMAGE_RE, fail(IMAGE_ALLOWED))
    .optional()
    .describe('Container image reference. Required unless state is absent.'),
  desiredCount: wholeNumber(0, undefined, ' (tasks)')
    .max(
      SPEC_LIMITS.desiredCountMax,
      fail(`must be at most ${SPEC_LIMITS.desiredCountMax} (tasks; ECS declares desiredCount a 32-bit integer)`),
    )
    .optional()
    .describe('Tasks wanted. Required unless autoscaled is true (then only the initial count at creation).'),
  cpu: cpuSchema.default(SPEC_DEFAULTS.cpu).describe('Task CPU in vCPU units (1024 = 1 vCPU); a Fargate task size.'),
  memory: integer('must be a whole number of MiB')
    .default(SPEC_DEFAULTS.memory)
    .describe('Task memory in MiB; must be valid for cpu on Fargate.'),
  containerPort: wholeNumber(1, 65535, ' (TCP port)').optional().describe('TCP port the container listens on.'),
  environment: z.record(envName, z.string()).default({}).describe('Plain environment variables, name to value.'),
  secrets: z
    .record(envName, secretRef)
    .default({})
    .describe('Environment variables from SSM parameters (name or ARN) or Secrets Manager secrets (ARN).'),
  command: z
    .array(z.string())
    .min(1, fail("must hold at least one string (omit it to use the image's command)"))
    .optional()
    .describe("Overrides the image's command (CMD)."),
  subnets: z
    .array(z.string().regex(SUBNET_RE, fail('must be a subnet id (subnet-0123456789abcdef0)')))
    .min(1, fail("must name 1-16 subnets (omit it to use the reconciler's default subnets)"))
    .max(SPEC_LIMITS.maxSubnets, fail('must name 1-16 subnets (ECS awsvpcConfiguration allows at most 16)'))
    .refine(uniqueStrings, fail('must not repeat a subnet'))
    .meta({ uniqueItems: true })
    .overwrite((xs) => [...xs].sort())
    .optional()
    .describe("awsvpc subnets; omit to use the reconciler's defaults."),
  securityGroups: z
    .array(z.string().regex(SECURITY_GROUP_RE, fail('must be a security group id (sg-0123456789abcdef0)')))
    .min(1, fail("must name 1-5 security groups (omit it to use the reconciler's default security groups)"))
    .max(SPEC_LIMITS.maxSecurityGroups, fail('must name 1-5 security groups (ECS awsvpcConfiguration allows at most 5)'))
    .refine(uniqueStrings, fail('must not repeat a security group'))
    .meta({ uniqueItems: true })
    .overwrite((xs) => [...xs].sort())
    .optional()
    .describe("awsvpc security groups; omit to use the reconciler's defaults."),
  assignPublicIp: z.boolean().optional().describe("Give tasks a public IP; omit to use the reconciler's default (false)."),
  capacityProvider: z
    .enum(['FARGATE', 'FARGATE_SPOT'])
    .default(SPEC_DEFAULTS.capacityProvider)
    .describe('Fargate capacity provider; FARGATE_SPOT runs X86_64, and ARM64 on platform version 1.4.0 or later.'),
  cpuArchitecture: z.enum(['X86_64', 'ARM64']).default(SPEC_DEFAULTS.cpuArchitecture).describe('Task CPU architecture.'),
  operatingSystemFamily: z
    .enum(FARGATE_OPERATING_SYSTEM_FAMILIES)
    .optional()
    .describe('Task operating system on Fargate (ECS default LINUX). Windows Server 2019 or 2022, Full or Core: cpu 1024, 2048 or 4096, X86_64, FARGATE (not Spot).'),
  taskRoleArn: roleArn('IAM role the containers assume.').optional(),
  executionRoleArn: roleArn("IAM role ECS uses to pull the image and read secrets; omit to use the reconciler's default.").optional(),
  healthCheck: healthCheckSchema.optional(),
  loadBalancer: loadBalancerSchema.optional(),
  deployment: deploymentSchema.optional(),
  state: z.enum(['present', 'absent']).default(SPEC_DEFAULTS.state).describe('absent: delete this service.'),
  adopt: z.boolean().default(SPEC_DEFAULTS.adopt).describe('Take ownership of an existing service of this name.'),
  autoscaled: z
    .boolean()
    .default(SPEC_DEFAULTS.autoscaled)
    .describe('Application Auto Scaling owns desiredCount: the reconciler never sends it.'),
  observeOnly: z
    .boolean()
    .optional()
    .describe(
      'Report drift and lag without correcting anything (no create, update, tag or delete); omit to follow the cluster (OBSERVE_ONLY_CLUSTERS). Not part of the spec hash.',
    ),
  ignore: z
    .array(ignorePath)
    .max(MAX_IGNORE_ENTRIES, fail(`must list at most ${MAX_IGNORE_ENTRIES} fields`))
    .optional()
    .describe(
      'Fields another controller owns (an autoscaler, a pipeline): neither compared nor sent, the live value stays. A service field (desiredCount, networkConfiguration, tags, ...), taskDefinition, a task definition field, or containerDefinitions[NAME].FIELD (NAME may be *).',
    ),
  lagGraceSeconds: wholeNumber(0, SPEC_LIMITS.lagGraceSecondsMax, ' (seconds)')
    .optional()
    .describe("Seconds running may lag desired before it counts as lagging; omit for the reconciler's default (300)."),
  tags: z
    .record(tagKey, tagValue)
    .meta({ maxProperties: SPEC_LIMITS.maxTags })
    .default({})
    .describe('Tags added to the service and the task definition (at most 49; "aws:" and the owner tag are reserved).'),
  ...ECS_SPEC_SHAPE,
});

type SpecObject = z.output<typeof specObject>;

/** `512, 1024 or 2048`, or `from 1024 to 4096 in steps of 1024`. */
export function describeMemories(memories: readonly number[]): string {
  const step = memories[1] - memories[0];
  const even = memories.length > 3 && memories.every((m, i) => i === 0 || m - memories[i - 1] === step);
  if (even) return `from ${memories[0]} to ${memories[memories.length - 1]} in steps of ${step}`;
  return `${memories.slice(0, -1).join(', ')} or ${memories[memories.length - 1]}`;
}

/** Reads a value the object stage may have left unvalidated (cross-attribute rules run anyway). */
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const rec = (v: unknown): Record<string, unknown> | undefined =>
  v !== null &&
  typeof v === 'object' &&
  !Array.isArray(v) &&
  !(v instanceof Set) &&
  !(v instanceof Map) &&
  !(v instanceof Uint8Array) &&
  !(v instanceof Date)
    ? (v as Record<string, unknown>)
    : undefined;

/**
 * Rules that span attributes. They run even when single attributes are invalid (so that all of
 * an item's errors come out at once), hence the defensive reads.
 */
function checkAcrossAttributes(v: SpecObject, ctx: z.RefinementCtx<SpecObject>): void {
  const raw = v as unknown as Record<string, unknown>;
  const issue = (path: (string | number)[], message: string, input?: unknown) =>
    ctx.addIssue({ code: 'custom', path, message, input });
  checkRequiredAndSize(raw, issue);
  checkNamesAndSources(raw, issue);
}

type SpecIssue = (path: (string | number)[], message: string, input?: unknown) => void;

/** image and desiredCount unless absent or autoscaled; the Fargate task size pairs. */
function checkRequiredAndSize(raw: Record<string, unknown>, issue: SpecIssue): void {
  const absent = raw.state === 'absent';
  if (!absent) {
    if (raw.image === undefined && raw.containers === undefined) {
      issue(['image'], 'is required (unless state is absent, or containers lists every container of the task)');
    }
    if (raw.desiredCount === undefined && raw.autoscaled !== true) {
      issue(['desiredCount'], 'is required unless autoscaled is true (then Application Auto Scaling owns the count)');
    }
  }

  // Fargate task size pairs.
  const cpu = num(raw.cpu) ?? SPEC_DEFAULTS.cpu;
  const memory = num(raw.memory);
  const memories = FARGATE_CPU_MEMORY[cpu];
  if (memories && memory !== undefined && Number.isInteger(memory) && !memories.includes(memory)) {
    issue(
      ['memory'],
      `must be ${describeMemories(memories)} MiB with cpu ${cpu} on Fargate (AWS "Task size" table), got ${memory}` +
        (memory === SPEC_DEFAULTS.memory ? ` (${SPEC_DEFAULTS.memory} is the default when memory is omitted)` : ''),
      memory,
    );
  }

  // Fargate Spot runs X86_64 and ARM64 Linux tasks: the ECS API reference
  // (CapacityProviderStrategyItem) says ARM64 on platform version 1.4.0 or later, which is LATEST.
  // Older Developer Guide pages still say X86_64 only; the API reference is the newer source.
}

/** The family's length, the load balancer's port, one source per variable, the tag count. */
function checkNamesAndSources(raw: Record<string, unknown>, issue: SpecIssue): void {
  // Family `<cluster>-<service>` (RegisterTaskDefinition: up to 255 characters).
  const cluster = str(raw.cluster);
  const service = str(raw.service);
  if (cluster && service && raw.family === undefined && NAME_RE.test(cluster) && NAME_RE.test(service)) {
    const family = `${cluster}-${service}`;
    if (family.length > SPEC_LIMITS.familyMaxLength) {
      issue(
        ['service'],
        `makes the task definition family "<cluster>-<service>" ${family.length} characters long; ECS allows at most 255`,
        service,
      );
    }
  }

  // The load balancer sends to the container's port.
  const lb = rec(raw.loadBalancer);
  const lbPort = num(lb?.containerPort);
  const port = num(raw.containerPort);
  if (lbPort !== undefined && port !== undefined && lbPort !== port) {
    issue(['loadBalancer', 'containerPort'], `must equal containerPort (${port}) when both are given, got ${lbPort}`, lbPort);
  }

  // One variable, one source.
  const env = rec(raw.environment);
  const secrets = rec(raw.secrets);
  if (env && secrets) {
    for (const name of Object.keys(secrets)) {
      if (Object.hasOwn(env, name)) {
        issue(['secrets', name], `must not also be set in environment (a variable comes from one place), got "${name}" in both`, name);
      }
    }
  }

  const tags = rec(raw.tags);
  if (tags && Object.keys(tags).length > SPEC_LIMITS.maxTags) {
    issue(
      ['tags'],
      `must hold at most ${SPEC_LIMITS.maxTags} tags (ECS allows 50 per resource; the reconciler adds its owner tag), got ${Object.keys(tags).length}`,
      tags,
    );
  }
}

/**
 * The zod schema of a spec: input is what a person writes (a plain JS item, YAML mapping, or the
 * DynamoDB item as lib-dynamodb unmarshals it, after `Set`s of subnets / security groups became
 * lists), output is the normalized {@link ServiceSpec} with defaults applied, subnets and security
 * groups sorted, `image` `''` when an absent spec omits it, and `containerPort` taken from
 * `loadBalancer.containerPort` when only the latter is given.
 *
 * Prefer {@link parseSpecItem}: it also accepts String Sets, ignores `status`, and turns issues
 * into {@link SpecError}s with console-friendly messages.
 */
export const serviceSpecSchema = specObject
  .superRefine(checkAcrossAttributes, { when: () => true })
  .transform(({ deploymentConfiguration, ...s }): ServiceSpec => {
    // LINUX is ECS's default: written or not, the same spec (and the same hash). The ECS spelling
    // deploymentConfiguration is kept as `deployment`: one attribute for one meaning, and one hash.
    const { operatingSystemFamily, ...rest } = s;
    const deployment = deploymentConfiguration ? deploymentFromEcs(deploymentConfiguration) : s.deployment;
    const spec: ServiceSpec = {
      ...rest,
      ...(operatingSystemFamily !== undefined && operatingSystemFamily !== 'LINUX' ? { operatingSystemFamily } : {}),
      image: s.image ?? '',
      ...(deployment ? { deployment } : {}),
    };
    // The container must expose the port the target group sends to (CreateService rejects a
    // load balancer whose containerPort no port mapping has): one spelling for one meaning.
    if (s.containerPort === undefined && s.loadBalancer) return { ...spec, containerPort: s.loadBalancer.containerPort };
    return spec;
  });

/** `deploymentConfiguration` as the spec's `deployment`: the circuit breaker under the spec's name. */
function deploymentFromEcs(dc: Infer<typeof DEPLOYMENT_CONFIGURATION>): ServiceSpec['deployment'] {
  const { deploymentCircuitBreaker, ...rest } = dc;
  return { ...rest, ...(deploymentCircuitBreaker ? { circuitBreaker: deploymentCircuitBreaker } : {}) };
}

/** What a person writes: the schema's input type. */
export type ServiceSpecInput = z.input<typeof serviceSpecSchema>;

// The object's output must be ServiceSpec exactly (but for `image`, filled in by the transform).
type Exactly<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const specTypeIsExact: Exactly<Omit<SpecObject, 'image' | 'deploymentConfiguration'> & { image: string }, { -readonly [K in keyof ServiceSpec]: ServiceSpec[K] }> = true;
void specTypeIsExact;

/** The item attribute that holds the reconciler's status; never input, ignored by the parser. */
export const STATUS_ATTRIBUTE = 'status';

/**
 * Attribute names a spec item may have, in the order {@link specToItem} writes them: the key
 * (`cluster`, `service`), the spec attributes, and last `status` (written by the reconciler only,
 * ignored as input). Any other attribute is an error.
 */
export const SPEC_ATTRIBUTES: readonly string[] = Object.freeze([...Object.keys(specObject.shape), STATUS_ATTRIBUTE]);

/** Known keys of each nested map, for "did you mean" suggestions. */
const KNOWN_KEYS: Record<string, readonly string[]> = {
  '': Object.keys(specObject.shape),
  healthCheck: Object.keys(healthCheckSchema.shape),
  loadBalancer: Object.keys(loadBalancerSchema.shape),
  ...knownKeysOf(ADVANCED_CONFIGURATION, 'loadBalancer.advancedConfiguration'),
  ...knownKeysOf(DEPLOYMENT, 'deployment'),
  ...knownKeysOf(DEPLOYMENT_CONFIGURATION, 'deploymentConfiguration'),
  ...knownKeysOf(CONTAINER, 'containers'),
  ...knownKeysOf(VOLUME, 'volumes'),
  ...knownKeysOf(EPHEMERAL_STORAGE, 'ephemeralStorage'),
  ...knownKeysOf(PROXY_CONFIGURATION, 'proxyConfiguration'),
  ...knownKeysOf(CAPACITY_PROVIDER_STRATEGY_ITEM, 'capacityProviderStrategy'),
  ...knownKeysOf(LOAD_BALANCER, 'loadBalancers'),
  ...Object.fromEntries(
    SERVICE_FIELD_NAMES.flatMap((name) => Object.entries(knownKeysOf(SERVICE_FIELDS[name].field.type, name))),
  ),
};

// ---------------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------------

function levenshtein(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length];
}

/** True when the characters of `short` appear in `long` in order (`maxpercent` in `maximumpercent`). */
function isSubsequence(short: string, long: string): boolean {
  let i = 0;
  for (const ch of long) if (ch === short[i]) i++;
  return i === short.length;
}

/**
 * The known attribute an unknown one was probably meant to be, or undefined: same name in
 * another case or spelling (`desired_count`), a typo (edit distance at most 2, or a quarter of the
 * name), a name that contains or is contained in a known one (`port` -> `containerPort`), or an
 * abbreviation (`maxPercent` -> `maximumPercent`).
 */
export function suggestAttribute(unknown: string, known: readonly string[]): string | undefined {
  const norm = (s: string) => s.toLowerCase().replace(/[_\-\s]/g, '');
  const u = norm(unknown);
  if (u.length === 0) return undefined;
  let best: { name: string; score: number } | undefined;
  for (const name of known) {
    const k = norm(name);
    let score: number;
    if (k === u) score = 0;
    else {
      const d = levenshtein(u, k);
      if (d <= Math.max(2, Math.floor(u.length / 4))) score = d;
      else if (u.length >= 3 && (k.startsWith(u) || u.startsWith(k) || (u.length >= 4 && k.includes(u)))) score = 10 + Math.abs(k.length - u.length);
      else if (u.length >= 4 && u.length * 2 >= k.length && isSubsequence(u, k)) score = 20 + k.length - u.length;
      else continue;
    }
    if (!best || score < best.score) best = { name, score };
  }
  return best?.name;
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    // An empty attribute name (YAML `"": x` or `~: x`) is shown as "", not as the whole item.
    const name = p === '' && out === '' ? '""' : String(p);
    if (typeof p === 'number') out += `[${p}]`;
    else out += out === '' ? name : `.${name}`;
  }
  return out === '' ? '(item)' : out;
}

interface ZodIssueLike {
  code: string;
  path: PropertyKey[];
  message: string;
  input?: unknown;
  keys?: string[];
  issues?: ZodIssueLike[];
}

function toSpecErrors(issues: readonly ZodIssueLike[]): SpecError[] {
  const errors: SpecError[] = [];
  for (const iss of issues) {
    if (iss.code === 'unrecognized_keys') {
      const where = iss.path.filter((p) => typeof p === 'string').join('.');
      const known = own(KNOWN_KEYS, where) ?? [];
      const obj = rec(iss.input) ?? {};
      for (const key of iss.keys ?? []) {
        const suggestion = suggestAttribute(key, known);
        const noun = where === '' ? 'attribute' : `key of ${where}`;
        errors.push({
          path: formatPath([...iss.path, key]),
          value: displayValue(own(obj, key)),
          message: suggestion
            ? `is not a spec ${noun}; did you mean "${suggestion}"?`
            : `is not a spec ${noun} (allowed: ${known.join(', ')})`,
        });
      }
    } else if (iss.code === 'invalid_key') {
      errors.push({
        path: formatPath(iss.path),
        value: displayValue(iss.input),
        message: `name ${iss.issues?.[0]?.message ?? 'is not allowed'}`,
      });
    } else {
      errors.push({ path: formatPath(iss.path), value: displayValue(iss.input), message: iss.message });
    }
  }
  return errors;
}

/**
 * Errors for a `__proto__` key in any map of the item (not the item itself: a top-level
 * `__proto__` attribute is reported as unknown), which zod and the SDK would drop silently.
 */
function protoKeyErrors(input: Record<string, unknown>): SpecError[] {
  const errors: SpecError[] = [];
  // Every map at any depth (environment, tags, a container's dockerLabels, log options, ...):
  // zod and the SDK's marshalling copy maps into plain objects, where a `__proto__` key vanishes.
  const visit = (value: unknown, path: (string | number)[], depth: number): void => {
    if (depth > 32) return;
    if (Array.isArray(value)) {
      value.forEach((x, i) => visit(x, [...path, i], depth + 1));
      return;
    }
    const map = rec(value);
    if (!map) return;
    for (const [k, v] of Object.entries(map)) {
      if (k === PROTO_KEY && path.length > 0) {
        errors.push({
          path: formatPath([...path, PROTO_KEY]),
          value: displayValue(PROTO_KEY),
          message: `name must not be "${PROTO_KEY}" (JavaScript cannot keep that name as data)`,
        });
        continue;
      }
      visit(v, [...path, k], depth + 1);
    }
  };
  visit(input, [], 0);
  return errors;
}

/**
 * The rules across the ECS vocabulary (`./vocab/rules.ts`), on the item as written (before
 * defaults, so that "given" and "defaulted" can be told apart).
 */
function vocabularyRuleErrors(input: Record<string, unknown>): SpecError[] {
  if (input.state === 'absent') return [];
  const errors: SpecError[] = [];
  const cpu = num(input.cpu) ?? SPEC_DEFAULTS.cpu;
  const memory = num(input.memory) ?? SPEC_DEFAULTS.memory;
  const push = (path: (string | number)[], message: string, value?: unknown) => errors.push({ path: formatPath(path), value: displayValue(value), message });
  checkVocabularyRules(input, cpu, memory, push);
  checkPlatformRules(input, cpu, push);
  if (input.loadBalancer !== undefined && input.image === undefined && input.containers !== undefined) {
    errors.push({
      path: 'loadBalancer',
      value: displayValue(input.loadBalancer),
      message: 'sends to the shorthand container, which exists only with image; use loadBalancers with containerName',
    });
  }
  return errors;
}

/** Attributes where a DynamoDB String Set is accepted for a list: ECS treats them as sets too. */
const SET_AS_LIST = ['subnets', 'securityGroups'];

/** `path: message`, how a console prints a {@link SpecError}. */
export function formatSpecError(error: SpecError): string {
  return `${error.path}: ${error.message}`;
}

/**
 * Parses and validates one spec item, as lib-dynamodb's DocumentClient unmarshals it (numbers
 * are numbers, maps are objects, a String Set is a `Set<string>`) or as YAML gives it.
 *
 * - `status` is ignored (written by the reconciler); any other unknown attribute is an error, with
 *   a "did you mean" suggestion when a known attribute is close.
 * - A String Set is accepted for `subnets` and `securityGroups` (order carries no meaning there);
 *   for `command` and `healthCheck.command` it is an error, because DynamoDB does not keep the
 *   order of a set's members.
 * - Every problem of the item is reported, not just the first: each {@link SpecError} names the
 *   attribute path (`healthCheck.retries`, `environment.MY VAR`, `subnets[2]`), the offending
 *   value (at most 80 characters) and what is allowed, e.g.
 *   `desiredCount: must be a whole number (DynamoDB type N), got string "3"`.
 * - `state: absent` specs need only `cluster` and `service`; attributes they do give are still
 *   validated, and a missing `image` becomes `''`.
 *
 * @returns `{ ok: true, key, spec, hash }` with the normalized spec (defaults applied) and its
 *   {@link specHash}; or `{ ok: false, key, errors }`, `key` null when the item has no non-empty
 *   string `cluster` and `service`. Never throws.
 */
/** Path of the error of an item too large for its status ({@link MAX_SPEC_ATTRIBUTES_BYTES}). */
export const OVERSIZE_PATH = '(item)';

function oversizeError(size: number): SpecError {
  return {
    path: OVERSIZE_PATH,
    value: `${size} bytes`,
    message:
      `the spec's attributes take ${size} bytes; at most ${MAX_SPEC_ATTRIBUTES_BYTES} (368 KiB: DynamoDB's 400 KB item limit ` +
      'less 32 KiB kept for the status) are allowed; move large values out of the item (e.g. secrets or an image config file)',
  };
}

/** Whether a parse result was refused for its size (then its status may not fit the item either). */
export function isOversized(r: SpecParseResult): boolean {
  return !r.ok && r.errors.some((e) => e.path === OVERSIZE_PATH && e.message.startsWith("the spec's attributes take "));
}

/**
 * Bytes of the task definition ECS is sent, kept for what the reconciler's defaults add to the
 * rendered one (execution role, awslogs log configuration), which the spec alone cannot tell.
 */
export const TASK_DEFINITION_DEFAULTS_RESERVE_BYTES = 1024;

/** Largest rendered task definition a spec may make: ECS's quota less the defaults' reserve. */
export const MAX_RENDERED_TASK_DEFINITION_BYTES = ECS_QUOTAS.taskDefinitionMaxBytes - TASK_DEFINITION_DEFAULTS_RESERVE_BYTES;

/**
 * Item attributes (DynamoDB bytes) below which the rendered task definition cannot reach
 * {@link MAX_RENDERED_TASK_DEFINITION_BYTES}: rendering writes each map entry as
 * `{"name":...,"value":...}` and JSON punctuation, at most about eight times an entry's DynamoDB
 * size, so a smaller item is not rendered (the pass parses every item).
 */
const RENDER_CHECK_FROM_BYTES = 4096;

/** Attributes that end up in the task definition, in the order they are weighed. */
const TASK_DEFINITION_ATTRIBUTES = ['environment', 'secrets', 'containers', 'volumes', 'command', 'healthCheck', 'proxyConfiguration', 'image', 'family', 'taskRoleArn', 'executionRoleArn'] as const;

const jsonBytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v) ?? '', 'utf8');

/** A map key or list index for a path, shortened when the name is long. */
function shortName(name: string): string {
  return name.length <= 40 ? name : `${name.slice(0, 39)}…`;
}

/**
 * The error of a spec whose rendered task definition is larger than ECS takes: its size (the
 * RegisterTaskDefinition JSON without tags, which ECS keeps apart from the revision), ECS's figure,
 * and the attribute (or map entry, list item) that takes the most of it.
 */
function taskDefinitionSizeErrors(spec: ServiceSpec): SpecError[] {
  if (spec.state === 'absent') return [];
  const { tags: _tags, ...td } = renderTaskDefinition(spec, { defaults: { subnets: [], securityGroups: [] }, ownerId: '' });
  const bytes = jsonBytes(td);
  if (bytes <= MAX_RENDERED_TASK_DEFINITION_BYTES) return [];
  const source = spec as unknown as Record<string, unknown>;
  let path = '(item)';
  let largest = 0;
  for (const name of TASK_DEFINITION_ATTRIBUTES) {
    const value = own(source, name);
    if (value === undefined) continue;
    const size = jsonBytes(value);
    if (size > largest) {
      largest = size;
      path = name;
    }
  }
  // One entry that takes most of the attribute is named itself (a 60,000-character variable).
  let part = largest;
  const value = own(source, path);
  if (Array.isArray(value) || rec(value)) {
    const entries: [string, number][] = Array.isArray(value)
      ? value.map((x, i) => [`[${i}]`, jsonBytes(x)])
      : Object.entries(value as Record<string, unknown>).map(([k, x]) => [`.${shortName(k)}`, Buffer.byteLength(k, 'utf8') + jsonBytes(x)]);
    const top = entries.reduce<[string, number] | undefined>((best, e) => (best === undefined || e[1] > best[1] ? e : best), undefined);
    if (top && top[1] * 2 > largest) {
      path = `${path}${top[0]}`;
      part = top[1];
    }
  }
  return [
    {
      path,
      value: `${part} bytes`,
      message:
        `makes the rendered task definition ${bytes} bytes (its RegisterTaskDefinition JSON, tags aside), ${part} of them here; ` +
        `ECS refuses a task definition over ${ECS_QUOTAS.taskDefinitionMaxBytes} bytes (64 KiB, Amazon ECS service quotas) and ` +
        `the reconciler keeps ${TASK_DEFINITION_DEFAULTS_RESERVE_BYTES} for its defaults, so at most ${MAX_RENDERED_TASK_DEFINITION_BYTES} are allowed: ` +
        'move large values out of the task definition (secrets, environmentFiles, a config file in the image)',
    },
  ];
}

export function parseSpecItem(item: Record<string, unknown>): SpecParseResult {
  const obj = rec(item);
  if (!obj) {
    return {
      ok: false,
      key: null,
      errors: [{ path: '(item)', value: displayValue(item), message: `must be a map of attributes, got ${describeValue(item)}` }],
    };
  }
  const cluster = str(obj.cluster);
  const service = str(obj.service);
  const key: ServiceKey | null = cluster && service ? { cluster, service } : null;
  try {
    // Without a prototype, so that an attribute named `__proto__` (kept as data by JSON.parse and
    // YAML) stays an attribute, reported as unknown, instead of becoming the input's prototype
    // and lending its members to the spec.
    const input = Object.create(null) as Record<string, unknown>;
    for (const [name, value] of Object.entries(obj)) {
      if (name === STATUS_ATTRIBUTE) continue;
      input[name] = value instanceof Set && SET_AS_LIST.includes(name) ? [...value] : value;
    }
    // An item that leaves no room for its status could never show one: refused whole.
    const size = attributesSize(input);
    if (size > MAX_SPEC_ATTRIBUTES_BYTES) return { ok: false, key, errors: [oversizeError(size)] };
    const parsed = serviceSpecSchema.safeParse(input, { reportInput: true, error: genericMessage });
    const protoErrors = protoKeyErrors(input);
    const ruleErrors = vocabularyRuleErrors(input);
    if (!parsed.success || protoErrors.length > 0 || ruleErrors.length > 0) {
      const errors = parsed.success ? [] : toSpecErrors(parsed.error.issues as unknown as ZodIssueLike[]);
      return { ok: false, key, errors: [...errors, ...protoErrors, ...ruleErrors] };
    }
    const spec = parsed.data;
    if (size > RENDER_CHECK_FROM_BYTES) {
      const sizeErrors = taskDefinitionSizeErrors(spec);
      if (sizeErrors.length > 0) return { ok: false, key, errors: sizeErrors };
    }
    return { ok: true, key: { cluster: spec.cluster, service: spec.service }, spec, hash: specHash(spec) };
  } catch (err) {
    // Defensive: zod reports problems as issues; this only guards against the unforeseen.
    return { ok: false, key, errors: [{ path: '(item)', value: '', message: `could not be parsed: ${String(err)}` }] };
  }
}

/**
 * Stable content hash of a normalized spec (key included): the first 16 lowercase hex characters
 * of the SHA-256 of its {@link canonicalJson}. Independent of key order; omitted optional
 * attributes and attributes set to their default hash the same (the parser normalizes both).
 * Status records it as the spec generation a status reflects and the spec last applied.
 */
export function specHash(spec: ServiceSpec): string {
  // Turning observe-only on or off is not a new spec: a rollout that failed stays failed.
  const hashed = spec.observeOnly === undefined ? spec : { ...spec, observeOnly: undefined };
  return createHash('sha256').update(canonicalJson(hashed), 'utf8').digest('hex').slice(0, 16);
}

function compact<T extends object>(obj: T): T {
  // fromEntries defines own properties: a name such as `__proto__` stays a key.
  return Object.fromEntries(
    Object.entries(obj)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, rec(v) ? compact(v as object) : Array.isArray(v) ? [...v] : v]),
  ) as T;
}

/**
 * The item a person would write for `spec`, as a plain JS object in {@link SPEC_ATTRIBUTES}
 * order (ready for lib-dynamodb's PutCommand or for YAML). Leaves out undefined attributes, empty
 * `environment` / `secrets` / `tags`, an empty `image`, and `state`, `adopt`, `autoscaled` at
 * their defaults, and `capacityProvider` when `launchType` or `capacityProviderStrategy` says
 * instead; keeps `cpu`, `memory`, `capacityProvider` and `cpuArchitecture` (they say what a task
 * costs). Lists and maps are copies.
 *
 * `parseSpecItem(specToItem(spec))` gives back `spec` with the same hash, for any normalized spec.
 */
export function specToItem(spec: ServiceSpec): Record<string, unknown> {
  const skip = (name: string, value: unknown): boolean => {
    if (value === undefined) return true;
    if (name === 'image') return value === '';
    // The shorthand's default provider, when the spec names a launch type or a strategy instead.
    if (name === 'capacityProvider') return spec.launchType !== undefined || spec.capacityProviderStrategy !== undefined;
    if (name === 'environment' || name === 'secrets' || name === 'tags') return Object.keys(value as object).length === 0;
    if (name === 'state' || name === 'adopt' || name === 'autoscaled') {
      return value === SPEC_DEFAULTS[name as 'state' | 'adopt' | 'autoscaled'];
    }
    return false;
  };
  const source = spec as unknown as Record<string, unknown>;
  const entries: [string, unknown][] = [];
  for (const name of SPEC_ATTRIBUTES) {
    if (name === STATUS_ATTRIBUTE) continue;
    const value = own(source, name);
    if (skip(name, value)) continue;
    entries.push([name, Array.isArray(value) ? [...value] : rec(value) ? compact(value as object) : value]);
  }
  return Object.fromEntries(entries);
}

/**
 * The reconciler's configuration, from environment variables, parsed once with zod.
 *
 * The CDK construct (`lib/`) sets these on the function; `ecsr reconcile` and the local run read
 * the same variables. Every name is exported in {@link ENV} so the construct and this parser
 * cannot drift apart.
 */
import { z } from 'zod';
import { DEFAULT_METRICS_NAMESPACE } from './core/metric-names';
import { ALLOW_LIST, ALLOW_LIST_ENV, type AllowListName, type AllowLists } from './core/allow-lists';
import { DEFAULT_PLAN_OPTIONS, type PlanOptions } from './core/options';
import { parseTarget, type TargetParseResult } from './core/targets';

/** Environment variable names. */
export const ENV = {
  specsTable: 'SPECS_TABLE',
  taskDefinitionCacheTable: 'TASK_DEFINITION_CACHE_TABLE',
  managedClusters: 'MANAGED_CLUSTERS',
  defaultSubnets: 'DEFAULT_SUBNETS',
  defaultSecurityGroups: 'DEFAULT_SECURITY_GROUPS',
  defaultAssignPublicIp: 'DEFAULT_ASSIGN_PUBLIC_IP',
  defaultExecutionRoleArn: 'DEFAULT_EXECUTION_ROLE_ARN',
  logGroupPrefix: 'LOG_GROUP_PREFIX',
  defaultLagGraceSeconds: 'DEFAULT_LAG_GRACE_SECONDS',
  ownerId: 'OWNER_ID',
  dryRun: 'DRY_RUN',
  prune: 'PRUNE',
  allowAdoption: 'ALLOW_ADOPTION',
  observeOnlyClusters: 'OBSERVE_ONLY_CLUSTERS',
  maxDeletesPerPass: 'MAX_DELETES_PER_PASS',
  apiBudgetFraction: 'API_BUDGET_FRACTION',
  allowedSubnets: ALLOW_LIST_ENV.subnets,
  allowedSecurityGroups: ALLOW_LIST_ENV.securityGroups,
  allowedAssignPublicIp: ALLOW_LIST_ENV.assignPublicIp,
  allowedTargetGroupArns: ALLOW_LIST_ENV.targetGroupArns,
  allowedSecrets: ALLOW_LIST_ENV.secrets,
  allowedTaskRoleArns: ALLOW_LIST_ENV.taskRoleArns,
  allowedExecutionRoleArns: ALLOW_LIST_ENV.executionRoleArns,
  allowedImageRegistries: ALLOW_LIST_ENV.imageRegistries,
  allowedEfsFileSystems: ALLOW_LIST_ENV.efsFileSystems,
  metricsNamespace: 'METRICS_NAMESPACE',
  eventsQueueUrl: 'EVENTS_QUEUE_URL',
  events: 'EVENTS',
  eventsIgnorePrincipals: 'EVENTS_IGNORE_PRINCIPALS',
  resyncMinutes: 'RESYNC_MINUTES',
  scheduleMinutes: 'SCHEDULE_MINUTES',
  targets: 'TARGETS',
  fanOutQueueUrl: 'FANOUT_QUEUE_URL',
  region: 'AWS_REGION',
} as const;

/** The non-empty, trimmed items of a comma-separated list. */
function splitCsv(s: string): string[] {
  return s
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x.length > 0);
}

const csv = z
  .string()
  .optional()
  .transform((s) => splitCsv(s ?? ''));

/**
 * An allow-list: unset or empty means "anything" (undefined); the literal `NONE` means "nothing"
 * ([]), so a deployment that allow-lists no task role can say so.
 */
const allowList = z
  .string()
  .optional()
  .transform((s) => {
    const t = (s ?? '').trim();
    if (t === '') return undefined;
    if (t.toUpperCase() === 'NONE') return [] as string[];
    return splitCsv(t);
  });

const bool = (dflt: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
    .optional()
    .transform((s) => (s === undefined || s === '' ? dflt : s === 'true' || s === '1' || s === 'yes'));

const int = (dflt: number, min: number, max: number) =>
  z
    .string()
    .optional()
    .transform((s, ctx) => {
      if (s === undefined || s.trim() === '') return dflt;
      const n = Number(s);
      if (!Number.isInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `must be a whole number from ${min} to ${max}, got "${s}"` });
        return z.NEVER;
      }
      return n;
    });

const envSchema = z.object({
  [ENV.specsTable]: z.string({ error: 'is required (the DynamoDB table of service specs)' }).min(3, 'must name a DynamoDB table (3+ characters)'),
  [ENV.taskDefinitionCacheTable]: z
    .string()
    .optional()
    .transform((s) => (s === undefined || s.trim() === '' ? undefined : s.trim()))
    .refine((s) => s === undefined || s.length >= 3, 'must name a DynamoDB table (3+ characters), or be unset for no durable task definition cache'),
  [ENV.managedClusters]: csv,
  [ENV.defaultSubnets]: csv,
  [ENV.defaultSecurityGroups]: csv,
  [ENV.defaultAssignPublicIp]: bool(false),
  [ENV.defaultExecutionRoleArn]: z
    .string()
    .regex(/^arn:aws[a-z-]*:iam::\d{12}:role\/.+$/, 'must be an IAM role ARN (arn:aws:iam::123456789012:role/NAME)')
    .optional(),
  [ENV.logGroupPrefix]: z.string().optional(),
  [ENV.defaultLagGraceSeconds]: int(300, 0, 86_400),
  [ENV.ownerId]: z
    .string()
    .regex(/^[A-Za-z0-9+\-=._:/@ ]{1,256}$/, 'must be a valid ECS tag value (1-256 characters)')
    .optional()
    .default(DEFAULT_PLAN_OPTIONS.ownerId),
  [ENV.dryRun]: bool(false),
  [ENV.prune]: bool(true),
  // The construct sets false unless its allowAdoption prop is true; unset (CLI, local) allows it.
  [ENV.allowAdoption]: bool(true),
  [ENV.observeOnlyClusters]: csv,
  [ENV.maxDeletesPerPass]: int(5, 0, 1000),
  [ENV.apiBudgetFraction]: z
    .string()
    .optional()
    .transform((s, ctx) => {
      if (s === undefined || s.trim() === '') return 0.5;
      const n = Number(s);
      if (!(n > 0 && n <= 1)) {
        ctx.addIssue({ code: 'custom', message: `must be a fraction in (0, 1], got "${s}"` });
        return z.NEVER;
      }
      return n;
    }),
  ...(Object.fromEntries(Object.values(ALLOW_LIST_ENV).map((name) => [name, allowList])) as Record<
    (typeof ALLOW_LIST_ENV)[AllowListName],
    typeof allowList
  >),
  [ENV.allowedAssignPublicIp]: allowList.refine(
    (l) => l === undefined || l.every((v) => v === 'ENABLED' || v === 'DISABLED'),
    'must list ENABLED and/or DISABLED (or NONE)',
  ),
  [ENV.metricsNamespace]: z.string().optional().default(DEFAULT_METRICS_NAMESPACE),
  [ENV.eventsQueueUrl]: z
    .string()
    .optional()
    .transform((s) => (s === undefined || s.trim() === '' ? undefined : s.trim()))
    .refine((s) => s === undefined || /^https?:\/\/\S+$/.test(s), 'must be an SQS queue URL (https://sqs.REGION.amazonaws.com/ACCOUNT/NAME), or be unset for polling'),
  [ENV.events]: bool(true),
  [ENV.eventsIgnorePrincipals]: csv,
  [ENV.resyncMinutes]: int(10, 1, 1440),
  [ENV.scheduleMinutes]: int(1, 1, 60),
  [ENV.targets]: z
    .string()
    .optional()
    .transform((s, ctx) => {
      if (s === undefined || s.trim() === '') return [] as TargetParseResult[];
      let json: unknown;
      try {
        json = JSON.parse(s);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be a JSON array of target declarations' });
        return z.NEVER;
      }
      if (!Array.isArray(json)) {
        ctx.addIssue({ code: 'custom', message: 'must be a JSON array of target declarations' });
        return z.NEVER;
      }
      const results = json.map((t) => parseTarget(t, 'prop'));
      const bad = results.flatMap((r) => (r.ok ? [] : r.errors));
      const names = results.flatMap((r) => (r.ok ? [r.target.name] : []));
      const dup = names.find((n, i) => names.indexOf(n) !== i);
      if (dup) bad.push(`target ${dup} is declared twice`);
      if (bad.length > 0) {
        ctx.addIssue({ code: 'custom', message: bad.join('; ') });
        return z.NEVER;
      }
      return results;
    }),
  [ENV.fanOutQueueUrl]: z
    .string()
    .optional()
    .transform((s) => (s === undefined || s.trim() === '' ? undefined : s.trim()))
    .refine((s) => s === undefined || /^https?:\/\/\S+$/.test(s), 'must be an SQS queue URL (https://sqs.REGION.amazonaws.com/ACCOUNT/NAME), or be unset for one target'),
  [ENV.region]: z.string().optional(),
});

/** The validated configuration of a pass. */
export interface ReconcilerConfig {
  readonly specsTable: string;
  /**
   * The durable task definition description cache's table; undefined: the
   * descriptions are cached in each container's memory only, and a new container describes again.
   */
  readonly taskDefinitionCacheTable?: string;
  readonly dryRun: boolean;
  /** Fraction (0, 1] of ECS's documented API rates the reconciler may use (docs/ecs-facts.md §2). */
  readonly apiBudgetFraction: number;
  readonly metricsNamespace: string;
  readonly plan: PlanOptions;
  /**
   * The resync floor in every mode: every service with a spec is re-read within
   * `resyncSeconds` (`RESYNC_MINUTES`, seconds here), one pass every `passIntervalSeconds`
   * (`SCHEDULE_MINUTES`, seconds). Optional for callers that build a config by hand.
   */
  readonly resync?: { readonly resyncSeconds: number; readonly passIntervalSeconds: number };
  /**
   * Events mode: the SQS queue the EventBridge rules feed, the resync interval
   * (`RESYNC_MINUTES`, seconds here), the schedule's interval and the principals whose calls are
   * not hints. Undefined (no `EVENTS_QUEUE_URL`, or `EVENTS=false`): every pass polls.
   */
  readonly events?: {
    readonly queueUrl: string;
    readonly resyncSeconds: number;
    readonly passIntervalSeconds: number;
    readonly ignorePrincipals: readonly string[];
  };
  /**
   * `EVENTS_IGNORE_PRINCIPALS`: role ARNs whose calls are not hints, also for the events fast
   * path (whose events arrive whether or not the scheduled pass reads the queue).
   */
  readonly eventsIgnorePrincipals?: readonly string[];
  /**
   * Fan-out mode: the SQS queue with one message per target per tick, the
   * targets the construct declared (`TARGETS`), and the schedule's interval (seconds; older
   * scheduled messages are dropped). Undefined: one target, the reconciler's own account.
   */
  readonly fanOut?: {
    readonly queueUrl: string;
    readonly propTargets: readonly TargetParseResult[];
    readonly scheduleSeconds: number;
  };
}

/** Thrown by {@link loadConfig}; the message names every bad variable. */
export class ConfigError extends Error {
  constructor(
    message: string,
    readonly variables: string[],
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * Parses the reconciler configuration from `env` (default `process.env`).
 * @throws ConfigError naming each invalid or missing variable, e.g.
 *   `SPECS_TABLE is required (the DynamoDB table of service specs)`.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): ReconcilerConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${String(i.path[0] ?? '?')} ${i.message}`);
    throw new ConfigError(
      `Invalid configuration: ${lines.join('; ')}`,
      parsed.error.issues.map((i) => String(i.path[0] ?? '?')),
    );
  }
  const e = parsed.data;
  const queueUrl = e[ENV.eventsQueueUrl];
  const fanOutQueueUrl = e[ENV.fanOutQueueUrl];
  return {
    specsTable: e[ENV.specsTable],
    ...(e[ENV.taskDefinitionCacheTable] !== undefined ? { taskDefinitionCacheTable: e[ENV.taskDefinitionCacheTable] } : {}),
    dryRun: e[ENV.dryRun],
    apiBudgetFraction: e[ENV.apiBudgetFraction],
    metricsNamespace: e[ENV.metricsNamespace],
    eventsIgnorePrincipals: e[ENV.eventsIgnorePrincipals],
    resync: { resyncSeconds: e[ENV.resyncMinutes] * 60, passIntervalSeconds: e[ENV.scheduleMinutes] * 60 },
    ...(queueUrl !== undefined && e[ENV.events]
      ? {
          events: {
            queueUrl,
            resyncSeconds: e[ENV.resyncMinutes] * 60,
            passIntervalSeconds: e[ENV.scheduleMinutes] * 60,
            ignorePrincipals: e[ENV.eventsIgnorePrincipals],
          },
        }
      : {}),
    ...(fanOutQueueUrl !== undefined
      ? { fanOut: { queueUrl: fanOutQueueUrl, propTargets: e[ENV.targets], scheduleSeconds: e[ENV.scheduleMinutes] * 60 } }
      : {}),
    plan: {
      ownerId: e[ENV.ownerId],
      managedClusters: e[ENV.managedClusters],
      prune: e[ENV.prune],
      allowAdoption: e[ENV.allowAdoption],
      ...(e[ENV.observeOnlyClusters].length > 0 ? { observeOnlyClusters: e[ENV.observeOnlyClusters] } : {}),
      maxDeletesPerPass: e[ENV.maxDeletesPerPass],
      defaultLagGraceSeconds: e[ENV.defaultLagGraceSeconds],
      defaults: {
        subnets: e[ENV.defaultSubnets],
        securityGroups: e[ENV.defaultSecurityGroups],
        assignPublicIp: e[ENV.defaultAssignPublicIp],
        executionRoleArn: e[ENV.defaultExecutionRoleArn],
        logGroupPrefix: e[ENV.logGroupPrefix],
        region: e[ENV.region],
      },
      allow: Object.fromEntries(
        (Object.keys(ALLOW_LIST) as AllowListName[]).map((list) => [list, e[ALLOW_LIST_ENV[list]]]),
      ) as AllowLists,
    },
  };
}

/**
 * The props of `EcsReconciler` with defaults applied and validated, once, before anything is
 * created: every problem is collected, then thrown together (one sentence each, saying what to
 * change).
 */
import { Token } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { DEFAULT_FUNCTION_TIMEOUT_SECONDS } from '../../lambda/core/alarms';
import { DEFAULT_METRICS_NAMESPACE } from '../../lambda/core/metric-names';
import { DEFAULT_PLAN_OPTIONS } from '../../lambda/core/options';
import { parseTarget } from '../../lambda/core/targets';
import { DEFAULT_FLEET_SIZE, memoryForFleet } from '../function-memory';
import { EcsReconcilerPropsError } from './errors';
import { DEFAULT_LOG_GROUP_PREFIX, effectiveLogGroupPrefix } from './log-groups';
import type { EcsReconcilerProps } from './props';
import { defaultTargetRoleArn } from './target-names';

const CLUSTER_NAME = /^[A-Za-z0-9_-]{1,255}$/;
const SUBNET_ID = /^subnet-[0-9a-f]+$/;
const SECURITY_GROUP_ID = /^sg-[0-9a-f]+$/;
const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]+$/;
const ROLE_NAME = /^[\w+=,.@-]{1,64}$/;
const OWNER_ID = /^[A-Za-z0-9+\-=._:/@ ]{1,256}$/;
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
const REGISTRY = /^[a-z0-9.-]+(:\d+)?(\/[a-z0-9._/-]+)?$/;
const LOG_GROUP_PREFIX = /^[A-Za-z0-9_\-/.#]{1,256}$/;

/** True for a CDK token (a value known only at deploy time). */
export const isToken = (s: string) => Token.isUnresolved(s);

/** The props with defaults applied, as the construct's parts use them. */
export interface ResolvedSettings {
  events: boolean;
  resyncMinutes: number;
  metricsNamespace: string;
  defaultLagGraceSeconds: number;
  scheduleMinutes: number;
  ownerId: string;
  prune: boolean;
  allowAdoption: boolean;
  dryRun: boolean;
  maxDeletesPerPass: number;
  apiBudgetFraction: number;
  logGroupPrefix: string;
  /**
   * The prefix task definitions log under: `logGroupPrefix`, plus `<ownerId>/` when the owner id
   * is not the default, so that two reconcilers sharing a cluster (they need different owner ids)
   * create different log groups.
   */
  effectiveLogGroupPrefix: string;
  timeoutSeconds: number;
  tracing: lambda.Tracing;
  logRetention: logs.RetentionDays;
  memorySize: number;
  fanOut: boolean;
  fanOutConcurrency: number;
}

/** The stack's account and Region when known at synth (the default target's place). */
export interface HomePlace {
  readonly account?: string;
  readonly region?: string;
}

/**
 * Applies defaults and validates props.
 * @param home the stack's account and Region when known at synth (the default target's place).
 * @throws EcsReconcilerPropsError listing every problem, one sentence each.
 */
export function resolveSettings(props: EcsReconcilerProps, home: HomePlace = {}): ResolvedSettings {
  const problems: string[] = [];
  checkClusterProps(props, problems);
  checkAllowLists(props, problems);
  const { scheduleMinutes, defaultLagGraceSeconds, timeoutSeconds, resyncMinutes } = resolveTimes(props, problems);
  checkMonitoring(props, problems);
  const plan = resolvePlan(props, problems);
  const fn = resolveFunction(props, problems);
  checkTable(props, problems);
  const fanOut = resolveFanOut(props, home, problems);
  if (problems.length > 0) throw new EcsReconcilerPropsError(problems);
  return {
    ...fanOut,
    events: props.events ?? true,
    resyncMinutes,
    effectiveLogGroupPrefix: effectiveLogGroupPrefix(plan.logGroupPrefix, plan.ownerId),
    timeoutSeconds,
    tracing: props.tracing ?? lambda.Tracing.ACTIVE,
    defaultLagGraceSeconds,
    scheduleMinutes,
    ...plan,
    prune: props.prune ?? DEFAULT_PLAN_OPTIONS.prune,
    allowAdoption: props.allowAdoption ?? false,
    dryRun: props.dryRun ?? false,
    logRetention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
    ...fn,
  };
}

function checkClusterProps(props: EcsReconcilerProps, problems: string[]): void {
  const clusters = props.clusters ?? [];
  if (clusters.length === 0 && !props.createCluster) {
    problems.push('Give at least one managed cluster in `clusters`, or set `createCluster: true` for the quick start.');
  }
  const names = clusters.filter((c): c is string => typeof c === 'string');
  for (const name of names) {
    if (!isToken(name) && !CLUSTER_NAME.test(name)) {
      problems.push(
        `Cluster "${name}" is not an ECS cluster name: use 1-255 letters, digits, hyphens and underscores (a name, not an ARN).`,
      );
    }
  }
  const dupes = names.filter((n, i) => !isToken(n) && names.indexOf(n) !== i);
  if (dupes.length > 0) problems.push(`Cluster "${dupes[0]}" is listed twice in \`clusters\`: list each cluster once.`);

  for (const s of props.defaultSubnets ?? []) {
    if (typeof s === 'string' && !isToken(s) && !SUBNET_ID.test(s)) {
      problems.push(`Default subnet "${s}" is not a subnet id: use ids like subnet-0123abcd.`);
    }
  }
  for (const g of props.defaultSecurityGroups ?? []) {
    if (typeof g === 'string' && !isToken(g) && !SECURITY_GROUP_ID.test(g)) {
      problems.push(`Default security group "${g}" is not a security group id: use ids like sg-0123abcd.`);
    }
  }
  if (props.createCluster && props.assignPublicIp === false && !props.defaultSubnets) {
    problems.push(
      'The quick-start VPC has no NAT gateway, so its tasks need public IPs to pull images: drop `assignPublicIp: false`, or give `defaultSubnets` with a route to your registry.',
    );
  }
}

function checkAllowLists(props: EcsReconcilerProps, problems: string[]): void {
  const roleStrings = [...(props.allowedTaskRoles ?? []), ...(props.allowedExecutionRoles ?? [])].filter(
    (r): r is string => typeof r === 'string',
  );
  for (const r of roleStrings) {
    if (!isToken(r) && !ROLE_ARN.test(r)) {
      problems.push(`Role "${r}" is not an IAM role ARN: use arn:aws:iam::123456789012:role/NAME (wildcards are not allowed).`);
    }
  }
  const listEntry = (what: string, pattern: RegExp, example: string, entries: ReadonlyArray<unknown> | undefined) => {
    for (const x of entries ?? []) {
      if (typeof x !== 'string' || isToken(x)) continue;
      const plain = x.endsWith('*') ? x.slice(0, -1) : x;
      if (x !== '*' && !pattern.test(plain)) problems.push(`${what} "${x}" is not valid: use ${example} (a trailing * makes it a prefix).`);
    }
  };
  listEntry('Allowed subnet', /^subnet-[0-9a-f]*$/, 'ids like subnet-0123abcd', props.allowedSubnets);
  listEntry('Allowed security group', /^sg-[0-9a-f]*$/, 'ids like sg-0123abcd', props.allowedSecurityGroups);
  listEntry('Allowed target group', /^arn:aws[a-z-]*:elasticloadbalancing:/, 'a target group ARN (arn:aws:elasticloadbalancing:REGION:ACCOUNT:targetgroup/NAME/ID)', props.allowedTargetGroups);
  listEntry('Allowed secret', /^(arn:aws[a-z-]*:(secretsmanager|ssm):|[A-Za-z0-9_.\-/])/, 'a Secrets Manager or SSM parameter ARN, or a parameter name', props.allowedSecrets);
  listEntry('Allowed EFS file system', /^fs-[0-9a-f]*$/, 'ids like fs-0123abcd', props.allowedEfsFileSystems);
  for (const reg of props.allowedImageRegistries ?? []) {
    if (!REGISTRY.test(reg.endsWith('*') ? reg.slice(0, -1) : reg)) {
      problems.push(`Image registry "${reg}" is not a registry host: use a host such as public.ecr.aws or 123456789012.dkr.ecr.eu-west-1.amazonaws.com.`);
    }
  }
}

/** The schedule's interval, the default lag grace, the function timeout and the resync interval. */
function resolveTimes(props: EcsReconcilerProps, problems: string[]) {
  let scheduleMinutes = 1;
  if (props.schedule !== undefined) {
    if (props.schedule.isUnresolved()) {
      problems.push('`schedule` must be a literal Duration, not a token.');
    } else {
      const seconds = props.schedule.toSeconds();
      scheduleMinutes = seconds / 60;
      if (!Number.isInteger(scheduleMinutes) || scheduleMinutes < 1 || scheduleMinutes > 60) {
        problems.push(`\`schedule\` must be whole minutes from 1 to 60 (e.g. Duration.minutes(1)), got ${seconds} seconds.`);
      }
    }
  }
  let defaultLagGraceSeconds = DEFAULT_PLAN_OPTIONS.defaultLagGraceSeconds;
  if (props.defaultLagGrace !== undefined) {
    defaultLagGraceSeconds =
      typeof props.defaultLagGrace === 'number' ? props.defaultLagGrace : props.defaultLagGrace.toSeconds();
    if (!Number.isInteger(defaultLagGraceSeconds) || defaultLagGraceSeconds < 0 || defaultLagGraceSeconds > 86_400) {
      problems.push(
        `\`defaultLagGrace\` must be whole seconds from 0 to 86400 (24 hours), got ${defaultLagGraceSeconds}.`,
      );
    }
  }
  let timeoutSeconds = DEFAULT_FUNCTION_TIMEOUT_SECONDS;
  if (props.timeout !== undefined) {
    timeoutSeconds = props.timeout.toSeconds();
    if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 10 || timeoutSeconds > Math.min(900, scheduleMinutes * 60)) {
      problems.push(
        `\`timeout\` must be whole seconds from 10 to the schedule's interval (${Math.min(900, scheduleMinutes * 60)} s): a pass must end before the next one starts; got ${timeoutSeconds}.`,
      );
    }
  }
  const resyncMinutes = props.resyncMinutes ?? 10;
  if (!Number.isInteger(resyncMinutes) || resyncMinutes < scheduleMinutes || resyncMinutes > 1440) {
    problems.push(`\`resyncMinutes\` must be whole minutes from the schedule's interval (${scheduleMinutes}) to 1440, got ${resyncMinutes}.`);
  }
  return { scheduleMinutes, defaultLagGraceSeconds, timeoutSeconds, resyncMinutes };
}

function checkMonitoring(props: EcsReconcilerProps, problems: string[]): void {
  if (props.alarmTopic && props.alarmEmail) {
    problems.push(
      'Give either `alarmTopic` or `alarmEmail`, not both: subscribe the address to your own topic, or drop `alarmTopic` to get a new topic.',
    );
  }
  if (props.alarmEmail !== undefined && !isToken(props.alarmEmail) && !EMAIL.test(props.alarmEmail)) {
    problems.push(`\`alarmEmail\` "${props.alarmEmail}" is not an email address: use e.g. ops@example.com.`);
  }
  if (props.createAlarms === false && props.alarmEmail !== undefined) {
    problems.push('`alarmEmail` has no effect with `createAlarms: false`: drop one of them.');
  }
  for (const [id, o] of Object.entries(props.alarmOverrides ?? {})) {
    if (!o) continue;
    const n = o.evaluationPeriods;
    const m = o.datapointsToAlarm;
    if (n !== undefined && (!Number.isInteger(n) || n < 1)) problems.push(`\`alarmOverrides.${id}.evaluationPeriods\` must be a whole number of at least 1, got ${n}.`);
    if (m !== undefined && (!Number.isInteger(m) || m < 1)) problems.push(`\`alarmOverrides.${id}.datapointsToAlarm\` must be a whole number of at least 1, got ${m}.`);
    if (m !== undefined && n !== undefined && m > n) problems.push(`\`alarmOverrides.${id}\`: datapointsToAlarm (${m}) cannot exceed evaluationPeriods (${n}).`);
    if (o.threshold !== undefined && !Number.isFinite(o.threshold)) problems.push(`\`alarmOverrides.${id}.threshold\` must be a number.`);
  }
}

/** The namespace, the pass's budgets, the owner id and the log group prefix. */
function resolvePlan(props: EcsReconcilerProps, problems: string[]) {
  const metricsNamespace = props.metricsNamespace ?? DEFAULT_METRICS_NAMESPACE;
  if (!/^[A-Za-z0-9.\-_/#:]{1,255}$/.test(metricsNamespace) || metricsNamespace.startsWith('AWS/')) {
    problems.push(
      `\`metricsNamespace\` "${metricsNamespace}" is not a custom CloudWatch namespace: use 1-255 letters, digits and . - _ / # :, not starting with AWS/.`,
    );
  }
  const maxDeletesPerPass = props.maxDeletesPerPass ?? DEFAULT_PLAN_OPTIONS.maxDeletesPerPass;
  if (!Number.isInteger(maxDeletesPerPass) || maxDeletesPerPass < 0 || maxDeletesPerPass > 1000) {
    problems.push(`\`maxDeletesPerPass\` must be a whole number from 0 to 1000, got ${maxDeletesPerPass}.`);
  }
  const apiBudgetFraction = props.apiBudgetFraction ?? 0.5;
  if (!(apiBudgetFraction > 0 && apiBudgetFraction <= 1)) {
    problems.push(`\`apiBudgetFraction\` must be a fraction above 0 and at most 1 (e.g. 0.5), got ${apiBudgetFraction}.`);
  }
  const ownerId = props.ownerId ?? DEFAULT_PLAN_OPTIONS.ownerId;
  if (!isToken(ownerId) && !OWNER_ID.test(ownerId)) {
    problems.push(`\`ownerId\` "${ownerId}" is not a valid ECS tag value: use 1-256 letters, digits, spaces and + - = . _ : / @.`);
  }
  if (isToken(ownerId)) {
    problems.push(
      '`ownerId` must be a literal string, not a token: it names the per-cluster log groups at synth (`<logGroupPrefix><ownerId>/<cluster>`), which must differ from those of any other reconciler sharing a cluster.',
    );
  }
  const logGroupPrefix = props.logGroupPrefix ?? DEFAULT_LOG_GROUP_PREFIX;
  if (!LOG_GROUP_PREFIX.test(logGroupPrefix)) {
    problems.push(`\`logGroupPrefix\` "${logGroupPrefix}" is not a valid log group name prefix: use letters, digits and _ - / . #.`);
  }
  return { metricsNamespace, maxDeletesPerPass, apiBudgetFraction, ownerId, logGroupPrefix };
}

/** The function's memory (from `fleetSize` unless given) and its role's name. */
function resolveFunction(props: EcsReconcilerProps, problems: string[]) {
  const fleetSize = props.fleetSize ?? DEFAULT_FLEET_SIZE;
  if (!Number.isInteger(fleetSize) || fleetSize < 1) {
    problems.push(`\`fleetSize\` must be a whole number of services, 1 or more, got ${fleetSize}.`);
  }
  const memorySize = props.memorySize ?? memoryForFleet(fleetSize);
  if (!Number.isInteger(memorySize) || memorySize < 128 || memorySize > 10_240) {
    problems.push(`\`memorySize\` must be whole MiB from 128 to 10240, got ${memorySize}.`);
  }
  const roleName = props.functionRoleName;
  if (roleName !== undefined && !isToken(roleName) && !ROLE_NAME.test(roleName)) {
    problems.push(`\`functionRoleName\` "${roleName}" is not an IAM role name: use 1-64 letters, digits and + = , . @ _ -.`);
  }
  return { memorySize };
}

function checkTable(props: EcsReconcilerProps, problems: string[]): void {
  if (props.existingTable && (props.tableProps || props.tableEncryptionKey)) {
    problems.push('Give `existingTable` or `tableProps` / `tableEncryptionKey`, not both: an existing table keeps its own settings.');
  }
  if (props.tableProps?.encryptionKey && props.tableEncryptionKey) {
    problems.push('Give the table key once: `tableEncryptionKey` or `tableProps.encryptionKey`.');
  }
}

/** Whether the fan-out is on and how many targets run at once; checks the `targets` prop. */
function resolveFanOut(props: EcsReconcilerProps, home: HomePlace, problems: string[]) {
  checkTargets(props, home, problems);
  const fanOut = props.fanOut ?? (props.targets ?? []).length > 0;
  if (props.fanOut === false && (props.targets ?? []).length > 0) problems.push('`targets` needs the fan-out: drop `fanOut: false`.');
  if (fanOut && props.reserveConcurrency) {
    problems.push('`reserveConcurrency` caps the function at one invocation, so the fan-out would run one target at a time: drop it (each target has its own lease).');
  }
  const fanOutConcurrency = props.fanOutConcurrency ?? 10;
  if (!Number.isInteger(fanOutConcurrency) || fanOutConcurrency < 2 || fanOutConcurrency > 1000) {
    problems.push(`\`fanOutConcurrency\` must be a whole number from 2 to 1000 (the event source mapping's maximum concurrency), got ${fanOutConcurrency}.`);
  }
  return { fanOut, fanOutConcurrency };
}

function checkTargets(props: EcsReconcilerProps, home: HomePlace, problems: string[]): void {
  const targetNames = new Set<string>();
  const targetPlaces = new Map<string, string>();
  for (const t of props.targets ?? []) {
    if ([t.name, t.account, t.region, t.roleArn ?? ''].some((v) => isToken(v))) {
      problems.push(`Target "${t.name}": name, account, region and roleArn must be literal strings, not tokens.`);
      continue;
    }
    const parsed = parseTarget(
      { ...t, roleArn: t.roleArn ?? defaultTargetRoleArn(t.account, t.region), ...(t.clusters ? { clusters: [...t.clusters] } : {}) },
      'prop',
    );
    if (!parsed.ok) problems.push(...parsed.errors.map((e) => `${e.charAt(0).toUpperCase()}${e.slice(1)}.`));
    if (targetNames.has(t.name)) problems.push(`Target "${t.name}" is listed twice in \`targets\`.`);
    targetNames.add(t.name);
    // One target per account and Region: two would prune each other's services (one owner tag)
    // and spend the same ECS buckets twice.
    const place = `${t.account}/${t.region}`;
    const holder = home.account !== undefined && home.region !== undefined && place === `${home.account}/${home.region}` ? 'default' : targetPlaces.get(place);
    if (holder !== undefined) {
      problems.push(`Target "${t.name}": account ${t.account} Region ${t.region} is already target "${holder}"'s; one target per account and Region (two would prune each other's services): add its clusters to "${holder}".`);
    } else targetPlaces.set(place, t.name);
  }
}

/**
 * The alarm definitions of the reconciler, and a small pure evaluator of them.
 *
 * One source of truth: the CDK construct (`lib/ecs-reconciler.ts`) deploys exactly these
 * thresholds, periods, statistics, queries and missing-data treatments as CloudWatch alarms, and
 * the local run (`npm start`) evaluates the same definitions over the datapoints it collected, so
 * that an alarm going to ALARM locally is the alarm that would page in AWS.
 *
 * No CDK and no SDK imports here: plain data and arithmetic.
 *
 * Behaviour follows the Amazon CloudWatch User Guide, "Alarm evaluation" and "Configuring how
 * CloudWatch alarms treat missing data"; the per-service alarm is a Metrics Insights query alarm
 * ("Create an alarm based on a Multi Time Series Metrics Insights query"), see docs/ecs-facts.md §10.
 */
import { DEFAULT_METRICS_NAMESPACE, DIMENSION, METRIC } from './metric-names';
import { dict, own } from './dict';

// ---------------------------------------------------------------------------------------------
// Vocabulary (CloudWatch's own values, so the construct can pass them through)
// ---------------------------------------------------------------------------------------------

/** CloudWatch `ComparisonOperator` values used by the reconciler's alarms. */
export type ComparisonOperator =
  | 'GreaterThanThreshold'
  | 'GreaterThanOrEqualToThreshold'
  | 'LessThanThreshold'
  | 'LessThanOrEqualToThreshold';

/** CloudWatch `TreatMissingData` values. */
export type TreatMissingData = 'breaching' | 'notBreaching' | 'ignore' | 'missing';

/** CloudWatch alarm states. */
export type AlarmState = 'OK' | 'ALARM' | 'INSUFFICIENT_DATA';

/** CloudWatch statistics used by the definitions. */
export type AlarmStatistic = 'Sum' | 'Maximum';

/** Identity of each alarm; also the suffix of the deployed alarm's construct id. */
export type AlarmId =
  | 'ServiceLagBeyondGrace'
  | 'ServicesLaggingBeyondGrace'
  | 'PassHeartbeat'
  | 'FunctionErrors'
  | 'FunctionThrottles'
  | 'PassDurationNearTimeout'
  | 'AsyncEventsDropped'
  | 'ActionsFailing'
  | 'InvalidSpecs'
  | 'TargetPassesStopped';

/** What an alarm watches. */
export type AlarmSource =
  /** A metric the reconciler emits (EMF) in its own namespace, without dimensions. */
  | {
      readonly kind: 'reconcilerMetric';
      readonly namespace: string;
      readonly metricName: string;
      readonly statistic: AlarmStatistic;
    }
  /**
   * A Metrics Insights query returning one series per contributor (here per Cluster + Service).
   * Services created later are covered without redeploying (docs/ecs-facts.md §10).
   */
  | {
      readonly kind: 'metricsInsights';
      readonly namespace: string;
      readonly metricName: string;
      /** The full query, e.g. `SELECT MAX(TaskLag) FROM SCHEMA("EcsReconciler", Cluster, Service) ...`. */
      readonly query: string;
      /** Dimensions that identify a contributor, in query order. */
      readonly groupBy: readonly string[];
    }
  /** A metric of the reconciler's own Lambda function (`AWS/Lambda`, dimension FunctionName). */
  | {
      readonly kind: 'lambdaMetric';
      readonly namespace: 'AWS/Lambda';
      readonly metricName: 'Errors' | 'Throttles' | 'AsyncEventsDropped';
      readonly statistic: AlarmStatistic;
    };

/** One alarm: everything CloudWatch needs apart from its actions and the function's name. */
export interface AlarmDefinition {
  readonly id: AlarmId;
  /** One sentence for the alarm description: what it means and where to look. */
  readonly description: string;
  readonly source: AlarmSource;
  /** Seconds per datapoint (CloudWatch `Period`); a multiple of 60. */
  readonly periodSeconds: number;
  /** N of "M out of N" (CloudWatch `EvaluationPeriods`). */
  readonly evaluationPeriods: number;
  /** M of "M out of N" (CloudWatch `DatapointsToAlarm`); M <= N. */
  readonly datapointsToAlarm: number;
  readonly threshold: number;
  readonly comparisonOperator: ComparisonOperator;
  readonly treatMissingData: TreatMissingData;
}

// ---------------------------------------------------------------------------------------------
// Settings and the definitions
// ---------------------------------------------------------------------------------------------

/** What the definitions depend on; the same values the function runs with. */
export interface AlarmSettings {
  /** CloudWatch namespace of the reconciler's metrics (`METRICS_NAMESPACE`). */
  readonly namespace: string;
  /** Seconds of lag tolerated for specs that set no `lagGraceSeconds` (`DEFAULT_LAG_GRACE_SECONDS`). */
  readonly defaultLagGraceSeconds: number;
  /** Minutes between passes (the schedule); per-pass metrics get one datapoint per interval. */
  readonly scheduleMinutes: number;
  /**
   * The function's timeout in seconds (1-900); `PassDurationNearTimeout` fires at
   * {@link PASS_DURATION_ALARM_FRACTION} of it.
   * @default 50 (the construct's default timeout)
   */
  readonly functionTimeoutSeconds?: number;
  /**
   * Fan-out mode: adds `TargetPassesStopped`, one contributor per target.
   * @default false
   */
  readonly fanOut?: boolean;
}

export const DEFAULT_ALARM_SETTINGS: AlarmSettings = {
  namespace: DEFAULT_METRICS_NAMESPACE,
  defaultLagGraceSeconds: 300,
  scheduleMinutes: 1,
};

/**
 * Metrics Insights alarms evaluate at most the latest 3 hours of data (CloudWatch User Guide,
 * "Metrics Insights alarm limits"), so the per-service lag window is capped at this many seconds.
 */
export const METRICS_INSIGHTS_MAX_WINDOW_SECONDS = 3 * 60 * 60;

/** Consecutive passes without a successful pass before the heartbeat alarm fires. */
export const HEARTBEAT_MISSED_PASSES = 3;
/** Consecutive passes with failed actions before `ActionsFailing` fires. */
export const FAILED_ACTION_PASSES = 5;
/** Consecutive passes that saw invalid specs before `InvalidSpecs` fires. */
export const INVALID_SPEC_PASSES = 2;
/** Function errors: M of N passes. A single failed pass is retried by the next one. */
export const FUNCTION_ERRORS = { datapointsToAlarm: 2, evaluationPeriods: 3 } as const;
/** Function throttles: M of N passes. One duplicate delivery throttled is harmless (docs/ecs-facts.md §9). */
export const FUNCTION_THROTTLES = { datapointsToAlarm: 3, evaluationPeriods: 5 } as const;

/** Default function timeout (seconds) the construct deploys, and the alarms assume. */
export const DEFAULT_FUNCTION_TIMEOUT_SECONDS = 50;
/**
 * `PassDurationNearTimeout` fires when a pass took this fraction of the function timeout or more.
 * The handler starts no action with less than 10 s left (`RESERVE_MS`), so with the default 50 s
 * timeout a pass at 35 s is 5 s from cutting work short: the early sign of a fleet outgrowing one
 * pass, before passes end with work left over.
 */
export const PASS_DURATION_ALARM_FRACTION = 0.7;
/** Pass duration near the timeout: M of N passes (one slow pass, e.g. a cold start, is no trend). */
export const PASS_DURATION_NEAR_TIMEOUT = { datapointsToAlarm: 2, evaluationPeriods: 3 } as const;

/** Characters CloudWatch allows in a namespace (PutMetricData `Namespace`). */
const NAMESPACE_PATTERN = /^[A-Za-z0-9.\-_/#:]{1,255}$/;

/**
 * The Metrics Insights query behind the per-service lag alarm and the dashboard:
 * `SELECT MAX(TaskLag) FROM SCHEMA("<ns>", Cluster, Service) GROUP BY Cluster, Service ORDER BY MAX() DESC`.
 * `ORDER BY` keeps the most lagging services when the query exceeds its 500-series limit.
 * @param metricName defaults to `TaskLag`.
 * @throws Error when `namespace` holds characters CloudWatch does not accept (it is quoted verbatim).
 */
export function perServiceQuery(namespace: string, metricName: string = METRIC.taskLag): string {
  if (!NAMESPACE_PATTERN.test(namespace)) {
    throw new Error(
      `Metrics namespace "${namespace}" is not a valid CloudWatch namespace: use 1-255 letters, digits and . - _ / # :`,
    );
  }
  const dims = `${DIMENSION.cluster}, ${DIMENSION.service}`;
  return `SELECT MAX(${metricName}) FROM SCHEMA("${namespace}", ${dims}) GROUP BY ${dims} ORDER BY MAX() DESC`;
}

/**
 * Number of consecutive periods of lag that exceed a grace of `graceSeconds` at `periodSeconds`
 * per datapoint: `ceil(grace / period)`, at least 1, at most what fits in the Metrics Insights
 * 3-hour window.
 * @returns `{ periods, capped }`; `capped` is true when the grace is longer than the window (the
 *   per-service alarm then fires before the grace ends; the aggregate `ServicesLaggingBeyondGrace`
 *   alarm still honours the full grace).
 */
export function lagPeriods(graceSeconds: number, periodSeconds: number): { periods: number; capped: boolean } {
  const wanted = Math.max(1, Math.ceil(graceSeconds / periodSeconds));
  const max = Math.max(1, Math.floor(METRICS_INSIGHTS_MAX_WINDOW_SECONDS / periodSeconds));
  return wanted > max ? { periods: max, capped: true } : { periods: wanted, capped: false };
}

/**
 * Validates alarm settings.
 * @returns one sentence per problem, saying what to change; empty when valid.
 */
export function alarmSettingsProblems(s: AlarmSettings): string[] {
  const problems: string[] = [];
  if (!NAMESPACE_PATTERN.test(s.namespace)) {
    problems.push(
      `The metrics namespace "${s.namespace}" is not valid: use 1-255 letters, digits and . - _ / # : (default "${DEFAULT_METRICS_NAMESPACE}").`,
    );
  }
  if (!Number.isInteger(s.defaultLagGraceSeconds) || s.defaultLagGraceSeconds < 0 || s.defaultLagGraceSeconds > 86_400) {
    problems.push(`The default lag grace must be a whole number of seconds from 0 to 86400, got ${s.defaultLagGraceSeconds}.`);
  }
  if (!Number.isInteger(s.scheduleMinutes) || s.scheduleMinutes < 1 || s.scheduleMinutes > 60) {
    problems.push(`The schedule must be a whole number of minutes from 1 to 60, got ${s.scheduleMinutes}.`);
  }
  const timeout = s.functionTimeoutSeconds;
  if (timeout !== undefined && (!Number.isInteger(timeout) || timeout < 1 || timeout > 900)) {
    problems.push(`The function timeout must be a whole number of seconds from 1 to 900, got ${timeout}.`);
  }
  return problems;
}

/**
 * The reconciler's alarms, in a stable order:
 * 1. `ServiceLagBeyondGrace` — per service (Metrics Insights, one contributor per Cluster+Service):
 *    `TaskLag` > 0 in `ceil(defaultLagGrace / period)` consecutive periods. Honours the default
 *    grace only; per-service graces are honoured by (2).
 * 2. `ServicesLaggingBeyondGrace` — the pass's own count of services lagging beyond their grace > 0.
 * 3. `PassHeartbeat` — `PassSucceeded` Sum < 1 for {@link HEARTBEAT_MISSED_PASSES} periods; missing
 *    data is BREACHING, because a loop that stopped emits nothing (docs/ecs-facts.md §10).
 * 4. `FunctionErrors`, `FunctionThrottles` — the function's `AWS/Lambda` Errors / Throttles.
 *    `PassDurationNearTimeout` — `PassDuration` Maximum >= {@link PASS_DURATION_ALARM_FRACTION} of
 *    the function timeout in 2 of 3 passes. `AsyncEventsDropped` — the function's `AWS/Lambda`
 *    AsyncEventsDropped > 0 (a scheduled pass discarded: throttled past its 60 s event age, or failed
 *    with no retries left; Lambda Developer Guide, "Asynchronous invocation metrics").
 * 5. `ActionsFailing` — `ActionsFailed` > 0 in {@link FAILED_ACTION_PASSES} consecutive periods.
 * 6. `InvalidSpecs` — `InvalidSpecs` > 0 in {@link INVALID_SPEC_PASSES} consecutive periods.
 *
 * Every period equals the schedule interval, so each period holds one pass's datapoint.
 * @throws Error when the settings are invalid (the message lists {@link alarmSettingsProblems}).
 */
export function alarmDefinitions(settings: AlarmSettings = DEFAULT_ALARM_SETTINGS): AlarmDefinition[] {
  const problems = alarmSettingsProblems(settings);
  if (problems.length > 0) throw new Error(problems.join(' '));
  const basis = alarmBasis(settings);
  return [
    ...lagAlarms(basis),
    heartbeatAlarm(basis),
    ...functionAlarms(basis),
    ...outcomeAlarms(basis),
    ...(settings.fanOut ? [targetPassesStopped(basis.ns, basis.period, basis.timeoutSeconds)] : []),
  ];
}

/** What the alarm groups derive from valid settings. */
interface AlarmBasis {
  readonly ns: string;
  /** Seconds per datapoint: the schedule interval, so each period holds one pass's datapoint. */
  readonly period: number;
  readonly defaultLagGraceSeconds: number;
  /** The function's timeout in seconds. */
  readonly timeoutSeconds: number;
}

/** The values every group reads, from settings already validated by {@link alarmSettingsProblems}. */
function alarmBasis(settings: AlarmSettings): AlarmBasis {
  return {
    ns: settings.namespace,
    period: settings.scheduleMinutes * 60,
    defaultLagGraceSeconds: settings.defaultLagGraceSeconds,
    timeoutSeconds: settings.functionTimeoutSeconds ?? DEFAULT_FUNCTION_TIMEOUT_SECONDS,
  };
}

/** A metric the reconciler emits (EMF) in namespace `ns`, without dimensions, read with `statistic`. */
function reconcilerMetric(ns: string, metricName: string, statistic: AlarmStatistic): AlarmSource {
  return { kind: 'reconcilerMetric', namespace: ns, metricName, statistic };
}

/**
 * Lag: `ServiceLagBeyondGrace` per service (the default grace, capped at the Metrics Insights
 * window) and `ServicesLaggingBeyondGrace` over the pass's own count (per-service graces).
 */
function lagAlarms({ ns, period, defaultLagGraceSeconds }: AlarmBasis): AlarmDefinition[] {
  const lag = lagPeriods(defaultLagGraceSeconds, period);
  return [
    {
      id: 'ServiceLagBeyondGrace',
      description:
        `A service has run fewer tasks than desired for ${lag.periods * period} s or longer` +
        `${lag.capped ? ' (the 3-hour Metrics Insights window; the default grace is longer)' : ''}. ` +
        'The contributor names the Cluster and Service; its item status says why.',
      source: {
        kind: 'metricsInsights',
        namespace: ns,
        metricName: METRIC.taskLag,
        query: perServiceQuery(ns),
        groupBy: [DIMENSION.cluster, DIMENSION.service],
      },
      periodSeconds: period,
      evaluationPeriods: lag.periods,
      datapointsToAlarm: lag.periods,
      threshold: 0,
      comparisonOperator: 'GreaterThanThreshold',
      // A service deleted or pruned stops emitting TaskLag: that is not lag.
      treatMissingData: 'notBreaching',
    },
    {
      id: 'ServicesLaggingBeyondGrace',
      description:
        'At least one service has lagged desired longer than its own lagGraceSeconds (per-service graces honoured). ' +
        'Run `ecsr status` or read the items\' status to see which.',
      source: reconcilerMetric(ns, METRIC.servicesLaggingBeyondGrace, 'Maximum'),
      periodSeconds: period,
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      threshold: 0,
      comparisonOperator: 'GreaterThanThreshold',
      // No pass, no count: the heartbeat alarm speaks for that case.
      treatMissingData: 'notBreaching',
    },
  ];
}

/** `PassHeartbeat`: no successful pass for {@link HEARTBEAT_MISSED_PASSES} periods; missing data breaches. */
function heartbeatAlarm({ ns, period }: AlarmBasis): AlarmDefinition {
  return {
    id: 'PassHeartbeat',
    description:
      `No reconcile pass has succeeded in ${HEARTBEAT_MISSED_PASSES} consecutive schedule intervals: ` +
      'the loop stopped, fails, or cannot take its lease. Read the function\'s log group.',
    source: reconcilerMetric(ns, METRIC.passSucceeded, 'Sum'),
    periodSeconds: period,
    evaluationPeriods: HEARTBEAT_MISSED_PASSES,
    datapointsToAlarm: HEARTBEAT_MISSED_PASSES,
    threshold: 1,
    comparisonOperator: 'LessThanThreshold',
    treatMissingData: 'breaching',
  };
}

/**
 * The function's health: `FunctionErrors`, `FunctionThrottles` (its `AWS/Lambda` metrics),
 * `PassDurationNearTimeout` (a fraction of its timeout) and `AsyncEventsDropped` (a skipped pass).
 */
function functionAlarms({ ns, period, timeoutSeconds }: AlarmBasis): AlarmDefinition[] {
  const passDurationThresholdMs = Math.round(timeoutSeconds * 1000 * PASS_DURATION_ALARM_FRACTION);
  return [
    {
      id: 'FunctionErrors',
      description:
        `The reconciler function failed in ${FUNCTION_ERRORS.datapointsToAlarm} of the last ` +
        `${FUNCTION_ERRORS.evaluationPeriods} intervals (unhandled error or timeout). Read its log group.`,
      source: { kind: 'lambdaMetric', namespace: 'AWS/Lambda', metricName: 'Errors', statistic: 'Sum' },
      periodSeconds: period,
      evaluationPeriods: FUNCTION_ERRORS.evaluationPeriods,
      datapointsToAlarm: FUNCTION_ERRORS.datapointsToAlarm,
      threshold: 0,
      comparisonOperator: 'GreaterThanThreshold',
      treatMissingData: 'notBreaching',
    },
    {
      id: 'FunctionThrottles',
      description:
        `The reconciler function was throttled in ${FUNCTION_THROTTLES.datapointsToAlarm} of the last ` +
        `${FUNCTION_THROTTLES.evaluationPeriods} intervals: passes overlap (reserved concurrency 1) or someone invokes it by hand.`,
      source: { kind: 'lambdaMetric', namespace: 'AWS/Lambda', metricName: 'Throttles', statistic: 'Sum' },
      periodSeconds: period,
      evaluationPeriods: FUNCTION_THROTTLES.evaluationPeriods,
      datapointsToAlarm: FUNCTION_THROTTLES.datapointsToAlarm,
      threshold: 0,
      comparisonOperator: 'GreaterThanThreshold',
      treatMissingData: 'notBreaching',
    },
    {
      id: 'PassDurationNearTimeout',
      description:
        `A pass took ${passDurationThresholdMs} ms or more (${PASS_DURATION_ALARM_FRACTION * 100}% of the ${timeoutSeconds} s function timeout) ` +
        `in ${PASS_DURATION_NEAR_TIMEOUT.datapointsToAlarm} of the last ${PASS_DURATION_NEAR_TIMEOUT.evaluationPeriods} intervals: ` +
        'the fleet is outgrowing one pass. Raise the timeout and memory, split the clusters over two reconcilers, or lengthen the schedule.',
      source: reconcilerMetric(ns, METRIC.passDuration, 'Maximum'),
      periodSeconds: period,
      evaluationPeriods: PASS_DURATION_NEAR_TIMEOUT.evaluationPeriods,
      datapointsToAlarm: PASS_DURATION_NEAR_TIMEOUT.datapointsToAlarm,
      threshold: passDurationThresholdMs,
      comparisonOperator: 'GreaterThanOrEqualToThreshold',
      // No pass, no duration: the heartbeat alarm speaks for that case.
      treatMissingData: 'notBreaching',
    },
    {
      id: 'AsyncEventsDropped',
      description:
        'Lambda dropped a scheduled invocation without running it (event older than 60 s after throttling, or no retries left): ' +
        'a pass was skipped. Check the function\'s Throttles and the account\'s concurrency.',
      source: { kind: 'lambdaMetric', namespace: 'AWS/Lambda', metricName: 'AsyncEventsDropped', statistic: 'Sum' },
      periodSeconds: period,
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      threshold: 0,
      comparisonOperator: 'GreaterThanThreshold',
      // Lambda publishes the metric only when events are dropped.
      treatMissingData: 'notBreaching',
    },
  ];
}

/** What passes reported: `ActionsFailing` (ECS rejected actions) and `InvalidSpecs` (specs not reconciled). */
function outcomeAlarms({ ns, period }: AlarmBasis): AlarmDefinition[] {
  return [
    {
      id: 'ActionsFailing',
      description:
        `ECS rejected reconcile actions in ${FAILED_ACTION_PASSES} consecutive passes. ` +
        'The failing services\' status (lastAction.error) carries ECS\'s message.',
      source: reconcilerMetric(ns, METRIC.actionsFailed, 'Sum'),
      periodSeconds: period,
      evaluationPeriods: FAILED_ACTION_PASSES,
      datapointsToAlarm: FAILED_ACTION_PASSES,
      threshold: 0,
      comparisonOperator: 'GreaterThanThreshold',
      treatMissingData: 'notBreaching',
    },
    {
      id: 'InvalidSpecs',
      description:
        `Spec items failed validation in ${INVALID_SPEC_PASSES} consecutive passes; they are not reconciled. ` +
        'Their status (phase Invalid) lists each bad attribute.',
      source: reconcilerMetric(ns, METRIC.invalidSpecs, 'Maximum'),
      periodSeconds: period,
      evaluationPeriods: INVALID_SPEC_PASSES,
      datapointsToAlarm: INVALID_SPEC_PASSES,
      threshold: 0,
      comparisonOperator: 'GreaterThanThreshold',
      treatMissingData: 'notBreaching',
    },
  ];
}

/**
 * The Metrics Insights query of `TargetPassAge` per target:
 * `SELECT MAX(TargetPassAge) FROM SCHEMA("<ns>", Target) GROUP BY Target ORDER BY MAX() DESC`.
 */
export function perTargetQuery(namespace: string): string {
  perServiceQuery(namespace); // validates the namespace
  return `SELECT MAX(${METRIC.targetPassAge}) FROM SCHEMA("${namespace}", ${DIMENSION.target}) GROUP BY ${DIMENSION.target} ORDER BY MAX() DESC`;
}

/**
 * `TargetPassesStopped` (fan-out mode): one contributor per target. The dispatcher emits each
 * target's `TargetPassAge` every tick, also while that target's passes fail, so a target whose
 * passes stopped (role not assumable, ECS unreachable, invocations timing out) alarms on its own
 * while the others keep the fleet-wide `PassHeartbeat` green. Fires when the last completed pass
 * is older than {@link HEARTBEAT_MISSED_PASSES} intervals plus one function timeout, in 2
 * consecutive periods. No data at all means the dispatcher itself stopped: `PassHeartbeat` and
 * `FunctionErrors` speak for that, so missing data is not breaching here.
 */
function targetPassesStopped(ns: string, period: number, timeoutSeconds: number): AlarmDefinition {
  const threshold = HEARTBEAT_MISSED_PASSES * period + timeoutSeconds;
  return {
    id: 'TargetPassesStopped',
    description:
      `A target has had no completed pass for more than ${threshold} s. The contributor names the Target; ` +
      'read the function log for "fan-out" lines of that target (role not assumable, ECS unreachable, timeouts).',
    source: { kind: 'metricsInsights', namespace: ns, metricName: METRIC.targetPassAge, query: perTargetQuery(ns), groupBy: [DIMENSION.target] },
    periodSeconds: period,
    evaluationPeriods: 2,
    datapointsToAlarm: 2,
    threshold,
    comparisonOperator: 'GreaterThanThreshold',
    treatMissingData: 'notBreaching',
  };
}

/**
 * The definition with id `id`.
 * @throws Error when no definition has that id (cannot happen for an {@link AlarmId}).
 */
export function alarmDefinition(id: AlarmId, settings: AlarmSettings = DEFAULT_ALARM_SETTINGS): AlarmDefinition {
  const found = alarmDefinitions(settings).find((d) => d.id === id);
  if (!found) throw new Error(`No alarm definition ${id}`);
  return found;
}

// ---------------------------------------------------------------------------------------------
// Evaluator
// ---------------------------------------------------------------------------------------------

/** A datapoint per period, oldest first; `null` is a missing datapoint. */
export type Datapoint = number | null;

/** Whether one (present) datapoint breaches the definition's threshold. */
export function isBreaching(def: Pick<AlarmDefinition, 'threshold' | 'comparisonOperator'>, value: number): boolean {
  switch (def.comparisonOperator) {
    case 'GreaterThanThreshold':
      return value > def.threshold;
    case 'GreaterThanOrEqualToThreshold':
      return value >= def.threshold;
    case 'LessThanThreshold':
      return value < def.threshold;
    case 'LessThanOrEqualToThreshold':
      return value <= def.threshold;
  }
}

/**
 * How many datapoints (periods) an evaluation looks at. CloudWatch "attempts to retrieve a higher
 * number of data points than the number specified as Evaluation Periods" (the evaluation range);
 * the exact number is not documented. The User Guide's worked example uses N + 2 for N = 3, which
 * this evaluator uses for every N: an approximation, said so here.
 */
export function evaluationRangeLength(def: Pick<AlarmDefinition, 'evaluationPeriods'>): number {
  return def.evaluationPeriods + 2;
}

/** Outcome of one evaluation, with the counts that decided it. */
export interface AlarmEvaluation {
  readonly state: AlarmState;
  /** Breaching datapoints among the N considered (real ones plus breaching fills). */
  readonly breaching: number;
  /** Real datapoints considered (at most N). */
  readonly present: number;
  /** Missing datapoints filled with the missing-data treatment (N - present, or 0). */
  readonly filled: number;
}

/**
 * Evaluates an alarm over one series, following the CloudWatch User Guide ("Alarm evaluation",
 * "How alarm state is evaluated when data is missing"):
 * - From the last {@link evaluationRangeLength} datapoints, the most recent N present ones are used.
 * - If at least N are present, the alarm is ALARM when at least M of them breach, else OK.
 * - If fewer are present, the N - present missing slots are filled per `treatMissingData`
 *   (`breaching`: breaching; `notBreaching`: not breaching), with these rules where the treatment
 *   leaves the outcome open: `ignore` keeps `previous` when the fills could decide, and when nothing
 *   is present; `missing` decides on the present datapoints alone (ALARM when every present one
 *   needed for M breaches, i.e. breaching >= min(M, present)), INSUFFICIENT_DATA when nothing is present.
 *
 * These rules reproduce the User Guide's table for M = 3, N = 3 (see test/alarms.test.ts).
 * @param datapoints one value per period, oldest first, `null` when missing; any length.
 * @param previous the alarm's state before this evaluation (default INSUFFICIENT_DATA, a new alarm).
 */
export function evaluateAlarm(
  def: Pick<AlarmDefinition, 'evaluationPeriods' | 'datapointsToAlarm' | 'threshold' | 'comparisonOperator' | 'treatMissingData'>,
  datapoints: readonly Datapoint[],
  previous: AlarmState = 'INSUFFICIENT_DATA',
): AlarmEvaluation {
  const n = def.evaluationPeriods;
  const m = def.datapointsToAlarm;
  const range = datapoints.slice(-evaluationRangeLength(def));
  const present = range.filter((d): d is number => d !== null && Number.isFinite(d)).slice(-n);
  const realBreaching = present.filter((v) => isBreaching(def, v)).length;
  const filled = n - present.length;

  if (filled === 0) {
    return { state: realBreaching >= m ? 'ALARM' : 'OK', breaching: realBreaching, present: present.length, filled: 0 };
  }
  const result = (state: AlarmState, breaching: number): AlarmEvaluation => ({
    state,
    breaching,
    present: present.length,
    filled,
  });
  switch (def.treatMissingData) {
    case 'breaching': {
      const b = realBreaching + filled;
      return result(b >= m ? 'ALARM' : 'OK', b);
    }
    case 'notBreaching':
      return result(realBreaching >= m ? 'ALARM' : 'OK', realBreaching);
    case 'ignore':
      if (present.length === 0) return result(previous, realBreaching);
      if (realBreaching >= m) return result('ALARM', realBreaching);
      if (realBreaching + filled < m) return result('OK', realBreaching);
      return result(previous, realBreaching);
    case 'missing':
      if (present.length === 0) return result('INSUFFICIENT_DATA', 0);
      return result(realBreaching >= Math.min(m, present.length) ? 'ALARM' : 'OK', realBreaching);
  }
}

/** Outcome of a multi-series (Metrics Insights) alarm: one state per contributor, and the alarm's. */
export interface ContributorsEvaluation {
  /** ALARM when any contributor is in ALARM; else OK when any is OK; else INSUFFICIENT_DATA. */
  readonly state: AlarmState;
  /** Contributor key (e.g. `web/api`) -> its evaluation. */
  readonly contributors: Record<string, AlarmEvaluation>;
  /** Keys of contributors in ALARM, sorted. */
  readonly alarming: string[];
}

/**
 * Evaluates a multi-time-series alarm: each series is a contributor with its own state, and the
 * alarm is in ALARM when any contributor is (CloudWatch User Guide, "Create an alarm based on a
 * Multi Time Series Metrics Insights query").
 * @param series contributor key -> datapoints (oldest first, `null` missing).
 * @param previous contributor key -> previous state (for `ignore`).
 */
export function evaluateContributors(
  def: Parameters<typeof evaluateAlarm>[0],
  series: Readonly<Record<string, readonly Datapoint[]>>,
  previous: Readonly<Record<string, AlarmState>> = {},
): ContributorsEvaluation {
  const contributors: Record<string, AlarmEvaluation> = dict();
  for (const [key, points] of Object.entries(series)) {
    contributors[key] = evaluateAlarm(def, points, own(previous, key));
  }
  const states = Object.values(contributors).map((e) => e.state);
  const alarming = Object.keys(contributors)
    .filter((k) => contributors[k].state === 'ALARM')
    .sort();
  const state: AlarmState = alarming.length > 0 ? 'ALARM' : states.includes('OK') ? 'OK' : 'INSUFFICIENT_DATA';
  return { state, contributors, alarming };
}

/** One raw observation, e.g. one EMF value of one pass. */
export interface Sample {
  /** Epoch milliseconds. */
  readonly timestamp: number;
  readonly value: number;
}

/**
 * Buckets raw samples into `count` datapoints of `periodSeconds` ending at `endMs` (exclusive),
 * oldest first, aggregated with `statistic`; a period without samples is `null` (missing). Bucket
 * starts are aligned to multiples of the period since the epoch, as CloudWatch aligns them.
 * @param endMs epoch milliseconds; the last bucket is the one containing `endMs - 1`.
 */
export function datapointsFromSamples(
  samples: readonly Sample[],
  statistic: AlarmStatistic,
  periodSeconds: number,
  endMs: number,
  count: number,
): Datapoint[] {
  const periodMs = periodSeconds * 1000;
  const lastStart = Math.floor((endMs - 1) / periodMs) * periodMs;
  const firstStart = lastStart - (count - 1) * periodMs;
  const buckets: number[][] = Array.from({ length: count }, () => []);
  for (const s of samples) {
    if (s.timestamp < firstStart || s.timestamp >= lastStart + periodMs) continue;
    buckets[Math.floor((s.timestamp - firstStart) / periodMs)].push(s.value);
  }
  return buckets.map((values) => {
    if (values.length === 0) return null;
    return statistic === 'Sum' ? values.reduce((a, b) => a + b, 0) : Math.max(...values);
  });
}

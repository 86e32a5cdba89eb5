/**
 * The reconciler's CloudWatch alarms, evaluated locally: the very definitions the stack deploys
 * (`lambda/core/alarms.ts`) and its pure evaluator, over the metrics the local run's passes
 * emitted, stamped with the simulated time of each pass. An alarm that goes to ALARM here is the
 * alarm that would page in AWS with the same metrics.
 *
 * The function metrics of `AWS/Lambda` have a local stand-in: `Errors` is 1 for a pass that threw
 * (a bug), 0 otherwise; `Throttles` is always 0 (no Lambda service to throttle a local pass).
 */
import {
  alarmDefinitions,
  datapointsFromSamples,
  evaluateAlarm,
  evaluateContributors,
  evaluationRangeLength,
  type AlarmDefinition,
  type AlarmId,
  type AlarmState,
  type Sample,
} from '../lambda/core/alarms';
import { METRIC } from '../lambda/core/metric-names';
import type { Clock, MetricsSink } from '../lambda/core/ports';
import type { ServiceKey } from '../lambda/core/types';
import { dict, own } from '../lambda/core/dict';

/** One change of an alarm's (or a contributor's) state. */
export interface AlarmTransition {
  readonly at: Date;
  readonly alarm: AlarmId;
  /** `cluster/service` for the per-service Metrics Insights alarm. */
  readonly contributor?: string;
  readonly from: AlarmState;
  readonly to: AlarmState;
  /** The newest datapoint of the series (e.g. TaskLag in tasks). */
  readonly value?: number;
  /** Why, for a contributor: the service status's best reason (e.g. the stop reason). */
  readonly reason?: string;
}

/** One recorded metric value. */
interface Recorded {
  readonly name: string;
  readonly value: number;
  readonly contributor?: string;
  readonly timestamp: number;
}

/** Key of a state: the alarm id, plus ` cluster/service` for a contributor. */
export function stateKey(alarm: AlarmId, contributor?: string): string {
  return contributor ? `${alarm} ${contributor}` : alarm;
}

/**
 * How the local run names an alarm state, so that a Metrics Insights alarm as a whole is not taken
 * for one of its contributors (docs/ecs-facts.md §10: each series the query returns is a contributor):
 * `ServiceLagBeyondGrace [shop/ledger]` for a contributor, `ServiceLagBeyondGrace (any service)`
 * for the Metrics Insights alarm itself, the bare id for any other alarm.
 */
export function alarmLabel(alarm: AlarmId, contributor?: string): string {
  if (contributor) return `${alarm} [${contributor}]`;
  const kind = alarmDefinitions().find((d) => d.id === alarm)?.source.kind;
  return kind === 'metricsInsights' ? `${alarm} (any service)` : alarm;
}

/** {@link alarmLabel} of a {@link stateKey} (`ServiceLagBeyondGrace shop/ledger`). */
export function stateKeyLabel(key: string): string {
  const space = key.indexOf(' ');
  return space < 0 ? alarmLabel(key as AlarmId) : alarmLabel(key.slice(0, space) as AlarmId, key.slice(space + 1));
}

/**
 * Collects the pass metrics (as a {@link MetricsSink}) and evaluates every alarm definition after
 * each pass, keeping each alarm's and each contributor's state and the transitions.
 */
export class LocalAlarms {
  private readonly recorded: Recorded[] = [];
  private pending: Omit<Recorded, 'timestamp'>[] = [];
  private readonly states = new Map<string, AlarmState>();
  readonly transitions: AlarmTransition[] = [];
  /** The sink to give the pass: values are stamped with `clock` time when the pass flushes. */
  readonly sink: MetricsSink;

  /**
   * @param definitions from `alarmDefinitions(settings)`, settings as the stack deploys them.
   * @param clock the pass clock (simulated time).
   * @param startedAt when the reconciler started: an alarm is evaluated only once
   *   `evaluationPeriods` complete periods have passed since (before, it stays INSUFFICIENT_DATA,
   *   like a new alarm), so the minutes before the run do not count as missing data.
   */
  constructor(
    readonly definitions: readonly AlarmDefinition[],
    private readonly clock: Clock,
    private readonly startedAt: Date = clock.now(),
  ) {
    this.sink = {
      serviceLag: (key: ServiceKey, lagTasks: number) => {
        this.pending.push({ name: METRIC.taskLag, value: Math.max(0, lagTasks), contributor: `${key.cluster}/${key.service}` });
      },
      passMetric: (name: string, value: number) => {
        this.pending.push({ name, value });
      },
      flush: () => {
        const timestamp = this.clock.now().getTime();
        for (const p of this.pending) this.recorded.push({ ...p, timestamp });
        this.pending = [];
      },
    };
  }

  /** Records the local stand-ins of the function's `AWS/Lambda` metrics for one pass. */
  recordInvocation(at: Date, threw: boolean): void {
    this.recorded.push({ name: 'Errors', value: threw ? 1 : 0, timestamp: at.getTime() });
    this.recorded.push({ name: 'Throttles', value: 0, timestamp: at.getTime() });
  }

  /** The current state of an alarm, or of one contributor of the per-service alarm. */
  state(alarm: AlarmId, contributor?: string): AlarmState {
    return this.states.get(stateKey(alarm, contributor)) ?? 'INSUFFICIENT_DATA';
  }

  /** Every known state by {@link stateKey}. */
  allStates(): Record<string, AlarmState> {
    return Object.fromEntries(this.states);
  }

  private samples(name: string, contributor?: string): Sample[] {
    return this.recorded
      .filter((r) => r.name === name && (contributor === undefined || r.contributor === contributor))
      .map((r) => ({ timestamp: r.timestamp, value: r.value }));
  }

  /**
   * Evaluates every definition at `now` over complete periods only, as CloudWatch does: the period
   * that contains `now` is still open, so its datapoint (e.g. of a pass that just ran) counts from
   * the next evaluation on. With one-minute periods, a lag alarm of 5 periods fires 5 minutes after
   * the first lagging pass.
   * @param reasonOf the explanation to attach to a contributor's transition (`cluster/service`).
   * @returns the transitions of this evaluation.
   */
  evaluate(now: Date, reasonOf: (contributor: string) => string | undefined = () => undefined): AlarmTransition[] {
    const out: AlarmTransition[] = [];
    const change = (alarm: AlarmId, to: AlarmState, value: number | undefined, contributor?: string) => {
      const key = stateKey(alarm, contributor);
      const from = this.states.get(key) ?? 'INSUFFICIENT_DATA';
      this.states.set(key, to);
      if (from === to) return;
      const reason = contributor ? reasonOf(contributor) : undefined;
      out.push({ at: now, alarm, from, to, ...(contributor ? { contributor } : {}), ...(value !== undefined ? { value } : {}), ...(reason ? { reason } : {}) });
    };
    for (const def of this.definitions) {
      const count = evaluationRangeLength(def);
      const periodMs = def.periodSeconds * 1000;
      const endMs = Math.floor(now.getTime() / periodMs) * periodMs;
      const completePeriods = (endMs - Math.floor(this.startedAt.getTime() / periodMs) * periodMs) / periodMs;
      if (completePeriods < def.evaluationPeriods) continue;
      const src = def.source;
      if (src.kind === 'metricsInsights') {
        const contributors = [...new Set(this.recorded.filter((r) => r.name === src.metricName && r.contributor).map((r) => r.contributor as string))];
        const series: Record<string, (number | null)[]> = dict();
        for (const c of contributors) {
          series[c] = datapointsFromSamples(this.samples(src.metricName, c), 'Maximum', def.periodSeconds, endMs, count);
        }
        const previous = Object.fromEntries(contributors.map((c) => [c, this.state(def.id, c)]));
        const result = evaluateContributors(def, series, previous);
        for (const c of contributors) change(def.id, own(result.contributors, c)?.state ?? 'INSUFFICIENT_DATA', lastValue(series[c]), c);
        change(def.id, result.state, undefined);
      } else {
        const points = datapointsFromSamples(this.samples(src.metricName), src.statistic, def.periodSeconds, endMs, count);
        change(def.id, evaluateAlarm(def, points, this.state(def.id)).state, lastValue(points));
      }
    }
    this.transitions.push(...out);
    return out;
  }
}

function lastValue(points: readonly (number | null)[]): number | undefined {
  for (let i = points.length - 1; i >= 0; i--) if (points[i] !== null) return points[i] as number;
  return undefined;
}

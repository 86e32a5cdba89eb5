/**
 * Metrics sinks: Powertools Metrics (CloudWatch Embedded Metric Format on stdout) in Lambda, and an
 * in-memory sink for the local run and tests. Names and dimensions come from
 * `lambda/core/metric-names.ts`, the module the alarms (`lambda/core/alarms.ts`) use too.
 *
 * Shape of what is emitted (Amazon CloudWatch User Guide, "Embedded metric format specification"):
 * - `TaskLag` (Count = tasks), dimensions exactly `Cluster`, `Service`: one EMF blob per service,
 *   so each blob carries its own dimension values; what the Metrics Insights alarm
 *   `SCHEMA(ns, Cluster, Service)` groups by.
 * - per pass, one blob without dimensions: `PassSucceeded`, `PassDuration` (Milliseconds),
 *   `ActionsApplied`, `ActionsFailed`, `InvalidSpecs`, `DriftCorrections`,
 *   `ServicesLaggingBeyondGrace` (Count).
 * Powertools' default `service` dimension is removed: an extra dimension would put every metric
 * in another series than the alarms watch.
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { MetricsSink } from '../core/ports';
import { DEFAULT_METRICS_NAMESPACE, DIMENSION, METRIC } from '../core/metric-names';
import type { ServiceKey } from '../core/types';
import { storedKey } from '../core/targets';

/** One recorded datapoint. */
export interface MetricDatum {
  readonly name: string;
  readonly value: number;
  readonly unit: 'Count' | 'Milliseconds';
  /** `{}` for per-pass metrics; `{ Cluster, Service }` for TaskLag. */
  readonly dimensions: Readonly<Record<string, string>>;
}

/**
 * {@link MetricsSink} on Powertools Metrics. Values are buffered during the pass and written to
 * stdout as EMF on {@link flush} (CloudWatch Logs extracts them in Lambda).
 */
export class PowertoolsMetricsSink implements MetricsSink {
  private readonly lags: { key: ServiceKey; value: number }[] = [];
  private readonly pass: { name: string; value: number; unit: 'Count' | 'Milliseconds' }[] = [];
  private readonly dimensioned: { dimensions: Record<string, string>; name: string; value: number; unit: 'Count' | 'Milliseconds' }[] = [];

  /**
   * @param namespace CloudWatch namespace (`METRICS_NAMESPACE`, default `EcsReconciler`).
   * @param metrics a Powertools instance (module scope in the handler); one is created otherwise.
   */
  constructor(
    readonly namespace: string = DEFAULT_METRICS_NAMESPACE,
    private readonly metrics: Metrics = new Metrics({ namespace }),
  ) {
    this.metrics.clearDefaultDimensions();
  }

  /** Records `TaskLag` = `lagTasks` (tasks, >= 0) for one service. */
  serviceLag(key: ServiceKey, lagTasks: number): void {
    this.lags.push({ key, value: Math.max(0, lagTasks) });
  }

  passMetric(name: string, value: number, unit: 'Count' | 'Milliseconds'): void {
    this.pass.push({ name, value, unit });
  }

  /** A metric with its own dimensions (e.g. `{ Target: 'staging' }`): one EMF blob per dimension set. */
  dimensionedMetric(dimensions: Record<string, string>, name: string, value: number, unit: 'Count' | 'Milliseconds'): void {
    this.dimensioned.push({ dimensions, name, value, unit });
  }

  /**
   * Writes one EMF blob per service lag, one per dimension set of {@link dimensionedMetric} and
   * one for the per-pass metrics; empties the buffers.
   */
  flush(): void {
    this.metrics.clearDefaultDimensions();
    const sets = new Map<string, typeof this.dimensioned>();
    for (const d of this.dimensioned.splice(0)) {
      const id = JSON.stringify(Object.entries(d.dimensions).sort());
      sets.set(id, [...(sets.get(id) ?? []), d]);
    }
    for (const group of sets.values()) {
      this.metrics.addDimensions(group[0].dimensions);
      for (const m of group) this.metrics.addMetric(m.name, m.unit === 'Milliseconds' ? MetricUnit.Milliseconds : MetricUnit.Count, m.value);
      this.metrics.publishStoredMetrics();
    }
    for (const { key, value } of this.lags.splice(0)) {
      this.metrics.addDimensions({ [DIMENSION.cluster]: key.cluster, [DIMENSION.service]: key.service });
      this.metrics.addMetric(METRIC.taskLag, MetricUnit.Count, value);
      this.metrics.publishStoredMetrics();
    }
    const pass = this.pass.splice(0);
    if (pass.length === 0) return;
    for (const m of pass) {
      this.metrics.addMetric(m.name, m.unit === 'Milliseconds' ? MetricUnit.Milliseconds : MetricUnit.Count, m.value);
    }
    this.metrics.publishStoredMetrics();
  }
}

/** {@link MetricsSink} that keeps every datapoint in memory (local run, tests, `ecsr`). */
export class InMemoryMetricsSink implements MetricsSink {
  /** Flushed datapoints, oldest first. */
  readonly data: MetricDatum[] = [];
  private pending: MetricDatum[] = [];

  serviceLag(key: ServiceKey, lagTasks: number): void {
    this.pending.push({
      name: METRIC.taskLag,
      value: Math.max(0, lagTasks),
      unit: 'Count',
      dimensions: { [DIMENSION.cluster]: key.cluster, [DIMENSION.service]: key.service },
    });
  }

  passMetric(name: string, value: number, unit: 'Count' | 'Milliseconds'): void {
    this.pending.push({ name, value, unit, dimensions: {} });
  }

  dimensionedMetric(dimensions: Record<string, string>, name: string, value: number, unit: 'Count' | 'Milliseconds'): void {
    this.pending.push({ name, value, unit, dimensions: { ...dimensions } });
  }

  flush(): void {
    this.data.push(...this.pending);
    this.pending = [];
  }

  /** The latest flushed value of a metric (optionally for one service), or undefined. */
  latest(name: string, key?: ServiceKey): number | undefined {
    for (let i = this.data.length - 1; i >= 0; i--) {
      const d = this.data[i];
      if (d.name !== name) continue;
      if (key && (d.dimensions[DIMENSION.cluster] !== key.cluster || d.dimensions[DIMENSION.service] !== key.service)) continue;
      return d.value;
    }
    return undefined;
  }
}

/** A sink that can emit a metric with its own dimensions (both sinks above). */
export type DimensionedMetricsSink = MetricsSink & {
  dimensionedMetric(dimensions: Record<string, string>, name: string, value: number, unit: 'Count' | 'Milliseconds'): void;
};

/**
 * The metrics of one target's pass in fan-out mode: every per-pass metric is
 * emitted twice, without dimensions (the sum over targets, as a single-target reconciler emits it)
 * and with `Target` = the target's name; `TaskLag`'s `Cluster` is the item's partition key
 * (`staging/web` for target staging), so two targets' services of the same names stay apart.
 */
export class TargetMetricsSink implements MetricsSink {
  constructor(
    private readonly inner: DimensionedMetricsSink,
    readonly target: string,
  ) {}

  serviceLag(key: ServiceKey, lagTasks: number): void {
    this.inner.serviceLag(storedKey(this.target, key), lagTasks);
  }

  passMetric(name: string, value: number, unit: 'Count' | 'Milliseconds'): void {
    this.inner.passMetric(name, value, unit);
    this.inner.dimensionedMetric({ [DIMENSION.target]: this.target }, name, value, unit);
  }

  flush(): Promise<void> | void {
    return this.inner.flush();
  }
}

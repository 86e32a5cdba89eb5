/**
 * The reconciler's own metrics as CloudWatch metric objects (names and dimensions from
 * `lambda/core/metric-names.ts`, which the emitter uses), for the construct's `metric*` methods:
 * alarms and dashboards of the user's own.
 */
import type { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { perServiceQuery, perTargetQuery } from '../../lambda/core/alarms';
import { DIMENSION, METRIC } from '../../lambda/core/metric-names';
import { EcsReconcilerPropsError } from './errors';

/** Options of a per-pass metric: CloudWatch's, and in fan-out mode the one target it is of. */
export interface PassMetricOptions extends cloudwatch.MetricOptions {
  /**
   * Fan-out mode: the target's name (dimension `Target`); every per-pass metric of a target pass
   * is emitted with it, and again without (the sum over targets).
   * @default - no dimension: over every target
   */
  readonly target?: string;
}

/** The statistic each per-pass metric is read with unless the caller says otherwise. */
export const PASS_METRIC_STATISTIC: Readonly<Record<Exclude<keyof typeof METRIC, 'taskLag' | 'targetPassAge'>, string>> = {
  passSucceeded: 'Sum',
  passDuration: 'Maximum',
  actionsApplied: 'Sum',
  actionsFailed: 'Sum',
  invalidSpecs: 'Maximum',
  driftCorrections: 'Sum',
  driftObserved: 'Maximum',
  servicesLaggingBeyondGrace: 'Maximum',
  eventsUnrouted: 'Sum',
};

/** Metric factories of one reconciler: its namespace, and its schedule's interval as the default period. */
export class ReconcilerMetrics {
  constructor(
    private readonly namespace: string,
    private readonly period: Duration,
  ) {}

  /** A per-pass metric (`METRIC[name]`), with its default statistic, per schedule interval. */
  pass(name: keyof typeof PASS_METRIC_STATISTIC, opts: PassMetricOptions = {}): cloudwatch.Metric {
    const { target, ...options } = opts;
    return new cloudwatch.Metric({
      namespace: this.namespace,
      metricName: METRIC[name],
      statistic: PASS_METRIC_STATISTIC[name],
      period: this.period,
      ...(target !== undefined ? { dimensionsMap: { [DIMENSION.target]: target } } : {}),
      ...options,
    });
  }

  /**
   * `TaskLag` of one service (`Cluster`, `Service`), Maximum; without a service, a Metrics
   * Insights query over every service, the highest lag first.
   * @throws EcsReconcilerPropsError when only one of `cluster` and `service` is given.
   */
  taskLag(opts: { cluster?: string; service?: string } & cloudwatch.MetricOptions = {}): cloudwatch.IMetric {
    const { cluster, service, ...options } = opts;
    if (cluster === undefined || service === undefined) {
      if (cluster !== undefined || service !== undefined) {
        throw new EcsReconcilerPropsError(['metricTaskLag needs both `cluster` and `service`, or neither (every service).']);
      }
      return new cloudwatch.MathExpression({
        expression: perServiceQuery(this.namespace),
        usingMetrics: {},
        period: options.period ?? this.period,
        label: options.label ?? 'TaskLag per service',
      });
    }
    return new cloudwatch.Metric({
      namespace: this.namespace,
      metricName: METRIC.taskLag,
      dimensionsMap: { [DIMENSION.cluster]: cluster, [DIMENSION.service]: service },
      statistic: 'Maximum',
      period: this.period,
      ...options,
    });
  }

  /**
   * Fan-out mode: `TargetPassAge` (seconds since the target's last completed scheduled pass) of
   * one target, Maximum; without a target, a Metrics Insights query over every target, the
   * oldest first (as the per-target alarm uses).
   */
  targetPassAge(opts: { target?: string } & cloudwatch.MetricOptions = {}): cloudwatch.IMetric {
    const { target, ...options } = opts;
    if (target === undefined) {
      return new cloudwatch.MathExpression({
        expression: perTargetQuery(this.namespace),
        usingMetrics: {},
        period: options.period ?? this.period,
        label: options.label ?? 'TargetPassAge per target',
      });
    }
    return new cloudwatch.Metric({
      namespace: this.namespace,
      metricName: METRIC.targetPassAge,
      dimensionsMap: { [DIMENSION.target]: target },
      statistic: 'Maximum',
      period: this.period,
      ...options,
    });
  }
}

/**
 * The dashboard (`Dashboard`): alarm states, lag per service, desired vs running, pass duration,
 * actions, invalid specs, per-target rows in fan-out mode, and the function's own metrics.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { perServiceQuery, perTargetQuery } from '../../lambda/core/alarms';
import { DIMENSION, METRIC } from '../../lambda/core/metric-names';

/** What the dashboard shows. */
export interface DashboardInputs {
  readonly namespace: string;
  /** The schedule's interval, seconds: every widget's period. */
  readonly periodSeconds: number;
  readonly fanOut: boolean;
  readonly alarms: readonly cloudwatch.Alarm[];
  readonly fn: lambda.IFunction;
}

/** The widget factories of one dashboard (its namespace and period). */
function widgetKit(namespace: string, period: Duration) {
  return {
    own: (metricName: string, statistic: string, label?: string) => new cloudwatch.Metric({ namespace, metricName, statistic, period, label }),
    insights: (expression: string, label: string) => new cloudwatch.MathExpression({ expression, usingMetrics: {}, period, label }),
  };
}

/** Creates the dashboard in `scope`. */
export function createDashboard(scope: Construct, d: DashboardInputs): cloudwatch.Dashboard {
  const dashboard = new cloudwatch.Dashboard(scope, 'Dashboard', { defaultInterval: Duration.hours(3) });
  if (d.alarms.length > 0) {
    dashboard.addWidgets(new cloudwatch.AlarmStatusWidget({ title: 'Reconciler alarms', alarms: [...d.alarms], width: 24, height: 4 }));
  }
  const period = Duration.seconds(d.periodSeconds);
  dashboard.addWidgets(...servicesRow(d.namespace, period));
  dashboard.addWidgets(...passRow(d.namespace, period));
  if (d.fanOut) dashboard.addWidgets(...targetsRow(d.namespace, period));
  dashboard.addWidgets(
    new cloudwatch.GraphWidget({
      title: 'Function',
      left: [d.fn.metricErrors({ period }), d.fn.metricThrottles({ period }), d.fn.metricInvocations({ period })],
      right: [d.fn.metricDuration({ period, statistic: 'Maximum' })],
      width: 24,
    }),
  );
  return dashboard;
}

/** Task lag per service, and desired vs running from Container Insights. */
function servicesRow(namespace: string, period: Duration): cloudwatch.IWidget[] {
  const { insights } = widgetKit(namespace, period);
  const ciQuery = (metric: string) =>
    `SELECT MAX(${metric}) FROM SCHEMA("ECS/ContainerInsights", ClusterName, ServiceName) GROUP BY ClusterName, ServiceName`;
  return [
    new cloudwatch.GraphWidget({
      title: 'Task lag per service (desired - running, tasks)',
      left: [insights(perServiceQuery(namespace), 'TaskLag')],
      width: 12,
      leftYAxis: { min: 0, label: 'tasks' },
    }),
    new cloudwatch.GraphWidget({
      title: 'Desired vs running per service (Container Insights)',
      left: [insights(ciQuery('DesiredTaskCount'), 'desired')],
      right: [insights(ciQuery('RunningTaskCount'), 'running')],
      width: 12,
      leftYAxis: { min: 0, label: 'desired tasks' },
      rightYAxis: { min: 0, label: 'running tasks' },
    }),
  ];
}

/** Pass duration, actions per pass, and what needs attention. */
function passRow(namespace: string, period: Duration): cloudwatch.IWidget[] {
  const { own } = widgetKit(namespace, period);
  return [
    new cloudwatch.GraphWidget({
      title: 'Pass duration (ms)',
      left: [own(METRIC.passDuration, 'Average', 'average'), own(METRIC.passDuration, 'Maximum', 'maximum')],
      right: [own(METRIC.passSucceeded, 'Sum', 'passes succeeded')],
      width: 8,
    }),
    new cloudwatch.GraphWidget({
      title: 'Actions per pass',
      left: [own(METRIC.actionsApplied, 'Sum', 'applied'), own(METRIC.actionsFailed, 'Sum', 'failed'), own(METRIC.driftCorrections, 'Sum', 'drift corrected')],
      width: 8,
    }),
    new cloudwatch.GraphWidget({
      title: 'Specs and services needing attention',
      left: [own(METRIC.invalidSpecs, 'Maximum', 'invalid specs'), own(METRIC.servicesLaggingBeyondGrace, 'Maximum', 'lagging beyond grace')],
      width: 8,
    }),
  ];
}

/** Fan-out mode: every target, declared by prop or by item, without redeploying (Metrics Insights by Target). */
function targetsRow(namespace: string, period: Duration): cloudwatch.IWidget[] {
  const { insights } = widgetKit(namespace, period);
  const byTarget = (metric: string, stat: string) =>
    `SELECT ${stat}(${metric}) FROM SCHEMA("${namespace}", ${DIMENSION.target}) GROUP BY ${DIMENSION.target} ORDER BY ${stat}() DESC`;
  return [
    new cloudwatch.GraphWidget({
      title: 'Seconds since each target\'s last completed pass',
      left: [insights(perTargetQuery(namespace), 'TargetPassAge')],
      width: 8,
      leftYAxis: { min: 0, label: 'seconds' },
    }),
    new cloudwatch.GraphWidget({ title: 'Pass duration per target (ms)', left: [insights(byTarget(METRIC.passDuration, 'MAX'), 'PassDuration')], width: 8 }),
    new cloudwatch.GraphWidget({ title: 'Actions failed per target', left: [insights(byTarget(METRIC.actionsFailed, 'SUM'), 'ActionsFailed')], width: 8 }),
  ];
}

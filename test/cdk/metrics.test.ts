/**
 * The construct's `metric*` methods: one per metric the function emits (`METRIC` in
 * lambda/core/metric-names.ts), in the reconciler's namespace with the schedule's interval as
 * period, per target in fan-out mode; usable in the user's own alarms.
 */
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { describe, expect, it } from 'vitest';
import { DIMENSION, METRIC } from '../../lambda/core/metric-names';
import { EcsReconciler } from '../../lib/ecs-reconciler';

function aReconciler() {
  const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Test');
  const reconciler = new EcsReconciler(stack, 'Reconciler', {
    clusters: ['web'],
    defaultSubnets: ['subnet-0a1'],
    defaultSecurityGroups: ['sg-0c3'],
    metricsNamespace: 'Acme/Recon',
    schedule: Duration.minutes(2),
    targets: [{ name: 'staging', account: '222222222222', region: 'eu-west-1' }],
  });
  return { stack, reconciler };
}

type MetricMethod = (opts?: Record<string, unknown>) => cloudwatch.IMetric;

/** The `metric<Name>` method of `reconciler` for a metric name. */
function methodFor(reconciler: EcsReconciler, name: string): MetricMethod | undefined {
  const m = (reconciler as unknown as Record<string, unknown>)[`metric${name}`];
  return typeof m === 'function' ? (m as MetricMethod).bind(reconciler) : undefined;
}

describe('metric methods', () => {
  it.each(Object.values(METRIC))('metric%s exists and reads that metric in the namespace, per schedule interval', (name) => {
    const { reconciler } = aReconciler();
    const method = methodFor(reconciler, name);
    expect(method).toBeDefined();
    const opts = name === METRIC.taskLag ? { cluster: 'web', service: 'api' } : name === METRIC.targetPassAge ? { target: 'staging' } : {};
    const stat = method!(opts).toMetricConfig().metricStat!;
    expect(stat.metricName).toBe(name);
    expect(stat.namespace).toBe('Acme/Recon');
    expect(stat.period.toSeconds()).toBe(120);
  });

  it.each(Object.values(METRIC).filter((n) => n !== METRIC.taskLag && n !== METRIC.targetPassAge))('metric%s of one target has the Target dimension', (name) => {
    const { reconciler } = aReconciler();
    const stat = methodFor(reconciler, name)!({ target: 'staging' }).toMetricConfig().metricStat!;
    expect(stat.dimensions).toEqual([{ name: DIMENSION.target, value: 'staging' }]);
  });

  it('without a service or a target, TaskLag and TargetPassAge are Metrics Insights queries over all of them', () => {
    const { reconciler } = aReconciler();
    expect(reconciler.metricTaskLag().toMetricConfig().mathExpression?.expression).toMatch(/SELECT MAX\(TaskLag\) FROM SCHEMA\("Acme\/Recon", Cluster, Service\)/);
    expect(reconciler.metricTargetPassAge().toMetricConfig().mathExpression?.expression).toMatch(/TargetPassAge/);
  });

  it('a user alarm on one of them renders in the template with its namespace, dimension and statistic', () => {
    const { stack, reconciler } = aReconciler();
    new cloudwatch.Alarm(stack, 'StagingFailing', { metric: reconciler.metricActionsFailed({ target: 'staging' }), threshold: 0, evaluationPeriods: 1 });
    new cloudwatch.Alarm(stack, 'SlowPasses', { metric: reconciler.metricPassDuration({ statistic: 'p90' }), threshold: 30_000, evaluationPeriods: 3 });
    const alarms = Template.fromStack(stack).findResources('AWS::CloudWatch::Alarm');
    const byId = (prefix: string) => Object.entries(alarms).find(([id]) => id.startsWith(prefix))![1].Properties;
    expect(byId('StagingFailing')).toMatchObject({ Namespace: 'Acme/Recon', MetricName: 'ActionsFailed', Statistic: 'Sum', Period: 120, Dimensions: [{ Name: 'Target', Value: 'staging' }] });
    expect(byId('SlowPasses')).toMatchObject({ Namespace: 'Acme/Recon', MetricName: 'PassDuration', ExtendedStatistic: 'p90', Period: 120 });
  });
});

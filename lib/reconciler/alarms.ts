/**
 * The alarms (definitions from `lambda/core/alarms.ts`, one source of truth with the local run),
 * one alarm per dead-letter or failure queue, and the topic they notify.
 */
import { Annotations, ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cwActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { alarmDefinitions, lagPeriods, type AlarmDefinition, type AlarmId } from '../../lambda/core/alarms';
import { DIMENSION } from '../../lambda/core/metric-names';
import type { AlarmOverride, ReconcilerMonitoringProps } from './props';
import type { ResolvedSettings } from './settings';

/**
 * The topic the alarms notify: `alarmTopic` (left alone, but its KMS key checked), or a new one
 * (`AlarmTopic`, TLS-only, CloudWatch of this account allowed to publish, `alarmEmail`
 * subscribed); none with `createAlarms: false` and no `alarmTopic`.
 */
export function createAlarmTopic(scope: Construct, props: ReconcilerMonitoringProps): sns.ITopic | undefined {
  if (props.alarmTopic) {
    // The user's topic and its policy are theirs: nothing is added to them.
    letCloudWatchUseTopicKey(scope, props.alarmTopic);
    return props.alarmTopic;
  }
  if (!(props.createAlarms ?? true)) return undefined;
  const stack = Stack.of(scope);
  const topic = new sns.Topic(scope, 'AlarmTopic', { displayName: 'ecs-reconciler alarms', enforceSSL: true });
  // enforceSSL makes CDK write an AWS::SNS::TopicPolicy, which replaces the topic's default
  // policy: without an Allow, CloudWatch may not publish and every alarm notifies nobody. Allow
  // CloudWatch alarms of this account and Region only (Amazon SNS Developer Guide, "Amazon SNS
  // access policy examples" / confused-deputy prevention); the TLS Deny still applies to it.
  topic.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'CloudWatchAlarmsOfThisAccountPublish',
      principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions: {
        StringEquals: { 'aws:SourceAccount': stack.account },
        ArnLike: { 'aws:SourceArn': stack.formatArn({ service: 'cloudwatch', resource: 'alarm', resourceName: '*', arnFormat: ArnFormat.COLON_RESOURCE_NAME }) },
      },
    }),
  );
  if (props.alarmEmail) topic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail));
  if (!props.alarmEmail) {
    Annotations.of(scope).addWarningV2(
      'ecs-reconciler:AlarmsNotifyNobody',
      'Neither alarmEmail nor alarmTopic is set: the alarms notify a topic nobody is subscribed to. Set alarmEmail (-c alarmEmail=ops@example.com) or alarmTopic, or subscribe to the AlarmTopicArn output.',
    );
  }
  return topic;
}

/**
 * An alarm topic encrypted with a customer managed KMS key notifies nobody unless the key policy
 * lets CloudWatch use it (Amazon SNS Developer Guide, "Enable compatibility between event
 * sources from AWS services and encrypted topics"): for a key of this app, that statement is
 * added to its policy (kms:Decrypt and kms:GenerateDataKey* for cloudwatch.amazonaws.com, on
 * behalf of this account only); for an imported key, or a topic whose key is unknown (imported
 * by ARN), synth warns what the key policy must allow.
 */
function letCloudWatchUseTopicKey(scope: Construct, topic: sns.ITopic): void {
  const what =
    'its key policy must allow the principal cloudwatch.amazonaws.com kms:Decrypt and kms:GenerateDataKey* (Amazon SNS Developer Guide, "Enable compatibility between event sources from AWS services and encrypted topics"), or every alarm notifies nobody; the AWS managed key alias/aws/sns cannot allow it.';
  const key = topic.masterKey;
  if (key) {
    const added = key.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'CloudWatchAlarmsPublishToTheEncryptedAlarmTopic',
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(scope).account } },
      }),
      true,
    );
    if (!added.statementAdded) {
      Annotations.of(scope).addWarningV2('ecs-reconciler:AlarmTopicKeyNotGranted', `alarmTopic is encrypted with a KMS key this app does not manage (${key.keyArn}): ${what}`);
    }
  } else if (!(topic instanceof sns.Topic)) {
    Annotations.of(scope).addWarningV2(
      'ecs-reconciler:AlarmTopicKeyUnknown',
      `alarmTopic is imported, so synth cannot tell whether it is encrypted: if it uses a customer managed KMS key, ${what} Import it with sns.Topic.fromTopicAttributes({ topicArn, keyArn }) to have this checked, or acknowledge this warning.`,
    );
  }
}

/** The alarm definitions deployed: those of `lambda/core/alarms.ts` with `alarmOverrides`; none with `createAlarms: false`. */
export function deployedAlarmDefinitions(scope: Construct, props: ReconcilerMonitoringProps, settings: ResolvedSettings): AlarmDefinition[] {
  const createAlarms = props.createAlarms ?? true;
  const defs = createAlarms
    ? withOverrides(
        alarmDefinitions({
          namespace: settings.metricsNamespace,
          defaultLagGraceSeconds: settings.defaultLagGraceSeconds,
          scheduleMinutes: settings.scheduleMinutes,
          functionTimeoutSeconds: settings.timeoutSeconds,
          fanOut: settings.fanOut,
        }),
        props.alarmOverrides ?? {},
      )
    : [];
  if (lagPeriods(settings.defaultLagGraceSeconds, settings.scheduleMinutes * 60).capped && createAlarms) {
    Annotations.of(scope).addWarningV2(
      'ecs-reconciler:LagWindowCapped',
      'defaultLagGrace is longer than the 3 hours a Metrics Insights alarm can evaluate: the per-service lag alarm fires after 3 hours; ServicesLaggingBeyondGrace honours the full grace.',
    );
  }
  return defs;
}

/** The definitions with `overrides` applied (threshold, evaluation periods, datapoints). */
function withOverrides(defs: readonly AlarmDefinition[], overrides: Partial<Record<AlarmId, AlarmOverride>>): AlarmDefinition[] {
  return defs.map((d) => {
    const o = overrides[d.id];
    if (!o) return d;
    return {
      ...d,
      ...(o.threshold !== undefined ? { threshold: o.threshold } : {}),
      ...(o.evaluationPeriods !== undefined ? { evaluationPeriods: o.evaluationPeriods } : {}),
      ...(o.datapointsToAlarm !== undefined ? { datapointsToAlarm: o.datapointsToAlarm } : {}),
    };
  });
}

/** The CloudWatch metric (or Metrics Insights query) an alarm definition watches. */
export function metricForAlarm(def: AlarmDefinition, fn: lambda.IFunction): cloudwatch.IMetric {
  const period = Duration.seconds(def.periodSeconds);
  switch (def.source.kind) {
    case 'metricsInsights':
      // MathExpression renders `Expression` + `Period` with no `usingMetrics`, which is what
      // AWS::CloudWatch::Alarm takes for a Metrics Insights query alarm.
      return new cloudwatch.MathExpression({
        expression: def.source.query,
        usingMetrics: {},
        period,
        label: `${def.source.metricName} per ${def.source.groupBy.includes(DIMENSION.target) ? 'target' : 'service'}`,
      });
    case 'reconcilerMetric':
      return new cloudwatch.Metric({ namespace: def.source.namespace, metricName: def.source.metricName, statistic: def.source.statistic, period });
    case 'lambdaMetric':
      return fn.metric(def.source.metricName, { statistic: def.source.statistic, period });
  }
}

/** One alarm per definition (`<id>Alarm`), notifying `topic` on ALARM and OK. */
export function createAlarms(scope: Construct, defs: readonly AlarmDefinition[], fn: lambda.IFunction, topic?: sns.ITopic): Partial<Record<AlarmId, cloudwatch.Alarm>> {
  const action = topic ? new cwActions.SnsAction(topic) : undefined;
  const alarms: Partial<Record<AlarmId, cloudwatch.Alarm>> = {};
  for (const def of defs) {
    const alarm = new cloudwatch.Alarm(scope, `${def.id}Alarm`, {
      alarmDescription: def.description,
      metric: metricForAlarm(def, fn),
      threshold: def.threshold,
      evaluationPeriods: def.evaluationPeriods,
      datapointsToAlarm: def.datapointsToAlarm,
      comparisonOperator: def.comparisonOperator as cloudwatch.ComparisonOperator,
      treatMissingData: def.treatMissingData as cloudwatch.TreatMissingData,
    });
    if (action) {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }
    alarms[def.id] = alarm;
  }
  return alarms;
}

/** What each dead-letter queue's alarm says (by the queue's construct id). */
const DEAD_LETTER_ALARM_TEXT: Readonly<Record<string, string>> = {
  EventsDeadLetters:
    'Events that never reached a pass: a message of the events queue received 5 times, of the events fast-path queue received 5 times, or an event EventBridge could not deliver. The resync still re-reads every service; read the messages (aws sqs receive-message) to see which services were named, then purge them (only EventBridge may send into the events queues).',
  FanOutDeadLetters:
    'A target pass failed 5 times for one tick: the message names the target. Read it (aws sqs receive-message), check the target in the pass summary and logs (role, ECS permissions), then purge it: the next tick sends a new message (only the function may send into the fan-out queue).',
  FastPathFailures:
    'The spec table stream fast path discarded a batch after its retries: the message names the shard and sequence numbers. The scheduled pass still reconciles those specs; look in the function logs for the error.',
};

/**
 * One alarm per dead-letter or failure queue (`<queue id>Alarm`):
 * `ApproximateNumberOfMessagesVisible` > 0 (Amazon SQS Developer Guide, "Creating alarms for
 * dead-letter queues using Amazon CloudWatch").
 * @returns the alarms by the queue's construct id.
 */
export function createDeadLetterAlarms(scope: Construct, queues: readonly (sqs.Queue | undefined)[], scheduleMinutes: number, topic?: sns.ITopic): Record<string, cloudwatch.Alarm> {
  const action = topic ? new cwActions.SnsAction(topic) : undefined;
  const alarms: Record<string, cloudwatch.Alarm> = {};
  for (const queue of queues) {
    if (!queue) continue;
    const id = queue.node.id;
    // SQS sends this metric every minute while the queue is active; Maximum over the schedule
    // interval sees one message at once (Amazon SQS Developer Guide, "Available CloudWatch
    // metrics for Amazon SQS"). Missing data is an idle queue: not breaching.
    const alarm = new cloudwatch.Alarm(scope, `${id}Alarm`, {
      alarmDescription: DEAD_LETTER_ALARM_TEXT[id] ?? `Messages in ${id}: work the reconciler gave up on.`,
      metric: queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: Duration.minutes(Math.max(1, scheduleMinutes)) }),
      threshold: 0,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    if (action) {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }
    alarms[id] = alarm;
  }
  return alarms;
}

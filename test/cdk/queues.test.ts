/**
 * The construct's queues and streams lose no work quietly: each SQS queue an event source mapping
 * reads has the visibility timeout and redrive the Lambda Developer Guide asks for ("Creating and
 * configuring an Amazon SQS event source mapping": at least six times the function timeout), the
 * stream mapping bisects a failing batch and sends what it discards to a failure queue ("Retaining
 * discarded records for a DynamoDB event source in Lambda"), EventBridge's undelivered events go to
 * a dead-letter queue, and every dead-letter or failure queue has an alarm on the alarm topic.
 */
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { EcsReconciler, type EcsReconcilerProps } from '../../lib/ecs-reconciler';

type Json = Record<string, unknown>;

function build(props: Partial<EcsReconcilerProps> = {}) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Test', { env: { account: '111111111111', region: 'eu-west-1' } });
  const reconciler = new EcsReconciler(stack, 'Reconciler', {
    clusters: ['web'],
    defaultSubnets: ['subnet-0a1'],
    targets: [{ name: 'staging', account: '222222222222', region: 'eu-west-1' }],
    ...props,
  });
  const template = Template.fromStack(stack);
  const id = (c: { node: { defaultChild?: unknown } }) => stack.getLogicalId(c.node.defaultChild as never);
  return { reconciler, stack, template, id };
}

const queueProps = (template: Template, logicalId: string) => template.findResources('AWS::SQS::Queue')[logicalId].Properties as Json;
const redrive = (q: Json) => q.RedrivePolicy as { maxReceiveCount: number; deadLetterTargetArn: unknown } | undefined;

describe('queues read by an event source mapping', () => {
  it.each([{ timeout: 50 }, { timeout: 30 }])('visibility at least six times the function timeout ($timeout s), five receives, retention past the last receive', ({ timeout }) => {
    const { reconciler, template, id } = build({ timeout: Duration.seconds(timeout) });
    const mapped = Object.values(template.findResources('AWS::Lambda::EventSourceMapping'))
      .map((m) => JSON.stringify((m.Properties as Json).EventSourceArn))
      .filter((arn) => !arn.includes('StreamArn'));
    const queues = [reconciler.eventsFastPathQueue!, reconciler.fanOutQueue!];
    // Every SQS queue a mapping reads is one of these two.
    expect(mapped.sort()).toEqual(queues.map((q) => JSON.stringify({ 'Fn::GetAtt': [id(q), 'Arn'] })).sort());
    for (const q of queues) {
      const props = queueProps(template, id(q));
      expect(props.VisibilityTimeout, q.node.id).toBeGreaterThanOrEqual(6 * timeout);
      expect(redrive(props)?.maxReceiveCount, q.node.id).toBe(5);
      expect(props.MessageRetentionPeriod as number, q.node.id).toBeGreaterThan((props.VisibilityTimeout as number) * 5);
    }
  });
});

describe('the spec table stream', () => {
  it('bisects a failing batch and sends what it discards to a failure queue the function may write', () => {
    const { reconciler, template, id, stack } = build();
    const mapping = Object.values(template.findResources('AWS::Lambda::EventSourceMapping'))
      .map((m) => m.Properties as Json)
      .find((p) => JSON.stringify(p.EventSourceArn).includes('StreamArn'))!;
    expect(mapping.BisectBatchOnFunctionError).toBe(true);
    expect(mapping.MaximumRetryAttempts).toBe(2);
    expect(mapping.DestinationConfig).toEqual({ OnFailure: { Destination: { 'Fn::GetAtt': [id(reconciler.fastPathFailureQueue!), 'Arn'] } } });
    // Lambda sends the failure record with the function's execution role.
    const statements = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((p) => JSON.stringify(p.Properties.Roles).includes(stack.getLogicalId(reconciler.role.node.defaultChild as never)))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Json[]);
    const sends = statements.filter((s) => JSON.stringify(s.Action).includes('sqs:SendMessage') && JSON.stringify(s.Resource).includes(id(reconciler.fastPathFailureQueue!)));
    expect(sends.length).toBeGreaterThan(0);
  });
});

describe('EventBridge deliveries', () => {
  it('every rule target into a queue has the events dead-letter queue', () => {
    const { reconciler, template, id } = build();
    const rules = Object.values(template.findResources('AWS::Events::Rule')).map((r) => r.Properties as { Targets?: Json[] });
    const queueTargets = rules.flatMap((r) => r.Targets ?? []).filter((t) => JSON.stringify(t.Arn).includes('Events'));
    expect(queueTargets.length).toBeGreaterThan(0);
    for (const t of queueTargets) {
      expect(t.DeadLetterConfig).toEqual({ Arn: { 'Fn::GetAtt': [id(reconciler.eventsDeadLetterQueue!), 'Arn'] } });
    }
  });
});

describe('an alarm on every dead-letter and failure queue', () => {
  it('each such queue has an alarm on its visible messages that notifies the topic on ALARM and OK', () => {
    const { reconciler, template, id, stack } = build();
    const redriveTargets = Object.values(template.findResources('AWS::SQS::Queue'))
      .map((q) => redrive(q.Properties as Json)?.deadLetterTargetArn)
      .filter((t) => t !== undefined)
      .map((t) => (t as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0]);
    const failureQueues = new Set([...redriveTargets, id(reconciler.fastPathFailureQueue!)]);
    expect(failureQueues.size).toBe(3);
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties as Json);
    const topic = stack.getLogicalId(reconciler.topic!.node.defaultChild as never);
    for (const q of failureQueues) {
      const alarm = alarms.find(
        (a) => a.MetricName === 'ApproximateNumberOfMessagesVisible' && JSON.stringify(a.Dimensions).includes(`"${q}"`),
      );
      expect(alarm, q).toMatchObject({
        Namespace: 'AWS/SQS',
        Statistic: 'Maximum',
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 1,
        TreatMissingData: 'notBreaching',
        AlarmActions: [{ Ref: topic }],
        OKActions: [{ Ref: topic }],
      });
    }
    expect(Object.keys(reconciler.deadLetterAlarms).sort()).toEqual(['EventsDeadLetters', 'FanOutDeadLetters', 'FastPathFailures']);
  });

  it('no alarm with createAlarms: false', () => {
    const { reconciler, template } = build({ createAlarms: false });
    expect(reconciler.deadLetterAlarms).toEqual({});
    const sqsAlarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')).filter((a) => (a.Properties as Json).Namespace === 'AWS/SQS');
    expect(sqsAlarms).toEqual([]);
  });
});

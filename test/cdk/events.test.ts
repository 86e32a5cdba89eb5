/**
 * Events mode in the construct: the queue and its dead-letter queue, the rules
 * that feed it (their patterns checked against the AWS documents' example events), the heartbeat,
 * the function's variables and its least-privilege access to the queue; `events: false` removes
 * all of it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { ENV } from '../../lambda/config';
import { EcsReconciler, EcsReconcilerPropsError, type EcsReconcilerProps } from '../../lib/ecs-reconciler';
import { EVENT_RULES } from '../../lambda/core/events';
import { matchesPattern } from '../../local/eventbridge';

type Json = Record<string, unknown>;

function synth(props: Partial<EcsReconcilerProps> = {}) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Test');
  const reconciler = new EcsReconciler(stack, 'Reconciler', { clusters: ['web'], defaultSubnets: ['subnet-0a1'], ...props });
  const template = Template.fromStack(stack);
  return { stack, reconciler, template, json: template.toJSON() as { Resources: Record<string, { Type: string; Properties: Json }> } };
}

const fixture = (name: string) => JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'events', name), 'utf8')) as Json;

/** EventBridge's matching, as the local run's bus does it (`local/eventbridge.ts`). */
const matches = (pattern: Json, event: Json) => matchesPattern(pattern, event);

function rulesByPattern(json: ReturnType<typeof synth>['json']): Json[] {
  return Object.values(json.Resources).filter((r) => r.Type === 'AWS::Events::Rule' && r.Properties.EventPattern).map((r) => r.Properties.EventPattern as Json);
}

describe('events mode (default)', () => {
  it('an encrypted queue with a dead-letter queue, TLS only, retention and visibility set', () => {
    const { template } = synth();
    // The events queue, its dead-letter queue, the events fast path's queue and the stream fast
    // path's failure queue.
    template.resourceCountIs('AWS::SQS::Queue', 4);
    const queues = Object.values(template.findResources('AWS::SQS::Queue')).map((q) => q.Properties as Json);
    for (const q of queues) expect(q.SqsManagedSseEnabled).toBe(true);
    const main = queues.find((q) => (q.RedrivePolicy as Json | undefined)?.maxReceiveCount === 5 && q.VisibilityTimeout === 50)!;
    expect(main).toMatchObject({ MessageRetentionPeriod: 3600, VisibilityTimeout: 50, RedrivePolicy: { maxReceiveCount: 5 } });
    const policies = Object.values(template.findResources('AWS::SQS::QueuePolicy')).map((p) => JSON.stringify(p.Properties));
    expect(policies.some((p) => p.includes('"aws:SecureTransport":"false"') && p.includes('"Effect":"Deny"'))).toBe(true);
    expect(policies.some((p) => p.includes('events.amazonaws.com') && p.includes('aws:SourceArn'))).toBe(true);
  });

  it("the deployed patterns are EVENT_RULES, the ones the local run's bus matches", () => {
    const { json } = synth();
    const deployed = Object.entries(json.Resources)
      .filter(([, r]) => r.Type === 'AWS::Events::Rule' && r.Properties.EventPattern)
      .map(([id, r]) => [id.replace(/^Reconciler/, '').replace(/[0-9A-F]{8}$/, ''), r.Properties.EventPattern]);
    expect(Object.fromEntries(deployed)).toEqual(Object.fromEntries(Object.entries(EVENT_RULES).map(([id, r]) => [id, r.pattern])));
  });

  it.each([
    { file: 'ecs-service-action.json', delivered: true },
    { file: 'ecs-deployment-state-change.json', delivered: true },
    { file: 'ecs-task-state-change-stopped.json', delivered: true },
    { file: 'cloudtrail-update-service.json', delivered: true },
    { file: 'cloudtrail-create-service.json', delivered: true },
    { file: 'cloudtrail-delete-service.json', delivered: true },
    { file: 'cloudtrail-tag-resource.json', delivered: true },
    { file: 'cloudtrail-untag-resource.json', delivered: true },
    { file: 'cloudtrail-stop-task.json', delivered: true },
    { file: 'cloudtrail-register-task-definition.json', delivered: true },
  ])('the rules deliver $file', ({ file, delivered }) => {
    const { json } = synth();
    expect(rulesByPattern(json).some((p) => matches(p, fixture(file)))).toBe(delivered);
  });

  it.each([
    { case: 'a task that is still RUNNING', event: () => ({ ...fixture('ecs-task-state-change-stopped.json'), detail: { ...(fixture('ecs-task-state-change-stopped.json').detail as Json), lastStatus: 'RUNNING' } }) },
    { case: 'a stopped task not started by a service', event: () => ({ ...fixture('ecs-task-state-change-stopped.json'), detail: { ...(fixture('ecs-task-state-change-stopped.json').detail as Json), group: 'family:web' } }) },
    { case: 'a read call (DescribeServices)', event: () => ({ ...fixture('cloudtrail-update-service.json'), detail: { ...(fixture('cloudtrail-update-service.json').detail as Json), eventName: 'DescribeServices' } }) },
  ])('the rules do not deliver $case', ({ event }) => {
    const { json } = synth();
    expect(rulesByPattern(json).some((p) => matches(p, event()))).toBe(false);
  });

  it('a heartbeat rule every schedule interval, and every rule targets the queue', () => {
    const { template, reconciler } = synth({ eventsFastPath: false });
    const rules = Object.values(template.findResources('AWS::Events::Rule')).map((r) => r.Properties as Json);
    const heartbeat = rules.filter((r) => r.ScheduleExpression && JSON.stringify(r.Targets).includes('Events'));
    expect(heartbeat.map((r) => r.ScheduleExpression)).toEqual(['rate(1 minute)']);
    expect(reconciler.eventRules).toHaveLength(4);
    const queueId = Stack.of(reconciler).getLogicalId(reconciler.eventsQueue!.node.defaultChild as never);
    for (const rule of reconciler.eventRules) {
      const props = template.findResources('AWS::Events::Rule')[Stack.of(rule).getLogicalId(rule.node.defaultChild as never)].Properties as { Targets: { Arn: unknown }[] };
      expect(props.Targets.map((t) => JSON.stringify(t.Arn))).toEqual([JSON.stringify({ 'Fn::GetAtt': [queueId, 'Arn'] })]);
    }
  });

  it('the function gets the queue URL, the resync interval, the schedule and its own role to ignore', () => {
    const { template, reconciler } = synth({ resyncMinutes: 15 });
    const fn = Object.values(template.findResources('AWS::Lambda::Function'))[0].Properties as { Environment: { Variables: Json } };
    const v = fn.Environment.Variables;
    const stack = Stack.of(reconciler);
    expect(v[ENV.eventsQueueUrl]).toEqual({ Ref: stack.getLogicalId(reconciler.eventsQueue!.node.defaultChild as never) });
    expect(v[ENV.resyncMinutes]).toBe('15');
    expect(v[ENV.scheduleMinutes]).toBe('1');
    expect(v[ENV.eventsIgnorePrincipals]).toEqual({ 'Fn::GetAtt': [stack.getLogicalId(reconciler.role.node.defaultChild as never), 'Arn'] });
  });

  it('least privilege: ReceiveMessage and DeleteMessage on this queue, nothing else of SQS', () => {
    const { template, reconciler } = synth({ eventsFastPath: false });
    const stack = Stack.of(reconciler);
    const roleId = stack.getLogicalId(reconciler.role.node.defaultChild as never);
    const statements = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((p) => JSON.stringify((p.Properties as Json).Roles).includes(roleId))
      .flatMap((p) => ((p.Properties as { PolicyDocument: { Statement: { Action: string | string[]; Resource: unknown }[] } }).PolicyDocument.Statement));
    // The stream fast path's failure queue is the other SQS grant (test/cdk/queues.test.ts).
    const failures = JSON.stringify({ 'Fn::GetAtt': [stack.getLogicalId(reconciler.fastPathFailureQueue!.node.defaultChild as never), 'Arn'] });
    const sqs = statements.filter((s) => [s.Action].flat().some((a) => a.startsWith('sqs:')) && JSON.stringify(s.Resource) !== failures);
    expect(sqs).toHaveLength(1);
    expect([sqs[0].Action].flat().sort()).toEqual(['sqs:DeleteMessage', 'sqs:ReceiveMessage']);
    expect(sqs[0].Resource).toEqual({ 'Fn::GetAtt': [stack.getLogicalId(reconciler.eventsQueue!.node.defaultChild as never), 'Arn'] });
  });
});

describe('the events fast path (ECS events update the status within seconds)', () => {
  const ids = (reconciler: EcsReconciler) => {
    const stack = Stack.of(reconciler);
    return {
      stack,
      queue: stack.getLogicalId(reconciler.eventsQueue!.node.defaultChild as never),
      fast: stack.getLogicalId(reconciler.eventsFastPathQueue!.node.defaultChild as never),
      dlq: stack.getLogicalId(reconciler.eventsDeadLetterQueue!.node.defaultChild as never),
      role: stack.getLogicalId(reconciler.role.node.defaultChild as never),
    };
  };

  it('a second encrypted queue, TLS only, retention past its last receive, visibility six times the function timeout, the same dead-letter queue', () => {
    const { template, reconciler } = synth();
    const { fast, dlq } = ids(reconciler);
    const props = template.findResources('AWS::SQS::Queue')[fast].Properties as Json;
    expect(props).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 1560, VisibilityTimeout: 300, RedrivePolicy: { maxReceiveCount: 5, deadLetterTargetArn: { 'Fn::GetAtt': [dlq, 'Arn'] } } });
    const policies = Object.values(template.findResources('AWS::SQS::QueuePolicy')).map((p) => JSON.stringify(p.Properties)).filter((p) => p.includes(`"${fast}"`));
    expect(policies.some((p) => p.includes('"aws:SecureTransport":"false"') && p.includes('"Effect":"Deny"'))).toBe(true);
    expect(policies.some((p) => p.includes('events.amazonaws.com') && p.includes('aws:SourceArn'))).toBe(true);
  });

  it("the ECS event rules deliver into both queues; the heartbeat only into the scheduled pass's", () => {
    const { template, reconciler } = synth();
    const { stack, queue, fast } = ids(reconciler);
    const arn = (id: string) => JSON.stringify({ 'Fn::GetAtt': [id, 'Arn'] });
    const targets = Object.fromEntries(
      reconciler.eventRules.map((rule) => {
        const id = stack.getLogicalId(rule.node.defaultChild as never);
        const props = template.findResources('AWS::Events::Rule')[id].Properties as { Targets: { Arn: unknown; RetryPolicy?: Json }[] };
        return [rule.node.id, props.Targets.map((t) => [JSON.stringify(t.Arn), t.RetryPolicy])];
      }),
    );
    for (const id of Object.keys(EVENT_RULES)) {
      expect(targets[id]).toEqual([
        [arn(queue), { MaximumEventAgeInSeconds: 3600, MaximumRetryAttempts: 2 }],
        [arn(fast), { MaximumEventAgeInSeconds: 300, MaximumRetryAttempts: 2 }],
      ]);
    }
    expect(targets.EventsHeartbeat.map(([a]) => a)).toEqual([arn(queue)]);
  });

  it('an event source mapping runs the function on batches of up to 100 gathered for at most 1 s, two at a time', () => {
    const { template, reconciler } = synth();
    const { fast } = ids(reconciler);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [fast, 'Arn'] },
      FunctionName: { Ref: Match.stringLikeRegexp('^ReconcilerFunction') },
      BatchSize: 100,
      MaximumBatchingWindowInSeconds: 1,
      ScalingConfig: { MaximumConcurrency: 2 },
    });
  });

  it('least privilege: what the SQS poller needs, on the fast path queue only', () => {
    const { template, reconciler } = synth();
    const { queue, fast, role } = ids(reconciler);
    const statements = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((p) => JSON.stringify((p.Properties as Json).Roles).includes(role))
      .flatMap((p) => (p.Properties as { PolicyDocument: { Statement: { Action: string | string[]; Resource: unknown }[] } }).PolicyDocument.Statement)
      .filter((s) => [s.Action].flat().some((a) => a.startsWith('sqs:')))
      // The stream fast path's failure queue is the other SQS grant (test/cdk/queues.test.ts).
      .filter((s) => JSON.stringify(s.Resource) !== JSON.stringify({ 'Fn::GetAtt': [Stack.of(reconciler).getLogicalId(reconciler.fastPathFailureQueue!.node.defaultChild as never), 'Arn'] }));
    const byQueue = Object.fromEntries(statements.map((s) => [JSON.stringify(s.Resource), [s.Action].flat().sort()]));
    expect(byQueue).toEqual({
      [JSON.stringify({ 'Fn::GetAtt': [queue, 'Arn'] })]: ['sqs:DeleteMessage', 'sqs:ReceiveMessage'],
      [JSON.stringify({ 'Fn::GetAtt': [fast, 'Arn'] })]: ['sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:ReceiveMessage'],
    });
  });

  it('eventsFastPath: false: one queue target per rule, no second queue or mapping; it needs events mode', () => {
    const { template, reconciler } = synth({ eventsFastPath: false });
    expect(reconciler.eventsFastPathQueue).toBeUndefined();
    // The events queue and its dead-letter queue (and the stream fast path's failure queue).
    template.resourceCountIs('AWS::SQS::Queue', 3);
    expect(JSON.stringify(template.findResources('AWS::Lambda::EventSourceMapping'))).not.toContain('Arn"]},"FunctionName');
    expect(() => synth({ events: false, eventsFastPath: true })).toThrow(/eventsFastPath` needs events mode/);
    expect(synth({ events: false }).reconciler.eventsFastPathQueue).toBeUndefined();
  });
});

describe('events: false', () => {
  it('no queue, no event rules, no variables, no SQS permission: every pass polls', () => {
    const { template, reconciler } = synth({ events: false, fastPath: false });
    template.resourceCountIs('AWS::SQS::Queue', 0);
    template.resourceCountIs('AWS::Events::Rule', 1); // the pass schedule only
    expect(reconciler.eventsQueue).toBeUndefined();
    const fn = Object.values(template.findResources('AWS::Lambda::Function'))[0].Properties as { Environment: { Variables: Json } };
    expect(Object.keys(fn.Environment.Variables)).not.toContain(ENV.eventsQueueUrl);
    expect(JSON.stringify(template.findResources('AWS::IAM::Policy'))).not.toContain('sqs:');
  });

  it.each([0, 1441, 2.5])('resyncMinutes %s is refused with a sentence', (resyncMinutes) => {
    expect(() => synth({ resyncMinutes })).toThrow(EcsReconcilerPropsError);
    expect(() => synth({ resyncMinutes })).toThrow(/resyncMinutes.*whole minutes/);
  });
});

/**
 * Events mode in the construct (issue 12 part 2): the queue and its dead-letter queue, the rules
 * that feed it (their patterns checked against the AWS documents' example events), the heartbeat,
 * the function's variables and its least-privilege access to the queue; `events: false` removes
 * all of it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
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
    template.resourceCountIs('AWS::SQS::Queue', 2);
    const queues = Object.values(template.findResources('AWS::SQS::Queue')).map((q) => q.Properties as Json);
    for (const q of queues) expect(q.SqsManagedSseEnabled).toBe(true);
    const main = queues.find((q) => q.RedrivePolicy)!;
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
    const { template, reconciler } = synth();
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
    const { template, reconciler } = synth();
    const stack = Stack.of(reconciler);
    const roleId = stack.getLogicalId(reconciler.role.node.defaultChild as never);
    const statements = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((p) => JSON.stringify((p.Properties as Json).Roles).includes(roleId))
      .flatMap((p) => ((p.Properties as { PolicyDocument: { Statement: { Action: string | string[]; Resource: unknown }[] } }).PolicyDocument.Statement));
    const sqs = statements.filter((s) => [s.Action].flat().some((a) => a.startsWith('sqs:')));
    expect(sqs).toHaveLength(1);
    expect([sqs[0].Action].flat().sort()).toEqual(['sqs:DeleteMessage', 'sqs:ReceiveMessage']);
    expect(sqs[0].Resource).toEqual({ 'Fn::GetAtt': [stack.getLogicalId(reconciler.eventsQueue!.node.defaultChild as never), 'Arn'] });
  });
});

describe('events: false', () => {
  it('no queue, no event rules, no variables, no SQS permission: every pass polls', () => {
    const { template, reconciler } = synth({ events: false });
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

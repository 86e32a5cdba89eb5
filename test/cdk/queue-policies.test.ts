/**
 * The construct's queues accept messages only from whom the reconciler expects: the fan-out queue,
 * its dead-letter queue and the stream's failure queue from the function's role only; the event
 * queues from EventBridge (this construct's rules) only. Each queue policy is evaluated as IAM
 * would (test/support/iam-eval.ts) for the senders a forger could use.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { describe, expect, it } from 'vitest';
import { EcsReconciler } from '../../lib/ecs-reconciler';
import { evaluate, flat, type PolicyStatement, type Request } from '../support/iam-eval';

const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
const stack = new Stack(app, 'Test', { env: { account: '111111111111', region: 'eu-west-1' } });
const reconciler = new EcsReconciler(stack, 'Reconciler', {
  clusters: ['web'],
  defaultSubnets: ['subnet-0a1'],
  targets: [{ name: 'staging', account: '222222222222', region: 'eu-west-1' }],
});
const template = Template.fromStack(stack);
const id = (c: { node: { defaultChild?: unknown } }) => stack.getLogicalId(c.node.defaultChild as never);

/** The statements of every queue policy that names `queue`. */
function policyOf(queue: sqs.Queue): PolicyStatement[] {
  return Object.values(template.findResources('AWS::SQS::QueuePolicy'))
    .filter((p) => JSON.stringify(p.Properties.Queues).includes(`"${id(queue)}"`))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as PolicyStatement[]);
}

const roleArn = `\${${id(reconciler.role)}.Arn}`;
const send = (queue: sqs.Queue, who: Partial<Request>): Request => ({
  action: 'sqs:SendMessage',
  resource: `\${${id(queue)}.Arn}`,
  ...who,
  context: { 'aws:SecureTransport': 'true', ...(who.context ?? {}) },
});
const theFunction = { context: { 'aws:PrincipalArn': roleArn, 'aws:PrincipalIsAWSService': 'false' } };
const anotherRole = { context: { 'aws:PrincipalArn': 'arn:aws:iam::111111111111:role/ci-deployer', 'aws:PrincipalIsAWSService': 'false' } };
const anotherAccount = { context: { 'aws:PrincipalArn': 'arn:aws:iam::999999999999:role/attacker', 'aws:PrincipalIsAWSService': 'false' } };
const anonymous = { context: {} };
const ruleArn = (rule: { node: { defaultChild?: unknown } }) => `\${${id(rule)}.Arn}`;

describe('function-only queues', () => {
  const queues = { FanOut: reconciler.fanOutQueue!, FanOutDeadLetters: reconciler.fanOutDeadLetterQueue!, FastPathFailures: reconciler.fastPathFailureQueue! };

  it.each(Object.keys(queues))('%s: a forged message from another role, another account or nobody is explicitly denied', (name) => {
    const queue = queues[name as keyof typeof queues];
    const statements = policyOf(queue);
    for (const who of [anotherRole, anotherAccount, anonymous]) {
      expect(evaluate(statements, send(queue, who)), JSON.stringify(who)).toBe('ExplicitDeny');
    }
    // EventBridge (or any service) cannot send here either.
    expect(evaluate(statements, send(queue, { servicePrincipal: 'events.amazonaws.com', context: { 'aws:PrincipalIsAWSService': 'true', 'aws:SourceArn': ruleArn(reconciler.eventRules[0]) } }))).toBe('ExplicitDeny');
    // The function's role is not denied: its identity policy grants the send.
    expect(evaluate(statements, send(queue, theFunction))).not.toBe('ExplicitDeny');
  });

  it('the function role may send to the fan-out queue (identity policy)', () => {
    const identity = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((p) => JSON.stringify(p.Properties.Roles).includes(id(reconciler.role)))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as PolicyStatement[]);
    expect(evaluate(identity, send(reconciler.fanOutQueue!, theFunction))).toBe('Allow');
  });
});

describe('event queues', () => {
  const queues = { Events: reconciler.eventsQueue!, EventsFastPath: reconciler.eventsFastPathQueue!, EventsDeadLetters: reconciler.eventsDeadLetterQueue! };

  it.each(Object.keys(queues))("%s: this construct's rules may deliver, nobody else may send", (name) => {
    const queue = queues[name as keyof typeof queues];
    const statements = policyOf(queue);
    for (const who of [anotherRole, anotherAccount, anonymous]) {
      expect(evaluate(statements, send(queue, who)), JSON.stringify(who)).toBe('ExplicitDeny');
    }
    const rule = reconciler.eventRules.find((r) => statements.some((s) => JSON.stringify(s.Condition ?? {}).includes(id(r))))!;
    expect(rule).toBeDefined();
    const eventBridge = (sourceArn: string) => send(queue, { servicePrincipal: 'events.amazonaws.com', context: { 'aws:PrincipalIsAWSService': 'true', 'aws:SourceArn': sourceArn } });
    expect(evaluate(statements, eventBridge(ruleArn(rule)))).toBe('Allow');
    expect(evaluate(statements, eventBridge('arn:aws:events:eu-west-1:111111111111:rule/someone-elses'))).toBe('ImplicitDeny');
  });

  it('every queue of the construct has a send restriction', () => {
    const queueIds = Object.keys(template.findResources('AWS::SQS::Queue'));
    for (const q of queueIds) {
      const statements = Object.values(template.findResources('AWS::SQS::QueuePolicy'))
        .filter((p) => JSON.stringify(p.Properties.Queues).includes(`"${q}"`))
        .flatMap((p) => p.Properties.PolicyDocument.Statement as PolicyStatement[]);
      const denies = statements.filter((s) => s.Effect === 'Deny' && JSON.stringify(s.Action).includes('sqs:SendMessage'));
      expect(denies.map((s) => flat(s.Condition?.ArnNotEquals?.['aws:PrincipalArn'])), q).toEqual([roleArn]);
    }
    expect(queueIds).toHaveLength(6);
  });
});

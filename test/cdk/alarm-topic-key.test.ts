/**
 * An alarm topic passed in with its own KMS key: CloudWatch can publish to it only when the key
 * policy lets cloudwatch.amazonaws.com use the key (Amazon SNS Developer Guide, "Enable
 * compatibility between event sources from AWS services and encrypted topics"). A key of this app
 * gets the statement (evaluated from the template's key policy as IAM would); an imported key or
 * an imported topic gets a synth warning saying what the key policy must allow.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { describe, expect, it } from 'vitest';
import { EcsReconciler } from '../../lib/ecs-reconciler';
import { evaluate, type PolicyStatement } from '../support/iam-eval';

const ACCOUNT = '123456789012';

function withTopic(make: (stack: Stack) => sns.ITopic) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Test', { env: { account: ACCOUNT, region: 'eu-west-1' } });
  const topic = make(stack);
  new EcsReconciler(stack, 'Reconciler', { clusters: ['prod'], defaultSubnets: ['subnet-0a1'], defaultSecurityGroups: ['sg-0c3'], alarmTopic: topic });
  const keyWarnings = Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('alarmTopic is')).map((w) => String(w.entry.data));
  return { template: Template.fromStack(stack), keyWarnings };
}

const cloudWatch = (action: string) => ({ action, resource: '*', servicePrincipal: 'cloudwatch.amazonaws.com', context: { 'aws:SourceAccount': ACCOUNT } });

describe('an alarm topic with its own KMS key', () => {
  it('a key of this app: its policy lets CloudWatch decrypt and generate data keys, for this account only; no warning', () => {
    const { template, keyWarnings } = withTopic((stack) => new sns.Topic(stack, 'Oncall', { masterKey: new kms.Key(stack, 'TopicKey') }));
    const [key] = Object.values(template.findResources('AWS::KMS::Key'));
    const statements = key.Properties.KeyPolicy.Statement as PolicyStatement[];
    expect(evaluate(statements, cloudWatch('kms:Decrypt'))).toBe('Allow');
    expect(evaluate(statements, cloudWatch('kms:GenerateDataKey'))).toBe('Allow');
    expect(evaluate(statements, { ...cloudWatch('kms:Decrypt'), context: { 'aws:SourceAccount': '999999999999' } })).toBe('ImplicitDeny');
    expect(evaluate(statements, { ...cloudWatch('kms:Decrypt'), servicePrincipal: 'events.amazonaws.com' })).toBe('ImplicitDeny');
    expect(keyWarnings).toEqual([]);
  });

  it('an imported key: synth warns what its policy must allow, naming the key', () => {
    const keyArn = `arn:aws:kms:eu-west-1:${ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab`;
    const { keyWarnings } = withTopic((stack) => sns.Topic.fromTopicAttributes(stack, 'Oncall', { topicArn: `arn:aws:sns:eu-west-1:${ACCOUNT}:oncall`, keyArn }));
    expect(keyWarnings).toHaveLength(1);
    expect(keyWarnings[0]).toContain(keyArn);
    expect(keyWarnings[0]).toMatch(/cloudwatch\.amazonaws\.com kms:Decrypt and kms:GenerateDataKey\*/);
  });

  it('a topic imported by ARN: synth cannot tell, and says what to check', () => {
    const { keyWarnings } = withTopic((stack) => sns.Topic.fromTopicArn(stack, 'Oncall', `arn:aws:sns:eu-west-1:${ACCOUNT}:oncall`));
    expect(keyWarnings).toHaveLength(1);
    expect(keyWarnings[0]).toMatch(/alarmTopic is imported, so synth cannot tell whether it is encrypted/);
  });

  it('a topic of this app without a key: nothing added, no warning', () => {
    const { template, keyWarnings } = withTopic((stack) => new sns.Topic(stack, 'Oncall'));
    template.resourceCountIs('AWS::KMS::Key', 0);
    expect(keyWarnings).toEqual([]);
  });
});

/**
 * The construct's fan-out: the queue, its dead-letter queue and the event source
 * mapping (one target per invocation, bounded concurrency), the targets handed to the function,
 * the grants, the per-target alarm and dashboard; and `ReconcilerTargetRole`, whose ECS statements
 * are the function's own and whose trust names the function's role only.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { ENV } from '../../lambda/config';
import { parseTarget } from '../../lambda/core/targets';
import { EcsReconciler, EcsReconcilerPropsError, type EcsReconcilerProps } from '../../lib/ecs-reconciler';
import { ReconcilerTargetRole } from '../../lib/target-role';

const TARGETS = [
  { name: 'staging', account: '222222222222', region: 'eu-west-1', clusters: ['web'] },
  { name: 'prod', account: '333333333333', region: 'us-east-1', roleArn: 'arn:aws:iam::333333333333:role/custom' },
];

function build(props: Partial<EcsReconcilerProps> = {}) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Test', { env: { account: '111111111111', region: 'eu-west-1' } });
  const reconciler = new EcsReconciler(stack, 'Reconciler', { clusters: ['web'], defaultSubnets: ['subnet-0a1'], ...props });
  return { reconciler, stack, template: Template.fromStack(stack) };
}

type Statement = { Sid?: string; Action: string | string[]; Resource: unknown; Condition?: unknown; Effect: string };
const statementsOf = (template: Template, roleLogicalIdPrefix: string): Statement[] => {
  const policies = template.findResources('AWS::IAM::Policy');
  return Object.values(policies)
    .filter((p) => JSON.stringify(p.Properties.Roles).includes(roleLogicalIdPrefix))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
};

describe('fan-out in the construct', () => {
  it('targets give a queue with a dead-letter queue, a mapping of one message per invocation at bounded concurrency, and TARGETS', () => {
    // Act
    const { template, reconciler } = build({ targets: TARGETS, fanOutConcurrency: 4 });

    // Assess
    expect(reconciler.fanOutQueue).toBeDefined();
    template.hasResourceProperties('AWS::SQS::Queue', {
      VisibilityTimeout: 300,
      RedrivePolicy: Match.objectLike({ maxReceiveCount: 5 }),
      SqsManagedSseEnabled: true,
    });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      BatchSize: 1,
      ScalingConfig: { MaximumConcurrency: 4 },
      EventSourceArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('ReconcilerFanOut'), 'Arn'] },
    });
    const fn = Object.values(template.findResources('AWS::Lambda::Function')).find((f) => f.Properties.Environment?.Variables?.[ENV.specsTable]);
    const vars = fn!.Properties.Environment.Variables as Record<string, unknown>;
    expect(vars[ENV.fanOutQueueUrl]).toEqual({ Ref: expect.stringMatching(/ReconcilerFanOut/) });
    const declared = JSON.parse(vars[ENV.targets] as string) as unknown[];
    // What the construct hands the function parses as the function will parse it.
    expect(declared.map((d) => parseTarget(d, 'prop').ok)).toEqual([true, true]);
    expect(declared).toEqual([
      expect.objectContaining({ name: 'staging', roleArn: 'arn:aws:iam::222222222222:role/ecs-reconciler-target' }),
      expect.objectContaining({ name: 'prod', roleArn: 'arn:aws:iam::333333333333:role/custom' }),
    ]);
  });

  it('grants: send/receive on its queue only, AssumeRole on the target roles only, Query on the table', () => {
    // Act
    const { template } = build({ targets: TARGETS });

    // Assess
    const statements = statementsOf(template, 'ReconcilerFunctionRole');
    const queue = statements.find((s) => s.Sid === 'FanOutQueue');
    expect(queue?.Action).toEqual(['sqs:SendMessage', 'sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes']);
    expect(JSON.stringify(queue?.Resource)).toMatch(/ReconcilerFanOut[0-9A-F]+"/);
    const assume = statements.find((s) => s.Sid === 'AssumeTargetRoles');
    expect(assume?.Action).toBe('sts:AssumeRole');
    expect(JSON.stringify(assume?.Resource)).toContain('arn:aws:iam::222222222222:role/ecs-reconciler-target');
    expect(JSON.stringify(assume?.Resource)).toContain('arn:aws:iam::333333333333:role/custom');
    expect(JSON.stringify(assume?.Resource)).toContain(':iam::*:role/ecs-reconciler-target');
  });

  it('a per-target alarm on TargetPassAge (Metrics Insights, one contributor per target) and per-target dashboard widgets', () => {
    // Act
    const { template, reconciler } = build({ targets: TARGETS });

    // Assess
    expect(reconciler.alarms.TargetPassesStopped).toBeDefined();
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Metrics: [Match.objectLike({ Expression: Match.stringLikeRegexp('SELECT MAX\\(TargetPassAge\\) FROM SCHEMA\\("EcsReconciler", Target\\) GROUP BY Target') })],
      TreatMissingData: 'notBreaching',
      EvaluationPeriods: 2,
    });
    const body = JSON.stringify(template.findResources('AWS::CloudWatch::Dashboard'));
    expect(body).toContain('TargetPassAge');
    expect(body).toContain('GROUP BY Target');
  });

  it('without targets or fanOut: no queue, no mapping, no per-target alarm (one account, as before)', () => {
    const { template, reconciler } = build();
    expect(reconciler.fanOutQueue).toBeUndefined();
    expect(reconciler.alarms.TargetPassesStopped).toBeUndefined();
    template.resourcePropertiesCountIs('AWS::Lambda::EventSourceMapping', { BatchSize: 1 }, 0);
  });

  it('refuses bad targets with one sentence each', () => {
    expect(() => build({ targets: [{ name: 'Staging!', account: '12', region: 'mars', clusters: [] }] })).toThrow(EcsReconcilerPropsError);
    try {
      build({ targets: [{ name: 'Staging!', account: '12', region: 'mars' }, { name: 'a', account: '222222222222', region: 'eu-west-1' }, { name: 'a', account: '222222222222', region: 'eu-west-1' }], fanOutConcurrency: 1 });
    } catch (err) {
      const problems = (err as EcsReconcilerPropsError).problems.join('\n');
      expect(problems).toMatch(/name must be 1-32 lowercase/);
      expect(problems).toMatch(/account must be a 12-digit/);
      expect(problems).toMatch(/listed twice/);
      expect(problems).toMatch(/fanOutConcurrency/);
      return;
    }
    throw new Error('not refused');
  });
});

describe('ReconcilerTargetRole', () => {
  it('trusts only the reconciler function role, and carries the function\'s own ECS statements for its clusters', () => {
    // Prepare: the reconciler's account, and a target account managing a cluster of the same name.
    const { template: reconcilerTemplate } = build({ targets: TARGETS });
    const app = new App();
    const target = new Stack(app, 'Target', { env: { account: '111111111111', region: 'eu-west-1' } });

    // Act
    new ReconcilerTargetRole(target, 'TargetRole', {
      reconcilerRoleArn: 'arn:aws:iam::999999999999:role/Reconciler-FunctionRole',
      clusters: ['web'],
      passableRoles: ['arn:aws:iam::111111111111:role/app-exec'],
    });
    const template = Template.fromStack(target);

    // Assess: the trust names the role, nothing else.
    template.hasResourceProperties('AWS::IAM::Role', {
      RoleName: 'ecs-reconciler-target',
      AssumeRolePolicyDocument: {
        Statement: [{ Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { AWS: 'arn:aws:iam::999999999999:role/Reconciler-FunctionRole' } }],
      },
    });
    const ecsOnly = (ss: Statement[]) => ss.filter((s) => [s.Action].flat().some((a) => a.startsWith('ecs:')));
    const own = ecsOnly(statementsOf(reconcilerTemplate, 'ReconcilerFunctionRole'));
    const theirs = ecsOnly(statementsOf(template, 'TargetRole'));
    expect(theirs.length).toBeGreaterThan(5);
    expect(theirs).toEqual(own);
    const pass = statementsOf(template, 'TargetRole').find((s) => s.Sid === 'PassListedRolesToEcsTasks');
    expect(pass).toMatchObject({ Action: 'iam:PassRole', Resource: 'arn:aws:iam::111111111111:role/app-exec', Condition: { StringEquals: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' } } });
  });

  it('without clusters: every cluster of the account (cluster/* in the ARNs); a bad role ARN is refused', () => {
    const app = new App();
    const target = new Stack(app, 'Target', { env: { account: '222222222222', region: 'eu-west-1' } });
    new ReconcilerTargetRole(target, 'TargetRole', { reconcilerRoleArn: 'arn:aws:iam::111111111111:role/fn' });
    const text = JSON.stringify(Template.fromStack(target).toJSON());
    expect(text).toContain('service/*/*');
    expect(() => new ReconcilerTargetRole(new Stack(new App(), 'X'), 'R', { reconcilerRoleArn: 'not-an-arn' })).toThrow(/not an IAM role ARN/);
  });
});

/**
 * Template assertions for the EcsReconciler construct: one requirement per test, bundling skipped
 * (`aws:cdk:bundling-stacks: []`) because only the template matters here.
 */
import { readFileSync } from 'node:fs';
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import { describe, expect, it } from 'vitest';
import { specsTableDefinition } from '../../lambda/adapters/dynamo-spec-store';
import { ENV } from '../../lambda/config';
import { alarmDefinitions, type AlarmDefinition } from '../../lambda/core/alarms';
import { EcsReconciler, EcsReconcilerPropsError, type EcsReconcilerProps } from '../../lib/ecs-reconciler';
import { evaluate, flat, type PolicyStatement } from '../support/iam-eval';

const ACCOUNT_ROLE = 'arn:aws:iam::123456789012:role/app-task';
const OTHER_EXEC_ROLE = 'arn:aws:iam::123456789012:role/app-exec';

/** Props for a reconciler that manages two existing clusters. */
/** Every allow-list that is open when unset, closed: no OpenAllowList warning. */
const CLOSED_LISTS: Partial<EcsReconcilerProps> = {
  allowedSubnets: ['subnet-0a1'],
  allowedSecurityGroups: ['sg-0c3'],
  allowPublicIp: false,
  allowedTargetGroups: [],
  allowedSecrets: [],
  allowedImageRegistries: ['public.ecr.aws'],
  allowedEfsFileSystems: [],
};

function someProps(overrides: Partial<EcsReconcilerProps> = {}): EcsReconcilerProps {
  return {
    clusters: ['web', 'jobs'],
    defaultSubnets: ['subnet-0a1', 'subnet-0b2'],
    defaultSecurityGroups: ['sg-0c3'],
    ...overrides,
  };
}

/** A stack holding one reconciler; bundling skipped. */
function aReconciler(props: EcsReconcilerProps = someProps()) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Test');
  const reconciler = new EcsReconciler(stack, 'Reconciler', props);
  return { stack, reconciler, template: Template.fromStack(stack) };
}

interface Statement {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}
const asList = <T>(x: T | T[]): T[] => (Array.isArray(x) ? x : [x]);

/** Statements of the policies attached to `role`. */
function roleStatements(template: Template, role: iam.Role): Statement[] {
  const roleId = Stack.of(role).getLogicalId(role.node.defaultChild as iam.CfnRole);
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((p) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
}

/** Statements of the policies attached to the function's role. */
function functionStatements(template: Template, reconciler: EcsReconciler): Statement[] {
  return roleStatements(template, reconciler.role);
}

/** (action, resource-as-text) pairs granted to the function. */
function grants(statements: Statement[]): { action: string; resource: string; statement: Statement }[] {
  return statements.flatMap((s) =>
    asList(s.Action).flatMap((action) => asList(s.Resource).map((r) => ({ action, resource: flat(r), statement: s }))),
  );
}

function alarmResource(template: Template, def: AlarmDefinition) {
  const alarms = template.findResources('AWS::CloudWatch::Alarm');
  const entry = Object.entries(alarms).find(([id]) => id.startsWith(`Reconciler${def.id}Alarm`));
  if (!entry) throw new Error(`no alarm for ${def.id}`);
  return entry[1].Properties as Record<string, unknown> & { Metrics?: Record<string, unknown>[] };
}

describe('spec table', () => {
  it('has partition key cluster and sort key service, on-demand, PITR, deletion protection, encryption', () => {
    const { template } = aReconciler();
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: 'cluster', KeyType: 'HASH' },
        { AttributeName: 'service', KeyType: 'RANGE' },
      ],
      AttributeDefinitions: Match.arrayWith([
        { AttributeName: 'cluster', AttributeType: 'S' },
        { AttributeName: 'service', AttributeType: 'S' },
      ]),
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      DeletionProtectionEnabled: true,
      // SSEEnabled without a key: the AWS managed key aws/dynamodb.
      SSESpecification: { SSEEnabled: true },
    });
  });

  it('has the key schema and billing mode the spec store expects (specsTableDefinition)', () => {
    const { template } = aReconciler();
    const expected = specsTableDefinition('any');
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: expected.KeySchema,
      AttributeDefinitions: Match.arrayWith(expected.AttributeDefinitions ?? []),
      BillingMode: expected.BillingMode,
    });
  });

  it('is retained when the stack is deleted', () => {
    const { template } = aReconciler();
    template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
  });

  it('uses a customer managed key when given one, and lets the function use it', () => {
    // Prepare
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Test');
    const key = kms.Key.fromKeyArn(stack, 'Key', 'arn:aws:kms:eu-west-1:123456789012:key/abcd-1234');
    // Act
    const reconciler = new EcsReconciler(stack, 'Reconciler', someProps({ tableEncryptionKey: key }));
    const template = Template.fromStack(stack);
    // Assess
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      SSESpecification: { SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: 'arn:aws:kms:eu-west-1:123456789012:key/abcd-1234' },
    });
    const kmsGrants = grants(functionStatements(template, reconciler)).filter((g) => g.action.startsWith('kms:'));
    expect(kmsGrants.map((g) => g.resource)).toContain('arn:aws:kms:eu-west-1:123456789012:key/abcd-1234');
    expect(kmsGrants.map((g) => g.action)).toEqual(expect.arrayContaining(['kms:Decrypt', 'kms:Encrypt']));
    expect(kmsGrants.every((g) => g.statement.Condition?.StringEquals?.['kms:ViaService'] !== undefined)).toBe(true);
  });
});

describe('function', () => {
  it('runs on the newest Node.js runtime aws-cdk-lib offers, ARM64, traced, under a minute, without a concurrency reservation', () => {
    // Prepare: the newest NODEJS_N_X the installed aws-cdk-lib knows.
    const newest = Object.keys(lambda.Runtime)
      .map((k) => /^NODEJS_(\d+)_X$/.exec(k))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => b - a)[0];
    // Act
    const { template } = aReconciler();
    // Assess
    template.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: `nodejs${newest}.x`,
      Architectures: ['arm64'],
      ReservedConcurrentExecutions: Match.absent(),
      TracingConfig: { Mode: 'Active' },
      Timeout: 50,
      MemorySize: 384,
      LoggingConfig: { LogGroup: Match.anyValue() },
    });
  });

  it('does not retry async invocations and drops events older than 60 s', () => {
    const { template } = aReconciler();
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      MaximumRetryAttempts: 0,
      MaximumEventAgeInSeconds: 60,
    });
  });

  it('logs to its own log group with one month retention', () => {
    const { template, reconciler } = aReconciler();
    const fn = Object.values(template.findResources('AWS::Lambda::Function'))[0];
    const groupId = (fn.Properties.LoggingConfig.LogGroup as { Ref: string }).Ref;
    expect(template.toJSON().Resources[groupId].Properties.RetentionInDays).toBe(30);
    expect(Stack.of(reconciler).resolve(reconciler.function.logGroup.logGroupName)).toEqual({ Ref: groupId });
  });

  it('sets every configuration variable from the props, under the names lambda/config.ts reads', () => {
    // Act
    const { template } = aReconciler(
      someProps({
        allowedTaskRoles: [ACCOUNT_ROLE],
        allowedExecutionRoles: [OTHER_EXEC_ROLE],
        allowedImageRegistries: ['public.ecr.aws', '123456789012.dkr.ecr.eu-west-1.amazonaws.com'],
        defaultLagGrace: Duration.minutes(10),
        metricsNamespace: 'Team/Reconciler',
        prune: false,
        maxDeletesPerPass: 2,
        apiBudgetFraction: 0.25,
        dryRun: true,
        ownerId: 'team-a',
        assignPublicIp: true,
      }),
    );
    // Assess
    const fn = Object.values(template.findResources('AWS::Lambda::Function'))[0];
    const env = fn.Properties.Environment.Variables as Record<string, unknown>;
    const text = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, flat(v)]));
    expect(text).toMatchObject({
      [ENV.managedClusters]: 'web,jobs',
      [ENV.defaultSubnets]: 'subnet-0a1,subnet-0b2',
      [ENV.defaultSecurityGroups]: 'sg-0c3',
      [ENV.defaultAssignPublicIp]: 'true',
      // ownerId team-a: its own log groups (two reconcilers may share a cluster).
      [ENV.logGroupPrefix]: '/ecs-reconciler/team-a/',
      [ENV.defaultLagGraceSeconds]: '600',
      [ENV.ownerId]: 'team-a',
      [ENV.dryRun]: 'true',
      [ENV.prune]: 'false',
      [ENV.maxDeletesPerPass]: '2',
      [ENV.apiBudgetFraction]: '0.25',
      [ENV.allowedTaskRoleArns]: ACCOUNT_ROLE,
      [ENV.allowedImageRegistries]: 'public.ecr.aws,123456789012.dkr.ecr.eu-west-1.amazonaws.com',
      [ENV.metricsNamespace]: 'Team/Reconciler',
      NODE_OPTIONS: '--enable-source-maps --max-old-space-size=192',
    });
    expect(text[ENV.specsTable]).toMatch(/^\$\{ReconcilerSpecs[0-9A-F]+\}$/);
    expect(text[ENV.defaultExecutionRoleArn]).toMatch(/^\$\{ReconcilerTaskExecutionRole[0-9A-F]+\.Arn\}$/);
    expect(text[ENV.allowedExecutionRoleArns]).toBe(`${text[ENV.defaultExecutionRoleArn]},${OTHER_EXEC_ROLE}`);
  });

  it('leaves optional lists unset when empty (config.ts reads unset as "any")', () => {
    const { template } = aReconciler(someProps({ defaultSubnets: undefined, defaultSecurityGroups: undefined }));
    const fn = Object.values(template.findResources('AWS::Lambda::Function'))[0];
    const env = fn.Properties.Environment.Variables as Record<string, unknown>;
    for (const name of [ENV.defaultSubnets, ENV.defaultSecurityGroups, ENV.allowedImageRegistries]) {
      expect(env, name).not.toHaveProperty(name);
    }
  });

  it('tells the planner that no task role is allowed when none is allow-listed (IAM agrees)', () => {
    const { template } = aReconciler(someProps({ allowedTaskRoles: undefined }));
    const fn = Object.values(template.findResources('AWS::Lambda::Function'))[0];
    const env = fn.Properties.Environment.Variables as Record<string, unknown>;
    expect(env[ENV.allowedTaskRoleArns]).toBe('NONE');
  });
});

describe('schedule', () => {
  it.each([
    { case: 'default: every minute', schedule: undefined, expression: 'rate(1 minute)' },
    { case: 'every 5 minutes', schedule: Duration.minutes(5), expression: 'rate(5 minutes)' },
  ])('invokes the function: $case', ({ schedule, expression }) => {
    const { template } = aReconciler(someProps({ schedule }));
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: expression,
      State: 'ENABLED',
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^ReconcilerFunction'), 'Arn'] },
          RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 },
        }),
      ],
    });
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      Principal: 'events.amazonaws.com',
    });
  });
});

describe('defaults services need', () => {
  it('creates a task execution role for ECS tasks with the AWS policy and write access to the log groups', () => {
    const { template, reconciler } = aReconciler();
    template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: [
          Match.objectLike({
            Principal: { Service: 'ecs-tasks.amazonaws.com' },
            Condition: Match.objectLike({ StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } }),
          }),
        ],
      },
      ManagedPolicyArns: [Match.objectLike({ 'Fn::Join': ['', Match.arrayWith([':iam::aws:policy/service-role/AmazonECSTaskExecutionRolePolicy'])] })],
    });
    const execStatements = roleStatements(template, reconciler.executionRole as iam.Role);
    const logResources = grants(execStatements)
      .filter((g) => g.action === 'logs:PutLogEvents')
      .map((g) => g.resource);
    expect(logResources).toHaveLength(2);
    expect(logResources.every((r) => /^\$\{ReconcilerTaskLogs\d[0-9A-F]+\.Arn\}$/.test(r))).toBe(true);
  });

  it('creates one log group per managed cluster, named <prefix><cluster>', () => {
    const { template, reconciler } = aReconciler();
    template.hasResourceProperties('AWS::Logs::LogGroup', { LogGroupName: '/ecs-reconciler/web', RetentionInDays: 30 });
    template.hasResourceProperties('AWS::Logs::LogGroup', { LogGroupName: '/ecs-reconciler/jobs', RetentionInDays: 30 });
    expect(Object.keys(reconciler.logGroups).sort()).toEqual(['jobs', 'web']);
  });
});

describe('IAM (least privilege)', () => {
  const unscopable = ['ecs:ListServices', 'ecs:ListTasks', 'ecs:DescribeTaskDefinition', 'ecs:RegisterTaskDefinition'];

  it('grants ECS service writes only on services of the managed clusters', () => {
    const { template, reconciler } = aReconciler();
    const all = grants(functionStatements(template, reconciler));
    for (const action of ['ecs:CreateService', 'ecs:UpdateService', 'ecs:DeleteService', 'ecs:DescribeServices']) {
      const resources = all.filter((g) => g.action === action).map((g) => g.resource).sort();
      expect(resources, action).toEqual([
        'arn:${AWS::Partition}:ecs:${AWS::Region}:${AWS::AccountId}:service/jobs/*',
        'arn:${AWS::Partition}:ecs:${AWS::Region}:${AWS::AccountId}:service/web/*',
      ]);
    }
    const tasks = all.filter((g) => g.action === 'ecs:DescribeTasks').map((g) => g.resource).sort();
    expect(tasks).toEqual([
      'arn:${AWS::Partition}:ecs:${AWS::Region}:${AWS::AccountId}:task/jobs/*',
      'arn:${AWS::Partition}:ecs:${AWS::Region}:${AWS::AccountId}:task/web/*',
    ]);
  });

  it('uses "*" only where ECS supports no resource-level permission, or with an ecs:cluster condition, or to deny', () => {
    const { template, reconciler } = aReconciler();
    const starred = grants(functionStatements(template, reconciler)).filter((g) => g.resource === '*');
    const allows = starred.filter((g) => g.statement.Effect === 'Allow');
    // X-Ray's write actions support no resource-level permission either (tracing on by default).
    // dynamodb:ListStreams (the fast path's stream) has no resource-level permission either.
    expect(allows.filter((g) => !g.statement.Condition).map((g) => g.action).sort()).toEqual([
      'dynamodb:ListStreams',
      'ecs:DescribeTaskDefinition',
      'xray:PutTelemetryRecords',
      'xray:PutTraceSegments',
    ]);
    expect(allows.filter((g) => g.statement.Condition).map((g) => g.action).sort()).toEqual(['ecs:ListServices', 'ecs:ListTasks']);
    for (const g of allows.filter((a) => a.statement.Condition)) {
      expect(Object.keys(g.statement.Condition!.ArnEquals)).toEqual(['ecs:cluster']);
    }
  });

  it('has no action wildcards and no service other than ECS, DynamoDB, IAM PassRole, its own logs, X-Ray and its events queue', () => {
    const { template, reconciler } = aReconciler();
    const actions = grants(functionStatements(template, reconciler)).map((g) => g.action);
    expect(actions.filter((a) => a.includes('*'))).toEqual([]);
    const services = [...new Set(actions.map((a) => a.split(':')[0]))].sort();
    expect(services).toEqual(['dynamodb', 'ecs', 'iam', 'logs', 'sqs', 'xray']);
    expect(actions.filter((a) => a.startsWith('iam:'))).toEqual(['iam:PassRole']);
  });

  it('tags services and task definitions while creating them only with our owner tag', () => {
    const { template, reconciler } = aReconciler();
    const creating = functionStatements(template, reconciler).filter((s) => s.Condition?.StringEquals?.['ecs:CreateAction']);
    expect(creating).toHaveLength(1);
    expect(creating[0].Condition).toEqual({
      StringEquals: { 'ecs:CreateAction': ['CreateService', 'RegisterTaskDefinition'], 'aws:RequestTag/ecs-reconciler:owner': 'ecs-reconciler' },
    });
  });

  describe('the ownership rule, as IAM evaluates the function policy', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Test', { env: { account: '123456789012', region: 'eu-west-1' } });
    const reconciler = new EcsReconciler(stack, 'Reconciler', someProps({ ownerId: 'team-a' }));
    const adopting = new Stack(app, 'Adopting', { env: { account: '123456789012', region: 'eu-west-1' } });
    const adopter = new EcsReconciler(adopting, 'Reconciler', someProps({ ownerId: 'team-a', allowAdoption: true }));
    const statements = functionStatements(Template.fromStack(stack), reconciler) as PolicyStatement[];
    const adoptingStatements = functionStatements(Template.fromStack(adopting), adopter) as PolicyStatement[];
    const arn = (rest: string) => `arn:aws:ecs:eu-west-1:123456789012:${rest}`;
    const OWNER = 'aws:ResourceTag/ecs-reconciler:owner';
    const REQ = 'aws:RequestTag/ecs-reconciler:owner';

    it.each([
      { case: 'UpdateService on our service', action: 'ecs:UpdateService', resource: 'service/web/api', ctx: { [OWNER]: 'team-a' }, is: 'Allow' },
      { case: 'UpdateService on another owner\'s service', action: 'ecs:UpdateService', resource: 'service/web/api', ctx: { [OWNER]: 'team-b' }, is: 'ImplicitDeny' },
      { case: 'UpdateService on an untagged service', action: 'ecs:UpdateService', resource: 'service/web/api', ctx: {}, is: 'ImplicitDeny' },
      { case: 'DeleteService on our service', action: 'ecs:DeleteService', resource: 'service/jobs/x', ctx: { [OWNER]: 'team-a' }, is: 'Allow' },
      { case: 'DeleteService on an untagged service', action: 'ecs:DeleteService', resource: 'service/jobs/x', ctx: {}, is: 'ImplicitDeny' },
      { case: 'UpdateService outside the managed clusters', action: 'ecs:UpdateService', resource: 'service/other/api', ctx: { [OWNER]: 'team-a' }, is: 'ImplicitDeny' },
      { case: 'CreateService with our owner tag', action: 'ecs:CreateService', resource: 'service/web/new', ctx: { [REQ]: 'team-a', 'ecs:task-definition': arn('task-definition/web-new:1') }, is: 'Allow' },
      { case: 'CreateService without the owner tag', action: 'ecs:CreateService', resource: 'service/web/new', ctx: {}, is: 'ImplicitDeny' },
      { case: 'tag at creation', action: 'ecs:TagResource', resource: 'service/web/new', ctx: { 'ecs:CreateAction': 'CreateService', [REQ]: 'team-a' }, is: 'Allow' },
      { case: 'spec tags on our service', action: 'ecs:TagResource', resource: 'service/web/api', ctx: { [OWNER]: 'team-a', 'aws:TagKeys': ['team'] }, is: 'Allow' },
      { case: 'retagging our service for another owner', action: 'ecs:TagResource', resource: 'service/web/api', ctx: { [OWNER]: 'team-a', [REQ]: 'team-b' }, is: 'ExplicitDeny' },
      { case: 'removing the owner tag', action: 'ecs:UntagResource', resource: 'service/web/api', ctx: { [OWNER]: 'team-a', 'aws:TagKeys': ['ecs-reconciler:owner'] }, is: 'ExplicitDeny' },
      { case: 'removing a spec tag of our service', action: 'ecs:UntagResource', resource: 'service/web/api', ctx: { [OWNER]: 'team-a', 'aws:TagKeys': ['team'] }, is: 'Allow' },
      { case: 'adopting an untagged service (adoption off)', action: 'ecs:TagResource', resource: 'service/web/api', ctx: { [REQ]: 'team-a' }, is: 'ImplicitDeny' },
      { case: 'taking another owner\'s service', action: 'ecs:TagResource', resource: 'service/web/api', ctx: { [OWNER]: 'team-b', [REQ]: 'team-a' }, is: 'ImplicitDeny' },
      { case: 'RegisterTaskDefinition of a managed family with our tag', action: 'ecs:RegisterTaskDefinition', resource: 'task-definition/web-api:3', ctx: { [REQ]: 'team-a' }, is: 'Allow' },
      { case: 'RegisterTaskDefinition without our tag', action: 'ecs:RegisterTaskDefinition', resource: 'task-definition/web-api:3', ctx: {}, is: 'ImplicitDeny' },
      { case: 'RegisterTaskDefinition of another family', action: 'ecs:RegisterTaskDefinition', resource: 'task-definition/payments-api:3', ctx: { [REQ]: 'team-a' }, is: 'ImplicitDeny' },
      { case: 'ListServices of a managed cluster', action: 'ecs:ListServices', resource: '*', ctx: { 'ecs:cluster': arn('cluster/web') }, is: 'Allow' },
      { case: 'ListServices of another cluster', action: 'ecs:ListServices', resource: '*', ctx: { 'ecs:cluster': arn('cluster/payments') }, is: 'ImplicitDeny' },
      { case: 'ListTasks of another cluster', action: 'ecs:ListTasks', resource: '*', ctx: { 'ecs:cluster': arn('cluster/payments') }, is: 'ImplicitDeny' },
      { case: 'DescribeClusters of a managed cluster (to name a missing capacity provider)', action: 'ecs:DescribeClusters', resource: arn('cluster/web'), ctx: {}, is: 'Allow' },
      { case: 'DescribeClusters of another cluster', action: 'ecs:DescribeClusters', resource: arn('cluster/payments'), ctx: {}, is: 'ImplicitDeny' },
      { case: 'ListTagsForResource (never called)', action: 'ecs:ListTagsForResource', resource: 'service/web/api', ctx: {}, is: 'ImplicitDeny' },
    ] as { case: string; action: string; resource: string; ctx: Record<string, string | string[]>; is: string }[])('$case: $is', ({ action, resource, ctx, is }) => {
      const request = { action, resource: resource === '*' || resource.startsWith('arn:') ? resource : arn(resource), context: ctx };
      expect(evaluate(statements, request)).toBe(is);
    });

    it('with allowAdoption, tags an untagged service with our owner id, and nothing else', () => {
      const untagged = { action: 'ecs:TagResource', resource: arn('service/web/api') };
      expect(evaluate(adoptingStatements, { ...untagged, context: { [REQ]: 'team-a' } })).toBe('Allow');
      expect(evaluate(adoptingStatements, { ...untagged, context: { [REQ]: 'team-b' } })).toBe('ExplicitDeny');
      expect(evaluate(adoptingStatements, { ...untagged, context: { [OWNER]: 'team-b', [REQ]: 'team-a' } })).toBe('ImplicitDeny');
      expect(evaluate(adoptingStatements, { ...untagged, context: { 'aws:TagKeys': ['team'] } })).toBe('ImplicitDeny');
    });

    it('tells the function whether adoption is allowed (ALLOW_ADOPTION)', () => {
      const env = (s: Stack) => Object.values(Template.fromStack(s).findResources('AWS::Lambda::Function'))[0].Properties.Environment.Variables;
      expect(env(stack)[ENV.allowAdoption]).toBe('false');
      expect(env(adopting)[ENV.allowAdoption]).toBe('true');
    });

    it('uses only actions and condition keys the Service Authorization Reference defines for them', () => {
      const reference = JSON.parse(readFileSync(new URL('../fixtures/iam/ecs-service-authorization.json', import.meta.url), 'utf8')) as {
        actions: Record<string, { resourceTypes: string[]; conditionKeys: string[] }>;
      };
      const generic = (k: string) => k.replace(/^(aws|ecs):(RequestTag|ResourceTag)\/.*$/, '$1:$2/${TagKey}');
      for (const s of adoptingStatements) {
        for (const action of asList(s.Action as string | string[]).filter((a) => a.startsWith('ecs:'))) {
          const ref = reference.actions[action.slice(4)];
          expect(ref, `${action} is in the reference`).toBeDefined();
          if (asList(s.Resource as unknown).some((r) => flat(r) === '*') && s.Effect === 'Allow') {
            const scopedByCondition = Object.values(s.Condition ?? {}).some((c) => 'ecs:cluster' in c);
            expect(ref.resourceTypes.includes('') || scopedByCondition, `${action} on "*"`).toBe(true);
          }
          for (const key of Object.values(s.Condition ?? {}).flatMap((c) => Object.keys(c))) {
            expect(ref.conditionKeys, `${action} supports ${key}`).toContain(generic(key));
          }
        }
      }
    });
  });

  it('passes only the allow-listed roles and the default execution role, only to ECS tasks', () => {
    // Act
    const { template, reconciler } = aReconciler(
      someProps({ allowedTaskRoles: [ACCOUNT_ROLE], allowedExecutionRoles: [OTHER_EXEC_ROLE] }),
    );
    // Assess
    const pass = functionStatements(template, reconciler).filter((s) => asList(s.Action).includes('iam:PassRole'));
    expect(pass).toHaveLength(1);
    expect(pass[0].Condition).toEqual({ StringEquals: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' } });
    expect(asList(pass[0].Resource).map((v) => flat(v)).sort()).toEqual(
      [ACCOUNT_ROLE, OTHER_EXEC_ROLE, expect.stringMatching(/^\$\{ReconcilerTaskExecutionRole[0-9A-F]+\.Arn\}$/)].sort(),
    );
  });

  it('uses only item actions on the spec table ARN, and only Scan and BatchWriteItem on the cache table', () => {
    const { template, reconciler } = aReconciler();
    const dynamo = grants(functionStatements(template, reconciler)).filter((g) => g.action.startsWith('dynamodb:'));
    const on = (table: RegExp) => dynamo.filter((g) => table.test(g.resource)).map((g) => g.action).sort();
    expect(on(/^\$\{ReconcilerSpecs[0-9A-F]+\.Arn\}$/)).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
      'dynamodb:Scan',
      'dynamodb:UpdateItem',
    ]);
    expect(on(/^\$\{ReconcilerTaskDefinitionCache[0-9A-F]+\.Arn\}$/)).toEqual(['dynamodb:BatchWriteItem', 'dynamodb:Scan']);
    // The fast path: the spec table's stream, read by Lambda's event source mapping.
    expect(on(/^\$\{ReconcilerSpecs[0-9A-F]+\.StreamArn\}$/)).toEqual(['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator']);
    expect(on(/^\*$/)).toEqual(['dynamodb:ListStreams']);
    expect(dynamo).toHaveLength(13);
  });

  it('creates the task definition cache table with a TTL, destroyed with the stack, and names it to the function', () => {
    const { template } = aReconciler();
    template.hasResource('AWS::DynamoDB::Table', {
      Properties: Match.objectLike({ KeySchema: [{ AttributeName: 'arn', KeyType: 'HASH' }], TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true } }),
      DeletionPolicy: 'Delete',
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ TASK_DEFINITION_CACHE_TABLE: { Ref: Match.stringLikeRegexp('^ReconcilerTaskDefinitionCache') } }) },
    });
  });

  it('enables TTL on the spec table for the spec history items', () => {
    const { template } = aReconciler();
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: 'cluster', KeyType: 'HASH' },
        { AttributeName: 'service', KeyType: 'RANGE' },
      ],
      TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true },
    });
  });

  it('writes logs only to its own log group', () => {
    const { template, reconciler } = aReconciler();
    const logs = grants(functionStatements(template, reconciler)).filter((g) => g.action.startsWith('logs:'));
    expect(logs.map((g) => g.action).sort()).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents']);
    expect(new Set(logs.map((g) => g.resource))).toEqual(new Set([expect.stringMatching(/^\$\{ReconcilerFunctionLogs[0-9A-F]+\.Arn\}$/)]));
  });

  it('has no managed policies on the function role', () => {
    const { template } = aReconciler();
    template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: { Statement: [Match.objectLike({ Principal: { Service: 'lambda.amazonaws.com' } })] },
      ManagedPolicyArns: Match.absent(),
    });
  });
});

describe('alarms', () => {
  it('deploys every definition of lambda/core/alarms.ts with its threshold, periods, statistic and missing-data treatment', () => {
    // Prepare
    const { template } = aReconciler();
    const defs = alarmDefinitions({ namespace: 'EcsReconciler', defaultLagGraceSeconds: 300, scheduleMinutes: 1 });
    // Assess
    // Besides these, one alarm per dead-letter queue (test/cdk/queues.test.ts).
    const reconcilerAlarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')).filter((a) => a.Properties.Namespace !== 'AWS/SQS');
    expect(reconcilerAlarms).toHaveLength(defs.length);
    for (const def of defs) {
      const alarm = alarmResource(template, def);
      expect(alarm, def.id).toMatchObject({
        Threshold: def.threshold,
        EvaluationPeriods: def.evaluationPeriods,
        DatapointsToAlarm: def.datapointsToAlarm,
        ComparisonOperator: def.comparisonOperator,
        TreatMissingData: def.treatMissingData,
      });
      if (def.source.kind === 'metricsInsights') {
        expect(alarm.Metrics, def.id).toEqual([expect.objectContaining({ Expression: def.source.query, Period: def.periodSeconds, ReturnData: true })]);
      } else {
        expect(alarm, def.id).toMatchObject({
          Namespace: def.source.namespace,
          MetricName: def.source.metricName,
          Statistic: def.source.statistic,
          Period: def.periodSeconds,
        });
      }
    }
  });

  it('per-service lag is a Metrics Insights query over TaskLag grouped by Cluster and Service, honouring the default grace', () => {
    const { template } = aReconciler(someProps({ defaultLagGrace: 600, metricsNamespace: 'Team/Ns' }));
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Metrics: [
        {
          Id: Match.anyValue(),
          Expression: 'SELECT MAX(TaskLag) FROM SCHEMA("Team/Ns", Cluster, Service) GROUP BY Cluster, Service ORDER BY MAX() DESC',
          Period: 60,
          Label: Match.anyValue(),
          ReturnData: true,
        },
      ],
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 10,
      DatapointsToAlarm: 10,
      TreatMissingData: 'notBreaching',
    });
  });

  it.each([
    { case: 'heartbeat: PassSucceeded below 1, missing is breaching', metric: 'PassSucceeded', props: { Statistic: 'Sum', Threshold: 1, ComparisonOperator: 'LessThanThreshold', TreatMissingData: 'breaching', EvaluationPeriods: 3 } },
    { case: 'services lagging beyond grace > 0', metric: 'ServicesLaggingBeyondGrace', props: { Statistic: 'Maximum', Threshold: 0, ComparisonOperator: 'GreaterThanThreshold', EvaluationPeriods: 1 } },
    { case: 'failed actions persisting', metric: 'ActionsFailed', props: { Statistic: 'Sum', Threshold: 0, ComparisonOperator: 'GreaterThanThreshold', EvaluationPeriods: 5, DatapointsToAlarm: 5 } },
    { case: 'invalid specs present', metric: 'InvalidSpecs', props: { Statistic: 'Maximum', Threshold: 0, ComparisonOperator: 'GreaterThanThreshold' } },
    { case: 'function errors', metric: 'Errors', props: { Namespace: 'AWS/Lambda', Statistic: 'Sum', Threshold: 0, Dimensions: [{ Name: 'FunctionName', Value: Match.anyValue() }] } },
    { case: 'function throttles', metric: 'Throttles', props: { Namespace: 'AWS/Lambda', Statistic: 'Sum', Threshold: 0, Dimensions: [{ Name: 'FunctionName', Value: Match.anyValue() }] } },
  ])('alarm: $case', ({ metric, props }) => {
    const { template } = aReconciler();
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: metric, Period: 60, ...props });
  });

  it('periods follow the schedule', () => {
    const { template } = aReconciler(someProps({ schedule: Duration.minutes(5) }));
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties);
    const periods = alarms.map((a) => a.Period ?? a.Metrics[0].Period);
    expect(new Set(periods)).toEqual(new Set([300]));
  });

  it('notifies a new topic on ALARM and OK, with the email subscribed', () => {
    // Act
    const { template } = aReconciler(someProps({ alarmEmail: 'ops@example.com' }));
    // Assess
    const topicId = Object.keys(template.findResources('AWS::SNS::Topic'))[0];
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: { Ref: topicId } });
    for (const alarm of Object.values(template.findResources('AWS::CloudWatch::Alarm'))) {
      expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topicId }]);
      expect(alarm.Properties.OKActions).toEqual([{ Ref: topicId }]);
    }
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
  });

  describe('the topic policy lets the alarms publish, over TLS only', () => {
    // A concrete environment, so the alarm ARNs the policy is checked against are plain text.
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Test', { env: { account: '123456789012', region: 'eu-west-1' } });
    new EcsReconciler(stack, 'Reconciler', someProps({ alarmEmail: 'ops@example.com' }));
    const template = Template.fromStack(stack);
    const topicId = Object.keys(template.findResources('AWS::SNS::Topic'))[0];
    const policies = Object.values(template.findResources('AWS::SNS::TopicPolicy'));
    const statements = policies.flatMap((p) => p.Properties.PolicyDocument.Statement as PolicyStatement[]);
    const alarmIds = Object.keys(template.findResources('AWS::CloudWatch::Alarm'));
    const publish = (alarmArn: string, account: string, secure: boolean) =>
      evaluate(statements, {
        action: 'SNS:Publish',
        resource: `\${${topicId}}`,
        servicePrincipal: 'cloudwatch.amazonaws.com',
        context: { 'aws:SourceArn': alarmArn, 'aws:SourceAccount': account, 'aws:SecureTransport': String(secure) },
      });

    it('has one policy, on the reconciler topic', () => {
      expect(policies).toHaveLength(1);
      expect(policies[0].Properties.Topics).toEqual([{ Ref: topicId }]);
      expect(alarmIds.length).toBeGreaterThan(5);
    });

    it.each(alarmIds)('alarm %s may publish', (alarmId) => {
      // CloudFormation names each alarm; any name in this account and Region is covered.
      expect(publish(`arn:aws:cloudwatch:eu-west-1:123456789012:alarm:Test-Reconciler${alarmId}-ABC123`, '123456789012', true)).toBe('Allow');
    });

    it.each([
      { case: 'another account\'s alarm', arn: 'arn:aws:cloudwatch:eu-west-1:999999999999:alarm:x', account: '999999999999', secure: true, is: 'ImplicitDeny' },
      { case: 'an alarm in another Region', arn: 'arn:aws:cloudwatch:us-east-1:123456789012:alarm:x', account: '123456789012', secure: true, is: 'ImplicitDeny' },
      { case: 'without TLS', arn: 'arn:aws:cloudwatch:eu-west-1:123456789012:alarm:x', account: '123456789012', secure: false, is: 'ExplicitDeny' },
    ])('refuses $case', ({ arn, account, secure, is }) => {
      expect(publish(arn, account, secure)).toBe(is);
    });

    it('lets no other service publish', () => {
      const other = evaluate(statements, {
        action: 'SNS:Publish',
        resource: `\${${topicId}}`,
        servicePrincipal: 'events.amazonaws.com',
        context: { 'aws:SourceAccount': '123456789012', 'aws:SecureTransport': 'true' },
      });
      expect(other).toBe('ImplicitDeny');
    });
  });

  it('leaves a topic the user passes in alone (no policy, no subscription)', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Test');
    const own = new sns.Topic(stack, 'Own');
    new EcsReconciler(stack, 'Reconciler', someProps({ alarmTopic: own }));
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::SNS::TopicPolicy', 0);
    template.resourceCountIs('AWS::SNS::Subscription', 0);
    template.resourceCountIs('AWS::SNS::Topic', 1);
    expect(Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('notify'))).toEqual([]);
  });

  it('warns at synth when the alarms notify nobody (no alarmEmail, no alarmTopic)', () => {
    const { stack } = aReconciler(someProps());
    Annotations.fromStack(stack).hasWarning('*', Match.stringLikeRegexp('Neither alarmEmail nor alarmTopic'));
    const withEmail = aReconciler(someProps({ alarmEmail: 'ops@example.com', ...CLOSED_LISTS }));
    expect(Annotations.fromStack(withEmail.stack).findWarning('*', Match.anyValue())).toEqual([]);
  });

  it('pass duration near the function timeout: PassDuration Maximum at 70% of the 50 s timeout, 2 of 3', () => {
    const { template } = aReconciler();
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'PassDuration',
      Statistic: 'Maximum',
      Threshold: 35_000,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
    });
  });

  it('async events dropped: AWS/Lambda AsyncEventsDropped of the function > 0', () => {
    const { template } = aReconciler();
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: 'AsyncEventsDropped',
      Statistic: 'Sum',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
      Dimensions: [{ Name: 'FunctionName', Value: Match.anyValue() }],
    });
  });

  it('notifies a given topic and creates none', () => {
    // Prepare
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Test');
    const arn = 'arn:aws:sns:eu-west-1:123456789012:oncall';
    // Act
    const reconciler = new EcsReconciler(stack, 'Reconciler', someProps({ alarmTopic: sns.Topic.fromTopicArn(stack, 'T', arn) }));
    const template = Template.fromStack(stack);
    // Assess
    template.resourceCountIs('AWS::SNS::Topic', 0);
    for (const alarm of Object.values(template.findResources('AWS::CloudWatch::Alarm'))) {
      expect(alarm.Properties.AlarmActions).toEqual([arn]);
      expect(alarm.Properties.OKActions).toEqual([arn]);
    }
    expect(reconciler.topic?.topicArn).toBe(arn);
  });

  it('warns when the default grace exceeds what a Metrics Insights alarm can evaluate', () => {
    const { stack } = aReconciler(someProps({ defaultLagGrace: 86_400 }));
    Annotations.fromStack(stack).hasWarning('*', Match.stringLikeRegexp('3 hours'));
  });
});

describe('dashboard', () => {
  it('shows lag per service, desired vs running, pass duration, actions, invalid specs and alarm states', () => {
    const { template } = aReconciler();
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    const body = flat(Object.values(template.findResources('AWS::CloudWatch::Dashboard'))[0].Properties.DashboardBody);
    for (const fragment of [
      'SELECT MAX(TaskLag) FROM SCHEMA(\\"EcsReconciler\\", Cluster, Service)',
      'SELECT MAX(DesiredTaskCount) FROM SCHEMA(\\"ECS/ContainerInsights\\", ClusterName, ServiceName)',
      'SELECT MAX(RunningTaskCount)',
      '"PassDuration"',
      '"ActionsApplied"',
      '"ActionsFailed"',
      '"InvalidSpecs"',
      '"type":"alarm"',
    ]) {
      expect(body, fragment).toContain(fragment);
    }
    expect(body.match(/ReconcilerPassHeartbeatAlarm[0-9A-F]+\.Arn/g)).toHaveLength(1);
  });
});

describe('quick start (createCluster)', () => {
  it('creates a VPC without NAT, a Fargate cluster with both capacity providers, and manages it', () => {
    // Act
    const { template, reconciler } = aReconciler({ createCluster: true });
    // Assess
    template.resourceCountIs('AWS::EC2::VPC', 1);
    template.resourceCountIs('AWS::EC2::NatGateway', 0);
    template.hasResourceProperties('AWS::ECS::ClusterCapacityProviderAssociations', {
      CapacityProviders: ['FARGATE', 'FARGATE_SPOT'],
    });
    template.hasResourceProperties('AWS::ECS::Cluster', {
      ClusterSettings: [{ Name: 'containerInsights', Value: 'enabled' }],
    });
    const env = Object.values(template.findResources('AWS::Lambda::Function'))[0].Properties.Environment.Variables;
    expect(flat(env[ENV.managedClusters])).toMatch(/^\$\{ReconcilerCluster[0-9A-F]+\}$/);
    expect(flat(env[ENV.defaultSubnets])).toMatch(/^\$\{ReconcilerVpcpublicSubnet1Subnet[0-9A-F]+\},\$\{ReconcilerVpcpublicSubnet2Subnet[0-9A-F]+\}$/);
    expect(flat(env[ENV.defaultSecurityGroups])).toMatch(/^\$\{ReconcilerTaskSecurityGroup[0-9A-F]+\.GroupId\}$/);
    expect(env[ENV.defaultAssignPublicIp]).toBe('true');
    expect(reconciler.cluster).toBeDefined();
    expect(reconciler.vpc).toBeDefined();
  });

  it('adds the quick-start cluster to the clusters given', () => {
    const { template } = aReconciler({ createCluster: true, clusters: ['web'] });
    const env = Object.values(template.findResources('AWS::Lambda::Function'))[0].Properties.Environment.Variables;
    expect(flat(env[ENV.managedClusters])).toMatch(/^\$\{ReconcilerCluster[0-9A-F]+\},web$/);
  });
});

describe('exposed resources', () => {
  it('exposes table, function, topic, alarms, dashboard, execution role and log groups', () => {
    const { reconciler, stack } = aReconciler();
    expect(stack.resolve(reconciler.table.tableName)).toEqual({ Ref: expect.stringMatching(/^ReconcilerSpecs/) });
    expect(reconciler.function.runtime.name).toMatch(/^nodejs\d+\.x$/);
    expect(Object.keys(reconciler.alarms).sort()).toEqual(alarmDefinitions().map((d) => d.id).sort());
    expect(reconciler.dashboard).toBeDefined();
    expect(reconciler.topic).toBeDefined();
    expect(stack.resolve(reconciler.executionRole.roleArn)).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^ReconcilerTaskExecutionRole/), 'Arn'] });
    expect(Object.keys(reconciler.logGroups)).toEqual(['web', 'jobs']);
  });

  it('accepts ICluster, ISubnet and IRole values as well as names, ids and ARNs', () => {
    // Prepare
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Test');
    const cluster = ecs.Cluster.fromClusterArn(stack, 'C', 'arn:aws:ecs:eu-west-1:123456789012:cluster/imported');
    const subnet = ec2.Subnet.fromSubnetId(stack, 'S', 'subnet-0ff');
    const role = iam.Role.fromRoleArn(stack, 'R', ACCOUNT_ROLE);
    // Act
    new EcsReconciler(stack, 'Reconciler', {
      clusters: [cluster, 'web'],
      defaultSubnets: [subnet, 'subnet-0a1'],
      allowedTaskRoles: [role],
    });
    // Assess
    const env = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function'))[0].Properties.Environment.Variables;
    expect(env[ENV.managedClusters]).toBe('imported,web');
    expect(env[ENV.defaultSubnets]).toBe('subnet-0ff,subnet-0a1');
    expect(env[ENV.allowedTaskRoleArns]).toBe(ACCOUNT_ROLE);
  });

  it('emits no errors and no warnings for a valid configuration', () => {
    const { stack } = aReconciler(someProps({ alarmEmail: 'ops@example.com', ...CLOSED_LISTS }));
    const annotations = Annotations.fromStack(stack);
    expect(annotations.findError('*', Match.anyValue())).toEqual([]);
    expect(annotations.findWarning('*', Match.anyValue())).toEqual([]);
  });
});

describe('constructor validation', () => {
  it.each<{ case: string; props: EcsReconcilerProps; says: string }>([
    { case: 'no cluster', props: { defaultSubnets: ['subnet-0a1'] }, says: 'Give at least one managed cluster' },
    { case: 'cluster ARN instead of name', props: someProps({ clusters: ['arn:aws:ecs:eu-west-1:123456789012:cluster/web'] }), says: 'is not an ECS cluster name' },
    { case: 'duplicate cluster', props: someProps({ clusters: ['web', 'web'] }), says: 'listed twice' },
    { case: 'bad subnet id', props: someProps({ defaultSubnets: ['sub-1'] }), says: 'is not a subnet id' },
    { case: 'bad security group id', props: someProps({ defaultSecurityGroups: ['default'] }), says: 'is not a security group id' },
    { case: 'wildcard task role', props: someProps({ allowedTaskRoles: ['arn:aws:iam::123456789012:role/*'] }), says: 'is not an IAM role ARN' },
    { case: 'execution role name only', props: someProps({ allowedExecutionRoles: ['exec'] }), says: 'is not an IAM role ARN' },
    { case: 'registry with scheme', props: someProps({ allowedImageRegistries: ['https://public.ecr.aws'] }), says: 'is not a registry host' },
    { case: 'schedule in seconds', props: someProps({ schedule: Duration.seconds(90) }), says: 'whole minutes from 1 to 60' },
    { case: 'schedule too long', props: someProps({ schedule: Duration.hours(2) }), says: 'whole minutes from 1 to 60' },
    { case: 'negative grace', props: someProps({ defaultLagGrace: -1 }), says: 'defaultLagGrace' },
    { case: 'grace beyond a day', props: someProps({ defaultLagGrace: Duration.hours(25) }), says: 'defaultLagGrace' },
    { case: 'topic and email', props: someProps({ alarmTopic: {} as sns.ITopic, alarmEmail: 'ops@example.com' }), says: 'either `alarmTopic` or `alarmEmail`' },
    { case: 'bad email', props: someProps({ alarmEmail: 'ops' }), says: 'is not an email address' },
    { case: 'AWS namespace', props: someProps({ metricsNamespace: 'AWS/ECS' }), says: 'not a custom CloudWatch namespace' },
    { case: 'quote in namespace', props: someProps({ metricsNamespace: 'a"b' }), says: 'not a custom CloudWatch namespace' },
    { case: 'negative deletes', props: someProps({ maxDeletesPerPass: -1 }), says: 'maxDeletesPerPass' },
    { case: 'fractional deletes', props: someProps({ maxDeletesPerPass: 1.5 }), says: 'maxDeletesPerPass' },
    { case: 'zero budget', props: someProps({ apiBudgetFraction: 0 }), says: 'apiBudgetFraction' },
    { case: 'budget above 1', props: someProps({ apiBudgetFraction: 1.5 }), says: 'apiBudgetFraction' },
    { case: 'owner id with !', props: someProps({ ownerId: 'team!' }), says: 'ownerId' },
    { case: 'memory too small', props: someProps({ memorySize: 64 }), says: 'memorySize' },
    { case: 'fractional fleet size', props: someProps({ fleetSize: 1.5 }), says: 'fleetSize' },
    { case: 'empty fleet', props: someProps({ fleetSize: 0 }), says: 'fleetSize' },
    { case: 'quick start without public IPs', props: { createCluster: true, assignPublicIp: false }, says: 'need public IPs to pull images' },
    { case: 'bad log group prefix', props: someProps({ logGroupPrefix: 'a b' }), says: 'logGroupPrefix' },
  ])('rejects $case with a sentence saying what to change', ({ props, says }) => {
    // Act
    let error: unknown;
    try {
      aReconciler(props);
    } catch (e) {
      error = e;
    }
    // Assess
    expect(error).toBeInstanceOf(EcsReconcilerPropsError);
    expect((error as Error).message).toContain(says);
    expect((error as Error).message).toMatch(/\.$/);
  });

  it('lists every problem at once', () => {
    expect(() => aReconciler(someProps({ maxDeletesPerPass: -1, apiBudgetFraction: 2, ownerId: '!' }))).toThrow(
      /maxDeletesPerPass.*apiBudgetFraction.*ownerId/,
    );
  });
});

describe('observeOnlyClusters', () => {
  const env = (s: Stack) => Object.values(Template.fromStack(s).findResources('AWS::Lambda::Function'))[0].Properties.Environment.Variables;

  it('tells the function its observe-only clusters (OBSERVE_ONLY_CLUSTERS), and sets nothing without them', () => {
    const observing = aReconciler(someProps({ clusters: ['web', 'legacy'], observeOnlyClusters: ['legacy'] }));
    const plain = aReconciler();
    expect(env(observing.stack)[ENV.observeOnlyClusters]).toBe('legacy');
    expect(env(plain.stack)[ENV.observeOnlyClusters]).toBeUndefined();
  });
});

describe('observeOnlyClusters outside the clusters', () => {
  it('is refused at synth, naming the cluster', () => {
    expect(() => aReconciler(someProps({ observeOnlyClusters: ['elsewhere'] }))).toThrow(/observeOnlyClusters names elsewhere, which is not among the reconciler's clusters \(web, jobs\)/);
  });
});

/**
 * The construct as a library, one requirement per test: opt-in
 * concurrency reservation, X-Ray tracing on by default with one switch, log groups that do not
 * collide between two reconcilers on one cluster, an existing table or table props, an existing
 * execution role, Lambda overrides, optional alarms and dashboard with overrides, grant and metric
 * methods, and a clear error for clusters of another account or Region.
 */
import { App, CfnParameter, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { alarmDefinitions } from '../../lambda/core/alarms';
import { DEFAULT_PLAN_OPTIONS } from '../../lambda/core/options';
import { EcsReconciler, EcsReconcilerPropsError, effectiveLogGroupPrefix, type EcsReconcilerProps } from '../../lib/ecs-reconciler';
import { heapLimitMiB, MEMORY_BY_FLEET } from '../../lib/function-memory';
import { reconcilerPropsFromContext } from '../../lib/reconciler-stack';
import { flat } from '../support/iam-eval';

const ENV_EU = { account: '123456789012', region: 'eu-west-1' };

function build(
  props: Partial<EcsReconcilerProps> = {},
  setup?: (stack: Stack) => Partial<EcsReconcilerProps>,
  after?: (reconciler: EcsReconciler, stack: Stack) => void,
) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Test', { env: ENV_EU });
  const reconciler = new EcsReconciler(stack, 'Reconciler', {
    clusters: ['web'],
    defaultSubnets: ['subnet-0a1'],
    alarmEmail: 'ops@example.com',
    ...props,
    ...setup?.(stack),
  });
  after?.(reconciler, stack);
  return { app, stack, reconciler, template: Template.fromStack(stack) };
}
const fnProps = (template: Template) => Object.values(template.findResources('AWS::Lambda::Function'))[0].Properties;
const fnEnv = (template: Template) =>
  Object.fromEntries(Object.entries(fnProps(template).Environment.Variables as Record<string, unknown>).map(([k, v]) => [k, flat(v)]));
const policyActions = (template: Template) =>
  Object.values(template.findResources('AWS::IAM::Policy')).flatMap((p) =>
    (p.Properties.PolicyDocument.Statement as { Action: string | string[] }[]).flatMap((st) => (Array.isArray(st.Action) ? st.Action : [st.Action])),
  );

describe('concurrency (part 4)', () => {
  it('reserves no concurrency by default (the lease prevents overlapping passes)', () => {
    expect(fnProps(build().template).ReservedConcurrentExecutions).toBeUndefined();
  });
  it('reserves one with reserveConcurrency (and -c reserveConcurrency=true)', () => {
    expect(fnProps(build({ reserveConcurrency: true }).template).ReservedConcurrentExecutions).toBe(1);
    const ctx: Record<string, string> = { createCluster: 'true', reserveConcurrency: 'true' };
    expect(reconcilerPropsFromContext((k) => ctx[k]).reserveConcurrency).toBe(true);
  });
  it('warns that the reservation caps the fast paths, and only when a fast path is on', () => {
    const warnings = (props: Partial<EcsReconcilerProps>) =>
      Annotations.fromStack(build(props).stack).findWarning('*', Match.stringLikeRegexp('FastPathThrottledByReservation'));
    expect(warnings({ reserveConcurrency: true })).toHaveLength(1);
    expect(warnings({ reserveConcurrency: true, fastPath: false })).toHaveLength(1);
    expect(warnings({ reserveConcurrency: true, fastPath: false, eventsFastPath: false })).toEqual([]);
    expect(warnings({})).toEqual([]);
  });
});

describe('tracing (part 4)', () => {
  it('is active by default: X-Ray tracing, Powertools Tracer on, X-Ray write actions granted', () => {
    const { template } = build();
    expect(fnProps(template).TracingConfig).toEqual({ Mode: 'Active' });
    expect(fnEnv(template).POWERTOOLS_TRACE_ENABLED).toBe('true');
    expect(policyActions(template)).toEqual(expect.arrayContaining(['xray:PutTraceSegments', 'xray:PutTelemetryRecords']));
  });
  it('one switch turns it off: no tracing config, Tracer off, no X-Ray permission', () => {
    const { template } = build({ tracing: lambda.Tracing.DISABLED });
    expect(fnProps(template).TracingConfig).toBeUndefined();
    expect(fnEnv(template).POWERTOOLS_TRACE_ENABLED).toBe('false');
    expect(policyActions(template).filter((a) => a.startsWith('xray:'))).toEqual([]);
    const ctx: Record<string, string> = { createCluster: 'true', tracing: 'false' };
    expect(reconcilerPropsFromContext((k) => ctx[k]).tracing).toBe(lambda.Tracing.DISABLED);
  });
});

describe('log groups of two reconcilers sharing a cluster (part 4)', () => {
  /** Builds one stack per reconciler in one app, all managing cluster `web`; returns the app. */
  function reconcilersSharingWeb(props: Partial<EcsReconcilerProps>[]): App {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    props.forEach((p, i) => {
      const stack = new Stack(app, `Stack${i}`, { env: ENV_EU });
      new EcsReconciler(stack, 'Reconciler', { clusters: ['web'], defaultSubnets: ['subnet-0a1'], alarmEmail: 'ops@example.com', ...p });
    });
    return app;
  }
  const taskLogGroups = (t: Template) =>
    Object.values(t.findResources('AWS::Logs::LogGroup')).map((g) => g.Properties.LogGroupName).filter((n) => n !== undefined);

  it('differ by owner id, in the template and in what task definitions log to', () => {
    // Prepare
    const app = reconcilersSharingWeb([{ ownerId: 'team-a' }, { ownerId: 'team b@x' }]);
    // Act
    const templates = ['Stack0', 'Stack1'].map((id) => Template.fromStack(app.node.findChild(id) as Stack));
    // Assess
    expect(templates.flatMap(taskLogGroups)).toEqual(['/ecs-reconciler/team-a/web', '/ecs-reconciler/team#20b#40x/web']);
    expect(templates.map((t) => fnEnv(t).LOG_GROUP_PREFIX)).toEqual(['/ecs-reconciler/team-a/', '/ecs-reconciler/team#20b#40x/']);
  });

  it('keep /ecs-reconciler/<cluster> with the default owner id (existing deployments keep their log groups)', () => {
    const names = Object.values(build().template.findResources('AWS::Logs::LogGroup')).map((g) => g.Properties.LogGroupName);
    expect(names).toContain('/ecs-reconciler/web');
  });

  it('differ with one explicit prefix, also for owner ids a character-replacing mapping would merge', () => {
    // Prepare: `team b`, `team-b`, `team@b`, `team/b` all became `team-b` before; plus the default owner.
    const owners = ['team b', 'team-b', 'team@b', 'team/b', undefined];
    const app = reconcilersSharingWeb(owners.map((ownerId) => ({ logGroupPrefix: '/shared/', ...(ownerId ? { ownerId } : {}) })));
    // Act
    const names = owners.flatMap((_, i) => taskLogGroups(Template.fromStack(app.node.findChild(`Stack${i}`) as Stack)));
    // Assess
    expect(names).toEqual(['/shared/team#20b/web', '/shared/team-b/web', '/shared/team#40b/web', '/shared/team#2Fb/web', '/shared/web']);
  });

  it('never collide with one prefix, for any two owner ids and clusters (property)', () => {
    const ownerChar = fc.constantFrom(...'ab0-_.+=:/@ '.split(''));
    const ownerId = fc.string({ unit: ownerChar, minLength: 1, maxLength: 6 });
    const cluster = fc.string({ unit: fc.constantFrom(...'ab0-_'.split('')), minLength: 1, maxLength: 4 });
    const owner = fc.oneof(ownerId, fc.constant(DEFAULT_PLAN_OPTIONS.ownerId));
    fc.assert(
      fc.property(owner, cluster, owner, cluster, (o1, c1, o2, c2) => {
        fc.pre(o1 !== o2 || c1 !== c2);
        const a = `${effectiveLogGroupPrefix('/p/', o1)}${c1}`;
        const b = `${effectiveLogGroupPrefix('/p/', o2)}${c2}`;
        expect(a).not.toBe(b);
        expect(a).toMatch(/^[A-Za-z0-9_\-/.#]+$/);
      }),
      { numRuns: 2_000 },
    );
  });

  it('refuses a token owner id (the log group names must be known at synth)', () => {
    expect(() => build({}, (s) => ({ ownerId: new CfnParameter(s, 'Owner').valueAsString }))).toThrow(/`ownerId` must be a literal string, not a token/);
  });
});

/** The spec tables of a template (partition key `cluster`); the task definition cache table (key `arn`) is not one. */
function specTableCount(template: Template): number {
  return Object.keys(
    template.findResources('AWS::DynamoDB::Table', {
      Properties: { KeySchema: Match.arrayWith([{ AttributeName: 'cluster', KeyType: 'HASH' }]) },
    }),
  ).length;
}

describe('spec table (part 6)', () => {
  it('existingTable: no table created, the function uses that one', () => {
    // Act
    const { template, reconciler, stack } = build({}, (s) => ({
      existingTable: dynamodb.Table.fromTableName(s, 'Imported', 'team-specs'),
    }));
    // Assess
    expect(specTableCount(template)).toBe(0);
    expect(fnEnv(template).SPECS_TABLE).toBe('team-specs');
    expect(stack.resolve(reconciler.table.tableName)).toBe('team-specs');
  });
  it('existingTable created in the app with a customer key: its key is granted to the function', () => {
    const { template } = build({}, (s) => {
      const key = new kms.Key(s, 'Key', { enableKeyRotation: true });
      return {
        existingTable: new dynamodb.Table(s, 'Mine', {
          partitionKey: { name: 'cluster', type: dynamodb.AttributeType.STRING },
          sortKey: { name: 'service', type: dynamodb.AttributeType.STRING },
          encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED,
          encryptionKey: key,
        }),
      };
    });
    expect(specTableCount(template)).toBe(1);
    expect(policyActions(template)).toEqual(expect.arrayContaining(['kms:Decrypt', 'kms:GenerateDataKey']));
  });
  it('existingTable with other keys is refused with a sentence', () => {
    expect(() =>
      build({}, (s) => ({ existingTable: new dynamodb.Table(s, 'Wrong', { partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING } }) })),
    ).toThrow(/`existingTable` has keys pk: the spec table needs partition key `cluster` and sort key `service`/);
  });
  it('tableProps override the defaults but never the key schema', () => {
    const { template } = build({ tableProps: { tableName: 'specs-prod', deletionProtection: false, removalPolicy: RemovalPolicy.DESTROY } });
    template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Delete',
      Properties: Match.objectLike({
        TableName: 'specs-prod',
        DeletionProtectionEnabled: false,
        KeySchema: [
          { AttributeName: 'cluster', KeyType: 'HASH' },
          { AttributeName: 'service', KeyType: 'RANGE' },
        ],
      }),
    });
  });
  it('refuses existingTable together with tableProps', () => {
    expect(() => build({ tableProps: { tableName: 'x' } }, (s) => ({ existingTable: dynamodb.Table.fromTableName(s, 'I', 'y') }))).toThrow(EcsReconcilerPropsError);
  });
});

describe('execution role (part 6)', () => {
  it('an existing role is the default execution role and is allowed; none is created', () => {
    const arn = 'arn:aws:iam::123456789012:role/app-exec';
    const { template } = build({}, (s) => ({ executionRole: iam.Role.fromRoleArn(s, 'Exec', arn) }));
    const roles = Object.values(template.findResources('AWS::IAM::Role')).map((r) => JSON.stringify(r.Properties.AssumeRolePolicyDocument));
    expect(roles.some((r) => r.includes('ecs-tasks.amazonaws.com'))).toBe(false);
    expect(fnEnv(template).DEFAULT_EXECUTION_ROLE_ARN).toBe(arn);
    expect(fnEnv(template).ALLOWED_EXECUTION_ROLE_ARNS).toBe(arn);
  });
});

describe('function memory by fleet size (peak RSS under 80% of the function memory at the largest fleet of each row)', () => {
  it.each([
    { fleetSize: undefined, memory: 384, heap: 192 },
    { fleetSize: 2_000, memory: 256, heap: 128 },
    { fleetSize: 2_001, memory: 384, heap: 192 },
    { fleetSize: 5_000, memory: 384, heap: 192 },
    { fleetSize: 5_001, memory: 768, heap: 384 },
    { fleetSize: 20_000, memory: 768, heap: 384 },
    { fleetSize: 50_000, memory: 1536, heap: 768 },
  ])('fleetSize $fleetSize: $memory MiB, V8 heap limit $heap MiB', ({ fleetSize, memory, heap }) => {
    const { template } = build(fleetSize === undefined ? {} : { fleetSize });
    expect(fnProps(template)).toMatchObject({ MemorySize: memory });
    expect(fnEnv(template).NODE_OPTIONS).toBe(`--enable-source-maps --max-old-space-size=${heap}`);
  });

  it('an explicit memorySize wins over fleetSize, and the heap limit follows it', () => {
    const { template } = build({ fleetSize: 20_000, memorySize: 640 });
    expect(fnProps(template)).toMatchObject({ MemorySize: 640 });
    expect(fnEnv(template).NODE_OPTIONS).toBe('--enable-source-maps --max-old-space-size=320');
  });

  it('the table the construct uses is the one docs/deploy.md prints', () => {
    const doc = readFileSync(join(dirname(fileURLToPath(import.meta.url)), '../../docs/deploy.md'), 'utf8');
    for (const m of MEMORY_BY_FLEET) {
      const fleet = Number.isFinite(m.upToServices) ? `up to ${m.upToServices.toLocaleString('en-US')}` : 'more';
      expect(doc).toContain(`| ${fleet} | ${m.memorySize} | ${heapLimitMiB(m.memorySize)} |`);
    }
  });
});

describe('Lambda overrides (part 6)', () => {
  it('timeout, memory, tracing and log format', () => {
    const { template, reconciler } = build({ timeout: Duration.seconds(30), memorySize: 1024, tracing: lambda.Tracing.PASS_THROUGH, loggingFormat: lambda.LoggingFormat.JSON });
    expect(fnProps(template)).toMatchObject({ Timeout: 30, MemorySize: 1024, TracingConfig: { Mode: 'PassThrough' }, LoggingConfig: { LogFormat: 'JSON' } });
    // The near-timeout alarm follows the timeout (70% of 30 s).
    const near = reconciler.alarmDefinitions.find((d) => d.id === 'PassDurationNearTimeout');
    expect(near?.threshold).toBe(21_000);
  });
  it.each([
    { timeout: Duration.seconds(5), says: '`timeout` must be whole seconds from 10' },
    { timeout: Duration.minutes(2), says: "to the schedule's interval (60 s)" },
  ])('refuses timeout $timeout', ({ timeout, says }) => {
    expect(() => build({ timeout })).toThrow(says);
  });
});

describe('alarms and dashboard (part 6)', () => {
  it('createAlarms: false creates no alarm and no topic, and does not warn about notifying nobody', () => {
    const { template, reconciler, stack } = build({ createAlarms: false, alarmEmail: undefined });
    template.resourceCountIs('AWS::CloudWatch::Alarm', 0);
    template.resourceCountIs('AWS::SNS::Topic', 0);
    expect(reconciler.alarms).toEqual({});
    expect(reconciler.topic).toBeUndefined();
    expect(Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('AlarmsNotifyNobody'))).toEqual([]);
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
  });
  it('createDashboard: false creates no dashboard', () => {
    const { template, reconciler } = build({ createDashboard: false });
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 0);
    expect(reconciler.dashboard).toBeUndefined();
  });
  it('alarmOverrides change threshold and periods of one alarm only', () => {
    const { template } = build({ alarmOverrides: { ActionsFailing: { threshold: 3, evaluationPeriods: 10, datapointsToAlarm: 8 } } });
    const byDescription = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties);
    const defaults = alarmDefinitions();
    const failing = byDescription.find((p) => p.AlarmDescription === defaults.find((d) => d.id === 'ActionsFailing')?.description);
    expect(failing).toMatchObject({ Threshold: 3, EvaluationPeriods: 10, DatapointsToAlarm: 8 });
    const invalid = byDescription.find((p) => p.AlarmDescription === defaults.find((d) => d.id === 'InvalidSpecs')?.description);
    expect(invalid?.EvaluationPeriods).toBe(defaults.find((d) => d.id === 'InvalidSpecs')?.evaluationPeriods);
  });
  it('refuses datapointsToAlarm above evaluationPeriods', () => {
    expect(() => build({ alarmOverrides: { InvalidSpecs: { evaluationPeriods: 2, datapointsToAlarm: 3 } } })).toThrow(/cannot exceed evaluationPeriods/);
  });
});

describe('grant and metric methods (part 6)', () => {
  const statementsOf = (template: Template, roleLogicalIdPrefix: string) =>
    Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((p) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref.startsWith(roleLogicalIdPrefix)))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[]);
  const ECS_READS = [
    'ecs:DescribeClusters',
    'ecs:DescribeServiceDeployments',
    'ecs:DescribeServiceRevisions',
    'ecs:DescribeServices',
    'ecs:DescribeTaskDefinition',
    'ecs:DescribeTasks',
    'ecs:ListServiceDeployments',
    'ecs:ListServices',
    'ecs:ListTasks',
  ];
  it('grantSpecRead: read actions on the spec table, and ECS reads (the CLI commands it names are run in test/cli/grants.test.ts)', () => {
    const b = build({}, undefined, (r, stack) => r.grantSpecRead(new iam.Role(stack, 'Reader', { assumedBy: new iam.AccountRootPrincipal() })));
    const statements = statementsOf(b.template, 'Reader');
    expect(statements.flatMap((st) => st.Action).sort()).toEqual(['dynamodb:DescribeTable', 'dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:Scan', ...ECS_READS]);
    expect(JSON.stringify(statements.map((st) => st.Resource))).toContain('ReconcilerSpecs');
  });
  it('grantSpecWrite: read plus PutItem, UpdateItem, DeleteItem, and no ECS write', () => {
    const b = build({}, undefined, (r, stack) => r.grantSpecWrite(new iam.Role(stack, 'Pipeline', { assumedBy: new iam.AccountRootPrincipal() })));
    const actions = statementsOf(b.template, 'Pipeline').flatMap((st) => st.Action);
    expect([...actions].sort()).toEqual([
      'dynamodb:DeleteItem',
      'dynamodb:DescribeTable',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
      'dynamodb:Scan',
      'dynamodb:UpdateItem',
      ...ECS_READS,
    ]);
  });
  it('grantDeploymentControl: the ECS reads plus ContinueServiceDeployment and StopServiceDeployment on service deployments, no table access', () => {
    const b = build({}, undefined, (r, stack) => r.grantDeploymentControl(new iam.Role(stack, 'Operator', { assumedBy: new iam.AccountRootPrincipal() })));
    const statements = statementsOf(b.template, 'Operator');
    expect(statements.flatMap((st) => st.Action).sort()).toEqual(['ecs:ContinueServiceDeployment', ...ECS_READS, 'ecs:StopServiceDeployment'].sort());
    const control = statements.find((st) => JSON.stringify(st.Action).includes('StopServiceDeployment'));
    expect(JSON.stringify(control?.Resource)).toContain(':service-deployment/');
    expect(JSON.stringify(statements.map((st) => st.Resource))).not.toContain('ReconcilerSpecs');
  });
  it('metricTaskLag for one service, for every service, and metricPassSucceeded', () => {
    const { reconciler, stack } = build({ metricsNamespace: 'Team/Reconciler', schedule: Duration.minutes(2), timeout: Duration.seconds(50) });
    const one = reconciler.metricTaskLag({ cluster: 'web', service: 'api' }).toMetricConfig().metricStat;
    expect(one).toMatchObject({ namespace: 'Team/Reconciler', metricName: 'TaskLag', statistic: 'Maximum', dimensions: [{ name: 'Cluster', value: 'web' }, { name: 'Service', value: 'api' }] });
    expect(one?.period.toSeconds()).toBe(120);
    const all = reconciler.metricTaskLag().toMetricConfig().mathExpression;
    expect(all?.expression).toBe('SELECT MAX(TaskLag) FROM SCHEMA("Team/Reconciler", Cluster, Service) GROUP BY Cluster, Service ORDER BY MAX() DESC');
    const passes = reconciler.metricPassSucceeded().toMetricConfig().metricStat;
    expect(passes).toMatchObject({ namespace: 'Team/Reconciler', metricName: 'PassSucceeded', statistic: 'Sum' });
    expect(() => reconciler.metricTaskLag({ cluster: 'web' })).toThrow(/both `cluster` and `service`/);
    void stack;
  });
});

describe('clusters of another account or Region (part 6)', () => {
  it.each([
    { case: 'another account', arn: 'arn:aws:ecs:eu-west-1:210987654321:cluster/theirs', says: 'is in account 210987654321 / Region eu-west-1' },
    { case: 'another Region', arn: 'arn:aws:ecs:us-east-1:123456789012:cluster/far', says: 'is in account 123456789012 / Region us-east-1' },
  ])('refuses a cluster of $case, naming both environments and the fix', ({ arn, says }) => {
    expect(() => build({}, (s) => ({ clusters: [ecs.Cluster.fromClusterArn(s, 'C', arn)] }))).toThrow(says);
    expect(() => build({}, (s) => ({ clusters: [ecs.Cluster.fromClusterArn(s, 'C', arn)] }))).toThrow(/deploy a reconciler in that account and Region/);
  });
  it('accepts a cluster of its own account and Region, with ARNs in that account and Region', () => {
    const { template } = build({}, (s) => ({ clusters: [ecs.Cluster.fromClusterArn(s, 'C', 'arn:aws:ecs:eu-west-1:123456789012:cluster/mine')] }));
    expect(fnEnv(template).MANAGED_CLUSTERS).toBe('mine');
    expect(JSON.stringify(Object.values(template.findResources('AWS::IAM::Policy')).map((p) => flat(p.Properties.PolicyDocument)))).toContain(
      ':ecs:eu-west-1:123456789012:service/mine/*',
    );
  });
});

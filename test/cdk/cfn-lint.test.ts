/**
 * cfn-lint (the CloudFormation linter, installed on every machine of this project and required in
 * CI) over the templates the construct synthesizes in the configurations people deploy: the
 * README's quick start, existing clusters with every allow-list set, a customer managed table key
 * and the user's own alarm topic. Zero errors; zero warnings except the acknowledged ones below,
 * each matched by rule, resource and path so that a new finding fails. Skipped where cfn-lint is
 * missing, required in CI (test/support/tools.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Duration, Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { afterAll, describe, expect, it } from 'vitest';
import { EcsReconciler } from '../../lib/ecs-reconciler';
import { EcsReconcilerStack } from '../../lib/reconciler-stack';
import { ReconcilerTargetStack } from '../../lib/target-role';
import { needs, toolCommand } from '../support/tools';
import { lintableTemplates, type CfnLintFinding, unacknowledged } from '../support/cfn-lint';
import { cdkJsonContext } from '../support/cdk-json';

describe('cfn-lint on the synthesized templates', needs('cfn-lint'), () => {
  const dir = mkdtempSync(join(tmpdir(), 'ecsr-cfn-lint-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // cdk.json's feature flags: the templates `cdk deploy` builds.
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  new EcsReconcilerStack(app, 'QuickStart', { reconciler: { createCluster: true, alarmEmail: 'ops@example.com' } });
  new EcsReconcilerStack(app, 'Existing', {
    reconciler: {
      clusters: ['web', 'jobs'],
      defaultSubnets: ['subnet-0a1', 'subnet-0b2'],
      defaultSecurityGroups: ['sg-0c3'],
      allowedTaskRoles: ['arn:aws:iam::123456789012:role/app-task'],
      allowedExecutionRoles: ['arn:aws:iam::123456789012:role/app-exec'],
      allowedImageRegistries: ['public.ecr.aws'],
      alarmEmail: 'ops@example.com',
    },
  });
  const own = new Stack(app, 'OwnKeyAndTopic', { env: { account: '123456789012', region: 'eu-west-1' } });
  new EcsReconciler(own, 'Reconciler', {
    clusters: ['web'],
    defaultSubnets: ['subnet-0a1'],
    tableEncryptionKey: new kms.Key(own, 'TableKey', { enableKeyRotation: true }),
    alarmTopic: new sns.Topic(own, 'OnCall', { enforceSSL: true }),
  });
  // The construct as a library: existing table and execution role, overrides, no dashboard,
  // alarm overrides, tracing off, JSON logs, a concurrency reservation, a grantee.
  const lib = new Stack(app, 'Library', { env: { account: '123456789012', region: 'eu-west-1' } });
  const table = new dynamodb.Table(lib, 'Specs', {
    partitionKey: { name: 'cluster', type: dynamodb.AttributeType.STRING },
    sortKey: { name: 'service', type: dynamodb.AttributeType.STRING },
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
  });
  const libReconciler = new EcsReconciler(lib, 'Reconciler', {
    clusters: ['web'],
    defaultSubnets: ['subnet-0a1'],
    existingTable: table,
    executionRole: iam.Role.fromRoleArn(lib, 'Exec', 'arn:aws:iam::123456789012:role/app-exec', { mutable: false }),
    timeout: Duration.seconds(30),
    memorySize: 512,
    tracing: lambda.Tracing.DISABLED,
    loggingFormat: lambda.LoggingFormat.JSON,
    reserveConcurrency: true,
    createDashboard: false,
    alarmOverrides: { ActionsFailing: { evaluationPeriods: 10, datapointsToAlarm: 8 } },
    alarmEmail: 'ops@example.com',
  });
  // Fan-out to two accounts, and the role stack of a target account.
  new EcsReconcilerStack(app, 'FanOut', {
    reconciler: {
      clusters: ['web'],
      defaultSubnets: ['subnet-0a1'],
      alarmEmail: 'ops@example.com',
      targets: [
        { name: 'staging', account: '222222222222', region: 'eu-west-1', clusters: ['web'] },
        { name: 'prod', account: '333333333333', region: 'us-east-1' },
      ],
    },
  });
  new ReconcilerTargetStack(app, 'TargetAccount', {
    env: { account: '222222222222', region: 'eu-west-1' },
    reconcilerRoleArn: 'arn:aws:iam::111111111111:role/Reconciler-FunctionRole',
    clusters: ['web'],
    passableRoles: ['arn:aws:iam::222222222222:role/app-exec'],
  });
  libReconciler.grantSpecWrite(new iam.Role(lib, 'Pipeline', { assumedBy: new iam.AccountRootPrincipal() }));
  const files = lintableTemplates(app).map(({ name, template }) => {
    const file = join(dir, `${name}.json`);
    writeFileSync(file, JSON.stringify(template, null, 1));
    return file;
  });

  it('finds no error and no unacknowledged warning', () => {
    const run = spawnSync(toolCommand('cfn-lint') ?? 'cfn-lint', ['--format', 'json', '--', ...files], { encoding: 'utf8', timeout: 300_000 });
    expect(run.error, 'cfn-lint did not run').toBeUndefined();
    // cfn-lint exits with a bit mask (2 errors, 4 warnings, 8 informational); its JSON is the truth.
    const findings = JSON.parse(run.stdout || '[]') as CfnLintFinding[];
    expect(unacknowledged(findings).map((f) => `${f.Rule.Id} ${f.Location.Path.join('/')}: ${f.Message}`)).toEqual([]);
  }, 300_000);
});

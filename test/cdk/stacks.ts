/**
 * Two reconciler stacks the construct tests share (bundling skipped): the quick start exactly as
 * `cdk deploy -c createCluster=true` builds it, and one that sets nearly every prop (existing
 * clusters and subnets as strings and constructs, every allow-list, a KMS-encrypted alarm topic
 * and table, fan-out targets in other accounts, events from a further account).
 */
import { App, Duration, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import { buildReconcilerApp } from '../../lib/app';
import { EcsReconciler, type EcsReconcilerProps } from '../../lib/ecs-reconciler';

const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

/** The quick-start stack of `bin/app.ts` with `-c createCluster=true`, and `extraContext`. */
export function quickStartStack(extraContext: Record<string, string> = {}): Stack {
  return buildReconcilerApp(new App({ context: { ...NO_BUNDLING, createCluster: 'true', ...extraContext } }));
}

/** A stack in account 111111111111 / eu-west-1 with a reconciler that sets nearly every prop, then `overrides`. */
export function fullyConfiguredStack(overrides: Partial<EcsReconcilerProps> = {}): { stack: Stack; reconciler: EcsReconciler } {
  const app = new App({ context: NO_BUNDLING });
  const stack = new Stack(app, 'Full', { env: { account: '111111111111', region: 'eu-west-1' } });
  const vpc = ec2.Vpc.fromVpcAttributes(stack, 'V', { vpcId: 'vpc-1', availabilityZones: ['eu-west-1a'], publicSubnetIds: ['subnet-0aa'] });
  const cluster = ecs.Cluster.fromClusterAttributes(stack, 'C', { clusterName: 'jobs', vpc });
  const topic = new sns.Topic(stack, 'Topic', { masterKey: new kms.Key(stack, 'TopicKey') });
  const reconciler = new EcsReconciler(stack, 'Reconciler', {
    clusters: ['web', cluster],
    defaultSubnets: ['subnet-0a1', ec2.Subnet.fromSubnetId(stack, 'S', 'subnet-0b2')],
    defaultSecurityGroups: ['sg-0c3'],
    assignPublicIp: false,
    allowedSubnets: ['subnet-0a1', 'subnet-0b*'],
    allowedSecurityGroups: ['sg-0c3'],
    allowPublicIp: false,
    allowedTargetGroups: ['arn:aws:elasticloadbalancing:eu-west-1:111111111111:targetgroup/web-*'],
    allowedSecrets: ['arn:aws:ssm:eu-west-1:111111111111:parameter/prod/*'],
    allowedEfsFileSystems: ['fs-0123'],
    allowedTaskRoles: ['arn:aws:iam::111111111111:role/app-task', iam.Role.fromRoleArn(stack, 'R', 'arn:aws:iam::111111111111:role/other')],
    allowedExecutionRoles: ['arn:aws:iam::111111111111:role/app-exec'],
    allowedImageRegistries: ['public.ecr.aws'],
    schedule: Duration.minutes(2),
    resyncMinutes: 20,
    defaultLagGrace: 600,
    alarmTopic: topic,
    metricsNamespace: 'Acme/Recon',
    prune: false,
    allowAdoption: true,
    allowedFamilies: ['shop', 'billing-*'],
    maxDeletesPerPass: 3,
    apiBudgetFraction: 0.4,
    dryRun: true,
    ownerId: 'team b',
    logGroupPrefix: '/acme/',
    logRetention: logs.RetentionDays.ONE_WEEK,
    fleetSize: 15000,
    tableEncryptionKey: new kms.Key(stack, 'TableKey'),
    timeout: Duration.seconds(90),
    tracing: lambda.Tracing.DISABLED,
    loggingFormat: lambda.LoggingFormat.JSON,
    alarmOverrides: { ActionsFailing: { threshold: 2, evaluationPeriods: 3, datapointsToAlarm: 2 } },
    targets: [
      { name: 'staging', account: '222222222222', region: 'eu-west-1', clusters: ['web'], defaults: { subnets: ['subnet-0ff'] } },
      { name: 'prod', account: '333333333333', region: 'us-east-1', roleArn: 'arn:aws:iam::333333333333:role/custom' },
    ],
    fanOutConcurrency: 20,
    eventSourceAccounts: ['444444444444'],
    ...overrides,
  });
  return { stack, reconciler };
}

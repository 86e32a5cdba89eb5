/**
 * Allow-lists in the template: each construct prop sets its environment variable
 * (the names `lambda/config.ts` reads, from `lambda/core/allow-lists.ts`), CDK objects become their
 * ids/ARNs, `[]` becomes NONE, an unset prop sets nothing; the CDK context keys map to the props;
 * and what the template sets parses back into the planner's lists.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as efs from 'aws-cdk-lib/aws-efs';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import { describe, expect, it } from 'vitest';
import { ENV, loadConfig } from '../../lambda/config';
import { ALLOW_LIST, ALLOW_LIST_ENV } from '../../lambda/core/allow-lists';
import { EcsReconciler, EcsReconcilerPropsError, type EcsReconcilerProps } from '../../lib/ecs-reconciler';
import { reconcilerPropsFromContext } from '../../lib/reconciler-stack';
import { flat } from '../support/iam-eval';

const TG = 'arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/web-http/0123456789abcdef';
const SECRET = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-AbCdEf';
const PARAM = 'arn:aws:ssm:eu-west-1:123456789012:parameter/prod/api-key';

function envOf(build: (stack: Stack) => EcsReconcilerProps): Record<string, string> {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Test', { env: { account: '123456789012', region: 'eu-west-1' } });
  new EcsReconciler(stack, 'Reconciler', { clusters: ['web'], defaultSubnets: ['subnet-0a1'], defaultSecurityGroups: ['sg-0c3'], ...build(stack) });
  const fn = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function'))[0];
  const vars = fn.Properties.Environment.Variables as Record<string, unknown>;
  return Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, flat(v)]));
}

describe('allow-list props set their variables', () => {
  it('strings and CDK objects (ISubnet, ISecurityGroup, ITargetGroup, ISecret, IParameter, IFileSystem)', () => {
    // Act
    const env = envOf((stack) => ({
      allowedSubnets: [ec2.Subnet.fromSubnetId(stack, 'S', 'subnet-0ff'), 'subnet-0aa*'],
      allowedSecurityGroups: [ec2.SecurityGroup.fromSecurityGroupId(stack, 'G', 'sg-0ff'), 'sg-0aa'],
      allowPublicIp: false,
      allowedTargetGroups: [elbv2.ApplicationTargetGroup.fromTargetGroupAttributes(stack, 'T', { targetGroupArn: TG }), 'arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/jobs-*'],
      allowedSecrets: [
        secretsmanager.Secret.fromSecretCompleteArn(stack, 'X', SECRET),
        ssm.StringParameter.fromStringParameterAttributes(stack, 'P', { parameterName: '/prod/api-key' }),
        'arn:aws:ssm:eu-west-1:123456789012:parameter/shared/*',
      ],
      allowedEfsFileSystems: [efs.FileSystem.fromFileSystemAttributes(stack, 'F', { fileSystemId: 'fs-0ff', securityGroup: ec2.SecurityGroup.fromSecurityGroupId(stack, 'FG', 'sg-0ee') }), 'fs-0aa'],
      allowedImageRegistries: ['public.ecr.aws', 'ghcr.io/acme'],
    }));
    // Assess
    expect(env).toMatchObject({
      [ENV.allowedSubnets]: 'subnet-0ff,subnet-0aa*',
      [ENV.allowedSecurityGroups]: 'sg-0ff,sg-0aa',
      [ENV.allowedAssignPublicIp]: 'DISABLED',
      [ENV.allowedTargetGroupArns]: `${TG},arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/jobs-*`,
      [ENV.allowedSecrets]: `${SECRET}*,${PARAM.replace('arn:aws:', 'arn:${AWS::Partition}:')},arn:aws:ssm:eu-west-1:123456789012:parameter/shared/*`,
      [ENV.allowedEfsFileSystems]: 'fs-0ff,fs-0aa',
      [ENV.allowedImageRegistries]: 'public.ecr.aws,ghcr.io/acme',
    });
  });

  it('allowPublicIp: true allows both values', () => {
    expect(envOf(() => ({ allowPublicIp: true }))[ENV.allowedAssignPublicIp]).toBe('ENABLED,DISABLED');
  });

  it('an empty list allows nothing (NONE); an unset prop sets nothing (anything)', () => {
    // Act
    const empty = envOf(() => ({ allowedSubnets: [], allowedSecrets: [], allowedImageRegistries: [] }));
    const unset = envOf(() => ({}));
    // Assess
    expect([empty[ENV.allowedSubnets], empty[ENV.allowedSecrets], empty[ENV.allowedImageRegistries]]).toEqual(['NONE', 'NONE', 'NONE']);
    for (const list of ['subnets', 'securityGroups', 'assignPublicIp', 'targetGroupArns', 'secrets', 'imageRegistries', 'efsFileSystems'] as const) {
      expect(unset, list).not.toHaveProperty(ALLOW_LIST_ENV[list]);
    }
  });

  it('what the template sets parses into the lists the planner checks', () => {
    // Prepare
    const env = envOf(() => ({
      allowedSubnets: ['subnet-0aa'],
      allowPublicIp: false,
      allowedSecrets: ['arn:aws:ssm:eu-west-1:123456789012:parameter/prod/*'],
      allowedEfsFileSystems: [],
    }));
    // Act
    // (Tokens the template resolves at deploy time are left out: the table name, the execution role, the events queue.)
    const { [ENV.defaultExecutionRoleArn]: _role, [ENV.allowedExecutionRoleArns]: _roles, [ENV.eventsQueueUrl]: _queue, ...literal } = env;
    const config = loadConfig({ ...literal, [ENV.specsTable]: 'specs' });
    // Assess
    expect(config.plan.allow.subnets).toEqual(['subnet-0aa']);
    expect(config.plan.allow.assignPublicIp).toEqual(['DISABLED']);
    expect(config.plan.allow.secrets).toEqual(['arn:aws:ssm:eu-west-1:123456789012:parameter/prod/*']);
    expect(config.plan.allow.efsFileSystems).toEqual([]);
    expect(config.plan.allow.taskRoleArns).toEqual([]);
    expect(config.plan.allow.imageRegistries).toBeUndefined();
  });

  it('every list has a construct prop of the name ALLOW_LIST gives', () => {
    // A prop documented in ALLOW_LIST but missing from the construct would be silently ignored.
    const props: Record<keyof typeof ALLOW_LIST, unknown> = {
      subnets: ['subnet-0a'],
      securityGroups: ['sg-0a'],
      assignPublicIp: false,
      targetGroupArns: [TG],
      secrets: [PARAM],
      taskRoleArns: ['arn:aws:iam::123456789012:role/t'],
      executionRoleArns: ['arn:aws:iam::123456789012:role/e'],
      imageRegistries: ['public.ecr.aws'],
      efsFileSystems: ['fs-0a'],
    };
    const env = envOf(() => Object.fromEntries(Object.entries(props).map(([list, v]) => [ALLOW_LIST[list as keyof typeof ALLOW_LIST].prop, v])) as EcsReconcilerProps);
    for (const list of Object.keys(props) as (keyof typeof ALLOW_LIST)[]) expect(env, list).toHaveProperty(ALLOW_LIST_ENV[list]);
  });
});

describe('allow-list context keys (cdk deploy -c ...)', () => {
  it('map to the props', () => {
    const ctx: Record<string, string> = {
      clusters: 'web',
      subnets: 'subnet-0a1',
      securityGroups: 'sg-0c3',
      allowedSubnets: 'subnet-0a1,subnet-0b2',
      allowedSecurityGroups: 'sg-0c3',
      allowPublicIp: 'false',
      targetGroups: TG,
      secretPrefixes: 'arn:aws:ssm:eu-west-1:123456789012:parameter/web/*',
      efsFileSystems: 'fs-0aa',
    };
    expect(reconcilerPropsFromContext((k) => ctx[k])).toMatchObject({
      allowedSubnets: ['subnet-0a1', 'subnet-0b2'],
      allowedSecurityGroups: ['sg-0c3'],
      allowPublicIp: false,
      allowedTargetGroups: [TG],
      allowedSecrets: ['arn:aws:ssm:eu-west-1:123456789012:parameter/web/*'],
      allowedEfsFileSystems: ['fs-0aa'],
    });
  });
});

describe('allow-list context NONE', () => {
  it('-c efsFileSystems=NONE allows no file system (ALLOWED_EFS_FILE_SYSTEMS=NONE)', () => {
    const ctx: Record<string, string> = { createCluster: 'true', efsFileSystems: 'NONE', targetGroups: 'NONE' };
    const props = reconcilerPropsFromContext((k) => ctx[k]);
    expect([props.allowedEfsFileSystems, props.allowedTargetGroups]).toEqual([[], []]);
    expect(envOf(() => ({ allowedEfsFileSystems: props.allowedEfsFileSystems }))[ENV.allowedEfsFileSystems]).toBe('NONE');
  });
});

describe('allow-list validation', () => {
  it.each([
    { case: 'subnet name', props: { allowedSubnets: ['private-a'] }, says: 'Allowed subnet "private-a" is not valid' },
    { case: 'security group name', props: { allowedSecurityGroups: ['default'] }, says: 'Allowed security group "default"' },
    { case: 'target group name', props: { allowedTargetGroups: ['web-http'] }, says: 'Allowed target group "web-http"' },
    { case: 'secret with a space', props: { allowedSecrets: [' prod'] }, says: 'Allowed secret " prod"' },
    { case: 'EFS access point', props: { allowedEfsFileSystems: ['fsap-0aa'] }, says: 'Allowed EFS file system "fsap-0aa"' },
  ])('rejects $case', ({ props, says }) => {
    expect(() => envOf(() => props as EcsReconcilerProps)).toThrow(EcsReconcilerPropsError);
    expect(() => envOf(() => props as EcsReconcilerProps)).toThrow(says);
  });

  it('accepts * and prefixes', () => {
    expect(() => envOf(() => ({ allowedSubnets: ['*'], allowedSecurityGroups: ['sg-*'], allowedImageRegistries: ['ghcr.io/acme*'] }))).not.toThrow();
  });
});

/**
 * The per-cluster task log groups: named by `logGroupPrefix` (and the owner id), kept by default
 * when the stack goes, deleted with `taskLogGroupRemovalPolicy: DESTROY`, or not created at all
 * with `createTaskLogGroups: false` (they exist already). Destroy then deploy works when no
 * resource with a fixed name outlives the stack: checked on the synthesized template.
 */
import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { EcsReconciler, type EcsReconcilerProps } from '../../lib/ecs-reconciler';
import { ContextError, reconcilerPropsFromContext } from '../../lib/reconciler-stack';
import { flat } from '../support/iam-eval';
import { fullyConfiguredStack, quickStartStack } from './stacks';

type Resource = { Type: string; DeletionPolicy?: string; Properties?: Record<string, unknown> };

/** Properties that name a resource physically (CloudFormation refuses a second one of the name). */
const NAME_PROPERTIES = ['LogGroupName', 'TableName', 'RoleName', 'QueueName', 'TopicName', 'DashboardName', 'FunctionName', 'AlarmName', 'BucketName', 'ClusterName'];

/** True when `value` names the same thing in every deployment: no reference to a resource of the stack. */
function isFixedName(value: unknown, resources: Record<string, Resource>): boolean {
  if (typeof value === 'string') return true;
  const refs = JSON.stringify(value).match(/"Ref":"[^"]+"|"Fn::GetAtt"/g) ?? [];
  return refs.every((r) => r.startsWith('"Ref":"AWS::') || (r.startsWith('"Ref":') && !(r.slice(7, -1) in resources)));
}

/**
 * The resources a `cdk destroy` leaves behind (DeletionPolicy Retain) under a fixed name, as
 * `<Type> <name>`: each makes the next deploy of the same stack fail ("already exists").
 */
function fixedNamesOutlivingDestroy(template: Template): string[] {
  const resources = template.toJSON().Resources as Record<string, Resource>;
  return Object.values(resources).flatMap((r) =>
    r.DeletionPolicy === 'Retain' || r.DeletionPolicy === 'RetainExceptOnCreate'
      ? NAME_PROPERTIES.filter((p) => r.Properties?.[p] !== undefined && isFixedName(r.Properties[p], resources)).map((p) => `${r.Type} ${flat(r.Properties![p])}`)
      : [],
  );
}

function aReconciler(props: Partial<EcsReconcilerProps> = {}) {
  const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Test');
  const reconciler = new EcsReconciler(stack, 'Reconciler', { clusters: ['web', 'jobs'], defaultSubnets: ['subnet-0a1'], defaultSecurityGroups: ['sg-0c3'], ...props });
  return { reconciler, template: Template.fromStack(stack) };
}

describe('task log groups', () => {
  it('by default are kept by a destroy under their fixed names: the only resources that block the next deploy', () => {
    const { template } = aReconciler();
    expect(fixedNamesOutlivingDestroy(template).sort()).toEqual(['AWS::Logs::LogGroup /ecs-reconciler/jobs', 'AWS::Logs::LogGroup /ecs-reconciler/web']);
  });

  it.each([
    { case: 'two named clusters', template: () => aReconciler({ taskLogGroupRemovalPolicy: RemovalPolicy.DESTROY }).template },
    { case: 'a fully configured reconciler', template: () => Template.fromStack(fullyConfiguredStack({ taskLogGroupRemovalPolicy: RemovalPolicy.DESTROY }).stack) },
    { case: 'the quick start with -c taskLogGroupRemovalPolicy=destroy', template: () => Template.fromStack(quickStartStack({ taskLogGroupRemovalPolicy: 'destroy' })) },
  ])('with taskLogGroupRemovalPolicy DESTROY leave nothing named behind, so destroy then deploy works: $case', ({ template }) => {
    const t = template();
    expect(fixedNamesOutlivingDestroy(t)).toEqual([]);
    const groups = Object.values(t.findResources('AWS::Logs::LogGroup'));
    expect(groups.length).toBeGreaterThan(1);
    for (const g of groups) expect(g.DeletionPolicy).toBe('Delete');
  });

  it('with createTaskLogGroups false are not created, and the execution role may write to the groups of those names', () => {
    const { reconciler, template } = aReconciler({ createTaskLogGroups: false });
    expect(fixedNamesOutlivingDestroy(template)).toEqual([]);
    const names = Object.values(template.findResources('AWS::Logs::LogGroup')).map((g) => g.Properties?.LogGroupName);
    expect(names).toEqual([undefined]); // the function's own group only (named by Lambda's convention, not fixed)
    expect(Object.keys(reconciler.logGroups)).toEqual(['web', 'jobs']);
    expect(reconciler.logGroups.web.logGroupName).toBe('/ecs-reconciler/web');
    const executionRoleId = Stack.of(reconciler).getLogicalId(reconciler.executionRole.node.defaultChild as never);
    const statements = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((p) => JSON.stringify(p.Properties.Roles).includes(executionRoleId))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as { Action: string[]; Resource: unknown }[]);
    const resources = statements.filter((s) => s.Action.includes('logs:PutLogEvents')).map((s) => flat(s.Resource));
    expect(resources.some((r) => r.includes('log-group:/ecs-reconciler/web:*'))).toBe(true);
    expect(resources.some((r) => r.includes('log-group:/ecs-reconciler/jobs:*'))).toBe(true);
  });

  it('keep their names under another prefix and owner id', () => {
    const { template } = aReconciler({ logGroupPrefix: '/acme/', ownerId: 'team b', taskLogGroupRemovalPolicy: RemovalPolicy.DESTROY });
    const names = Object.values(template.findResources('AWS::Logs::LogGroup')).map((g) => g.Properties?.LogGroupName).filter(Boolean);
    expect(names.sort()).toEqual(['/acme/team#20b/jobs', '/acme/team#20b/web']);
  });

  it('the quick-start context refuses a removal policy other than retain or destroy', () => {
    const get = (k: string) => ({ createCluster: 'true', taskLogGroupRemovalPolicy: 'snapshot' })[k];
    expect(() => reconcilerPropsFromContext(get)).toThrow(ContextError);
    expect(() => reconcilerPropsFromContext(get)).toThrow(/taskLogGroupRemovalPolicy= must be retain or destroy, got "snapshot"/);
  });
});

/**
 * The function's IAM matches what a pass does to an owned service, read from the synthesized
 * template and evaluated as IAM would (test/support/iam-eval.ts): it registers task definitions
 * (with the owner tag) in `<cluster>-*` and in `allowedFamilies` (every family with adoption, since
 * `ecsr import` keeps an adopted service's live family), and gives owned services only revisions
 * of those families (`ecs:task-definition`), never any task definition of the account.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { EcsReconciler, type EcsReconcilerProps } from '../../lib/ecs-reconciler';
import { ReconcilerTargetRole } from '../../lib/target-role';
import { evaluate, type PolicyStatement } from '../support/iam-eval';

const ACCOUNT = '123456789012';
const arn = (rest: string) => `arn:aws:ecs:eu-west-1:${ACCOUNT}:${rest}`;
const OWNER = 'aws:ResourceTag/ecs-reconciler:owner';
const REQ = 'aws:RequestTag/ecs-reconciler:owner';

function statementsOf(props: Partial<EcsReconcilerProps>) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Test', { env: { account: ACCOUNT, region: 'eu-west-1' } });
  const reconciler = new EcsReconciler(stack, 'Reconciler', { clusters: ['prod'], defaultSubnets: ['subnet-0a1'], defaultSecurityGroups: ['sg-0c3'], ...props });
  const template = Template.fromStack(stack);
  const roleId = stack.getLogicalId(reconciler.role.node.defaultChild as never);
  const statements = Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((p) => JSON.stringify(p.Properties.Roles).includes(roleId))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as PolicyStatement[]);
  return { statements, stack };
}

const register = (family: string, owner = 'ecs-reconciler') => ({
  action: 'ecs:RegisterTaskDefinition',
  resource: arn(`task-definition/${family}:2`),
  context: { [REQ]: owner, 'aws:TagKeys': ['ecs-reconciler:owner'] },
});
const update = (service: string, taskDefinition?: string) => ({
  action: 'ecs:UpdateService',
  resource: arn(`service/prod/${service}`),
  context: { [OWNER]: 'ecs-reconciler', ...(taskDefinition ? { 'ecs:task-definition': arn(`task-definition/${taskDefinition}`) } : {}) },
});
const create = (service: string, taskDefinition: string) => ({
  action: 'ecs:CreateService',
  resource: arn(`service/prod/${service}`),
  context: { [REQ]: 'ecs-reconciler', 'aws:TagKeys': ['ecs-reconciler:owner'], 'ecs:task-definition': arn(`task-definition/${taskDefinition}`) },
});

describe('the README import flow on AWS (cluster prod, live family shop)', () => {
  const { statements, stack } = statementsOf({ allowAdoption: true });

  it('the first registration in the adopted family, with the owner tag, is allowed', () => {
    expect(evaluate(statements, register('shop'))).toBe('Allow');
    expect(evaluate(statements, { ...register('shop'), context: {} })).toBe('ImplicitDeny');
  });

  it('the rollout of the adopted service to that revision is allowed', () => {
    expect(evaluate(statements, update('shop', 'shop:2'))).toBe('Allow');
  });

  it('warns that every family is allowed, and how to narrow it', () => {
    Annotations.fromStack(stack).hasWarning('*', Match.stringLikeRegexp('allowAdoption without allowedFamilies'));
  });
});

describe('without adoption: <cluster>-* and allowedFamilies only', () => {
  const { statements } = statementsOf({});

  it.each([
    { case: 'register in the default family', req: register('prod-web'), is: 'Allow' },
    { case: 'register in another family', req: register('web-api'), is: 'ImplicitDeny' },
    { case: 'create a service on a default-family revision', req: create('web', 'prod-web:1'), is: 'Allow' },
    { case: 'create a service on another tool\'s task definition', req: create('web', 'payments-api:7'), is: 'ImplicitDeny' },
    { case: 'roll an owned service to a default-family revision', req: update('web', 'prod-web:3'), is: 'Allow' },
    { case: 'point an owned service at any task definition of the account', req: update('web', 'payments-api:7'), is: 'ImplicitDeny' },
    { case: 'scale an owned service (no task definition in the request)', req: update('web'), is: 'Allow' },
  ])('$case: $is', ({ req, is }) => {
    expect(evaluate(statements, req)).toBe(is);
  });

  it('allowedFamilies adds names and prefixes, nothing else', () => {
    const listed = statementsOf({ allowedFamilies: ['shop', 'billing-*'] }).statements;
    expect(evaluate(listed, register('shop'))).toBe('Allow');
    expect(evaluate(listed, register('billing-api'))).toBe('Allow');
    expect(evaluate(listed, register('shopping'))).toBe('ImplicitDeny');
    expect(evaluate(listed, update('shop', 'shop:2'))).toBe('Allow');
    expect(evaluate(listed, update('shop', 'payments-api:7'))).toBe('ImplicitDeny');
    // Listing families narrows adoption too: no every-family grant.
    const narrowed = statementsOf({ allowAdoption: true, allowedFamilies: ['shop'] }).statements;
    expect(evaluate(narrowed, register('shop'))).toBe('Allow');
    expect(evaluate(narrowed, register('payments-api'))).toBe('ImplicitDeny');
  });

  it('refuses a family entry that is not a family name', () => {
    expect(() => statementsOf({ allowedFamilies: ['arn:aws:ecs:eu-west-1:1:task-definition/x'] })).toThrow(/allowedFamilies/);
  });
});

describe('a target account role carries the same rule', () => {
  it('registers in the adopted family with adoption, and gives services only those revisions', () => {
    const app = new App();
    const stack = new Stack(app, 'Target', { env: { account: ACCOUNT, region: 'eu-west-1' } });
    new ReconcilerTargetRole(stack, 'Role', { reconcilerRoleArn: 'arn:aws:iam::111111111111:role/fn', clusters: ['prod'], allowedFamilies: ['shop'] });
    const statements = Object.values(Template.fromStack(stack).findResources('AWS::IAM::Policy')).flatMap((p) => p.Properties.PolicyDocument.Statement as PolicyStatement[]);
    expect(evaluate(statements, register('shop'))).toBe('Allow');
    expect(evaluate(statements, update('shop', 'payments-api:7'))).toBe('ImplicitDeny');
  });
});

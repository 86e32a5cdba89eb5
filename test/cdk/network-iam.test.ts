/**
 * IAM backs the allow-lists ECS has condition keys for (Service Authorization Reference, "Actions,
 * resources, and condition keys for Amazon Elastic Container Service": `ecs:subnet` and
 * `ecs:auto-assign-public-ip` on CreateService and UpdateService; no key exists for security
 * groups): the template's statements, evaluated as IAM would (test/support/iam-eval.ts), refuse a
 * service in a subnet outside `allowedSubnets` and the default subnets, and a public IP when
 * `allowPublicIp` is false and the default gives none.
 */
import { readFileSync } from 'node:fs';
import { App, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { EcsReconciler, type EcsReconcilerProps } from '../../lib/ecs-reconciler';
import { evaluate, type PolicyStatement } from '../support/iam-eval';

const ACCOUNT = '123456789012';
const arn = (rest: string) => `arn:aws:ecs:eu-west-1:${ACCOUNT}:${rest}`;

function build(props: Partial<EcsReconcilerProps>) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Test', { env: { account: ACCOUNT, region: 'eu-west-1' } });
  const reconciler = new EcsReconciler(stack, 'Reconciler', { clusters: ['prod'], defaultSubnets: ['subnet-0def'], defaultSecurityGroups: ['sg-0c3'], ...props });
  const roleId = stack.getLogicalId(reconciler.role.node.defaultChild as never);
  const statements = Object.values(Template.fromStack(stack).findResources('AWS::IAM::Policy'))
    .filter((p) => JSON.stringify(p.Properties.Roles).includes(roleId))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as PolicyStatement[]);
  return { statements, stack };
}

const network = (subnets?: string[], publicIp?: boolean): Record<string, string | string[]> => ({
  ...(subnets ? { 'ecs:subnet': subnets } : {}),
  ...(publicIp !== undefined ? { 'ecs:auto-assign-public-ip': String(publicIp) } : {}),
});
const create = (net: Record<string, string | string[]>) => ({
  action: 'ecs:CreateService',
  resource: arn('service/prod/web'),
  context: { 'aws:RequestTag/ecs-reconciler:owner': 'ecs-reconciler', 'ecs:task-definition': arn('task-definition/prod-web:1'), ...net },
});
const update = (net: Record<string, string | string[]>) => ({
  action: 'ecs:UpdateService',
  resource: arn('service/prod/web'),
  context: { 'aws:ResourceTag/ecs-reconciler:owner': 'ecs-reconciler', ...net },
});

describe('allowedSubnets and allowPublicIp in IAM', () => {
  const listed = build({ allowedSubnets: ['subnet-0a1', 'subnet-0b*'], allowPublicIp: false }).statements;

  it.each([
    { case: 'create in listed subnets, no public IP', req: create(network(['subnet-0a1', 'subnet-0b22'], false)), is: 'Allow' },
    { case: 'create in the default subnets (never checked by the lists)', req: create(network(['subnet-0def'], false)), is: 'Allow' },
    { case: 'create with one subnet outside the list', req: create(network(['subnet-0a1', 'subnet-0ff'], false)), is: 'ImplicitDeny' },
    { case: 'create with a public IP', req: create(network(['subnet-0a1'], true)), is: 'ImplicitDeny' },
    { case: 'update that leaves the network alone', req: update(network()), is: 'Allow' },
    { case: 'update into a listed subnet', req: update(network(['subnet-0b9'], false)), is: 'Allow' },
    { case: 'update into another subnet', req: update(network(['subnet-0ff'], false)), is: 'ImplicitDeny' },
    { case: 'update to a public IP', req: update(network(['subnet-0a1'], true)), is: 'ImplicitDeny' },
  ])('$case: $is', ({ req, is }) => {
    expect(evaluate(listed, req)).toBe(is);
  });

  it('without the lists, no network condition: any subnet, a public IP', () => {
    const open = build({}).statements;
    expect(evaluate(open, create(network(['subnet-0ff'], true)))).toBe('Allow');
    expect(evaluate(open, update(network(['subnet-0ff'], true)))).toBe('Allow');
  });

  it('allowedSubnets: [] leaves the default subnets only', () => {
    const none = build({ allowedSubnets: [] }).statements;
    expect(evaluate(none, create(network(['subnet-0def'])))).toBe('Allow');
    expect(evaluate(none, create(network(['subnet-0a1'])))).toBe('ImplicitDeny');
  });

  it('allowPublicIp false with a default that assigns one: IAM cannot back it, and synth says so', () => {
    const { statements, stack } = build({ allowPublicIp: false, assignPublicIp: true });
    expect(evaluate(statements, create(network(['subnet-0def'], true)))).toBe('Allow');
    Annotations.fromStack(stack).hasWarning('*', Match.stringLikeRegexp('allowPublicIp is false but assignPublicIp'));
  });

  it('uses only condition keys the reference lists for CreateService and UpdateService', () => {
    const reference = JSON.parse(readFileSync(new URL('../fixtures/iam/ecs-service-authorization.json', import.meta.url), 'utf8')) as {
      actions: Record<string, { conditionKeys: string[] }>;
    };
    for (const action of ['CreateService', 'UpdateService']) {
      expect(reference.actions[action]?.conditionKeys).toEqual(expect.arrayContaining(['ecs:subnet', 'ecs:auto-assign-public-ip']));
      expect(reference.actions[action]?.conditionKeys.some((k) => k.includes('security-group'))).toBe(false);
    }
  });
});

/**
 * ECS events from every target, the construct's two halves: the target account's
 * `ReconcilerTargetStack` forwards the events the reconciler listens for (the very `EVENT_RULES`
 * patterns) to the reconciler account's default bus through a role allowed `events:PutEvents` on
 * that bus only, in the reconciler's Region even when it is another; the reconciler's construct
 * lets the target accounts (and no one else) put `aws.ecs` events on its bus.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { EVENT_RULES } from '../../lambda/core/events';
import { EcsReconciler, EcsReconcilerPropsError, type EcsReconcilerProps } from '../../lib/ecs-reconciler';
import { ReconcilerTargetStack } from '../../lib/target-role';

const ROLE = 'arn:aws:iam::111111111111:role/Reconciler-FunctionRole';

/** The template with `arn:${AWS::Partition}:...` joins written out as `arn:aws:...` strings. */
function flat(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(flat);
  if (value && typeof value === 'object') {
    const join = (value as Record<string, unknown>)['Fn::Join'] as [string, unknown[]] | undefined;
    if (join && join[0] === '' && join[1].every((p) => typeof p === 'string' || JSON.stringify(p) === '{"Ref":"AWS::Partition"}')) {
      return join[1].map((p) => (typeof p === 'string' ? p : 'aws')).join('');
    }
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, flat(v)]));
  }
  return value;
}

function targetStack(extra: Partial<ConstructorParameters<typeof ReconcilerTargetStack>[2]> = {}) {
  const app = new App();
  const stack = new ReconcilerTargetStack(app, 'Target', { env: { account: '222222222222', region: 'eu-west-1' }, reconcilerRoleArn: ROLE, clusters: ['web'], ...extra });
  const template = Template.fromStack(stack);
  return { stack, template, json: flat(template.toJSON()) as { Resources: Record<string, { Type: string; Properties: Record<string, any> }> } };
}
const ofType = (json: { Resources: Record<string, { Type: string; Properties: Record<string, any> }> }, type: string) => Object.values(json.Resources).filter((r) => r.Type === type);

function reconciler(props: Partial<EcsReconcilerProps> = {}) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Home', { env: { account: '111111111111', region: 'eu-west-1' } });
  const r = new EcsReconciler(stack, 'Reconciler', { clusters: ['web'], defaultSubnets: ['subnet-0a1'], ...props });
  const template = Template.fromStack(stack);
  return { reconciler: r, template, json: flat(template.toJSON()) as { Resources: Record<string, { Type: string; Properties: Record<string, any> }> } };
}

describe('ReconcilerTargetStack forwards ECS events to the reconciler account', () => {
  it("one rule per pattern the reconciler listens for, each targeting the reconciler account's default bus with the forwarding role", () => {
    // Act
    const { json } = targetStack();

    // Assess
    const rules = ofType(json, 'AWS::Events::Rule');
    expect(rules.map((r) => r.Properties.EventPattern)).toEqual(Object.values(EVENT_RULES).map((r) => r.pattern));
    for (const rule of rules) {
      expect(rule.Properties.Targets).toEqual([
        { Arn: 'arn:aws:events:eu-west-1:111111111111:event-bus/default', Id: expect.any(String), RoleArn: { 'Fn::GetAtt': [expect.stringContaining('PutEventsRole'), 'Arn'] } },
      ]);
    }
  });

  it('the role is assumable by EventBridge of this account only and may put events on that one bus only', () => {
    const { template, json } = targetStack();
    template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: [{ Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'events.amazonaws.com' }, Condition: { StringEquals: { 'aws:SourceAccount': '222222222222' } } }],
      },
    });
    const policies = ofType(json, 'AWS::IAM::Policy').filter((p) => JSON.stringify(p.Properties.Roles).includes('PutEventsRole'));
    expect(policies.flatMap((p) => p.Properties.PolicyDocument.Statement)).toEqual([
      { Action: 'events:PutEvents', Effect: 'Allow', Resource: 'arn:aws:events:eu-west-1:111111111111:event-bus/default' },
    ]);
  });

  it("a reconciler in another Region: the bus of that Region (EventBridge delivers across Regions)", () => {
    const { json } = targetStack({ env: { account: '222222222222', region: 'us-east-1' }, reconcilerRegion: 'eu-west-1' });
    expect(JSON.stringify(json)).toContain('arn:aws:events:eu-west-1:111111111111:event-bus/default');
    expect(JSON.stringify(json)).not.toContain('arn:aws:events:us-east-1:111111111111');
  });

  it('forwardEcsEvents: false: the role only, no rule; a token role ARN needs reconcilerAccount', () => {
    const { template, stack } = targetStack({ forwardEcsEvents: false });
    template.resourceCountIs('AWS::Events::Rule', 0);
    expect(stack.targetEvents).toBeUndefined();
    const app = new App();
    const home = new Stack(app, 'Home', { env: { account: '111111111111', region: 'eu-west-1' } });
    const r = new EcsReconciler(home, 'R', { clusters: ['web'], defaultSubnets: ['subnet-0a1'] });
    expect(() => new ReconcilerTargetStack(app, 'T', { env: { account: '222222222222', region: 'eu-west-1' }, reconcilerRoleArn: r.role.roleArn })).toThrow(/reconcilerAccount is needed/);
    expect(() => new ReconcilerTargetStack(app, 'T2', { env: { account: '222222222222', region: 'eu-west-1' }, reconcilerRoleArn: r.role.roleArn, reconcilerAccount: '1111' })).toThrow(EcsReconcilerPropsError);
  });
});

describe("the reconciler's event bus admits the target accounts", () => {
  it("the targets' other accounts and eventSourceAccounts may put aws.ecs events on the default bus; its own account is not listed", () => {
    // Act
    const { template, json } = reconciler({
      targets: [
        { name: 'staging', account: '222222222222', region: 'eu-west-1', clusters: ['web'] },
        { name: 'prod', account: '333333333333', region: 'us-east-1' },
        { name: 'home-b', account: '111111111111', region: 'us-east-1' },
      ],
      eventSourceAccounts: ['444444444444', '222222222222'],
    });

    // Assess
    template.resourceCountIs('AWS::Events::EventBusPolicy', 1);
    expect(ofType(json, 'AWS::Events::EventBusPolicy')[0].Properties).toEqual({
      EventBusName: 'default',
      StatementId: expect.stringMatching(/^ecs-reconciler-targets-/),
      Statement: {
        Effect: 'Allow',
        Principal: { AWS: ['arn:aws:iam::222222222222:root', 'arn:aws:iam::333333333333:root', 'arn:aws:iam::444444444444:root'] },
        Action: 'events:PutEvents',
        Resource: 'arn:aws:events:eu-west-1:111111111111:event-bus/default',
        Condition: { StringEquals: { 'events:source': ['aws.ecs'] } },
      },
    });
  });

  it('no target in another account: no bus policy; a bad account or no events fast path is refused', () => {
    reconciler().template.resourceCountIs('AWS::Events::EventBusPolicy', 0);
    expect(() => reconciler({ eventSourceAccounts: ['12'] })).toThrow(/not a 12-digit account id/);
    expect(() => reconciler({ eventSourceAccounts: ['222222222222'], eventsFastPath: false })).toThrow(/needs the events fast path/);
  });
});

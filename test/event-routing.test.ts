/**
 * Routing ECS's events to their targets by the event's `account` and `region`: the
 * events of a target account reach that target only (whatever the cluster), an event of an
 * undeclared account or Region is dropped and counted, a duplicated event names its service once, and the reconciler's own
 * calls in a target account (its target role) are not hints.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { accountOfArn, originOf, routeEvents } from '../lambda/core/event-routing';
import type { Target } from '../lambda/core/targets';

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`./fixtures/events/${name}.json`, import.meta.url), 'utf8')) as Record<string, unknown>;

/** The documented ECS Service Action event, moved to `account`/`region`, naming `cluster/service`. */
function serviceAction(account: string, region: string, cluster: string, service: string): string {
  const e = fixture('ecs-service-action');
  return JSON.stringify({
    ...e,
    account,
    region,
    resources: [`arn:aws:ecs:${region}:${account}:service/${cluster}/${service}`],
    detail: { ...(e.detail as object), clusterArn: `arn:aws:ecs:${region}:${account}:cluster/${cluster}` },
  });
}

const HOME = { account: '111111111111', region: 'eu-west-1' };
const DEFAULT: Target = { name: 'default', clusters: [], source: 'implicit' };
const STAGING: Target = { name: 'staging', account: '222222222222', region: 'eu-west-1', clusters: ['web'], roleArn: 'arn:aws:iam::222222222222:role/ecs-reconciler-target', source: 'prop' };
const PROD_US: Target = { name: 'prod-us', account: '222222222222', region: 'us-east-1', clusters: [], roleArn: 'arn:aws:iam::222222222222:role/ecs-reconciler-target', source: 'table' };
const TARGETS = [DEFAULT, STAGING, PROD_US];

describe('routeEvents', () => {
  it("an event of target B's account and Region reaches B and not A, even for the same cluster and service names", () => {
    // Prepare
    const bodies = [serviceAction('222222222222', 'eu-west-1', 'web', 'api'), serviceAction('111111111111', 'eu-west-1', 'web', 'api')];

    // Act
    const routed = routeEvents(bodies, TARGETS, HOME);

    // Assess
    expect([...routed.byTarget.entries()]).toEqual([
      ['staging', [{ cluster: 'web', service: 'api' }]],
      ['default', [{ cluster: 'web', service: 'api' }]],
    ]);
    expect(routed.unrouted).toBe(0);
  });

  it('the same account in another Region is another target', () => {
    const routed = routeEvents([serviceAction('222222222222', 'us-east-1', 'web', 'api')], TARGETS, HOME);
    expect([...routed.byTarget.keys()]).toEqual(['prod-us']);
  });

  it('an event of an undeclared account, or of a declared account in an undeclared Region, is dropped and counted', () => {
    // Prepare
    const bodies = [serviceAction('999999999999', 'eu-west-1', 'web', 'api'), serviceAction('111111111111', 'us-west-2', 'web', 'api')];

    // Act
    const routed = routeEvents(bodies, TARGETS, HOME);

    // Assess
    expect(routed.byTarget.size).toBe(0);
    expect(routed.unrouted).toBe(2);
    expect(routed.unroutedOrigins).toEqual(['999999999999/eu-west-1', '111111111111/us-west-2']);
  });

  it("an event of a cluster outside its target's clusters still reaches that target (its passes reconcile every cluster its specs name), the default target's too", () => {
    // Prepare: staging lists web, the default target (MANAGED_CLUSTERS) apps
    const targets = [{ ...DEFAULT, clusters: ['apps'] }, STAGING, PROD_US];
    const bodies = [serviceAction('222222222222', 'eu-west-1', 'batch', 'api'), serviceAction('111111111111', 'eu-west-1', 'jobs', 'nightly')];

    // Act
    const routed = routeEvents(bodies, targets, HOME);

    // Assess
    expect([...routed.byTarget.entries()]).toEqual([
      ['staging', [{ cluster: 'batch', service: 'api' }]],
      ['default', [{ cluster: 'jobs', service: 'nightly' }]],
    ]);
    expect(routed.unrouted).toBe(0);
  });

  it('with the home account unknown, the default target takes no event (never a guess)', () => {
    const routed = routeEvents([serviceAction('111111111111', 'eu-west-1', 'web', 'api')], TARGETS, { region: 'eu-west-1' });
    expect(routed.byTarget.size).toBe(0);
    expect(routed.unrouted).toBe(1);
  });

  it('duplicated events (the same event twice, two events of one service) name the service once', () => {
    const one = serviceAction('222222222222', 'eu-west-1', 'web', 'api');
    const routed = routeEvents([one, one, serviceAction('222222222222', 'eu-west-1', 'web', 'api'), serviceAction('222222222222', 'eu-west-1', 'web', 'worker')], TARGETS, HOME);
    expect(routed.byTarget.get('staging')).toEqual([
      { cluster: 'web', service: 'api' },
      { cluster: 'web', service: 'worker' },
    ]);
  });

  it("the reconciler's own write in a target account (its target role's session) is not a hint; someone else's is", () => {
    // Prepare: the documented UpdateService CloudTrail event, in the staging account
    const base = fixture('cloudtrail-update-service');
    const detail = base.detail as Record<string, unknown>;
    const asRole = (issuer: string) =>
      JSON.stringify({
        ...base,
        account: '222222222222',
        region: 'eu-west-1',
        detail: {
          ...detail,
          requestParameters: { cluster: 'web', service: 'api' },
          userIdentity: { type: 'AssumedRole', arn: `${issuer}/session`, sessionContext: { sessionIssuer: { type: 'Role', arn: issuer } } },
        },
      });

    // Act
    const own = routeEvents([asRole(STAGING.roleArn!)], TARGETS, HOME);
    const other = routeEvents([asRole('arn:aws:iam::222222222222:role/Admin')], TARGETS, HOME);

    // Assess
    expect(own.byTarget.size).toBe(0);
    expect(own.ignored).toBe(1);
    expect(other.byTarget.get('staging')).toEqual([{ cluster: 'web', service: 'api' }]);
  });

  it('heartbeats and bodies that are not JSON are ignored, not routed', () => {
    const routed = routeEvents([JSON.stringify(fixture('scheduled-event')), 'not json'], TARGETS, HOME);
    expect(routed).toMatchObject({ ignored: 2, unrouted: 0 });
    expect(routed.byTarget.size).toBe(0);
  });
});

describe('accountOfArn and originOf', () => {
  it('read the account of a function ARN and the envelope of an event', () => {
    expect(accountOfArn('arn:aws:lambda:eu-west-1:111111111111:function:ecs-reconciler')).toBe('111111111111');
    expect(accountOfArn('not-an-arn')).toBeUndefined();
    expect(originOf(serviceAction('222222222222', 'eu-west-1', 'web', 'api'))).toEqual({ account: '222222222222', region: 'eu-west-1' });
    expect(originOf('[1]')).toEqual({});
  });
});

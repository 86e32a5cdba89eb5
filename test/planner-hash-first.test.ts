/**
 * Hash-first comparison: a service whose spec hash and live task definition are
 * unchanged since its last comparison is not canonicalized again, and everything that did change
 * (the spec, the live revision, the service by hand) is still compared and found.
 * Speed is measured in `npm run bench`, never here: these tests count digests computed.
 */
import { describe, expect, it } from 'vitest';
import { CompareCache } from '../lambda/core/compare-cache';
import { fullPlan } from './support/steady-memo';
import { plan } from '../lambda/core/planner';
import { eventReason, rememberReason, resolveConditions, statusChanged } from '../lambda/core/status';
import { parseRememberedStatus } from '../lambda/adapters/dynamo-spec-store';
import { canonicalTaskDefinitionHash } from '../lambda/core/taskdef';
import type { PlanInput } from '../lambda/core/planner';
import type { ObservedService, Plan, ServiceStatus, TaskDefinition } from '../lambda/core/types';
import {
  NOW,
  SG_1,
  SUBNET_A,
  SUBNET_B,
  aConvergedService,
  aDeployment,
  aPlanInput,
  aServiceSpec,
  aSpec,
  anObservedCluster,
  anObservedState,
  at,
  describedTaskDefinitionFor,
} from './support/builders';
import { taskDefinitionArn } from './support/fake-ecs';

/** A converged fleet of `n` services in cluster `apps`, as one plan input. */
function convergedFleet(n: number, image = 'public.ecr.aws/nginx/nginx:1.27'): PlanInput {
  const specs = Array.from({ length: n }, (_, i) => aSpec({ service: `web-${i}`, image }));
  const converged = specs.map((s) => aConvergedService(s.spec));
  return aPlanInput({
    specs,
    observed: anObservedState(
      [anObservedCluster('apps', converged.map((c) => c.service))],
      Object.assign({}, ...converged.map((c) => c.taskDefinitions)) as Record<string, TaskDefinition>,
    ),
  });
}

describe('hash-first planner', () => {
  it('a steady fleet planned again digests each live revision once per description and takes every judgement', () => {
    const cache = new CompareCache();
    const input = { ...convergedFleet(20), cache };
    const first = plan(input);
    expect(first.actions).toEqual([]);
    expect(cache.digestsComputed()).toBe(20);
    const again = { ...input, remembered: first.statuses };
    const before = cache.judgementsTaken();
    expect(plan(again).actions).toEqual([]);
    expect(plan(again).actions).toEqual([]);
    expect(cache.digestsComputed()).toBe(20);
    expect(cache.judgementsTaken() - before).toBe(40);
  });

  it('a changed spec is compared again and rolled out', () => {
    const cache = new CompareCache();
    const input = { ...convergedFleet(3), cache };
    const remembered = plan(input).statuses;
    const edited = aSpec({ service: 'web-1', image: 'public.ecr.aws/nginx/nginx:1.28' });
    const before = cache.judgementsTaken();
    const p = plan({ ...input, remembered, specs: input.specs.map((s) => (s.key?.service === 'web-1' ? edited : s)) });
    expect(cache.judgementsTaken() - before).toBe(2);
    expect(p.actions.map((a) => `${a.type} ${a.service}`)).toEqual(['RegisterTaskDefinition web-1', 'UpdateService web-1']);
    expect(p.actions[0].reason).toContain('containerDefinitions[web-1].image public.ecr.aws/nginx/nginx:1.27 -> public.ecr.aws/nginx/nginx:1.28');
  });

  it('a changed live revision (registered and set by hand) is compared again and corrected', () => {
    const input = convergedFleet(3);
    const remembered = plan(input).statuses;
    const handArn = taskDefinitionArn('apps-web-2', 2);
    const handTd: TaskDefinition = {
      ...describedTaskDefinitionFor(aServiceSpec({ service: 'web-2', image: 'public.ecr.aws/nginx/nginx:hand' }), { revision: 2 }),
      taskDefinitionArn: handArn,
    };
    const services = { ...input.observed.clusters.apps.services };
    services['web-2'] = { ...services['web-2'], taskDefinition: handArn };
    const p = plan({
      ...input,
      remembered,
      observed: {
        clusters: { apps: { ...input.observed.clusters.apps, services } },
        taskDefinitions: { ...input.observed.taskDefinitions, [handArn]: handTd },
      },
    });
    expect(p.actions.map((a) => `${a.type} ${a.service}`)).toEqual(['RegisterTaskDefinition web-2', 'UpdateService web-2']);
    expect(p.actions[0].reason).toContain('image public.ecr.aws/nginx/nginx:hand -> public.ecr.aws/nginx/nginx:1.27');
  });

  it('a hand edit of the service itself is still found with every digest cached', () => {
    const cache = new CompareCache();
    const input = { ...convergedFleet(3), cache };
    const remembered = plan(input).statuses;
    const services = { ...input.observed.clusters.apps.services };
    services['web-0'] = { ...services['web-0'], desiredCount: 7 };
    const before = cache.digestsComputed();
    const p = plan({ ...input, remembered, observed: { ...input.observed, clusters: { apps: { ...input.observed.clusters.apps, services } } } });
    expect(cache.digestsComputed()).toBe(before);
    expect(p.actions.map((a) => `${a.type} ${a.service}`)).toEqual(['UpdateService web-0']);
    expect(p.actions[0].reason).toMatch(/: desiredCount 7 -> 2$/);
  });

  it('a description with a remembered ARN but other content (a new object) is hashed afresh', () => {
    const cache = new CompareCache();
    const input = { ...convergedFleet(1), cache };
    const remembered = plan(input).statuses;
    const [arn, td] = Object.entries(input.observed.taskDefinitions)[0];
    const changed: TaskDefinition = { ...td, containerDefinitions: td.containerDefinitions?.map((c) => ({ ...c, image: 'other:1' })) };
    const p = plan({ ...input, remembered, observed: { ...input.observed, taskDefinitions: { [arn]: changed } } });
    expect(p.actions.map((a) => a.type)).toEqual(['RegisterTaskDefinition', 'UpdateService']);
  });

  it('the digest is the same for canonically equal task definitions and differs for a real change', () => {
    const spec = aServiceSpec();
    const described = describedTaskDefinitionFor(spec);
    const reordered = Object.fromEntries(Object.entries(described).reverse()) as TaskDefinition;
    expect(canonicalTaskDefinitionHash(reordered)).toBe(canonicalTaskDefinitionHash(described));
    expect(canonicalTaskDefinitionHash({ ...described, memory: '1024' })).not.toBe(canonicalTaskDefinitionHash(described));
  });
});

/**
 * The steady path (a converged service costs a few small objects a pass): once a fleet
 * is planned steady, each change below, made to one service as a new observation (a new object,
 * as every pass reads ECS afresh), must still reach the full comparison and the status. Each case
 * fails if a shortcut of the steady path (comparison allocated only on a difference, set texts
 * compared without building them, scalar fields compared without their canonical form, the
 * failed-rollout check skipped when nothing is FAILED, the reason scan stopped at the newest
 * explaining event, the remembered reasons kept as they are) skipped it.
 */
describe('steady path: every change still reaches the full comparison', () => {
  const SPOT_SG = 'sg-0fffffffffffffff1';
  const OTHER_SUBNET = 'subnet-0fffffffffffffff1';

  /** Three converged services (web-0..2, tag team=a), planned twice: statuses (judged versions included) remembered. */
  function steadyFleet(): { input: PlanInput; steady: Plan } {
    const specs = Array.from({ length: 3 }, (_, i) => aSpec({ service: `web-${i}`, tags: { team: 'a' } }));
    const converged = specs.map((s) => aConvergedService(s.spec));
    const base = aPlanInput({
      specs,
      observed: anObservedState(
        [anObservedCluster('apps', converged.map((c) => c.service))],
        Object.assign({}, ...converged.map((c) => c.taskDefinitions)) as Record<string, TaskDefinition>,
      ),
    });
    const first = plan(base);
    const input = { ...base, remembered: first.statuses };
    const steady = plan(input);
    expect(steady.actions).toEqual([]);
    expect(Object.values(steady.statuses).map((st) => st.phase)).toEqual(['Converged', 'Converged', 'Converged']);
    return { input: { ...input, remembered: steady.statuses }, steady };
  }

  /** `input` with web-1 observed as `change` makes it (a new object). */
  function withWeb1(input: PlanInput, change: (s: ObservedService) => ObservedService): PlanInput {
    const cl = input.observed.clusters.apps;
    const services = { ...cl.services, 'web-1': change(structuredClone(cl.services['web-1'])) };
    return { ...input, observed: { ...input.observed, clusters: { apps: { ...cl, services } } } };
  }

  const readyReason = (st: ServiceStatus | undefined) => st?.conditions.find((c) => c.type === 'Ready')?.reason;
  const NEW_EVENT = '(service web-1) was unable to place a task because no container instance met all of its requirements.';

  it.each([
    {
      case: 'desiredCount set by hand',
      change: (s: ObservedService) => ({ ...s, desiredCount: 7 }),
      actions: ['UpdateService web-1'],
      reason: /desiredCount 7 -> 2/,
    },
    {
      case: 'a subnet replaced by hand (same count)',
      change: (s: ObservedService) => ({
        ...s,
        networkConfiguration: { awsvpcConfiguration: { ...s.networkConfiguration!.awsvpcConfiguration, subnets: [SUBNET_A, OTHER_SUBNET] } },
      }),
      actions: ['UpdateService web-1'],
      reason: new RegExp(`networkConfiguration.subnets ${SUBNET_A},${OTHER_SUBNET} -> ${SUBNET_A},${SUBNET_B}`),
    },
    {
      case: 'one subnet of two left (a text that is a prefix of the wanted one)',
      change: (s: ObservedService) => ({
        ...s,
        networkConfiguration: { awsvpcConfiguration: { ...s.networkConfiguration!.awsvpcConfiguration, subnets: [SUBNET_A] } },
      }),
      actions: ['UpdateService web-1'],
      reason: new RegExp(`networkConfiguration.subnets ${SUBNET_A} -> ${SUBNET_A},${SUBNET_B}`),
    },
    {
      case: 'a security group replaced by hand',
      change: (s: ObservedService) => ({
        ...s,
        networkConfiguration: { awsvpcConfiguration: { ...s.networkConfiguration!.awsvpcConfiguration, securityGroups: [SPOT_SG] } },
      }),
      actions: ['UpdateService web-1'],
      reason: new RegExp(`networkConfiguration.securityGroups ${SPOT_SG} -> ${SG_1}`),
    },
    {
      case: 'the circuit breaker turned off by hand',
      change: (s: ObservedService) => ({
        ...s,
        deploymentConfiguration: { ...s.deploymentConfiguration!, deploymentCircuitBreaker: { enable: false, rollback: false } },
      }),
      actions: ['UpdateService web-1'],
      reason: /deploymentCircuitBreaker enable=false,rollback=false -> enable=true,rollback=true/,
    },
    {
      case: 'ECS Exec turned on by hand (a declared scalar field)',
      change: (s: ObservedService) => ({ ...s, enableExecuteCommand: true }),
      actions: ['UpdateService web-1'],
      reason: /enableExecuteCommand true -> false/,
    },
    {
      case: 'the platform version pinned by hand',
      change: (s: ObservedService) => ({ ...s, platformVersion: '1.4.0' }),
      actions: ['UpdateService web-1'],
      reason: /platformVersion 1\.4\.0 -> LATEST/,
    },
    {
      case: 'the capacity provider switched by hand',
      change: (s: ObservedService) => ({ ...s, capacityProviderStrategy: [{ capacityProvider: 'FARGATE_SPOT', weight: 1, base: 0 }] }),
      actions: ['UpdateService web-1'],
      reason: /capacityProviderStrategy FARGATE_SPOT:1 -> FARGATE:1/,
    },
    {
      case: 'the capacity provider weight changed by hand (same provider)',
      change: (s: ObservedService) => ({ ...s, capacityProviderStrategy: [{ capacityProvider: 'FARGATE', weight: 2 }] }),
      actions: ['UpdateService web-1'],
      reason: /capacityProviderStrategy FARGATE:2 -> FARGATE:1/,
    },
    {
      case: 'a capacity provider base set by hand (same provider and weight)',
      change: (s: ObservedService) => ({ ...s, capacityProviderStrategy: [{ capacityProvider: 'FARGATE', weight: 1, base: 2 }] }),
      actions: ['UpdateService web-1'],
      reason: /capacityProviderStrategy FARGATE:1:base=2 -> FARGATE:1/,
    },
    {
      case: 'a second capacity provider added by hand',
      change: (s: ObservedService) => ({
        ...s,
        capacityProviderStrategy: [
          { capacityProvider: 'FARGATE', weight: 1 },
          { capacityProvider: 'FARGATE_SPOT', weight: 1 },
        ],
      }),
      actions: ['UpdateService web-1'],
      reason: /capacityProviderStrategy FARGATE:1,FARGATE_SPOT:1 -> FARGATE:1/,
    },
    {
      case: 'a Cloud Map registry added by hand (a list field neither side set)',
      change: (s: ObservedService) => ({
        ...s,
        serviceRegistries: [{ registryArn: 'arn:aws:servicediscovery:us-east-1:123456789012:service/srv-0123456789abcdef' }],
      }),
      actions: ['UpdateService web-1'],
      reason: /serviceRegistries .*srv-0123456789abcdef.* -> \(none\)/,
    },
    {
      case: 'a spec tag changed by hand',
      change: (s: ObservedService) => ({ ...s, tags: { ...s.tags, team: 'b' } }),
      actions: ['TagResource web-1'],
      reason: /tags\.team b -> a/,
    },
    {
      case: 'the subnets listed the other way round (no change)',
      change: (s: ObservedService) => ({
        ...s,
        networkConfiguration: { awsvpcConfiguration: { ...s.networkConfiguration!.awsvpcConfiguration, subnets: [SUBNET_B, SUBNET_A] } },
      }),
      actions: [],
      phase: 'Converged',
    },
    {
      case: 'a task stopped (runningCount below desiredCount)',
      change: (s: ObservedService) => ({ ...s, runningCount: 1 }),
      actions: [],
      phase: 'Progressing',
      readyReason: 'TasksLagging',
      status: { runningCount: 1, laggingSince: NOW.toISOString() },
    },
    {
      case: 'a task pending',
      change: (s: ObservedService) => ({ ...s, pendingCount: 1 }),
      actions: [],
      phase: 'Progressing',
      readyReason: 'TasksSettling',
      status: { pendingCount: 1 },
    },
    {
      case: 'a new ECS event, listed first as ECS does',
      change: (s: ObservedService) => ({
        ...s,
        events: [
          { id: 'e2', createdAt: at(-5), message: NEW_EVENT },
          { id: 'e1', createdAt: at(-600), message: '(service web-1) has reached a steady state.' },
          ...s.events,
        ],
      }),
      actions: [],
      phase: 'Converged',
      status: { reason: NEW_EVENT, reasonsFirstSeen: { [NEW_EVENT]: NOW.toISOString() } },
    },
    {
      case: 'the PRIMARY deployment FAILED',
      change: (s: ObservedService) => ({ ...s, deployments: [{ ...s.deployments[0], rolloutState: 'FAILED' as const, rolloutStateReason: 'tasks failed to start' }] }),
      actions: [],
      phase: 'Degraded',
      readyReason: 'RolloutFailed',
    },
    {
      case: 'a second deployment in progress',
      change: (s: ObservedService) => ({
        ...s,
        deployments: [...s.deployments, aDeployment({ id: 'ecs-svc/0000009', status: 'ACTIVE', taskDefinition: s.taskDefinition, rolloutState: 'IN_PROGRESS' })],
      }),
      actions: [],
      phase: 'Progressing',
      readyReason: 'RolloutInProgress',
    },
  ])('$case', ({ change, actions, reason, phase, readyReason: wantReady, status }) => {
    // Prepare
    const { input, steady } = steadyFleet();
    const changed = withWeb1(input, change);
    // Act
    const p = plan(changed);
    const reference = fullPlan(changed);
    // Assess
    expect(p).toStrictEqual(reference);
    expect(p.actions.map((a) => `${a.type} ${a.service}`)).toEqual(actions);
    if (reason) expect(p.actions.map((a) => a.reason).join('\n')).toMatch(reason);
    const web1 = p.statuses['apps/web-1'];
    if (phase) expect(web1.phase).toBe(phase);
    if (wantReady) expect(readyReason(web1)).toBe(wantReady);
    if (status) expect(web1).toMatchObject(status);
    // The services that did not change keep their steady status, observedAt included.
    expect(p.statuses['apps/web-0']).toStrictEqual(steady.statuses['apps/web-0']);
    expect(p.statuses['apps/web-2']).toStrictEqual(steady.statuses['apps/web-2']);
  });

  it('a steady plan from statuses as the store reads them back keeps their conditions and reports no change', () => {
    // Prepare: the remembered statuses as DynamoDB gives them to the pass (JSON, then the store's schema).
    const { input } = steadyFleet();
    const stored: Record<string, ServiceStatus> = {};
    for (const [id, st] of Object.entries(input.remembered)) {
      const read = parseRememberedStatus(JSON.parse(JSON.stringify(st)));
      if (read) stored[id] = read;
    }
    const fromStore = { ...input, remembered: stored, now: at(60) };
    // Act
    const p = plan(fromStore);
    const lagging = plan(withWeb1(fromStore, (s) => ({ ...s, runningCount: 1 })));
    // Assess: nothing to write; the unchanged conditions are the remembered ones, not copies.
    expect(p.actions).toEqual([]);
    for (const [id, st] of Object.entries(p.statuses)) {
      expect(statusChanged(stored[id], st), id).toBe(false);
      expect(st.conditions, id).toBe(stored[id].conditions);
      expect(st.observedAt).toBe(at(60).toISOString());
    }
    // A service that changed gets new conditions (and a write); the others keep theirs.
    const web1 = lagging.statuses['apps/web-1'];
    expect(statusChanged(stored['apps/web-1'], web1)).toBe(true);
    expect(web1.conditions).not.toBe(stored['apps/web-1'].conditions);
    expect(web1.conditions.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'TasksLagging', lastTransitionTime: at(60).toISOString() });
    expect(lagging.statuses['apps/web-0'].conditions).toBe(stored['apps/web-0'].conditions);
  });

  it('resolveConditions reuses a remembered condition only when it says the same and holds nothing else', () => {
    const since = at(-600).toISOString();
    const ready = { type: 'Ready', status: 'True', reason: 'ServiceConverged', message: 'm', lastTransitionTime: since } as const;
    const progressing = { type: 'Progressing', status: 'False', reason: 'ServiceConverged', message: 'm', lastTransitionTime: since } as const;
    const drafts = {
      ready: { status: 'True', reason: 'ServiceConverged', message: 'm' },
      progressing: { status: 'False', reason: 'ServiceConverged', message: 'm' },
    } as const;
    const remembered = [ready, progressing];
    // The same: the remembered array itself.
    expect(resolveConditions(drafts, remembered, NOW.toISOString())).toBe(remembered);
    // Another message, same status: a new condition, its lastTransitionTime kept; the other one reused.
    const moved = resolveConditions({ ...drafts, ready: { ...drafts.ready, message: 'n' } }, remembered, NOW.toISOString());
    expect(moved).not.toBe(remembered);
    expect(moved[0]).toStrictEqual({ ...ready, message: 'n' });
    expect(moved[1]).toBe(progressing);
    // Another status: now.
    const changed = resolveConditions({ ...drafts, ready: { status: 'False', reason: 'TasksLagging', message: 'm' } }, remembered, NOW.toISOString());
    expect(changed[0]).toStrictEqual({ type: 'Ready', status: 'False', reason: 'TasksLagging', message: 'm', lastTransitionTime: NOW.toISOString() });
    // A Blocked condition more than remembered: a new array, the old conditions reused in it.
    const blocked = resolveConditions({ ...drafts, blocked: { reason: 'NotOwned', message: 'b' } }, remembered, NOW.toISOString());
    expect(blocked).toHaveLength(3);
    expect(blocked[0]).toBe(ready);
    // A remembered condition with a member more, or its members in another order, is not reused (equal copy).
    const extra = [{ ...ready, note: 'x' }, progressing];
    expect(resolveConditions(drafts, extra, NOW.toISOString())[0]).toStrictEqual(ready);
    expect(resolveConditions(drafts, extra, NOW.toISOString())[0]).not.toBe(extra[0]);
    const reordered = [{ lastTransitionTime: since, type: 'Ready', status: 'True', reason: 'ServiceConverged', message: 'm' } as const, progressing];
    const fresh = resolveConditions(drafts, reordered, NOW.toISOString());
    expect(fresh[0]).not.toBe(reordered[0]);
    expect(Object.keys(fresh[0])).toEqual(['type', 'status', 'reason', 'message', 'lastTransitionTime']);
  });

  it('eventReason picks the newest explaining event in any listing order', () => {
    const ev = (id: string, seconds: number, message: string) => ({ id, createdAt: at(seconds), message });
    const steadyMsg = '(service web) has reached a steady state.';
    const service = (events: ObservedService['events']) => ({ events }) as ObservedService;
    // Newest first (ECS's order): the steady-state message is skipped, the next one explains.
    expect(eventReason(service([ev('3', -1, steadyMsg), ev('2', -10, 'B'), ev('1', -100, 'A')]))).toBe('B');
    // Oldest first: a newer event later in the list still wins.
    expect(eventReason(service([ev('1', -100, 'A'), ev('2', -10, 'B'), ev('3', -1, steadyMsg)]))).toBe('B');
    // Equally new: the first listed.
    expect(eventReason(service([ev('1', -10, 'A'), ev('2', -10, 'B')]))).toBe('A');
    expect(eventReason(service([ev('1', -1, steadyMsg)]))).toBeUndefined();
  });

  it('rememberReason returns the remembered map itself only when nothing in it would change', () => {
    const remembered = { B: at(-10).toISOString(), A: at(-100).toISOString() };
    // Unchanged (reason known, newest first, within the bound): the same object.
    expect(rememberReason(remembered, 'A', NOW.toISOString())).toBe(remembered);
    expect(rememberReason(remembered, undefined, NOW.toISOString())).toBe(remembered);
    // A reason read anew (another string of the same text, as each pass reads its events).
    expect(rememberReason(remembered, ['A', ''].join(''), NOW.toISOString())).toBe(remembered);
    // A new reason: a new map, newest first.
    const added = rememberReason(remembered, 'C', NOW.toISOString());
    expect(added).not.toBe(remembered);
    expect(Object.entries(added ?? {})).toEqual([
      ['C', NOW.toISOString()],
      ['B', at(-10).toISOString()],
      ['A', at(-100).toISOString()],
    ]);
    // Out of order: sorted into a new map.
    const unsorted = { A: at(-100).toISOString(), B: at(-10).toISOString() };
    const sorted = rememberReason(unsorted, 'A', NOW.toISOString());
    expect(sorted).not.toBe(unsorted);
    expect(Object.keys(sorted ?? {})).toEqual(['B', 'A']);
    // Over the bound: cut to the ten newest.
    const eleven = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`R${String(i).padStart(2, '0')}`, at(-i).toISOString()]));
    const cut = rememberReason(eleven, undefined, NOW.toISOString());
    expect(cut).not.toBe(eleven);
    expect(Object.keys(cut ?? {})).toHaveLength(10);
    expect(rememberReason({}, undefined, NOW.toISOString())).toBeUndefined();
  });
});

/**
 * The planner and the fold of results, pure: the edges of the bugs found end to end in
 * test/break (a hand change mistaken for a rollback, a lag hidden behind an endless rollout, a
 * clientToken reused for a new service), each pinned down without a server.
 */
import { describe, expect, it } from 'vitest';
import { foldResults } from '../../lambda/core/pass';
import { clientToken, plan } from '../../lambda/core/planner';
import { Reason } from '../../lambda/core/status';
import type { Action, ServiceStatus } from '../../lambda/core/types';
import { taskDefinitionArn } from '../support/fake-ecs';
import {
  aConvergedService,
  aDeployment,
  anObservedCluster,
  anObservedService,
  anObservedState,
  aPlanInput,
  aSpec,
  aStatus,
  at,
  CLUSTER,
  describedTaskDefinitionFor,
  familyOf,
  NOW,
  SERVICE,
} from '../support/builders';

const ID = `${CLUSTER}/${SERVICE}`;
const ready = (s: ServiceStatus | undefined) => s?.conditions.find((c) => c.type === 'Ready');

describe('a rollback is told from a hand change by the task definition ECS returns to', () => {
  const spec = aSpec({ image: 'public.ecr.aws/nginx/nginx:1.28' });
  const old = describedTaskDefinitionFor(aSpec().spec, { revision: 1 });
  const ours = describedTaskDefinitionFor(spec.spec, { revision: 2 });
  const hand = { ...describedTaskDefinitionFor(aSpec({ image: 'public.ecr.aws/nginx/nginx:hotfix' }).spec, { revision: 3 }) };
  const tds = { [old.taskDefinitionArn!]: old, [ours.taskDefinitionArn!]: ours, [hand.taskDefinitionArn!]: hand };

  it.each([
    {
      case: 'PRIMARY back on the task definition the rollout started from: rolled back',
      live: old.taskDefinitionArn!,
      from: old.taskDefinitionArn!,
      failed: true,
    },
    {
      case: 'PRIMARY on a task definition set by a person: drift, corrected',
      live: hand.taskDefinitionArn!,
      from: old.taskDefinitionArn!,
      failed: false,
    },
    {
      case: 'after a create (nothing to roll back to): a new PRIMARY is a person, corrected',
      live: hand.taskDefinitionArn!,
      from: undefined,
      first: true,
      failed: false,
    },
    {
      case: 'after a create, even on the task definition it was created with: a person, corrected',
      live: old.taskDefinitionArn!,
      from: undefined,
      first: true,
      failed: false,
    },
  ])('$case', ({ live, from, failed, first }: { live: string; from: string | undefined; failed: boolean; first?: boolean }) => {
    // Prepare: our deployment d2 never COMPLETED; a new PRIMARY d3 runs `live`.
    const service = anObservedService({ taskDefinition: live, deployments: [aDeployment({ id: 'd3', taskDefinition: live })] });
    const input = aPlanInput({
      specs: [spec],
      observed: anObservedState([anObservedCluster(CLUSTER, [service])], tds),
      remembered: {
        [ID]: aStatus({
          phase: 'Progressing',
          lastAppliedSpecHash: spec.hash,
          appliedDeploymentId: 'd2',
          appliedRolloutState: 'IN_PROGRESS',
          rolloutFromTaskDefinitionArn: from,
          ...(first ? { firstRollout: true as const } : {}),
        }),
      },
    });

    // Act
    const p = plan(input);

    // Assess
    if (failed) {
      expect(p.actions).toEqual([]);
      expect(p.statuses[ID]).toMatchObject({ phase: 'Degraded', failedSpecHash: spec.hash });
    } else {
      expect(p.actions.map((a) => a.type)).toEqual(['RegisterTaskDefinition', 'UpdateService']);
      expect(p.actions[1]).toMatchObject({ kind: 'drift' });
      expect(p.statuses[ID].failedSpecHash).toBeUndefined();
    }
  });

  it('a create records a first rollout (firstRollout), never an empty rolloutFromTaskDefinitionArn; a rollout before it COMPLETED keeps it', () => {
    // Act
    const created = plan(aPlanInput({ specs: [spec], observed: anObservedState([anObservedCluster(CLUSTER, [])]) })).statuses[ID];
    const { service, taskDefinitions } = aConvergedService(aSpec().spec);
    const next = plan(
      aPlanInput({
        specs: [spec],
        observed: anObservedState([anObservedCluster(CLUSTER, [service])], taskDefinitions),
        remembered: { [ID]: aStatus({ lastAppliedSpecHash: aSpec().hash, appliedRolloutState: 'IN_PROGRESS', firstRollout: true }) },
      }),
    ).statuses[ID];

    // Assess
    expect(created.firstRollout).toBe(true);
    expect(created).not.toHaveProperty('rolloutFromTaskDefinitionArn');
    expect(next.firstRollout).toBe(true);
    expect(next).not.toHaveProperty('rolloutFromTaskDefinitionArn');
  });

  it.each([
    { case: 'the applied rollout had COMPLETED: starts from the live revision', state: 'COMPLETED' as const, from: taskDefinitionArn(familyOf(), 0), expected: 'live' },
    { case: 'the applied rollout had not COMPLETED: still from the earlier start', state: 'IN_PROGRESS' as const, from: taskDefinitionArn(familyOf(), 0), expected: 'remembered' },
    { case: 'no start remembered (older status): the live revision', state: 'IN_PROGRESS' as const, from: undefined, expected: 'live' },
  ])('a planned rollout records where it starts from: $case', ({ state, from, expected }) => {
    // Prepare: live on `old`, the spec now wants `ours`.
    const { service, taskDefinitions } = aConvergedService(aSpec().spec);
    const input = aPlanInput({
      specs: [spec],
      observed: anObservedState([anObservedCluster(CLUSTER, [service])], taskDefinitions),
      remembered: { [ID]: aStatus({ lastAppliedSpecHash: aSpec().hash, appliedRolloutState: state, rolloutFromTaskDefinitionArn: from }) },
    });

    // Act
    const p = plan(input);

    // Assess
    expect(p.actions.map((a) => a.type)).toEqual(['RegisterTaskDefinition', 'UpdateService']);
    expect(p.statuses[ID].rolloutFromTaskDefinitionArn).toBe(expected === 'live' ? service.taskDefinition : from);
  });

  it('a failed or skipped rollout gives back the remembered start, with the rest of the memory', () => {
    // Prepare
    const planned = aStatus({ phase: 'Progressing', lastAppliedSpecHash: spec.hash, rolloutFromTaskDefinitionArn: ours.taskDefinitionArn });
    const remembered = aStatus({ lastAppliedSpecHash: 'older', rolloutFromTaskDefinitionArn: old.taskDefinitionArn });
    const update = { type: 'UpdateService', cluster: CLUSTER, service: SERVICE, specHash: spec.hash, reason: 'x', input: { cluster: CLUSTER, service: SERVICE }, changes: [] } as Action;

    // Act
    const out = foldResults({ [ID]: planned }, [{ ok: false, action: update, errorClass: 'throttled', message: 'Rate exceeded' }], { [ID]: remembered }, NOW);

    // Assess
    expect(out[ID]).toMatchObject({ lastAppliedSpecHash: 'older', rolloutFromTaskDefinitionArn: old.taskDefinitionArn });
  });
});

describe('a lag beyond grace is never hidden behind a rollout that does not end', () => {
  it.each([
    { case: 'rollout IN_PROGRESS, lag beyond grace: Degraded', running: 0, since: at(-600), phase: 'Degraded', reason: Reason.LagBeyondGrace },
    { case: 'rollout IN_PROGRESS, lag within grace: Progressing', running: 0, since: at(-60), phase: 'Progressing', reason: Reason.RolloutInProgress },
    { case: 'rollout IN_PROGRESS, no lag: Progressing', running: 2, since: undefined, phase: 'Progressing', reason: Reason.RolloutInProgress },
  ])('$case', ({ running, since, phase, reason }) => {
    // Prepare: our task definition is live, its deployment never completes (no circuit breaker).
    const spec = aSpec({ deployment: { circuitBreaker: { enable: false, rollback: false } } });
    const { service, taskDefinitions } = aConvergedService(spec.spec, {
      runningCount: running,
      deployments: [aDeployment({ taskDefinition: taskDefinitionArn(familyOf(), 1), runningCount: running, rolloutState: 'IN_PROGRESS' })],
    });
    const input = aPlanInput({
      specs: [spec],
      observed: anObservedState([anObservedCluster(CLUSTER, [service])], taskDefinitions),
      remembered: { [ID]: aStatus({ lastAppliedSpecHash: spec.hash, ...(since ? { laggingSince: since.toISOString() } : {}) }) },
    });

    // Act
    const p = plan(input);

    // Assess
    expect(p.actions).toEqual([]);
    expect(p.statuses[ID].phase).toBe(phase);
    expect(ready(p.statuses[ID])?.reason).toBe(reason);
  });
});

describe('a service created again never reuses the first creation clientToken', () => {
  const spec = aSpec();
  const first = clientToken({ cluster: CLUSTER, service: SERVICE }, spec.hash);
  const createToken = (p: ReturnType<typeof plan>) => {
    const create = p.actions.find((a) => a.type === 'CreateService');
    return create?.type === 'CreateService' ? create.input.clientToken : undefined;
  };

  it.each([
    {
      case: 'first creation: the plain token (stable across passes)',
      services: [],
      remembered: undefined,
      same: true,
    },
    {
      case: 'the earlier service is INACTIVE: salted with its createdAt',
      services: [anObservedService({ status: 'INACTIVE', desiredCount: 0, runningCount: 0, createdAt: at(-7200) })],
      remembered: undefined,
      same: false,
    },
    {
      case: 'the earlier service is purged (MISSING) but its status says Deleted: salted',
      services: [],
      remembered: aStatus({ phase: 'Deleted', desiredCount: 0, runningCount: 0 }),
      same: false,
    },
  ])('$case', ({ services, remembered, same }) => {
    // Prepare
    const input = aPlanInput({
      specs: [spec],
      observed: anObservedState([anObservedCluster(CLUSTER, services)]),
      remembered: remembered ? { [ID]: remembered } : {},
    });

    // Act
    const token = createToken(plan(input));
    const again = createToken(plan(input));

    // Assess
    expect(token).toMatch(/^ecsr-[0-9a-f]{31}$/);
    expect(again).toBe(token);
    expect(token === first).toBe(same);
  });

  it('two INACTIVE incarnations give two tokens', () => {
    const tokenAfter = (createdAt: Date) => {
      const old = anObservedService({ status: 'INACTIVE', desiredCount: 0, runningCount: 0, createdAt });
      return createToken(plan(aPlanInput({ specs: [spec], observed: anObservedState([anObservedCluster(CLUSTER, [old])]) })));
    };
    expect(tokenAfter(at(-7200))).not.toBe(tokenAfter(at(-3600)));
  });
});

describe('a changed spec after a failure is a retry, even when the task definition is the same', () => {
  const failedTd = describedTaskDefinitionFor(aSpec().spec, { revision: 1 });
  const failedPrimary = aDeployment({ id: 'd1', taskDefinition: failedTd.taskDefinitionArn!, runningCount: 0, rolloutState: 'FAILED', rolloutStateReason: 'tasks failed to start' });

  it.each([
    {
      case: 'memory says another hash was applied: UpdateService forcing a new deployment',
      remembered: (failedHash: string) => aStatus({ phase: 'Degraded', lastAppliedSpecHash: failedHash, failedSpecHash: failedHash }),
      retried: true,
    },
    {
      case: 'no memory at all: the FAILED deployment counts (the safe reading), nothing is sent',
      remembered: () => undefined,
      retried: false,
    },
    {
      case: 'memory of another hash but of no failure (a status write lost after the rollout): counts, nothing is sent',
      remembered: () => aStatus({ lastAppliedSpecHash: 'an-older-hash' }),
      retried: false,
    },
  ])('$case', ({ remembered, retried }) => {
    // Prepare: the spec's first deployment FAILED and stays PRIMARY; the spec now asks for 3.
    const before = aSpec();
    const after = aSpec({ desiredCount: 3 });
    const service = anObservedService({ taskDefinition: failedTd.taskDefinitionArn!, runningCount: 0, deployments: [failedPrimary] });
    const memory = remembered(before.hash);
    const input = aPlanInput({
      specs: [after],
      observed: anObservedState([anObservedCluster(CLUSTER, [service])], { [failedTd.taskDefinitionArn!]: failedTd }),
      remembered: memory ? { [ID]: memory } : {},
    });

    // Act
    const p = plan(input);

    // Assess
    if (retried) {
      expect(p.actions).toHaveLength(1);
      expect(p.actions[0]).toMatchObject({ type: 'UpdateService', kind: 'rollout', input: { desiredCount: 3, forceNewDeployment: true } });
      expect(p.statuses[ID]).toMatchObject({ phase: 'Progressing', lastAppliedSpecHash: after.hash });
      expect(p.statuses[ID].failedSpecHash).toBeUndefined();
    } else {
      expect(p.actions).toEqual([]);
      expect(p.statuses[ID]).toMatchObject({ phase: 'Degraded', failedSpecHash: after.hash });
    }
  });

  it('the forced retry is not repeated once it was applied: its failure is recorded', () => {
    // Prepare: the retry (hash `after`) was applied; its forced deployment d2 FAILED too.
    const after = aSpec({ desiredCount: 3 });
    const service = anObservedService({
      taskDefinition: failedTd.taskDefinitionArn!,
      desiredCount: 3,
      runningCount: 0,
      deployments: [aDeployment({ ...failedPrimary, id: 'd2', desiredCount: 3 })],
    });
    const input = aPlanInput({
      specs: [after],
      observed: anObservedState([anObservedCluster(CLUSTER, [service])], { [failedTd.taskDefinitionArn!]: failedTd }),
      remembered: { [ID]: aStatus({ phase: 'Progressing', lastAppliedSpecHash: after.hash }) },
    });

    // Act
    const p = plan(input);

    // Assess
    expect(p.actions).toEqual([]);
    expect(p.statuses[ID]).toMatchObject({ phase: 'Degraded', failedSpecHash: after.hash });
  });
});

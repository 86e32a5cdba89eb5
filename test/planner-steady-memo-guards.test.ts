/**
 * Two guards of the steady judgement that no digest covers (written by a breaker: removing
 * either leaves test/planner-steady-memo.test.ts green). These fail when the guard
 * `found.lag.laggingSince === undefined` or `!anyFailedDeployment(svc)` is removed from
 * `judgedVersion` (lambda/core/reconcile/steady.ts).
 */
import { describe, expect, it } from 'vitest';
import { fullPlan, planChecked } from './support/steady-memo';
import type { PlanInput } from '../lambda/core/planner';
import type { ObservedService, TaskDefinition } from '../lambda/core/types';
import { aConvergedService, aDeployment, aPlanInput, aSpec, anObservedCluster, anObservedState } from './support/builders';

function oneService(change: (s: ObservedService) => void): PlanInput {
  const s = aSpec({ service: 'web', desiredCount: 2, lagGraceSeconds: 120 });
  const c = aConvergedService(s.spec);
  change(c.service);
  return aPlanInput({ specs: [s], observed: anObservedState([anObservedCluster('apps', [c.service])], c.taskDefinitions as Record<string, TaskDefinition>) });
}

describe('steady judgement: the guards no digest covers (written by a breaker)', () => {
  it('a lag that lasts past its grace turns Degraded although nothing but the clock changed', () => {
    let input = oneService((s) => void (s.runningCount = 1));
    const phases: string[] = [];
    for (let i = 0; i < 4; i++) {
      const p = planChecked(input);
      phases.push(p.statuses['apps/web'].phase);
      input = { ...input, remembered: p.statuses, now: new Date(input.now.getTime() + 60_000) };
    }
    expect(phases.at(-1)).toBe('Degraded');
  });

  it('a FAILED deployment of this spec excused by a remembered failure of another spec is blamed once that memory is gone', () => {
    let input = oneService((s) => void s.deployments.push(aDeployment({ id: 'ecs-svc/failed', status: 'ACTIVE', rolloutState: 'FAILED', taskDefinition: s.taskDefinition })));
    const first = fullPlan(input);
    input = { ...input, remembered: { 'apps/web': { ...first.statuses['apps/web'], lastAppliedSpecHash: 'another', failedSpecHash: 'another' } } };
    const p1 = planChecked(input);
    expect(p1.statuses['apps/web'].phase).not.toBe('Degraded');
    const rem = { ...input.remembered['apps/web'] };
    delete rem.failedSpecHash;
    const p2 = planChecked({ ...input, remembered: { 'apps/web': rem } });
    expect(p2.statuses['apps/web'].phase).toBe('Degraded');
  });
});

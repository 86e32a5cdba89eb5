/**
 * Two guards of the steady comparison memo that no print covers (written by a breaker: removing
 * either leaves test/planner-steady-memo.test.ts green). These fail when the guard `unchanged.lag.laggingSince === undefined` or `!anyFailedDeployment(svc)` is removed
 * from Planner.planExisting.
 */
import { describe, expect, it } from 'vitest';
import { planChecked, steadyFleet, withoutMemo } from './support/steady-memo';
import { clearCompareMemo, STEADY_IDLE_MS, steadyComparisonsRemembered, steadyComparisonsReused } from '../lambda/core/compare-memo';
import { plan, type PlanInput } from '../lambda/core/planner';
import type { ObservedService, TaskDefinition } from '../lambda/core/types';
import { aConvergedService, aDeployment, aPlanInput, aSpec, anObservedCluster, anObservedState } from './support/builders';

function oneService(change: (s: ObservedService) => void): PlanInput {
  const s = aSpec({ service: 'web', desiredCount: 2, lagGraceSeconds: 120 });
  const c = aConvergedService(s.spec);
  change(c.service);
  return aPlanInput({ specs: [s], observed: anObservedState([anObservedCluster('apps', [c.service])], c.taskDefinitions as Record<string, TaskDefinition>) });
}

describe('steady comparison memo: the guards no print covers (written by a breaker)', () => {
  it('a lag that lasts past its grace turns Degraded although nothing but the clock changed', () => {
    clearCompareMemo();
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
    clearCompareMemo();
    let input = oneService((s) => void s.deployments.push(aDeployment({ id: 'ecs-svc/failed', status: 'ACTIVE', rolloutState: 'FAILED', taskDefinition: s.taskDefinition })));
    const first = withoutMemo(() => plan(input));
    input = { ...input, remembered: { 'apps/web': { ...first.statuses['apps/web'], lastAppliedSpecHash: 'another', failedSpecHash: 'another' } } };
    const p1 = planChecked(input);
    expect(p1.statuses['apps/web'].phase).not.toBe('Degraded');
    const rem = { ...input.remembered['apps/web'] };
    delete rem.failedSpecHash;
    const p2 = planChecked({ ...input, remembered: { 'apps/web': rem } });
    expect(p2.statuses['apps/web'].phase).toBe('Degraded');
  });
});

describe('steady comparison memo: what it keeps', () => {
  it("a deleted service's entry goes once nobody took it for STEADY_IDLE_MS; the fleet's entries stay", () => {
    // Prepare: three steady services remembered.
    clearCompareMemo();
    const base = steadyFleet(['web-0', 'web-1', 'web-2']);
    const t0 = base.now.getTime();
    const first = plan(base);
    expect(steadyComparisonsRemembered()).toBe(3);
    // web-1's spec item and service deleted.
    const cl = base.observed.clusters.apps;
    const services = { ...cl.services };
    delete services['web-1'];
    const without = { ...base, specs: base.specs.filter((s) => s.key?.service !== 'web-1'), observed: { ...base.observed, clusters: { apps: { ...cl, services } } } };

    // Act: a pass every 10 minutes for an hour.
    const kept: number[] = [];
    let remembered = first.statuses;
    for (let minute = 10; minute <= 60; minute += 10) {
      const p = plan({ ...without, now: new Date(t0 + minute * 60_000), remembered });
      remembered = p.statuses;
      kept.push(steadyComparisonsRemembered());
    }

    // Assess: kept until STEADY_IDLE_MS (30 min) passed at a sweep, then only the two live ones.
    expect(STEADY_IDLE_MS).toBe(30 * 60_000);
    expect(kept.slice(0, 3)).toEqual([3, 3, 3]);
    expect(kept.at(-1)).toBe(2);
    expect(steadyComparisonsReused()).toBeGreaterThan(0);
  });
});

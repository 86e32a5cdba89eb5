/**
 * Stamps (the planner at 10,000 services): the observer stamps each service it maps with
 * its print (`observedAndStamped`, `stampObservedService`), and the steady comparison memo then
 * compares two stamps instead of walking the service when it plans. These tests prove that with
 * stamps every plan is still the full comparison's (memo off), that every member the comparison
 * reads makes a stamped service miss when it changes, and that stamps and walked prints never
 * stand for each other. Speed is measured in `npm run bench` (section 1), never here.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { EcsObserver, observedAndStamped, toObservedService } from '../lambda/adapters/ecs-observer';
import { clearCompareMemo, steadyComparisonsReused } from '../lambda/core/compare-memo';
import { eventReasonOf, stampObservedService, stampOf } from '../lambda/core/observed-print';
import { eventReason } from '../lambda/core/status';
import type { PlanInput } from '../lambda/core/planner';
import type { ObservedService, TaskDefinition } from '../lambda/core/types';
import { aSpecItem, useSimHarness } from './break/support';
import { at } from './support/builders';
import { CHANGES, NOT_READ, READ_BY_STATUS, planChecked, steadyFleet, withLive } from './support/steady-memo';

const SERVICES = ['web-0', 'web-1', 'web-2'];

/** `input` with every live service a new copy (as every pass reads one), stamped as the observer stamps. */
function stamped(input: PlanInput): PlanInput {
  const clusters = structuredClone(input.observed.clusters);
  for (const oc of Object.values(clusters)) for (const svc of Object.values(oc.services)) stampObservedService(svc);
  return { ...input, observed: { ...input.observed, clusters } };
}

/** `withLive`, then the changed copy stamped (the observer stamps what it reads, changed or not). */
function withStampedLive(input: PlanInput, name: string, change: (s: ObservedService, tds: Record<string, TaskDefinition>) => void): PlanInput {
  const out = withLive(input, name, change);
  stampObservedService(out.observed.clusters.apps.services[name]);
  return out;
}

afterEach(() => clearCompareMemo());

describe('stamps: the print the observer makes', () => {
  it('a stamped fleet planned again from new stamped copies is not compared again, and its plan is the full comparison', () => {
    clearCompareMemo();
    const input = stamped(steadyFleet(SERVICES));
    expect(stampOf(input.observed.clusters.apps.services['web-1'])).toBeDefined();
    planChecked(input);
    const before = steadyComparisonsReused();
    planChecked(stamped({ ...input, remembered: structuredClone(input.remembered) }));
    expect(steadyComparisonsReused() - before).toBe(SERVICES.length);
  });

  it.each(CHANGES)('%s changed in ECS since the last comparison (stamped): compared again, the plan of the full comparison', (_name, change) => {
    clearCompareMemo();
    const input = stamped(steadyFleet(SERVICES));
    planChecked(input);
    const before = steadyComparisonsReused();
    planChecked(withStampedLive(input, 'web-1', change));
    expect(steadyComparisonsReused() - before).toBe(SERVICES.length - 1);
  });

  it.each(NOT_READ)('%s (never read by the comparison), stamped: the plan of the full comparison', (name, change) => {
    clearCompareMemo();
    const input = stamped(steadyFleet(SERVICES));
    planChecked(input);
    const before = steadyComparisonsReused();
    planChecked(withStampedLive(input, 'web-1', change));
    // A stamp holds every tag (the observer does not know the spec's): a tag added by hand costs
    // one full comparison; what no print holds is reused.
    expect(steadyComparisonsReused() - before).toBe(name === 'a tag added by hand' ? SERVICES.length - 1 : SERVICES.length);
  });

  it.each(READ_BY_STATUS)('%s, stamped: the status says so as the full comparison does', (_name, change) => {
    clearCompareMemo();
    const input = stamped(steadyFleet(SERVICES));
    planChecked(input);
    const p = planChecked(withStampedLive(input, 'web-1', change));
    expect(p.statuses['apps/web-1'].reason).toBeDefined();
    expect(p.statuses['apps/web-1'].reason).not.toBe(input.remembered['apps/web-1'].reason);
  });

  it('a stamp and a walked print never stand for each other: stamped after unstamped, and unstamped after stamped, are compared again', () => {
    clearCompareMemo();
    const input = steadyFleet(SERVICES);
    planChecked(input);
    let before = steadyComparisonsReused();
    planChecked(stamped(input));
    expect(steadyComparisonsReused() - before).toBe(0);
    before = steadyComparisonsReused();
    planChecked({ ...input, observed: { ...input.observed, clusters: structuredClone(input.observed.clusters) } });
    expect(steadyComparisonsReused() - before).toBe(0);
  });

  it('a copy of a stamped service (as a pass adds a deployment history) has no stamp; a service holding a value no print tells apart gets none', () => {
    const input = stamped(steadyFleet(SERVICES));
    const svc = input.observed.clusters.apps.services['web-1'];
    expect(stampOf({ ...svc, serviceDeployments: [] })).toBeUndefined();
    const odd = { ...structuredClone(svc), propagateTags: new Map([['a', 1]]) } as unknown as ObservedService;
    expect(stampObservedService(odd)).toBe(false);
    expect(stampOf(odd)).toBeUndefined();
  });

  it('a service asked for before it is stamped has its stamp once stamped (the last answer is not kept past a stamp)', () => {
    const svc = structuredClone(steadyFleet(SERVICES).observed.clusters.apps.services['web-1']);
    expect(stampOf(svc)).toBeUndefined();
    expect(stampObservedService(svc)).toBe(true);
    expect(stampOf(svc)).toBeDefined();
  });

  it('a service holding NaN gets no stamp: the same object planned again is compared again every plan (NaN never matches)', () => {
    clearCompareMemo();
    const input = withLive(steadyFleet(SERVICES), 'web-1', (s) => {
      s.runningCount = Number.NaN;
    });
    const svc = input.observed.clusters.apps.services['web-1'];
    expect(stampObservedService(svc)).toBe(false);
    expect(stampOf(svc)).toBeUndefined();
    planChecked(input);
    const before = steadyComparisonsReused();
    planChecked(input);
    expect(steadyComparisonsReused() - before).toBe(SERVICES.length - 1);
  });

  it('the newest event reason is found when the service is stamped, as eventReason finds it; an unstamped service has it found when asked', () => {
    const input = steadyFleet(SERVICES);
    const svc = structuredClone(input.observed.clusters.apps.services['web-1']);
    svc.events.unshift({ id: 'e1', createdAt: at(-5), message: '(service web-1) was unable to place a task.' });
    expect(eventReasonOf(svc)).toBe('(service web-1) was unable to place a task.');
    const copy = structuredClone(svc);
    stampObservedService(copy);
    expect(eventReasonOf(copy)).toBe(eventReason(copy));
    expect(eventReasonOf(copy)).toBe('(service web-1) was unable to place a task.');
    expect(eventReasonOf(undefined)).toBeUndefined();
  });

  it('random changes over passes, every copy stamped: with the memo warm from earlier passes, every plan is the full comparison\'s', () => {
    const change = fc.constantFrom(...CHANGES.map(([, f]) => f), ...NOT_READ.map(([, f]) => f), ...READ_BY_STATUS.map(([, f]) => f));
    fc.assert(
      fc.property(fc.array(fc.array(fc.tuple(fc.constantFrom(...SERVICES), change), { maxLength: 3 }), { minLength: 1, maxLength: 4 }), (rounds) => {
        clearCompareMemo();
        let input = stamped(steadyFleet(SERVICES));
        planChecked(input);
        for (const changes of rounds) {
          for (const [name, f] of changes) {
            try {
              input = withLive(input, name, f);
            } catch (err) {
              // A change that does not apply to what an earlier one left (a member it deleted).
              if (!(err instanceof TypeError)) throw err;
            }
          }
          input = stamped(input);
          const p = planChecked(input);
          input = stamped({ ...input, remembered: p.statuses, now: new Date(input.now.getTime() + 60_000) });
          planChecked(input);
        }
      }),
      { numRuns: 150, seed: process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined },
    );
  });
});

describe('stamps: the observer', () => {
  const h = useSimHarness();

  it('stamps every service it reads, and mapping alone does not; a second pass reuses the steady comparison of every service', async () => {
    // Prepare
    await h.putSpec(aSpecItem({ service: 'web', desiredCount: 1 }));
    await h.putSpec(aSpecItem({ service: 'api', desiredCount: 2 }));
    await h.pass('create');
    h.sim.advance(120);
    await h.pass('settle');

    // Act
    const observed = await new EcsObserver(h.runtime.ecs).observeCluster('apps', []);
    const before = steadyComparisonsReused();
    await h.pass('steady');

    // Assess
    const names = Object.keys(observed.services).sort();
    expect(names).toEqual(['api', 'web']);
    for (const name of names) expect(stampOf(observed.services[name])).toBeDefined();
    expect(stampOf(toObservedService({ serviceName: 'web', status: 'ACTIVE' }))).toBeUndefined();
    expect(stampOf(observedAndStamped({ serviceName: 'web', status: 'ACTIVE' }))).toBeDefined();
    expect(steadyComparisonsReused() - before).toBe(names.length);
  });
});

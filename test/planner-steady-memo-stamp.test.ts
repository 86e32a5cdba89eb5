/**
 * Stamps (the planner at 10,000 services): the observer stamps each service it maps with its
 * digest in the runtime's cache (`observedAndStamped`, `CompareCache.stamp`), and the planner then
 * reads the stamp instead of walking the service. These tests prove that with stamps every plan
 * is still the full comparison's (no cache, no judged versions), that every member the comparison
 * reads makes a stamped service miss when it changes, and that a stamp is the digest a walk gives.
 * Speed is measured in `npm run bench` (section 1), never here.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EcsObserver, observedAndStamped, toObservedService } from '../lambda/adapters/ecs-observer';
import { CompareCache } from '../lambda/core/compare-cache';
import { serviceDigest } from '../lambda/core/observed-print';
import { eventReason } from '../lambda/core/status';
import type { PlanInput } from '../lambda/core/planner';
import type { ObservedService, TaskDefinition } from '../lambda/core/types';
import { aSpecItem, useSimHarness } from './break/support';
import { at } from './support/builders';
import { CHANGES, NOT_READ, READ_BY_STATUS, judgementsTaken, planChecked, steadyFleet, withLive } from './support/steady-memo';

const SERVICES = ['web-0', 'web-1', 'web-2'];

function cacheOf(input: PlanInput): CompareCache {
  if (!(input.cache instanceof CompareCache)) throw new Error('setup: no CompareCache');
  return input.cache;
}

/** `input` with every live service a new copy (as every pass reads one), stamped as the observer stamps. */
function stamped(input: PlanInput): PlanInput {
  const clusters = structuredClone(input.observed.clusters);
  for (const oc of Object.values(clusters)) for (const svc of Object.values(oc.services)) cacheOf(input).stamp(svc);
  return { ...input, observed: { ...input.observed, clusters } };
}

/** `withLive`, then the changed copy stamped (the observer stamps what it reads, changed or not). */
function withStampedLive(input: PlanInput, name: string, change: (s: ObservedService, tds: Record<string, TaskDefinition>) => void): PlanInput {
  const out = withLive(input, name, change);
  cacheOf(input).stamp(out.observed.clusters.apps.services[name]);
  return out;
}

describe('stamps: the digest the observer makes', () => {
  it('a stamped fleet planned again from new stamped copies is not compared again, and its plan is the full comparison', () => {
    const input = stamped(steadyFleet(SERVICES));
    expect(cacheOf(input).stamped(input.observed.clusters.apps.services['web-1'])).toBe(true);
    const again = stamped({ ...input, remembered: structuredClone(input.remembered) });
    expect(judgementsTaken(input, () => planChecked(again))).toBe(SERVICES.length);
  });

  it.each(CHANGES)('%s changed in ECS since the last judgement (stamped): compared again, the plan of the full comparison', (_name, change) => {
    const input = stamped(steadyFleet(SERVICES));
    expect(judgementsTaken(input, () => planChecked(withStampedLive(input, 'web-1', change)))).toBe(SERVICES.length - 1);
  });

  it.each(NOT_READ)('%s (never read by the comparison), stamped: the plan of the full comparison', (_name, change) => {
    const input = stamped(steadyFleet(SERVICES));
    expect(judgementsTaken(input, () => planChecked(withStampedLive(input, 'web-1', change)))).toBe(SERVICES.length);
  });

  it.each(READ_BY_STATUS)('%s, stamped: the status says so as the full comparison does', (_name, change) => {
    const input = stamped(steadyFleet(SERVICES));
    const p = planChecked(withStampedLive(input, 'web-1', change));
    expect(p.statuses['apps/web-1'].reason).toBeDefined();
    expect(p.statuses['apps/web-1'].reason).not.toBe(input.remembered['apps/web-1'].reason);
  });

  it('a stamp is the digest a walk gives: stamped after unstamped, and unstamped after stamped, are taken', () => {
    const input = steadyFleet(SERVICES);
    expect(judgementsTaken(input, () => planChecked(stamped(input)))).toBe(SERVICES.length);
    const unstamped = { ...input, observed: { ...input.observed, clusters: structuredClone(input.observed.clusters) } };
    expect(judgementsTaken(input, () => planChecked(unstamped))).toBe(SERVICES.length);
  });

  it('a copy of a stamped service (as a pass adds a deployment history) has no stamp; a service holding a value no walk tells apart has no digest', () => {
    const input = stamped(steadyFleet(SERVICES));
    const cache = cacheOf(input);
    const svc = input.observed.clusters.apps.services['web-1'];
    expect(cache.stamped({ ...svc, serviceDeployments: [] })).toBe(false);
    expect(cache.serviceDigestOf({ ...svc, serviceDeployments: [] })).not.toBe(cache.serviceDigestOf(svc));
    const odd = { ...structuredClone(svc), propagateTags: new Map([['a', 1]]) } as unknown as ObservedService;
    expect(cache.stamp(odd)).toBe(true);
    expect(cache.serviceDigestOf(odd)).toBeUndefined();
    expect(cache.stamp(odd)).toBe(false);
  });

  it('a service holding NaN has no digest: its judgement is never taken', () => {
    const input = withLive(steadyFleet(SERVICES), 'web-1', (s) => {
      s.runningCount = Number.NaN;
    });
    const svc = input.observed.clusters.apps.services['web-1'];
    expect(serviceDigest(svc)).toBeUndefined();
    const p = planChecked(input);
    expect(p.statuses['apps/web-1'].judged).toBeUndefined();
    const next = { ...input, remembered: p.statuses };
    expect(judgementsTaken(input, () => planChecked(next))).toBe(SERVICES.length - 1);
  });

  it('the newest event reason is found when the service is stamped, as eventReason finds it; an unstamped service has it found when asked', () => {
    const cache = new CompareCache();
    const svc = structuredClone(steadyFleet(SERVICES).observed.clusters.apps.services['web-1']);
    svc.events.unshift({ id: 'e1', createdAt: at(-5), message: '(service web-1) was unable to place a task.' });
    expect(cache.eventReasonOf(svc)).toBe('(service web-1) was unable to place a task.');
    const copy = structuredClone(svc);
    cache.stamp(copy);
    expect(cache.eventReasonOf(copy)).toBe(eventReason(copy));
    expect(cache.eventReasonOf(copy)).toBe('(service web-1) was unable to place a task.');
  });

  it('random changes over passes, every copy stamped: with the statuses of earlier passes, every plan is the full comparison\'s', () => {
    const change = fc.constantFrom(...CHANGES.map(([, f]) => f), ...NOT_READ.map(([, f]) => f), ...READ_BY_STATUS.map(([, f]) => f));
    fc.assert(
      fc.property(fc.array(fc.array(fc.tuple(fc.constantFrom(...SERVICES), change), { maxLength: 3 }), { minLength: 1, maxLength: 4 }), (rounds) => {
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

  it('stamps every service it reads in the cache it is given, and mapping alone does not; a later pass takes every steady judgement', async () => {
    // Prepare
    await h.putSpec(aSpecItem({ service: 'web', desiredCount: 1 }));
    await h.putSpec(aSpecItem({ service: 'api', desiredCount: 2 }));
    await h.pass('create');
    h.sim.advance(120);
    await h.pass('settle');
    await h.pass('judged');
    const cache = new CompareCache();
    const runtimeCache = h.runtime.ports.compareCache;
    if (runtimeCache === undefined) throw new Error('setup: the runtime has no comparison cache');

    // Act
    const observed = await new EcsObserver(h.runtime.ecs, { compareCache: cache }).observeCluster('apps', []);
    const before = runtimeCache.judgementsTaken();
    await h.pass('steady');

    // Assess
    const names = Object.keys(observed.services).sort();
    expect(names).toEqual(['api', 'web']);
    for (const name of names) expect(cache.stamped(observed.services[name])).toBe(true);
    expect(cache.stamped(toObservedService({ serviceName: 'web', status: 'ACTIVE' }))).toBe(false);
    const one = observedAndStamped({ serviceName: 'web', status: 'ACTIVE' }, cache);
    expect(cache.stamped(one)).toBe(true);
    expect(runtimeCache.judgementsTaken() - before).toBe(names.length);
  });
});

/**
 * The steady judgement: a service whose spec hash, rendering options, live task definition and
 * live service digest are those its remembered status records in `judged` (a judgement that found
 * nothing to do) is not compared again; its status is still computed from this pass's
 * observation and remembered status. These tests prove that the plan is always the one the full
 * comparison gives (no cache, no judged versions), and that every member of a live service the
 * comparison reads makes the judgement miss when it changes, in a copy or in place.
 * Speed is measured in `npm run bench`, never here.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CHANGES, NOT_READ, READ_BY_STATUS, judgementsTaken, planChecked, steadyFleet, withLive } from './support/steady-memo';
import { CompareCache } from '../lambda/core/compare-cache';
import { SERVICE_MEMBERS } from '../lambda/core/observed-print';
import { plan } from '../lambda/core/planner';
import type { ServiceStatus } from '../lambda/core/types';
import { NOW, aSpec, at } from './support/builders';

const SERVICES = ['web-0', 'web-1', 'web-2'];

describe('steady judgement', () => {
  it('a steady service planned again is not compared again, and its plan is the full comparison', () => {
    const input = steadyFleet(SERVICES);
    let p = planChecked(input);
    expect(judgementsTaken(input, () => (p = planChecked(input)))).toBe(SERVICES.length);
    expect(p.actions).toEqual([]);
    expect(Object.values(p.statuses).map((s) => s.phase)).toEqual(['Converged', 'Converged', 'Converged']);
    expect(Object.values(p.statuses).every((s) => s.judged !== undefined)).toBe(true);
  });

  it('the judgement lives in the status: a new container (a new cache, or none) takes it too', () => {
    const input = steadyFleet(SERVICES);
    const stored = structuredClone(input.remembered);
    const fresh = { ...input, remembered: stored, cache: new CompareCache() };
    expect(judgementsTaken(fresh, () => planChecked(fresh))).toBe(SERVICES.length);
  });

  it('a new copy of the same observation (as every pass reads one) is recognised by content', () => {
    const input = steadyFleet(SERVICES);
    const copy = { ...input, observed: { ...input.observed, clusters: structuredClone(input.observed.clusters) }, remembered: structuredClone(input.remembered) };
    expect(judgementsTaken(input, () => planChecked(copy))).toBe(SERVICES.length);
  });

  it.each(CHANGES)('%s changed in ECS since the last judgement: compared again, the plan of the full comparison', (_name, change) => {
    const input = steadyFleet(SERVICES);
    // The two others taken, web-1 compared again.
    expect(judgementsTaken(input, () => planChecked(withLive(input, 'web-1', change)))).toBe(SERVICES.length - 1);
  });

  it.each(CHANGES)('%s changed in place (the same objects) since the last judgement: compared again', (_name, change) => {
    const { cache: _cache, ...input } = steadyFleet(SERVICES);
    const withCache = { ...structuredClone(input), cache: new CompareCache() };
    planChecked(withCache);
    change(withCache.observed.clusters.apps.services['web-1'], withCache.observed.taskDefinitions);
    expect(judgementsTaken(withCache, () => planChecked(withCache))).toBe(SERVICES.length - 1);
  });

  it.each(NOT_READ)('%s (never read by the comparison): taken, the plan of the full comparison', (_name, change) => {
    const input = steadyFleet(SERVICES);
    expect(judgementsTaken(input, () => planChecked(withLive(input, 'web-1', change)))).toBe(SERVICES.length);
  });

  it.each(READ_BY_STATUS)('%s: the status says so as the full comparison does', (_name, change) => {
    const input = steadyFleet(SERVICES);
    const p = planChecked(withLive(input, 'web-1', change));
    expect(p.statuses['apps/web-1'].reason).toBeDefined();
    expect(p.statuses['apps/web-1'].reason).not.toBe(input.remembered['apps/web-1'].reason);
  });

  it('a description of the same revision with other content (a forged cache entry) is compared again; the same content is not', () => {
    const input = steadyFleet(SERVICES);
    const arn = input.observed.clusters.apps.services['web-1'].taskDefinition;
    const tds = input.observed.taskDefinitions;
    const same = { ...input, observed: { ...input.observed, taskDefinitions: { ...tds, [arn]: { ...tds[arn] } } } };
    expect(judgementsTaken(input, () => planChecked(same))).toBe(SERVICES.length);
    const other = { ...input, observed: { ...input.observed, taskDefinitions: { ...tds, [arn]: { ...tds[arn], cpu: '1024' } } } };
    let p = planChecked(other);
    expect(judgementsTaken(input, () => (p = planChecked(other)))).toBe(SERVICES.length - 1);
    expect(p.actions.map((a) => `${a.type} ${a.service}`)).toContain('RegisterTaskDefinition web-1');
  });

  it('a changed spec, other rendering options or a remembered failure of this spec are compared again', () => {
    const input = steadyFleet(SERVICES);
    const edited = aSpec({ service: 'web-1', desiredCount: 5, tags: { team: 't1' } });
    const edit = { ...input, specs: input.specs.map((s) => (s.key?.service === 'web-1' ? edited : s)) };
    let p = planChecked(edit);
    expect(judgementsTaken(input, () => (p = planChecked(edit)))).toBe(SERVICES.length - 1);
    expect(p.actions.map((a) => `${a.type} ${a.service}`)).toEqual(['UpdateService web-1']);

    const spec = input.specs[1];
    if (!spec.ok) throw new Error('setup');
    const failed: ServiceStatus = { ...input.remembered['apps/web-1'], failedSpecHash: spec.hash };
    const withFailure = { ...input, remembered: { ...input.remembered, 'apps/web-1': failed } };
    let q = planChecked(withFailure);
    expect(judgementsTaken(input, () => (q = planChecked(withFailure)))).toBe(SERVICES.length - 1);
    expect(q.statuses['apps/web-1'].phase).toBe('Degraded');

    const owner = { ...input, options: { ...input.options, ownerId: 'another-owner' } };
    const role = { ...input, options: { ...input.options, defaults: { ...input.options.defaults, executionRoleArn: 'arn:aws:iam::123456789012:role/other' } } };
    expect(judgementsTaken(input, () => void [planChecked(owner), planChecked(role)])).toBe(0);
  });

  it('a judged version that differs in any one part is not taken', () => {
    const input = steadyFleet(SERVICES);
    const rem = input.remembered['apps/web-1'];
    const j = rem.judged;
    if (j === undefined) throw new Error('setup: no judged version');
    for (const part of ['specHash', 'rendering', 'taskDefinitionArn', 'taskDefinitionDigest', 'serviceDigest'] as const) {
      const other = { ...input, remembered: { ...input.remembered, 'apps/web-1': { ...rem, judged: { ...j, [part]: `${j[part]}x` } } } };
      expect(judgementsTaken(input, () => planChecked(other)), part).toBe(SERVICES.length - 1);
    }
  });

  it('the rest of the remembered status is not part of the judgement: any remembered status gives the full comparison\'s status', () => {
    const input = steadyFleet(SERVICES);
    const rem = input.remembered['apps/web-1'];
    const variants: ServiceStatus[] = [
      { ...rem, conditions: [] },
      { ...rem, conditions: rem.conditions.map((c) => ({ ...c, status: 'False' as const })) },
      { ...rem, lastAppliedSpecHash: 'another' },
      { ...rem, appliedDeploymentId: 'ecs-svc/9', appliedRolloutState: 'IN_PROGRESS' },
      { ...rem, firstRollout: true, rolloutFromTaskDefinitionArn: 'arn:aws:ecs:us-east-1:123456789012:task-definition/x:1' },
      { ...rem, drift: ['desiredCount 1 -> 2'], driftCorrectedAt: at(-600).toISOString() },
      { ...rem, reasonsFirstSeen: { 'a reason': at(-900).toISOString() } },
      { ...rem, laggingSince: at(-900).toISOString(), reason: 'remembered reason' },
      { ...rem, lastAction: { type: 'UpdateService', at: at(-600).toISOString(), summary: 'UpdateService desiredCount 1 -> 2' } },
    ];
    for (const v of variants) {
      const later = { ...input, remembered: { ...input.remembered, 'apps/web-1': v }, now: new Date(NOW.getTime() + 60_000) };
      expect(judgementsTaken(input, () => planChecked(later))).toBe(SERVICES.length);
    }
  });

  it('random changes over passes: with the statuses of earlier passes, every plan is the full comparison\'s', () => {
    const change = fc.constantFrom(...CHANGES.map(([, f]) => f), ...NOT_READ.map(([, f]) => f), ...READ_BY_STATUS.map(([, f]) => f));
    fc.assert(
      fc.property(fc.array(fc.array(fc.tuple(fc.constantFrom(...SERVICES), change), { maxLength: 3 }), { minLength: 1, maxLength: 4 }), (rounds) => {
        let input = steadyFleet(SERVICES);
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
          const p = planChecked(input);
          input = { ...input, remembered: p.statuses, now: new Date(input.now.getTime() + 60_000) };
          planChecked(input);
        }
      }),
      { numRuns: 150, seed: process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined },
    );
  });

  it('a judgement that found something to do, or could not compare, records no version', () => {
    const input = steadyFleet(SERVICES);
    const lagging = plan(withLive(input, 'web-1', (s) => void (s.runningCount = 0)));
    expect(lagging.statuses['apps/web-1'].judged).toBeUndefined();
    const edited = aSpec({ service: 'web-1', desiredCount: 5, tags: { team: 't1' } });
    const update = plan({ ...input, specs: input.specs.map((s) => (s.key?.service === 'web-1' ? edited : s)) });
    expect(update.statuses['apps/web-1'].judged).toBeUndefined();
    const arn = input.observed.clusters.apps.services['web-1'].taskDefinition;
    const tds = { ...input.observed.taskDefinitions };
    delete tds[arn];
    const undescribed = plan({ ...input, observed: { ...input.observed, taskDefinitions: tds } });
    expect(undescribed.statuses['apps/web-1'].judged).toBeUndefined();
    expect(undescribed.statuses['apps/web-0'].judged).toBeDefined();
  });

  it('every member of a live service is either in the digest or read by the status itself', () => {
    const kinds = new Set(Object.values(SERVICE_MEMBERS));
    expect([...kinds].sort()).toEqual(['acting path only', 'print', 'print: read fields', 'status reads it']);
    expect(Object.entries(SERVICE_MEMBERS).filter(([, k]) => k === 'status reads it').map(([m]) => m).sort()).toEqual(['events', 'stoppedTasks']);
  });
});

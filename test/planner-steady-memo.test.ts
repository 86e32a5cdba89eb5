/**
 * The steady comparison memo: a service whose spec hash, rendering options, live task
 * definition and live service print are those of its last comparison, and that comparison found
 * nothing to do, gets what that comparison found; its status is still assembled from the
 * remembered status of this pass. These tests prove that the plan is always the one the full
 * comparison gives (memo off), and that every member of a live service the comparison reads
 * makes the memo miss when it changes, in a copy or in place.
 * Speed is measured in `npm run bench`, never here.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CHANGES, NOT_READ, READ_BY_STATUS, planChecked, steadyFleet, withLive } from './support/steady-memo';
import {
  clearCompareMemo,
  setSteadyMemoEnabled,
  steadyComparisonsReused,
} from '../lambda/core/compare-memo';
import { SERVICE_MEMBERS } from '../lambda/core/observed-print';
import type { ServiceStatus } from '../lambda/core/types';
import { NOW, aSpec, at } from './support/builders';

const SERVICES = ['web-0', 'web-1', 'web-2'];


describe('steady comparison memo', () => {
  it('a steady service planned again is not compared again, and its plan is the full comparison', () => {
    clearCompareMemo();
    const input = steadyFleet(SERVICES);
    planChecked(input); // compares and remembers each service
    const before = steadyComparisonsReused();
    const p = planChecked(input);
    expect(steadyComparisonsReused() - before).toBe(SERVICES.length);
    expect(p.actions).toEqual([]);
    expect(Object.values(p.statuses).map((s) => s.phase)).toEqual(['Converged', 'Converged', 'Converged']);
  });

  it('a new copy of the same observation (as every pass reads one) is recognised by content', () => {
    clearCompareMemo();
    const input = steadyFleet(SERVICES);
    planChecked(input);
    const before = steadyComparisonsReused();
    planChecked({ ...input, observed: { ...input.observed, clusters: structuredClone(input.observed.clusters) }, remembered: structuredClone(input.remembered) });
    expect(steadyComparisonsReused() - before).toBe(SERVICES.length);
  });

  it.each(CHANGES)('%s changed in ECS since the last comparison: compared again, the plan of the full comparison', (_name, change) => {
    clearCompareMemo();
    const input = steadyFleet(SERVICES);
    planChecked(input);
    const before = steadyComparisonsReused();
    planChecked(withLive(input, 'web-1', change));
    // The two others reused, web-1 compared again.
    expect(steadyComparisonsReused() - before).toBe(SERVICES.length - 1);
  });

  it.each(CHANGES)('%s changed in place (the same objects) since the last comparison: compared again', (_name, change) => {
    clearCompareMemo();
    const input = structuredClone(steadyFleet(SERVICES));
    planChecked(input);
    const before = steadyComparisonsReused();
    change(input.observed.clusters.apps.services['web-1'], input.observed.taskDefinitions);
    planChecked(input);
    expect(steadyComparisonsReused() - before).toBe(SERVICES.length - 1);
  });

  it.each(NOT_READ)('%s (never read by the comparison): reused, the plan of the full comparison', (_name, change) => {
    clearCompareMemo();
    const input = steadyFleet(SERVICES);
    planChecked(input);
    const before = steadyComparisonsReused();
    planChecked(withLive(input, 'web-1', change));
    expect(steadyComparisonsReused() - before).toBe(SERVICES.length);
  });

  it.each(READ_BY_STATUS)('%s: the status says so as the full comparison does', (_name, change) => {
    clearCompareMemo();
    const input = steadyFleet(SERVICES);
    planChecked(input);
    const p = planChecked(withLive(input, 'web-1', change));
    expect(p.statuses['apps/web-1'].reason).toBeDefined();
    expect(p.statuses['apps/web-1'].reason).not.toBe(input.remembered['apps/web-1'].reason);
  });

  it('a new description object of the same revision is compared again (descriptions are known by identity)', () => {
    clearCompareMemo();
    const input = steadyFleet(SERVICES);
    planChecked(input);
    const before = steadyComparisonsReused();
    const arn = input.observed.clusters.apps.services['web-1'].taskDefinition;
    planChecked({ ...input, observed: { ...input.observed, taskDefinitions: { ...input.observed.taskDefinitions, [arn]: { ...input.observed.taskDefinitions[arn] } } } });
    expect(steadyComparisonsReused() - before).toBe(SERVICES.length - 1);
  });

  it('a changed spec, other rendering options or a remembered failure of this spec are compared again', () => {
    clearCompareMemo();
    const input = steadyFleet(SERVICES);
    planChecked(input);
    let before = steadyComparisonsReused();
    const edited = aSpec({ service: 'web-1', desiredCount: 5, tags: { team: 't1' } });
    const p = planChecked({ ...input, specs: input.specs.map((s) => (s.key?.service === 'web-1' ? edited : s)) });
    expect(p.actions.map((a) => `${a.type} ${a.service}`)).toEqual(['UpdateService web-1']);
    expect(steadyComparisonsReused() - before).toBe(SERVICES.length - 1);

    before = steadyComparisonsReused();
    const spec = input.specs[1];
    if (!spec.ok) throw new Error('setup');
    const failed: ServiceStatus = { ...input.remembered['apps/web-1'], failedSpecHash: spec.hash };
    const q = planChecked({ ...input, remembered: { ...input.remembered, 'apps/web-1': failed } });
    expect(q.statuses['apps/web-1'].phase).toBe('Degraded');
    expect(steadyComparisonsReused() - before).toBe(SERVICES.length - 1);

    before = steadyComparisonsReused();
    planChecked({ ...input, options: { ...input.options, ownerId: 'another-owner' } });
    planChecked({ ...input, options: { ...input.options, defaults: { ...input.options.defaults, executionRoleArn: 'arn:aws:iam::123456789012:role/other' } } });
    expect(steadyComparisonsReused() - before).toBe(0);
  });

  it('the remembered status is never part of what is kept: any remembered status gives the full comparison\'s status', () => {
    clearCompareMemo();
    const input = steadyFleet(SERVICES);
    planChecked(input);
    const rem = input.remembered['apps/web-1'];
    const variants: (ServiceStatus | undefined)[] = [
      undefined,
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
      const before = steadyComparisonsReused();
      const remembered = { ...input.remembered };
      if (v === undefined) delete remembered['apps/web-1'];
      else remembered['apps/web-1'] = v;
      planChecked({ ...input, remembered, now: new Date(NOW.getTime() + 60_000) });
      expect(steadyComparisonsReused() - before).toBe(SERVICES.length);
    }
  });

  it('random changes over passes: with the memo warm from earlier passes, every plan is the full comparison\'s', () => {
    const change = fc.constantFrom(...CHANGES.map(([, f]) => f), ...NOT_READ.map(([, f]) => f), ...READ_BY_STATUS.map(([, f]) => f));
    fc.assert(
      fc.property(fc.array(fc.array(fc.tuple(fc.constantFrom(...SERVICES), change), { maxLength: 3 }), { minLength: 1, maxLength: 4 }), (rounds) => {
        clearCompareMemo();
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

  it('the memo can be turned off alone: then nothing is reused', () => {
    clearCompareMemo();
    const input = steadyFleet(SERVICES);
    setSteadyMemoEnabled(false);
    try {
      planChecked(input);
      const before = steadyComparisonsReused();
      planChecked(input);
      expect(steadyComparisonsReused()).toBe(before);
    } finally {
      setSteadyMemoEnabled(true);
    }
  });

  it('every member of a live service is either printed or read by the status itself', () => {
    const kinds = new Set(Object.values(SERVICE_MEMBERS));
    expect([...kinds].sort()).toEqual(['acting path only', 'print', 'print: read fields', 'status reads it']);
    expect(Object.entries(SERVICE_MEMBERS).filter(([, k]) => k === 'status reads it').map(([m]) => m).sort()).toEqual(['events', 'stoppedTasks']);
  });
});

/**
 * Helpers of the steady comparison memo's tests (`lambda/core/compare-memo.ts`): the full
 * comparison to check a plan against, and a steady fleet to start from.
 */
import { expect } from 'vitest';
import { setCompareMemoEnabled } from '../../lambda/core/compare-memo';
import { plan, type PlanInput } from '../../lambda/core/planner';
import type { Plan, TaskDefinition } from '../../lambda/core/types';
import { aConvergedService, aPlanInput, aSpec, anObservedCluster, anObservedState } from './builders';

/** Runs `f` with every compare memo off (the full comparison), then turns them on again. */
export function withoutMemo<T>(f: () => T): T {
  setCompareMemoEnabled(false);
  try {
    return f();
  } finally {
    setCompareMemoEnabled(true);
  }
}

/** The plan with the memo as it is, and the full comparison's; asserts they are the same, key order and undefined members included. */
export function planChecked(input: PlanInput): Plan {
  const fast = plan(input);
  const slow = withoutMemo(() => plan(input));
  expect(fast).toStrictEqual(slow);
  expect(JSON.stringify(fast)).toBe(JSON.stringify(slow));
  return fast;
}

/**
 * Converged services `services` in cluster `apps` (desiredCount 1, 2, ...; tag `team`), with the
 * statuses a previous pass left (a fixed point), planned without the memo so none is remembered.
 */
export function steadyFleet(services: readonly string[]): PlanInput {
  const specs = services.map((service, i) => aSpec({ service, desiredCount: 1 + i, tags: { team: `t${i}` } }));
  const converged = specs.map((s) => aConvergedService(s.spec));
  const input = aPlanInput({
    specs,
    observed: anObservedState(
      [anObservedCluster('apps', converged.map((c) => c.service))],
      Object.assign({}, ...converged.map((c) => c.taskDefinitions)) as Record<string, TaskDefinition>,
    ),
  });
  const first = withoutMemo(() => plan(input));
  const second = withoutMemo(() => plan({ ...input, remembered: first.statuses }));
  return { ...input, remembered: second.statuses };
}

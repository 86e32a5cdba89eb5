/** The context every key's judgement shares: {@link planContext}. */
import { anyAllowList } from '../allow-lists';
import { renderingKey, UNCACHED } from '../compare-cache';
import type { FleetFacts, PlanContext, PlanInput } from './types';

/** The context of one pass's judgements: options, clock, task definitions, rendering key, fleet facts. */
export function planContext(input: PlanInput, fleet: FleetFacts): PlanContext {
  return {
    options: input.options,
    now: input.now,
    nowMs: input.now.getTime(),
    nowIso: input.now.toISOString(),
    observed: input.observed,
    pendingTaskDefinitions: new Set(input.observed.taskDefinitionsPending ?? []),
    renderKey: renderingKey({ defaults: input.options.defaults, ownerId: input.options.ownerId }),
    digests: input.cache ?? UNCACHED,
    allowListsSet: anyAllowList(input.options.allow),
    fleet,
  };
}

/**
 * The pure planner: from every spec read, the observed ECS state, the status remembered from the
 * previous pass, the options and `now`, it computes the ordered list of actions of this pass and
 * the status of every service it knows of. It reads no clock, calls no API and throws only on a
 * programming error; the same input always gives the same plan.
 *
 * One service key is the unit of work: `reconcileService` (`./reconcile/reconcile.ts`) decides
 * for one key from its view and the pass's context; what spans services is computed once as
 * `FleetFacts` (`./reconcile/fleet.ts`); `plan` (`./reconcile/plan.ts`) maps one over the other
 * and folds the decisions. This module is the entry point the callers import.
 *
 * Safety rules, each with a table-driven test in `test/planner.test.ts`:
 * - only services carrying `OWNER_TAG_KEY = options.ownerId` are updated or deleted, unless the
 *   spec says `adopt: true` (then TagResource first);
 * - never a create on an incomplete cluster observation (unless ECS answered for that very name this
 *   pass: `ObservedCluster.described`), never a delete on an incomplete spec read
 *   or cluster observation, never a delete protected by an invalid spec;
 * - orphan prunes stop altogether when they would remove more than `maxDeletesPerPass` services or
 *   more than half of a cluster's (more than 4) owned services, and in a cluster for which the
 *   table holds no spec at all, unless a person confirmed that cluster (`ecsr prune --confirm`:
 *   then its orphans go at most `maxDeletesPerPass` a pass);
 * - a cluster where those rules held prunes stays held (`PruneHold`) in later passes, until
 *   none of its owned services lacks a spec or a person confirms it: a table restored a few items
 *   at a time passes under the rules before it is whole;
 * - a spec hash whose rollout FAILED is not re-applied until the spec changes (docs/ecs-facts.md §4);
 * - no delete and re-create of a service in one pass; DRAINING names wait (docs/ecs-facts.md §3).
 */
export { plan } from './reconcile/plan';
export { reconcileService } from './reconcile/reconcile';
export { fleetFacts } from './reconcile/fleet';
export { familyClaimsOf } from './reconcile/family';
export { planContext } from './reconcile/context';
export { serviceView } from './reconcile/view';
export { clientToken } from './reconcile/create';
export { specErrorsText } from './reconcile/text';
export type { Decision, FamilyClaim, FamilyClaims, FleetFacts, PlanContext, PlanInput, ServiceView } from './reconcile/types';

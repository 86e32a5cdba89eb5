/**
 * An owned live service that no spec item names: pruned (a delete candidate for the pass's
 * budget) only when the whole table and the whole cluster were read, the table holds specs for
 * the cluster, no hold is in force there and prune is on.
 */
import { Reason } from '../status';
import type { Decision, PlanContext, ServiceView } from './types';
import { earlierHoldOf, heldMessage, releaseText } from './holds';
import { isGone, isOwned } from './live';
import { blockedDrafts, drafts, graceOf, liveCounts, statusOnly, unknownDrafts } from './status';

/**
 * The decision for an orphan: none (no status) for a service that is gone or not ours; Deleting
 * while DRAINING; Pending on a partial read; Blocked in a cluster with no spec at all (and a hold
 * request for it, unless a person confirmed the cluster), in a held cluster, or with prune off;
 * else a delete candidate.
 */
export function reconcileOrphan(view: ServiceView, ctx: PlanContext): Decision {
  const { key, service: svc } = view;
  if (isGone(svc) || !isOwned(svc, ctx.options)) return { actions: [] };
  const base = { graceSeconds: graceOf(ctx, undefined), service: svc, ...liveCounts(svc, 'zero') };
  const rem = view.remembered;
  const blocked = (reason: Reason, message: string) => statusOnly(ctx, rem, { ...base, phase: 'Blocked', conditions: blockedDrafts(reason, message) });
  const pending = (reason: Reason, message: string) => statusOnly(ctx, rem, { ...base, phase: 'Pending', conditions: unknownDrafts(reason, message) });
  if (svc.status === 'DRAINING') {
    return statusOnly(ctx, rem, { ...base, phase: 'Deleting', conditions: drafts('Deleting', Reason.Deleting, `service ${key.service} is DRAINING`) });
  }
  const { fleet, options } = ctx;
  if (!fleet.specsComplete) return pending(Reason.SpecsIncomplete, 'owned service without a spec, but the spec table was read only in part: not pruned');
  if (!view.cluster.complete) return pending(Reason.ObservationIncomplete, `cluster ${key.cluster} was observed only in part: not pruned`);
  if (options.prune && !fleet.clustersWithSpecs.has(key.cluster) && !fleet.pruneConfirmed.has(key.cluster)) {
    const owned = fleet.orphanCounts.get(key.cluster) ?? 0;
    const hold = { cluster: key.cluster, reason: `no spec at all for cluster ${key.cluster}, where this reconciler owns ${owned} service${owned === 1 ? '' : 's'}` };
    const message =
      `prune blocked: the spec table holds no spec at all for cluster ${key.cluster}, where this reconciler owns services ` +
      '(an empty, replaced or restored table?). Nothing is pruned there until a person confirms: restore the specs, ' +
      `or run \`ecsr prune --confirm ${key.cluster}\` to let passes delete the owned services without a spec for an hour. ` +
      `The hold stays while specs come back: ${releaseText(fleet, key.cluster)}`;
    return { ...blocked(Reason.PruneBlocked, message), hold };
  }
  // A cluster that has specs (or is confirmed) gets no hold this pass before the delete budget:
  // only an earlier pass's hold can be in force here.
  const held = options.prune ? earlierHoldOf(fleet, key.cluster) : undefined;
  if (held) return blocked(Reason.PruneBlocked, heldMessage(fleet, held));
  if (!options.prune) return blocked(Reason.PruneDisabled, 'owned service without a spec; prune is disabled (PRUNE=false), so it is kept');
  return {
    actions: [],
    deleteCandidate: { key, cause: 'orphan', service: svc, base, remembered: rem, why: 'owned service without a spec (prune)', memory: {} },
  };
}

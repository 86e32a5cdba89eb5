/**
 * One service key is the planner's unit of work: {@link reconcileService} decides for one key from
 * its view and the pass's context, and nothing else.
 */
import { Reason } from '../status';
import type { Decision, InvalidSpec, PlanContext, ServiceView, ValidSpec } from './types';
import { reconcileAbsentSpec } from './delete';
import { createDecision } from './create';
import { reconcileExisting } from './existing';
import { blockedDecision, ownershipRefusal, presentGuard } from './guards';
import { isGone, isOwned } from './live';
import { observeOnlySource, withoutActions } from './observe-only';
import { reconcileOrphan } from './orphan';
import { failedDecision, rememberedFailure } from './rollout';
import { drafts, graceOf, liveCounts, rememberedCounts, specCounts, statusOnly, unknownDrafts } from './status';
import { specErrorsText } from './text';
import { vouched } from './view';

/**
 * The decision for one key ({@link decide}); in observe-only mode ({@link observeOnlySource}) the
 * same decision without its actions, its status saying what was withheld ({@link withoutActions}).
 */
export function reconcileService(view: ServiceView, ctx: PlanContext): Decision {
  const source = observeOnlySource(view, ctx);
  if (source === undefined) return decide(view, ctx, false);
  return withoutActions(view, decide(view, ctx, true), source, ctx);
}

/**
 * The decision for one key (pure: no clock, no I/O; what spans services comes in `ctx.fleet`), in
 * the manner of a controller's sync of one object. First rule that holds:
 * - no spec item: an orphan ({@link reconcileOrphan});
 * - an invalid item: nothing changes, phase Invalid ({@link invalidSpec});
 * - `state: absent`: delete ({@link reconcileAbsentSpec});
 * - a guard refuses the spec (cluster missing, reads refused, family, allow-lists, subnets);
 * - no live service: Pending if the read does not vouch for the name, Degraded if this hash's
 *   rollout failed before, else create ({@link createDecision});
 * - the previous service of the name is DRAINING: wait for it;
 * - the service is not ours to change (owner tag, adoption), unless it is only observed: then it
 *   is compared whoever owns it, and nothing is sent;
 * - else compare and update, or report it steady ({@link reconcileExisting}).
 * @returns the key's actions (unordered), its status (none for a live service that is not ours
 *   and has no spec; set by the delete budget for a delete candidate), and what the fleet fold weighs.
 */
function decide(view: ServiceView, ctx: PlanContext, observing: boolean): Decision {
  const r = view.spec;
  if (r === undefined) return reconcileOrphan(view, ctx);
  if (!r.ok) return invalidSpec(view, r, ctx);
  if (r.spec.state === 'absent') return reconcileAbsentSpec(view, r, ctx);
  const svc = view.service;
  const counts = specCounts(r.spec, svc);
  const refused = presentGuard(view, r, counts, ctx);
  if (refused !== undefined) return refused;
  if (isGone(svc)) {
    if (!vouched(view)) return notRead(view, r, ctx);
    const failure = rememberedFailure(view.remembered, r.hash);
    return failure ? failedDecision(view, r, counts, ctx, failure) : createDecision(view, r, counts, ctx);
  }
  if (svc.status === 'DRAINING') return draining(view, r, ctx);
  const refusal = ownershipRefusal(svc, r.spec, ctx, observing);
  if (refusal !== undefined) return blockedDecision(view, r, counts, ctx, refusal);
  return reconcileExisting(view, r, svc, counts, !observing && !isOwned(svc, ctx.options), ctx);
}

/** An invalid spec item: nothing is changed for its service (and it protects it from a prune). */
function invalidSpec(view: ServiceView, r: InvalidSpec, ctx: PlanContext): Decision {
  const message = `spec item is invalid, nothing is changed for this service: ${specErrorsText(r.errors)}`;
  return statusOnly(ctx, view.remembered, {
    phase: 'Invalid',
    conditions: drafts('Invalid', Reason.SpecInvalid, message, { blocked: { reason: Reason.SpecInvalid, message } }),
    ...liveCounts(view.service, 'live'),
    service: view.service,
    graceSeconds: graceOf(ctx, undefined),
  });
}

/**
 * A present spec whose service was not seen in a cluster read only in part: not created this
 * pass. Not seen is not gone: the last known counts stay rather than a lag a partial read invented.
 */
function notRead(view: ServiceView, r: ValidSpec, ctx: PlanContext): Decision {
  const { key } = r;
  const message = `cluster ${key.cluster} was observed only in part (${view.cluster.error ?? 'partial read'}); service not seen, not created this pass`;
  return statusOnly(ctx, view.remembered, {
    specHash: r.hash,
    graceSeconds: graceOf(ctx, r.spec),
    ...(rememberedCounts(view.remembered) ?? specCounts(r.spec, view.service)),
    phase: 'Pending',
    conditions: unknownDrafts(Reason.ObservationIncomplete, message),
  });
}

/** A present spec whose previous service of the name is DRAINING: created once ECS reports it INACTIVE. */
function draining(view: ServiceView, r: ValidSpec, ctx: PlanContext): Decision {
  const message = `a previous service ${r.key.service} is DRAINING; it will be created once ECS reports it INACTIVE`;
  return statusOnly(ctx, view.remembered, {
    specHash: r.hash,
    graceSeconds: graceOf(ctx, r.spec),
    ...specCounts(r.spec, view.service),
    runningCount: 0,
    pendingCount: 0,
    phase: 'Pending',
    conditions: drafts('Pending', Reason.PreviousServiceDraining, message),
  });
}

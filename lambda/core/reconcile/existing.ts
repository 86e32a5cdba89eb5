/**
 * A present spec whose service exists, is ours (or adopted) and is not DRAINING: compare, judge
 * the rollout, then update or report steady.
 */
import type { ObservedService, ServiceStatus } from '../types';
import { type Comparison, compareExisting, liveTaskDefinitionOf, rendersOtherRevision } from './compare';
import { acts, plannedUpdate } from './judge';
import { detectFailedRollout, failedDecision } from './rollout';
import { knownSteady, rememberIfSteady, steadyDecision, unchangedFound } from './steady';
import type { Counts, Decision, PlanContext, ServiceView, ValidSpec } from './types';
import { updateDecision } from './update';

/**
 * The decision for an existing service: what the last comparison found when nothing changed since
 * (no comparison at all), else the comparison's: a failed rollout of this hash (no action), an
 * update, or nothing to change. Asks for the service's deployment history when the spec would
 * start a deployment and the history was not read ({@link wantsHistory}).
 * @param adopting whether the spec adopts the service (it lacks our owner tag).
 */
export function reconcileExisting(view: ServiceView, r: ValidSpec, svc: ObservedService, counts: Counts, adopting: boolean, ctx: PlanContext): Decision {
  const liveTd = liveTaskDefinitionOf(svc, ctx);
  const known = adopting ? undefined : knownSteady(view, r, svc, liveTd, ctx);
  if (known !== undefined) return steadyDecision(view, r, svc, counts, known, ctx);
  const c = compareExisting(r, svc, liveTd, ctx);
  const failure = detectFailedRollout(r.hash, svc, c, view.remembered, ctx);
  const decision = failure !== undefined ? failedDecision(view, r, counts, ctx, failure) : judgedDecision(view, r, svc, counts, adopting, c, ctx);
  return wantsHistory(svc, c, view.remembered, r.hash) ? { ...decision, wantsDeploymentHistory: true } : decision;
}

/** The update the comparison calls for, or the steady status (kept for later passes when it may be). */
function judgedDecision(view: ServiceView, r: ValidSpec, svc: ObservedService, counts: Counts, adopting: boolean, c: Comparison, ctx: PlanContext): Decision {
  const u = plannedUpdate(r, svc, view.remembered, adopting, c, ctx);
  if (acts(u)) return updateDecision(view, r, svc, counts, u, ctx);
  const found = unchangedFound(view, r, svc, counts, u, ctx);
  rememberIfSteady(view, r, svc, c, u, found, ctx);
  return steadyDecision(view, r, svc, counts, found, ctx);
}

/**
 * Whether the pass should read the service's deployment history and plan again: the spec renders
 * another revision than the live one, memory does not already record this hash as failed, and the
 * history was neither read nor refused. So a rollback ECS made is known even when the status that
 * recorded it was never written.
 */
function wantsHistory(svc: ObservedService, c: Comparison, rem: ServiceStatus | undefined, hash: string): boolean {
  return svc.serviceDeployments === undefined && svc.serviceDeploymentsError === undefined && rendersOtherRevision(c) && rem?.failedSpecHash !== hash;
}

/**
 * A present spec whose service exists, is ours (or adopted) and is not DRAINING: compare, judge
 * the rollout, then update or report steady.
 */
import { Reason } from '../status';
import type { ObservedService, ServiceStatus } from '../types';
import { type Comparison, compareExisting, liveTaskDefinitionOf, rendersOtherRevision } from './compare';
import { type PlannedUpdate, acts, plannedUpdate } from './judge';
import { liveStrategyOf, mayRunNativeDeployment, nativeDeploymentRuns } from './native';
import { detectFailedRollout, failedDecision } from './rollout';
import { judgedVersion, knownFound, knownSteady, steadyDecision, unchangedFound } from './steady';
import type { Counts, Decision, PlanContext, ServiceView, ValidSpec } from './types';
import { changesText } from './text';
import { updateDecision } from './update';

/**
 * The decision for an existing service: the last judgement again when nothing it depended on
 * changed since (no comparison at all, {@link knownSteady}), else the comparison's: a failed rollout of this hash (no action), an
 * update, or nothing to change. Asks for the service's deployment history when the spec would
 * start a deployment and the history was not read ({@link wantsHistory}).
 * @param adopting whether the spec adopts the service (it lacks our owner tag).
 */
export function reconcileExisting(view: ServiceView, r: ValidSpec, svc: ObservedService, counts: Counts, adopting: boolean, ctx: PlanContext): Decision {
  const liveTd = liveTaskDefinitionOf(svc, ctx);
  const known = adopting ? undefined : knownSteady(view, r, svc, liveTd, ctx);
  if (known !== undefined) return steadyDecision(view, r, svc, counts, knownFound(view, r, svc, counts, ctx), known, ctx);
  const c = compareExisting(r, svc, liveTd, ctx);
  const failure = detectFailedRollout(r.hash, svc, c, view.remembered, ctx);
  const decision = failure !== undefined ? failedDecision(view, r, counts, ctx, failure) : judgedDecision(view, r, svc, counts, adopting, c, ctx);
  return wantsHistory(svc, c, view.remembered, r.hash) ? { ...decision, wantsDeploymentHistory: true } : decision;
}

/** The update the comparison calls for, or the steady status (recording what it depended on when it may). */
function judgedDecision(view: ServiceView, r: ValidSpec, svc: ObservedService, counts: Counts, adopting: boolean, c: Comparison, ctx: PlanContext): Decision {
  const planned = plannedUpdate(r, svc, view.remembered, adopting, c, ctx);
  const u = planned.kind !== 'rollout' && nativeDeploymentRuns(svc) ? heldForNativeDeployment(planned, svc) : planned;
  if (acts(u)) return updateDecision(view, r, svc, counts, u, ctx);
  const found = unchangedFound(view, r, svc, counts, u, ctx);
  return steadyDecision(view, r, svc, counts, found, judgedVersion(r, svc, c, u, found, ctx), ctx);
}

/**
 * `u` while ECS runs a native deployment of the service and the spec did not change (drift, or an
 * adoption): no UpdateService and no task definition, so that nothing ECS shows of the deployment
 * (green tasks beside blue, test traffic, a running count above desired) is corrected as drift
 * and the deployment is not superseded (docs/ecs-facts.md §14). What differs is held back, named,
 * and corrected by a pass after the deployment ends; tags (TagResource) are still set. A changed
 * spec is sent: that is the user's new deployment.
 */
function heldForNativeDeployment(u: PlannedUpdate, svc: ObservedService): PlannedUpdate {
  const changes = u.changes.filter((ch) => ch.field !== 'deployment');
  if (changes.length === 0 && (u.tdChanges === undefined || u.tdChanges.length === 0)) return u.retry ? { ...u, retry: false, changes: [] } : u;
  const why = `ECS is running a ${liveStrategyOf(svc) ?? 'native'} deployment of this service (corrected once it ends)`;
  const held = [...u.held, ...changes.map((ch) => ({ ...ch, why }))];
  return {
    ...u,
    retry: false,
    tdChanges: undefined,
    input: {},
    changes: [],
    held,
    notUpdatable: { reason: Reason.NotUpdatable, message: `not corrected, because ${why}: ${changesText(held)}` },
  };
}

/**
 * Whether the pass should read the service's deployment history and plan again, the history
 * being neither read nor refused: the spec renders another revision than the live one and memory
 * does not already record this hash as failed (so a rollback ECS made is known even when the
 * status that recorded it was never written), or a native deployment may be running (its stage
 * decides what the pass may send).
 */
function wantsHistory(svc: ObservedService, c: Comparison, rem: ServiceStatus | undefined, hash: string): boolean {
  if (svc.serviceDeployments !== undefined || svc.serviceDeploymentsError !== undefined) return false;
  return (rendersOtherRevision(c) && rem?.failedSpecHash !== hash) || mayRunNativeDeployment(svc);
}

/**
 * A key's status, assembled from what its judgement found and what the previous pass remembered.
 */
import { lagOf } from '../crash-loop';
import { AUTOSCALED_INITIAL_DESIRED_COUNT } from '../plan-service';
import { type ConditionDrafts, type Reason, isStoppedTaskReason, rememberReason, resolveConditions, stoppedTaskReason } from '../status';
import type { ObservedService, Phase, ServiceSpec, ServiceStatus } from '../types';
import { isGone } from './live';
import { deploymentProgressOf } from './native';
import type { Counts, Decision, PlanContext, StatusArgs } from './types';

/** Drafts for the common case: Ready and Progressing tell the same reason. */
export function drafts(
  phase: Phase,
  reason: Reason,
  message: string,
  extra?: Pick<ConditionDrafts, 'blocked' | 'incomplete'>,
): ConditionDrafts {
  const ready = phase === 'Converged' ? 'True' : 'False';
  const progressing = phase === 'Progressing' || phase === 'Deleting' ? 'True' : 'False';
  const out: { -readonly [K in keyof ConditionDrafts]: ConditionDrafts[K] } = {
    ready: { status: ready, reason, message },
    progressing: { status: progressing, reason, message },
  };
  if (extra !== undefined && 'blocked' in extra) out.blocked = extra.blocked;
  if (extra !== undefined && 'incomplete' in extra) out.incomplete = extra.incomplete;
  return out;
}

/** Drafts for "cannot tell this pass": Ready and Progressing Unknown, plus Incomplete. */
export function unknownDrafts(reason: Reason, message: string): ConditionDrafts {
  return {
    ready: { status: 'Unknown', reason, message },
    progressing: { status: 'Unknown', reason, message },
    incomplete: { reason, message },
  };
}

/** Drafts of a refusal: phase Blocked, with the Blocked condition telling the same reason. */
export function blockedDrafts(reason: Reason, message: string): ConditionDrafts {
  return drafts('Blocked', reason, message, { blocked: { reason, message } });
}

/** A decision without actions: only the status. */
export function statusOnly(ctx: PlanContext, rem: ServiceStatus | undefined, args: StatusArgs): Decision {
  return { actions: [], status: serviceStatus(ctx, rem, args) };
}

/** Seconds of lag the spec tolerates (`lagGraceSeconds`, else the reconciler's default). */
export function graceOf(ctx: PlanContext, spec: ServiceSpec | undefined): number {
  return spec?.lagGraceSeconds ?? ctx.options.defaultLagGraceSeconds;
}

/**
 * Counts of a present spec: desired from the spec (live when autoscaled, or when the spec ignores
 * `desiredCount`), running from ECS.
 */
export function specCounts(spec: ServiceSpec, svc: ObservedService | undefined): Counts {
  const live = svc && svc.status === 'ACTIVE' ? svc : undefined;
  const desiredCount = spec.autoscaled || (spec.ignore !== undefined && spec.ignore.includes('desiredCount'))
    ? (live?.desiredCount ?? spec.desiredCount ?? AUTOSCALED_INITIAL_DESIRED_COUNT)
    : (spec.desiredCount ?? 0);
  return { desiredCount, runningCount: live?.runningCount ?? 0, pendingCount: live?.pendingCount ?? 0 };
}

/** Counts of a service that should not run (absent, orphan) or whose spec is unreadable. */
export function liveCounts(svc: ObservedService | undefined, desired: 'zero' | 'live'): Counts {
  const live = isGone(svc) ? undefined : svc;
  return {
    desiredCount: desired === 'live' && live?.status === 'ACTIVE' ? live.desiredCount : 0,
    runningCount: live?.runningCount ?? 0,
    pendingCount: live?.pendingCount ?? 0,
  };
}

/** The counts the previous pass saw, or undefined when no pass has seen the key. */
export function rememberedCounts(rem: ServiceStatus | undefined): Counts | undefined {
  return rem ? { desiredCount: rem.desiredCount, runningCount: rem.runningCount, pendingCount: rem.pendingCount } : undefined;
}

/**
 * Constructor of status objects: plain objects (their prototype is `Object.prototype`, as a
 * literal's), built with `new` so that V8 sizes them for every field they get after the first
 * few (in-object slack tracking) instead of growing a literal's property store field by field.
 */
function StatusObject(): void {}
StatusObject.prototype = Object.prototype;

/**
 * The reason people read first: while a service is deleted, the deletion; else the most specific
 * while the lag lasts. A stopped task's reason beats a service event; ECS forgets stopped tasks
 * after about an hour, so a remembered stopped-task reason beats a newer but generic event
 * ("deployment failed: tasks failed to start") as long as the service still runs the same task
 * definition (a new revision has new causes).
 */
function reasonOf(a: StatusArgs, rem: ServiceStatus | undefined, laggingSince: string | undefined, ctx: PlanContext): string | undefined {
  const current = a.service && !isGone(a.service) ? a.service : undefined;
  const deleting = a.phase === 'Deleting' || a.phase === 'Deleted' ? a.conditions.ready.message : undefined;
  const sameRevision = rem?.taskDefinitionArn !== undefined && rem.taskDefinitionArn === current?.taskDefinition;
  const rememberedRootCause = laggingSince && sameRevision && rem?.reason !== undefined && isStoppedTaskReason(rem.reason) ? rem.reason : undefined;
  return deleting ?? stoppedTaskReason(a.service) ?? rememberedRootCause ?? (a.service ? ctx.digests.eventReasonOf(a.service) : undefined) ?? (laggingSince ? rem?.reason : undefined);
}

/**
 * The status of a key: `a`'s phase, conditions (transition times kept from `rem` where unchanged),
 * counts, lag (computed unless given) and reason, and each memory field from `a.memory` when it
 * names the field (undefined there clears it), else remembered.
 */
export function serviceStatus(ctx: PlanContext, rem: ServiceStatus | undefined, a: StatusArgs): ServiceStatus {
  const lag = a.lag ?? lagOf(a.desiredCount, a.runningCount, rem, ctx.now, a.graceSeconds, a.service, ctx.observed.ecsClockOffsetMs);
  const current = a.service && !isGone(a.service) ? a.service : undefined;
  const reason = reasonOf(a, rem, lag.laggingSince, ctx);
  // Built field by field (no spread, no closure, no copy without the undefined members): the
  // pass's hottest allocation, one per service. Key order is that of the ServiceStatus fields.
  const m = a.memory;
  const out = new (StatusObject as unknown as new () => Record<string, unknown>)();
  out.phase = a.phase;
  out.conditions = resolveConditions(a.conditions, rem?.conditions, ctx.nowIso);
  if (a.specHash !== undefined) out.specHash = a.specHash;
  // Counts may be undefined at run time: a remembered status from before a field existed.
  if (a.desiredCount !== undefined) out.desiredCount = a.desiredCount;
  if (a.runningCount !== undefined) out.runningCount = a.runningCount;
  if (a.pendingCount !== undefined) out.pendingCount = a.pendingCount;
  if (lag.laggingSince !== undefined) out.laggingSince = lag.laggingSince;
  out.lagBeyondGrace = lag.lagBeyondGrace;
  if (reason !== undefined) out.reason = reason;
  // Written out field by field (named loads and stores, no keyed access).
  const lastAppliedSpecHash = m !== undefined && 'lastAppliedSpecHash' in m ? m.lastAppliedSpecHash : rem?.lastAppliedSpecHash;
  if (lastAppliedSpecHash !== undefined) out.lastAppliedSpecHash = lastAppliedSpecHash;
  const failedSpecHash = m !== undefined && 'failedSpecHash' in m ? m.failedSpecHash : rem?.failedSpecHash;
  if (failedSpecHash !== undefined) out.failedSpecHash = failedSpecHash;
  const failedServiceDeploymentArn =
    m !== undefined && 'failedServiceDeploymentArn' in m ? m.failedServiceDeploymentArn : rem?.failedServiceDeploymentArn;
  if (failedServiceDeploymentArn !== undefined) out.failedServiceDeploymentArn = failedServiceDeploymentArn;
  const appliedDeploymentId = m !== undefined && 'appliedDeploymentId' in m ? m.appliedDeploymentId : rem?.appliedDeploymentId;
  if (appliedDeploymentId !== undefined) out.appliedDeploymentId = appliedDeploymentId;
  const appliedRolloutState = m !== undefined && 'appliedRolloutState' in m ? m.appliedRolloutState : rem?.appliedRolloutState;
  if (appliedRolloutState !== undefined) out.appliedRolloutState = appliedRolloutState;
  const rolloutFrom =
    m !== undefined && 'rolloutFromTaskDefinitionArn' in m ? m.rolloutFromTaskDefinitionArn : rem?.rolloutFromTaskDefinitionArn;
  if (rolloutFrom !== undefined) out.rolloutFromTaskDefinitionArn = rolloutFrom;
  const firstRollout = m !== undefined && 'firstRollout' in m ? m.firstRollout : rem?.firstRollout;
  if (firstRollout !== undefined) out.firstRollout = firstRollout;
  if (current?.taskDefinition !== undefined) out.taskDefinitionArn = current.taskDefinition;
  const drift = m !== undefined && 'drift' in m ? m.drift : rem?.drift;
  if (drift !== undefined) out.drift = drift;
  const driftCorrectedAt = m !== undefined && 'driftCorrectedAt' in m ? m.driftCorrectedAt : rem?.driftCorrectedAt;
  if (driftCorrectedAt !== undefined) out.driftCorrectedAt = driftCorrectedAt;
  if (rem?.lastAction !== undefined) out.lastAction = rem.lastAction;
  const reasons = rememberReason(rem?.reasonsFirstSeen, reason, ctx.nowIso);
  if (reasons !== undefined) out.reasonsFirstSeen = reasons;
  const progress = current !== undefined ? deploymentProgressOf(current) : undefined;
  if (progress !== undefined) out.deployment = progress;
  if (a.judged !== undefined) out.judged = a.judged;
  out.observedAt = ctx.nowIso;
  return out as unknown as ServiceStatus;
}

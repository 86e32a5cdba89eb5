/**
 * An existing service with nothing to change (almost every service, every pass): its status
 * follows what ECS reports. The status records what the judgement depended on
 * (`ServiceStatus.judged`: spec hash, rendering options, live task definition, live service
 * digest), so that while none of it changes the next pass takes the same judgement without
 * comparing anything.
 */
import { type LagOrCrashLoop, lagOf } from '../crash-loop';
import { NO_DIGEST } from '../compare-cache';
import { type ConditionDrafts, Reason } from '../status';
import type { FieldChange, JudgedVersion, ObservedDeployment, ObservedService, Phase, TaskDefinition } from '../types';
import type { Comparison } from './compare';
import type { PlannedUpdate } from './judge';
import { anyFailedDeployment, primaryDeployment, rolloutStateOf } from './live';
import { deploymentProgressOf, mayRunNativeDeployment, progressText } from './native';
import { drafts, graceOf, serviceStatus } from './status';
import type { Counts, Decision, Memory, PlanContext, ServiceView, ValidSpec } from './types';

/**
 * What the comparison of an existing service with nothing to change found, besides the remembered
 * status: the status's phase, conditions, memory fields and lag.
 */
export interface SteadyFound {
  readonly phase: Phase;
  readonly conditions: ConditionDrafts;
  readonly memory: Memory;
  readonly lag: LagOrCrashLoop;
}

/** The parts of a planned update the steady status reads. */
type SteadyUpdate = Pick<PlannedUpdate, 'primary' | 'tdChanges' | 'incomplete' | 'notUpdatable'>;

const NO_CHANGES: FieldChange[] = Object.freeze([]) as unknown as FieldChange[];

/**
 * The version the remembered status says its steady judgement saw, when this pass sees the same
 * (same spec hash, rendering options, live task definition ARN and digest, live service digest):
 * then the comparison would find nothing to change again. Never for an adoption, a service whose
 * task definition was not described, a hash memory says failed (that decides before any
 * comparison), or a service whose stopped tasks were read (they are not in the digest, and a
 * crash loop is told by them).
 */
export function knownSteady(view: ServiceView, r: ValidSpec, svc: ObservedService, liveTd: TaskDefinition | undefined, ctx: PlanContext): JudgedVersion | undefined {
  const rem = view.remembered;
  const j = rem?.judged;
  if (j === undefined || liveTd === undefined || rem?.failedSpecHash === r.hash || svc.stoppedTasks !== undefined) return undefined;
  // A native deployment moves through stages DescribeServices does not show: its history is read.
  if (mayRunNativeDeployment(svc)) return undefined;
  if (j.specHash !== r.hash || j.rendering !== ctx.renderKey || j.taskDefinitionArn !== svc.taskDefinition) return undefined;
  if (j.taskDefinitionDigest !== ctx.digests.taskDefinitionDigest(liveTd) || j.serviceDigest !== ctx.digests.serviceDigestOf(svc)) return undefined;
  ctx.digests.tookJudgement();
  return j;
}

/**
 * What a steady judgement found, taken from the judgement `known` ({@link knownSteady}): the
 * planned update of a comparison that found nothing (the PRIMARY deployment, no task definition
 * change, nothing held back), and the status computed from it as the full comparison would.
 */
export function knownFound(view: ServiceView, r: ValidSpec, svc: ObservedService, counts: Counts, ctx: PlanContext): SteadyFound {
  const u: SteadyUpdate = { primary: primaryDeployment(svc), tdChanges: NO_CHANGES, incomplete: undefined, notUpdatable: undefined };
  return unchangedFound(view, r, svc, counts, u, ctx);
}

/**
 * The version to record when every judgement followed from the spec hash, the rendering options,
 * the live revision and the live service alone: nothing differs or is held back, no lag (it reads
 * the clock), and no FAILED deployment (no failure rule read the remembered status); else undefined.
 */
export function judgedVersion(r: ValidSpec, svc: ObservedService, c: Comparison, u: PlannedUpdate, found: SteadyFound, ctx: PlanContext): JudgedVersion | undefined {
  const liveTd = c.liveTd;
  if (u.adopting || liveTd === undefined || mayRunNativeDeployment(svc)) return undefined;
  const steady =
    c.tdChanges !== undefined &&
    c.tdChanges.length === 0 &&
    c.diff.changes.length === 0 &&
    c.diff.unsendable.length === 0 &&
    u.held.length === 0 &&
    found.lag.laggingSince === undefined &&
    !anyFailedDeployment(svc);
  if (!steady) return undefined;
  const taskDefinitionDigest = ctx.digests.taskDefinitionDigest(liveTd);
  const serviceDigest = ctx.digests.serviceDigestOf(svc);
  if (taskDefinitionDigest === NO_DIGEST || serviceDigest === undefined) return undefined;
  return { specHash: r.hash, rendering: ctx.renderKey, taskDefinitionArn: svc.taskDefinition, taskDefinitionDigest, serviceDigest };
}

/** The decision for a service with nothing to change: no action, the status of `found` (recording `judged` when given). */
export function steadyDecision(
  view: ServiceView,
  r: ValidSpec,
  svc: ObservedService,
  counts: Counts,
  found: SteadyFound,
  judged: JudgedVersion | undefined,
  ctx: PlanContext,
): Decision {
  const status = serviceStatus(ctx, view.remembered, {
    specHash: r.hash,
    graceSeconds: graceOf(ctx, r.spec),
    service: svc,
    desiredCount: counts.desiredCount,
    runningCount: counts.runningCount,
    pendingCount: counts.pendingCount,
    lag: found.lag,
    phase: found.phase,
    conditions: found.conditions,
    memory: found.memory,
    judged,
  });
  return { actions: [], status };
}

/** What the status of an existing service with nothing to change says: it follows what ECS reports. */
export function unchangedFound(view: ServiceView, r: ValidSpec, svc: ObservedService, counts: Counts, u: SteadyUpdate, ctx: PlanContext): SteadyFound {
  const lag = lagOf(counts.desiredCount, counts.runningCount, view.remembered, ctx.now, graceOf(ctx, r.spec), svc, ctx.observed.ecsClockOffsetMs);
  const { phase, reason, message } = steadyPhase(svc, counts, lag, u.primary, u.notUpdatable);
  let extra: { incomplete?: ConditionDrafts['incomplete']; blocked?: ConditionDrafts['blocked'] } | undefined;
  if (u.incomplete) (extra ??= {}).incomplete = u.incomplete;
  if (u.notUpdatable) (extra ??= {}).blocked = u.notUpdatable;
  return { phase, conditions: drafts(phase, reason, message, extra), memory: steadyMemory(r.hash, svc, u), lag };
}

/**
 * The memory of a service with nothing to change: this hash is applied (unless its live task
 * definition could not be compared), no failure, and the PRIMARY deployment of the live task
 * definition is the applied one.
 */
function steadyMemory(hash: string, svc: ObservedService, u: SteadyUpdate): Memory {
  if (u.tdChanges === undefined) return {};
  const primary = u.primary;
  if (primary && primary.taskDefinition === svc.taskDefinition) {
    return {
      lastAppliedSpecHash: hash,
      failedSpecHash: undefined,
      failedServiceDeploymentArn: undefined,
      appliedDeploymentId: primary.id,
      appliedRolloutState: rolloutStateOf(svc, primary),
    };
  }
  return { lastAppliedSpecHash: hash, failedSpecHash: undefined, failedServiceDeploymentArn: undefined };
}

/** Whether a deployment is rolling out: the PRIMARY in progress, or an ACTIVE one that has not FAILED. */
function inRollout(svc: ObservedService, primary: ObservedDeployment | undefined): boolean {
  if (primary?.rolloutState === 'IN_PROGRESS') return true;
  for (const d of svc.deployments) if (d.status === 'ACTIVE' && d.rolloutState !== 'FAILED') return true;
  return false;
}

/**
 * The phase of a service with nothing to change, first rule that holds: tasks that keep stopping
 * (Degraded/CrashLoop: a pass that catches one RUNNING is no recovery, `../crash-loop.ts`), a lag
 * beyond grace (Degraded, even during a rollout that never ends without a circuit breaker), a
 * rollout in progress, tasks lagging, tasks settling, a difference not updatable, else Converged.
 */
function steadyPhase(
  svc: ObservedService,
  counts: Counts,
  lag: LagOrCrashLoop,
  primary: ObservedDeployment | undefined,
  notUpdatable: ConditionDrafts['blocked'],
): { phase: Phase; reason: Reason; message: string } {
  const countText = `runningCount ${counts.runningCount}, pendingCount ${counts.pendingCount}, desiredCount ${counts.desiredCount}`;
  const rolling = inRollout(svc, primary);
  if (lag.crashLoop !== undefined) {
    const c = lag.crashLoop;
    const message =
      `tasks keep stopping: ${c.stops} tasks of ${svc.taskDefinition} failed in the last ${c.windowSeconds} s (newest: ${c.reason}); ` +
      `${countText}, lagging since ${lag.laggingSince}${lag.lagBeyondGrace ? ', beyond the lag grace' : ''}`;
    return { phase: 'Degraded', reason: Reason.CrashLoop, message };
  }
  if (counts.runningCount < counts.desiredCount && lag.lagBeyondGrace) {
    const during = rolling ? ` (deployment ${primary?.id ?? '?'} in progress)` : '';
    return { phase: 'Degraded', reason: Reason.LagBeyondGrace, message: `${countText}, lagging since ${lag.laggingSince}${during}` };
  }
  if (rolling) {
    const native = deploymentProgressOf(svc);
    const what = native !== undefined ? progressText(native) : `deployment ${primary?.id ?? '?'} in progress`;
    return { phase: 'Progressing', reason: Reason.RolloutInProgress, message: `${what}; ${countText}` };
  }
  if (counts.runningCount < counts.desiredCount) {
    return { phase: 'Progressing', reason: Reason.TasksLagging, message: `${countText}, lagging since ${lag.laggingSince}` };
  }
  if (counts.runningCount > counts.desiredCount || counts.pendingCount > 0) return { phase: 'Progressing', reason: Reason.TasksSettling, message: countText };
  if (notUpdatable) return { phase: 'Blocked', reason: Reason.NotUpdatable, message: notUpdatable.message };
  return { phase: 'Converged', reason: Reason.ServiceConverged, message: countText };
}

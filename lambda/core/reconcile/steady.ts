/**
 * An existing service with nothing to change (almost every service, every pass): its status
 * follows what ECS reports, and what the comparison found is kept across passes while the spec
 * hash, the rendering options, the live revision and the live service stay the same.
 */
import { rememberSteadyComparison, steadyComparisonOf } from '../compare-memo';
import { type LagOrCrashLoop, lagOf } from '../crash-loop';
import { OWNER_TAG_KEY } from '../ports';
import { type ConditionDrafts, Reason } from '../status';
import type { ObservedDeployment, ObservedService, Phase, TaskDefinition } from '../types';
import type { Comparison } from './compare';
import type { PlannedUpdate } from './judge';
import { anyFailedDeployment, rolloutStateOf } from './live';
import { deploymentProgressOf, mayRunNativeDeployment, progressText } from './native';
import { drafts, graceOf, serviceStatus } from './status';
import type { Counts, Decision, Memory, PlanContext, ServiceView, ValidSpec } from './types';

/**
 * What the comparison of an existing service with nothing to change found, besides the remembered
 * status: the status's phase, conditions, memory fields and lag. Kept across passes
 * (`rememberSteadyComparison`) when it depended on nothing else: never changed.
 */
export interface SteadyFound {
  readonly phase: Phase;
  readonly conditions: ConditionDrafts;
  readonly memory: Memory;
  readonly lag: LagOrCrashLoop;
}

/**
 * What the last comparison found, when the service is steady since then (same spec hash,
 * rendering options, live revision and live service print). Never for an adoption, a service
 * whose task definition was not described, a hash memory says failed (that decides before any
 * comparison), or a service whose stopped tasks were read (they are not in the print, and a crash
 * loop is told by them).
 */
export function knownSteady(view: ServiceView, r: ValidSpec, svc: ObservedService, liveTd: TaskDefinition | undefined, ctx: PlanContext): SteadyFound | undefined {
  if (liveTd === undefined || view.remembered?.failedSpecHash === r.hash || svc.stoppedTasks !== undefined) return undefined;
  // A native deployment moves through stages DescribeServices does not show: its history is read.
  if (mayRunNativeDeployment(svc)) return undefined;
  return steadyComparisonOf<SteadyFound>(view.id, r.hash, ctx.renderKey, liveTd, svc, ctx.nowMs)?.found;
}

/**
 * Keeps `found` for later passes when every judgement followed from the spec hash, the rendering
 * options, the live revision and the live service alone: nothing differs or is held back, no lag
 * (it reads the clock), and no FAILED deployment (no failure rule read the remembered status).
 */
export function rememberIfSteady(view: ServiceView, r: ValidSpec, svc: ObservedService, c: Comparison, u: PlannedUpdate, found: SteadyFound, ctx: PlanContext): void {
  const liveTd = c.liveTd;
  if (u.adopting || liveTd === undefined || mayRunNativeDeployment(svc)) return;
  const steady =
    c.tdChanges !== undefined &&
    c.tdChanges.length === 0 &&
    c.diff.changes.length === 0 &&
    c.diff.unsendable.length === 0 &&
    u.held.length === 0 &&
    found.lag.laggingSince === undefined &&
    !anyFailedDeployment(svc);
  if (!steady) return;
  const tagKeys = [OWNER_TAG_KEY];
  for (const k in r.spec.tags) if (Object.hasOwn(r.spec.tags, k) && k !== OWNER_TAG_KEY) tagKeys.push(k);
  rememberSteadyComparison<SteadyFound>(view.id, r.hash, ctx.renderKey, liveTd, svc, tagKeys, found, ctx.nowMs);
}

/** The decision for a service with nothing to change: no action, the status of `found`. */
export function steadyDecision(view: ServiceView, r: ValidSpec, svc: ObservedService, counts: Counts, found: SteadyFound, ctx: PlanContext): Decision {
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
  });
  return { actions: [], status };
}

/** What the status of an existing service with nothing to change says: it follows what ECS reports. */
export function unchangedFound(view: ServiceView, r: ValidSpec, svc: ObservedService, counts: Counts, u: PlannedUpdate, ctx: PlanContext): SteadyFound {
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
function steadyMemory(hash: string, svc: ObservedService, u: PlannedUpdate): Memory {
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

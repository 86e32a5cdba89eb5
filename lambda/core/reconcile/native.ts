/**
 * ECS's native deployments (BLUE_GREEN, LINEAR, CANARY; docs/ecs-facts.md §14): whether one may
 * be running, which one is, where it stands, and why ECS rolled one back, as read from
 * DescribeServices and the service's deployment history (ListServiceDeployments and
 * DescribeServiceDeployments).
 */
import type { DeploymentProgress, ObservedService, ObservedServiceDeployment } from '../types';

/** The deployment strategies ECS runs itself, through lifecycle stages (Amazon ECS API reference, DeploymentConfiguration). */
export const NATIVE_STRATEGIES: ReadonlySet<string> = new Set(['BLUE_GREEN', 'LINEAR', 'CANARY']);

/** ServiceDeploymentStatus values of a deployment ECS is still running (Amazon ECS Developer Guide, "View service history using Amazon ECS service deployments"). */
const ONGOING: ReadonlySet<string> = new Set(['PENDING', 'IN_PROGRESS', 'STOP_REQUESTED', 'ROLLBACK_REQUESTED', 'ROLLBACK_IN_PROGRESS']);

/**
 * The live service's deployment strategy as DescribeServices answers it: ROLLING, BLUE_GREEN,
 * LINEAR or CANARY; undefined when ECS names none (a rolling service from before 2025).
 */
export function liveStrategyOf(svc: ObservedService): string | undefined {
  const dc = svc.deploymentConfiguration as (ObservedService['deploymentConfiguration'] & { strategy?: unknown }) | undefined;
  const s = dc?.strategy ?? dc?.unmanaged?.strategy;
  return typeof s === 'string' ? s : undefined;
}

/**
 * Whether DescribeServices alone says a native deployment may be running: the service's strategy
 * is native and it has more than one deployment (blue beside green) or one still IN_PROGRESS (a
 * deployment bakes IN_PROGRESS with blue and green both running). Then the pass reads the
 * service's deployment history to know its stage.
 */
export function mayRunNativeDeployment(svc: ObservedService): boolean {
  const strategy = liveStrategyOf(svc);
  if (strategy === undefined || !NATIVE_STRATEGIES.has(strategy)) return false;
  if (svc.deployments.length > 1) return true;
  for (const d of svc.deployments) if (d.rolloutState === 'IN_PROGRESS') return true;
  return false;
}

/**
 * The native deployment ECS is running, from the deployment history read this pass: the newest
 * service deployment when it is ongoing (PENDING, IN_PROGRESS, STOP_REQUESTED, ROLLBACK_*
 * in progress) and runs a native strategy (its own configuration's, else the live service's).
 */
export function ongoingNativeDeployment(svc: ObservedService): ObservedServiceDeployment | undefined {
  const newest = svc.serviceDeployments?.[0];
  if (newest === undefined || !ONGOING.has(newest.status)) return undefined;
  const strategy = newest.detail?.strategy ?? liveStrategyOf(svc);
  return strategy !== undefined && NATIVE_STRATEGIES.has(strategy) ? newest : undefined;
}

/**
 * Whether the reconciler leaves the service's deployment alone this pass: a native deployment is
 * running (read from the history), or DescribeServices says one may be and the history could not
 * be read. Only a changed spec is sent then (docs/ecs-facts.md §14).
 */
export function nativeDeploymentRuns(svc: ObservedService): boolean {
  if (ongoingNativeDeployment(svc) !== undefined) return true;
  return svc.serviceDeployments === undefined && mayRunNativeDeployment(svc);
}

/** The `ServiceStatus.deployment` of a running native deployment, or undefined. */
export function deploymentProgressOf(svc: ObservedService): DeploymentProgress | undefined {
  const sd = ongoingNativeDeployment(svc);
  if (sd === undefined) return undefined;
  const d = sd.detail;
  const out: { -readonly [K in keyof DeploymentProgress]: DeploymentProgress[K] } = {
    serviceDeploymentArn: sd.serviceDeploymentArn,
    strategy: d?.strategy ?? liveStrategyOf(svc) ?? '',
    status: sd.status,
  };
  if (d?.lifecycleStage !== undefined) out.lifecycleStage = d.lifecycleStage;
  if (d?.productionTrafficPercent !== undefined) out.productionTrafficPercent = d.productionTrafficPercent;
  if (d?.testTrafficPercent !== undefined) out.testTrafficPercent = d.testTrafficPercent;
  const bakeEnds = bakeEndsAt(sd);
  if (bakeEnds !== undefined) out.bakeEndsAt = bakeEnds;
  const awaiting = d?.hooks?.find((h) => h.status === 'AWAITING_ACTION' && h.hookId !== undefined);
  if (awaiting?.hookId !== undefined) out.awaitingHookId = awaiting.hookId;
  return out;
}

/**
 * When the current bake ends: BAKE_TIME's `bakeTimeInMinutes`, or between two production traffic
 * steps of a LINEAR or CANARY deployment (some traffic shifted, not all) the step's bake, each
 * counted from the deployment's `updatedAt`. ECS does not document that `updatedAt` marks the
 * start of the stage or step; it is the best time ECS gives, so the end is an estimate.
 */
function bakeEndsAt(sd: ObservedServiceDeployment): string | undefined {
  const d = sd.detail;
  if (d?.updatedAt === undefined) return undefined;
  let minutes: number | undefined;
  if (d.lifecycleStage === 'BAKE_TIME') minutes = d.bakeTimeInMinutes;
  else if (d.lifecycleStage === 'PRODUCTION_TRAFFIC_SHIFT' && (d.productionTrafficPercent ?? 0) > 0 && (d.productionTrafficPercent ?? 0) < 100) {
    minutes = d.stepBakeTimeInMinutes;
  }
  return minutes === undefined ? undefined : new Date(d.updatedAt.getTime() + minutes * 60_000).toISOString();
}

/**
 * A native deployment's progress in words: `BLUE_GREEN deployment <arn> IN_PROGRESS at BAKE_TIME,
 * production traffic 100%, test traffic 100%, bake ends 2026-01-01T00:10:00.000Z`, and the PAUSE
 * hook that waits for `ecsr continue`.
 */
export function progressText(p: DeploymentProgress): string {
  const parts = [`${p.strategy} deployment ${p.serviceDeploymentArn} ${p.status}${p.lifecycleStage ? ` at ${p.lifecycleStage}` : ''}`];
  if (p.productionTrafficPercent !== undefined) parts.push(`production traffic ${p.productionTrafficPercent}%`);
  if (p.testTrafficPercent !== undefined) parts.push(`test traffic ${p.testTrafficPercent}%`);
  if (p.bakeEndsAt !== undefined) parts.push(`bake ends ${p.bakeEndsAt}`);
  if (p.awaitingHookId !== undefined) parts.push(`waiting on PAUSE hook ${p.awaitingHookId} (ecsr continue or ecsr abort)`);
  return parts.join(', ');
}

/**
 * ECS's own account of a rollback, from DescribeServiceDeployments: the reason
 * (`rollback.reason`, else `statusReason`), the stage it was at, the hooks that FAILED or
 * TIMED_OUT, the alarms in ALARM and a TRIGGERED circuit breaker. Undefined without a detail.
 */
export function rollbackDetailText(sd: ObservedServiceDeployment): string | undefined {
  const d = sd.detail;
  if (d === undefined) return undefined;
  const parts: string[] = [];
  const reason = d.rollbackReason ?? sd.statusReason;
  if (reason) parts.push(reason.replace(/\.+$/, ''));
  if (d.lifecycleStage) parts.push(`at stage ${d.lifecycleStage}`);
  for (const h of d.hooks ?? []) {
    if (h.status === 'FAILED' || h.status === 'TIMED_OUT') parts.push(`lifecycle hook ${h.targetArn ?? `${h.targetType ?? ''} ${h.hookId ?? ''}`.trim()} ${h.status}`);
  }
  if (d.triggeredAlarms) parts.push(`alarms in ALARM: ${d.triggeredAlarms.join(', ')}`);
  if (d.circuitBreaker) parts.push(`circuit breaker TRIGGERED (${d.circuitBreaker.failureCount ?? '?'} failed tasks, threshold ${d.circuitBreaker.threshold ?? '?'})`);
  return parts.length > 0 ? parts.join('; ') : undefined;
}

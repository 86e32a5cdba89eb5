/**
 * Crash loops: a service whose tasks keep stopping. With the circuit breaker off (or after its
 * deployment COMPLETED) ECS replaces a task whose essential container exits over and over; a pass
 * that happens to catch the replacement RUNNING sees `runningCount >= desiredCount`, which alone
 * would read as "not lagging" and restart the lag clock every time, so the lag alarm never fired.
 *
 * The rule (docs/status.md, "Crash loops"): a service is crash-looping while at least
 * {@link CRASH_LOOP_MIN_STOPS} tasks of its current task definition revision stopped as failures
 * within its lag grace (the `stoppedAt` of the STOPPED tasks ECS lists, ListTasks + DescribeTasks).
 * A failure is a stop code ECS gives a task that failed on its own: `EssentialContainerExited`
 * (the essential container exited), `TaskFailedToStart`, or `ServiceSchedulerInitiated` with a
 * health check reason ("Task failed ELB health checks", "Task failed container health checks");
 * never a stop a person or a deployment asked for (`UserInitiated`, scale-in, replacement by a
 * newer revision) nor a Spot interruption (Amazon ECS Developer Guide, "Amazon ECS stopped task
 * error codes"; DescribeTasks `stopCode`). While it crash-loops the service lags: its lag clock
 * keeps running through passes that catch a task RUNNING, and its TaskLag is at least 1.
 *
 * Pure: no clock, no I/O.
 */
import { computeLag, type Lag } from './status';
import type { ObservedService, ServiceStatus, StoppedTask } from './types';

/** Failed stops of the current revision within the lag grace that make a crash loop. */
export const CRASH_LOOP_MIN_STOPS = 2;

/** Stop codes of a task that failed by itself (DescribeTasks `stopCode`). */
const FAILED_STOP_CODES: ReadonlySet<string> = new Set(['EssentialContainerExited', 'TaskFailedToStart']);

/** ECS's reasons for a task the scheduler stopped because it failed its health checks. */
const HEALTH_CHECK_FAILURE = /health ?checks?/i;

/** Whether a stopped task failed by itself (see the module's rule), not by request. */
export function isFailedStop(t: StoppedTask): boolean {
  if (t.stopCode !== undefined && FAILED_STOP_CODES.has(t.stopCode)) return true;
  return t.stopCode === 'ServiceSchedulerInitiated' && t.stoppedReason !== undefined && HEALTH_CHECK_FAILURE.test(t.stoppedReason);
}

/** What made a service crash-looping. */
export interface CrashLoop {
  /** Failed stops counted (>= {@link CRASH_LOOP_MIN_STOPS}). */
  readonly stops: number;
  /** The window they were counted in: the service's lag grace, seconds. */
  readonly windowSeconds: number;
  /** `stoppedAt` of the oldest stop counted, epoch ms on the reconciler's clock (at most `now`). */
  readonly firstStopMs: number;
  /** The newest stop: `stopCode: stoppedReason`, with the container's reason and exit code. */
  readonly reason: string;
}

/**
 * The crash loop of `service` at `now`, or undefined when it does not crash-loop (or its stopped
 * tasks were not read this pass: `stoppedTasks` undefined).
 * @param graceSeconds the service's lag grace (seconds): the window the stops are counted in.
 * @param ecsClockOffsetMs ECS's clock minus the reconciler's (ms): `stoppedAt` is ECS's time.
 */
export function crashLoopOf(service: ObservedService | undefined, graceSeconds: number, now: Date, ecsClockOffsetMs = 0): CrashLoop | undefined {
  if (!service || service.stoppedTasks === undefined || service.status !== 'ACTIVE' || !(service.desiredCount > 0)) return undefined;
  const ecsNowMs = now.getTime() + ecsClockOffsetMs;
  const fromMs = ecsNowMs - Math.max(0, graceSeconds) * 1000;
  const counted: StoppedTask[] = [];
  for (const t of service.stoppedTasks) {
    const at = t.stoppedAt?.getTime();
    if (at === undefined || !(at >= fromMs && at <= ecsNowMs)) continue;
    // A stop of another revision says nothing of the one running now (a rollout replaces tasks).
    if (t.taskDefinitionArn !== undefined && t.taskDefinitionArn !== service.taskDefinition) continue;
    if (isFailedStop(t)) counted.push(t);
  }
  if (counted.length < CRASH_LOOP_MIN_STOPS) return undefined;
  counted.sort((a, b) => (a.stoppedAt as Date).getTime() - (b.stoppedAt as Date).getTime());
  const newest = counted[counted.length - 1];
  const container = newest.containers.find((c) => c.reason !== undefined || (c.exitCode !== undefined && c.exitCode !== 0));
  const details = [
    newest.stoppedReason,
    container?.reason !== undefined && container.reason !== newest.stoppedReason ? container.reason : undefined,
    container?.exitCode !== undefined ? `container ${container.name} exit code ${container.exitCode}` : undefined,
  ].filter((x): x is string => x !== undefined && x !== '');
  return {
    stops: counted.length,
    windowSeconds: Math.max(0, graceSeconds),
    firstStopMs: Math.min(now.getTime(), (counted[0].stoppedAt as Date).getTime() - ecsClockOffsetMs),
    reason: `${newest.stopCode ?? 'Stopped'}: ${details.join('; ') || 'no reason given'}`,
  };
}

/** {@link Lag} with the crash loop that keeps it, if any. */
export interface LagOrCrashLoop extends Lag {
  readonly crashLoop?: CrashLoop;
}

/**
 * {@link computeLag}, and a crash-looping service lags even while `runningCount >= desiredCount`:
 * its `laggingSince` is the remembered one, or else its oldest failed stop counted, and
 * `lagBeyondGrace` follows from it as for any lag.
 */
export function lagOf(
  desiredCount: number,
  runningCount: number,
  remembered: ServiceStatus | undefined,
  now: Date,
  graceSeconds: number,
  service?: ObservedService,
  ecsClockOffsetMs = 0,
): LagOrCrashLoop {
  const lag = computeLag(desiredCount, runningCount, remembered, now, graceSeconds, service, ecsClockOffsetMs);
  const crashLoop = service?.stoppedTasks !== undefined ? crashLoopOf(service, graceSeconds, now, ecsClockOffsetMs) : undefined;
  if (crashLoop === undefined) return lag;
  if (lag.laggingSince !== undefined) return { ...lag, crashLoop };
  const rememberedMs = remembered?.laggingSince !== undefined ? Date.parse(remembered.laggingSince) : NaN;
  const sinceMs = !Number.isNaN(rememberedMs) && rememberedMs <= crashLoop.firstStopMs ? rememberedMs : crashLoop.firstStopMs;
  return {
    laggingSince: new Date(sinceMs).toISOString(),
    lagBeyondGrace: (now.getTime() - sinceMs) / 1000 > graceSeconds,
    crashLoop,
  };
}

/**
 * The TaskLag a pass emits for a service: `desiredCount - runningCount`, and at least 1 while its
 * status says it lags (`laggingSince`) though it runs as many tasks as desired: a crash loop,
 * whose tasks are missing most of the time between the passes' glimpses.
 */
export function taskLagOf(status: Pick<ServiceStatus, 'desiredCount' | 'runningCount' | 'laggingSince'>): number {
  const lag = Math.max(0, status.desiredCount - status.runningCount);
  return lag === 0 && status.laggingSince !== undefined && status.desiredCount > 0 ? 1 : lag;
}

/**
 * Whether the pass should read a service's stopped tasks though it does not lag now: it lagged at
 * the previous pass (the lag may be a crash loop between glimpses of a task RUNNING), or ECS
 * started a task of it since the previous pass's observation without a rollout or a scaling the
 * status saw (a task was replaced: it may have crashed between two passes).
 */
export function wantsStoppedTasks(service: ObservedService, remembered: ServiceStatus | undefined, ecsClockOffsetMs = 0): boolean {
  if (service.status !== 'ACTIVE' || !(service.desiredCount > 0)) return false;
  if (remembered === undefined) return false;
  if (remembered.laggingSince !== undefined) return true;
  if (remembered.phase !== 'Converged' || remembered.desiredCount !== service.desiredCount) return false;
  const sinceMs = Date.parse(remembered.observedAt) + ecsClockOffsetMs;
  if (Number.isNaN(sinceMs)) return false;
  for (const e of service.events) {
    if (e.createdAt.getTime() > sinceMs && TASKS_STARTED.test(e.message)) return true;
  }
  return false;
}

/** ECS's service event when the scheduler starts tasks ("(service web) has started 1 tasks: (task ...)."). */
const TASKS_STARTED = /\bhas started \d+ tasks?\b/;

/**
 * The crash-loop rule (lambda/core/crash-loop.ts, docs/status.md "Crash loops"), table-driven:
 * which stopped tasks count, the window, the lag clock kept through a glimpse of RUNNING, the
 * TaskLag floor, and when the pass reads stopped tasks of a service that does not lag.
 */
import { describe, expect, it } from 'vitest';
import { CRASH_LOOP_MIN_STOPS, crashLoopOf, lagOf, taskLagOf, wantsStoppedTasks } from '../lambda/core/crash-loop';
import type { StoppedTask } from '../lambda/core/types';
import { NOW, aStatus, anObservedService, at } from './support/builders';

const TD = 'arn:aws:ecs:eu-west-1:123456789012:task-definition/apps-web:3';
const OLD_TD = 'arn:aws:ecs:eu-west-1:123456789012:task-definition/apps-web:2';
const GRACE = 300;

function stop(secondsAgo: number, overrides: Partial<StoppedTask> = {}): StoppedTask {
  return {
    taskArn: `arn:aws:ecs:eu-west-1:123456789012:task/apps/${secondsAgo}`,
    taskDefinitionArn: TD,
    stopCode: 'EssentialContainerExited',
    stoppedReason: 'Essential container in task exited',
    stoppedAt: at(-secondsAgo),
    containers: [{ name: 'app', exitCode: 137, lastStatus: 'STOPPED' }],
    ...overrides,
  };
}

const service = (stoppedTasks: StoppedTask[] | undefined, running = 1) =>
  anObservedService({ taskDefinition: TD, desiredCount: 1, runningCount: running, stoppedTasks });

describe('crashLoopOf', () => {
  it.each([
    ['two essential container exits of the revision within the grace', [stop(30), stop(200)], 2],
    ['TaskFailedToStart counts', [stop(30, { stopCode: 'TaskFailedToStart', stoppedReason: 'CannotPullContainerError' }), stop(90)], 2],
    ['failed health checks count', [stop(30, { stopCode: 'ServiceSchedulerInitiated', stoppedReason: 'Task failed ELB health checks in (target-group x)' }), stop(90)], 2],
    ['one stop is no loop', [stop(30)], undefined],
    ['stops older than the grace do not count', [stop(30), stop(GRACE + 1)], undefined],
    ['stops of another revision do not count (a rollout)', [stop(30), stop(60, { taskDefinitionArn: OLD_TD })], undefined],
    ['a stop a person asked for does not count', [stop(30), stop(60, { stopCode: 'UserInitiated', stoppedReason: 'Task stopped by user' })], undefined],
    ['scale-in does not count', [stop(30), stop(60, { stopCode: 'ServiceSchedulerInitiated', stoppedReason: 'Scaling activity initiated by (deployment ecs-svc/1)' })], undefined],
    ['a Spot interruption does not count', [stop(30), stop(60, { stopCode: 'SpotInterruption', stoppedReason: 'Your Spot Task was interrupted.' })], undefined],
    ['a stop without a time does not count', [stop(30), { ...stop(60), stoppedAt: undefined }], undefined],
  ])('%s', (_, stopped, stops) => {
    // Act
    const loop = crashLoopOf(service(stopped), GRACE, NOW);
    // Assess
    expect(loop?.stops).toBe(stops);
  });

  it('names the newest stop with the exit code, and the window', () => {
    // Act
    const loop = crashLoopOf(service([stop(200), stop(20, { containers: [{ name: 'app', exitCode: 3, reason: 'OutOfMemoryError: Container killed' }] })]), GRACE, NOW);
    // Assess
    expect(loop).toEqual({
      stops: CRASH_LOOP_MIN_STOPS,
      windowSeconds: GRACE,
      firstStopMs: NOW.getTime() - 200_000,
      reason: 'EssentialContainerExited: Essential container in task exited; OutOfMemoryError: Container killed; container app exit code 3',
    });
  });

  it('counts stops in ECS time (a skewed ECS clock)', () => {
    // Prepare: ECS's clock is 10 minutes ahead; its stoppedAt are in its time.
    const ahead = 600_000;
    const svc = service([stop(30 - 600), stop(90 - 600)]);
    // Act
    const loop = crashLoopOf(svc, GRACE, NOW, ahead);
    // Assess
    expect(loop?.firstStopMs).toBe(NOW.getTime() - 90_000);
  });

  it('is nothing for a service whose stopped tasks were not read, or that should run none', () => {
    expect(crashLoopOf(service(undefined), GRACE, NOW)).toBeUndefined();
    expect(crashLoopOf(anObservedService({ taskDefinition: TD, desiredCount: 0, runningCount: 0, stoppedTasks: [stop(10), stop(20)] }), GRACE, NOW)).toBeUndefined();
  });
});

describe('lagOf', () => {
  it('keeps the remembered lag clock while a crash-looping service shows a task RUNNING', () => {
    // Prepare
    const rem = aStatus({ desiredCount: 1, runningCount: 0, laggingSince: at(-400).toISOString() });
    // Act
    const lag = lagOf(1, 1, rem, NOW, GRACE, service([stop(30), stop(120)]));
    // Assess
    expect(lag).toMatchObject({ laggingSince: at(-400).toISOString(), lagBeyondGrace: true });
    expect(lag.crashLoop?.stops).toBe(2);
  });

  it('starts the clock at the oldest failed stop when nothing is remembered', () => {
    const lag = lagOf(1, 1, undefined, NOW, GRACE, service([stop(30), stop(120)]));
    expect(lag).toMatchObject({ laggingSince: at(-120).toISOString(), lagBeyondGrace: false });
  });

  it('is no lag for a service that runs its tasks and does not crash-loop', () => {
    const rem = aStatus({ laggingSince: at(-400).toISOString() });
    expect(lagOf(1, 1, rem, NOW, GRACE, service([stop(30)]))).toEqual({ lagBeyondGrace: false });
  });
});

describe('taskLagOf', () => {
  it.each([
    [{ desiredCount: 3, runningCount: 1 }, 2],
    [{ desiredCount: 1, runningCount: 1 }, 0],
    [{ desiredCount: 1, runningCount: 1, laggingSince: NOW.toISOString() }, 1],
    [{ desiredCount: 0, runningCount: 0, laggingSince: NOW.toISOString() }, 0],
  ])('%o -> %d', (status, lag) => {
    expect(taskLagOf(status)).toBe(lag);
  });
});

describe('wantsStoppedTasks', () => {
  const started = (secondsAgo: number) => ({ id: `e${secondsAgo}`, createdAt: at(-secondsAgo), message: '(service web) has started 1 tasks: (task abc).' });
  it.each([
    ['lagged at the previous pass', aStatus({ laggingSince: at(-120).toISOString() }), [], true],
    ['a task started since the previous observation of a converged service', aStatus({ desiredCount: 1, runningCount: 1 }), [started(30)], true],
    ['a task started before it', aStatus({ desiredCount: 1, runningCount: 1 }), [started(90)], false],
    ['a start after a scaling', aStatus({ desiredCount: 2, runningCount: 2 }), [started(30)], false],
    ['a start during a rollout', aStatus({ phase: 'Progressing', desiredCount: 1, runningCount: 1 }), [started(30)], false],
    ['nothing remembered', undefined, [started(30)], false],
  ])('%s', (_, rem, events, wanted) => {
    const svc = anObservedService({ desiredCount: 1, runningCount: 1, events });
    expect(wantsStoppedTasks(svc, rem, 0)).toBe(wanted);
  });
});

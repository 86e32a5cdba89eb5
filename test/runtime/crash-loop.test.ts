/**
 * A crash-looping service (its essential container exits a while after each task reaches RUNNING,
 * circuit breaker off) against the ECS simulator and dynalite, pass after pass: once its tasks keep
 * stopping it stays Degraded with the stop's reason, its lag clock is not reset by a pass that
 * catches a task RUNNING, and its TaskLag series stays above 0, so that the per-service lag alarm
 * (ServiceLagBeyondGrace, as the construct deploys it) and ServicesLaggingBeyondGrace fire. Once
 * the crashes stop, the service converges and its lag clears.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_ALARM_SETTINGS, alarmDefinition, evaluateAlarm } from '../../lambda/core/alarms';
import { METRIC } from '../../lambda/core/metric-names';
import { Reason } from '../../lambda/core/status';
import type { ServiceStatus } from '../../lambda/core/types';
import { aSpecItem, useSimHarness } from './support';

const KEY = { cluster: 'apps', service: 'api' };

interface Seen {
  readonly status: ServiceStatus;
  /** TaskLag emitted for the service this pass (null: none, a missing datapoint). */
  readonly taskLag: number | null;
  readonly beyondGrace: number;
}

describe('a crash-looping service alarms', () => {
  const h = useSimHarness();

  async function crashLoopingService(): Promise<void> {
    // Each task runs 45 s, then its essential container exits 1 (EssentialContainerExited): most
    // passes, a minute apart, catch a task RUNNING.
    h.sim.setFailureRules([{ match: 'crashy', mode: 'crash-loop', runSeconds: 45 }], { prepend: true });
    await h.putSpec(
      aSpecItem({ ...KEY, image: 'public.ecr.aws/acme/crashy:1', desiredCount: 1, deployment: { circuitBreaker: { enable: false, rollback: false } } }),
    );
  }

  async function passes(n: number): Promise<Seen[]> {
    const out: Seen[] = [];
    for (let i = 0; i < n; i++) {
      const before = h.metrics.data.length;
      const s = await h.pass(`p${i}`);
      const lag = h.metrics.data.slice(before).find((d) => d.name === METRIC.taskLag && d.dimensions.Service === KEY.service);
      out.push({ status: s.statuses['apps/api'], taskLag: lag?.value ?? null, beyondGrace: s.counts.servicesLaggingBeyondGrace });
      h.sim.advance(60);
    }
    return out;
  }

  it('stays Degraded with the reason, keeps its lag clock and fires the lag alarms, also at passes that catch a task RUNNING', async () => {
    // Prepare
    await crashLoopingService();
    // Act: 20 passes, a minute apart (the default lag grace is 300 s).
    const seen = await passes(20);
    // Assess: the test needs passes that see runningCount >= desiredCount (the case to judge).
    const degradedFrom = seen.findIndex((p) => p.status.phase === 'Degraded');
    expect(degradedFrom).toBeGreaterThanOrEqual(0);
    const later = seen.slice(degradedFrom);
    const running = later.filter((p) => p.status.runningCount >= p.status.desiredCount);
    expect(running.length).toBeGreaterThan(5);
    for (const p of later) {
      expect(p.status.phase).toBe('Degraded');
      expect(p.status.laggingSince).toBe(later[0].status.laggingSince);
      expect(p.taskLag).toBeGreaterThan(0);
    }
    for (const p of running) {
      const ready = p.status.conditions.find((c) => c.type === 'Ready');
      expect(ready).toMatchObject({ status: 'False', reason: Reason.CrashLoop });
      expect(ready?.message).toMatch(/tasks keep stopping: \d+ tasks of .* failed in the last 300 s \(newest: EssentialContainerExited: Essential container in task exited; container \S+ exit code 1\)/);
      expect(p.status.reason).toMatch(/^EssentialContainerExited: /);
    }
    expect(seen.at(-1)?.status.lagBeyondGrace).toBe(true);
    expect(seen.at(-1)?.beyondGrace).toBe(1);
    // The per-service alarm over one datapoint a pass (a minute), as CloudWatch evaluates it.
    const alarm = alarmDefinition('ServiceLagBeyondGrace', DEFAULT_ALARM_SETTINGS);
    expect(evaluateAlarm(alarm, seen.map((p) => p.taskLag)).state).toBe('ALARM');
  });

  it('converges, clears its lag and emits TaskLag 0 once the crashes stop', async () => {
    // Prepare: crash-looping, then the image is fixed (new tasks and running ones no longer crash).
    await crashLoopingService();
    const looping = await passes(10);
    expect(looping.at(-1)?.status.phase).toBe('Degraded');
    h.sim.setFailureRules([{ match: 'crashy', mode: 'ok' }], { prepend: true });
    // Act: the failed stops age out of the 300 s window.
    const healed = await passes(10);
    // Assess
    const last = healed.at(-1) as Seen;
    expect(last.status.phase).toBe('Converged');
    expect(last.status.laggingSince).toBeUndefined();
    expect(last.beyondGrace).toBe(0);
    const recovered = healed.findIndex((p) => p.status.phase === 'Converged');
    expect(healed[recovered].taskLag).toBe(0);
    expect(healed.slice(recovered + 1).every((p) => p.taskLag === null)).toBe(true);
  });
});

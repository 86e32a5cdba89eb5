/**
 * The reconciler's clock minutes off from ECS's. When the status does not
 * remember when a lag began, its start comes from ECS's own timestamps (a task's `stoppedAt`);
 * those are ECS's clock, so the pass reads them through the offset between ECS's clock (every ECS
 * response's `Date` header, the simulator's virtual clock here) and its own. A reconciler ten
 * minutes ahead must not count a fresh lag as beyond grace at once (a false lag alarm), and one
 * ten minutes behind must not keep a long lag within grace (a hidden one), status written or not.
 */
import { describe, expect, it } from 'vitest';
import type { PassSummary } from '../../lambda/core/pass';
import { aSpecItem, runtimeWith, statusWritesFailing, useSimHarness } from './support';

const GRACE_SECONDS = 300;

describe('a reconciler clock off from ECS by minutes', () => {
  const h = useSimHarness();

  it.each([
    { case: 'ten minutes ahead, status written', skewMinutes: 10, failing: false },
    { case: 'ten minutes ahead, status writes fail', skewMinutes: 10, failing: true },
    { case: 'ten minutes behind, status written', skewMinutes: -10, failing: false },
    { case: 'ten minutes behind, status writes fail', skewMinutes: -10, failing: true },
  ])('$case: a lag is beyond grace exactly when it has lasted longer than the grace in ECS time', async ({ skewMinutes, failing }) => {
    // Prepare: two tasks running; then both stop and no replacement can be placed (no capacity). The passes run on a clock `skewMinutes` off from ECS's.
    await h.putSpec(aSpecItem({ desiredCount: 2, lagGraceSeconds: GRACE_SECONDS }));
    await h.converge();
    const writes = statusWritesFailing(h, failing);
    const skewMs = skewMinutes * 60_000;
    const runtime = runtimeWith(h, { doc: writes.doc, clock: { now: () => new Date(h.sim.clock.now().getTime() + skewMs) } });
    h.sim.setFailureRules([{ match: 'nginx', mode: 'no-capacity' }], { prepend: true });
    h.sim.stopServiceTasks({ cluster: 'apps', service: 'web' });
    const stoppedAt = h.sim.clock.now().getTime();

    // Act: a pass every minute for ten minutes of ECS time.
    const passes: { lasted: number; summary: PassSummary }[] = [];
    for (let k = 1; k <= 10; k++) {
      h.sim.advance(60);
      const summary = await runtime.run({ holder: `skew-${k}` });
      passes.push({ lasted: (h.sim.clock.now().getTime() - stoppedAt) / 1000, summary });
    }

    // Assess: lagging throughout; beyond grace from the first pass after 300 s of lag, not before;
    // laggingSince never before the stop in the reconciler's time (within the Date header's one
    // second), nor after the pass: it is the tasks' stoppedAt (within the minute after the stop
    // request), remembered or read from ECS again.
    for (const { lasted, summary } of passes) {
      const st = summary.statuses['apps/web'];
      expect(st?.runningCount, `after ${lasted} s`).toBeLessThan(2);
      expect(st?.lagBeyondGrace, `after ${lasted} s: ${JSON.stringify(st)}`).toBe(lasted > GRACE_SECONDS);
      expect(summary.counts.servicesLaggingBeyondGrace).toBe(lasted > GRACE_SECONDS ? 1 : 0);
      const since = Date.parse(st?.laggingSince ?? '');
      expect(since - (stoppedAt + skewMs)).toBeGreaterThanOrEqual(-2_000);
      expect(since).toBeLessThanOrEqual(Date.parse(summary.startedAt));
      expect(since - (stoppedAt + skewMs)).toBeLessThanOrEqual(60_000);
    }
    if (failing) expect(writes.refused()).toBeGreaterThan(0);
    writes.doc.destroy();
  });
});

/**
 * Cost: healthy services emit no `TaskLag` (each custom metric series is billed), a lagging one
 * emits every pass, and a recovered one emits 0 once so its alarm contributor returns to OK.
 * Against the ECS simulator and dynalite; the metrics are what the pass hands to its sink.
 */
import { describe, expect, it } from 'vitest';
import { METRIC } from '../../lambda/core/metric-names';
import { shouldEmitTaskLag } from '../../lambda/core/pass';
import type { ServiceStatus } from '../../lambda/core/types';
import { aSpecItem, useSimHarness } from './support';

describe('shouldEmitTaskLag', () => {
  const rem = (desiredCount: number, runningCount: number, laggingSince?: string) =>
    ({ desiredCount, runningCount, ...(laggingSince ? { laggingSince } : {}) }) as ServiceStatus;
  it.each([
    { case: 'lagging now', lag: 2, remembered: rem(2, 2), emits: true },
    { case: 'lagging, first pass', lag: 1, remembered: undefined, emits: true },
    { case: 'recovered: lagged last pass', lag: 0, remembered: rem(3, 1, '2025-01-01T00:00:00.000Z'), emits: true },
    { case: 'recovered: counts lagged last pass', lag: 0, remembered: rem(3, 2), emits: true },
    { case: 'healthy, healthy last pass', lag: 0, remembered: rem(2, 2), emits: false },
    { case: 'healthy, never seen', lag: 0, remembered: undefined, emits: false },
  ])('$case: $emits', ({ lag, remembered, emits }) => {
    expect(shouldEmitTaskLag(lag, remembered)).toBe(emits);
  });
});

describe('TaskLag series of a fleet', () => {
  const h = useSimHarness();

  it('10 healthy services: a steady pass emits no TaskLag at all; a lagging one emits until it recovers, then 0 once', async () => {
    // Prepare
    for (let i = 0; i < 10; i++) await h.putSpec(aSpecItem({ service: `svc-${i}`, desiredCount: 1 }));
    await h.converge(25);
    h.sim.advance(60);
    const before = h.metrics.data.length;
    // Act: a steady pass
    await h.pass('steady');
    // Assess
    const steady = h.metrics.data.slice(before);
    expect(steady.filter((d) => d.name === METRIC.taskLag)).toEqual([]);
    expect(steady.some((d) => d.name === METRIC.passSucceeded)).toBe(true);

    // Act: one service scaled up in the spec lags, then recovers
    await h.editSpec({ cluster: 'apps', service: 'svc-3' }, { desiredCount: 3 });
    const lagStart = h.metrics.data.length;
    await h.passUntil((s) => s.statuses['apps/svc-3']?.runningCount === 3, 15);
    h.sim.advance(60);
    await h.pass('after');
    h.sim.advance(60);
    await h.pass('after-2');
    // Assess
    const lagValues = h.metrics.data.slice(lagStart).filter((d) => d.name === METRIC.taskLag);
    expect(new Set(lagValues.map((d) => d.dimensions.Service))).toEqual(new Set(['svc-3']));
    expect(lagValues[0].value).toBeGreaterThan(0);
    expect(lagValues.at(-1)?.value).toBe(0);
    expect(lagValues.filter((d) => d.value === 0)).toHaveLength(1);
  });
});

/**
 * Exact ECS API call counts, from the simulator's call log: a steady pass costs the minimum
 * (docs/ecs-facts.md §1), and creating many services stays inside the API budget (docs/ecs-facts.md §2).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ECS_LIMITS } from '../../lambda/core/ecs-limits';
import { aSpecItem, useSimHarness } from './support';

const CLUSTERS = { small: 25, large: 105 } as const;

describe('ECS API calls of a pass (simulator call log)', () => {
  const h = useSimHarness({ resetEach: false });

  beforeAll(async () => {
    await h.reset({ clusters: Object.keys(CLUSTERS) });
    for (const [cluster, n] of Object.entries(CLUSTERS)) {
      for (let i = 0; i < n; i++) await h.putSpec(aSpecItem({ cluster, service: `svc-${String(i).padStart(3, '0')}`, desiredCount: 1 }));
    }
  });

  it('creates 130 services within the API budget: ECS never throttles the reconciler', async () => {
    // Act
    const first = await h.pass('create');
    await h.converge(20);

    // Assess
    expect(first.counts.actionsApplied).toBe(2 * (CLUSTERS.small + CLUSTERS.large));
    const throttled = Object.entries(h.sim.callCounts()).filter(([, c]) => c.throttled > 0);
    expect(throttled).toEqual([]);
    const registers = h.sim.calls({ action: 'RegisterTaskDefinition' });
    expect(registers).toHaveLength(CLUSTERS.small + CLUSTERS.large);
    // At half of ECS's task-definition-modify bucket (burst 20, 1/s): 10 at once, then 0.5/s.
    const spanSeconds = (registers.at(-1)!.at.getTime() - registers[0].at.getTime()) / 1000;
    expect(spanSeconds).toBeGreaterThanOrEqual((registers.length - 10) / 0.5 - 1);
  });

  it('a steady pass makes the minimum of calls: ceil(n/100) ListServices, ceil(n/10) DescribeServices per cluster, nothing else', async () => {
    // Prepare
    h.sim.clearCalls();
    h.sim.advance(60);

    // Act
    const steady = await h.pass('steady');

    // Assess
    expect(steady.actions).toEqual([]);
    expect(steady.readsComplete).toBe(true);
    const calls = h.sim.calls();
    for (const [cluster, n] of Object.entries(CLUSTERS)) {
      const of = (action: string) => calls.filter((c) => c.action === action && c.request.cluster === cluster);
      expect(of('ListServices')).toHaveLength(Math.ceil(n / ECS_LIMITS.listServicesMaxResults));
      expect(of('DescribeServices')).toHaveLength(Math.ceil(n / ECS_LIMITS.describeServicesBatch));
    }
    const other = calls.filter((c) => c.action !== 'ListServices' && c.action !== 'DescribeServices');
    expect(other).toEqual([]);
    expect(calls.every((c) => c.outcome === 'ok')).toBe(true);
    expect(steady.counts.statusesWritten).toBe(0);
  });
});

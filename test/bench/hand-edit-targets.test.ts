/**
 * The pass benchmark's hand-edit targets: spread over the fleet and over the 20
 * clusters (services are dealt round-robin, so a service's cluster is its index mod 20), and never
 * a drift or spec-edit target, whose corrections would be counted as theirs.
 */
import { describe, expect, it } from 'vitest';
import { driftTargets, handEditTargets, specEditTargets } from '../../bench/pass-bench';
import { BENCH_CLUSTER_COUNT } from '../../bench/fixtures';

describe('handEditTargets', () => {
  for (const n of [1000, 5000, 20000, 1234]) {
    for (const offset of [11, 13]) {
      it(`puts 10 hand edits of ${n} services (offset ${offset}) in 10 clusters and 10 tenths of the fleet, off the drift and spec-edit targets`, () => {
        const targets = handEditTargets(n, 10, offset, 10);
        expect(targets).toHaveLength(10);
        expect(new Set(targets.map((i) => i % BENCH_CLUSTER_COUNT)).size).toBe(10);
        const step = Math.floor(n / 10);
        expect(new Set(targets.map((i) => Math.floor(i / step))).size).toBe(10);
        const taken = new Set([...driftTargets(n), ...specEditTargets(n, 10)]);
        expect(targets.filter((i) => taken.has(i))).toEqual([]);
        expect(targets.every((i) => Number.isInteger(i) && i >= 0 && i < n)).toBe(true);
      });
    }
  }

  it('stays inside a small fleet and returns no more targets than services', () => {
    expect(handEditTargets(5, 10, 11, 10).every((i) => i < 5)).toBe(true);
    expect(handEditTargets(0, 10)).toEqual([]);
  });
});

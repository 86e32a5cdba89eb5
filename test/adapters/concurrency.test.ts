import { describe, expect, it } from 'vitest';
import { chunk, mapSettledLimit } from '../../lambda/adapters/concurrency';

describe('mapSettledLimit (bounded DescribeServices batches)', () => {
  it.each([
    { case: 'more items than the limit', items: 23, limit: 4, peak: 4 },
    { case: 'fewer items than the limit', items: 3, limit: 4, peak: 3 },
    { case: 'a limit of one is sequential', items: 5, limit: 1, peak: 1 },
  ])('never has more than the limit in flight: $case', async ({ items, limit, peak }) => {
    // Prepare: each call holds its slot across a few event-loop turns.
    let inFlight = 0;
    let seen = 0;
    const call = async (n: number) => {
      inFlight++;
      seen = Math.max(seen, inFlight);
      for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
      inFlight--;
      return n * 2;
    };
    // Act
    const results = await mapSettledLimit(
      Array.from({ length: items }, (_, i) => i),
      limit,
      call,
    );
    // Assess
    expect(seen).toBe(peak);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : NaN))).toEqual(Array.from({ length: items }, (_, i) => i * 2));
  });

  it('keeps going after a failure and reports it in place', async () => {
    const results = await mapSettledLimit([1, 2, 3], 2, async (n) => {
      if (n === 2) throw new Error('batch 2 failed');
      return n;
    });
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });

  it('chunks service names in batches of at most 10 (DescribeServices limit)', () => {
    const names = Array.from({ length: 25 }, (_, i) => `s${i}`);
    expect(chunk(names, 10).map((c) => c.length)).toEqual([10, 10, 5]);
  });
});

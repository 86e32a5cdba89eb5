/**
 * The sweep over cached task definition descriptions (`sweepWindow` in lambda/core/pass.ts): with a
 * pass a minute, every revision in use that the durable cache described is confirmed with ECS
 * within ceil(n / CACHE_CONFIRMATIONS_PER_PASS) minutes, whether the container lives on (what it
 * confirmed stays confirmed) or a new one comes every minute (it starts with nothing confirmed),
 * and starting at any minute.
 */
import { describe, expect, it } from 'vitest';
import { CACHE_CONFIRMATIONS_PER_PASS, sweepWindow } from '../lambda/core/pass';

const K = CACHE_CONFIRMATIONS_PER_PASS;
const arn = (i: number) => `arn:aws:ecs:us-east-1:123456789012:task-definition/apps-s${String(i).padStart(5, '0')}:1`;
const MINUTE = 60_000;

describe('sweepWindow', () => {
  it.each([
    { n: 1, startMinute: 0 },
    { n: K - 1, startMinute: 7 },
    { n: K, startMinute: 29_000_001 },
    { n: K + 1, startMinute: 3 },
    { n: 45, startMinute: 29_123_457 },
    { n: 1_000, startMinute: 11 },
    { n: 5_000, startMinute: 29_500_003 },
  ])('n = $n from minute $startMinute: every revision within ceil(n / K) passes a minute apart', ({ n, startMinute }) => {
    // Prepare: in-use revisions in any order.
    const inUse = Array.from({ length: n }, (_, i) => arn((i * 7919) % n));
    const bound = Math.ceil(n / K);
    const none = new Set<string>();
    for (const container of ['lives on', 'new every minute'] as const) {
      // What the container has not confirmed: shrinks while it lives on, all of it for a new one.
      const unconfirmed = new Set(inUse);
      const seen = new Set<string>();
      // Act
      for (let m = 0; m < bound; m++) {
        const picked = sweepWindow(inUse, unconfirmed, none, new Date((startMinute + m) * MINUTE));
        expect(picked.length).toBeLessThanOrEqual(K);
        expect(picked.every((a) => unconfirmed.has(a))).toBe(true);
        for (const a of picked) {
          seen.add(a);
          if (container === 'lives on') unconfirmed.delete(a);
        }
      }
      // Assess
      expect([container, seen.size]).toEqual([container, n]);
    }
  });

  it('skips what it is told to skip and what is confirmed, and picks nothing when all is', () => {
    const inUse = Array.from({ length: 30 }, (_, i) => arn(i));
    const now = new Date(5 * MINUTE);
    expect(sweepWindow(inUse, new Set(), new Set(), now)).toEqual([]);
    expect(sweepWindow(inUse, new Set([arn(3)]), new Set([arn(3)]), now)).toEqual([]);
    expect(sweepWindow(inUse, new Set([arn(3), arn(29)]), new Set([arn(3)]), now)).toEqual([arn(29)]);
  });
});

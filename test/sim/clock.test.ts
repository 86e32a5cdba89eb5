import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { RunawayClockError, VirtualClock } from '../../local/sim/clock';
import { SeededRandom } from '../../local/sim/random';

const T0 = new Date('2025-01-01T00:00:00Z');

describe('VirtualClock (manual)', () => {
  it('stands still until advanced, then runs each timer at its own time, in time order', () => {
    // Prepare
    const clock = new VirtualClock({ startTime: T0 });
    const seen: { label: string; at: string }[] = [];
    clock.after(30, () => seen.push({ label: 'b', at: clock.now().toISOString() }));
    clock.after(10, () => {
      seen.push({ label: 'a', at: clock.now().toISOString() });
      clock.after(5, () => seen.push({ label: 'a+5', at: clock.now().toISOString() }));
    });
    clock.after(90, () => seen.push({ label: 'late', at: clock.now().toISOString() }));

    // Act
    const idle = clock.now().toISOString();
    const after = clock.advance(60);

    // Assess
    expect(idle).toBe(T0.toISOString());
    expect(after.toISOString()).toBe('2025-01-01T00:01:00.000Z');
    expect(seen).toEqual([
      { label: 'a', at: '2025-01-01T00:00:10.000Z' },
      { label: 'a+5', at: '2025-01-01T00:00:15.000Z' },
      { label: 'b', at: '2025-01-01T00:00:30.000Z' },
    ]);
  });

  it('runs timers of equal time in scheduling order and skips cancelled ones', () => {
    const clock = new VirtualClock({ startTime: T0 });
    const seen: string[] = [];
    clock.after(1, () => seen.push('first'));
    const h = clock.after(1, () => seen.push('cancelled'));
    clock.after(1, () => seen.push('second'));
    h.cancel();

    clock.advance(1);

    expect(seen).toEqual(['first', 'second']);
  });

  it.each([
    { case: 'negative seconds', seconds: -1 },
    { case: 'NaN', seconds: Number.NaN },
    { case: 'infinity', seconds: Number.POSITIVE_INFINITY },
  ])('refuses to advance by $case', ({ seconds }) => {
    const clock = new VirtualClock({ startTime: T0 });
    expect(() => clock.advance(seconds)).toThrow(RangeError);
  });

  it('stops a timer that keeps rescheduling itself at the same time', () => {
    const clock = new VirtualClock({ startTime: T0 });
    const again = () => {
      clock.schedule(clock.nowMs(), again);
    };
    clock.schedule(clock.nowMs(), again);
    expect(() => clock.advance(1)).toThrow(RunawayClockError);
  });

  it('never hands out a time earlier than one already handed out (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(1000), fc.nat(100)), { maxLength: 30 }), (ops) => {
        const clock = new VirtualClock({ startTime: T0 });
        const times: number[] = [];
        for (const [delay, step] of ops) {
          clock.after(delay, () => times.push(clock.nowMs()));
          clock.advance(step);
          times.push(clock.nowMs());
        }
        return times.every((t, i) => i === 0 || t >= times[i - 1]);
      }),
    );
  });
});

describe('VirtualClock (scaled)', () => {
  let clock: VirtualClock | undefined;
  afterEach(() => clock?.stop());

  it('moves speed x real time and runs due timers in the background', async () => {
    // Prepare: one simulated minute per real second.
    clock = new VirtualClock({ startTime: T0, speed: 60, tickMs: 5 });
    let firedAt: number | undefined;
    // `after` counts from now(), which has already moved on a loaded machine: compare with the
    // timer's own time rather than with T0 + 3 s.
    const timer = clock.after(3, () => {
      firedAt = clock?.nowMs();
    });
    expect(timer.at).toBeGreaterThanOrEqual(T0.getTime() + 3000);

    // Act: 200 real ms = about 12 virtual seconds.
    await new Promise((r) => setTimeout(r, 200));

    // Assess
    const elapsed = (clock.nowMs() - T0.getTime()) / 1000;
    expect(elapsed).toBeGreaterThanOrEqual(9);
    expect(firedAt).toBe(timer.at);
  });

  it('jumps ahead with advance and keeps counting from there', () => {
    clock = new VirtualClock({ startTime: T0, speed: 1 });
    const before = clock.nowMs();
    clock.advance(3600);
    expect(clock.nowMs() - before).toBeGreaterThanOrEqual(3600_000);
  });

  it('refuses a speed that is not positive', () => {
    expect(() => new VirtualClock({ speed: 0 })).toThrow(RangeError);
  });
});

describe('SeededRandom', () => {
  it('repeats the same sequence for the same seed and differs for another', () => {
    const a = new SeededRandom(42);
    const b = new SeededRandom(42);
    const c = new SeededRandom(43);
    const seq = (r: SeededRandom) => [r.hex(32), r.uuid(), r.digits(19), r.between(10, 30)];
    const sa = seq(a);
    expect(seq(b)).toEqual(sa);
    expect(seq(c)).not.toEqual(sa);
    expect(sa[0]).toMatch(/^[0-9a-f]{32}$/);
    expect(sa[1]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(sa[2]).toMatch(/^[1-9]\d{18}$/);
  });

  it('draws within bounds (property)', () => {
    fc.assert(
      fc.property(fc.integer(), fc.integer({ min: -1000, max: 1000 }), fc.integer({ min: 0, max: 1000 }), (seed, min, span) => {
        const r = new SeededRandom(seed);
        const x = r.between(min, min + span);
        const n = r.int(min, min + span);
        return x >= min && x <= min + span && Number.isInteger(n) && n >= min && n <= min + span;
      }),
    );
  });
});

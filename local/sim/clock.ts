/**
 * The simulator's virtual clock. Every ECS timestamp the simulator answers (createdAt, startedAt,
 * stoppedAt, event times, deployment times) and every scheduled task transition comes from it.
 *
 * Two modes:
 * - manual (`speed` undefined): time stands still until {@link VirtualClock.advance} moves it;
 *   `advance(seconds)` runs every scheduled transition in time order, each seeing its own time.
 * - scaled (`speed` > 0): virtual time = start + real elapsed time x speed (`speed: 60` is one
 *   simulated minute per real second); due transitions run from a real-time timer and before every
 *   API call. `advance` still works and jumps ahead.
 */

/** A scheduled transition. */
interface Timer {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
  cancelled: boolean;
}

/** Handle returned by {@link VirtualClock.schedule}; `cancel()` is idempotent. */
export interface TimerHandle {
  cancel(): void;
  /** Virtual time the timer fires, epoch milliseconds. */
  readonly at: number;
}

export interface VirtualClockOptions {
  /** Virtual time at creation. Default: the real time at creation. */
  readonly startTime?: Date;
  /** Virtual seconds per real second; undefined means manual. Must be > 0 when set. */
  readonly speed?: number;
  /** Real milliseconds between background runs of due timers in scaled mode (default 50). */
  readonly tickMs?: number;
}

/** Thrown when one `advance` would run more timers than {@link MAX_TIMERS_PER_RUN} (a loop bug). */
export class RunawayClockError extends Error {
  constructor(count: number) {
    super(`The simulated clock ran ${count} scheduled transitions in one step; a transition keeps rescheduling itself.`);
    this.name = 'RunawayClockError';
  }
}

export const MAX_TIMERS_PER_RUN = 1_000_000;

/** The latest time a JavaScript Date can hold (epoch milliseconds, ECMAScript "Time Values"). */
export const MAX_TIME_MS = 8.64e15;

/** Binary min-heap of timers ordered by (at, seq): equal times run in scheduling order. */
class TimerHeap {
  private readonly items: Timer[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): Timer | undefined {
    return this.items[0];
  }

  push(t: Timer): void {
    const a = this.items;
    a.push(t);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(a[i], a[p])) break;
      [a[i], a[p]] = [a[p], a[i]];
      i = p;
    }
  }

  pop(): Timer | undefined {
    const a = this.items;
    if (a.length === 0) return undefined;
    const top = a[0];
    const last = a.pop() as Timer;
    if (a.length > 0) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && before(a[l], a[m])) m = l;
        if (r < a.length && before(a[r], a[m])) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m], a[i]];
        i = m;
      }
    }
    return top;
  }

  clear(): void {
    this.items.length = 0;
  }
}

function before(x: Timer, y: Timer): boolean {
  return x.at < y.at || (x.at === y.at && x.seq < y.seq);
}

export class VirtualClock {
  private readonly heap = new TimerHeap();
  private seq = 0;
  /** Manual mode: the current virtual time. Scaled mode: virtual time at `realAnchor`. */
  private base: number;
  private realAnchor: number;
  /** While a timer runs, `now()` is that timer's time. */
  private cursor: number | undefined;
  /** Highest time handed out; keeps `now()` monotonic across mode arithmetic. */
  private high: number;
  private running = false;
  private interval: NodeJS.Timeout | undefined;
  readonly speed: number | undefined;

  constructor(opts: VirtualClockOptions = {}) {
    if (opts.speed !== undefined && !(opts.speed > 0)) {
      throw new RangeError(`speed must be a positive number of virtual seconds per real second, got ${opts.speed}`);
    }
    this.speed = opts.speed;
    this.base = (opts.startTime ?? new Date()).getTime();
    this.realAnchor = Date.now();
    this.high = this.base;
    if (this.speed !== undefined) {
      this.interval = setInterval(() => this.runDue(), opts.tickMs ?? 50);
      this.interval.unref();
    }
  }

  /** True when time only moves with {@link advance}. */
  get manual(): boolean {
    return this.speed === undefined;
  }

  /** Current virtual time, epoch milliseconds. */
  nowMs(): number {
    if (this.cursor !== undefined) return this.cursor;
    const t = this.speed === undefined ? this.base : this.base + (Date.now() - this.realAnchor) * this.speed;
    if (t > this.high) this.high = t;
    return this.high;
  }

  /** Current virtual time. */
  now(): Date {
    return new Date(this.nowMs());
  }

  /**
   * Runs `fn` at virtual time `at` (epoch ms; a time in the past means "as soon as possible",
   * after every timer already due). During `fn`, `now()` returns the timer's time.
   */
  schedule(at: number, fn: () => void): TimerHandle {
    const t: Timer = { at: Math.max(at, this.nowMs()), seq: this.seq++, fn, cancelled: false };
    this.heap.push(t);
    return {
      at: t.at,
      cancel: () => {
        t.cancelled = true;
      },
    };
  }

  /** Runs `fn` after `seconds` of virtual time. */
  after(seconds: number, fn: () => void): TimerHandle {
    return this.schedule(this.nowMs() + seconds * 1000, fn);
  }

  /** Runs every timer due at or before now, in time order. Returns how many ran. */
  runDue(): number {
    return this.runUntil(this.nowMs());
  }

  /**
   * Moves virtual time forward by `seconds` (>= 0), running every scheduled transition up to the
   * new time in order; each transition sees its own time.
   * @returns the new virtual time.
   * @throws RangeError for a negative or non-finite amount, or one that would take the clock past
   *   the latest time a Date can hold (year 275760; nothing changes then); RunawayClockError (see
   *   above).
   */
  advance(seconds: number): Date {
    if (!(seconds >= 0) || !Number.isFinite(seconds)) {
      throw new RangeError(`advance takes a finite number of seconds >= 0, got ${seconds}`);
    }
    const target = this.nowMs() + seconds * 1000;
    if (!(target <= MAX_TIME_MS)) {
      throw new RangeError(`advance by ${seconds} seconds would take the clock past the latest time a Date can hold`);
    }
    this.runUntil(target);
    if (this.speed === undefined) {
      this.base = Math.max(this.base, target);
    } else {
      // Shift the real-time anchor so that scaled time continues from the target.
      const current = this.base + (Date.now() - this.realAnchor) * this.speed;
      if (target > current) this.base += target - current;
    }
    this.high = Math.max(this.high, target);
    return this.now();
  }

  /** Number of pending timers (cancelled ones included until they surface). */
  get pending(): number {
    return this.heap.size;
  }

  /** Drops every pending timer (simulator reset). */
  clearTimers(): void {
    this.heap.clear();
  }

  /**
   * Drops every pending timer and sets virtual time to `time` (which may be earlier: used by a
   * simulator reset, after which no earlier timestamp exists anywhere).
   */
  resetTo(time: Date): void {
    this.heap.clear();
    this.base = time.getTime();
    this.realAnchor = Date.now();
    this.high = this.base;
  }

  /** Stops the background timer of scaled mode. */
  stop(): void {
    if (this.interval) clearInterval(this.interval);
    this.interval = undefined;
  }

  private runUntil(target: number): number {
    if (this.running) return 0; // a timer that triggers runDue (e.g. via an API call) must not recurse
    this.running = true;
    let count = 0;
    try {
      for (;;) {
        const top = this.heap.peek();
        if (!top || top.at > target) break;
        this.heap.pop();
        if (top.cancelled) continue;
        if (++count > MAX_TIMERS_PER_RUN) throw new RunawayClockError(count);
        this.cursor = top.at;
        if (top.at > this.high) this.high = top.at;
        if (this.speed === undefined && top.at > this.base) this.base = top.at;
        try {
          top.fn();
        } finally {
          this.cursor = undefined;
        }
      }
    } finally {
      this.running = false;
    }
    return count;
  }
}

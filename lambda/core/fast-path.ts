/**
 * The fast path: a pass restricted to the services a spec edit named, run as
 * soon as the table's stream delivers the edit, through the very same pass code ({@link runPass}
 * with `keys`).
 *
 * Lease granularity: one lease per specs table and target, shared with the scheduled pass. The
 * fast path never runs beside a scheduled pass or another fast path of the same target, so an
 * action is never started twice or by two passes at once for one service. When the lease is held
 * the fast path waits for it, asking again every {@link FAST_PATH_LEASE_POLL_MS}, at most
 * `leaseWaitMs`; if it still cannot take it, it gives up quietly: the edited spec is not at rest
 * (its hash changed), so the next scheduled pass reads and plans it first (`observationRequest`
 * in `./pass.ts`). The price: an edit made while a long scheduled pass runs waits for that pass.
 */
import { runPass, type PassOptions, type PassPorts, type PassSummary } from './pass';
import type { ServiceKey } from './types';

/** Milliseconds between two tries for a held lease. */
export const FAST_PATH_LEASE_POLL_MS = 250;

/** Default milliseconds the fast path waits for a held lease before leaving the edit to the scheduled pass. */
export const FAST_PATH_LEASE_WAIT_MS = 30_000;

export interface FastPathOptions extends Omit<PassOptions, 'keys'> {
  /** Milliseconds to wait for a held lease (default {@link FAST_PATH_LEASE_WAIT_MS}). */
  readonly leaseWaitMs?: number;
  /** Waits `ms` milliseconds (real time in Lambda; a virtual clock in tests). */
  readonly sleep: (ms: number) => Promise<void>;
  /** Milliseconds on a monotonic clock, for the wait (default: the pass clock). */
  readonly monotonicMs?: () => number;
  /**
   * No log line when the lease stays held: the caller does something else with the keys (the
   * fan-out sends its message back to the queue) and says so itself.
   */
  readonly quietLeaseHeld?: boolean;
}

/** What the fast path did: the pass it ran (or the last lease-held answer) and how long it waited. */
export interface FastPathResult {
  readonly summary: PassSummary;
  /** Milliseconds spent waiting for the lease. */
  readonly waitedMs: number;
  /** Tries for the lease (1 when it was free). */
  readonly attempts: number;
}

/**
 * Reconciles `keys` (a spec edit's services) through {@link runPass}, waiting for the lease as
 * described in the module docs.
 * @returns the result, or undefined when `keys` is empty (nothing is run, no lease is taken).
 * @throws only programming errors (as {@link runPass}).
 */
export async function runFastPath(
  ports: PassPorts,
  keys: readonly ServiceKey[],
  options: FastPathOptions,
): Promise<FastPathResult | undefined> {
  if (keys.length === 0) return undefined;
  const { leaseWaitMs = FAST_PATH_LEASE_WAIT_MS, sleep, monotonicMs, quietLeaseHeld, ...pass } = options;
  const now = monotonicMs ?? (() => ports.clock.now().getTime());
  const start = now();
  let attempts = 0;
  for (;;) {
    attempts += 1;
    const summary = await runPass(ports, { ...pass, keys });
    const waitedMs = Math.max(0, now() - start);
    const mayWait = pass.shouldContinue ? pass.shouldContinue() : true;
    if (summary.outcome !== 'lease-held' || waitedMs + FAST_PATH_LEASE_POLL_MS > leaseWaitMs || !mayWait) {
      if (summary.outcome === 'lease-held' && !quietLeaseHeld) {
        ports.log.info('fast path: the lease stayed held; the scheduled pass reconciles these services first', {
          keys: keys.map((k) => `${k.cluster}/${k.service}`),
          waitedMs,
          leaseHolder: summary.lease?.holder,
        });
      }
      return { summary, waitedMs, attempts };
    }
    await sleep(FAST_PATH_LEASE_POLL_MS);
  }
}

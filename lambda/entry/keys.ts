/**
 * A pass restricted to the services a fast-path batch names (stream records or ECS's events),
 * through the same code as the scheduled pass (`lambda/core/fast-path.ts`), or in fan-out mode
 * those keys sent to their targets' invocations.
 */
import type { PassSummary } from '../core/pass';
import type { ServiceKey } from '../core/types';
import { FAST_PATH_LEASE_WAIT_MS } from '../core/fast-path';
import { dispatchKeysToTargets } from './fan-out';
import { homeOf, passTiming, type Invocation } from './invocation';
import type { KeysDispatched } from './results';
import { tracedPass } from './traced-pass';
import type { Wiring } from './wiring';

/** The keys of a fast-path batch; `keysWithSpecOnly` when only those with a spec item are read. */
export interface FastKeys {
  readonly keys: readonly ServiceKey[];
  readonly keysWithSpecOnly?: boolean;
}

/**
 * Reconciles `fast.keys` (not empty), waiting at most a third of the invocation's time (and
 * {@link FAST_PATH_LEASE_WAIT_MS}) for a lease another pass holds. It never throws for a held
 * lease: the batch is done, and the scheduled pass reads the edited services first. In fan-out
 * mode the keys go to their targets as fan-out messages instead.
 * @throws in fan-out mode when a message could not be sent, so the mapping retries the batch.
 */
export function onKeys(w: Wiring, inv: Invocation, fast: FastKeys): Promise<PassSummary | KeysDispatched> {
  if (w.fanOut) return dispatchKeysToTargets(w, w.fanOut, homeOf(w, inv), fast.keys);
  return tracedPass(w, '## fast path pass', async () => {
    const leaseWaitMs = Math.min(FAST_PATH_LEASE_WAIT_MS, Math.floor(inv.startRemainingMs / 3));
    const options = { ...passTiming(inv), leaseWaitMs, ...(fast.keysWithSpecOnly ? { keysWithSpecOnly: true } : {}) };
    // keys is not empty here, so the fast path ran.
    const result = (await w.runtime.runFastPath(fast.keys, options))!;
    w.tracer.putAnnotation('leaseWaitMs', result.waitedMs);
    return result.summary;
  });
}

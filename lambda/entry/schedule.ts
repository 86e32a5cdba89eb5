/**
 * The EventBridge schedule (any event that is not a stream or SQS batch; its content is not used:
 * the pass is level-triggered): the scheduled pass over the whole fleet, or in fan-out mode one
 * fan-out message per target.
 */
import type { PassSummary } from '../core/pass';
import type { DispatchSummary } from '../core/fan-out';
import { dispatchAllTargets } from './fan-out';
import { homeOf, passTiming, type Invocation } from './invocation';
import { tracedPass } from './traced-pass';
import type { Wiring } from './wiring';

/**
 * The scheduled pass. The invocation's remaining time bounds it: observation spends at most
 * `OBSERVATION_TIME_SHARE` of it, no action starts with less than `RESERVE_MS` left, and no status
 * write with less than `STATUS_WRITE_RESERVE_MS` left (`lambda/core/pass.ts`).
 * @returns the pass summary, also when another pass holds the lease; in fan-out mode the
 *   dispatch's {@link DispatchSummary}.
 */
export function onSchedule(w: Wiring, inv: Invocation): Promise<PassSummary | DispatchSummary> {
  if (w.fanOut) return dispatchAllTargets(w, w.fanOut, homeOf(w, inv));
  return tracedPass(w, '## reconcile pass', () => w.runtime.run(passTiming(inv)));
}

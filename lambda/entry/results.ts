/** What the handler returns, by entry point (all JSON-safe). */
import type { PassSummary } from '../core/pass';
import type { DispatchSummary, EventsDispatchSummary } from '../core/fan-out';
import type { IgnoredRecords } from '../adapters/stream-records';
import type { TargetPassResult } from '../adapters/fan-out';

/** What the handler returns for the fan-out queue's messages (one per target; batch size 1). */
export interface TargetPassResults {
  readonly outcome: 'target-passes';
  readonly results: readonly TargetPassResult[];
}

/**
 * What the handler returns for a batch that names no service: a stream batch of status writes,
 * lease items...; an events batch of the reconciler's own calls, heartbeats, families...
 */
export interface NothingToReconcile {
  readonly outcome: 'nothing-to-reconcile';
  readonly ignored: IgnoredRecords | { readonly events: number; readonly families: number };
}

/** Fan-out mode: the keys of a fast-path batch were sent to their targets' invocations. */
export interface KeysDispatched {
  readonly outcome: 'keys-dispatched';
  readonly targets: readonly string[];
}

/** Any answer of the handler. */
export type HandlerResult = PassSummary | NothingToReconcile | DispatchSummary | TargetPassResults | EventsDispatchSummary | KeysDispatched;

/** A batch of the specs table's DynamoDB stream records (the fast path). */
import type { DynamoDBRecord } from 'aws-lambda';
import type { PassSummary } from '../core/pass';
import { keysOfStreamRecords } from '../adapters/stream-records';
import { recordStreamHistory } from '../adapters/spec-history-stream';
import type { Invocation } from './invocation';
import { onKeys } from './keys';
import type { KeysDispatched, NothingToReconcile } from './results';
import type { Wiring } from './wiring';

/**
 * Reconciles the services the batch's records name (spec edits, not the reconciler's own status
 * writes or lease items); a batch naming none starts nothing.
 * @returns {@link NothingToReconcile} for a batch that names no service, else what `onKeys` does.
 */
export async function onStream(w: Wiring, inv: Invocation, records: readonly DynamoDBRecord[]): Promise<PassSummary | KeysDispatched | NothingToReconcile> {
  // The spec history of edits made outside ecsr and of the outcomes the pass wrote (docs/history.md).
  await recordStreamHistory(w.runtime.doc, w.config.specsTable, records, w.log);
  const stream = keysOfStreamRecords(records);
  if (stream.keys.length === 0) {
    w.logger.debug('stream batch names no service', { ignored: stream.ignored });
    return { outcome: 'nothing-to-reconcile', ignored: stream.ignored };
  }
  if (!w.fanOut) w.logger.info('fast path: stream records name services', { keys: stream.keys.length, ignored: stream.ignored });
  return onKeys(w, inv, { keys: stream.keys });
}

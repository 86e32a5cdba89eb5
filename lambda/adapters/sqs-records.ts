/**
 * Batches of the events fast path queue as Lambda's SQS event source mapping delivers them
 * (Lambda Developer Guide, "Using Lambda with Amazon SQS": `Records[]` with `eventSource`
 * `aws:sqs`, `body`, `messageId`, `eventSourceARN`). Each body is one EventBridge event (an
 * EventBridge rule with an SQS target puts the event's JSON as the message body).
 */
import type { SQSRecord } from 'aws-lambda';

/** True for a batch of SQS messages (every record's `eventSource` is `aws:sqs`). */
export function isSqsEvent(event: unknown): event is { Records: SQSRecord[] } {
  if (event === null || typeof event !== 'object') return false;
  const records = (event as { Records?: unknown }).Records;
  return Array.isArray(records) && records.length > 0 && records.every((r) => (r as SQSRecord | null)?.eventSource === 'aws:sqs');
}

/** The bodies of the batch's messages (a record without a string body is skipped). */
export function bodiesOfSqsRecords(records: readonly SQSRecord[]): string[] {
  return records.flatMap((r) => (typeof r.body === 'string' ? [r.body] : []));
}

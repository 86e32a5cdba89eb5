/**
 * The event queue on SQS: EventBridge rules put ECS's events and the CloudTrail
 * events of ECS writes into it; each pass receives what is there and deletes what it handled.
 *
 * ReceiveMessage takes at most 10 messages a call and returns none, not an error, for an empty
 * queue; `WaitTimeSeconds: 0` (short polling) never makes a pass wait, and short polling may
 * answer empty while messages wait on other servers (Amazon SQS Developer Guide, "Amazon SQS short
 * and long polling"), which costs only a late hint. DeleteMessageBatch takes at most 10 entries
 * (and needs only `sqs:DeleteMessage`). A message not deleted becomes visible again after the
 * queue's visibility timeout and, after its maxReceiveCount, moves to the dead-letter queue.
 */
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient, type SQSClientConfig } from '@aws-sdk/client-sqs';
import type { EventFeed, FeedMessage, ReceivedMessages } from '../core/ports';
import { SDK_RETRY } from './clients';
import { errorMessage } from './errors';

/** SQS's limit of messages per ReceiveMessage and of entries per DeleteMessageBatch. */
const SQS_BATCH = 10;

/** An SQS client with standard retries; endpoint and region from the SDK's standard configuration. */
export function createSqsClient(clientConfig: SQSClientConfig = {}): SQSClient {
  return new SQSClient({ ...SDK_RETRY, ...clientConfig });
}

/** {@link EventFeed} on the SQS queue `queueUrl`. */
export class SqsEventFeed implements EventFeed {
  constructor(
    private readonly sqs: SQSClient,
    readonly queueUrl: string,
  ) {}

  async receive(options: { readonly max: number; readonly shouldContinue: () => boolean }): Promise<ReceivedMessages> {
    const messages: FeedMessage[] = [];
    while (messages.length < options.max && options.shouldContinue()) {
      let out;
      try {
        out = await this.sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: this.queueUrl,
            MaxNumberOfMessages: Math.min(SQS_BATCH, options.max - messages.length),
            WaitTimeSeconds: 0,
          }),
        );
      } catch (err) {
        const error = `SQS ReceiveMessage ${this.queueUrl}: ${errorMessage(err)}`;
        // Messages already received stay usable; a queue never read counts as unreadable.
        return { readable: messages.length > 0, messages, error };
      }
      const got = out.Messages ?? [];
      for (const m of got) if (m.ReceiptHandle && m.Body !== undefined) messages.push({ handle: m.ReceiptHandle, body: m.Body });
      if (got.length === 0) break;
    }
    return { readable: true, messages };
  }

  async acknowledge(handles: readonly string[]): Promise<{ readonly error?: string }> {
    const errors: string[] = [];
    for (let i = 0; i < handles.length; i += SQS_BATCH) {
      const batch = handles.slice(i, i + SQS_BATCH);
      try {
        const out = await this.sqs.send(
          new DeleteMessageBatchCommand({ QueueUrl: this.queueUrl, Entries: batch.map((h, j) => ({ Id: String(j), ReceiptHandle: h })) }),
        );
        for (const f of out.Failed ?? []) errors.push(`${f.Code ?? 'failed'}: ${f.Message ?? ''}`.trim());
      } catch (err) {
        errors.push(errorMessage(err));
      }
    }
    // Not deleted: delivered again after the visibility timeout, a duplicate hint (harmless).
    return errors.length > 0 ? { error: `SQS DeleteMessageBatch ${this.queueUrl}: ${errors.slice(0, 3).join('; ')}${errors.length > 3 ? ` (+${errors.length - 3} more)` : ''}` } : {};
  }
}

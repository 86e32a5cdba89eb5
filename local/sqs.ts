/**
 * A local Amazon SQS queue server for the local run: it answers the AWS JSON 1.0 protocol calls
 * the unmodified `@aws-sdk/client-sqs` makes (`POST /`, `X-Amz-Target: AmazonSQS.<Action>`), so the
 * reconciler's own `SqsEventFeed` adapter reads the local run's events exactly as it reads the
 * real queue. Actions: ReceiveMessage, DeleteMessage, DeleteMessageBatch, SendMessage, SendMessageBatch,
 * GetQueueUrl, GetQueueAttributes (the Amazon SQS API Reference's request and response members).
 *
 * Semantics kept from SQS (Amazon SQS Developer Guide, "Amazon SQS visibility timeout",
 * "Using dead-letter queues"): a received message is invisible for the queue's visibility timeout
 * and comes back unless deleted with the receipt handle of its latest receive; after
 * `maxReceiveCount` receives it moves to the dead-letter queue; ReceiveMessage returns at most 10
 * messages and none (not an error) from an empty queue; `MD5OfBody` is the body's MD5 (the SDK
 * checks it); a message sent with `DelaySeconds` is not received before that many seconds have
 * passed ("Amazon SQS message timers"). Time is the caller's clock (the simulator's virtual clock
 * in the local run). Not kept: long polling (the reconciler never waits), FIFO queues, message attributes.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ListenError } from './sim/server';

const TARGET_PREFIX = 'AmazonSQS.';
const CONTENT_TYPE = 'application/x-amz-json-1.0';
const MAX_RECEIVE = 10;

interface StoredMessage {
  readonly id: string;
  readonly body: string;
  readonly md5: string;
  readonly sentAt: number;
  visibleAt: number;
  receiveCount: number;
  handle?: string;
}

/** One queue's settings. */
export interface LocalQueueOptions {
  /** Seconds a received message stays invisible (SQS default 30). */
  readonly visibilityTimeoutSeconds?: number;
  /** Receives before a message moves to `deadLetterQueue` (needs it). */
  readonly maxReceiveCount?: number;
  readonly deadLetterQueue?: string;
}

class LocalQueue {
  readonly messages: StoredMessage[] = [];
  constructor(
    readonly name: string,
    public options: LocalQueueOptions,
  ) {}
}

class SqsError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/** The local queue server. `start()` it, point the SDK at {@link endpoint}, `close()` it. */
export class LocalSqs {
  private readonly queues = new Map<string, LocalQueue>();
  private server: Server | undefined;
  private boundPort = 0;
  /** Calls answered, by action. */
  readonly callCounts = new Map<string, number>();

  constructor(
    private readonly opts: { readonly accountId: string; readonly region: string; readonly nowMs: () => number; readonly host?: string },
  ) {}

  get host(): string {
    return this.opts.host ?? '127.0.0.1';
  }

  /** `http://HOST:PORT`, for `endpoint` / `AWS_ENDPOINT_URL_SQS`. */
  get endpoint(): string {
    return `http://${this.host}:${this.boundPort}`;
  }

  /** The URL of queue `name` (as SQS's `https://sqs.REGION.amazonaws.com/ACCOUNT/NAME`, on loopback). */
  queueUrl(name: string): string {
    return `${this.endpoint}/${this.opts.accountId}/${name}`;
  }

  /** Creates queue `name` (an existing one keeps its messages and gets the new options). */
  createQueue(name: string, options: LocalQueueOptions = {}): string {
    if (options.maxReceiveCount !== undefined && !options.deadLetterQueue) throw new Error(`Queue ${name}: maxReceiveCount needs a deadLetterQueue.`);
    const q = this.queues.get(name);
    if (q) q.options = { ...options };
    else this.queues.set(name, new LocalQueue(name, { ...options }));
    return this.queueUrl(name);
  }

  /**
   * Adds a message to queue `name` (an EventBridge target's delivery), received no earlier than
   * `delaySeconds` later (SQS's `DelaySeconds`; 0 by default).
   */
  send(name: string, body: string, delaySeconds = 0): string {
    const q = this.queues.get(name);
    if (!q) throw new Error(`No local queue named ${name}.`);
    const id = randomUUID();
    const now = this.opts.nowMs();
    q.messages.push({ id, body, md5: md5(body), sentAt: now, visibleAt: now + delaySeconds * 1000, receiveCount: 0 });
    return id;
  }

  /** Messages in queue `name`: visible now, and received but not yet visible again. */
  depth(name: string): { visible: number; inFlight: number } {
    const q = this.queues.get(name);
    const now = this.opts.nowMs();
    const visible = q?.messages.filter((m) => m.visibleAt <= now).length ?? 0;
    return { visible, inFlight: (q?.messages.length ?? 0) - visible };
  }

  /** The bodies of queue `name`'s messages (for tests and the summary). */
  bodies(name: string): string[] {
    return this.queues.get(name)?.messages.map((m) => m.body) ?? [];
  }

  /** @throws ListenError when the port cannot be used (`option` names the command line option). */
  async start(port = 0, option = '--sqs-port'): Promise<void> {
    const server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', (e: NodeJS.ErrnoException) => reject(new ListenError(e, this.host, port, option)));
      server.listen(port, this.host, () => resolve());
    });
    this.server = server;
    this.boundPort = (server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let status = 200;
    let out: unknown;
    try {
      const raw = await new Promise<string>((resolve, reject) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        req.on('error', reject);
      });
      const target = req.headers['x-amz-target'];
      const action = typeof target === 'string' && target.startsWith(TARGET_PREFIX) ? target.slice(TARGET_PREFIX.length) : '';
      let input: Record<string, unknown>;
      try {
        input = raw.trim() === '' ? {} : (JSON.parse(raw) as Record<string, unknown>);
      } catch {
        throw new SqsError('com.amazonaws.sqs#InvalidParameterValue', 'The request body is not valid JSON.');
      }
      this.callCounts.set(action, (this.callCounts.get(action) ?? 0) + 1);
      out = this.call(action, input);
    } catch (e) {
      const err = e instanceof SqsError ? e : new SqsError('com.amazonaws.sqs#InternalError', e instanceof Error ? e.message : String(e), 500);
      status = err.status;
      out = { __type: err.type, message: err.message };
    }
    const body = JSON.stringify(out);
    res.writeHead(status, { 'content-type': CONTENT_TYPE, 'x-amzn-requestid': randomUUID(), 'content-length': String(Buffer.byteLength(body)) });
    res.end(body);
  }

  private queueOf(input: Record<string, unknown>): LocalQueue {
    const url = typeof input.QueueUrl === 'string' ? input.QueueUrl : '';
    const name = url.split('/').pop() ?? '';
    const q = this.queues.get(name);
    if (!q) throw new SqsError('com.amazonaws.sqs#QueueDoesNotExist', 'The specified queue does not exist.');
    return q;
  }

  /** Answers one action. @throws SqsError with SQS's error type. */
  call(action: string, input: Record<string, unknown>): unknown {
    switch (action) {
      case 'ReceiveMessage':
        return this.receive(this.queueOf(input), input);
      case 'DeleteMessage': {
        const q = this.queueOf(input);
        if (!this.delete(q, String(input.ReceiptHandle ?? ''))) {
          throw new SqsError('com.amazonaws.sqs#ReceiptHandleIsInvalid', `The input receipt handle "${String(input.ReceiptHandle)}" is not a valid receipt handle.`);
        }
        return {};
      }
      case 'DeleteMessageBatch': {
        const q = this.queueOf(input);
        const entries = Array.isArray(input.Entries) ? (input.Entries as { Id?: string; ReceiptHandle?: string }[]) : [];
        if (entries.length === 0) throw new SqsError('com.amazonaws.sqs#EmptyBatchRequest', 'There should be at least one DeleteMessageBatchRequestEntry in the request.');
        if (entries.length > MAX_RECEIVE) throw new SqsError('com.amazonaws.sqs#TooManyEntriesInBatchRequest', `Maximum number of entries per request are ${MAX_RECEIVE}. You have sent ${entries.length}.`);
        const Successful: { Id: string }[] = [];
        const Failed: { Id: string; SenderFault: boolean; Code: string; Message: string }[] = [];
        for (const e of entries) {
          // SQS answers success for a handle of a message already deleted; only a malformed one fails.
          if (typeof e.ReceiptHandle === 'string' && e.ReceiptHandle !== '') {
            this.delete(q, e.ReceiptHandle);
            Successful.push({ Id: String(e.Id) });
          } else {
            Failed.push({ Id: String(e.Id), SenderFault: true, Code: 'ReceiptHandleIsInvalid', Message: 'The receipt handle is not valid.' });
          }
        }
        return { Successful, Failed };
      }
      case 'SendMessage': {
        const q = this.queueOf(input);
        const body = String(input.MessageBody ?? '');
        if (body === '') throw new SqsError('com.amazonaws.sqs#MissingParameter', 'The request must contain the parameter MessageBody.');
        const delay = delaySecondsOf(input.DelaySeconds);
        if (delay === undefined) throw new SqsError('com.amazonaws.sqs#InvalidParameterValue', DELAY_INVALID(input.DelaySeconds));
        return { MessageId: this.send(q.name, body, delay), MD5OfMessageBody: md5(body) };
      }
      case 'SendMessageBatch': {
        // Amazon SQS API Reference, SendMessageBatch: 1 to 10 entries, Ids distinct and of up to 80
        // letters, digits, hyphens and underscores (else the whole call fails); a bad entry fails alone.
        const q = this.queueOf(input);
        const entries = Array.isArray(input.Entries) ? (input.Entries as { Id?: unknown; MessageBody?: unknown; DelaySeconds?: unknown }[]) : [];
        if (entries.length === 0) throw new SqsError('com.amazonaws.sqs#EmptyBatchRequest', 'There should be at least one SendMessageBatchRequestEntry in the request.');
        if (entries.length > MAX_RECEIVE) throw new SqsError('com.amazonaws.sqs#TooManyEntriesInBatchRequest', `Maximum number of entries per request are ${MAX_RECEIVE}. You have sent ${entries.length}.`);
        const ids = entries.map((e) => (typeof e.Id === 'string' ? e.Id : ''));
        const badId = ids.find((id) => !/^[A-Za-z0-9_-]{1,80}$/.test(id));
        if (badId !== undefined) throw new SqsError('com.amazonaws.sqs#InvalidBatchEntryId', `A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long ("${badId}").`);
        if (new Set(ids).size !== ids.length) throw new SqsError('com.amazonaws.sqs#BatchEntryIdsNotDistinct', 'Two or more batch entries in the request have the same Id.');
        const Successful: { Id: string; MessageId: string; MD5OfMessageBody: string }[] = [];
        const Failed: { Id: string; SenderFault: boolean; Code: string; Message: string }[] = [];
        entries.forEach((e, i) => {
          const body = typeof e.MessageBody === 'string' ? e.MessageBody : '';
          const delay = delaySecondsOf(e.DelaySeconds);
          if (body === '') Failed.push({ Id: ids[i], SenderFault: true, Code: 'MissingParameter', Message: 'The request must contain the parameter MessageBody.' });
          else if (delay === undefined) Failed.push({ Id: ids[i], SenderFault: true, Code: 'InvalidParameterValue', Message: DELAY_INVALID(e.DelaySeconds) });
          else Successful.push({ Id: ids[i], MessageId: this.send(q.name, body, delay), MD5OfMessageBody: md5(body) });
        });
        return { Successful, Failed };
      }
      case 'GetQueueUrl': {
        const name = String(input.QueueName ?? '');
        if (!this.queues.has(name)) throw new SqsError('com.amazonaws.sqs#QueueDoesNotExist', 'The specified queue does not exist.');
        return { QueueUrl: this.queueUrl(name) };
      }
      case 'GetQueueAttributes': {
        const q = this.queueOf(input);
        const d = this.depth(q.name);
        return {
          Attributes: {
            ApproximateNumberOfMessages: String(d.visible),
            ApproximateNumberOfMessagesNotVisible: String(d.inFlight),
            VisibilityTimeout: String(q.options.visibilityTimeoutSeconds ?? 30),
            QueueArn: `arn:aws:sqs:${this.opts.region}:${this.opts.accountId}:${q.name}`,
          },
        };
      }
      default:
        throw new SqsError('com.amazonaws.sqs#UnsupportedOperation', `The local SQS server does not answer ${action || 'requests without X-Amz-Target'}.`);
    }
  }

  private receive(q: LocalQueue, input: Record<string, unknown>): unknown {
    const max = input.MaxNumberOfMessages === undefined ? 1 : Number(input.MaxNumberOfMessages);
    if (!Number.isInteger(max) || max < 1 || max > MAX_RECEIVE) {
      throw new SqsError('com.amazonaws.sqs#InvalidParameterValue', `Value ${String(input.MaxNumberOfMessages)} for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.`);
    }
    const now = this.opts.nowMs();
    const visibility = (input.VisibilityTimeout === undefined ? (q.options.visibilityTimeoutSeconds ?? 30) : Number(input.VisibilityTimeout)) * 1000;
    const out: { MessageId: string; ReceiptHandle: string; MD5OfBody: string; Body: string }[] = [];
    for (const m of [...q.messages]) {
      if (out.length >= max) break;
      if (m.visibleAt > now) continue;
      const limit = q.options.maxReceiveCount;
      if (limit !== undefined && m.receiveCount >= limit && q.options.deadLetterQueue) {
        // Received maxReceiveCount times and never deleted: it moves to the dead-letter queue.
        q.messages.splice(q.messages.indexOf(m), 1);
        this.queues.get(q.options.deadLetterQueue)?.messages.push({ ...m, visibleAt: now, receiveCount: 0, handle: undefined });
        continue;
      }
      m.receiveCount++;
      m.visibleAt = now + visibility;
      m.handle = `${m.id}#${m.receiveCount}#${randomUUID()}`;
      out.push({ MessageId: m.id, ReceiptHandle: m.handle, MD5OfBody: m.md5, Body: m.body });
    }
    return out.length > 0 ? { Messages: out } : {};
  }

  private delete(q: LocalQueue, handle: string): boolean {
    const i = q.messages.findIndex((m) => m.handle === handle);
    if (i >= 0) q.messages.splice(i, 1);
    return handle.includes('#');
  }
}

/**
 * A message's `DelaySeconds` (Amazon SQS API Reference, SendMessage: 0 to 900; absent: 0, the
 * queue's own delay, which the local queues do not set), or undefined when invalid.
 */
function delaySecondsOf(v: unknown): number | undefined {
  if (v === undefined || v === null) return 0;
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 900 ? v : undefined;
}

const DELAY_INVALID = (v: unknown) => `Value ${String(v)} for parameter DelaySeconds is invalid. Reason: must be between 0 and 900 seconds.`;

function md5(s: string): string {
  return createHash('md5').update(s, 'utf8').digest('hex');
}

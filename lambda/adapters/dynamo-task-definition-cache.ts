/**
 * The durable description cache: task definition revisions as
 * DescribeTaskDefinition returned them, kept in a DynamoDB table of their own, one item per
 * revision ARN, so that a new container reads them all at the start of its first pass (a few
 * parallel Scans) and compares every service at once instead of describing each revision again.
 *
 * A revision never changes once registered (Amazon ECS Developer Guide, "Task definition states"),
 * so an entry is never stale in content. It is only a cache: every failure here (table missing,
 * throttled, an item that is not one of ours) leaves the reconciler describing what it lacks, as
 * it would without the table, and never throws.
 *
 * Trusted for nothing alone: an entry is well formed when its checksum matches and its body names
 * the revision of its key ({@link claimsItsKey}), but anyone who can write the table can write a
 * well-formed entry, so the observer marks what it loads as not confirmed by ECS and the pass has
 * ECS confirm a description before it decides an action or a failed rollout by it, and the rest a
 * few a pass (`../core/pass.ts`, docs/operations.md "The task definition cache").
 *
 * Items: `arn` (partition key), `v` ({@link CACHE_FORMAT_VERSION}), `body` (the description as
 * gzipped JSON), `sha` (SHA-256 hex of that JSON), `seenOn` (UTC day the revision was last in use),
 * `expiresAt` (epoch seconds, the table's TTL attribute: {@link CACHE_TTL_DAYS} after `seenOn`).
 * Bounded: a revision in use is refreshed at most once every {@link CACHE_REFRESH_DAYS} days; one
 * no longer in use expires (DynamoDB TTL deletes it; the load ignores and deletes expired items
 * itself, since TTL deletion may lag and local DynamoDB has no TTL).
 */
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import {
  BatchWriteItemCommand,
  ScanCommand,
  type AttributeValue,
  type CreateTableCommandInput,
  type DynamoDBClient,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import type { TaskDefinition } from '../core/types';
import { chunk, mapSettledLimit } from './concurrency';
import { AwsCallError, isProgrammingError } from './errors';
import { own } from '../core/dict';

/** Partition key attribute: the revision's ARN. */
export const CACHE_KEY = 'arn';
/** TTL attribute (epoch seconds). */
export const CACHE_TTL_ATTRIBUTE = 'expiresAt';
/** Format of an item; an item of another format is ignored (and overwritten when described again). */
export const CACHE_FORMAT_VERSION = 1;
/** Days an entry lives after the revision was last seen in use. */
export const CACHE_TTL_DAYS = 30;
/** An entry in use is written again once its `seenOn` is this many days old. */
export const CACHE_REFRESH_DAYS = 7;
/** Parallel Scan segments of the bulk read. */
export const CACHE_SCAN_SEGMENTS = 4;
/** BatchWriteItem calls in flight at once. */
const WRITE_CONCURRENCY = 4;
/** DynamoDB's limit of requests per BatchWriteItem. */
const BATCH = 25;

/** The cache table as the adapter expects it (the CDK construct creates the same key). */
export function taskDefinitionCacheTableDefinition(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    AttributeDefinitions: [{ AttributeName: CACHE_KEY, AttributeType: 'S' }],
    KeySchema: [{ AttributeName: CACHE_KEY, KeyType: 'HASH' }],
    BillingMode: 'PAY_PER_REQUEST',
  };
}

/** What the bulk read found. */
export interface CacheLoad {
  /** Descriptions read and checked. */
  readonly loaded: number;
  /** Items ignored: another format, a body that does not decode or match its checksum or ARN. */
  readonly ignored: number;
  /** Items past their expiry (ignored, and deleted). */
  readonly expired: number;
  /** The read failed (in part): what was read before is kept. */
  readonly error?: string;
}

export interface TaskDefinitionCacheOptions {
  /** Current time (tests); the system clock by default. */
  readonly now?: () => Date;
  /** Items per Scan page (tests); DynamoDB's 1 MB pages by default. */
  readonly pageSize?: number;
}

const DAY_MS = 86_400_000;

function dayOf(t: Date): string {
  return t.toISOString().slice(0, 10);
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * Whether a description is the one its key names: its `taskDefinitionArn` is the key, and its
 * `family` and `revision` are those the ARN ends with (`task-definition/<family>:<revision>`). An
 * entry whose body describes another revision than its key is not an entry of this revision.
 */
export function claimsItsKey(td: TaskDefinition, arn: string): boolean {
  if (td.taskDefinitionArn !== arn) return false;
  const m = /:task-definition\/([A-Za-z0-9_-]{1,255}):([1-9][0-9]*)$/.exec(arn);
  return m !== null && td.family === m[1] && td.revision === Number(m[2]);
}

/** The description an item holds, when it is a well-formed entry of this format; else undefined. */
function decodeEntry(item: Record<string, AttributeValue>): { td: TaskDefinition; seenOn: string } | undefined {
  const arn = item[CACHE_KEY]?.S;
  const body = item.body?.B;
  const sha = item.sha?.S;
  const seenOn = item.seenOn?.S;
  if (!arn || !body || !sha || !seenOn || item.v?.N !== String(CACHE_FORMAT_VERSION)) return undefined;
  try {
    const text = gunzipSync(body).toString('utf8');
    if (sha256(text) !== sha) return undefined;
    const td = JSON.parse(text) as unknown;
    if (typeof td !== 'object' || td === null || Array.isArray(td)) return undefined;
    if (!claimsItsKey(td as TaskDefinition, arn)) return undefined;
    return { td: td as TaskDefinition, seenOn };
  } catch {
    return undefined;
  }
}

/**
 * The durable cache on one DynamoDB table. {@link load} reads it in bulk; {@link put} and
 * {@link keep} queue writes, sent by {@link flush} in BatchWriteItem calls. None of them throws for
 * a DynamoDB failure; failures are counted in {@link errors} (the last one's message kept).
 */
export class DynamoTaskDefinitionCache {
  private readonly seenOn = new Map<string, string>();
  private readonly pending = new Map<string, WriteRequest>();
  private readonly deletes = new Set<string>();
  /** Failed calls so far, and the last failure's message. */
  errors = 0;
  lastError: string | undefined;
  /** Entries written so far (put or refreshed). */
  written = 0;

  constructor(
    private readonly client: DynamoDBClient,
    readonly tableName: string,
    private readonly options: TaskDefinitionCacheOptions = {},
  ) {}

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  /**
   * Reads every entry (consistent reads are not needed: an entry is immutable), in
   * {@link CACHE_SCAN_SEGMENTS} parallel Scans. Expired entries are left out and their deletion
   * queued. Never throws for a DynamoDB failure.
   * @returns the descriptions by ARN, and counts.
   */
  async load(): Promise<{ descriptions: Map<string, TaskDefinition>; result: CacheLoad }> {
    const descriptions = new Map<string, TaskDefinition>();
    let ignored = 0;
    let expired = 0;
    const now = this.now();
    const oldest = dayOf(new Date(now.getTime() - CACHE_TTL_DAYS * DAY_MS));
    const errors: string[] = [];
    const scanSegment = async (segment: number): Promise<void> => {
      let startKey: Record<string, AttributeValue> | undefined;
      try {
        do {
          const page = await this.client.send(
            new ScanCommand({
              TableName: this.tableName,
              Segment: segment,
              TotalSegments: CACHE_SCAN_SEGMENTS,
              ...(this.options.pageSize ? { Limit: this.options.pageSize } : {}),
              ...(startKey ? { ExclusiveStartKey: startKey } : {}),
            }),
          );
          startKey = page.LastEvaluatedKey && Object.keys(page.LastEvaluatedKey).length > 0 ? page.LastEvaluatedKey : undefined;
          for (const item of page.Items ?? []) {
            const entry = decodeEntry(item);
            if (!entry) {
              ignored += 1;
              continue;
            }
            const arn = entry.td.taskDefinitionArn ?? '';
            if (entry.seenOn < oldest) {
              expired += 1;
              this.deletes.add(arn);
              continue;
            }
            descriptions.set(arn, entry.td);
            this.seenOn.set(arn, entry.seenOn);
          }
        } while (startKey);
      } catch (err) {
        if (isProgrammingError(err)) throw err;
        errors.push(new AwsCallError(`DynamoDB Scan ${this.tableName}`, err).message);
      }
    };
    await Promise.all(Array.from({ length: CACHE_SCAN_SEGMENTS }, (_, i) => scanSegment(i)));
    if (errors.length > 0) this.fail(errors[0], errors.length);
    return { descriptions, result: { loaded: descriptions.size, ignored, expired, ...(errors.length > 0 ? { error: errors[0] } : {}) } };
  }

  /** Queues the write of a description (ignored without an ARN). */
  put(td: TaskDefinition): void {
    const arn = td.taskDefinitionArn;
    if (!arn) return;
    const today = dayOf(this.now());
    const text = JSON.stringify(td);
    this.pending.set(arn, {
      PutRequest: {
        Item: {
          [CACHE_KEY]: { S: arn },
          v: { N: String(CACHE_FORMAT_VERSION) },
          body: { B: gzipSync(text) },
          sha: { S: sha256(text) },
          seenOn: { S: today },
          [CACHE_TTL_ATTRIBUTE]: { N: String(Math.floor(Date.parse(today) / 1000) + CACHE_TTL_DAYS * 86_400) },
        },
      },
    });
    this.seenOn.set(arn, today);
    this.deletes.delete(arn);
  }

  /**
   * The revisions in use this pass, with their descriptions: those the table does not hold yet
   * (described or registered by this container) are queued for writing, and those whose entry is
   * {@link CACHE_REFRESH_DAYS} days old or more are written again, so an entry in use never
   * expires. Every one of them, without a cap: the pass that registered or described a revision
   * writes it, so that a new container after it finds the whole fleet in the table and compares
   * every service on its first pass (an earlier cap of 1,000 a pass left a 5,000-service fleet's
   * new container with 470 revisions to describe). The cost is one BatchWriteItem per 25 new
   * revisions, 4 in flight (20,000 revisions: 800 calls, a few seconds, once); the table stays
   * bounded by the revisions in use (a revision out of use expires after {@link CACHE_TTL_DAYS}).
   * @returns the writes queued.
   */
  keep(inUse: Iterable<readonly [string, TaskDefinition]>): number {
    const stale = dayOf(new Date(this.now().getTime() - CACHE_REFRESH_DAYS * DAY_MS));
    let queued = 0;
    for (const [arn, td] of inUse) {
      if (td.taskDefinitionArn !== arn || this.pending.has(arn)) continue;
      const seen = this.seenOn.get(arn);
      if (seen !== undefined && seen > stale) continue;
      this.put(td);
      queued += 1;
    }
    return queued;
  }

  /** Writes queued entries and deletes (BatchWriteItem, 25 a call); unprocessed ones are queued again. Never throws for a DynamoDB failure. */
  async flush(): Promise<void> {
    const requests: WriteRequest[] = [
      ...this.pending.values(),
      ...[...this.deletes].map((arn): WriteRequest => ({ DeleteRequest: { Key: { [CACHE_KEY]: { S: arn } } } })),
    ];
    this.pending.clear();
    this.deletes.clear();
    if (requests.length === 0) return;
    const results = await mapSettledLimit(chunk(requests, BATCH), WRITE_CONCURRENCY, async (batch) => {
      const out = await this.client.send(new BatchWriteItemCommand({ RequestItems: { [this.tableName]: batch } }));
      const left = own(out.UnprocessedItems, this.tableName) ?? [];
      this.written += batch.filter((r) => r.PutRequest).length - left.filter((r) => r.PutRequest).length;
      for (const r of left) this.requeue(r);
    });
    for (const r of results) {
      if (r.status !== 'rejected') continue;
      if (isProgrammingError(r.reason)) throw r.reason;
      this.fail(new AwsCallError(`DynamoDB BatchWriteItem ${this.tableName}`, r.reason).message, 1);
    }
  }

  private requeue(r: WriteRequest): void {
    const put = r.PutRequest?.Item?.[CACHE_KEY]?.S;
    if (put) this.pending.set(put, r);
    const del = r.DeleteRequest?.Key?.[CACHE_KEY]?.S;
    if (del) this.deletes.add(del);
  }

  private fail(message: string, count: number): void {
    this.errors += count;
    this.lastError = message;
  }
}

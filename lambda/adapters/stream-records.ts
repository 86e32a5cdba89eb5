/**
 * The specs table's DynamoDB stream read as keys to reconcile (the fast path).
 *
 * A record is only a hint: it names a service whose spec may have changed, and the fast path
 * reconciles that service from the table's current content (a consistent read), never from the
 * record's image. So a duplicate record, a record delivered late or out of order, and a record for
 * an item deleted since cost at most one more look at the service, never an action on an old
 * spec. The images are used for one thing: a record whose images differ only in the `status`
 * attribute (the reconciler's own status write) is dropped, or every status write would wake
 * another pass.
 *
 * Source: Amazon DynamoDB Developer Guide, "Change data capture for DynamoDB Streams" (records are
 * in order per item and appear exactly once in the stream; Lambda delivers them at least once),
 * and the Lambda Developer Guide, "Using AWS Lambda with Amazon DynamoDB" (event shape).
 */
import type { DynamoDBRecord } from 'aws-lambda';
import { canonicalJson } from '../core/canonical-json';
import { own } from '../core/dict';
import { serviceId, type ServiceKey } from '../core/types';
import { PARTITION_KEY, SORT_KEY, STATUS_ATTRIBUTE } from './dynamo-spec-store';

/** Why records were not turned into keys, counted. */
export interface IgnoredRecords {
  /** The reconciler's own items (lease, cursor, prune confirmations): partition key starting with `#`. */
  readonly reserved: number;
  /** MODIFY records whose images differ only in `status` (the reconciler's own status writes). */
  readonly statusOnly: number;
  /** Records without string `cluster` and `service` keys (not from a specs table). */
  readonly malformed: number;
}

export interface StreamKeys {
  /** Distinct keys, in the order first seen (partition key value as stored, sort key). */
  readonly keys: ServiceKey[];
  readonly ignored: IgnoredRecords;
}

type Image = Record<string, unknown> | undefined;

/** The image without the reconciler's `status` attribute, as canonical JSON (key order does not matter). */
function specPart(image: Image): string | undefined {
  if (!image) return undefined;
  const { [STATUS_ATTRIBUTE]: _status, ...rest } = image;
  return canonicalJson(rest);
}

/** A string key attribute of a stream record (`{ S: "..." }`), or undefined. */
function keyString(keys: Record<string, unknown> | undefined, name: string): string | undefined {
  const av = keys ? (own(keys, name) as { S?: unknown } | undefined) : undefined;
  return av && typeof av.S === 'string' && av.S.length > 0 ? av.S : undefined;
}

/**
 * The services a batch of stream records asks to reconcile: one key per distinct item, duplicates
 * dropped; reserved items, status-only changes and malformed records ignored (counted).
 * INSERT, MODIFY and REMOVE all give a key (a removed spec is left to the scheduled pass, which is
 * the only one that prunes; its key costs the fast path one look). A MODIFY without both images
 * (a stream view type other than NEW_AND_OLD_IMAGES) always counts as a spec change.
 * Never throws.
 */
export function keysOfStreamRecords(records: readonly DynamoDBRecord[]): StreamKeys {
  const keys = new Map<string, ServiceKey>();
  let reserved = 0;
  let statusOnly = 0;
  let malformed = 0;
  for (const record of records) {
    const ddb = record?.dynamodb;
    const cluster = keyString(ddb?.Keys as Record<string, unknown> | undefined, PARTITION_KEY);
    const service = keyString(ddb?.Keys as Record<string, unknown> | undefined, SORT_KEY);
    if (cluster === undefined || service === undefined) {
      malformed += 1;
      continue;
    }
    if (cluster.startsWith('#')) {
      reserved += 1;
      continue;
    }
    if (record.eventName === 'MODIFY' && ddb?.OldImage && ddb.NewImage) {
      let same = false;
      try {
        same = specPart(ddb.OldImage as Image) === specPart(ddb.NewImage as Image);
      } catch {
        // An image canonicalJson cannot encode: count it as a change (one more look, never a miss).
        same = false;
      }
      if (same) {
        statusOnly += 1;
        continue;
      }
    }
    const key = { cluster, service };
    const id = serviceId(key);
    if (!keys.has(id)) keys.set(id, key);
  }
  return { keys: [...keys.values()], ignored: { reserved, statusOnly, malformed } };
}

/** True when `event` is a batch of DynamoDB stream records (`Records[].eventSource` `aws:dynamodb`). */
export function isDynamoDbStreamEvent(event: unknown): event is { Records: DynamoDBRecord[] } {
  if (event === null || typeof event !== 'object') return false;
  const records = (event as { Records?: unknown }).Records;
  return Array.isArray(records) && records.length > 0 && records.every((r) => (r as DynamoDBRecord | null)?.eventSource === 'aws:dynamodb');
}

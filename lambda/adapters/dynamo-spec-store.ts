/**
 * The spec store on DynamoDB (`@aws-sdk/lib-dynamodb`): one item per service, partition key
 * `cluster`, sort key `service`; the reconciler writes only the item's `status` attribute, and
 * keeps its pass lease in an item of the same table under a reserved key.
 */
import { randomUUID } from 'node:crypto';
import {
  BatchGetItemCommand,
  type BatchGetItemCommandOutput,
  GetItemCommand,
  PutItemCommand,
  ScanCommand,
  type AttributeValue,
  type CreateTableCommandInput,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { parseSpecItem } from '../core/spec';
import { PHASES } from '../core/status';
import type { Fence, FenceResult, FenceSnapshot, KeysRead, LeaseResult, ObserveCursor, PruneConfirmation, SpecRead, SpecStore } from '../core/ports';
import { serviceId, type PruneHold, type ServiceId, type ServiceKey, type ServiceStatus, type SpecParseResult } from '../core/types';
import { AwsCallError, isConditionalCheckFailed } from './errors';
import { dict, own, putOwn } from '../core/dict';
import { decodeItem } from './attribute-values';
import { exactContentCondition, LEASE_MAX_AHEAD_SECONDS, readLeaseItem, type LeaseReading } from './lease-item';
import { HISTORY_PARTITION } from './spec-history';
import { FENCE_PARTITION, forgetFences, readFences, releaseFences, takeFences, type FenceTable } from './fence-items';
import { DEFAULT_TARGET, HEARTBEAT_PARTITION, partitionKeyOf, splitPartitionKey, TARGET_PARTITION, TARGET_SEPARATOR } from '../core/targets';

/** Partition key attribute (ECS cluster name). */
export const PARTITION_KEY = 'cluster';
/** Sort key attribute (ECS service name). */
export const SORT_KEY = 'service';
/** The attribute the reconciler owns on each spec item. */
export const STATUS_ATTRIBUTE = 'status';
/**
 * Member of the status map that identifies one write of it (a random UUID): a pass writes a
 * status it judged from an older read only if the version is still the one it read.
 */
export const STATUS_VERSION = 'version';

/** Keys per BatchGetItem call (DynamoDB's limit). */
const BATCH_GET_KEYS = 100;
/** Times unprocessed keys of a BatchGetItem are asked again. */
const BATCH_GET_RETRIES = 5;

/**
 * The specs table as this store expects it: partition key {@link PARTITION_KEY}, sort key
 * {@link SORT_KEY}, both strings, on-demand billing (the CDK construct creates the same keys).
 * The input of a `CreateTableCommand`, for the local stack and the tests.
 */
export function specsTableDefinition(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    AttributeDefinitions: [
      { AttributeName: PARTITION_KEY, AttributeType: 'S' },
      { AttributeName: SORT_KEY, AttributeType: 'S' },
    ],
    KeySchema: [
      { AttributeName: PARTITION_KEY, KeyType: 'HASH' },
      { AttributeName: SORT_KEY, KeyType: 'RANGE' },
    ],
    BillingMode: 'PAY_PER_REQUEST',
  };
}

/**
 * Key of the lease item. `#` cannot occur in an ECS cluster or service name (letters, digits,
 * hyphens and underscores only), so this key never collides with a spec; the Scan skips it.
 */
export const LEASE_KEY: ServiceKey = { cluster: '#lease', service: '#lease' };

/** True for the reserved lease item (never a spec). */
export function isLeaseItem(item: Record<string, unknown>): boolean {
  return item[PARTITION_KEY] === LEASE_KEY.cluster && item[SORT_KEY] === LEASE_KEY.service;
}

/**
 * Key of the item that keeps the rotation's cursor between passes (see {@link isReservedItem}).
 * Attributes: `cursorCluster` and, within that cluster, optional `cursorAfter`.
 */
export const CURSOR_KEY: ServiceKey = { cluster: '#cursor', service: '#cursor' };

/**
 * True for an item the reconciler keeps for itself (lease, cursor, cached task definitions), never
 * a spec: its partition key starts with `#`, which no ECS cluster name can (letters, digits,
 * hyphens and underscores only).
 */
export function isReservedItem(item: Record<string, unknown>): boolean {
  const pk = item[PARTITION_KEY];
  return typeof pk === 'string' && pk.startsWith('#');
}

/**
 * Partition key of prune confirmations (`ecsr prune --confirm CLUSTER`): one item per cluster,
 * sort key = the cluster name, attributes `expiresAt` (epoch milliseconds), `expiresAtIso` and
 * optional `confirmedBy`. Reserved like the lease (`#` starts no cluster name), so never a spec.
 */
export const PRUNE_CONFIRMATION_PARTITION = '#prune-confirmed';

/**
 * Partition key of prune holds ({@link PruneHold}): one item per held cluster, sort key = the
 * cluster name (`<target>/<cluster>` for another target), attributes `since` (ISO time) and
 * `reason`. Written and removed by passes; reserved like the lease, so never a spec.
 */
export const PRUNE_HOLD_PARTITION = '#prune-hold';

/**
 * Every partition key of the reconciler's own items in the specs table ({@link LEASE_KEY},
 * {@link CURSOR_KEY}, {@link PRUNE_CONFIRMATION_PARTITION}): the fast path's stream filter drops
 * their records before they invoke the function (Lambda event filtering supports `anything-but`
 * a list of values, not of a prefix). A reserved item not listed here still reaches the function,
 * which drops any partition key starting with `#` ({@link isReservedItem}).
 */
export const RESERVED_PARTITIONS: readonly string[] = [
  LEASE_KEY.cluster,
  CURSOR_KEY.cluster,
  PRUNE_CONFIRMATION_PARTITION,
  PRUNE_HOLD_PARTITION,
  // Every take and release of a fence (lambda/adapters/fence-items.ts).
  FENCE_PARTITION,
  // Every revision ecsr or the stream path records (lambda/adapters/spec-history.ts): the stream
  // path reads revisions itself, it never needs their own records.
  HISTORY_PARTITION,
  // Fan-out mode: every completed target pass writes its heartbeat item.
  HEARTBEAT_PARTITION,
  TARGET_PARTITION,
];

const pruneConfirmationSchema = z.object({
  [SORT_KEY]: z.string().regex(/^[A-Za-z0-9_-]{1,255}$/),
  expiresAt: z.number().finite(),
  confirmedBy: z.string().optional().catch(undefined),
});

/** The confirmation an item holds, or undefined when it is not a valid one (then it confirms nothing). */
function pruneConfirmationOf(item: Record<string, unknown>): PruneConfirmation | undefined {
  const parsed = pruneConfirmationSchema.safeParse(item);
  if (!parsed.success) return undefined;
  const expiresAt = new Date(parsed.data.expiresAt);
  if (Number.isNaN(expiresAt.getTime())) return undefined;
  return { cluster: parsed.data[SORT_KEY], expiresAt, ...(parsed.data.confirmedBy !== undefined ? { confirmedBy: parsed.data.confirmedBy } : {}) };
}

/** Longest `reason` kept from a hold item (the planner writes a sentence; a hand-made item may hold anything). */
const MAX_HOLD_REASON = 500;

/**
 * The hold an item holds, or undefined when its sort key names no cluster. A damaged `since` or
 * `reason` still holds the cluster (a hold errs towards keeping services), with words saying so.
 */
export function pruneHoldOf(item: Record<string, unknown>, cluster: string): PruneHold | undefined {
  if (!/^[A-Za-z0-9_-]{1,255}$/.test(cluster)) return undefined;
  const since = typeof item.since === 'string' && !Number.isNaN(Date.parse(item.since)) ? item.since : '(unknown time)';
  const reason =
    typeof item.reason === 'string' && item.reason.length > 0 ? item.reason.slice(0, MAX_HOLD_REASON) : 'a hold whose item could not be read';
  return { cluster, since, reason };
}

/** An ISO time, or undefined for anything else (a bad time only loses the events mode's memory, never the cursor). */
const cursorTime = z
  .string()
  .refine((t) => !Number.isNaN(Date.parse(t)))
  .optional()
  .catch(undefined);
const cursorItemSchema = z.object({
  cursorCluster: z.string().min(1),
  cursorAfter: z.string().min(1).optional(),
  resyncAt: cursorTime,
  heartbeatAt: cursorTime,
});

/**
 * The cursor an item holds, or undefined when it is not a valid one (then the rotation starts
 * over), with events mode's `resyncAt` and `heartbeatAt` when they are times.
 */
function cursorOf(item: Record<string, unknown>): ObserveCursor | undefined {
  const parsed = cursorItemSchema.safeParse(item);
  if (!parsed.success) return undefined;
  const d = parsed.data;
  return {
    cluster: d.cursorCluster,
    ...(d.cursorAfter !== undefined ? { after: d.cursorAfter } : {}),
    ...(d.resyncAt !== undefined ? { resyncAt: d.resyncAt } : {}),
    ...(d.heartbeatAt !== undefined ? { heartbeatAt: d.heartbeatAt } : {}),
  };
}

export interface DynamoSpecStoreOptions {
  /** Items per Scan page (DynamoDB `Limit`); default: DynamoDB's 1 MB pages. */
  readonly pageSize?: number;
  /**
   * The target whose specs this store reads and writes (`lambda/core/targets.ts`):
   * its items only (partition key `<target>/<cluster>`, or no `/` for the default target), its
   * own lease and cursor. Undefined: the default target.
   */
  readonly target?: string;
  /**
   * The other declared targets: the default target skips their items, and reports an item of an
   * undeclared target (`x/web` with no target `x`) as an invalid spec.
   */
  readonly otherTargets?: ReadonlySet<string>;
}

/** The lease, cursor and prune-confirmation keys of one target (see `lambda/core/targets.ts`). */
export function reservedKeysOf(target: string): { lease: ServiceKey; cursor: ServiceKey } {
  if (target === DEFAULT_TARGET) return { lease: LEASE_KEY, cursor: CURSOR_KEY };
  return { lease: { cluster: LEASE_KEY.cluster, service: target }, cursor: { cluster: CURSOR_KEY.cluster, service: target } };
}


const optionalString = z.string().optional().catch(undefined);
const count = z.number().finite().catch(0);
const isoTime = z
  .string()
  .refine((t) => !Number.isNaN(Date.parse(t)))
  .optional()
  .catch(undefined);
const conditionSchema = z.object({
  type: z.string(),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string(),
  message: z.string(),
  lastTransitionTime: z.string(),
});
const ACTION_TYPES = ['RegisterTaskDefinition', 'CreateService', 'UpdateService', 'DeleteService', 'TagResource'] as const;

/**
 * The remembered status as the planner may trust it. The `status` attribute lives in an item
 * people edit (console, scripts), so each field is checked on its own: a field of the wrong type
 * is dropped (a condition list that is not a list becomes empty, a time that does not parse is
 * forgotten, a count that is not a number is 0), and the rest of the memory, `failedSpecHash`
 * above all, is kept.
 */
const rememberedStatusSchema = z.object({
  phase: z.enum(PHASES),
  conditions: z
    .array(z.unknown())
    .catch([])
    .transform((xs) =>
      xs.flatMap((x) => {
        const c = conditionSchema.safeParse(x);
        return c.success ? [c.data] : [];
      }),
    ),
  specHash: optionalString,
  desiredCount: count,
  runningCount: count,
  pendingCount: count,
  laggingSince: isoTime,
  lagBeyondGrace: z.boolean().catch(false),
  reason: optionalString,
  lastAppliedSpecHash: optionalString,
  failedSpecHash: optionalString,
  failedServiceDeploymentArn: optionalString,
  appliedDeploymentId: optionalString,
  appliedRolloutState: z.enum(['IN_PROGRESS', 'COMPLETED', 'FAILED']).optional().catch(undefined),
  rolloutFromTaskDefinitionArn: optionalString,
  firstRollout: z.literal(true).optional().catch(undefined),
  observeOnly: z.literal(true).optional().catch(undefined),
  observedDrift: z.array(z.string()).optional().catch(undefined),
  driftCorrectedAt: isoTime,
  taskDefinitionArn: optionalString,
  drift: z.array(z.string()).optional().catch(undefined),
  lastAction: z
    .object({ type: z.enum(ACTION_TYPES), at: z.string(), summary: z.string(), error: z.string().optional() })
    .optional()
    .catch(undefined),
  reasonsFirstSeen: z
    .record(z.string(), z.unknown())
    .optional()
    .catch(undefined)
    .transform((m) => {
      if (!m) return undefined;
      const kept = Object.entries(m).filter(([, t]) => typeof t === 'string' && !Number.isNaN(Date.parse(t)));
      return kept.length > 0 ? (Object.fromEntries(kept) as Record<string, string>) : undefined;
    }),
  rejection: z
    .object({
      action: z.enum(ACTION_TYPES),
      specHash: z.string().optional(),
      reason: z.string(),
      message: z.string(),
      since: z.string().refine((t) => !Number.isNaN(Date.parse(t))),
      attempts: z.number().int().positive(),
      retryAfter: z.string().refine((t) => !Number.isNaN(Date.parse(t))),
    })
    .optional()
    .catch(undefined),
  // What a steady judgement depended on: all five or none (a partial one would never match anyway).
  judged: z
    .object({ specHash: z.string(), rendering: z.string(), taskDefinitionArn: z.string(), taskDefinitionDigest: z.string(), serviceDigest: z.string() })
    .optional()
    .catch(undefined),
  observedAt: z.string().catch(''),
});

/**
 * The `status` attribute of an item as the planner's memory, or undefined when it is not a
 * status at all (not a map with a known `phase`). Never throws; see {@link rememberedStatusSchema}
 * for what is dropped.
 */
export function parseRememberedStatus(value: unknown): ServiceStatus | undefined {
  const parsed = rememberedStatusSchema.safeParse(value);
  if (!parsed.success) return undefined;
  const out = Object.fromEntries(Object.entries(parsed.data).filter(([, v]) => v !== undefined));
  // Statuses written before `firstRollout` recorded a first rollout as an empty start.
  if (out.rolloutFromTaskDefinitionArn === '') {
    delete out.rolloutFromTaskDefinitionArn;
    out.firstRollout = true;
  }
  return out as unknown as ServiceStatus;
}

/**
 * {@link SpecStore} on one DynamoDB table.
 *
 * - `readAll`: consistent, paginated Scan of raw attribute values, decoded by `decodeItem`; a failed page gives
 *   `complete: false` with the error, never an empty "no specs" answer.
 * - `writeStatus`: `UpdateItem SET #status = :s` with `attribute_exists(cluster)`, so a status write
 *   never resurrects a deleted spec and never touches attributes a person edits at the same time.
 * - `writeCursor`: PutItem on {@link CURSOR_KEY}; `readAll` returns it as `cursor`.
 * - The lease: a conditional PutItem on {@link LEASE_KEY}
 *   (`attribute_not_exists(cluster) OR expiresAt < :now OR holder = :holder`), a conditional
 *   DeleteItem on release.
 *
 * Source: Amazon DynamoDB API reference, Scan (ConsistentRead, LastEvaluatedKey), UpdateItem and
 * PutItem (ConditionExpression, ConditionalCheckFailedException).
 */
export class DynamoSpecStore implements SpecStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    readonly tableName: string,
    private readonly options: DynamoSpecStoreOptions = {},
  ) {
    this.target = options.target ?? DEFAULT_TARGET;
    const keys = reservedKeysOf(this.target);
    this.leaseKey = keys.lease;
    this.cursorKey = keys.cursor;
  }

  /** The target this store serves (`default` unless given). */
  readonly target: string;
  private readonly leaseKey: ServiceKey;
  private readonly cursorKey: ServiceKey;

  /**
   * Which target an item belongs to and its ECS cluster name; `foreign` for another declared
   * target's item, `undeclared` for an item naming a target nobody declared.
   */
  private ownership(pk: unknown): { kind: 'mine'; cluster: string } | { kind: 'foreign' } | { kind: 'undeclared'; target: string } {
    if (typeof pk !== 'string') return { kind: 'mine', cluster: pk as string };
    const { target, cluster } = splitPartitionKey(pk);
    if (target === this.target) return { kind: 'mine', cluster };
    if (this.target !== DEFAULT_TARGET || this.options.otherTargets?.has(target)) return { kind: 'foreign' };
    return { kind: 'undeclared', target };
  }

  /** The same client for raw commands (`@aws-sdk/client-dynamodb`: no marshalling). */
  private get raw(): DynamoDBClient {
    return this.doc as unknown as DynamoDBClient;
  }

  /** Reads every item; never throws for a DynamoDB failure (`complete: false`, `error`). */
  async readAll(): Promise<SpecRead> {
    const specs: SpecParseResult[] = [];
    const statuses: Record<ServiceId, ServiceStatus> = dict();
    let cursor: ObserveCursor | undefined;
    const pruneConfirmations: PruneConfirmation[] = [];
    const pruneHolds: PruneHold[] = [];
    const statusVersions: Record<ServiceId, string> = dict();
    try {
      // Raw AttributeValues, decoded here: lib-dynamodb's unmarshall loses `__proto__` keys.
      // (A loop, not the SDK paginator: the paginator accepts only a DynamoDBClient instance.)
      let startKey: Record<string, AttributeValue> | undefined;
      do {
        const page = await this.raw.send(
          new ScanCommand({
            TableName: this.tableName,
            ConsistentRead: true,
            // Another target's Scan transfers only its own and the reserved items (the read units
            // are still those of the whole table: docs/multi-account.md, cost).
            ...(this.target !== DEFAULT_TARGET
              ? {
                  FilterExpression: 'begins_with(#pk, :mine) OR begins_with(#pk, :reserved)',
                  ExpressionAttributeNames: { '#pk': PARTITION_KEY },
                  ExpressionAttributeValues: { ':mine': { S: `${this.target}${TARGET_SEPARATOR}` }, ':reserved': { S: '#' } },
                }
              : {}),
            ...(this.options.pageSize ? { Limit: this.options.pageSize } : {}),
            ...(startKey ? { ExclusiveStartKey: startKey } : {}),
          }),
        );
        startKey = page.LastEvaluatedKey && Object.keys(page.LastEvaluatedKey).length > 0 ? page.LastEvaluatedKey : undefined;
        for (const item of (page.Items ?? []).map(decodeItem)) {
          if (isReservedItem(item)) {
            if (item[PARTITION_KEY] === this.cursorKey.cluster && item[SORT_KEY] === this.cursorKey.service) cursor = cursorOf(item);
            if (item[PARTITION_KEY] === PRUNE_CONFIRMATION_PARTITION && typeof item[SORT_KEY] === 'string') {
              const owner = this.ownership(item[SORT_KEY]);
              const confirmation = owner.kind === 'mine' ? pruneConfirmationOf({ ...item, [SORT_KEY]: owner.cluster }) : undefined;
              if (confirmation) pruneConfirmations.push(confirmation);
            }
            if (item[PARTITION_KEY] === PRUNE_HOLD_PARTITION && typeof item[SORT_KEY] === 'string') {
              const owner = this.ownership(item[SORT_KEY]);
              const hold = owner.kind === 'mine' ? pruneHoldOf(item, owner.cluster) : undefined;
              if (hold) pruneHolds.push(hold);
            }
            continue;
          }
          this.addSpecItem(item, specs, statuses, statusVersions);
        }
      } while (startKey);
      return {
        specs,
        statuses,
        statusVersions,
        complete: true,
        ...(cursor ? { cursor } : {}),
        ...(pruneConfirmations.length > 0 ? { pruneConfirmations } : {}),
        ...(pruneHolds.length > 0 ? { pruneHolds } : {}),
      };
    } catch (err) {
      return { specs, statuses, statusVersions, complete: false, error: new AwsCallError(`DynamoDB Scan ${this.tableName}`, err).message };
    }
  }

  /**
   * A spec item (not reserved) of this target into `specs`, with its remembered status and the
   * status's version; another declared target's item is skipped, an undeclared target's is an
   * invalid spec without a key (nothing is written to it).
   */
  private addSpecItem(
    item: Record<string, unknown>,
    specs: SpecParseResult[],
    statuses: Record<ServiceId, ServiceStatus>,
    versions: Record<ServiceId, string>,
  ): void {
    const owner = this.ownership(item[PARTITION_KEY]);
    if (owner.kind === 'foreign') return;
    if (owner.kind === 'undeclared') {
      const service = typeof item[SORT_KEY] === 'string' ? (item[SORT_KEY] as string) : '?';
      specs.push({
        ok: false,
        // No key: nothing is written to an item that may be another target's (a caller that
        // does not know the declared targets, such as the CLI, cannot tell); the pass names it
        // in its summary and log, and counts it in InvalidSpecs.
        key: null,
        errors: [
          {
            path: PARTITION_KEY,
            value: String(item[PARTITION_KEY]).slice(0, 80),
            message: `names target "${owner.target}" (service ${service}), which no targets prop or #target item declares; declare it or use the plain cluster name for this account`,
          },
        ],
      });
      return;
    }
    // The status attribute belongs to the reconciler, not to the spec a person writes.
    const { [STATUS_ATTRIBUTE]: status, ...rest } = item;
    const specItem = this.target !== DEFAULT_TARGET ? { ...rest, [PARTITION_KEY]: owner.cluster } : rest;
    const result = parseSpecItem(specItem);
    specs.push(result);
    const key = result.key;
    if (!key) return;
    const remembered = parseRememberedStatus(status);
    if (remembered) putOwn(statuses, serviceId(key), remembered);
    const version = status && typeof status === 'object' ? (status as Record<string, unknown>)[STATUS_VERSION] : undefined;
    putOwn(versions, serviceId(key), typeof version === 'string' ? version : '');
  }

  /**
   * Reads the items of `keys` (BatchGetItem, consistent, {@link BATCH_GET_KEYS} keys a call;
   * unprocessed keys asked again up to {@link BATCH_GET_RETRIES} times with backoff). Keys without
   * an item, and reserved keys, are left out. Never throws for a DynamoDB failure: what was read,
   * `complete: false` and the error.
   */
  async readKeys(keys: readonly ServiceKey[]): Promise<KeysRead> {
    const specs: SpecParseResult[] = [];
    const statuses: Record<ServiceId, ServiceStatus> = dict();
    const versions: Record<ServiceId, string> = dict();
    const stored = [...new Map(keys.map((k) => [serviceId(k), k])).values()]
      .filter((k) => !k.cluster.startsWith('#'))
      .map((k) => ({ [PARTITION_KEY]: { S: partitionKeyOf(this.target, k.cluster) }, [SORT_KEY]: { S: k.service } }));
    try {
      for (let i = 0; i < stored.length; i += BATCH_GET_KEYS) {
        let request: Record<string, AttributeValue>[] | undefined = stored.slice(i, i + BATCH_GET_KEYS);
        for (let attempt = 0; request && request.length > 0; attempt++) {
          if (attempt > BATCH_GET_RETRIES) throw new Error(`${request.length} keys stayed unprocessed`);
          if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
          const out: BatchGetItemCommandOutput = await this.raw.send(new BatchGetItemCommand({ RequestItems: { [this.tableName]: { Keys: request, ConsistentRead: true } } }));
          for (const item of (own(out.Responses, this.tableName) ?? []).map(decodeItem)) {
            if (!isReservedItem(item)) this.addSpecItem(item, specs, statuses, versions);
          }
          request = own(out.UnprocessedKeys, this.tableName)?.Keys;
        }
      }
    } catch (err) {
      return { specs, statuses, complete: false, error: new AwsCallError(`DynamoDB BatchGetItem ${this.tableName}`, err).message };
    }
    return { specs, statuses, complete: true };
  }

  private get fences(): FenceTable {
    return { raw: this.raw, tableName: this.tableName, target: this.target, partitionKey: PARTITION_KEY, sortKey: SORT_KEY };
  }

  /** Every fence of this target (`./fence-items.ts`). @throws AwsCallError. */
  readFences(): Promise<FenceSnapshot> {
    return readFences(this.fences);
  }

  /** Takes fences (`./fence-items.ts`). @throws AwsCallError on a failure other than a refusal. */
  takeFences(holder: string, fences: readonly Fence[], ttlSeconds: number, now: Date, seen?: FenceSnapshot): Promise<FenceResult> {
    return takeFences(this.fences, holder, fences, ttlSeconds, now, seen);
  }

  /** Releases `holder`'s fences (`./fence-items.ts`). @throws AwsCallError on a failure other than the condition. */
  releaseFences(holder: string, fences: readonly Fence[]): Promise<void> {
    return releaseFences(this.fences, holder, fences);
  }

  /** Deletes idle fence items `seen` read (`./fence-items.ts`). @throws AwsCallError. */
  forgetFences(seen: FenceSnapshot, now: Date, max: number): Promise<number> {
    return forgetFences(this.fences, seen, now, max);
  }

  /**
   * Writes the status with a fresh {@link STATUS_VERSION}; with `expectedVersion`, only if the
   * item's status still has that version (`''`: no status, or one without a version).
   * @returns true when written; false when the item no longer exists or its status changed.
   * @throws AwsCallError for any other DynamoDB failure (original error as `cause`).
   */
  async writeStatus(key: ServiceKey, status: ServiceStatus, expectedVersion?: string): Promise<boolean> {
    const fresh = expectedVersion === undefined ? '' : expectedVersion === '' ? ' AND (attribute_not_exists(#status) OR attribute_not_exists(#status.#v))' : ' AND #status.#v = :v';
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [PARTITION_KEY]: partitionKeyOf(this.target, key.cluster), [SORT_KEY]: key.service },
          UpdateExpression: 'SET #status = :s',
          ConditionExpression: `attribute_exists(#pk)${fresh}`,
          ExpressionAttributeNames: { '#status': STATUS_ATTRIBUTE, '#pk': PARTITION_KEY, ...(fresh ? { '#v': STATUS_VERSION } : {}) },
          ExpressionAttributeValues: { ':s': { ...status, [STATUS_VERSION]: randomUUID() }, ...(expectedVersion ? { ':v': expectedVersion } : {}) },
        }),
      );
      return true;
    } catch (err) {
      if (isConditionalCheckFailed(err)) return false;
      throw new AwsCallError(`DynamoDB UpdateItem status of ${serviceId(key)}`, err);
    }
  }

  /**
   * Takes the lease for `ttlSeconds` from `now` unless another holder's lease is unexpired; the
   * same holder may renew its own lease. A lease item that cannot be read as a lease (holder not a
   * non-empty string, `expiresAt` missing, not a number, not a time, or further ahead than
   * {@link LEASE_MAX_AHEAD_SECONDS} beyond any lease a pass takes) counts as expired: it is taken
   * over with a PutItem conditioned on its exact current content, and the result says what was
   * found (`takenOver`). No content of the lease item makes this throw.
   * @throws AwsCallError when DynamoDB fails for another reason than the condition.
   */
  async acquireLease(holder: string, ttlSeconds: number, now: Date): Promise<LeaseResult> {
    const expiresAt = now.getTime() + ttlSeconds * 1000;
    const item: Record<string, AttributeValue> = {
      [PARTITION_KEY]: { S: this.leaseKey.cluster },
      [SORT_KEY]: { S: this.leaseKey.service },
      holder: { S: holder },
      expiresAt: { N: String(expiresAt) },
      expiresAtIso: { S: new Date(expiresAt).toISOString() },
      acquiredAt: { S: now.toISOString() },
    };
    const put = async (condition: {
      ConditionExpression: string;
      ExpressionAttributeNames: Record<string, string>;
      ExpressionAttributeValues?: Record<string, AttributeValue>;
    }): Promise<boolean> => {
      try {
        await this.raw.send(new PutItemCommand({ TableName: this.tableName, Item: item, ...condition }));
        return true;
      } catch (err) {
        if (isConditionalCheckFailed(err)) return false;
        throw new AwsCallError(`DynamoDB PutItem lease in ${this.tableName}`, err);
      }
    };
    // Three tries: the lease may be released or rewritten between our failed put and the read.
    for (let attempt = 0; attempt < 3; attempt++) {
      const free = await put({
        ConditionExpression: 'attribute_not_exists(#pk) OR #exp < :now OR #holder = :holder',
        ExpressionAttributeNames: { '#pk': PARTITION_KEY, '#exp': 'expiresAt', '#holder': 'holder' },
        ExpressionAttributeValues: { ':now': { N: String(now.getTime()) }, ':holder': { S: holder } },
      });
      if (free) return { acquired: true };
      const current = await this.readRawLease();
      if (!current) continue;
      const reading = readLeaseItem(current, now, ttlSeconds);
      if (reading.valid) {
        if (reading.holder === holder || reading.expiresAt < now.getTime()) continue;
        return { acquired: false, holder: reading.holder, expiresAt: new Date(reading.expiresAt) };
      }
      if (await put(exactContentCondition(current))) {
        return { acquired: true, takenOver: { problem: reading.problem, found: reading.found } };
      }
    }
    throw new AwsCallError(`DynamoDB PutItem lease in ${this.tableName}`, new Error('lease contended three times'));
  }

  /** Deletes the lease only if `holder` still holds it; resolves quietly otherwise. */
  async releaseLease(holder: string): Promise<void> {
    try {
      await this.doc.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: { [PARTITION_KEY]: this.leaseKey.cluster, [SORT_KEY]: this.leaseKey.service },
          ConditionExpression: '#holder = :holder',
          ExpressionAttributeNames: { '#holder': 'holder' },
          ExpressionAttributeValues: { ':holder': holder },
        }),
      );
    } catch (err) {
      if (isConditionalCheckFailed(err)) return;
      throw new AwsCallError(`DynamoDB DeleteItem lease in ${this.tableName}`, err);
    }
  }

  /**
   * Keeps the rotation's cursor (PutItem on {@link CURSOR_KEY}); the next Scan reads it back.
   * @throws AwsCallError on a DynamoDB failure.
   */
  async writeCursor(cursor: ObserveCursor): Promise<void> {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            [PARTITION_KEY]: this.cursorKey.cluster,
            [SORT_KEY]: this.cursorKey.service,
            cursorCluster: cursor.cluster,
            ...(cursor.after !== undefined ? { cursorAfter: cursor.after } : {}),
            // Events mode's memory (lambda/core/resync.ts, the heartbeat): lost, a pass after a
            // missed one read only one pass's share, and one whose messages did not include the
            // heartbeat fell back to polling.
            ...(cursor.resyncAt !== undefined ? { resyncAt: cursor.resyncAt } : {}),
            ...(cursor.heartbeatAt !== undefined ? { heartbeatAt: cursor.heartbeatAt } : {}),
          },
        }),
      );
    } catch (err) {
      throw new AwsCallError(`DynamoDB PutItem cursor in ${this.tableName}`, err);
    }
  }

  /**
   * Stores a prune confirmation (PutItem on {@link PRUNE_CONFIRMATION_PARTITION} / the cluster),
   * replacing an earlier one for the same cluster; the next Scan reads it back.
   * @throws AwsCallError on a DynamoDB failure.
   */
  async writePruneConfirmation(confirmation: PruneConfirmation): Promise<void> {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            [PARTITION_KEY]: PRUNE_CONFIRMATION_PARTITION,
            [SORT_KEY]: partitionKeyOf(this.target, confirmation.cluster),
            expiresAt: confirmation.expiresAt.getTime(),
            expiresAtIso: confirmation.expiresAt.toISOString(),
            ...(confirmation.confirmedBy !== undefined ? { confirmedBy: confirmation.confirmedBy } : {}),
          },
        }),
      );
    } catch (err) {
      throw new AwsCallError(`DynamoDB PutItem prune confirmation in ${this.tableName}`, err);
    }
  }

  /**
   * Stores a prune hold (PutItem on {@link PRUNE_HOLD_PARTITION} / the cluster); the next Scan reads
   * it back.
   * @throws AwsCallError on a DynamoDB failure.
   */
  async writePruneHold(hold: PruneHold): Promise<void> {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            [PARTITION_KEY]: PRUNE_HOLD_PARTITION,
            [SORT_KEY]: partitionKeyOf(this.target, hold.cluster),
            since: hold.since,
            reason: hold.reason,
          },
        }),
      );
    } catch (err) {
      throw new AwsCallError(`DynamoDB PutItem prune hold in ${this.tableName}`, err);
    }
  }

  /**
   * The prune hold of `cluster`, if any (consistent GetItem), read as a pass reads it.
   * @throws AwsCallError on a DynamoDB failure.
   */
  async readPruneHold(cluster: string): Promise<PruneHold | undefined> {
    try {
      const out = await this.raw.send(
        new GetItemCommand({
          TableName: this.tableName,
          Key: { [PARTITION_KEY]: { S: PRUNE_HOLD_PARTITION }, [SORT_KEY]: { S: partitionKeyOf(this.target, cluster) } },
          ConsistentRead: true,
        }),
      );
      return out.Item ? pruneHoldOf(decodeItem(out.Item), cluster) : undefined;
    } catch (err) {
      throw new AwsCallError(`DynamoDB GetItem prune hold in ${this.tableName}`, err);
    }
  }

  /**
   * Removes the prune hold of `cluster` (DeleteItem; nothing when there is none).
   * @throws AwsCallError on a DynamoDB failure.
   */
  async clearPruneHold(cluster: string): Promise<void> {
    try {
      await this.doc.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: { [PARTITION_KEY]: PRUNE_HOLD_PARTITION, [SORT_KEY]: partitionKeyOf(this.target, cluster) },
        }),
      );
    } catch (err) {
      throw new AwsCallError(`DynamoDB DeleteItem prune hold in ${this.tableName}`, err);
    }
  }

  /** The lease item as stored (raw attribute values, consistent read), if any. */
  private async readRawLease(): Promise<Record<string, AttributeValue> | undefined> {
    try {
      const out = await this.raw.send(
        new GetItemCommand({
          TableName: this.tableName,
          Key: { [PARTITION_KEY]: { S: this.leaseKey.cluster }, [SORT_KEY]: { S: this.leaseKey.service } },
          ConsistentRead: true,
        }),
      );
      return out.Item;
    } catch (err) {
      throw new AwsCallError(`DynamoDB GetItem lease in ${this.tableName}`, err);
    }
  }

  /**
   * The current lease item, if any, read as {@link readLeaseItem} reads it at `now` for a pass
   * whose lease lasts `ttlSeconds` (consistent read). Never throws for the item's content.
   */
  async readLease(now: Date, ttlSeconds: number): Promise<LeaseReading | undefined> {
    const item = await this.readRawLease();
    return item ? readLeaseItem(item, now, ttlSeconds) : undefined;
  }
}

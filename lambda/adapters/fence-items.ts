/**
 * The fences of the specs table (`lambda/core/fast-path.ts` explains why they exist): one item per
 * fenced service or task definition family in the reserved partition {@link FENCE_PARTITION},
 * sort key `service#<partition key>#<service>` or `family#<target-prefixed family>`, attributes
 * `gen` (number: raised by every take), and while taken `holder`, `expiresAt` (epoch
 * milliseconds) and `expiresAtIso`.
 *
 * - take: UpdateItem `SET holder, expiresAt, gen = if_not_exists(gen, 0) + 1` with the condition
 *   "not held by another unexpired holder" and, for a pass that read the fences before its Scan,
 *   "gen still the one read" (`attribute_not_exists` when it read no item);
 * - release: UpdateItem `REMOVE holder, expiresAt` on the condition that `holder` is the caller;
 * - forget: DeleteItem of an item read unheld, on the condition that `gen` is unchanged.
 *
 * Source: Amazon DynamoDB API reference, UpdateItem and DeleteItem (ConditionExpression,
 * `if_not_exists`, ConditionalCheckFailedException), Query (ConsistentRead, LastEvaluatedKey).
 */
import { mapLimit } from '../core/map-limit';
import {
  DeleteItemCommand,
  GetItemCommand,
  QueryCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { fenceId, type Fence, type FenceResult, type FenceSnapshot, type FenceState } from '../core/ports';
import { partitionKeyOf, splitPartitionKey } from '../core/targets';
import { own } from '../core/dict';
import { AwsCallError, isConditionalCheckFailed } from './errors';

/** Partition key of the fence items (reserved: `#` starts no ECS cluster name). */
export const FENCE_PARTITION = '#fence';

/** Fence items written or removed at once. */
const FENCE_CONCURRENCY = 8;

/** Where the fences of one target live. */
export interface FenceTable {
  readonly raw: DynamoDBClient;
  readonly tableName: string;
  readonly target: string;
  readonly partitionKey: string;
  readonly sortKey: string;
}

/** The sort key of `fence` in `target`. */
export function fenceSortKey(target: string, fence: Fence): string {
  return fence.kind === 'service'
    ? `service#${partitionKeyOf(target, fence.key.cluster)}#${fence.key.service}`
    : `family#${partitionKeyOf(target, fence.family)}`;
}

/** The fence a sort key names, when it is one of `target`'s; undefined otherwise. */
export function fenceOfSortKey(target: string, sk: string): Fence | undefined {
  const parts = sk.split('#');
  if (parts[0] === 'service' && parts.length === 3 && parts[2].length > 0) {
    const { target: t, cluster } = splitPartitionKey(parts[1]);
    return t === target && cluster.length > 0 ? { kind: 'service', key: { cluster, service: parts[2] } } : undefined;
  }
  if (parts[0] === 'family' && parts.length === 2) {
    const { target: t, cluster: family } = splitPartitionKey(parts[1]);
    return t === target && family.length > 0 ? { kind: 'family', family } : undefined;
  }
  return undefined;
}

/** A fence item's state; a `gen` that is not a number reads as 0 and a bad expiry as none. */
function stateOf(fence: Fence, item: Record<string, AttributeValue>): FenceState {
  const gen = Number(item.gen?.N);
  const exp = Number(item.expiresAt?.N);
  const holder = item.holder?.S;
  return {
    fence,
    gen: Number.isFinite(gen) ? gen : 0,
    ...(holder && Number.isFinite(exp) ? { holder, expiresAt: new Date(exp) } : {}),
  };
}

/** Every fence of the table's target (consistent Query, every page). @throws AwsCallError. */
export async function readFences(t: FenceTable): Promise<FenceSnapshot> {
  const out = new Map<string, FenceState>();
  let startKey: Record<string, AttributeValue> | undefined;
  try {
    do {
      const page = await t.raw.send(
        new QueryCommand({
          TableName: t.tableName,
          ConsistentRead: true,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': t.partitionKey },
          ExpressionAttributeValues: { ':pk': { S: FENCE_PARTITION } },
          ...(startKey ? { ExclusiveStartKey: startKey } : {}),
        }),
      );
      startKey = page.LastEvaluatedKey && Object.keys(page.LastEvaluatedKey).length > 0 ? page.LastEvaluatedKey : undefined;
      for (const item of page.Items ?? []) {
        const sk = own(item, t.sortKey)?.S;
        const fence = typeof sk === 'string' ? fenceOfSortKey(t.target, sk) : undefined;
        if (fence) out.set(fenceId(fence), stateOf(fence, item));
      }
    } while (startKey);
  } catch (err) {
    throw new AwsCallError(`DynamoDB Query ${FENCE_PARTITION} in ${t.tableName}`, err);
  }
  return out;
}

function keyOf(t: FenceTable, fence: Fence): Record<string, AttributeValue> {
  return { [t.partitionKey]: { S: FENCE_PARTITION }, [t.sortKey]: { S: fenceSortKey(t.target, fence) } };
}

/** The condition of a take: free (or expired), and unchanged since `seen` when given. */
function takeCondition(seen: FenceState | undefined, withSeen: boolean): { expression: string; values: Record<string, AttributeValue> } {
  const free = '(attribute_not_exists(#holder) OR #exp < :now)';
  if (!withSeen) return { expression: `${free} OR #holder = :holder`, values: {} };
  if (!seen) return { expression: 'attribute_not_exists(#pk)', values: {} };
  return { expression: `#gen = :seen AND ${free}`, values: { ':seen': { N: String(seen.gen) } } };
}

async function takeOne(
  t: FenceTable,
  holder: string,
  fence: Fence,
  expiresAt: number,
  now: Date,
  seen: FenceSnapshot | undefined,
): Promise<FenceResult['refused'][number] | undefined> {
  const before = seen?.get(fenceId(fence));
  // Held at the read: its holder may have acted after the read, so the reader's view is old.
  if (seen && before?.holder && before.expiresAt && before.expiresAt > now) return { fence, holder: before.holder, expiresAt: before.expiresAt };
  const cond = takeCondition(before, seen !== undefined);
  try {
    await t.raw.send(
      new UpdateItemCommand({
        TableName: t.tableName,
        Key: keyOf(t, fence),
        UpdateExpression: 'SET #holder = :holder, #exp = :exp, #iso = :iso, #gen = if_not_exists(#gen, :zero) + :one',
        ConditionExpression: cond.expression,
        ExpressionAttributeNames: {
          '#holder': 'holder',
          '#exp': 'expiresAt',
          '#iso': 'expiresAtIso',
          '#gen': 'gen',
          ...(cond.expression.includes('#pk') ? { '#pk': t.partitionKey } : {}),
        },
        ExpressionAttributeValues: {
          ':holder': { S: holder },
          ':exp': { N: String(expiresAt) },
          ':iso': { S: new Date(expiresAt).toISOString() },
          ':zero': { N: '0' },
          ':one': { N: '1' },
          ...(cond.expression.includes(':now') ? { ':now': { N: String(now.getTime()) } } : {}),
          ...cond.values,
        },
      }),
    );
    return undefined;
  } catch (err) {
    if (!isConditionalCheckFailed(err)) throw new AwsCallError(`DynamoDB UpdateItem fence ${fenceSortKey(t.target, fence)} in ${t.tableName}`, err);
  }
  const current = await t.raw.send(new GetItemCommand({ TableName: t.tableName, Key: keyOf(t, fence), ConsistentRead: true })).catch(() => undefined);
  const state = current?.Item ? stateOf(fence, current.Item) : undefined;
  return { fence, ...(state?.holder ? { holder: state.holder, expiresAt: state.expiresAt } : {}) };
}

/** As {@link SpecStore.takeFences}: each fence on its own, {@link FENCE_CONCURRENCY} at once. */
export async function takeFences(
  t: FenceTable,
  holder: string,
  fences: readonly Fence[],
  ttlSeconds: number,
  now: Date,
  seen?: FenceSnapshot,
): Promise<FenceResult> {
  const expiresAt = now.getTime() + ttlSeconds * 1000;
  const unique = [...new Map(fences.map((f) => [fenceId(f), f])).values()];
  const refused = (await mapLimit(unique, FENCE_CONCURRENCY, (f) => takeOne(t, holder, f, expiresAt, now, seen))).filter((r) => r !== undefined);
  const out = new Set(refused.map((r) => fenceId(r.fence)));
  return { taken: unique.filter((f) => !out.has(fenceId(f))), refused };
}

/** As {@link SpecStore.releaseFences}. @throws AwsCallError on a failure other than the condition. */
export async function releaseFences(t: FenceTable, holder: string, fences: readonly Fence[]): Promise<void> {
  await mapLimit(fences, FENCE_CONCURRENCY, async (fence) => {
    try {
      await t.raw.send(
        new UpdateItemCommand({
          TableName: t.tableName,
          Key: keyOf(t, fence),
          UpdateExpression: 'REMOVE #holder, #exp, #iso',
          ConditionExpression: '#holder = :holder',
          ExpressionAttributeNames: { '#holder': 'holder', '#exp': 'expiresAt', '#iso': 'expiresAtIso' },
          ExpressionAttributeValues: { ':holder': { S: holder } },
        }),
      );
    } catch (err) {
      if (!isConditionalCheckFailed(err)) throw new AwsCallError(`DynamoDB UpdateItem fence ${fenceSortKey(t.target, fence)} in ${t.tableName}`, err);
    }
  });
}

/**
 * As {@link SpecStore.forgetFences}: deletes up to `max` items `seen` read unheld or expired at
 * `now`, each on the condition that its `gen` is unchanged (no pass took it since the read).
 * @returns how many were deleted. @throws AwsCallError on a failure other than the condition.
 */
export async function forgetFences(t: FenceTable, seen: FenceSnapshot, now: Date, max: number): Promise<number> {
  const idle: { sk: string; gen: number }[] = [];
  for (const state of seen.values()) {
    if (idle.length >= max) break;
    if (state.holder && state.expiresAt && state.expiresAt > now) continue;
    idle.push({ sk: fenceSortKey(t.target, state.fence), gen: state.gen });
  }
  let deleted = 0;
  await mapLimit(idle, FENCE_CONCURRENCY, async ({ sk, gen }) => {
    try {
      await t.raw.send(
        new DeleteItemCommand({
          TableName: t.tableName,
          Key: { [t.partitionKey]: { S: FENCE_PARTITION }, [t.sortKey]: { S: sk } },
          ConditionExpression: '#gen = :gen',
          ExpressionAttributeNames: { '#gen': 'gen' },
          ExpressionAttributeValues: { ':gen': { N: String(gen) } },
        }),
      );
      deleted += 1;
    } catch (err) {
      if (!isConditionalCheckFailed(err)) throw new AwsCallError(`DynamoDB DeleteItem fence ${sk} in ${t.tableName}`, err);
    }
  });
  return deleted;
}


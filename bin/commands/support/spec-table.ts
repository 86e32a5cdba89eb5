/**
 * The specs table as `ecsr` reads and writes it: one item per service (partition key `cluster`,
 * sort key `service`), the spec attributes a person owns and the `status` attribute the
 * reconciler owns. `ecsr` never writes `status`, and its spec writes never remove it.
 *
 * Source: Amazon DynamoDB API reference, UpdateItem (SET / REMOVE, ConditionExpression) and Scan
 * (ConsistentRead, pagination); the clients are the runtime's (`lambda/adapters/clients.ts`).
 */
import { GetCommand, UpdateCommand, paginateScan, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../../lambda/adapters/clients';
import { isLeaseItem, PARTITION_KEY, SORT_KEY, STATUS_ATTRIBUTE } from '../../../lambda/adapters/dynamo-spec-store';
import { isConditionalCheckFailed } from '../../../lambda/adapters/errors';
import { canonicalJson, parseSpecItem, specToItem } from '../../../lambda/core/spec';
import { serviceId, type ServiceKey, type ServiceSpec, type ServiceStatus, type SpecParseResult } from '../../../lambda/core/types';
import { CliError, missingTableError } from './errors';

/** One item of the table. */
export interface TableEntry {
  /** The item's key; null when `cluster` / `service` are not usable strings. */
  readonly key: ServiceKey | null;
  /** The spec attributes as stored (without `status`); String Sets as arrays. */
  readonly item: Record<string, unknown>;
  /** The item parsed as the reconciler parses it. */
  readonly result: SpecParseResult;
  /** The reconciler's status, when a pass has written one. */
  readonly status?: ServiceStatus;
}

/** What {@link SpecTable.writeSpec} did. */
export type WriteOutcome = 'created' | 'configured' | 'unchanged';

/** Sets become sorted arrays (DynamoDB String Sets of subnets / security groups). */
function plain(value: unknown): unknown {
  if (value instanceof Set) return [...value].sort();
  if (Array.isArray(value)) return value.map(plain);
  if (value && typeof value === 'object' && !(value instanceof Uint8Array)) {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, plain(v)]));
  }
  return value;
}

function toEntry(raw: Record<string, unknown>): TableEntry {
  const { [STATUS_ATTRIBUTE]: status, ...item } = raw;
  const result = parseSpecItem(item);
  const looksLikeStatus = typeof status === 'object' && status !== null && typeof (status as { phase?: unknown }).phase === 'string';
  return {
    key: result.key,
    item: plain(item) as Record<string, unknown>,
    result,
    ...(looksLikeStatus ? { status: status as ServiceStatus } : {}),
  };
}

function compareKeys(a: TableEntry, b: TableEntry): number {
  const x = a.key ? serviceId(a.key) : '';
  const y = b.key ? serviceId(b.key) : '';
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The specs table, through the runtime's DynamoDB document client. */
export class SpecTable {
  constructor(
    readonly name: string,
    readonly doc: DynamoDBDocumentClient,
  ) {}

  /** Opens the table with the SDK's standard configuration (region, profile, endpoint). */
  static open(name: string): SpecTable {
    return new SpecTable(name, createDocumentClient());
  }

  /** Releases the client's sockets. */
  close(): void {
    this.doc.destroy();
  }

  /** A missing table becomes a sentence that names it; other errors pass through. */
  private translate(err: unknown): unknown {
    const name = (err as { name?: string })?.name;
    if (name === 'ResourceNotFoundException') {
      return missingTableError(this.name, err);
    }
    return err;
  }

  /**
   * Every spec item (the pass lease item excluded), sorted by cluster/service; a consistent,
   * paginated Scan.
   * @throws CliError when the table does not exist; the SDK error otherwise.
   */
  async scan(): Promise<TableEntry[]> {
    const out: TableEntry[] = [];
    try {
      for await (const page of paginateScan({ client: this.doc }, { TableName: this.name, ConsistentRead: true })) {
        for (const raw of page.Items ?? []) if (!isLeaseItem(raw)) out.push(toEntry(raw));
      }
    } catch (err) {
      throw this.translate(err);
    }
    return out.sort(compareKeys);
  }

  /**
   * One item (consistent read), or undefined when there is none.
   * @throws CliError when the table does not exist; the SDK error otherwise.
   */
  async get(key: ServiceKey): Promise<TableEntry | undefined> {
    const raw = await this.getRaw(key);
    return raw ? toEntry(raw) : undefined;
  }

  private async getRaw(key: ServiceKey): Promise<Record<string, unknown> | undefined> {
    try {
      const out = await this.doc.send(
        new GetCommand({ TableName: this.name, Key: { [PARTITION_KEY]: key.cluster, [SORT_KEY]: key.service }, ConsistentRead: true }),
      );
      return out.Item;
    } catch (err) {
      throw this.translate(err);
    }
  }

  /**
   * Writes a spec as its item: the attributes of `specToItem(spec)` are SET, spec attributes the
   * item had and the spec no longer has are REMOVEd, and `status` is left as it is (UpdateItem,
   * not PutItem, which would replace the whole item and make the reconciler forget what it
   * applied, e.g. a failed rollout's hash).
   * @returns `created` (no item before), `configured` (attributes changed) or `unchanged`
   *   (nothing written).
   * @throws CliError when the table does not exist; the SDK error otherwise.
   */
  async writeSpec(spec: ServiceSpec): Promise<WriteOutcome> {
    const key: ServiceKey = { cluster: spec.cluster, service: spec.service };
    const existing = await this.getRaw(key);
    const item = specToItem(spec);
    const { [STATUS_ATTRIBUTE]: _status, ...before } = existing ?? {};
    if (existing && canonicalJson(plain(before)) === canonicalJson(item)) return 'unchanged';
    const set = Object.keys(item).filter((a) => a !== PARTITION_KEY && a !== SORT_KEY);
    const remove = Object.keys(before).filter((a) => a !== PARTITION_KEY && a !== SORT_KEY && !(a in item));
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    set.forEach((a, i) => {
      names[`#s${i}`] = a;
      values[`:s${i}`] = item[a];
    });
    remove.forEach((a, i) => {
      names[`#r${i}`] = a;
    });
    const clauses = [
      set.length > 0 ? `SET ${set.map((_, i) => `#s${i} = :s${i}`).join(', ')}` : '',
      remove.length > 0 ? `REMOVE ${remove.map((_, i) => `#r${i}`).join(', ')}` : '',
    ].filter((c) => c !== '');
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.name,
          Key: { [PARTITION_KEY]: key.cluster, [SORT_KEY]: key.service },
          UpdateExpression: clauses.join(' '),
          ExpressionAttributeNames: names,
          ...(set.length > 0 ? { ExpressionAttributeValues: values } : {}),
        }),
      );
    } catch (err) {
      throw this.translate(err);
    }
    return existing ? 'configured' : 'created';
  }

  /**
   * Marks a spec `state: absent` (UpdateItem, only if the item exists): the next pass deletes the
   * service. Other attributes and `status` are kept.
   * @returns the item after the change.
   * @throws CliError when there is no such item or table; the SDK error otherwise.
   */
  async markAbsent(key: ServiceKey): Promise<TableEntry> {
    try {
      const out = await this.doc.send(
        new UpdateCommand({
          TableName: this.name,
          Key: { [PARTITION_KEY]: key.cluster, [SORT_KEY]: key.service },
          UpdateExpression: 'SET #state = :absent',
          ConditionExpression: 'attribute_exists(#pk)',
          ExpressionAttributeNames: { '#state': 'state', '#pk': PARTITION_KEY },
          ExpressionAttributeValues: { ':absent': 'absent' },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return toEntry(out.Attributes ?? {});
    } catch (err) {
      if (isConditionalCheckFailed(err)) throw new CliError(`There is no spec ${serviceId(key)} in table ${this.name}.`);
      throw this.translate(err);
    }
  }
}

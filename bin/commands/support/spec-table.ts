/**
 * The specs table as `ecsr` reads and writes it: one item per service (partition key `cluster`,
 * sort key `service`), the spec attributes a person owns and the `status` attribute the
 * reconciler owns. `ecsr` never writes `status`, and its spec writes never remove it.
 *
 * Source: Amazon DynamoDB API reference, UpdateItem (SET / REMOVE, ConditionExpression) and Scan
 * (ConsistentRead, pagination); the clients are the runtime's (`lambda/adapters/clients.ts`).
 */
import { DeleteCommand, GetCommand, UpdateCommand, paginateScan, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../../lambda/adapters/clients';
import { isReservedItem, PARTITION_KEY, PRUNE_HOLD_PARTITION, pruneHoldOf, SORT_KEY, STATUS_ATTRIBUTE } from '../../../lambda/adapters/dynamo-spec-store';
import { readHeartbeat, type LocalRunHeartbeat } from '../../../local/heartbeat';
import { isConditionalCheckFailed } from '../../../lambda/adapters/errors';
import { unchangedSpecCondition } from '../../../lambda/adapters/spec-history-condition';
import { canonicalJson, parseSpecItem, specToItem } from '../../../lambda/core/spec';
import { serviceId, type PruneHold, type ServiceKey, type ServiceSpec, type ServiceStatus, type SpecParseResult } from '../../../lambda/core/types';
import { CliError, missingTableError } from './errors';
import { dict, own } from '../../../lambda/core/dict';
import { DEFAULT_TARGET, parseTarget, partitionKeyOf, splitPartitionKey, TARGET_NAME_RE, TARGET_PARTITION, targetItemDeclaration } from '../../../lambda/core/targets';
import { ENV } from '../../../lambda/config';
import { QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';

/** One item of the table. */
export interface TableEntry {
  /**
   * The target the item belongs to (its partition key's prefix, `default` without one;
   * docs/multi-account.md); undefined: `default`.
   */
  readonly target?: string;
  /** The item's key, with the ECS cluster name (no target prefix); null when `cluster` / `service` are not usable strings. */
  readonly key: ServiceKey | null;
  /** The spec attributes as stored (without `status`); String Sets as arrays. */
  readonly item: Record<string, unknown>;
  /** The item parsed as the reconciler parses it. */
  readonly result: SpecParseResult;
  /** The reconciler's status, when a pass has written one. */
  readonly status?: ServiceStatus;
}

/** Where {@link SpecTable.setImage} writes: the shorthand's `image` or one entry of `containers`. */
export interface ImageTarget {
  /** The container as the person named it, or undefined for the spec's only container. */
  readonly container?: string;
  /** `image`, or `containers[i].image`. */
  readonly path: string;
  /** The index in `containers`, when the image is in that list. */
  readonly index?: number;
}

/** What {@link SpecTable.setImage} did, with the item after the change. */
export interface SetImageOutcome {
  readonly outcome: 'set' | 'unchanged';
  readonly previous: string | undefined;
  readonly entry: TableEntry;
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

/** The target and the item as the reconciler parses it: the partition key's target prefix taken off. */
function unprefixed(raw: Record<string, unknown>): { target: string; item: Record<string, unknown> } {
  const pk = raw[PARTITION_KEY];
  if (typeof pk !== 'string') return { target: DEFAULT_TARGET, item: raw };
  const { target, cluster } = splitPartitionKey(pk);
  return { target, item: target === DEFAULT_TARGET ? raw : { ...raw, [PARTITION_KEY]: cluster } };
}

function toEntry(stored: Record<string, unknown>): TableEntry {
  const { target, item: raw } = unprefixed(stored);
  const { [STATUS_ATTRIBUTE]: status, ...item } = raw;
  const result = parseSpecItem(item);
  const looksLikeStatus = typeof status === 'object' && status !== null && typeof (status as { phase?: unknown }).phase === 'string';
  return {
    target,
    key: result.key,
    item: plain(item) as Record<string, unknown>,
    result,
    ...(looksLikeStatus ? { status: status as ServiceStatus } : {}),
  };
}

function compareKeys(a: TableEntry, b: TableEntry): number {
  const ta = a.target === undefined || a.target === DEFAULT_TARGET ? '' : a.target;
  const tb = b.target === undefined || b.target === DEFAULT_TARGET ? '' : b.target;
  if (ta !== tb) return ta < tb ? -1 : 1;
  const x = a.key ? serviceId(a.key) : '';
  const y = b.key ? serviceId(b.key) : '';
  return x < y ? -1 : x > y ? 1 : 0;
}

/** `cluster/service`, prefixed with the target when it is not `default` (`staging/web/api`). */
export function entryId(target: string | undefined, key: ServiceKey): string {
  return target === undefined || target === DEFAULT_TARGET ? serviceId(key) : `${target}/${serviceId(key)}`;
}

/**
 * The specs table, through the runtime's DynamoDB document client, seen from one target
 * (`ecsr --target`, default `default`): keys are ECS names, stored under `<target>/<cluster>` for a
 * target other than `default` (docs/multi-account.md, "The key scheme").
 */
export class SpecTable {
  /** `#target` items the reconciler refuses, by name, with their problems (filled by {@link knownTargets}). */
  private readonly refusedTargets = new Map<string, string[]>();

  constructor(
    readonly name: string,
    readonly doc: DynamoDBDocumentClient,
    readonly target: string = DEFAULT_TARGET,
  ) {}

  /** Opens the table with the SDK's standard configuration (region, profile, endpoint). */
  static open(name: string, target: string = DEFAULT_TARGET): SpecTable {
    return new SpecTable(name, createDocumentClient(), target);
  }

  /** The item key of `key` (ECS names) in this table's target. */
  private stored(key: ServiceKey): Record<string, string> {
    return { [PARTITION_KEY]: partitionKeyOf(this.target, key.cluster), [SORT_KEY]: key.service };
  }

  /** `cluster/service` with the target, for messages. */
  private id(key: ServiceKey): string {
    return entryId(this.target, key);
  }

  /**
   * The targets this table knows: `default`, the `#target` items, the `TARGETS` variable (the
   * construct's prop, JSON, as the function gets it), and (`withSpecs`) the prefixes of spec items.
   * @throws CliError when the table does not exist; the SDK error otherwise.
   */
  async knownTargets(opts: { withSpecs?: boolean; env?: Record<string, string | undefined> } = {}): Promise<string[]> {
    const names = new Set<string>([DEFAULT_TARGET]);
    try {
      const items = await this.doc.send(
        new QueryCommand({ TableName: this.name, KeyConditionExpression: '#pk = :pk', ExpressionAttributeNames: { '#pk': PARTITION_KEY }, ExpressionAttributeValues: { ':pk': TARGET_PARTITION }, ConsistentRead: true }),
      );
      for (const i of items.Items ?? []) {
        if (typeof i[SORT_KEY] !== 'string') continue;
        // Read as the dispatcher reads it: an item the reconciler refuses declares no target.
        const { [PARTITION_KEY]: _pk, [SORT_KEY]: name, ...rest } = i;
        void _pk;
        const r = parseTarget(targetItemDeclaration(rest, name), 'table');
        if (r.ok) names.add(r.target.name);
        else this.refusedTargets.set(name as string, r.errors);
      }
    } catch (err) {
      throw this.translate(err);
    }
    const env = (opts.env ?? process.env)[ENV.targets];
    if (env) {
      try {
        const list = JSON.parse(env) as unknown;
        if (Array.isArray(list)) for (const t of list) {
          const r = parseTarget(t, 'prop');
          if (r.ok) names.add(r.target.name);
        }
      } catch {
        // A TARGETS that is not JSON names no target (the function would refuse it at cold start).
      }
    }
    if (opts.withSpecs) {
      try {
        let start: Record<string, unknown> | undefined;
        do {
          const page = await this.doc.send(
            new ScanCommand({ TableName: this.name, ProjectionExpression: '#pk', ExpressionAttributeNames: { '#pk': PARTITION_KEY }, ...(start ? { ExclusiveStartKey: start } : {}) }),
          );
          for (const i of page.Items ?? []) if (typeof i[PARTITION_KEY] === 'string' && !(i[PARTITION_KEY] as string).startsWith('#')) names.add(splitPartitionKey(i[PARTITION_KEY] as string).target);
          start = page.LastEvaluatedKey;
        } while (start);
      } catch (err) {
        throw this.translate(err);
      }
    }
    return [...names].sort((a, b) => (a === DEFAULT_TARGET ? -1 : b === DEFAULT_TARGET ? 1 : a.localeCompare(b)));
  }

  /**
   * Checks that this table's target is one the table knows ({@link knownTargets}, spec prefixes
   * included): `default` always is.
   * @throws CliError naming the targets that exist when it is not.
   */
  async assertTarget(): Promise<void> {
    if (this.target === DEFAULT_TARGET) return;
    if (!TARGET_NAME_RE.test(this.target)) throw new CliError(`--target "${this.target}" is not a target name (1-32 lowercase letters, digits or hyphens).`);
    const quick = await this.knownTargets();
    if (quick.includes(this.target)) return;
    const refused = this.refusedTargets.get(this.target);
    if (refused) {
      throw new CliError(
        `Target "${this.target}" is declared by a #target item the reconciler refuses, so no pass would reconcile its specs: ${refused.join('; ')}. Fix the item (docs/multi-account.md).`,
      );
    }
    const known = await this.knownTargets({ withSpecs: true });
    if (known.includes(this.target)) return;
    throw new CliError(
      `Unknown target "${this.target}" in table ${this.name}: the targets are ${known.join(', ')} (declared by #target items, by ${ENV.targets}, or with specs in the table; docs/multi-account.md).`,
    );
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
    return (await this.scanWithHeartbeat()).entries;
  }

  /**
   * Every spec item of every target (each entry says its target), sorted by target then key.
   * @throws CliError when the table does not exist; the SDK error otherwise.
   */
  async scanAllTargets(): Promise<{ entries: TableEntry[]; heartbeat?: LocalRunHeartbeat }> {
    return this.scanWithHeartbeat({ allTargets: true });
  }

  /**
   * {@link scan}, and the heartbeat of `ecsr local` when the table is a local run's (its reserved
   * item, local/heartbeat.ts), read by the same Scan; `onReserved` is given every reserved
   * item the Scan reads (`#history` revisions, `#prune-hold`...), as stored.
   * @throws CliError when the table does not exist; the SDK error otherwise.
   */
  async scanWithHeartbeat(
    opts: { allTargets?: boolean; onReserved?: (raw: Record<string, unknown>) => void } = {},
  ): Promise<{ entries: TableEntry[]; heartbeat?: LocalRunHeartbeat; otherTargets: Record<string, number>; pruneHolds: PruneHold[] }> {
    const out: TableEntry[] = [];
    const otherTargets: Record<string, number> = dict();
    const pruneHolds: PruneHold[] = [];
    let heartbeat: LocalRunHeartbeat | undefined;
    try {
      for await (const page of paginateScan({ client: this.doc }, { TableName: this.name, ConsistentRead: true })) {
        for (const raw of page.Items ?? []) {
          if (isReservedItem(raw)) {
            opts.onReserved?.(raw);
            heartbeat ??= readHeartbeat(raw);
            const hold = this.holdIn(raw, opts.allTargets === true);
            if (hold) pruneHolds.push(hold);
            continue;
          }
          const entry = toEntry(raw);
          const target = entry.target ?? DEFAULT_TARGET;
          if (opts.allTargets || target === this.target) out.push(entry);
          else otherTargets[target] = (own(otherTargets, target) ?? 0) + 1;
        }
      }
    } catch (err) {
      throw this.translate(err);
    }
    pruneHolds.sort((a, b) => (a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0));
    return { entries: out.sort(compareKeys), ...(heartbeat ? { heartbeat } : {}), otherTargets, pruneHolds };
  }

  /**
   * The prune hold a reserved item holds for this table's target (`allTargets`: for any, the
   * cluster then named with its target as `target/cluster`), else undefined.
   */
  private holdIn(raw: Record<string, unknown>, allTargets: boolean): PruneHold | undefined {
    if (raw[PARTITION_KEY] !== PRUNE_HOLD_PARTITION || typeof raw[SORT_KEY] !== 'string') return undefined;
    const { target, cluster } = splitPartitionKey(raw[SORT_KEY] as string);
    if (!allTargets && target !== this.target) return undefined;
    const hold = pruneHoldOf(raw, cluster);
    return hold && allTargets && target !== DEFAULT_TARGET ? { ...hold, cluster: `${target}/${cluster}` } : hold;
  }

  /**
   * The prune hold of `cluster` in this table's target, if any (consistent read).
   * @throws CliError when the table does not exist; the SDK error otherwise.
   */
  async pruneHold(cluster: string): Promise<PruneHold | undefined> {
    try {
      const out = await this.doc.send(
        new GetCommand({ TableName: this.name, Key: { [PARTITION_KEY]: PRUNE_HOLD_PARTITION, [SORT_KEY]: partitionKeyOf(this.target, cluster) }, ConsistentRead: true }),
      );
      return out.Item ? pruneHoldOf(out.Item, cluster) : undefined;
    } catch (err) {
      throw this.translate(err);
    }
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
        new GetCommand({ TableName: this.name, Key: this.stored(key), ConsistentRead: true }),
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
   * @param opts.unchangedSince the spec attributes as the caller read them (`ecsr rollback`): the
   *   write is conditioned on the item still holding exactly those (`unchangedSpecCondition`).
   * @returns `created` (no item before), `configured` (attributes changed) or `unchanged`
   *   (nothing written).
   * @throws CliError when the table does not exist, or when the item changed since
   *   `unchangedSince` was read (nothing written); the SDK error otherwise.
   */
  async writeSpec(spec: ServiceSpec, opts: { unchangedSince?: Record<string, unknown> } = {}): Promise<WriteOutcome> {
    const key: ServiceKey = { cluster: spec.cluster, service: spec.service };
    const stored = await this.getRaw(key);
    const existing = stored ? unprefixed(stored).item : undefined;
    const item = specToItem(spec);
    const { [STATUS_ATTRIBUTE]: _status, ...before } = existing ?? {};
    if (existing && canonicalJson(plain(before)) === canonicalJson(item)) return 'unchanged';
    const set = Object.keys(item).filter((a) => a !== PARTITION_KEY && a !== SORT_KEY);
    const remove = Object.keys(before).filter((a) => a !== PARTITION_KEY && a !== SORT_KEY && !Object.hasOwn(item, a));
    const names: Record<string, string> = dict();
    const values: Record<string, unknown> = dict();
    set.forEach((a, i) => {
      names[`#s${i}`] = a;
      values[`:s${i}`] = own(item, a);
    });
    remove.forEach((a, i) => {
      names[`#r${i}`] = a;
    });
    const clauses = [
      set.length > 0 ? `SET ${set.map((_, i) => `#s${i} = :s${i}`).join(', ')}` : '',
      remove.length > 0 ? `REMOVE ${remove.map((_, i) => `#r${i}`).join(', ')}` : '',
    ].filter((c) => c !== '');
    const condition = opts.unchangedSince ? unchangedSpecCondition(opts.unchangedSince) : undefined;
    if (condition) {
      for (const [k, v] of Object.entries(condition.ExpressionAttributeNames)) names[k] = v;
      for (const [k, v] of Object.entries(condition.ExpressionAttributeValues)) values[k] = v;
    }
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.name,
          Key: this.stored(key),
          UpdateExpression: clauses.join(' '),
          ExpressionAttributeNames: names,
          ...(condition ? { ConditionExpression: condition.ConditionExpression } : {}),
          ...(Object.keys(values).length > 0 ? { ExpressionAttributeValues: values } : {}),
        }),
      );
    } catch (err) {
      if (condition && isConditionalCheckFailed(err)) {
        throw new CliError(`The spec ${this.id(key)} changed in table ${this.name} since it was read, so nothing was written: look again (ecsr history ${this.id(key)}) and retry.`);
      }
      throw this.translate(err);
    }
    return existing ? 'configured' : 'created';
  }

  /**
   * Sets the image of one container of a spec, the way a pipeline bumps it (`ecsr set image`):
   * one UpdateItem on that attribute only (`image`, or `containers[i].image` for a container of a
   * `containers` list), conditional on the item existing (and, in a list, on the entry at that
   * index still having that name), so a concurrent edit of other attributes is never overwritten
   * and a deleted spec is not re-created. Nothing is written when the image is already that one.
   * @param container the container's name, or undefined for the spec's only container: the
   *   shorthand spec's `image` is the container named after the service.
   * @throws CliError when there is no such item, no such container, or the image is not one the
   *   spec accepts (the reconciler's own validation, so nothing invalid is written).
   */
  async setImage(key: ServiceKey, container: string | undefined, image: string): Promise<SetImageOutcome> {
    const stored = await this.getRaw(key);
    if (!stored) throw new CliError(`There is no spec ${this.id(key)} in table ${this.name}.`);
    const raw = unprefixed(stored).item;
    const { [STATUS_ATTRIBUTE]: _status, ...before } = raw;
    const target = imageTarget(key, before, container);
    const previous = readAt(before, target);
    if (previous === image) return { outcome: 'unchanged', previous, entry: toEntry(stored) };
    const after = structuredClone(plain(before)) as Record<string, unknown>;
    writeAt(after, target, image);
    const result = parseSpecItem(after);
    const imageErrors = result.ok ? [] : result.errors.filter((e) => e.path === target.path || e.path.startsWith(`${target.path}.`));
    if (imageErrors.length > 0) {
      throw new CliError(`${this.id(key)}: ${imageErrors.map((e) => `${e.path}: ${e.message}`).join('; ')}; nothing was written.`);
    }
    const names: Record<string, string> = { '#pk': PARTITION_KEY, '#image': 'image' };
    const values: Record<string, unknown> = { ':image': image };
    let update = 'SET #image = :image';
    let condition = 'attribute_exists(#pk)';
    if (target.index !== undefined) {
      names['#containers'] = 'containers';
      names['#name'] = 'name';
      values[':name'] = target.container;
      update = `SET #containers[${target.index}].#image = :image`;
      condition = `attribute_exists(#pk) AND #containers[${target.index}].#name = :name`;
    }
    try {
      const out = await this.doc.send(
        new UpdateCommand({
          TableName: this.name,
          Key: this.stored(key),
          UpdateExpression: update,
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
        }),
      );
      return { outcome: 'set', previous, entry: toEntry(out.Attributes ?? {}) };
    } catch (err) {
      if (isConditionalCheckFailed(err)) {
        throw new CliError(`The spec ${this.id(key)} was deleted or its containers changed while the image was being set; nothing was written.`);
      }
      throw this.translate(err);
    }
  }

  /**
   * Sets a spec's `desiredCount` (`ecsr scale`): one UpdateItem of that attribute only, conditional
   * on the item existing and not being autoscaled (`autoscaled: true` gives the count to
   * Application Auto Scaling), so a concurrent edit of other attributes is never overwritten.
   * Nothing is written when the count is already that one.
   * @param count tasks, a whole number from 0 (the spec's own limit applies).
   * @throws CliError when there is no such item, it is autoscaled or absent, or the count is not
   *   one the spec accepts; the SDK error otherwise.
   */
  async setDesiredCount(key: ServiceKey, count: number): Promise<{ outcome: 'set' | 'unchanged'; previous: unknown; entry: TableEntry }> {
    const stored = await this.getRaw(key);
    if (!stored) throw new CliError(`There is no spec ${this.id(key)} in table ${this.name}.`);
    const { [STATUS_ATTRIBUTE]: _status, ...before } = unprefixed(stored).item;
    if (before.autoscaled === true) throw new CliError(`${this.id(key)} is autoscaled: Application Auto Scaling owns its desiredCount, so ecsr scale writes nothing (change the scalable target's capacity instead).`);
    if (before.state === 'absent') throw new CliError(`${this.id(key)} is marked absent: there is nothing to scale (apply it again first).`);
    if (before.desiredCount === count) return { outcome: 'unchanged', previous: count, entry: toEntry(stored) };
    const result = parseSpecItem({ ...(plain(before) as Record<string, unknown>), desiredCount: count });
    const countErrors = result.ok ? [] : result.errors.filter((e) => e.path === 'desiredCount');
    if (countErrors.length > 0) throw new CliError(`${this.id(key)}: ${countErrors.map((e) => `${e.path}: ${e.message}`).join('; ')}; nothing was written.`);
    try {
      const out = await this.doc.send(
        new UpdateCommand({
          TableName: this.name,
          Key: this.stored(key),
          UpdateExpression: 'SET #count = :count',
          ConditionExpression: 'attribute_exists(#pk) AND (attribute_not_exists(#auto) OR #auto = :false)',
          ExpressionAttributeNames: { '#pk': PARTITION_KEY, '#count': 'desiredCount', '#auto': 'autoscaled' },
          ExpressionAttributeValues: { ':count': count, ':false': false },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return { outcome: 'set', previous: before.desiredCount, entry: toEntry(out.Attributes ?? {}) };
    } catch (err) {
      if (isConditionalCheckFailed(err)) throw new CliError(`The spec ${this.id(key)} was deleted or made autoscaled while it was being scaled; nothing was written.`);
      throw this.translate(err);
    }
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
          Key: this.stored(key),
          UpdateExpression: 'SET #state = :absent',
          ConditionExpression: 'attribute_exists(#pk)',
          ExpressionAttributeNames: { '#state': 'state', '#pk': PARTITION_KEY },
          ExpressionAttributeValues: { ':absent': 'absent' },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return toEntry(out.Attributes ?? {});
    } catch (err) {
      if (isConditionalCheckFailed(err)) throw new CliError(`There is no spec ${this.id(key)} in table ${this.name}.`);
      throw this.translate(err);
    }
  }

  /**
   * Removes the item of a deleted spec (`ecsr purge`): one DeleteItem, conditional on the item
   * still being a tombstone (`state: absent` and its status phase `Deleted`), so a spec a person
   * brought back (`state: present`) or one a pass has not finished deleting is never removed.
   * The history revisions (reserved items) are not touched: they expire by their own retention.
   * @returns `removed`, or `changed` when the item is no longer a tombstone (or is gone): nothing
   *   was removed.
   * @throws CliError when the table does not exist; the SDK error otherwise.
   */
  async removeTombstone(key: ServiceKey): Promise<'removed' | 'changed'> {
    try {
      await this.doc.send(
        new DeleteCommand({
          TableName: this.name,
          Key: this.stored(key),
          ConditionExpression: '#state = :absent AND #status.#phase = :deleted',
          ExpressionAttributeNames: { '#state': 'state', '#status': STATUS_ATTRIBUTE, '#phase': 'phase' },
          ExpressionAttributeValues: { ':absent': 'absent', ':deleted': 'Deleted' },
        }),
      );
      return 'removed';
    } catch (err) {
      if (isConditionalCheckFailed(err)) return 'changed';
      throw this.translate(err);
    }
  }
}

/** The names of the containers of a `containers` list (entries without a string name skipped). */
function containerNames(item: Record<string, unknown>): string[] {
  const list = item.containers;
  if (!Array.isArray(list)) return [];
  return list.map((c) => (c && typeof c === 'object' ? (c as { name?: unknown }).name : undefined)).filter((n): n is string => typeof n === 'string');
}

/**
 * Which attribute holds the image of `container` (see {@link SpecTable.setImage}).
 * @throws CliError naming the containers when `container` is not one of them, or when it is
 *   omitted and the spec has several.
 */
export function imageTarget(key: ServiceKey, item: Record<string, unknown>, container: string | undefined): ImageTarget {
  const names = containerNames(item);
  const shorthand = item.image !== undefined || names.length === 0;
  const known = [...(shorthand ? [key.service] : []), ...names];
  if (container === undefined) {
    if (known.length === 1) return shorthand ? { path: 'image' } : { container: names[0], path: 'containers[0].image', index: 0 };
    throw new CliError(`${serviceId(key)} has ${known.length} containers (${known.join(', ')}): name one, CONTAINER=IMAGE.`);
  }
  const index = names.indexOf(container);
  if (index >= 0) return { container, path: `containers[${index}].image`, index };
  if (shorthand && container === key.service) return { container, path: 'image' };
  throw new CliError(`${serviceId(key)} has no container '${container}' (its containers: ${known.join(', ')}).`);
}

function readAt(item: Record<string, unknown>, target: ImageTarget): string | undefined {
  const holder = target.index === undefined ? item : ((item.containers as Record<string, unknown>[])[target.index] ?? {});
  return typeof holder.image === 'string' ? holder.image : undefined;
}

function writeAt(item: Record<string, unknown>, target: ImageTarget, image: string): void {
  if (target.index === undefined) item.image = image;
  else (item.containers as Record<string, unknown>[])[target.index].image = image;
}

/**
 * The spec history: one item per revision of a spec, in the specs table under the reserved
 * partition {@link HISTORY_PARTITION} (separate items from the spec item, which keeps only the
 * spec a person owns and the `status` the pass owns). Read by `ecsr history` and `ecsr rollback`.
 *
 * Who writes what (docs/history.md):
 * - `ecsr` (apply, set image, delete, rollback) creates the revision of its own edit right after
 *   its spec write, with its caller identity (STS GetCallerIdentity);
 * - the stream path creates the revision of an edit made outside ecsr (console, scripts), with
 *   the writer "unknown: written outside ecsr", and records on the revision the outcome the pass
 *   wrote in the spec item's `status` for its hash;
 * - when the stream path recorded an ecsr edit before ecsr did, ecsr claims that revision (a
 *   conditional UpdateItem of its author) instead of creating a second one;
 * - the pass never reads or writes a history item, so nothing here races its status write.
 *
 * Keys: partition `#history`, sort key `<cluster as stored>/<service>#<revision, 10 digits>`, so a
 * Query with `begins_with` on the sort key lists one service's revisions in order. Revision
 * numbers are allocated by a PutItem conditioned on the key not existing (the next number after
 * the latest one; a writer that lost the race takes the next). Retention: the creator of revision
 * N deletes revision N - {@link HISTORY_KEEP}, and every item carries {@link HISTORY_TTL_ATTRIBUTE}
 * (epoch seconds, {@link HISTORY_TTL_DAYS} days later) for the table's TTL.
 *
 * Source: Amazon DynamoDB Developer Guide, "Working with queries" (begins_with on the sort key,
 * ScanIndexForward), "Condition expressions", and "Using time to live (TTL)" (epoch seconds).
 */
import { DeleteCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { canonicalJson } from '../core/canonical-json';
import { parseSpecItem } from '../core/spec';
import { partitionKeyOf, DEFAULT_TARGET } from '../core/targets';
import { serviceId, type ServiceKey, type ServiceStatus } from '../core/types';
import { AwsCallError, isConditionalCheckFailed } from './errors';

/** Partition key of every history item (reserved: `#` starts no ECS cluster name). */
export const HISTORY_PARTITION = '#history';
/** Revisions kept per service: the writer of revision N deletes revision N - 50. */
export const HISTORY_KEEP = 50;
/** Days a revision lives (the table's TTL deletes it then, whatever HISTORY_KEEP says). */
export const HISTORY_TTL_DAYS = 400;
/** The TTL attribute of history items (epoch seconds). The construct enables TTL on it. */
export const HISTORY_TTL_ATTRIBUTE = 'ttl';
/** The writer of an edit ecsr did not make. */
export const OUTSIDE_WRITER = 'unknown: written outside ecsr';
/**
 * How long after a stream record's time an ecsr write may still claim the revision the stream
 * path made of it (ecsr writes its revision milliseconds after its spec write; the slack is for
 * clocks and retries).
 */
export const CLAIM_WINDOW_MS = 120_000;

/** What the reconciler saw for a revision, read from the status the pass wrote for its hash. */
export type OutcomeKind = 'converged' | 'rolled-back' | 'refused' | 'invalid' | 'degraded' | 'deleted' | 'in-progress';

export interface RevisionOutcome {
  readonly kind: OutcomeKind;
  /** The status's reason (ECS's words), when it has one. */
  readonly message?: string;
  /** ISO time of the status (its last transition) the outcome was read from. */
  readonly at?: string;
}

/** One revision of a spec. */
export interface Revision {
  readonly revision: number;
  readonly key: ServiceKey;
  /** ISO time of the edit (the CLI's clock, or the stream record's approximate creation time). */
  readonly writtenAt: string;
  /** The caller's ARN, or {@link OUTSIDE_WRITER}. */
  readonly writtenBy: string;
  /** `ecsr` for the CLI's own edits, `outside` for edits the stream path recorded. */
  readonly source: 'ecsr' | 'outside';
  /** The command that wrote it (`ecsr apply`, `ecsr rollback --to 3`...), or `table stream`. */
  readonly via: string;
  /** The spec hash (the status's `specHash` for it); undefined for an invalid spec or a removed item. */
  readonly specHash?: string;
  /** The spec attributes as written (no `status`), as JSON; undefined for a removed item. */
  readonly spec?: Record<string, unknown>;
  /** Errors of an invalid spec, as the reconciler reported them. */
  readonly invalid?: readonly string[];
  /** True when the edit removed the item. */
  readonly removed?: true;
  /** The outcome recorded by the stream path, if any. */
  readonly outcome?: RevisionOutcome;
}

/** What a writer knows of a new revision. */
export interface NewRevision {
  readonly writtenBy: string;
  readonly source: 'ecsr' | 'outside';
  readonly via: string;
  /** The spec attributes (no `status`); undefined for a removed item. */
  readonly spec?: Record<string, unknown>;
  /** The edit's time (default: now). */
  readonly at?: Date;
}

/** `<stored cluster>/<service>#`: the sort key prefix of one service's revisions. */
export function historyPrefix(target: string, key: ServiceKey): string {
  return `${partitionKeyOf(target, key.cluster)}/${key.service}#`;
}

function sortKey(target: string, key: ServiceKey, revision: number): string {
  return `${historyPrefix(target, key)}${String(revision).padStart(10, '0')}`;
}

/** The hash (or errors) of a spec's attributes, read as the reconciler reads them. */
export function specIdentity(spec: Record<string, unknown> | undefined): { hash?: string; invalid?: string[] } {
  if (spec === undefined) return {};
  const r = parseSpecItem(spec);
  return r.ok ? { hash: r.hash } : { invalid: r.errors.map((e) => `${e.path}: ${e.message}`) };
}

/** A history item as a revision of `key`, or undefined when it is not one (no number or time). */
export function revisionOf(item: Record<string, unknown>, key: ServiceKey): Revision | undefined {
  if (typeof item.revision !== 'number' || typeof item.writtenAt !== 'string') return undefined;
  let spec: Record<string, unknown> | undefined;
  if (typeof item.spec === 'string') {
    try {
      spec = JSON.parse(item.spec) as Record<string, unknown>;
    } catch {
      spec = undefined;
    }
  }
  const outcome = item.outcome && typeof item.outcome === 'object' ? (item.outcome as RevisionOutcome) : undefined;
  return {
    revision: item.revision,
    key,
    writtenAt: item.writtenAt,
    writtenBy: typeof item.writtenBy === 'string' ? item.writtenBy : OUTSIDE_WRITER,
    source: item.source === 'ecsr' ? 'ecsr' : 'outside',
    via: typeof item.via === 'string' ? item.via : 'unknown',
    ...(typeof item.specHash === 'string' ? { specHash: item.specHash } : {}),
    ...(spec ? { spec } : {}),
    ...(Array.isArray(item.invalid) ? { invalid: item.invalid.filter((e): e is string => typeof e === 'string') } : {}),
    ...(item.removed === true ? { removed: true as const } : {}),
    ...(outcome && typeof outcome.kind === 'string' ? { outcome } : {}),
  };
}

/**
 * The outcome `status` says for the spec hash `hash`, or undefined when the status is about
 * another hash. A rolled-back rollout is kept as `failedSpecHash` (lambda/core/status.ts), so it
 * is found even once the status moved on to a retry.
 */
export function outcomeOf(status: ServiceStatus | undefined, hash: string | undefined): RevisionOutcome | undefined {
  if (!status || hash === undefined) return undefined;
  const at = status.conditions.map((c) => c.lastTransitionTime).sort().at(-1);
  const base = { ...(status.reason ? { message: status.reason } : {}), ...(at ? { at } : {}) };
  if (status.failedSpecHash === hash) return { kind: 'rolled-back', ...base };
  if (status.specHash !== hash) return undefined;
  switch (status.phase) {
    case 'Converged':
      return { kind: 'converged', ...(at ? { at } : {}) };
    case 'Deleted':
      return { kind: 'deleted', ...(at ? { at } : {}) };
    case 'Invalid':
      return { kind: 'invalid', ...base };
    case 'Blocked':
      return { kind: 'refused', ...base };
    case 'Degraded':
      return { kind: 'degraded', ...base };
    default:
      return { kind: 'in-progress', ...base };
  }
}

/**
 * The history of the specs table `tableName` for one target, through the document client `doc`.
 * Every method throws AwsCallError (original error as `cause`) for a DynamoDB failure.
 */
export class SpecHistory {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    readonly tableName: string,
    readonly target: string = DEFAULT_TARGET,
  ) {}

  /**
   * The revisions of `key`, newest first (at most `limit`, default all kept).
   */
  async list(key: ServiceKey, limit?: number): Promise<Revision[]> {
    const out: Revision[] = [];
    let start: Record<string, unknown> | undefined;
    try {
      do {
        const page = await this.doc.send(
          new QueryCommand({
            TableName: this.tableName,
            KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
            ExpressionAttributeNames: { '#pk': 'cluster', '#sk': 'service' },
            ExpressionAttributeValues: { ':pk': HISTORY_PARTITION, ':prefix': historyPrefix(this.target, key) },
            ScanIndexForward: false,
            ConsistentRead: true,
            ...(limit !== undefined ? { Limit: limit - out.length } : {}),
            ...(start ? { ExclusiveStartKey: start } : {}),
          }),
        );
        for (const item of page.Items ?? []) {
          const r = revisionOf(item, key);
          if (r) out.push(r);
        }
        start = page.LastEvaluatedKey;
      } while (start && (limit === undefined || out.length < limit));
    } catch (err) {
      throw new AwsCallError(`DynamoDB Query history of ${serviceId(key)} in ${this.tableName}`, err);
    }
    return out;
  }

  /** One revision, or undefined. */
  async get(key: ServiceKey, revision: number): Promise<Revision | undefined> {
    const all = await this.list(key);
    return all.find((r) => r.revision === revision);
  }

  /**
   * Creates the next revision of `key` (a PutItem conditioned on the key not existing; on a lost
   * race, the number after the winner's), then deletes the revision {@link HISTORY_KEEP} before it.
   * @returns the revision written.
   */
  async append(key: ServiceKey, rev: NewRevision): Promise<Revision> {
    const at = rev.at ?? new Date();
    const identity = specIdentity(rev.spec);
    for (let attempt = 0; attempt < 5; attempt++) {
      const latest = (await this.list(key, 1))[0];
      const revision = (latest?.revision ?? 0) + 1;
      const item = {
        cluster: HISTORY_PARTITION,
        service: sortKey(this.target, key, revision),
        revision,
        writtenAt: at.toISOString(),
        writtenBy: rev.writtenBy,
        source: rev.source,
        via: rev.via,
        ...(identity.hash ? { specHash: identity.hash } : {}),
        ...(identity.invalid ? { invalid: identity.invalid.slice(0, 20) } : {}),
        ...(rev.spec ? { spec: canonicalJson(rev.spec) } : { removed: true }),
        [HISTORY_TTL_ATTRIBUTE]: Math.floor(at.getTime() / 1000) + HISTORY_TTL_DAYS * 86_400,
      };
      try {
        await this.doc.send(
          new PutCommand({ TableName: this.tableName, Item: item, ConditionExpression: 'attribute_not_exists(#sk)', ExpressionAttributeNames: { '#sk': 'service' } }),
        );
      } catch (err) {
        if (isConditionalCheckFailed(err)) continue;
        throw new AwsCallError(`DynamoDB PutItem history of ${serviceId(key)} in ${this.tableName}`, err);
      }
      await this.forget(key, revision - HISTORY_KEEP);
      return revisionOf(item, key) as Revision;
    }
    throw new AwsCallError(`DynamoDB PutItem history of ${serviceId(key)} in ${this.tableName}`, new Error('revision number contended five times'));
  }

  /** Deletes revision `revision` of `key` (nothing when there is none, or `revision` < 1). */
  private async forget(key: ServiceKey, revision: number): Promise<void> {
    if (revision < 1) return;
    try {
      await this.doc.send(new DeleteCommand({ TableName: this.tableName, Key: { cluster: HISTORY_PARTITION, service: sortKey(this.target, key, revision) } }));
    } catch (err) {
      throw new AwsCallError(`DynamoDB DeleteItem history of ${serviceId(key)} in ${this.tableName}`, err);
    }
  }

  /**
   * Records an edit ecsr made to `key` (its spec attributes `spec` after the write, or undefined
   * when it removed the item): claims the revision the stream path already made of it (same hash,
   * written outside ecsr, at most {@link CLAIM_WINDOW_MS} before `at`), else appends one.
   */
  async recordCliEdit(key: ServiceKey, rev: Omit<NewRevision, 'source'>): Promise<Revision> {
    const at = rev.at ?? new Date();
    const { hash } = specIdentity(rev.spec);
    const latest = (await this.list(key, 1))[0];
    if (latest && latest.source === 'outside' && latest.specHash === hash && hash !== undefined && Date.parse(latest.writtenAt) >= at.getTime() - CLAIM_WINDOW_MS) {
      try {
        await this.doc.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { cluster: HISTORY_PARTITION, service: sortKey(this.target, key, latest.revision) },
            UpdateExpression: 'SET #by = :by, #via = :via, #source = :ecsr',
            ConditionExpression: '#source = :outside AND #hash = :hash',
            ExpressionAttributeNames: { '#by': 'writtenBy', '#via': 'via', '#source': 'source', '#hash': 'specHash' },
            ExpressionAttributeValues: { ':by': rev.writtenBy, ':via': rev.via, ':ecsr': 'ecsr', ':outside': 'outside', ':hash': hash },
          }),
        );
        return { ...latest, writtenBy: rev.writtenBy, via: rev.via, source: 'ecsr' };
      } catch (err) {
        if (!isConditionalCheckFailed(err)) throw new AwsCallError(`DynamoDB UpdateItem history of ${serviceId(key)} in ${this.tableName}`, err);
      }
    }
    return this.append(key, { ...rev, source: 'ecsr', at });
  }

  /**
   * Records an edit seen on the table's stream at `at` (the record's approximate creation time):
   * nothing when a revision of the same spec (same hash, or both removed) was written at or after
   * `at` less a second (ecsr recorded it, or the record is delivered again); otherwise a revision
   * by {@link OUTSIDE_WRITER}.
   * @returns the revision appended, or undefined when the edit was already recorded.
   */
  async recordOutsideEdit(key: ServiceKey, spec: Record<string, unknown> | undefined, at: Date): Promise<Revision | undefined> {
    const identity = specIdentity(spec);
    const same = (r: Revision) =>
      spec === undefined ? r.removed === true : identity.hash !== undefined ? r.specHash === identity.hash : r.spec !== undefined && canonicalJson(r.spec) === canonicalJson(spec);
    const recent = await this.list(key, 10);
    if (recent.some((r) => same(r) && Date.parse(r.writtenAt) >= at.getTime() - 1000)) return undefined;
    return this.append(key, { writtenBy: OUTSIDE_WRITER, source: 'outside', via: 'table stream', ...(spec ? { spec } : {}), at });
  }

  /**
   * Records `outcome` on the newest revision of `key` with spec hash `hash` (among the last 10),
   * unless it already says the same; an UpdateItem of the `outcome` attribute only, conditioned
   * on the revision still existing.
   * @returns the revision number updated, or undefined.
   */
  async recordOutcome(key: ServiceKey, hash: string, outcome: RevisionOutcome): Promise<number | undefined> {
    const target = (await this.list(key, 10)).find((r) => r.specHash === hash);
    if (!target) return undefined;
    if (target.outcome && target.outcome.kind === outcome.kind && target.outcome.message === outcome.message) return undefined;
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { cluster: HISTORY_PARTITION, service: sortKey(this.target, key, target.revision) },
          UpdateExpression: 'SET #outcome = :o',
          ConditionExpression: 'attribute_exists(#sk)',
          ExpressionAttributeNames: { '#outcome': 'outcome', '#sk': 'service' },
          ExpressionAttributeValues: { ':o': outcome },
        }),
      );
      return target.revision;
    } catch (err) {
      if (isConditionalCheckFailed(err)) return undefined;
      throw new AwsCallError(`DynamoDB UpdateItem history outcome of ${serviceId(key)} in ${this.tableName}`, err);
    }
  }
}

/**
 * The fan-out on AWS: the `#target` / `#heartbeat` items in the spec table, the
 * SQS queue with one message per target, the assumed role of a target account, and
 * {@link TargetRunner}, which reconciles one target per message with its own runtime.
 *
 * Why SQS (docs/multi-account.md): the schedule invokes the function, which sends one message per
 * target (SendMessageBatch); the queue's event source mapping invokes the function once per
 * message (batch size 1) with at most `maximumConcurrency` invocations at once. A target that
 * runs long holds only its own invocation; one whose role cannot be assumed ends its own
 * invocation with an error summary (the message is deleted: the next tick tries again); an
 * invocation that dies (timeout, crash) leaves its message to come back after the visibility
 * timeout, where it is dropped as stale if a newer tick has passed, and after 3 receives the
 * message goes to the dead-letter queue.
 */
import { BatchGetItemCommand, PutItemCommand, type BatchGetItemCommandOutput, QueryCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { ECSClientConfig } from '@aws-sdk/client-ecs';
import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { AssumeRoleCommand, STSClient, type STSClientConfig } from '@aws-sdk/client-sts';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import type { ReconcilerConfig } from '../config';
import { requeueAfterLeaseHeld, type FanOutQueue, type FanOutSendOptions, type TargetDirectory } from '../core/fan-out';
import type { Clock, LogPort } from '../core/ports';
import type { PassSummary } from '../core/pass';
import {
  DEFAULT_TARGET,
  HEARTBEAT_PARTITION,
  isStale,
  mergeTargets,
  parseTarget,
  TARGET_PARTITION,
  targetItemDeclaration,
  type FanOutMessage,
  type Target,
  type TargetParseResult,
} from '../core/targets';
import type { AllowLists } from '../core/allow-lists';
import type { HomeAccount } from '../core/event-routing';
import type { ServiceKey } from '../core/types';
import { decodeItem } from './attribute-values';
import { canonicalJson } from '../core/canonical-json';
import { dict, own } from '../core/dict';
import { SDK_RETRY } from './clients';
import { AwsCallError, errorMessage } from './errors';
import { Reason } from '../core/status';
import { PARTITION_KEY, SORT_KEY } from './dynamo-spec-store';
import { TargetMetricsSink, type DimensionedMetricsSink } from './metrics';
import { EcsRateLimiter, type LimiterTime } from './rate-limiter';
import { createRuntime, type FastPathRunOptions, type Runtime, type RuntimeOverrides } from './runtime';

/** SQS's limit of entries per SendMessageBatch. */
const SQS_BATCH = 10;
/** DynamoDB's limit of keys per BatchGetItem. */
const BATCH_GET_KEYS = 100;
/** Times unprocessed keys of a BatchGetItem are asked again (with a growing pause). */
const BATCH_GET_RETRIES = 5;

/** {@link TargetDirectory} on the spec table: Query on `#target` and `#heartbeat`. */
export class DynamoTargetDirectory implements TargetDirectory {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  private get raw(): DynamoDBClient {
    return this.doc as unknown as DynamoDBClient;
  }

  private async partition(pk: string): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      const page = await this.raw.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': PARTITION_KEY },
          ExpressionAttributeValues: { ':pk': { S: pk } },
          ConsistentRead: true,
          ...(startKey ? { ExclusiveStartKey: startKey } : {}),
        }),
      );
      items.push(...(page.Items ?? []).map(decodeItem));
      startKey = page.LastEvaluatedKey && Object.keys(page.LastEvaluatedKey).length > 0 ? page.LastEvaluatedKey : undefined;
    } while (startKey);
    return items;
  }

  /** Every `#target` item, parsed (a consistent Query). Never throws: a failed read gives `error`. */
  async readDeclarations(): Promise<{ declarations: TargetParseResult[]; error?: string }> {
    const declarations: TargetParseResult[] = [];
    try {
      for (const item of await this.partition(TARGET_PARTITION)) {
        const { [PARTITION_KEY]: _pk, [SORT_KEY]: name, ...rest } = item;
        void _pk;
        declarations.push(parseTarget(targetItemDeclaration(rest, name), 'table'));
      }
      return { declarations };
    } catch (err) {
      return { declarations, error: new AwsCallError(`DynamoDB Query #target in ${this.tableName}`, err).message };
    }
  }

  async read(): Promise<{ declarations: TargetParseResult[]; heartbeats: Record<string, string>; error?: string }> {
    const declarations: TargetParseResult[] = [];
    const heartbeats: Record<string, string> = dict();
    try {
      for (const item of await this.partition(TARGET_PARTITION)) {
        const { [PARTITION_KEY]: _pk, [SORT_KEY]: name, ...rest } = item;
        void _pk;
        declarations.push(parseTarget(targetItemDeclaration(rest, name), 'table'));
      }
      for (const item of await this.partition(HEARTBEAT_PARTITION)) {
        const name = item[SORT_KEY];
        if (typeof name === 'string' && typeof item.at === 'string') heartbeats[name] = item.at;
      }
      return { declarations, heartbeats };
    } catch (err) {
      return { declarations, heartbeats, error: new AwsCallError(`DynamoDB Query #target/#heartbeat in ${this.tableName}`, err).message };
    }
  }

  /**
   * BatchGetItem (consistent, keys only), 100 keys a call; unprocessed keys asked again up to 5
   * times, then kept (as when the table cannot be read: a hint is never lost).
   */
  async keysWithSpec(keys: readonly ServiceKey[]): Promise<{ keys: ServiceKey[]; error?: string }> {
    const id = (k: ServiceKey) => `${k.cluster}\u0000${k.service}`;
    const unique = [...new Map(keys.map((k) => [id(k), k])).values()];
    const found = new Set<string>();
    const kept = new Set<string>();
    try {
      for (let i = 0; i < unique.length; i += BATCH_GET_KEYS) {
        let request: Record<string, AttributeValue>[] | undefined = unique
          .slice(i, i + BATCH_GET_KEYS)
          .map((k) => ({ [PARTITION_KEY]: { S: k.cluster }, [SORT_KEY]: { S: k.service } }));
        for (let attempt = 0; request && request.length > 0; attempt++) {
          if (attempt > BATCH_GET_RETRIES) {
            for (const key of request) kept.add(`${key[PARTITION_KEY].S}\u0000${key[SORT_KEY].S}`);
            break;
          }
          if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
          const out: BatchGetItemCommandOutput = await this.raw.send(
            new BatchGetItemCommand({
              RequestItems: {
                [this.tableName]: {
                  Keys: request,
                  ConsistentRead: true,
                  ProjectionExpression: '#pk, #sk',
                  ExpressionAttributeNames: { '#pk': PARTITION_KEY, '#sk': SORT_KEY },
                },
              },
            }),
          );
          for (const item of own(out.Responses, this.tableName) ?? []) found.add(`${item[PARTITION_KEY]?.S}\u0000${item[SORT_KEY]?.S}`);
          request = own(out.UnprocessedKeys, this.tableName)?.Keys;
        }
      }
    } catch (err) {
      return { keys: [...keys], error: new AwsCallError(`DynamoDB BatchGetItem in ${this.tableName}`, err).message };
    }
    return { keys: keys.filter((k) => found.has(id(k)) || kept.has(id(k))) };
  }

  async writeHeartbeat(target: string, at: Date): Promise<void> {
    try {
      await this.raw.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: { [PARTITION_KEY]: { S: HEARTBEAT_PARTITION }, [SORT_KEY]: { S: target }, at: { S: at.toISOString() } },
        }),
      );
    } catch (err) {
      throw new AwsCallError(`DynamoDB PutItem heartbeat of ${target} in ${this.tableName}`, err);
    }
  }
}

/** {@link FanOutQueue} on SQS: SendMessageBatch, 10 messages a call. */
export class SqsFanOutQueue implements FanOutQueue {
  constructor(
    private readonly sqs: SQSClient,
    readonly queueUrl: string,
  ) {}

  /**
   * Sends the messages, 10 per SendMessageBatch; `options.delaySeconds` is every entry's
   * `DelaySeconds` (0-900, Amazon SQS API Reference, SendMessageBatchRequestEntry).
   * @throws RangeError for a delay outside 0-900 whole seconds (nothing is sent); never for AWS:
   *   the messages that could not be sent are returned with the reason.
   */
  async send(messages: readonly FanOutMessage[], options: FanOutSendOptions = {}): Promise<{ failed: { target: string; error: string }[] }> {
    const delay = options.delaySeconds;
    if (delay !== undefined && !(Number.isInteger(delay) && delay >= 0 && delay <= 900)) {
      throw new RangeError(`delaySeconds must be a whole number of seconds from 0 to 900 (SQS DelaySeconds), got ${delay}`);
    }
    const failed: { target: string; error: string }[] = [];
    for (let i = 0; i < messages.length; i += SQS_BATCH) {
      const batch = messages.slice(i, i + SQS_BATCH);
      try {
        const out = await this.sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: this.queueUrl,
            Entries: batch.map((m, j) => ({ Id: String(j), MessageBody: JSON.stringify(m), ...(delay ? { DelaySeconds: delay } : {}) })),
          }),
        );
        for (const f of out.Failed ?? []) {
          const m = batch[Number(f.Id)];
          failed.push({ target: m?.target.name ?? '?', error: `${f.Code ?? 'Failed'}: ${f.Message ?? ''}` });
        }
      } catch (err) {
        const error = new AwsCallError(`SQS SendMessageBatch ${this.queueUrl}`, err).message;
        failed.push(...batch.map((m) => ({ target: m.target.name, error })));
      }
    }
    return { failed };
  }
}

/** Seconds before expiry at which assumed credentials are renewed. */
const CREDENTIAL_REFRESH_SECONDS = 300;

/**
 * Credentials of `roleArn`, assumed with STS AssumeRole (session `ecs-reconciler-<target>`, 1
 * hour) and renewed 5 minutes before they expire.
 * @throws AwsCallError when the role cannot be assumed (AccessDenied: its trust policy does not
 *   name the function's role, or the function may not call sts:AssumeRole on it).
 */
export function assumeRoleCredentials(roleArn: string, sessionName: string, stsClientConfig: STSClientConfig = {}): AwsCredentialIdentityProvider {
  const sts = new STSClient({ ...SDK_RETRY, ...stsClientConfig });
  let cached: AwsCredentialIdentity | undefined;
  return async () => {
    if (cached?.expiration && cached.expiration.getTime() - Date.now() > CREDENTIAL_REFRESH_SECONDS * 1000) return cached;
    try {
      const out = await sts.send(new AssumeRoleCommand({ RoleArn: roleArn, RoleSessionName: sessionName, DurationSeconds: 3600 }));
      const c = out.Credentials;
      if (!c?.AccessKeyId || !c.SecretAccessKey) throw new Error('AssumeRole returned no credentials');
      cached = {
        accessKeyId: c.AccessKeyId,
        secretAccessKey: c.SecretAccessKey,
        ...(c.SessionToken ? { sessionToken: c.SessionToken } : {}),
        ...(c.Expiration ? { expiration: c.Expiration } : {}),
      };
      return cached;
    } catch (err) {
      throw new AwsCallError(`STS AssumeRole ${roleArn}`, err);
    }
  };
}

/**
 * Allow-lists that name resources of one account (subnets, security groups, target groups,
 * secrets, roles, file systems) cannot describe another account's: for a target other than the
 * default one they are lifted, and the target account's `ReconcilerTargetRole` (iam:PassRole on
 * the roles it lists only) is the boundary. Image registries and public IPs still apply.
 */
const ACCOUNT_SCOPED_LISTS = ['subnets', 'securityGroups', 'targetGroupArns', 'secrets', 'taskRoleArns', 'executionRoleArns', 'efsFileSystems'] as const;

/** The configuration a target's pass runs with: its clusters, defaults and Region. */
export function configForTarget(base: ReconcilerConfig, target: Target): ReconcilerConfig {
  if (target.name === DEFAULT_TARGET) {
    return {
      ...base,
      plan: {
        ...base.plan,
        managedClusters: target.source === 'implicit' ? base.plan.managedClusters : [...target.clusters],
        defaults: {
          ...base.plan.defaults,
          ...(target.defaults?.subnets ? { subnets: [...target.defaults.subnets] } : {}),
          ...(target.defaults?.securityGroups ? { securityGroups: [...target.defaults.securityGroups] } : {}),
          ...(target.defaults?.assignPublicIp !== undefined ? { assignPublicIp: target.defaults.assignPublicIp } : {}),
          ...(target.defaults?.executionRoleArn ? { executionRoleArn: target.defaults.executionRoleArn } : {}),
        },
      },
    };
  }
  const allow: AllowLists = { ...base.plan.allow };
  for (const list of ACCOUNT_SCOPED_LISTS) delete (allow as Record<string, unknown>)[list];
  const { events: _events, ...rest } = base;
  void _events;
  return {
    ...rest,
    // Events mode reads the reconciler account's own queue: other targets poll.
    plan: {
      ...base.plan,
      managedClusters: [...target.clusters],
      allow,
      defaults: {
        subnets: [...(target.defaults?.subnets ?? [])],
        securityGroups: [...(target.defaults?.securityGroups ?? [])],
        assignPublicIp: target.defaults?.assignPublicIp ?? false,
        ...(target.defaults?.executionRoleArn ? { executionRoleArn: target.defaults.executionRoleArn } : {}),
        ...(base.plan.defaults.logGroupPrefix !== undefined ? { logGroupPrefix: base.plan.defaults.logGroupPrefix } : {}),
        region: target.region ?? base.plan.defaults.region,
      },
    },
  };
}

/** What one fan-out message did. JSON-safe. */
export type TargetPassResult =
  | { readonly outcome: 'stale'; readonly target: string; readonly sentAt: string }
  /**
   * The target's role could not be assumed (or its declaration could not be read): no ECS call.
   * When the role was refused, `statusesWritten` counts the target's spec statuses that now say
   * so (`TargetUnreachable`), written under the target's lease.
   */
  | { readonly outcome: 'target-unreachable'; readonly target: string; readonly error: string; readonly statusesWritten?: number }
  | { readonly outcome: 'invalid-message'; readonly error: string }
  /**
   * The message names a target that no declaration (the `targets` prop, a valid `#target` item,
   * or the default target) holds now: nothing was assumed or called.
   */
  | { readonly outcome: 'unknown-target'; readonly target: string; readonly error: string }
  | { readonly outcome: 'pass'; readonly target: string; readonly fastPath: boolean; readonly summary: PassSummary }
  /**
   * A fast-path message found its target's lease held and was sent back to the queue, to be
   * received `delaySeconds` later (`leaseTries`: how many times it has found the lease held).
   */
  | { readonly outcome: 'requeued'; readonly target: string; readonly delaySeconds: number; readonly leaseTries: number };

/** Who reads a dropped fast-path message's services instead (for the log line). */
function leaseHeldFallback(message: FanOutMessage): { keys: string[]; coveredBy: string } {
  return {
    keys: (message.keys ?? []).slice(0, 20).map((k) => `${k.cluster}/${k.service}`),
    coveredBy: message.fromEvents
      ? "the target's scheduled passes (its events queue's hints for the default target, every service for the others)"
      : 'the next scheduled pass, which reads specs not yet applied first',
  };
}

/** What the runner needs besides the configuration. */
export interface TargetRunnerDeps {
  readonly doc: DynamoDBDocumentClient;
  readonly metrics: DimensionedMetricsSink;
  readonly log: LogPort;
  readonly clock?: Clock;
  readonly monotonicMs?: () => number;
  /** Time of the per-account limiters (virtual in the local run and the bench). */
  readonly limiterTime?: LimiterTime;
  /** Time of one account's limiter, when each runs on its own clock (the bench: one simulator each). */
  readonly limiterTimeFor?: (target: Target) => LimiterTime;
  /** Extra ECS client configuration per target (the local run points each target at its own simulator). */
  readonly ecsClientConfigFor?: (target: Target) => ECSClientConfig;
  /** STS client configuration (endpoint in tests). */
  readonly stsClientConfig?: STSClientConfig;
  /**
   * Credentials of a target with a `roleArn`, instead of STS AssumeRole (the local run: the
   * simulators accept any signature, and no STS runs there).
   */
  readonly credentialsFor?: (target: Target) => AwsCredentialIdentityProvider;
  /** Runtime overrides shared by every target (spec page size, observer concurrency...). */
  readonly overrides?: Pick<RuntimeOverrides, 'specPageSize' | 'observerConcurrency'>;
  /**
   * The fan-out queue the messages come from. Given (the function in fan-out mode, the local
   * run), a fast-path message whose target's lease is held does not wait for it: it tries once
   * and goes back to this queue with a delay (`requeueAfterLeaseHeld`), so it never holds one of
   * the mapping's concurrency slots while another pass of its target runs. Absent, the fast path
   * waits for the lease in the invocation (`leaseWaitMs`), as outside fan-out mode.
   */
  readonly requeue?: FanOutQueue;
  /**
   * The reconciler's own account and Region, as the dispatcher is given them (`dispatchTargets`'s
   * `home`): the declarations a message is checked against are merged the same way.
   */
  readonly home?: HomeAccount;
}

/** Options of one {@link TargetRunner.run}. */
export type TargetRunOptions = FastPathRunOptions & {
  /** The reconciler's own account and Region for this invocation (default: {@link TargetRunnerDeps.home}). */
  readonly home?: HomeAccount;
};

/** The fields of a declaration a message may carry; those that differ from the declaration are logged. */
const DECLARATION_FIELDS = ['account', 'region', 'clusters', 'roleArn', 'defaults', 'source'] as const;

/**
 * Reconciles one target per fan-out message, keeping per target (across messages of a warm
 * container) its runtime and credentials, and per account and Region its ECS rate limiter: ECS's
 * buckets are per account and Region, so targets elsewhere never wait for each other (there is at
 * most one target per account and Region: `mergeTargets` refuses a second).
 */
export class TargetRunner {
  private readonly runtimes = new Map<string, { declaration: string; runtime: Runtime; credentials?: AwsCredentialIdentityProvider }>();
  private readonly limiters = new Map<string, EcsRateLimiter>();

  constructor(
    readonly config: ReconcilerConfig,
    private readonly deps: TargetRunnerDeps,
  ) {}

  /** The limiter of `target`'s account and Region. */
  limiterOf(target: Target): EcsRateLimiter {
    const key = `${target.account ?? 'self'}:${target.region ?? this.config.plan.defaults.region ?? 'self'}`;
    let limiter = this.limiters.get(key);
    if (!limiter) {
      limiter = new EcsRateLimiter(this.config.apiBudgetFraction, this.deps.limiterTimeFor?.(target) ?? this.deps.limiterTime);
      this.limiters.set(key, limiter);
    }
    return limiter;
  }

  private runtimeOf(target: Target, otherTargets: ReadonlySet<string>) {
    const declaration = JSON.stringify({ ...target, otherTargets: [...otherTargets].sort() });
    const known = this.runtimes.get(target.name);
    if (known && known.declaration === declaration) return known;
    known?.runtime.ecs.destroy();
    const credentials = target.roleArn
      ? (this.deps.credentialsFor?.(target) ?? assumeRoleCredentials(target.roleArn, `ecs-reconciler-${target.name}`.slice(0, 64), this.deps.stsClientConfig))
      : undefined;
    const config = configForTarget(this.config, target);
    const runtime = createRuntime(config, {
      doc: this.deps.doc,
      limiter: this.limiterOf(target),
      ecsClientConfig: {
        ...(target.region ?? this.config.plan.defaults.region ? { region: target.region ?? this.config.plan.defaults.region } : {}),
        ...(credentials ? { credentials } : {}),
        // Undefined fields of the extra configuration never erase the ones above.
        ...Object.fromEntries(Object.entries(this.deps.ecsClientConfigFor?.(target) ?? {}).filter(([, v]) => v !== undefined)),
      },
      metrics: new TargetMetricsSink(this.deps.metrics, target.name),
      log: this.deps.log,
      ...(this.deps.clock ? { clock: this.deps.clock } : {}),
      ...(this.deps.monotonicMs ? { monotonicMs: this.deps.monotonicMs } : {}),
      ...this.deps.overrides,
      target: { name: target.name, otherTargets },
    });
    const entry = { declaration, runtime, ...(credentials ? { credentials } : {}) };
    this.runtimes.set(target.name, entry);
    return entry;
  }

  /**
   * Runs the pass one message asks for: the scheduled pass of its target, or (with `keys`) the fast
   * path restricted to those services. A stale scheduled message is dropped. The message only names
   * its target: the target's account, Region, role, clusters and defaults are its declaration's,
   * read again here ({@link declaredTarget}); a name nobody declares ends with `unknown-target`,
   * before any lease or ECS call, and a role that cannot be assumed with `target-unreachable`, after
   * a pass without ECS calls that gives every spec of the target the status `TargetUnreachable`.
   * @throws only programming errors: every AWS failure is in the result.
   */
  async run(message: FanOutMessage, runOptions: TargetRunOptions = {}): Promise<TargetPassResult> {
    const { home, ...options } = runOptions;
    const now = this.now();
    if (isStale(message, now, this.config.fanOut?.scheduleSeconds ?? 60)) {
      this.deps.log.info('fan-out: stale message dropped (a newer tick covers this target)', { target: message.target.name, sentAt: message.sentAt });
      return { outcome: 'stale', target: message.target.name, sentAt: message.sentAt };
    }
    const declared = await this.declaredTarget(message, home ?? this.deps.home);
    if (!declared.ok) return declared.result;
    const { target } = declared;
    const others = new Set(declared.names.filter((n) => n !== target.name));
    const { runtime, credentials } = this.runtimeOf(target, others);
    if (credentials) {
      const unreachable = await this.unreachablePass(target, runtime, credentials, options);
      if (unreachable) return unreachable;
    }
    if (message.keys && message.keys.length > 0) return this.fastPass(message, message.keys, target, runtime, options);
    return this.scheduledPass(target, runtime, options);
  }

  /** The clock's time, or the wall clock's without one. */
  private now(): Date {
    return (this.deps.clock ?? { now: () => new Date() }).now();
  }

  /**
   * Resolves the target role's credentials; when they cannot be had, a pass without ECS calls
   * gives every spec of the target the status `TargetUnreachable`.
   * @returns the `target-unreachable` result, or undefined when the role could be assumed.
   */
  private async unreachablePass(
    target: Target,
    runtime: Runtime,
    credentials: AwsCredentialIdentityProvider,
    options: FastPathRunOptions,
  ): Promise<TargetPassResult | undefined> {
    try {
      await credentials();
      return undefined;
    } catch (err) {
      const error = errorMessage(err);
      this.deps.log.error('fan-out: the target role cannot be assumed; this target is not reconciled this tick', {
        target: target.name,
        roleArn: target.roleArn,
        error,
      });
      // Every spec of the target says so in its status (no ECS call: none could be made).
      const marked = await runtime.run({ ...options, unreachable: { reason: Reason.TargetUnreachable, message: `the role ${target.roleArn} of target ${target.name} cannot be assumed: ${error}` } });
      return { outcome: 'target-unreachable', target: target.name, error, statusesWritten: marked.counts.statusesWritten };
    }
  }

  /**
   * The fast path for the services a message names. With a queue to go back to, a held lease
   * sends the message back ({@link requeueLeaseHeld}) rather than waiting for it.
   */
  private async fastPass(
    message: FanOutMessage,
    keys: readonly ServiceKey[],
    target: Target,
    runtime: Runtime,
    options: FastPathRunOptions,
  ): Promise<TargetPassResult> {
    const requeue = this.deps.requeue;
    // Events name every service of the account: only those with a spec are read. With a queue
    // to go back to, one try for the lease: waiting would hold this concurrency slot.
    const result = await runtime.runFastPath(keys, {
      ...options,
      ...(requeue ? { leaseWaitMs: 0 } : {}),
      ...(message.fromEvents ? { keysWithSpecOnly: true } : {}),
      ...(requeue ? { quietLeaseHeld: true } : {}),
    });
    const summary = (result as NonNullable<typeof result>).summary;
    if (requeue && summary.outcome === 'lease-held') {
      const requeued = await this.requeueLeaseHeld(requeue, message, target, summary);
      if (requeued) return requeued;
    }
    return { outcome: 'pass', target: target.name, fastPath: true, summary };
  }

  /**
   * Sends a fast-path message whose lease was held back to the queue, with a growing delay, until
   * its tries are spent; a message not sent back is dropped (logged: the scheduled pass covers it).
   * @returns the `requeued` result, or undefined when the message was dropped.
   */
  private async requeueLeaseHeld(
    requeue: FanOutQueue,
    message: FanOutMessage,
    target: Target,
    summary: PassSummary,
  ): Promise<TargetPassResult | undefined> {
    const again = requeueAfterLeaseHeld(message);
    if (!again) {
      this.deps.log.info('fan-out: the lease stayed held through every re-send; the fast-path message is dropped', {
        target: target.name,
        leaseHolder: summary.lease?.holder,
        leaseTries: message.leaseTries ?? 0,
        ...leaseHeldFallback(message),
      });
      return undefined;
    }
    const { failed } = await requeue.send([again.message], { delaySeconds: again.delaySeconds });
    if (failed.length === 0) {
      this.deps.log.info('fan-out: the lease is held; the fast-path message goes back to the queue', {
        target: target.name,
        keys: message.keys?.length,
        leaseHolder: summary.lease?.holder,
        delaySeconds: again.delaySeconds,
        leaseTries: again.message.leaseTries,
      });
      return { outcome: 'requeued', target: target.name, delaySeconds: again.delaySeconds, leaseTries: again.message.leaseTries ?? 1 };
    }
    this.deps.log.error('fan-out: the lease is held and the fast-path message could not be sent back; dropped', {
      target: target.name,
      error: failed[0].error,
      ...leaseHeldFallback(message),
    });
    return undefined;
  }

  /**
   * The target's scheduled pass, and its heartbeat when the pass read every spec and met no error,
   * whether it read the whole fleet (polling) or its share of it (events mode reads a share by
   * design): `readsComplete` would leave a healthy events-mode target's TargetPassAge rising forever.
   */
  private async scheduledPass(target: Target, runtime: Runtime, options: FastPathRunOptions): Promise<TargetPassResult> {
    const summary = await runtime.run(options);
    if (summary.outcome === 'completed' && summary.specsComplete && summary.errors.length === 0 && !summary.dryRun) {
      try {
        await new DynamoTargetDirectory(this.deps.doc, this.config.specsTable).writeHeartbeat(target.name, this.now());
      } catch (err) {
        this.deps.log.warn('fan-out: heartbeat not written (TargetPassAge will rise)', { target: target.name, error: errorMessage(err) });
      }
    }
    return { outcome: 'pass', target: target.name, fastPath: false, summary };
  }

  /**
   * The target a message names, as declared now: the `targets` prop first, then the `#target`
   * items, merged as the dispatcher merges them (`mergeTargets`: the prop wins a name, one target
   * per account and Region, the default target always there). The message is a hint: only its
   * target's name is read; its account, Region, role, clusters, defaults and `declared` list are
   * not (anyone who may send to the queue could write them).
   * @returns the declaration and every declared name, or the result that refuses the message: an
   *   unknown name (`unknown-target`), or a name only a `#target` item could declare while those
   *   cannot be read (`target-unreachable`; the next tick tries again).
   */
  private async declaredTarget(
    message: FanOutMessage,
    home: HomeAccount | undefined,
  ): Promise<{ ok: true; target: Target; names: string[] } | { ok: false; result: TargetPassResult }> {
    const name = message.target.name;
    const propTargets = this.config.fanOut?.propTargets ?? [];
    const table = await new DynamoTargetDirectory(this.deps.doc, this.config.specsTable).readDeclarations();
    const { targets } = mergeTargets(propTargets, table.declarations, this.config.plan.managedClusters, home);
    const target = targets.find((t) => t.name === name);
    if (!target) {
      if (table.error !== undefined) {
        const error = `the #target items could not be read, so target ${name} cannot be checked against its declaration: ${table.error}`;
        this.deps.log.error('fan-out: the target declarations could not be read; this target is not reconciled this tick', { target: name, error });
        return { ok: false, result: { outcome: 'target-unreachable', target: name, error } };
      }
      const error = `target ${name} is not declared (neither the targets prop nor a valid #target item names it, or its declaration is refused): the message is not obeyed`;
      this.deps.log.error('fan-out: message for an undeclared target refused; nothing assumed or called', {
        target: name,
        error,
        messageAccount: message.target.account,
        messageRoleArn: message.target.roleArn,
        messageRegion: message.target.region,
        sentAt: message.sentAt,
      });
      return { ok: false, result: { outcome: 'unknown-target', target: name, error } };
    }
    const differs = DECLARATION_FIELDS.filter((f) => canonicalJson(message.target[f] ?? null) !== canonicalJson(target[f] ?? null));
    if (differs.length > 0) {
      // A declaration edited since the tick, or a message written by someone else: either way the
      // declaration decides.
      this.deps.log.warn("fan-out: the message's copy of the target differs from its declaration; the declaration is used", { target: name, fields: differs });
    }
    return { ok: true, target, names: targets.map((t) => t.name) };
  }

  /** Destroys every client this runner built. */
  destroy(): void {
    for (const { runtime } of this.runtimes.values()) runtime.ecs.destroy();
    this.runtimes.clear();
  }
}

/**
 * The narrow ports a reconcile pass runs over. The Lambda handler, `ecsr reconcile` and the local
 * run (`npm start`) only build these differently; the core never imports an SDK.
 */
import type {
  Action,
  PruneHold,
  ObservedCluster,
  ObservedService,
  ObservedServiceDeployment,
  ServiceId,
  ServiceKey,
  ServiceStatus,
  SpecParseResult,
  TaskDefinition,
} from './types';

/** Tag key that marks a service as owned by a reconciler; its value is the owner id. */
export const OWNER_TAG_KEY = 'ecs-reconciler:owner';

/** Whether a live service carries the owner tag of reconciler `ownerId`. */
export function isOwnedBy(svc: ObservedService, ownerId: string): boolean {
  return svc.tags[OWNER_TAG_KEY] === ownerId;
}

/** Injected time: never read the wall clock in the core. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** Result of reading every spec item. */
export interface SpecRead {
  /** One parse result per item (valid or not). */
  readonly specs: SpecParseResult[];
  /** Remembered status per service, from the items' `status` attribute. */
  readonly statuses: Record<ServiceId, ServiceStatus>;
  /** False when any page failed: the pass must not prune (never "no specs" on a partial read). */
  readonly complete: boolean;
  readonly error?: string;
  /**
   * Where the previous pass stopped reading services (its {@link ObserveCursor}), when the store
   * keeps one; undefined means "start at the first cluster".
   */
  readonly cursor?: ObserveCursor;
  /**
   * Prune confirmations a person wrote (`ecsr prune --confirm CLUSTER`), expired ones included;
   * the pass uses those whose `expiresAt` is after its `now`.
   */
  readonly pruneConfirmations?: readonly PruneConfirmation[];
  /**
   * The prune holds earlier passes set ({@link PruneHold}), one per cluster; the pass hands them to
   * the planner, which keeps, releases or adds to them.
   */
  readonly pruneHolds?: readonly PruneHold[];
  /**
   * The version of each item's status as read (`''`: no status, or one written without a
   * version), for {@link SpecStore.writeStatus}'s `expectedVersion`. Absent: the store keeps none.
   */
  readonly statusVersions?: Record<ServiceId, string>;
}

/**
 * A person's confirmation that the owned services without a spec in `cluster` may be pruned even
 * though the planner would refuse on its own (`PruneBlocked`: the table holds no spec at all for
 * the cluster, or more than half of its owned services lost their spec). Valid until `expiresAt`;
 * `maxDeletesPerPass` still applies.
 */
export interface PruneConfirmation {
  readonly cluster: string;
  readonly expiresAt: Date;
  /** Who confirmed (free text, e.g. the caller's ARN or user name), when known. */
  readonly confirmedBy?: string;
}

/**
 * Where the rotation over the fleet's services stands between passes: the next pass starts with
 * the first service name after `after` in `cluster` (names in code-unit order), or with the first
 * service of `cluster` when `after` is absent. Safe to lose: a missing or unknown cursor starts
 * at the first cluster.
 */
export interface ObserveCursor {
  readonly cluster: string;
  readonly after?: string;
  /**
   * Events mode only (`./resync.ts`): the time, ISO 8601, up to which the rotation has read its
   * share of the fleet. A pass reads the share owed since then, so every service is re-read
   * within the resync interval even when passes are missed or cut. Absent: one pass's share.
   */
  readonly resyncAt?: string;
  /** Time (ISO 8601) of the newest heartbeat the event queue delivered: the rules feed it. */
  readonly heartbeatAt?: string;
}

/** One message of the event queue: an EventBridge event as JSON, and the handle that deletes it. */
export interface FeedMessage {
  readonly handle: string;
  readonly body: string;
}

/** What {@link EventFeed.receive} got. */
export interface ReceivedMessages {
  /**
   * False when the queue could not be read at all (missing, access denied, unreachable): the pass
   * then polls the whole fleet as it would without events.
   */
  readonly readable: boolean;
  readonly messages: readonly FeedMessage[];
  /** Why the queue could not be read, or why receiving stopped early. */
  readonly error?: string;
}

/**
 * The event queue: EventBridge rules deliver ECS's events and the CloudTrail
 * events of ECS writes into it. Only hints: a pass re-reads the services they name and still
 * re-reads the whole fleet within the resync interval.
 */
export interface EventFeed {
  /**
   * Receives up to `max` messages (SQS ReceiveMessage, 10 a call, no long polling), each call only
   * while `shouldContinue()` holds, until the queue answers empty. Never throws for an AWS failure.
   */
  receive(options: { readonly max: number; readonly shouldContinue: () => boolean }): Promise<ReceivedMessages>;
  /** Deletes the messages by handle (DeleteMessageBatch, 10 a call). Never throws: `{ error }`. */
  acknowledge(handles: readonly string[]): Promise<{ readonly error?: string }>;
}

/**
 * One exclusion item of the spec store (`lambda/core/fast-path.ts`): a service, whose actions and
 * status writes one pass at a time may own, or a task definition family, into which one pass at a
 * time may register.
 */
export type Fence = { readonly kind: 'service'; readonly key: ServiceKey } | { readonly kind: 'family'; readonly family: string };

/** A {@link Fence} as read: its generation (raised by every take) and its holder while taken. */
export interface FenceState {
  readonly fence: Fence;
  /** Times the fence was taken since its item was made. */
  readonly gen: number;
  /** The pass that holds it, with its expiry; absent once released. */
  readonly holder?: string;
  readonly expiresAt?: Date;
}

/** Every fence of the store's target as one consistent read saw it, by {@link fenceId}. */
export type FenceSnapshot = ReadonlyMap<string, FenceState>;

/** The id of a fence in a {@link FenceSnapshot}: `service#cluster/service` or `family#name`. */
export function fenceId(fence: Fence): string {
  return fence.kind === 'service' ? `service#${fence.key.cluster}/${fence.key.service}` : `family#${fence.family}`;
}

/** What {@link SpecStore.takeFences} got. */
export interface FenceResult {
  readonly taken: readonly Fence[];
  /** Fences held by another pass, or changed since `seen`, with the holder when one holds it. */
  readonly refused: readonly { readonly fence: Fence; readonly holder?: string; readonly expiresAt?: Date }[];
}

/** Result of reading some spec items by key ({@link SpecStore.readKeys}). */
export interface KeysRead {
  /** One parse result per item found (keys without an item are left out). */
  readonly specs: SpecParseResult[];
  readonly statuses: Record<ServiceId, ServiceStatus>;
  /** False when a key could not be read (then it is left out of `specs`). */
  readonly complete: boolean;
  readonly error?: string;
}

export interface SpecStore {
  /** Consistent, paginated read of all specs. Never throws for a failed page: `complete: false`. */
  readAll(): Promise<SpecRead>;
  /**
   * Consistent read of the items of `keys` only (no Scan), with their remembered statuses.
   * Optional: the fast path needs it. Never throws for a DynamoDB failure: `complete: false`.
   */
  readKeys?(keys: readonly ServiceKey[]): Promise<KeysRead>;
  /**
   * Writes `status` to the item only if the item still exists; never touches other attributes.
   * With `expectedVersion` (from {@link SpecRead.statusVersions}), only if the status is still the
   * one read then: a status another pass wrote since is never overwritten by an older view.
   * Resolves false when the item is gone or its status changed (ConditionalCheckFailed), throws on
   * other errors.
   */
  writeStatus(key: ServiceKey, status: ServiceStatus, expectedVersion?: string): Promise<boolean>;
  /**
   * Every fence of this target and its state (consistent read). Optional, with {@link takeFences}
   * and {@link releaseFences}: a store without them has no per-key exclusion, and only the
   * scheduled pass (under its lease) acts.
   * @throws on a storage failure.
   */
  readFences?(): Promise<FenceSnapshot>;
  /**
   * Takes each fence for `holder` until `now + ttlSeconds` unless another holder's is unexpired,
   * and, with `seen`, only if the fence's generation is still the one `seen` read (no pass took it
   * since). Each fence on its own: some may be taken and others refused.
   * @throws on a storage failure other than a refusal.
   */
  takeFences?(holder: string, fences: readonly Fence[], ttlSeconds: number, now: Date, seen?: FenceSnapshot): Promise<FenceResult>;
  /** Releases the fences `holder` holds among `fences`; others are left alone. Never throws for a refusal. */
  releaseFences?(holder: string, fences: readonly Fence[]): Promise<void>;
  /**
   * Removes fence items `seen` read unheld (or expired), each only if unchanged since: keeps the
   * fences' part of the table as small as what was taken since the last scheduled pass.
   * Optional. @throws on a storage failure.
   */
  forgetFences?(seen: FenceSnapshot, now: Date, max: number): Promise<number>;
  /**
   * Takes the pass lease for `ttlSeconds` unless another holder's lease is unexpired.
   * Resolves `{ acquired: false, holder, expiresAt }` when held elsewhere.
   */
  acquireLease(holder: string, ttlSeconds: number, now: Date): Promise<LeaseResult>;
  releaseLease(holder: string): Promise<void>;
  /**
   * Keeps the rotation's cursor for the next pass (read back in {@link SpecRead.cursor}).
   * Optional: a store without it starts every pass at the first cluster.
   * @throws on a storage failure (the pass reports it and goes on).
   */
  writeCursor?(cursor: ObserveCursor): Promise<void>;
  /**
   * Stores a {@link PruneConfirmation} (read back in {@link SpecRead.pruneConfirmations}).
   * Optional: a store without it cannot confirm prunes.
   * @throws on a storage failure.
   */
  writePruneConfirmation?(confirmation: PruneConfirmation): Promise<void>;
  /**
   * Stores a {@link PruneHold} (read back in {@link SpecRead.pruneHolds}), replacing the cluster's.
   * Optional: a store without it remembers no hold, so each pass decides from its own read.
   * @throws on a storage failure (the pass reports it and goes on).
   */
  writePruneHold?(hold: PruneHold): Promise<void>;
  /**
   * Removes the hold of `cluster`, if any.
   * @throws on a storage failure (the pass reports it and goes on).
   */
  clearPruneHold?(cluster: string): Promise<void>;
}

export type LeaseResult =
  | {
      readonly acquired: true;
      /**
       * Set when the lease item could not be read as a lease (it counts as expired) and was taken
       * over: what was wrong and what the item held.
       */
      readonly takenOver?: { readonly problem: string; readonly found: string };
    }
  | { readonly acquired: false; readonly holder: string; readonly expiresAt: Date };

/** Options of {@link EcsReader.observeCluster}. */
export interface ObserveClusterOptions {
  /**
   * Asked before each best-effort read (the stopped-task reasons of one lagging service); false
   * leaves that service's `stoppedTasks` undefined. Listing and describing services is never cut.
   */
  readonly shouldContinue?: () => boolean;
  /**
   * Called with the services of each DescribeServices answer as it arrives, before the cluster is
   * read to the end, so that the caller can start on them (the pass describes their task
   * definitions meanwhile). The same objects end up in the result. Optional for a reader to call.
   */
  readonly onServices?: (services: ObservedService[]) => void;
  /**
   * Services whose stopped tasks are read too though they do not lag (`runningCount >=
   * desiredCount`), while the same condition as for lagging ones holds: a crash loop between two
   * glimpses of a task RUNNING (`./crash-loop.ts`). Optional for a reader to honour.
   */
  readonly readStoppedTasks?: (service: ObservedService) => boolean;
}

/** Options of {@link EcsReader.listServices} and {@link EcsReader.readServices}. */
export interface ServiceReadOptions {
  /**
   * Asked before each call (a ListServices page, a DescribeServices batch of 10, the stopped-task
   * reads of one lagging service); false stops there. What was not read is reported as such
   * (`complete: false`, names left out of `described`), never as absent.
   */
  readonly shouldContinue?: () => boolean;
  /** As {@link ObserveClusterOptions.onServices}. */
  readonly onServices?: (services: ObservedService[]) => void;
  /** Stopped-task reads of lagging services go on while this holds (default: `shouldContinue`). */
  readonly stoppedTasksWhile?: () => boolean;
  /** As {@link ObserveClusterOptions.readStoppedTasks}. */
  readonly readStoppedTasks?: (service: ObservedService) => boolean;
}

/** What {@link EcsReader.listServices} found. */
export interface ServiceListing {
  /** False when the cluster does not exist (then `names` is empty and `complete` true). */
  readonly exists: boolean;
  /** Names of the services listed (ListServices shows ACTIVE ones only). */
  readonly names: string[];
  /** False when a page failed or the reading was cut: then services may be missing from `names`. */
  readonly complete: boolean;
  readonly error?: string;
  /** The failure's message when IAM refused the listing (AccessDenied): a permanent refusal. */
  readonly refused?: string;
}

/** What {@link EcsReader.readServices} found. */
export interface ServiceDescriptions {
  /** False when ECS said the cluster does not exist. */
  readonly exists: boolean;
  /** Services described (any status; a name seen twice: the live one). */
  readonly services: ObservedService[];
  /**
   * Names ECS answered for: described, or reported `MISSING` (then the service does not exist).
   * A name not here was not read (cut, or its call failed).
   */
  readonly described: string[];
  /** Failed calls (the names of the batch are not in `described`). */
  readonly errors: string[];
  /** The first failure's message when IAM refused a DescribeServices call (AccessDenied). */
  readonly refused?: string;
  /** Failed best-effort reads (stopped tasks), as {@link ObservedCluster.warnings}. */
  readonly warnings: string[];
}

/** Options of {@link EcsReader.describeTaskDefinitions}. */
export interface DescribeTaskDefinitionsOptions {
  /**
   * Asked just before an ARN that is not cached is described (ARNs are described in the order
   * given); false leaves it out of the result, so the caller knows which ones it deferred.
   */
  readonly shouldDescribe?: (arn: string) => boolean;
}

export interface EcsReader {
  /**
   * Observes one cluster: every listed service plus `extraServiceNames` (services named by specs
   * but possibly DRAINING, hence unlisted). Never throws: failures give `complete: false`; failed
   * best-effort reads (stopped tasks) are in `warnings`.
   */
  observeCluster(cluster: string, extraServiceNames: string[], options?: ObserveClusterOptions): Promise<ObservedCluster>;
  /**
   * Lists the names of a cluster's services (ListServices pages), each page only while
   * `options.shouldContinue()` holds. Optional together with {@link readServices}: a reader
   * without them is read one whole cluster at a time with {@link observeCluster}, never cut.
   * Never throws for an AWS failure.
   */
  listServices?(cluster: string, options?: ServiceReadOptions): Promise<ServiceListing>;
  /**
   * Describes the named services (DescribeServices, 10 a call, in the order given, each batch only
   * while `options.shouldContinue()` holds), then reads the stopped-task reasons of the lagging
   * ones (best effort, same condition). Never throws for an AWS failure.
   */
  readServices?(cluster: string, names: string[], options?: ServiceReadOptions): Promise<ServiceDescriptions>;
  /**
   * Described task definitions by ARN, cached for the life of the process (immutable), each as
   * soon as it arrives. Failed and deferred ARNs are left out of the result.
   */
  describeTaskDefinitions(arns: string[], options?: DescribeTaskDefinitionsOptions): Promise<Record<string, TaskDefinition>>;
  /** Latest ACTIVE revision of a family, or undefined. */
  latestActiveTaskDefinition(family: string): Promise<TaskDefinition | undefined>;
  /**
   * The service's newest service deployments (one ListServiceDeployments page), newest first,
   * each with its target revision's task definition (DescribeServiceRevisions, cached by revision
   * ARN: revisions are immutable). Optional: without it a rollback is known only from
   * `deployments[]` and the remembered status. Never throws for an AWS failure: `{ error }`.
   */
  readServiceDeployments?(cluster: string, service: string): Promise<{ deployments: ObservedServiceDeployment[] } | { error: string }>;

  /**
   * ECS's clock minus the reconciler's (ms), from ECS's latest responses (their `Date` header);
   * undefined when unknown. Optional: without it ECS's timestamps are read as the reconciler's.
   */
  ecsClockOffsetMs?(): number | undefined;
  /**
   * Optional: keeps the descriptions of the revisions in use (`arns`, from this pass's
   * observation) where a new container finds them (the durable description cache), and forgets
   * those no longer in use. Only a cache: never throws for a failed write.
   * @returns a warning when the cache could not be read or written this pass.
   */
  keepDescriptions?(arns: readonly string[]): Promise<{ warning?: string }>;
  /**
   * Optional, with {@link confirmTaskDefinitions}: those of `arns` whose description this reader
   * holds only from the durable description cache, which ECS has not confirmed in this process.
   * A reader without them holds only what ECS answered.
   */
  unconfirmedTaskDefinitions?(arns: readonly string[]): string[];
  /**
   * Describes `arns` from ECS (DescribeTaskDefinition), whatever is cached, each only while
   * `options.shouldDescribe(arn)` holds; every answer counts as confirmed for the life of the
   * process. A description that differs from the cached one replaces it in memory and, with
   * `options.repair`, in the durable cache. Never throws for an AWS failure.
   * @returns `replaced`: ECS's description of each ARN whose cached one differed; `failed`: ARNs
   *   whose call failed; ARNs in neither list were confirmed unchanged, or not described (deferred).
   */
  confirmTaskDefinitions?(
    arns: readonly string[],
    options?: { readonly shouldDescribe?: (arn: string) => boolean; readonly repair?: boolean },
  ): Promise<TaskDefinitionConfirmation>;
}

/** What {@link EcsReader.confirmTaskDefinitions} found. */
export interface TaskDefinitionConfirmation {
  /** ECS's descriptions that differ from the cached ones they replace, by ARN. */
  readonly replaced: Record<string, TaskDefinition>;
  /** ARNs confirmed (unchanged or replaced). */
  readonly confirmed: readonly string[];
  /** ARNs whose DescribeTaskDefinition failed, with the first failure's message. */
  readonly failed: readonly string[];
  readonly error?: string;
}

/** Outcome of applying one action. */
export type ActionResult =
  | { readonly ok: true; readonly action: Action; readonly detail?: string; readonly taskDefinitionArn?: string }
  | {
      readonly ok: false;
      readonly action: Action;
      /**
       * throttled/transient: left for the next pass; denied (IAM refused the call) and invalid
       * (ECS refused the request): ECS's message in the status, retried with backoff.
       */
      readonly errorClass: 'throttled' | 'transient' | 'denied' | 'invalid' | 'not-found' | 'skipped';
      readonly message: string;
      /**
       * A reason constant (`Reason` in `./status`) when the adapter recognised the rejection and
       * wrote its own message (e.g. `CapacityProviderMissing`); otherwise the message is ECS's.
       */
      readonly reason?: string;
    };

export interface EcsWriter {
  /** Applies the plan in order; one failed action does not stop the others. */
  apply(actions: Action[], shouldContinue: () => boolean): Promise<ActionResult[]>;
}

/** Per-pass metrics (Powertools EMF in AWS, in-memory locally). Units in names/docs. */
export interface MetricsSink {
  /** `TaskLag` (tasks) per service, dimensions Cluster and Service. */
  serviceLag(key: ServiceKey, lagTasks: number): void;
  /** Per-pass counters and gauges, e.g. PassSucceeded (count), PassDuration (milliseconds). */
  passMetric(name: string, value: number, unit: 'Count' | 'Milliseconds'): void;
  /** A metric with its own dimensions, e.g. `{ Target: 'staging' }` (fan-out mode); optional. */
  dimensionedMetric?(dimensions: Record<string, string>, name: string, value: number, unit: 'Count' | 'Milliseconds'): void;
  flush(): Promise<void> | void;
}

/** Structured logging port (Powertools Logger in AWS). */
export interface LogPort {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

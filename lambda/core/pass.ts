/**
 * One reconcile pass over the ports: lease -> read specs -> observe -> plan -> apply -> fold
 * results into statuses -> write changed statuses -> metrics -> release the lease.
 *
 * Time: a pass has until the earlier of its lease's action cut-off and the end of the invocation.
 * Observation spends at most {@link OBSERVATION_TIME_SHARE} of that: listing and describing
 * services (services that may need a change first, then a rotation that goes on from the previous
 * pass's cursor: `./observe.ts`), task definitions and stopped-task reasons. Only the services
 * read are planned (never a prune from a partial listing); the others keep their status until the
 * rotation reaches them; task definitions not described are left alone this pass and described by
 * the next ones (the reader caches every description). Actions stop at the caller's
 * `shouldContinue` and {@link LEASE_SAFETY_SECONDS} before the lease expires; status writes, a few
 * at a time, stop {@link STATUS_WRITE_LEASE_MARGIN_SECONDS} before it expires and
 * {@link STATUS_WRITE_RESERVE_MS} before the invocation ends. Whatever is cut is recomputed by the
 * next pass (level-triggered).
 *
 * Pure orchestration (docs/architecture.md: "one pass, three callers"): no SDK, no simulator; the Lambda
 * handler, `ecsr reconcile` and the local run build the ports differently and call
 * {@link runPass}. A failed AWS call inside the pass is reported in the summary, never thrown;
 * only programming errors escape.
 */
import { THROTTLE_BUCKETS } from './ecs-limits';
import { mapLimit } from './map-limit';
import { METRIC } from './metric-names';
import { type PlanOptions, observeOnlyOf } from './options';
import {
  isOwnedBy,
  type ActionResult,
  type Clock,
  type EcsReader,
  type EcsWriter,
  type EventFeed,
  type Fence,
  type FenceSnapshot,
  fenceId,
  type LogPort,
  type MetricsSink,
  type ObserveCursor,
  type SpecRead,
  type SpecStore,
} from './ports';
import { observe, type ObserveRequest } from './observe';
import { taskLagOf, wantsStoppedTasks } from './crash-loop';
import { familyOf, hintOf } from './events';
import { nextResyncAt, resyncShare, type ResyncOptions, type ResyncShare } from './resync';
import type { CompareCache } from './compare-cache';
import { plan as planActions, specErrorsText, type PlanInput } from './planner';
import { isOversized } from './spec';
import { holdRejected, recordRejection, rejectionFor, withRejection, type RefusedResult } from './rejections';
import { ConditionType, Reason, describeChange, statusChanged } from './status';
import {
  serviceId,
  type Action,
  type ActionType,
  type FieldChange,
  type ObservedCluster,
  type ObservedService,
  type ObservedState,
  type PruneHeld,
  type PruneHolds,
  type Rejection,
  type ServiceId,
  type ServiceKey,
  type ServiceSpec,
  type ServiceStatus,
  type SpecParseResult,
  type TaskDefinition,
  type UpdateKind,
} from './types';

/** What the planner decided for one pass. */
export type Plan = ReturnType<typeof planActions>;
import { dict, dictOf, hasOwnKey, own } from './dict';

/** The ports a pass runs over. */
export interface PassPorts {
  readonly specs: SpecStore;
  readonly reader: EcsReader;
  readonly writer: EcsWriter;
  readonly metrics: MetricsSink;
  readonly log: LogPort;
  /** Time of the pass (status times, lease expiry, lag). */
  readonly clock: Clock;
  /**
   * Monotonic milliseconds for the pass duration; defaults to `clock`. The handler passes
   * `performance.now`, so a virtual clock in the local run does not distort PassDuration.
   */
  readonly monotonicMs?: () => number;
  /**
   * The event queue. With it and {@link PassOptions.events}, a pass re-reads the
   * services events name plus the rotation's share of the fleet; without it (or when the queue
   * cannot be read or is not fed) the pass polls the whole fleet.
   */
  readonly events?: EventFeed;
  /**
   * The runtime's comparison cache (`./compare-cache.ts`), the one its observer stamps services
   * in; handed to every plan. None: the planner computes every digest itself (same plans).
   */
  readonly compareCache?: CompareCache;
}

/** Options of events mode (`PassOptions.events`). */
export interface EventOptions extends ResyncOptions {
  /** IAM role ARNs whose own ECS calls are not hints (the reconciler's role). */
  readonly ignorePrincipals?: readonly string[];
}

export interface PassOptions {
  readonly plan: PlanOptions;
  /** Plan only: nothing is written to ECS or DynamoDB (no lease, no status writes). */
  readonly dryRun: boolean;
  /** Lease holder id of this pass, e.g. the Lambda request id. */
  readonly holder: string;
  /**
   * Lease lifetime in seconds: at least the longest the pass can run (the handler uses the
   * invocation's remaining time), so a crashed pass blocks others no longer than that.
   */
  readonly leaseTtlSeconds: number;
  /**
   * Asked before each action; false leaves the remaining actions for the next pass. The pass
   * also stops starting actions {@link LEASE_SAFETY_SECONDS} before its lease expires, so that no
   * action starts while another pass could hold the lease.
   */
  readonly shouldContinue?: () => boolean;
  /**
   * Milliseconds of invocation time left (Lambda's `context.getRemainingTimeInMillis`), asked
   * during the pass; undefined when the lease is the only deadline (CLI, local run). Bounds the
   * observation ({@link OBSERVATION_TIME_SHARE}) and the status writes
   * ({@link STATUS_WRITE_RESERVE_MS}).
   */
  readonly remainingMs?: () => number;
  /** Status writes in flight at once (default {@link STATUS_WRITE_CONCURRENCY}). */
  readonly statusWriteConcurrency?: number;
  /**
   * Retry refused actions now, whatever their backoff (`lambda/core/rejections.ts`): a person asked
   * for this pass (`ecsr reconcile`), most likely after changing the permissions. Default false.
   */
  readonly retryRejected?: boolean;
  /**
   * The account cannot be reached (a fan-out target whose role cannot be assumed): the pass makes
   * no ECS call and reads no event; every cluster counts as refused with this reason and message
   * (`ObservedCluster.refused`), so every spec gets a status saying so and nothing is pruned.
   */
  readonly unreachable?: { readonly reason: string; readonly message: string };
  /** Events mode's options; undefined: polling (every pass reads as much of the fleet as it can). */
  readonly events?: EventOptions;
  /**
   * The resync floor of a polling pass (`events` gives it in events mode): the rotation reads at
   * least its share of the fleet ({@link resyncShare}), past the observation's share of the time
   * if it must, up to {@link OBSERVATION_FLOOR_TIME_SHARE}. Undefined (and no `events`): no floor,
   * the rotation reads as far as {@link OBSERVATION_TIME_SHARE} allows.
   */
  readonly resync?: ResyncOptions;
}

/** Messages a pass receives from the event queue at most (100 ReceiveMessage calls). */
export const MAX_EVENT_MESSAGES = 1000;

/** Services named by events that a pass reads by name at most; the rest wait for the rotation. */
export const MAX_EVENT_SERVICES = 1000;

/**
 * The event queue counts as fed while its newest heartbeat (the construct's schedule rule puts
 * one a minute) is at most this many pass intervals old, and at least {@link HEARTBEAT_STALE_MIN_SECONDS}.
 */
export const HEARTBEAT_STALE_PASSES = 3;
export const HEARTBEAT_STALE_MIN_SECONDS = 180;

/** Seconds before the lease expires after which the pass starts no new action. */
export const LEASE_SAFETY_SECONDS = 5;

/**
 * Share (0..1) of the pass's time, as left when the pass starts (the earlier of the action cut-off
 * of the lease and the invocation's remaining time), that observation may spend listing and
 * describing services, describing task definitions and reading stopped-task reasons; the rest is
 * kept for planning, actions and status writes.
 */
export const OBSERVATION_TIME_SHARE = 0.55;

/**
 * Share (0..1) of the pass's time, as for {@link OBSERVATION_TIME_SHARE}, up to which the rotation
 * may go on reading while it has not read its resync floor's share of the fleet this pass
 * (`./resync.ts`): the spec table's Scan, the event queue and the priority reads come out of the
 * observation's window, and must not leave the rotation short of the floor (found by the bench: at
 * 20,000 services a 4-9 s Scan left 1,300-1,900 reads for a share of 2,000). The 30% left keeps
 * planning, the actions (until the handler's 10 s reserve) and the status writes inside the
 * deadline; only the rotation uses it, never task definition or stopped-task reads.
 */
export const OBSERVATION_FLOOR_TIME_SHARE = 0.7;

/**
 * No status write starts later than this many seconds before the lease expires: once the lease
 * has expired another pass may hold it and write newer statuses, which a late write would undo.
 */
export const STATUS_WRITE_LEASE_MARGIN_SECONDS = 2;

/**
 * No status write starts with less than this many milliseconds of invocation time left
 * (`remainingMs`): the metrics and the lease release come after the writes. A status not written
 * is recomputed by the next pass (level-triggered).
 */
export const STATUS_WRITE_RESERVE_MS = 1_000;

/** Status writes (DynamoDB UpdateItem) in flight at once, unless the caller says otherwise. */
export const STATUS_WRITE_CONCURRENCY = 8;

/** Condition type the pass adds when ECS refused an action (`ConditionType.ActionRejected`). */
export const ACTION_REJECTED_CONDITION = ConditionType.ActionRejected;
/** Reason of {@link ACTION_REJECTED_CONDITION} for a request ECS refused; the message is ECS's own. */
export const ECS_REJECTED_REASON = Reason.EcsRejected;

/** One action of the pass with its outcome, JSON-safe. */
export interface PassAction {
  readonly type: ActionType;
  readonly cluster: string;
  readonly service: string;
  readonly reason: string;
  readonly kind?: UpdateKind;
  readonly changes?: FieldChange[];
  /** `planned` in a dry run; `applied`, `failed` or `skipped` otherwise. */
  readonly outcome: 'planned' | 'applied' | 'failed' | 'skipped';
  readonly errorClass?: string;
  readonly message?: string;
  readonly detail?: string;
}

export interface PassCounts {
  /** Spec items read (valid and invalid). */
  readonly specs: number;
  readonly invalid: number;
  readonly actionsPlanned: number;
  readonly actionsApplied: number;
  /** Failed by ECS (throttled, transient, invalid, not found). */
  readonly actionsFailed: number;
  /** Not started: out of time, or their task definition failed to register. */
  readonly actionsSkipped: number;
  /** UpdateService actions of kind `drift` applied. */
  readonly driftCorrections: number;
  /** Services in observe-only mode with a difference left uncorrected (`observedDrift`). */
  readonly driftObserved: number;
  /** Services the reconciler owns or is creating/adopting whose lag lasted beyond its grace. */
  readonly servicesLaggingBeyondGrace: number;
  readonly statusesWritten: number;
  /**
   * Statuses that changed but were not written: the pass's time for writing ran out (lease or
   * invocation deadline). The next pass recomputes them.
   */
  readonly statusesPending: number;
  /**
   * Task definitions in use that were neither cached nor described this pass because the time for
   * observation ran out; their services' task definitions are left alone this pass
   * (`TaskDefinitionNotDescribed`). A new container over a large fleet describes them over
   * several passes; 0 once every live task definition is cached.
   */
  readonly taskDefinitionsPending: number;
  /** Services read from ECS this pass (described, or known not to exist). */
  readonly servicesRead: number;
  /**
   * Spec items whose service was not read this pass (the deadline came first): not planned, their
   * remembered status kept; the rotation reads them in the next passes.
   */
  readonly servicesNotRead: number;
}

/** What a pass did; JSON-safe (times as ISO strings). */
export interface PassSummary {
  /**
   * `completed`: the pass ran to the end (it may still have failed actions or partial reads);
   * `lease-held`: another pass holds the lease, nothing was done;
   * `failed`: the lease could not be taken (DynamoDB error), nothing was done.
   */
  readonly outcome: 'completed' | 'lease-held' | 'failed';
  readonly holder: string;
  readonly dryRun: boolean;
  /** ISO time the pass started (pass clock). */
  readonly startedAt: string;
  /** Milliseconds. */
  readonly durationMs: number;
  /** The other holder, when `outcome` is `lease-held`. */
  readonly lease?: { readonly holder: string; readonly expiresAt: string };
  readonly counts: PassCounts;
  /** True when the spec read and every cluster observation were complete. */
  readonly readsComplete: boolean;
  readonly specsComplete: boolean;
  /** Cluster name -> complete (listed to the end and every service read, this pass). */
  readonly clusters: Record<string, boolean>;
  /**
   * The rotation over the fleet (absent on the few-keys path and when the lease was not taken):
   * `complete` when this pass read every service; `cursor`, where the next pass starts.
   */
  readonly rotation?: { readonly complete: boolean; readonly cursor: ObserveCursor };
  /** What the event queue gave this pass (absent: no queue configured, dry run, few-keys path). */
  readonly events?: EventsSummary;
  /**
   * Clusters whose prunes are held after this pass (`PruneHold`: a pass found the signature of a
   * wiped or half-restored spec table there), each with how to release it; absent when none is.
   */
  readonly pruneHolds?: PruneHeld[];
  /** Holds this pass released: every owned service has a spec again (`restored`), or a person confirmed. */
  readonly pruneHoldsReleased?: PruneHolds['cleared'];
  /** Descriptions from the durable task definition cache that ECS confirmed this pass (absent: none). */
  readonly taskDefinitionCache?: TaskDefinitionCacheSummary;
  readonly actions: PassAction[];
  /** The planned actions, in a dry run only. */
  readonly plan?: Action[];
  readonly statuses: Record<ServiceId, ServiceStatus>;
  /** Failures met (spec read, observations, status writes, lease). */
  readonly errors: string[];
}

/** The durable task definition cache in a pass's summary ({@link confirmCachedDescriptions}). */
export interface TaskDefinitionCacheSummary {
  /** Cached descriptions ECS confirmed this pass (DescribeTaskDefinition calls that answered). */
  readonly confirmed: number;
  /** ARNs whose cached description was not what ECS describes: replaced (in the table too, unless dry run). */
  readonly replaced: string[];
  /**
   * ARNs whose cached description the plan needed but ECS could not confirm this pass (a failed
   * call, or no time left): their services' task definitions were left alone
   * (`TaskDefinitionNotDescribed`).
   */
  readonly unconfirmed: string[];
}

/** The event queue in a pass's summary. */
export interface EventsSummary {
  /**
   * `events`: the pass read the services events named plus the rotation's share (`budget`);
   * `polling`: it read as much of the fleet as time allowed, because `reason`.
   */
  readonly mode: 'events' | 'polling';
  readonly reason?: string;
  /** Messages received. */
  readonly received: number;
  /** Services read by name because of an event (with a spec; duplicates once). */
  readonly services: number;
  /** Messages that named nothing to re-read (heartbeats, the reconciler's own calls, foreign services...). */
  readonly ignored: number;
  /** Messages deleted from the queue (those whose services were read, and those that named none). */
  readonly acknowledged: number;
  /** Services with a spec the rotation had to read at least this pass (events mode). */
  readonly budget?: number;
}

export const ZERO_COUNTS: PassCounts = {
  specs: 0,
  invalid: 0,
  actionsPlanned: 0,
  actionsApplied: 0,
  actionsFailed: 0,
  actionsSkipped: 0,
  driftCorrections: 0,
  driftObserved: 0,
  servicesLaggingBeyondGrace: 0,
  statusesWritten: 0,
  statusesPending: 0,
  taskDefinitionsPending: 0,
  servicesRead: 0,
  servicesNotRead: 0,
};

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** True for errors that are bugs, not failed calls: they escape the pass. */
export function isBug(err: unknown): boolean {
  return err instanceof TypeError || err instanceof ReferenceError || err instanceof SyntaxError;
}

/**
 * Runs one pass. Never throws for a failed ECS or DynamoDB call (it is in `summary.errors`, the
 * statuses and the action results); throws only programming errors.
 * @returns the {@link PassSummary}; `outcome: 'lease-held'` when another pass holds the lease.
 */
export async function runPass(ports: PassPorts, options: PassOptions): Promise<PassSummary> {
  const { log, clock } = ports;
  const monotonic = ports.monotonicMs ?? (() => clock.now().getTime());
  const t0 = monotonic();
  const now = clock.now();
  const base: PassBase = { holder: options.holder, dryRun: options.dryRun, startedAt: now.toISOString() };
  const elapsed = () => Math.max(0, Math.round(monotonic() - t0));
  const empty = { counts: ZERO_COUNTS, readsComplete: false, specsComplete: false, clusters: {}, actions: [], statuses: {} };

  if (!options.dryRun) {
    let lease;
    try {
      lease = await ports.specs.acquireLease(options.holder, options.leaseTtlSeconds, now);
    } catch (err) {
      if (isBug(err)) throw err;
      const summary: PassSummary = { ...base, ...empty, outcome: 'failed', durationMs: elapsed(), errors: [`lease: ${messageOf(err)}`] };
      log.error('pass failed: the lease could not be taken', { holder: options.holder, error: messageOf(err) });
      return summary;
    }
    if (!lease.acquired) {
      // A store that returns an invalid time must not make the pass throw.
      const until = lease.expiresAt instanceof Date && !Number.isNaN(lease.expiresAt.getTime()) ? lease.expiresAt.toISOString() : String(lease.expiresAt);
      const held = { holder: String(lease.holder), expiresAt: until };
      log.info('pass skipped: another pass holds the lease', { holder: options.holder, leaseHolder: held.holder, leaseExpiresAt: held.expiresAt });
      return { ...base, ...empty, outcome: 'lease-held', durationMs: elapsed(), lease: held, errors: [] };
    }
    if (lease.takenOver) {
      log.warn('lease taken over: the lease item could not be read as a lease and counts as expired', {
        holder: options.holder,
        problem: lease.takenOver.problem,
        found: lease.takenOver.found,
      });
    }
  }

  try {
    return await reconcile(ports, options, now, base, elapsed);
  } finally {
    if (!options.dryRun) {
      try {
        await ports.specs.releaseLease(options.holder);
      } catch (err) {
        if (isBug(err)) throw err;
        // The lease expires by itself; the next pass only waits for it.
        log.warn('lease release failed', { holder: options.holder, error: messageOf(err) });
      }
    }
  }
}

/** What every pass's summary starts with. */
export interface PassBase {
  readonly holder: string;
  readonly dryRun: boolean;
  readonly startedAt: string;
}

/**
 * The scheduled pass, under its lease: fences, the whole table, observation (events, rotation),
 * plan, fenced actions, statuses, metrics. Each step is a helper the fast path shares
 * (`./fast-path.ts`).
 */
async function reconcile(ports: PassPorts, options: PassOptions, now: Date, base: PassBase, elapsed: () => number): Promise<PassSummary> {
  const { log } = ports;
  const errors: string[] = [];
  const deadlines = passDeadlines(options, ports.clock, now);

  // 0. The fences before anything else is read: a fence another pass takes after this read has
  //    another generation, so this pass never acts on a service from a view older than that pass.
  const fences = await readFenceSnapshot(ports, options, errors);

  // 1. Desired state.
  const read: SpecRead = await ports.specs.readAll();
  if (!read.complete) errors.push(`specs: ${read.error ?? 'incomplete read'}`);
  const invalid = reportInvalid(log, read.specs, errors);

  // 2. Observed state: clusters of specs plus configured ones; services named by specs are
  //    described by name even when ListServices omits them (DRAINING). Services that may need a
  //    change are read first, then the rotation goes on from the previous pass's cursor until the
  //    observation's time is spent (lambda/core/observe.ts); only what was read is planned.
  const specs = validSpecsById(read.specs);
  const polled = observationRequest(read, specs, options);
  // Events mode: the services events name are read first with the others that
  // may need a change, and the rotation reads only its share of the fleet; with no readable, fed
  // queue the pass polls as before. Events are hints: what the pass plans is what it reads.
  const drained = options.unreachable ? undefined : await drainEvents(ports.events, options, read, deadlines, now);
  if (drained?.mode === 'polling') log.warn('event queue not usable: this pass polls the fleet', { reason: drained.summary.reason });
  // The resync floor, in either mode: the rotation reads at least its share, past the observation's
  // window if the Scan and the priority reads left it short (OBSERVATION_FLOOR_TIME_SHARE).
  const floorOptions = options.events ?? options.resync;
  const share = floorOptions ? resyncShare(specCount(polled.specNames), read.cursor?.resyncAt, now, floorOptions) : undefined;
  const floor = share ? { floor: { services: share.budget, shouldContinue: deadlines.floorObserving } } : {};
  const request: ObserveStep =
    drained?.mode === 'events' && share && options.events
      ? { ...polled, priority: withKeys(polled.priority, drained.keys), budget: share.budget, ...floor }
      : { ...polled, ...floor };
  const seen = await observeServices(ports, options, deadlines, read, specs, request, errors);
  const { observation } = seen;
  let eventsSummary: EventsSummary | undefined;
  if (drained) {
    const acked = drained.messages.filter((m) => m.keys.every((k) => observation.read.get(k.cluster)?.has(k.service) ?? false)).map((m) => m.handle);
    const ack = acked.length > 0 && ports.events ? await ports.events.acknowledge(acked) : {};
    if (ack.error) errors.push(`events: ${ack.error}`);
    eventsSummary = { ...drained.summary, acknowledged: ack.error ? 0 : acked.length, ...(request.budget !== undefined ? { budget: request.budget } : {}) };
  }
  const cursor = await keepCursor(ports, options, read, observation, share, polled, drained, now, errors);

  // 3. Plan the services read this pass; the others keep their remembered status.
  const inScope = readThisPass(seen);
  const planInput: PlanInput = {
    specs: read.specs.filter((s) => (s.key ? inScope(s.key) : true)),
    specsComplete: read.complete,
    observed: seen.observed,
    remembered: read.statuses,
    options: options.plan,
    now,
    pruneConfirmedClusters: (read.pruneConfirmations ?? []).filter((c) => c.expiresAt > now).map((c) => c.cluster),
    pruneHolds: read.pruneHolds ?? [],
  };
  const { plan: full, cache } = await planConfirmed(ports, options, planInput, seen, now, deadlines, errors);
  // The prune holds the planner set or released are stored before any action: a hold must outlive
  // this pass even when the pass is cut, or the next pass of a half-restored table prunes.
  if (!options.dryRun && full.pruneHolds) await storePruneHolds(ports, full.pruneHolds, errors);

  // 4. Act, only on services (and into families) whose fences this pass took unchanged since step 0.
  const fenced = await fenceActions(ports, options, full, fences, now, errors);
  try {
    const acted = await act(ports, options, fenced.plan, read.statuses, now);
    // 5. Statuses, each only if no other pass wrote it since the Scan.
    const notRead = [...read.specs.flatMap((s) => (s.key && !inScope(s.key) ? [serviceId(s.key)] : [])), ...fenced.left];
    const writes = await writeStatuses(ports, options, deadlines, read.specs, acted, read.statuses, seen.pending, errors, read.statusVersions);
    // 6. Counts, metrics, summary.
    return await finishPass(ports, options, {
      base,
      elapsed,
      errors,
      specs: read.specs,
      specsComplete: read.complete,
      invalid,
      valid: specs,
      remembered: read.statuses,
      seen,
      acted,
      notRead,
      writes,
      // The heartbeat is the scheduled pass's: a fast path succeeding must not hide stopped passes.
      heartbeat: read.complete && !options.unreachable,
      readsComplete: read.complete && observation.cycleComplete && observation.clusters.every((c) => c.complete),
      extra: {
        ...(cursor ? { rotation: { complete: observation.cycleComplete, cursor } } : {}),
        ...(eventsSummary ? { events: eventsSummary } : {}),
        ...(full.pruneHolds && full.pruneHolds.held.length > 0 ? { pruneHolds: full.pruneHolds.held } : {}),
        ...(full.pruneHolds && full.pruneHolds.cleared.length > 0 ? { pruneHoldsReleased: full.pruneHolds.cleared } : {}),
        ...(cache ? { taskDefinitionCache: cache } : {}),
      },
    });
  } finally {
    await releaseFences(ports, options.holder, fenced.taken, errors);
    if (fences && fences !== 'unread' && ports.specs.forgetFences && !options.dryRun) {
      try {
        await ports.specs.forgetFences(fences, ports.clock.now(), MAX_FENCES_FORGOTTEN);
      } catch (err) {
        if (isBug(err)) throw err;
        // Only housekeeping: the next scheduled pass forgets them.
        log.warn('fences: idle fence items not removed', { error: messageOf(err) });
      }
    }
  }
}

/** Idle fence items a scheduled pass removes at most ({@link SpecStore.forgetFences}). */
export const MAX_FENCES_FORGOTTEN = 200;

/** The observation request of a pass, less what {@link observeServices} adds. */
export type ObserveStep = Omit<ObserveRequest, 'shouldContinue' | 'onServices'>;

/**
 * The fences as this pass starts (undefined: a dry run, or a store without fences). A failed read
 * is reported and counts as "every fence changed": {@link fenceActions} then starts no action.
 */
async function readFenceSnapshot(ports: PassPorts, options: PassOptions, errors: string[]): Promise<FenceSnapshot | 'unread' | undefined> {
  if (options.dryRun || !ports.specs.readFences) return undefined;
  try {
    return await ports.specs.readFences();
  } catch (err) {
    if (isBug(err)) throw err;
    errors.push(`fences: ${messageOf(err)}; no action is started this pass`);
    return 'unread';
  }
}

/**
 * The plan with only the actions of services whose fence, and whose task definition family's
 * fence for a registration, this pass took unchanged since `seen` (`./fast-path.ts`, the design):
 * a service a fast path holds or took since the pass's read is left alone, its status not
 * written (`left`), for the pass that acted on it or the next one.
 */
async function fenceActions(
  ports: PassPorts,
  options: PassOptions,
  plan: Plan,
  seen: FenceSnapshot | 'unread' | undefined,
  now: Date,
  errors: string[],
): Promise<{ plan: Plan; taken: readonly Fence[]; left: ServiceId[] }> {
  if (seen === undefined || plan.actions.length === 0 || !ports.specs.takeFences) return { plan, taken: [], left: [] };
  const byService = new Map<ServiceId, Fence[]>();
  for (const a of plan.actions) {
    const id = serviceId(a);
    const fences = byService.get(id) ?? [{ kind: 'service', key: { cluster: a.cluster, service: a.service } }];
    if (a.type === 'RegisterTaskDefinition') fences.push({ kind: 'family', family: a.input.family });
    byService.set(id, fences);
  }
  let taken: readonly Fence[] = [];
  let refused = new Set<string>();
  if (seen === 'unread') refused = new Set([...byService.values()].flat().map(fenceId));
  else {
    try {
      const got = await ports.specs.takeFences(options.holder, [...byService.values()].flat(), options.leaseTtlSeconds, now, seen);
      taken = got.taken;
      refused = new Set(got.refused.map((r) => fenceId(r.fence)));
    } catch (err) {
      if (isBug(err)) throw err;
      errors.push(`fences: ${messageOf(err)}; no action is started this pass`);
      refused = new Set([...byService.values()].flat().map(fenceId));
    }
  }
  const left = [...byService].filter(([, fences]) => fences.some((f) => refused.has(fenceId(f)))).map(([id]) => id);
  if (left.length === 0) return { plan, taken, left };
  ports.log.info('services left alone this pass: another pass holds or took their fence since this pass read the table', { services: left.slice(0, 20), count: left.length });
  const out = new Set(left);
  const statuses = dictOf(plan.statuses);
  for (const id of left) delete statuses[id];
  return { plan: { ...plan, actions: plan.actions.filter((a) => !out.has(serviceId(a))), statuses }, taken, left };
}

/** Releases `fences` of `holder`; a failure is reported (the fences expire by themselves). */
export async function releaseFences(ports: PassPorts, holder: string, fences: readonly Fence[], errors: string[]): Promise<void> {
  if (fences.length === 0 || !ports.specs.releaseFences) return;
  try {
    await ports.specs.releaseFences(holder, fences);
  } catch (err) {
    if (isBug(err)) throw err;
    ports.log.warn('fence release failed: the fences expire with the pass', { holder, error: messageOf(err) });
    errors.push(`fences: ${messageOf(err)}`);
  }
}

/**
 * Logs and reports why items are refused (Invalid, or too large to leave room for their status):
 * a status that cannot be written (an item at the size limit, DynamoDB failing, an item without a
 * usable key) must not hide it. Bounded like the status: the first {@link MAX_INVALID_REPORTED}
 * items, each with its first errors, the rest counted.
 * @returns the number of invalid items.
 */
export function reportInvalid(log: LogPort, items: readonly SpecParseResult[], errors: string[]): number {
  let reported = 0;
  for (const r of items) {
    if (r.ok) continue;
    reported += 1;
    if (reported > MAX_INVALID_REPORTED) continue;
    const id = r.key ? serviceId(r.key) : '(no usable key)';
    const error = specErrorsText(r.errors);
    errors.push(`spec ${id}: ${error}`);
    // `service` is a key Powertools Logger reserves (its own service name) and drops: ECS's `serviceName`.
    log.warn(isOversized(r) ? 'spec item refused: too large to leave room for its status' : 'spec item invalid: nothing is changed for its service', {
      serviceName: id,
      error,
    });
  }
  if (reported > MAX_INVALID_REPORTED) {
    errors.push(`specs: ${reported - MAX_INVALID_REPORTED} more invalid spec items (counts.invalid is ${reported}; each one's status says why)`);
  }
  return reported;
}

/** What {@link observeServices} read. */
export interface Seen {
  readonly observation: Awaited<ReturnType<typeof observe>>;
  readonly observed: ObservedState;
  /** Every task definition ARN in use that was met, in the order met. */
  readonly inUse: readonly string[];
  /** Task definitions in use left undescribed for lack of time. */
  readonly pending: readonly string[];
}

/**
 * Observes what `request` names while the task definitions met are described (most useful first,
 * until the observation's share of the time is spent; the reader caches each description as it
 * arrives, so the next passes go on from there), and keeps the durable description cache.
 */
export async function observeServices(
  ports: PassPorts,
  options: PassOptions,
  deadlines: PassDeadlines,
  read: { readonly statuses: Record<ServiceId, ServiceStatus> },
  specs: Map<ServiceId, ValidSpec>,
  request: ObserveStep,
  errors: string[],
): Promise<Seen> {
  const queue = new DescribeQueue();
  // Before anything is observed: the task definitions services at rest ran last pass, most likely
  // still theirs. Describing them from the first second uses the whole observation window, however
  // late ECS lists these services.
  queue.addExpected(expectedTaskDefinitions(specs, read.statuses));
  const toCompare = (cluster: string, services: ObservedService[]) => {
    const { first, later } = taskDefinitionsToCompare(specs, read.statuses, cluster, services, options.plan);
    queue.add(first, later);
  };
  // Stopped tasks of services that do not lag now but may crash-loop between passes (./crash-loop.ts).
  const readStoppedTasks = (cluster: string, svc: ObservedService): boolean =>
    wantsStoppedTasks(svc, own(read.statuses, serviceId({ cluster, service: svc.serviceName })), ports.reader.ecsClockOffsetMs?.() ?? 0);
  const observation = options.unreachable
    ? unreachableObservation(request.clusters, options.unreachable)
    : await describingWhile(ports.reader, queue, deadlines, async () => {
      const o = await observe(ports.reader, { ...request, shouldContinue: deadlines.observing, onServices: toCompare, readStoppedTasks });
      // Again with the whole cluster (the queue skips what it has): a reader need not call onServices.
      for (const oc of o.clusters) toCompare(oc.cluster, Object.values(oc.services));
      return o;
    });
  if (ports.reader.keepDescriptions && !options.dryRun) {
    // The durable description cache: what a new container reads first.
    const kept = await ports.reader.keepDescriptions(queue.inUse);
    if (kept.warning) ports.log.warn('task definition cache: only a cache, the pass goes on without it', { warning: kept.warning });
  }
  const ecsClockOffsetMs = ports.reader.ecsClockOffsetMs?.();
  const observed: ObservedState = {
    clusters: dict(observation.clusters.map((oc) => [oc.cluster, oc])),
    taskDefinitions: queue.described,
    ...(ecsClockOffsetMs ? { ecsClockOffsetMs } : {}),
  };
  for (const oc of observation.clusters) {
    for (const w of oc.warnings ?? []) errors.push(`cluster ${oc.cluster}: ${w}`);
  }
  errors.push(...observation.errors);
  const pending = queue.inUse.filter((arn) => queue.deferred.has(arn) && !hasOwnKey(queue.described, arn));
  if (pending.length > 0) observed.taskDefinitionsPending = pending;
  for (const arn of queue.inUse) {
    if (!hasOwnKey(queue.described, arn) && !queue.deferred.has(arn)) errors.push(`task definition ${arn}: could not be described`);
  }
  return { observation, observed, inUse: queue.inUse, pending };
}

/** Whether a service was read this pass (a refused or missing cluster's specs count as read: each gets that as its status). */
export function readThisPass(seen: Seen): (key: ServiceKey) => boolean {
  return (key) => {
    const oc = own(seen.observed.clusters, key.cluster);
    if (!oc) return false;
    return !oc.exists || oc.refused !== undefined || (seen.observation.read.get(key.cluster)?.has(key.service) ?? false);
  };
}

/** Computes, writes (unless dry run or unchanged) and returns the rotation's cursor for the next pass. */
async function keepCursor(
  ports: PassPorts,
  options: PassOptions,
  read: SpecRead,
  observation: Seen['observation'],
  share: ResyncShare | undefined,
  polled: ObserveStep,
  drained: DrainedEvents | undefined,
  now: Date,
  errors: string[],
): Promise<ObserveCursor | undefined> {
  if (!observation.cursor) return undefined;
  const floorOptions = options.events ?? options.resync;
  const cursor: ObserveCursor = {
    ...observation.cursor,
    ...(share && floorOptions
      ? { resyncAt: nextResyncAt(share, observation.rotationRead, specCount(polled.specNames), observation.cycleComplete, now, floorOptions) }
      : {}),
    ...(drained?.heartbeatAt ? { heartbeatAt: drained.heartbeatAt } : read.cursor?.heartbeatAt ? { heartbeatAt: read.cursor.heartbeatAt } : {}),
  };
  if (!options.dryRun && ports.specs.writeCursor && !sameCursor(read.cursor, cursor)) {
    try {
      await ports.specs.writeCursor(cursor);
    } catch (err) {
      if (isBug(err)) throw err;
      // Safe to lose: the next pass starts at the previous cursor and reads these services again.
      errors.push(`cursor: ${messageOf(err)}`);
    }
  }
  return cursor;
}

/**
 * Plans, reading the deployment history of services whose spec renders another task definition
 * than the one they run, then planning again: a rollback ECS made is known from ECS itself, even
 * when the status that recorded it could not be written. ECS, not the durable cache, decides:
 * descriptions read from the cache that this plan acts or judges by, or of revisions the service
 * did not run at its last status, are confirmed with ECS first, and a few others a pass; the plan is
 * made again when ECS says otherwise (at most {@link CACHE_CONFIRMATION_ROUNDS} rounds: a plan made
 * again may decide by other revisions, from a history read since).
 */
export async function planConfirmed(
  ports: PassPorts,
  options: PassOptions,
  planInput: PlanInput,
  seen: Seen,
  now: Date,
  deadlines: PassDeadlines,
  errors: string[],
): Promise<{ plan: Plan; cache?: TaskDefinitionCacheSummary }> {
  const withCache = ports.compareCache ? { ...planInput, cache: ports.compareCache } : planInput;
  const planFrom = async (from: ObservedState): Promise<{ plan: Plan; observed: ObservedState }> => {
    const first = planActions({ ...withCache, observed: from });
    if (!first.deploymentHistoryWanted || !ports.reader.readServiceDeployments) return { plan: first, observed: from };
    const withHistory = await readDeploymentHistory(ports.reader, from, first.deploymentHistoryWanted, errors, leaseAwareContinue(options, ports, now));
    return { plan: planActions({ ...withCache, observed: withHistory }), observed: withHistory };
  };
  let planned = await planFrom(seen.observed);
  let cache: TaskDefinitionCacheSummary | undefined;
  const asked = new Set<string>();
  for (let round = 0; round < CACHE_CONFIRMATION_ROUNDS && !options.unreachable; round++) {
    const checked = await confirmCachedDescriptions(ports.reader, planned.plan, planned.observed, seen.inUse, planInput.remembered, now, {
      mustBefore: leaseAwareContinue(options, ports, now),
      sweepWhile: round === 0 ? deadlines.observing : () => false,
      repair: !options.dryRun,
      asked,
    });
    if (checked.summary) {
      cache = cache
        ? {
            confirmed: cache.confirmed + checked.summary.confirmed,
            replaced: [...cache.replaced, ...checked.summary.replaced],
            unconfirmed: [...cache.unconfirmed, ...checked.summary.unconfirmed],
          }
        : checked.summary;
      if (checked.summary.replaced.length > 0) {
        ports.log.warn('task definition cache: entries that were not what ECS describes were replaced by ECS\'s descriptions', { replaced: checked.summary.replaced });
      }
    }
    if (checked.error) errors.push(`task definition cache: ${checked.error}`);
    if (!checked.observed) break;
    planned = await planFrom(checked.observed);
  }
  return { plan: planned.plan, ...(cache ? { cache } : {}) };
}

/** What {@link act} did. */
export interface Acted {
  /** The plan less the actions held back by a refusal's backoff. */
  readonly plan: Plan;
  readonly results: ActionResult[];
  readonly statuses: Record<ServiceId, ServiceStatus>;
}

/**
 * Holds back a call ECS refused for this spec until its backoff is over (`./rejections.ts`),
 * applies the rest (unless dry run), logs each result and folds the results into the statuses.
 */
export async function act(ports: PassPorts, options: PassOptions, planned: Plan, remembered: Record<ServiceId, ServiceStatus>, now: Date): Promise<Acted> {
  const hold = holdRejected(planned.actions, planned.statuses, remembered, now, options.retryRejected === true);
  const plan = hold.held.size > 0 ? { ...planned, actions: hold.actions } : planned;
  let results: ActionResult[] = [];
  if (!options.dryRun && plan.actions.length > 0) {
    results = await ports.writer.apply(specChangesFirst(plan.actions), leaseAwareContinue(options, ports, now));
  }
  for (const r of results) logAction(ports.log, r);
  const statuses = options.dryRun
    ? dryRunStatuses(plan.statuses, remembered, now, new Set([...plan.actions.map(serviceId), ...hold.held.keys()]))
    : foldResults(plan.statuses, results, remembered, now, hold.held);
  return { plan, results, statuses };
}

/**
 * Writes the changed statuses of the items read: a few at a time, services acted on first, and
 * none once the time for writing is over (the next pass recomputes what was not written). With
 * `versions`, each only if its status is still the version read ({@link SpecStore.writeStatus}).
 */
export async function writeStatuses(
  ports: PassPorts,
  options: PassOptions,
  deadlines: PassDeadlines,
  items: readonly SpecParseResult[],
  acted: Acted,
  remembered: Record<ServiceId, ServiceStatus>,
  pending: readonly string[],
  errors: string[],
  versions?: Record<ServiceId, string>,
): Promise<{ written: number; pending: number }> {
  let written = 0;
  let notWritten = 0;
  if (options.dryRun) return { written, pending: notWritten };
  const pendingArns = new Set(pending);
  const started = new Set(acted.results.filter((r) => r.ok || r.errorClass !== 'skipped').map((r) => serviceId(r.action)));
  const itemIds = new Map<ServiceId, ServiceKey>();
  for (const s of items) if (s.key) itemIds.set(serviceId(s.key), s.key);
  const writes: { id: ServiceId; key: ServiceKey; status: ServiceStatus }[] = [];
  for (const [id, key] of itemIds) {
    const next = own(acted.statuses, id);
    if (next && worthWriting(own(remembered, id), next, pendingArns)) writes.push({ id, key, status: next });
  }
  // Stable sort: the memory of what was just done (lastAppliedSpecHash, lastAction) goes first.
  writes.sort((a, b) => Number(started.has(b.id)) - Number(started.has(a.id)));
  await mapLimit(writes, Math.max(1, options.statusWriteConcurrency ?? STATUS_WRITE_CONCURRENCY), async ({ id, key, status }) => {
    if (!deadlines.mayWriteStatus()) {
      notWritten += 1;
      return;
    }
    try {
      const expected = versions ? own(versions, id) : undefined;
      if (await ports.specs.writeStatus(key, status, ...(expected !== undefined ? [expected] : []))) written += 1;
    } catch (err) {
      if (isBug(err)) throw err;
      errors.push(`status ${id}: ${messageOf(err)}`);
    }
  });
  return { written, pending: notWritten };
}

/** Everything {@link finishPass} sums up. */
export interface PassParts {
  readonly base: PassBase;
  readonly elapsed: () => number;
  readonly errors: string[];
  readonly specs: readonly SpecParseResult[];
  readonly specsComplete: boolean;
  readonly invalid: number;
  readonly valid: Map<ServiceId, ValidSpec>;
  readonly remembered: Record<ServiceId, ServiceStatus>;
  readonly seen: Seen;
  readonly acted: Acted;
  /** Services with an item that were not planned: their remembered status stands. */
  readonly notRead: readonly ServiceId[];
  readonly writes: { readonly written: number; readonly pending: number };
  /** Emit `PassSucceeded` (the scheduled pass's heartbeat). */
  readonly heartbeat: boolean;
  readonly readsComplete: boolean;
  readonly extra: Partial<Pick<PassSummary, 'rotation' | 'events' | 'pruneHolds' | 'pruneHoldsReleased' | 'taskDefinitionCache'>>;
}

/** Counts, the lag and pass metrics, the summary and its log line. */
export async function finishPass(ports: PassPorts, options: PassOptions, p: PassParts): Promise<PassSummary> {
  const { metrics } = ports;
  const { observed, observation } = p.seen;
  const { plan, results, statuses } = p.acted;
  const lagCounted = (id: ServiceId, status: ServiceStatus): boolean => {
    const key = keyOf(id);
    if (!key) return false;
    return countsLag(status, own(own(observed.clusters, key.cluster)?.services, key.service), p.valid.get(id)?.spec, options.plan.ownerId);
  };
  const counts: PassCounts = {
    specs: p.specs.length,
    invalid: p.invalid,
    actionsPlanned: plan.actions.length,
    actionsApplied: results.filter((r) => r.ok).length,
    actionsFailed: results.filter((r) => !r.ok && r.errorClass !== 'skipped').length,
    actionsSkipped: results.filter((r) => !r.ok && r.errorClass === 'skipped').length,
    driftCorrections: results.filter((r) => r.ok && isDriftCorrection(r.action, p.remembered)).length,
    driftObserved: Object.values(statuses).filter((s) => s.observedDrift !== undefined && s.observedDrift.length > 0).length,
    servicesLaggingBeyondGrace:
      Object.entries(statuses).filter(([id, s]) => s.lagBeyondGrace && lagCounted(id, s)).length +
      p.notRead.filter((id) => {
        const rem = own(p.remembered, id);
        return rem !== undefined && rem.lagBeyondGrace && rememberedLagCounts(rem);
      }).length,
    statusesWritten: p.writes.written,
    statusesPending: p.writes.pending,
    taskDefinitionsPending: p.seen.pending.length,
    servicesRead: observation.servicesRead,
    servicesNotRead: p.notRead.length,
  };
  emitLag(metrics, statuses, p.notRead, p.remembered, lagCounted);
  const durationMs = p.elapsed();
  if (p.heartbeat) metrics.passMetric(METRIC.passSucceeded, 1, 'Count');
  metrics.passMetric(METRIC.passDuration, durationMs, 'Milliseconds');
  metrics.passMetric(METRIC.actionsApplied, counts.actionsApplied, 'Count');
  metrics.passMetric(METRIC.actionsFailed, counts.actionsFailed, 'Count');
  metrics.passMetric(METRIC.invalidSpecs, counts.invalid, 'Count');
  metrics.passMetric(METRIC.driftCorrections, counts.driftCorrections, 'Count');
  // Only where observe-only is in use, so a fleet that never adopts gradually pays for no series.
  const observing = (options.plan.observeOnlyClusters?.length ?? 0) > 0 || Object.values(statuses).some((s) => s.observeOnly === true);
  if (observing) metrics.passMetric(METRIC.driftObserved, counts.driftObserved, 'Count');
  metrics.passMetric(METRIC.servicesLaggingBeyondGrace, counts.servicesLaggingBeyondGrace, 'Count');
  await metrics.flush();
  const summary: PassSummary = {
    ...p.base,
    outcome: 'completed',
    durationMs,
    counts,
    readsComplete: p.readsComplete,
    specsComplete: p.specsComplete,
    clusters: dict([
      ...observation.clusters.map((oc): [string, boolean] => [oc.cluster, oc.complete]),
      ...observation.notReached.map((c): [string, boolean] => [c, false]),
    ]),
    actions: options.dryRun ? plan.actions.map((a) => passAction(a, undefined)) : results.map((r) => passAction(r.action, r)),
    ...(options.dryRun ? { plan: plan.actions } : {}),
    statuses: withNotRead(statuses, p.notRead, p.remembered),
    ...p.extra,
    errors: p.errors,
  };
  ports.log.info(options.dryRun ? 'dry run completed' : 'pass completed', {
    holder: options.holder,
    durationMs,
    counts,
    readsComplete: p.readsComplete,
    errors: p.errors,
  });
  return summary;
}

/**
 * `TaskLag` of the services whose lag counts ({@link shouldEmitTaskLag}); a service not read this
 * pass keeps a lagging series alive with the lag remembered from the pass that read it (its
 * recovery 0 was emitted by the pass that read it).
 */
function emitLag(
  metrics: MetricsSink,
  statuses: Record<ServiceId, ServiceStatus>,
  notRead: readonly ServiceId[],
  remembered: Record<ServiceId, ServiceStatus>,
  lagCounted: (id: ServiceId, status: ServiceStatus) => boolean,
): void {
  for (const [id, status] of Object.entries(statuses)) {
    const key = keyOf(id);
    if (!key || !lagCounted(id, status)) continue;
    const lag = taskLagOf(status);
    if (shouldEmitTaskLag(lag, own(remembered, id))) metrics.serviceLag(key, lag);
  }
  for (const id of notRead) {
    const key = keyOf(id);
    const rem = own(remembered, id);
    if (!key || !rem || !rememberedLagCounts(rem)) continue;
    const lag = taskLagOf(rem);
    if (lag > 0) metrics.serviceLag(key, lag);
  }
}

/** Writes the holds the plan set and removes those it released; a failure is reported, never thrown. */
async function storePruneHolds(ports: PassPorts, holds: PruneHolds, errors: string[]): Promise<void> {
  const { specs, log } = ports;
  for (const hold of holds.set) {
    log.warn('prune held: the cluster looks like a wiped or half-restored spec table; its prunes stay held', {
      cluster: hold.cluster,
      reason: hold.reason,
      release: holds.held.find((h) => h.cluster === hold.cluster)?.release,
    });
    if (!specs.writePruneHold) continue;
    try {
      await specs.writePruneHold(hold);
    } catch (err) {
      if (isBug(err)) throw err;
      errors.push(`prune hold ${hold.cluster}: ${messageOf(err)}`);
    }
  }
  for (const c of holds.cleared) {
    log.info(c.because === 'confirmed' ? 'prune hold released: a person confirmed the prune' : 'prune hold released: every owned service has a spec again', {
      cluster: c.cluster,
    });
    if (!specs.clearPruneHold) continue;
    try {
      await specs.clearPruneHold(c.cluster);
    } catch (err) {
      if (isBug(err)) throw err;
      errors.push(`prune hold ${c.cluster}: ${messageOf(err)}`);
    }
  }
}

/**
 * Descriptions from the durable task definition cache that ECS confirms in a pass besides those
 * the plan needs (the sweep of {@link confirmCachedDescriptions}). 20 fit in the reconciler's share
 * of ECS's task definition read burst at the default budget fraction (25 of 50), so the sweep does
 * not wait for tokens by itself, and cost 20 of the 600 calls a minute that share refills.
 */
export const CACHE_CONFIRMATIONS_PER_PASS = 20;

/** Times a pass confirms cached descriptions and plans again, at most ({@link confirmCachedDescriptions}). */
const CACHE_CONFIRMATION_ROUNDS = 3;

/** The sweep's window moves on by {@link CACHE_CONFIRMATIONS_PER_PASS} revisions every this many ms (the default schedule). */
const CACHE_SWEEP_STEP_MS = 60_000;

/** Reasons a status gives from comparing task definitions without an action: judged by ECS's descriptions only. */
const JUDGED_BY_TASK_DEFINITION: ReadonlySet<string> = new Set([Reason.RolloutFailed, Reason.NotUpdatable]);

/**
 * A well-formed entry of the durable task definition cache is not proof of what ECS holds: anyone
 * who can write the table can write one. So, before any action:
 * - the cached descriptions the plan decides by (the revisions of a service with a
 *   RegisterTaskDefinition or UpdateService action, or a RolloutFailed or NotUpdatable status:
 *   its live revision, its PRIMARY and ACTIVE deployments' and its deployment history's targets),
 *   and those of services that run another revision than their status remembers (a hand edit is
 *   caught at the first pass that sees it, however the cache describes the new revision), are
 *   described from ECS, until the action deadline; one ECS could not confirm is left out, so that
 *   service's task definition is left alone this pass (`TaskDefinitionNotDescribed`);
 * - {@link CACHE_CONFIRMATIONS_PER_PASS} other cached descriptions in use are confirmed while the
 *   observation's share of time lasts, from a window over the revisions in use (by ARN) that moves
 *   on with the clock: with a pass a minute, every revision in use read from the cache is
 *   confirmed within ceil(n / 20) minutes (n revisions in use), whatever containers come and go.
 * A reader that holds only what ECS answered (no durable cache) needs none of this.
 * @returns the observed state with ECS's descriptions, when one differed from the cache or could
 *   not be confirmed (the caller plans again); what was confirmed, for the summary.
 */
async function confirmCachedDescriptions(
  reader: EcsReader,
  plan: { readonly actions: readonly Action[]; readonly statuses: Readonly<Record<ServiceId, ServiceStatus>> },
  observed: ObservedState,
  inUse: readonly string[],
  remembered: Readonly<Record<ServiceId, ServiceStatus>>,
  now: Date,
  opts: {
    readonly mustBefore: () => boolean;
    readonly sweepWhile: () => boolean;
    readonly repair: boolean;
    /** ARNs asked of ECS by earlier rounds of this pass (not asked again); this round's are added. */
    readonly asked: Set<string>;
  },
): Promise<{ observed?: ObservedState; summary?: TaskDefinitionCacheSummary; error?: string }> {
  if (!reader.unconfirmedTaskDefinitions || !reader.confirmTaskDefinitions) return {};
  const decisive = confirmationRanks(plan);
  const must: string[] = [];
  const rankOf = new Map<string, number>();
  const mustAt = (arn: string, id: ServiceId) => {
    must.push(arn);
    rankOf.set(arn, Math.min(rankOf.get(arn) ?? DRIFT, decisive.get(id) ?? UNSEEN));
  };
  for (const cluster in observed.clusters) {
    const oc = own(observed.clusters, cluster) as ObservedCluster;
    for (const name in oc.services) {
      const svc = own(oc.services, name) as ObservedService;
      const id = serviceId({ cluster: oc.cluster, service: svc.serviceName });
      if (!hasOwnKey(plan.statuses, id)) continue;
      const known = own(remembered, id)?.taskDefinitionArn;
      // Deciding: every revision the plan may have compared. Otherwise: the revisions the last status did not see.
      const wanted = decisive.has(id) ? (arn: string) => arn.length > 0 : (arn: string) => arn.length > 0 && arn !== known;
      if (!decisive.has(id) && known === svc.taskDefinition) continue;
      if (wanted(svc.taskDefinition)) mustAt(svc.taskDefinition, id);
      for (const d of svc.deployments) if ((d.status === 'PRIMARY' || d.status === 'ACTIVE') && wanted(d.taskDefinition ?? '')) mustAt(d.taskDefinition, id);
      if (!decisive.has(id)) continue;
      for (const sd of svc.serviceDeployments ?? []) if (sd.targetTaskDefinition) mustAt(sd.targetTaskDefinition, id);
    }
  }
  const unconfirmed = new Set(reader.unconfirmedTaskDefinitions([...new Set([...must, ...inUse])]));
  if (unconfirmed.size === 0) return {};
  // Stable by rank: what a spec change decides by is asked of ECS before what a drift correction
  // does, so a deadline that cuts the confirmations short leaves the corrections, not the rollouts.
  const rank = (arn: string) => rankOf.get(arn) ?? UNSEEN;
  const byRank = [...must].sort((a, b) => rank(a) - rank(b));
  const needed = new Set(byRank.filter((arn) => unconfirmed.has(arn) && !opts.asked.has(arn)));
  // Drift corrections past what one pass can send are not asked: their services wait, so that the
  // confirmations leave the pass its time to act.
  const corrections = [...needed].filter((arn) => rank(arn) === DRIFT);
  const waiting = new Set(corrections.slice(DRIFT_CONFIRMATIONS_PER_PASS));
  const sweep = opts.sweepWhile() ? sweepWindow(inUse, unconfirmed, new Set([...needed, ...opts.asked]), now) : [];
  if (needed.size === 0 && sweep.length === 0) return {};
  for (const arn of [...needed, ...sweep]) opts.asked.add(arn);
  const result = await reader.confirmTaskDefinitions([...needed].filter((arn) => !waiting.has(arn)).concat(sweep), {
    shouldDescribe: (arn) => (needed.has(arn) ? opts.mustBefore() : opts.sweepWhile()),
    repair: opts.repair,
  });
  const confirmed = new Set(result.confirmed);
  const left = [...needed].filter((arn) => !confirmed.has(arn));
  const replaced = Object.keys(result.replaced).sort();
  const summary: TaskDefinitionCacheSummary = { confirmed: result.confirmed.length, replaced, unconfirmed: left };
  const failedNeeded = left.filter((arn) => result.failed.includes(arn));
  const error =
    failedNeeded.length > 0
      ? `${failedNeeded.length} cached description(s) the plan needed could not be confirmed with ECS, their services are left alone this pass: ${result.error ?? 'no answer'}`
      : undefined;
  if (summary.confirmed === 0 && left.length === 0) return {};
  if (replaced.length === 0 && left.length === 0) return { summary };
  const taskDefinitions = dictOf(observed.taskDefinitions);
  for (const arn of replaced) taskDefinitions[arn] = own(result.replaced, arn) as TaskDefinition;
  for (const arn of left) delete taskDefinitions[arn];
  const notReached = left.filter((arn) => !result.failed.includes(arn));
  const next: ObservedState = {
    ...observed,
    taskDefinitions,
    ...(notReached.length > 0 ? { taskDefinitionsPending: [...(observed.taskDefinitionsPending ?? []), ...notReached] } : {}),
  };
  return { observed: next, summary, ...(error !== undefined ? { error } : {}) };
}

/**
 * The order in which the cached descriptions a plan decides by are confirmed with ECS (lower
 * first), as the actuator orders its calls ({@link specChangesFirst}): a spec change (a
 * RegisterTaskDefinition, or an UpdateService that is not only a drift correction), a revision its
 * last status did not see (a hand edit to find), a status judged by the task definition
 * (RolloutFailed, NotUpdatable), a drift correction.
 */
const SPEC_CHANGE = 0;
const UNSEEN = 1;
const JUDGED = 2;
const DRIFT = 3;

/**
 * Drift corrections whose cached descriptions one pass confirms, at most: ECS's UpdateService burst
 * (`serviceModify`, 50 calls), more than the actuator's share of it sends in a pass. The others'
 * services are left alone until a later pass (`taskDefinitionsPending`), as a deadline leaves them,
 * instead of spending the pass's action time describing revisions it could not act on.
 */
export const DRIFT_CONFIRMATIONS_PER_PASS = THROTTLE_BUCKETS.serviceModify.burst;

/** The services of a plan that decide by a cached description, each with its confirmation rank. */
function confirmationRanks(plan: { readonly actions: readonly Action[]; readonly statuses: Readonly<Record<ServiceId, ServiceStatus>> }): Map<ServiceId, number> {
  const ranks = new Map<ServiceId, number>();
  const rank = (id: ServiceId, r: number) => ranks.set(id, Math.min(ranks.get(id) ?? DRIFT, r));
  for (const a of plan.actions) {
    if (a.type === 'RegisterTaskDefinition') rank(serviceId(a), SPEC_CHANGE);
    else if (a.type === 'UpdateService') rank(serviceId(a), a.kind === 'drift' ? DRIFT : SPEC_CHANGE);
  }
  for (const id in plan.statuses) {
    const st = own(plan.statuses, id) as ServiceStatus;
    if (st.conditions.some((c) => JUDGED_BY_TASK_DEFINITION.has(c.reason))) rank(id, JUDGED);
  }
  return ranks;
}

/**
 * Up to {@link CACHE_CONFIRMATIONS_PER_PASS} of `unconfirmed` (less `skip`), the first met on the
 * revisions in use sorted by ARN, starting at a position that moves on by that many every
 * {@link CACHE_SWEEP_STEP_MS} of `now`: consecutive minutes cover the whole ring, so no revision
 * waits longer than ceil(n / 20) minutes, and a new container does not start over from the first.
 */
export function sweepWindow(inUse: readonly string[], unconfirmed: ReadonlySet<string>, skip: ReadonlySet<string>, now: Date): string[] {
  let any = false;
  for (const arn of unconfirmed) if (!skip.has(arn)) any = true;
  if (!any) return [];
  const ring = ringOf(inUse);
  const n = ring.length;
  if (n === 0) return [];
  const start = (Math.floor(now.getTime() / CACHE_SWEEP_STEP_MS) * CACHE_CONFIRMATIONS_PER_PASS) % n;
  const out: string[] = [];
  for (let i = 0; i < n && out.length < CACHE_CONFIRMATIONS_PER_PASS; i++) {
    const arn = ring[(start + i) % n];
    if (unconfirmed.has(arn) && !skip.has(arn)) out.push(arn);
  }
  return out;
}

/** `inUse` without repeats, sorted: the sweep's ring (sorting 20,000 ARNs takes about 15 ms, once a pass). */
function ringOf(inUse: readonly string[]): readonly string[] {
  return [...new Set(inUse)].sort();
}

/** The observation of an account that cannot be reached: every cluster refused, nothing read. */
function unreachableObservation(clusters: readonly string[], refused: { reason: string; message: string }): Awaited<ReturnType<typeof observe>> {
  const sorted = [...new Set(clusters)].sort();
  return {
    clusters: sorted.map((cluster) => ({ cluster, complete: false, exists: true, services: dict(), refused: { ...refused }, error: refused.message })),
    notReached: [],
    errors: sorted.map((cluster) => `cluster ${cluster}: ${refused.message}`),
    read: new Map(),
    servicesRead: 0,
    cycleComplete: false,
    rotationRead: 0,
  };
}

/** Invalid spec items a pass names in its summary's `errors` (and logs), the rest counted. */
const MAX_INVALID_REPORTED = 50;

/** Services whose deployment history is read at once. */
const HISTORY_READ_CONCURRENCY = 4;

/**
 * Services whose deployment history one pass reads at most. A pass starts only a few deployments
 * (each registers a task definition: ECS's bucket of 20, refilled 1 a second, half of it for the
 * reconciler), but a change of the reconciler's own defaults by a deploy makes every service it
 * reads want one: reading all their histories (two calls each, 10 a second at half of ECS's
 * budget) would spend the invocation before any action (found by the bench: 244 services, 68 s).
 */
export const MAX_HISTORY_READS = 50;

/** Why a service's deployment history was wanted but not read this pass ({@link MAX_HISTORY_READS} or the deadline). */
export const HISTORY_NOT_READ = 'not read this pass (the pass reads a bounded number of histories, before its action deadline)';

/**
 * `observed` with the deployment history ({@link ObservedService.serviceDeployments}) of `keys`
 * and the task definitions their history targets (described, cached by the reader). A failed read
 * is reported in `errors` and marks the service (`serviceDeploymentsError`): the planner then does
 * not start a deployment that what DescribeServices shows may be a rollback of.
 */
async function readDeploymentHistory(
  reader: EcsReader,
  observed: ObservedState,
  keys: readonly ServiceKey[],
  errors: string[],
  shouldContinue: () => boolean,
): Promise<ObservedState> {
  const read = reader.readServiceDeployments?.bind(reader);
  if (!read) return observed;
  // Bounded (MAX_HISTORY_READS, and no read starts after the action deadline): a service whose
  // history is not read is marked as for an unreadable one, so the planner holds back a spec that
  // what DescribeServices shows may be a rollback of; the next passes read the others.
  let notRead = 0;
  const found = await mapLimit(keys.map((key, i) => ({ key, i })), HISTORY_READ_CONCURRENCY, async ({ key, i }) => {
    if (i >= MAX_HISTORY_READS || !shouldContinue()) {
      notRead += 1;
      return { key, out: { error: HISTORY_NOT_READ }, reported: false };
    }
    return { key, out: await read(key.cluster, key.service), reported: true };
  });
  if (notRead > 0) errors.push(`deployment history: ${notRead} of ${keys.length} services ${HISTORY_NOT_READ}`);
  const clusters = dictOf(observed.clusters);
  const targets: string[] = [];
  for (const { key, out, reported } of found) {
    if ('error' in out && reported) errors.push(`deployment history ${serviceId(key)}: ${out.error}`);
    const oc = own(clusters, key.cluster);
    const svc = own(oc?.services, key.service);
    if (!oc || !svc) continue;
    const services = dictOf(oc.services);
    // An unreadable history is marked: the planner then falls back to what DescribeServices shows.
    services[key.service] = 'error' in out ? { ...svc, serviceDeploymentsError: out.error } : { ...svc, serviceDeployments: out.deployments };
    clusters[key.cluster] = { ...oc, services };
    if ('error' in out) continue;
    for (const sd of out.deployments) if (sd.targetTaskDefinition) targets.push(sd.targetTaskDefinition);
  }
  const taskDefinitions = dictOf(observed.taskDefinitions);
  const missing = [...new Set(targets)].filter((arn) => !hasOwnKey(taskDefinitions, arn));
  if (missing.length > 0) {
    for (const [arn, td] of Object.entries(await reader.describeTaskDefinitions(missing))) taskDefinitions[arn] = td;
  }
  return { ...observed, clusters, taskDefinitions };
}

/** The pass's deadlines, from its lease and (when known) the invocation's remaining time. */
export interface PassDeadlines {
  /** True while observation may go on with best-effort reads (task definitions, stopped tasks). */
  readonly observing: () => boolean;
  /** True while the rotation may go on reading to meet its resync floor ({@link OBSERVATION_FLOOR_TIME_SHARE}). */
  readonly floorObserving: () => boolean;
  /** True while a status write may start. */
  readonly mayWriteStatus: () => boolean;
}

/**
 * Deadlines of a pass whose lease was taken at `leaseTakenAt` (pass clock). The time of the pass
 * is what is left before the earlier of the lease's action cut-off ({@link LEASE_SAFETY_SECONDS}
 * before expiry) and the end of the invocation; observation may spend
 * {@link OBSERVATION_TIME_SHARE} of it as measured at the start. Status writes stop
 * {@link STATUS_WRITE_LEASE_MARGIN_SECONDS} before the lease expires and
 * {@link STATUS_WRITE_RESERVE_MS} before the invocation ends.
 */
export function passDeadlines(options: PassOptions, clock: Clock, leaseTakenAt: Date): PassDeadlines {
  const leaseExpiresMs = leaseTakenAt.getTime() + options.leaseTtlSeconds * 1000;
  const remaining = options.remainingMs;
  const timeLeftMs = () =>
    Math.min(leaseExpiresMs - LEASE_SAFETY_SECONDS * 1000 - clock.now().getTime(), remaining ? remaining() : Number.POSITIVE_INFINITY);
  const startLeftMs = timeLeftMs();
  const observeUntilLeftMs = startLeftMs * (1 - OBSERVATION_TIME_SHARE);
  const floorUntilLeftMs = startLeftMs * (1 - OBSERVATION_FLOOR_TIME_SHARE);
  return {
    observing: () => timeLeftMs() > observeUntilLeftMs,
    floorObserving: () => timeLeftMs() > floorUntilLeftMs,
    mayWriteStatus: () =>
      clock.now().getTime() < leaseExpiresMs - STATUS_WRITE_LEASE_MARGIN_SECONDS * 1000 &&
      (!remaining || remaining() > STATUS_WRITE_RESERVE_MS),
  };
}

/**
 * Whether a status is worth a DynamoDB write: it changed (`statusChanged`), and not only by the
 * `TaskDefinitionNotDescribed` condition of a task definition this pass deferred for lack of time,
 * or by the steady judgement it could not renew without that description (`judged`, which the
 * stored status keeps and the next pass checks against the description anyway).
 * A new container describes a large fleet over several passes; without this rule every service
 * not yet described would be written twice (condition added, then removed) for nothing.
 */
function worthWriting(prev: ServiceStatus | undefined, next: ServiceStatus, pendingArns: ReadonlySet<string>): boolean {
  if (!statusChanged(prev, next)) return false;
  if (!prev || next.taskDefinitionArn === undefined || !pendingArns.has(next.taskDefinitionArn)) return true;
  const conditions = next.conditions.filter((c) => !(c.type === ConditionType.Incomplete && c.reason === Reason.TaskDefinitionNotDescribed));
  const { judged: _judged, ...rest } = next;
  return statusChanged(prev, prev.judged === undefined ? { ...rest, conditions } : { ...rest, conditions, judged: prev.judged });
}

/** The caller's `shouldContinue`, and (unless dry run) "the lease has not nearly expired". */
function leaseAwareContinue(options: PassOptions, ports: PassPorts, leaseTakenAt: Date): () => boolean {
  const caller = options.shouldContinue ?? (() => true);
  const deadlineMs = leaseTakenAt.getTime() + (options.leaseTtlSeconds - LEASE_SAFETY_SECONDS) * 1000;
  return () => caller() && ports.clock.now().getTime() < deadlineMs;
}

/** `cluster/service` -> key; undefined for ids that are not two names. */
function keyOf(id: ServiceId): ServiceKey | undefined {
  const slash = id.indexOf('/');
  if (slash <= 0 || slash === id.length - 1) return undefined;
  return { cluster: id.slice(0, slash), service: id.slice(slash + 1) };
}

/** A valid spec and its hash. */
export interface ValidSpec {
  readonly spec: ServiceSpec;
  readonly hash: string;
}

/** Valid specs by service id (an invalid item for the same key wins, as in the planner). */
export function validSpecsById(items: readonly SpecParseResult[]): Map<ServiceId, ValidSpec> {
  const out = new Map<ServiceId, ValidSpec>();
  const invalid = new Set<ServiceId>();
  for (const s of items) {
    if (!s.key) continue;
    const id = serviceId(s.key);
    if (!s.ok) invalid.add(id);
    else out.set(id, { spec: s.spec, hash: s.hash });
  }
  for (const id of invalid) out.delete(id);
  return out;
}

/**
 * Whether this pass emits `TaskLag` for a service whose lag counts: while it lags (`lag` > 0), and
 * once at 0 when the previous pass saw it lag, so that its lag alarm contributor returns to OK.
 * A healthy service emits nothing: each CloudWatch custom metric series costs money, and a series
 * without datapoints costs nothing (the lag alarm treats missing data as not breaching).
 * @param lag desired - running, tasks, >= 0.
 * @param remembered the status the previous pass wrote, if any.
 */
export function shouldEmitTaskLag(lag: number, remembered: ServiceStatus | undefined): boolean {
  if (lag > 0) return true;
  if (!remembered) return false;
  return remembered.laggingSince !== undefined || remembered.desiredCount > remembered.runningCount;
}

/**
 * Whether a service's lag counts: `TaskLag` is emitted and `ServicesLaggingBeyondGrace` counted
 * only for services the reconciler is responsible for (each series is billed and each one is a
 * contributor of the lag alarm, docs/ecs-facts.md §10):
 * - a live ACTIVE service carrying our owner tag, whatever its phase (an `Invalid` spec or a
 *   `Blocked` allow-list does not make its missing tasks anyone else's problem), or one its spec
 *   adopts (`adopt: true`, being tagged), or one observed only (observe-only reports lag too);
 * - a service being created: no live service (or an INACTIVE one, which counts as absent), phase
 *   neither `Invalid` nor `Blocked`, desiredCount above 0.
 * Never a service of someone else (`Blocked` / `NotOwned`, or `Invalid` over an unowned service),
 * a DRAINING one, nor a deleted or deleting one.
 */
function countsLag(status: ServiceStatus, live: ObservedService | undefined, spec: ServiceSpec | undefined, ownerId: string): boolean {
  if (status.phase === 'Deleted' || status.phase === 'Deleting') return false;
  if (live && live.status !== 'INACTIVE') {
    if (live.status !== 'ACTIVE') return false;
    return isOwnedBy(live, ownerId) || status.observeOnly === true || (spec !== undefined && spec.state === 'present' && spec.adopt);
  }
  return status.phase !== 'Invalid' && status.phase !== 'Blocked' && status.desiredCount > 0;
}

/**
 * Whether the remembered status shows a service at rest with its current spec: Converged, the spec
 * hash applied, ECS running the task definition seen last time, one deployment. Comparing its task
 * definition again can only confirm that; the others may need a rollout, a drift correction or a
 * failed-rollout check, so their task definitions are described first.
 */
function isAtRest(live: ObservedService, rem: ServiceStatus | undefined, hash: string): boolean {
  return rememberedAtRest(rem, hash) && rem?.taskDefinitionArn === live.taskDefinition && live.deployments.length <= 1;
}

/** The half of {@link isAtRest} that memory alone tells: Converged, with spec `hash` applied. */
function rememberedAtRest(rem: ServiceStatus | undefined, hash: string): boolean {
  return rem !== undefined && rem.phase === 'Converged' && rem.specHash === hash && rem.lastAppliedSpecHash === hash;
}

/**
 * Task definition ARNs of observed services of one cluster that the planner compares, in two
 * groups: `first`, those of services whose spec changed, whose live task definition changed, or
 * that are not at rest ({@link isAtRest}); `later`, the rest; in service order within each. A
 * service seen twice (DRAINING or INACTIVE next to its ACTIVE successor) counts once. Only live ACTIVE
 * services of valid `present` specs that we own, adopt or observe need them (the planner compares
 * nothing for others), with the task definitions of their PRIMARY and ACTIVE deployments (a failed or
 * rolled-back rollout is told by them). Cached ARNs cost nothing: the reader describes only the
 * others.
 */
function taskDefinitionsToCompare(
  specs: Map<ServiceId, ValidSpec>,
  remembered: Record<ServiceId, ServiceStatus>,
  cluster: string,
  services: ObservedService[],
  plan: PlanOptions,
): { first: string[]; later: string[] } {
  const first: string[] = [];
  const later: string[] = [];
  for (const live of [...services].sort((a, b) => (a.serviceName < b.serviceName ? -1 : a.serviceName > b.serviceName ? 1 : 0))) {
    const id = serviceId({ cluster, service: live.serviceName });
    const valid = specs.get(id);
    if (!valid || valid.spec.state !== 'present' || live.status !== 'ACTIVE') continue;
    if (!isOwnedBy(live, plan.ownerId) && !valid.spec.adopt && observeOnlyOf(plan, cluster, valid.spec.observeOnly) === undefined) continue;
    const group = isAtRest(live, own(remembered, id), valid.hash) ? later : first;
    if (live.taskDefinition) group.push(live.taskDefinition);
    for (const d of live.deployments) {
      if ((d.status === 'PRIMARY' || d.status === 'ACTIVE') && d.taskDefinition) group.push(d.taskDefinition);
    }
  }
  return { first, later };
}

/**
 * Task definition ARNs that services at rest ({@link isAtRest} as far as memory tells: Converged,
 * with the current spec hash applied) ran at the last observation, in service order.
 */
function expectedTaskDefinitions(specs: Map<ServiceId, ValidSpec>, remembered: Record<ServiceId, ServiceStatus>): string[] {
  const out: string[] = [];
  for (const id of [...specs.keys()].sort()) {
    const { spec, hash } = specs.get(id) as ValidSpec;
    const rem = own(remembered, id);
    if (spec.state !== 'present' || !rem?.taskDefinitionArn) continue;
    if (rememberedAtRest(rem, hash)) out.push(rem.taskDefinitionArn);
  }
  return out;
}

/**
 * Services read by name before the rotation, at most (100 DescribeServices calls): a large
 * creation (every spec new) must not keep the rotation, hence drift and prune, from ever moving.
 */
export const MAX_PRIORITY_SERVICES = 1000;

/**
 * What the observation reads this pass: managed clusters, the names specs give, the services read
 * first, the cursor. First (priority): on the few-keys path the keys asked; otherwise the valid
 * specs not at rest as memory tells ({@link rememberedAtRest}: new, edited, rolling out, failed,
 * lagging...) and invalid specs not remembered as `Invalid`, in key order, at most
 * {@link MAX_PRIORITY_SERVICES}, specs not applied yet (new, edited) before the others.
 */
function observationRequest(
  read: SpecRead,
  specs: Map<ServiceId, ValidSpec>,
  options: PassOptions,
): ObserveStep {
  const specNames = new Map<string, string[]>();
  const clusters = new Set(options.plan.managedClusters);
  const add = (m: Map<string, string[]>, key: ServiceKey) => {
    const names = m.get(key.cluster) ?? [];
    names.push(key.service);
    m.set(key.cluster, names);
  };
  for (const s of read.specs) {
    if (!s.key) continue;
    clusters.add(s.key.cluster);
    add(specNames, s.key);
  }
  const priority = new Map<string, string[]>();
  const first = new Map<string, string[]>();
  {
    // Specs not applied yet (new or edited: what people asked for) before the other services
    // needing attention (drift seen, rolling out, lagging...): hundreds of hand edits remembered
    // as not at rest must not push a spec edit beyond the bound (found by the bench: 1,850 drifted
    // services at 20,000 kept 10 spec edits unread for 3 passes in events mode).
    const applyFirst: ServiceKey[] = [];
    const others: ServiceKey[] = [];
    const ids = read.specs.flatMap((s) => (s.key ? [s.key] : [])).sort((a, b) => (serviceId(a) < serviceId(b) ? -1 : 1));
    for (const key of ids) {
      const id = serviceId(key);
      const valid = specs.get(id);
      const rem = own(read.statuses, id);
      const attention = valid ? !rememberedAtRest(rem, valid.hash) : rem?.phase !== 'Invalid';
      if (!attention) continue;
      if (valid && rem?.lastAppliedSpecHash !== valid.hash) applyFirst.push(key);
      else others.push(key);
      if (applyFirst.length >= MAX_PRIORITY_SERVICES) break;
    }
    for (const key of [...applyFirst, ...others].slice(0, MAX_PRIORITY_SERVICES)) add(priority, key);
    for (const key of applyFirst) add(first, key);
  }
  return {
    clusters: [...clusters],
    specNames,
    priority,
    ...(first.size > 0 ? { first } : {}),
    ...(read.cursor ? { cursor: read.cursor } : {}),
    rotate: true,
  };
}

function sameCursor(a: ObserveCursor | undefined, b: ObserveCursor): boolean {
  return a !== undefined && a.cluster === b.cluster && a.after === b.after && a.resyncAt === b.resyncAt && a.heartbeatAt === b.heartbeatAt;
}

function specCount(specNames: ReadonlyMap<string, readonly string[]>): number {
  let n = 0;
  for (const names of specNames.values()) n += new Set(names).size;
  return n;
}

/** `priority` with `keys` added (each name once per cluster). */
function withKeys(priority: ReadonlyMap<string, readonly string[]>, keys: readonly ServiceKey[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [c, names] of priority) out.set(c, [...names]);
  for (const k of keys) {
    const names = out.get(k.cluster) ?? [];
    if (!names.includes(k.service)) names.push(k.service);
    out.set(k.cluster, names);
  }
  return out;
}

/** The event queue's part of one pass (see {@link drainEvents}). */
interface DrainedEvents {
  readonly mode: 'events' | 'polling';
  /** Services with a spec that events name, in arrival order, at most {@link MAX_EVENT_SERVICES}. */
  readonly keys: ServiceKey[];
  /** Each message with the services it named (empty: nothing to read, deleted after the pass). */
  readonly messages: { readonly handle: string; readonly keys: readonly ServiceKey[] }[];
  /** Newest heartbeat received this pass (ISO). */
  readonly heartbeatAt?: string;
  readonly summary: Omit<EventsSummary, 'acknowledged' | 'budget'>;
}

/**
 * Receives the event queue's messages (at most {@link MAX_EVENT_MESSAGES}, while observation may
 * go on) and maps them to services with a spec: a service event names its service; a
 * RegisterTaskDefinition names the services whose remembered task definition is of that family;
 * events of services without a spec (foreign, unknown, other clusters) are ignored, as are the
 * reconciler's own calls. The mode is `events` when the queue was read and is fed (a heartbeat
 * within {@link HEARTBEAT_STALE_PASSES} pass intervals, this pass or remembered in the cursor, or
 * a backlog: the pass received {@link MAX_EVENT_MESSAGES});
 * otherwise `polling`, with the reason. Undefined when there is no queue, in a dry run (receiving
 * would hide the messages from the scheduled passes) and on the few-keys path.
 */
async function drainEvents(
  feed: EventFeed | undefined,
  options: PassOptions,
  read: SpecRead,
  deadlines: PassDeadlines,
  now: Date,
): Promise<DrainedEvents | undefined> {
  if (!feed || !options.events || options.dryRun) return undefined;
  const got = await feed.receive({ max: MAX_EVENT_MESSAGES, shouldContinue: deadlines.observing });
  const specKeys = new Map<ServiceId, ServiceKey>();
  const byFamily = new Map<string, ServiceKey[]>();
  for (const s of read.specs) {
    if (!s.key) continue;
    const id = serviceId(s.key);
    specKeys.set(id, s.key);
    const arn = own(read.statuses, id)?.taskDefinitionArn;
    const family = arn ? familyOf(arn) : undefined;
    if (family) byFamily.set(family, [...(byFamily.get(family) ?? []), s.key]);
  }
  const keys = new Map<ServiceId, ServiceKey>();
  const messages: { handle: string; keys: ServiceKey[] }[] = [];
  let heartbeatMs: number | undefined;
  let ignored = 0;
  for (const m of got.messages) {
    const hint = hintOf(m.body, { ignorePrincipals: options.events.ignorePrincipals ?? [] });
    let named: ServiceKey[] = [];
    if (hint.kind === 'heartbeat') heartbeatMs = Math.max(heartbeatMs ?? 0, hint.at.getTime());
    else if (hint.kind === 'service') named = specKeys.has(serviceId(hint.key)) ? [hint.key] : [];
    else if (hint.kind === 'family') named = byFamily.get(hint.family) ?? [];
    named = named.filter((k) => keys.has(serviceId(k)) || keys.size < MAX_EVENT_SERVICES);
    for (const k of named) keys.set(serviceId(k), k);
    if (named.length === 0) ignored += 1;
    messages.push({ handle: m.handle, keys: named });
  }
  const heartbeatAt = heartbeatMs !== undefined ? new Date(heartbeatMs).toISOString() : undefined;
  const newest = Math.max(heartbeatMs ?? Number.NEGATIVE_INFINITY, Date.parse(read.cursor?.heartbeatAt ?? '') || Number.NEGATIVE_INFINITY);
  const staleMs = Math.max(HEARTBEAT_STALE_PASSES * options.events.passIntervalSeconds, HEARTBEAT_STALE_MIN_SECONDS) * 1000;
  // A queue that gave the pass all it may take is fed, whatever its heartbeat: behind a backlog
  // (hundreds of hand edits, messages of services not read yet coming back) the heartbeat may not
  // be among the messages received for several passes (found by the bench: 2,000 hand edits at
  // 20,000 services sent the passes back to polling). The fallback is for a queue nothing feeds.
  const backlogged = got.messages.length >= MAX_EVENT_MESSAGES;
  const reason = !got.readable
    ? `the event queue could not be read (${got.error ?? 'unknown error'})`
    : backlogged
      ? undefined
      : !Number.isFinite(newest)
      ? 'the event queue has delivered no heartbeat yet (are the EventBridge rules deployed?)'
      : now.getTime() - newest > staleMs
        ? `the event queue's newest heartbeat is from ${new Date(newest).toISOString()}: the rules do not feed it`
        : undefined;
  return {
    mode: reason ? 'polling' : 'events',
    keys: reason ? [] : [...keys.values()],
    messages,
    ...(heartbeatAt ? { heartbeatAt } : {}),
    summary: { mode: reason ? 'polling' : 'events', ...(reason ? { reason } : {}), received: got.messages.length, services: keys.size, ignored },
  };
}

/** Whether the remembered status of a service not read this pass still counts its lag. */
function rememberedLagCounts(rem: ServiceStatus): boolean {
  return rem.phase !== 'Deleted' && rem.phase !== 'Deleting' && rem.phase !== 'Blocked' && rem.phase !== 'Invalid';
}

/** The pass's statuses plus, unchanged, the remembered ones of the services it did not read. */
function withNotRead(
  statuses: Record<ServiceId, ServiceStatus>,
  notRead: readonly ServiceId[],
  remembered: Record<ServiceId, ServiceStatus>,
): Record<ServiceId, ServiceStatus> {
  if (notRead.length === 0) return statuses;
  const out = dictOf(statuses);
  for (const id of notRead) {
    const rem = own(remembered, id);
    if (rem && !hasOwnKey(out, id)) out[id] = rem;
  }
  return out;
}

/** Task definitions the pass describes at once (one DescribeTaskDefinition each). */
export const TASK_DEFINITION_DESCRIBE_CONCURRENCY = 4;

/**
 * The pass's queue of task definitions to describe: ARNs arrive per cluster as each observation
 * completes; the `first` group of every cluster is taken before any `later` one still waiting.
 * Records what was described, what was deferred for lack of time, and every ARN seen.
 */
class DescribeQueue {
  /** Every ARN added from observed services, once, in the order added. */
  readonly inUse: string[] = [];
  readonly described: Record<string, TaskDefinition> = dict();
  /** ARNs not described because the time for observation was over. */
  readonly deferred = new Set<string>();
  private readonly used = new Set<string>();
  private readonly queued = new Set<string>();
  private readonly queuedFirst = new Set<string>();
  private readonly taken = new Set<string>();
  private readonly first: string[] = [];
  private readonly later: string[] = [];
  private nextFirst = 0;
  private nextLater = 0;
  private closed = false;
  private wake: (() => void) | undefined;
  private changed: Promise<void> | undefined;

  /**
   * ARNs of observed services: `first` before any `later` still waiting (an ARN waiting in the
   * later group, e.g. expected from memory, moves up when it comes again as `first`).
   */
  add(first: string[], later: string[]): void {
    for (const arn of [...first, ...later]) {
      if (this.used.has(arn)) continue;
      this.used.add(arn);
      this.inUse.push(arn);
    }
    for (const arn of first) {
      if (this.taken.has(arn) || this.queuedFirst.has(arn)) continue;
      this.queued.add(arn);
      this.queuedFirst.add(arn);
      this.first.push(arn);
    }
    this.addLater(later);
  }

  /** ARNs expected to be in use (from memory), behind everything observed; not counted as in use. */
  addExpected(arns: string[]): void {
    this.addLater(arns);
  }

  private addLater(arns: string[]): void {
    for (const arn of arns) {
      if (this.queued.has(arn)) continue;
      this.queued.add(arn);
      this.later.push(arn);
    }
    this.notify();
  }

  /** The next ARN to describe; undefined when none is waiting (then {@link waitForMore}). */
  take(): string | undefined {
    while (this.nextFirst < this.first.length) {
      const arn = this.first[this.nextFirst++];
      if (this.takeOnce(arn)) return arn;
    }
    while (this.nextLater < this.later.length) {
      const arn = this.later[this.nextLater++];
      if (this.takeOnce(arn)) return arn;
    }
    return undefined;
  }

  private takeOnce(arn: string): boolean {
    if (this.taken.has(arn)) return false;
    this.taken.add(arn);
    return true;
  }

  /** No more ARNs will come. */
  close(): void {
    this.closed = true;
    this.notify();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Resolves when ARNs were added or the queue was closed. */
  waitForMore(): Promise<void> {
    this.changed ??= new Promise<void>((resolve) => {
      this.wake = resolve;
    });
    return this.changed;
  }

  private notify(): void {
    const wake = this.wake;
    this.changed = undefined;
    this.wake = undefined;
    wake?.();
  }
}

/**
 * Runs `observe` (which fills `queue`) while {@link TASK_DEFINITION_DESCRIBE_CONCURRENCY} workers
 * describe what the queue holds through `reader` (cached ARNs cost no call). Past the observation
 * deadline an ARN is deferred instead of described.
 * @returns what `observe` returns, once it and the describing are both done.
 */
async function describingWhile<T>(reader: EcsReader, queue: DescribeQueue, deadlines: PassDeadlines, observe: () => Promise<T>): Promise<T> {
  const shouldDescribe = (arn: string): boolean => {
    if (deadlines.observing()) return true;
    queue.deferred.add(arn);
    return false;
  };
  const worker = async (): Promise<void> => {
    for (;;) {
      const arn = queue.take();
      if (arn === undefined) {
        if (queue.isClosed) return;
        await queue.waitForMore();
        continue;
      }
      for (const [described, td] of Object.entries(await reader.describeTaskDefinitions([arn], { shouldDescribe }))) queue.described[described] = td;
    }
  };
  const workers = Promise.all(Array.from({ length: TASK_DEFINITION_DESCRIBE_CONCURRENCY }, worker));
  // Only a programming error rejects; it is rethrown below, not left unhandled meanwhile.
  workers.catch(() => undefined);
  try {
    return await observe();
  } finally {
    queue.close();
    await workers;
  }
}

/**
 * The plan's actions with those of services that only have drift to correct (UpdateService of kind
 * `drift`) moved after all others, each service's actions in plan order. A spec edit, a creation or
 * a delete is what a person asked for; drift corrections share ECS's UpdateService budget (2.5 a
 * second at the default fraction) and, after a hand edit of hundreds of services, would otherwise
 * hold a spec edit back for passes ("a spec edit is acted on by the next pass").
 */
export function specChangesFirst(actions: readonly Action[]): Action[] {
  const driftOnly = new Map<ServiceId, boolean>();
  for (const a of actions) {
    const id = serviceId(a);
    const drift = a.type === 'UpdateService' && a.kind === 'drift';
    driftOnly.set(id, (driftOnly.get(id) ?? true) && drift);
  }
  return [...actions.filter((a) => !driftOnly.get(serviceId(a))), ...actions.filter((a) => driftOnly.get(serviceId(a)))];
}

function isDriftCorrection(action: Action, remembered: Record<ServiceId, ServiceStatus>): boolean {
  if (action.type !== 'UpdateService') return false;
  if (action.kind !== undefined) return action.kind === 'drift';
  const prev = own(remembered, serviceId(action));
  return action.changes.length > 0 && prev?.lastAppliedSpecHash !== undefined && prev.lastAppliedSpecHash === action.specHash;
}

function passAction(action: Action, result: ActionResult | undefined): PassAction {
  const out: PassAction = {
    type: action.type,
    cluster: action.cluster,
    service: action.service,
    reason: action.reason,
    ...(action.type === 'UpdateService' ? { changes: action.changes, ...(action.kind ? { kind: action.kind } : {}) } : {}),
    outcome: !result ? 'planned' : result.ok ? 'applied' : result.errorClass === 'skipped' ? 'skipped' : 'failed',
    ...(result && !result.ok ? { errorClass: result.errorClass, message: result.message } : {}),
    ...(result && result.ok && result.detail ? { detail: result.detail } : {}),
  };
  return out;
}

/** One structured line per action: what, why, the field-level `changes` (live -> desired). */
function logAction(log: LogPort, r: ActionResult): void {
  const a = r.action;
  const fields: Record<string, unknown> = {
    action: a.type,
    cluster: a.cluster,
    // Not `service`: Powertools Logger reserves that key (its own service name) and drops ours.
    serviceName: a.service,
    reason: a.reason,
    ...(a.specHash ? { specHash: a.specHash } : {}),
    ...(a.type === 'UpdateService' ? { kind: a.kind, changes: a.changes } : {}),
  };
  if (r.ok) log.info(`${a.type} ${a.cluster}/${a.service} applied`, { ...fields, detail: r.detail });
  else if (r.errorClass === 'skipped') log.warn(`${a.type} ${a.cluster}/${a.service} skipped`, { ...fields, errorClass: r.errorClass, error: r.message });
  else log.error(`${a.type} ${a.cluster}/${a.service} failed`, { ...fields, errorClass: r.errorClass, error: r.message });
}

function summarize(action: Action): string {
  switch (action.type) {
    case 'UpdateService':
      return action.changes.length > 0
        ? `UpdateService: ${action.changes.map(describeChange).join(', ')}`
        : `UpdateService: ${action.reason}`;
    default:
      return `${action.type}: ${action.reason}`;
  }
}

/**
 * Statuses after applying: `lastAction` (type, time, summary, error) for every service with an
 * action that was started (applied or failed); an action skipped (not started: out of time, or
 * after a failed registration or adoption, which is then the `lastAction`) is not an action, so a
 * service whose actions were all skipped keeps its remembered `lastAction` and its status does not
 * change from one pass to the next while it waits (no status write). For a service whose create
 * or rollout failed or was skipped, `lastAppliedSpecHash`,
 * `appliedDeploymentId`, `appliedRolloutState`, `rolloutFromTaskDefinitionArn` and `firstRollout` go back to the
 * remembered values (the planner set them for the hash it planned), so the next pass applies the
 * spec again. A refusal (`denied` or `invalid`) becomes the status's `rejection`
 * (`lambda/core/rejections.ts`): phase `Degraded`, `Ready` and `Progressing` False, the
 * {@link ACTION_REJECTED_CONDITION} condition and `reason` with ECS's message. A service in `held`
 * (its refused call waits out its backoff) keeps its remembered hashes and that rejection.
 */
export function foldResults(
  planned: Record<ServiceId, ServiceStatus>,
  results: ActionResult[],
  remembered: Record<ServiceId, ServiceStatus>,
  now: Date,
  held: ReadonlyMap<ServiceId, Rejection> = new Map(),
): Record<ServiceId, ServiceStatus> {
  const out: Record<ServiceId, ServiceStatus> = dictOf(planned);
  const at = now.toISOString();
  const byService = new Map<ServiceId, ActionResult[]>();
  for (const r of results) {
    const id = serviceId(r.action);
    byService.set(id, [...(byService.get(id) ?? []), r]);
  }
  for (const [id, rejection] of held) {
    const status = out[id];
    if (!status) continue;
    const prev = own(remembered, id);
    // Nothing of the held spec was applied: the hashes stay those ECS was last made to match.
    out[id] = withRejection(withRemembered(status, prev), rejection, prev, now);
  }
  for (const [id, rs] of byService) {
    const status = out[id];
    if (!status) continue;
    const started = rs.filter((r) => r.ok || r.errorClass !== 'skipped');
    const failed = started.find((r) => !r.ok);
    const last = failed ?? started[started.length - 1];
    let next: ServiceStatus = !last
      ? status
      : {
          ...status,
          lastAction: {
            type: last.action.type,
            at,
            summary: summarize(last.action),
            ...(!last.ok ? { error: `${last.errorClass}: ${last.message}` } : {}),
          },
        };
    const failedApply = rs.some((r) => !r.ok && r.action.specHash !== undefined && r.action.type !== 'DeleteService');
    if (failedApply) {
      const prev = own(remembered, id);
      next = withRemembered(next, prev);
    }
    if (failed && !failed.ok && (failed.errorClass === 'invalid' || failed.errorClass === 'denied')) {
      const prev = own(remembered, id);
      const refused: RefusedResult = { action: failed.action, errorClass: failed.errorClass, message: failed.message, ...(failed.reason ? { reason: failed.reason } : {}) };
      next = withRejection(next, recordRejection(prev?.rejection, refused, next.specHash, now), prev, now);
    } else if (started.length === 0 && rejectionFor(own(remembered, id), next.specHash)) {
      // Its retry did not start (out of time): the refusal still stands, with its backoff.
      const prev = own(remembered, id);
      next = withRejection(next, rejectionFor(prev, next.specHash) as Rejection, prev, now);
    } else if (held.has(id)) {
      // Other actions of a held service ran (a tag update held, its rollout applied): the refusal still stands.
      const prev = own(remembered, id);
      next = withRejection(next, held.get(id) as Rejection, prev, now);
    }
    out[id] = next;
  }
  return out;
}

/**
 * The statuses a dry run shows: the planned ones, and for a service whose remembered refusal is
 * for the same spec hash, that refusal standing (the plan may retry the call; until a pass does
 * and ECS accepts it, the refusal is what holds).
 */
function dryRunStatuses(
  planned: Record<ServiceId, ServiceStatus>,
  remembered: Record<ServiceId, ServiceStatus>,
  now: Date,
  withActions: ReadonlySet<ServiceId>,
): Record<ServiceId, ServiceStatus> {
  const out = dictOf(planned);
  for (const id of withActions) {
    const status = own(planned, id);
    const prev = own(remembered, id);
    const r = status ? rejectionFor(prev, status.specHash) : undefined;
    if (status && r) out[id] = withRejection(withRemembered(status, prev), r, prev, now);
  }
  return out;
}

function withRemembered(status: ServiceStatus, prev: ServiceStatus | undefined): ServiceStatus {
  const {
    lastAppliedSpecHash: _h,
    appliedDeploymentId: _d,
    appliedRolloutState: _r,
    rolloutFromTaskDefinitionArn: _f,
    firstRollout: _first,
    ...rest
  } = status;
  return {
    ...rest,
    ...(prev?.lastAppliedSpecHash !== undefined ? { lastAppliedSpecHash: prev.lastAppliedSpecHash } : {}),
    ...(prev?.appliedDeploymentId !== undefined ? { appliedDeploymentId: prev.appliedDeploymentId } : {}),
    ...(prev?.appliedRolloutState !== undefined ? { appliedRolloutState: prev.appliedRolloutState } : {}),
    ...(prev?.rolloutFromTaskDefinitionArn !== undefined ? { rolloutFromTaskDefinitionArn: prev.rolloutFromTaskDefinitionArn } : {}),
    ...(prev?.firstRollout === true ? { firstRollout: true as const } : {}),
  };
}


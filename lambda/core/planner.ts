/**
 * The pure planner: from every spec read, the observed ECS state, the status remembered from the
 * previous pass, the options and `now`, it computes the ordered list of actions of this pass and
 * the status of every service it knows of. It reads no clock, calls no API and throws only on a
 * programming error; the same input always gives the same plan.
 *
 * Safety rules, each with a table-driven test in `test/planner.test.ts`:
 * - only services carrying `OWNER_TAG_KEY = options.ownerId` are updated or deleted, unless the
 *   spec says `adopt: true` (then TagResource first);
 * - never a create on an incomplete cluster observation (unless ECS answered for that very name this
 *   pass: `ObservedCluster.described`), never a delete on an incomplete spec read
 *   or cluster observation, never a delete protected by an invalid spec;
 * - orphan prunes stop altogether when they would remove more than `maxDeletesPerPass` services or
 *   more than half of a cluster's (more than 4) owned services, and in a cluster for which the
 *   table holds no spec at all, unless a person confirmed that cluster (`ecsr prune --confirm`:
 *   then its orphans go at most `maxDeletesPerPass` a pass);
 * - a cluster where those rules held prunes stays held ({@link PruneHold}) in later passes, until
 *   none of its owned services lacks a spec or a person confirms it: a table restored a few items
 *   at a time passes under the rules before it is whole;
 * - a spec hash whose rollout FAILED is not re-applied until the spec changes (docs/ecs-facts.md §4);
 * - no delete and re-create of a service in one pass; DRAINING names wait (docs/ecs-facts.md §3).
 */
import { createHash } from 'node:crypto';
import { allowListViolations, anyAllowList, describeViolation } from './allow-lists';
import type { PlanOptions } from './options';
import { OWNER_TAG_KEY, isOwnedBy } from './ports';
import {
  AUTOSCALED_INITIAL_DESIRED_COUNT,
  createServiceFields,
  desiredServiceConfig,
  limitToDeploymentController,
  diffService,
  type DesiredServiceConfig,
} from './plan-service';
import {
  type ConditionDrafts,
  type Lag,
  Reason,
  isStoppedTaskReason,
  stoppedTaskReason,
  computeLag,
  describeChange,
  rememberReason,
  resolveConditions,
  isoTime,
} from './status';
import { diffTaskDefinitions, renderTaskDefinition } from './taskdef';
import { desiredConfigOf, rememberSteadyComparison, renderingKey, sameByDigest, steadyComparisonOf, sweepSteadyComparisons } from './compare-memo';
import { eventReasonOf } from './observed-print';
import { lagOf, type LagOrCrashLoop } from './crash-loop';
import {
  type Action,
  type CreateServiceAction,
  type DeleteServiceAction,
  type FieldChange,
  type ObservedCluster,
  type ObservedDeployment,
  type ObservedService,
  type ObservedServiceDeployment,
  type ObservedServiceRevision,
  type ObservedState,
  type Phase,
  type Plan,
  type PruneHeld,
  type PruneHold,
  type PruneHolds,
  type RegisterTaskDefinitionAction,
  type ServiceId,
  type ServiceKey,
  type ServiceSpec,
  type ServiceStatus,
  type SpecError,
  type SpecParseResult,
  type TagResourceAction,
  type TaskDefinition,
  type UpdateKind,
  type UpdateServiceAction,
  type UpdateServiceInput,
  serviceId,
} from './types';
import { dict, own, putOwn } from './dict';
import { clusterOf, fleetFacts } from './reconcile/fleet';
import { familyCollisionMessage, familyHolderOf } from './reconcile/family';
import type { FleetFacts, KeyedSpec, PlanInput } from './reconcile/types';

export type { PlanInput, FleetFacts, FamilyClaim, FamilyClaims } from './reconcile/types';

/**
 * Idempotency token for CreateService (docs/ecs-facts.md §3: at most 36 ASCII characters, codes 33..126):
 * `ecsr-` + 31 hex characters of SHA-256 over cluster, service, spec hash and, for a re-creation,
 * the `incarnation` it follows. The same create of the same spec always gets the same token, so a
 * retried create returns the service created by the first attempt instead of failing; a service
 * created again after a delete gets another token, because ECS answers a reused token with the
 * earlier request's result and "you should not reuse the same client token for other API
 * requests" (Amazon ECS API reference, "Ensuring idempotency").
 * @param incarnation identifies the earlier service of this name (its `createdAt`, or the pass
 *   time when only memory says one existed); undefined for a first creation.
 */
export function clientToken(key: ServiceKey, specHash: string, incarnation?: string): string {
  const material = `${key.cluster}\n${key.service}\n${specHash}${incarnation !== undefined ? `\n${incarnation}` : ''}`;
  const digest = createHash('sha256').update(material).digest('hex');
  return `ecsr-${digest.slice(0, 31)}`;
}

/** Changes of the task definition, live -> desired; a family other than ours counts too. */
function taskDefinitionChanges(rendered: TaskDefinition & { family: string }, live: TaskDefinition): FieldChange[] {
  const changes = diffTaskDefinitions(rendered, live);
  if (live.family !== undefined && live.family !== rendered.family && !changes.some((c) => c.field === 'family')) {
    return [{ field: 'family', from: live.family, to: rendered.family }, ...changes];
  }
  return changes;
}

/** A circuit breaker rollback deployment's rolloutStateReason (Amazon ECS Developer Guide, "Deployment circuit breaker"). */
const ROLLING_BACK_REASON = /circuit breaker: rolling back/i;
/** ECS's service event when its circuit breaker starts a rollback. */
const ROLLING_BACK_EVENT = /\) rolling back to deployment /i;
/** How far the rollback event may be from the rollback deployment's createdAt (ms). */
const ROLLBACK_EVENT_WINDOW_MS = 60_000;

/** ECS service deployment statuses of a rolled-back deployment (ServiceDeployment.status). */
const ROLLED_BACK: ReadonlySet<string> = new Set(['ROLLBACK_REQUESTED', 'ROLLBACK_IN_PROGRESS', 'ROLLBACK_SUCCESSFUL', 'ROLLBACK_FAILED']);

/** Appended to every RolloutFailed message. */
const RETRY_HINT = '. The spec is not re-applied until it changes (edit the spec to retry)';

const UPDATE_PURPOSE: Record<UpdateKind, string> = {
  rollout: 'apply changed spec',
  drift: 'correct drift',
  adopt: 'reconcile adopted service',
};

const MAX_CHANGES_IN_MESSAGE = 8;
function changesText(changes: FieldChange[]): string {
  const shown = changes.slice(0, MAX_CHANGES_IN_MESSAGE).map(describeChange).join(', ');
  const more = changes.length - MAX_CHANGES_IN_MESSAGE;
  return more > 0 ? `${shown} and ${more} more` : shown;
}

/** At most this many of an invalid spec's errors go into its status message. */
const MAX_ERRORS_IN_MESSAGE = 20;
/** Each error in a status message is cut to this many characters. */
const MAX_ERROR_CHARS = 400;
/**
 * An invalid spec's errors as one message, bounded (at most 20 errors of 400 characters, about
 * 8 KB; the message is stored twice in the status) so that the status always fits the 32 KiB that
 * the spec size limit leaves for it (docs/spec.md). The rest are counted: "... and N more".
 * The pass summary reports invalid items with the same text.
 */
export function specErrorsText(errors: SpecError[]): string {
  const cut = (t: string) => (t.length > MAX_ERROR_CHARS ? `${t.slice(0, MAX_ERROR_CHARS - 1)}…` : t);
  const shown = errors.slice(0, MAX_ERRORS_IN_MESSAGE).map((e) => cut(`${e.path || '(item)'}: ${e.message}`)).join('; ');
  const more = errors.length - MAX_ERRORS_IN_MESSAGE;
  return more > 0 ? `${shown}; and ${more} more` : shown;
}

function isOwned(svc: ObservedService, options: PlanOptions): boolean {
  return isOwnedBy(svc, options.ownerId);
}

/** The spec's service tags plus our owner tag, sorted by key (CreateService, adoption). */
function serviceTags(spec: ServiceSpec, ownerId: string): { key: string; value: string }[] {
  return Object.entries({ ...spec.tags, [OWNER_TAG_KEY]: ownerId })
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => ({ key, value }));
}

/** INACTIVE counts as absent (docs/ecs-facts.md §3). */
function isGone(svc: ObservedService | undefined): boolean {
  return svc === undefined || svc.status === 'INACTIVE';
}

function primaryDeployment(svc: ObservedService): ObservedDeployment | undefined {
  return svc.deployments.find((d) => d.status === 'PRIMARY');
}

/**
 * rolloutState of a deployment. ECS reports none for deployments without a circuit breaker: then a
 * lone deployment at full count counts as COMPLETED.
 */
function rolloutStateOf(svc: ObservedService, d: ObservedDeployment): ServiceStatus['appliedRolloutState'] {
  if (d.rolloutState) return d.rolloutState;
  return svc.deployments.length === 1 && svc.runningCount >= svc.desiredCount ? 'COMPLETED' : 'IN_PROGRESS';
}

/**
 * Service settings a service revision fixes (Amazon ECS API reference, "ServiceRevision"):
 * changing one starts a deployment (docs/ecs-facts.md §7), which ECS's circuit breaker can roll back.
 */
const REVISION_FIELDS: ReadonlySet<string> = new Set([
  'capacityProviderStrategy',
  'launchType',
  'networkConfiguration',
  'loadBalancers',
  'platformVersion',
  'serviceRegistries',
  'serviceConnectConfiguration',
  'volumeConfigurations',
]);

/** Whether a service change is one of a service revision's settings ({@link REVISION_FIELDS}). */
function isRevisionChange(c: FieldChange): boolean {
  return REVISION_FIELDS.has(c.field.split(/[.[]/)[0]);
}

/**
 * The live service as a deployment of `rev` runs it: the revision's settings over the live
 * service's (a setting the revision does not report keeps the live value).
 */
function asRevision(svc: ObservedService, rev: ObservedServiceRevision): ObservedService {
  const primary = primaryDeployment(svc);
  return {
    ...svc,
    taskDefinition: rev.taskDefinition,
    launchType: rev.launchType,
    capacityProviderStrategy: rev.capacityProviderStrategy,
    platformVersion: rev.platformVersion ?? svc.platformVersion,
    networkConfiguration: rev.networkConfiguration,
    loadBalancers: rev.loadBalancers,
    serviceRegistries: rev.serviceRegistries ?? svc.serviceRegistries,
    deployments: [
      {
        ...(primary ?? { id: '', taskDefinition: rev.taskDefinition, desiredCount: 0, runningCount: 0, pendingCount: 0, failedTasks: 0, createdAt: new Date(0), updatedAt: new Date(0) }),
        status: 'PRIMARY',
        taskDefinition: rev.taskDefinition,
        serviceConnectConfiguration: rev.serviceConnectConfiguration,
        volumeConfigurations: rev.volumeConfigurations,
      },
    ],
  };
}

/** Whether an UpdateService with these fields starts a new deployment (docs/ecs-facts.md §7). */
function startsDeployment(input: Omit<UpdateServiceInput, 'cluster' | 'service'>): boolean {
  return (
    input.taskDefinition !== undefined ||
    input.networkConfiguration !== undefined ||
    input.capacityProviderStrategy !== undefined ||
    input.loadBalancers !== undefined ||
    input.platformVersion !== undefined ||
    input.serviceRegistries !== undefined ||
    input.serviceConnectConfiguration !== undefined ||
    input.volumeConfigurations !== undefined ||
    input.forceNewDeployment === true
  );
}

function compareKeys(a: ServiceKey, b: ServiceKey): number {
  if (a.cluster !== b.cluster) return a.cluster < b.cluster ? -1 : 1;
  if (a.service !== b.service) return a.service < b.service ? -1 : 1;
  return 0;
}

const ACTION_RANK: Record<Action['type'], number> = {
  TagResource: 0,
  RegisterTaskDefinition: 1,
  CreateService: 2,
  UpdateService: 3,
  DeleteService: 4,
};

/** Shared empty results of the steady path (frozen: a push would throw instead of leaking into the next service). */
const NO_CHANGES = Object.freeze([]) as unknown as FieldChange[];
const NO_ACTIONS = Object.freeze([]) as unknown as Action[];
const NO_TAG_CHANGES = Object.freeze([]) as unknown as [string, string][];

/** The status fields that carry memory from pass to pass. */
type Memory = Partial<
  Pick<
    ServiceStatus,
    | 'lastAppliedSpecHash'
    | 'failedSpecHash'
    | 'failedServiceDeploymentArn'
    | 'appliedDeploymentId'
    | 'appliedRolloutState'
    | 'rolloutFromTaskDefinitionArn'
    | 'firstRollout'
    | 'drift'
    | 'driftCorrectedAt'
  >
>;

interface StatusArgs {
  readonly id: ServiceId;
  readonly phase: Phase;
  readonly conditions: ConditionDrafts;
  readonly desiredCount: number;
  readonly runningCount: number;
  readonly pendingCount: number;
  readonly specHash?: string;
  /** The live service the status reflects (ACTIVE or DRAINING), for counts' reason and TD ARN. */
  readonly service?: ObservedService;
  readonly graceSeconds: number;
  readonly lag?: Lag;
  /** Overrides of the remembered memory fields (undefined clears one). */
  readonly memory?: Memory;
}

/** What a delete candidate becomes once the pass's delete budget is applied. */
type DeleteOutcome =
  | { readonly kind: 'delete' }
  | { readonly kind: 'wait' }
  | { readonly kind: 'blocked'; readonly message: string };

interface DeleteCandidate {
  readonly key: ServiceKey;
  readonly cause: 'absent' | 'orphan';
  readonly service: ObservedService;
  readonly specHash?: string;
  readonly statusFor: (outcome: DeleteOutcome) => ServiceStatus;
}

/**
 * What the comparison of an existing service with nothing to change found, besides the remembered
 * status: the status's phase, conditions, memory fields and lag. Kept across passes
 * (`rememberSteadyComparison`) when it depended on nothing else: never changed.
 */
interface SteadyFound {
  readonly phase: Phase;
  readonly conditions: ConditionDrafts;
  readonly memory: Memory;
  readonly lag: LagOrCrashLoop;
}

/** Whether any deployment's rollout FAILED (then the failure rules read the remembered status). */
function anyFailedDeployment(svc: ObservedService): boolean {
  for (const d of svc.deployments) if (d.rolloutState === 'FAILED') return true;
  return false;
}

interface ServicePlan {
  readonly actions: Action[];
  readonly status?: ServiceStatus;
  readonly deleteCandidate?: DeleteCandidate;
}

/** Drafts for the common case: Ready and Progressing tell the same reason. */
function drafts(
  phase: Phase,
  reason: Reason,
  message: string,
  extra?: Pick<ConditionDrafts, 'blocked' | 'incomplete'>,
): ConditionDrafts {
  const ready = phase === 'Converged' ? 'True' : 'False';
  const progressing = phase === 'Progressing' || phase === 'Deleting' ? 'True' : 'False';
  const out: { -readonly [K in keyof ConditionDrafts]: ConditionDrafts[K] } = {
    ready: { status: ready, reason, message },
    progressing: { status: progressing, reason, message },
  };
  if (extra !== undefined && 'blocked' in extra) out.blocked = extra.blocked;
  if (extra !== undefined && 'incomplete' in extra) out.incomplete = extra.incomplete;
  return out;
}

/** Drafts for "cannot tell this pass": Ready and Progressing Unknown, plus Incomplete. */
function unknownDrafts(reason: Reason, message: string): ConditionDrafts {
  return {
    ready: { status: 'Unknown', reason, message },
    progressing: { status: 'Unknown', reason, message },
    incomplete: { reason, message },
  };
}

/**
 * Constructor of status objects: plain objects (their prototype is `Object.prototype`, as a
 * literal's), built with `new` so that V8 sizes them for every field they get after the first
 * few (in-object slack tracking) instead of growing a literal's property store field by field.
 */
function StatusObject(): void {}
StatusObject.prototype = Object.prototype;

class Planner {
  private readonly options: PlanOptions;
  private readonly now: Date;
  /** `now` in milliseconds (the steady comparisons' clock). */
  private readonly nowMs: number;
  private readonly observed: ObservedState;
  private readonly pendingTaskDefinitions: ReadonlySet<string>;

  constructor(private readonly input: PlanInput) {
    this.options = input.options;
    this.now = input.now;
    this.nowMs = input.now.getTime();
    sweepSteadyComparisons(this.nowMs);
    this.observed = input.observed;
    this.pendingTaskDefinitions = new Set(input.observed.taskDefinitionsPending ?? []);
    this.renderKey = renderingKey({ defaults: this.options.defaults, ownerId: this.options.ownerId });
    this.allowListsSet = anyAllowList(this.options.allow);
    this.fleet = fleetFacts(input);
  }

  /** Whether any allow-list is set (else no spec needs checking against them). */
  private readonly allowListsSet: boolean;

  /** The rendering options as a short key of the digest memo (`./compare-memo`). */
  private readonly renderKey: string;

  /** The spec {@link render} renders: that of the service being planned. */
  private renderSpec: ServiceSpec | undefined;
  private renderResult: (TaskDefinition & { family: string }) | undefined;

  /**
   * The task definition rendered for the spec of the service being planned ({@link renderer}),
   * rendered on first use only. One function for the whole pass: no closure per service.
   */
  private readonly render = (): TaskDefinition & { family: string } =>
    (this.renderResult ??= renderTaskDefinition(this.renderSpec as ServiceSpec, { defaults: this.options.defaults, ownerId: this.options.ownerId }));

  /**
   * The task definition rendered for `spec`, rendered on first use only, as a function valid until
   * the next service's (the planner plans one service at a time).
   */
  private renderer(spec: ServiceSpec): () => TaskDefinition & { family: string } {
    if (this.renderSpec !== spec) {
      this.renderSpec = spec;
      this.renderResult = undefined;
    }
    return this.render;
  }

  /** The desired service configuration of a spec (the memo's builder; one function for the pass). */
  private readonly buildDesired = (spec: ServiceSpec): DesiredServiceConfig => desiredServiceConfig(spec, this.options.defaults);

  /**
   * Changes of the live task definition against the one rendered for the spec of `specHash`,
   * hashes first: equal canonical digests are no change, found without
   * rendering or canonicalizing once both digests are remembered; only different ones are diffed.
   */
  private taskDefinitionChanges(specHash: string, rendered: () => TaskDefinition & { family: string }, live: TaskDefinition): FieldChange[] {
    if (sameByDigest(specHash, this.renderKey, rendered, live)) return [];
    return taskDefinitionChanges(rendered(), live);
  }

  /** Services whose deployment history would tell whether their spec was rolled back. */
  private readonly historyWanted: ServiceKey[] = [];

  /** What spans services, computed once for the pass. */
  private readonly fleet: FleetFacts;

  /** Whether a person confirmed pruning `cluster` (`ecsr prune --confirm`, unexpired at `now`). */
  private pruneConfirmed(cluster: string): boolean {
    return this.fleet.pruneConfirmed.has(cluster);
  }

  /** The holds earlier passes set, by cluster (the first of a cluster's wins). */
  private get heldBefore(): ReadonlyMap<string, PruneHold> {
    return this.fleet.heldBefore;
  }
  /** Holds this pass sets, by cluster. */
  private readonly heldNow = new Map<string, PruneHold>();
  /** Per cluster read to the end, its orphans a prune could delete ({@link FleetFacts.orphanCounts}). */
  private get orphanCounts(): ReadonlyMap<string, number> {
    return this.fleet.orphanCounts;
  }

  /** The hold of `cluster` in force for this pass (an earlier pass's, or one this pass set), unless confirmed. */
  private holdOf(cluster: string): PruneHold | undefined {
    if (this.pruneConfirmed(cluster)) return undefined;
    return this.heldBefore.get(cluster) ?? this.heldNow.get(cluster);
  }

  /** Holds `cluster` from this pass on (unless held already or confirmed); returns the hold in force. */
  private hold(cluster: string, reason: string): PruneHold | undefined {
    if (this.pruneConfirmed(cluster)) return undefined;
    const held = this.holdOf(cluster);
    if (held) return held;
    const hold: PruneHold = { cluster, since: isoTime(this.now), reason };
    this.heldNow.set(cluster, hold);
    return hold;
  }

  /** How a person releases the hold of `cluster`, with the count of services still missing when known. */
  private releaseText(cluster: string): string {
    const missing = this.orphanCounts.get(cluster);
    const still = missing !== undefined ? ` (${missing} still ${missing === 1 ? 'has' : 'have'} none)` : '';
    return (
      `prunes in cluster ${cluster} stay held until every owned service there has a spec again${still}: ` +
      `restore the missing spec items, or run \`ecsr prune --confirm ${cluster}\` if the deletion is intended`
    );
  }

  /** The Blocked message of an orphan in a held cluster: since when, why, and how to release it. */
  private heldMessage(hold: PruneHold): string {
    return `prune held since ${hold.since}: a pass found ${hold.reason}, the signature of a wiped or half-restored spec table; ${this.releaseText(hold.cluster)}`;
  }

  /**
   * The holds after this pass: an earlier hold is cleared by a person's confirmation, or when its
   * cluster was read to the end with the whole table and no owned service there lacks a spec;
   * otherwise kept (also when its cluster was not read, or only in part).
   */
  private pruneHolds(): PruneHolds | undefined {
    const cleared: PruneHolds['cleared'] = [];
    const held: PruneHeld[] = [];
    const report = (h: PruneHold): PruneHeld => {
      const missing = this.orphanCounts.get(h.cluster);
      return { ...h, ...(missing !== undefined ? { missing } : {}), release: this.releaseText(h.cluster) };
    };
    for (const h of this.heldBefore.values()) {
      if (this.pruneConfirmed(h.cluster)) cleared.push({ cluster: h.cluster, because: 'confirmed' });
      else if (this.orphanCounts.get(h.cluster) === 0) cleared.push({ cluster: h.cluster, because: 'restored' });
      else held.push(report(h));
    }
    for (const h of this.heldNow.values()) held.push(report(h));
    if (held.length === 0 && cleared.length === 0) return undefined;
    const byCluster = (a: { cluster: string }, b: { cluster: string }) => (a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0);
    return { held: held.sort(byCluster), set: [...this.heldNow.values()].sort(byCluster), cleared: cleared.sort(byCluster) };
  }

  run(): Plan {
    const fleet = this.fleet;
    const clusters = fleet.managedClusters;
    const actions: Action[] = [];
    const statuses: Record<ServiceId, ServiceStatus> = dict();
    const candidates: DeleteCandidate[] = [];

    const collect = (id: ServiceId, p: ServicePlan) => {
      for (const a of p.actions) actions.push(a);
      if (p.status) statuses[id] = p.status;
      if (p.deleteCandidate) candidates.push(p.deleteCandidate);
    };

    let clusterName: string | undefined;
    let cl: ObservedCluster | undefined;
    for (let i = 0; i < fleet.specIds.length; i++) {
      const id = fleet.specIds[i];
      const r = fleet.specResults[i];
      // In this order a cluster's services come together: its observation is looked up once.
      if (cl === undefined || r.key.cluster !== clusterName) {
        clusterName = r.key.cluster;
        cl = this.cluster(clusterName);
      }
      collect(id, r.ok ? this.planSpec(id, r, cl) : this.planInvalid(r.key, r.errors, cl));
    }
    for (const { cluster, names } of fleet.orphans) {
      const cl = this.cluster(cluster);
      for (const name of names) {
        collect(serviceId({ cluster, service: name }), this.planOrphan({ cluster, service: name }, own(cl.services, name) as ObservedService, cl));
      }
    }

    const deletes = this.applyDeleteBudget(candidates, clusters, statuses);
    actions.sort((a, b) => compareKeys(a, b) || ACTION_RANK[a.type] - ACTION_RANK[b.type]);
    deletes.sort(compareKeys);
    const wanted = [...this.historyWanted].sort(compareKeys);
    const pruneHolds = this.pruneHolds();
    return {
      actions: [...actions, ...deletes],
      statuses,
      ...(wanted.length > 0 ? { deploymentHistoryWanted: wanted } : {}),
      ...(pruneHolds ? { pruneHolds } : {}),
    };
  }

  // -------------------------------------------------------------------------------------------
  // Inputs
  // -------------------------------------------------------------------------------------------

  /** The cluster's observation; one the observer did not report counts as incomplete. */
  private cluster(name: string): ObservedCluster {
    return this.fleet.clusters.get(name) ?? clusterOf(this.observed, name);
  }

  private lastRememberedId: ServiceId | undefined;
  private lastRemembered: ServiceStatus | undefined;

  /** The remembered status of `id`; the last one asked is kept (a service asks several times in a row). */
  private remembered(id: ServiceId): ServiceStatus | undefined {
    if (id !== this.lastRememberedId) {
      this.lastRemembered = own(this.input.remembered, id);
      this.lastRememberedId = id;
    }
    return this.lastRemembered;
  }

  // -------------------------------------------------------------------------------------------
  // Status assembly
  // -------------------------------------------------------------------------------------------

  private status(a: StatusArgs): ServiceStatus {
    const rem = this.remembered(a.id);
    const lag = a.lag ?? lagOf(a.desiredCount, a.runningCount, rem, this.now, a.graceSeconds, a.service, this.observed.ecsClockOffsetMs);
    const current = a.service && !isGone(a.service) ? a.service : undefined;
    // While a service is being deleted, its newest ECS event ("has started 3 tasks", "deployment
    // completed") explains nothing: the deletion itself is the reason.
    const deleting = a.phase === 'Deleting' || a.phase === 'Deleted' ? a.conditions.ready.message : undefined;
    // The most specific reason wins while the lag lasts. A stopped task's reason beats a service
    // event; ECS forgets stopped tasks after about an hour, so a remembered stopped-task reason
    // beats a newer but generic event ("deployment failed: tasks failed to start") as long as the
    // service still runs the same task definition (a new revision has new causes).
    const sameRevision = rem?.taskDefinitionArn !== undefined && rem.taskDefinitionArn === current?.taskDefinition;
    const rememberedRootCause =
      lag.laggingSince && sameRevision && rem?.reason !== undefined && isStoppedTaskReason(rem.reason) ? rem.reason : undefined;
    const reason =
      deleting ?? stoppedTaskReason(a.service) ?? rememberedRootCause ?? eventReasonOf(a.service) ?? (lag.laggingSince ? rem?.reason : undefined);
    // Built field by field (no spread, no closure, no copy without the undefined members): the
    // pass's hottest allocation, one per service. Key order is that of the ServiceStatus fields.
    const m = a.memory;
    const out = new (StatusObject as unknown as new () => Record<string, unknown>)();
    out.phase = a.phase;
    out.conditions = resolveConditions(a.conditions, rem?.conditions, this.now);
    if (a.specHash !== undefined) out.specHash = a.specHash;
    // Counts may be undefined at run time: a remembered status from before a field existed.
    if (a.desiredCount !== undefined) out.desiredCount = a.desiredCount;
    if (a.runningCount !== undefined) out.runningCount = a.runningCount;
    if (a.pendingCount !== undefined) out.pendingCount = a.pendingCount;
    if (lag.laggingSince !== undefined) out.laggingSince = lag.laggingSince;
    out.lagBeyondGrace = lag.lagBeyondGrace;
    if (reason !== undefined) out.reason = reason;
    // Each memory field from `a.memory` when it names the field (undefined there clears it), else
    // remembered; written out field by field (named loads and stores, no keyed access).
    const lastAppliedSpecHash = m !== undefined && 'lastAppliedSpecHash' in m ? m.lastAppliedSpecHash : rem?.lastAppliedSpecHash;
    if (lastAppliedSpecHash !== undefined) out.lastAppliedSpecHash = lastAppliedSpecHash;
    const failedSpecHash = m !== undefined && 'failedSpecHash' in m ? m.failedSpecHash : rem?.failedSpecHash;
    if (failedSpecHash !== undefined) out.failedSpecHash = failedSpecHash;
    const failedServiceDeploymentArn =
      m !== undefined && 'failedServiceDeploymentArn' in m ? m.failedServiceDeploymentArn : rem?.failedServiceDeploymentArn;
    if (failedServiceDeploymentArn !== undefined) out.failedServiceDeploymentArn = failedServiceDeploymentArn;
    const appliedDeploymentId = m !== undefined && 'appliedDeploymentId' in m ? m.appliedDeploymentId : rem?.appliedDeploymentId;
    if (appliedDeploymentId !== undefined) out.appliedDeploymentId = appliedDeploymentId;
    const appliedRolloutState = m !== undefined && 'appliedRolloutState' in m ? m.appliedRolloutState : rem?.appliedRolloutState;
    if (appliedRolloutState !== undefined) out.appliedRolloutState = appliedRolloutState;
    const rolloutFrom =
      m !== undefined && 'rolloutFromTaskDefinitionArn' in m ? m.rolloutFromTaskDefinitionArn : rem?.rolloutFromTaskDefinitionArn;
    if (rolloutFrom !== undefined) out.rolloutFromTaskDefinitionArn = rolloutFrom;
    const firstRollout = m !== undefined && 'firstRollout' in m ? m.firstRollout : rem?.firstRollout;
    if (firstRollout !== undefined) out.firstRollout = firstRollout;
    if (current?.taskDefinition !== undefined) out.taskDefinitionArn = current.taskDefinition;
    const drift = m !== undefined && 'drift' in m ? m.drift : rem?.drift;
    if (drift !== undefined) out.drift = drift;
    const driftCorrectedAt = m !== undefined && 'driftCorrectedAt' in m ? m.driftCorrectedAt : rem?.driftCorrectedAt;
    if (driftCorrectedAt !== undefined) out.driftCorrectedAt = driftCorrectedAt;
    if (rem?.lastAction !== undefined) out.lastAction = rem.lastAction;
    const reasons = rememberReason(rem?.reasonsFirstSeen, reason, this.now);
    if (reasons !== undefined) out.reasonsFirstSeen = reasons;
    out.observedAt = isoTime(this.now);
    return out as unknown as ServiceStatus;
  }

  private grace(spec: ServiceSpec | undefined): number {
    return spec?.lagGraceSeconds ?? this.options.defaultLagGraceSeconds;
  }

  /** Counts of a present spec: desired from the spec (live when autoscaled), running from ECS. */
  private specCounts(spec: ServiceSpec, svc: ObservedService | undefined) {
    const live = svc && svc.status === 'ACTIVE' ? svc : undefined;
    const desiredCount = spec.autoscaled
      ? (live?.desiredCount ?? spec.desiredCount ?? AUTOSCALED_INITIAL_DESIRED_COUNT)
      : (spec.desiredCount ?? 0);
    return { desiredCount, runningCount: live?.runningCount ?? 0, pendingCount: live?.pendingCount ?? 0 };
  }

  /** Counts of a service that should not run (absent, orphan) or whose spec is unreadable. */
  private liveCounts(svc: ObservedService | undefined, desired: 'zero' | 'live') {
    const live = svc && !isGone(svc) ? svc : undefined;
    return {
      desiredCount: desired === 'live' && live?.status === 'ACTIVE' ? live.desiredCount : 0,
      runningCount: live?.runningCount ?? 0,
      pendingCount: live?.pendingCount ?? 0,
    };
  }

  // -------------------------------------------------------------------------------------------
  // Specs
  // -------------------------------------------------------------------------------------------

  private planInvalid(key: ServiceKey, errors: SpecError[], cl: ObservedCluster): ServicePlan {
    const id = serviceId(key);
    const svc = own(cl.services, key.service);
    const message = `spec item is invalid, nothing is changed for this service: ${specErrorsText(errors)}`;
    return {
      actions: [],
      status: this.status({
        id,
        phase: 'Invalid',
        conditions: drafts('Invalid', Reason.SpecInvalid, message, { blocked: { reason: Reason.SpecInvalid, message } }),
        ...this.liveCounts(svc, 'live'),
        service: svc,
        graceSeconds: this.grace(undefined),
      }),
    };
  }

  /** @param id `serviceId(r.key)`, made once per pass (a lookup key of several maps). */
  private planSpec(id: ServiceId, r: Extract<SpecParseResult, { ok: true }>, cl: ObservedCluster): ServicePlan {
    const { key, spec, hash } = r;
    if (spec.state === 'absent') return this.planAbsent(r, cl);

    const svc = own(cl.services, key.service);
    const counts = this.specCounts(spec, svc);

    if (!cl.exists) {
      return this.blockedPlan(id, r, counts, svc, Reason.ClusterNotFound, `cluster ${key.cluster} does not exist; the reconciler does not create clusters`);
    }
    if (cl.refused !== undefined && svc === undefined && !cl.described?.has(key.service)) return this.refusedReadPlan(id, r, cl);
    const holder = familyHolderOf(this.fleet.familyClaims, key, spec);
    if (holder) {
      return this.blockedPlan(id, r, counts, svc, 
        Reason.FamilyCollision,
        familyCollisionMessage(key, spec, holder),
      );
    }
    const violations = this.allowListsSet ? allowListViolations(spec, this.options.allow) : undefined;
    if (violations !== undefined && violations.length > 0) {
      return this.blockedPlan(id, r, counts, svc, Reason.NotAllowed, violations.map((v) => describeViolation(v, this.options.allow)).join('; '));
    }
    if ((spec.subnets && spec.subnets.length > 0 ? spec.subnets : this.options.defaults.subnets).length === 0) {
      // effectiveSubnets(spec, defaults) is empty (without its copy).
      return this.blockedPlan(id, r, counts, svc, 
        Reason.NoSubnets,
        'the spec names no subnets and the reconciler has no default subnets (DEFAULT_SUBNETS); set `subnets`',
      );
    }

    const rem = this.remembered(id);
    if (isGone(svc)) {
      // Not seen is not gone, unless ECS answered for this very name this pass (MISSING or
      // INACTIVE): a cluster read in part still vouches for the names it read.
      if (!cl.complete && !cl.described?.has(key.service)) {
        const message = `cluster ${key.cluster} was observed only in part (${cl.error ?? 'partial read'}); service not seen, not created this pass`;
        // Not seen is not gone: keep the last known counts rather than report a lag that a
        // partial read invented.
        const known = rem ? { desiredCount: rem.desiredCount, runningCount: rem.runningCount, pendingCount: rem.pendingCount } : counts;
        return {
          actions: [],
          status: this.status({
            id,
            specHash: hash,
            graceSeconds: this.grace(spec),
            ...known,
            phase: 'Pending',
            conditions: unknownDrafts(Reason.ObservationIncomplete, message),
          }),
        };
      }
      if (rem?.failedSpecHash === hash) return this.failedStatus(r, svc, counts, this.failedMessage(rem), rem.failedServiceDeploymentArn);
      return this.planCreate(r, counts, svc);
    }
    const live = svc as ObservedService;
    if (live.status === 'DRAINING') {
      const message = `a previous service ${key.service} is DRAINING; it will be created once ECS reports it INACTIVE`;
      return {
        actions: [],
        status: this.status({
          id,
          specHash: hash,
          graceSeconds: this.grace(spec),
          ...counts,
          runningCount: 0,
          pendingCount: 0,
          phase: 'Pending',
          conditions: drafts('Pending', Reason.PreviousServiceDraining, message),
        }),
      };
    }
    const owned = isOwned(live, this.options);
    if (!owned && !spec.adopt) return this.blockedPlan(id, r, counts, svc, Reason.NotOwned, this.notOwnedMessage(live));
    const refusal = owned ? undefined : this.adoptionRefusal(live);
    if (refusal) return this.blockedPlan(id, r, counts, svc, refusal.reason, refusal.message);
    return this.planExisting(id, r, live, counts, !owned);
  }

  /** A present spec the reconciler refuses to act on (its status Blocked with `reason`). */
  private blockedPlan(
    id: ServiceId,
    r: Extract<SpecParseResult, { ok: true }>,
    counts: { desiredCount: number; runningCount: number; pendingCount: number },
    svc: ObservedService | undefined,
    reason: Reason,
    message: string,
  ): ServicePlan {
    return {
      actions: [],
      status: this.status({
        id,
        specHash: r.hash,
        graceSeconds: this.grace(r.spec),
        ...counts,
        service: svc,
        phase: 'Blocked',
        conditions: drafts('Blocked', reason, message, { blocked: { reason, message } }),
      }),
    };
  }

  /**
   * The plan of a spec whose service could not be read because the reads were refused
   * (`ObservedCluster.refused`: AccessDenied, or a target role that cannot be assumed): no action,
   * phase `Blocked` with the refusal's reason and AWS's message, `Ready` Unknown (nobody can see the
   * service: never a remembered `Converged`), `Progressing` False. Counts and lag stay as last
   * seen (none for a spec no pass has seen); the hashes stay in memory.
   */
  private refusedReadPlan(id: ServiceId, r: Extract<SpecParseResult, { ok: true }>, cl: ObservedCluster): ServicePlan {
    const refused = cl.refused as { reason: string; message: string };
    const reason = refused.reason as Reason;
    const message = `cluster ${r.key.cluster} cannot be read: ${refused.message}`;
    const rem = this.remembered(id);
    const known = rem
      ? { desiredCount: rem.desiredCount, runningCount: rem.runningCount, pendingCount: rem.pendingCount }
      : { desiredCount: r.spec.state === 'absent' ? 0 : (r.spec.desiredCount ?? 0), runningCount: 0, pendingCount: 0 };
    const lag = rem?.laggingSince !== undefined ? { laggingSince: rem.laggingSince, lagBeyondGrace: rem.lagBeyondGrace === true } : { lagBeyondGrace: false };
    const status = this.status({
      id,
      specHash: r.hash,
      graceSeconds: this.grace(r.spec),
      ...known,
      lag,
      phase: 'Blocked',
      conditions: {
        ready: { status: 'Unknown', reason, message },
        progressing: { status: 'False', reason, message },
        blocked: { reason, message },
      },
    });
    // What people read first (`reason`, the lag alarm's text) is the refusal, not an old ECS event.
    status.reason = message;
    return { actions: [], status };
  }

  /**
   * Why `adopt: true` may not take `svc` (not owned by us), or undefined when it may: a service
   * whose owner tag names another owner id belongs to another reconciler (`OwnedByAnother`); an
   * untagged one needs adoption turned on (`NotAllowed`).
   */
  private adoptionRefusal(svc: ObservedService): { reason: Reason; message: string } | undefined {
    const other = svc.tags[OWNER_TAG_KEY];
    if (other !== undefined) {
      return {
        reason: Reason.OwnedByAnother,
        message:
          `service ${svc.serviceName} is owned by another reconciler (${OWNER_TAG_KEY}=${other}, this one is ${this.options.ownerId}); ` +
          '`adopt: true` never takes a service from another owner: remove the spec, or change the tag by hand if the other reconciler is gone',
      };
    }
    if (this.options.allowAdoption === false) {
      return {
        reason: Reason.NotAllowed,
        message: `adopting service ${svc.serviceName} is not allowed: adoption is turned off (ALLOW_ADOPTION=false; the construct's allowAdoption prop)`,
      };
    }
    return undefined;
  }

  private notOwnedMessage(svc: ObservedService): string {
    const other = svc.tags[OWNER_TAG_KEY];
    return (
      `service ${svc.serviceName} exists without the owner tag ${OWNER_TAG_KEY}=${this.options.ownerId}` +
      (other !== undefined ? ` (its owner tag says ${other})` : '') +
      '; set `adopt: true` in the spec to take it over'
    );
  }

  private planCreate(
    r: Extract<SpecParseResult, { ok: true }>,
    counts: { desiredCount: number; runningCount: number; pendingCount: number },
    previous: ObservedService | undefined,
  ): ServicePlan {
    const { key, spec, hash } = r;
    const rendered = renderTaskDefinition(spec, { defaults: this.options.defaults, ownerId: this.options.ownerId });
    const desired = desiredServiceConfig(spec, this.options.defaults);
    const register: RegisterTaskDefinitionAction = {
      type: 'RegisterTaskDefinition',
      ...key,
      specHash: hash,
      reason: `register task definition ${rendered.family} for the new service`,
      input: rendered,
    };
    const create: CreateServiceAction = {
      type: 'CreateService',
      ...key,
      specHash: hash,
      reason: previous ? `service ${key.service} is INACTIVE; create it from the spec` : `service ${key.service} does not exist; create it`,
      input: {
        cluster: key.cluster,
        serviceName: key.service,
        taskDefinition: rendered.family,
        desiredCount: spec.autoscaled ? (spec.desiredCount ?? AUTOSCALED_INITIAL_DESIRED_COUNT) : spec.desiredCount,
        ...(desired.launchType ? { launchType: desired.launchType } : { capacityProviderStrategy: desired.capacityProviderStrategy }),
        networkConfiguration: desired.networkConfiguration,
        deploymentConfiguration: desired.deploymentConfiguration,
        ...(desired.loadBalancers.length > 0 ? { loadBalancers: desired.loadBalancers } : {}),
        ...createServiceFields(desired),
        tags: serviceTags(spec, this.options.ownerId),
        clientToken: clientToken(key, hash, this.incarnation(key, previous)),
      },
    };
    const message = `CreateService planned for spec ${hash}`;
    return {
      actions: [register, create],
      status: this.status({
        id: serviceId(key),
        specHash: hash,
        graceSeconds: this.grace(spec),
        ...counts,
        desiredCount: create.input.desiredCount ?? counts.desiredCount,
        runningCount: 0,
        pendingCount: 0,
        phase: 'Progressing',
        conditions: drafts('Progressing', Reason.Creating, message),
        memory: {
          lastAppliedSpecHash: hash,
          failedSpecHash: undefined,
          failedServiceDeploymentArn: undefined,
          appliedDeploymentId: undefined,
          appliedRolloutState: undefined,
          // A first deployment has no COMPLETED deployment for ECS to roll back to.
          rolloutFromTaskDefinitionArn: undefined,
          firstRollout: true,
        },
      }),
    };
  }

  /**
   * What tells this creation from an earlier service of the same name, for the clientToken: the
   * INACTIVE service's `createdAt` when ECS still describes it, else the pass time when memory
   * says this item's service was deleted before (or its cluster was gone); undefined for a first
   * creation.
   */
  private incarnation(key: ServiceKey, previous: ObservedService | undefined): string | undefined {
    if (previous) return (previous.createdAt ?? this.now).toISOString();
    const rem = this.remembered(serviceId(key));
    // A cluster deleted and re-created took this service with it: the earlier creation's token
    // must not answer for the new one (ECS returns a reused token's earlier result).
    const clusterWasGone = rem?.conditions.some((c) => c.reason === Reason.ClusterNotFound) === true;
    const deletedBefore =
      rem !== undefined && (rem.phase === 'Deleted' || rem.phase === 'Deleting' || rem.lastAction?.type === 'DeleteService' || clusterWasGone);
    return deletedBefore ? this.now.toISOString() : undefined;
  }

  /** The remembered failure message, without the retry hint (added again by failedStatus). */
  private failedMessage(rem: ServiceStatus | undefined): string {
    const c = rem?.conditions.find((x) => x.reason === Reason.RolloutFailed);
    return c?.message.replace(RETRY_HINT, '') ?? 'the rollout of this spec failed in an earlier pass';
  }

  private failedStatus(
    r: Extract<SpecParseResult, { ok: true }>,
    svc: ObservedService | undefined,
    counts: { desiredCount: number; runningCount: number; pendingCount: number },
    message: string,
    serviceDeploymentArn?: string,
  ): ServicePlan {
    const full = `${message.replace(/\.+$/, '')}${RETRY_HINT}`;
    return {
      actions: [],
      status: this.status({
        id: serviceId(r.key),
        specHash: r.hash,
        graceSeconds: this.grace(r.spec),
        ...counts,
        service: svc,
        phase: 'Degraded',
        conditions: drafts('Degraded', Reason.RolloutFailed, full),
        memory: { failedSpecHash: r.hash, failedServiceDeploymentArn: serviceDeploymentArn },
      }),
    };
  }

  /**
   * The deployment of the current spec hash ended FAILED (docs/ecs-facts.md §4): a PRIMARY or ACTIVE
   * deployment with rolloutState FAILED whose task definition is ours (unless memory says another
   * hash failed and this one was never applied: a retry), or a rollback seen after
   * the fact (same hash applied, the deployment we applied never COMPLETED, a new PRIMARY, the
   * live task definition no longer the desired one but the one the rollout started from,
   * `rolloutFromTaskDefinitionArn`), or, read from ECS itself whatever the status remembers, a
   * service deployment history whose newest deployment of the rendered task definition was rolled
   * back ({@link rolledBackInHistory}). Returns the message (and the rollback's service
   * deployment ARN when the history showed one), or undefined.
   */
  private detectFailedRollout(
    hash: string,
    svc: ObservedService,
    rendered: () => TaskDefinition & { family: string },
    tdChanges: FieldChange[] | undefined,
    desired: DesiredServiceConfig,
    revisionChanges: FieldChange[],
    rem: ServiceStatus | undefined,
  ): { message: string; serviceDeploymentArn?: string } | undefined {
    if (rem?.failedSpecHash === hash) return { message: this.failedMessage(rem), serviceDeploymentArn: rem.failedServiceDeploymentArn };
    // A spec that would start a deployment (another task definition, or other service revision
    // settings: subnets, security groups, load balancers...) may be one ECS already rolled back.
    const wantsDeployment = (tdChanges !== undefined && tdChanges.length > 0) || revisionChanges.length > 0;
    // The steady case, decided without a closure: nothing to deploy and no FAILED deployment leave
    // every rule below without a case (each needs one or the other).
    if (!wantsDeployment) {
      let anyFailed = false;
      for (const d of svc.deployments) if (d.rolloutState === 'FAILED') anyFailed = true;
      if (!anyFailed) return undefined;
    }
    return this.failedRolloutOf(hash, svc, rendered, tdChanges, desired, revisionChanges, rem, wantsDeployment);
  }

  /**
   * {@link detectFailedRollout} past its steady case (a method of its own: its closure's context
   * is then allocated only for the services that get here).
   */
  private failedRolloutOf(
    hash: string,
    svc: ObservedService,
    rendered: () => TaskDefinition & { family: string },
    tdChanges: FieldChange[] | undefined,
    desired: DesiredServiceConfig,
    revisionChanges: FieldChange[],
    rem: ServiceStatus | undefined,
    wantsDeployment: boolean,
  ): { message: string; serviceDeploymentArn?: string } | undefined {
    const rolledBack = wantsDeployment ? this.rolledBackInHistory(hash, svc, rendered, desired, revisionChanges, rem) : undefined;
    const appliedThis = rem?.lastAppliedSpecHash === hash;
    const ours = (d: ObservedDeployment): boolean => {
      if (appliedThis && rem?.appliedDeploymentId === d.id) return true;
      const described = own(this.observed.taskDefinitions, d.taskDefinition);
      return described !== undefined && this.taskDefinitionChanges(hash, rendered, described).length === 0;
    };
    // A FAILED deployment counts against this hash, unless memory says another hash failed: then
    // that failure explains the deployment, and this new hash is the user's retry ("edit the spec
    // to retry"). Without such memory (e.g. a status write lost after a rollout) the safe reading
    // stays: never re-apply what ECS reports FAILED.
    const mayBlame = appliedThis || rem?.failedSpecHash === undefined;
    const failed = mayBlame
      ? svc.deployments.find((d) => (d.status === 'PRIMARY' || d.status === 'ACTIVE') && d.rolloutState === 'FAILED' && ours(d))
      : undefined;
    if (failed) {
      return {
        message: `deployment ${failed.id} of ${failed.taskDefinition} FAILED: ${failed.rolloutStateReason ?? 'no reason given'}`,
        serviceDeploymentArn: rolledBack?.serviceDeploymentArn,
      };
    }
    const primary = primaryDeployment(svc);
    if (
      appliedThis &&
      rem?.appliedRolloutState !== 'COMPLETED' &&
      primary !== undefined &&
      primary.id !== rem?.appliedDeploymentId &&
      tdChanges !== undefined &&
      tdChanges.length > 0 &&
      // ECS rolls back to the task definition it ran before (none for a first rollout); any other
      // one was set by a person.
      rem?.firstRollout !== true &&
      (rem?.rolloutFromTaskDefinitionArn === undefined || rem.rolloutFromTaskDefinitionArn === svc.taskDefinition)
    ) {
      return {
        message:
          `ECS rolled back to ${svc.taskDefinition} (PRIMARY deployment ${primary.id})` +
          (primary.rolloutStateReason ? `: ${primary.rolloutStateReason}` : ''),
        serviceDeploymentArn: rolledBack?.serviceDeploymentArn,
      };
    }
    if (rolledBack) {
      const sd = rolledBack;
      return {
        message:
          `ECS rolled back service deployment ${sd.serviceDeploymentArn} of ${sd.targetTaskDefinition} (${sd.status}` +
          `${sd.statusReason ? `: ${sd.statusReason}` : ''}); the service runs ${svc.taskDefinition}`,
        serviceDeploymentArn: sd.serviceDeploymentArn,
      };
    }
    if (wantsDeployment && svc.serviceDeploymentsError !== undefined) return this.unexplainedRollback(svc, rem);
    return undefined;
  }

  /**
   * With the deployment history unreadable (`serviceDeploymentsError`), what DescribeServices
   * shows must do: when the service's PRIMARY deployment is one ECS's circuit breaker started as a
   * rollback (its `rolloutStateReason`, or a "rolling back to deployment" event at its creation)
   * and no status written since then explains it (memory of a failure, hence of a retry, is older
   * than the rollback or absent), the spec that would start a deployment counts as failed: it may
   * be the very spec rolled back, and re-applying it would start a doomed deployment every pass.
   * The cost: with the status lost too, a new spec waits until the history or the status can be
   * written again.
   */
  private unexplainedRollback(svc: ObservedService, rem: ServiceStatus | undefined): { message: string } | undefined {
    const primary = primaryDeployment(svc);
    if (!primary) return undefined;
    const startedAt = primary.createdAt.getTime();
    const byReason = ROLLING_BACK_REASON.test(primary.rolloutStateReason ?? '');
    const event = svc.events.find((e) => ROLLING_BACK_EVENT.test(e.message) && Math.abs(e.createdAt.getTime() - startedAt) <= ROLLBACK_EVENT_WINDOW_MS);
    if (!byReason && !event) return undefined;
    const rememberedAt = rem ? Date.parse(rem.observedAt) : NaN;
    const rollbackAt = startedAt - (this.observed.ecsClockOffsetMs ?? 0);
    if (Number.isFinite(rememberedAt) && rememberedAt > rollbackAt) return undefined;
    return {
      message:
        `ECS's circuit breaker rolled this service back (PRIMARY deployment ${primary.id} of ${svc.taskDefinition}, ` +
        `${event ? `event "${event.message}"` : primary.rolloutStateReason}) and its deployment history cannot be read ` +
        `(${svc.serviceDeploymentsError}); this spec, which would start another deployment, is not applied, so as not to ` +
        'start a doomed one again (the reconciler needs ecs:ListServiceDeployments and ecs:DescribeServiceRevisions to tell which spec failed)',
    };
  }

  /**
   * The newest service deployment of the service's history (ECS's own record, read whatever the
   * status remembers) whose target service revision is the one this spec asks for (its task
   * definition the rendered one, and its revision settings, {@link REVISION_FIELDS}, the spec's;
   * a history entry whose revision was not described is judged by its task definition alone, and
   * only for a spec that differs from the live service in its task definition alone), when that
   * deployment was rolled back (ROLLBACK_REQUESTED, _IN_PROGRESS, _SUCCESSFUL or _FAILED);
   * undefined otherwise. A newer deployment of the same task definition (a retry that has not
   * failed) hides older rollbacks. A rollback memory already blamed on another spec hash
   * (`failedServiceDeploymentArn`) makes this hash the user's retry, as does a failure remembered
   * from before the history was read.
   */
  private rolledBackInHistory(
    hash: string,
    svc: ObservedService,
    rendered: () => TaskDefinition & { family: string },
    desired: DesiredServiceConfig,
    revisionChanges: FieldChange[],
    rem: ServiceStatus | undefined,
  ): ObservedServiceDeployment | undefined {
    const latest = svc.serviceDeployments?.find((sd) => {
      const described = sd.targetTaskDefinition !== undefined ? own(this.observed.taskDefinitions, sd.targetTaskDefinition) : undefined;
      if (described === undefined || this.taskDefinitionChanges(hash, rendered, described).length > 0) return false;
      if (sd.targetRevision === undefined) return revisionChanges.length === 0;
      const diff = diffService(desired, asRevision(svc, sd.targetRevision));
      return !diff.changes.some(isRevisionChange) && !diff.unsendable.some(isRevisionChange);
    });
    if (latest === undefined || !ROLLED_BACK.has(latest.status)) return undefined;
    const otherFailure = rem?.failedSpecHash !== undefined && rem.failedSpecHash !== hash;
    if (otherFailure && (rem.failedServiceDeploymentArn === undefined || rem.failedServiceDeploymentArn === latest.serviceDeploymentArn)) {
      return undefined;
    }
    return latest;
  }

  private planExisting(
    id: ServiceId,
    r: Extract<SpecParseResult, { ok: true }>,
    svc: ObservedService,
    counts: { desiredCount: number; runningCount: number; pendingCount: number },
    adopting: boolean,
  ): ServicePlan {
    const { key, spec, hash } = r;
    const rem = this.remembered(id);
    const liveTd = own(this.observed.taskDefinitions, svc.taskDefinition);
    // Steady since the last comparison (same spec hash, rendering options, live revision and live
    // service print): what that comparison found holds again, and only the status is assembled.
    // Not when memory says this spec hash failed: that decides before any comparison.
    // Not when its stopped tasks were read: they are not in the print, and a crash loop is told by them.
    if (!adopting && liveTd !== undefined && rem?.failedSpecHash !== hash && svc.stoppedTasks === undefined) {
      const known = steadyComparisonOf<SteadyFound>(id, hash, this.renderKey, liveTd, svc, this.nowMs);
      if (known !== undefined) return this.steadyPlan(id, r, svc, counts, known.found);
    }
    const rendered = this.renderer(spec);
    const allTdChanges = liveTd ? this.taskDefinitionChanges(hash, rendered, liveTd) : undefined;

    const desired = desiredConfigOf(hash, this.renderKey, this.buildDesired, spec);
    const fullDiff = diffService(desired, svc);
    const revisionChanges =
      fullDiff.changes.length === 0 && fullDiff.unsendable.length === 0
        ? NO_CHANGES
        : [...fullDiff.changes, ...fullDiff.unsendable].filter(isRevisionChange);
    const wantsDeployment = allTdChanges !== undefined && (allTdChanges.length > 0 || revisionChanges.length > 0);
    if (svc.serviceDeployments === undefined && svc.serviceDeploymentsError === undefined && wantsDeployment && rem?.failedSpecHash !== hash) {
      this.historyWanted.push(key);
    }
    const failure = this.detectFailedRollout(hash, svc, rendered, allTdChanges, desired, revisionChanges, rem);
    if (failure !== undefined) return this.failedStatus(r, svc, counts, failure.message, failure.serviceDeploymentArn);

    // Under the CODE_DEPLOY or EXTERNAL deployment controller, what ECS does not let UpdateService
    // change is observed and never sent: it is reported as NotUpdatable instead.
    // (Under ECS's own controller everything may be sent: no list to build.)
    let tdChanges = allTdChanges;
    const serviceDiff = { input: fullDiff.input, changes: fullDiff.changes };
    let held = fullDiff.unsendable;
    const controller = svc.deploymentController?.type;
    if (controller !== undefined && controller !== 'ECS') {
      const limited = limitToDeploymentController(controller, [...(allTdChanges ?? []), ...fullDiff.changes], fullDiff.input);
      serviceDiff.input = limited.input;
      // Nothing held back (nothing to change): the diffs stand as they are.
      if (limited.held.length > 0) {
        tdChanges = allTdChanges?.filter((c) => limited.changes.includes(c));
        serviceDiff.changes = fullDiff.changes.filter((c) => limited.changes.includes(c));
      }
      held = fullDiff.unsendable.length === 0 ? limited.held : [...fullDiff.unsendable, ...limited.held];
    }
    const notUpdatable =
      held.length > 0
        ? {
            reason: Reason.NotUpdatable,
            message: `not corrected, because ${held[0].why}: ${changesText(held)}`,
          }
        : undefined;
    const kind: UpdateKind = adopting ? 'adopt' : rem?.lastAppliedSpecHash !== hash ? 'rollout' : 'drift';
    const primary = primaryDeployment(svc);
    const retry =
      kind !== 'drift' && primary?.rolloutState === 'FAILED' && tdChanges?.length === 0 && !startsDeployment(serviceDiff.input);
    const changes =
      (tdChanges !== undefined && tdChanges.length > 0) || serviceDiff.changes.length > 0 || retry
        ? [...(tdChanges ?? []), ...serviceDiff.changes]
        : NO_CHANGES;
    if (retry && primary !== undefined) {
      // A FAILED deployment launches no tasks (docs/ecs-facts.md §4) and an UpdateService without a new
      // task definition starts none: a retry of the same task definition must force one.
      changes.push({ field: 'deployment', from: `${primary.id} FAILED`, to: 'new deployment (forceNewDeployment)' });
    }
    const incomplete = liveTd
      ? undefined
      : {
          reason: Reason.TaskDefinitionNotDescribed,
          message: this.pendingTaskDefinitions.has(svc.taskDefinition)
            ? `task definition ${svc.taskDefinition} is not described yet (this pass ran out of time to observe; a later pass compares it); it is left alone this pass`
            : `task definition ${svc.taskDefinition} could not be described; it is left alone this pass`,
        };

    // Service tags from the spec (docs/ecs-facts.md §7: tags are not an UpdateService field; TagResource
    // adds or overwrites them). Tags a person added by hand are left alone; a tag removed from the
    // spec is not removed from the service (the reconciler does not remember which keys it set).
    let tagChanges: [string, string][] = NO_TAG_CHANGES;
    if (!adopting) {
      for (const k in spec.tags) {
        if (!Object.hasOwn(spec.tags, k)) continue;
        const v = own(spec.tags, k) as string;
        if (own(svc.tags, k) === v) continue;
        if (tagChanges === NO_TAG_CHANGES) tagChanges = [];
        tagChanges.push([k, v]);
      }
      if (tagChanges.length > 1) tagChanges.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    }

    if (adopting || tagChanges.length > 0 || (tdChanges !== undefined && tdChanges.length > 0) || changes.length > 0) {
      return this.actingPlan(id, r, svc, counts, adopting, rem, rendered, liveTd, tdChanges, serviceDiff.input, changes, tagChanges, kind, retry, primary, incomplete, notUpdatable);
    }
    const unchanged = this.unchangedFound(r, svc, counts, rem, tdChanges, primary, incomplete, notUpdatable);
    if (
      !adopting &&
      liveTd !== undefined &&
      allTdChanges !== undefined &&
      allTdChanges.length === 0 &&
      fullDiff.changes.length === 0 &&
      fullDiff.unsendable.length === 0 &&
      held.length === 0 &&
      unchanged.lag.laggingSince === undefined &&
      !anyFailedDeployment(svc)
    ) {
      // Every decision above followed from the spec hash, the rendering options, the live revision
      // and the live service alone (no FAILED deployment: no failure rule read the remembered status).
      const tagKeys = [OWNER_TAG_KEY];
      for (const k in spec.tags) if (Object.hasOwn(spec.tags, k) && k !== OWNER_TAG_KEY) tagKeys.push(k);
      rememberSteadyComparison<SteadyFound>(id, hash, this.renderKey, liveTd, svc, tagKeys, unchanged, this.nowMs);
    }
    return this.steadyPlan(id, r, svc, counts, unchanged);
  }

  /** The plan of a service with nothing to change: no action, the status of `found`. */
  private steadyPlan(
    id: ServiceId,
    r: Extract<SpecParseResult, { ok: true }>,
    svc: ObservedService,
    counts: { desiredCount: number; runningCount: number; pendingCount: number },
    found: SteadyFound,
  ): ServicePlan {
    return {
      actions: NO_ACTIONS,
      status: this.status({
        id,
        specHash: r.hash,
        graceSeconds: this.grace(r.spec),
        service: svc,
        desiredCount: counts.desiredCount,
        runningCount: counts.runningCount,
        pendingCount: counts.pendingCount,
        lag: found.lag,
        phase: found.phase,
        conditions: found.conditions,
        memory: found.memory,
      }),
    };
  }

  /**
   * The plan of an existing service with something to do (adopt, tag, register, update), and its
   * status: Progressing.
   */
  private actingPlan(
    id: ServiceId,
    r: Extract<SpecParseResult, { ok: true }>,
    svc: ObservedService,
    counts: { desiredCount: number; runningCount: number; pendingCount: number },
    adopting: boolean,
    rem: ServiceStatus | undefined,
    rendered: () => TaskDefinition & { family: string },
    liveTd: TaskDefinition | undefined,
    tdChanges: FieldChange[] | undefined,
    serviceInput: Omit<UpdateServiceInput, 'cluster' | 'service'>,
    changes: FieldChange[],
    tagChanges: [string, string][],
    kind: UpdateKind,
    retry: boolean,
    primary: ObservedDeployment | undefined,
    incomplete: ConditionDrafts['incomplete'],
    notUpdatable: ConditionDrafts['blocked'],
  ): ServicePlan {
    const { key, spec, hash } = r;
    const base = {
      id,
      specHash: hash,
      graceSeconds: this.grace(spec),
      service: svc,
      desiredCount: counts.desiredCount,
      runningCount: counts.runningCount,
      pendingCount: counts.pendingCount,
    };
    const actions: Action[] = [];
    if (adopting) {
      const tag: TagResourceAction = {
        type: 'TagResource',
        ...key,
        specHash: hash,
        reason: `adopt service ${key.service}: add the owner tag ${OWNER_TAG_KEY}=${this.options.ownerId}`,
        resourceArn: svc.serviceArn,
        tags: serviceTags(spec, this.options.ownerId),
      };
      actions.push(tag);
    }
    const tagLines = tagChanges.map(([k, v]) => describeChange({ field: `tags.${k}`, from: own(svc.tags, k) ?? '(none)', to: v }));
    const tagText = tagLines.join(', ');
    if (tagChanges.length > 0) {
      actions.push({
        type: 'TagResource',
        ...key,
        specHash: hash,
        reason: `service tags differ: ${tagText}`,
        resourceArn: svc.serviceArn,
        tags: tagChanges.map(([k, value]) => ({ key: k, value })),
      });
    }
    const input: UpdateServiceInput = {
      cluster: key.cluster,
      service: key.service,
      ...serviceInput,
      ...(retry ? { forceNewDeployment: true } : {}),
    };
    if (tdChanges && tdChanges.length > 0) {
      actions.push({
        type: 'RegisterTaskDefinition',
        ...key,
        specHash: hash,
        reason: `task definition differs: ${changesText(tdChanges)}`,
        input: rendered(),
      });
      input.taskDefinition = rendered().family;
    }
    if (changes.length > 0) {
      const update: UpdateServiceAction = {
        type: 'UpdateService',
        ...key,
        specHash: hash,
        kind,
        reason: `${UPDATE_PURPOSE[kind]}: ${changesText(changes)}`,
        input,
        changes,
      };
      actions.push(update);
    }

    const observedDeployment: Memory =
      tdChanges !== undefined && tdChanges.length === 0 && primary && primary.taskDefinition === svc.taskDefinition
        ? { appliedDeploymentId: primary.id, appliedRolloutState: rolloutStateOf(svc, primary) }
        : {};

    {
      const newDeployment = startsDeployment(input);
      const reason = adopting ? Reason.Adopting : kind === 'drift' ? Reason.DriftCorrected : Reason.SpecApplied;
      const message =
        changes.length > 0
          ? `UpdateService planned (${kind}): ${changesText(changes)}${tagText ? `; TagResource: ${tagText}` : ''}`
          : adopting
            ? `TagResource planned: adopting service ${key.service}`
            : `TagResource planned (${kind}): ${tagText}`;
      return {
        actions,
        status: this.status({
          ...base,
          phase: 'Progressing',
          conditions: drafts('Progressing', reason, message, {
            ...(incomplete ? { incomplete } : {}),
            ...(notUpdatable ? { blocked: notUpdatable } : {}),
          }),
          memory: {
            // Only a spec applied whole counts as applied: with the live task definition unknown,
            // its half of a changed spec is still to come, as a rollout (not as drift) next pass.
            lastAppliedSpecHash: liveTd || kind === 'drift' ? hash : rem?.lastAppliedSpecHash,
            failedSpecHash: undefined,
            failedServiceDeploymentArn: undefined,
            ...(newDeployment
              ? {
                  appliedDeploymentId: undefined,
                  appliedRolloutState: undefined,
                  ...this.rolloutFrom(svc, rem),
                }
              : observedDeployment),
            ...(kind === 'drift' && (changes.length > 0 || tagChanges.length > 0)
              ? {
                  drift: [
                    ...changes.map(describeChange),
                    ...tagLines,
                  ],
                  driftCorrectedAt: this.now.toISOString(),
                }
              : {}),
          },
        }),
      };
    }

  }

  /**
   * What the status of an existing service with nothing to change says (almost every service,
   * every pass): it follows what ECS reports.
   */
  private unchangedFound(
    r: Extract<SpecParseResult, { ok: true }>,
    svc: ObservedService,
    counts: { desiredCount: number; runningCount: number; pendingCount: number },
    rem: ServiceStatus | undefined,
    tdChanges: FieldChange[] | undefined,
    primary: ObservedDeployment | undefined,
    incomplete: ConditionDrafts['incomplete'],
    notUpdatable: ConditionDrafts['blocked'],
  ): SteadyFound {
    const { spec, hash } = r;
    const memory: Memory =
      tdChanges === undefined
        ? {}
        : primary && primary.taskDefinition === svc.taskDefinition
          ? {
              lastAppliedSpecHash: hash,
              failedSpecHash: undefined,
              failedServiceDeploymentArn: undefined,
              appliedDeploymentId: primary.id,
              appliedRolloutState: rolloutStateOf(svc, primary),
            }
          : { lastAppliedSpecHash: hash, failedSpecHash: undefined, failedServiceDeploymentArn: undefined };
    const lag = lagOf(counts.desiredCount, counts.runningCount, rem, this.now, this.grace(spec), svc, this.observed.ecsClockOffsetMs);
    let inRollout = primary?.rolloutState === 'IN_PROGRESS';
    if (!inRollout) {
      for (const d of svc.deployments) {
        if (d.status === 'ACTIVE' && d.rolloutState !== 'FAILED') {
          inRollout = true;
          break;
        }
      }
    }
    let phase: Phase;
    let reason: Reason;
    let message: string;
    const countText = `runningCount ${counts.runningCount}, pendingCount ${counts.pendingCount}, desiredCount ${counts.desiredCount}`;
    if (lag.crashLoop !== undefined) {
      // Tasks that keep stopping: a pass that catches one RUNNING is no recovery (./crash-loop.ts).
      const c = lag.crashLoop;
      phase = 'Degraded';
      reason = Reason.CrashLoop;
      message =
        `tasks keep stopping: ${c.stops} tasks of ${svc.taskDefinition} failed in the last ${c.windowSeconds} s (newest: ${c.reason}); ` +
        `${countText}, lagging since ${lag.laggingSince}${lag.lagBeyondGrace ? ', beyond the lag grace' : ''}`;
    } else if (counts.runningCount < counts.desiredCount && lag.lagBeyondGrace) {
      // A rollout that never ends (no circuit breaker) must not hide a lag beyond grace.
      const during = inRollout ? ` (deployment ${primary?.id ?? '?'} in progress)` : '';
      phase = 'Degraded';
      reason = Reason.LagBeyondGrace;
      message = `${countText}, lagging since ${lag.laggingSince}${during}`;
    } else if (inRollout) {
      phase = 'Progressing';
      reason = Reason.RolloutInProgress;
      message = `deployment ${primary?.id ?? '?'} in progress; ${countText}`;
    } else if (counts.runningCount < counts.desiredCount) {
      phase = 'Progressing';
      reason = Reason.TasksLagging;
      message = `${countText}, lagging since ${lag.laggingSince}`;
    } else if (counts.runningCount > counts.desiredCount || counts.pendingCount > 0) {
      phase = 'Progressing';
      reason = Reason.TasksSettling;
      message = countText;
    } else if (notUpdatable) {
      phase = 'Blocked';
      reason = Reason.NotUpdatable;
      message = notUpdatable.message;
    } else {
      phase = 'Converged';
      reason = Reason.ServiceConverged;
      message = countText;
    }
    let extra: { incomplete?: ConditionDrafts['incomplete']; blocked?: ConditionDrafts['blocked'] } | undefined;
    if (incomplete) (extra ??= {}).incomplete = incomplete;
    if (notUpdatable) (extra ??= {}).blocked = notUpdatable;
    return { phase, conditions: drafts(phase, reason, message, extra), memory, lag };
  }

  /**
   * The task definition a rollout planned now starts from, as ECS's circuit breaker would roll
   * back to it: the live one, unless the rollout applied before had not COMPLETED (then ECS's
   * last COMPLETED deployment is still the one that rollout started from).
   */
  private rolloutFrom(svc: ObservedService, rem: ServiceStatus | undefined): Pick<Memory, 'rolloutFromTaskDefinitionArn' | 'firstRollout'> {
    if (rem?.appliedRolloutState !== 'COMPLETED') {
      if (rem?.firstRollout === true) return { rolloutFromTaskDefinitionArn: undefined, firstRollout: true };
      if (rem?.rolloutFromTaskDefinitionArn !== undefined) return { rolloutFromTaskDefinitionArn: rem.rolloutFromTaskDefinitionArn, firstRollout: undefined };
    }
    return { rolloutFromTaskDefinitionArn: svc.taskDefinition, firstRollout: undefined };
  }

  // -------------------------------------------------------------------------------------------
  // Deletes
  // -------------------------------------------------------------------------------------------

  private planAbsent(r: Extract<SpecParseResult, { ok: true }>, cl: ObservedCluster): ServicePlan {
    const { key, spec, hash } = r;
    const id = serviceId(key);
    const svc = own(cl.services, key.service);
    const base = { id, specHash: hash, graceSeconds: this.grace(spec), service: svc, ...this.liveCounts(svc, 'zero') };
    const simple = (phase: Phase, reason: Reason, message: string, extra: Pick<ConditionDrafts, 'blocked' | 'incomplete'> = {}) => ({
      actions: [],
      status: this.status({ ...base, phase, conditions: drafts(phase, reason, message, extra) }),
    });

    if (!cl.exists) return simple('Deleted', Reason.ServiceDeleted, `cluster ${key.cluster} does not exist`);
    if (cl.refused !== undefined && svc === undefined && !cl.described?.has(key.service)) return this.refusedReadPlan(id, r, cl);
    if (svc === undefined && !cl.complete && !cl.described?.has(key.service)) {
      const message = `cluster ${key.cluster} was observed only in part; cannot tell whether ${key.service} exists`;
      return { actions: [], status: this.status({ ...base, phase: 'Pending', conditions: unknownDrafts(Reason.ObservationIncomplete, message) }) };
    }
    if (isGone(svc)) return simple('Deleted', Reason.ServiceDeleted, `service ${key.service} is ${svc ? 'INACTIVE' : 'gone'}`);
    const live = svc as ObservedService;
    if (live.status === 'DRAINING') return simple('Deleting', Reason.Deleting, `service ${key.service} is DRAINING`);
    const owned = isOwned(live, this.options);
    if (!owned && !spec.adopt) {
      const message = this.notOwnedMessage(live);
      return simple('Blocked', Reason.NotOwned, message, { blocked: { reason: Reason.NotOwned, message } });
    }
    const refusal = owned ? undefined : this.adoptionRefusal(live);
    if (refusal) return simple('Blocked', refusal.reason, refusal.message, { blocked: refusal });
    if (!this.input.specsComplete) {
      const message = 'the spec table was read only in part this pass; no service is deleted';
      return { actions: [], status: this.status({ ...base, phase: 'Pending', conditions: unknownDrafts(Reason.SpecsIncomplete, message) }) };
    }
    if (!cl.complete) {
      const message = `cluster ${key.cluster} was observed only in part (${cl.error ?? 'partial read'}); no service is deleted`;
      return { actions: [], status: this.status({ ...base, phase: 'Pending', conditions: unknownDrafts(Reason.ObservationIncomplete, message) }) };
    }
    const actions: Action[] = [];
    if (!owned) {
      actions.push({
        type: 'TagResource',
        ...key,
        specHash: hash,
        reason: `adopt service ${key.service} to delete it (state: absent)`,
        resourceArn: live.serviceArn,
        tags: [{ key: OWNER_TAG_KEY, value: this.options.ownerId }],
      });
    }
    return {
      actions,
      deleteCandidate: {
        key,
        cause: 'absent',
        service: live,
        specHash: hash,
        statusFor: (outcome) => this.deleteStatus(base, outcome, 'the spec says state: absent', { lastAppliedSpecHash: hash }),
      },
    };
  }

  private planOrphan(key: ServiceKey, svc: ObservedService, cl: ObservedCluster): ServicePlan {
    if (isGone(svc) || !isOwned(svc, this.options)) return { actions: [] };
    const id = serviceId(key);
    const base = { id, graceSeconds: this.grace(undefined), service: svc, ...this.liveCounts(svc, 'zero') };
    if (svc.status === 'DRAINING') {
      return {
        actions: [],
        status: this.status({ ...base, phase: 'Deleting', conditions: drafts('Deleting', Reason.Deleting, `service ${key.service} is DRAINING`) }),
      };
    }
    const pending = (reason: Reason, message: string): ServicePlan => ({
      actions: [],
      status: this.status({ ...base, phase: 'Pending', conditions: unknownDrafts(reason, message) }),
    });
    const blocked = (reason: Reason, message: string): ServicePlan => ({
      actions: [],
      status: this.status({ ...base, phase: 'Blocked', conditions: drafts('Blocked', reason, message, { blocked: { reason, message } }) }),
    });
    if (!this.input.specsComplete) {
      return pending(Reason.SpecsIncomplete, 'owned service without a spec, but the spec table was read only in part: not pruned');
    }
    if (!cl.complete) {
      return pending(Reason.ObservationIncomplete, `cluster ${key.cluster} was observed only in part: not pruned`);
    }
    if (this.options.prune && !this.fleet.clustersWithSpecs.has(key.cluster) && !this.pruneConfirmed(key.cluster)) {
      const owned = this.orphanCounts.get(key.cluster) ?? 0;
      this.hold(key.cluster, `no spec at all for cluster ${key.cluster}, where this reconciler owns ${owned} service${owned === 1 ? '' : 's'}`);
      const message =
        `prune blocked: the spec table holds no spec at all for cluster ${key.cluster}, where this reconciler owns services ` +
        '(an empty, replaced or restored table?). Nothing is pruned there until a person confirms: restore the specs, ' +
        `or run \`ecsr prune --confirm ${key.cluster}\` to let passes delete the owned services without a spec for an hour. ` +
        `The hold stays while specs come back: ${this.releaseText(key.cluster)}`;
      return blocked(Reason.PruneBlocked, message);
    }
    const held = this.options.prune ? this.holdOf(key.cluster) : undefined;
    if (held) {
      const message = this.heldMessage(held);
      return blocked(Reason.PruneBlocked, message);
    }
    if (!this.options.prune) {
      const message = 'owned service without a spec; prune is disabled (PRUNE=false), so it is kept';
      return blocked(Reason.PruneDisabled, message);
    }
    return {
      actions: [],
      deleteCandidate: {
        key,
        cause: 'orphan',
        service: svc,
        statusFor: (outcome) => this.deleteStatus(base, outcome, 'owned service without a spec (prune)', {}),
      },
    };
  }

  private deleteStatus(
    base: Omit<StatusArgs, 'phase' | 'conditions'>,
    outcome: DeleteOutcome,
    why: string,
    memory: Memory,
  ): ServiceStatus {
    if (outcome.kind === 'delete') {
      const message = `DeleteService planned: ${why}`;
      return this.status({ ...base, phase: 'Deleting', conditions: drafts('Deleting', Reason.Deleting, message), memory });
    }
    if (outcome.kind === 'wait') {
      const message = `delete waits for a later pass: maxDeletesPerPass (${this.options.maxDeletesPerPass}) reached; ${why}`;
      return this.status({ ...base, phase: 'Pending', conditions: drafts('Pending', Reason.DeleteLimitReached, message) });
    }
    const message = outcome.message;
    return this.status({
      ...base,
      phase: 'Blocked',
      conditions: drafts('Blocked', Reason.PruneBlocked, message, { blocked: { reason: Reason.PruneBlocked, message } }),
    });
  }

  /**
   * Applies the pass's delete budget: explicit `state: absent` deletes first (intent, limited
   * only by `maxDeletesPerPass`, in cluster/service order), then orphan prunes, unless the prune
   * safety valve holds them all back. Writes the candidates' statuses into `statuses`.
   */
  private applyDeleteBudget(
    candidates: DeleteCandidate[],
    clusters: readonly string[],
    statuses: Record<ServiceId, ServiceStatus>,
  ): DeleteServiceAction[] {
    const max = this.options.maxDeletesPerPass;
    let budget = max;
    const out: DeleteServiceAction[] = [];
    const take = (c: DeleteCandidate) => {
      out.push({
        type: 'DeleteService',
        ...c.key,
        ...(c.specHash !== undefined ? { specHash: c.specHash } : {}),
        reason: c.cause === 'absent' ? 'the spec says state: absent' : 'owned service without a spec (prune)',
        cause: c.cause,
        scaleToZero: c.service.desiredCount > 0,
      });
      putOwn(statuses, serviceId(c.key), c.statusFor({ kind: 'delete' }));
      budget -= 1;
    };
    const sorted = [...candidates].sort((a, b) => compareKeys(a.key, b.key));
    for (const c of sorted.filter((x) => x.cause === 'absent')) {
      if (budget > 0) take(c);
      else putOwn(statuses, serviceId(c.key), c.statusFor({ kind: 'wait' }));
    }

    const orphans = sorted.filter((x) => x.cause === 'orphan');
    if (orphans.length === 0) return out;
    const reasons: string[] = [];
    const unkeyed = this.fleet.unkeyedInvalid;
    if (unkeyed > 0) {
      // An invalid item protects its service, but one without a usable key could be any of them.
      reasons.push(`${unkeyed} invalid spec item(s) have no usable cluster/service key and may belong to any of them`);
    }
    // A person's confirmation (`ecsr prune --confirm`) turns the count valve into a rate: the
    // cluster's orphans are deleted maxDeletesPerPass a pass instead of not at all.
    // What each cluster's hold will say it found: these two rules are the signature of a wiped or
    // half-restored table; an item without a usable key is not (it holds this pass only).
    const holdReasons = new Map<string, string>();
    const unconfirmedOrphans = orphans.filter((o) => !this.pruneConfirmed(o.key.cluster));
    const unconfirmed = unconfirmedOrphans.length;
    if (unconfirmed > max) {
      reasons.push(`${unconfirmed} owned services have no spec, more than maxDeletesPerPass (${max})`);
      for (const o of unconfirmedOrphans) {
        holdReasons.set(o.key.cluster, `${unconfirmed} owned services without a spec in one pass, more than maxDeletesPerPass (${max})`);
      }
    }
    for (const cluster of clusters) {
      const cl = this.cluster(cluster);
      const owned = Object.values(cl.services).filter((s) => s.status === 'ACTIVE' && isOwned(s, this.options)).length;
      const missing = orphans.filter((o) => o.key.cluster === cluster).length;
      if (owned > 4 && missing > owned / 2 && !this.pruneConfirmed(cluster)) {
        reasons.push(`${missing} of the ${owned} owned services of cluster ${cluster} have no spec (more than half)`);
        holdReasons.set(cluster, `${missing} of the ${owned} owned services of cluster ${cluster} without a spec (more than half)`);
      }
    }
    if (reasons.length > 0) {
      const heldClusters = [...holdReasons.keys()].sort();
      for (const cluster of heldClusters) this.hold(cluster, holdReasons.get(cluster) as string);
      const holdNote =
        heldClusters.length > 0
          ? ` The hold stays while specs come back: ${heldClusters.map((c) => this.releaseText(c)).join('; ')}`
          : '';
      const message =
        `prune blocked: ${reasons.join('; ')}. Nothing is pruned this pass; restore the missing spec items, ` +
        `or delete the services yourself, or confirm with \`ecsr prune --confirm CLUSTER\` if the deletion is intended.${holdNote}`;
      for (const c of orphans) putOwn(statuses, serviceId(c.key), c.statusFor({ kind: 'blocked', message }));
      return out;
    }
    for (const c of orphans) {
      if (budget > 0) take(c);
      else putOwn(statuses, serviceId(c.key), c.statusFor({ kind: 'wait' }));
    }
    return out;
  }
}

/**
 * Plans one reconcile pass. Pure and deterministic: no clock, no I/O.
 *
 * @returns `actions` ordered by cluster, service (within a service TagResource, then
 *   RegisterTaskDefinition, then CreateService/UpdateService), with every DeleteService last; and
 *   one `status` per service the planner knows of: every spec with a usable key, and every owned
 *   service without a spec in a managed cluster (managed = named by a spec or in
 *   `options.managedClusters`).
 * CreateService/UpdateService name the task definition by family when a RegisterTaskDefinition
 * for that family precedes them; the actuator substitutes the ARN it registered or reused.
 * The planned status sets `lastAppliedSpecHash` for a planned create/rollout; the pass reverts it
 * when the action fails, and sets `lastAction`.
 */
export function plan(input: PlanInput): Plan {
  return new Planner(input).run();
}

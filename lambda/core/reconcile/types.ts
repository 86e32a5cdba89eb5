/**
 * The shapes of the planner's one-key unit: what the planner reads ({@link PlanInput}), what spans
 * services and is computed once per pass ({@link FleetFacts}), what one key's judgement may read
 * ({@link ServiceView}, {@link PlanContext}) and what it gives back ({@link Decision}).
 */
import type { PlanOptions } from '../options';
import type {
  Action,
  JudgedVersion,
  ObservedCluster,
  ObservedService,
  ObservedState,
  Phase,
  PruneHold,
  ServiceId,
  ServiceKey,
  ServiceStatus,
  SpecParseResult,
} from '../types';
import type { Digests } from '../compare-cache';
import type { ConditionDrafts, Lag } from '../status';

/** Everything the planner looks at; nothing else. */
export interface PlanInput {
  /** Every item read (valid or not). Items without a usable key cannot get a status. */
  readonly specs: SpecParseResult[];
  /** False when the spec read failed or was partial: then nothing is deleted. */
  readonly specsComplete: boolean;
  /** Per managed cluster (each with complete/exists) + described task definitions by ARN. */
  readonly observed: ObservedState;
  /** Status from the previous pass (the planner's memory), by `cluster/service`. */
  readonly remembered: Record<ServiceId, ServiceStatus>;
  readonly options: PlanOptions;
  readonly now: Date;
  /**
   * Clusters whose prune a person confirmed (`ecsr prune --confirm CLUSTER`, still valid at
   * `now`): there the planner prunes even when the table holds no spec at all for the cluster, or
   * when more than half of its owned services lost their spec. `maxDeletesPerPass` still applies.
   */
  readonly pruneConfirmedClusters?: readonly string[];
  /**
   * Prune holds earlier passes set (read back from the spec table), by cluster: their clusters'
   * orphans are not pruned ({@link PruneHold}). The plan says which to keep, set and clear.
   */
  readonly pruneHolds?: readonly PruneHold[];
  /**
   * The task definition families that a spec holds against others ({@link FamilyClaims}), when
   * the caller looked them up itself (a pass that read only some keys' items cannot see every
   * spec). Absent: computed from `specs` ({@link familyClaimsOf}), which is right only when
   * `specs` is the whole table.
   */
  readonly familyClaims?: FamilyClaims;
  /**
   * The runtime's in-process digests (`CompareCache`, `../compare-cache.ts`: the observer's
   * stamps, the task definitions' digests). Absent: every digest is computed when needed; the plan
   * is the same.
   */
  readonly cache?: Digests;
}

/** A spec parse result with a usable key. */
export type KeyedSpec = SpecParseResult & { readonly key: ServiceKey };
/** A valid spec parse result with a usable key. */
export type ValidSpec = Extract<SpecParseResult, { ok: true }>;
/** An invalid spec parse result with a usable key. */
export type InvalidSpec = Extract<SpecParseResult, { ok: false }> & { readonly key: ServiceKey };

/** The spec that keeps a task definition family which two or more specs render. */
export interface FamilyClaim {
  /** The key of the spec that keeps the family. */
  readonly key: ServiceKey;
  /** Whether it keeps the family because its service runs a revision of it (else: first by key). */
  readonly running: boolean;
}

/**
 * Task definition family -> the spec that keeps it. A valid `present` spec whose effective family
 * (`family`, else `<cluster>-<service>`) has a claim by another key is refused (`FamilyCollision`):
 * two services sharing a family would overwrite each other's revisions. A family without an entry
 * is free.
 */
export type FamilyClaims = ReadonlyMap<string, FamilyClaim>;

/** One managed cluster's live services that no spec item names, sorted by name. */
export interface ClusterOrphans {
  readonly cluster: string;
  readonly names: readonly string[];
}

/**
 * What spans services, computed once per pass from the {@link PlanInput} ({@link fleetFacts}) and
 * handed to every key's judgement: which keys there are and in what order, the family claims, the
 * orphans and their counts, the prune confirmations and the holds read back.
 */
export interface FleetFacts {
  /** Whether the whole spec table was read (else nothing is deleted). */
  readonly specsComplete: boolean;
  /** `serviceId` of each keyed spec, one per key, by cluster then service. */
  readonly specIds: readonly ServiceId[];
  /** The spec of each of {@link specIds} (an invalid item wins over a valid one of the same key). */
  readonly specResults: readonly KeyedSpec[];
  /** Clusters that at least one spec item (valid or not) names. */
  readonly clustersWithSpecs: ReadonlySet<string>;
  /** Clusters named in the options or by a spec item, sorted. */
  readonly managedClusters: readonly string[];
  /** Each managed cluster's observation; one the observer did not report counts as incomplete. */
  readonly clusters: ReadonlyMap<string, ObservedCluster>;
  readonly familyClaims: FamilyClaims;
  /** Per managed cluster (sorted), its live services without a spec item. */
  readonly orphans: readonly ClusterOrphans[];
  /**
   * Per cluster read to the end (with the whole spec table read): its owned services without a
   * spec item that a prune could delete (ACTIVE, not DRAINING). Zero releases the cluster's hold.
   */
  readonly orphanCounts: ReadonlyMap<string, number>;
  /** Clusters whose prune a person confirmed ({@link PlanInput.pruneConfirmedClusters}). */
  readonly pruneConfirmed: ReadonlySet<string>;
  /** The holds earlier passes set, by cluster (the first of a cluster's wins). */
  readonly heldBefore: ReadonlyMap<string, PruneHold>;
  /** Invalid spec items without a usable key: any service might be theirs. */
  readonly unkeyedInvalid: number;
}

/** Everything one key's judgement reads besides its {@link ServiceView}: the same for every key. */
export interface PlanContext {
  readonly options: PlanOptions;
  readonly now: Date;
  /** `now` in milliseconds. */
  readonly nowMs: number;
  /** Described task definitions by ARN, the pending ones and ECS's clock offset. */
  readonly observed: ObservedState;
  /** Task definition ARNs in use that this pass had no time to describe. */
  readonly pendingTaskDefinitions: ReadonlySet<string>;
  /** `now` as an ISO 8601 text, made once per plan (every status carries it). */
  readonly nowIso: string;
  /** The rendering options as a short key (`renderingKey` of `../compare-cache`), recorded by a steady judgement. */
  readonly renderKey: string;
  /** The runtime's digests, or ones computed when asked ({@link PlanInput.cache}). */
  readonly digests: Digests;
  /** Whether any allow-list is set (else no spec needs checking against them). */
  readonly allowListsSet: boolean;
  readonly fleet: FleetFacts;
}

/** Everything one key's decision may read about that key. */
export interface ServiceView {
  readonly key: ServiceKey;
  /** `serviceId(key)`, made once per pass. */
  readonly id: ServiceId;
  /** The key's spec item; absent for an orphan (a live service without one). */
  readonly spec?: KeyedSpec;
  /** The observation of the key's cluster (complete or not, refused, the names ECS answered for). */
  readonly cluster: ObservedCluster;
  /** The live service of that name, if ECS reported one (ACTIVE, DRAINING or INACTIVE). */
  readonly service?: ObservedService;
  /** The status the previous pass wrote (the planner's memory). */
  readonly remembered?: ServiceStatus;
}

/** The status fields that carry memory from pass to pass. */
export type Memory = Partial<
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

/** Tasks of a service: desired, running, pending. */
export interface Counts {
  readonly desiredCount: number;
  readonly runningCount: number;
  readonly pendingCount: number;
}

/** What a status is built from, besides the remembered status. */
export interface StatusArgs extends Counts {
  readonly phase: Phase;
  readonly conditions: ConditionDrafts;
  readonly specHash?: string;
  /** The live service the status reflects (ACTIVE or DRAINING), for counts' reason and TD ARN. */
  readonly service?: ObservedService;
  readonly graceSeconds: number;
  readonly lag?: Lag;
  /** Overrides of the remembered memory fields (undefined clears one). */
  readonly memory?: Memory;
  /** What a steady judgement depended on (`ServiceStatus.judged`); absent after any other. */
  readonly judged?: JudgedVersion;
}

/** What a delete candidate becomes once the pass's delete budget is applied. */
export type DeleteOutcome =
  | { readonly kind: 'delete' }
  | { readonly kind: 'wait' }
  | { readonly kind: 'blocked'; readonly message: string };

/** A service one key's judgement would delete, if the pass's delete budget lets it. */
export interface DeleteCandidate {
  readonly key: ServiceKey;
  readonly cause: 'absent' | 'orphan';
  readonly service: ObservedService;
  readonly specHash?: string;
  /** The status's fields whatever the outcome (counts, hash, grace, the live service). */
  readonly base: Omit<StatusArgs, 'phase' | 'conditions'>;
  readonly remembered?: ServiceStatus;
  /** Why it is deleted, in words. */
  readonly why: string;
  /** Memory the status records when the delete is planned. */
  readonly memory: Memory;
}

/** A prune hold one key's judgement sets (unless its cluster is held already or confirmed). */
export interface HoldRequest {
  readonly cluster: string;
  readonly reason: string;
}

/** One key's decision: its actions, its status, and what the fleet fold must weigh. */
export interface Decision {
  /** Actions for this key, in no particular order (the plan sorts them). */
  readonly actions: readonly Action[];
  /** Absent for a live service that is neither ours nor named by a spec, or a delete candidate. */
  readonly status?: ServiceStatus;
  /** A delete the fleet's delete budget decides on (it then writes the status). */
  readonly deleteCandidate?: DeleteCandidate;
  /** Whether the pass should read the service's deployment history and plan again. */
  readonly wantsDeploymentHistory?: boolean;
  /** A prune hold this key's judgement found reason to set. */
  readonly hold?: HoldRequest;
}

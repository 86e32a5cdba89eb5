/**
 * The status model: what the planner writes to each spec item's `status` attribute, and what it
 * reads back next pass as its memory.
 *
 * Modelled on the Kubernetes deployment controller (`pkg/controller/deployment/progress.go`):
 * a phase, a few conditions with fixed reason constants, the spec hash the status reflects
 * (observed generation), and `lastTransitionTime` kept while a condition's status does not change.
 * Every function here is pure; time comes in as `now`.
 */
import { canonicallyEqual } from './canonical-json';
import type {
  Condition,
  ConditionStatus,
  ObservedService,
  Phase,
  ServiceStatus,
} from './types';
import { hasOwnKey, own } from './dict';

/** Condition types. `Ready` and `Progressing` are always present; the others only when true. */
export const ConditionType = {
  /** True when running = desired, the rollout is complete and nothing is left to correct. */
  Ready: 'Ready',
  /** True while the reconciler or ECS works towards the spec (create, rollout, drift, lag). */
  Progressing: 'Progressing',
  /** Present (status True) when the reconciler refuses to write to this service. */
  Blocked: 'Blocked',
  /** Present (status True) when part of the observation was missing; the plan was cautious. */
  Incomplete: 'Incomplete',
  /** Present (status True) when ECS refused an action for this spec; the message is ECS's. */
  ActionRejected: 'ActionRejected',
} as const;
export type ConditionType = (typeof ConditionType)[keyof typeof ConditionType];

/**
 * Reason constants of conditions. docs/status.md ("Conditions and reasons") says what to do about
 * each; tests and dashboards match on these strings, so never rename one.
 */
export const Reason = {
  // Blocked: no writes to the service until a person acts.
  /** The spec item failed validation; the message lists `path: message` per error. */
  SpecInvalid: 'SpecInvalid',
  /** A service of this name exists without our owner tag; set `adopt: true` to take it over. */
  NotOwned: 'NotOwned',
  /**
   * The service's owner tag names another reconciler's owner id: `adopt: true` never takes it
   * (no writes). Give the other reconciler's spec up, or retag the service by hand.
   */
  OwnedByAnother: 'OwnedByAnother',
  /**
   * A value the spec references (task role, execution role, image registry, ...) is outside the
   * configured allow-list, or the spec adopts while adoption is turned off.
   */
  NotAllowed: 'NotAllowed',
  /**
   * Another spec renders the same task definition family (`${cluster}-${service}`, e.g. `a-b` + `c`
   * and `a` + `b-c`); the spec that owns the family keeps it, this one is refused.
   */
  FamilyCollision: 'FamilyCollision',
  /** No subnets in the spec and none configured as defaults. */
  NoSubnets: 'NoSubnets',
  /**
   * ECS manages the service itself (Express Mode: `resourceManagementType: ECS`, with its load
   * balancer, target groups and scaling): the reconciler never writes to it, whatever the spec.
   */
  ManagedByEcs: 'ManagedByEcs',
  /**
   * The service runs on capacity the spec cannot express (the MANAGED_INSTANCES launch type, or a
   * capacity provider other than FARGATE and FARGATE_SPOT, such as a Managed Instances one): it is
   * decoded and reported, never changed.
   */
  UnmanagedCapacity: 'UnmanagedCapacity',
  /** The spec's cluster does not exist (the reconciler never creates clusters). */
  ClusterNotFound: 'ClusterNotFound',
  /**
   * IAM refused the reads of the spec's cluster (AccessDenied to ListServices or DescribeServices):
   * nobody can tell what runs there, so nothing is written to it. The message is AWS's. Give the
   * reconciler's role read access to the cluster (the construct's `clusters`), or move the spec.
   */
  ClusterAccessDenied: 'ClusterAccessDenied',
  /**
   * The spec's fan-out target cannot be reached: its role cannot be assumed (the message is STS's).
   * Nothing is read or written in that account until it can.
   */
  TargetUnreachable: 'TargetUnreachable',
  /** Prune safety valve: too many services would be deleted because their specs are missing. */
  PruneBlocked: 'PruneBlocked',
  /** The reconciler runs with prune disabled: owned services without a spec are kept. */
  PruneDisabled: 'PruneDisabled',
  /**
   * Differences ECS does not let UpdateService correct: fields of a service under the CODE_DEPLOY
   * or EXTERNAL deployment controller (deploymentController), or a strategy back to a launch type.
   */
  NotUpdatable: 'NotUpdatable',
  /**
   * Observe-only mode (the spec's `observeOnly`, or its cluster in `OBSERVE_ONLY_CLUSTERS`): the
   * service differs from its spec (or should be created or deleted) and nothing is changed. The
   * message and the status's `observedDrift` say what a pass would do; turn observe-only off to
   * let it.
   */
  ObserveOnly: 'ObserveOnly',

  /**
   * ECS refused the create/update because the cluster lacks a capacity provider the spec's
   * strategy names (FARGATE / FARGATE_SPOT not associated); the message names it and the fix.
   * Condition `ActionRejected`; retried every pass, so it heals once the provider is added.
   */
  CapacityProviderMissing: 'CapacityProviderMissing',
  /**
   * IAM refused an action (AccessDeniedException): the reconciler's role may not make this call
   * for this service. Condition `ActionRejected`; retried with backoff, at once when the spec
   * changes or a person runs `ecsr reconcile`.
   */
  AccessDenied: 'AccessDenied',
  /**
   * ECS refused an action as invalid (InvalidParameterException, ClientException), e.g. "Fargate
   * requires task definition to have execution role ARN to support log driver awslogs". Condition
   * `ActionRejected` with ECS's message; retried with backoff, at once when the spec changes.
   */
  EcsRejected: 'EcsRejected',

  // Waiting: the reconciler will act by itself in a later pass.
  /** An earlier service of this name is DRAINING; creation follows once it is INACTIVE. */
  PreviousServiceDraining: 'PreviousServiceDraining',
  /** The cluster's services could not all be listed/described this pass. */
  ObservationIncomplete: 'ObservationIncomplete',
  /** The spec table could not be read completely this pass: no deletes. */
  SpecsIncomplete: 'SpecsIncomplete',
  /**
   * The live task definition could not be described, or not yet (a new container describes a
   * large fleet over several passes); it is left alone this pass.
   */
  TaskDefinitionNotDescribed: 'TaskDefinitionNotDescribed',
  /** `maxDeletesPerPass` reached; this delete waits for the next pass. */
  DeleteLimitReached: 'DeleteLimitReached',

  // Progress.
  /** CreateService planned. */
  Creating: 'Creating',
  /** A changed spec is being applied (UpdateService planned, kind `rollout`). */
  SpecApplied: 'SpecApplied',
  /** The live service differed from an unchanged spec; UpdateService planned (kind `drift`). */
  DriftCorrected: 'DriftCorrected',
  /** TagResource planned: the service is being adopted. */
  Adopting: 'Adopting',
  /** ECS reports a deployment in progress. */
  RolloutInProgress: 'RolloutInProgress',
  /** runningCount < desiredCount, within the lag grace. */
  TasksLagging: 'TasksLagging',
  /** runningCount or pendingCount above desired (tasks being stopped or started). */
  TasksSettling: 'TasksSettling',
  /** DeleteService planned, or the service is DRAINING. */
  Deleting: 'Deleting',

  // Terminal or steady.
  /** running = desired and the deployment is complete. */
  ServiceConverged: 'ServiceConverged',
  /** The deployment of the current spec hash FAILED (circuit breaker); not re-applied. */
  RolloutFailed: 'RolloutFailed',
  /** runningCount < desiredCount for longer than the lag grace. */
  LagBeyondGrace: 'LagBeyondGrace',
  /**
   * Tasks of the current revision keep stopping as failures within the lag grace (a crash loop,
   * `./crash-loop.ts`): Degraded, and lagging even while a task happens to be RUNNING.
   */
  CrashLoop: 'CrashLoop',
  /** The service is INACTIVE or gone (spec `state: absent`). */
  ServiceDeleted: 'ServiceDeleted',
} as const;
export type Reason = (typeof Reason)[keyof typeof Reason];

/** A condition before its `lastTransitionTime` is decided. */
export interface ConditionDraft {
  readonly status: ConditionStatus;
  readonly reason: Reason;
  readonly message: string;
}

/** The conditions of a status, by type; `blocked` and `incomplete` only when they hold. */
export interface ConditionDrafts {
  readonly ready: ConditionDraft;
  readonly progressing: ConditionDraft;
  readonly blocked?: Omit<ConditionDraft, 'status'>;
  readonly incomplete?: Omit<ConditionDraft, 'status'>;
}

/**
 * Turns drafts into conditions in a fixed order (Ready, Progressing, Blocked, Incomplete),
 * keeping `lastTransitionTime` from the remembered condition of the same type when its status did
 * not change, else `nowIso` (Kubernetes API conventions, "Typical status properties").
 * A condition equal to the remembered one (same type, status, reason and message, and nothing
 * else) is the remembered object itself, and when every condition is, so is the array: a steady
 * service allocates no condition (statuses are never changed in place; the pass copies one to
 * change it).
 */
export function resolveConditions(drafts: ConditionDrafts, remembered: Condition[] | undefined, nowIso: string): Condition[] {
  const at = nowIso;
  const ready = condition(ConditionType.Ready, drafts.ready.status, drafts.ready.reason, drafts.ready.message, remembered, at);
  const progressing = condition(ConditionType.Progressing, drafts.progressing.status, drafts.progressing.reason, drafts.progressing.message, remembered, at);
  const blocked = drafts.blocked ? condition(ConditionType.Blocked, 'True', drafts.blocked.reason, drafts.blocked.message, remembered, at) : undefined;
  const incomplete = drafts.incomplete
    ? condition(ConditionType.Incomplete, 'True', drafts.incomplete.reason, drafts.incomplete.message, remembered, at)
    : undefined;
  const count = 2 + (blocked ? 1 : 0) + (incomplete ? 1 : 0);
  if (
    remembered !== undefined &&
    Array.isArray(remembered) &&
    remembered.length === count &&
    remembered[0] === ready &&
    remembered[1] === progressing &&
    (blocked === undefined || remembered[2] === blocked) &&
    (incomplete === undefined || remembered[count - 1] === incomplete) &&
    Object.getPrototypeOf(remembered) === Array.prototype
  ) {
    return remembered;
  }
  const out: Condition[] = [ready, progressing];
  if (blocked) out.push(blocked);
  if (incomplete) out.push(incomplete);
  return out;
}

/** The members of a condition in the order this module writes them: a remembered condition with exactly these is reused. */
const CONDITION_MEMBERS = ['type', 'status', 'reason', 'message', 'lastTransitionTime'] as const;

/**
 * One condition, its `lastTransitionTime` kept from the remembered one of its type when the status
 * is the same; the remembered object itself when it already says all this (and holds nothing else).
 */
function condition(
  type: ConditionType,
  status: ConditionStatus,
  reason: Reason,
  message: string,
  remembered: Condition[] | undefined,
  at: string,
): Condition {
  let prev: Condition | undefined;
  if (remembered !== undefined) {
    for (const c of remembered) {
      if (c.type === type) {
        prev = c;
        break;
      }
    }
  }
  if (prev !== undefined && prev.status === status && prev.reason === reason && prev.message === message && reusable(prev)) return prev;
  return { type, status, reason, message, lastTransitionTime: prev && prev.status === status ? prev.lastTransitionTime : at };
}

/**
 * Whether a remembered condition can stand for a new one with its type, status, reason and message:
 * a plain object whose own members are exactly the five of a condition, in the order a new one
 * has them, `lastTransitionTime` a string (what the status store reads back).
 */
function reusable(c: Condition): boolean {
  if (typeof c.lastTransitionTime !== 'string' || Object.getPrototypeOf(c) !== Object.prototype) return false;
  let i = 0;
  for (const k in c) {
    if (i >= CONDITION_MEMBERS.length || k !== CONDITION_MEMBERS[i]) return false;
    i += 1;
  }
  return i === CONDITION_MEMBERS.length;
}

/** Lag of one service at `now`. */
export interface Lag {
  /** ISO time since when running < desired; undefined when not lagging. */
  readonly laggingSince?: string;
  /** True when `now - laggingSince` exceeds the grace (seconds). */
  readonly lagBeyondGrace: boolean;
}

/** The lag of a service that does not lag: one shared object, never changed (the steady path's). */
const NOT_LAGGING: Lag = Object.freeze({ lagBeyondGrace: false });

/**
 * Lag bookkeeping: a service lags while `runningCount < desiredCount` (tasks). `laggingSince` is
 * kept from memory while the lag lasts, set to `now` when it starts and cleared when it ends.
 * @param graceSeconds lag tolerated before `lagBeyondGrace` (seconds, >= 0).
 * @param ecsClockOffsetMs ECS's clock minus the reconciler's (ms; `ObservedState.ecsClockOffsetMs`).
 */
export function computeLag(
  desiredCount: number,
  runningCount: number,
  remembered: ServiceStatus | undefined,
  now: Date,
  graceSeconds: number,
  service?: ObservedService,
  ecsClockOffsetMs = 0,
): Lag {
  if (runningCount >= desiredCount) return NOT_LAGGING;
  const rememberedMs = remembered?.laggingSince !== undefined ? Date.parse(remembered.laggingSince) : NaN;
  // ECS's timestamps are ECS's clock: compared with ECS's now, then moved to the reconciler's time
  // (`laggingSince` and the grace are the reconciler's), so a skewed clock neither starts nor hides a lag.
  const derivedMs = lagStartFromEcs(service, new Date(now.getTime() + ecsClockOffsetMs)) - ecsClockOffsetMs;
  // The remembered start wins; ECS's records fill in only when the status was lost.
  const sinceMs = !Number.isNaN(rememberedMs) ? rememberedMs : !Number.isNaN(derivedMs) ? derivedMs : now.getTime();
  const elapsedSeconds = (now.getTime() - sinceMs) / 1000;
  return { laggingSince: new Date(sinceMs).toISOString(), lagBeyondGrace: elapsedSeconds > graceSeconds };
}

/**
 * When ECS's own records say the current lag began, in epoch ms (NaN when they say nothing): the
 * PRIMARY deployment's `createdAt` while it has not COMPLETED (its tasks have not all run since it
 * started), and the `stoppedAt` of stopped tasks since the service last reported a steady state
 * (each stop took a task away). The earliest of these counts. This keeps `laggingSince` when the
 * remembered status is lost (a PutItem of the whole item without `status`), so the lag grace and
 * the lag alarm do not start over.
 */
export function lagStartFromEcs(service: ObservedService | undefined, now: Date): number {
  if (!service) return NaN;
  const times: number[] = [];
  const primary = service.deployments.find((d) => d.status === 'PRIMARY');
  if (primary && primary.rolloutState !== 'COMPLETED') times.push(primary.createdAt.getTime());
  const steady = service.events.filter((e) => STEADY_STATE.test(e.message)).map((e) => e.createdAt.getTime());
  const lastSteady = steady.length > 0 ? Math.max(...steady) : -Infinity;
  for (const t of service.stoppedTasks ?? []) {
    const at = t.stoppedAt?.getTime();
    if (at !== undefined && at > lastSteady) times.push(at);
  }
  const valid = times.filter((t) => Number.isFinite(t) && t <= now.getTime());
  return valid.length > 0 ? Math.min(...valid) : NaN;
}

const STEADY_STATE = /has reached a steady state/i;

/**
 * The best available explanation of a service's state (docs/ecs-facts.md §5): the latest STOPPED task's
 * `stopCode: stoppedReason` (with the first container reason, if any), else the newest service
 * event that is not a steady-state message. Undefined when ECS says nothing useful.
 */
export function bestReason(service: ObservedService | undefined): string | undefined {
  return stoppedTaskReason(service) ?? eventReason(service);
}

/** The latest STOPPED task's `stopCode: stoppedReason` (and container reason), if ECS has one. */
export function stoppedTaskReason(service: ObservedService | undefined): string | undefined {
  if (!service || service.stoppedTasks === undefined || service.stoppedTasks.length === 0) return undefined;
  const stopped = [...service.stoppedTasks].sort(
    (a, b) => (b.stoppedAt?.getTime() ?? 0) - (a.stoppedAt?.getTime() ?? 0) || (a.taskArn < b.taskArn ? -1 : 1),
  );
  for (const t of stopped) {
    const container = t.containers.find((c) => c.reason)?.reason;
    const parts = [t.stoppedReason, container && container !== t.stoppedReason ? container : undefined].filter(Boolean);
    if (parts.length > 0 || t.stopCode) {
      return `${t.stopCode ?? 'Stopped'}: ${parts.join('; ') || 'no reason given'}`;
    }
  }
  return undefined;
}

/** The newest service event that is not "has reached a steady state". */
export function eventReason(service: ObservedService | undefined): string | undefined {
  if (!service) return undefined;
  // One scan, no copy: the newest wins, the first listed among equally new ones (as a stable sort).
  // ECS lists events newest first, so once one is found the rest are older: no pattern test for them.
  let best: ObservedService['events'][number] | undefined;
  let bestMs = -Infinity;
  for (const e of service.events) {
    const ms = e.createdAt.getTime();
    if (best !== undefined && !(ms > bestMs)) continue;
    if (STEADY_STATE.test(e.message)) continue;
    best = e;
    bestMs = ms;
  }
  return best?.message;
}

/** ECS's task stop codes (DescribeTasks `stopCode`), and the fallback word of {@link stoppedTaskReason}. */
const STOP_CODE_REASON = /^(TaskFailedToStart|EssentialContainerExited|UserInitiated|ServiceSchedulerInitiated|SpotInterruption|TerminationNotice|Stopped): /;

/** True when `reason` is a stopped task's reason ({@link stoppedTaskReason}), not a service event. */
export function isStoppedTaskReason(reason: string): boolean {
  return STOP_CODE_REASON.test(reason);
}

/** Bound of `reasonsFirstSeen`: the oldest entries are dropped beyond this many. */
export const MAX_REMEMBERED_REASONS = 10;

/**
 * `reasonsFirstSeen` after seeing `reason` at `nowIso` (ISO 8601): entries from memory are kept (stopped tasks
 * vanish after about an hour, docs/ecs-facts.md §5), a new reason is added with `nowIso`, and only the
 * {@link MAX_REMEMBERED_REASONS} most recent first-sightings are kept.
 */
export function rememberReason(
  remembered: Record<string, string> | undefined,
  reason: string | undefined,
  nowIso: string,
): Record<string, string> | undefined {
  if (remembered !== undefined && keptAsItIs(remembered, reason)) return remembered;
  const entries: [string, string][] = remembered ? Object.entries(remembered) : [];
  if (reason !== undefined && !hasOwnKey(remembered, reason)) entries.push([reason, nowIso]);
  if (entries.length === 0) return undefined;
  const newestFirst = (a: [string, string], b: [string, string]) => (a[1] < b[1] ? 1 : a[1] > b[1] ? -1 : a[0] < b[0] ? -1 : 1);
  // A remembered map is usually in order already (this function wrote it): then no sort.
  let sorted = true;
  for (let i = 1; i < entries.length && sorted; i++) sorted = newestFirst(entries[i - 1], entries[i]) < 0;
  if (!sorted) entries.sort(newestFirst);
  return Object.fromEntries(entries.length > MAX_REMEMBERED_REASONS ? entries.slice(0, MAX_REMEMBERED_REASONS) : entries);
}

/**
 * Whether {@link rememberReason} would return a copy of `remembered` with nothing changed: `reason`
 * is absent or already in it, it holds at most {@link MAX_REMEMBERED_REASONS} entries, all strings,
 * already newest first. Then the remembered map itself is returned (statuses are never changed in
 * place; the pass copies a status to change it), which spares a steady service two arrays and an
 * object every pass. Checked without allocating.
 */
function keptAsItIs(remembered: Record<string, string>, reason: string | undefined): boolean {
  if (Object.getPrototypeOf(remembered) !== Object.prototype) return false;
  // `reason` is looked for among the keys the loop reads anyway, by `===`: a reason is a new
  // string every pass (a new observation's event), and a keyed lookup would hash it first.
  let seen = reason === undefined;
  let count = 0;
  let prevKey = '';
  let prevAt = '';
  for (const k in remembered) {
    const at = own(remembered, k);
    if (typeof at !== 'string') return false;
    if (k === reason) seen = true;
    // Newest first, then by reason: the order `rememberReason` writes.
    if (count > 0 && !(prevAt > at || (prevAt === at && prevKey < k))) return false;
    count += 1;
    if (count > MAX_REMEMBERED_REASONS) return false;
    prevKey = k;
    prevAt = at;
  }
  return count > 0 && seen;
}

/**
 * Whether `next` differs from `prev` in anything but `observedAt` (the pass writes a status only
 * when it changed, to spare DynamoDB writes): their canonical JSON texts (`./canonical-json`)
 * without `observedAt` differ. Key order and `undefined` members do not count. Compared by a
 * structural walk that builds no text (`canonicallyEqual`): the pass asks this of every service
 * every pass. `prev` undefined (no status yet) always counts as changed.
 * @throws TypeError when either holds a value canonical JSON cannot encode (a non-finite number...).
 */
export function statusChanged(prev: ServiceStatus | undefined, next: ServiceStatus): boolean {
  if (!prev) return true;
  return !canonicallyEqual(prev, next, 'observedAt');
}

/** `desiredCount 5 -> 3`: one line of the status's `drift` list. */
export function describeChange(change: { field: string; from: string; to: string }): string {
  return `${change.field} ${change.from} -> ${change.to}`;
}

/** The phases in the order a dashboard lists them (most urgent first). */
export const PHASES = [
  'Degraded',
  'Blocked',
  'Invalid',
  'Pending',
  'Progressing',
  'Deleting',
  'Converged',
  'Deleted',
] as const satisfies readonly Phase[];

/**
 * One reconcile pass over the ports: lease -> read specs -> observe -> plan -> apply -> fold
 * results into statuses -> write changed statuses -> metrics -> release the lease.
 *
 * Pure orchestration (ARCHITECTURE: "one pass, three callers"): no SDK, no simulator; the Lambda
 * handler, `ecsr reconcile` and the local run build the ports differently and call
 * {@link runPass}. A failed AWS call inside the pass is reported in the summary, never thrown;
 * only programming errors escape.
 */
import { METRIC } from './metric-names';
import type { PlanOptions } from './options';
import type { ActionResult, Clock, EcsReader, EcsWriter, LogPort, MetricsSink, SpecRead, SpecStore } from './ports';
import { plan as planActions } from './planner';
import { statusChanged } from './status';
import {
  serviceId,
  type Action,
  type ActionType,
  type Condition,
  type FieldChange,
  type ObservedCluster,
  type ObservedState,
  type ServiceId,
  type ServiceKey,
  type ServiceStatus,
  type UpdateKind,
} from './types';

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
  /** Clusters observed at once (default 2; each observation has its own bounded concurrency). */
  readonly clusterConcurrency?: number;
}

/** Seconds before the lease expires after which the pass starts no new action. */
export const LEASE_SAFETY_SECONDS = 5;

/** Condition type the pass adds when ECS rejected an action as invalid. */
export const ACTION_REJECTED_CONDITION = 'ActionRejected';
/** Reason of {@link ACTION_REJECTED_CONDITION}: the message is ECS's own. */
export const ECS_REJECTED_REASON = 'EcsRejected';

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
  readonly servicesLaggingBeyondGrace: number;
  readonly statusesWritten: number;
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
  /** Cluster name -> complete. */
  readonly clusters: Record<string, boolean>;
  readonly actions: PassAction[];
  /** The planned actions, in a dry run only. */
  readonly plan?: Action[];
  readonly statuses: Record<ServiceId, ServiceStatus>;
  /** Failures met (spec read, observations, status writes, lease). */
  readonly errors: string[];
}

const ZERO_COUNTS: PassCounts = {
  specs: 0,
  invalid: 0,
  actionsPlanned: 0,
  actionsApplied: 0,
  actionsFailed: 0,
  actionsSkipped: 0,
  driftCorrections: 0,
  servicesLaggingBeyondGrace: 0,
  statusesWritten: 0,
};

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** True for errors that are bugs, not failed calls: they escape the pass. */
function isBug(err: unknown): boolean {
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
  const base = { holder: options.holder, dryRun: options.dryRun, startedAt: now.toISOString() };
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
      const held = { holder: lease.holder, expiresAt: lease.expiresAt.toISOString() };
      log.info('pass skipped: another pass holds the lease', { holder: options.holder, leaseHolder: held.holder, leaseExpiresAt: held.expiresAt });
      return { ...base, ...empty, outcome: 'lease-held', durationMs: elapsed(), lease: held, errors: [] };
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

async function reconcile(
  ports: PassPorts,
  options: PassOptions,
  now: Date,
  base: { holder: string; dryRun: boolean; startedAt: string },
  elapsed: () => number,
): Promise<PassSummary> {
  const { log, metrics } = ports;
  const errors: string[] = [];

  // 1. Desired state.
  const read: SpecRead = await ports.specs.readAll();
  if (!read.complete) errors.push(`specs: ${read.error ?? 'incomplete read'}`);
  const invalid = read.specs.filter((s) => !s.ok).length;

  // 2. Observed state: clusters of specs plus configured ones; services named by specs are
  //    described by name even when ListServices omits them (DRAINING).
  const namesByCluster = new Map<string, Set<string>>();
  for (const c of options.plan.managedClusters) namesByCluster.set(c, new Set());
  for (const s of read.specs) {
    if (!s.key) continue;
    const names = namesByCluster.get(s.key.cluster) ?? new Set<string>();
    names.add(s.key.service);
    namesByCluster.set(s.key.cluster, names);
  }
  const clusterNames = [...namesByCluster.keys()].sort();
  const observedClusters = await mapLimit(clusterNames, options.clusterConcurrency ?? 2, (c) =>
    ports.reader.observeCluster(c, [...(namesByCluster.get(c) ?? [])].sort()),
  );
  const observed: ObservedState = { clusters: {}, taskDefinitions: {} };
  for (const oc of observedClusters) {
    observed.clusters[oc.cluster] = oc;
    if (!oc.complete) errors.push(`cluster ${oc.cluster}: ${oc.error ?? 'incomplete observation'}`);
  }
  const arnsInUse = taskDefinitionArnsInUse(read, observedClusters);
  observed.taskDefinitions = await ports.reader.describeTaskDefinitions(arnsInUse);
  for (const arn of arnsInUse) {
    if (!observed.taskDefinitions[arn]) errors.push(`task definition ${arn}: could not be described`);
  }

  // 3. Plan.
  const remembered = read.statuses;
  const plan = planActions({
    specs: read.specs,
    specsComplete: read.complete,
    observed,
    remembered,
    options: options.plan,
    now,
  });

  // 4. Apply.
  let results: ActionResult[] = [];
  if (!options.dryRun && plan.actions.length > 0) {
    results = await ports.writer.apply(plan.actions, leaseAwareContinue(options, ports, now));
  }
  for (const r of results) logAction(log, r);

  // 5. Statuses.
  const statuses = options.dryRun ? { ...plan.statuses } : foldResults(plan.statuses, results, remembered, now);
  let statusesWritten = 0;
  if (!options.dryRun) {
    const itemIds = new Map<ServiceId, ServiceKey>();
    for (const s of read.specs) if (s.key) itemIds.set(serviceId(s.key), s.key);
    for (const [id, key] of itemIds) {
      const next = statuses[id];
      if (!next || !statusChanged(remembered[id], next)) continue;
      try {
        if (await ports.specs.writeStatus(key, next)) statusesWritten += 1;
      } catch (err) {
        if (isBug(err)) throw err;
        errors.push(`status ${id}: ${messageOf(err)}`);
      }
    }
  }

  // 6. Counts, metrics, summary.
  const actions: PassAction[] = options.dryRun ? plan.actions.map((a) => passAction(a, undefined)) : results.map((r) => passAction(r.action, r));
  const counts: PassCounts = {
    specs: read.specs.length,
    invalid,
    actionsPlanned: plan.actions.length,
    actionsApplied: results.filter((r) => r.ok).length,
    actionsFailed: results.filter((r) => !r.ok && r.errorClass !== 'skipped').length,
    actionsSkipped: results.filter((r) => !r.ok && r.errorClass === 'skipped').length,
    driftCorrections: results.filter((r) => r.ok && isDriftCorrection(r.action, remembered)).length,
    servicesLaggingBeyondGrace: Object.values(statuses).filter((s) => s.lagBeyondGrace).length,
    statusesWritten,
  };
  const clusters: Record<string, boolean> = {};
  for (const oc of observedClusters) clusters[oc.cluster] = oc.complete;
  const readsComplete = read.complete && observedClusters.every((c) => c.complete);

  for (const [id, status] of Object.entries(statuses)) {
    const key = keyOf(id);
    if (key && emitsLag(status, observed.clusters[key.cluster], key)) {
      metrics.serviceLag(key, Math.max(0, status.desiredCount - status.runningCount));
    }
  }
  const durationMs = elapsed();
  if (read.complete) metrics.passMetric(METRIC.passSucceeded, 1, 'Count');
  metrics.passMetric(METRIC.passDuration, durationMs, 'Milliseconds');
  metrics.passMetric(METRIC.actionsApplied, counts.actionsApplied, 'Count');
  metrics.passMetric(METRIC.actionsFailed, counts.actionsFailed, 'Count');
  metrics.passMetric(METRIC.invalidSpecs, counts.invalid, 'Count');
  metrics.passMetric(METRIC.driftCorrections, counts.driftCorrections, 'Count');
  metrics.passMetric(METRIC.servicesLaggingBeyondGrace, counts.servicesLaggingBeyondGrace, 'Count');
  await metrics.flush();

  const summary: PassSummary = {
    ...base,
    outcome: 'completed',
    durationMs,
    counts,
    readsComplete,
    specsComplete: read.complete,
    clusters,
    actions,
    ...(options.dryRun ? { plan: plan.actions } : {}),
    statuses,
    errors,
  };
  log.info(options.dryRun ? 'dry run completed' : 'pass completed', {
    holder: options.holder,
    durationMs,
    counts,
    readsComplete,
    errors,
  });
  return summary;
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

/**
 * TaskLag is emitted for services that exist in ECS (ACTIVE) and for those being created, never
 * for deleted or deleting ones: a series per service that matters, not per item ever seen
 * (each series is billed, ECS-FACTS §10).
 */
function emitsLag(status: ServiceStatus, cluster: ObservedCluster | undefined, key: ServiceKey): boolean {
  if (status.phase === 'Deleted' || status.phase === 'Deleting') return false;
  const live = cluster?.services[key.service];
  if (live) return live.status === 'ACTIVE';
  return status.phase !== 'Invalid' && status.phase !== 'Blocked' && status.desiredCount > 0;
}

/**
 * Task definition ARNs of the live services the specs name and of their PRIMARY / ACTIVE
 * deployments (their content is compared; cached by the reader, so a steady pass asks none).
 */
function taskDefinitionArnsInUse(read: SpecRead, clusters: ObservedCluster[]): string[] {
  const named = new Set(read.specs.filter((s) => s.key).map((s) => serviceId(s.key as ServiceKey)));
  const arns = new Set<string>();
  for (const c of clusters) {
    for (const s of Object.values(c.services)) {
      if (s.status === 'INACTIVE' || !named.has(serviceId({ cluster: c.cluster, service: s.serviceName }))) continue;
      if (s.taskDefinition) arns.add(s.taskDefinition);
      // The planner tells a failed or rolled-back rollout by the deployments' task definitions.
      for (const d of s.deployments) {
        if ((d.status === 'PRIMARY' || d.status === 'ACTIVE') && d.taskDefinition) arns.add(d.taskDefinition);
      }
    }
  }
  return [...arns].sort();
}

function isDriftCorrection(action: Action, remembered: Record<ServiceId, ServiceStatus>): boolean {
  if (action.type !== 'UpdateService') return false;
  if (action.kind !== undefined) return action.kind === 'drift';
  const prev = remembered[serviceId(action)];
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
    service: a.service,
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
        ? `UpdateService: ${action.changes.map((c) => `${c.field} ${c.from} -> ${c.to}`).join(', ')}`
        : `UpdateService: ${action.reason}`;
    default:
      return `${action.type}: ${action.reason}`;
  }
}

/**
 * Statuses after applying: `lastAction` (type, time, summary, error) for every service with an
 * action; for a service whose create or rollout failed or was skipped, `lastAppliedSpecHash`,
 * `appliedDeploymentId`, `appliedRolloutState` and `rolloutFromTaskDefinitionArn` go back to the
 * remembered values (the planner set them for the hash it planned), so the next pass applies the
 * spec again; an `invalid` error adds the {@link ACTION_REJECTED_CONDITION} condition with ECS's
 * message and the phase `Degraded`.
 */
export function foldResults(
  planned: Record<ServiceId, ServiceStatus>,
  results: ActionResult[],
  remembered: Record<ServiceId, ServiceStatus>,
  now: Date,
): Record<ServiceId, ServiceStatus> {
  const out: Record<ServiceId, ServiceStatus> = { ...planned };
  const at = now.toISOString();
  const byService = new Map<ServiceId, ActionResult[]>();
  for (const r of results) {
    const id = serviceId(r.action);
    byService.set(id, [...(byService.get(id) ?? []), r]);
  }
  for (const [id, rs] of byService) {
    const status = out[id];
    if (!status) continue;
    const failed = rs.find((r) => !r.ok);
    const last = failed ?? rs[rs.length - 1];
    let next: ServiceStatus = {
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
      const prev = remembered[id];
      next = withRemembered(next, prev);
    }
    if (failed && !failed.ok && failed.errorClass === 'invalid') {
      const prevCondition = (remembered[id]?.conditions ?? []).find((c) => c.type === ACTION_REJECTED_CONDITION);
      const condition: Condition = {
        type: ACTION_REJECTED_CONDITION,
        status: 'True',
        reason: ECS_REJECTED_REASON,
        message: `${failed.action.type}: ${failed.message}`,
        lastTransitionTime: prevCondition?.status === 'True' ? prevCondition.lastTransitionTime : at,
      };
      next = {
        ...next,
        phase: 'Degraded',
        conditions: [
          ...next.conditions
            .filter((c) => c.type !== ACTION_REJECTED_CONDITION)
            .map((c) => (c.type === 'Ready' && c.status !== 'False' ? { ...c, status: 'False' as const, lastTransitionTime: at } : c)),
          condition,
        ],
      };
    }
    out[id] = next;
  }
  return out;
}

function withRemembered(status: ServiceStatus, prev: ServiceStatus | undefined): ServiceStatus {
  const {
    lastAppliedSpecHash: _h,
    appliedDeploymentId: _d,
    appliedRolloutState: _r,
    rolloutFromTaskDefinitionArn: _f,
    ...rest
  } = status;
  return {
    ...rest,
    ...(prev?.lastAppliedSpecHash !== undefined ? { lastAppliedSpecHash: prev.lastAppliedSpecHash } : {}),
    ...(prev?.appliedDeploymentId !== undefined ? { appliedDeploymentId: prev.appliedDeploymentId } : {}),
    ...(prev?.appliedRolloutState !== undefined ? { appliedRolloutState: prev.appliedRolloutState } : {}),
    ...(prev?.rolloutFromTaskDefinitionArn !== undefined ? { rolloutFromTaskDefinitionArn: prev.rolloutFromTaskDefinitionArn } : {}),
  };
}

/** Maps with at most `limit` calls in flight, results in input order. Rejections propagate. */
async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return out;
}

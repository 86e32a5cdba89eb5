/**
 * What the live fleet page of `ecsr ui` shows, read from the specs table: per service its phase,
 * tasks, reasons (the status conditions' messages), drift, the deployment in progress, the last
 * action, and its latest spec revisions; above them the clusters whose prunes are held and the
 * local run's last pass. Everything comes from one consistent, paginated Scan of the table (the
 * spec items with the `status` the reconciler writes, and the reserved `#history` and
 * `#prune-hold` items the same Scan returns): no other AWS call, so `grantSpecRead` covers it.
 *
 * Source: Amazon DynamoDB API reference, Scan (ConsistentRead, pagination); the status and its
 * conditions as docs/status.md describes them; the history items as docs/history.md does.
 */
import { HISTORY_PARTITION, revisionOf, type Revision } from '../../../lambda/adapters/spec-history';
import { PARTITION_KEY, SORT_KEY } from '../../../lambda/adapters/dynamo-spec-store';
import { own } from '../../../lambda/core/dict';
import { DEFAULT_TARGET, splitPartitionKey } from '../../../lambda/core/targets';
import type { ServiceKey, ServiceStatus } from '../../../lambda/core/types';
import { heartbeatLine } from '../../../local/heartbeat';
import { changeSummary, outcomeText, showRevisions } from '../history';
import { lastActionText, pruneHoldLines, statusRow } from './format';
import { entryId, type SpecTable, type TableEntry } from './spec-table';

/** Revisions shown per service (the newest; `ecsr history` lists every one kept). */
export const REVISIONS_SHOWN = 5;

/** One condition of a status, as the page lists it. */
export interface FleetCondition {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
  readonly message: string;
  /** ISO time of its last transition. */
  readonly since: string;
}

/**
 * The deployment a service is in, as the status the reconciler wrote says it: a native one
 * (BLUE_GREEN, LINEAR, CANARY: `status.deployment`, where the reconciler writes it) or a rolling
 * one (the `Progressing` condition true for a rollout, with ECS's rolloutState).
 */
export interface FleetDeployment {
  /** ROLLING, BLUE_GREEN, LINEAR, CANARY. */
  readonly strategy: string;
  /** ECS's state of it: IN_PROGRESS, a lifecycle stage (BAKE_TIME...), ROLLBACK_IN_PROGRESS. */
  readonly state: string;
  /** One line of what is known: the condition's message, the stage, the traffic, the hook waited for. */
  readonly detail: string;
  /** ISO time it was seen starting (the condition's last transition), when known. */
  readonly since?: string;
}

/** One revision of the spec, as the page lists it. */
export interface FleetRevision {
  readonly revision: number;
  readonly writtenAt: string;
  readonly writtenBy: string;
  readonly via: string;
  /** `converged`, `rolled back by ECS: ...`, `-`. */
  readonly outcome: string;
  /** What it changed from the revision before, in a few words. */
  readonly change: string;
  /** The revision the table holds now. */
  readonly current: boolean;
}

/** One service of the fleet. */
export interface FleetService {
  /** `cluster/service`, with the target first when it is not `default`. */
  readonly id: string;
  readonly target: string;
  readonly cluster: string;
  readonly service: string;
  /** The phase (`Invalid` for an item the reconciler refuses, `Pending` before any pass). */
  readonly phase: string;
  /** Tasks as the status counts them; undefined before any pass. */
  readonly tasks?: { readonly desired: number; readonly running: number; readonly pending: number };
  /** `yes`, `no` or `invalid`, as `ecsr get`'s SYNCED column. */
  readonly synced: string;
  /** The whole reason, as `ecsr get` prints it under its table; empty when converged. */
  readonly reason: string;
  /** True when the phase is not Converged (nor Deleted). */
  readonly notConverged: boolean;
  /** ISO time since when it has not been ready (the Ready condition's last transition). */
  readonly notConvergedSince?: string;
  readonly conditions: readonly FleetCondition[];
  /** Fields the last drift correction set back (`desiredCount 5 -> 3`). */
  readonly drift: readonly string[];
  readonly driftCorrectedAt?: string;
  /** In observe-only mode: true, with the differences left as they are (`observedDrift`). */
  readonly observeOnly?: true;
  readonly observedDrift?: readonly string[];
  readonly deployment?: FleetDeployment;
  /** The last action, `UpdateService: desiredCount 6 -> 2`, and when. */
  readonly lastAction?: string;
  readonly lastActionAt?: string;
  readonly observedAt?: string;
  /** The newest {@link REVISIONS_SHOWN} revisions, newest first, and how many are kept. */
  readonly history: readonly FleetRevision[];
  readonly revisionsKept: number;
}

/** What the page shows at one time: the document of `GET /api/fleet`. */
export interface FleetSnapshot {
  readonly table: string;
  readonly target: string;
  /** ISO time the Scan ended. */
  readonly readAt: string;
  /** The local run's last pass (`ecsr local`), when the table is one's. */
  readonly heartbeat?: string;
  /** One sentence per cluster whose prunes are held. */
  readonly pruneHolds: readonly string[];
  readonly services: readonly FleetService[];
  /** Why the last read failed (the services are the read before it), when it did. */
  readonly error?: string;
}

/**
 * The service key and target of a `#history` item's sort key, `<stored cluster>/<service>#<revision>`
 * (docs/history.md, "Where it is kept"); undefined for anything else.
 */
export function historyKeyOf(raw: Record<string, unknown>): { target: string; key: ServiceKey } | undefined {
  const sk = raw[SORT_KEY];
  if (raw[PARTITION_KEY] !== HISTORY_PARTITION || typeof sk !== 'string') return undefined;
  const hash = sk.lastIndexOf('#');
  const slash = sk.lastIndexOf('/', hash);
  if (hash < 0 || slash <= 0) return undefined;
  const { target, cluster } = splitPartitionKey(sk.slice(0, slash));
  return { target, key: { cluster, service: sk.slice(slash + 1, hash) } };
}

/** The deployment in progress the status tells of, or undefined. */
export function deploymentOf(s: ServiceStatus | undefined): FleetDeployment | undefined {
  if (!s) return undefined;
  // Written by the reconciler for a native deployment (BLUE_GREEN, LINEAR, CANARY); read as a
  // plain record so that a status without it, or from another version, shows as rolling or none.
  const native = (s as { deployment?: unknown }).deployment;
  if (native && typeof native === 'object') {
    const d = native as Record<string, unknown>;
    const text = (k: string) => {
      const v = own(d, k);
      return typeof v === 'string' || typeof v === 'number' ? String(v) : undefined;
    };
    const detail = [
      text('lifecycleStage') && `stage ${text('lifecycleStage')}`,
      text('productionTrafficPercent') && `production traffic ${text('productionTrafficPercent')}%`,
      text('testTrafficPercent') && `test traffic ${text('testTrafficPercent')}%`,
      text('bakeEndsAt') && `bake ends ${text('bakeEndsAt')}`,
      text('awaitingHookId') && `waiting for hook ${text('awaitingHookId')} (ecsr continue)`,
    ].filter((x): x is string => typeof x === 'string');
    return { strategy: text('strategy') ?? 'native', state: text('status') ?? 'IN_PROGRESS', detail: detail.join(', ') };
  }
  const progressing = s.conditions.find((c) => c.type === 'Progressing' && c.status === 'True');
  const rolling = s.appliedRolloutState === 'IN_PROGRESS' || (progressing !== undefined && /^(RolloutInProgress|SpecApplied|Creating)$/.test(progressing.reason));
  if (!rolling) return undefined;
  const task = s.taskDefinitionArn?.split('/').pop();
  const detail = [progressing ? `${progressing.reason}: ${progressing.message}` : '', task ? `task definition ${task}` : ''].filter((x) => x !== '').join('; ');
  return { strategy: 'ROLLING', state: s.appliedRolloutState ?? 'IN_PROGRESS', detail, ...(progressing ? { since: progressing.lastTransitionTime } : {}) };
}

/** The page's revisions of one entry from its kept revisions (newest first). */
function revisionsOf(revisions: readonly Revision[], entry: TableEntry): FleetRevision[] {
  return showRevisions(revisions, entry)
    .slice(0, REVISIONS_SHOWN)
    .map((r) => ({ revision: r.revision, writtenAt: r.writtenAt, writtenBy: r.writtenBy, via: r.via, outcome: outcomeText(r.outcome), change: changeSummary(r), current: r.current }));
}

/** One entry of the table as the page shows it, with its kept revisions (newest first). */
export function fleetService(entry: TableEntry, revisions: readonly Revision[]): FleetService {
  const row = statusRow(entry);
  const s = entry.status;
  const ready = s?.conditions.find((c) => c.type === 'Ready');
  const notConverged = row.phase !== 'Converged' && row.phase !== 'Deleted';
  const deployment = deploymentOf(s);
  return {
    id: entry.key ? entryId(entry.target, entry.key) : row.id,
    target: entry.target ?? DEFAULT_TARGET,
    cluster: entry.key?.cluster ?? String(entry.item.cluster),
    service: entry.key?.service ?? String(entry.item.service),
    phase: row.phase,
    ...(s ? { tasks: { desired: s.desiredCount, running: s.runningCount, pending: s.pendingCount } } : {}),
    synced: row.synced,
    reason: notConverged ? row.reason : '',
    notConverged,
    ...(notConverged && ready && ready.status !== 'True' ? { notConvergedSince: ready.lastTransitionTime } : {}),
    conditions: (s?.conditions ?? []).map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message, since: c.lastTransitionTime })),
    drift: s?.drift ?? [],
    ...(s?.driftCorrectedAt ? { driftCorrectedAt: s.driftCorrectedAt } : {}),
    ...(s?.observeOnly ? { observeOnly: true as const, observedDrift: s.observedDrift ?? [] } : {}),
    ...(deployment ? { deployment } : {}),
    ...(s?.lastAction ? { lastAction: lastActionText(s), lastActionAt: s.lastAction.at } : {}),
    ...(s?.observedAt ? { observedAt: s.observedAt } : {}),
    history: revisionsOf(revisions, entry),
    revisionsKept: revisions.length,
  };
}

/** Not converged first, then by id (as the run report's summary table orders them). */
function byAttention(a: FleetService, b: FleetService): number {
  return Number(b.notConverged) - Number(a.notConverged) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * Reads the fleet of `table`'s target: one Scan (see the module's comment).
 * @param now the clock of the heartbeat's age (tests pass their own).
 * @throws CliError when the table does not exist; the SDK error otherwise.
 */
export async function readFleet(table: SpecTable, now: () => number = Date.now): Promise<FleetSnapshot> {
  const revisions = new Map<string, Revision[]>();
  const onReserved = (raw: Record<string, unknown>) => {
    const at = historyKeyOf(raw);
    if (!at || at.target !== table.target) return;
    const r = revisionOf(raw, at.key);
    if (!r) return;
    const id = entryId(at.target, at.key);
    revisions.set(id, [...(revisions.get(id) ?? []), r]);
  };
  const { entries, heartbeat, pruneHolds } = await table.scanWithHeartbeat({ onReserved });
  const services = entries.map((e) => {
    const id = e.key ? entryId(e.target, e.key) : '';
    const kept = [...(revisions.get(id) ?? [])].sort((a, b) => b.revision - a.revision);
    return fleetService(e, kept);
  });
  return {
    table: table.name,
    target: table.target,
    readAt: new Date(now()).toISOString(),
    ...(heartbeat ? { heartbeat: heartbeatLine(heartbeat, now()) } : {}),
    pruneHolds: pruneHoldLines(pruneHolds),
    services: services.sort(byAttention),
  };
}

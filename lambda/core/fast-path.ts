/**
 * The fast path: the services a spec edit (or an ECS event) names, reconciled as soon as the
 * table's stream delivers the edit, without the scheduled pass's lease, Scan or prune. It is a
 * few named steps over the helpers the scheduled pass uses (`./pass.ts`): take the services'
 * fences, read their items (BatchGetItem), fence their task definition families, observe them
 * by name, plan them with the same planner, act, write their statuses, emit the pass metrics
 * (never `PassSucceeded`, the scheduled pass's heartbeat), release the fences.
 *
 * Exclusion, per service instead of per table. The guarantee kept: an action is never started
 * twice, or by two passes at once, for one service. Each service and each task definition family
 * has a fence (an item of the specs table, `lambda/adapters/fence-items.ts`): a holder, an expiry,
 * and a generation that every take raises.
 * - The fast path takes the fences of its services (held by no other unexpired holder) before it
 *   reads their items, so what it reads is at least as new as its fence, and releases them after
 *   writing their statuses. A service whose fence is held is retried every
 *   {@link FAST_PATH_LEASE_POLL_MS} for at most `leaseWaitMs`, then left to the scheduled pass:
 *   the edited spec is not at rest (its hash changed), so the next scheduled pass plans it first.
 * - The scheduled pass keeps its lease (one scheduled pass at a time) and reads every fence
 *   before its Scan. Before acting it takes the fence of each service it acts on, and of the
 *   family of each registration, on the condition that the generation is still the one it read
 *   (nobody took it since) and that it was not held then; a refused service's actions are
 *   dropped and its status left unwritten. So a scheduled pass never acts from a view older than
 *   a fast path's actions, nor beside one. Its status writes are conditional too: a status is
 *   written only if its version is still the one the Scan read, so the scheduled pass never
 *   overwrites a status a fast path wrote since with an older view (the fast path, holding the
 *   fence, writes unconditionally). The scheduled pass removes idle fence items it read (at most
 *   {@link MAX_FENCES_FORGOTTEN} a pass, each only if unchanged), so fences cost the table only
 *   what was taken since the last scheduled pass.
 * - Expiry: a holder starts no action in the last `LEASE_SAFETY_SECONDS` of its fence, as under
 *   the lease; a crashed holder's fence expires with the time it took it for.
 *
 * Family claims found by key: two specs may not render one task definition family (the planner's
 * `FamilyCollision`). The scheduled pass decides it over every spec; the fast path reads only its
 * keys, so it plans a present spec only when its family is provably its own: its remembered status
 * is no `FamilyCollision`, it takes the family's fence (two fast paths of two specs of one new
 * family: one wins), and, read after taking it, its live service runs a revision of that family or
 * ECS has no ACTIVE revision of it (`DescribeTaskDefinition` of the family). Otherwise the service is
 * left to the scheduled pass, which sees every spec. The edge this leaves: a service of another
 * spec still running a deregistered (INACTIVE) revision of a family nobody else holds.
 *
 * The price: a fence write and release per service and per family (conditional UpdateItems), a
 * Query of the fences per scheduled pass, and a `version` member in each status.
 */
import {
  act,
  finishPass,
  isBug,
  MAX_FENCES_FORGOTTEN,
  messageOf,
  observeServices,
  passDeadlines,
  planConfirmed,
  readThisPass,
  releaseFences,
  reportInvalid,
  validSpecsById,
  writeStatuses,
  ZERO_COUNTS,
  type PassBase,

  type PassOptions,
  type PassPorts,
  type PassSummary,
  type Seen,
} from './pass';
import type { Fence, KeysRead } from './ports';
import { Reason } from './status';
import { taskDefinitionFamily } from './taskdef';
import { serviceId, type ServiceId, type ServiceKey, type ServiceStatus, type SpecParseResult } from './types';
import { own } from './dict';

/** Milliseconds between two tries for a held fence. */
export const FAST_PATH_LEASE_POLL_MS = 250;

/** Default milliseconds the fast path waits for a held fence before leaving the service to the scheduled pass. */
export const FAST_PATH_LEASE_WAIT_MS = 30_000;

export interface FastPathOptions extends PassOptions {
  /** Milliseconds to wait for held fences (default {@link FAST_PATH_LEASE_WAIT_MS}). */
  readonly leaseWaitMs?: number;
  /** Waits `ms` milliseconds (real time in Lambda; a virtual clock in tests). */
  readonly sleep: (ms: number) => Promise<void>;
  /** Milliseconds on a monotonic clock, for the wait (default: the pass clock). */
  readonly monotonicMs?: () => number;
  /**
   * No log line when a fence stays held: the caller does something else with the keys (the
   * fan-out sends its message back to the queue) and says so itself.
   */
  readonly quietLeaseHeld?: boolean;
  /**
   * Take fences only for the keys that have an item in the specs table (ECS's events name any
   * service of the account, someone else's too): one more read first. Default false (a spec
   * edit's keys have items; a deleted spec costs one fence and one look).
   */
  readonly keysWithSpecOnly?: boolean;
}

/** What the fast path did: its passes merged (or the last fence-held answer) and how long it waited. */
export interface FastPathResult {
  readonly summary: PassSummary;
  /** Milliseconds spent waiting for held fences. */
  readonly waitedMs: number;
  /** Tries for the fences (1 when they were free). */
  readonly attempts: number;
}

/**
 * Reconciles `keys` (a spec edit's services), retrying those whose fence is held as described
 * in the module docs.
 * @returns the result, or undefined when `keys` is empty (nothing is read, no fence is taken);
 *   `summary.outcome` is `lease-held` when no service's fence could be taken in time.
 * @throws only programming errors, among them a spec store without `readKeys` and fences.
 */
export async function runFastPath(ports: PassPorts, keys: readonly ServiceKey[], options: FastPathOptions): Promise<FastPathResult | undefined> {
  if (keys.length === 0) return undefined;
  const { leaseWaitMs = FAST_PATH_LEASE_WAIT_MS, sleep, monotonicMs, quietLeaseHeld, keysWithSpecOnly, ...pass } = options;
  if (!ports.specs.readKeys || !ports.specs.takeFences || !ports.specs.releaseFences) throw new TypeError('the fast path needs a spec store with readKeys and fences');
  const now = monotonicMs ?? (() => ports.clock.now().getTime());
  const start = now();
  let todo = [...new Map(keys.map((k) => [serviceId(k), k])).values()];
  if (keysWithSpecOnly) todo = await withItems(ports, todo);
  const summaries: PassSummary[] = [];
  let held: PassSummary | undefined;
  let attempts = 0;
  while (todo.length > 0) {
    attempts += 1;
    const run = await reconcileKeys(ports, todo, pass);
    if (run.summary.outcome === 'lease-held') held = run.summary;
    else summaries.push(run.summary);
    todo = run.refused;
    const waitedMs = Math.max(0, now() - start);
    const mayWait = pass.shouldContinue ? pass.shouldContinue() : true;
    if (todo.length === 0 || run.summary.outcome === 'failed' || waitedMs + FAST_PATH_LEASE_POLL_MS > leaseWaitMs || !mayWait) break;
    await sleep(FAST_PATH_LEASE_POLL_MS);
  }
  const waitedMs = Math.max(0, now() - start);
  if (todo.length > 0 && !quietLeaseHeld) {
    ports.log.info('fast path: the fences stayed held; the scheduled pass reconciles these services first', {
      keys: todo.map((k) => serviceId(k)),
      waitedMs,
      leaseHolder: held?.lease?.holder,
    });
  }
  const summary = summaries.length > 0 ? mergeSummaries(summaries) : (held ?? idleSummary(ports, pass, 'completed'));
  return { summary, waitedMs, attempts };
}

/** The keys that have an item (all of them when the read fails: a hint is never lost). */
async function withItems(ports: PassPorts, keys: readonly ServiceKey[]): Promise<ServiceKey[]> {
  const found = await (ports.specs.readKeys as NonNullable<PassPorts['specs']['readKeys']>)(keys);
  if (!found.complete) return [...keys];
  const ids = new Set(found.specs.flatMap((s) => (s.key ? [serviceId(s.key)] : [])));
  return keys.filter((k) => ids.has(serviceId(k)));
}

/** A summary of a fast path that did nothing (`completed`) or could take no fence (`lease-held`, `failed`). */
function idleSummary(
  ports: PassPorts,
  options: PassOptions,
  outcome: PassSummary['outcome'],
  extra: Partial<Pick<PassSummary, 'lease' | 'errors'>> = {},
): PassSummary {
  return {
    holder: options.holder,
    dryRun: options.dryRun,
    startedAt: ports.clock.now().toISOString(),
    outcome,
    durationMs: 0,
    counts: ZERO_COUNTS,
    readsComplete: false,
    specsComplete: false,
    clusters: {},
    actions: [],
    statuses: {},
    errors: [],
    ...extra,
  };
}

/**
 * One try: takes the fences of `keys` (none in a dry run), reconciles those taken, releases every
 * fence it took. @returns the pass and the keys whose fence another pass holds.
 */
async function reconcileKeys(ports: PassPorts, keys: readonly ServiceKey[], options: PassOptions): Promise<{ summary: PassSummary; refused: ServiceKey[] }> {
  const monotonic = ports.monotonicMs ?? (() => ports.clock.now().getTime());
  const t0 = monotonic();
  const now = ports.clock.now();
  const base: PassBase = { holder: options.holder, dryRun: options.dryRun, startedAt: now.toISOString() };
  const held: Fence[] = [];
  let refused: ServiceKey[] = [];
  let mine = [...keys];
  if (!options.dryRun) {
    const store = ports.specs as Required<Pick<PassPorts['specs'], 'takeFences'>>;
    let got;
    try {
      got = await store.takeFences(options.holder, keys.map((key) => ({ kind: 'service', key })), options.leaseTtlSeconds, now);
    } catch (err) {
      if (isBug(err)) throw err;
      ports.log.error('fast path failed: the fences could not be taken', { holder: options.holder, error: messageOf(err) });
      return { summary: idleSummary(ports, options, 'failed', { errors: [`fences: ${messageOf(err)}`] }), refused: [] };
    }
    held.push(...got.taken);
    mine = got.taken.flatMap((f) => (f.kind === 'service' ? [f.key] : []));
    refused = got.refused.flatMap((r) => (r.fence.kind === 'service' ? [r.fence.key] : []));
    if (mine.length === 0) {
      const first = got.refused.find((r) => r.holder !== undefined);
      const lease = { holder: String(first?.holder ?? 'unknown'), expiresAt: first?.expiresAt?.toISOString() ?? '' };
      return { summary: idleSummary(ports, options, 'lease-held', { lease }), refused };
    }
  }
  try {
    const elapsed = () => Math.max(0, Math.round(monotonic() - t0));
    return { summary: await keysPass(ports, options, mine, { now, base, elapsed, held }), refused };
  } finally {
    const errors: string[] = [];
    await releaseFences(ports, options.holder, held, errors);
  }
}

/** The fast path's steps for the keys whose fences it holds; fences it takes on the way go to `held`. */
async function keysPass(
  ports: PassPorts,
  options: PassOptions,
  keys: readonly ServiceKey[],
  at: { readonly now: Date; readonly base: PassBase; readonly elapsed: () => number; readonly held: Fence[] },
): Promise<PassSummary> {
  const { now } = at;
  const errors: string[] = [];
  const deadlines = passDeadlines(options, ports.clock, now);
  // 1. Desired state: the keys' items only, read after their fences were taken.
  const read = await (ports.specs.readKeys as NonNullable<PassPorts['specs']['readKeys']>)(keys);
  if (!read.complete) errors.push(`specs: ${read.error ?? 'incomplete read'}`);
  const invalid = reportInvalid(ports.log, read.specs, errors);
  // 2. Families: only specs whose family this pass may register into.
  const fenced = await fenceFamilies(ports, options, read, now, at.held, errors);
  const specs = validSpecsById(fenced.kept);
  // 3. Observed state: the services by name, no listing (so nothing is pruned or deleted as an orphan).
  const seen = await observeServices(ports, options, deadlines, read, specs, observeKeys(fenced.kept), errors);
  const left = new Set([...fenced.left, ...(await familiesInUseElsewhere(ports, fenced.kept, seen, errors))]);
  if (left.size > 0) {
    ports.log.info('fast path: services left to the scheduled pass, which sees every spec (their task definition family may be another spec\'s)', { services: [...left] });
  }
  // 4. Plan, with the planner the scheduled pass uses, only the services read and not left.
  const inScope = readThisPass(seen);
  const planned = fenced.kept.filter((s) => s.key !== null && !left.has(serviceId(s.key)) && inScope(s.key));
  const { plan, cache } = await planConfirmed(
    ports,
    options,
    { specs: planned, specsComplete: read.complete, observed: seen.observed, remembered: read.statuses, options: options.plan, now, pruneConfirmedClusters: [], pruneHolds: [] },
    seen,
    now,
    deadlines,
    errors,
  );
  // 5. Act, 6. statuses (unconditional: this pass holds the fences), 7. metrics and summary.
  const acted = await act(ports, options, plan, read.statuses, now);
  const writes = await writeStatuses(ports, options, deadlines, planned, acted, read.statuses, seen.pending, errors);
  const plannedIds = new Set(planned.flatMap((s) => (s.key ? [serviceId(s.key)] : [])));
  const notRead = read.specs.flatMap((s) => (s.key && !plannedIds.has(serviceId(s.key)) ? [serviceId(s.key)] : []));
  return finishPass(ports, options, {
    ...at,
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
    heartbeat: false,
    readsComplete: false,
    extra: cache ? { taskDefinitionCache: cache } : {},
  });
}

/** The observation of the keys' services by name: their clusters, no rotation, no listing. */
function observeKeys(items: readonly SpecParseResult[]): Parameters<typeof observeServices>[5] {
  const names = new Map<string, string[]>();
  for (const s of items) {
    if (!s.key) continue;
    names.set(s.key.cluster, [...(names.get(s.key.cluster) ?? []), s.key.service]);
  }
  return { clusters: [...names.keys()], specNames: names, priority: names, rotate: false };
}

/** The task definition family a valid present spec registers into, or undefined. */
function familyOfItem(s: SpecParseResult): string | undefined {
  if (!s.ok || s.spec.state !== 'present') return undefined;
  return s.spec.family ?? taskDefinitionFamily(s.key);
}

/** Whether the scheduled pass last refused this service for its family. */
function refusedForFamily(status: ServiceStatus | undefined): boolean {
  return status !== undefined && (status.reason === Reason.FamilyCollision || status.conditions.some((c) => c.reason === Reason.FamilyCollision));
}

/**
 * Takes the family fence of every valid present spec read (none in a dry run). A spec whose
 * status says `FamilyCollision`, or whose family's fence another pass holds, is `left`.
 */
async function fenceFamilies(
  ports: PassPorts,
  options: PassOptions,
  read: KeysRead,
  now: Date,
  held: Fence[],
  errors: string[],
): Promise<{ kept: SpecParseResult[]; left: ServiceId[] }> {
  const left = new Set<ServiceId>();
  const families = new Map<string, ServiceId[]>();
  for (const s of read.specs) {
    const family = familyOfItem(s);
    if (family === undefined || !s.key) continue;
    const id = serviceId(s.key);
    if (refusedForFamily(own(read.statuses, id))) left.add(id);
    else families.set(family, [...(families.get(family) ?? []), id]);
  }
  if (!options.dryRun && families.size > 0 && ports.specs.takeFences) {
    try {
      const got = await ports.specs.takeFences(options.holder, [...families.keys()].map((family) => ({ kind: 'family', family })), options.leaseTtlSeconds, now);
      held.push(...got.taken);
      for (const r of got.refused) if (r.fence.kind === 'family') for (const id of families.get(r.fence.family) ?? []) left.add(id);
    } catch (err) {
      if (isBug(err)) throw err;
      errors.push(`fences: ${messageOf(err)}`);
      for (const ids of families.values()) for (const id of ids) left.add(id);
    }
  }
  return { kept: read.specs.filter((s) => !s.key || !left.has(serviceId(s.key))), left: [...left] };
}

/**
 * Services whose family may be another's: their live service (read after the family's fence was
 * taken) runs no revision of it, and ECS has an ACTIVE revision of it, or could not say.
 */
async function familiesInUseElsewhere(ports: PassPorts, items: readonly SpecParseResult[], seen: Seen, errors: string[]): Promise<ServiceId[]> {
  const out: ServiceId[] = [];
  for (const s of items) {
    const family = familyOfItem(s);
    if (family === undefined || !s.key) continue;
    const live = own(own(seen.observed.clusters, s.key.cluster)?.services, s.key.service);
    if (live && live.status !== 'INACTIVE' && live.taskDefinition.includes(`:task-definition/${family}:`)) continue;
    try {
      if ((await ports.reader.latestActiveTaskDefinition(family)) === undefined) continue;
    } catch (err) {
      if (isBug(err)) throw err;
      errors.push(`task definition family ${family}: ${messageOf(err)}`);
    }
    out.push(serviceId(s.key));
  }
  return out;
}

/** The passes of several tries as one summary: counts summed, actions, statuses and errors joined. */
function mergeSummaries(summaries: readonly PassSummary[]): PassSummary {
  if (summaries.length === 1) return summaries[0];
  const [first, ...rest] = summaries;
  return rest.reduce<PassSummary>(
    (a, b) => ({
      ...a,
      durationMs: a.durationMs + b.durationMs,
      counts: Object.fromEntries(Object.entries(a.counts).map(([k, v]) => [k, v + (own(b.counts as unknown as Record<string, number>, k) ?? 0)])) as unknown as PassSummary['counts'],
      readsComplete: a.readsComplete && b.readsComplete,
      specsComplete: a.specsComplete && b.specsComplete,
      clusters: { ...a.clusters, ...b.clusters },
      actions: [...a.actions, ...b.actions],
      ...(a.plan || b.plan ? { plan: [...(a.plan ?? []), ...(b.plan ?? [])] } : {}),
      statuses: { ...a.statuses, ...b.statuses },
      errors: [...a.errors, ...b.errors],
    }),
    first,
  );
}



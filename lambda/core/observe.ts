/**
 * The observation phase of a pass: which services are read this pass, in which order, and where
 * the next pass goes on.
 *
 * Order (each step only while `shouldContinue()` holds; a call never starts after it turns false):
 * 1. `priority` names, by name (DescribeServices, no listing): services whose spec is new or
 *    changed, or that are not at rest (see the pass), and, on the few-keys path, the keys asked.
 * 2. Unless `rotate` is false, the rotation: clusters in name order starting at the cursor's
 *    cluster; for each, ListServices to the end, then DescribeServices of the listed names and the
 *    names specs give (DRAINING services are not listed) in name order, starting after
 *    `cursor.after` in the cursor's cluster; the names before it come last, once every other
 *    cluster was read. While it has read fewer services with a spec than `floor.services` (the
 *    resync floor's share), the rotation goes on past `shouldContinue` until `floor.shouldContinue`
 *    turns false: priority reads cannot starve the floor.
 * A pass that reads the whole fleet reads it in exactly `ceil(n / 100)` ListServices and
 * `ceil(n / 10)` DescribeServices calls per cluster (the lower bound) and keeps its cursor on a
 * cluster boundary. A pass cut by its deadline returns the cursor of the first name it did not
 * read; the pass after it starts there, so every service is read within
 * `ceil(fleet / services read per pass)` passes whatever the size.
 *
 * A cluster is `complete` (prune allowed, as before) only when this pass listed it to the end and
 * read every name of it without error. A cluster read in part carries `described`: the planner
 * may create a spec's service that ECS answered `MISSING` for, never one it did not read.
 */
import { dict, own, putOwn } from './dict';
import type { EcsReader, ObserveCursor, ServiceDescriptions } from './ports';
import { Reason } from './status';
import type { ObservedCluster, ObservedService } from './types';

/** What to read this pass. */
export interface ObserveRequest {
  /** Managed clusters (configured ones and those of specs). */
  readonly clusters: readonly string[];
  /** Service names specs give, by cluster (described by name even when unlisted). */
  readonly specNames: ReadonlyMap<string, readonly string[]>;
  /** Names read first, by cluster. */
  readonly priority: ReadonlyMap<string, readonly string[]>;
  /**
   * Names read before `priority` (each cluster's in turn), by cluster: of specs not applied yet,
   * so that a short pass reads what people asked for before the other services needing attention.
   */
  readonly first?: ReadonlyMap<string, readonly string[]>;
  /** Where the previous pass stopped; undefined starts at the first cluster. */
  readonly cursor?: ObserveCursor;
  /** False on the few-keys path: only `priority` is read, no cluster is listed (never prunes). */
  readonly rotate: boolean;
  /**
   * Events mode (`./resync.ts`): the rotation stops starting clusters once it has read this many
   * services that have a spec (whole clusters: the cluster it is in is read to the end, so prune
   * still sees a complete listing). Undefined: read as far as time allows (polling).
   */
  readonly budget?: number;
  /**
   * The resync floor (`./resync.ts`): while the rotation has started fewer than `services` reads of
   * services with a spec, it may go on past `shouldContinue` for as long as `shouldContinue` of the
   * floor holds (a later cut-off, still inside the pass's deadline). Priority reads never use it.
   */
  readonly floor?: { readonly services: number; readonly shouldContinue: () => boolean };
  /** False once no further call may start. */
  readonly shouldContinue: () => boolean;
  /** Each DescribeServices answer as it arrives. */
  readonly onServices: (cluster: string, services: ObservedService[]) => void;
  /** Stopped-task reads (best effort) may go on while this holds. */
  readonly stoppedTasksWhile?: () => boolean;
  /** Services of `cluster` whose stopped tasks are read though they do not lag (`./crash-loop.ts`). */
  readonly readStoppedTasks?: (cluster: string, service: ObservedService) => boolean;
}

/** What was read. */
export interface Observation {
  /** Every cluster something was read of (or learnt not to exist), in read order. */
  readonly clusters: ObservedCluster[];
  /** Clusters of `request.clusters` not reached this pass. */
  readonly notReached: string[];
  /** Failed reads, `cluster NAME: message` (a name not read for lack of time is no failure). */
  readonly errors: string[];
  /** Names read this pass (described or known `MISSING`), by cluster. */
  readonly read: ReadonlyMap<string, ReadonlySet<string>>;
  /** Services read this pass (names, over all clusters). */
  readonly servicesRead: number;
  /** Where the next pass starts; undefined when `rotate` was false. */
  readonly cursor?: ObserveCursor;
  /** True when the rotation read every cluster to the end this pass (no name left unread). */
  readonly cycleComplete: boolean;
  /** Services with a spec the rotation read this pass (priority names it came across included). */
  readonly rotationRead: number;
}

interface ClusterAcc {
  cluster: string;
  exists: boolean;
  listed: boolean;
  listedNames: string[];
  services: Record<string, ObservedService>;
  read: Set<string>;
  errors: string[];
  warnings: string[];
  /** AWS's message of the first read IAM refused (AccessDenied), if any. */
  refused?: string;
}

function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Runs the observation of one pass over `reader` (see the module doc for the order).
 * Never throws for an AWS failure (it is in the clusters' `error`); throws programming errors.
 */
export async function observe(reader: EcsReader, request: ObserveRequest): Promise<Observation> {
  const clusters = [...new Set(request.clusters)].sort(byCodeUnit);
  const accs = new Map<string, ClusterAcc>();
  const acc = (cluster: string): ClusterAcc => {
    let a = accs.get(cluster);
    if (!a) {
      a = { cluster, exists: true, listed: false, listedNames: [], services: dict(), read: new Set(), errors: [], warnings: [] };
      accs.set(cluster, a);
    }
    return a;
  };
  if (!reader.listServices || !reader.readServices) return observeWholeClusters(reader, request, clusters);
  const listServices = reader.listServices.bind(reader);
  const readServices = reader.readServices.bind(reader);
  const { shouldContinue } = request;

  /** Reads of services with a spec the rotation has started (describe calls started, names counted). */
  let floorStarted = 0;
  const { floor } = request;
  /** The rotation's cut-off: the observation's, or the floor's later one while the floor is not read yet. */
  const rotationContinue = (): boolean => shouldContinue() || (floor !== undefined && floorStarted < floor.services && floor.shouldContinue());

  /**
   * Describes `names` of `cluster` not read yet; returns the last name a call was started for.
   * `rotation`: a read of the rotation (it may use the floor's cut-off, and counts toward it).
   */
  const describe = async (cluster: string, names: readonly string[], rotation = false): Promise<{ all: boolean; lastStarted?: string }> => {
    const a = acc(cluster);
    const todo = names.filter((n) => !a.read.has(n));
    const spec = new Set(request.specNames.get(cluster) ?? []);
    // Toward the floor: the names of each call started, and the names the priority reads already
    // read this pass as the rotation reaches them (up to the last name started).
    let reached = 0;
    const reach = (upTo: string | undefined) => {
      for (; reached < names.length && (upTo === undefined || names[reached] <= upTo); reached++) {
        if (spec.has(names[reached])) floorStarted += 1;
      }
    };
    if (todo.length === 0) {
      if (rotation) reach(undefined);
      return { all: true };
    }
    let started = 0;
    const gate = () => {
      if (!(rotation ? rotationContinue() : shouldContinue())) return false;
      started += 1;
      if (rotation) reach(todo[Math.min(todo.length, started * DESCRIBE_SERVICES_BATCH) - 1]);
      return true;
    };
    const out = await readServices(cluster, todo, {
      shouldContinue: gate,
      onServices: (s) => request.onServices(cluster, s),
      stoppedTasksWhile: request.stoppedTasksWhile ?? shouldContinue,
      ...(request.readStoppedTasks ? { readStoppedTasks: stoppedTasksOf(request.readStoppedTasks, cluster) } : {}),
    });
    fold(a, out);
    const startedNames = Math.min(todo.length, started * DESCRIBE_SERVICES_BATCH);
    if (rotation && startedNames >= todo.length) reach(undefined);
    return { all: startedNames >= todo.length, ...(startedNames > 0 ? { lastStarted: todo[startedNames - 1] } : {}) };
  };

  // 1. Priority names, by name (`first` before the rest; a name is described once).
  for (const tier of [request.first, request.priority]) {
    for (const cluster of clusters) {
      const names = [...(tier?.get(cluster) ?? [])].sort(byCodeUnit);
      if (names.length === 0 || !shouldContinue()) continue;
      await describe(cluster, names);
    }
  }

  // 2. The rotation.
  let cursor: ObserveCursor | undefined;
  let cycleComplete = false;
  let rotationRead = 0;
  const specRead = (cluster: string, names: readonly string[]): number => {
    const spec = new Set(request.specNames.get(cluster) ?? []);
    const a = acc(cluster);
    return names.filter((n) => spec.has(n) && a.read.has(n)).length;
  };
  if (request.rotate && clusters.length > 0) {
    const start = rotationStart(clusters, request.cursor);
    const order = [...clusters.slice(start.index), ...clusters.slice(0, start.index)];
    let tail: string[] = [];
    let cut: ObserveCursor | undefined;
    for (let i = 0; i < order.length && !cut; i++) {
      const cluster = order[i];
      const after = i === 0 ? start.after : undefined;
      if (!rotationContinue() || (request.budget !== undefined && i > 0 && rotationRead >= request.budget)) {
        cut = { cluster, ...(after !== undefined ? { after } : {}) };
        break;
      }
      const a = acc(cluster);
      const listing = await listServices(cluster, { shouldContinue: rotationContinue });
      if (!listing.exists) {
        a.exists = false;
        a.listed = true;
        continue;
      }
      a.listed = listing.complete;
      a.listedNames = listing.names;
      if (listing.error) a.errors.push(listing.error);
      if (listing.refused !== undefined) a.refused ??= listing.refused;
      const names = [...new Set([...listing.names, ...(request.specNames.get(cluster) ?? [])])].sort(byCodeUnit);
      const ahead = after === undefined ? names : names.filter((n) => n > after);
      if (after !== undefined) tail = names.filter((n) => n <= after);
      const r = await describe(cluster, ahead, true);
      rotationRead += specRead(cluster, ahead);
      if (!r.all) cut = { cluster, ...(r.lastStarted !== undefined ? { after: r.lastStarted } : after !== undefined ? { after } : {}) };
    }
    if (!cut && tail.length > 0) {
      const cluster = order[0];
      const r = await describe(cluster, tail, true);
      rotationRead += specRead(cluster, tail);
      if (!r.all) cut = { cluster, ...(r.lastStarted !== undefined ? { after: r.lastStarted } : {}) };
    }
    cycleComplete = !cut;
    // A whole cycle read: next time start at the same cluster's first name, so that a fleet that
    // fits one pass is always read in the fewest calls (no cluster split in two).
    cursor = cut ?? { cluster: order[0] };
  }

  const observed: ObservedCluster[] = [];
  const read = new Map<string, ReadonlySet<string>>();
  const errors: string[] = [];
  let servicesRead = 0;
  for (const a of accs.values()) {
    for (const e of a.errors) errors.push(`cluster ${a.cluster}: ${e}`);
    read.set(a.cluster, a.read);
    servicesRead += a.read.size;
    if (!a.exists) {
      observed.push({ cluster: a.cluster, complete: true, exists: false, services: dict() });
      continue;
    }
    const wanted = new Set([...a.listedNames, ...(request.specNames.get(a.cluster) ?? [])]);
    const allRead = [...wanted].every((n) => a.read.has(n));
    const complete = a.listed && allRead && a.errors.length === 0;
    const error = a.errors.length > 0 ? a.errors.join('; ') : !complete ? notReadMessage(a) : undefined;
    observed.push({
      cluster: a.cluster,
      complete,
      exists: true,
      services: a.services,
      ...(error ? { error } : {}),
      ...(a.warnings.length > 0 ? { warnings: a.warnings } : {}),
      ...(!complete ? { described: a.read } : {}),
      ...(a.refused !== undefined ? { refused: { reason: Reason.ClusterAccessDenied, message: a.refused } } : {}),
    });
  }
  const notReached = clusters.filter((c) => !accs.has(c));
  return { clusters: observed, notReached, errors, read, servicesRead, ...(cursor ? { cursor } : {}), cycleComplete, rotationRead };
}

function notReadMessage(a: ClusterAcc): string {
  return a.listed ? 'not every service was read this pass (the next passes read the rest)' : 'the cluster was not listed to the end this pass';
}

function fold(a: ClusterAcc, out: ServiceDescriptions): void {
  if (!out.exists) a.exists = false;
  for (const name of out.described) a.read.add(name);
  for (const s of out.services) {
    const prev = own(a.services, s.serviceName);
    if (!prev || prev.status === 'INACTIVE') putOwn(a.services, s.serviceName, s);
  }
  a.errors.push(...out.errors);
  a.warnings.push(...out.warnings);
  if (out.refused !== undefined) a.refused ??= out.refused;
}

/** Index in sorted `clusters` where the rotation starts, and the name to start after there. */
function rotationStart(clusters: readonly string[], cursor: ObserveCursor | undefined): { index: number; after?: string } {
  if (!cursor) return { index: 0 };
  const exact = clusters.indexOf(cursor.cluster);
  if (exact >= 0) return { index: exact, ...(cursor.after !== undefined ? { after: cursor.after } : {}) };
  // The cursor's cluster is no longer managed: go on with the next one in name order.
  const next = clusters.findIndex((c) => c > cursor.cluster);
  return { index: next >= 0 ? next : 0 };
}

/** DescribeServices takes at most 10 services per call (docs/ecs-facts.md §1). */
const DESCRIBE_SERVICES_BATCH = 10;

/** Clusters observed at once by a reader without `listServices` / `readServices`. */
const WHOLE_CLUSTER_CONCURRENCY = 2;

/**
 * For a reader without `listServices` / `readServices` (test fakes): one `observeCluster` per
 * cluster, whole and never cut, as passes did before the rotation; on the few-keys path only the
 * asked names are kept, and no cluster counts as complete.
 */
async function observeWholeClusters(reader: EcsReader, request: ObserveRequest, clusters: string[]): Promise<Observation> {
  const wanted = request.rotate ? clusters : clusters.filter((c) => (request.priority.get(c) ?? []).length > 0);
  const results: ObservedCluster[] = new Array(wanted.length);
  let next = 0;
  const worker = async () => {
    while (next < wanted.length) {
      const i = next++;
      const c = wanted[i];
      const names = request.rotate ? (request.specNames.get(c) ?? []) : (request.priority.get(c) ?? []);
      const oc = await reader.observeCluster(c, [...names].sort(byCodeUnit), {
        onServices: (s) => request.onServices(c, s),
        ...(request.stoppedTasksWhile ? { shouldContinue: request.stoppedTasksWhile } : {}),
        ...(request.readStoppedTasks ? { readStoppedTasks: stoppedTasksOf(request.readStoppedTasks, c) } : {}),
      });
      if (request.rotate || !oc.exists) {
        results[i] = oc;
        continue;
      }
      const asked = new Set(names);
      const services = dict(Object.entries(oc.services).filter(([n]) => asked.has(n)));
      results[i] = { ...oc, complete: false, services, described: oc.complete ? asked : new Set(Object.keys(services)), error: oc.error ?? 'only the asked services were read' };
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(WHOLE_CLUSTER_CONCURRENCY, wanted.length)) }, worker));
  const read = new Map<string, ReadonlySet<string>>();
  const errors: string[] = [];
  let servicesRead = 0;
  for (const oc of results) {
    if (oc.error && (request.rotate || oc.error !== 'only the asked services were read')) errors.push(`cluster ${oc.cluster}: ${oc.error}`);
    const names = oc.described ?? new Set([...Object.keys(oc.services), ...(oc.complete ? (request.specNames.get(oc.cluster) ?? []) : [])]);
    read.set(oc.cluster, names);
    servicesRead += names.size;
  }
  return {
    clusters: results,
    notReached: clusters.filter((c) => !wanted.includes(c)),
    errors,
    read,
    servicesRead,
    ...(request.rotate ? { cursor: request.cursor ?? { cluster: clusters[0] } } : {}),
    cycleComplete: request.rotate,
    rotationRead: request.rotate ? [...request.specNames.values()].reduce((n, names) => n + names.length, 0) : 0,
  };
}

/** {@link ObserveRequest.readStoppedTasks} for one cluster. */
function stoppedTasksOf(wanted: (cluster: string, service: ObservedService) => boolean, cluster: string): (service: ObservedService) => boolean {
  return (service) => wanted(cluster, service);
}

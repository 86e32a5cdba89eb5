/**
 * The pass benchmark (parent side): reconcile passes with the real adapters against the ECS
 * simulator (HTTP on loopback, ECS's throttling on, 30 ms per call) and dynalite, run by a worker
 * process that stands in for a Lambda container (`./pass-worker`), bounded like the Lambda (50 s).
 *
 * For each fleet size N (services dealt over 20 clusters), on a fleet seeded as the reconciler
 * would have left it (`./scale-fleet`), and for each events mode (off: every pass polls; on: the
 * simulator's events feed the pass), one container runs, a simulated minute apart:
 * 1. `new container`: its first pass (empty in-memory caches; the durable task definition cache as
 *    the creating container left it);
 * 2. `steady`: the next passes;
 * 3. `hand edit`: a handful of services changed by hand in ECS on the fleet at rest, half a minute
 *    before the next pass; passes until every one is corrected (at most the follow bound);
 * 4. `drift`: 10% of the services changed by hand in ECS (desiredCount + 1, as in the console)
 *    half a minute before the next pass; passes until every one is corrected;
 * 5. `spec edit`: a few spec items edited (a new image) half a minute before the next pass; passes
 *    until every one is rolled out (its UpdateService sent);
 * 6. `hand edit behind drift` (events on, informative): a handful of hand edits while the drift's
 *    corrections are still queued, made with the spec edits and followed by the same passes;
 * 7. `resync`: after the drift left is undone by hand, passes until every service was described
 *    since a mark (events on: every ECS event lost from the mark on).
 */
import { ENV } from '../lambda/config';
import { memoryForFleet } from '../lib/function-memory';
import type { CallCount, CallRecord } from '../local/sim';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { LOCAL_RECONCILER_CREDENTIALS } from '../local/stack';
import { BENCH_CLUSTER_COUNT, BENCH_TABLE, benchClusters, benchSpecItem } from './fixtures';
import type { PassDeadline, PassInitRequest, PassInitResponse, PassRequest, PassResult } from './protocol';
import { benchEnv, seedFleet, type SeededFleet } from './scale-fleet';
import { BenchWorker } from './workers';

/** The construct's function timeout (seconds), `lib/ecs-reconciler.ts`. */
export const LAMBDA_TIMEOUT_SECONDS = 50;
/** The schedule: one pass a minute (seconds). */
export const SCHEDULE_SECONDS = 60;
/** The access key the reconciler calls ECS with: the local stack's reconciler key (its CloudTrail events carry its role). */
const RECONCILER_ACCESS_KEY_ID = LOCAL_RECONCILER_CREDENTIALS.accessKeyId;
/** Real milliseconds the simulator holds each ECS answer (AWS's latency, about). */
export const DEFAULT_LATENCY_MS = 30;
/** Share of the services changed by hand in the drift scenario. */
export const DRIFT_SHARE = 0.1;
/** Spec items edited in the spec-edit scenario. */
export const DEFAULT_SPEC_EDITS = 10;
/** Services changed by hand in the hand-edit scenario (a handful, as people do; drift is the 10% case). */
export const DEFAULT_HAND_EDITS = 10;
/** `RESYNC_MINUTES` of the reconciler (its default): every service re-read within it, whatever events say. */
export const RESYNC_MINUTES = 10;
/**
 * Passes the resync scenario runs after its mark, at most: one a minute for {@link RESYNC_MINUTES},
 * and two more to see how far beyond the bound it goes.
 */
export const RESYNC_MAX_PASSES = RESYNC_MINUTES + 2;
/** Seconds between a change and the next scheduled pass (half the schedule: the mean wait). */
export const EDIT_LEAD_SECONDS = 30;
/**
 * Passes after a change, at most, until every changed service is acted on: exactly what "within
 * two passes" needs; beyond, drift of 10% is paced by ECS's UpdateService budget, which two
 * passes show as well as more (docs/benchmarks.md).
 */
export const DEFAULT_MAX_FOLLOW_PASSES = 2;
/** Passes to settle the fleet between modes, at most (the hand edits left are undone first). */
const MAX_SETTLE_PASSES = 2;
/** Peak RSS limit (MiB) by fleet size: the function's memory the construct gives that size (`lib/function-memory.ts`; 80% of it is the headroom target). */
export function rssLimitMiB(services: number): number {
  return memoryForFleet(services);
}

export type EventsMode = 'off' | 'on';
export type Scenario = 'new container' | 'steady' | 'drift' | 'spec edit' | 'hand edit' | 'hand edit behind drift' | 'resync';

/** One measured pass. */
export interface MeasuredPass {
  readonly services: number;
  readonly mode: EventsMode;
  readonly scenario: Scenario;
  /** 1-based index of the pass within its scenario. */
  readonly index: number;
  /**
   * 1-based number of the pass within its container: two scenarios followed by the same passes
   * (spec edit and hand edit behind drift) each list a pass under its own name and index, with
   * the same number.
   */
  readonly pass: number;
  readonly result: PassResult;
  /** ECS calls the simulator answered during the pass, by action. */
  readonly ecsCalls: Record<string, CallCount>;
  /** Fewest calls that read the services this pass read (ListServices pages of the clusters it listed, DescribeServices of 10). */
  readonly readLowerBound: number;
  /** ListServices and DescribeServices calls of the pass (what the lower bound counts). */
  readonly serviceReads: number;
  /** Every ECS read call of the pass (List*, Describe*: task definitions, deployment history, stopped tasks too). */
  readonly readCalls: number;
  /** Distinct services DescribeServices named this pass. */
  readonly servicesDescribed: number;
  /** Seconds of simulated time from the start of the first pass of the container to the start of this one. */
  readonly atSeconds: number;
}

/** A scenario of one size and mode: its passes and, for an edit, how fast it was acted on. */
export interface ScenarioResult {
  readonly services: number;
  readonly mode: EventsMode;
  readonly scenario: Scenario;
  readonly passes: MeasuredPass[];
  /** Services changed (drift, spec edit); 0 otherwise. */
  readonly targets: number;
  /** Of them, acted on (their UpdateService sent) by the end. */
  readonly actedOn: number;
  /** Targets acted on by each pass after the edit (cumulative). */
  readonly actedByPass: number[];
  /** Simulated seconds from each acted-on change to its UpdateService. */
  readonly editToCallSeconds: number[];
  /**
   * Resync: services described (DescribeServices) at least once since the mark, after each pass
   * since the mark (cumulative; the fleet is `services`), and whether events were lost meanwhile.
   */
  readonly resync?: { readonly coveredByPass: number[]; readonly mark: string; readonly passesBeforeScenario: number };
}

export interface ModeRun {
  readonly mode: EventsMode;
  readonly init: PassInitResponse;
  readonly scenarios: ScenarioResult[];
  /** High-water RSS of the container over all its passes (bytes). */
  readonly maxRssBytes: number;
  /** Passes needed to settle after the scenarios (not reported otherwise); undefined when it did not. */
  readonly settledAfter?: number;
  /** Real seconds the mode took (its container's start to its last pass), and its passes (settling included). */
  readonly realSeconds: number;
  readonly passes: number;
}

export interface SizeResult {
  readonly services: number;
  readonly clusters: number;
  readonly seedSeconds: number;
  readonly modes: ModeRun[];
}

export interface PassBenchOptions {
  readonly passWorker: string;
  readonly sizes: readonly number[];
  readonly modes: readonly EventsMode[];
  readonly steadyPasses: number;
  readonly specEdits: number;
  readonly maxFollowPasses: number;
  /** Services changed by hand in the hand-edit scenario. */
  readonly handEdits: number;
  readonly latencyMs: number;
  /** Node flags of the worker (e.g. `--max-old-space-size`). */
  readonly workerExecArgv?: (services: number) => string[];
  /**
   * Events on: what the worker's environment needs (queue URL...) and a hook called before each
   * pass (e.g. the schedule's heartbeat). Undefined: only `off` can run.
   */
  readonly events?: EventsFeedSetup;
  /** Called with a line of progress (stderr). */
  readonly progress: (line: string) => void;
}

/** How the bench feeds the simulator's events to the reconciler (events on). */
export interface EventsFeedSetup {
  /** Starts the feed on a seeded fleet; returns the reconciler variables and a hook run before each pass. */
  start(fleet: SeededFleet): Promise<EventsFeed>;
}

/** A started events feed. */
export interface EventsFeed {
  /** Reconciler variables of events mode (`EVENTS_QUEUE_URL`, `EVENTS_IGNORE_PRINCIPALS`). */
  readonly env: Record<string, string>;
  /** Endpoint of the queue's server. */
  readonly sqsEndpoint: string;
  /** Before each pass (the heartbeat rule fires). */
  beforePass(): Promise<void>;
  /** While true, every ECS event is lost before the queue; the heartbeat still arrives (the resync scenario). */
  dropEvents(drop: boolean): void;
  close(): Promise<void>;
}

/** Runs the pass benchmark. Servers and workers are always stopped before it returns. */
export async function runPassBench(opts: PassBenchOptions): Promise<SizeResult[]> {
  const out: SizeResult[] = [];
  for (const n of opts.sizes) out.push(await benchSize(n, opts));
  return out;
}

/** Services of cluster `c` in a fleet of `n` (dealt round-robin). */
function clusterSize(n: number, c: number): number {
  return Math.floor(n / BENCH_CLUSTER_COUNT) + (c < n % BENCH_CLUSTER_COUNT ? 1 : 0);
}

const READ_ACTIONS = /^(List|Describe)/;

/** `cluster/service` of each service a successful DescribeServices named, from a call log. */
function describedKeys(calls: CallRecord[]): string[] {
  const out: string[] = [];
  for (const c of calls) {
    if (c.action !== 'DescribeServices' || c.outcome !== 'ok') continue;
    for (const s of (c.request.services as string[] | undefined) ?? []) out.push(`${String(c.request.cluster ?? '')}/${s}`);
  }
  return out;
}

/** Read calls, their lower bound and the services described, from the pass's call log. */
function readCost(n: number, calls: CallRecord[]): { readLowerBound: number; serviceReads: number; readCalls: number; servicesDescribed: number } {
  const listed = new Set<string>();
  const described = new Map<string, Set<string>>();
  let readCalls = 0;
  let serviceReads = 0;
  for (const c of calls) {
    if (READ_ACTIONS.test(c.action)) readCalls += 1;
    if (c.action === 'ListServices' || c.action === 'DescribeServices') serviceReads += 1;
    if (c.outcome !== 'ok') continue;
    const cluster = String(c.request.cluster ?? '');
    if (c.action === 'ListServices') listed.add(cluster);
    if (c.action === 'DescribeServices') {
      const names = described.get(cluster) ?? new Set<string>();
      for (const s of (c.request.services as string[] | undefined) ?? []) names.add(s);
      described.set(cluster, names);
    }
  }
  const clusters = benchClusters();
  let lower = 0;
  for (const cluster of listed) lower += Math.max(1, Math.ceil(clusterSize(n, clusters.indexOf(cluster)) / 100));
  let servicesDescribed = 0;
  for (const names of described.values()) {
    lower += Math.ceil(names.size / 10);
    servicesDescribed += names.size;
  }
  return { readLowerBound: lower, serviceReads, readCalls, servicesDescribed };
}

/** One container (worker) over a seeded fleet, a pass a simulated minute apart. */
class Container {
  private lastStartMs: number;
  private maxRss = 0;
  private firstStartMs: number | undefined;
  /** Services described since {@link mark} (`cluster/service`), and passes since then. */
  private readSince = new Set<string>();
  private coveredByPass: number[] = [];
  /** Passes run by this container. */
  passes = 0;

  private constructor(
    readonly fleet: SeededFleet,
    readonly worker: BenchWorker,
    readonly init: PassInitResponse,
    readonly mode: EventsMode,
    private readonly beforePass: () => Promise<void>,
  ) {
    this.lastStartMs = fleet.stack.sim.clock.nowMs() - SCHEDULE_SECONDS * 1000;
  }

  static async start(
    fleet: SeededFleet,
    bundle: string,
    mode: EventsMode,
    env: Record<string, string>,
    execArgv: string[],
    feed: EventsFeed | undefined,
  ): Promise<Container> {
    const worker = BenchWorker.start(bundle, execArgv);
    try {
      const init = await worker.request<PassInitRequest>({
        type: 'init',
        ecsEndpoint: fleet.stack.sim.endpoint,
        dynamodbEndpoint: fleet.stack.db.endpoint,
        region: fleet.stack.region,
        env,
        ecsAccessKeyId: RECONCILER_ACCESS_KEY_ID,
        ...(feed ? { sqsEndpoint: feed.sqsEndpoint } : {}),
      });
      const beforePass = feed ? () => feed.beforePass() : async () => undefined;
      return new Container(fleet, worker, init, mode, beforePass);
    } catch (err) {
      await worker.stop();
      throw err;
    }
  }

  get highWaterRss(): number {
    return this.maxRss;
  }

  /** Starts counting the services described from the next pass on. */
  mark(): void {
    this.readSince = new Set();
    this.coveredByPass = [];
  }

  /** Services described since the mark, passes run since it, and the services described by each of them (cumulative). */
  get coverage(): { services: number; passes: number; byPass: number[] } {
    return { services: this.readSince.size, passes: this.coveredByPass.length, byPass: [...this.coveredByPass] };
  }

  /** Moves simulated time to `ms` (never backwards). */
  private advanceTo(ms: number): void {
    const sim = this.fleet.stack.sim;
    if (ms > sim.clock.nowMs()) sim.advance((ms - sim.clock.nowMs()) / 1000);
  }

  /** Moves simulated time to {@link EDIT_LEAD_SECONDS} before the next pass (or leaves it, if later) and returns it. */
  editTime(): Date {
    this.advanceTo(this.lastStartMs + (SCHEDULE_SECONDS - EDIT_LEAD_SECONDS) * 1000);
    return this.fleet.stack.sim.clock.now();
  }

  /** Runs the next scheduled pass, bounded like the Lambda, with the call log cleared first. */
  async pass(scenario: Scenario, index: number): Promise<{ measured: MeasuredPass; calls: CallRecord[] }> {
    const sim = this.fleet.stack.sim;
    this.advanceTo(this.lastStartMs + SCHEDULE_SECONDS * 1000);
    this.lastStartMs = sim.clock.nowMs();
    await this.beforePass();
    this.passes += 1;
    sim.clearCalls();
    const deadline: PassDeadline = { kind: 'lambda', timeoutSeconds: LAMBDA_TIMEOUT_SECONDS };
    const { result } = await this.worker.request<PassRequest>({ type: 'pass', simNowMs: sim.clock.nowMs(), deadline });
    const calls = sim.calls();
    this.maxRss = Math.max(this.maxRss, result.maxRssBytes);
    for (const key of describedKeys(calls)) this.readSince.add(key);
    this.coveredByPass.push(this.readSince.size);
    this.firstStartMs ??= this.lastStartMs;
    const n = this.fleet.services;
    return {
      measured: {
        services: n,
        mode: this.mode,
        scenario,
        index,
        pass: this.passes,
        result,
        ecsCalls: sim.callCounts(),
        ...readCost(n, calls),
        atSeconds: (this.lastStartMs - this.firstStartMs) / 1000,
      },
      calls,
    };
  }
}

/**
 * Indexes of the services changed by hand: a tenth of each cluster's (services are dealt
 * round-robin, so every tenth round of 20). Every tenth index would put them all in 2 of the 20
 * clusters (i mod 10 = 7 means i mod 20 is 7 or 17), which the rotation of a polling pass may not
 * reach for passes (the run of 2026-12-02 in bench/RESULTS.md was measured so).
 */
export function driftTargets(n: number): number[] {
  const every = Math.round(1 / DRIFT_SHARE);
  return Array.from({ length: n }, (_, i) => i).filter((i) => Math.floor(i / BENCH_CLUSTER_COUNT) % every === 3);
}

/** Indexes of the spec items edited: spread over the fleet. */
export function specEditTargets(n: number, count: number, offset = 3): number[] {
  const k = Math.min(count, n);
  if (k === 0) return [];
  const step = Math.floor(n / k);
  return Array.from({ length: k }, (_, j) => j * step + offset).filter((i) => i < n);
}

/**
 * Indexes of the services changed by hand in the hand-edit scenarios: one in each `count`-th of
 * the fleet, the j-th in cluster `offset + j` (mod 20; services are dealt round-robin, so index
 * mod 20 is the cluster), so that they are spread over the clusters as well as the fleet (every
 * n/count-th service plus a constant put all 10 in one cluster whenever n/10 is a multiple of 20,
 * as at 1,000, 5,000 and 20,000; the run of 2026-12-02 in bench/RESULTS.md was measured so). None
 * is a drift target nor one of the `specEdits` spec-edit targets (their corrections would be counted): such a one moves
 * on by 20 (the same cluster, the next round). Exported for its test.
 */
export function handEditTargets(n: number, count: number, offset = 11, specEdits = DEFAULT_SPEC_EDITS): number[] {
  const k = Math.min(count, n);
  if (k === 0) return [];
  const taken = new Set([...driftTargets(n), ...specEditTargets(n, specEdits)]);
  const step = Math.floor(n / k);
  const out: number[] = [];
  for (let j = 0; j < k; j++) {
    const start = j * step;
    const cluster = (offset + j) % BENCH_CLUSTER_COUNT;
    let i = start + ((cluster - (start % BENCH_CLUSTER_COUNT) + BENCH_CLUSTER_COUNT) % BENCH_CLUSTER_COUNT);
    while (i < n && (taken.has(i) || out.includes(i))) i += BENCH_CLUSTER_COUNT;
    if (i < n) out.push(i);
  }
  return out;
}

/** Changes the desiredCount of services `targets` by hand (ECS's console does an UpdateService as the person): their spec's + `delta`. */
function scaleByHand(fleet: SeededFleet, targets: number[], delta: number): void {
  for (const i of targets) {
    const item = benchSpecItem(i);
    fleet.stack.sim.setDesiredCount({ cluster: String(item.cluster), service: String(item.service), desiredCount: Number(item.desiredCount) + delta });
  }
}

function keyOf(i: number): string {
  const item = benchSpecItem(i);
  return `${String(item.cluster)}/${String(item.service)}`;
}

/** What {@link follow} needs of a container: its next pass (with the simulator's call log of it), its mode and fleet size. */
export interface PassRunner {
  readonly mode: EventsMode;
  readonly fleet: { readonly services: number };
  pass(scenario: Scenario, index: number): Promise<{ measured: MeasuredPass; calls: CallRecord[] }>;
}

/** A change to follow: its scenario and the indexes of the services it changed. */
export interface FollowedChange {
  readonly scenario: Scenario;
  readonly targets: number[];
}

/**
 * Runs passes after changes made at `at` until each target's UpdateService was sent (or
 * `maxPasses`), and measures how fast, per change: a change is followed by the passes that ran
 * while it still had targets waiting (changes made together share passes: each lists a shared
 * pass under its own scenario and index, with the same {@link MeasuredPass.pass}). Exported for its test.
 */
export async function follow(c: PassRunner, changes: FollowedChange[], at: Date, maxPasses: number): Promise<ScenarioResult[]> {
  const followed = changes.map((ch) => ({
    ...ch,
    waiting: new Set(ch.targets.map(keyOf)),
    passes: [] as MeasuredPass[],
    actedByPass: [] as number[],
    latencies: [] as number[],
  }));
  for (let i = 1; i <= maxPasses; i++) {
    const open = followed.filter((f) => f.waiting.size > 0);
    if (open.length === 0) break;
    const { measured, calls } = await c.pass(open[0].scenario, i);
    for (const f of open) {
      f.passes.push({ ...measured, scenario: f.scenario, index: i });
      for (const call of calls) {
        if (call.action !== 'UpdateService' || call.outcome !== 'ok') continue;
        const key = `${String(call.request.cluster)}/${String(call.request.service)}`;
        if (!f.waiting.delete(key)) continue;
        f.latencies.push((call.at.getTime() - at.getTime()) / 1000);
      }
      f.actedByPass.push(f.targets.length - f.waiting.size);
    }
  }
  return followed.map((f) => ({
    services: c.fleet.services,
    mode: c.mode,
    scenario: f.scenario,
    passes: f.passes,
    targets: f.targets.length,
    actedOn: f.targets.length - f.waiting.size,
    actedByPass: f.actedByPass,
    editToCallSeconds: f.latencies,
  }));
}

async function runMode(fleet: SeededFleet, mode: EventsMode, opts: PassBenchOptions): Promise<ModeRun> {
  const n = fleet.services;
  const sim = fleet.stack.sim;
  let feed: EventsFeed | undefined;
  if (mode === 'on') {
    if (!opts.events) throw new Error('events on needs a feed (PassBenchOptions.events)');
    feed = await opts.events.start(fleet);
  }
  const env = feed ? benchEnv(fleet.stack, feed.env) : { ...fleet.env, [ENV.events]: 'false' };
  const closeFeed = async () => feed?.close();
  const began = performance.now();
  const clock = () => ` (${((performance.now() - began) / 1000).toFixed(0)} s, ${c.passes} passes)`;
  const c = await Container.start(fleet, opts.passWorker, mode, env, opts.workerExecArgv?.(n) ?? [], feed);
  try {
    const scenarios: ScenarioResult[] = [];
    const one = (scenario: Scenario, passes: MeasuredPass[]): ScenarioResult => ({
      services: n,
      mode,
      scenario,
      passes,
      targets: 0,
      actedOn: 0,
      actedByPass: [],
      editToCallSeconds: [],
    });
    scenarios.push(one('new container', [(await c.pass('new container', 1)).measured]));
    opts.progress(`  N=${n} events ${mode}: new container pass done${clock()}`);
    const steady: MeasuredPass[] = [];
    for (let i = 1; i <= opts.steadyPasses; i++) steady.push((await c.pass('steady', i)).measured);
    scenarios.push(one('steady', steady));

    // A handful of hand edits on a fleet at rest ("a hand edit in ECS is corrected
    // within two passes": the handful of edits people make; drift of 10% is the case below).
    // Hand edits at `offset` (targets spread over 10 clusters), followed, then undone by hand
    // where not corrected yet (events off: the rotation reaches them later).
    const handEdits = handEditTargets(n, opts.handEdits, 11, opts.specEdits);
    const handAt = c.editTime();
    scaleByHand(fleet, handEdits, 1);
    const [handResult] = await follow(c, [{ scenario: 'hand edit', targets: handEdits }], handAt, opts.maxFollowPasses);
    scenarios.push(handResult);
    scaleByHand(fleet, handEdits, 0);
    opts.progress(`  N=${n} events ${mode}: hand edits ${handResult.actedOn}/${handResult.targets} corrected in ${handResult.passes.length} passes${clock()}`);

    // Drift: desiredCount + 1 by hand (ECS's console does an UpdateService as the person).
    const drift = driftTargets(n);
    const driftAt = c.editTime();
    scaleByHand(fleet, drift, 1);
    const [driftResult] = await follow(c, [{ scenario: 'drift', targets: drift }], driftAt, opts.maxFollowPasses);
    scenarios.push(driftResult);
    opts.progress(`  N=${n} events ${mode}: drift ${driftResult.actedOn}/${driftResult.targets} corrected in ${driftResult.passes.length} passes${clock()}`);

    // Spec edits: a new image in the item, as `ecsr set image` writes it.
    const edits = specEditTargets(n, opts.specEdits);
    const editAt = c.editTime();
    const image = `public.ecr.aws/nginx/nginx:1.28.${mode === 'on' ? 1 : 0}`;
    for (const i of edits) {
      const item = benchSpecItem(i);
      await fleet.stack.doc.send(
        new UpdateCommand({
          TableName: BENCH_TABLE,
          Key: { cluster: item.cluster, service: item.service },
          UpdateExpression: 'SET #image = :image',
          ExpressionAttributeNames: { '#image': 'image' },
          ExpressionAttributeValues: { ':image': image },
        }),
      );
    }
    // Informative (events on): at the same time, a handful of hand edits while the drift's
    // corrections are still queued (about 50 a pass at ECS's UpdateService budget) and the queue
    // holds their events; followed by the same passes as the spec edits (until all of both are
    // acted on, at most the follow bound), which spares the passes a scenario of their own took.
    const behind = mode === 'on' ? handEditTargets(n, opts.handEdits, 13, opts.specEdits) : [];
    scaleByHand(fleet, behind, 1);
    const [editResult, behindResult] = await follow(
      c,
      [
        { scenario: 'spec edit', targets: edits },
        { scenario: 'hand edit behind drift', targets: behind },
      ],
      editAt,
      opts.maxFollowPasses,
    );
    scenarios.push(editResult);
    opts.progress(`  N=${n} events ${mode}: spec edits ${editResult.actedOn}/${editResult.targets} rolled out in ${editResult.passes.length} passes${clock()}`);
    if (behind.length > 0) {
      scenarios.push(behindResult);
      scaleByHand(fleet, behind, 0);
      opts.progress(`  N=${n} events ${mode}: hand edits behind the drift ${behindResult.actedOn}/${behindResult.targets} corrected in ${behindResult.passes.length} passes${clock()}`);
    }

    // Settle (not reported): the drift not corrected yet is undone by hand, so that the resync
    // floor and the next mode start from a fleet at rest.
    scaleByHand(fleet, drift, 0);
    let settledAfter: number | undefined;
    for (let i = 1; i <= MAX_SETTLE_PASSES && settledAfter === undefined; i++) {
      const { measured } = await c.pass('steady', 100 + i);
      if (measured.result.actionsPlanned === 0 && measured.result.statusesWritten === 0) settledAfter = i;
    }

    // The resync floor ("every service is fully re-read at least every RESYNC_MINUTES even
    // if every event is lost"): passes until every service was described since the mark, at most
    // RESYNC_MAX_PASSES. Events off: the mark is the container's first pass (no event is ever read,
    // the passes above count); events on: the mark is now, and from now every ECS event is lost on
    // its way to the queue (the heartbeat still arrives, so the passes stay in events mode).
    if (mode === 'on') {
      c.mark();
      feed?.dropEvents(true);
    }
    const before = c.coverage.passes;
    const resyncPasses: MeasuredPass[] = [];
    while (c.coverage.services < n && c.coverage.passes < RESYNC_MAX_PASSES) {
      resyncPasses.push((await c.pass('resync', resyncPasses.length + 1)).measured);
    }
    const coveredByPass = c.coverage.byPass;
    feed?.dropEvents(false);
    scenarios.push({
      ...one('resync', resyncPasses),
      resync: {
        coveredByPass,
        mark: mode === 'on' ? 'every ECS event lost from the mark' : "the container's first pass",
        passesBeforeScenario: before,
      },
    });
    opts.progress(`  N=${n} events ${mode}: resync ${c.coverage.services}/${n} services read in ${c.coverage.passes} passes since the mark${clock()}`);
    return {
      mode,
      init: c.init,
      scenarios,
      maxRssBytes: c.highWaterRss,
      ...(settledAfter !== undefined ? { settledAfter } : {}),
      realSeconds: (performance.now() - began) / 1000,
      passes: c.passes,
    };
  } finally {
    await c.worker.stop();
    await closeFeed();
  }
}

async function benchSize(n: number, opts: PassBenchOptions): Promise<SizeResult> {
  opts.progress(`  N=${n}: seeding the fleet (planner + simulator in process, dynalite)...`);
  const fleet = await seedFleet(n);
  opts.progress(`  N=${n}: seeded in ${fleet.seedSeconds.toFixed(0)} s`);
  try {
    fleet.stack.sim.setLatency(opts.latencyMs);
    const modes: ModeRun[] = [];
    for (const mode of opts.modes) modes.push(await runMode(fleet, mode, opts));
    return { services: n, clusters: benchClusters().length, seedSeconds: fleet.seedSeconds, modes };
  } finally {
    await fleet.stack.close();
  }
}

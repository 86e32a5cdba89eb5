/**
 * The pass benchmark (parent side): full reconcile passes with the real adapters against the ECS
 * simulator (HTTP on loopback, ECS's throttling on) and dynalite, run by a worker process that
 * stands in for a Lambda container (`./pass-worker`).
 *
 * For each fleet size N:
 * 1. `create`: a fresh stack, N spec items, one unbounded pass from empty (registers a task
 *    definition and creates a service per spec; the whole cost in one pass), then passes a
 *    simulated minute apart until the fleet is steady.
 * 2. `cold`: a new worker (a new Lambda container: empty in-memory task definition cache, the
 *    durable cache table as the creating container left it) runs a pass over the steady fleet,
 *    bounded like the Lambda: it reads the durable cache, then describes what it lacks;
 *    `catchup`: the next passes, a minute apart, until every task definition is described.
 * 3. `steady`: the same worker runs `steadyPasses` more passes a minute apart: the pass of almost
 *    every minute. The simulator's call log counts the last one's ECS calls by action.
 * And once, at a chosen N: `lambda`: passes bounded like the Lambda (50 s timeout) from empty until
 * the fleet is steady, to see how creation spreads over passes.
 */
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { taskDefinitionCacheTableDefinition } from '../lambda/adapters/dynamo-task-definition-cache';
import { ENV } from '../lambda/config';
import type { CallCount } from '../local/sim';
import { localReconcilerEnv, startLocalStack, type LocalStack } from '../local/stack';
import { BENCH_OWNER_ID, BENCH_START_TIME, BENCH_TABLE, benchClusters, benchSpecItems } from './fixtures';
import type { PassDeadline, PassInitRequest, PassInitResponse, PassRequest, PassResult } from './protocol';
import { BenchWorker, WorkerError } from './workers';

/** Warm steady passes measured after the cold one, unless told otherwise. */
export const DEFAULT_STEADY_PASSES = 3;
/** The construct's function timeout (seconds), `lib/ecs-reconciler.ts`. */
export const LAMBDA_TIMEOUT_SECONDS = 50;
/** Passes tried before a fleet counts as not converging (a bug, reported). */
const MAX_CONVERGE_PASSES = 12;
/** Passes of a new container after its first one, at most, until every task definition is described. */
const MAX_CATCHUP_PASSES = 60;
/** The schedule: one pass a minute (seconds). */
const SCHEDULE_SECONDS = 60;
/** The durable task definition cache's table (issue 12 part 1), as the construct creates it. */
const BENCH_CACHE_TABLE = `${BENCH_TABLE}-td-cache`;
/** DynamoDB BatchWriteItem takes at most 25 items. */
const BATCH_WRITE_MAX = 25;

export type PassKind = 'create' | 'converge' | 'cold' | 'catchup' | 'steady' | 'lambda';

/** Passes of the largest fleet in a container whose V8 old space is capped. */
export interface CappedRun {
  /** `--max-old-space-size` of the worker (MiB). */
  readonly heapMiB: number;
  /** The first pass, then the steady passes; fewer when the worker died. */
  readonly passes: MeasuredPass[];
  /** Why the worker failed (e.g. out of memory), when it did. */
  readonly error?: string;
}

/** One measured pass. */
export interface MeasuredPass {
  readonly services: number;
  readonly kind: PassKind;
  /** 1-based index among the passes of its kind at this size. */
  readonly index: number;
  readonly result: PassResult;
  /** ECS calls the simulator answered during the pass, by action. */
  readonly ecsCalls: Record<string, CallCount>;
  /** Services ACTIVE in the simulator after the pass. */
  readonly activeServices: number;
}

export interface SizeResult {
  readonly services: number;
  readonly clusters: number;
  /** Memory of a fresh worker after init (bundle loaded, runtime built). */
  readonly init: PassInitResponse;
  readonly passes: MeasuredPass[];
  /** True when the fleet reached the steady state (no action, no status write, all Converged). */
  readonly converged: boolean;
  /** The same passes with the V8 heap capped (largest size only). */
  readonly capped?: CappedRun;
}

export interface LambdaRunResult {
  readonly services: number;
  readonly passes: MeasuredPass[];
  readonly converged: boolean;
}

export interface PassBenchOptions {
  readonly passWorker: string;
  readonly sizes: readonly number[];
  /** Fleet size of the Lambda-bounded run from empty; 0 skips it. */
  readonly lambdaSize: number;
  /** Warm steady passes per size (default {@link DEFAULT_STEADY_PASSES}). */
  readonly steadyPasses?: number;
  /**
   * `--max-old-space-size` (MiB) of one more container that runs the first and steady passes of
   * the largest fleet; 0 or undefined skips it.
   */
  readonly cappedHeapMiB?: number;
  /** Called with a line of progress (stderr). */
  readonly progress: (line: string) => void;
}

export interface PassBenchResult {
  readonly sizes: SizeResult[];
  readonly lambda?: LambdaRunResult;
}

/** Runs the pass benchmark. Servers and workers are always stopped before it returns. */
export async function runPassBench(opts: PassBenchOptions): Promise<PassBenchResult> {
  const sizes: SizeResult[] = [];
  for (const n of opts.sizes) sizes.push(await benchSize(n, opts));
  const lambda = opts.lambdaSize > 0 ? await benchLambda(opts.lambdaSize, opts) : undefined;
  return { sizes, ...(lambda ? { lambda } : {}) };
}

/** A fleet on a fresh local stack: servers, table, clusters, N spec items. */
class Fleet {
  private constructor(
    readonly stack: LocalStack,
    readonly services: number,
  ) {}

  static async start(n: number): Promise<Fleet> {
    const stack = await startLocalStack({
      specsTable: BENCH_TABLE,
      clusters: benchClusters(),
      seed: 1,
      startTime: BENCH_START_TIME,
      throttling: true,
    });
    const fleet = new Fleet(stack, n);
    try {
      const ddb = new DynamoDBClient(stack.dynamoClientConfig);
      try {
        await ddb.send(new CreateTableCommand(taskDefinitionCacheTableDefinition(BENCH_CACHE_TABLE)));
      } finally {
        ddb.destroy();
      }
      await fleet.putSpecs();
    } catch (err) {
      await stack.close();
      throw err;
    }
    return fleet;
  }

  private async putSpecs(): Promise<void> {
    const items = benchSpecItems(this.services);
    for (let i = 0; i < items.length; i += BATCH_WRITE_MAX) {
      let requests = items.slice(i, i + BATCH_WRITE_MAX).map((Item) => ({ PutRequest: { Item } }));
      while (requests.length > 0) {
        const out = await this.stack.doc.send(new BatchWriteCommand({ RequestItems: { [BENCH_TABLE]: requests } }));
        requests = (out.UnprocessedItems?.[BENCH_TABLE] ?? []) as typeof requests;
      }
    }
  }

  /** The reconciler's environment on this stack (local defaults, OWNER_ID, budget 0.5, the durable task definition cache). */
  env(): Record<string, string> {
    return localReconcilerEnv(this.stack, { OWNER_ID: BENCH_OWNER_ID, [ENV.taskDefinitionCacheTable]: BENCH_CACHE_TABLE });
  }

  async startWorker(bundle: string, execArgv: string[] = []): Promise<{ worker: BenchWorker; init: PassInitResponse }> {
    const worker = BenchWorker.start(bundle, execArgv);
    try {
      const init = await worker.request<PassInitRequest>({
        type: 'init',
        ecsEndpoint: this.stack.sim.endpoint,
        dynamodbEndpoint: this.stack.db.endpoint,
        region: this.stack.region,
        env: this.env(),
      });
      return { worker, init };
    } catch (err) {
      await worker.stop();
      throw err;
    }
  }

  /** Moves simulated time to the next scheduled start after `lastStart` (never backwards). */
  advanceToNextStart(lastStartMs: number): void {
    const sim = this.stack.sim;
    const target = lastStartMs + SCHEDULE_SECONDS * 1000;
    if (target > sim.clock.nowMs()) sim.advance((target - sim.clock.nowMs()) / 1000);
  }

  /** Runs one pass in `worker` with the simulator's call log cleared first. */
  async pass(worker: BenchWorker, kind: PassKind, index: number, deadline: PassDeadline): Promise<MeasuredPass> {
    const sim = this.stack.sim;
    sim.clearCalls();
    const { result } = await worker.request<PassRequest>({ type: 'pass', simNowMs: sim.clock.nowMs(), deadline });
    const activeServices = sim.snapshot().clusters.reduce((n, c) => n + c.services.filter((s) => s.status === 'ACTIVE').length, 0);
    return { services: this.services, kind, index, result, ecsCalls: sim.callCounts(), activeServices };
  }

  close(): Promise<void> {
    return this.stack.close();
  }
}

/** True when a pass found nothing to do and every service Converged. */
export function isSteady(r: PassResult, services: number): boolean {
  return r.actionsPlanned === 0 && r.statusesWritten === 0 && (r.phases.Converged ?? 0) === services;
}

async function benchSize(n: number, opts: PassBenchOptions): Promise<SizeResult> {
  const fleet = await Fleet.start(n);
  const passes: MeasuredPass[] = [];
  const workers: BenchWorker[] = [];
  try {
    const unbounded: PassDeadline = { kind: 'unbounded' };
    const lambda: PassDeadline = { kind: 'lambda', timeoutSeconds: LAMBDA_TIMEOUT_SECONDS };

    // 1. Create from empty, then converge.
    const creator = await fleet.startWorker(opts.passWorker);
    workers.push(creator.worker);
    let start = fleet.stack.sim.clock.nowMs();
    const create = await fleet.pass(creator.worker, 'create', 1, unbounded);
    passes.push(create);
    opts.progress(`  N=${n}: create pass ${(create.result.realMs / 1000).toFixed(1)} s real, ${create.result.waitedSeconds.toFixed(0)} s budget waits`);
    let converged = false;
    for (let i = 1; i <= MAX_CONVERGE_PASSES && !converged; i++) {
      fleet.advanceToNextStart(start);
      start = fleet.stack.sim.clock.nowMs();
      const p = await fleet.pass(creator.worker, 'converge', i, lambda);
      passes.push(p);
      converged = isSteady(p.result, n);
    }
    await creator.worker.stop();
    opts.progress(`  N=${n}: ${converged ? 'steady' : 'NOT steady'} after ${passes.length - 1} more passes`);

    // 2. A new container: the cold pass, then warm steady passes.
    const fresh = await fleet.startWorker(opts.passWorker);
    workers.push(fresh.worker);
    fleet.advanceToNextStart(start);
    start = fleet.stack.sim.clock.nowMs();
    let newContainer = await fleet.pass(fresh.worker, 'cold', 1, lambda);
    passes.push(newContainer);
    for (let i = 2; newContainer.result.taskDefinitionsPending > 0 && i <= MAX_CATCHUP_PASSES; i++) {
      fleet.advanceToNextStart(start);
      start = fleet.stack.sim.clock.nowMs();
      newContainer = await fleet.pass(fresh.worker, 'catchup', i, lambda);
      passes.push(newContainer);
    }
    const steadyPasses = opts.steadyPasses ?? DEFAULT_STEADY_PASSES;
    for (let i = 1; i <= steadyPasses; i++) {
      fleet.advanceToNextStart(start);
      start = fleet.stack.sim.clock.nowMs();
      passes.push(await fleet.pass(fresh.worker, 'steady', i, lambda));
    }
    opts.progress(`  N=${n}: first pass of a new container and ${steadyPasses} steady passes done`);

    // 3. The largest fleet again, in a container with a capped heap.
    let capped: CappedRun | undefined;
    const heapMiB = opts.cappedHeapMiB ?? 0;
    if (heapMiB > 0 && n === Math.max(...opts.sizes)) {
      const cappedPasses: MeasuredPass[] = [];
      let error: string | undefined;
      try {
        const c = await fleet.startWorker(opts.passWorker, [`--max-old-space-size=${heapMiB}`]);
        workers.push(c.worker);
        let pending = true;
        for (let i = 1; pending && i <= MAX_CATCHUP_PASSES + 1; i++) {
          fleet.advanceToNextStart(start);
          start = fleet.stack.sim.clock.nowMs();
          const p = await fleet.pass(c.worker, i === 1 ? 'cold' : 'catchup', i, lambda);
          cappedPasses.push(p);
          pending = p.result.taskDefinitionsPending > 0;
        }
        for (let i = 1; i <= steadyPasses; i++) {
          fleet.advanceToNextStart(start);
          start = fleet.stack.sim.clock.nowMs();
          cappedPasses.push(await fleet.pass(c.worker, 'steady', i, lambda));
        }
      } catch (err) {
        if (!(err instanceof WorkerError)) throw err;
        error = err.message.split('\n').find((l) => /heap|memory/i.test(l)) ?? err.message.slice(0, 200);
      }
      capped = { heapMiB, passes: cappedPasses, ...(error ? { error } : {}) };
      opts.progress(`  N=${n}: heap capped at ${heapMiB} MiB: ${error ? `failed: ${error}` : 'passes completed'}`);
    }
    return { services: n, clusters: benchClusters().length, init: fresh.init, passes, converged, ...(capped ? { capped } : {}) };
  } finally {
    for (const w of workers) await w.stop();
    await fleet.close();
  }
}

async function benchLambda(n: number, opts: PassBenchOptions): Promise<LambdaRunResult> {
  const fleet = await Fleet.start(n);
  const { worker } = await fleet.startWorker(opts.passWorker);
  const passes: MeasuredPass[] = [];
  try {
    const deadline: PassDeadline = { kind: 'lambda', timeoutSeconds: LAMBDA_TIMEOUT_SECONDS };
    let converged = false;
    // Creation at the budget takes about 2 s per service; allow that many minutes and some.
    const maxPasses = Math.ceil((n * 2) / SCHEDULE_SECONDS) + MAX_CONVERGE_PASSES;
    let start = fleet.stack.sim.clock.nowMs();
    for (let i = 1; i <= maxPasses && !converged; i++) {
      if (i > 1) fleet.advanceToNextStart(start);
      start = fleet.stack.sim.clock.nowMs();
      const p = await fleet.pass(worker, 'lambda', i, deadline);
      passes.push(p);
      converged = isSteady(p.result, n);
    }
    opts.progress(`  N=${n} (Lambda-bounded): ${converged ? 'steady' : 'NOT steady'} after ${passes.length} passes`);
    return { services: n, passes, converged };
  } finally {
    await worker.stop();
    await fleet.close();
  }
}

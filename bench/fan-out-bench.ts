/**
 * The fan-out benchmark (issue 13 part 3): T targets x S services, each target an account of its
 * own (one ECS simulator each, ECS's throttling on, its own rate limiter at the budget), one spec
 * table on dynalite; side by side with one target alone with the same S services.
 *
 * Each tick is what AWS runs every minute: the dispatcher (`dispatchTargets`) sends one message per
 * target, and `deliver` runs `TargetRunner.run` for every message at once (the event source
 * mapping with maximumConcurrency >= T), each pass bounded like the Lambda: 50 s, no action started
 * with less than 10 s left. A pass's time is its real time plus its rate-limiter waits, which run
 * on its simulator's virtual clock (real in AWS); so the figures hold on a loaded machine only as
 * far as the real part goes (the 2 cores are shared by T passes and T simulators here, never in AWS).
 *
 * Measured per target: the first pass from empty (bounded), then `steadyTicks` steady passes after
 * the fleet was created: pass time against the 50 s deadline, reads complete, ECS calls, throttled
 * answers from its simulator (0 = within its own budget), and limiter waits.
 */
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../lambda/adapters/clients';
import { specsTableDefinition } from '../lambda/adapters/dynamo-spec-store';
import { DynamoTargetDirectory, TargetRunner, type TargetPassResult } from '../lambda/adapters/fan-out';
import { RecordingLog } from '../lambda/adapters/logger';
import { InMemoryMetricsSink } from '../lambda/adapters/metrics';
import { loadConfig } from '../lambda/config';
import { dispatchTargets } from '../lambda/core/fan-out';
import { partitionKeyOf } from '../lambda/core/targets';
import { startEmbeddedDynamoDb } from '../local/embedded-dynamodb';
import { deliver, InMemoryFanOutQueue } from '../local/fan-out';
import { declareSimulatedTarget, simulatedAccount, targetName } from '../local/fan-out-run';
import { startSimulator, type Simulator } from '../local/sim';
import { LOCAL_CREDENTIALS, localReconcilerEnv } from '../local/stack';
import { BENCH_OWNER_ID, BENCH_START_TIME, benchClusters, benchSpecItems } from './fixtures';
import { LAMBDA_TIMEOUT_SECONDS } from './pass-bench';

/** The handler's reserve (`RESERVE_MS`): no action starts with less left. */
const RESERVE_MS = 10_000;
/** Ticks tried to create the fleet (unbounded passes) before giving up. */
const MAX_SETUP_TICKS = 8;

export interface FanOutBenchOptions {
  readonly targets: number;
  readonly services: number;
  readonly steadyTicks: number;
  readonly progress: (line: string) => void;
}

/** One target's pass. */
export interface FanOutPass {
  readonly scenario: 'alone' | 'fan-out';
  readonly target: string;
  readonly kind: 'first' | 'steady';
  readonly services: number;
  /** Real milliseconds of the pass. */
  readonly realMs: number;
  /** Milliseconds the limiter waited (simulated here, real in AWS). */
  readonly waitedMs: number;
  readonly readsComplete: boolean;
  readonly servicesRead: number;
  /** Actions applied (the rest of a first pass is left for the next passes by the deadline). */
  readonly actions: number;
  readonly ecsCalls: number;
  /** Answers of its simulator that were ThrottlingException. */
  readonly throttled: number;
}

export interface FanOutBenchResult {
  readonly targets: number;
  readonly services: number;
  readonly passes: readonly FanOutPass[];
}

/** Runs both scenarios. */
export async function runFanOutBench(opts: FanOutBenchOptions): Promise<FanOutBenchResult> {
  opts.progress(`fan-out: 1 target x ${opts.services} services (alone)...`);
  const alone = await scenario('alone', 1, opts);
  opts.progress(`fan-out: ${opts.targets} targets x ${opts.services} services...`);
  const fanned = await scenario('fan-out', opts.targets, opts);
  return { targets: opts.targets, services: opts.services, passes: [...alone, ...fanned] };
}

async function writeItems(doc: DynamoDBDocumentClient, table: string, items: Record<string, unknown>[]): Promise<void> {
  for (let i = 0; i < items.length; i += 25) {
    await doc.send(new BatchWriteCommand({ RequestItems: { [table]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) } }));
  }
}

async function scenario(name: FanOutPass['scenario'], targets: number, opts: FanOutBenchOptions): Promise<FanOutPass[]> {
  const clusters = benchClusters();
  const db = await startEmbeddedDynamoDb(0);
  const sims: Simulator[] = [];
  const doc = createDocumentClient({ endpoint: db.endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
  try {
    for (let i = 1; i <= targets; i++) {
      sims.push(await startSimulator({ port: 0, seed: i, startTime: BENCH_START_TIME, clusters, accountId: simulatedAccount(i), throttling: true }));
    }
    const table = 'ecsr-fan-out-bench';
    const ddb = new DynamoDBClient({ endpoint: db.endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
    await ddb.send(new CreateTableCommand(specsTableDefinition(table)));
    ddb.destroy();
    const env = localReconcilerEnv({ table, region: sims[0].region, clusters }, { OWNER_ID: BENCH_OWNER_ID });
    const config = loadConfig({ ...env, FANOUT_QUEUE_URL: 'http://local/fan-out' });
    for (let i = 1; i <= targets; i++) {
      const t = targetName(i);
      if (i > 1) await declareSimulatedTarget(doc, table, i, sims[i - 1].region, clusters);
      await writeItems(doc, table, benchSpecItems(opts.services).map((item) => ({ ...item, cluster: partitionKeyOf(t, item.cluster as string) })));
    }
    const simOf = new Map(sims.map((s, i) => [targetName(i + 1), s]));
    const clock = { now: () => sims[0].clock.now() };
    const log = new RecordingLog();
    const metrics = new InMemoryMetricsSink();
    const runner = new TargetRunner(config, {
      doc,
      metrics,
      log,
      clock,
      ecsClientConfigFor: (t) => ({ endpoint: simOf.get(t.name)!.endpoint, credentials: LOCAL_CREDENTIALS }),
      credentialsFor: () => async () => LOCAL_CREDENTIALS,
      limiterTimeFor: (t) => {
        const sim = simOf.get(t.name)!;
        return { nowMs: () => sim.clock.nowMs(), sleep: async (ms) => void sim.clock.advance(ms / 1000) };
      },
    });
    const queue = new InMemoryFanOutQueue();
    const directory = new DynamoTargetDirectory(doc, table);
    const passes: FanOutPass[] = [];

    const tick = async (kind: FanOutPass['kind'] | 'setup'): Promise<void> => {
      await dispatchTargets({ directory, queue, metrics, log, clock }, { propTargets: [], defaultClusters: config.plan.managedClusters });
      const messages = queue.take();
      const before = new Map(messages.map((m) => [m.target.name, { calls: simOf.get(m.target.name)!.calls({}).length, throttled: throttledOf(simOf.get(m.target.name)!) }]));
      const deliveries = await deliver(messages, messages.length, async (m) => {
        const t0 = performance.now();
        const limiter = runner.limiterOf(m.target);
        const waitedOf = () => Object.values(limiter.snapshot()).reduce((n, c) => n + (c?.waitedMs ?? 0), 0);
        const w0 = waitedOf();
        const remainingMs = () => LAMBDA_TIMEOUT_SECONDS * 1000 - (performance.now() - t0) - (waitedOf() - w0);
        const bounded = kind !== 'setup';
        const result = await runner.run(m, {
          holder: `bench:${m.target.name}`,
          leaseTtlSeconds: bounded ? LAMBDA_TIMEOUT_SECONDS + 5 : 3600,
          ...(bounded ? { shouldContinue: () => remainingMs() >= RESERVE_MS, remainingMs } : {}),
        });
        return { result, realMs: performance.now() - t0, waitedMs: waitedOf() - w0 };
      });
      if (kind === 'setup') return;
      for (const d of deliveries) {
        if (!('result' in d)) throw d.error;
        const r: TargetPassResult = d.result.result;
        if (r.outcome !== 'pass') throw new Error(`fan-out bench: ${d.message.target.name} ended ${r.outcome}`);
        const sim = simOf.get(d.message.target.name)!;
        const b = before.get(d.message.target.name)!;
        passes.push({
          scenario: name,
          target: d.message.target.name,
          kind,
          services: opts.services,
          realMs: d.result.realMs,
          waitedMs: d.result.waitedMs,
          readsComplete: r.summary.readsComplete,
          servicesRead: r.summary.counts.servicesRead,
          actions: r.summary.counts.actionsApplied,
          ecsCalls: sim.calls({}).length - b.calls,
          throttled: throttledOf(sim) - b.throttled,
        });
      }
    };
    const advance = () => {
      for (const s of sims) s.advance(60);
    };
    // The first pass from empty, bounded: how much of the fleet one Lambda pass creates.
    await tick('first');
    advance();
    // Then unbounded passes create the rest, and the fleet settles.
    for (let i = 0; i < MAX_SETUP_TICKS; i++) {
      await tick('setup');
      advance();
    }
    for (let i = 0; i < opts.steadyTicks; i++) {
      await tick('steady');
      advance();
    }
    runner.destroy();
    return passes;
  } finally {
    doc.destroy();
    await Promise.all(sims.map((s) => s.close()));
    await db.stop();
  }
}

function throttledOf(sim: Simulator): number {
  return Object.values(sim.callCounts()).reduce((n, c) => n + c.throttled, 0);
}

/** The table of section 8. */
export function fanOutTable(r: FanOutBenchResult): string {
  const rows = [['scenario', 'target', 'pass', 'services', 'read', 'applied', 'ECS calls', 'throttled', 'real s', 'budget waits s', 'total s', 'within 50 s']];
  for (const p of r.passes) {
    const total = (p.realMs + p.waitedMs) / 1000;
    rows.push([
      p.scenario === 'alone' ? '1 target alone' : `${r.targets} targets`,
      p.target,
      p.kind,
      String(p.services),
      `${p.servicesRead}${p.readsComplete ? '' : ' (partial)'}`,
      String(p.actions),
      String(p.ecsCalls),
      String(p.throttled),
      (p.realMs / 1000).toFixed(1),
      (p.waitedMs / 1000).toFixed(1),
      total.toFixed(1),
      total <= LAMBDA_TIMEOUT_SECONDS ? 'yes' : 'NO',
    ]);
  }
  const widths = rows[0].map((_, c) => Math.max(...rows.map((row) => row[c].length)));
  return rows.map((row) => `  ${row.map((cell, c) => (c < 3 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ')}`).join('\n');
}

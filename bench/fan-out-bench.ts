/**
 * The fan-out benchmark: T targets x S services, each target an account of its
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
 * Each target's fleet is seeded in process as the pass benchmark's (`./scale-fleet`): the planner's
 * from-empty plan applied to its simulator without HTTP, time run until every task is RUNNING, the
 * spec items written with the statuses the reconciler would have written (creating 5,000 services
 * per account through the API at ECS's budget would take hours of simulated time and most of the
 * bench's real time; none of it is what this section measures). Each account is seeded once: the
 * fan-out scenario's first target is the alone scenario's account, as its passes left it (steady:
 * they act on nothing), on a new spec table (see {@link runFanOutBench}).
 *
 * Measured per target: the first pass of a new container (its task definitions not described yet:
 * no durable cache is configured here), then `steadyTicks` passes: pass time against the 50 s
 * deadline, reads complete, ECS calls, throttled answers from its simulator (0 = within its own
 * budget), and limiter waits.
 */
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDocumentClient } from '../lambda/adapters/clients';
import { clearTaskDefinitionCache } from '../lambda/adapters/ecs-observer';
import { specsTableDefinition } from '../lambda/adapters/dynamo-spec-store';
import { configForTarget, DynamoTargetDirectory, TargetRunner, type TargetPassResult } from '../lambda/adapters/fan-out';
import { RecordingLog } from '../lambda/adapters/logger';
import { InMemoryMetricsSink } from '../lambda/adapters/metrics';
import { loadConfig } from '../lambda/config';
import { dispatchTargets } from '../lambda/core/fan-out';
import { partitionKeyOf } from '../lambda/core/targets';
import type { ServiceStatus } from '../lambda/core/types';
import { startEmbeddedDynamoDb } from '../local/embedded-dynamodb';
import { deliver, InMemoryFanOutQueue } from '../local/fan-out';
import { declareSimulatedTarget, simulatedAccount, targetName } from '../local/fan-out-run';
import { startSimulator, type Simulator } from '../local/sim';
import { LOCAL_CREDENTIALS, localReconcilerEnv } from '../local/stack';
import { BENCH_OWNER_ID, BENCH_START_TIME, benchClusters, benchSpecItems } from './fixtures';
import { DEFAULT_LATENCY_MS, LAMBDA_TIMEOUT_SECONDS } from './pass-bench';
import { firstPlan, seedSimulator, withStatus, writeSpecItems } from './scale-fleet';

/** The handler's reserve (`RESERVE_MS`): no action starts with less left. */
const RESERVE_MS = 10_000;

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
  readonly kind: 'new container' | 'steady';
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
  /** ECS calls by action (successful and not). */
  readonly ecsCallsByAction: Record<string, number>;
  /** Answers of its simulator that were ThrottlingException. */
  readonly throttled: number;
}

export interface FanOutBenchResult {
  readonly targets: number;
  readonly services: number;
  readonly passes: readonly FanOutPass[];
}

/** A target's seeded account: its simulator and the statuses the reconciler would have written for its services. */
interface SeededAccount {
  readonly sim: Simulator;
  readonly statuses: Record<string, ServiceStatus>;
}

/**
 * Runs both scenarios. The accounts are seeded once: the fan-out scenario's first target is the
 * account the alone scenario ran on (its fleet is as steady after those passes as after seeding:
 * they act on nothing), with its spec items written afresh on a new table; the other accounts are
 * seeded for it and their clocks moved to the first one's. Seeding a 5,000-service account takes
 * a good part of the section's real time and is not what it measures.
 */
export async function runFanOutBench(opts: FanOutBenchOptions): Promise<FanOutBenchResult> {
  const accounts = new Map<number, SeededAccount>();
  try {
    opts.progress(`fan-out: 1 target x ${opts.services} services (alone)...`);
    const alone = await scenario('alone', 1, opts, accounts);
    opts.progress(`fan-out: ${opts.targets} targets x ${opts.services} services...`);
    const fanned = await scenario('fan-out', opts.targets, opts, accounts);
    return { targets: opts.targets, services: opts.services, passes: [...alone, ...fanned] };
  } finally {
    await Promise.all([...accounts.values()].map((a) => a.sim.close()));
  }
}


async function scenario(name: FanOutPass['scenario'], targets: number, opts: FanOutBenchOptions, accounts: Map<number, SeededAccount>): Promise<FanOutPass[]> {
  // Each scenario is a new container: nothing described by the previous one (the cache is process-wide).
  clearTaskDefinitionCache();
  const clusters = benchClusters();
  const db = await startEmbeddedDynamoDb(0);
  const doc = createDocumentClient({ endpoint: db.endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
  try {
    const fresh: number[] = [];
    for (let i = 1; i <= targets; i++) {
      if (accounts.has(i)) continue;
      const sim = await startSimulator({ port: 0, seed: i, startTime: BENCH_START_TIME, clusters, accountId: simulatedAccount(i), throttling: true, latencyMs: DEFAULT_LATENCY_MS });
      accounts.set(i, { sim, statuses: {} });
      fresh.push(i);
    }
    const sims = Array.from({ length: targets }, (_, i) => accounts.get(i + 1)!.sim);
    const table = 'ecsr-fan-out-bench';
    const ddb = new DynamoDBClient({ endpoint: db.endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
    await ddb.send(new CreateTableCommand(specsTableDefinition(table)));
    ddb.destroy();
    const env = localReconcilerEnv({ table, region: sims[0].region, clusters }, { OWNER_ID: BENCH_OWNER_ID });
    const config = loadConfig({ ...env, FANOUT_QUEUE_URL: 'http://local/fan-out' });
    for (let i = 2; i <= targets; i++) await declareSimulatedTarget(doc, table, i, sims[i - 1].region, clusters);
    const declared = new Map(
      (await new DynamoTargetDirectory(doc, table).read()).declarations.flatMap((d) => (d.ok ? [[d.target.name, d.target] as const] : [])),
    );
    for (let i = 1; i <= targets; i++) {
      const t = targetName(i);
      // Each account's services as its reconciler renders them (its own defaults: execution role, subnets...).
      const target = declared.get(t);
      const options = target ? configForTarget(config, target).plan : config.plan;
      const account = accounts.get(i)!;
      if (fresh.includes(i)) {
        const { statuses } = seedSimulator(account.sim, firstPlan(opts.services, options, account.sim.clock.now()));
        accounts.set(i, { sim: account.sim, statuses });
        // One clock for all: a later account starts where the first one's passes left it.
        const behindMs = sims[0].clock.nowMs() - account.sim.clock.nowMs();
        if (behindMs > 0) account.sim.advance(behindMs / 1000);
      }
      const items = benchSpecItems(opts.services).map((item) => ({ ...withStatus(item, accounts.get(i)!.statuses), cluster: partitionKeyOf(t, item.cluster as string) }));
      await writeSpecItems(doc, table, items);
      opts.progress(`  ${t}: ${opts.services} services ${fresh.includes(i) ? 'seeded' : 'as the alone scenario left them'}`);
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

    const tick = async (kind: FanOutPass['kind']): Promise<void> => {
      await dispatchTargets({ directory, queue, metrics, log, clock }, { propTargets: [], defaultClusters: config.plan.managedClusters });
      const messages = queue.take();
      for (const m of messages) simOf.get(m.target.name)!.clearCalls();
      const deliveries = await deliver(messages, messages.length, async (m) => {
        const t0 = performance.now();
        const limiter = runner.limiterOf(m.target);
        const waitedOf = () => Object.values(limiter.snapshot()).reduce((n, c) => n + (c?.waitedMs ?? 0), 0);
        const w0 = waitedOf();
        const remainingMs = () => LAMBDA_TIMEOUT_SECONDS * 1000 - (performance.now() - t0) - (waitedOf() - w0);
        const result = await runner.run(m, {
          holder: `bench:${m.target.name}`,
          leaseTtlSeconds: LAMBDA_TIMEOUT_SECONDS + 5,
          shouldContinue: () => remainingMs() >= RESERVE_MS,
          remainingMs,
        });
        return { result, realMs: performance.now() - t0, waitedMs: waitedOf() - w0 };
      });
      for (const d of deliveries) {
        if (!('result' in d)) throw d.error;
        const r: TargetPassResult = d.result.result;
        if (r.outcome !== 'pass') throw new Error(`fan-out bench: ${d.message.target.name} ended ${r.outcome}`);
        const sim = simOf.get(d.message.target.name)!;
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
          ecsCalls: sim.calls({}).length,
          ecsCallsByAction: Object.fromEntries(Object.entries(sim.callCounts()).map(([a, c]) => [a, c.total])),
          throttled: throttledOf(sim),
        });
      }
    };
    const advance = () => {
      for (const s of sims) s.advance(60);
    };
    await tick('new container');
    advance();
    for (let i = 0; i < opts.steadyTicks; i++) {
      await tick('steady');
      advance();
    }
    runner.destroy();
    return passes;
  } finally {
    doc.destroy();
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

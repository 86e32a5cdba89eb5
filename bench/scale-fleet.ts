/**
 * The pass benchmark's fleet, built fast: N spec items in dynalite, N services running in the ECS
 * simulator as the reconciler would have created them, each item's status as the reconciler would
 * have written it, and the durable task definition cache as the creating container left it.
 *
 * Nothing is written by hand: the reconciler's own planner plans the fleet from empty, the plan is
 * applied to the simulator in process (`SimulatedEcs.call`, no HTTP, throttling off), simulated
 * time runs until every task is RUNNING, the state is read back with the observer's own mapping,
 * and the planner plans again over it to get the statuses; a third plan must find nothing to do
 * (or the setup throws). Creating 20,000 services through the API at ECS's budget would take 11
 * simulated hours and most of the bench's real time; none of it is what the bench measures.
 */
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoTaskDefinitionCache, taskDefinitionCacheTableDefinition } from '../lambda/adapters/dynamo-task-definition-cache';
import { STATUS_ATTRIBUTE } from '../lambda/adapters/dynamo-spec-store';
import { ENV, loadConfig } from '../lambda/config';
import { plan } from '../lambda/core/planner';
import { serviceId, type ServiceStatus } from '../lambda/core/types';
import { localReconcilerEnv, startLocalStack, type LocalStack } from '../local/stack';
import { BENCH_OWNER_ID, BENCH_START_TIME, BENCH_TABLE, benchClusters, benchSpecItems } from './fixtures';
import { applyInProcess, BenchSetupError, benchSpecs, observeInProcess } from './planner-setup';

/** The durable task definition cache's table (issue 12 part 1), as the construct creates it. */
export const BENCH_CACHE_TABLE = `${BENCH_TABLE}-td-cache`;
/** Simulated seconds between applying the first plan and observing: every task is RUNNING by then. */
const SETTLE_SECONDS = 600;
/** DynamoDB BatchWriteItem takes at most 25 items. */
const BATCH_WRITE_MAX = 25;
/** BatchWriteItem calls in flight while seeding. */
const SEED_WRITE_CONCURRENCY = 4;

/** A seeded fleet on a fresh local stack. */
export interface SeededFleet {
  readonly stack: LocalStack;
  readonly services: number;
  /** The reconciler's environment on this stack (local defaults, OWNER_ID, the durable cache table). */
  readonly env: Record<string, string>;
  /** Real seconds the seeding took. */
  readonly seedSeconds: number;
}

/** The reconciler's environment on `stack`: local defaults, the bench's OWNER_ID, the durable cache table, and `extra`. */
export function benchEnv(stack: LocalStack, extra: Record<string, string> = {}): Record<string, string> {
  return localReconcilerEnv(stack, { OWNER_ID: BENCH_OWNER_ID, [ENV.taskDefinitionCacheTable]: BENCH_CACHE_TABLE, ...extra });
}

/**
 * Starts a local stack (simulator with ECS's throttling, dynalite) and seeds `n` services.
 * @throws BenchSetupError when the planner does not find the seeded fleet steady; SDK errors of
 *   the local servers. The stack is closed when seeding fails.
 */
export async function seedFleet(n: number): Promise<SeededFleet> {
  const began = performance.now();
  const stack = await startLocalStack({ specsTable: BENCH_TABLE, clusters: benchClusters(), seed: 1, startTime: BENCH_START_TIME, throttling: true });
  try {
    const env = benchEnv(stack);
    const options = loadConfig(env).plan;
    const sim = stack.sim;
    sim.setThrottling(false);
    const specs = benchSpecs(n);
    const empty = {
      clusters: Object.fromEntries(benchClusters().map((c) => [c, { cluster: c, complete: true, exists: true, services: {} }])),
      taskDefinitions: {},
    };
    const first = plan({ specs, specsComplete: true, observed: empty, remembered: {}, options, now: sim.clock.now() });
    applyInProcess(sim, first.actions);
    sim.advance(SETTLE_SECONDS);
    const observed = observeInProcess(sim, benchClusters());
    const second = plan({ specs, specsComplete: true, observed, remembered: first.statuses, options, now: sim.clock.now() });
    const third = plan({ specs, specsComplete: true, observed, remembered: second.statuses, options, now: sim.clock.now() });
    const notConverged = Object.values(third.statuses).filter((s) => s.phase !== 'Converged').length;
    if (third.actions.length > 0 || notConverged > 0) {
      throw new BenchSetupError(`the seeded fleet of ${n} services is not steady: ${third.actions.length} actions, ${notConverged} not Converged`);
    }
    await putItems(stack, second.statuses, n);
    const ddb = new DynamoDBClient(stack.dynamoClientConfig);
    try {
      await ddb.send(new CreateTableCommand(taskDefinitionCacheTableDefinition(BENCH_CACHE_TABLE)));
      // What the creating container wrote: every revision in use.
      const cache = new DynamoTaskDefinitionCache(ddb, BENCH_CACHE_TABLE);
      cache.keep(Object.entries(observed.taskDefinitions));
      await cache.flush();
      if (cache.errors > 0) throw new BenchSetupError(`the task definition cache could not be seeded: ${cache.lastError}`);
    } finally {
      ddb.destroy();
    }
    sim.setThrottling(true);
    sim.clearCalls();
    return { stack, services: n, env, seedSeconds: (performance.now() - began) / 1000 };
  } catch (err) {
    await stack.close();
    throw err;
  }
}

/** Writes the spec items, each with the status the reconciler would have written. */
async function putItems(stack: LocalStack, statuses: Record<string, ServiceStatus>, n: number): Promise<void> {
  const items = benchSpecItems(n).map((item) => {
    const status = statuses[serviceId({ cluster: String(item.cluster), service: String(item.service) })];
    return status ? { ...item, [STATUS_ATTRIBUTE]: status } : item;
  });
  const batches: Record<string, unknown>[][] = [];
  for (let i = 0; i < items.length; i += BATCH_WRITE_MAX) batches.push(items.slice(i, i + BATCH_WRITE_MAX));
  let next = 0;
  const worker = async () => {
    while (next < batches.length) {
      let requests = batches[next++].map((Item) => ({ PutRequest: { Item } }));
      while (requests.length > 0) {
        const out = await stack.doc.send(new BatchWriteCommand({ RequestItems: { [BENCH_TABLE]: requests } }));
        requests = (out.UnprocessedItems?.[BENCH_TABLE] ?? []) as typeof requests;
      }
    }
  };
  await Promise.all(Array.from({ length: SEED_WRITE_CONCURRENCY }, worker));
}

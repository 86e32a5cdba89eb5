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
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoTaskDefinitionCache, taskDefinitionCacheTableDefinition } from '../lambda/adapters/dynamo-task-definition-cache';
import { STATUS_ATTRIBUTE } from '../lambda/adapters/dynamo-spec-store';
import { ENV, loadConfig } from '../lambda/config';
import type { PlanOptions } from '../lambda/core/options';
import { plan } from '../lambda/core/planner';
import { serviceId, type ObservedState, type Plan, type ServiceStatus, type SpecParseResult } from '../lambda/core/types';
import type { SimulatedEcs } from '../local/sim';
import { localReconcilerEnv, startLocalStack, type LocalStack } from '../local/stack';
import { BENCH_OWNER_ID, BENCH_START_TIME, BENCH_TABLE, benchClusters, benchSpecItems } from './fixtures';
import { CompareCache } from '../lambda/core/compare-cache';
import { applyInProcess, BenchSetupError, benchSpecs, observeInProcess } from './planner-setup';

/** The durable task definition cache's table, as the construct creates it. */
export const BENCH_CACHE_TABLE = `${BENCH_TABLE}-td-cache`;
/** Simulated seconds between applying the first plan and observing: every task is RUNNING by then. */
const SETTLE_SECONDS = 600;
/** DynamoDB BatchWriteItem takes at most 25 items. */
const BATCH_WRITE_MAX = 25;
/** BatchWriteItem calls in flight while seeding (dynalite answers in the same process: more only queue). */
const SEED_WRITE_CONCURRENCY = 8;

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
    const sim = stack.sim;
    const planned = firstPlan(n, loadConfig(env).plan, sim.clock.now());
    const { statuses, observed } = seedSimulator(sim, planned);
    await writeSpecItems(stack.doc, BENCH_TABLE, benchSpecItems(n).map((item) => withStatus(item, statuses)));
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
    return { stack, services: n, env, seedSeconds: (performance.now() - began) / 1000 };
  } catch (err) {
    await stack.close();
    throw err;
  }
}

/** The fleet's specs and the planner's from-empty plan of them (the same for every simulator it is applied to). */
export interface FirstPlan {
  readonly specs: SpecParseResult[];
  readonly options: PlanOptions;
  readonly plan: Plan;
}

/** Plans `n` services from empty (clusters exist, no service). @throws BenchSetupError when a spec is invalid. */
export function firstPlan(n: number, options: PlanOptions, now: Date): FirstPlan {
  const specs = benchSpecs(n);
  const empty = {
    clusters: Object.fromEntries(benchClusters().map((c) => [c, { cluster: c, complete: true, exists: true, services: {} }])),
    taskDefinitions: {},
  };
  return { specs, options, plan: plan({ specs, specsComplete: true, observed: empty, remembered: {}, options, now }) };
}

/**
 * Applies the from-empty plan to `sim` in process (throttling off meanwhile), lets simulated time
 * run until every task is RUNNING, reads the state back with the observer's mapping, and plans
 * again to get each service's status as the reconciler would have written it.
 * @throws BenchSetupError when that plan still has actions or a service is not Converged (the
 *   measured passes would not start from a steady fleet).
 */
export function seedSimulator(sim: SimulatedEcs, first: FirstPlan): { statuses: Record<string, ServiceStatus>; observed: ObservedState } {
  const throttling = sim.throttling;
  sim.setThrottling(false);
  applyInProcess(sim, first.plan.actions);
  sim.advance(SETTLE_SECONDS);
  const observed = observeInProcess(sim, benchClusters(), new CompareCache());
  const { specs, options } = first;
  const second = plan({ specs, specsComplete: true, observed, remembered: first.plan.statuses, options, now: sim.clock.now() });
  // One plan over the settled fleet proves it steady: no action, every service Converged (a third
  // plan with these statuses remembered only repeated it; the measured passes would show the rest).
  const notConverged = Object.values(second.statuses).filter((s) => s.phase !== 'Converged').length;
  if (second.actions.length > 0 || notConverged > 0) {
    throw new BenchSetupError(`the seeded fleet of ${specs.length} services is not steady: ${second.actions.length} actions, ${notConverged} not Converged`);
  }
  sim.setThrottling(throttling);
  sim.clearCalls();
  return { statuses: second.statuses, observed };
}

/** `item` with the status the reconciler would have written for it (by its cluster and service). */
export function withStatus(item: Record<string, unknown>, statuses: Record<string, ServiceStatus>): Record<string, unknown> {
  const status = statuses[serviceId({ cluster: String(item.cluster), service: String(item.service) })];
  return status ? { ...item, [STATUS_ATTRIBUTE]: status } : item;
}

/** Writes `items` to `table` in BatchWriteItem calls of 25, {@link SEED_WRITE_CONCURRENCY} in flight, retrying unprocessed items. */
export async function writeSpecItems(doc: DynamoDBDocumentClient, table: string, items: Record<string, unknown>[]): Promise<void> {
  const batches: Record<string, unknown>[][] = [];
  for (let i = 0; i < items.length; i += BATCH_WRITE_MAX) batches.push(items.slice(i, i + BATCH_WRITE_MAX));
  let next = 0;
  const worker = async () => {
    while (next < batches.length) {
      let requests = batches[next++].map((Item) => ({ PutRequest: { Item } }));
      while (requests.length > 0) {
        const out = await doc.send(new BatchWriteCommand({ RequestItems: { [table]: requests } }));
        requests = (out.UnprocessedItems?.[table] ?? []) as typeof requests;
      }
    }
  };
  await Promise.all(Array.from({ length: SEED_WRITE_CONCURRENCY }, worker));
}

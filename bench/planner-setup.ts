/**
 * Inputs of the planner benchmark: for a fleet of N services, the plan input of the first pass
 * (specs, clusters that exist and hold nothing) and of a steady pass (every service running as
 * its spec says, statuses remembered from the previous pass).
 *
 * The steady state is not written by hand: the from-empty plan is applied to the ECS simulator in
 * process (no HTTP, no throttling), simulated time runs until the tasks are up, and the observed
 * state is read back with the observer's own mapping (`observedAndStamped`: mapped, then stamped with its digest in the runtime's cache), so the planner sees
 * what it sees in production: ECS defaults, deployments, events, tags; the remembered statuses
 * are read back through the status store's schema, as a pass reads them. The setup checks that
 * the planner finds nothing to do in that state, or throws.
 */
import type { Service, TaskDefinition as SdkTaskDefinition } from '@aws-sdk/client-ecs';
import { parseRememberedStatus } from '../lambda/adapters/dynamo-spec-store';
import { observedAndStamped } from '../lambda/adapters/ecs-observer';
import { CompareCache } from '../lambda/core/compare-cache';
import { dict } from '../lambda/core/dict';
import { ECS_LIMITS } from '../lambda/core/ecs-limits';
import type { PlanOptions } from '../lambda/core/options';
import { plan, type PlanInput } from '../lambda/core/planner';
import { parseSpecItem } from '../lambda/core/spec';
import type { Action, ObservedCluster, ObservedService, ObservedState, Plan, ServiceId, ServiceStatus, SpecParseResult, TaskDefinition } from '../lambda/core/types';
import { SimulatedEcs } from '../local/sim';
import { BENCH_START_TIME, benchClusters, benchSpecItems } from './fixtures';

/** Simulated seconds between applying the first plan and observing: every task is RUNNING by then. */
const SETTLE_SECONDS = 600;

export interface PlannerInputs {
  /** First pass: no service exists yet; the plan registers and creates every one. */
  readonly fromEmpty: PlanInput;
  /** A later pass: everything converged; the plan is empty. */
  readonly steady: PlanInput;
  /** The DescribeServices entries the steady observation was mapped from (SDK shape). */
  readonly described: Service[];
  /** The runtime's comparison cache the observation was stamped in (the steady inputs carry it). */
  readonly cache: CompareCache;
}

/** Thrown when the fleet does not reach the state a benchmark case needs (a setup bug). */
export class BenchSetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BenchSetupError';
  }
}

/** Parses the fleet's items. @throws BenchSetupError when one is invalid. */
export function benchSpecs(n: number): SpecParseResult[] {
  const specs = benchSpecItems(n).map(parseSpecItem);
  const bad = specs.find((s) => !s.ok);
  if (bad && !bad.ok) throw new BenchSetupError(`a benchmark spec is invalid: ${JSON.stringify(bad.errors)}`);
  return specs;
}

/**
 * Builds both plan inputs for `n` services.
 * @param options the planner options (from the reconciler's configuration).
 * @throws BenchSetupError when the from-empty plan is not two actions per service, or when the
 *   planner does not find the converged fleet steady (actions planned, or a phase other than
 *   Converged).
 */
export function buildPlannerInputs(n: number, options: PlanOptions): PlannerInputs {
  const specs = benchSpecs(n);
  const sim = new SimulatedEcs({ startTime: BENCH_START_TIME, seed: 1, throttling: false });
  const cache = new CompareCache();
  const clusters = benchClusters();
  for (const clusterName of clusters) sim.call('CreateCluster', { clusterName, capacityProviders: ['FARGATE', 'FARGATE_SPOT'] });

  const empty: ObservedState = {
    clusters: Object.fromEntries(clusters.map((c) => [c, { cluster: c, complete: true, exists: true, services: {} }])),
    taskDefinitions: {},
  };
  const fromEmpty: PlanInput = { specs, specsComplete: true, observed: empty, remembered: {}, options, now: sim.clock.now(), cache };
  const first = plan(fromEmpty);
  if (first.actions.length !== 2 * n) {
    throw new BenchSetupError(`the from-empty plan of ${n} services has ${first.actions.length} actions, expected ${2 * n}`);
  }
  applyInProcess(sim, first.actions);
  sim.advance(SETTLE_SECONDS);

  const described: Service[] = [];
  const observed = observeInProcess(sim, clusters, cache, described);
  const second = plan({ specs, specsComplete: true, observed, remembered: asStored(first.statuses), options, now: sim.clock.now(), cache });
  // What a pass gives plan(): the statuses as the store reads them back, no confirmed prune.
  const steady: PlanInput = {
    specs,
    specsComplete: true,
    observed,
    remembered: asStored(second.statuses),
    options,
    now: sim.clock.now(),
    pruneConfirmedClusters: [],
    cache,
  };
  assertSteady(plan(steady), n);
  return { fromEmpty, steady, described, cache };
}

/**
 * The steady input with a new observation, as the next pass gives the planner: every
 * DescribeServices entry copied (new objects and strings, as a new response parses to) and mapped
 * and stamped as the observer does. Task definition descriptions stay the same objects (the
 * observer's cache keeps them across passes).
 */
export function withNewObservation(inputs: PlannerInputs): PlanInput {
  const observed = inputs.steady.observed;
  const clusters: Record<string, ObservedCluster> = dict();
  const services: Record<string, Record<string, ObservedService>> = dict();
  for (const [name, oc] of Object.entries(observed.clusters)) {
    services[name] = dict();
    clusters[name] = { ...oc, services: services[name] };
  }
  for (const d of structuredClone(inputs.described)) {
    const arn = d.clusterArn ?? '';
    const into = services[arn.slice(arn.lastIndexOf('/') + 1)];
    if (into === undefined) throw new BenchSetupError(`service ${d.serviceName} of an unknown cluster ${arn}`);
    into[d.serviceName ?? ''] = observedAndStamped(d, inputs.cache);
  }
  return { ...inputs.steady, observed: { ...observed, clusters } };
}

/**
 * Statuses as the pass's store gives them back to the planner: written as JSON-like maps, read
 * through the store's own schema (`parseRememberedStatus`), so that the planner meets objects
 * of the shape and key order it meets in a pass, not its own output.
 * @throws BenchSetupError when one does not read back.
 */
export function asStored(statuses: Record<ServiceId, ServiceStatus>): Record<ServiceId, ServiceStatus> {
  const out: Record<ServiceId, ServiceStatus> = dict();
  for (const [id, status] of Object.entries(statuses)) {
    const read = parseRememberedStatus(JSON.parse(JSON.stringify(status)));
    if (!read) throw new BenchSetupError(`the status of ${id} does not read back: ${JSON.stringify(status)}`);
    out[id] = read;
  }
  return out;
}

function assertSteady(p: Plan, n: number): void {
  const phases = Object.values(p.statuses).map((s) => s.phase);
  const notConverged = phases.filter((x) => x !== 'Converged').length;
  if (p.actions.length > 0 || notConverged > 0 || phases.length !== n) {
    const first = p.actions[0];
    throw new BenchSetupError(
      `the converged fleet of ${n} services is not steady: ${p.actions.length} actions` +
        (first ? ` (first: ${first.type} ${first.cluster}/${first.service}: ${first.reason})` : '') +
        `, ${notConverged} of ${phases.length} statuses not Converged`,
    );
  }
}

/** What the actuator does, without HTTP: register, then create with the registered ARN. */
export function applyInProcess(sim: SimulatedEcs, actions: Action[]): void {
  const registered = new Map<string, string>();
  for (const a of actions) {
    if (a.type === 'RegisterTaskDefinition') {
      const { tags, ...rest } = a.input;
      const out = sim.call('RegisterTaskDefinition', tags && tags.length > 0 ? a.input : rest) as { taskDefinition: SdkTaskDefinition };
      registered.set(a.input.family, out.taskDefinition.taskDefinitionArn ?? '');
    } else if (a.type === 'CreateService') {
      sim.call('CreateService', { ...a.input, taskDefinition: registered.get(a.input.taskDefinition) ?? a.input.taskDefinition });
    } else {
      throw new BenchSetupError(`the from-empty plan holds a ${a.type}; only registers and creates were expected`);
    }
  }
}

/**
 * What the observer reads, without HTTP: ListServices, DescribeServices (TAGS; each service mapped
 * and stamped in `cache` as the observer does), DescribeTaskDefinition.
 * @param described when given, receives the DescribeServices entries as ECS gave them.
 */
export function observeInProcess(sim: SimulatedEcs, clusters: string[], cache: CompareCache, described?: Service[]): ObservedState {
  const observed: ObservedState = { clusters: {}, taskDefinitions: {} };
  for (const cluster of clusters) {
    const names: string[] = [];
    let nextToken: string | undefined;
    do {
      const out = sim.call('ListServices', { cluster, maxResults: ECS_LIMITS.listServicesMaxResults, ...(nextToken ? { nextToken } : {}) }) as {
        serviceArns: string[];
        nextToken?: string;
      };
      names.push(...out.serviceArns.map((arn) => arn.slice(arn.lastIndexOf('/') + 1)));
      nextToken = out.nextToken;
    } while (nextToken);
    const services: Record<string, ObservedService> = {};
    for (let i = 0; i < names.length; i += ECS_LIMITS.describeServicesBatch) {
      const batch = names.slice(i, i + ECS_LIMITS.describeServicesBatch);
      const out = sim.call('DescribeServices', { cluster, services: batch, include: ['TAGS'] }) as { services: Service[] };
      for (const s of out.services) services[s.serviceName ?? ''] = observedAndStamped(s, cache);
      described?.push(...out.services);
    }
    observed.clusters[cluster] = { cluster, complete: true, exists: true, services };
    for (const s of Object.values(services)) {
      if (observed.taskDefinitions[s.taskDefinition]) continue;
      const out = sim.call('DescribeTaskDefinition', { taskDefinition: s.taskDefinition, include: ['TAGS'] }) as {
        taskDefinition: TaskDefinition;
        tags?: { key?: string; value?: string }[];
      };
      observed.taskDefinitions[s.taskDefinition] = { ...out.taskDefinition, ...(out.tags && out.tags.length > 0 ? { tags: out.tags } : {}) };
    }
  }
  return observed;
}

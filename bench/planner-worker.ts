/**
 * Worker process of the planner benchmark (bundled and forked by `./run`): measures the pure
 * planner, `plan()` from `lambda/core/planner.ts`, for each fleet size and case.
 *
 * - `timing` mode (run with `--expose-gc`: a full collection before each case): warm-up calls,
 *   then calls until `budgetMs` of measured time (at least {@link MIN_RUNS}), each timed with
 *   `performance.now()`; median, p95, min in milliseconds. Then the steady plan of a new
 *   observation each call, and the observer's mapping of the same fleet without and with the
 *   stamp the steady plan relies on.
 * - `alloc` mode: the heap growth of single calls (`process.memoryUsage().heapUsed` after minus
 *   before). The parent starts this worker with a young generation large enough
 *   (`--min-semi-space-size`) that most calls run without a garbage collection; calls during which
 *   one ran (seen with a `gc` PerformanceObserver) are discarded, since a collection hides
 *   allocations. Nothing is forced (`--expose-gc` is not needed).
 */
import { PerformanceObserver } from 'node:perf_hooks';
import type { Service } from '@aws-sdk/client-ecs';
import { observedAndStamped, toObservedService } from '../lambda/adapters/ecs-observer';
import { loadConfig } from '../lambda/config';
import type { ObservedService } from '../lambda/core/types';
import { plan, type PlanInput } from '../lambda/core/planner';
import { buildPlannerInputs, withNewObservation, type PlannerInputs } from './planner-setup';
import { serveRequests, type PlanCase, type PlannerCaseResult, type PlannerRequest, type PlannerResponse, type WorkerRequest, type WorkerResponse } from './protocol';
import { median, percentile } from './stats';

/** Calls measured per case at least (timing mode). */
const MIN_RUNS = 30;
/** Calls measured per case at most (timing mode). */
const MAX_RUNS = 2000;
/** Warm-up: this many calls, or this many milliseconds, whichever comes later. */
const WARMUP_CALLS = 5;
const WARMUP_MS = 200;
/** Calls measured per case in alloc mode. */
const ALLOC_RUNS = 9;

/** Keeps results reachable so the calls cannot be optimised away. */
let sink = 0;

/** A full garbage collection when the worker runs with `--expose-gc` (timing mode): each case starts from a collected heap. */
function collect(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** Timing of one case: calls measured, milliseconds per call, and the actions of the last plan (0 for other work). */
type Timing = { runs: number; medianMs: number; p95Ms: number; minMs: number; actions: number };

/**
 * Times `call` from a collected heap: warm-up calls, then calls until `budgetMs` of measured time
 * (at least {@link MIN_RUNS}, at most {@link MAX_RUNS}). `call` returns a number kept in {@link sink}.
 */
function timeCalls(call: () => number, budgetMs: number): Omit<Timing, 'actions'> {
  collect();
  const warmStart = performance.now();
  for (let i = 0; i < WARMUP_CALLS || performance.now() - warmStart < WARMUP_MS; i++) sink += call();
  const samples: number[] = [];
  let measured = 0;
  while ((samples.length < MIN_RUNS || measured < budgetMs) && samples.length < MAX_RUNS) {
    const t0 = performance.now();
    sink += call();
    const dt = performance.now() - t0;
    samples.push(dt);
    measured += dt;
  }
  return { runs: samples.length, medianMs: median(samples), p95Ms: percentile(samples, 95), minMs: Math.min(...samples) };
}

function timeCase(input: PlanInput, budgetMs: number): Timing {
  let actions = 0;
  const timing = timeCalls(() => (actions = plan(input).actions.length), budgetMs);
  return { ...timing, actions };
}

/** Calls measured with a new observation each (each observation takes longer to build than to plan). */
const NEW_OBSERVATION_RUNS = 9;

/** Times the steady plan of a new observation each call ({@link withNewObservation}, built outside the timing), after two warm-up calls. */
function timeNewObservation(inputs: PlannerInputs): Timing {
  const samples: number[] = [];
  let actions = 0;
  collect();
  for (let i = 0; i < NEW_OBSERVATION_RUNS + 2; i++) {
    const input = withNewObservation(inputs);
    const t0 = performance.now();
    const p = plan(input);
    const dt = performance.now() - t0;
    actions = p.actions.length;
    sink += actions;
    if (i >= 2) samples.push(dt);
  }
  return { runs: samples.length, medianMs: median(samples), p95Ms: percentile(samples, 95), minMs: Math.min(...samples), actions };
}

/**
 * Times the observer's mapping of `described` (every DescribeServices entry of the steady fleet)
 * with `map`, as {@link timeCase} times a plan: new objects each call (a stamp is made once per object).
 */
function timeMapping(described: readonly Service[], map: (s: Service) => ObservedService, budgetMs: number): Timing {
  const all = () => {
    let n = 0;
    for (let i = 0; i < described.length; i++) n += map(described[i]).desiredCount;
    return n;
  };
  return { ...timeCalls(all, budgetMs), actions: 0 };
}

async function allocCase(input: PlanInput): Promise<{ allocatedBytes?: number; allocRuns: number; allocRunsWithGc: number; actions: number }> {
  const gcs: { start: number; end: number }[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcs.push({ start: e.startTime, end: e.startTime + e.duration });
  });
  observer.observe({ entryTypes: ['gc'] });
  sink += plan(input).actions.length; // warm-up: compiled code, no first-call allocations
  const runs: { start: number; end: number; bytes: number }[] = [];
  let actions = 0;
  for (let i = 0; i < ALLOC_RUNS; i++) {
    const before = process.memoryUsage().heapUsed;
    const start = performance.now();
    const p = plan(input);
    const end = performance.now();
    const after = process.memoryUsage().heapUsed;
    actions = p.actions.length;
    sink += actions;
    runs.push({ start, end, bytes: after - before });
  }
  // gc entries are delivered asynchronously.
  await new Promise((resolve) => setTimeout(resolve, 20));
  observer.disconnect();
  const clean = runs.filter((r) => !gcs.some((g) => g.end >= r.start && g.start <= r.end));
  return {
    ...(clean.length > 0 ? { allocatedBytes: median(clean.map((r) => r.bytes)) } : {}),
    allocRuns: runs.length,
    allocRunsWithGc: runs.length - clean.length,
    actions,
  };
}

async function runPlanner(req: PlannerRequest): Promise<PlannerResponse> {
  const options = loadConfig(req.env).plan;
  const results: PlannerCaseResult[] = [];
  for (const services of req.sizes) {
    const inputs = buildPlannerInputs(services, options);
    const cases: [PlanCase, PlanInput][] = [
      ['from-empty', inputs.fromEmpty],
      ['steady', inputs.steady],
      ['steady, no cache', { ...inputs.steady, cache: undefined }],
    ];
    for (const [name, input] of cases) {
      if (req.mode === 'timing') results.push({ services, case: name, ...timeCase(input, req.budgetMs) });
      else results.push({ services, case: name, ...(await allocCase(input)) });
    }
    if (req.mode === 'timing') {
      results.push({ services, case: 'steady, new observation', ...timeNewObservation(inputs) });
      results.push({ services, case: 'map', ...timeMapping(inputs.described, toObservedService, req.budgetMs) });
      const cache = inputs.cache;
      results.push({ services, case: 'map + stamp', ...timeMapping(inputs.described, (d) => observedAndStamped(d, cache), req.budgetMs) });
    }
  }
  if (sink < 0) console.error(sink);
  return { id: req.id, type: 'planner', results };
}

serveRequests(async (req: WorkerRequest): Promise<WorkerResponse> => {
  if (req.type !== 'planner') throw new Error(`the planner worker does not handle ${req.type}`);
  return runPlanner(req);
});

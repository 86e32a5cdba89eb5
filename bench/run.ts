/**
 * `npm run bench`: speed and memory of the reconciler, measured (never asserted in tests).
 *
 * 1. The pure planner, `plan()`: wall time per call (median, p95 after warm-up) and heap allocated
 *    per call, for a fleet from empty and steady, at each size.
 * 2. Full passes with the real adapters against the ECS simulator (HTTP, ECS throttling on, the
 *    reconciler's rate limiter at API_BUDGET_FRACTION 0.5) and dynalite, in a worker process
 *    bundled like the Lambda: create from empty, first pass of a new container, steady passes;
 *    real time, rate-limit waits, API calls by action, peak RSS and heap.
 * 3. Passes bounded like the Lambda (50 s timeout) from empty, at one size.
 * 4. Start-up of the built `ecsr` CLI (`--version`, `--help`, `validate`), beside `node -e 0`.
 * 5. The fast path: edit to first ECS call (p50, p99) over moto's DynamoDB Streams, real time
 *    (`./fast-path-bench.ts`).
 * 8. The fan-out: T targets x S services, one simulator per account, beside one target alone
 *    (`./fan-out-bench.ts`; `--fan-out-services`, `--fan-out-targets`, `--no-fan-out`).
 *
 * Prints tables to stdout and progress to stderr, and writes the tables to bench/RESULTS.md
 * (`--no-results`: print only). See docs/benchmarks.md.
 */
import { writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { Command, InvalidArgumentError } from 'commander';
import { heapFlag, memoryForFleet } from '../lib/function-memory';
import { localReconcilerEnv } from '../local/stack';
import { BENCH_MAX_SERVICES, BENCH_OWNER_ID, BENCH_REGION, BENCH_TABLE, benchClusters } from './fixtures';
import {
  DEFAULT_LATENCY_MS,
  DEFAULT_HAND_EDITS,
  DEFAULT_MAX_FOLLOW_PASSES,
  DEFAULT_SPEC_EDITS,
  DRIFT_SHARE,
  EDIT_LEAD_SECONDS,
  LAMBDA_TIMEOUT_SECONDS,
  RESYNC_MINUTES,
  runPassBench,
} from './pass-bench';
import { simulatorEventsFeed } from './events-feed';
import type { PlannerCaseResult, PlannerRequest } from './protocol';
import { callsTable, memoryTable, memoryTrendTable, passFindings, passTable, plannerBoundLine, plannerTable, readBoundTable, resyncTable } from './report';
import { bundleWorkers, BenchWorker } from './workers';
import { runStartupBench, startupTable } from './cli-startup';
import { fastPathTable, runFastPathBench } from './fast-path-bench';
import { fanOutTable, runFanOutBench } from './fan-out-bench';

/** Young generation of the allocation run (MiB per semi-space): one plan() of 1000 services fits. */
const ALLOC_SEMI_SPACE_MIB = 256;

function sizeList(value: string): number[] {
  const sizes = value.split(',').map((s) => Number(s.trim()));
  if (sizes.length === 0 || sizes.some((n) => !Number.isInteger(n) || n < 1 || n > BENCH_MAX_SERVICES)) {
    throw new InvalidArgumentError(`give comma-separated whole numbers from 1 to ${BENCH_MAX_SERVICES}, e.g. 10,100,500,1000`);
  }
  return sizes;
}

function count(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > BENCH_MAX_SERVICES) throw new InvalidArgumentError(`give a whole number from 0 to ${BENCH_MAX_SERVICES}`);
  return n;
}

interface BenchOptions {
  sizes: number[];
  passSizes: number[];
  steadyPasses: number;
  specEdits: number;
  handEdits: number;
  maxFollowPasses: number;
  latencyMs: number;
  events: boolean;
  workerNodeOptions: string;
  plannerBudgetMs: number;
  planner: boolean;
  pass: boolean;
  cli: boolean;
  cliRuns: number;
  fastPath: boolean;
  fastPathEdits: number;
  results: boolean;
  fanOut: boolean;
  fanOutTargets: number;
  fanOutServices: number;
}

const program = new Command('bench')
  .description('Speed and memory of the planner and of full passes (simulator + dynalite). Prints tables and writes them to bench/RESULTS.md.')
  .option('--sizes <list>', 'fleet sizes (services) of the planner benchmark (the steady plan at 10,000)', sizeList, [10, 100, 1000, 10000])
  .option('--pass-sizes <list>', 'fleet sizes of the pass benchmark', sizeList, [1000, 5000, 20000])
  .option('--steady-passes <n>', 'steady passes measured per size and events mode', count, 1)
  .option('--spec-edits <n>', 'spec items edited in the spec-edit scenario', count, DEFAULT_SPEC_EDITS)
  .option('--hand-edits <n>', 'services scaled by hand in the hand-edit scenario', count, DEFAULT_HAND_EDITS)
  .option('--max-follow-passes <n>', 'passes after a change, at most, until every changed service is acted on', count, DEFAULT_MAX_FOLLOW_PASSES)
  .option('--latency-ms <ms>', 'real milliseconds the simulator holds each ECS answer', count, DEFAULT_LATENCY_MS)
  .option('--no-events', 'events off only (skip the events-on rows)')
  .option('--worker-node-options <flags>', 'extra node flags of the pass worker, after the heap limit the construct sets for the fleet size (e.g. --expose-gc to report the live heap)', '')
  .option('--planner-budget-ms <ms>', 'measured milliseconds per planner case, at least', count, 1000)
  .option('--no-planner', 'skip the planner benchmark')
  .option('--no-pass', 'skip the pass benchmarks')
  .option('--cli-runs <n>', 'measured runs per command of the CLI start-up benchmark', count, 10)
  .option('--no-cli', 'skip the CLI start-up benchmark')
  .option('--fast-path-edits <n>', 'edits measured by the fast-path latency benchmark', count, 100)
  .option('--no-fast-path', 'skip the fast-path latency benchmark (moto DynamoDB Streams + simulator)')
  .option('--fan-out-targets <n>', 'targets (accounts) of the fan-out benchmark', count, 4)
  .option('--fan-out-services <n>', 'services per target of the fan-out benchmark (5000)', count, 5000)
  .option('--no-fan-out', 'skip the fan-out benchmark')
  .option('--no-results', `print only; do not write ${'bench/RESULTS.md'}`);

/** Where the run's tables are written as well, unless `--no-results`. */
const RESULTS_FILE = 'bench/RESULTS.md';

/** Everything printed to stdout, to write {@link RESULTS_FILE} at the end. */
const printed: string[] = [];
const print = (line = ''): void => {
  printed.push(line);
  process.stdout.write(`${line}\n`);
};

/** Real seconds of each part of the run, and the load average when it ended: the run time table. */
const runTimes: { part: string; seconds: number; note?: string }[] = [];
const since = (t0: number): number => (performance.now() - t0) / 1000;

async function main(): Promise<void> {
  // The SDK warns once per process that releases after January 2027 need Node 22 (the SDK's Node.js support policy).
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  program.parse();
  const opts = program.opts<BenchOptions>();
  const progress = (line: string) => process.stderr.write(`${line}\n`);
  const began = performance.now();
  // The machine's load during the run (1-minute load average, sampled every 30 s): real times depend on it.
  const loads: number[] = [loadavg()[0]];
  const loadSampler = setInterval(() => loads.push(loadavg()[0]), 30_000);
  loadSampler.unref();
  const env = localReconcilerEnv({ table: BENCH_TABLE, region: BENCH_REGION, clusters: benchClusters() }, { OWNER_ID: BENCH_OWNER_ID });

  progress('bundling the workers (esbuild, as the construct bundles the Lambda)...');
  const bundles = await bundleWorkers();
  try {
    print(
      `ecs-reconciler benchmarks, ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${process.platform}/${process.arch}, ${availableParallelism()} cores`,
    );
    print(`fleet: services dealt over ${benchClusters().length} clusters, 1-3 tasks each; API_BUDGET_FRACTION ${env.API_BUDGET_FRACTION ?? '0.5 (default)'}\n`);

    if (opts.planner) {
      const t0 = performance.now();
      progress('planner: timing...');
      // --expose-gc: each case starts from a collected heap (the garbage of the case before, e.g.
      // 90 MiB a call of from-empty plans at 10,000 services, is not collected during the next).
      const timing = await plannerRun(bundles.plannerWorker, 'timing', opts, env, ['--expose-gc']);
      progress('planner: allocation...');
      const alloc = await plannerRun(bundles.plannerWorker, 'alloc', opts, env, [
        `--min-semi-space-size=${ALLOC_SEMI_SPACE_MIB}`,
        `--max-semi-space-size=${ALLOC_SEMI_SPACE_MIB}`,
      ]);
      print('1. Planner: plan() per call (pure, no I/O)');
      print('   steady: the same input every call; steady, no cache: the same without the runtime\'s comparison cache (each service walked and hashed, each task definition digested); steady, new observation: a new observation of the same fleet each call (new objects and strings, as each pass reads; built outside the timing)');
      print('   map / map + stamp (observer): the observer mapping the same fleet\'s DescribeServices entries, without and with the stamp the steady plan compares (outside plan(), while the pass waits on ECS)');
      print(plannerTable(timing, alloc));
      print(plannerBoundLine(timing));
      print();
      runTimes.push({ part: 'planner', seconds: since(t0) });
    }

    if (opts.pass) {
      progress('passes: real adapters, simulator (throttling on, latency) and dynalite...');
      const t0 = performance.now();
      const sizes = await runPassBench({
        passWorker: bundles.passWorker,
        sizes: opts.passSizes,
        modes: opts.events ? ['off', 'on'] : ['off'],
        steadyPasses: opts.steadyPasses,
        specEdits: opts.specEdits,
        handEdits: opts.handEdits,
        maxFollowPasses: opts.maxFollowPasses,
        latencyMs: opts.latencyMs,
        // As the construct runs the function for that fleet size: V8's heap limit from its memory.
        workerExecArgv: (n) => [heapFlag(memoryForFleet(n)), ...opts.workerNodeOptions.split(' ').filter((f) => f !== '')],
        ...(opts.events ? { events: simulatorEventsFeed } : {}),
        progress,
      });
      for (const size of sizes) {
        runTimes.push({ part: `passes ${size.services}: seeding`, seconds: size.seedSeconds });
        for (const m of size.modes) runTimes.push({ part: `passes ${size.services}: events ${m.mode}`, seconds: m.realSeconds, note: `${m.passes} passes` });
      }
      runTimes.push({ part: 'passes (sections 2-5), in all', seconds: since(t0) });
      print(`2. Passes at scale: ${sizes.map((s) => s.services).join(', ')} services over ${benchClusters().length} clusters, ECS ${opts.latencyMs} ms a call with its buckets, limiter at the budget, dynalite; one container per size and events mode, bounded like the Lambda (${LAMBDA_TIMEOUT_SECONDS} s), a pass a simulated minute apart`);
      print('   est. Lambda s = the reconciler\'s real time here (the 30 ms a call included) + the rate limiter\'s waits (simulated here, real in AWS)');
      print('   ECS reads against the lower bound (ListServices pages of the clusters listed + DescribeServices of 10 for the services read) and a per-service refresh (DescribeServices + DescribeTaskDefinition per service read)');
      print(`   drift: ${Math.round(DRIFT_SHARE * 100)}% of the services' desiredCount changed by hand; spec edit: ${opts.specEdits} images changed; hand edit: ${opts.handEdits} services' desiredCount changed by hand; each ${EDIT_LEAD_SECONDS} s before the next pass`);
      print(passTable(sizes));
      print();
      print('3. API calls of the same passes, by operation');
      print(callsTable(sizes));
      print();
      print('4. Memory of each container (a worker process bundled like the Lambda) against the limit of its fleet size');
      print(memoryTable(sizes));
      const largest = [...sizes].sort((a, b) => b.services - a.services)[0];
      if (largest) {
        print(`   pass by pass, ${largest.services} services:`);
        print(memoryTrendTable(largest));
      }
      print();
      print(`5. Resync floor: every service re-read (described) within RESYNC_MINUTES ${RESYNC_MINUTES} (a pass a minute: ${RESYNC_MINUTES} passes) even if every event is lost`);
      print(resyncTable(sizes));
      print();
      print('5b. What bounds the services a pass reads: the observation window (55% of the 50 s from the start of the pass; the rotation may go on to 70% until it has read its resync share) less the spec table\'s Scan and the event queue\'s receive (real time here), then the service-read budget (ListServices + DescribeServices: 10 calls a second at half of ECS\'s 20, after a burst of 50)');
      print(readBoundTable(sizes));
      print();
      const findings = passFindings(sizes);
      if (findings.length > 0) {
        print('Findings (errors, fallbacks and services not healthy, first occurrence of each):');
        for (const line of findings) print(`  ${line}`);
        print();
      }
    }
    if (opts.cli) {
      progress('CLI start-up...');
      const t0 = performance.now();
      print(`6. Start-up of the built CLI: spawn to exit, real time, one at a time (${opts.cliRuns} runs after a warm-up)`);
      print(startupTable(await runStartupBench(opts.cliRuns)));
      print();
      runTimes.push({ part: 'CLI start-up', seconds: since(t0) });
    }
    if (opts.fastPath && opts.fastPathEdits > 0) {
      progress('fast path: moto (DynamoDB Streams) and the simulator, real time...');
      const t0 = performance.now();
      const fast = await runFastPathBench({ edits: opts.fastPathEdits, services: 20, progress });
      print('7. Fast path: a spec edit to the first ECS call, real time (moto DynamoDB Streams polled every 250 ms as Lambda does, the simulator)');
      print(fastPathTable(fast));
      print();
      runTimes.push({ part: 'fast path', seconds: since(t0) });
    }
    if (opts.fanOut && opts.fanOutTargets > 0 && opts.fanOutServices > 0) {
      const t0 = performance.now();
      const fan = await runFanOutBench({ targets: opts.fanOutTargets, services: opts.fanOutServices, steadyTicks: 2, progress });
      print(`8. Fan-out: ${fan.targets} targets x ${fan.services} services, one simulator (account) each, beside 1 target alone; passes bounded like the Lambda (50 s)`);
      print('   total s = real s + budget waits s (rate-limiter waits, simulated here); throttled = ThrottlingException answers (0: within its own budget)');
      print(fanOutTable(fan));
      print();
      runTimes.push({ part: 'fan-out', seconds: since(t0) });
    }
    const seconds = ((performance.now() - began) / 1000).toFixed(0);
    clearInterval(loadSampler);
    loads.push(loadavg()[0]);
    const meanLoad = loads.reduce((a, b) => a + b, 0) / loads.length;
    print(
      `9. Run time: real seconds of each part; the machine's 1-minute load average during the run (every 30 s, ${availableParallelism()} cores): min ${Math.min(...loads).toFixed(1)}, mean ${meanLoad.toFixed(1)}, max ${Math.max(...loads).toFixed(1)}`,
    );
    for (const t of runTimes) print(`   ${t.part.padEnd(32)} ${t.seconds.toFixed(0).padStart(5)} s${t.note ? `  (${t.note})` : ''}`);
    print(`   ${'the whole run'.padEnd(32)} ${seconds.padStart(5)} s`);
    progress(`done in ${seconds} s`);
    if (opts.results) {
      const args = process.argv.slice(2).join(' ');
      writeFileSync(
        RESULTS_FILE,
        `# Benchmark results\n\nWritten by \`npm run bench${args ? ` -- ${args}` : ''}\` in ${seconds} s (see docs/benchmarks.md for what each table means).\n\n\`\`\`text\n${printed.join('\n')}\n\`\`\`\n`,
      );
      progress(`wrote ${RESULTS_FILE}`);
    }
  } finally {
    await bundles.remove();
  }
}

async function plannerRun(
  bundle: string,
  mode: PlannerRequest['mode'],
  opts: BenchOptions,
  env: Record<string, string>,
  execArgv: string[],
): Promise<PlannerCaseResult[]> {
  const worker = BenchWorker.start(bundle, execArgv);
  try {
    const res = await worker.request<PlannerRequest>({ type: 'planner', mode, sizes: opts.sizes, env, budgetMs: opts.plannerBudgetMs });
    return res.results;
  } finally {
    await worker.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});

/**
 * The benchmark's tables (cli-table3), printed to stdout. Nothing is written to disk: numbers
 * belong to the machine and the day they were measured.
 */
import Table from 'cli-table3';
import { LAMBDA_TIMEOUT_SECONDS, type CappedRun, type LambdaRunResult, type MeasuredPass, type SizeResult } from './pass-bench';
import type { PlannerCaseResult } from './protocol';
import { mib, ms, seconds } from './stats';

/** No colours: the tables are pasted into markdown and logs. */
const plain = { style: { head: [] as string[], border: [] as string[] } };

/** The planner table: one row per size and case, timing and allocation merged. */
export function plannerTable(timing: PlannerCaseResult[], alloc: PlannerCaseResult[]): string {
  const t = new Table({
    ...plain,
    head: ['services', 'case', 'actions', 'runs', 'median ms', 'p95 ms', 'min ms', 'allocated MiB/call'],
    colAligns: ['right', 'left', 'right', 'right', 'right', 'right', 'right', 'right'],
  });
  for (const r of timing) {
    const a = alloc.find((x) => x.services === r.services && x.case === r.case);
    const allocText =
      a?.allocatedBytes !== undefined ? mib(a.allocatedBytes) : a ? `n/a (GC in all ${a.allocRuns} calls)` : '-';
    t.push([r.services, r.case, r.actions, r.runs ?? '-', ms(r.medianMs ?? NaN), ms(r.p95Ms ?? NaN), ms(r.minMs ?? NaN), allocText]);
  }
  return t.toString();
}

function throttled(p: MeasuredPass): number {
  return Object.values(p.ecsCalls).reduce((n, c) => n + c.throttled, 0);
}

/** Seconds a Lambda would take: the reconciler's real time here plus the limiter's waits. */
export function estimatedLambdaSeconds(p: MeasuredPass): number {
  return (p.result.realMs - p.result.controlMs) / 1000 + p.result.waitedSeconds;
}

function passRow(label: string, p: MeasuredPass, peakRss: number, peakHeap: number): (string | number)[] {
  const est = estimatedLambdaSeconds(p);
  return [
    p.services,
    label,
    p.result.actionsApplied,
    p.result.actionsFailed + p.result.actionsSkipped,
    p.result.statusesWritten,
    p.result.taskDefinitionsPending,
    seconds((p.result.realMs - p.result.controlMs) / 1000),
    seconds(p.result.waitedSeconds),
    seconds(est),
    est <= LAMBDA_TIMEOUT_SECONDS ? 'yes' : 'NO',
    throttled(p),
    mib(peakRss),
    mib(peakHeap),
  ];
}

/** Row label of a pass of a new container. */
function passLabel(p: MeasuredPass): string {
  if (p.kind === 'cold') return 'first (new container)';
  if (p.kind === 'catchup') return `new container, pass ${p.index}`;
  return `steady ${p.index}`;
}

/**
 * The pass table: per size, the create pass (from empty, unbounded), the cold pass (new
 * container) and the warm steady pass (median time of the warm passes, peak memory over them).
 */
export function passTable(sizes: SizeResult[]): string {
  const t = new Table({
    ...plain,
    head: [
      'services',
      'pass',
      'applied',
      'failed/ skipped',
      'status writes',
      'TDs pending',
      'real s',
      'budget waits s',
      'est. Lambda s',
      `fits ${LAMBDA_TIMEOUT_SECONDS} s`,
      'throttled',
      'peak RSS MiB',
      'peak heapUsed MiB',
    ],
    colAligns: ['right', 'left', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'left', 'right', 'right', 'right'],
  });
  for (const s of sizes) {
    const create = s.passes.find((p) => p.kind === 'create');
    const cold = s.passes.find((p) => p.kind === 'cold');
    const catchup = s.passes.filter((p) => p.kind === 'catchup');
    const steady = s.passes.filter((p) => p.kind === 'steady');
    if (create) t.push(passRow('create from empty', create, create.result.peak.rss, create.result.peak.heapUsed));
    if (cold) t.push(passRow('first pass, new container', cold, cold.result.peak.rss, cold.result.peak.heapUsed));
    for (const p of catchup) t.push(passRow(`new container, pass ${p.index}`, p, p.result.peak.rss, p.result.peak.heapUsed));
    if (steady.length > 0) {
      const mid = [...steady].sort((a, b) => a.result.realMs - b.result.realMs)[Math.floor((steady.length - 1) / 2)];
      const peakRss = Math.max(...steady.map((p) => p.result.peak.rss));
      const peakHeap = Math.max(...steady.map((p) => p.result.peak.heapUsed));
      t.push(passRow(`steady (median of ${steady.length})`, mid, peakRss, peakHeap));
    }
  }
  return t.toString();
}

/** Memory of each size's fresh worker: after init, and its high-water RSS after the steady passes. */
export function memoryTable(sizes: SizeResult[]): string {
  const t = new Table({
    ...plain,
    head: ['services', 'RSS after init MiB', 'heapUsed after init MiB', 'max RSS of the container MiB', 'converged'],
    colAligns: ['right', 'right', 'right', 'right', 'left'],
  });
  for (const s of sizes) {
    const last = s.passes.filter((p) => p.kind === 'cold' || p.kind === 'catchup' || p.kind === 'steady').at(-1);
    t.push([s.services, mib(s.init.memory.rss), mib(s.init.memory.heapUsed), last ? mib(last.result.maxRssBytes) : '-', s.converged ? 'yes' : 'NO']);
  }
  return t.toString();
}

/**
 * Memory pass by pass in one container (the largest size): the first pass, then each steady pass.
 * A high-water RSS that keeps climbing from pass to pass would be a leak.
 */
export function memoryTrendTable(size: SizeResult): string {
  const t = new Table({
    ...plain,
    head: ['pass', 'TDs pending', 'est. Lambda s', 'peak RSS MiB', 'peak heapUsed MiB', 'max RSS so far MiB'],
    colAligns: ['left', 'right', 'right', 'right', 'right', 'right'],
  });
  for (const p of size.passes.filter((x) => x.kind === 'cold' || x.kind === 'catchup' || x.kind === 'steady')) {
    t.push([
      passLabel(p),
      p.result.taskDefinitionsPending,
      seconds(estimatedLambdaSeconds(p)),
      mib(p.result.peak.rss),
      mib(p.result.peak.heapUsed),
      mib(p.result.maxRssBytes),
    ]);
  }
  return t.toString();
}

/** The largest fleet's passes in a container with a capped V8 heap. */
export function cappedTable(services: number, run: CappedRun): string {
  const t = new Table({
    ...plain,
    head: ['pass', 'outcome', 'est. Lambda s', 'peak RSS MiB', 'peak heapUsed MiB', 'max RSS so far MiB'],
    colAligns: ['left', 'left', 'right', 'right', 'right', 'right'],
  });
  for (const p of run.passes) {
    t.push([
      passLabel(p),
      p.result.outcome,
      seconds(estimatedLambdaSeconds(p)),
      mib(p.result.peak.rss),
      mib(p.result.peak.heapUsed),
      mib(p.result.maxRssBytes),
    ]);
  }
  if (run.error) t.push([{ colSpan: 6, content: `${services} services, heap ${run.heapMiB} MiB: the worker failed: ${run.error}` }]);
  return t.toString();
}

/** API calls of the last warm steady pass per size: ECS (simulator's call log) and DynamoDB. */
export function callsTable(sizes: SizeResult[]): string {
  const lastSteady = sizes.map((s) => s.passes.filter((p) => p.kind === 'steady').at(-1));
  const cold = sizes.map((s) => s.passes.find((p) => p.kind === 'cold'));
  const ecsActions = new Set<string>();
  const ddbActions = new Set<string>();
  for (const p of [...lastSteady, ...cold]) {
    if (!p) continue;
    Object.keys(p.ecsCalls).forEach((a) => ecsActions.add(a));
    Object.keys(p.result.dynamoCalls).forEach((a) => ddbActions.add(a));
  }
  const t = new Table({
    ...plain,
    head: ['API call', ...sizes.map((s) => `N=${s.services} steady`), ...sizes.map((s) => `N=${s.services} new container`)],
    colAligns: ['left', ...sizes.map(() => 'right' as const), ...sizes.map(() => 'right' as const)],
  });
  const cell = (p: MeasuredPass | undefined, get: (p: MeasuredPass) => number | undefined) => (p ? (get(p) ?? 0) : '-');
  for (const a of [...ecsActions].sort()) {
    t.push([`ECS ${a}`, ...lastSteady.map((p) => cell(p, (x) => x.ecsCalls[a]?.total)), ...cold.map((p) => cell(p, (x) => x.ecsCalls[a]?.total))]);
  }
  for (const a of [...ddbActions].sort()) {
    t.push([
      `DynamoDB ${a}`,
      ...lastSteady.map((p) => cell(p, (x) => x.result.dynamoCalls[a])),
      ...cold.map((p) => cell(p, (x) => x.result.dynamoCalls[a])),
    ]);
  }
  return t.toString();
}

/** The Lambda-bounded run from empty: what each one-minute pass got done. */
export function lambdaTable(run: LambdaRunResult): string {
  const t = new Table({
    ...plain,
    head: ['pass', 'registered', 'created', 'skipped (out of time)', 'status writes', 'est. Lambda s', 'services ACTIVE', 'phases'],
    colAligns: ['right', 'right', 'right', 'right', 'right', 'right', 'right', 'left'],
  });
  for (const p of run.passes) {
    t.push([
      p.index,
      p.result.appliedByType.RegisterTaskDefinition ?? 0,
      p.result.appliedByType.CreateService ?? 0,
      p.result.actionsSkipped,
      p.result.statusesWritten,
      seconds(estimatedLambdaSeconds(p)),
      p.activeServices,
      Object.entries(p.result.phases)
        .map(([k, v]) => `${k} ${v}`)
        .join(', '),
    ]);
  }
  return t.toString();
}

/**
 * What the passes reported beyond the numbers: summary errors, and services left Degraded,
 * Blocked or Invalid grouped by phase and reason; each the first time it appears per size and kind
 * of pass. The benchmark's fleet is healthy, so every line deserves a look.
 */
export function passFindings(passes: MeasuredPass[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  const once = (scope: string, what: string, line: string) => {
    if (seen.has(`${scope}|${what}`)) return;
    seen.add(`${scope}|${what}`);
    out.push(line);
  };
  for (const p of passes) {
    const scope = `N=${p.services} ${p.kind}`;
    for (const e of p.result.errors) once(scope, e, `${scope} pass ${p.index}: error: ${e}`);
    for (const a of p.result.attention) {
      once(scope, a.key, `${scope} pass ${p.index}: ${a.count} service(s) ${a.key}, e.g. ${a.example}`);
    }
  }
  return out;
}

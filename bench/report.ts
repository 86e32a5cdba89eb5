/**
 * The benchmark's tables (cli-table3), printed to stdout and written to bench/RESULTS.md by
 * `./run`. Every figure of the pass benchmark is put against its bound: the invocation's deadline,
 * the fewest calls that read the same services, a per-service refresh of the same services, and
 * the RSS limit of the fleet's size.
 */
import Table from 'cli-table3';
import { LAMBDA_TIMEOUT_SECONDS, RESYNC_MINUTES, rssLimitMiB, type MeasuredPass, type ScenarioResult, type SizeResult } from './pass-bench';
import type { PlannerCaseResult } from './protocol';
import { median, mib, ms, percentile, seconds } from './stats';

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
    const observer = r.case === 'map' || r.case === 'map + stamp';
    t.push([r.services, observer ? `${r.case} (observer)` : r.case, observer ? '-' : r.actions, r.runs ?? '-', ms(r.medianMs ?? NaN), ms(r.p95Ms ?? NaN), ms(r.minMs ?? NaN), allocText]);
  }
  return t.toString();
}

/** The planner's bound: a steady plan of {@link PLANNER_BOUND_SERVICES} services in at most this many milliseconds. */
export const PLANNER_BOUND_MS = 100;
export const PLANNER_BOUND_SERVICES = 10_000;

/** The planner's figures at {@link PLANNER_BOUND_SERVICES} services against {@link PLANNER_BOUND_MS} (median), or why there are none. */
export function plannerBoundLine(timing: PlannerCaseResult[]): string {
  const at = (c: PlannerCaseResult['case']) => timing.find((r) => r.services === PLANNER_BOUND_SERVICES && r.case === c);
  const steady = at('steady');
  if (steady?.medianMs === undefined) return `   bound: steady plan of ${PLANNER_BOUND_SERVICES} services at most ${PLANNER_BOUND_MS} ms: not measured (add ${PLANNER_BOUND_SERVICES} to --sizes)`;
  const fresh = at('steady, new observation');
  const against = (m: number) => `${ms(m)} ms, ${(m / PLANNER_BOUND_MS).toFixed(2)}x`;
  return (
    `   bound: steady plan of ${PLANNER_BOUND_SERVICES} services at most ${PLANNER_BOUND_MS} ms: median ${against(steady.medianMs)}` +
    (fresh?.medianMs !== undefined ? `; with a new observation each call: median ${against(fresh.medianMs)}` : '') +
    `\n   (a pass plans only the services it read that pass, at most the "services read" of section 2, not the whole fleet)`
  );
}

/** Seconds a Lambda would take: the reconciler's real time here (30 ms per ECS call included) plus the limiter's waits. */
export function estimatedLambdaSeconds(p: MeasuredPass): number {
  return (p.result.realMs - p.result.controlMs) / 1000 + p.result.waitedSeconds;
}

function throttled(p: MeasuredPass): number {
  return Object.values(p.ecsCalls).reduce((n, c) => n + c.throttled, 0);
}

const ratio = (value: number, bound: number): string => (bound > 0 ? `${(value / bound).toFixed(2)}x` : '-');

/** The pass a scenario is summed up by: the first one (steady: the median by time). */
function representative(s: ScenarioResult): MeasuredPass | undefined {
  if (s.scenario !== 'steady') return s.passes[0];
  const sorted = [...s.passes].sort((a, b) => estimatedLambdaSeconds(a) - estimatedLambdaSeconds(b));
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

function scenarios(sizes: SizeResult[]): ScenarioResult[] {
  return sizes.flatMap((s) => s.modes.flatMap((m) => m.scenarios));
}

/**
 * The pass table: one row per size, events mode and scenario (its first pass after the change;
 * steady: the median of the steady passes), each figure against its bound.
 */
export function passTable(sizes: SizeResult[]): string {
  const t = new Table({
    ...plain,
    head: [
      'services',
      'events',
      'pass',
      'est. Lambda s',
      `of the ${LAMBDA_TIMEOUT_SECONDS} s deadline`,
      'slowest pass of the scenario',
      'service reads',
      'of the lower bound',
      'all ECS reads',
      'of a per-service refresh',
      'services read',
      'TDs pending',
      'changed: acted on by pass 1, 2, ...',
      'change to its UpdateService s p50 / max',
      'peak RSS MiB',
      'of the limit',
    ],
    colAligns: ['right', 'left', 'left', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'left', 'right', 'right', 'right'],
  });
  for (const s of scenarios(sizes)) {
    const p = representative(s);
    if (!p) continue;
    const est = estimatedLambdaSeconds(p);
    const slowest = Math.max(...s.passes.map(estimatedLambdaSeconds));
    const peak = Math.max(...s.passes.map((x) => x.result.peak.rss));
    const acted =
      s.targets > 0
        ? `${s.targets}: ${s.actedByPass.slice(0, 6).join(', ')}${s.actedByPass.length > 6 ? `, ... ${s.actedByPass.at(-1)} (pass ${s.actedByPass.length})` : ''}`
        : '-';
    const lat = s.editToCallSeconds.length > 0 ? `${seconds(median(s.editToCallSeconds))} / ${seconds(percentile(s.editToCallSeconds, 100))}` : '-';
    t.push([
      s.services,
      s.mode,
      s.scenario === 'steady' ? `steady (median of ${s.passes.length})` : s.scenario,
      seconds(est),
      ratio(est, LAMBDA_TIMEOUT_SECONDS),
      `${seconds(slowest)} (${ratio(slowest, LAMBDA_TIMEOUT_SECONDS)})`,
      p.serviceReads,
      ratio(p.serviceReads, p.readLowerBound),
      p.readCalls,
      ratio(p.readCalls, 2 * p.servicesDescribed),
      p.result.servicesRead,
      p.result.taskDefinitionsPending,
      acted,
      lat,
      mib(peak),
      ratio(peak / (1024 * 1024), rssLimitMiB(s.services)),
    ]);
  }
  return t.toString();
}

/** API calls of the same passes, by operation (ECS: the simulator's call log; DynamoDB: the worker's client). */
export function callsTable(sizes: SizeResult[]): string {
  const rows = scenarios(sizes).flatMap((s) => {
    const p = representative(s);
    return p ? [{ s, p }] : [];
  });
  const ecs = new Set<string>();
  const ddb = new Set<string>();
  for (const { p } of rows) {
    Object.keys(p.ecsCalls).forEach((a) => ecs.add(a));
    Object.keys(p.result.dynamoCalls).forEach((a) => ddb.add(a));
  }
  const ecsActions = [...ecs].sort();
  const ddbActions = [...ddb].sort();
  const t = new Table({
    ...plain,
    head: ['services', 'events', 'pass', ...ecsActions, 'lower bound (service reads)', ...ddbActions.map((a) => `DynamoDB ${a}`), 'throttled'],
  });
  for (const { s, p } of rows) {
    t.push([
      s.services,
      s.mode,
      s.scenario,
      ...ecsActions.map((a) => p.ecsCalls[a]?.total ?? 0),
      p.readLowerBound,
      ...ddbActions.map((a) => p.result.dynamoCalls[a] ?? 0),
      throttled(p),
    ]);
  }
  return t.toString();
}

/**
 * The passes of a container's scenarios, each once (in the order run), with the names it has in
 * them: a pass shared by two scenarios (spec edit and hand edit behind drift follow the same
 * passes) is one pass, named `spec edit 1 / hand edit behind drift 1`. Exported for its test.
 */
export function containerPasses(scenarios: readonly ScenarioResult[]): { pass: MeasuredPass; names: string }[] {
  const byNumber = new Map<number, { pass: MeasuredPass; names: string[] }>();
  for (const s of scenarios) {
    for (const p of s.passes) {
      const seen = byNumber.get(p.pass);
      if (seen) seen.names.push(`${s.scenario} ${p.index}`);
      else byNumber.set(p.pass, { pass: p, names: [`${s.scenario} ${p.index}`] });
    }
  }
  return [...byNumber.values()].sort((a, b) => a.pass.pass - b.pass.pass).map((x) => ({ pass: x.pass, names: x.names.join(' / ') }));
}

/** Memory of each container: after init, its high-water RSS over all its passes, against the limit. */
export function memoryTable(sizes: SizeResult[]): string {
  const t = new Table({
    ...plain,
    head: [
      'services',
      'events',
      'passes',
      'RSS after init MiB',
      'max RSS of the container MiB',
      'limit MiB',
      'of the limit',
      'peak heapUsed MiB',
      'heap after the last pass MiB',
      'task definitions cached',
    ],
    colAligns: ['right', 'left', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
  });
  for (const s of sizes) {
    for (const m of s.modes) {
      const passes = containerPasses(m.scenarios).map((x) => x.pass);
      const last = passes.at(-1);
      const limit = rssLimitMiB(s.services);
      t.push([
        s.services,
        m.mode,
        passes.length,
        mib(m.init.memory.rss),
        mib(m.maxRssBytes),
        limit,
        ratio(m.maxRssBytes / (1024 * 1024), limit),
        mib(Math.max(...passes.map((p) => p.result.peak.heapUsed))),
        last ? mib(last.result.heapAfterBytes) : '-',
        last?.result.cachedTaskDefinitions ?? '-',
      ]);
    }
  }
  return t.toString();
}

/** Pass by pass memory of the largest fleet's containers: a high-water RSS that keeps climbing would be a leak. */
export function memoryTrendTable(size: SizeResult): string {
  const t = new Table({
    ...plain,
    head: ['events', 'pass', 'est. Lambda s', 'peak RSS MiB', 'peak heapUsed MiB', 'heap after MiB', 'live heap MiB', 'max RSS so far MiB'],
    colAligns: ['left', 'left', 'right', 'right', 'right', 'right', 'right', 'right'],
  });
  for (const m of size.modes) {
    for (const { pass: p, names } of containerPasses(m.scenarios)) {
      t.push([
        m.mode,
        names,
        seconds(estimatedLambdaSeconds(p)),
        mib(p.result.peak.rss),
        mib(p.result.peak.heapUsed),
        mib(p.result.heapAfterBytes),
        p.result.liveHeapBytes !== undefined ? mib(p.result.liveHeapBytes) : '-',
        mib(p.result.maxRssBytes),
      ]);
    }
  }
  return t.toString();
}

/**
 * What the passes reported beyond the numbers: summary errors, events mode falling back to
 * polling, and services left Degraded, Blocked or Invalid grouped by phase and reason; each the
 * first time it appears per size, mode and scenario.
 */
export function passFindings(sizes: SizeResult[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  const once = (scope: string, what: string, line: string) => {
    if (seen.has(`${scope}|${what}`)) return;
    seen.add(`${scope}|${what}`);
    out.push(line);
  };
  for (const s of scenarios(sizes)) {
    const scope = `N=${s.services} events ${s.mode} ${s.scenario}`;
    if (s.targets > 0 && s.actedOn < s.targets) {
      out.push(`${scope}: ${s.targets - s.actedOn} of ${s.targets} changed services not acted on after ${s.passes.length} passes`);
    }
    for (const p of s.passes) {
      // A listing cut at the deadline is the rotation at work (the cursor goes on), not a failure.
      for (const e of p.result.errors) if (!e.endsWith('not read to the end (deadline)')) once(scope, e, `${scope} pass ${p.index}: error: ${e}`);
      if (s.mode === 'on' && p.result.eventsMode === 'polling') once(scope, 'polling', `${scope} pass ${p.index}: events mode fell back to polling: ${p.result.eventsReason ?? ''}`);
      for (const a of p.result.attention) once(scope, a.key, `${scope} pass ${p.index}: ${a.count} service(s) ${a.key}, e.g. ${a.example}`);
    }
  }
  return out;
}

/**
 * The resync floor: per size and events mode, services described at least once since
 * the mark after each pass, and the passes (a simulated minute apart) until every service was,
 * against `RESYNC_MINUTES` passes.
 */
export function resyncTable(sizes: SizeResult[]): string {
  const t = new Table({
    ...plain,
    head: ['services', 'events', 'mark', 'services read since the mark, by pass (cumulative)', 'passes until every service read', `of RESYNC_MINUTES ${RESYNC_MINUTES} passes`, 'holds?'],
    colAligns: ['right', 'left', 'left', 'left', 'right', 'right', 'left'],
  });
  for (const s of scenarios(sizes)) {
    if (s.scenario !== 'resync' || !s.resync) continue;
    const by = s.resync.coveredByPass;
    const at = by.findIndex((c) => c >= s.services);
    const shown = by.length <= 8 ? by.join(', ') : `${by.slice(0, 4).join(', ')}, ... ${by.slice(-3).join(', ')}`;
    t.push([
      s.services,
      s.mode === 'on' ? 'on, every event lost' : 'off',
      s.resync.mark,
      shown,
      at >= 0 ? at + 1 : `not within ${by.length} (${by.at(-1) ?? 0} read)`,
      at >= 0 ? ratio(at + 1, RESYNC_MINUTES) : `> ${ratio(by.length, RESYNC_MINUTES)}`,
      at >= 0 && at + 1 <= RESYNC_MINUTES ? 'yes' : 'NO',
    ]);
  }
  return t.toString();
}

/**
 * What bounds the services a pass reads: per size and events mode, its steady pass (events on: the
 * rotation's share too) with the real time spent reading the spec table (DynamoDB Scan) and the
 * event queue, which come out of the observation window, and the service-read budget's waits.
 */
export function readBoundTable(sizes: SizeResult[]): string {
  const t = new Table({
    ...plain,
    head: [
      'services',
      'events',
      'pass',
      'services read',
      'rotation share (events)',
      'spec Scan real s',
      'event receive real s',
      'ListServices + DescribeServices',
      'service-read budget waits s',
      'est. Lambda s',
    ],
    colAligns: ['right', 'left', 'left', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
  });
  for (const s of scenarios(sizes)) {
    if (s.scenario !== 'steady' && s.scenario !== 'resync') continue;
    const p = s.passes[0];
    if (!p) continue;
    const r = p.result;
    t.push([
      s.services,
      s.mode,
      s.scenario === 'resync' ? `resync 1${s.mode === 'on' ? ' (events lost)' : ''}` : 'steady',
      r.servicesRead,
      r.eventsBudget ?? '-',
      seconds((r.dynamoMs.Scan ?? 0) / 1000),
      s.mode === 'on' ? seconds(r.eventsReceiveMs / 1000) : '-',
      p.serviceReads,
      seconds((r.limiterWaitedMs.serviceRead ?? 0) / 1000),
      seconds(estimatedLambdaSeconds(p)),
    ]);
  }
  return t.toString();
}

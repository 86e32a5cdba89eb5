/**
 * The summary `ecsr local` prints when it ends: the expectations and whether each held, per
 * service its final phase, the actions taken and the time to converge (simulated seconds), the
 * alarms raised, and the ECS API calls by action as the simulator counted them, with the errors
 * the reconciler expects told apart from the others.
 */
import { alarmLabel, stateKeyLabel } from './alarms';
import type { CallCount, CallRecord } from './sim';
import { fitTable, needsReason, plainTable as table, reasonBlock, statusReason, timestamp } from './view';
import type { Convergence, ExpectationResult, RunRecord } from './scenario';
import { dict, own, putOwn } from '../lambda/core/dict';

/** Applied actions per service, by type: `{ 'shop/web': { CreateService: 1, ... } }`. */
export function actionsByService(run: RunRecord): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = dict();
  for (const p of run.passes) {
    for (const a of p.summary?.actions ?? []) {
      if (a.outcome !== 'applied') continue;
      const id = `${a.cluster}/${a.service}`;
      const label = a.kind ? `${a.type}(${a.kind})` : a.type;
      const byType = (out[id] ??= dict());
      putOwn(byType, label, (own(byType, label) ?? 0) + 1);
    }
  }
  return out;
}

/**
 * The phase of each service at the end: the last pass's status; for a service the last pass no
 * longer reports (a pruned service once ECS has it INACTIVE), `Deleted` when ECS agrees, else the
 * last phase a pass reported.
 */
export function finalPhases(run: RunRecord): Record<string, string> {
  const out: Record<string, string> = dict();
  for (const p of run.passes) for (const [id, s] of Object.entries(p.summary?.statuses ?? {})) out[id] = s.phase;
  const last = run.passes.at(-1)?.summary?.statuses ?? {};
  for (const id of Object.keys(out)) {
    if (own(last, id)) continue;
    const live = own(run.live, id);
    if (!live || live.status === 'INACTIVE') out[id] = 'Deleted';
  }
  return out;
}

/** Whether a DescribeTaskDefinition argument is a bare family (not `family:revision`, not an ARN). */
function isFamily(taskDefinition: unknown): taskDefinition is string {
  return typeof taskDefinition === 'string' && taskDefinition !== '' && !taskDefinition.includes(':');
}

/**
 * The calls that answered an error the reconciler expects: a DescribeTaskDefinition of a bare
 * family answered `ClientException` before any RegisterTaskDefinition of that family succeeded.
 * Before a family's first registration the actuator asks ECS for its latest ACTIVE revision (to
 * reuse an equal one instead of piling up revisions), and ECS answers ClientException ("Unable to
 * describe task definition.") for a family it does not know (Amazon ECS API reference,
 * DescribeTaskDefinition).
 * @param calls the simulator's call log, in arrival order.
 */
export function expectedErrors(calls: readonly CallRecord[]): CallRecord[] {
  const registered = new Set<string>();
  const out: CallRecord[] = [];
  for (const c of [...calls].sort((a, b) => a.seq - b.seq)) {
    if (c.action === 'RegisterTaskDefinition' && c.outcome === 'ok' && typeof c.request.family === 'string') registered.add(c.request.family);
    const td = c.request.taskDefinition;
    if (c.action === 'DescribeTaskDefinition' && c.outcome === 'ClientException' && isFamily(td) && !registered.has(td)) out.push(c);
  }
  return out;
}

/** `4 (expected)`, `5 (4 expected)` or `0`: an ERRORS cell. */
function errorsCell(errors: number, expected: number): string {
  if (expected === 0) return String(errors);
  return expected === errors ? `${errors} (expected)` : `${errors} (${expected} expected)`;
}

/**
 * The whole summary as text.
 * @param expectations empty with `--forever` (no scenario).
 * @param callCounts the simulator's per-action counts (total, ok, throttled, errors).
 * @param width columns of the terminal: the services table wraps its actions and times to fit,
 *   and each service not converged at the end has its whole reason under it.
 */
export function renderSummary(
  run: RunRecord,
  expectations: readonly ExpectationResult[],
  convergence: readonly Convergence[],
  callCounts: Record<string, CallCount>,
  width = 120,
): string {
  const out = [
    ...overviewLines(run),
    ...expectationLines(expectations),
    '',
    ...serviceLines(run, convergence, width),
    '',
    ...alarmLines(run),
    '',
    ...callLines(run, callCounts),
    ...resultLines(expectations),
  ];
  return `${out.join('\n')}\n`;
}

/** How many passes over how long, and how the passes observed ECS (events or polling). */
function overviewLines(run: RunRecord): string[] {
  const out: string[] = [];
  const end = run.passes.at(-1)?.at ?? run.startedAt;
  out.push(`Summary: ${run.passes.length} passes over ${timestamp(end, run.startedAt).split(' +')[1]} of simulated time.`);
  const obs = run.observation;
  if (obs?.mode === 'events') {
    const received = run.passes.reduce((n, p) => n + (p.summary?.events?.received ?? 0), 0);
    const polled = run.passes.filter((p) => p.summary && p.summary.events?.mode !== 'events').length;
    out.push(
      `Observation: events mode. The simulator put ${obs.bus.put} events on the bus; the construct's rules delivered ${obs.bus.delivered} into the events queue ` +
        `(${obs.bus.unmatched} matched no rule) with ${obs.bus.heartbeats} heartbeats; the passes received ${received} messages` +
        `${polled > 0 ? `; ${polled} pass${polled === 1 ? '' : 'es'} fell back to polling` : ''}${obs.deadLettered > 0 ? `; ${obs.deadLettered} in the dead-letter queue` : ''}.`,
    );
  } else if (obs?.mode === 'polling') {
    out.push('Observation: polling (--no-events): every pass read the whole fleet.');
  }
  return out;
}

/** The verdict of each expectation (nothing without expectations). */
function expectationLines(expectations: readonly ExpectationResult[]): string[] {
  if (expectations.length === 0) return [];
  return ['', 'Expectations:', ...expectations.map((e) => `  ${e.ok ? 'PASS' : 'FAIL'}  ${e.description}: ${e.detail}`)];
}

/** The services table (final phase, actions applied, time to converge), then the reason of each not converged. */
function serviceLines(run: RunRecord, convergence: readonly Convergence[], width: number): string[] {
  const out = ['Services:'];
  const actions = actionsByService(run);
  const phases = finalPhases(run);
  const ids = [...new Set([...Object.keys(run.loadedHashes), ...Object.keys(phases), ...Object.keys(actions)])].sort();
  const serviceRows: string[][] = [];
  for (const id of ids) {
    const acts = Object.entries(own(actions, id) ?? {}).map(([t, n]) => `${t} ${n}`).join('\n') || '-';
    const conv = convergence
      .filter((c) => c.service === id)
      .map((c) => `${c.label}: ${c.seconds === null ? 'never' : `${c.seconds} s`}`)
      .join('\n');
    const live = own(run.live, id);
    const ecs = live ? `${live.status} ${live.runningCount}/${live.desiredCount}` : 'gone';
    serviceRows.push([id, `${own(phases, id) ?? '-'}\nECS ${ecs}`, acts, conv || '-']);
  }
  out.push(fitTable(['SERVICE', 'FINAL PHASE', 'ACTIONS APPLIED', 'TIME TO CONVERGE'], serviceRows, { width, shrink: [[3, 18], [0, 14], 2, 3, 0], wrap: [1, 2, 3] }));
  const lastStatuses = run.passes.at(-1)?.summary?.statuses ?? {};
  for (const id of ids) {
    const st = own(lastStatuses, id);
    const why = st ? statusReason(st) : '';
    if (st && needsReason(st.phase) && why !== '') out.push(reasonBlock(id, why, width));
  }
  return out;
}

/** Every transition to ALARM, and the alarms still in ALARM at the end. */
function alarmLines(run: RunRecord): string[] {
  const out = ['Alarms raised:'];
  const raised = run.alarms.filter((a) => a.to === 'ALARM');
  if (raised.length === 0) out.push('  none');
  for (const a of raised) {
    const value = a.value !== undefined ? ` (latest datapoint ${a.value})` : '';
    out.push(`  ${timestamp(a.at, run.startedAt)}  ${alarmLabel(a.alarm, a.contributor)} -> ALARM${value}${a.reason ? `: ${a.reason}` : ''}`);
  }
  const stillInAlarm = Object.entries(run.finalAlarmStates)
    .filter(([, s]) => s === 'ALARM')
    .map(([k]) => stateKeyLabel(k));
  out.push(`  in ALARM at the end: ${stillInAlarm.length > 0 ? stillInAlarm.join(', ') : 'none'}`);
  return out;
}

/** The ECS calls per action as the simulator answered them, the errors the reconciler expects said so. */
function callLines(run: RunRecord, callCounts: Record<string, CallCount>): string[] {
  const out = ['ECS API calls (as the simulator answered them):'];
  const calls = table(['ACTION', 'CALLS', 'OK', 'THROTTLED', 'ERRORS']);
  const totals = { total: 0, ok: 0, throttled: 0, errors: 0 };
  const expected = expectedErrors(run.calls);
  const expectedOf = (action: string) => expected.filter((c) => c.action === action).length;
  for (const [action, c] of Object.entries(callCounts).sort(([a], [b]) => (a < b ? -1 : 1))) {
    calls.push([action, c.total, c.ok, c.throttled, errorsCell(c.errors, expectedOf(action))]);
    totals.total += c.total;
    totals.ok += c.ok;
    totals.throttled += c.throttled;
    totals.errors += c.errors;
  }
  calls.push(['(all)', totals.total, totals.ok, totals.throttled, errorsCell(totals.errors, expected.length)]);
  out.push(calls.toString());
  if (expected.length > 0) {
    const n = expected.length;
    out.push(
      `  expected: ${n} DescribeTaskDefinition call${n === 1 ? '' : 's'} answered ClientException for a family not registered yet. Before a`,
      "  family's first RegisterTaskDefinition the reconciler asks ECS for its latest ACTIVE revision (to reuse an equal one),",
      '  and ECS answers ClientException ("Unable to describe task definition.") for a family it does not know.',
    );
  }
  return out;
}

/** The run's verdict (nothing without expectations). */
function resultLines(expectations: readonly ExpectationResult[]): string[] {
  if (expectations.length === 0) return [];
  const failed = expectations.filter((e) => !e.ok);
  return [
    '',
    failed.length === 0
      ? `Result: all ${expectations.length} expectations held.`
      : `Result: ${failed.length} of ${expectations.length} expectations did not hold: ${failed.map((e) => `${e.description} (${e.detail})`).join('; ')}.`,
  ];
}

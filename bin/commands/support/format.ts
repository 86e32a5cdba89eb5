/**
 * What `ecsr` prints: status tables (cli-table3), action lines, JSON and YAML for machines.
 * Colours (picocolors) only on a terminal and never with `NO_COLOR`.
 */
import pc from 'picocolors';
import { stringify } from 'yaml';
import type { PassAction } from '../../../lambda/core/pass';
import { formatSpecError } from '../../../lambda/core/spec';
import { serviceId, type Phase, type PruneHold, type ServiceStatus } from '../../../lambda/core/types';
import { describeChange } from '../../../lambda/core/status';
import { fitTable, needsReason, phaseColor, plainTable, reasonBlock, reasonWord, shorten, statusReason, terminalWidth, textWidth } from '../../../local/view';
import type { TableEntry } from './spec-table';
import { statusDeploymentLine } from './deployment-progress';

export { plainTable, shorten, statusReason, terminalWidth };

/** Output formats of `-o`. */
export const OUTPUT_FORMATS = ['table', 'json', 'yaml'] as const;
/** Output formats of `ecsr get -o`: `wide` is the table with every column, none cut. */
export const GET_FORMATS = ['table', 'wide', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Colour functions, or identity functions when `stream` is not a terminal or NO_COLOR is set. */
export function colorsFor(stream: NodeJS.WriteStream = process.stdout): ReturnType<typeof pc.createColors> {
  const enabled = Boolean(stream.isTTY) && !('NO_COLOR' in process.env) && process.env.TERM !== 'dumb';
  return pc.createColors(enabled);
}

/** Colour of a phase: green when converged, red when it needs a person, yellow while moving. */
export function colorPhase(phase: Phase | string, c = colorsFor()): string {
  return phaseColor(phase, c);
}

/**
 * One line per prune hold: the cluster, since when, what the pass found, and how to release it
 * (`release` when a pass said it, with the count still missing; else the general rule).
 */
export function pruneHoldLines(holds: readonly (PruneHold & { readonly release?: string })[]): string[] {
  return holds.map((h) => {
    const release =
      h.release ??
      `prunes in cluster ${h.cluster} stay held until every owned service there has a spec again: restore the missing spec items, or run \`ecsr prune --confirm ${h.cluster}\` if the deletion is intended`;
    return `Prune held in cluster ${h.cluster} since ${h.since}: a pass found ${h.reason}, the signature of a wiped or half-restored spec table; ${release}.`;
  });
}

/** `UpdateService: desiredCount 6 -> 2` (the status's last action), with its error if it failed. */
export function lastActionText(status: ServiceStatus | undefined): string {
  const a = status?.lastAction;
  if (!a) return '';
  return a.error ? `${a.summary} (failed: ${a.error})` : a.summary;
}

/** One row of `ecsr get`. */
export interface StatusRow {
  readonly id: string;
  readonly phase: string;
  readonly desired: string;
  readonly running: string;
  readonly pending: string;
  /**
   * `yes` when the status reflects the current spec and ECS took it; `no` while a pass has not
   * seen it yet, or ECS refused a call for it (`ActionRejected`).
   */
  readonly synced: string;
  readonly reason: string;
  readonly lastAction: string;
  readonly observedAt: string;
}

/** Whether ECS refused a call for the status's spec (condition `ActionRejected`): then ECS does not run that spec. */
function refused(s: ServiceStatus): boolean {
  return Array.isArray(s.conditions) && s.conditions.some((c) => c.type === 'ActionRejected' && c.status === 'True');
}

/** The row of one table entry. */
export function statusRow(entry: TableEntry): StatusRow {
  const id = entry.key ? serviceId(entry.key) : '(no key)';
  const s = entry.status;
  const invalid = !entry.result.ok;
  let reason = '';
  if (!entry.result.ok) reason = entry.result.errors.map(formatSpecError).join('; ');
  else if (s) reason = statusDeploymentLine(s) ?? statusReason(s);
  else reason = 'no pass has seen this spec yet';
  return {
    id,
    phase: invalid ? 'Invalid' : (s?.phase ?? 'Pending'),
    desired: s ? String(s.desiredCount) : '-',
    running: s ? String(s.runningCount) : '-',
    pending: s ? String(s.pendingCount) : '-',
    synced: syncedText(entry, s),
    reason,
    lastAction: lastActionText(s),
    observedAt: s?.observedAt ? s.observedAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '-',
  };
}

/**
 * SYNCED: `yes` when the status reflects the item's current spec and no refusal stands, `no`
 * otherwise, `invalid` for an invalid item; in observe-only mode, `yes (observe)` when the live
 * service matches its spec and `no (observe)` when the status lists differences left as they are.
 */
function syncedText(entry: TableEntry, s: ServiceStatus | undefined): string {
  if (!entry.result.ok) return 'invalid';
  const synced = s?.specHash !== undefined && s.specHash === entry.result.hash && !refused(s);
  if (s?.observeOnly === true) return `${synced && (s.observedDrift ?? []).length === 0 ? 'yes' : 'no'} (observe)`;
  return synced ? 'yes' : 'no';
}

/**
 * The status table of `ecsr get` (cli-table3). Narrow (the default) fits `width` columns: TASKS is
 * running/desired (`+N` pending), REASON the condition reason alone, never cut, and long service
 * names are cut with `…`; `wide` adds
 * the whole reason, the last action and the observation time, cut nowhere (as `kubectl -o wide`).
 * Print {@link statusReasonLines} under it.
 */
export function renderStatusTable(entries: readonly TableEntry[], opts: { wide?: boolean; width?: number; targets?: boolean } = {}, c = colorsFor()): string {
  const rows = entries.map(statusRow);
  // `targets`: a TARGET column first (the entries of several targets, `ecsr get --all-targets`).
  const lead = (i: number) => (opts.targets ? [entries[i].target ?? 'default'] : []);
  const leadHead = opts.targets ? ['TARGET'] : [];
  if (opts.wide) return renderWideTable(rows.map((r, i) => [...lead(i), r.id, colorPhase(r.phase, c), r.desired, r.running, r.pending, r.synced, r.reason, r.lastAction, r.observedAt]), leadHead, opts.width ?? terminalWidth());
  const tasks = (r: StatusRow) => (r.desired === '-' ? '-' : `${r.running}/${r.desired}${r.pending !== '0' ? ` +${r.pending}` : ''}`);
  const cells = rows.map((r, i) => [...lead(i), r.id, colorPhase(r.phase, c), tasks(r), r.synced, r.phase === 'Invalid' ? 'SpecInvalid' : reasonWord(r.reason)]);
  return fitTable([...leadHead, 'SERVICE', 'PHASE', 'TASKS', 'SYNCED', 'REASON'], cells, { width: opts.width ?? terminalWidth(), shrink: [opts.targets ? 1 : 0] });
}

/** The columns of `-o wide` after TARGET, and the narrowest a wrapped one may become. */
const WIDE_HEAD = ['SERVICE', 'PHASE', 'DESIRED', 'RUNNING', 'PENDING', 'SYNCED', 'REASON', 'LAST ACTION', 'OBSERVED'];
const WRAPPED_FLOOR = 16;

/**
 * The `-o wide` table in `width` columns, ids never cut. The first layout that fits wins:
 * 1. every column, REASON, LAST ACTION and OBSERVED wrapped inside their cells (the widest
 *    narrowed first, down to 16 columns each), nothing cut;
 * 2. REASON and LAST ACTION under the table, whole (`shop/web: last action: ...`; the reason of a
 *    service not converged is already there);
 * 3. OBSERVED under the table too;
 * 4. DESIRED, RUNNING and PENDING as one TASKS column (`running/desired +pending`).
 * Only an id close to the terminal's width can make the last layout wider than `width`.
 */
function renderWideTable(cells: readonly string[][], leadHead: readonly string[], width: number): string {
  const head = [...leadHead, ...WIDE_HEAD];
  const at = (name: string) => head.indexOf(name);
  const [desired, running, pending, reason, action, observed] = ['DESIRED', 'RUNNING', 'PENDING', 'REASON', 'LAST ACTION', 'OBSERVED'].map(at);
  const natural = (i: number) => Math.max(textWidth(head[i]), ...cells.map((r) => textWidth(r[i]))) + 2;
  const tableWidth = (columns: readonly number[], floors = new Map<number, number>()) => columns.reduce((sum, i) => sum + (floors.get(i) ?? natural(i)), 0) + columns.length + 1;
  const all = head.map((_, i) => i);
  const wrapped = [reason, action, observed];
  const floors = new Map(wrapped.map((i) => [i, Math.min(natural(i), WRAPPED_FLOOR)]));
  if (tableWidth(all, floors) <= width) return fitTable(head, cells, { width, shrinkEvenly: wrapped.map((i) => [i, floors.get(i) ?? 0] as const), wrap: wrapped });

  const withoutReason = all.filter((i) => i !== reason && i !== action);
  const withoutObserved = withoutReason.filter((i) => i !== observed);
  const layout = tableWidth(withoutReason) <= width ? 'observed' : tableWidth(withoutObserved) <= width ? 'counts' : 'tasks';
  const tasks = (r: readonly string[]) => (r[desired] === '-' ? '-' : `${r[running]}/${r[desired]}${r[pending] !== '0' ? ` +${r[pending]}` : ''}`);
  const columns = layout === 'observed' ? withoutReason : withoutObserved;
  const shown = layout === 'tasks' ? columns.filter((i) => i !== running && i !== pending) : columns;
  const title = (i: number) => (layout === 'tasks' && i === desired ? 'TASKS' : head[i]);
  const cell = (r: readonly string[], i: number) => (layout === 'tasks' && i === desired ? tasks(r) : r[i]);
  const table = fitTable(shown.map(title), cells.map((r) => shown.map((i) => cell(r, i))), { width });

  const id = at('SERVICE');
  const moved = cells.flatMap((r) => {
    const name = leadHead.length > 0 && r[0] !== 'default' ? `${r[0]}/${r[id]}` : r[id];
    return [
      ...(r[action] !== '-' && r[action] !== '' ? [reasonBlock(name, `last action: ${r[action]}`, width)] : []),
      ...(layout !== 'observed' && r[observed] !== '-' ? [reasonBlock(name, `observed: ${r[observed]}`, width)] : []),
    ];
  });
  return moved.length > 0 ? `${table}\n\n${moved.join('\n')}` : table;
}

/**
 * What `ecsr get` prints under its table: for each service not converged, its whole reason on
 * its own lines wrapped to `width` (`shop/ledger: RolloutFailed: CannotPullContainerError: ...`);
 * for an invalid item, each attribute and its problem (`shop/broken: invalid: cpu: must be ...`);
 * for a spec with `ignore`, the fields it leaves to another controller.
 */
export function statusReasonLines(entries: readonly TableEntry[], width: number = terminalWidth()): string[] {
  const out: string[] = [];
  for (const e of entries) {
    const r = statusRow(e);
    const id = e.target && e.target !== 'default' ? `${e.target}/${r.id}` : r.id;
    if (!e.result.ok) for (const err of e.result.errors) out.push(reasonBlock(id, `invalid: ${formatSpecError(err)}`, width));
    else if (needsReason(r.phase) && r.reason !== '') out.push(reasonBlock(id, r.reason, width));
    const ignored = e.result.ok ? e.result.spec.ignore : undefined;
    if (ignored !== undefined && ignored.length > 0) out.push(reasonBlock(id, `left to another controller (ignore): ${ignored.join(', ')}`, width));
  }
  return out;
}

/**
 * `text` cut to a terminal of `rows` rows, so that a frame redrawn in place (`get --watch`) keeps
 * its first lines (the header, the table) on screen: a frame taller than the terminal scrolls its
 * header away and cannot be erased on the next redraw. The last row says how many lines were left
 * out. Unchanged when it fits or `rows` is unknown (0, undefined).
 */
export function fitRows(text: string, rows: number | undefined): string {
  const lines = text.replace(/\n$/, '').split('\n');
  // One row stays free for the cursor, so that the frame never scrolls the terminal.
  if (!rows || rows < 3 || lines.length <= rows - 1) return text;
  const keep = rows - 2;
  const left = lines.length - keep;
  return `${lines.slice(0, keep).join('\n')}\n… ${left} more line${left === 1 ? '' : 's'}: a taller terminal shows them (ecsr get prints everything)\n`;
}

/** `UpdateService (drift) shop/worker: desiredCount 6 -> 2`, and the outcome when not applied. */
export function formatAction(a: PassAction): string {
  const kind = a.kind ? ` (${a.kind})` : '';
  const what = a.changes && a.changes.length > 0 ? a.changes.map(describeChange).join(', ') : a.reason;
  const outcome =
    a.outcome === 'failed'
      ? ` [FAILED ${a.errorClass ?? ''}: ${a.message ?? ''}]`
      : a.outcome === 'skipped'
        ? ` [skipped: ${a.message ?? ''}]`
        : '';
  return `${a.type}${kind} ${a.cluster}/${a.service}: ${what}${outcome}`;
}

/** Pretty JSON with a final newline. */
export function toJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** YAML (block style) with a final newline. */
export function toYaml(value: unknown): string {
  return stringify(value, { lineWidth: 0 });
}

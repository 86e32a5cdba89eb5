/**
 * What `ecsr local` shows while it runs: on a terminal, a live table redrawn in place (cli-table3
 * for the table, log-update to redraw) with the latest events under it; elsewhere (a pipe, a CI
 * log), plain timestamped lines, one per event.
 */
import { stripVTControlCharacters } from 'node:util';
import Table from 'cli-table3';
import { createLogUpdate } from 'log-update';
import pc from 'picocolors';
import wrapAnsi from 'wrap-ansi';
import type { ServiceStatus } from '../lambda/core/types';

/** One row of the live table. */
export interface ServiceRow {
  readonly id: string;
  readonly desired: number | undefined;
  readonly running: number | undefined;
  readonly pending: number | undefined;
  readonly phase: string;
  readonly reason: string;
  readonly lastAction: string;
  /** State of the service's contributor to the per-service lag alarm. */
  readonly alarm: string;
}

/** Everything a frame shows. */
export interface ViewModel {
  /** Simulated time now. */
  readonly now: Date;
  readonly startedAt: Date;
  /** Passes run so far, which is also the number of the latest one (passes are numbered from 1, in the header and the log lines alike). */
  readonly passes: number;
  /** Passes the run will make; undefined with --forever. */
  readonly totalPasses: number | undefined;
  /** Simulated seconds per real second. */
  readonly speed: number;
  readonly rows: readonly ServiceRow[];
  /** Alarms in ALARM other than per-service contributors, as `alarmLabel` names them. */
  readonly alarmsInAlarm: readonly string[];
}

type Colors = ReturnType<typeof pc.createColors>;

/**
 * The explanation of a status in two parts: `reason`, a condition reason (one word, e.g.
 * `RolloutFailed`, `TasksLagging`), and `detail`, what it is about: the Blocked condition's
 * message; the `ActionRejected` condition's (ECS's refusal, e.g. `AccessDenied`); for a reason about ECS's state (lagging, settling, rolling out, rollout failed) the
 * latest stop reason or service event; the drifted fields; else the condition's own message (a
 * `SpecApplied` never carries ECS's "has started 3 tasks"). Undefined when ready.
 */
export function statusExplanation(status: ServiceStatus): { reason: string; detail: string } | undefined {
  const blocked = status.conditions.find((c) => c.type === 'Blocked' && c.status === 'True');
  if (blocked) return { reason: blocked.reason, detail: blocked.message };
  // A refused call explains the status, whatever the other conditions say: nothing moves until it passes.
  const rejected = status.conditions.find((c) => c.type === 'ActionRejected' && c.status === 'True');
  if (rejected) return { reason: rejected.reason, detail: rejected.message };
  const ready = status.conditions.find((c) => c.type === 'Ready');
  if (!ready || ready.status === 'True') return undefined;
  const progressing = status.conditions.find((c) => c.type === 'Progressing');
  const reason = progressing && progressing.status === 'True' ? progressing.reason : ready.reason;
  if (reason === 'DriftCorrected' && status.drift && status.drift.length > 0) return { reason, detail: status.drift.join(', ') };
  // ECS's latest stop reason or event explains only reasons about what ECS is doing; a reason
  // about what this pass did (SpecApplied, Creating...) keeps its own message.
  const message = (progressing && progressing.status === 'True' ? progressing.message : ready.message) ?? '';
  return { reason, detail: ECS_STATE_REASONS.has(reason) ? (status.reason ?? message) : message };
}

/** Condition reasons about ECS's state, which the status's latest stop reason or event explains. */
const ECS_STATE_REASONS: ReadonlySet<string> = new Set(['TasksLagging', 'LagBeyondGrace', 'RolloutFailed', 'RolloutInProgress', 'TasksSettling']);

/**
 * The one-line explanation of a status: `REASON: detail` ({@link statusExplanation}); empty when
 * ready. Shared by the live table and `ecsr get`.
 */
export function statusReason(status: ServiceStatus): string {
  const e = statusExplanation(status);
  if (!e) return '';
  return e.detail ? `${e.reason}: ${e.detail}` : e.reason;
}

/** The condition reason of a `REASON: detail` text (its first word): what a narrow table shows. */
export function reasonWord(text: string): string {
  const i = text.indexOf(': ');
  return i < 0 ? text : text.slice(0, i);
}

/**
 * The width to lay text out in, in columns: `COLUMNS` when set to a number (what a user or a
 * test asks for), else the terminal's width when `stream` is one, else 120.
 */
export function terminalWidth(stream: NodeJS.WriteStream = process.stdout, env: NodeJS.ProcessEnv = process.env): number {
  const fromEnv = Number(env.COLUMNS);
  if (Number.isInteger(fromEnv) && fromEnv > 0) return Math.max(40, fromEnv);
  if (stream.isTTY && stream.columns > 0) return Math.max(40, stream.columns);
  return 120;
}

/** Columns a text takes on a terminal (ANSI colours take none). */
export function textWidth(text: string): number {
  return stripVTControlCharacters(text).length;
}

/**
 * Takes up to `excess` columns of room from the `columns` (`[index, floor]`) of `widths`, in
 * place: the widest gives a column at a time until it is as narrow as the next, then both, and so
 * on, none below its floor. Returns the excess left (0 when it all fitted).
 */
function shrinkWidestFirst(widths: number[], columns: readonly (readonly [number, number])[], excess: number): number {
  let left = excess;
  while (left > 0) {
    const open = columns.filter(([i, floor]) => widths[i] > floor);
    if (open.length === 0) break;
    const widest = Math.max(...open.map(([i]) => widths[i]));
    for (const [i] of open) {
      if (widths[i] === widest && left > 0) {
        widths[i] -= 1;
        left -= 1;
      }
    }
  }
  return left;
}

/**
 * A cli-table3 table of `head` and `rows` that fits in `width` columns: each column is as wide as
 * its widest line, and when that is too wide, the columns of `shrink` (in that order) give up
 * room down to their header's width, or to the floor given as `[column, floor]` (a column may be
 * named again with a lower floor); cli-table3 cuts their cells with `…`, or wraps them at word
 * boundaries when the column is in `wrap`. The columns of `shrinkEvenly` (`[column, floor]`) give
 * up room together, the widest first, so a short column stays whole while a long one wraps.
 * Columns not named are never cut (a reason word, a count).
 */
export function fitTable(
  head: string[],
  rows: readonly (readonly string[])[],
  opts: {
    width: number;
    shrink?: readonly (number | readonly [number, number])[];
    shrinkEvenly?: readonly (readonly [number, number])[];
    wrap?: readonly number[];
  },
): string {
  const natural = head.map((h, i) => Math.max(textWidth(h), ...rows.map((r) => Math.max(...String(r[i] ?? '').split('\n').map(textWidth)))) + 2);
  const widths = [...natural];
  let excess = widths.reduce((a, b) => a + b, 0) + head.length + 1 - opts.width;
  for (const step of opts.shrink ?? []) {
    if (excess <= 0) break;
    const [i, asked] = typeof step === 'number' ? [step, 0] : step;
    const floor = Math.max(asked, textWidth(head[i]) + 2, 6);
    const give = Math.min(excess, Math.max(0, widths[i] - floor));
    widths[i] -= give;
    excess -= give;
  }
  if (excess > 0 && opts.shrinkEvenly) excess = shrinkWidestFirst(widths, opts.shrinkEvenly.map(([i, floor]) => [i, Math.max(floor, 6)] as const), excess);
  const wrapped = new Set(opts.wrap ?? []);
  const table = new Table({ head, colWidths: widths, style: { head: [], border: [], compact: true } });
  // Columns that are cut stay on one line; wrapped columns wrap at word boundaries, and a word
  // longer than the column (an image reference, an ARN) is broken rather than cut.
  const wrap = (cell: string, i: number) =>
    cell
      .split('\n')
      .map((line) => wrapAnsi(line.replace(/\s+/g, ' ').trim(), Math.max(1, widths[i] - 2), { hard: true, trim: true }))
      .join('\n');
  for (const r of rows) table.push(r.map((cell, i) => (wrapped.has(i) ? wrap(String(cell), i) : String(cell).replace(/\s+/g, ' '))));
  return table.toString();
}

/**
 * `id: text` wrapped to `width` columns, the lines after the first indented by two spaces: a
 * service's whole reason under a table, never cut.
 */
export function reasonBlock(id: string, text: string, width: number): string {
  return wrapAnsi(`${id}: ${text.replace(/\s+/g, ' ').trim()}`, width - 2, { hard: true, trim: true })
    .split('\n')
    .map((l, i) => (i === 0 ? l : `  ${l}`))
    .join('\n');
}

/** `09:04:30 +4m30s`: simulated wall time and time since the start. */
export function timestamp(now: Date, startedAt: Date): string {
  const s = Math.max(0, Math.round((now.getTime() - startedAt.getTime()) / 1000));
  const m = Math.floor(s / 60);
  const rest = s % 60;
  return `${now.toISOString().slice(11, 19)} +${m}m${String(rest).padStart(2, '0')}s`;
}

/** `text` on one line, cut to `max` characters with an ellipsis. Shared by the live table and `ecsr`. */
export function shorten(text: string, max: number): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length <= max ? one : `${one.slice(0, Math.max(0, max - 1))}…`;
}

/** A cli-table3 table without ANSI styling of its own (colours are added per cell). */
export function plainTable(head: string[]): Table.Table {
  return new Table({ head, style: { head: [], border: [], compact: true } });
}

/** Colour of a phase: green when converged, red when it needs a person, yellow while moving. */
export function phaseColor(phase: string, c: Colors): string {
  if (phase === 'Converged' || phase === 'Deleted') return c.green(phase);
  if (phase === 'Degraded' || phase === 'Invalid' || phase === 'Blocked') return c.red(phase);
  return c.yellow(phase);
}

/** `2/3` running of desired, `+1` when tasks are pending: the TASKS cell of the live table. */
function tasksCell(r: ServiceRow): string {
  const num = (n: number | undefined) => (n === undefined ? '-' : String(n));
  return `${num(r.running)}/${num(r.desired)}${r.pending ? ` +${r.pending}` : ''}`;
}

/**
 * The table of services (cli-table3), fitted to `width` columns: TASKS is running/desired (+pending),
 * REASON the condition reason alone (never cut); the last action, then the service name, are cut
 * when the terminal is narrow. {@link reasonLines} gives the whole reasons to print under it.
 */
export function renderServiceTable(rows: readonly ServiceRow[], c: Colors = pc.createColors(false), width = 120): string {
  const cells = rows.map((r) => {
    const alarm = r.alarm === 'ALARM' ? c.red(r.alarm) : r.alarm === 'OK' ? c.green(r.alarm) : c.dim(r.alarm);
    return [r.id, tasksCell(r), phaseColor(r.phase, c), reasonWord(r.reason), r.lastAction, alarm];
  });
  return fitTable(['SERVICE', 'TASKS', 'PHASE', 'REASON', 'LAST ACTION', 'ALARM'], cells, { width, shrink: [4, 0] });
}

/** Whether a phase needs its reason said in full under a table. */
export function needsReason(phase: string): boolean {
  return phase !== 'Converged' && phase !== 'Deleted';
}

/** Under a table: each service's whole reason (`id: REASON: detail`), wrapped to `width`, for those not converged. */
export function reasonLines(rows: readonly { id: string; phase: string; reason: string }[], width: number): string[] {
  return rows.filter((r) => needsReason(r.phase) && r.reason !== '').map((r) => reasonBlock(r.id, r.reason, width));
}

/** A whole frame: header, table, the reasons of services not converged, alarms, the latest events. */
export function renderFrame(model: ViewModel, events: readonly string[], c: Colors = pc.createColors(false), width = 120): string {
  const progress = model.totalPasses === undefined ? `pass ${model.passes}` : `pass ${model.passes}/${model.totalPasses}`;
  const header = `${c.bold('ecsr local')}  simulated ${timestamp(model.now, model.startedAt)}  ${progress}  speed ${model.speed}x`;
  const alarms = model.alarmsInAlarm.length > 0 ? c.red(`alarms in ALARM: ${model.alarmsInAlarm.join(', ')}`) : c.green('no alarm in ALARM');
  return [header, renderServiceTable(model.rows, c, width), ...reasonLines(model.rows, width), alarms, '', ...events.map((e) => shorten(e, width))].join('\n');
}

/** Where the run shows itself. */
export interface RunView {
  /** A new frame (the live view redraws; the plain view ignores frames). */
  frame(model: ViewModel): void;
  /** One event line, e.g. an action, a step, an alarm transition, stamped with `at`. */
  event(at: Date, startedAt: Date, text: string): void;
  /** Leaves the last frame on screen. */
  close(): void;
}

/** Plain timestamped lines (not a terminal). */
export class PlainView implements RunView {
  constructor(private readonly write: (text: string) => void = (t) => process.stdout.write(t)) {}
  frame(): void {}
  event(at: Date, startedAt: Date, text: string): void {
    this.write(`[${timestamp(at, startedAt)}] ${text}\n`);
  }
  close(): void {}
}

/** The live table, redrawn at most every `minIntervalMs` real milliseconds. */
export class LiveView implements RunView {
  private readonly log;
  private readonly events: string[] = [];
  private last: ViewModel | undefined;
  private drawnAt = 0;
  private closed = false;
  private readonly colors: Colors;

  constructor(
    private readonly stream: NodeJS.WriteStream = process.stdout,
    private readonly maxEvents = 8,
    private readonly minIntervalMs = 100,
  ) {
    this.log = createLogUpdate(stream);
    this.colors = pc.createColors(!('NO_COLOR' in process.env));
  }

  frame(model: ViewModel): void {
    this.last = model;
    const now = Date.now();
    if (now - this.drawnAt < this.minIntervalMs) return;
    this.draw();
  }

  event(at: Date, startedAt: Date, text: string): void {
    this.events.push(`${this.colors.dim(`[${timestamp(at, startedAt)}]`)} ${text}`);
    if (this.events.length > this.maxEvents) this.events.splice(0, this.events.length - this.maxEvents);
    if (this.last) this.draw();
  }

  private draw(): void {
    if (!this.last || this.closed) return;
    this.drawnAt = Date.now();
    const width = terminalWidth(this.stream);
    // Keep the header on screen: show only as many events as the terminal has rows for.
    const fixed = renderFrame(this.last, [], this.colors, width).split('\n').length;
    const room = Math.max(1, (this.stream.rows || 40) - fixed - 1);
    this.log(renderFrame(this.last, this.events.slice(-room), this.colors, width));
  }

  close(): void {
    if (this.closed) return;
    this.draw();
    this.closed = true;
    this.log.done();
  }
}

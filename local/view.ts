/**
 * What `ecsr local` shows while it runs: on a terminal, a live table redrawn in place (cli-table3
 * for the table, log-update to redraw) with the latest events under it; elsewhere (a pipe, a CI
 * log), plain timestamped lines, one per event.
 */
import Table from 'cli-table3';
import { createLogUpdate } from 'log-update';
import pc from 'picocolors';
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
 * The one-line explanation of a status: the Blocked condition (reason and message), else the
 * Ready condition's reason when not ready, with the status's best reason (latest stop reason or
 * service event); empty when ready. Shared by the live table and `ecsr get`.
 */
export function statusReason(status: ServiceStatus): string {
  const blocked = status.conditions.find((c) => c.type === 'Blocked' && c.status === 'True');
  if (blocked) return `${blocked.reason}: ${blocked.message}`;
  const ready = status.conditions.find((c) => c.type === 'Ready');
  if (!ready || ready.status === 'True') return '';
  const progressing = status.conditions.find((c) => c.type === 'Progressing');
  const reason = progressing && progressing.status === 'True' ? progressing.reason : ready.reason;
  if (reason === 'DriftCorrected' && status.drift && status.drift.length > 0) return `${reason}: ${status.drift.join(', ')}`;
  const why = status.reason ?? ready.message;
  return why ? `${reason}: ${why}` : reason;
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

/** The table of services (cli-table3). */
export function renderServiceTable(rows: readonly ServiceRow[], c: Colors = pc.createColors(false), width = 120): string {
  // Borders, padding and the fixed columns take at most the longest id + 62 characters; reason and
  // last action share the rest.
  const idWidth = Math.max(7, ...rows.map((r) => r.id.length));
  const rest = Math.max(20, width - idWidth - 62);
  const reasonWidth = Math.floor(rest * 0.6);
  const actionWidth = rest - reasonWidth;
  const table = plainTable(['SERVICE', 'DESIRED', 'RUNNING', 'PENDING', 'PHASE', 'REASON', 'LAST ACTION', 'ALARM']);
  for (const r of rows) {
    const num = (n: number | undefined) => (n === undefined ? '-' : String(n));
    const alarm = r.alarm === 'ALARM' ? c.red(r.alarm) : r.alarm === 'OK' ? c.green(r.alarm) : c.dim(r.alarm);
    table.push([r.id, num(r.desired), num(r.running), num(r.pending), phaseColor(r.phase, c), shorten(r.reason, reasonWidth), shorten(r.lastAction, actionWidth), alarm]);
  }
  return table.toString();
}

/** A whole frame: header, table, alarms, the latest events. */
export function renderFrame(model: ViewModel, events: readonly string[], c: Colors = pc.createColors(false), width = 120): string {
  const progress = model.totalPasses === undefined ? `pass ${model.passes}` : `pass ${model.passes}/${model.totalPasses}`;
  const header = `${c.bold('ecsr local')}  simulated ${timestamp(model.now, model.startedAt)}  ${progress}  speed ${model.speed}x`;
  const alarms = model.alarmsInAlarm.length > 0 ? c.red(`alarms in ALARM: ${model.alarmsInAlarm.join(', ')}`) : c.green('no alarm in ALARM');
  return [header, renderServiceTable(model.rows, c, width), alarms, '', ...events.map((e) => shorten(e, width))].join('\n');
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
    const width = this.stream.columns || 120;
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

/**
 * The local run's heartbeat: after each pass, `ecsr local` writes one reserved item to its specs
 * table saying when the pass ran, on the simulated clock and on this computer's, and at what
 * speed. `ecsr get` prints it above the table, so that a person watching `--forever` sees the
 * reconciler is alive even when no status changes, and how far the simulated clock runs ahead.
 *
 * The item's partition key starts with `#`, which no ECS cluster name can, so the reconciler, the
 * fast path and every `ecsr` command skip it as reserved (never a spec). The Lambda writes no such
 * item (the table keeps no record of its passes; the `PassHeartbeat` alarm watches them).
 */

/** Key of the heartbeat item. */
export const LOCAL_RUN_KEY = Object.freeze({ cluster: '#local-run', service: '#heartbeat' });

/** What the heartbeat item holds. */
export interface LocalRunHeartbeat {
  /** Number of the pass, from 1. */
  readonly pass: number;
  /** When the pass ran on the simulated clock (ISO 8601). */
  readonly passAt: string;
  /** When the pass ran on this computer's clock (ISO 8601). */
  readonly realAt: string;
  /** Simulated seconds per real second (`--speed`). */
  readonly speed: number;
  /** The pass's outcome (`completed`, ...), or `threw`. */
  readonly outcome: string;
  readonly actionsApplied: number;
  readonly actionsFailed: number;
}

/** The item to put for `heartbeat` (plain attributes, for the document client). */
export function heartbeatItem(heartbeat: LocalRunHeartbeat): Record<string, unknown> {
  return { ...LOCAL_RUN_KEY, ...heartbeat };
}

/** True for the heartbeat item. */
export function isHeartbeatItem(item: Record<string, unknown>): boolean {
  return item.cluster === LOCAL_RUN_KEY.cluster && item.service === LOCAL_RUN_KEY.service;
}

/** The heartbeat an item holds, or undefined when it is not one (a hand-made or damaged item). */
export function readHeartbeat(item: Record<string, unknown>): LocalRunHeartbeat | undefined {
  if (!isHeartbeatItem(item)) return undefined;
  const { pass, passAt, realAt, speed, outcome, actionsApplied, actionsFailed } = item;
  const isTime = (v: unknown) => typeof v === 'string' && !Number.isNaN(Date.parse(v));
  const isCount = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0;
  if (!isCount(pass) || !isTime(passAt) || !isTime(realAt) || typeof speed !== 'number' || !(speed > 0) || typeof outcome !== 'string') return undefined;
  if (!isCount(actionsApplied) || !isCount(actionsFailed)) return undefined;
  return { pass: pass as number, passAt: passAt as string, realAt: realAt as string, speed, outcome, actionsApplied: actionsApplied as number, actionsFailed: actionsFailed as number };
}

/** `2026-12-02 07:43:30Z`. */
function shortTime(iso: string): string {
  return new Date(iso).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

/** `4 s`, `3m10s`, `2h05m`. */
function age(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/**
 * One line for people, e.g. `Last pass: 42 at 2026-12-02 07:43:30Z simulated, 3 s ago (the
 * local run's clock runs 13x real time, 1h02m ahead of this computer's); 0 applied, 0 failed.`
 * @param nowMs this computer's clock (epoch milliseconds).
 */
export function heartbeatLine(h: LocalRunHeartbeat, nowMs: number): string {
  const ago = (nowMs - Date.parse(h.realAt)) / 1000;
  const ahead = (Date.parse(h.passAt) - Date.parse(h.realAt)) / 1000;
  const clock =
    h.speed === 1
      ? "the local run's clock runs at real time"
      : `the local run's clock runs ${h.speed}x real time${ahead >= 1 ? `, ${age(ahead)} ahead of this computer's` : ahead <= -1 ? `, ${age(-ahead)} behind this computer's` : ''}`;
  // Three passes' worth of real time without a pass: the run has probably stopped.
  const end = ago > Math.max(30, (3 * 60) / h.speed) ? '; no pass since: is ecsr local still running?' : '.';
  const result = h.outcome === 'completed' ? `${h.actionsApplied} applied, ${h.actionsFailed} failed` : h.outcome;
  return `Last pass: ${h.pass} at ${shortTime(h.passAt)} simulated, ${age(ago)} ago (${clock}); ${result}${end}`;
}

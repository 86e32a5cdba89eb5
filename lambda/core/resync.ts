/**
 * The resync floor of events mode: how much of the fleet the rotation reads in
 * one pass so that every service is re-read within `RESYNC_MINUTES` even if every event is lost.
 *
 * State: the rotation's cursor in the specs table (`ObserveCursor`) carries `resyncAt`, the time up
 * to which the rotation has read its share. A pass owes the share of the fleet for the time since
 * then, `fleet * (now - resyncAt) / resync`, at least one pass's share; reading `k` services moves
 * `resyncAt` forward by `k / fleet * resync` (never past `now`). So the rotation is paced by the
 * wall clock, not by counting passes: a missed or timed-out pass leaves its share to the next one,
 * a new Lambda container reads the same cursor (nothing lives in the container), and a fleet that
 * grows or shrinks changes the share at once.
 */

/** Options of the resync floor. */
export interface ResyncOptions {
  /** Seconds within which every service is re-read whatever events say (`RESYNC_MINUTES` * 60). */
  readonly resyncSeconds: number;
  /** Seconds between scheduled passes (the construct's schedule; 60). */
  readonly passIntervalSeconds: number;
}

/** What a pass reads of the rotation and where `resyncAt` goes. */
export interface ResyncShare {
  /** Services with a spec the rotation reads at least (whole clusters: it may read more). */
  readonly budget: number;
  /** `resyncAt` the share was computed from (ms). */
  readonly fromMs: number;
}

/**
 * The rotation's share for a pass at `now` over `fleet` services with a spec.
 * @param resyncAt the cursor's `resyncAt` (ISO), if any; invalid or in the future counts as absent.
 */
export function resyncShare(fleet: number, resyncAt: string | undefined, now: Date, options: ResyncOptions): ResyncShare {
  const nowMs = now.getTime();
  const resyncMs = options.resyncSeconds * 1000;
  const passMs = Math.min(options.passIntervalSeconds * 1000, resyncMs);
  const parsed = resyncAt !== undefined ? Date.parse(resyncAt) : Number.NaN;
  const from = Number.isNaN(parsed) || parsed > nowMs ? nowMs - passMs : Math.max(parsed, nowMs - resyncMs);
  const owed = Math.max(nowMs - from, passMs) / resyncMs;
  return { budget: fleet === 0 ? 0 : Math.max(1, Math.ceil(fleet * Math.min(1, owed))), fromMs: from };
}

/**
 * `resyncAt` after a pass that read `read` services of the rotation out of `fleet` (ISO).
 * A whole cycle read (`cycleComplete`) or an empty fleet puts it at `now`.
 */
export function nextResyncAt(share: ResyncShare, read: number, fleet: number, cycleComplete: boolean, now: Date, options: ResyncOptions): string {
  const nowMs = now.getTime();
  if (cycleComplete || fleet === 0) return now.toISOString();
  const moved = share.fromMs + (read / fleet) * options.resyncSeconds * 1000;
  return new Date(Math.min(nowMs, Math.round(moved))).toISOString();
}

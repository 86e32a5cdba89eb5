/**
 * Refused actions: ECS (or IAM in front of it) answered a call with an error the same call meets
 * again (AccessDeniedException; InvalidParameterException or ClientException for a request ECS
 * will not take, such as "Fargate requires task definition to have execution role ARN to support
 * log driver awslogs"). The refusal becomes the service's status, in ECS's words, and the pass
 * retries the same call for the same spec with backoff instead of every pass
 * (docs/operations.md, "Refused actions"; docs/status.md, `ActionRejected`).
 *
 * The schedule: after the n-th refusal in a row of one call for one spec hash, the next try is
 * {@link rejectionDelaySeconds}(n) later (1, 2, 4, 8 minutes, then every 15). A spec with another
 * hash, or a pass a person starts with `retryRejected` (`ecsr reconcile`), tries at once: what
 * stands for "the permissions changed", since IAM tells no one. The 15-minute cap bounds how long
 * a permission fixed without either waits.
 *
 * Pure: time comes in as `now`.
 */
import { own } from './dict';
import { OWNER_TAG_KEY } from './ports';
import { ConditionType, Reason } from './status';
import { serviceId, type Action, type Condition, type Rejection, type ServiceId, type ServiceStatus } from './types';

/** First backoff delay, in seconds: one scheduled pass. */
export const REJECTION_FIRST_DELAY_SECONDS = 60;
/** Longest backoff delay, in seconds: a fixed permission is retried within this. */
export const REJECTION_MAX_DELAY_SECONDS = 900;
/**
 * Seconds a pass may start before `retryAfter` and still retry: a scheduled pass starts a few
 * seconds either side of its minute, and one that starts early must not wait one more delay.
 */
export const REJECTION_RETRY_SLACK_SECONDS = 10;

/**
 * Seconds between the `attempts`-th refusal in a row and the next try: 60 * 2^(attempts-1),
 * at most {@link REJECTION_MAX_DELAY_SECONDS}.
 * @param attempts refusals in a row (>= 1; smaller counts as 1).
 */
export function rejectionDelaySeconds(attempts: number): number {
  const n = Number.isFinite(attempts) ? Math.max(1, Math.floor(attempts)) : 1;
  return Math.min(REJECTION_MAX_DELAY_SECONDS, REJECTION_FIRST_DELAY_SECONDS * 2 ** Math.min(n - 1, 16));
}

/** The failed result of a refused action, as the pass gets it from the writer. */
export interface RefusedResult {
  readonly action: Action;
  /** `denied` (IAM) or `invalid` (the request). */
  readonly errorClass: 'denied' | 'invalid';
  /** ECS's message, or the adapter's own sentence when it gives `reason`. */
  readonly message: string;
  /** A more precise reason constant the adapter recognised (e.g. `CapacityProviderMissing`). */
  readonly reason?: string;
}

/**
 * The rejection to remember after `refused`: attempts counted on from `prev` when it was the same
 * call for the same spec hash, else a first refusal.
 * @param specHash hash of the spec the call was made for (the status's `specHash`).
 */
export function recordRejection(prev: Rejection | undefined, refused: RefusedResult, specHash: string | undefined, now: Date): Rejection {
  const same = validRejection(prev) && prev.action === refused.action.type && prev.specHash === specHash;
  const attempts = same ? prev.attempts + 1 : 1;
  const at = now.toISOString();
  return {
    action: refused.action.type,
    ...(specHash !== undefined ? { specHash } : {}),
    reason: refused.reason ?? (refused.errorClass === 'denied' ? Reason.AccessDenied : Reason.EcsRejected),
    message: `${refused.action.type}: ${refused.message}`,
    since: same ? prev.since : at,
    attempts,
    retryAfter: new Date(now.getTime() + rejectionDelaySeconds(attempts) * 1000).toISOString(),
  };
}

/** Whether a remembered value has the shape of a {@link Rejection} (statuses are read back from DynamoDB). */
export function validRejection(r: unknown): r is Rejection {
  if (typeof r !== 'object' || r === null) return false;
  const x = r as Record<string, unknown>;
  return (
    typeof x.action === 'string' &&
    typeof x.reason === 'string' &&
    typeof x.message === 'string' &&
    typeof x.since === 'string' &&
    typeof x.retryAfter === 'string' &&
    !Number.isNaN(Date.parse(x.retryAfter)) &&
    typeof x.attempts === 'number' &&
    Number.isFinite(x.attempts) &&
    (x.specHash === undefined || typeof x.specHash === 'string')
  );
}

/** The remembered rejection of `rem` when it is for `specHash`, else undefined. */
export function rejectionFor(rem: ServiceStatus | undefined, specHash: string | undefined): Rejection | undefined {
  const r = rem?.rejection;
  return validRejection(r) && r.specHash === specHash ? r : undefined;
}

/** Whether `r` still waits at `now` (its `retryAfter`, less {@link REJECTION_RETRY_SLACK_SECONDS}, is later). */
export function rejectionWaits(r: Rejection, now: Date): boolean {
  return now.getTime() + REJECTION_RETRY_SLACK_SECONDS * 1000 < Date.parse(r.retryAfter);
}

/**
 * `status` with `rejection` standing: phase `Degraded`; `Ready` and `Progressing` False with the
 * rejection's reason and message (nothing progresses towards the spec while its call is refused);
 * the condition `ActionRejected` True with the same; `reason` the refusal's message (what
 * `ecsr get`, `describe`, `--wait` and the lag alarm show). `lastTransitionTime` is kept from
 * `remembered` for a condition whose status did not change. Other conditions are kept.
 */
export function withRejection(status: ServiceStatus, rejection: Rejection, remembered: ServiceStatus | undefined, now: Date): ServiceStatus {
  const at = now.toISOString();
  const prevConditions = Array.isArray(remembered?.conditions) ? remembered.conditions : [];
  const cond = (type: string, s: Condition['status']): Condition => {
    const prev = prevConditions.find((c) => c.type === type);
    return {
      type,
      status: s,
      reason: rejection.reason,
      message: rejection.message,
      lastTransitionTime: prev && prev.status === s && typeof prev.lastTransitionTime === 'string' ? prev.lastTransitionTime : at,
    };
  };
  const others = status.conditions.filter(
    (c) => c.type !== ConditionType.Ready && c.type !== ConditionType.Progressing && c.type !== ConditionType.ActionRejected,
  );
  return {
    ...status,
    phase: 'Degraded',
    conditions: [cond(ConditionType.Ready, 'False'), cond(ConditionType.Progressing, 'False'), ...others, cond(ConditionType.ActionRejected, 'True')],
    reason: rejection.message,
    rejection,
  };
}

/** What {@link holdRejected} decided. */
export interface HeldActions {
  /** The actions to apply, in plan order. */
  readonly actions: Action[];
  /** Services with held actions, and the rejection that holds them. */
  readonly held: Map<ServiceId, Rejection>;
}

/**
 * Takes out of a plan the actions a remembered rejection still holds: for a service whose status
 * is for the spec hash of its remembered rejection (`statuses[id].specHash`), while that rejection
 * waits ({@link rejectionWaits}), every action of that service: they serve the same spec (a
 * registration whose update was refused would only be reused again). A refused tag update
 * (TagResource without the owner tag) holds only the TagResource actions: a service's tags must
 * not hold back its rollouts.
 * @param retryNow true: nothing is held (a person asked for the retry).
 */
export function holdRejected(
  actions: readonly Action[],
  statuses: Readonly<Record<ServiceId, ServiceStatus>>,
  remembered: Readonly<Record<ServiceId, ServiceStatus>>,
  now: Date,
  retryNow = false,
): HeldActions {
  const held = new Map<ServiceId, Rejection>();
  if (retryNow) return { actions: [...actions], held };
  const waiting = new Map<ServiceId, Rejection | undefined>();
  const waitingFor = (id: ServiceId): Rejection | undefined => {
    if (waiting.has(id)) return waiting.get(id);
    const r = rejectionFor(own(remembered, id), own(statuses, id)?.specHash);
    const w = r && rejectionWaits(r, now) ? r : undefined;
    waiting.set(id, w);
    return w;
  };
  // A refused TagResource is a tag update unless the service's plan adopts it (the owner tag).
  const adopting = new Set<ServiceId>();
  for (const a of actions) if (a.type === 'TagResource' && a.tags.some((t) => t.key === OWNER_TAG_KEY)) adopting.add(serviceId(a));
  const out: Action[] = [];
  for (const a of actions) {
    const id = serviceId(a);
    const r = waitingFor(id);
    const tagsOnly = r?.action === 'TagResource' && !adopting.has(id);
    if (r && (!tagsOnly || a.type === 'TagResource')) {
      held.set(id, r);
      continue;
    }
    out.push(a);
  }
  return { actions: out, held };
}

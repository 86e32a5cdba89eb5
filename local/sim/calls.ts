/**
 * What surrounds each ECS API call in the simulator: throttling (a token bucket per ECS category,
 * on the virtual clock), fault injection for tests, and the call log that tests inspect and count.
 */
import { z } from 'zod';
import { ACTION_CATEGORY, THROTTLE_BUCKETS, TokenBucket, type ThrottleCategory } from '../../lambda/core/ecs-limits';
import { EcsApiError } from './errors';
import { SeededRandom } from './random';
import { dict, own } from '../../lambda/core/dict';

// ---------------------------------------------------------------------------------------------
// Throttling
// ---------------------------------------------------------------------------------------------

/**
 * ECS's request throttling (docs/ecs-facts.md §2; Amazon ECS API reference "Request throttling"): one
 * bucket per category with the documented burst and refill, shared by every caller of the
 * simulator, refilled on the virtual clock.
 */
export class Throttle {
  private buckets = new Map<ThrottleCategory, TokenBucket>();
  enabled: boolean;

  constructor(enabled: boolean) {
    this.enabled = enabled;
  }

  /**
   * Takes one token for `action` at virtual time `nowMs`. Actions without a category are never
   * throttled.
   * @returns false when the bucket is empty (answer ThrottlingException).
   */
  take(action: string, nowMs: number): boolean {
    if (!this.enabled) return true;
    const category = own(ACTION_CATEGORY, action);
    if (!category) return true;
    let bucket = this.buckets.get(category);
    if (!bucket) {
      const spec = THROTTLE_BUCKETS[category];
      bucket = new TokenBucket(spec.burst, spec.refillPerSecond, nowMs);
      this.buckets.set(category, bucket);
    }
    return bucket.tryTake(nowMs);
  }

  /** Tokens left per category that has been used (fractional). */
  available(nowMs: number): Partial<Record<ThrottleCategory, number>> {
    const out: Partial<Record<ThrottleCategory, number>> = {};
    for (const [c, b] of this.buckets) out[c] = b.available(nowMs);
    return out;
  }

  reset(): void {
    this.buckets.clear();
  }
}

// ---------------------------------------------------------------------------------------------
// Fault injection
// ---------------------------------------------------------------------------------------------

export const faultSpecSchema = z
  .object({
    /** ECS action name, e.g. `UpdateService`; `*` for any action. */
    action: z.string().min(1),
    /**
     * Only calls that name this cluster (its name or ARN, in `cluster`, `clusters` or a service
     * `resourceArn`), as an IAM policy scoped to other clusters refuses them. Absent: any call.
     */
    cluster: z.string().min(1).optional(),
    /** Fail the Nth matching call from now (1 = the next one). */
    nth: z.number().int().positive().optional(),
    /** Fail each matching call with this probability (seeded). */
    fraction: z.number().min(0).max(1).optional(),
    /** At most this many failures (default 1 with `nth`, unlimited otherwise). */
    times: z.number().int().positive().optional(),
    /** Error `__type`, e.g. `ServerException`, `ThrottlingException`, `InvalidParameterException`. */
    errorType: z.string().min(1).default('ServerException'),
    message: z.string().default('Injected fault'),
    /** HTTP status; default 500 for ServerException, 400 otherwise. */
    status: z.number().int().min(400).max(599).optional(),
  })
  .refine((f) => f.nth === undefined || f.fraction === undefined, { message: 'give nth or fraction, not both' });

export type FaultSpec = z.input<typeof faultSpecSchema>;

interface ActiveFault {
  id: number;
  spec: z.output<typeof faultSpecSchema>;
  seen: number;
  fired: number;
}

/** Whether a request names `cluster`: by name or ARN in `cluster` / `clusters`, or in a service's `resourceArn`. */
function namesCluster(input: unknown, cluster: string): boolean {
  if (!input || typeof input !== 'object') return false;
  const rec = input as Record<string, unknown>;
  const is = (v: unknown) => typeof v === 'string' && (v === cluster || v.endsWith(`:cluster/${cluster}`));
  if (is(own(rec, 'cluster'))) return true;
  const clusters = own(rec, 'clusters');
  if (Array.isArray(clusters) && clusters.some(is)) return true;
  const arn = own(rec, 'resourceArn');
  return typeof arn === 'string' && (arn.includes(`:service/${cluster}/`) || arn.endsWith(`:cluster/${cluster}`));
}

export class FaultInjector {
  private faults: ActiveFault[] = [];
  private nextId = 1;
  private rng: SeededRandom;

  constructor(seed: number) {
    // A separate stream, so that sampled faults do not shift task timings.
    this.rng = new SeededRandom(seed ^ 0x5eed5eed);
  }

  /**
   * Adds a fault.
   * @returns its id (for {@link remove}).
   * @throws ZodError when the spec is invalid.
   */
  add(spec: FaultSpec): number {
    const parsed = faultSpecSchema.parse(spec);
    const f: ActiveFault = { id: this.nextId++, spec: parsed, seen: 0, fired: 0 };
    this.faults.push(f);
    return f.id;
  }

  remove(id: number): void {
    this.faults = this.faults.filter((f) => f.id !== id);
  }

  clear(): void {
    this.faults = [];
  }

  list(): { id: number; spec: FaultSpec; seen: number; fired: number }[] {
    return this.faults.map((f) => ({ id: f.id, spec: { ...f.spec }, seen: f.seen, fired: f.fired }));
  }

  /** The error to answer for this call (`input`: its request body), if a fault fires. */
  check(action: string, input?: unknown): EcsApiError | undefined {
    for (const f of this.faults) {
      if (f.spec.action !== '*' && f.spec.action !== action) continue;
      if (f.spec.cluster !== undefined && !namesCluster(input, f.spec.cluster)) continue;
      const limit = f.spec.times ?? (f.spec.nth !== undefined ? 1 : Infinity);
      if (f.fired >= limit) continue;
      f.seen++;
      let fire = false;
      if (f.spec.nth !== undefined) fire = f.seen >= f.spec.nth;
      else if (f.spec.fraction !== undefined) fire = this.rng.next() < f.spec.fraction;
      else fire = true;
      if (fire) {
        f.fired++;
        return new EcsApiError(f.spec.errorType, f.spec.message, f.spec.status);
      }
    }
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Call log
// ---------------------------------------------------------------------------------------------

/** One ECS API call as the simulator answered it. */
export interface CallRecord {
  /** 1-based order of arrival. */
  readonly seq: number;
  readonly action: string;
  /** Virtual time of the call. */
  readonly at: Date;
  /** `ok`, or the error `__type` answered (e.g. `ThrottlingException`). */
  readonly outcome: string;
  /** True when the error came from fault injection. */
  readonly injected?: boolean;
  /** The request's key fields (cluster, service, taskDefinition, desiredCount, ...). */
  readonly request: Record<string, unknown>;
  /** Who called (the identity's ARN), for calls that came with a caller (every HTTP call). */
  readonly caller?: string;
}

export interface CallFilter {
  action?: string;
  /** `ok`, an error type, or `error` for any error. */
  outcome?: string;
  /** Only calls at or after this virtual time. */
  since?: Date;
}

export interface CallCount {
  total: number;
  ok: number;
  throttled: number;
  errors: number;
}

const KEY_FIELDS = [
  'cluster',
  'clusters',
  'clusterName',
  'service',
  'serviceName',
  'services',
  'taskDefinition',
  'family',
  'familyPrefix',
  'desiredCount',
  'forceNewDeployment',
  'force',
  'task',
  'tasks',
  'desiredStatus',
  'clientToken',
  'resourceArn',
  'tagKeys',
  'maxResults',
  'nextToken',
  'include',
  'reason',
  'count',
] as const;

/** The key fields of a request, copied (for the call log). */
export function keyFields(input: unknown): Record<string, unknown> {
  if (!input || typeof input !== 'object') return {};
  const rec = input as Record<string, unknown>;
  return Object.fromEntries(KEY_FIELDS.filter((k) => own(rec, k) !== undefined).map((k) => [k, structuredClone(rec[k])]));
}

export class CallLog {
  private records: CallRecord[] = [];
  private seq = 0;

  record(r: Omit<CallRecord, 'seq'>): CallRecord {
    const rec = { ...r, seq: ++this.seq };
    this.records.push(rec);
    return rec;
  }

  /** Calls in arrival order, optionally filtered. */
  list(filter: CallFilter = {}): CallRecord[] {
    return this.records.filter(
      (r) =>
        (filter.action === undefined || r.action === filter.action) &&
        (filter.outcome === undefined ||
          r.outcome === filter.outcome ||
          (filter.outcome === 'error' && r.outcome !== 'ok')) &&
        (filter.since === undefined || r.at.getTime() >= filter.since.getTime()),
    );
  }

  /** Per action: total, ok, throttled and other errors. */
  counts(): Record<string, CallCount> {
    const out: Record<string, CallCount> = dict();
    for (const r of this.records) {
      const c = (out[r.action] ??= { total: 0, ok: 0, throttled: 0, errors: 0 });
      c.total++;
      if (r.outcome === 'ok') c.ok++;
      else if (r.outcome === 'ThrottlingException') c.throttled++;
      else c.errors++;
    }
    return out;
  }

  /** Forgets every record; numbering starts again at 1. */
  clear(): void {
    this.records = [];
    this.seq = 0;
  }
}

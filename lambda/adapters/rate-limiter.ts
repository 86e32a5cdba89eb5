/**
 * Client-side rate limiting of every ECS call, per ECS throttling category.
 *
 * ECS throttles per account and Region with one token bucket per category (Amazon ECS API
 * reference, "Request throttling"; docs/ecs-facts.md §2). People, the console and CI pipelines draw from
 * the same buckets, so the reconciler limits itself to `apiBudgetFraction` of each bucket (burst and
 * refill both scaled) and waits for a token rather than failing. The buckets come from
 * `lambda/core/ecs-limits.ts`, the same table the simulator throttles with.
 *
 * The limiter is installed as SDK middleware (see {@link addRateLimitMiddleware}) after the retry
 * middleware, so every attempt, retries included, takes a token.
 */
import type { ECSClient, ServiceInputTypes, ServiceOutputTypes } from '@aws-sdk/client-ecs';
// Type-only: @smithy/types ships with every SDK v3 client (erased at build time).
import type { FinalizeRequestMiddleware } from '@smithy/types';
import {
  ACTION_CATEGORY,
  THROTTLE_BUCKETS,
  TokenBucket,
  type ThrottleCategory,
} from '../core/ecs-limits';
import { own } from '../core/dict';

/** Time as the limiter sees it; tests pass a virtual one. */
export interface LimiterTime {
  /** Milliseconds since any fixed origin. */
  nowMs(): number;
  /** Resolves after `ms` milliseconds. */
  sleep(ms: number): Promise<void>;
}

export const realLimiterTime: LimiterTime = {
  nowMs: () => performance.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** Calls taken and time waited (milliseconds) per category, for logs and tests. */
export type LimiterStats = Partial<Record<ThrottleCategory, { calls: number; waitedMs: number }>>;

/**
 * Token buckets per ECS throttling category at `fraction` of ECS's documented burst and refill.
 * Callers of one category are served first come, first served.
 */
export class EcsRateLimiter {
  private readonly buckets = new Map<ThrottleCategory, TokenBucket>();
  private readonly queues = new Map<ThrottleCategory, Promise<void>>();
  private readonly stats: LimiterStats = {};

  /**
   * @param fraction share (0, 1] of each bucket this process may use (`API_BUDGET_FRACTION`,
   *   default 0.5). Burst is rounded down but at least 1 token; refill is tokens per second.
   * @throws RangeError when `fraction` is outside (0, 1].
   */
  constructor(
    readonly fraction: number,
    private readonly time: LimiterTime = realLimiterTime,
    private readonly limits: Readonly<Record<ThrottleCategory, { burst: number; refillPerSecond: number }>> = THROTTLE_BUCKETS,
  ) {
    if (!(fraction > 0 && fraction <= 1)) throw new RangeError(`apiBudgetFraction must be in (0, 1], got ${fraction}`);
  }

  /** The scaled bucket of a category: burst in tokens, refill in tokens per second. */
  budget(category: ThrottleCategory): { burst: number; refillPerSecond: number } {
    const l = this.limits[category];
    return { burst: Math.max(1, Math.floor(l.burst * this.fraction)), refillPerSecond: l.refillPerSecond * this.fraction };
  }

  private bucket(category: ThrottleCategory): TokenBucket {
    let b = this.buckets.get(category);
    if (!b) {
      const { burst, refillPerSecond } = this.budget(category);
      b = new TokenBucket(burst, refillPerSecond, this.time.nowMs());
      this.buckets.set(category, b);
    }
    return b;
  }

  /**
   * Waits until a token of the action's category is available and takes it. Actions outside
   * {@link ACTION_CATEGORY} are not limited.
   * @param action ECS action name, e.g. `DescribeServices`.
   */
  acquire(action: string): Promise<void> {
    const category = own(ACTION_CATEGORY, action);
    if (!category) return Promise.resolve();
    const previous = this.queues.get(category) ?? Promise.resolve();
    const mine = previous.then(() => this.take(category));
    this.queues.set(category, mine);
    return mine;
  }

  private async take(category: ThrottleCategory): Promise<void> {
    const bucket = this.bucket(category);
    const stat = (this.stats[category] ??= { calls: 0, waitedMs: 0 });
    for (;;) {
      const now = this.time.nowMs();
      if (bucket.tryTake(now)) {
        stat.calls += 1;
        return;
      }
      const wait = Math.max(1, bucket.waitMs(now));
      stat.waitedMs += wait;
      await this.time.sleep(wait);
    }
  }

  /** A copy of the per-category counters. */
  snapshot(): LimiterStats {
    return structuredClone(this.stats);
  }
}

/** The ECS action of an SDK command name: `DescribeServicesCommand` -> `DescribeServices`. */
export function actionOfCommand(commandName: string | undefined): string {
  return (commandName ?? '').replace(/Command$/, '');
}

export const RATE_LIMIT_MIDDLEWARE_NAME = 'ecsReconcilerRateLimit';

/**
 * Installs the limiter on an ECSClient as middleware inside the SDK's retry loop, just before the
 * request is signed (`httpSigningMiddleware` follows `retryMiddleware` in SDK v3), so that every
 * attempt takes a token and a long wait never stales a signature.
 */
export function addRateLimitMiddleware(client: ECSClient, limiter: EcsRateLimiter): void {
  const middleware: FinalizeRequestMiddleware<ServiceInputTypes, ServiceOutputTypes> = (next, context) => async (args) => {
    await limiter.acquire(actionOfCommand(context.commandName));
    return next(args);
  };
  client.middlewareStack.addRelativeTo(middleware, { relation: 'before', toMiddleware: 'httpSigningMiddleware', name: RATE_LIMIT_MIDDLEWARE_NAME, override: true });
}

/**
 * Routing ECS's events to their targets: each target account forwards its ECS events to
 * the reconciler account's default event bus (docs/multi-account.md, "ECS events from every
 * target"), so one batch of the events fast path queue can hold events of several accounts and
 * Regions. Every event carries the account and Region it happened in (the EventBridge envelope's
 * `account` and `region`; EventBridge User Guide, "Amazon EventBridge events"), and cross-account
 * delivery keeps them: the receiving bus sees the source account's `account`, not its own
 * (EventBridge User Guide, "Sending and receiving events between AWS accounts in Amazon
 * EventBridge").
 *
 * An event goes to the declared target of its account and Region (there is at most one:
 * `mergeTargets`), whatever its cluster: a target's passes reconcile every cluster its specs name
 * besides its `clusters`, so its events must reach it for every cluster too, and the target's fast
 * path reads only the named services that have a spec (the dispatcher drops the others before any
 * lease: `TargetDirectory.keysWithSpec`). An event of an account and Region no target covers is
 * dropped and counted, never applied to another account's service of the same name. The default
 * target's account is the reconciler's own (the function's ARN), its Region the function's.
 *
 * No SDK here.
 */
import { hintOf, type HintOptions } from './events';
import { DEFAULT_TARGET, type Target } from './targets';
import type { ServiceKey } from './types';

/** The reconciler's own account and Region: where the default target is (unless it declares its own). */
export interface HomeAccount {
  /** 12-digit account id; undefined when unknown (then only targets declaring an account match). */
  readonly account?: string;
  /** AWS Region, e.g. `eu-west-1`; undefined when unknown. */
  readonly region?: string;
}

/** What a batch of events asks of each target. */
export interface RoutedEvents {
  /** Target name -> the services (ECS names) its events name, each once, in first-seen order. */
  readonly byTarget: Map<string, ServiceKey[]>;
  /** Events naming a service in an account and Region no declared target covers: dropped. */
  readonly unrouted: number;
  /** `account/region` of the dropped events, each once (for the log line). */
  readonly unroutedOrigins: readonly string[];
  /** Events that name no service (heartbeats, the reconciler's own calls, other sources, not JSON). */
  readonly ignored: number;
  /** Events that name a task definition family: left to the scheduled pass. */
  readonly families: number;
}

/** The account id in an ARN (`arn:PARTITION:SERVICE:REGION:ACCOUNT:...`), or undefined. */
export function accountOfArn(arn: string | undefined): string | undefined {
  const account = arn?.split(':')[4];
  return account && /^\d{12}$/.test(account) ? account : undefined;
}

/** The `account` and `region` of an event body (undefined when absent or not JSON). Never throws. */
export function originOf(body: string): { readonly account?: string; readonly region?: string } {
  try {
    const e = JSON.parse(body) as unknown;
    if (!e || typeof e !== 'object' || Array.isArray(e)) return {};
    const account = Object.prototype.hasOwnProperty.call(e, 'account') ? (e as { account?: unknown }).account : undefined;
    const region = Object.prototype.hasOwnProperty.call(e, 'region') ? (e as { region?: unknown }).region : undefined;
    return { ...(typeof account === 'string' ? { account } : {}), ...(typeof region === 'string' ? { region } : {}) };
  } catch {
    return {};
  }
}

/** The account and Region `target` is in (the default target's are the reconciler's unless declared). */
export function whereIs(target: Target, home: HomeAccount): { readonly account?: string; readonly region?: string } {
  return {
    account: target.account ?? (target.name === DEFAULT_TARGET ? home.account : undefined),
    region: target.region ?? (target.name === DEFAULT_TARGET ? home.region : undefined),
  };
}

/**
 * Whether an event of `account`/`region` belongs to `target`: the same account and Region, whatever
 * the cluster (a target reconciles every cluster its specs name, not only its `clusters`).
 */
export function targetServes(target: Target, home: HomeAccount, origin: { readonly account?: string; readonly region?: string }): boolean {
  const where = whereIs(target, home);
  return Boolean(where.account && where.region && origin.account === where.account && origin.region === where.region);
}

/**
 * Routes a batch of event bodies (EventBridge events as JSON) to `targets` by each event's
 * `account` and `region` (see the module docs). The calls of every target's own role (the
 * reconciler acting there) are not hints, besides `options.ignorePrincipals`. A duplicated event
 * names its service once. Never throws.
 */
export function routeEvents(bodies: readonly string[], targets: readonly Target[], home: HomeAccount, options: HintOptions = {}): RoutedEvents {
  const ignorePrincipals = [...(options.ignorePrincipals ?? []), ...targets.flatMap((t) => (t.roleArn ? [t.roleArn] : []))];
  const byTarget = new Map<string, ServiceKey[]>();
  const seen = new Set<string>();
  const origins = new Set<string>();
  let unrouted = 0;
  let ignored = 0;
  let families = 0;
  for (const body of bodies) {
    const hint = hintOf(body, { ignorePrincipals });
    if (hint.kind === 'family') {
      families += 1;
      continue;
    }
    if (hint.kind !== 'service') {
      ignored += 1;
      continue;
    }
    const origin = originOf(body);
    const to = targets.filter((t) => targetServes(t, home, origin));
    if (to.length === 0) {
      unrouted += 1;
      origins.add(`${origin.account ?? '?'}/${origin.region ?? '?'}`);
      continue;
    }
    for (const t of to) {
      const id = `${t.name}\u0000${hint.key.cluster}\u0000${hint.key.service}`;
      if (seen.has(id)) continue;
      seen.add(id);
      const list = byTarget.get(t.name) ?? [];
      list.push(hint.key);
      byTarget.set(t.name, list);
    }
  }
  return { byTarget, unrouted, unroutedOrigins: [...origins], ignored, families };
}

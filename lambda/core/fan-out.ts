/**
 * The fan-out: every schedule tick, the dispatcher sends one SQS message per
 * target; the queue's event source mapping runs one invocation per message, at most
 * `maximumConcurrency` at once, and each invocation reconciles its target alone (own credentials,
 * lease, API budget and metrics dimension). The engine that runs the targets side by side, retries
 * a message whose invocation died and parks a message that keeps failing is SQS and Lambda's, not
 * a loop of ours (docs/multi-account.md, "The fan-out").
 *
 * This module holds the dispatcher's part: which targets, which messages, and the per-target
 * `TargetPassAge` heartbeat metric. No SDK here.
 */
import type { Clock, LogPort, MetricsSink } from './ports';
import { DIMENSION, METRIC } from './metric-names';
import {
  FAN_OUT_MESSAGE_KIND,
  keysByTarget,
  mergeTargets,
  NEVER_PASSED_AGE_SECONDS,
  storedKey,
  type FanOutMessage,
  type Target,
  type TargetParseResult,
} from './targets';
import type { ServiceKey } from './types';
import { dict, own } from './dict';
import { routeEvents, type HomeAccount } from './event-routing';

/** The targets and heartbeats kept in the spec table (`#target` and `#heartbeat` items). */
export interface TargetDirectory {
  /**
   * Every `#target` item (parsed) and every `#heartbeat` item (target name -> ISO time of its last
   * completed scheduled pass). Never throws: a failed read gives `error` and what was read.
   */
  read(): Promise<{ readonly declarations: TargetParseResult[]; readonly heartbeats: Record<string, string>; readonly error?: string }>;
  /**
   * Records that `target` completed a scheduled pass at `at`.
   * @throws on a DynamoDB failure.
   */
  writeHeartbeat(target: string, at: Date): Promise<void>;
  /**
   * Which of `keys` (stored form: `staging/web`, `web`) have a spec item, so that events naming
   * someone else's services start no pass (no lease, no Scan). Never throws: when the table cannot
   * be read, every key is kept (a hint is never lost) and `error` says why.
   * Absent: every key is kept.
   */
  keysWithSpec?(keys: readonly ServiceKey[]): Promise<{ readonly keys: readonly ServiceKey[]; readonly error?: string }>;
}

/** Options of one {@link FanOutQueue.send}. */
export interface FanOutSendOptions {
  /**
   * Seconds before the messages can be received (SQS `DelaySeconds`, 0-900; Amazon SQS Developer
   * Guide, "Amazon SQS message timers"). Default 0.
   */
  readonly delaySeconds?: number;
}

/** The fan-out queue. */
export interface FanOutQueue {
  /** Sends the messages; never throws: the ones that could not be sent are returned with the reason. */
  send(messages: readonly FanOutMessage[], options?: FanOutSendOptions): Promise<{ readonly failed: readonly { readonly target: string; readonly error: string }[] }>;
}

/**
 * Seconds a fast-path message waits in the queue after its invocation found the target's lease
 * held, by re-send (the first re-send waits 1 s, the eighth 5 s). They add up to 30 s, the time the
 * single-target fast path waits for a held lease (`FAST_PATH_LEASE_WAIT_MS`); after the last one
 * the message is dropped: the scheduled pass reads edited specs first, and the services ECS's
 * events named are read by the target's scheduled passes (docs/multi-account.md, "What happens when
 * a target fails").
 */
export const LEASE_HELD_REQUEUE_DELAYS_SECONDS: readonly number[] = [1, 2, 3, 4, 5, 5, 5, 5];

/**
 * What to do with a fast-path message whose invocation found its target's lease held: in fan-out
 * mode it never waits for the lease inside its invocation (that would hold one of the mapping's
 * `maximumConcurrency` slots, and enough of them would make another target's scheduled message
 * start late and be dropped as stale); it goes back to the queue with a delay.
 * @returns the message to send (its `leaseTries` one more) and its delay in seconds, or undefined
 *   when the message has used every delay of {@link LEASE_HELD_REQUEUE_DELAYS_SECONDS} (drop it)
 *   or is a scheduled message (no keys: the next tick sends a fresh one).
 */
export function requeueAfterLeaseHeld(
  message: FanOutMessage,
  delays: readonly number[] = LEASE_HELD_REQUEUE_DELAYS_SECONDS,
): { readonly message: FanOutMessage; readonly delaySeconds: number } | undefined {
  if (!message.keys || message.keys.length === 0) return undefined;
  const tries = message.leaseTries ?? 0;
  if (tries >= delays.length) return undefined;
  return { message: { ...message, leaseTries: tries + 1 }, delaySeconds: delays[tries] };
}

export interface DispatchPorts {
  readonly directory: TargetDirectory;
  readonly queue: FanOutQueue;
  readonly metrics: MetricsSink;
  readonly log: LogPort;
  readonly clock: Clock;
}

export interface DispatchOptions {
  /** The construct's `targets` prop, as parsed from `TARGETS`. */
  readonly propTargets: readonly TargetParseResult[];
  /** `MANAGED_CLUSTERS`: the default target's clusters when nobody declares it. */
  readonly defaultClusters: readonly string[];
  /**
   * The reconciler's own account and Region (the default target's): a declared target there is
   * refused, as is a second target in any account and Region (one target per account and Region).
   */
  readonly home?: HomeAccount;
}

/** What a dispatch did (the handler's answer to the schedule in fan-out mode); JSON-safe. */
export interface DispatchSummary {
  readonly outcome: 'dispatched';
  /** ISO time of the tick. */
  readonly at: string;
  /** Targets a message was sent for, in order. */
  readonly targets: readonly string[];
  /** Targets whose message could not be sent, with the reason. */
  readonly failed: readonly { readonly target: string; readonly error: string }[];
  /** Declarations that were refused (invalid, or shadowed by the prop). */
  readonly problems: readonly string[];
  /** The `#target` items could not be read: only the prop's targets (and default) were sent. */
  readonly directoryError?: string;
  /** Seconds since each target's last completed scheduled pass (as emitted in `TargetPassAge`). */
  readonly passAgeSeconds: Readonly<Record<string, number>>;
}

/** The targets of this tick: the prop's, the table's and the default one. */
async function currentTargets(ports: DispatchPorts, options: DispatchOptions) {
  const read = await ports.directory.read();
  const set = mergeTargets(options.propTargets, read.declarations, options.defaultClusters, options.home);
  return { ...set, heartbeats: read.heartbeats, ...(read.error ? { error: read.error } : {}) };
}

/**
 * One schedule tick in fan-out mode: reads the targets, emits `TargetPassAge` per target (Target
 * dimension) and sends one message per target. A target whose `#target` item is invalid is
 * reported in `problems` and the log, never sent; the other targets are sent regardless.
 * @throws only programming errors.
 */
export async function dispatchTargets(ports: DispatchPorts, options: DispatchOptions): Promise<DispatchSummary> {
  const now = ports.clock.now();
  const { targets, problems, heartbeats, error } = await currentTargets(ports, options);
  if (error) ports.log.error('fan-out: the #target items could not be read; dispatching the declared targets only', { error });
  for (const p of problems) ports.log.warn('fan-out: target declaration refused', { problem: p });
  const passAgeSeconds: Record<string, number> = dict();
  for (const t of targets) {
    const last = own(heartbeats, t.name);
    const age = last !== undefined && !Number.isNaN(Date.parse(last)) ? Math.max(0, Math.round((now.getTime() - Date.parse(last)) / 1000)) : NEVER_PASSED_AGE_SECONDS;
    passAgeSeconds[t.name] = age;
    ports.metrics.dimensionedMetric?.({ [DIMENSION.target]: t.name }, METRIC.targetPassAge, age, 'Count');
  }
  const declared = targets.map((t) => t.name);
  const messages = targets.map((target): FanOutMessage => ({ kind: FAN_OUT_MESSAGE_KIND, target, sentAt: now.toISOString(), declared }));
  const { failed } = await ports.queue.send(messages);
  for (const f of failed) ports.log.error('fan-out: message not sent; this target misses this tick', f);
  await ports.metrics.flush();
  const failedNames = new Set(failed.map((f) => f.target));
  return {
    outcome: 'dispatched',
    at: now.toISOString(),
    targets: targets.map((t) => t.name).filter((n) => !failedNames.has(n)),
    failed,
    problems,
    ...(error ? { directoryError: error } : {}),
    passAgeSeconds,
  };
}

/**
 * The fast path in fan-out mode: the stream's keys (stored form, `staging/web`) grouped by target,
 * one message per target with that target's keys (ECS names). Keys of an undeclared target are
 * dropped (the default target's scheduled pass reports their items as invalid).
 * @returns the targets sent and the keys dropped.
 */
export async function dispatchKeys(
  ports: Omit<DispatchPorts, 'metrics'>,
  options: DispatchOptions,
  keys: readonly ServiceKey[],
): Promise<{ readonly targets: readonly string[]; readonly dropped: readonly ServiceKey[]; readonly failed: readonly { target: string; error: string }[] }> {
  const now = ports.clock.now();
  const { targets } = await currentTargets({ ...ports, metrics: { serviceLag() {}, passMetric() {}, flush() {} } }, options);
  const byName = new Map<string, Target>(targets.map((t) => [t.name, t]));
  const messages: FanOutMessage[] = [];
  const dropped: ServiceKey[] = [];
  for (const [name, list] of keysByTarget(keys)) {
    const target = byName.get(name);
    if (!target) {
      dropped.push(...list.map((k) => ({ cluster: `${name}/${k.cluster}`, service: k.service })));
      continue;
    }
    for (let i = 0; i < list.length; i += 1000) {
      messages.push({ kind: FAN_OUT_MESSAGE_KIND, target, sentAt: now.toISOString(), keys: list.slice(i, i + 1000), declared: [...byName.keys()] });
    }
  }
  if (dropped.length > 0) ports.log.warn('fast path: records name an undeclared target; dropped', { keys: dropped.slice(0, 20) });
  const { failed } = messages.length > 0 ? await ports.queue.send(messages) : { failed: [] };
  return { targets: [...new Set(messages.map((m) => m.target.name))], dropped, failed };
}

/** What {@link dispatchEvents} did; JSON-safe. */
export interface EventsDispatchSummary {
  readonly outcome: 'events-dispatched';
  /** Targets a message was sent for, each with the number of services named. */
  readonly targets: Readonly<Record<string, number>>;
  /** Events for an account and Region no declared target covers: dropped, unapplied. */
  readonly unrouted: number;
  /** Services named by events of a covered account and Region that have no spec: no pass for them. */
  readonly withoutSpec: number;
  /** Events naming no service (heartbeats, the reconciler's own calls, ...). */
  readonly ignored: number;
  /** Events naming a family (left to the scheduled pass). */
  readonly families: number;
  /** Messages that could not be sent, with the reason. */
  readonly failed: readonly { readonly target: string; readonly error: string }[];
}

/**
 * The events fast path in fan-out mode: a batch of ECS events (bodies of the events fast path
 * queue's messages, from the reconciler's account and, forwarded by `ReconcilerTargetStack`, from
 * every target account) routed to the targets by each event's `account` and `region`
 * (`routeEvents`, `./event-routing.ts`, whatever the cluster), one message per target with those
 * of its services that have a spec item ({@link withSpecOnly}: someone else's services start no
 * pass; `fromEvents`: the invocation again reads only those with a spec). An event for no declared
 * target is dropped: logged with its account and Region and counted in `EventsUnrouted`.
 * @throws only programming errors; unsent messages are in `failed`.
 */
export async function dispatchEvents(
  ports: DispatchPorts,
  options: DispatchOptions & { readonly home: HomeAccount; readonly ignorePrincipals?: readonly string[] },
  bodies: readonly string[],
): Promise<EventsDispatchSummary> {
  const now = ports.clock.now();
  const { targets } = await currentTargets(ports, options);
  const routed = routeEvents(bodies, targets, options.home, { ignorePrincipals: options.ignorePrincipals ?? [] });
  const byName = new Map<string, Target>(targets.map((t) => [t.name, t]));
  const declared = [...byName.keys()];
  const { byTarget, withoutSpec } = await withSpecOnly(ports.directory, ports.log, routed.byTarget);
  const messages: FanOutMessage[] = [];
  const counts: Record<string, number> = dict();
  for (const [name, keys] of byTarget) {
    const target = byName.get(name) as Target;
    counts[name] = keys.length;
    for (let i = 0; i < keys.length; i += 1000) {
      messages.push({ kind: FAN_OUT_MESSAGE_KIND, target, sentAt: now.toISOString(), keys: keys.slice(i, i + 1000), fromEvents: true, declared });
    }
  }
  if (routed.unrouted > 0) {
    ports.log.warn('events fast path: events of an account and Region no declared target serves; dropped', { events: routed.unrouted, origins: routed.unroutedOrigins });
    ports.metrics.passMetric(METRIC.eventsUnrouted, routed.unrouted, 'Count');
    await ports.metrics.flush();
  }
  const { failed } = messages.length > 0 ? await ports.queue.send(messages) : { failed: [] };
  for (const f of failed) ports.log.error('events fast path: message not sent; the scheduled pass covers these services', f);
  return { outcome: 'events-dispatched', targets: counts, unrouted: routed.unrouted, withoutSpec, ignored: routed.ignored, families: routed.families, failed };
}

/**
 * Keeps, of each target's services named by events (ECS names), those with a spec item, so that
 * events of someone else's services (any cluster of a target's account and Region) start no pass:
 * no lease taken, no Scan. When the table cannot be read every service is kept (logged).
 * @returns the targets with at least one service left, and how many services were dropped.
 */
export async function withSpecOnly(
  directory: Pick<TargetDirectory, 'keysWithSpec'>,
  log: LogPort,
  byTarget: ReadonlyMap<string, readonly ServiceKey[]>,
): Promise<{ readonly byTarget: Map<string, ServiceKey[]>; readonly withoutSpec: number }> {
  const all = [...byTarget].flatMap(([name, keys]) => keys.map((k) => ({ name, key: k, stored: storedKey(name, k) })));
  if (!directory.keysWithSpec || all.length === 0) return { byTarget: new Map([...byTarget].map(([n, k]) => [n, [...k]])), withoutSpec: 0 };
  const checked = await directory.keysWithSpec(all.map((a) => a.stored));
  if (checked.error) log.warn('events fast path: the spec items could not be read; every service named is kept', { error: checked.error });
  const have = new Set(checked.keys.map((k) => `${k.cluster}\u0000${k.service}`));
  const out = new Map<string, ServiceKey[]>();
  let withoutSpec = 0;
  for (const a of all) {
    if (!have.has(`${a.stored.cluster}\u0000${a.stored.service}`)) {
      withoutSpec += 1;
      continue;
    }
    const list = out.get(a.name) ?? [];
    list.push(a.key);
    out.set(a.name, list);
  }
  return { byTarget: out, withoutSpec };
}

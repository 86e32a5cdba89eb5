/**
 * Fan-out mode (`FANOUT_QUEUE_URL`, docs/multi-account.md): the schedule and the fast paths send
 * one message per target to the fan-out queue, and each message's invocation runs its target's
 * pass (`lambda/adapters/fan-out.ts`).
 */
import { dispatchEvents, dispatchKeys, dispatchTargets, type DispatchSummary, type EventsDispatchSummary } from '../core/fan-out';
import { isFanOutBody, parseFanOutMessage } from '../core/targets';
import { systemClock } from '../core/ports';
import type { ServiceKey } from '../core/types';
import type { HomeAccount as Home } from '../core/event-routing';
import type { TargetPassResult } from '../adapters/fan-out';
import { homeOf, passTiming, type Invocation } from './invocation';
import type { KeysDispatched, TargetPassResults } from './results';
import type { FanOutWiring, Wiring } from './wiring';


/** True for an SQS batch whose messages are fan-out messages. */
export function isFanOutBatch(event: unknown): event is { Records: { body: string; messageId: string }[] } {
  const records = (event as { Records?: unknown } | null)?.Records;
  return (
    Array.isArray(records) &&
    records.length > 0 &&
    records.every((r) => r && typeof r === 'object' && (r as { eventSource?: unknown }).eventSource === 'aws:sqs' && typeof (r as { body?: unknown }).body === 'string' && isFanOutBody((r as { body: string }).body))
  );
}

function dispatch(w: Wiring, f: FanOutWiring, home: Home) {
  const ports = { directory: f.directory, queue: f.queue, metrics: w.metrics, log: w.log, clock: systemClock };
  return { ports, options: { propTargets: f.settings.propTargets, defaultClusters: w.config.plan.managedClusters, home } };
}

/**
 * One target's pass per message (the event source mapping, batch size 1). A message that is not
 * a valid fan-out message is logged and consumed (retrying cannot fix it). A fast-path message
 * whose target's lease is held is sent back to the queue with a delay (`requeued`;
 * `requeueAfterLeaseHeld`) and this one is consumed: it never waits for the lease here.
 */
export async function onFanOutMessages(w: Wiring, f: FanOutWiring, inv: Invocation, records: readonly { body: string; messageId: string }[]): Promise<TargetPassResults> {
  const results: TargetPassResult[] = [];
  for (const record of records) {
    const parsed = parseFanOutMessage(record.body);
    if (!parsed.ok) {
      w.logger.error('fan-out: message is not a valid fan-out message; dropped', { messageId: record.messageId, error: parsed.error });
      results.push({ outcome: 'invalid-message', error: parsed.error });
      continue;
    }
    // Each message's lease lives as long as the invocation has left when it starts.
    const timing = passTiming({ context: inv.context, startRemainingMs: inv.context.getRemainingTimeInMillis() }, `${inv.context.awsRequestId}:${parsed.message.target.name}`);
    const result = await f.runner.run(parsed.message, { home: homeOf(w, inv), ...timing });
    w.tracer.putAnnotation('target', parsed.message.target.name);
    results.push(result);
  }
  return { outcome: 'target-passes', results };
}

/** The schedule: one fan-out message per target (`dispatchTargets`). */
export async function dispatchAllTargets(w: Wiring, f: FanOutWiring, home: Home): Promise<DispatchSummary> {
  const { ports, options } = dispatch(w, f, home);
  const summary = await dispatchTargets(ports, options);
  w.logger.info('fan-out: targets dispatched', { targets: summary.targets, failed: summary.failed, problems: summary.problems });
  return summary;
}

/**
 * A stream or events batch's keys, sent to their targets as fan-out messages.
 * @throws when a message could not be sent, so the mapping retries the batch.
 */
export async function dispatchKeysToTargets(w: Wiring, f: FanOutWiring, home: Home, keys: readonly ServiceKey[]): Promise<KeysDispatched> {
  const { ports, options } = dispatch(w, f, home);
  const sent = await dispatchKeys(ports, options, keys);
  w.logger.info('fast path: keys sent to their targets', { targets: sent.targets, dropped: sent.dropped.length, failed: sent.failed });
  if (sent.failed.length > 0) throw new Error(`fast path: ${sent.failed.length} message(s) not sent: ${sent.failed[0].error}`);
  return { outcome: 'keys-dispatched', targets: sent.targets };
}

/**
 * ECS's events of every target account (forwarded by `ReconcilerTargetStack`), routed to the
 * targets of their `account` and `region`, one message per target with its services
 * (`dispatchEvents`); an event for no declared target is dropped and counted (`EventsUnrouted`).
 * @throws when a message could not be sent, so the mapping retries the batch.
 */
export async function dispatchEventsToTargets(w: Wiring, f: FanOutWiring, home: Home, bodies: readonly string[]): Promise<EventsDispatchSummary> {
  const { ports, options } = dispatch(w, f, home);
  const sent = await dispatchEvents(ports, { ...options, ignorePrincipals: w.config.eventsIgnorePrincipals ?? [] }, bodies);
  w.logger.info('events fast path: services sent to their targets', { targets: sent.targets, unrouted: sent.unrouted, ignored: sent.ignored, families: sent.families, failed: sent.failed.length });
  if (sent.failed.length > 0) throw new Error(`events fast path: ${sent.failed.length} message(s) not sent: ${sent.failed[0].error}`);
  return sent;
}

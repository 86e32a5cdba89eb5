/**
 * A batch of the events fast path queue: ECS's events and the CloudTrail events of ECS writes by
 * others. Outside fan-out mode only those of the reconciler's own account and Region are read
 * (any cluster: a spec may name any); in fan-out mode each event goes to the target of its account
 * and Region.
 */
import type { SQSRecord } from 'aws-lambda';
import type { PassSummary } from '../core/pass';
import type { EventsDispatchSummary } from '../core/fan-out';
import { withSpecOnly } from '../core/fan-out';
import { routeEvents } from '../core/event-routing';
import { METRIC } from '../core/metric-names';
import { DEFAULT_TARGET } from '../core/targets';
import { bodiesOfSqsRecords } from '../adapters/sqs-records';
import { dispatchEventsToTargets } from './fan-out';
import { homeOf, type Invocation } from './invocation';
import { onKeys } from './keys';
import type { NothingToReconcile } from './results';
import type { Wiring } from './wiring';

/**
 * Reconciles the services with a spec item that the batch's events name (one BatchGetItem before
 * any lease: someone else's services start no pass). Events of another account or Region are
 * dropped and counted (`EventsUnrouted`): the one target is the reconciler's own place.
 * @returns {@link NothingToReconcile} when no named service has a spec item; in fan-out mode
 *   the {@link EventsDispatchSummary}.
 * @throws in fan-out mode when a message could not be sent, so the mapping retries the batch.
 */
export async function onEvents(w: Wiring, inv: Invocation, records: readonly SQSRecord[]): Promise<PassSummary | EventsDispatchSummary | NothingToReconcile> {
  const home = homeOf(w, inv);
  if (w.fanOut) return dispatchEventsToTargets(w, w.fanOut, home, bodiesOfSqsRecords(records));
  const own = [{ name: DEFAULT_TARGET, clusters: w.config.plan.managedClusters, source: 'implicit' as const }];
  const routed = routeEvents(bodiesOfSqsRecords(records), own, home, { ignorePrincipals: w.config.eventsIgnorePrincipals ?? [] });
  if (routed.unrouted > 0) {
    w.logger.warn('events fast path: events of another account or Region; dropped', { events: routed.unrouted, origins: routed.unroutedOrigins });
    w.metrics.passMetric(METRIC.eventsUnrouted, routed.unrouted, 'Count');
    await w.metrics.flush();
  }
  const withSpec = await withSpecOnly(w.specKeys, w.log, routed.byTarget);
  const keys = withSpec.byTarget.get(DEFAULT_TARGET) ?? [];
  const ignored = routed.ignored + routed.unrouted + withSpec.withoutSpec;
  if (keys.length === 0) {
    w.logger.debug('events batch names no service', { ignored, families: routed.families });
    return { outcome: 'nothing-to-reconcile', ignored: { events: ignored, families: routed.families } };
  }
  w.logger.info('fast path: ECS events name services', { keys: keys.length, ignored, families: routed.families });
  // Events name any service of the account: only those with a spec are read.
  return onKeys(w, inv, { keys, keysWithSpecOnly: true }) as Promise<PassSummary>;
}

/**
 * The Lambda handler: routes each event to one entry point (lambda/entry/). The container's
 * configuration, clients, logger and metrics are built once at cold start (`createWiring`; a bad
 * variable throws a ConfigError naming it).
 *
 * - a batch of the specs table's DynamoDB stream: the fast path for the services it names (`onStream`);
 * - in fan-out mode, a batch of the fan-out queue's messages: each message's target pass (`onFanOutMessages`);
 * - a batch of the events fast path queue: the services with a spec that ECS's events name (`onEvents`);
 * - anything else is the EventBridge schedule: the pass over the whole fleet, or in fan-out mode
 *   one message per target (`onSchedule`).
 * @returns the entry point's JSON-safe answer ({@link HandlerResult}), also when another pass holds the lease.
 * @throws only programming errors, and in fan-out mode a message that could not be sent (the
 *   mapping retries the batch); failed AWS calls are reported in the summary.
 */
import type { Context } from 'aws-lambda';
import { isDynamoDbStreamEvent } from './adapters/stream-records';
import { isSqsEvent } from './adapters/sqs-records';
import { onEvents } from './entry/events';
import { isFanOutBatch, onFanOutMessages } from './entry/fan-out';
import type { Invocation } from './entry/invocation';
import type { HandlerResult } from './entry/results';
import { onSchedule } from './entry/schedule';
import { onStream } from './entry/stream';
import { createWiring } from './entry/wiring';

export { LEASE_MARGIN_SECONDS, RESERVE_MS } from './entry/invocation';
export type { HandlerResult, NothingToReconcile, TargetPassResults } from './entry/results';

const wiring = createWiring();
/** The container's tracer (Powertools Tracer; off outside Lambda). */
export const tracer = wiring.tracer;

export const handler = async (event: unknown, context: Context): Promise<HandlerResult> => {
  wiring.logger.addContext(context);
  const inv: Invocation = { context, startRemainingMs: context.getRemainingTimeInMillis() };
  if (isDynamoDbStreamEvent(event)) return onStream(wiring, inv, event.Records);
  if (wiring.fanOut && isFanOutBatch(event)) return onFanOutMessages(wiring, wiring.fanOut, inv, event.Records);
  if (isSqsEvent(event)) return onEvents(wiring, inv, event.Records);
  return onSchedule(wiring, inv);
};

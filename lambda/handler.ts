/**
 * The Lambda handler: a thin shell. Configuration is parsed once at cold start
 * (`loadConfig`, a bad variable throws a ConfigError naming it); clients, logger and metrics live at
 * module scope; each invocation runs one pass and returns its summary.
 *
 * Endpoints, region and credentials come from the SDK's standard configuration (`AWS_REGION`,
 * `AWS_ENDPOINT_URL`, `AWS_ENDPOINT_URL_ECS`, `AWS_ENDPOINT_URL_DYNAMODB`), so the same bundle
 * runs against AWS, the simulator, dynalite and moto.
 */
import type { Context } from 'aws-lambda';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { loadConfig } from './config';
import type { PassSummary } from './core/pass';
import { LOG_SERVICE_NAME, PowertoolsLog } from './adapters/logger';
import { PowertoolsMetricsSink } from './adapters/metrics';
import { createRuntime } from './adapters/runtime';
import { isDynamoDbStreamEvent, keysOfStreamRecords, type IgnoredRecords } from './adapters/stream-records';
import { bodiesOfSqsRecords, isSqsEvent } from './adapters/sqs-records';
import { accountOfArn, routeEvents } from './core/event-routing';
import { METRIC } from './core/metric-names';
import { FAST_PATH_LEASE_WAIT_MS } from './core/fast-path';
import { dispatchEvents, dispatchKeys, dispatchTargets, withSpecOnly, type DispatchSummary, type EventsDispatchSummary } from './core/fan-out';
import { DEFAULT_TARGET, isFanOutBody, parseFanOutMessage } from './core/targets';
import { DynamoTargetDirectory, SqsFanOutQueue, TargetRunner, type TargetPassResult } from './adapters/fan-out';
import { createSqsClient } from './adapters/sqs-event-feed';
import { systemClock } from './core/ports';

/** Milliseconds of invocation time kept in reserve: no new action starts with less left. */
export const RESERVE_MS = 10_000;
/** Seconds added to the remaining invocation time for the lease lifetime. */
export const LEASE_MARGIN_SECONDS = 5;

const config = loadConfig();
const logger = new Logger({ serviceName: LOG_SERVICE_NAME });
const metrics = new Metrics({ namespace: config.metricsNamespace });
/**
 * X-Ray tracing (Powertools Tracer): on in Lambda unless `POWERTOOLS_TRACE_ENABLED=false` (the
 * construct's `tracing` prop); Powertools turns it off by itself outside Lambda, so `ecsr`, the
 * local run and the tests never need an X-Ray daemon. HTTP is not patched globally: the ECS and
 * DynamoDB clients are captured instead (one subsegment per AWS call).
 */
export const tracer = new Tracer({ serviceName: LOG_SERVICE_NAME, captureHTTPsRequests: false });
const log = new PowertoolsLog(logger);
const metricsSink = new PowertoolsMetricsSink(config.metricsNamespace, metrics);
const runtime = createRuntime(config, {
  log,
  metrics: metricsSink,
  monotonicMs: () => performance.now(),
});
tracer.captureAWSv3Client(runtime.ecs);
tracer.captureAWSv3Client(runtime.doc);
/**
 * Fan-out mode (`FANOUT_QUEUE_URL`): the schedule dispatches one message per
 * target, and each message's invocation reconciles its target (`lambda/adapters/fan-out.ts`).
 */
/** Which services named by ECS's events have a spec item (the events fast path's first read). */
const specKeys = new DynamoTargetDirectory(runtime.doc, config.specsTable);
const fanOutQueue = config.fanOut ? new SqsFanOutQueue(createSqsClient(), config.fanOut.queueUrl) : undefined;
const fanOut = config.fanOut
  ? {
      settings: config.fanOut,
      directory: new DynamoTargetDirectory(runtime.doc, config.specsTable),
      queue: fanOutQueue!,
      // A fast-path message whose target's lease is held goes back to the queue with a delay
      // instead of waiting in its invocation (one of the mapping's concurrency slots).
      runner: new TargetRunner(config, { doc: runtime.doc, metrics: metricsSink, log, monotonicMs: () => performance.now(), requeue: fanOutQueue }),
    }
  : undefined;

/** What the handler returns for the fan-out queue's messages (one per target; batch size 1). */
export interface TargetPassResults {
  readonly outcome: 'target-passes';
  readonly results: readonly TargetPassResult[];
}

/** True for an SQS batch whose messages are fan-out messages. */
function isFanOutBatch(event: unknown): event is { Records: { body: string; messageId: string }[] } {
  const records = (event as { Records?: unknown } | null)?.Records;
  return (
    Array.isArray(records) &&
    records.length > 0 &&
    records.every((r) => r && typeof r === 'object' && (r as { eventSource?: unknown }).eventSource === 'aws:sqs' && typeof (r as { body?: unknown }).body === 'string' && isFanOutBody((r as { body: string }).body))
  );
}

/**
 * Fan-out mode: one target's pass per message. A message that is not a valid fan-out message is
 * logged and consumed (retrying cannot fix it). A fast-path message whose target's lease is held
 * is sent back to the queue with a delay (`requeued`; `requeueAfterLeaseHeld`) and this one is
 * consumed: it never waits for the lease in the invocation.
 */
async function runTargetMessages(records: readonly { body: string; messageId: string }[], context: Context): Promise<TargetPassResults> {
  const results: TargetPassResult[] = [];
  for (const record of records) {
    const parsed = parseFanOutMessage(record.body);
    if (!parsed.ok) {
      logger.error('fan-out: message is not a valid fan-out message; dropped', { messageId: record.messageId, error: parsed.error });
      results.push({ outcome: 'invalid-message', error: parsed.error });
      continue;
    }
    const remainingMs = context.getRemainingTimeInMillis();
    const result = await fanOut!.runner.run(parsed.message, {
      home: { account: accountOfArn(context.invokedFunctionArn), region: config.plan.defaults.region },
      holder: `${context.awsRequestId}:${parsed.message.target.name}`,
      leaseTtlSeconds: Math.ceil(remainingMs / 1000) + LEASE_MARGIN_SECONDS,
      shouldContinue: () => context.getRemainingTimeInMillis() >= RESERVE_MS,
      remainingMs: () => context.getRemainingTimeInMillis(),
    });
    tracer.putAnnotation('target', parsed.message.target.name);
    results.push(result);
  }
  return { outcome: 'target-passes', results };
}

/**
 * What the handler returns for a batch that names no service: a stream batch of status writes,
 * lease items...; an events batch of the reconciler's own calls, heartbeats, families...
 */
export interface NothingToReconcile {
  readonly outcome: 'nothing-to-reconcile';
  readonly ignored: IgnoredRecords | { readonly events: number; readonly families: number };
}

/**
 * Runs one reconcile pass. Two kinds of event:
 * - the EventBridge schedule (any event that is not a stream batch; its content is not used: the
 *   pass is level-triggered): the scheduled pass over the whole fleet;
 * - a batch of the specs table's DynamoDB stream records (the fast path), or a batch of
 *   the events fast path queue (ECS's events and CloudTrail writes, `keysOfEvents`; only services
 *   with a spec are read): a pass restricted to the services they name, through the same code,
 *   waiting at most a third of the invocation's time (and {@link FAST_PATH_LEASE_WAIT_MS}) for a
 *   lease another pass holds (`lambda/core/fast-path.ts`). It never throws for a held lease: the
 *   batch is done, and the scheduled pass reads the edited services first.
 *
 * Fan-out mode (`FANOUT_QUEUE_URL`, docs/multi-account.md) routes differently:
 * - the schedule: dispatches one fan-out message per target (`dispatchTargets`) and returns its
 *   {@link DispatchSummary};
 * - a batch of the fan-out queue's messages (the event source mapping, batch size 1): runs each
 *   message's target pass (`TargetRunner`) and returns {@link TargetPassResults}; a fast-path
 *   message whose target's lease is held tries once and goes back to the queue with a delay;
 * - a stream batch: sends the named keys to their targets as fan-out messages (`keys-dispatched`);
 *   throws when a message could not be sent, so the mapping retries the batch;
 * - a batch of the events fast path queue (ECS's events of the reconciler's account and, forwarded
 *   by `ReconcilerTargetStack`, of every target account): routes each event to the targets of its
 *   `account` and `region` and sends each target one message with its services (`dispatchEvents`,
 *   {@link EventsDispatchSummary}); an event for no declared target is dropped and counted
 *   (`EventsUnrouted`); throws when a message could not be sent.
 *
 * Outside fan-out mode, events of another account or Region are dropped and counted the same way:
 * the one target is the reconciler's own account and Region. In both modes the services named
 * that have no spec item start no pass (one BatchGetItem, before any lease).
 *
 * The invocation's remaining time bounds the pass: observation spends at most
 * `OBSERVATION_TIME_SHARE` of it (a new container over a large fleet describes the rest of its
 * task definitions in the next passes), no action starts with less than {@link RESERVE_MS} left,
 * and no status write with less than `STATUS_WRITE_RESERVE_MS` left (`lambda/core/pass.ts`).
 * @returns the pass summary (JSON-safe), also when another pass holds the lease;
 *   {@link NothingToReconcile} for a stream batch that names no service.
 * @throws only programming errors; failed AWS calls are reported in the summary.
 */
export const handler = async (
  event: unknown,
  context: Context,
): Promise<PassSummary | NothingToReconcile | DispatchSummary | TargetPassResults | EventsDispatchSummary | { outcome: 'keys-dispatched'; targets: readonly string[] }> => {
  logger.addContext(context);
  const remainingMs = context.getRemainingTimeInMillis();
  const stream = isDynamoDbStreamEvent(event) ? keysOfStreamRecords(event.Records) : undefined;
  if (stream && stream.keys.length === 0) {
    logger.debug('stream batch names no service', { ignored: stream.ignored });
    return { outcome: 'nothing-to-reconcile', ignored: stream.ignored };
  }
  // Fan-out mode: a message of the fan-out queue runs its target's pass.
  if (fanOut && isFanOutBatch(event)) return runTargetMessages(event.Records, context);
  // The reconciler's own account (the function's ARN) and Region: the default target's.
  const home = { account: accountOfArn(context.invokedFunctionArn), region: config.plan.defaults.region };
  if (fanOut && isSqsEvent(event)) {
    // Fan-out mode: ECS's events of every target account, routed by their account and Region.
    const ports = { directory: fanOut.directory, queue: fanOut.queue, metrics: metricsSink, log, clock: systemClock };
    const options = { propTargets: fanOut.settings.propTargets, defaultClusters: config.plan.managedClusters, home, ignorePrincipals: config.eventsIgnorePrincipals ?? [] };
    const sent = await dispatchEvents(ports, options, bodiesOfSqsRecords(event.Records));
    logger.info('events fast path: services sent to their targets', { targets: sent.targets, unrouted: sent.unrouted, ignored: sent.ignored, families: sent.families, failed: sent.failed.length });
    if (sent.failed.length > 0) throw new Error(`events fast path: ${sent.failed.length} message(s) not sent: ${sent.failed[0].error}`);
    return sent;
  }
  // The events fast path: ECS's events (and CloudTrail writes by others) from the second queue,
  // those of the reconciler's own account and Region only (any cluster: a spec may name any).
  const routed = isSqsEvent(event)
    ? routeEvents(bodiesOfSqsRecords(event.Records), [{ name: DEFAULT_TARGET, clusters: config.plan.managedClusters, source: 'implicit' }], home, {
        ignorePrincipals: config.eventsIgnorePrincipals ?? [],
      })
    : undefined;
  if (routed && routed.unrouted > 0) {
    logger.warn('events fast path: events of another account or Region; dropped', { events: routed.unrouted, origins: routed.unroutedOrigins });
    metricsSink.passMetric(METRIC.eventsUnrouted, routed.unrouted, 'Count');
    await metricsSink.flush();
  }
  // Only services with a spec start a pass (someone else's services: no lease, no Scan).
  const withSpec = routed ? await withSpecOnly(specKeys, log, routed.byTarget) : undefined;
  const ecsEvents =
    routed && withSpec
      ? { keys: withSpec.byTarget.get(DEFAULT_TARGET) ?? [], ignored: routed.ignored + routed.unrouted + withSpec.withoutSpec, families: routed.families }
      : undefined;
  if (ecsEvents && ecsEvents.keys.length === 0) {
    logger.debug('events batch names no service', { ignored: ecsEvents.ignored, families: ecsEvents.families });
    return { outcome: 'nothing-to-reconcile', ignored: { events: ecsEvents.ignored, families: ecsEvents.families } };
  }
  const fast = stream ?? ecsEvents;
  if (fanOut) {
    // Fan-out mode: the keys of a stream batch go to their targets' invocations; the schedule
    // dispatches every target.
    const ports = { directory: fanOut.directory, queue: fanOut.queue, metrics: metricsSink, log, clock: systemClock };
    const options = { propTargets: fanOut.settings.propTargets, defaultClusters: config.plan.managedClusters, home };
    if (fast) {
      const sent = await dispatchKeys(ports, options, fast.keys);
      logger.info('fast path: keys sent to their targets', { targets: sent.targets, dropped: sent.dropped.length, failed: sent.failed });
      if (sent.failed.length > 0) throw new Error(`fast path: ${sent.failed.length} message(s) not sent: ${sent.failed[0].error}`);
      return { outcome: 'keys-dispatched', targets: sent.targets };
    }
    const summary = await dispatchTargets(ports, options);
    logger.info('fan-out: targets dispatched', { targets: summary.targets, failed: summary.failed, problems: summary.problems });
    return summary;
  }
  // Manual instrumentation (Powertools Tracer docs): one subsegment per pass under Lambda's segment.
  const segment = tracer.getSegment();
  const subsegment = segment?.addNewSubsegment(fast ? '## fast path pass' : '## reconcile pass');
  if (subsegment) tracer.setSegment(subsegment);
  tracer.annotateColdStart();
  tracer.addServiceNameAnnotation();
  try {
    const options = {
      holder: context.awsRequestId,
      leaseTtlSeconds: Math.ceil(remainingMs / 1000) + LEASE_MARGIN_SECONDS,
      shouldContinue: () => context.getRemainingTimeInMillis() >= RESERVE_MS,
      remainingMs: () => context.getRemainingTimeInMillis(),
    };
    let summary: PassSummary;
    if (fast) {
      if (stream) logger.info('fast path: stream records name services', { keys: stream.keys.length, ignored: stream.ignored });
      else logger.info('fast path: ECS events name services', { keys: fast.keys.length, ignored: ecsEvents?.ignored, families: ecsEvents?.families });
      const leaseWaitMs = Math.min(FAST_PATH_LEASE_WAIT_MS, Math.floor(remainingMs / 3));
      // Events name any service of the account: only those with a spec are read.
      const result = await runtime.runFastPath(fast.keys, { ...options, leaseWaitMs, ...(ecsEvents ? { keysWithSpecOnly: true } : {}) });
      // keys is not empty here, so the fast path ran.
      summary = (result as NonNullable<typeof result>).summary;
      tracer.putAnnotation('leaseWaitMs', (result as NonNullable<typeof result>).waitedMs);
    } else {
      summary = await runtime.run(options);
    }
    tracer.putAnnotation('actions', summary.actions.length);
    tracer.putAnnotation('readsComplete', summary.readsComplete);
    return summary;
  } catch (err) {
    tracer.addErrorAsMetadata(err as Error);
    throw err;
  } finally {
    subsegment?.close();
    if (segment) tracer.setSegment(segment);
  }
};

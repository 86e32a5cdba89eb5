/**
 * Events mode (docs/events.md): EventBridge rules deliver ECS's events and the CloudTrail events of
 * ECS writes by others into the events queue (read by each pass) and the events fast path queue
 * (read by an event source mapping within seconds), and the default bus takes the target
 * accounts' forwarded ECS events.
 */
import { Duration, Names, Stack } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { EVENT_RULES, type EventPattern } from '../../lambda/core/events';
import { EcsReconcilerPropsError } from './errors';
import type { ReconcilerFanOutProps, ReconcilerTriggerProps } from './props';
import { deadLetterQueue, reconcilerQueue, SQS_EVENT_SOURCE_MAX_RECEIVES, SQS_EVENT_SOURCE_VISIBILITY_FACTOR } from './queues';
import type { ResolvedSettings } from './settings';

/** The queues of events mode. */
export interface EventQueues {
  readonly eventsQueue: sqs.Queue;
  readonly eventsDeadLetterQueue: sqs.Queue;
}

/** The events queue (`Events`) and its dead-letter queue (`EventsDeadLetters`). */
export function createEventQueues(scope: Construct, settings: ResolvedSettings): EventQueues {
  const eventsDeadLetterQueue = deadLetterQueue(scope, 'EventsDeadLetters');
  const eventsQueue = reconcilerQueue(scope, 'Events', {
    // A hint older than the resync interval says nothing the rotation has not re-read.
    retentionPeriod: Duration.minutes(Math.max(60, settings.resyncMinutes * 2)),
    // A message the pass received but could not act on comes back for the next pass.
    visibilityTimeout: Duration.seconds(settings.timeoutSeconds),
    deadLetterQueue: { queue: eventsDeadLetterQueue, maxReceiveCount: 5 },
  });
  return { eventsQueue, eventsDeadLetterQueue };
}

/**
 * The events fast path (`EventsFastPath` queue and `EventsFastPathMapping`), unless
 * `eventsFastPath: false`.
 * @throws EcsReconcilerPropsError for `eventsFastPath` without events mode.
 */
export function createEventsFastPath(scope: Construct, props: ReconcilerTriggerProps, settings: ResolvedSettings, fn: lambda.IFunction, role: iam.Role, queues?: EventQueues): sqs.Queue | undefined {
  if (props.eventsFastPath && !queues) {
    throw new EcsReconcilerPropsError(['`eventsFastPath` needs events mode: set `events: true` (the default) or leave `eventsFastPath` unset.']);
  }
  if (!queues || !(props.eventsFastPath ?? true)) return undefined;
  // Lambda Developer Guide ("Creating and configuring an Amazon SQS event source mapping"): a
  // visibility timeout of at least six times the function timeout, so a batch held back while
  // the function is throttled or still running is not received again meanwhile, and several
  // receives before the dead-letter queue. The retention outlasts every receive, so a message
  // that keeps failing reaches the dead-letter queue (and its alarm) instead of expiring
  // unseen; a late hint costs one restricted pass over services the schedule reads anyway.
  const fastVisibilitySeconds = settings.timeoutSeconds * SQS_EVENT_SOURCE_VISIBILITY_FACTOR;
  const queue = reconcilerQueue(scope, 'EventsFastPath', {
    retentionPeriod: Duration.seconds(Math.max(settings.scheduleMinutes * 120, fastVisibilitySeconds * SQS_EVENT_SOURCE_MAX_RECEIVES + 60)),
    visibilityTimeout: Duration.seconds(fastVisibilitySeconds),
    deadLetterQueue: { queue: queues.eventsDeadLetterQueue, maxReceiveCount: SQS_EVENT_SOURCE_MAX_RECEIVES },
  });
  new lambda.EventSourceMapping(scope, 'EventsFastPathMapping', {
    target: fn,
    eventSourceArn: queue.queueArn,
    // Up to 100 events a batch, gathered for at most a second: a rollout's burst of task
    // events is one restricted pass, not a hundred.
    batchSize: 100,
    maxBatchingWindow: Duration.seconds(1),
    // At most two batches at once (SQS's minimum); they share the pass's lease anyway.
    maxConcurrency: 2,
  });
  // What Lambda's SQS poller needs, on this queue only (Lambda Developer Guide, "Using Lambda
  // with Amazon SQS", execution role permissions).
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'EventsFastPathQueueRead',
      actions: ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'],
      resources: [queue.queueArn],
    }),
  );
  return queue;
}

/**
 * An EventBridge pattern as JSON (`EVENT_RULES`) in CDK's `EventPattern` shape: `detail-type` is
 * CDK's `detailType`; the other fields, and the operators inside them, render as written.
 */
export function cdkEventPattern(pattern: EventPattern): events.EventPattern {
  const { 'detail-type': detailType, ...rest } = pattern as Record<string, unknown>;
  return { ...rest, ...(detailType !== undefined ? { detailType: detailType as string[] } : {}) } as events.EventPattern;
}

/**
 * The rules of events mode, each delivering the event itself into the events queue (EventBridge
 * adds the queue policy for events.amazonaws.com, scoped to each rule's ARN) and, with the events
 * fast path, into its queue: ECS's service actions and deployment state changes; stopped tasks
 * of services; the CloudTrail events of the ECS writes in `ECS_WRITE_EVENT_NAMES` (patterns:
 * `EVENT_RULES` in `lambda/core/events.ts`, which the local run's bus matches too); and a
 * heartbeat every schedule interval, which tells the function that the rules deliver (without it
 * the pass polls). Event shapes: docs/events.md.
 */
export function buildEventRules(scope: Construct, queues: EventQueues, scheduleMinutes: number, fastPathQueue?: sqs.Queue): events.Rule[] {
  // An event EventBridge could not deliver after its retries goes to the events dead-letter
  // queue (alarmed), not nowhere (EventBridge User Guide, "Using dead-letter queues to process
  // undelivered events in EventBridge").
  const deadLetterQueue = queues.eventsDeadLetterQueue;
  const target = () => new targets.SqsQueue(queues.eventsQueue, { retryAttempts: 2, maxEventAge: Duration.hours(1), deadLetterQueue });
  // The fast path's copy is worth seconds: not retried for long.
  const fastTarget = (q: sqs.Queue) => new targets.SqsQueue(q, { retryAttempts: 2, maxEventAge: Duration.minutes(5), deadLetterQueue });
  return [
    ...Object.entries(EVENT_RULES).map(
      ([id, rule]) =>
        new events.Rule(scope, id, {
          description: rule.description,
          eventPattern: cdkEventPattern(rule.pattern),
          targets: [target(), ...(fastPathQueue ? [fastTarget(fastPathQueue)] : [])],
        }),
    ),
    new events.Rule(scope, 'EventsHeartbeat', {
      description: 'ecs-reconciler: heartbeat into the events queue (proves the rules deliver)',
      schedule: events.Schedule.rate(Duration.minutes(scheduleMinutes)),
      targets: [target()],
    }),
  ];
}

/**
 * The default event bus's statement (`TargetEventsPolicy`) letting the target accounts put ECS's
 * events on it: the `targets` prop's accounts and `eventSourceAccounts`, but the stack's own.
 * @throws EcsReconcilerPropsError for a bad account id, or `eventSourceAccounts` without the events fast path.
 */
export function createTargetEventsPolicy(
  scope: Construct,
  props: ReconcilerFanOutProps,
  eventsFastPathQueue: sqs.Queue | undefined,
): events.CfnEventBusPolicy | undefined {
  const stack = Stack.of(scope);
  const eventAccounts = [...new Set([...(props.targets ?? []).map((t) => t.account), ...(props.eventSourceAccounts ?? [])])].filter((a) => a !== stack.account);
  const badAccounts = (props.eventSourceAccounts ?? []).filter((a) => !/^\d{12}$/.test(a));
  if (badAccounts.length > 0) throw new EcsReconcilerPropsError([`eventSourceAccounts: ${badAccounts.map((a) => `"${a}"`).join(', ')} is not a 12-digit account id.`]);
  if (props.eventSourceAccounts?.length && !eventsFastPathQueue) {
    throw new EcsReconcilerPropsError(['`eventSourceAccounts` needs the events fast path: leave `events` and `eventsFastPath` on.']);
  }
  if (!eventsFastPathQueue || eventAccounts.length === 0) return undefined;
  // The receiving bus's resource policy (EventBridge User Guide, "Sending and receiving events
  // between AWS accounts in Amazon EventBridge"; "Permissions for Amazon EventBridge event
  // buses"): the target accounts may put ECS's events on this account's default bus, nothing
  // else; the rules above match them as they match this account's, and the function routes
  // each event to its target by its account and Region.
  return new events.CfnEventBusPolicy(scope, 'TargetEventsPolicy', {
    eventBusName: 'default',
    statementId: `ecs-reconciler-targets-${Names.uniqueId(scope).slice(-24)}`.slice(0, 64),
    statement: {
      Effect: 'Allow',
      Principal: { AWS: eventAccounts.map((a) => `arn:${stack.partition}:iam::${a}:root`) },
      Action: 'events:PutEvents',
      Resource: `arn:${stack.partition}:events:${stack.region}:${stack.account}:event-bus/default`,
      Condition: { StringEquals: { 'events:source': ['aws.ecs'] } },
    },
  });
}

/**
 * Least privilege for the pass's own reads of the events queue: receive and delete on it only
 * (DeleteMessageBatch needs sqs:DeleteMessage; Amazon SQS Developer Guide, "Amazon SQS API permissions").
 */
export function grantEventsQueue(role: iam.Role, queue: sqs.Queue): void {
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'EventsQueueReceiveDelete',
      actions: ['sqs:ReceiveMessage', 'sqs:DeleteMessage'],
      resources: [queue.queueArn],
    }),
  );
}

/**
 * Events on: the simulator's events reach the reconciler as in AWS and as in the
 * local run (`local/stack.ts`): a local EventBridge bus with the construct's own rule patterns
 * (`EVENT_RULES`) delivers what matches into a local SQS queue, which the worker reads through the
 * Lambda's unmodified `SqsEventFeed`; the heartbeat rule's `Scheduled Event` goes in just before
 * each pass, as the construct's schedule puts it. The reconciler calls ECS with the local
 * reconciler's key, so its own CloudTrail events carry its role and are ignored
 * (`EVENTS_IGNORE_PRINCIPALS`); hand edits come from the console user.
 */
import { ENV } from '../lambda/config';
import { EVENT_RULES } from '../lambda/core/events';
import { LocalEventBridge } from '../local/eventbridge';
import { LocalSqs } from '../local/sqs';
import { LOCAL_EVENTS_DLQ, LOCAL_EVENTS_QUEUE, LOCAL_HEARTBEAT_RULE, LOCAL_RECONCILER_ROLE_NAME } from '../local/stack';
import { LAMBDA_TIMEOUT_SECONDS, type EventsFeedSetup } from './pass-bench';

/** Receives before a message goes to the dead-letter queue (the construct's queue). */
const MAX_RECEIVE_COUNT = 5;

/** The simulator's events through the local bus and queue; subscribed only while events are on. */
export const simulatorEventsFeed: EventsFeedSetup = {
  async start(fleet) {
    const sim = fleet.stack.sim;
    const sqs = new LocalSqs({ accountId: sim.accountId, region: sim.region, nowMs: () => sim.clock.nowMs() });
    await sqs.start(0, '--sqs-port');
    sqs.createQueue(LOCAL_EVENTS_DLQ);
    const queueUrl = sqs.createQueue(LOCAL_EVENTS_QUEUE, { visibilityTimeoutSeconds: LAMBDA_TIMEOUT_SECONDS, maxReceiveCount: MAX_RECEIVE_COUNT, deadLetterQueue: LOCAL_EVENTS_DLQ });
    const bus = new LocalEventBridge({ account: sim.accountId, region: sim.region });
    for (const [name, rule] of Object.entries(EVENT_RULES)) bus.addRule({ name, pattern: rule.pattern, target: (body) => void sqs.send(LOCAL_EVENTS_QUEUE, body) });
    // While `dropEvents(true)`: every ECS event is lost on its way (the rules or the queue failing), the heartbeat still arrives.
    let dropping = false;
    const unsubscribe = sim.events.subscribe((e) => {
      if (!dropping) void bus.put(e as unknown as Record<string, unknown>);
    });
    return {
      env: {
        [ENV.eventsQueueUrl]: queueUrl,
        [ENV.eventsIgnorePrincipals]: `arn:aws:iam::${sim.accountId}:role/${LOCAL_RECONCILER_ROLE_NAME}`,
      },
      sqsEndpoint: sqs.endpoint,
      beforePass: async () => bus.schedule(LOCAL_HEARTBEAT_RULE, sim.clock.now(), (body) => void sqs.send(LOCAL_EVENTS_QUEUE, body)),
      dropEvents: (drop) => {
        dropping = drop;
      },
      close: async () => {
        unsubscribe();
        await sqs.close();
      },
    };
  },
};

/**
 * One slow target never delays another (from a breaker's finding): in fan-out mode a
 * fast-path message (a spec edit's keys, or a target's ECS events) whose services' fences another
 * pass holds (`lambda/core/fast-path.ts`) does not wait for them inside its invocation, which would hold one of the event source mapping's
 * `maximumConcurrency` slots: it tries once and goes back to the fan-out queue with a delay
 * (`requeueAfterLeaseHeld`). Before, each waited up to 30 s; six of them at concurrency 2 held both
 * slots for 90 s and the healthy target's scheduled message started after a schedule interval and
 * was dropped as stale (the breaker's test, kept here as the first case).
 *
 * Real servers: dynalite (spec table, leases), the ECS simulator (the targets' accounts), the
 * function's TargetRunner fed by `deliver` (the local stand-in for the mapping's
 * MaximumConcurrency, here 2, the construct's minimum) and the in-memory fan-out queue, which
 * honours a message's delay as SQS does; moto's SQS for SqsFanOutQueue's `DelaySeconds`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DeleteCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SqsFanOutQueue, TargetRunner, type TargetPassResult } from '../../lambda/adapters/fan-out';
import { RecordingLog } from '../../lambda/adapters/logger';
import { InMemoryMetricsSink } from '../../lambda/adapters/metrics';
import { ENV, loadConfig, type ReconcilerConfig } from '../../lambda/config';
import { LEASE_HELD_REQUEUE_DELAYS_SECONDS } from '../../lambda/core/fan-out';
import { FAN_OUT_MESSAGE_KIND, type FanOutMessage, type Target } from '../../lambda/core/targets';
import { startEmbeddedDynamoDb, type EmbeddedDynamoDb } from '../../local/embedded-dynamodb';
import { deliver, InMemoryFanOutQueue } from '../../local/fan-out';
import { startSimulator, type Simulator } from '../../local/sim';
import { startMoto, type MotoServer } from '../support/moto';
import { needs } from '../support/tools';
import { aSpecItem, createSpecsTable, LOCAL, localDoc } from './support';

const TABLE = 'fanout-lease-held';
// The fence of slow's service jobs/web (lambda/adapters/fence-items.ts): a pass acting on it holds it.
const SLOW_FENCE = { cluster: '#fence', service: 'service#slow/jobs#web' };

describe("a target whose service fences are held never holds a fan-out slot: its fast-path messages go back to the queue", () => {
  let db: EmbeddedDynamoDb;
  let sim: Simulator;
  let doc: DynamoDBDocumentClient;
  let config: ReconcilerConfig;

  beforeAll(async () => {
    [db, sim] = await Promise.all([startEmbeddedDynamoDb(0), startSimulator({ port: 0, seed: 3, clusters: ['apps', 'jobs'], region: 'eu-west-1' })]);
    await createSpecsTable(db.endpoint, TABLE);
    doc = localDoc(db.endpoint);
    config = loadConfig({
      [ENV.specsTable]: TABLE,
      [ENV.ownerId]: 'lease-held',
      [ENV.region]: 'us-east-1',
      [ENV.fanOutQueueUrl]: 'http://local/fan-out',
      [ENV.targets]: JSON.stringify([
        { name: 'slow', account: '222222222222', region: 'eu-central-1', clusters: ['jobs'], roleArn: 'arn:aws:iam::222222222222:role/ecs-reconciler-target' },
        { name: 'staging', account: '333333333333', region: 'eu-west-1', clusters: ['apps'], roleArn: 'arn:aws:iam::333333333333:role/ecs-reconciler-target' },
      ]),
    });
    // One simulator stands for both accounts: slow's services in cluster jobs, staging's in apps.
    await doc.send(new PutCommand({ TableName: TABLE, Item: aSpecItem({ cluster: 'slow/jobs', service: 'web' }) }));
    await doc.send(new PutCommand({ TableName: TABLE, Item: aSpecItem({ cluster: 'staging/apps', service: 'web' }) }));
    // The slow target's long scheduled pass acts on its service (another invocation, for minutes): it holds the service's fence.
    const expiresAt = Date.now() + 10 * 60_000;
    await doc.send(new PutCommand({ TableName: TABLE, Item: { ...SLOW_FENCE, holder: 'long-scheduled-pass:slow', expiresAt, expiresAtIso: new Date(expiresAt).toISOString(), gen: 1 } }));
  }, 120_000);

  afterAll(async () => {
    doc?.destroy();
    await Promise.all([sim?.close(), db?.stop()]);
  });

  it("six events messages of the slow target end at once, go back to the queue delayed, and the healthy target's scheduled pass runs; once the fence is free they run; past the last delay one is dropped", async () => {
    // Prepare: the queue on a clock the test moves; the runner as the handler builds it (requeue = the fan-out queue)
    let skewMs = 0;
    const queue = new InMemoryFanOutQueue(() => Date.now() + skewMs);
    const log = new RecordingLog();
    const runner = new TargetRunner(config, {
      doc,
      metrics: new InMemoryMetricsSink(),
      log,
      ecsClientConfigFor: () => ({ endpoint: sim.endpoint, credentials: LOCAL.credentials }),
      credentialsFor: () => async () => LOCAL.credentials,
      requeue: queue,
    });
    const target = (name: string) => config.fanOut!.propTargets.flatMap((r) => (r.ok && r.target.name === name ? [r.target] : []))[0] as Target;
    const declared = ['default', 'slow', 'staging'];
    const sentAt = new Date().toISOString();
    const eventsMessage = (): FanOutMessage => ({ kind: FAN_OUT_MESSAGE_KIND, target: target('slow'), sentAt, keys: [{ cluster: 'jobs', service: 'web' }], fromEvents: true, declared });
    // Six events batches during slow's rollout (one a second in AWS), then the next tick's message for staging.
    const messages: FanOutMessage[] = [...Array.from({ length: 6 }, eventsMessage), { kind: FAN_OUT_MESSAGE_KIND, target: target('staging'), sentAt, declared }];
    const run = (m: FanOutMessage) => runner.run(m, { holder: `req:${m.target.name}`, leaseTtlSeconds: 60 });
    const resultOf = (d: Awaited<ReturnType<typeof deliver<TargetPassResult>>>[number]) => ('result' in d ? d.result : { outcome: 'threw', error: String(d.error) });

    try {
      // Act 1: the mapping at MaximumConcurrency 2
      const ended = await deliver(messages, 2, run);
      const waitingRightAway = queue.take();

      // Assess 1: staging's scheduled pass ran; every slow message went back with the first delay
      const staging = ended.filter((d) => d.message.target.name === 'staging').map(resultOf);
      expect(staging).toMatchObject([{ outcome: 'pass', fastPath: false, summary: { outcome: 'completed' } }]);
      expect(ended.filter((d) => d.message.target.name === 'slow').map(resultOf)).toEqual(
        Array.from({ length: 6 }, () => ({ outcome: 'requeued', target: 'slow', delaySeconds: LEASE_HELD_REQUEUE_DELAYS_SECONDS[0], leaseTries: 1 })),
      );
      expect(waitingRightAway).toEqual([]);
      expect(queue.delayed).toBe(6);
      expect(sim.calls({ action: 'DescribeServices' }).filter((c) => c.request.cluster === 'jobs')).toEqual([]);

      // Act 2: the delay passes with the lease still held: one message goes back again, with the next delay
      skewMs += LEASE_HELD_REQUEUE_DELAYS_SECONDS[0] * 1000;
      const back = queue.take();
      const again = await run(back[0]);

      // Assess 2
      expect(back.map((m) => m.leaseTries)).toEqual([1, 1, 1, 1, 1, 1]);
      expect(again).toEqual({ outcome: 'requeued', target: 'slow', delaySeconds: LEASE_HELD_REQUEUE_DELAYS_SECONDS[1], leaseTries: 2 });

      // Act 3: a message that has used every delay finds the lease held once more
      const last = { ...back[1], leaseTries: LEASE_HELD_REQUEUE_DELAYS_SECONDS.length };
      const dropped = await run(last);

      // Assess 3: dropped (nothing sent back), with a line saying who reads its services instead
      expect(dropped).toMatchObject({ outcome: 'pass', fastPath: true, summary: { outcome: 'lease-held' } });
      expect(queue.size).toBe(1);
      expect(log.lines.some((l) => /dropped/.test(l.message) && /scheduled passes/.test(String(l.fields?.coveredBy)))).toBe(true);

      // Act 4: the long pass ends (its fence is released); the messages sent back run once their delay passes
      await doc.send(new DeleteCommand({ TableName: TABLE, Key: SLOW_FENCE }));
      skewMs += LEASE_HELD_REQUEUE_DELAYS_SECONDS[1] * 1000;
      const rerun = await deliver([...back.slice(2), ...queue.take()], 2, run);

      // Assess 4: each ran slow's fast path (which read its service in slow's account)
      expect(rerun.map(resultOf)).toMatchObject(Array.from({ length: 5 }, () => ({ outcome: 'pass', target: 'slow', fastPath: true, summary: { outcome: 'completed' } })));
      expect(sim.calls({ action: 'DescribeServices' }).filter((c) => c.request.cluster === 'jobs').length).toBeGreaterThan(0);
      expect(queue.size).toBe(0);
    } finally {
      runner.destroy();
    }
  }, 240_000);
});

describe("SqsFanOutQueue's delay is SQS's DelaySeconds (moto)", needs('moto'), () => {
  let moto: MotoServer;
  let sqs: SQSClient;

  beforeAll(async () => {
    moto = await startMoto();
    sqs = new SQSClient({ ...LOCAL, endpoint: moto.endpoint });
  }, 120_000);

  afterAll(async () => {
    sqs?.destroy();
    await moto?.stop();
  });

  it('a delayed message is not received while its delay runs; an undelayed one is', async () => {
    // Prepare
    const queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'fanout-delay' }))).QueueUrl!;
    const queue = new SqsFanOutQueue(sqs, queueUrl);
    const message = (name: string, leaseTries?: number): FanOutMessage => ({
      kind: FAN_OUT_MESSAGE_KIND,
      target: { name, account: '222222222222', region: 'eu-west-1', clusters: [], roleArn: 'arn:aws:iam::222222222222:role/ecs-reconciler-target', source: 'prop' },
      sentAt: new Date().toISOString(),
      keys: [{ cluster: 'apps', service: 'web' }],
      declared: ['default', name],
      ...(leaseTries ? { leaseTries } : {}),
    });

    // Act: one message delayed 900 s (SQS's maximum, so no machine is slow enough to see it early), one not
    const delayed = await queue.send([message('slow', 1)], { delaySeconds: 900 });
    const now = await queue.send([message('staging')]);
    const received = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10 }));
    const attributes = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessagesDelayed'] }));

    // Assess
    expect([delayed, now]).toEqual([{ failed: [] }, { failed: [] }]);
    expect((received.Messages ?? []).map((m) => (JSON.parse(m.Body!) as FanOutMessage).target.name)).toEqual(['staging']);
    expect(attributes.Attributes?.ApproximateNumberOfMessagesDelayed).toBe('1');
  }, 120_000);
});

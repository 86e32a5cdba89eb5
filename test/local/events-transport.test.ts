/**
 * The local run's event transport: the local EventBridge bus matches events as
 * EventBridge's content filtering does, with the construct's own rules (`EVENT_RULES`), and the
 * local SQS server answers the calls of the reconciler's unmodified `SqsEventFeed` (the Lambda's
 * adapter) with SQS's visibility timeout, dead-letter queue and error semantics.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetQueueAttributesCommand, SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { SqsFanOutQueue } from '../../lambda/adapters/fan-out';
import { FAN_OUT_MESSAGE_KIND, type FanOutMessage } from '../../lambda/core/targets';
import { afterEach, describe, expect, it } from 'vitest';
import { SqsEventFeed } from '../../lambda/adapters/sqs-event-feed';
import { EVENT_RULES } from '../../lambda/core/events';
import { LocalEventBridge, matchesPattern, UnsupportedPatternError } from '../../local/eventbridge';
import { LocalSqs } from '../../local/sqs';

type Json = Record<string, unknown>;
const fixture = (name: string) => JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'events', name), 'utf8')) as Json;
const withDetail = (name: string, detail: Json) => {
  const f = fixture(name);
  return { ...f, detail: { ...(f.detail as Json), ...detail } };
};

describe('matchesPattern (EventBridge User Guide, "Content filtering in Amazon EventBridge event patterns")', () => {
  it.each([
    { what: 'a value in the list', pattern: { source: ['aws.ecs', 'aws.ec2'] }, event: { source: 'aws.ecs' }, match: true },
    { what: 'a value not in the list', pattern: { source: ['aws.ec2'] }, event: { source: 'aws.ecs' }, match: false },
    { what: 'a missing field', pattern: { source: ['aws.ecs'] }, event: {}, match: false },
    { what: 'an array value: any element', pattern: { resources: ['b'] }, event: { resources: ['a', 'b'] }, match: true },
    { what: 'nested fields', pattern: { detail: { lastStatus: ['STOPPED'] } }, event: { detail: { lastStatus: 'STOPPED' } }, match: true },
    { what: 'a nested field of a missing object', pattern: { detail: { lastStatus: ['STOPPED'] } }, event: {}, match: false },
    { what: 'prefix', pattern: { g: [{ prefix: 'service:' }] }, event: { g: 'service:web' }, match: true },
    { what: 'prefix, not', pattern: { g: [{ prefix: 'service:' }] }, event: { g: 'family:web' }, match: false },
    { what: 'prefix of a number', pattern: { g: [{ prefix: '1' }] }, event: { g: 12 }, match: false },
    { what: 'suffix', pattern: { g: [{ suffix: '.png' }] }, event: { g: 'a.png' }, match: true },
    { what: 'equals-ignore-case', pattern: { g: [{ 'equals-ignore-case': 'STOPPED' }] }, event: { g: 'stopped' }, match: true },
    { what: 'anything-but a value', pattern: { g: [{ 'anything-but': 'a' }] }, event: { g: 'b' }, match: true },
    { what: 'anything-but a listed value', pattern: { g: [{ 'anything-but': ['a', 'b'] }] }, event: { g: 'b' }, match: false },
    { what: 'anything-but a prefix', pattern: { g: [{ 'anything-but': { prefix: '#' } }] }, event: { g: '#lease' }, match: false },
    { what: 'anything-but of a missing field', pattern: { g: [{ 'anything-but': 'a' }] }, event: {}, match: false },
    { what: 'exists: true', pattern: { g: [{ exists: true }] }, event: { g: 'x' }, match: true },
    { what: 'exists: false', pattern: { g: [{ exists: false }] }, event: {}, match: true },
    { what: 'exists: false of a present field', pattern: { g: [{ exists: false }] }, event: { g: 'x' }, match: false },
    { what: 'null', pattern: { g: [null] }, event: { g: null }, match: true },
    { what: 'every field must match', pattern: { a: ['1'], b: ['2'] }, event: { a: '1', b: '3' }, match: false },
  ])('$what', ({ pattern, event, match }) => {
    expect(matchesPattern(pattern as Json, event)).toBe(match);
  });

  it('refuses what it does not implement, naming it', () => {
    expect(() => matchesPattern({ n: [{ numeric: ['>', 0] }] }, { n: 1 })).toThrow(UnsupportedPatternError);
    expect(() => matchesPattern({ n: [{ numeric: ['>', 0] }] }, { n: 1 })).toThrow(/"numeric" operator/);
    expect(() => matchesPattern({ $or: [] }, {})).toThrow(/\$or/);
  });
});

describe("the bus with the construct's rules", () => {
  const bus = () => {
    const delivered: string[] = [];
    const b = new LocalEventBridge({ account: '123456789012', region: 'us-east-1' });
    for (const [name, rule] of Object.entries(EVENT_RULES)) b.addRule({ name, pattern: rule.pattern, target: (body) => delivered.push(`${name} ${body}`) });
    return { b, delivered };
  };

  it.each([
    ['ecs-service-action.json', 'EcsServiceEvents'],
    ['ecs-deployment-state-change.json', 'EcsServiceEvents'],
    ['ecs-task-state-change-stopped.json', 'EcsStoppedTasks'],
    ['cloudtrail-update-service.json', 'EcsWrites'],
    ['cloudtrail-stop-task.json', 'EcsWrites'],
    ['cloudtrail-register-task-definition.json', 'EcsWrites'],
  ])('delivers the AWS example %s (rule %s), the event itself as the body', (file, rule) => {
    const { b, delivered } = bus();
    expect(b.put(fixture(file))).toEqual([rule]);
    expect(JSON.parse(delivered[0].slice(rule.length + 1))).toEqual(fixture(file));
  });

  it.each([
    ['a RUNNING task', withDetail('ecs-task-state-change-stopped.json', { lastStatus: 'RUNNING' })],
    ['a stopped task of no service', withDetail('ecs-task-state-change-stopped.json', { group: 'family:web' })],
    ['a CloudTrail write the rules do not watch', withDetail('cloudtrail-update-service.json', { eventName: 'CreateCluster' })],
    ['another source', { ...fixture('ecs-service-action.json'), source: 'aws.ec2' }],
  ])('does not deliver %s', (_what, event) => {
    const { b, delivered } = bus();
    expect(b.put(event)).toEqual([]);
    expect(delivered).toEqual([]);
    expect(b.counts).toMatchObject({ put: 1, delivered: 0, unmatched: 1 });
  });

  it('the heartbeat is a Scheduled Event of source aws.events naming the rule, like the document', () => {
    const b = new LocalEventBridge({ account: '123456789012', region: 'us-east-1' });
    let body = '';
    b.schedule('hb', new Date('2026-01-01T00:01:30.250Z'), (x) => (body = x));
    const e = JSON.parse(body) as Json;
    expect(Object.keys(e).sort()).toEqual(Object.keys(fixture('scheduled-event.json')).sort());
    expect(e).toMatchObject({ 'detail-type': 'Scheduled Event', source: 'aws.events', time: '2026-01-01T00:01:30Z', resources: ['arn:aws:events:us-east-1:123456789012:rule/hb'], detail: {} });
  });
});

describe("the local SQS server answers the Lambda's SqsEventFeed", () => {
  let sqs: LocalSqs | undefined;
  let client: SQSClient | undefined;
  let now = Date.parse('2026-01-01T00:00:00Z');
  afterEach(async () => {
    client?.destroy();
    await sqs?.close();
  });
  const start = async () => {
    sqs = new LocalSqs({ accountId: '123456789012', region: 'us-east-1', nowMs: () => now });
    await sqs.start();
    sqs.createQueue('dlq');
    const url = sqs.createQueue('q', { visibilityTimeoutSeconds: 50, maxReceiveCount: 5, deadLetterQueue: 'dlq' });
    client = new SQSClient({ region: 'us-east-1', endpoint: sqs.endpoint, credentials: { accessKeyId: 'k', secretAccessKey: 's' }, maxAttempts: 1 });
    return { s: sqs, feed: new SqsEventFeed(client, url), url };
  };

  it('receives up to max in batches of 10 (MD5 checked by the SDK), deletes what is acknowledged', async () => {
    const { s, feed } = await start();
    for (let i = 0; i < 25; i++) s.send('q', JSON.stringify({ n: i }));
    const got = await feed.receive({ max: 23, shouldContinue: () => true });
    expect(got).toMatchObject({ readable: true });
    expect(got.messages.map((m) => (JSON.parse(m.body) as { n: number }).n)).toEqual([...Array(23).keys()]);
    expect(s.callCounts.get('ReceiveMessage')).toBe(3);
    expect(await feed.acknowledge(got.messages.slice(0, 12).map((m) => m.handle))).toEqual({});
    expect(s.depth('q')).toEqual({ visible: 2, inFlight: 11 });
    expect(s.callCounts.get('DeleteMessageBatch')).toBe(2);
  });

  it('a message not deleted comes back after the visibility timeout, and after 5 receives goes to the dead-letter queue', async () => {
    const { s, feed } = await start();
    s.send('q', 'hint');
    for (let receive = 1; receive <= 5; receive++) {
      const got = await feed.receive({ max: 10, shouldContinue: () => true });
      expect(got.messages.map((m) => m.body), `receive ${receive}`).toEqual(['hint']);
      expect((await feed.receive({ max: 10, shouldContinue: () => true })).messages).toEqual([]); // invisible
      now += 49_000;
      expect((await feed.receive({ max: 10, shouldContinue: () => true })).messages).toEqual([]);
      now += 1_000;
    }
    expect((await feed.receive({ max: 10, shouldContinue: () => true })).messages).toEqual([]);
    expect(s.bodies('dlq')).toEqual(['hint']);
  });

  it('a stale receipt handle deletes nothing (the message was received again since)', async () => {
    const { s, feed } = await start();
    s.send('q', 'hint');
    const first = await feed.receive({ max: 1, shouldContinue: () => true });
    now += 50_000;
    await feed.receive({ max: 1, shouldContinue: () => true });
    expect(await feed.acknowledge(first.messages.map((m) => m.handle))).toEqual({});
    expect(s.depth('q')).toEqual({ visible: 0, inFlight: 1 });
  });

  it('a queue that does not exist is unreadable, with SQS\'s error in the reason', async () => {
    const { s } = await start();
    const feed = new SqsEventFeed(client as SQSClient, s.queueUrl('missing'));
    const got = await feed.receive({ max: 10, shouldContinue: () => true });
    expect(got.readable).toBe(false);
    expect(got.error).toMatch(/The specified queue does not exist/);
  });

  it('SendMessage and GetQueueAttributes as the SDK calls them', async () => {
    const { s, url } = await start();
    await (client as SQSClient).send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'x' }));
    const attrs = await (client as SQSClient).send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }));
    expect(attrs.Attributes).toMatchObject({ ApproximateNumberOfMessages: '1', VisibilityTimeout: '50' });
    expect(s.bodies('q')).toEqual(['x']);
  });

  it("SendMessageBatch as the fan-out's SqsFanOutQueue sends it: 10 entries a call, MD5s checked by the SDK, order kept", async () => {
    // Prepare: 12 targets' messages, as the dispatcher sends them every tick
    const { s, url } = await start();
    const messages: FanOutMessage[] = Array.from({ length: 12 }, (_, i) => ({
      kind: FAN_OUT_MESSAGE_KIND,
      target: { name: `t${i}`, account: '222222222222', region: 'eu-west-1', clusters: [], roleArn: 'arn:aws:iam::222222222222:role/ecs-reconciler-target', source: 'table' },
      sentAt: '2026-01-01T00:00:00.000Z',
      declared: [],
    }));

    // Act
    const sent = await new SqsFanOutQueue(client as SQSClient, url).send(messages);

    // Assess
    expect(sent).toEqual({ failed: [] });
    expect(s.callCounts.get('SendMessageBatch')).toBe(2);
    expect(s.bodies('q').map((b) => (JSON.parse(b) as FanOutMessage).target.name)).toEqual(messages.map((m) => m.target.name));
  });

  it("DelaySeconds (SQS message timers): SqsFanOutQueue's delayed messages are not received before their delay; a delay outside 0-900 fails that entry or call", async () => {
    // Prepare: a fast-path message sent back to the queue with a 5 s delay, as the fan-out does when its lease is held
    const { s, url, feed } = await start();
    const message: FanOutMessage = {
      kind: FAN_OUT_MESSAGE_KIND,
      target: { name: 'slow', account: '222222222222', region: 'eu-west-1', clusters: [], roleArn: 'arn:aws:iam::222222222222:role/ecs-reconciler-target', source: 'table' },
      sentAt: '2026-01-01T00:00:00.000Z',
      keys: [{ cluster: 'apps', service: 'web' }],
      declared: [],
      leaseTries: 1,
    };

    // Act
    const sent = await new SqsFanOutQueue(client as SQSClient, url).send([message], { delaySeconds: 5 });
    const before = await feed.receive({ max: 10, shouldContinue: () => true });
    now += 4_999;
    const justBefore = await feed.receive({ max: 10, shouldContinue: () => true });
    now += 1;
    const after = await feed.receive({ max: 10, shouldContinue: () => true });

    // Assess
    expect(sent).toEqual({ failed: [] });
    expect([before.messages.length, justBefore.messages.length]).toEqual([0, 0]);
    expect(after.messages.map((m) => JSON.parse(m.body) as FanOutMessage)).toEqual([message]);
    const c = client as SQSClient;
    await expect(c.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'x', DelaySeconds: 901 }))).rejects.toMatchObject({ name: 'InvalidParameterValue' });
    const out = await c.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: [{ Id: 'a', MessageBody: 'one', DelaySeconds: 900 }, { Id: 'b', MessageBody: 'two', DelaySeconds: -1 }] }));
    expect(out.Successful?.map((e) => e.Id)).toEqual(['a']);
    expect(out.Failed?.map((e) => e.Code)).toEqual(['InvalidParameterValue']);
    expect(s.depth('q')).toEqual({ visible: 0, inFlight: 2 });
    await expect(new SqsFanOutQueue(c, url).send([message], { delaySeconds: 1.5 })).rejects.toThrow(RangeError);
  });

  it('SendMessageBatch: a bad entry fails alone; duplicate ids, no entries or more than 10 fail the call, with SQS\'s error types', async () => {
    const { s, url } = await start();
    const c = client as SQSClient;
    const out = await c.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: [{ Id: 'a', MessageBody: 'one' }, { Id: 'b', MessageBody: '' }] }));
    expect(out.Successful?.map((e) => e.Id)).toEqual(['a']);
    expect(out.Failed).toEqual([{ Id: 'b', SenderFault: true, Code: 'MissingParameter', Message: 'The request must contain the parameter MessageBody.' }]);
    expect(s.bodies('q')).toEqual(['one']);
    await expect(c.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: [{ Id: 'a', MessageBody: 'x' }, { Id: 'a', MessageBody: 'y' }] }))).rejects.toMatchObject({ name: 'BatchEntryIdsNotDistinct' });
    await expect(c.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: [] }))).rejects.toMatchObject({ name: 'EmptyBatchRequest' });
    await expect(c.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: Array.from({ length: 11 }, (_, i) => ({ Id: `m${i}`, MessageBody: 'x' })) }))).rejects.toMatchObject({ name: 'TooManyEntriesInBatchRequest' });
    await expect(c.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: [{ Id: 'not ok!', MessageBody: 'x' }] }))).rejects.toMatchObject({ name: 'InvalidBatchEntryId' });
    expect(s.bodies('q')).toEqual(['one']);
  });
});

/**
 * The SQS event feed against moto's SQS (a real protocol server on loopback): receive in batches
 * of 10 until empty, delete by handle, a missing queue and a denied one reported as unreadable.
 */
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqsClient, SqsEventFeed } from '../../lambda/adapters/sqs-event-feed';
import { startMoto, type MotoServer } from '../support/moto';
import { needs } from '../support/tools';

let moto: MotoServer;
let sqs: SQSClient;

async function queueWith(name: string, bodies: string[]): Promise<string> {
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: { VisibilityTimeout: '30' } }));
  for (const MessageBody of bodies) await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody }));
  return QueueUrl!;
}

async function visible(queueUrl: string): Promise<number> {
  const out = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }));
  return Number(out.Attributes?.ApproximateNumberOfMessages);
}

describe('SqsEventFeed on moto', needs('moto'), () => {
  beforeAll(async () => {
    moto = await startMoto();
    sqs = createSqsClient({ endpoint: moto.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
  }, 60_000);

  afterAll(async () => {
    sqs?.destroy();
    await moto?.stop();
  });

  it('receives every message in batches of 10, stops at empty, and deletes what it is told', async () => {
    // Prepare
    const url = await queueWith('events-a', Array.from({ length: 23 }, (_, i) => JSON.stringify({ n: i })));
    const feed = new SqsEventFeed(sqs, url);

    // Act
    const got = await feed.receive({ max: 1000, shouldContinue: () => true });
    const ack = await feed.acknowledge(got.messages.slice(0, 20).map((m) => m.handle));

    // Assess
    expect(got.readable).toBe(true);
    expect(got.messages.map((m) => JSON.parse(m.body).n).sort((a, b) => a - b)).toEqual(Array.from({ length: 23 }, (_, i) => i));
    expect(ack).toEqual({});
    expect(await visible(url)).toBe(0); // 3 in flight until their visibility timeout
    const again = await feed.receive({ max: 1000, shouldContinue: () => true });
    expect(again.messages).toEqual([]);
  });

  it('stops at max and when told to', async () => {
    const url = await queueWith('events-b', Array.from({ length: 15 }, (_, i) => String(i)));
    const feed = new SqsEventFeed(sqs, url);
    expect((await feed.receive({ max: 4, shouldContinue: () => true })).messages).toHaveLength(4);
    let calls = 0;
    expect((await feed.receive({ max: 100, shouldContinue: () => calls++ < 1 })).messages).toHaveLength(10);
  });

  it('a queue that does not exist is unreadable, with SQS\'s message', async () => {
    const feed = new SqsEventFeed(sqs, `${moto.endpoint}/123456789012/no-such-queue`);
    const got = await feed.receive({ max: 10, shouldContinue: () => true });
    expect(got.readable).toBe(false);
    expect(got.error).toMatch(/no-such-queue.*(does not exist|NonExistentQueue)/i);
  });
});

describe('SqsEventFeed without a server', () => {
  it('access denied (a case moto cannot produce): unreadable, never a throw', async () => {
    // A client of its own, mocked: the moto one is untouched.
    const client = new SQSClient({ region: 'us-east-1' });
    const denied = mockClient(client);
    denied.on(ReceiveMessageCommand).rejects(Object.assign(new Error('User is not authorized to perform: sqs:receivemessage'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } }));
    const feed = new SqsEventFeed(client, 'https://sqs.us-east-1.amazonaws.com/123456789012/q');
    const got = await feed.receive({ max: 10, shouldContinue: () => true });
    expect(got).toMatchObject({ readable: false, messages: [] });
    expect(got.error).toMatch(/not authorized/);
    denied.restore();
  });
});

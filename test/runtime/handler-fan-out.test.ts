/**
 * The handler in fan-out mode, configured only through its environment
 * (`FANOUT_QUEUE_URL`, `TARGETS`) as the construct configures it: the schedule dispatches one SQS
 * message per target (moto's SQS), each message's invocation reconciles its target (the
 * simulator; moto's STS for the target role), and a stream batch is sent to its targets as keys.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CreateQueueCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { ENV } from '../../lambda/config';
import { startEmbeddedDynamoDb, type EmbeddedDynamoDb } from '../../local/embedded-dynamodb';
import { startSimulator, type Simulator } from '../../local/sim';
import { startMoto, type MotoServer } from '../support/moto';
import { needs } from '../support/tools';
import { aLambdaContext, aSpecItem, aStreamRecord, createSpecsTable, importHandler, LOCAL, localDoc, localHandlerEnv } from './support';

type AnyHandler = (event: unknown, context: ReturnType<typeof aLambdaContext>) => Promise<Record<string, unknown>>;

describe('lambda/handler in fan-out mode', needs('moto'), () => {
  let sim: Simulator;
  let db: EmbeddedDynamoDb;
  let moto: MotoServer;
  let sqs: SQSClient;
  let queueUrl: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    [sim, db, moto] = await Promise.all([startSimulator({ clusters: ['apps'] }), startEmbeddedDynamoDb(), startMoto()]);
    await createSpecsTable(db.endpoint, 'fan-out-handler');
    sqs = new SQSClient({ ...LOCAL, endpoint: moto.endpoint });
    queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'fan-out' }))).QueueUrl!;
    const doc = localDoc(db.endpoint);
    await doc.send(new PutCommand({ TableName: 'fan-out-handler', Item: aSpecItem({ service: 'web' }) }));
    await doc.send(new PutCommand({ TableName: 'fan-out-handler', Item: aSpecItem({ cluster: 'staging/apps', service: 'api' }) }));
    doc.destroy();
    env = localHandlerEnv({ ecs: sim.endpoint, dynamodb: db.endpoint }, 'fan-out-handler', 'fan-out-handler', {
      AWS_ENDPOINT_URL_SQS: moto.endpoint,
      AWS_ENDPOINT_URL_STS: moto.endpoint,
      [ENV.managedClusters]: 'apps',
      [ENV.fanOutQueueUrl]: queueUrl,
      [ENV.targets]: JSON.stringify([{ name: 'staging', account: '333333333333', region: 'us-east-1', clusters: ['apps'], roleArn: 'arn:aws:iam::333333333333:role/ecs-reconciler-target' }]),
    });
  }, 120_000);
  afterEach(() => vi.unstubAllEnvs());
  afterAll(async () => {
    sqs?.destroy();
    await Promise.all([sim?.close(), db?.stop(), moto?.stop()]);
  });

  async function receive(): Promise<{ eventSource: string; body: string; messageId: string }[]> {
    const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
    return (out.Messages ?? []).map((m) => ({ eventSource: 'aws:sqs', body: m.Body!, messageId: m.MessageId! }));
  }

  it('the schedule dispatches one message per target; each message reconciles its target; a stream batch goes to its target', async () => {
    // Prepare
    const { handler } = (await importHandler(env)) as unknown as { handler: AnyHandler };

    // Act: the schedule
    const tick = await handler({ source: 'aws.events', 'detail-type': 'Scheduled Event' }, aLambdaContext(50_000, 'tick'));
    const records = await receive();

    // Assess
    expect(tick).toMatchObject({ outcome: 'dispatched', targets: ['default', 'staging'], failed: [] });
    expect(records).toHaveLength(2);

    // Act: the mapping's invocations, one message each
    const results = [];
    for (const r of records) results.push(await handler({ Records: [r] }, aLambdaContext(50_000, r.messageId)));

    // Assess: each target's pass, its own service created
    const byTarget = Object.fromEntries(results.map((r) => [(r.results as { target: string }[])[0].target, (r.results as Record<string, unknown>[])[0]]));
    expect(byTarget.default).toMatchObject({ outcome: 'pass', summary: { outcome: 'completed', holder: expect.stringContaining(':default') } });
    expect(byTarget.staging).toMatchObject({ outcome: 'pass', summary: { outcome: 'completed', holder: expect.stringContaining(':staging') } });
    expect(sim.calls({ action: 'CreateService' }).map((c) => c.request.serviceName).sort()).toEqual(['api', 'web']);

    // Act: a stream batch naming the staging item
    const sent = await handler({ Records: [aStreamRecord('MODIFY', { cluster: 'staging/apps', service: 'api' }, { old: aSpecItem({ cluster: 'staging/apps', service: 'api' }), new: aSpecItem({ cluster: 'staging/apps', service: 'api', desiredCount: 3 }) })] }, aLambdaContext(50_000, 'stream'));
    const keyed = await receive();

    // Assess
    expect(sent).toEqual({ outcome: 'keys-dispatched', targets: ['staging'] });
    expect(keyed).toHaveLength(1);
    expect(JSON.parse(keyed[0].body)).toMatchObject({ target: { name: 'staging' }, keys: [{ cluster: 'apps', service: 'api' }] });
  }, 120_000);

  it("ECS events of every account: routed by account and Region to their targets' fast paths; an undeclared account's dropped; duplicates once", async () => {
    // Prepare: a target in another account (222222222222), declared by an item, with its spec
    const doc = localDoc(db.endpoint);
    await doc.send(new PutCommand({ TableName: 'fan-out-handler', Item: { cluster: '#target', service: 'qa', account: '222222222222', region: 'us-east-1', clusters: ['apps'], roleArn: 'arn:aws:iam::222222222222:role/ecs-reconciler-target' } }));
    await doc.send(new PutCommand({ TableName: 'fan-out-handler', Item: aSpecItem({ cluster: 'qa/apps', service: 'api' }) }));
    doc.destroy();
    const { handler } = (await importHandler(env)) as unknown as { handler: AnyHandler };
    await receive();
    const action = (account: string, service: string) =>
      JSON.stringify({
        version: '0',
        id: `${account}-${service}`,
        'detail-type': 'ECS Service Action',
        source: 'aws.ecs',
        account,
        time: '2026-12-02T08:00:00Z',
        region: 'us-east-1',
        resources: [`arn:aws:ecs:us-east-1:${account}:service/apps/${service}`],
        detail: { eventType: 'INFO', eventName: 'SERVICE_STEADY_STATE', clusterArn: `arn:aws:ecs:us-east-1:${account}:cluster/apps` },
      });
    const qa = action('222222222222', 'api');
    const batch = { Records: [qa, qa, action('999999999999', 'api'), action('222222222222', 'api')].map((body, i) => ({ eventSource: 'aws:sqs', body, messageId: `m${i}` })) };

    // Act: the events fast path queue's batch
    const dispatched = await handler(batch, aLambdaContext(50_000, 'events'));
    const messages = (await receive()).map((r) => ({ r, m: JSON.parse(r.body) as { target: { name: string }; keys: unknown[]; fromEvents?: boolean } }));

    // Assess: one message, for qa only, naming its service once; the unknown account counted
    expect(dispatched).toMatchObject({ outcome: 'events-dispatched', targets: { qa: 1 }, unrouted: 1, failed: [] });
    expect(messages.map(({ m }) => [m.target.name, m.keys, m.fromEvents])).toEqual([['qa', [{ cluster: 'apps', service: 'api' }], true]]);

    // Act: the mapping's invocation for that message
    const run = await handler({ Records: [messages[0].r] }, aLambdaContext(50_000, 'qa-fast'));

    // Assess: qa's fast path, under qa's lease, read qa's one service
    expect(run).toMatchObject({ outcome: 'target-passes', results: [{ outcome: 'pass', target: 'qa', fastPath: true, summary: { outcome: 'completed', holder: expect.stringContaining(':qa') } }] });
  }, 120_000);
});

/**
 * The Lambda handler hands the invocation's remaining time to the pass (the ECS simulator and
 * dynalite, configured through the environment as in AWS): with almost no time left, the pass
 * starts no action and writes no status; the next invocation does both.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Context } from 'aws-lambda';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { startSimulator, type Simulator } from '../../local/sim';
import { startEmbeddedDynamoDb, type EmbeddedDynamoDb } from '../../local/embedded-dynamodb';
import { ENV } from '../../lambda/config';
import { STATUS_WRITE_RESERVE_MS, type PassSummary } from '../../lambda/core/pass';
import { aSpecItem, createSpecsTable, localDoc } from '../runtime/support';

const TABLE = 'deadline-specs';

function aContext(remainingMs: number, requestId: string): Context {
  return {
    awsRequestId: requestId,
    functionName: 'ecs-reconciler',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:ecs-reconciler',
    memoryLimitInMB: '256',
    logGroupName: '/aws/lambda/ecs-reconciler',
    logStreamName: 'stream',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => remainingMs,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

type Handler = (event: unknown, context: Context) => Promise<PassSummary>;

describe('lambda/handler: the invocation deadline reaches the pass', () => {
  let sim: Simulator;
  let db: EmbeddedDynamoDb;
  let handler: Handler;

  beforeAll(async () => {
    sim = await startSimulator({ clusters: ['apps'] });
    db = await startEmbeddedDynamoDb();
    await createSpecsTable(db.endpoint, TABLE);
    const doc = localDoc(db.endpoint);
    for (const service of ['a', 'b', 'c']) await doc.send(new PutCommand({ TableName: TABLE, Item: aSpecItem({ service }) }));
    doc.destroy();
    const env: Record<string, string> = {
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_ENDPOINT_URL_ECS: sim.endpoint,
      AWS_ENDPOINT_URL_DYNAMODB: db.endpoint,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      POWERTOOLS_DEV: '',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      [ENV.specsTable]: TABLE,
      [ENV.ownerId]: 'deadline-test',
    };
    vi.resetModules();
    for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
    handler = ((await import('../../lambda/handler')) as { handler: Handler }).handler;
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await sim?.close();
    await db?.stop();
  });

  async function storedStatus(service: string): Promise<unknown> {
    const doc = localDoc(db.endpoint);
    try {
      return (await doc.send(new GetCommand({ TableName: TABLE, Key: { cluster: 'apps', service }, ConsistentRead: true }))).Item?.status;
    } finally {
      doc.destroy();
    }
  }

  it('with less than the reserve left nothing is written; with time left everything is', async () => {
    // Prepare: Powertools writes EMF and logs to stdout.
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);

    // Act
    const late = await handler({}, aContext(STATUS_WRITE_RESERVE_MS - 1, 'req-late'));
    const statusAfterLate = await storedStatus('a');
    const inTime = await handler({}, aContext(40_000, 'req-in-time'));

    // Assess
    expect(late.outcome).toBe('completed');
    expect(late.counts.actionsApplied).toBe(0);
    expect(late.counts.statusesWritten).toBe(0);
    expect(late.counts.statusesPending).toBe(3);
    expect(statusAfterLate).toBeUndefined();
    expect(inTime.counts.actionsApplied).toBe(6);
    expect(inTime.counts.statusesWritten).toBe(3);
    expect(await storedStatus('a')).toMatchObject({ phase: 'Progressing' });
  });
});

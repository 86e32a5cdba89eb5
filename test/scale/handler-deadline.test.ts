/**
 * The Lambda handler hands the invocation's remaining time to the pass (the ECS simulator and
 * dynalite, configured through the environment as in AWS): with almost no time left, the pass
 * starts no action and writes no status; the next invocation does both.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { startSimulator, type Simulator } from '../../local/sim';
import { startEmbeddedDynamoDb, type EmbeddedDynamoDb } from '../../local/embedded-dynamodb';
import { STATUS_WRITE_RESERVE_MS } from '../../lambda/core/pass';
import { aLambdaContext, aSpecItem, createSpecsTable, importHandler, localDoc, localHandlerEnv, type HandlerModule } from '../runtime/support';

const TABLE = 'deadline-specs';

describe('lambda/handler: the invocation deadline reaches the pass', () => {
  let sim: Simulator;
  let db: EmbeddedDynamoDb;
  let handler: HandlerModule['handler'];

  beforeAll(async () => {
    sim = await startSimulator({ clusters: ['apps'] });
    db = await startEmbeddedDynamoDb();
    await createSpecsTable(db.endpoint, TABLE);
    const doc = localDoc(db.endpoint);
    for (const service of ['a', 'b', 'c']) await doc.send(new PutCommand({ TableName: TABLE, Item: aSpecItem({ service }) }));
    doc.destroy();
    const env = localHandlerEnv({ ecs: sim.endpoint, dynamodb: db.endpoint }, TABLE, 'deadline-test', {
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
    });
    handler = (await importHandler(env)).handler;
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
    const late = await handler({}, aLambdaContext(STATUS_WRITE_RESERVE_MS - 1, 'req-late'));
    const statusAfterLate = await storedStatus('a');
    const inTime = await handler({}, aLambdaContext(40_000, 'req-in-time'));

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

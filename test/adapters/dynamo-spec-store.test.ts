import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, ScanCommand, BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDBClient, ScanCommand as RawScanCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { startEmbeddedDynamoDb, type EmbeddedDynamoDb } from '../../local/embedded-dynamodb';
import { DynamoSpecStore, LEASE_KEY } from '../../lambda/adapters/dynamo-spec-store';
import type { ServiceStatus } from '../../lambda/core/types';
import { aSpecItem, createSpecsTable, localDoc, LOCAL, recordCalls } from '../runtime/support';

function aStatus(overrides: Partial<ServiceStatus> = {}): ServiceStatus {
  return {
    phase: 'Converged',
    conditions: [],
    desiredCount: 2,
    runningCount: 2,
    pendingCount: 0,
    lagBeyondGrace: false,
    observedAt: '2025-01-01T00:00:00.000Z',
    ...overrides,
  };
}

const T0 = new Date('2025-01-01T00:00:00Z');
const seconds = (n: number) => new Date(T0.getTime() + n * 1000);

describe('DynamoSpecStore on dynalite', () => {
  let db: EmbeddedDynamoDb;
  let doc: DynamoDBDocumentClient;
  let table = '';
  let n = 0;

  beforeAll(async () => {
    db = await startEmbeddedDynamoDb();
    doc = localDoc(db.endpoint);
  });
  afterAll(async () => {
    doc?.destroy();
    await db?.stop();
  });
  beforeEach(async () => {
    table = `specs-${++n}`;
    await createSpecsTable(db.endpoint, table);
  });

  const put = (item: Record<string, unknown>) => doc.send(new PutCommand({ TableName: table, Item: item }));
  const get = async (cluster: string, service: string) =>
    (await doc.send(new GetCommand({ TableName: table, Key: { cluster, service }, ConsistentRead: true }))).Item;

  it('targets: each store reads its own items under ECS names, writes its own keys, keeps its own lease and cursor; an undeclared target is invalid and never written', async () => {
    // Prepare
    await put(aSpecItem({ service: 'web' }));
    await put(aSpecItem({ cluster: 'staging/apps', service: 'web', desiredCount: 5 }));
    await put(aSpecItem({ cluster: 'qa/apps', service: 'web' }));
    const mine = new DynamoSpecStore(doc, table, { otherTargets: new Set(['staging']) });
    const staging = new DynamoSpecStore(doc, table, { target: 'staging', otherTargets: new Set(['default']) });
    const now = new Date('2026-12-02T06:00:00Z');

    // Act
    const ownRead = await mine.readAll();
    const stagingRead = await staging.readAll();
    await staging.writeStatus({ cluster: 'apps', service: 'web' }, { phase: 'Pending', conditions: [], desiredCount: 5, runningCount: 0, pendingCount: 0, lagBeyondGrace: false, observedAt: now.toISOString() } as unknown as ServiceStatus);
    const leases = [await mine.acquireLease('a', 60, now), await staging.acquireLease('b', 60, now)];
    await staging.writeCursor({ cluster: 'apps' });

    // Assess
    expect(ownRead.specs.filter((s) => s.ok).map((s) => s.key)).toEqual([{ cluster: 'apps', service: 'web' }]);
    const invalid = ownRead.specs.filter((s) => !s.ok);
    expect(invalid).toEqual([{ ok: false, key: null, errors: [expect.objectContaining({ value: 'qa/apps', message: expect.stringMatching(/names target "qa"/) })] }]);
    expect(stagingRead.specs.map((s) => (s.ok ? [s.key, s.spec.desiredCount] : 'invalid'))).toEqual([[{ cluster: 'apps', service: 'web' }, 5]]);
    expect((await get('staging/apps', 'web'))?.status).toMatchObject({ phase: 'Pending' });
    expect((await get('apps', 'web'))?.status).toBeUndefined();
    expect((await get('qa/apps', 'web'))?.status).toBeUndefined();
    expect(leases).toEqual([{ acquired: true }, { acquired: true }]);
    expect(await get('#lease', 'staging')).toMatchObject({ holder: 'b' });
    expect((await staging.readAll()).cursor).toEqual({ cluster: 'apps' });
    expect((await mine.readAll()).cursor).toBeUndefined();
  });

  it.each([
    { case: 'cluster and name', cursor: { cluster: 'apps', after: 'web-17' } },
    { case: 'cluster boundary', cursor: { cluster: 'jobs' } },
    { case: 'events mode: resync pace and newest heartbeat', cursor: { cluster: 'apps', after: 'web-17', resyncAt: '2026-12-02T06:00:00.000Z', heartbeatAt: '2026-12-02T06:01:00.000Z' } },
  ])('keeps the rotation cursor in a reserved item the Scan reads back, never as a spec: $case', async ({ cursor }) => {
    // Prepare
    await put(aSpecItem({ service: 'web' }));
    const store = new DynamoSpecStore(doc, table);

    // Act
    await store.writeCursor(cursor);
    const read = await store.readAll();

    // Assess
    expect(read.cursor).toEqual(cursor);
    expect(read.specs.map((s) => s.key)).toEqual([{ cluster: 'apps', service: 'web' }]);
  });

  it('a resyncAt or heartbeatAt that is not a time is dropped, the cursor kept', async () => {
    // Prepare
    await put({ cluster: '#cursor', service: '#cursor', cursorCluster: 'apps', resyncAt: 'soon', heartbeatAt: 7 });
    const store = new DynamoSpecStore(doc, table);

    // Act
    const read = await store.readAll();

    // Assess
    expect(read.cursor).toEqual({ cluster: 'apps' });
  });

  it.each([
    { case: 'no cursor item', item: undefined },
    { case: 'cluster not a string', item: { cursorCluster: 7 } },
    { case: 'empty cluster', item: { cursorCluster: '', cursorAfter: 'x' } },
  ])('a missing or corrupt cursor reads as none (the rotation starts over): $case', async ({ item }) => {
    // Prepare
    if (item) await put({ cluster: '#cursor', service: '#cursor', ...item });
    const store = new DynamoSpecStore(doc, table);

    // Act
    const read = await store.readAll();

    // Assess
    expect(read.complete).toBe(true);
    expect(read.cursor).toBeUndefined();
    expect(read.specs).toEqual([]);
  });

  it('reads every item across many Scan pages, consistently', async () => {
    // Prepare: 130 items, read 20 per page.
    for (let i = 0; i < 130; i += 25) {
      const batch = Array.from({ length: Math.min(25, 130 - i) }, (_, j) => aSpecItem({ service: `svc-${i + j}` }));
      await doc.send(new BatchWriteCommand({ RequestItems: { [table]: batch.map((Item) => ({ PutRequest: { Item } })) } }));
    }
    const reader = localDoc(db.endpoint);
    const calls = recordCalls(reader);
    const store = new DynamoSpecStore(reader, table, { pageSize: 20 });

    // Act
    const read = await store.readAll();

    // Assess
    expect(read.complete).toBe(true);
    expect(read.specs).toHaveLength(130);
    expect(new Set(read.specs.map((s) => s.key?.service)).size).toBe(130);
    expect(calls.count('Scan')).toBeGreaterThanOrEqual(7);
    expect(calls.calls.every((c) => c.input.ConsistentRead === true)).toBe(true);
    reader.destroy();
  });

  it('keeps invalid items as invalid results and remembers statuses', async () => {
    // Prepare
    await put(aSpecItem({ service: 'good', status: aStatus({ phase: 'Progressing' }) }));
    await put(aSpecItem({ service: 'bad', cpu: 3 }));
    await put({ cluster: 'apps', service: 'nokey-ish', desiredCount: 'three' });
    const store = new DynamoSpecStore(doc, table);

    // Act
    const read = await store.readAll();

    // Assess
    const byService = Object.fromEntries(read.specs.map((s) => [s.key?.service, s]));
    expect(read.specs).toHaveLength(3);
    expect(byService.good.ok).toBe(true);
    expect(byService.bad.ok).toBe(false);
    expect(byService['nokey-ish'].ok).toBe(false);
    expect(read.statuses['apps/good'].phase).toBe('Progressing');
    expect(read.statuses['apps/bad']).toBeUndefined();
  });

  it('skips the lease item: it never parses as a spec', async () => {
    // Prepare
    await put(aSpecItem());
    const store = new DynamoSpecStore(doc, table);
    expect((await store.acquireLease('pass-a', 60, T0)).acquired).toBe(true);

    // Act
    const read = await store.readAll();

    // Assess
    expect(await get(LEASE_KEY.cluster, LEASE_KEY.service)).toBeDefined();
    expect(read.specs.map((s) => s.key)).toEqual([{ cluster: 'apps', service: 'web' }]);
  });

  it.each([
    { case: 'free lease', first: undefined, second: { holder: 'b', at: 0 }, acquired: true },
    { case: 'held and unexpired', first: { holder: 'a', at: 0 }, second: { holder: 'b', at: 59 }, acquired: false },
    { case: 'held but expired', first: { holder: 'a', at: 0 }, second: { holder: 'b', at: 61 }, acquired: true },
    { case: 'renewed by its holder', first: { holder: 'a', at: 0 }, second: { holder: 'a', at: 30 }, acquired: true },
  ])('lease: $case', async ({ first, second, acquired }) => {
    // Prepare: leases of 60 s.
    const store = new DynamoSpecStore(doc, table);
    if (first) expect((await store.acquireLease(first.holder, 60, seconds(first.at))).acquired).toBe(true);

    // Act
    const result = await store.acquireLease(second.holder, 60, seconds(second.at));

    // Assess
    expect(result.acquired).toBe(acquired);
    if (!result.acquired) {
      expect(result.holder).toBe(first?.holder);
      expect(result.expiresAt.toISOString()).toBe(seconds(60).toISOString());
    }
    const item = await get(LEASE_KEY.cluster, LEASE_KEY.service);
    expect(item?.holder).toBe(acquired ? second.holder : first?.holder);
  });

  it('releases the lease only for its holder', async () => {
    // Prepare
    const store = new DynamoSpecStore(doc, table);
    await store.acquireLease('a', 60, T0);

    // Act + Assess: another holder's release leaves it; the holder's removes it.
    await store.releaseLease('b');
    expect((await get(LEASE_KEY.cluster, LEASE_KEY.service))?.holder).toBe('a');
    await store.releaseLease('a');
    expect(await get(LEASE_KEY.cluster, LEASE_KEY.service)).toBeUndefined();
    expect((await store.acquireLease('b', 60, seconds(1))).acquired).toBe(true);
  });

  it('writes only the status attribute, keeping a concurrent edit of the spec', async () => {
    // Prepare: the pass read image 1.27; a person changes it to 1.28 before the status write.
    await put(aSpecItem({ image: 'public.ecr.aws/nginx/nginx:1.27' }));
    await new DynamoSpecStore(doc, table).readAll();
    await put(aSpecItem({ image: 'public.ecr.aws/nginx/nginx:1.28', desiredCount: 5 }));
    const writer = localDoc(db.endpoint);
    const calls = recordCalls(writer);

    // Act
    const written = await new DynamoSpecStore(writer, table).writeStatus({ cluster: 'apps', service: 'web' }, aStatus({ reason: 'ok' }));

    // Assess
    expect(written).toBe(true);
    const item = await get('apps', 'web');
    expect(item?.image).toBe('public.ecr.aws/nginx/nginx:1.28');
    expect(item?.desiredCount).toBe(5);
    expect(item?.status).toMatchObject({ phase: 'Converged', reason: 'ok' });
    expect(calls.calls.map((c) => c.action)).toEqual(['UpdateItem']);
    expect(calls.calls[0].input.UpdateExpression).toBe('SET #status = :s');
    writer.destroy();
  });

  it('never resurrects a deleted spec with a status write', async () => {
    // Prepare
    await put(aSpecItem());
    const store = new DynamoSpecStore(doc, table);
    await doc.send(new DeleteCommand({ TableName: table, Key: { cluster: 'apps', service: 'web' } }));

    // Act
    const written = await store.writeStatus({ cluster: 'apps', service: 'web' }, aStatus());

    // Assess
    expect(written).toBe(false);
    expect(await get('apps', 'web')).toBeUndefined();
  });

  it('reports a read of a missing table as incomplete, not as "no specs"', async () => {
    const store = new DynamoSpecStore(doc, 'no-such-table');
    const read = await store.readAll();
    expect(read.complete).toBe(false);
    expect(read.error).toMatch(/ResourceNotFoundException/);
  });
});

describe('DynamoSpecStore when a Scan page fails (aws-sdk-client-mock: no server fails page 2 on demand)', () => {
  it.each([
    { case: 'page 1 fails', failOn: 1, kept: 0 },
    { case: 'page 2 fails', failOn: 2, kept: 1 },
  ])('$case -> complete false with the error', async ({ failOn, kept }) => {
    // Prepare
    const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ ...LOCAL, endpoint: 'http://127.0.0.1:9' }));
    const mock = mockClient(doc);
    // The store scans with raw attribute values (it decodes them itself).
    const page1 = { Items: [marshall(aSpecItem({ service: 'a' }))], LastEvaluatedKey: { cluster: { S: 'apps' }, service: { S: 'a' } } };
    const throttled = Object.assign(new Error('Throughput exceeds the current capacity'), {
      name: 'ProvisionedThroughputExceededException',
      $metadata: { httpStatusCode: 400 },
    });
    if (failOn === 1) mock.on(RawScanCommand).rejects(throttled);
    else mock.on(RawScanCommand).resolvesOnce(page1).rejects(throttled);
    const store = new DynamoSpecStore(doc, 'specs');

    // Act
    const read = await store.readAll();

    // Assess
    expect(read.complete).toBe(false);
    expect(read.error).toContain('ProvisionedThroughputExceededException');
    expect(read.specs).toHaveLength(kept);
    mock.restore();
  });
});

/**
 * A lease item anyone with write access to the specs table can edit. A lease with
 * no `expiresAt`, or `expiresAt: "1"`, used to report `lease-held` "until 1970-01-01" on every
 * pass, forever; `expiresAt: "soon"` made the handler throw `RangeError: Invalid time value`.
 * Now any lease item that cannot be read as a lease counts as expired and is taken over, with a
 * condition on its exact content and a warning naming what was found. On dynalite, then a full
 * pass against the simulator.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PutItemCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { startEmbeddedDynamoDb, type EmbeddedDynamoDb } from '../../local/embedded-dynamodb';
import { DynamoSpecStore, LEASE_KEY } from '../../lambda/adapters/dynamo-spec-store';
import { exactContentCondition, LEASE_MAX_AHEAD_SECONDS } from '../../lambda/adapters/lease-item';
import { aSpecItem, createSpecsTable, localDoc, useSimHarness } from '../runtime/support';

const T0 = new Date('2025-01-01T00:00:00Z');
const LEASE = { cluster: LEASE_KEY.cluster, service: LEASE_KEY.service };

/** Lease items a person or a script could leave behind (raw attribute values), and what is wrong with each. */
const S = (s: string): AttributeValue => ({ S: s });
const N = (n: number | string): AttributeValue => ({ N: String(n) });
const SOON = T0.getTime() + 30_000;
const MALFORMED: { case: string; item: Record<string, AttributeValue>; problem: RegExp }[] = [
  { case: 'no expiresAt', item: { holder: S('someone') }, problem: /expiresAt is missing or not a number/ },
  { case: 'expiresAt a string "1"', item: { holder: S('someone'), expiresAt: S('1') }, problem: /expiresAt is missing or not a number/ },
  { case: 'expiresAt "soon"', item: { holder: S('someone'), expiresAt: S('soon') }, problem: /expiresAt is missing or not a number/ },
  { case: 'expiresAt a map', item: { holder: S('someone'), expiresAt: { M: { at: N(1), list: { L: [S('x'), N(2)] } } } }, problem: /expiresAt is missing or not a number/ },
  { case: 'expiresAt a string set', item: { holder: S('someone'), expiresAt: { SS: ['a', 'b'] } }, problem: /expiresAt is missing or not a number/ },
  { case: 'expiresAt null', item: { holder: S('someone'), expiresAt: { NULL: true } }, problem: /expiresAt is missing or not a number/ },
  { case: 'expiresAt beyond any date', item: { holder: S('someone'), expiresAt: N('9e125') }, problem: /not a time in epoch milliseconds/ },
  { case: 'expiresAt in the year 3000', item: { holder: S('someone'), expiresAt: N(Date.parse('3000-01-01T00:00:00Z')) }, problem: /more than 3600 s beyond/ },
  { case: 'no holder', item: { expiresAt: N(SOON) }, problem: /holder is missing/ },
  { case: 'holder a number', item: { holder: N(7), expiresAt: N(SOON) }, problem: /holder is missing or not a string/ },
  { case: 'holder empty', item: { holder: S(''), expiresAt: N(SOON) }, problem: /holder is empty/ },
  { case: 'only the key', item: {}, problem: /holder is missing/ },
];
const RAW_KEY = { cluster: S(LEASE_KEY.cluster), service: S(LEASE_KEY.service) };

describe('malformed lease items on dynalite', () => {
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
    table = `lease-${++n}`;
    await createSpecsTable(db.endpoint, table);
  });
  const lease = async () => (await doc.send(new GetCommand({ TableName: table, Key: LEASE, ConsistentRead: true }))).Item;

  it.each(MALFORMED)('$case: counts as expired, is taken over, says what it found', async ({ item, problem }) => {
    // Prepare
    await (doc as unknown as DynamoDBClient).send(new PutItemCommand({ TableName: table, Item: { ...RAW_KEY, ...item } }));
    const store = new DynamoSpecStore(doc, table);

    // Act
    const result = await store.acquireLease('pass-1', 60, T0);

    // Assess
    expect(result.acquired).toBe(true);
    expect(result.acquired && result.takenOver?.problem).toMatch(problem);
    expect(result.acquired && result.takenOver?.found).toContain('cluster=S:"#lease"');
    expect(await lease()).toMatchObject({ holder: 'pass-1', expiresAt: T0.getTime() + 60_000 });
    // The next pass of another holder finds a valid lease again.
    expect(await store.acquireLease('pass-2', 60, new Date(T0.getTime() + 1000))).toMatchObject({ acquired: false, holder: 'pass-1' });
  });

  it('a valid lease of another holder still holds, until its expiry (control)', async () => {
    // Prepare
    const store = new DynamoSpecStore(doc, table);
    expect((await store.acquireLease('other', 60, T0)).acquired).toBe(true);

    // Act
    const result = await store.acquireLease('pass-1', 60, new Date(T0.getTime() + 30_000));

    // Assess
    expect(result).toEqual({ acquired: false, holder: 'other', expiresAt: new Date(T0.getTime() + 60_000) });
    expect(LEASE_MAX_AHEAD_SECONDS).toBeGreaterThan(0);
  });

  it('the takeover is conditioned on the exact content: a lease rewritten meanwhile is not overwritten', async () => {
    // Prepare: a malformed lease, the condition built from it, then another writer changes it.
    await doc.send(new PutCommand({ TableName: table, Item: { ...LEASE, holder: 'someone', expiresAt: 'soon', note: { a: [1, 'x'] } } }));
    const raw = doc as unknown as DynamoDBClient;
    const seen = (await raw.send(new (await import('@aws-sdk/client-dynamodb')).GetItemCommand({ TableName: table, Key: { cluster: { S: LEASE.cluster }, service: { S: LEASE.service } }, ConsistentRead: true }))).Item as Record<string, AttributeValue>;
    const condition = exactContentCondition(seen);
    const takeover = () =>
      raw.send(new PutItemCommand({ TableName: table, Item: { cluster: { S: LEASE.cluster }, service: { S: LEASE.service }, holder: { S: 'me' } }, ...condition }));
    await doc.send(new PutCommand({ TableName: table, Item: { ...LEASE, holder: 'someone', expiresAt: 'later', note: { a: [1, 'x'] } } }));

    // Act + Assess: refused while the content differs, accepted on the content it was built from.
    await expect(takeover()).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    await doc.send(new PutCommand({ TableName: table, Item: { ...LEASE, holder: 'someone', expiresAt: 'soon', note: { a: [1, 'x'] } } }));
    await expect(takeover()).resolves.toBeDefined();
    expect((await lease())?.holder).toBe('me');
  });
});

describe('a full pass meets a malformed lease', () => {
  const h = useSimHarness();

  it.each([
    { case: 'expiresAt "soon"', item: { holder: 'someone', expiresAt: 'soon' } },
    { case: 'no expiresAt', item: { holder: 'someone' } },
    { case: 'expiresAt "1"', item: { holder: 'someone', expiresAt: '1' } },
  ])('$case: the pass runs, converges and warns with what it found', async ({ item }) => {
    // Prepare
    await h.putSpec(aSpecItem());
    await h.putSpec({ ...LEASE, ...item });

    // Act
    const first = await h.pass('p1');
    await h.converge();

    // Assess
    expect(first.outcome).toBe('completed');
    expect((await h.status({ cluster: 'apps', service: 'web' }))?.phase).toBe('Converged');
    const warning = h.log.lines.find((l) => l.level === 'warn' && l.message.startsWith('lease taken over'));
    expect(warning?.fields).toMatchObject({ holder: 'p1', problem: expect.stringContaining('expiresAt'), found: expect.stringContaining('holder=S:"someone"') });
  });
});

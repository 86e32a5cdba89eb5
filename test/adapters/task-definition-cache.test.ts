/**
 * The durable description cache against dynalite: a round trip, and a cache that
 * is empty, missing, stale (expired, another format) or corrupt (garbage items) never throws and
 * never yields a description that is not the one ECS answered.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { type AttributeValue, CreateTableCommand, DynamoDBClient, PutItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import {
  CACHE_REFRESH_DAYS,
  CACHE_TTL_DAYS,
  DynamoTaskDefinitionCache,
  taskDefinitionCacheTableDefinition,
} from '../../lambda/adapters/dynamo-task-definition-cache';
import type { TaskDefinition } from '../../lambda/core/types';
import { startEmbeddedDynamoDb, type EmbeddedDynamoDb } from '../../local/embedded-dynamodb';
import { LOCAL } from '../runtime/support';

const NOW = new Date('2025-06-01T12:00:00.000Z');
const DAY = 86_400_000;

function aDescription(revision: number, image = 'public.ecr.aws/nginx/nginx:1.27'): TaskDefinition {
  return {
    taskDefinitionArn: `arn:aws:ecs:us-east-1:123456789012:task-definition/apps-web:${revision}`,
    family: 'apps-web',
    revision,
    cpu: '256',
    memory: '512',
    networkMode: 'awsvpc',
    requiresCompatibilities: ['FARGATE'],
    containerDefinitions: [{ name: 'web', image, essential: true, environment: [{ name: 'K', value: 'v' }] }],
    status: 'ACTIVE',
  };
}

describe('DynamoTaskDefinitionCache', () => {
  let db: EmbeddedDynamoDb;
  let client: DynamoDBClient;
  let table = '';
  let tables = 0;
  let now = NOW;
  const cache = (pageSize?: number) => new DynamoTaskDefinitionCache(client, table, { now: () => now, ...(pageSize ? { pageSize } : {}) });

  beforeAll(async () => {
    db = await startEmbeddedDynamoDb();
    client = new DynamoDBClient({ ...LOCAL, endpoint: db.endpoint });
  });
  afterAll(async () => {
    client.destroy();
    await db.stop();
  });
  beforeEach(async () => {
    now = NOW;
    table = `tdcache-${++tables}`;
    await client.send(new CreateTableCommand(taskDefinitionCacheTableDefinition(table)));
  });

  it('round trip: what one container writes, a new one reads in bulk, across pages', async () => {
    const writer = cache();
    const tds = Array.from({ length: 60 }, (_, i) => aDescription(i + 1));
    for (const td of tds) writer.put(td);
    await writer.flush();
    expect(writer.written).toBe(60);
    expect(writer.errors).toBe(0);

    const { descriptions, result } = await cache(7).load();
    expect(result).toEqual({ loaded: 60, ignored: 0, expired: 0 });
    expect(descriptions.get(tds[41].taskDefinitionArn!)).toEqual(tds[41]);
  });

  it('keep writes every revision in use in one pass, however many (no cap): a new container then loads them all', async () => {
    // More than the 1,000 a pass an earlier version capped writes at.
    const tds = Array.from({ length: 1_200 }, (_, i) => aDescription(i + 1));
    const writer = cache();
    expect(writer.keep(tds.map((td) => [td.taskDefinitionArn!, td] as const))).toBe(1_200);
    await writer.flush();
    expect(writer.errors).toBe(0);
    expect(writer.written).toBe(1_200);
    // Kept again in the same container: nothing new to write.
    expect(writer.keep(tds.map((td) => [td.taskDefinitionArn!, td] as const))).toBe(0);
    const { descriptions, result } = await cache().load();
    expect(result).toEqual({ loaded: 1_200, ignored: 0, expired: 0 });
    expect(descriptions.get(tds[1_150].taskDefinitionArn!)).toEqual(tds[1_150]);
  });

  it('an empty table: nothing loaded, no error', async () => {
    expect((await cache().load()).result).toEqual({ loaded: 0, ignored: 0, expired: 0 });
  });

  it('a missing table: nothing loaded, the error reported, writes fail quietly', async () => {
    const c = new DynamoTaskDefinitionCache(client, 'no-such-table', { now: () => now });
    const { descriptions, result } = await c.load();
    expect(descriptions.size).toBe(0);
    expect(result.error).toMatch(/no-such-table/);
    c.put(aDescription(1));
    await expect(c.flush()).resolves.toBeUndefined();
    expect(c.errors).toBeGreaterThan(0);
  });

  it.each([
    { case: 'not our format at all', item: { arn: { S: 'x' }, hello: { S: 'world' } } },
    { case: 'another format version', item: { ...validItem(), v: { N: '99' } } },
    { case: 'a body that is not gzip', item: { ...validItem(), body: { B: Buffer.from('not gzip') } } },
    { case: 'a body that is not JSON', item: { ...validItem(), body: { B: gzipSync('{not json') } } },
    { case: 'a checksum that does not match', item: { ...validItem(), sha: { S: '0'.repeat(64) } } },
    { case: 'a body of another revision', item: { ...validItem(aDescription(2)), arn: { S: aDescription(1).taskDefinitionArn! } } },
    {
      case: 'a body whose ARN is its key but whose revision is another',
      item: validItem({ ...aDescription(2), taskDefinitionArn: aDescription(1).taskDefinitionArn }),
    },
    {
      case: 'a body whose ARN is its key but whose family is another',
      item: validItem({ ...aDescription(1), family: 'apps-other' }),
    },
    { case: 'a body that is a list', item: itemOf('[1,2]', 'arn:x') },
    { case: 'a number where the day should be', item: { ...validItem(), seenOn: { N: '5' } } },
  ] as { case: string; item: Record<string, AttributeValue> }[])('a corrupt item ($case) is ignored, the others load', async ({ item }) => {
    const good = aDescription(7);
    const writer = cache();
    writer.put(good);
    await writer.flush();
    await client.send(new PutItemCommand({ TableName: table, Item: item }));

    const { descriptions, result } = await cache().load();
    expect(result).toEqual({ loaded: 1, ignored: 1, expired: 0 });
    expect([...descriptions.keys()]).toEqual([good.taskDefinitionArn]);
  });

  it('an entry not in use for longer than its time to live is not loaded, and is deleted', async () => {
    const old = aDescription(1);
    const fresh = aDescription(2);
    now = new Date(NOW.getTime() - (CACHE_TTL_DAYS + 1) * DAY);
    const w1 = cache();
    w1.put(old);
    await w1.flush();
    now = NOW;
    const w2 = cache();
    w2.put(fresh);
    await w2.flush();

    const reader = cache();
    const { descriptions, result } = await reader.load();
    expect(result).toEqual({ loaded: 1, ignored: 0, expired: 1 });
    expect(descriptions.has(old.taskDefinitionArn!)).toBe(false);
    await reader.flush();
    const left = await client.send(new ScanCommand({ TableName: table }));
    expect(left.Items?.map((i) => i.arn.S)).toEqual([fresh.taskDefinitionArn]);
  });

  it('an entry in use is written again once it is a week old, so it never expires while in use', async () => {
    const td = aDescription(3);
    now = new Date(NOW.getTime() - (CACHE_REFRESH_DAYS + 1) * DAY);
    const w = cache();
    w.put(td);
    await w.flush();
    const recent = aDescription(4);
    now = new Date(NOW.getTime() - DAY);
    const w2 = cache();
    w2.put(recent);
    await w2.flush();

    now = NOW;
    const c = cache();
    const { descriptions } = await c.load();
    c.keep(descriptions);
    await c.flush();
    expect(c.written).toBe(1); // only the week-old one
    const items = (await client.send(new ScanCommand({ TableName: table }))).Items ?? [];
    const seen = Object.fromEntries(items.map((i) => [i.arn.S, i.seenOn.S]));
    expect(seen[td.taskDefinitionArn!]).toBe('2025-06-01');
    expect(seen[recent.taskDefinitionArn!]).toBe('2025-05-31');
  });
});

function itemOf(text: string, arn: string) {
  return {
    arn: { S: arn },
    v: { N: '1' },
    body: { B: gzipSync(text) },
    sha: { S: createHash('sha256').update(text).digest('hex') },
    seenOn: { S: '2025-06-01' },
  };
}

function validItem(td: TaskDefinition = aDescription(1)) {
  return itemOf(JSON.stringify(td), td.taskDefinitionArn!);
}

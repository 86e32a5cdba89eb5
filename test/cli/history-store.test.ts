/**
 * The spec history store and the stream path's part of it, against dynalite and against moto's
 * DynamoDB (an implementation we did not write): revisions of ecsr's edits with their writer, of
 * edits seen only on the stream, the claim of a revision the stream recorded first, outcomes from
 * the status the pass wrote, retention and the TTL attribute.
 */
import type { DynamoDBRecord } from 'aws-lambda';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { SpecTable } from '../../bin/commands/support/spec-table';
import { parseSpecItem } from '../../lambda/core/spec';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RecordingLog } from '../../lambda/adapters/logger';
import { HISTORY_KEEP, HISTORY_PARTITION, HISTORY_TTL_ATTRIBUTE, OUTSIDE_WRITER, SpecHistory } from '../../lambda/adapters/spec-history';
import { recordStreamHistory } from '../../lambda/adapters/spec-history-stream';
import { startEmbeddedDynamoDb, type EmbeddedDynamoDb } from '../../local/embedded-dynamodb';
import { startMoto, type MotoServer } from '../support/moto';
import { needs } from '../support/tools';
import { createSpecsTable, localDoc } from '../runtime/support';

const ARN = 'arn:aws:sts::123456789012:assumed-role/Admin/alice';
const key = { cluster: 'prod', service: 'web' };
const specAt = (image: string, desiredCount = 2) => ({ cluster: 'prod', service: 'web', image, desiredCount });
const status = (over: Record<string, unknown>) => ({
  phase: 'Converged',
  conditions: [{ type: 'Ready', status: 'True', reason: 'Converged', message: '', lastTransitionTime: '2026-01-01T00:05:00.000Z' }],
  desiredCount: 2,
  runningCount: 2,
  pendingCount: 0,
  lagBeyondGrace: false,
  ...over,
});

/** A stream record of the specs table, as Lambda hands it over (NEW_AND_OLD_IMAGES). */
function record(eventName: 'INSERT' | 'MODIFY' | 'REMOVE', at: Date, oldImage?: object, newImage?: object, id = 'prod'): DynamoDBRecord {
  return {
    eventID: `${eventName}-${at.getTime()}`,
    eventName,
    eventSource: 'aws:dynamodb',
    dynamodb: {
      ApproximateCreationDateTime: Math.floor(at.getTime() / 1000),
      Keys: { cluster: { S: id }, service: { S: 'web' } },
      ...(oldImage ? { OldImage: marshall(oldImage) as never } : {}),
      ...(newImage ? { NewImage: marshall(newImage) as never } : {}),
    },
  };
}

/** The cases, on a DynamoDB server `start` starts. */
function historyCases(start: () => Promise<{ endpoint: string; stop: () => Promise<void> }>) {
  let server: { endpoint: string; stop: () => Promise<void> };
  let doc: DynamoDBDocumentClient;
  let tables = 0;
  beforeAll(async () => {
    server = await start();
    doc = localDoc(server.endpoint);
  }, 60_000);
  afterAll(async () => {
    doc?.destroy();
    await server?.stop();
  });
  const aTable = async () => {
    const name = `history-${++tables}`;
    await createSpecsTable(server.endpoint, name);
    return name;
  };

  it('keeps each ecsr edit with its writer, newest first, with the TTL attribute', async () => {
    // Prepare
    const table = await aTable();
    const history = new SpecHistory(doc, table);

    // Act
    await history.recordCliEdit(key, { writtenBy: ARN, via: 'ecsr apply', spec: specAt('nginx:1.27'), at: new Date('2026-01-01T00:00:00Z') });
    await history.recordCliEdit(key, { writtenBy: ARN, via: 'ecsr set image', spec: specAt('nginx:1.28'), at: new Date('2026-01-01T00:10:00Z') });
    const list = await history.list(key);
    const raw = await doc.send(new QueryCommand({ TableName: table, KeyConditionExpression: '#pk = :pk', ExpressionAttributeNames: { '#pk': 'cluster' }, ExpressionAttributeValues: { ':pk': HISTORY_PARTITION } }));

    // Assess
    expect(list.map((r) => [r.revision, r.writtenBy, r.via, r.source, (r.spec as { image?: string }).image])).toEqual([
      [2, ARN, 'ecsr set image', 'ecsr', 'nginx:1.28'],
      [1, ARN, 'ecsr apply', 'ecsr', 'nginx:1.27'],
    ]);
    expect(list[0].specHash).toMatch(/^[0-9a-f]{16}$/);
    expect(list[0].specHash).not.toBe(list[1].specHash);
    expect(raw.Items?.map((i) => i[HISTORY_TTL_ATTRIBUTE])).toEqual([Date.parse('2026-01-01T00:00:00Z') / 1000 + 400 * 86_400, Date.parse('2026-01-01T00:10:00Z') / 1000 + 400 * 86_400]);
  });

  it('records an edit seen only on the stream as written outside ecsr, once', async () => {
    // Prepare: ecsr wrote revision 1; someone else then changes the image in the console
    const table = await aTable();
    const history = new SpecHistory(doc, table);
    await history.recordCliEdit(key, { writtenBy: ARN, via: 'ecsr apply', spec: specAt('nginx:1.27'), at: new Date('2026-01-01T00:00:00Z') });
    const ecsrInsert = record('INSERT', new Date('2026-01-01T00:00:00Z'), undefined, specAt('nginx:1.27'));
    const console = record('MODIFY', new Date('2026-01-01T00:20:00Z'), specAt('nginx:1.27'), specAt('nginx:bad'));

    // Act: the batch holds ecsr's own insert, the console's edit, and that edit again (at least once delivery)
    const summary = await recordStreamHistory(doc, table, [ecsrInsert, console, console], new RecordingLog());
    const list = await history.list(key);

    // Assess
    expect(summary).toEqual({ revisions: 1, outcomes: 0, failed: 0 });
    expect(list.map((r) => [r.revision, r.writtenBy, r.source, r.writtenAt])).toEqual([
      [2, OUTSIDE_WRITER, 'outside', '2026-01-01T00:20:00.000Z'],
      [1, ARN, 'ecsr', '2026-01-01T00:00:00.000Z'],
    ]);
  });

  it('lets ecsr claim the revision the stream recorded first, instead of a second one', async () => {
    // Prepare: the stream path handled ecsr's write before ecsr wrote its revision
    const table = await aTable();
    const history = new SpecHistory(doc, table);
    await recordStreamHistory(doc, table, [record('INSERT', new Date('2026-01-01T00:00:00Z'), undefined, specAt('nginx:1.27'))], new RecordingLog());

    // Act
    await history.recordCliEdit(key, { writtenBy: ARN, via: 'ecsr apply', spec: specAt('nginx:1.27'), at: new Date('2026-01-01T00:00:01Z') });

    // Assess
    expect((await history.list(key)).map((r) => [r.revision, r.writtenBy, r.source, r.via])).toEqual([[1, ARN, 'ecsr', 'ecsr apply']]);
  });

  it('records the outcome the pass wrote: converged, then rolled back by ECS with its reason', async () => {
    // Prepare: two revisions by ecsr
    const table = await aTable();
    const history = new SpecHistory(doc, table);
    const first = await history.recordCliEdit(key, { writtenBy: ARN, via: 'ecsr apply', spec: specAt('nginx:1.27'), at: new Date('2026-01-01T00:00:00Z') });
    const second = await history.recordCliEdit(key, { writtenBy: ARN, via: 'ecsr set image', spec: specAt('nginx:bad'), at: new Date('2026-01-01T00:10:00Z') });
    const item = (image: string, s?: object) => ({ ...specAt(image), ...(s ? { status: s } : {}) });
    const converged = status({ specHash: first.specHash });
    const rolledBack = status({ phase: 'Degraded', specHash: second.specHash, failedSpecHash: second.specHash, reason: 'ECS rolled back: tasks failed to start' });

    // Act: the pass's status writes, as the stream carries them (status-only MODIFYs)
    const summary = await recordStreamHistory(
      doc,
      table,
      [
        record('MODIFY', new Date('2026-01-01T00:05:00Z'), item('nginx:1.27'), item('nginx:1.27', converged)),
        record('MODIFY', new Date('2026-01-01T00:10:00Z'), item('nginx:1.27', converged), item('nginx:bad', converged)),
        record('MODIFY', new Date('2026-01-01T00:15:00Z'), item('nginx:bad', converged), item('nginx:bad', rolledBack)),
      ],
      new RecordingLog(),
    );
    const list = await history.list(key);

    // Assess: no revision for ecsr's own edit, one outcome each
    expect(summary).toEqual({ revisions: 0, outcomes: 2, failed: 0 });
    expect(list.map((r) => [r.revision, r.outcome?.kind, r.outcome?.message])).toEqual([
      [2, 'rolled-back', 'ECS rolled back: tasks failed to start'],
      [1, 'converged', undefined],
    ]);
  });

  it('keeps the last revisions per service: revision N deletes revision N - HISTORY_KEEP', async () => {
    // Prepare
    const table = await aTable();
    const history = new SpecHistory(doc, table);

    // Act
    for (let i = 1; i <= HISTORY_KEEP + 1; i++) {
      await history.append(key, { writtenBy: ARN, source: 'ecsr', via: 'ecsr apply', spec: specAt('nginx:1.27', i) });
    }
    const list = await history.list(key);

    // Assess
    expect(list).toHaveLength(HISTORY_KEEP);
    expect(list.at(0)?.revision).toBe(HISTORY_KEEP + 1);
    expect(list.at(-1)?.revision).toBe(2);
  }, 120_000);

  it('refuses a spec write conditioned on a read once the spec changed (a nested value), not for a status write', async () => {
    // Prepare: a spec with a String Set and a map, read as rollback reads it
    const table = await aTable();
    const specs = new SpecTable(table, doc);
    const stored = { ...specAt('nginx:1.27'), subnets: new Set(['subnet-0a1b2c3d4e5f60001', 'subnet-0a1b2c3d4e5f60002']), environment: { MODE: 'a' } };
    await doc.send(new PutCommand({ TableName: table, Item: stored }));
    const read = async () => {
      const { status: _status, ...item } = (await doc.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item ?? {};
      return item;
    };
    const seen = await read();
    const parsed = parseSpecItem({ ...specAt('nginx:1.26'), environment: { MODE: 'a' } });
    if (!parsed.ok) throw new Error('fixture');

    // Act: the pass writes a status (allowed), then someone changes one environment value
    await doc.send(new UpdateCommand({ TableName: table, Key: key, UpdateExpression: 'SET #s = :s', ExpressionAttributeNames: { '#s': 'status' }, ExpressionAttributeValues: { ':s': status({}) } }));
    const afterStatus = await specs.writeSpec(parsed.spec, { unchangedSince: seen }).then(
      () => 'written',
      (e: Error) => e.message,
    );
    await doc.send(new PutCommand({ TableName: table, Item: stored }));
    const seenAgain = await read();
    await doc.send(new UpdateCommand({ TableName: table, Key: key, UpdateExpression: 'SET #e.#m = :b', ExpressionAttributeNames: { '#e': 'environment', '#m': 'MODE' }, ExpressionAttributeValues: { ':b': 'b' } }));
    const refused = await specs.writeSpec(parsed.spec, { unchangedSince: seenAgain }).then(
      () => 'written',
      (e: Error) => e.message,
    );

    // Assess
    expect(afterStatus).toBe('written');
    expect(refused).toBe(`The spec prod/web changed in table ${table} since it was read, so nothing was written: look again (ecsr history prod/web) and retry.`);
    expect((await read()).image).toBe('nginx:1.27');
  });

  it('keeps another target\'s revisions under its own key, with the same hash ecsr gives them', async () => {
    // Prepare: target staging's spec item is stored under staging/prod
    const table = await aTable();
    const history = new SpecHistory(doc, table, 'staging');
    await history.recordCliEdit(key, { writtenBy: ARN, via: 'ecsr apply', spec: specAt('nginx:1.27'), at: new Date('2026-01-01T00:00:00Z') });

    // Act: the stream carries the stored item (cluster staging/prod)
    const stored = { ...specAt('nginx:1.27'), cluster: 'staging/prod' };
    const summary = await recordStreamHistory(doc, table, [record('INSERT', new Date('2026-01-01T00:00:00Z'), undefined, stored, 'staging/prod')], new RecordingLog());

    // Assess
    expect(summary.revisions).toBe(0);
    expect(await new SpecHistory(doc, table).list(key)).toEqual([]);
    expect((await history.list(key)).map((r) => r.revision)).toEqual([1]);
  });
}

describe('spec history on dynalite', () => {
  historyCases(async () => {
    const db: EmbeddedDynamoDb = await startEmbeddedDynamoDb(0);
    return { endpoint: db.endpoint, stop: () => db.stop() };
  });
});

describe('spec history on moto', needs('moto'), () => {
  historyCases(async () => {
    const moto: MotoServer = await startMoto();
    return { endpoint: moto.endpoint, stop: () => moto.stop() };
  });
});

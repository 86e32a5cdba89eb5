/**
 * The spec store's per-key part, as the fast path and the scheduled pass use it: reading items by
 * key (BatchGetItem), the fences (conditional UpdateItem / DeleteItem, Query) and the status
 * written only over the version read. Each case runs against dynalite and against moto, so the
 * requests hold for two implementations we did not write.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { startEmbeddedDynamoDb } from '../../local/embedded-dynamodb';
import { DynamoSpecStore, STATUS_VERSION } from '../../lambda/adapters/dynamo-spec-store';
import { FENCE_PARTITION } from '../../lambda/adapters/fence-items';
import { fenceId, type Fence } from '../../lambda/core/ports';
import type { ServiceStatus } from '../../lambda/core/types';
import { startMoto } from '../support/moto';
import { has } from '../support/tools';
import { aSpecItem, createSpecsTable, localDoc } from '../runtime/support';

const T0 = new Date('2026-12-04T01:00:00Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const WEB: Fence = { kind: 'service', key: { cluster: 'apps', service: 'web' } };
const FAMILY: Fence = { kind: 'family', family: 'apps-web' };

function aStatus(overrides: Partial<ServiceStatus> = {}): ServiceStatus {
  return { phase: 'Converged', conditions: [], desiredCount: 1, runningCount: 1, pendingCount: 0, lagBeyondGrace: false, observedAt: T0.toISOString(), ...overrides };
}

const servers = [
  { name: 'dynalite', start: async () => { const db = await startEmbeddedDynamoDb(); return { endpoint: db.endpoint, stop: () => db.stop() }; } },
  ...(has('moto') ? [{ name: 'moto', start: async () => { const m = await startMoto(); return { endpoint: m.endpoint, stop: () => m.stop() }; } }] : []),
];

describe.each(servers)('the spec store by key on $name', ({ start }) => {
  let server: { endpoint: string; stop: () => Promise<void> };
  let doc: DynamoDBDocumentClient;
  let table = '';
  let n = 0;
  let store: DynamoSpecStore;

  beforeAll(async () => {
    server = await start();
    doc = localDoc(server.endpoint);
  }, 60_000);
  afterAll(async () => {
    doc?.destroy();
    await server?.stop();
  });
  beforeEach(async () => {
    table = `keys-${++n}`;
    await createSpecsTable(server.endpoint, table);
    store = new DynamoSpecStore(doc, table);
  });

  const put = (item: Record<string, unknown>) => doc.send(new PutCommand({ TableName: table, Item: item }));

  it('reads only the items of its keys, more than one BatchGetItem holds, with their statuses; missing and reserved keys are left out', async () => {
    // Prepare: 120 services (two calls of 100), one with a status, and a fence item.
    for (let i = 0; i < 120; i++) await put(aSpecItem({ service: `svc-${i}`, ...(i === 7 ? { status: aStatus() } : {}) }));
    await put(aSpecItem({ service: 'not-asked' }));
    await store.takeFences('someone', [WEB], 60, T0);
    const keys = [...Array.from({ length: 120 }, (_, i) => ({ cluster: 'apps', service: `svc-${i}` })), { cluster: 'apps', service: 'gone' }, { cluster: FENCE_PARTITION, service: 'x' }];

    // Act
    const read = await store.readKeys(keys);

    // Assess
    expect(read.complete).toBe(true);
    expect(read.specs.map((s) => s.key?.service).sort()).toEqual(keys.slice(0, 120).map((k) => k.service).sort());
    expect(read.specs.every((s) => s.ok)).toBe(true);
    expect(Object.keys(read.statuses)).toEqual(['apps/svc-7']);
  });

  it('a fence is taken by one holder at a time, until it is released or expires; every take raises its generation', async () => {
    // Act
    const first = await store.takeFences('a', [WEB, FAMILY], 60, T0);
    const other = await store.takeFences('b', [WEB], 60, at(10));
    await store.releaseFences('b', [WEB]);
    const stillA = await store.takeFences('b', [WEB], 60, at(20));
    const afterExpiry = await store.takeFences('b', [WEB], 60, at(61));
    await store.releaseFences('b', [WEB]);
    const fences = await store.readFences();

    // Assess
    expect(first.taken).toEqual([WEB, FAMILY]);
    expect(other).toMatchObject({ taken: [], refused: [{ fence: WEB, holder: 'a' }] });
    expect(stillA.refused).toHaveLength(1);
    expect(afterExpiry.taken).toEqual([WEB]);
    expect(fences.get(fenceId(WEB))).toEqual({ fence: WEB, gen: 2 });
    expect(fences.get(fenceId(FAMILY))).toMatchObject({ fence: FAMILY, gen: 1, holder: 'a' });
  });

  it('with what a read saw, a fence is taken only if nobody took it since and nobody held it then', async () => {
    // Prepare: web taken and released before the read, api free, db held at the read.
    const API: Fence = { kind: 'service', key: { cluster: 'apps', service: 'api' } };
    const DB: Fence = { kind: 'service', key: { cluster: 'apps', service: 'db' } };
    const NEW: Fence = { kind: 'service', key: { cluster: 'apps', service: 'new' } };
    await store.takeFences('fast-0', [WEB, API], 60, T0);
    await store.releaseFences('fast-0', [WEB, API]);
    await store.takeFences('fast-1', [DB], 60, T0);
    const seen = await store.readFences();
    // Since the read: a fast path takes web and releases it, and takes `new` (no item at the read).
    await store.takeFences('fast-2', [WEB, NEW], 60, at(1));
    await store.releaseFences('fast-2', [WEB, NEW]);
    await store.releaseFences('fast-1', [DB]);

    // Act
    const got = await store.takeFences('scheduled', [WEB, API, DB, NEW, FAMILY], 60, at(2), seen);

    // Assess
    expect(got.taken).toEqual([API, FAMILY]);
    expect(got.refused.map((r) => fenceId(r.fence)).sort()).toEqual([DB, NEW, WEB].map(fenceId).sort());
  });

  it('forgets idle fences a read saw, never one taken since', async () => {
    // Prepare
    const API: Fence = { kind: 'service', key: { cluster: 'apps', service: 'api' } };
    await store.takeFences('fast', [WEB, API], 60, T0);
    await store.releaseFences('fast', [WEB, API]);
    const seen = await store.readFences();
    await store.takeFences('fast-2', [API], 60, at(1));

    // Act
    const forgotten = await store.forgetFences(seen, at(2), 100);

    // Assess
    expect(forgotten).toBe(1);
    expect([...(await store.readFences()).keys()]).toEqual([fenceId(API)]);
  });

  it('other targets’ fences are neither read nor taken', async () => {
    // Prepare
    const staging = new DynamoSpecStore(doc, table, { target: 'staging' });
    await staging.takeFences('s', [WEB], 60, T0);

    // Act
    const mine = await store.takeFences('d', [WEB], 60, T0);

    // Assess
    expect(mine.taken).toEqual([WEB]);
    expect([...(await store.readFences()).values()]).toEqual([{ fence: WEB, gen: 1, holder: 'd', expiresAt: at(60) }]);
    expect([...(await staging.readFences()).values()]).toMatchObject([{ fence: WEB, gen: 1, holder: 's' }]);
  });

  it('a status is written over the version read only: never over one another pass wrote since', async () => {
    // Prepare
    await put(aSpecItem({ service: 'web' }));
    await put(aSpecItem({ service: 'api', status: { phase: 'Converged', hand: 'written' } }));
    const key = { cluster: 'apps', service: 'web' };
    const read = await store.readAll();
    const version = read.statusVersions?.['apps/web'];

    // Act
    const firstWrite = await store.writeStatus(key, aStatus({ reason: 'first' }), version);
    const stale = await store.writeStatus(key, aStatus({ reason: 'stale' }), version);
    const reread = await store.readAll();
    const next = await store.writeStatus(key, aStatus({ reason: 'next' }), reread.statusVersions?.['apps/web']);
    const apiWrite = await store.writeStatus({ cluster: 'apps', service: 'api' }, aStatus(), read.statusVersions?.['apps/api']);

    // Assess
    expect(version).toBe('');
    expect(read.statusVersions?.['apps/api']).toBe('');
    expect([firstWrite, stale, next, apiWrite]).toEqual([true, false, true, true]);
    const item = (await doc.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;
    expect(item?.status).toMatchObject({ reason: 'next' });
    expect(typeof item?.status[STATUS_VERSION]).toBe('string');
    expect(reread.statuses['apps/web']).not.toHaveProperty(STATUS_VERSION);
  });
});

/**
 * The fast path: stream records of the specs table, turned into keys
 * (`keysOfStreamRecords`), reconciled by a pass restricted to them (`runtime.runFastPath`) against
 * dynalite and the ECS simulator. Records are built as DynamoDB Streams delivers them
 * (NEW_AND_OLD_IMAGES); the simulator's virtual clock stands for time.
 */
import { describe, expect, it } from 'vitest';
import type { DynamoDBRecord } from 'aws-lambda';
import { DynamoSpecStore, LEASE_KEY } from '../../lambda/adapters/dynamo-spec-store';
import { keysOfStreamRecords, isDynamoDbStreamEvent } from '../../lambda/adapters/stream-records';
import { FAST_PATH_LEASE_POLL_MS } from '../../lambda/core/fast-path';
import { METRIC } from '../../lambda/core/metric-names';
import type { ServiceKey } from '../../lambda/core/types';
import { aSpecItem, aStreamRecord as aRecord, aValidSpec, useSimHarness } from './support';

const WEB = { cluster: 'apps', service: 'web' };
const API = { cluster: 'apps', service: 'api' };
const IMAGE = (tag: string) => `public.ecr.aws/nginx/nginx:${tag}`;

describe('stream records as keys (keysOfStreamRecords)', () => {
  const web = aSpecItem();
  it.each([
    { case: 'an insert', records: [aRecord('INSERT', WEB, { new: web })], keys: [WEB] },
    {
      case: 'an edit of the spec',
      records: [aRecord('MODIFY', WEB, { old: web, new: { ...web, image: IMAGE('1.28') } })],
      keys: [WEB],
    },
    { case: 'a removed item', records: [aRecord('REMOVE', WEB, { old: web })], keys: [WEB] },
    {
      case: 'duplicates and two services, first-seen order',
      records: [aRecord('INSERT', API, { new: web }), aRecord('INSERT', WEB, { new: web }), aRecord('MODIFY', API, { old: web, new: { ...web, desiredCount: 3 } })],
      keys: [API, WEB],
    },
    {
      case: 'a status write only (the reconciler’s own)',
      records: [aRecord('MODIFY', WEB, { old: { ...web, status: { phase: 'Pending' } }, new: { ...web, status: { phase: 'Converged' } } })],
      keys: [],
      ignored: { statusOnly: 1 },
    },
    {
      case: 'the same spec with attributes in another order',
      records: [aRecord('MODIFY', WEB, { old: web, new: Object.fromEntries(Object.entries(web).reverse()) })],
      keys: [],
      ignored: { statusOnly: 1 },
    },
    {
      case: 'the lease and cursor items',
      records: [aRecord('MODIFY', LEASE_KEY, { old: { ...LEASE_KEY, holder: 'a' }, new: { ...LEASE_KEY, holder: 'b' } }), aRecord('INSERT', { cluster: '#cursor', service: '#cursor' }, { new: { cursorCluster: 'apps' } })],
      keys: [],
      ignored: { reserved: 2 },
    },
    {
      case: 'a record without string keys',
      records: [{ eventSource: 'aws:dynamodb', eventName: 'INSERT', dynamodb: { Keys: { cluster: { N: '1' } } } } as DynamoDBRecord],
      keys: [],
      ignored: { malformed: 1 },
    },
  ])('$case', ({ records, keys, ignored }) => {
    // Act
    const out = keysOfStreamRecords(records);

    // Assess
    expect(out.keys).toEqual(keys);
    expect(out.ignored).toEqual({ reserved: 0, statusOnly: 0, malformed: 0, ...ignored });
  });

  it('tells a stream batch from the schedule’s event', () => {
    expect(isDynamoDbStreamEvent({ Records: [aRecord('INSERT', WEB, { new: web })] })).toBe(true);
    expect(isDynamoDbStreamEvent({ source: 'aws.events', 'detail-type': 'Scheduled Event' })).toBe(false);
    expect(isDynamoDbStreamEvent({ Records: [] })).toBe(false);
    expect(isDynamoDbStreamEvent({ Records: [{ eventSource: 'aws:sqs' }] })).toBe(false);
  });
});

describe('the fast path against dynalite and the ECS simulator', () => {
  const h = useSimHarness();

  /** Sleeps in the simulator's virtual time; `onSleep` runs before each sleep. */
  const virtualSleep = (onSleep: (n: number) => void = () => undefined) => {
    let n = 0;
    return async (ms: number) => {
      onSleep(++n);
      h.sim.advance(ms / 1000);
    };
  };

  const fastPath = (records: DynamoDBRecord[], holder = 'fast', extra: { leaseWaitMs?: number; sleep?: (ms: number) => Promise<void> } = {}) =>
    h.runtime.runFastPath(keysOfStreamRecords(records).keys, { holder, sleep: extra.sleep ?? virtualSleep(), ...extra });

  /** Converges WEB and API, then edits both images; only `records` are delivered. */
  async function twoServicesEdited(tag: string): Promise<{ web: Record<string, unknown>; next: Record<string, unknown> }> {
    const web = aSpecItem({ service: 'web' });
    await h.putSpec(web);
    await h.putSpec(aSpecItem({ service: 'api' }));
    await h.converge();
    const next = { ...web, image: IMAGE(tag) };
    await h.editSpec(WEB, { image: IMAGE(tag) });
    await h.editSpec(API, { image: IMAGE(tag) });
    h.sim.clearCalls();
    return { web, next };
  }

  it('reconciles only the edited service a record names, through the same pass', async () => {
    // Prepare
    const { web, next } = await twoServicesEdited('1.28');

    const heartbeats = () => h.metrics.data.filter((d) => d.name === METRIC.passSucceeded).length;
    const before = heartbeats();

    // Act
    const result = await fastPath([aRecord('MODIFY', WEB, { old: web, new: next })]);

    // Assess
    expect(result?.summary.outcome).toBe('completed');
    expect(result?.summary.actions.map((a) => [a.type, a.service, a.outcome])).toEqual([
      ['RegisterTaskDefinition', 'web', 'applied'],
      ['UpdateService', 'web', 'applied'],
    ]);
    expect(h.sim.calls({ action: 'UpdateService' }).map((c) => c.request.service)).toEqual(['web']);
    expect((await h.describe('apps', 'api'))?.taskDefinition).toMatch(/apps-api:1$/);
    // The heartbeat stays the scheduled pass's.
    expect(heartbeats()).toBe(before);
    expect(h.metrics.data.some((d) => d.name === METRIC.actionsApplied && d.value === 2)).toBe(true);
  });

  it('a duplicate record, in the batch and redelivered, never runs an action twice', async () => {
    // Prepare
    const { web, next } = await twoServicesEdited('1.28');
    const record = aRecord('MODIFY', WEB, { old: web, new: next });

    // Act: the record twice in one batch, then the whole batch again (at-least-once delivery).
    const first = await fastPath([record, record], 'fast-1');
    h.sim.advance(1);
    const again = await fastPath([record, record], 'fast-2');

    // Assess
    expect(first?.summary.actions.map((a) => a.type)).toEqual(['RegisterTaskDefinition', 'UpdateService']);
    expect(again?.summary.actions).toEqual([]);
    expect(h.writes()).toEqual(['RegisterTaskDefinition', 'UpdateService']);
  });

  it('out-of-order records act on the table’s current spec, never on an older image', async () => {
    // Prepare: two edits, 1.27 -> 1.28 -> 1.29; records delivered newest first.
    const web = aSpecItem({ service: 'web' });
    await h.putSpec(web);
    await h.converge();
    const mid = { ...web, image: IMAGE('1.28') };
    const last = { ...web, image: IMAGE('1.29') };
    await h.editSpec(WEB, { image: IMAGE('1.28') });
    await h.editSpec(WEB, { image: IMAGE('1.29') });
    h.sim.clearCalls();

    // Act
    const newer = await fastPath([aRecord('MODIFY', WEB, { old: mid, new: last })], 'fast-newer');
    h.sim.advance(1);
    const older = await fastPath([aRecord('MODIFY', WEB, { old: web, new: mid })], 'fast-older');

    // Assess
    expect(newer?.summary.actions.map((a) => a.type)).toEqual(['RegisterTaskDefinition', 'UpdateService']);
    expect(older?.summary.actions).toEqual([]);
    expect(h.sim.calls({ action: 'RegisterTaskDefinition' })).toHaveLength(1);
    expect((await h.describe('apps', 'web'))?.taskDefinition).toMatch(/apps-web:2$/);
    expect(await h.status(WEB)).toMatchObject({ lastAppliedSpecHash: aValidSpec({ image: IMAGE('1.29') }).hash });
  });

  it('a record for a deleted item changes nothing; the scheduled pass prunes', async () => {
    // Prepare
    const api = aSpecItem({ service: 'api' });
    await h.putSpec(aSpecItem({ service: 'web' }));
    await h.putSpec(api);
    await h.converge();
    await h.deleteSpec(API);
    h.sim.clearCalls();

    // Act
    const fast = await fastPath([aRecord('REMOVE', API, { old: api })]);

    // Assess: no action, no status item written back, the service still runs.
    expect(fast?.summary.outcome).toBe('completed');
    expect(fast?.summary.actions).toEqual([]);
    expect(h.writes()).toEqual([]);
    expect(await h.item(API)).toBeUndefined();
    expect((await h.describe('apps', 'api'))?.status).toBe('ACTIVE');
    const scheduled = await h.pass('scheduled');
    expect(scheduled.actions.map((a) => [a.type, a.service])).toEqual([['DeleteService', 'api']]);
  });

  it("does not wait for the scheduled pass's lease: no whole-table lease is held for one key", async () => {
    // Prepare: a long scheduled pass holds the table's lease (another invocation).
    const { web, next } = await twoServicesEdited('1.28');
    const store = h.runtime.ports.specs as DynamoSpecStore;
    await store.acquireLease('scheduled-pass', 600, h.sim.clock.now());

    // Act
    const result = await fastPath([aRecord('MODIFY', WEB, { old: web, new: next })]);

    // Assess
    expect(result?.attempts).toBe(1);
    expect(result?.summary.actions.map((a) => a.type)).toEqual(['RegisterTaskDefinition', 'UpdateService']);
    expect((await h.item(LEASE_KEY))?.holder).toBe('scheduled-pass');
  });

  it('waits for the fence of a service another pass acts on, and acts only once it is released', async () => {
    // Prepare: another pass holds web's fence; it releases it at the third try.
    const { web, next } = await twoServicesEdited('1.28');
    const store = h.runtime.ports.specs as DynamoSpecStore;
    await store.takeFences('scheduled-pass', [{ kind: 'service', key: WEB }], 600, h.sim.clock.now());
    let writesWhileHeld = -1;
    let sleeps = 0;
    const sleepAndRelease = async (ms: number) => {
      h.sim.advance(ms / 1000);
      if (++sleeps === 3) {
        writesWhileHeld = h.writes().length;
        await store.releaseFences('scheduled-pass', [{ kind: 'service', key: WEB }]);
      }
    };

    // Act
    const result = await fastPath([aRecord('MODIFY', WEB, { old: web, new: next })], 'fast', { sleep: sleepAndRelease });

    // Assess
    expect(writesWhileHeld).toBe(0);
    expect(result?.attempts).toBe(4);
    expect(result?.waitedMs).toBe(3 * FAST_PATH_LEASE_POLL_MS);
    expect(result?.summary.actions.map((a) => a.type)).toEqual(['RegisterTaskDefinition', 'UpdateService']);
  });

  it('gives up on a fence that stays held; the next scheduled pass repairs the edit first', async () => {
    // Prepare
    const { web, next } = await twoServicesEdited('1.28');
    const store = h.runtime.ports.specs as DynamoSpecStore;
    await store.takeFences('scheduled-pass', [{ kind: 'service', key: WEB }], 600, h.sim.clock.now());

    // Act
    const result = await fastPath([aRecord('MODIFY', WEB, { old: web, new: next })], 'fast', { leaseWaitMs: 2_000 });
    await store.releaseFences('scheduled-pass', [{ kind: 'service', key: WEB }]);
    const scheduled = await h.pass('scheduled');

    // Assess
    expect(result?.summary.outcome).toBe('lease-held');
    expect(result?.summary.lease?.holder).toBe('scheduled-pass');
    expect(result?.waitedMs).toBeLessThanOrEqual(2_000);
    expect(result?.attempts).toBe(9); // tries at 0, 250, ..., 2,000 ms
    expect(h.log.lines.some((l) => l.message.startsWith('fast path: the fences stayed held'))).toBe(true);
    expect(scheduled.actions.filter((a) => a.type === 'UpdateService').map((a) => a.service).sort()).toEqual(['api', 'web']);
  });

  it('a fast path that acts after the scheduled pass read the table: the scheduled pass leaves that service alone', async () => {
    // Prepare: the fast path runs inside the scheduled pass, after its Scan and observation, just
    // before it takes its fences to act.
    const { web, next } = await twoServicesEdited('1.28');
    const store = h.runtime.ports.specs as DynamoSpecStore;
    const take = store.takeFences.bind(store);
    let fast: Awaited<ReturnType<typeof fastPath>>;
    store.takeFences = async (holder, ...rest) => {
      if (holder === 'scheduled' && !fast) fast = await fastPath([aRecord('MODIFY', WEB, { old: web, new: next })], 'fast');
      return take(holder, ...rest);
    };

    // Act
    const scheduled = await h.pass('scheduled');

    // Assess: web acted on once, by the fast path; the scheduled pass acted on api only and left
    // web's status as the fast path wrote it.
    expect(fast?.summary.actions.map((a) => [a.type, a.service])).toEqual([
      ['RegisterTaskDefinition', 'web'],
      ['UpdateService', 'web'],
    ]);
    expect(scheduled.actions.map((a) => [a.type, a.service])).toEqual([
      ['RegisterTaskDefinition', 'api'],
      ['UpdateService', 'api'],
    ]);
    expect(h.sim.calls({ action: 'UpdateService' }).map((c) => c.request.service).sort()).toEqual(['api', 'web']);
    expect(h.sim.calls({ action: 'RegisterTaskDefinition' }).map((c) => c.request.family).sort()).toEqual(['apps-api', 'apps-web']);
    expect(await h.status(WEB)).toMatchObject({ lastAppliedSpecHash: aValidSpec({ image: IMAGE('1.28') }).hash });
  });

  it('a fast path while the scheduled pass acts on the same service: it does not act, the scheduled pass does, once', async () => {
    // Prepare: the fast path runs when the scheduled pass starts its actions (its fences taken).
    const { web, next } = await twoServicesEdited('1.28');
    const writer = h.runtime.ports.writer;
    const apply = writer.apply.bind(writer);
    let fast: Awaited<ReturnType<typeof fastPath>>;
    writer.apply = async (...args) => {
      fast ??= await fastPath([aRecord('MODIFY', WEB, { old: web, new: next })], 'fast', { leaseWaitMs: 0 });
      return apply(...args);
    };

    // Act
    const scheduled = await h.pass('scheduled');

    // Assess
    expect(fast?.summary.outcome).toBe('lease-held');
    expect(fast?.summary.lease?.holder).toBe('scheduled');
    expect(scheduled.actions.filter((a) => a.service === 'web').map((a) => a.type)).toEqual(['RegisterTaskDefinition', 'UpdateService']);
    expect(h.sim.calls({ action: 'UpdateService' }).filter((c) => c.request.service === 'web')).toHaveLength(1);
  });

  it("a new spec naming another running service's family is left to the scheduled pass, which refuses it", async () => {
    // Prepare: web runs family apps-web; a new spec names that family.
    await h.putSpec(aSpecItem({ service: 'web' }));
    await h.converge();
    const other = aSpecItem({ service: 'other', family: 'apps-web' });
    await h.putSpec(other);
    h.sim.clearCalls();

    // Act
    const fast = await fastPath([aRecord('INSERT', { cluster: 'apps', service: 'other' }, { new: other })]);
    const scheduled = await h.pass('scheduled');

    // Assess
    expect(fast?.summary.actions).toEqual([]);
    expect(h.log.lines.some((l) => l.message.startsWith('fast path: services left to the scheduled pass'))).toBe(true);
    expect(scheduled.actions).toEqual([]);
    expect(h.writes()).toEqual([]);
    const status = await h.status({ cluster: 'apps', service: 'other' });
    expect(status?.phase).toBe('Blocked');
    expect(status?.conditions.map((c) => c.reason)).toContain('FamilyCollision');
  });

  it('a lost record: the scheduled pass still applies the edit', async () => {
    // Prepare
    await twoServicesEdited('1.28');

    // Act: no record delivered at all.
    const scheduled = await h.pass('scheduled');

    // Assess
    expect(scheduled.actions.filter((a) => a.type === 'UpdateService').map((a) => a.service).sort()).toEqual(['api', 'web']);
  });

  it('runs nothing for a batch that names no service', async () => {
    // Act
    const result = await h.runtime.runFastPath([], { holder: 'fast' });

    // Assess
    expect(result).toBeUndefined();
    expect(await h.item(LEASE_KEY)).toBeUndefined();
  });
});

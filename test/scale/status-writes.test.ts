/**
 * Status writes at scale, over in-memory ports: a skipped action changes no status (a fleet waiting
 * to be created is not rewritten every pass), writes run a few at a time, the statuses of services
 * acted on go first, and no write starts once the pass's time for writing is over (lease or
 * invocation), so that a pass never writes after its lease expired.
 */
import { describe, expect, it } from 'vitest';
import { runPass, STATUS_WRITE_CONCURRENCY, STATUS_WRITE_LEASE_MARGIN_SECONDS, STATUS_WRITE_RESERVE_MS } from '../../lambda/core/pass';
import type { ServiceStatus } from '../../lambda/core/types';
import { aSpec, aStatus, NOW } from '../support/builders';
import { FakeEcs, ManualClock, MemorySpecStore, memoryPorts, passOptions } from './support';

const name = (i: number) => `s${String(i).padStart(2, '0')}`;
const newSpecs = (n: number, cluster = 'apps') => Array.from({ length: n }, (_, i) => aSpec({ cluster, service: name(i) }));

describe('status writes of a pass', () => {
  it.each([
    { case: 'a service never acted on', remembered: undefined },
    {
      case: 'a service whose earlier create was throttled',
      remembered: {
        type: 'CreateService' as const,
        at: '2025-06-01T11:50:00.000Z',
        summary: 'CreateService: service s00 does not exist; create it',
        error: 'throttled: Rate exceeded',
      },
    },
  ])('a skipped action changes no status, so a service waiting for its turn is not rewritten: $case', async ({ remembered }) => {
    // Prepare: three services to create; no action gets its turn (out of time), twice.
    const clock = new ManualClock(NOW.getTime());
    const store = new MemorySpecStore(newSpecs(3), clock);
    if (remembered) store.statuses['apps/s00'] = aStatus({ phase: 'Progressing', lastAction: remembered });
    const ports = memoryPorts(store, new FakeEcs().addCluster('apps'), clock);
    const options = passOptions({ shouldContinue: () => false });

    // Act
    const first = await runPass(ports, options);
    clock.advanceSeconds(60);
    const second = await runPass(ports, options);

    // Assess
    expect(first.counts.actionsSkipped).toBe(6);
    expect(first.counts.statusesWritten).toBe(3);
    expect(second.counts.actionsSkipped).toBe(6);
    expect(second.counts.statusesWritten).toBe(0);
    expect(store.statuses['apps/s00'].lastAction).toEqual(remembered);
    expect(store.statuses['apps/s00'].lastAppliedSpecHash).toBeUndefined();
  });

  it('a started action is recorded even when the service\'s next action is skipped', async () => {
    // Prepare: one action gets its turn (the RegisterTaskDefinition of s00), the rest do not.
    const clock = new ManualClock(NOW.getTime());
    const store = new MemorySpecStore(newSpecs(2), clock);
    const ports = memoryPorts(store, new FakeEcs().addCluster('apps'), clock);
    let turns = 1;

    // Act
    const s = await runPass(ports, passOptions({ shouldContinue: () => turns-- > 0 }));

    // Assess
    expect(s.actions.map((a) => `${a.service} ${a.type} ${a.outcome}`)).toEqual([
      's00 RegisterTaskDefinition applied',
      's00 CreateService skipped',
      's01 RegisterTaskDefinition skipped',
      's01 CreateService skipped',
    ]);
    expect(store.statuses['apps/s00'].lastAction).toMatchObject({ type: 'RegisterTaskDefinition', at: NOW.toISOString() });
    expect(store.statuses['apps/s00'].lastAction?.error).toBeUndefined();
    expect(store.statuses['apps/s01'].lastAction).toBeUndefined();
  });

  it.each([
    { case: 'default', concurrency: undefined, expected: STATUS_WRITE_CONCURRENCY },
    { case: 'configured', concurrency: 3, expected: 3 },
  ])('writes changed statuses a few at a time: $case', async ({ concurrency, expected }) => {
    // Prepare: 20 new services, each with a status to write.
    const clock = new ManualClock(NOW.getTime());
    const store = new MemorySpecStore(newSpecs(20), clock);
    const ports = memoryPorts(store, new FakeEcs().addCluster('apps'), clock);

    // Act
    const s = await runPass(ports, passOptions({ shouldContinue: () => false, ...(concurrency ? { statusWriteConcurrency: concurrency } : {}) }));

    // Assess
    expect(s.counts.statusesWritten).toBe(20);
    expect(store.maxInFlight).toBe(expected);
  });

  const LEASE_TTL_SECONDS = 20;
  const INVOCATION_MS = 6_000;
  it.each([
    {
      case: 'lease: none starts within the margin before the lease expires',
      leaseTtlSeconds: LEASE_TTL_SECONDS,
      remaining: false,
      lastStartMs: (LEASE_TTL_SECONDS - STATUS_WRITE_LEASE_MARGIN_SECONDS) * 1000,
    },
    {
      case: 'invocation: none starts with less than the reserve of invocation time left',
      leaseTtlSeconds: 600,
      remaining: true,
      lastStartMs: INVOCATION_MS - STATUS_WRITE_RESERVE_MS,
    },
  ])('stops writing statuses when the time for writing is over: $case', async ({ leaseTtlSeconds, remaining, lastStartMs }) => {
    // Prepare: 40 new services; DynamoDB so slow that each write moves the clock by a second.
    const clock = new ManualClock(NOW.getTime());
    const store = new MemorySpecStore(newSpecs(40), clock);
    store.writeSeconds = 1;
    const ports = memoryPorts(store, new FakeEcs().addCluster('apps'), clock);
    const start = clock.ms;

    // Act
    const s = await runPass(
      ports,
      passOptions({
        leaseTtlSeconds,
        shouldContinue: () => false,
        ...(remaining ? { remainingMs: () => INVOCATION_MS - (clock.ms - start) } : {}),
      }),
    );

    // Assess
    expect(store.writes.length).toBeGreaterThan(0);
    expect(store.writes.every((w) => w.startedAtMs - start < lastStartMs)).toBe(true);
    expect(s.counts.statusesPending).toBeGreaterThan(0);
    expect(s.counts.statusesWritten + s.counts.statusesPending).toBe(40);
    expect(s.outcome).toBe('completed');
  });

  it('when time is short, the statuses of services acted on are written first', async () => {
    // Prepare: ten specs in a cluster that does not exist (Blocked, a new status each, no action),
    // listed first; two to create in an existing cluster. Time for four writes only.
    const clock = new ManualClock(NOW.getTime());
    const store = new MemorySpecStore([...newSpecs(10, 'alpha'), ...newSpecs(2, 'zeta')], clock);
    store.writeSeconds = 1;
    const ports = memoryPorts(store, new FakeEcs().addCluster('zeta'), clock);

    // Act
    const s = await runPass(ports, passOptions({ leaseTtlSeconds: 4 + STATUS_WRITE_LEASE_MARGIN_SECONDS }));

    // Assess
    expect(s.counts.actionsApplied).toBe(4);
    expect(s.counts.statusesWritten).toBe(4);
    const written = store.writes.map((w) => `${w.key.cluster}/${w.key.service}`);
    expect(written.slice(0, 2).sort()).toEqual(['zeta/s00', 'zeta/s01']);
    const created: ServiceStatus = store.statuses['zeta/s00'];
    expect(created.lastAction).toMatchObject({ type: 'CreateService' });
  });
});

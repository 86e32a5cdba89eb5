/**
 * Every phase of a pass is bounded: listing and describing services stop at the
 * observation deadline, the pass plans and acts with what it read (never pruning or creating from
 * a partial read), writes a cursor, and the next pass goes on from there, so that every service is
 * read within a few passes however large the fleet. Over in-memory ports whose every ECS call
 * takes a second of the pass clock.
 */
import { describe, expect, it } from 'vitest';
import { LEASE_SAFETY_SECONDS, MAX_HISTORY_READS, OBSERVATION_TIME_SHARE, runPass, type PassOptions, type PassSummary } from '../../lambda/core/pass';
import { OWNER_TAG_KEY } from '../../lambda/core/ports';
import { runFastPath } from '../../lambda/core/fast-path';
import { METRIC } from '../../lambda/core/metric-names';
import type { ServiceSpec } from '../../lambda/core/types';
import { aSpec, anObservedService, NOW, planOptions } from '../support/builders';
import { ManualClock, memoryPorts } from './support';
import { convergedFleet, CursorStore, SlowEcs } from './rotation-support';

const name = (i: number) => `s${String(i).padStart(3, '0')}`;
const CLUSTERS = ['alpha', 'bravo', 'charlie'];

/** `perCluster` converged services in each of {@link CLUSTERS}, with their specs. */
function fleet(clock: ManualClock, perCluster: number) {
  const ecs = new SlowEcs(clock);
  const specs = convergedFleet(ecs, CLUSTERS, perCluster, name);
  const store = new CursorStore(specs, clock);
  const ports = memoryPorts(store, ecs, clock);
  return { ecs, store, ports, specs };
}

/** A lease of `seconds`: observation may spend {@link OBSERVATION_TIME_SHARE} of it less the safety margin. */
function opts(seconds: number, overrides: Partial<PassOptions> = {}): PassOptions {
  return { plan: planOptions(), dryRun: false, holder: 'rotation-test', leaseTtlSeconds: seconds, ...overrides };
}

/** Calls of one second each that one pass starts: one at every whole second of its observation window. */
function callsPerPass(leaseSeconds: number): number {
  return Math.floor(OBSERVATION_TIME_SHARE * (leaseSeconds - LEASE_SAFETY_SECONDS)) + 1;
}

const LONG = 600;
/** 17 s of observation: 18 calls a pass. */
const SHORT = 36;

async function pass(clock: ManualClock, ports: ReturnType<typeof fleet>['ports'], o: PassOptions): Promise<PassSummary> {
  clock.advanceSeconds(60);
  return runPass(ports, o);
}

describe('a pass bounded at every phase, and the cursor', () => {
  it('a fleet that fits one pass is read in the fewest calls, and the cursor stays on a cluster boundary', async () => {
    // Prepare: 3 x 25 services; a long lease.
    const clock = new ManualClock(NOW.getTime());
    const { ecs, store, ports } = fleet(clock, 25);
    await pass(clock, ports, opts(LONG));
    ecs.calls.length = 0;

    // Act
    const steady = await pass(clock, ports, opts(LONG));
    const again = await pass(clock, ports, opts(LONG));

    // Assess: ceil(25/100) ListServices and ceil(25/10) DescribeServices per cluster.
    expect(ecs.count('ListServices')).toBe(2 * 3);
    expect(ecs.count('DescribeServices')).toBe(2 * 3 * 3);
    expect(steady.rotation).toEqual({ complete: true, cursor: { cluster: 'alpha' } });
    expect(again.readsComplete).toBe(true);
    expect(store.cursorWrites).toEqual([{ cluster: 'alpha' }]);
    expect(steady.counts.servicesRead).toBe(75);
    expect(steady.counts.servicesNotRead).toBe(0);
  });

  it('cut while describing: plans only what it read, keeps the others\' status, and the next passes go on from the cursor', async () => {
    // Prepare: 3 x 60 services (3 x (1 + 6) = 21 calls to read them all) converged in a long pass;
    // then passes of 20 calls.
    const clock = new ManualClock(NOW.getTime());
    const { ecs, store, ports } = fleet(clock, 60);
    await pass(clock, ports, opts(LONG));
    const stored = structuredClone(store.statuses);
    expect(callsPerPass(SHORT)).toBeLessThan(21);
    // Someone scales a service of the last cluster by hand.
    ecs.service('charlie', name(59))!.desiredCount = 5;
    ecs.calls.length = 0;
    const metricsBefore = ports.metrics.data.length;

    // Act
    const first = await pass(clock, ports, opts(SHORT));
    const firstCalls = [...ecs.calls];
    const firstLag = ports.metrics.data.slice(metricsBefore).filter((d) => d.name === METRIC.taskLag);
    const afterFirst = structuredClone(store.statuses);
    const cursorAfterFirst = store.cursor;
    ecs.calls.length = 0;
    const second = await pass(clock, ports, opts(SHORT));

    // Assess: the first pass stopped at its deadline inside the last cluster and said where.
    expect(first.rotation?.complete).toBe(false);
    expect(first.rotation?.cursor.cluster).toBe('charlie');
    expect(firstCalls.length).toBeLessThanOrEqual(callsPerPass(SHORT));
    expect(first.counts.servicesRead + first.counts.servicesNotRead).toBe(180);
    expect(first.counts.servicesNotRead).toBeGreaterThan(0);
    expect(first.clusters).toEqual({ alpha: true, bravo: true, charlie: false });
    // What it did not read was neither planned nor rewritten, and no action touched it.
    expect(first.actions).toEqual([]);
    expect(first.counts.statusesWritten).toBe(0);
    expect(afterFirst).toEqual(stored);
    expect(first.statuses[`charlie/${name(59)}`]).toEqual(stored[`charlie/${name(59)}`]);
    expect(first.errors).toEqual([]);
    // Healthy services, read or not, emit no TaskLag series (each one is billed).
    expect(firstLag.filter((d) => d.value === 0)).toEqual([]);
    expect(cursorAfterFirst).toEqual(first.rotation?.cursor);
    // The second pass starts where the first stopped: the rest of charlie first.
    expect(ecs.calls[0]).toBe('ListServices charlie');
    expect(ecs.calls[1]).toMatch(new RegExp(`^DescribeServices charlie ${name(Number(first.rotation!.cursor.after!.slice(1)) + 1)},`));
    expect(second.actions.map((a) => `${a.type} ${a.cluster}/${a.service} ${a.outcome}`)).toEqual([`UpdateService charlie/${name(59)} applied`]);
  });

  it('every service is read within ceil(fleet calls / calls per pass) passes, each read once per cycle', async () => {
    // Prepare
    const clock = new ManualClock(NOW.getTime());
    const { ecs, ports } = fleet(clock, 60);
    await pass(clock, ports, opts(LONG));
    ecs.calls.length = 0;
    const perPass = callsPerPass(SHORT);

    // Act: enough passes for two cycles.
    const summaries: PassSummary[] = [];
    for (let i = 0; i < 4; i++) summaries.push(await pass(clock, ports, opts(SHORT)));

    // Assess: names read over the first two passes cover the fleet.
    const described = ecs.calls.filter((c) => c.startsWith('DescribeServices')).flatMap((c) => {
      const [, cluster, names] = c.split(' ');
      return names.split(',').map((n) => `${cluster}/${n}`);
    });
    const firstTwo = summaries[0].counts.servicesRead + summaries[1].counts.servicesRead;
    expect(new Set(described.slice(0, firstTwo)).size).toBe(180);
    expect(Math.ceil(21 / perPass)).toBe(2);
    for (const s of summaries) expect(s.counts.servicesRead).toBeGreaterThan(0);
  });

  it.each([
    { case: 'before anything is read', leaseSeconds: LEASE_SAFETY_SECONDS },
    { case: 'during the first listing', leaseSeconds: LEASE_SAFETY_SECONDS + 1 },
  ])('cut $case: nothing is planned, no status written, the cursor stays', async ({ leaseSeconds }) => {
    // Prepare
    const clock = new ManualClock(NOW.getTime());
    const { ecs, store, ports } = fleet(clock, 150);
    await pass(clock, ports, opts(LONG));
    store.cursor = { cluster: 'bravo', after: name(20) };
    store.cursorWrites.length = 0;
    const stored = structuredClone(store.statuses);
    ecs.calls.length = 0;

    // Act
    const s = await pass(clock, ports, opts(leaseSeconds));

    // Assess
    expect(s.outcome).toBe('completed');
    expect(s.actions).toEqual([]);
    expect(s.counts.statusesWritten).toBe(0);
    expect(store.statuses).toEqual(stored);
    expect(s.counts.servicesRead).toBe(0);
    expect(s.rotation).toEqual({ complete: false, cursor: { cluster: 'bravo', after: name(20) } });
    expect(store.cursorWrites).toEqual([]);
    expect(ecs.count('DescribeServices')).toBe(0);
  });

  it('never prunes from a partial listing: an owned service without a spec waits until a pass reads its cluster whole', async () => {
    // Prepare: 150 services in bravo need 2 ListServices pages; an orphan we own sits in bravo.
    const clock = new ManualClock(NOW.getTime());
    const { ecs, ports, store } = fleet(clock, 150);
    ecs.putService('bravo', anObservedService({ cluster: 'bravo', serviceName: 'zz-orphan', tags: { [OWNER_TAG_KEY]: planOptions().ownerId } }));
    await pass(clock, ports, opts(LONG, { plan: planOptions({ prune: false }) }));
    // The next pass starts at bravo and is cut after its first ListServices page.
    store.cursor = { cluster: 'bravo' };
    ecs.calls.length = 0;

    // Act
    const cut = await pass(clock, ports, opts(LEASE_SAFETY_SECONDS + 2, { plan: planOptions({ prune: true }) }));
    const whole = await pass(clock, ports, opts(LONG, { plan: planOptions({ prune: true }) }));

    // Assess
    expect(cut.clusters.bravo).toBe(false);
    expect(cut.actions).toEqual([]);
    expect(whole.clusters.bravo).toBe(true);
    expect(whole.actions.map((a) => `${a.type} ${a.cluster}/${a.service}`)).toEqual(['DeleteService bravo/zz-orphan']);
  });

  it('a new or edited spec is read first, by name, wherever the cursor is, and acted on in that pass', async () => {
    // Prepare: a fleet larger than one pass; the cursor in alpha; a spec edited in charlie and a new one.
    const clock = new ManualClock(NOW.getTime());
    const { ecs, store, ports, specs } = fleet(clock, 60);
    await pass(clock, ports, opts(LONG));
    store.cursor = { cluster: 'alpha' };
    const edited: ServiceSpec = { ...specs.find((s) => s.key.cluster === 'charlie' && s.key.service === name(42))!.spec, desiredCount: 3 };
    store.specs = [...specs.filter((s) => s.spec !== edited && !(s.key.cluster === 'charlie' && s.key.service === name(42))), aSpec(edited), aSpec({ cluster: 'charlie', service: 'new-one' })];
    ecs.calls.length = 0;

    // Act
    const s = await pass(clock, ports, opts(SHORT));

    // Assess: both are read before the rotation, and acted on, though the rotation never got to charlie.
    expect(ecs.calls[0]).toBe(`DescribeServices charlie new-one,${name(42)}`);
    expect(s.clusters.charlie).toBe(false);
    expect(s.actions.map((a) => `${a.type} ${a.cluster}/${a.service}`)).toEqual([
      'RegisterTaskDefinition charlie/new-one',
      'CreateService charlie/new-one',
      `UpdateService charlie/${name(42)}`,
    ]);
  });

  it('a spec edit is read first even when more services than MAX_PRIORITY_SERVICES need attention', async () => {
    // Prepare: 3 x 350 converged services, of which all but the last 10 are remembered as not at
    // rest (Degraded, their spec applied: hand edits seen, say), then the last one's spec edited.
    const clock = new ManualClock(NOW.getTime());
    const { ecs, store, ports, specs } = fleet(clock, 350);
    await pass(clock, ports, opts(3600));
    const ids = Object.keys(store.statuses).sort();
    expect(ids.length).toBe(1050);
    for (const id of ids.slice(0, 1040)) store.statuses[id] = { ...store.statuses[id], phase: 'Degraded' };
    const last = { cluster: 'charlie', service: name(349) };
    const edited: ServiceSpec = { ...specs.find((x) => x.key.cluster === last.cluster && x.key.service === last.service)!.spec, desiredCount: 3 };
    store.specs = [...specs.filter((x) => !(x.key.cluster === last.cluster && x.key.service === last.service)), aSpec(edited)];
    ecs.calls.length = 0;

    // Act
    const s = await pass(clock, ports, opts(SHORT));

    // Assess: the edited spec is read by the first call and acted on in that pass.
    expect(ecs.calls[0]).toMatch(new RegExp(`^DescribeServices charlie .*${name(349)}`));
    expect(s.actions.map((a) => `${a.type} ${a.cluster}/${a.service}`)).toContain(`UpdateService charlie/${name(349)}`);
  });

  it('the fast path reads only its services, lists no cluster, prunes nothing and leaves the cursor', async () => {
    // Prepare
    const clock = new ManualClock(NOW.getTime());
    const { ecs, store, ports } = fleet(clock, 20);
    ecs.putService('alpha', anObservedService({ cluster: 'alpha', serviceName: 'zz-orphan', tags: { [OWNER_TAG_KEY]: planOptions().ownerId } }));
    await pass(clock, ports, opts(LONG, { plan: planOptions({ prune: false }) }));
    ecs.service('alpha', name(3))!.desiredCount = 4;
    ecs.calls.length = 0;
    store.cursorWrites.length = 0;

    // Act
    clock.advanceSeconds(60);
    const fast = await runFastPath(ports, [{ cluster: 'alpha', service: name(3) }], { ...opts(LONG, { plan: planOptions({ prune: true }) }), sleep: async () => undefined });
    const s = fast!.summary;

    // Assess
    expect(ecs.calls.filter((c) => !c.startsWith('DescribeTaskDefinition'))).toEqual([`DescribeServices alpha ${name(3)}`]);
    expect(s.actions.map((a) => `${a.type} ${a.cluster}/${a.service}`)).toEqual([`UpdateService alpha/${name(3)}`]);
    expect(s.rotation).toBeUndefined();
    expect(store.cursorWrites).toEqual([]);
    expect(s.counts.servicesRead).toBe(1);
    // Only the key's item is read: no Scan, so no other service counts as not read.
    expect(s.counts.specs).toBe(1);
    expect(s.counts.servicesNotRead).toBe(0);
  });

  it('a cursor on a cluster no longer managed goes on with the next cluster', async () => {
    // Prepare
    const clock = new ManualClock(NOW.getTime());
    const { ecs, store, ports } = fleet(clock, 5);
    await pass(clock, ports, opts(LONG));
    store.cursor = { cluster: 'b-gone', after: 'x' };
    ecs.calls.length = 0;

    // Act
    const s = await pass(clock, ports, opts(LONG));

    // Assess
    expect(ecs.calls[0]).toBe('ListServices bravo');
    expect(s.rotation).toEqual({ complete: true, cursor: { cluster: 'bravo' } });
    expect(s.readsComplete).toBe(true);
  });
});

describe('deployment history reads are bounded too', () => {
  it('a deploy that changes the defaults of every service reads at most MAX_HISTORY_READS histories, none after the action deadline, and still acts', async () => {
    // Prepare: 3 x 30 converged services; the next passes render every task definition with
    // another execution role (a deploy changed DEFAULT_EXECUTION_ROLE_ARN): each wants a rollout,
    // hence its deployment history. Each history read takes a second of the pass clock.
    const clock = new ManualClock(NOW.getTime());
    const { ecs, ports } = fleet(clock, 30);
    const reads: number[] = [];
    const reader = Object.assign(Object.create(ecs) as typeof ecs, {
      async readServiceDeployments() {
        reads.push(clock.ms);
        clock.advanceSeconds(1);
        return { deployments: [] };
      },
    });
    const changed = planOptions({ defaults: { ...planOptions().defaults, executionRoleArn: 'arn:aws:iam::123456789012:role/new-execution-role' } });

    // Act: a long lease (the per-pass bound applies), then a short one (the deadline applies).
    const long = await pass(clock, { ...ports, reader }, opts(LONG, { plan: changed }));
    const longReads = reads.length;
    reads.length = 0;
    const shortStart = clock.ms + 60_000;
    const short = await pass(clock, { ...ports, reader }, opts(SHORT, { plan: changed }));

    // Assess: the first pass read 50 histories of the 90 services wanting one, said so, and still
    // rolled services out; the second read none after its action deadline.
    expect(longReads).toBe(MAX_HISTORY_READS);
    expect(long.errors).toContainEqual(expect.stringMatching(/^deployment history: 40 of 90 services not read this pass/));
    expect(long.counts.actionsApplied).toBeGreaterThan(0);
    expect(short.outcome).toBe('completed');
    expect(reads.length).toBeLessThan(MAX_HISTORY_READS);
    expect(reads.every((at) => at < shortStart + (SHORT - LEASE_SAFETY_SECONDS) * 1000)).toBe(true);
  });
});

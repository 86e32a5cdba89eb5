/**
 * The resync floor holds when the spec table's Scan and the priority reads take most of the
 * observation window ("every service is fully re-read at least every RESYNC_MINUTES";
 * found by the bench at 20,000 services, where a 4-9 s Scan left 1,300-1,900 reads a pass for a
 * share of 2,000). The rotation may read past OBSERVATION_TIME_SHARE, up to
 * OBSERVATION_FLOOR_TIME_SHARE, while it has not read its share; the pass still plans and acts on
 * what it read. Over in-memory ports whose every ECS call and the Scan take pass-clock time (no
 * real time is measured).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LEASE_SAFETY_SECONDS, OBSERVATION_FLOOR_TIME_SHARE, OBSERVATION_TIME_SHARE, runPass, type PassOptions, type PassSummary } from '../../lambda/core/pass';
import type { EventFeed, FeedMessage, ReceivedMessages, SpecRead } from '../../lambda/core/ports';
import type { ResyncOptions } from '../../lambda/core/resync';
import { NOW, planOptions } from '../support/builders';
import { ManualClock, memoryPorts } from './support';
import { convergedFleet, CursorStore, SlowEcs } from './rotation-support';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'events');
const fixture = (file: string): Record<string, unknown> => JSON.parse(readFileSync(join(FIXTURES, file), 'utf8')) as Record<string, unknown>;

const CLUSTERS = ['alpha', 'bravo', 'charlie'];
const name = (i: number) => `s${String(i).padStart(3, '0')}`;
/** 300 services: a share of 30 a pass at one pass a minute and 10 minutes' resync. */
const PER_CLUSTER = 100;
const FLEET = CLUSTERS.length * PER_CLUSTER;
const RESYNC: ResyncOptions = { resyncSeconds: 600, passIntervalSeconds: 60 };
const RESYNC_PASSES = RESYNC.resyncSeconds / RESYNC.passIntervalSeconds;
/** Lease of the measured passes: 31 s of pass time; the observation's window ends at 17.05 s, the floor's at 21.7 s. */
const LEASE = 36;
/** The spec table's Scan: 15 s of the window, leaving 3 one-second ECS calls before its end (1 ListServices + 2 DescribeServices = 20 services). */
const SCAN_SECONDS = 15;

/** The memory store with the rotation's cursor, whose Scan takes `scanSeconds` of the pass clock. */
class SlowScanStore extends CursorStore {
  scanSeconds = 0;
  constructor(
    specs: ConstructorParameters<typeof CursorStore>[0],
    private readonly passClock: ManualClock,
  ) {
    super(specs, passClock);
  }
  override async readAll(): Promise<SpecRead> {
    const read = await super.readAll();
    this.passClock.advanceSeconds(this.scanSeconds);
    return read;
  }
}

/** A queue with only the heartbeat in it (every ECS event lost) and, optionally, events naming services. */
class HeartbeatFeed implements EventFeed {
  messages: FeedMessage[] = [];
  async receive(): Promise<ReceivedMessages> {
    return { readable: true, messages: this.messages };
  }
  async acknowledge(handles: readonly string[]): Promise<{ error?: string }> {
    const done = new Set(handles);
    this.messages = this.messages.filter((m) => !done.has(m.handle));
    return {};
  }
}

function fleet() {
  const clock = new ManualClock(NOW.getTime());
  const ecs = new SlowEcs(clock);
  const specs = convergedFleet(ecs, CLUSTERS, PER_CLUSTER, name);
  const store = new SlowScanStore(specs, clock);
  const feed = new HeartbeatFeed();
  const ports = memoryPorts(store, ecs, clock);
  return { clock, ecs, store, feed, ports, lastStartMs: clock.ms };
}
type Fleet = ReturnType<typeof fleet>;

function opts(overrides: Partial<PassOptions> = {}): PassOptions {
  return { plan: planOptions(), dryRun: false, holder: 'resync-floor-test', leaseTtlSeconds: LEASE, ...overrides };
}

/** Moves the clock to a minute after the previous pass started (passes take pass-clock time here); returns the new start. */
function nextMinute(f: Fleet): number {
  f.clock.ms = f.lastStartMs + 60_000;
  f.lastStartMs = f.clock.ms;
  return f.clock.ms;
}

/** The first pass reads and converges the whole fleet (long lease, fast Scan); then the Scan is slow. */
async function settled(f: Fleet): Promise<void> {
  nextMinute(f);
  await runPass(f.ports, opts({ leaseTtlSeconds: 3600 }));
  f.ecs.calls.length = 0;
  f.store.cursorWrites.length = 0;
  f.store.scanSeconds = SCAN_SECONDS;
}

/** `cluster/service` of each DescribeServices call from `from` on. */
function described(ecs: SlowEcs, from = 0): string[] {
  return ecs.calls.slice(from).filter((c) => c.startsWith('DescribeServices')).flatMap((c) => {
    const [, cluster, names] = c.split(' ');
    return names.split(',').map((n) => `${cluster}/${n}`);
  });
}

/** Runs `count` passes a minute apart; returns each pass's summary and ECS calls. */
async function passes(f: Fleet, count: number, o: PassOptions, beforeEach?: () => void) {
  const out: { summary: PassSummary; calls: string[] }[] = [];
  for (let i = 0; i < count; i++) {
    nextMinute(f);
    beforeEach?.();
    const from = f.ecs.calls.length;
    const summary = await runPass(f.ports, o);
    out.push({ summary, calls: f.ecs.calls.slice(from) });
  }
  return out;
}

/** One-second ECS calls a pass may start: one at each whole second after the Scan up to the cut-off. */
function callsBefore(share: number): number {
  return Math.floor(share * (LEASE - LEASE_SAFETY_SECONDS)) - SCAN_SECONDS + 1;
}

describe('the resync floor when the Scan takes most of the observation window', () => {
  it('the arithmetic of this fixture: without the floor a pass reads 20 services, short of its share of 30', () => {
    expect(callsBefore(OBSERVATION_TIME_SHARE)).toBe(3);
    expect(callsBefore(OBSERVATION_FLOOR_TIME_SHARE)).toBe(7);
    expect(FLEET / RESYNC_PASSES).toBe(30);
  });

  it('without a floor (no RESYNC options) the rotation stops at the observation window: 200 of 300 in 10 passes', async () => {
    const f = fleet();
    await settled(f);
    await passes(f, RESYNC_PASSES, opts());
    // What the floor fixes: without it the Scan leaves 20 reads a pass.
    expect(new Set(described(f.ecs)).size).toBe(200);
  });

  it('polling: every service is re-read within RESYNC_MINUTES, no call starts after the floor cut-off, and a hand edit read is corrected in that pass', async () => {
    // Prepare: one service changed by hand, in the second cluster.
    const f = fleet();
    await settled(f);
    const drifted = f.ecs.service('bravo', name(15))!;
    f.ecs.putService('bravo', { ...drifted, desiredCount: 2 });

    // Act
    const run = await passes(f, RESYNC_PASSES, opts({ resync: RESYNC }));

    // Assess: the whole fleet, 30 services (3 DescribeServices) and one ListServices a pass, at most
    // the calls the floor's window allows.
    expect(new Set(described(f.ecs)).size).toBe(FLEET);
    for (const { calls, summary } of run) {
      expect(calls.length).toBeLessThanOrEqual(callsBefore(OBSERVATION_FLOOR_TIME_SHARE));
      expect(summary.counts.servicesRead).toBeGreaterThanOrEqual(FLEET / RESYNC_PASSES);
      expect(summary.outcome).toBe('completed');
    }
    // The pass that read the edited service planned and applied its correction.
    const readIt = run.findIndex(({ calls }) => calls.some((c) => c.startsWith('DescribeServices bravo') && c.includes(name(15))));
    expect(readIt).toBeGreaterThanOrEqual(0);
    expect(run[readIt].summary.actions.map((a) => `${a.type} ${a.cluster}/${a.service} ${a.outcome}`)).toEqual([`UpdateService bravo/${name(15)} applied`]);
    expect(f.ecs.service('bravo', name(15))?.desiredCount).toBe(1);
    // The cursor carries the floor's pace in polling mode too.
    expect(f.store.cursor?.resyncAt).toBe(new Date(f.lastStartMs).toISOString());
  });

  it('events on, every ECS event lost and 20 event-named services read first: the rotation still reads its share', async () => {
    // Prepare: events of 20 services (in charlie) come back every pass (never acknowledged: not read), a heartbeat only otherwise.
    const f = fleet();
    await settled(f);
    const events = { ...RESYNC, ignorePrincipals: [] };
    const ports = { ...f.ports, events: f.feed };
    const beat = () => {
      const time = f.clock.now().toISOString().replace(/\.\d{3}Z$/, 'Z');
      const serviceAction = fixture('ecs-service-action.json');
      f.feed.messages = [
        { handle: `hb-${time}`, body: JSON.stringify({ ...fixture('scheduled-event.json'), time }) },
        ...Array.from({ length: 20 }, (_, i) => ({
          handle: `e${i}`,
          body: JSON.stringify({ ...serviceAction, time, resources: [`arn:aws:ecs:${String(serviceAction.region)}:${String(serviceAction.account)}:service/charlie/${name(50 + i)}`], detail: { ...(serviceAction.detail as object), clusterArn: `arn:aws:ecs:${String(serviceAction.region)}:${String(serviceAction.account)}:cluster/charlie` } }),
        })),
      ];
    };

    // Act
    const run: PassSummary[] = [];
    for (let i = 0; i < RESYNC_PASSES; i++) {
      nextMinute(f);
      beat();
      run.push(await runPass(ports, opts({ events })));
    }

    // Assess
    
    for (const s of run) expect(s.events).toMatchObject({ mode: 'events', budget: 30 });
    expect(new Set(described(f.ecs)).size).toBe(FLEET);
  });
});

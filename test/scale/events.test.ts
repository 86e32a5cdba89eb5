/**
 * Observation driven by events, resync as the floor, over in-memory ports and a
 * pass clock moved by hand (one pass a minute): events name services to re-read; the rotation
 * reads its share of the fleet so that every service is re-read within the resync interval with
 * no event at all; a queue that cannot be read or is not fed makes the pass poll; duplicated,
 * lost, foreign and malformed events are harmless.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_EVENT_MESSAGES, runPass, type EventOptions, type PassOptions, type PassSummary } from '../../lambda/core/pass';
import type { EventFeed, FeedMessage, ReceivedMessages } from '../../lambda/core/ports';
import { NOW, planOptions } from '../support/builders';
import { ManualClock, memoryPorts } from './support';
import { convergedFleet, CursorStore, SlowEcs } from './rotation-support';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'events');
const fixture = (name: string): Record<string, unknown> => JSON.parse(readFileSync(join(FIXTURES, name), 'utf8')) as Record<string, unknown>;

/** An in-memory queue: what is not acknowledged is received again by the next pass. */
class MemoryFeed implements EventFeed {
  private next = 0;
  messages: FeedMessage[] = [];
  readable = true;
  receiveCalls = 0;
  /** Pass-clock seconds one receive takes (a slow queue). */
  receiveSeconds = 0;
  constructor(private readonly clock?: ManualClock) {}
  readonly acknowledged: string[] = [];

  send(event: unknown): void {
    this.messages.push({ handle: `h${this.next++}`, body: typeof event === 'string' ? event : JSON.stringify(event) });
  }

  async receive(options: { max: number; shouldContinue: () => boolean }): Promise<ReceivedMessages> {
    this.receiveCalls += 1;
    if (!this.readable) return { readable: false, messages: [], error: 'AWS.SimpleQueueService.NonExistentQueue: The specified queue does not exist.' };
    const messages = options.shouldContinue() ? this.messages.slice(0, options.max) : [];
    this.clock?.advanceSeconds(this.receiveSeconds);
    return { readable: true, messages };
  }

  async acknowledge(handles: readonly string[]): Promise<{ error?: string }> {
    const done = new Set(handles);
    this.acknowledged.push(...handles);
    this.messages = this.messages.filter((m) => !done.has(m.handle));
    return {};
  }
}

const CLUSTERS = Array.from({ length: 10 }, (_, i) => `c${String(i).padStart(2, '0')}`);
const name = (i: number) => `s${String(i).padStart(2, '0')}`;
const EVENTS: EventOptions = { resyncSeconds: 600, passIntervalSeconds: 60, ignorePrincipals: ['arn:aws:iam::111122223333:role/reconciler'] };
const ACCOUNT = '111122223333';

/** 10 clusters x `perCluster` converged services with their specs, a queue, ECS calls free of time. */
function fleet(perCluster = 10, secondsPerCall = 0) {
  const clock = new ManualClock(NOW.getTime());
  const ecs = new SlowEcs(clock, secondsPerCall);
  const specs = convergedFleet(ecs, CLUSTERS, perCluster, name);
  const store = new CursorStore(specs, clock);
  const feed = new MemoryFeed(clock);
  const ports = { ...memoryPorts(store, ecs, clock), events: feed };
  return { clock, ecs, store, feed, ports, specs };
}

type Fleet = ReturnType<typeof fleet>;

function opts(overrides: Partial<PassOptions> = {}): PassOptions {
  return { plan: planOptions(), dryRun: false, holder: 'events-test', leaseTtlSeconds: 600, events: EVENTS, ...overrides };
}

/** The construct's heartbeat rule firing now (an EventBridge Scheduled Event). */
function heartbeat(f: Fleet): Record<string, unknown> {
  return { ...fixture('scheduled-event.json'), time: f.clock.now().toISOString().replace(/\.\d{3}Z$/, 'Z') };
}

/** Someone's UpdateService of `cluster/service` (CloudTrail via EventBridge), by `role`. */
function updateServiceBy(cluster: string, service: string, role = `arn:aws:iam::${ACCOUNT}:role/Admin`): Record<string, unknown> {
  const e = fixture('cloudtrail-update-service.json') as { detail: Record<string, unknown> };
  const detail = e.detail as { userIdentity: { sessionContext: { sessionIssuer: { arn: string } } }; requestParameters: Record<string, unknown> };
  detail.userIdentity.sessionContext.sessionIssuer.arn = role;
  detail.requestParameters = { ...detail.requestParameters, cluster, service };
  return e;
}

/** One pass a minute after the last; a heartbeat arrives first unless `heartbeat: false`. */
async function pass(f: Fleet, o: PassOptions = opts(), beat = true): Promise<PassSummary> {
  f.clock.advanceSeconds(60);
  if (beat) f.feed.send(heartbeat(f));
  return runPass(f.ports, o);
}

/** `cluster/service` of every DescribeServices call since `from`. */
function described(ecs: SlowEcs, from = 0): string[] {
  return ecs.calls.slice(from).filter((c) => c.startsWith('DescribeServices')).flatMap((c) => {
    const [, cluster, names] = c.split(' ');
    return names.split(',').map((n) => `${cluster}/${n}`);
  });
}

async function converged(f: Fleet): Promise<void> {
  // A first pass with events off reads and converges the whole fleet.
  f.clock.advanceSeconds(60);
  await runPass(f.ports, opts({ events: undefined }));
  f.ecs.calls.length = 0;
}

describe('events mode: the resync floor', () => {
  it('with no event at all, every service is re-read within RESYNC_MINUTES, a tenth of the fleet a pass', async () => {
    // Prepare: 100 services; resync 10 minutes, one pass a minute.
    const f = fleet();
    await converged(f);

    // Act: ten passes, heartbeats only.
    const summaries: PassSummary[] = [];
    for (let i = 0; i < 10; i++) summaries.push(await pass(f));

    // Assess: each pass read one cluster of ten (its share), and the ten passes read all 100.
    for (const s of summaries) {
      expect(s.events).toMatchObject({ mode: 'events', budget: 10, services: 0 });
      expect(s.counts.servicesRead).toBe(10);
      expect(s.actions).toEqual([]);
    }
    expect(new Set(described(f.ecs)).size).toBe(100);
    expect(f.ecs.count('ListServices')).toBe(10);
    expect(f.ecs.count('DescribeServices')).toBe(10);
  });

  it('a missed pass leaves its share to the next one (paced by the clock, not by passes)', async () => {
    // Prepare
    const f = fleet();
    await converged(f);
    await pass(f);
    const before = f.ecs.calls.length;

    // Act: no pass for two minutes, then one.
    f.clock.advanceSeconds(120);
    const s = await pass(f);

    // Assess: three minutes owed: three tenths of the fleet.
    expect(s.events?.budget).toBe(30);
    expect(new Set(described(f.ecs, before)).size).toBe(30);
  });

  it('a new container (new ports, same table) keeps the pace: the state is the cursor in the specs table', async () => {
    // Prepare
    const f = fleet();
    await converged(f);

    // Act: ten passes, each with freshly built ports (as a new Lambda container builds them).
    for (let i = 0; i < 10; i++) {
      f.ports = { ...memoryPorts(f.store, f.ecs, f.clock), events: f.feed };
      await pass(f);
    }

    // Assess
    expect(new Set(described(f.ecs)).size).toBe(100);
    expect(f.store.cursor?.resyncAt).toBe(f.clock.now().toISOString());
  });

  it('events off (no event options): every pass polls the whole fleet at the lower bound', async () => {
    // Prepare
    const f = fleet();
    await converged(f);

    // Act
    const s = await pass(f, opts({ events: undefined }));

    // Assess: 1 ListServices and 1 DescribeServices per cluster; the queue is never read.
    expect(s.events).toBeUndefined();
    expect(s.counts.servicesRead).toBe(100);
    expect(f.ecs.count('ListServices')).toBe(10);
    expect(f.ecs.count('DescribeServices')).toBe(10);
    expect(f.feed.receiveCalls).toBe(0);
  });
});

describe('events mode: events are hints', () => {
  it('a hand edit with its CloudTrail event is read by name and corrected by the next pass, wherever the rotation is', async () => {
    // Prepare: the rotation is at c00; someone scales c07/s04 by hand.
    const f = fleet();
    await converged(f);
    await pass(f);
    f.ecs.service('c07', name(4))!.desiredCount = 5;
    f.feed.send(updateServiceBy('c07', name(4)));
    const before = f.ecs.calls.length;

    // Act
    const s = await pass(f);

    // Assess
    expect(f.ecs.calls[before]).toBe(`DescribeServices c07 ${name(4)}`);
    expect(s.events).toMatchObject({ mode: 'events', services: 1, received: 2, acknowledged: 2 });
    expect(s.actions.map((a) => `${a.type} ${a.cluster}/${a.service} ${a.outcome}`)).toEqual([`UpdateService c07/${name(4)} applied`]);
    expect(f.feed.messages).toEqual([]);
  });

  it.each([
    { case: 'ECS Service Action', file: 'ecs-service-action.json' },
    { case: 'ECS Deployment State Change', file: 'ecs-deployment-state-change.json' },
    { case: 'ECS Task State Change (STOPPED)', file: 'ecs-task-state-change-stopped.json' },
  ])('$case names its service: it is read first', async ({ file }) => {
    // Prepare: the fixture's service is c05/s03 here.
    const f = fleet();
    await converged(f);
    const e = JSON.parse(JSON.stringify(fixture(file)).replaceAll('cluster/default', 'cluster/c05').replaceAll('service/default/servicetest', `service/c05/${name(3)}`).replaceAll('service:servicetest', `service:${name(3)}`));
    f.feed.send(e);

    // Act
    const s = await pass(f);

    // Assess
    expect(f.ecs.calls[0]).toBe(`DescribeServices c05 ${name(3)}`);
    expect(s.events?.services).toBe(1);
  });

  it('a lost event: the hand edit is still corrected, by the rotation, within RESYNC_MINUTES', async () => {
    // Prepare
    const f = fleet();
    await converged(f);
    f.ecs.service('c09', name(9))!.desiredCount = 4;

    // Act: passes until it is corrected (at most ten).
    let corrected = 0;
    for (let i = 1; i <= 10 && corrected === 0; i++) {
      const s = await pass(f);
      if (s.actions.some((a) => a.service === name(9) && a.cluster === 'c09' && a.outcome === 'applied')) corrected = i;
    }

    // Assess
    expect(corrected).toBeGreaterThan(0);
    expect(corrected).toBeLessThanOrEqual(10);
    expect(f.ecs.service('c09', name(9))!.desiredCount).toBe(1);
  });

  it('a duplicated event: the service is read once and acted on once', async () => {
    // Prepare
    const f = fleet();
    await converged(f);
    f.ecs.service('c03', name(1))!.desiredCount = 3;
    for (let i = 0; i < 3; i++) f.feed.send(updateServiceBy('c03', name(1)));

    // Act
    const s = await pass(f);
    const firstPass = described(f.ecs);
    const again = await pass(f);

    // Assess
    expect(firstPass.filter((d) => d === `c03/${name(1)}`)).toHaveLength(1);
    expect(s.actions.map((a) => `${a.type} ${a.cluster}/${a.service}`)).toEqual([`UpdateService c03/${name(1)}`]);
    expect(s.events).toMatchObject({ received: 4, services: 1, acknowledged: 4 });
    expect(again.actions).toEqual([]);
  });

  it('events of foreign or unknown services, other clusters, the reconciler itself, or not JSON: ignored, deleted, nothing read for them', async () => {
    // Prepare
    const f = fleet();
    await converged(f);
    f.feed.send(updateServiceBy('c02', 'not-ours'));
    f.feed.send(updateServiceBy('elsewhere', name(1)));
    f.feed.send(updateServiceBy('c02', name(2), EVENTS.ignorePrincipals![0]));
    f.feed.send('{not json');
    f.feed.send({ 'detail-type': 'EC2 Instance State-change Notification', source: 'aws.ec2', detail: {} });

    // Act
    const s = await pass(f);

    // Assess: only the rotation's share was read (cluster c01 here), and all six messages are gone.
    expect(s.events).toMatchObject({ mode: 'events', received: 6, services: 0, ignored: 6, acknowledged: 6 });
    expect(described(f.ecs).some((d) => d.startsWith('c02/') || d.startsWith('elsewhere/'))).toBe(false);
    expect(f.feed.messages).toEqual([]);
  });

  it('a RegisterTaskDefinition by someone else names the services that run the family', async () => {
    // Prepare
    const f = fleet();
    await converged(f);
    const family = f.store.statuses[`c04/${name(6)}`]!.taskDefinitionArn!.split('/')[1].split(':')[0];
    const e = fixture('cloudtrail-register-task-definition.json') as { detail: { requestParameters: Record<string, unknown> } };
    e.detail.requestParameters.family = family;
    f.feed.send(e);

    // Act
    const s = await pass(f);

    // Assess
    expect(f.ecs.calls[0]).toBe(`DescribeServices c04 ${name(6)}`);
    expect(s.events?.services).toBe(1);
  });

  it('a message whose service the pass could not read stays in the queue for the next pass', async () => {
    // Prepare: receiving takes the whole observation window of a short pass: nothing is read after it.
    const f = fleet(10, 1);
    await converged(f);
    f.feed.send(updateServiceBy('c06', name(0)));
    f.feed.receiveSeconds = 30;

    // Act
    const cut = await pass(f, opts({ leaseTtlSeconds: 30 }));

    // Assess
    expect(cut.counts.servicesRead).toBe(0);
    expect(cut.events?.acknowledged).toBe(1); // the heartbeat only
    expect(f.feed.messages.map((m) => JSON.parse(m.body)['detail-type'])).toEqual(['AWS API Call via CloudTrail']);
  });
});

describe('events mode degrades to polling, never to doing nothing', () => {
  it.each([
    { case: 'the queue cannot be read (missing, access denied)', setup: (f: Fleet) => void (f.feed.readable = false), beat: true, reason: /could not be read.*NonExistentQueue/ },
    { case: 'the queue never delivered a heartbeat (rules missing)', setup: () => undefined, beat: false, reason: /no heartbeat yet/ },
  ])('$case: the pass reads the whole fleet and says why', async ({ setup, beat, reason }) => {
    // Prepare
    const f = fleet();
    await converged(f);
    setup(f);
    f.ecs.service('c08', name(8))!.desiredCount = 2;

    // Act
    const s = await pass(f, opts(), beat);

    // Assess
    expect(s.events?.mode).toBe('polling');
    expect(s.events?.reason).toMatch(reason);
    expect(s.counts.servicesRead).toBe(100);
    expect(s.actions.map((a) => `${a.type} ${a.cluster}/${a.service}`)).toEqual([`UpdateService c08/${name(8)}`]);
    expect(f.ports.log.lines.some((l) => l.message.startsWith('event queue not usable'))).toBe(true);
  });

  it('heartbeats that stopped more than three minutes ago: polling again', async () => {
    // Prepare
    const f = fleet();
    await converged(f);
    expect((await pass(f)).events?.mode).toBe('events');
    // Heartbeats late by up to three minutes are fine.
    for (let i = 0; i < 3; i++) expect((await pass(f, opts(), false)).events?.mode).toBe('events');

    // Act
    const s = await pass(f, opts(), false);

    // Assess
    expect(s.events?.mode).toBe('polling');
    expect(s.events?.reason).toMatch(/newest heartbeat is from/);
    expect(s.counts.servicesRead).toBe(100);
  });

  it('a backlog that hides the heartbeat for more than three minutes: still events mode (the queue is fed)', async () => {
    // Prepare: converged in events mode; then each pass finds MAX_EVENT_MESSAGES hand-edit events
    // in the queue and no heartbeat among them (it is behind them, or lost).
    const f = fleet();
    await converged(f);
    expect((await pass(f)).events?.mode).toBe('events');
    const modes: string[] = [];

    // Act: five passes a minute apart, past the three minutes a heartbeat stays fresh.
    for (let i = 0; i < 5; i++) {
      for (let m = 0; m < MAX_EVENT_MESSAGES; m++) f.feed.send(updateServiceBy(CLUSTERS[m % 10], name(m % 10)));
      const s = await pass(f, opts(), false);
      modes.push(`${s.events?.mode} ${s.events?.received}`);
    }

    // Assess: every pass stayed in events mode with a full receive; an empty queue afterwards falls back.
    expect(modes).toEqual(Array.from({ length: 5 }, () => `events ${MAX_EVENT_MESSAGES}`));
    expect((await pass(f, opts(), false)).events?.mode).toBe('polling');
  });

  it('a hand edit at a size where the rotation matters is corrected within two passes with events on and with events off', async () => {
    // Prepare: 10 x 30 services, every call 1 s, 40 s leases: a pass reads about half the fleet.
    for (const events of [EVENTS, undefined]) {
      const f = fleet(30, 1);
      f.clock.advanceSeconds(60);
      await runPass(f.ports, opts({ events: undefined, leaseTtlSeconds: 6000 }));
      f.ecs.calls.length = 0;
      f.feed.send(heartbeat(f));
      await runPass(f.ports, opts({ events, leaseTtlSeconds: 40 }));
      f.ecs.service('c09', name(29))!.desiredCount = 7;
      if (events) f.feed.send(updateServiceBy('c09', name(29)));

      // Act
      const done: PassSummary[] = [];
      for (let i = 0; i < 2; i++) done.push(await pass(f, opts({ events, leaseTtlSeconds: 40 })));

      // Assess
      const fixed = done.findIndex((s) => s.actions.some((a) => a.cluster === 'c09' && a.service === name(29) && a.outcome === 'applied'));
      expect(fixed, events ? 'events on' : 'events off').toBeGreaterThanOrEqual(0);
      if (events) expect(fixed).toBe(0);
    }
  });
});

/**
 * A pass cut at every phase: the deadline falls at the Nth port call of a pass,
 * for every N from the first call (the event queue) to the last (the cursor), through listing,
 * describing, actions and status writes. Whatever N, the pass completes, creates nothing it did not
 * read as absent, deletes nothing, never makes a status worse than the truth, and the passes after
 * it (uncut) converge the fleet: the hand edit corrected, the edited spec rolled out, the new spec
 * created exactly once.
 */
import { describe, expect, it } from 'vitest';
import { runPass, type PassOptions, type PassSummary } from '../../lambda/core/pass';
import type { EventFeed, FeedMessage, ReceivedMessages } from '../../lambda/core/ports';
import { aSpec, NOW, planOptions } from '../support/builders';
import { ManualClock, memoryPorts } from './support';
import { convergedFleet, CursorStore, SlowEcs } from './rotation-support';

const LEASE = 600;

/** Jumps the pass clock past the lease at the `cutAt`-th port call (1-based); 0: never. */
class Cutter {
  calls = 0;
  constructor(
    private readonly clock: ManualClock,
    public cutAt = 0,
  ) {}
  tick(): void {
    this.calls += 1;
    if (this.calls === this.cutAt) this.clock.advanceSeconds(10 * LEASE);
  }
}

class QueueOf implements EventFeed {
  messages: FeedMessage[] = [];
  constructor(private readonly cutter: Cutter) {}
  async receive(o: { max: number; shouldContinue: () => boolean }): Promise<ReceivedMessages> {
    this.cutter.tick();
    return { readable: true, messages: o.shouldContinue() ? this.messages.slice(0, o.max) : [] };
  }
  async acknowledge(handles: readonly string[]): Promise<{ error?: string }> {
    this.cutter.tick();
    this.messages = this.messages.filter((m) => !handles.includes(m.handle));
    return {};
  }
}

const name = (i: number) => `s${String(i).padStart(2, '0')}`;

/** 3 clusters x 8 converged services, then: a hand edit (with its event), a spec edit, a new spec. */
async function scenario(cutAt: number) {
  const clock = new ManualClock(NOW.getTime());
  const cutter = new Cutter(clock);
  const ecs = new SlowEcs(clock, 0);
  const specs = convergedFleet(ecs, ['a', 'b', 'c'], 8, name);
  const store = new CursorStore(specs, clock);
  const queue = new QueueOf(cutter);
  const base = memoryPorts(store, ecs, clock);
  // Every port call counts towards the cut.
  const wrap = <T extends object>(target: T, methods: (keyof T)[]): T => {
    const out = Object.create(target) as T;
    for (const m of methods) {
      const f = target[m] as unknown as (...a: unknown[]) => unknown;
      (out as Record<keyof T, unknown>)[m] = (...a: unknown[]) => {
        cutter.tick();
        return f.apply(target, a);
      };
    }
    return out;
  };
  const ports = {
    ...base,
    reader: wrap(ecs, ['listServices', 'readServices', 'describeTaskDefinitions']),
    writer: wrap(ecs, ['apply']),
    specs: wrap(store, ['writeStatus', 'writeCursor']),
    events: queue,
  };
  const opts: PassOptions = {
    plan: planOptions({ prune: true }),
    dryRun: false,
    holder: 'cut-test',
    leaseTtlSeconds: LEASE,
    events: { resyncSeconds: 600, passIntervalSeconds: 60 },
  };
  const beat = () =>
    queue.messages.push({ handle: `hb${clock.ms}`, body: JSON.stringify({ 'detail-type': 'Scheduled Event', source: 'aws.events', time: clock.now().toISOString(), detail: {} }) });
  const pass = async (): Promise<PassSummary> => {
    clock.advanceSeconds(60);
    beat();
    return runPass(ports, opts);
  };
  await pass(); // converged, cursor written
  // The disturbances.
  ecs.service('c', name(7))!.desiredCount = 5;
  queue.messages.push({
    handle: 'edit',
    body: JSON.stringify({
      'detail-type': 'AWS API Call via CloudTrail',
      source: 'aws.ecs',
      detail: { eventSource: 'ecs.amazonaws.com', eventName: 'UpdateService', requestParameters: { cluster: 'c', service: name(7), desiredCount: 5 } },
    }),
  });
  const edited = aSpec({ cluster: 'b', service: name(3), desiredCount: 3 });
  store.specs = [...specs.filter((s) => !(s.key.cluster === 'b' && s.key.service === name(3))), edited, aSpec({ cluster: 'a', service: 'new-one', desiredCount: 2 })];
  ecs.calls.length = 0;
  cutter.calls = 0;
  cutter.cutAt = cutAt;
  const cut = await pass();
  const callsInCutPass = cutter.calls;
  const statusesAfterCut = structuredClone(store.statuses);
  cutter.cutAt = 0;
  const after = [await pass(), await pass()];
  return { ecs, store, cut, after, callsInCutPass, statusesAfterCut };
}

describe('a pass cut at every phase', () => {
  it('the uncut pass makes N port calls; every cut from 1 to N is safe and the next passes converge', async () => {
    // Prepare: how many port calls an uncut pass makes.
    const { callsInCutPass: total, cut: whole } = await scenario(0);
    expect(whole.actions.filter((a) => a.outcome === 'applied').length).toBeGreaterThan(0);
    expect(total).toBeGreaterThan(8);

    for (let n = 1; n <= total; n++) {
      // Act
      const { ecs, cut, after, statusesAfterCut } = await scenario(n);

      // Assess: the cut pass completed and did nothing unsafe.
      expect(cut.outcome, `cut at ${n}`).toBe('completed');
      expect(cut.actions.filter((a) => a.type === 'DeleteService'), `cut at ${n}`).toEqual([]);
      // No stored status says a service is gone or being deleted: nothing read in part counts as absent.
      expect(Object.entries(statusesAfterCut).filter(([, s]) => s.phase === 'Deleted' || s.phase === 'Deleting'), `cut at ${n}`).toEqual([]);
      // ...and the next two passes converge everything.
      expect(ecs.service('c', name(7))!.desiredCount, `cut at ${n}`).toBe(1);
      expect(ecs.service('b', name(3))!.desiredCount, `cut at ${n}`).toBe(3);
      expect(ecs.service('a', 'new-one')?.status, `cut at ${n}`).toBe('ACTIVE');
      expect(ecs.applied.filter((a) => a.type === 'CreateService').length, `cut at ${n}`).toBe(1);
      expect(ecs.applied.filter((a) => a.type === 'DeleteService'), `cut at ${n}`).toEqual([]);
      const last = after[after.length - 1];
      expect(last.actions.filter((a) => a.outcome === 'applied' && a.type !== 'UpdateService'), `cut at ${n}`).toEqual([]);
    }
  });
});

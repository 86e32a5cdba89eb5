/**
 * In-memory ports for the scale tests of the pass (fakes for the core): a spec store
 * that records when and how many status writes run, and a clock a test moves by hand.
 */
import { DEFAULT_PLAN_OPTIONS } from '../../lambda/core/options';
import type { PassOptions, PassPorts } from '../../lambda/core/pass';
import {
  fenceId,
  type Clock,
  type EcsReader,
  type EcsWriter,
  type Fence,
  type FenceResult,
  type FenceSnapshot,
  type FenceState,
  type KeysRead,
  type LeaseResult,
  type SpecRead,
  type SpecStore,
} from '../../lambda/core/ports';
import { serviceId, type ServiceId, type ServiceKey, type ServiceStatus, type SpecParseResult } from '../../lambda/core/types';
import { InMemoryMetricsSink } from '../../lambda/adapters/metrics';
import { RecordingLog } from '../../lambda/adapters/logger';
import { FakeEcs } from '../support/fake-ecs';

/** A clock that moves only when told (milliseconds since the epoch). */
export class ManualClock implements Clock {
  constructor(public ms: number) {}
  now(): Date {
    return new Date(this.ms);
  }
  advanceSeconds(seconds: number): void {
    this.ms += seconds * 1000;
  }
}

/** One status write as the store saw it. */
export interface RecordedWrite {
  readonly key: ServiceKey;
  readonly status: ServiceStatus;
  /** Pass clock (epoch ms) when the write started. */
  readonly startedAtMs: number;
}

/**
 * A spec store over a fixed list of parse results. Status writes take one event-loop turn (so
 * several can be in flight) and may advance the clock, as a slow DynamoDB would.
 */
export class MemorySpecStore implements SpecStore {
  statuses: Record<ServiceId, ServiceStatus> = {};
  readonly writes: RecordedWrite[] = [];
  inFlight = 0;
  maxInFlight = 0;
  /** Seconds the clock moves at the start of each write. */
  writeSeconds = 0;

  constructor(
    public specs: SpecParseResult[],
    private readonly clock: ManualClock,
  ) {}

  async readAll(): Promise<SpecRead> {
    return { specs: this.specs, statuses: structuredClone(this.statuses), complete: true };
  }

  async writeStatus(key: ServiceKey, status: ServiceStatus): Promise<boolean> {
    this.writes.push({ key, status, startedAtMs: this.clock.ms });
    this.clock.advanceSeconds(this.writeSeconds);
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    await new Promise((resolve) => setImmediate(resolve));
    this.inFlight -= 1;
    this.statuses[serviceId(key)] = structuredClone(status);
    return true;
  }

  async readKeys(keys: readonly ServiceKey[]): Promise<KeysRead> {
    const ids = new Set(keys.map(serviceId));
    const specs = this.specs.filter((s) => s.key && ids.has(serviceId(s.key)));
    const statuses = Object.fromEntries(Object.entries(structuredClone(this.statuses)).filter(([id]) => ids.has(id)));
    return { specs, statuses, complete: true };
  }

  async acquireLease(): Promise<LeaseResult> {
    return { acquired: true };
  }

  async releaseLease(): Promise<void> {}

  /** The fences, as the DynamoDB store keeps them (lambda/adapters/fence-items.ts). */
  readonly fences = new Map<string, FenceState>();

  async readFences(): Promise<FenceSnapshot> {
    return new Map(this.fences);
  }

  async takeFences(holder: string, fences: readonly Fence[], ttlSeconds: number, now: Date, seen?: FenceSnapshot): Promise<FenceResult> {
    const taken: Fence[] = [];
    const refused: FenceResult['refused'][number][] = [];
    for (const fence of fences) {
      const id = fenceId(fence);
      const cur = this.fences.get(id);
      const before = seen?.get(id);
      const free = !cur?.holder || (cur.expiresAt !== undefined && cur.expiresAt < now) || (!seen && cur.holder === holder);
      const unchanged = !seen || (before ? cur?.gen === before.gen && !(before.holder && before.expiresAt && before.expiresAt > now) : cur === undefined);
      if (!free || !unchanged) {
        refused.push({ fence, ...(cur?.holder ? { holder: cur.holder, expiresAt: cur.expiresAt } : {}) });
        continue;
      }
      this.fences.set(id, { fence, gen: (cur?.gen ?? 0) + 1, holder, expiresAt: new Date(now.getTime() + ttlSeconds * 1000) });
      taken.push(fence);
    }
    return { taken, refused };
  }

  async releaseFences(holder: string, fences: readonly Fence[]): Promise<void> {
    for (const fence of fences) {
      const cur = this.fences.get(fenceId(fence));
      if (cur?.holder === holder) this.fences.set(fenceId(fence), { fence, gen: cur.gen });
    }
  }
}

/** Ports of a pass over `store` and `ecs` (reader and writer), in-memory metrics and logs. */
export function memoryPorts(
  store: SpecStore,
  ecs: EcsReader & EcsWriter,
  clock: Clock,
): PassPorts & { metrics: InMemoryMetricsSink; log: RecordingLog } {
  return {
    specs: store,
    reader: ecs,
    writer: ecs,
    metrics: new InMemoryMetricsSink(),
    log: new RecordingLog(),
    clock,
    monotonicMs: () => 0,
  };
}

/** Pass options: the default plan options with one default subnet, a 60 s lease. */
export function passOptions(overrides: Partial<PassOptions> = {}): PassOptions {
  return {
    plan: { ...DEFAULT_PLAN_OPTIONS, defaults: { subnets: ['subnet-0d0d0d0d0d0d0d0d0'], securityGroups: [] } },
    dryRun: false,
    holder: 'scale-test',
    leaseTtlSeconds: 60,
    ...overrides,
  };
}

export { FakeEcs };

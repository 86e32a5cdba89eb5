/**
 * In-memory ports for the scale tests of the pass (fakes for the core): a spec store
 * that records when and how many status writes run, and a clock a test moves by hand.
 */
import { DEFAULT_PLAN_OPTIONS } from '../../lambda/core/options';
import type { PassOptions, PassPorts } from '../../lambda/core/pass';
import type { Clock, EcsReader, EcsWriter, LeaseResult, SpecRead, SpecStore } from '../../lambda/core/ports';
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

  async acquireLease(): Promise<LeaseResult> {
    return { acquired: true };
  }

  async releaseLease(): Promise<void> {}
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

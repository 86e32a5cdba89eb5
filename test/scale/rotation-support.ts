/**
 * Fakes for the rotation and events tests: an ECS whose every list page and describe batch takes
 * time on the pass clock, and a spec store that keeps the rotation's cursor.
 */
import type { ObserveCursor, ServiceDescriptions, ServiceListing, ServiceReadOptions, SpecRead } from '../../lambda/core/ports';
import { aConvergedService, aSpec, type ValidSpec } from '../support/builders';
import { FakeEcs, ManualClock, MemorySpecStore } from './support';

/** Seeds `ecs` with `perCluster` converged services (desired 1) in each cluster; returns their specs. */
export function convergedFleet(ecs: FakeEcs, clusters: readonly string[], perCluster: number, name: (i: number) => string): ValidSpec[] {
  const specs: ValidSpec[] = [];
  for (const cluster of clusters) {
    ecs.addCluster(cluster);
    for (let i = 0; i < perCluster; i++) {
      const spec = aSpec({ cluster, service: name(i), desiredCount: 1 });
      const { service, taskDefinitions } = aConvergedService(spec.spec);
      ecs.putService(cluster, service);
      for (const td of Object.values(taskDefinitions)) ecs.putTaskDefinition(td);
      specs.push(spec);
    }
  }
  return specs;
}

/** A fake ECS whose ListServices pages (100) and DescribeServices batches (10) each take `secondsPerCall`. */
export class SlowEcs extends FakeEcs {
  readonly calls: string[] = [];
  constructor(
    private readonly clock: ManualClock,
    private readonly secondsPerCall = 1,
  ) {
    super();
  }

  async listServices(cluster: string, options: ServiceReadOptions = {}): Promise<ServiceListing> {
    const services = this.clusters.get(cluster);
    if (!services) return { exists: false, names: [], complete: true };
    const active = [...services.values()].filter((s) => s.status === 'ACTIVE').map((s) => s.serviceName).sort();
    const names: string[] = [];
    for (let i = 0; i < active.length || i === 0; i += 100) {
      if (options.shouldContinue && !options.shouldContinue()) return { exists: true, names, complete: false, error: 'cut' };
      this.calls.push(`ListServices ${cluster}`);
      this.clock.advanceSeconds(this.secondsPerCall);
      names.push(...active.slice(i, i + 100));
    }
    return { exists: true, names, complete: true };
  }

  async readServices(cluster: string, names: string[], options: ServiceReadOptions = {}): Promise<ServiceDescriptions> {
    const services = this.clusters.get(cluster);
    const out: ServiceDescriptions = { exists: services !== undefined, services: [], described: [], errors: [], warnings: [] };
    for (let i = 0; i < names.length; i += 10) {
      if (options.shouldContinue && !options.shouldContinue()) break;
      const batch = names.slice(i, i + 10);
      this.calls.push(`DescribeServices ${cluster} ${batch.join(',')}`);
      this.clock.advanceSeconds(this.secondsPerCall);
      for (const n of batch) {
        const s = services?.get(n);
        if (s) out.services.push(structuredClone(s));
        out.described.push(n);
      }
      options.onServices?.(out.services.slice(-batch.length));
    }
    return out;
  }

  count(prefix: string): number {
    return this.calls.filter((c) => c.startsWith(prefix)).length;
  }
}

/** The memory store, keeping the rotation's cursor as the DynamoDB store does. */
export class CursorStore extends MemorySpecStore {
  cursor: ObserveCursor | undefined;
  readonly cursorWrites: ObserveCursor[] = [];
  override async readAll(): Promise<SpecRead> {
    return { ...(await super.readAll()), ...(this.cursor ? { cursor: this.cursor } : {}) };
  }
  async writeCursor(cursor: ObserveCursor): Promise<void> {
    this.cursor = cursor;
    this.cursorWrites.push(cursor);
  }
}


/**
 * The order in which a pass describes task definitions (over in-memory ports): while the clusters
 * are still being read, as each DescribeServices answer arrives, and the services that may need a
 * change before those at rest.
 */
import { describe, expect, it } from 'vitest';
import { runPass, TASK_DEFINITION_DESCRIBE_CONCURRENCY } from '../../lambda/core/pass';
import type { DescribeTaskDefinitionsOptions, EcsReader, ObserveClusterOptions } from '../../lambda/core/ports';
import type { ObservedCluster, ObservedService, TaskDefinition } from '../../lambda/core/types';
import { aConvergedService, aSpec, aStatus, NOW } from '../support/builders';
import { FakeEcs, ManualClock, MemorySpecStore, memoryPorts, passOptions } from './support';

/** Event-loop turns a reader waits for a describe before it gives up. */
const PATIENCE_TURNS = 50;
const turn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * A reader over one cluster of services that hands over each service as if it were one
 * DescribeServices answer, and records the order of describes and whether any started while it
 * was still observing.
 */
class RecordingReader implements EcsReader {
  readonly described: string[] = [];
  describedWhileObserving = false;
  private observing = false;

  constructor(
    private readonly services: ObservedService[],
    private readonly taskDefinitions: Record<string, TaskDefinition>,
    private readonly handOver: boolean,
  ) {}

  async observeCluster(cluster: string, _names: string[], options: ObserveClusterOptions = {}): Promise<ObservedCluster> {
    this.observing = true;
    for (const s of this.services) {
      if (this.handOver) options.onServices?.([s]);
      for (let i = 0; i < PATIENCE_TURNS && this.described.length === 0; i++) await turn();
    }
    this.observing = false;
    return { cluster, complete: true, exists: true, services: Object.fromEntries(this.services.map((s) => [s.serviceName, s])) };
  }

  async describeTaskDefinitions(arns: string[], options: DescribeTaskDefinitionsOptions = {}): Promise<Record<string, TaskDefinition>> {
    const out: Record<string, TaskDefinition> = {};
    for (const arn of arns) {
      if (options.shouldDescribe && !options.shouldDescribe(arn)) continue;
      if (this.observing) this.describedWhileObserving = true;
      this.described.push(arn);
      await turn();
      if (this.taskDefinitions[arn]) out[arn] = this.taskDefinitions[arn];
    }
    return out;
  }

  async latestActiveTaskDefinition(): Promise<TaskDefinition | undefined> {
    return undefined;
  }
}

/** `n` converged services of `apps` with their specs and descriptions; none remembered. */
function aFleet(n: number) {
  const specs = Array.from({ length: n }, (_, i) => aSpec({ service: `s${String(i).padStart(2, '0')}`, desiredCount: 1 }));
  const built = specs.map((r) => aConvergedService(r.spec));
  return {
    specs,
    services: built.map((b) => b.service),
    taskDefinitions: Object.assign({}, ...built.map((b) => b.taskDefinitions)) as Record<string, TaskDefinition>,
  };
}

describe('the order in which a pass describes task definitions', () => {
  it.each([
    { case: 'a reader that hands over each answer', handOver: true, whileObserving: true },
    { case: 'a reader that does not', handOver: false, whileObserving: false },
  ])('describes while the cluster is still being read: $case', async ({ handOver, whileObserving }) => {
    // Prepare: nothing remembered, so nothing is expected before ECS answers.
    const fleet = aFleet(3);
    const reader = new RecordingReader(fleet.services, fleet.taskDefinitions, handOver);
    const clock = new ManualClock(NOW.getTime());
    const ports = { ...memoryPorts(new MemorySpecStore(fleet.specs, clock), new FakeEcs(), clock), reader };

    // Act
    const s = await runPass(ports, passOptions({ dryRun: true }));

    // Assess
    expect(reader.describedWhileObserving).toBe(whileObserving);
    expect([...reader.described].sort()).toEqual(Object.keys(fleet.taskDefinitions).sort());
    expect(s.counts.taskDefinitionsPending).toBe(0);
    expect(s.errors).toEqual([]);
  });

  it('describes the task definitions of services that may need a change before those of services at rest', async () => {
    // Prepare: services at rest by memory, but for three listed last: one with a changed spec, one
    // never seen, one whose live task definition is not the one remembered.
    const fleet = aFleet(12);
    const clock = new ManualClock(NOW.getTime());
    const store = new MemorySpecStore(fleet.specs, clock);
    fleet.specs.forEach((r, i) => {
      store.statuses[`apps/${r.spec.service}`] = aStatus({
        specHash: r.hash,
        lastAppliedSpecHash: r.hash,
        desiredCount: 1,
        runningCount: 1,
        taskDefinitionArn: fleet.services[i].taskDefinition,
      });
    });
    store.specs = [...fleet.specs.slice(0, 9), aSpec({ service: 's09', desiredCount: 1, image: 'public.ecr.aws/nginx/nginx:1.28' }), ...fleet.specs.slice(10)];
    delete store.statuses['apps/s10'];
    store.statuses['apps/s11'] = { ...store.statuses['apps/s11'], taskDefinitionArn: 'arn:aws:ecs:eu-west-1:123456789012:task-definition/older:1' };
    const reader = new RecordingReader(fleet.services, fleet.taskDefinitions, true);
    const ports = { ...memoryPorts(store, new FakeEcs(), clock), reader };

    // Act
    await runPass(ports, passOptions({ dryRun: true }));

    // Assess: whatever was started before ECS answered (at most one per worker), the three come
    // before every other service's task definition described after the answer.
    const mayChange = ['s09', 's10', 's11'].map((s) => fleet.services[Number(s.slice(1))].taskDefinition);
    const positions = mayChange.map((arn) => reader.described.indexOf(arn));
    expect(positions.every((p) => p >= 0)).toBe(true);
    const atRestAfter = reader.described.filter((arn, i) => i > TASK_DEFINITION_DESCRIBE_CONCURRENCY && !mayChange.includes(arn));
    const lastAtRest = Math.max(...atRestAfter.map((arn) => reader.described.indexOf(arn)));
    expect(Math.max(...positions)).toBeLessThan(lastAtRest);
  });
});

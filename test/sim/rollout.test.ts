import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { RegisterTaskDefinitionCommand, UpdateServiceCommand, type ECSClient } from '@aws-sdk/client-ecs';
import { SimulatedEcs, startSimulator, type Simulator } from '../../local/sim';
import { aService, aTaskDefinition, advanceUntil, deploy, describeService, ecsClient } from './helpers';

const T0 = new Date('2025-01-01T00:00:00Z');

/** In-process: a service of `desired` tasks on rev 1, steady. */
function steadyService(core: SimulatedEcs, desired: number, minimumHealthyPercent: number, maximumPercent: number): void {
  core.call('CreateCluster', { clusterName: 'c1', capacityProviders: ['FARGATE', 'FARGATE_SPOT'] });
  core.call('RegisterTaskDefinition', aTaskDefinition({ image: 'app:1' }));
  core.call('RegisterTaskDefinition', aTaskDefinition({ image: 'app:2' }));
  core.call('CreateService', aService({ taskDefinition: 'web:1', desiredCount: desired, deploymentConfiguration: { minimumHealthyPercent, maximumPercent } }));
  for (let i = 0; i < 600 && !isSteady(core, 'web:1', desired); i++) core.advance(1);
  if (!isSteady(core, 'web:1', desired)) throw new Error('service did not become steady');
}

function isSteady(core: SimulatedEcs, rev: string, desired: number): boolean {
  const svc = core.snapshot().clusters[0].services[0];
  return svc.deployments.length === 1 && svc.deployments[0].rolloutState === 'COMPLETED' && svc.taskDefinition.endsWith(rev) && svc.runningCount === desired;
}

function taskCounts(core: SimulatedEcs): { live: number; healthy: number } {
  const tasks = core.snapshot().clusters[0].tasks;
  const live = tasks.filter((t) => t.desiredStatus === 'RUNNING').length;
  const healthy = tasks.filter((t) => t.desiredStatus === 'RUNNING' && t.lastStatus === 'RUNNING').length;
  return { live, healthy };
}

describe('simulator: rolling deployments', () => {
  it('replaces every task within minimumHealthyPercent and maximumPercent, then completes (property)', () => {
    const scenario = fc
      .record({
        desired: fc.integer({ min: 1, max: 6 }),
        minimumHealthyPercent: fc.constantFrom(0, 50, 100),
        maximumPercent: fc.constantFrom(100, 150, 200),
        seed: fc.integer({ min: 1, max: 1_000_000 }),
      })
      // ECS cannot make progress when neither an extra task may start nor one may stop.
      .filter((s) => Math.floor((s.desired * s.maximumPercent) / 100) > s.desired || Math.ceil((s.desired * s.minimumHealthyPercent) / 100) < s.desired);
    fc.assert(
      fc.property(scenario, ({ desired, minimumHealthyPercent, maximumPercent, seed }) => {
        // Prepare
        const core = new SimulatedEcs({ startTime: T0, seed, throttling: false });
        steadyService(core, desired, minimumHealthyPercent, maximumPercent);
        const maxTasks = Math.floor((desired * maximumPercent) / 100);
        const minHealthy = Math.ceil((desired * minimumHealthyPercent) / 100);

        // Act: roll to rev 2, sampling every half virtual second.
        core.call('UpdateService', { cluster: 'c1', service: 'web', taskDefinition: 'web:2' });
        let seconds = 0;
        while (!isSteady(core, 'web:2', desired) && seconds < 1800) {
          const { live, healthy } = taskCounts(core);
          // Assess (during): the documented bounds (RUNNING + PENDING <= max, RUNNING >= min).
          if (live > maxTasks) throw new Error(`t+${seconds}s: ${live} tasks above maximum ${maxTasks}`);
          if (healthy < minHealthy) throw new Error(`t+${seconds}s: ${healthy} healthy below minimum ${minHealthy}`);
          core.advance(0.5);
          seconds += 0.5;
        }

        // Assess (after)
        expect(isSteady(core, 'web:2', desired)).toBe(true);
        const tasks = core.snapshot().clusters[0].tasks.filter((t) => t.desiredStatus === 'RUNNING');
        expect(tasks.every((t) => t.taskDefinitionArn.endsWith('web:2'))).toBe(true);
        core.close();
      }),
      { numRuns: 25 },
    );
  });

  describe('over the SDK', () => {
    let sim: Simulator;
    let ecs: ECSClient;
    beforeAll(async () => {
      sim = await startSimulator({ port: 0, startTime: T0, throttling: false, seed: 11 });
      ecs = ecsClient(sim);
    });
    afterAll(async () => {
      await sim?.close();
    });
    beforeEach(() => sim.reset());

    it('shows PRIMARY and ACTIVE deployments with their own counts, ECS events, and drops the old one at steady state', async () => {
      // Prepare: 4 tasks, min 50 % / max 100 %: two old tasks stop before two new ones start.
      await deploy(ecs, { svc: { desiredCount: 4, deploymentConfiguration: { minimumHealthyPercent: 50, maximumPercent: 100 } } });
      await advanceUntil(sim, async () => (await describeService(ecs, 'c1', 'web')).runningCount === 4);
      const rev2 = await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition({ image: 'nginx:2' })));

      // Act
      await ecs.send(new UpdateServiceCommand({ cluster: 'c1', service: 'web', taskDefinition: 'web:2' }));
      sim.advance(1);
      const during = await describeService(ecs, 'c1', 'web');
      await advanceUntil(sim, async () => (await describeService(ecs, 'c1', 'web')).deployments?.[0].rolloutState === 'COMPLETED', {
        step: 2,
      });
      const after = await describeService(ecs, 'c1', 'web');

      // Assess
      expect(during.deployments?.map((d) => [d.status, d.rolloutState])).toEqual([
        ['PRIMARY', 'IN_PROGRESS'],
        ['ACTIVE', 'COMPLETED'],
      ]);
      expect(during.runningCount).toBe(2);
      expect(during.deployments?.[1]).toMatchObject({ runningCount: 2, desiredCount: 2 });
      expect(after.deployments).toEqual([
        expect.objectContaining({ status: 'PRIMARY', rolloutState: 'COMPLETED', runningCount: 4, desiredCount: 4, taskDefinition: rev2.taskDefinition?.taskDefinitionArn }),
      ]);
      expect(after.deployments?.[0].rolloutStateReason).toBe(`ECS deployment ${after.deployments?.[0].id} completed.`);
      const messages = (after.events ?? []).map((e) => e.message as string);
      expect(messages[0]).toBe('(service web) has reached a steady state.');
      expect(messages[1]).toBe(`(service web) (deployment ${after.deployments?.[0].id}) deployment completed.`);
      // Every old task is stopped and every new one started, in ECS's wording.
      const taskIds = (re: RegExp) =>
        messages.filter((m) => re.test(m)).flatMap((m) => [...m.matchAll(/\(task ([0-9a-f]{32})\)/g)].map((x) => x[1]));
      expect(messages.some((m) => /^\(service web\) has stopped 2 running tasks: \(task [0-9a-f]{32}\) \(task [0-9a-f]{32}\)\.$/.test(m))).toBe(true);
      expect(taskIds(/^\(service web\) has stopped \d+ running tasks: /)).toHaveLength(4);
      expect(taskIds(/^\(service web\) has started \d+ tasks: /)).toHaveLength(8);
      const times = (after.events ?? []).map((e) => (e.createdAt as Date).getTime());
      expect([...times].sort((a, b) => b - a)).toEqual(times);
    });

    it('scales in and out without a new deployment', async () => {
      await deploy(ecs, { svc: { desiredCount: 3 } });
      await advanceUntil(sim, async () => (await describeService(ecs, 'c1', 'web')).runningCount === 3);
      const before = await describeService(ecs, 'c1', 'web');

      await ecs.send(new UpdateServiceCommand({ cluster: 'c1', service: 'web', desiredCount: 1 }));
      await advanceUntil(sim, async () => (await describeService(ecs, 'c1', 'web')).runningCount === 1);
      await ecs.send(new UpdateServiceCommand({ cluster: 'c1', service: 'web', desiredCount: 5 }));
      await advanceUntil(sim, async () => (await describeService(ecs, 'c1', 'web')).runningCount === 5);
      const after = await describeService(ecs, 'c1', 'web');

      expect(after.deployments?.map((d) => d.id)).toEqual([before.deployments?.[0].id]);
      expect(after.events?.some((e) => /has stopped 2 running tasks/.test(e.message as string))).toBe(true);
    });

    it('keeps at most the latest 100 events', async () => {
      await deploy(ecs, { svc: { desiredCount: 1 } });
      // Each forced deployment adds started / stopped / completed / steady events.
      for (let i = 0; i < 40; i++) {
        await ecs.send(new UpdateServiceCommand({ cluster: 'c1', service: 'web', forceNewDeployment: true }));
        sim.advance(90);
      }
      const svc = await describeService(ecs, 'c1', 'web');
      expect(svc.events).toHaveLength(100);
      expect(svc.events?.[0].message).toBe('(service web) has reached a steady state.');
    });
  });
});

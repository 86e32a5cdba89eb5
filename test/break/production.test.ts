/**
 * What a production reconciler meets, against the ECS simulator and dynalite on
 * a virtual clock: its clock minutes off from ECS's, a managed cluster deleted under it and
 * re-created, a service DRAINING for an hour, a family with more than 100 revisions, a spec
 * flipped between two images every pass, and a Lambda timeout in the middle of the status writes.
 * Each case checks what a user would expect: no crash, a status that says what is happening,
 * nothing lost, nothing done twice.
 */
import { describe, expect, it } from 'vitest';
import { clearTaskDefinitionCache } from '../../lambda/adapters/ecs-observer';
import { OWNER_TAG_KEY } from '../../lambda/core/ports';
import { Reason } from '../../lambda/core/status';
import type { PassSummary } from '../../lambda/core/pass';
import type { ServiceStatus } from '../../lambda/core/types';
import { localDoc } from '../runtime/support';
import { aSpecItem, aValidSpec, isStatusWrite, revisions, runtimeWith, useSimHarness } from './support';

const WEB = { cluster: 'apps', service: 'web' };
const reasonOf = (s: ServiceStatus | undefined) => s?.conditions.find((c) => c.type === 'Ready')?.reason;

describe('production faults', () => {
  const h = useSimHarness();

  it.each([
    { case: 'ten minutes ahead of ECS', skewMinutes: 10 },
    { case: 'ten minutes behind ECS', skewMinutes: -10 },
  ])('the reconciler clock $case: creates and rolls out once, no lag beyond grace from the skew alone', async ({ skewMinutes }) => {
    // Prepare: the pass clock (lease, laggingSince, grace) is off from ECS's by `skewMinutes`.
    const skewMs = skewMinutes * 60_000;
    const runtime = runtimeWith(h, { clock: { now: () => new Date(h.sim.clock.now().getTime() + skewMs) } });
    const run = async (n: number) => {
      const out: PassSummary[] = [];
      for (let i = 0; i < n; i++) {
        out.push(await runtime.run({ holder: `skewed-${i}` }));
        h.sim.advance(60);
      }
      return out;
    };
    await h.putSpec(aSpecItem());

    // Act: create, then a rollout of a slow-starting image.
    const created = await run(4);
    await h.editSpec(WEB, { image: 'public.ecr.aws/nginx/slow-start:1.28' });
    const rolled = await run(10);

    // Assess
    const all = [...created, ...rolled];
    expect(all.every((s) => s.outcome === 'completed')).toBe(true);
    expect(h.sim.calls({ action: 'CreateService' })).toHaveLength(1);
    expect(h.sim.calls({ action: 'UpdateService' })).toHaveLength(1);
    for (const s of all) {
      const st = s.statuses['apps/web'];
      expect(st?.lagBeyondGrace, JSON.stringify(st)).toBe(false);
      if (st?.laggingSince) expect(Date.parse(st.laggingSince)).toBeLessThanOrEqual(Date.parse(s.startedAt));
    }
    expect(await h.status(WEB)).toMatchObject({ phase: 'Converged', lastAppliedSpecHash: aValidSpec({ image: 'public.ecr.aws/nginx/slow-start:1.28' }).hash });
  });

  it('a managed cluster deleted under it: ClusterNotFound, nothing else blocked; re-created: each service created once, with a new clientToken', async () => {
    // Prepare: two converged services in apps, one in other.
    await h.reset({ clusters: ['apps', 'other'] });
    await h.putSpec(aSpecItem());
    await h.putSpec(aSpecItem({ service: 'api' }));
    await h.putSpec(aSpecItem({ cluster: 'other', service: 'jobs' }));
    await h.converge();
    const firstToken = h.sim.calls({ action: 'CreateService' }).find((c) => c.request.serviceName === 'web')?.request.clientToken;
    // A person deletes the services (force), waits for INACTIVE, deletes the cluster.
    for (const service of ['web', 'api']) h.sim.call('DeleteService', { cluster: 'apps', service, force: true });
    h.sim.advance(120);
    h.sim.call('DeleteCluster', { cluster: 'apps' });
    await h.editSpec({ cluster: 'other', service: 'jobs' }, { desiredCount: 3 });
    h.sim.clearCalls();

    // Act
    const gone: PassSummary[] = [];
    for (let i = 0; i < 3; i++) {
      h.sim.advance(60);
      gone.push(await h.pass(`gone-${i}`));
    }
    h.sim.call('CreateCluster', { clusterName: 'apps', capacityProviders: ['FARGATE', 'FARGATE_SPOT'] });
    const back = await h.converge(20);

    // Assess: while gone, no write in apps, a status that says why; the other cluster converged.
    expect(gone.flatMap((s) => s.actions).filter((a) => a.cluster === 'apps')).toEqual([]);
    expect(gone[0].actions.map((a) => `${a.cluster}/${a.service} ${a.type}`)).toEqual(['other/jobs UpdateService']);
    for (const s of gone) expect(gone.every(() => s.outcome === 'completed')).toBe(true);
    const whileGone = gone.at(-1)?.statuses['apps/web'];
    expect(whileGone?.phase).toBe('Blocked');
    expect(reasonOf(whileGone)).toBe(Reason.ClusterNotFound);
    expect(back.at(-1)?.statuses['apps/web']?.phase).toBe('Converged');
    const creates = h.sim.calls({ action: 'CreateService', outcome: 'ok' }).filter((c) => c.request.cluster === 'apps');
    expect(creates.map((c) => c.request.serviceName).sort()).toEqual(['api', 'web']);
    expect(creates.find((c) => c.request.serviceName === 'web')?.request.clientToken).not.toBe(firstToken);
  });

  it('a family with more than 100 revisions: one revision registered, reused after; nothing piles up', async () => {
    // Prepare: 120 revisions of the family apps-web made by someone else's pipeline.
    for (let i = 0; i < 120; i++) {
      // One a second: RegisterTaskDefinition refills at 1/s (docs/ecs-facts.md §2).
      h.sim.advance(1);
      h.sim.call('RegisterTaskDefinition', {
          family: 'apps-web',
          networkMode: 'awsvpc',
          requiresCompatibilities: ['FARGATE'],
          cpu: '256',
          memory: '512',
          containerDefinitions: [{ name: 'web', image: `public.ecr.aws/nginx/nginx:old-${i}`, essential: true }],
          tags: [{ key: OWNER_TAG_KEY, value: 'sim-test' }],
      });
    }
    await h.putSpec(aSpecItem());

    // Act
    await h.converge();
    h.sim.clearCalls();
    for (let i = 0; i < 5; i++) {
      h.sim.advance(60);
      await h.pass(`quiet-${i}`);
    }

    // Assess
    expect(await revisions(h, 'apps-web')).toHaveLength(121);
    expect((await h.describe('apps', 'web'))?.taskDefinition).toMatch(/apps-web:121$/);
    expect(h.writes()).toEqual([]);
  });

  it('a spec flipped between two images every pass: each flip applied once, never blamed on the circuit breaker', async () => {
    // Prepare
    await h.putSpec(aSpecItem({ image: 'public.ecr.aws/nginx/nginx:1.27' }));
    await h.converge();
    h.sim.clearCalls();

    // Act: six flips, one per pass.
    const flips: PassSummary[] = [];
    for (let i = 0; i < 6; i++) {
      await h.editSpec(WEB, { image: i % 2 === 0 ? 'public.ecr.aws/nginx/nginx:1.28' : 'public.ecr.aws/nginx/nginx:1.27' });
      h.sim.advance(60);
      flips.push(await h.pass(`flip-${i}`));
    }
    const settled = await h.converge(20);

    // Assess
    expect(h.sim.calls({ action: 'UpdateService' })).toHaveLength(6);
    for (const s of flips) expect(s.actions.filter((a) => a.type === 'UpdateService').map((a) => a.kind)).toEqual(['rollout']);
    expect([...flips, ...settled].every((s) => s.statuses['apps/web']?.failedSpecHash === undefined)).toBe(true);
    expect(settled.flatMap((s) => s.actions)).toEqual([]);
    expect((await h.describe('apps', 'web'))?.taskDefinition).toBe((await revisions(h, 'apps-web')).at(-1));
  });

  it('a Lambda timeout in the middle of the status writes: the next pass repairs them, no action twice', async () => {
    // Prepare: four converged services, then four changed specs.
    const names = ['a1', 'a2', 'a3', 'a4'];
    for (const service of names) await h.putSpec(aSpecItem({ service }));
    await h.converge();
    for (const service of names) await h.editSpec({ cluster: 'apps', service }, { desiredCount: 3 });
    // The invocation freezes at its second status write (a timeout: the pass never returns, its
    // lease is never released).
    const doc = localDoc(h.db.endpoint);
    let writes = 0;
    let frozen!: () => void;
    const reachedFreeze = new Promise<void>((resolve) => (frozen = resolve));
    doc.middlewareStack.add(
      (next, context) => async (args) => {
        if (isStatusWrite(context.commandName, args.input) && ++writes === 2) {
          frozen();
          return new Promise<never>(() => {});
        }
        return next(args);
      },
      { step: 'initialize', name: 'freezeAtSecondStatusWrite' },
    );
    const dying = runtimeWith(h, { doc });
    h.sim.advance(60);
    h.sim.clearCalls();
    void dying.run({ holder: 'dying' });
    await reachedFreeze;
    const updatesBefore = h.sim.calls({ action: 'UpdateService' }).length;

    // Act: a new container once the lease has expired.
    clearTaskDefinitionCache();
    h.sim.advance(11 * 60);
    const next = await h.pass('next');
    const rest = await h.converge(20);

    // Assess: the frozen pass had sent its four updates; the next one sends none again and
    // writes the statuses the frozen one did not.
    expect(updatesBefore).toBe(4);
    expect(next.outcome).toBe('completed');
    expect(next.actions).toEqual([]);
    expect(h.sim.calls({ action: 'UpdateService' })).toHaveLength(4);
    for (const service of names) {
      expect(await h.status({ cluster: 'apps', service })).toMatchObject({
        phase: 'Converged',
        desiredCount: 3,
        lastAppliedSpecHash: aValidSpec({ service, desiredCount: 3 }).hash,
      });
    }
    expect(rest.at(-1)?.outcome).toBe('completed');
  });
});

describe('a service DRAINING for an hour', () => {
  // Tasks take an hour to stop: a DeleteService leaves the service DRAINING that long.
  const h = useSimHarness({ sim: { timings: { stopping: [3600, 3660] } } });

  it('no CreateService while it drains, a status that says so; created once when INACTIVE', async () => {
    // Prepare: converged, then a person deletes the service.
    await h.putSpec(aSpecItem());
    await h.converge();
    h.sim.call('DeleteService', { cluster: 'apps', service: 'web', force: true });
    h.sim.clearCalls();

    // Act: passes every five minutes for 70 minutes.
    const draining: PassSummary[] = [];
    for (let i = 0; i < 14; i++) {
      h.sim.advance(300);
      draining.push(await h.pass(`draining-${i}`));
    }
    const after = await h.converge(20);

    // Assess
    const drainingPasses = draining.filter((s) => reasonOf(s.statuses['apps/web']) === Reason.PreviousServiceDraining);
    expect(drainingPasses.length).toBeGreaterThanOrEqual(11);
    for (const s of drainingPasses) expect(s.statuses['apps/web']?.phase).toBe('Pending');
    expect(h.sim.calls({ action: 'CreateService' }).filter((c) => c.outcome === 'ok')).toHaveLength(1);
    expect(h.sim.calls({ action: 'CreateService' }).filter((c) => c.outcome !== 'ok')).toEqual([]);
    expect(after.at(-1)?.statuses['apps/web']?.phase).toBe('Converged');
  });
});

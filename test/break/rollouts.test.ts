/**
 * Breaking rollouts end to end (dynalite + the ECS simulator on a manual clock): failed rollouts
 * and rollbacks, hand changes while a rollout is in flight, the circuit breaker off, a crash
 * between RegisterTaskDefinition and UpdateService.
 */
import { describe, expect, it } from 'vitest';
import { clearTaskDefinitionCache } from '../../lambda/adapters/ecs-observer';
import { METRIC } from '../../lambda/core/metric-names';
import { Reason } from '../../lambda/core/status';
import type { ServiceStatus } from '../../lambda/core/types';
import { aSpecItem, aValidSpec, handMadeService, revisions, useSimHarness } from './support';

const WEB = { cluster: 'apps', service: 'web' };
const GOOD = 'public.ecr.aws/nginx/nginx:1.27';
const reasonOf = (s: ServiceStatus | undefined, type = 'Ready') => s?.conditions.find((c) => c.type === type)?.reason;

describe('rollouts under attack', () => {
  const h = useSimHarness();

  it('a task definition set by hand while our rollout is in flight is drift, not a rollback: it is corrected', async () => {
    // Prepare: converged on 1.27; a rollout of a slow-starting image is in flight and recorded.
    await h.putSpec(aSpecItem({ image: GOOD }));
    await h.converge();
    const handTd = await handMadeService(h, { service: 'other' });
    await h.editSpec(WEB, { image: 'public.ecr.aws/nginx/slow-start:1.28' });
    await h.pass('rollout');
    h.sim.advance(60);
    await h.pass('observe');
    expect(await h.status(WEB)).toMatchObject({ appliedRolloutState: 'IN_PROGRESS' });

    // Act: a person points the service at another task definition, then passes run.
    h.sim.setTaskDefinition({ cluster: 'apps', service: 'web', taskDefinition: handTd });
    h.sim.clearCalls();
    h.sim.advance(60);
    const after = await h.pass('after-hand-change');
    await h.passUntil((s) => s.statuses['apps/web']?.phase === 'Converged', 20);

    // Assess: corrected as drift (our revision again), never recorded as a failed spec.
    expect(after.actions.map((a) => [a.type, a.kind, a.outcome])).toEqual([
      ['RegisterTaskDefinition', undefined, 'applied'],
      ['UpdateService', 'drift', 'applied'],
    ]);
    const status = await h.status(WEB);
    expect(status?.failedSpecHash).toBeUndefined();
    expect((await h.describe('apps', 'web'))?.taskDefinition).toMatch(/apps-web:2$/);
    expect(await revisions(h, 'apps-web')).toHaveLength(2);
  });

  it('a failed rollout that ECS rolled back is not re-applied over passes; a changed spec then rolls out', async () => {
    // Prepare
    await h.putSpec(aSpecItem({ image: GOOD }));
    await h.converge();
    await h.editSpec(WEB, { image: 'public.ecr.aws/nginx/does-not-exist:1' });
    const bad = aValidSpec({ image: 'public.ecr.aws/nginx/does-not-exist:1' }).hash;
    await h.passUntil((s) => s.statuses['apps/web']?.failedSpecHash === bad, 40);

    // Act: five quiet passes (the failed deployment drains and is forgotten), then a fix.
    h.sim.clearCalls();
    for (let i = 0; i < 5; i++) {
      h.sim.advance(60);
      await h.pass(`quiet-${i}`);
    }
    const quietWrites = h.writes();
    await h.editSpec(WEB, { image: 'public.ecr.aws/nginx/nginx:1.29' });
    h.sim.advance(60);
    const fix = await h.pass('fix');
    await h.converge(20);

    // Assess
    expect(quietWrites).toEqual([]);
    expect(fix.actions.map((a) => [a.type, a.kind, a.outcome])).toEqual([
      ['RegisterTaskDefinition', undefined, 'applied'],
      ['UpdateService', 'rollout', 'applied'],
    ]);
    const web = await h.describe('apps', 'web');
    expect(web?.taskDefinition).toMatch(/apps-web:3$/);
    expect(await h.status(WEB)).toMatchObject({ phase: 'Converged', lastAppliedSpecHash: aValidSpec({ image: 'public.ecr.aws/nginx/nginx:1.29' }).hash });
    expect((await h.status(WEB))?.failedSpecHash).toBeUndefined();
  });

  it('a failed first deployment, then the image is pushed and the spec changed (desiredCount): the retry forces a new deployment', async () => {
    // Prepare: the create fails (circuit breaker, nothing to roll back to: FAILED stays PRIMARY).
    await h.putSpec(aSpecItem({ image: 'public.ecr.aws/nginx/unpullable:1', desiredCount: 2 }));
    const bad = aValidSpec({ image: 'public.ecr.aws/nginx/unpullable:1', desiredCount: 2 }).hash;
    await h.passUntil((s) => s.statuses['apps/web']?.failedSpecHash === bad, 40);
    expect((await h.describe('apps', 'web'))?.deployments?.map((d) => [d.status, d.rolloutState])).toEqual([['PRIMARY', 'FAILED']]);

    // Act: the image now exists (the person pushed it) and the spec changes, as docs/operations.md says.
    h.sim.addFailureRule({ match: 'unpullable', mode: 'ok' });
    await h.editSpec(WEB, { desiredCount: 3 });
    h.sim.clearCalls();
    h.sim.advance(60);
    const retry = await h.pass('retry');
    await h.converge(20);

    // Assess
    expect(retry.actions.map((a) => [a.type, a.kind, a.outcome])).toEqual([['UpdateService', 'rollout', 'applied']]);
    expect(h.sim.calls({ action: 'UpdateService' })[0].request).toMatchObject({ desiredCount: 3, forceNewDeployment: true });
    expect(await h.status(WEB)).toMatchObject({ phase: 'Converged', runningCount: 3 });
    expect((await h.status(WEB))?.failedSpecHash).toBeUndefined();
    expect(await revisions(h, 'apps-web')).toHaveLength(1);
  });

  it('a changed spec whose live task definition cannot be described this pass: the rest follows as a rollout, not as drift', async () => {
    // Prepare: converged; a cold start (empty task definition cache) meets a failing
    // DescribeTaskDefinition while the spec changes both image and desiredCount.
    await h.putSpec(aSpecItem({ image: GOOD, desiredCount: 2 }));
    await h.converge();
    await h.editSpec(WEB, { image: 'public.ecr.aws/nginx/nginx:1.28', desiredCount: 3 });
    clearTaskDefinitionCache();
    h.sim.injectFault({ action: 'DescribeTaskDefinition', nth: 1, times: 3, errorType: 'ServerException' });
    h.sim.advance(60);

    // Act
    const partial = await h.pass('td-unknown');
    h.sim.advance(60);
    const rest = await h.pass('td-known');
    await h.converge(20);

    // Assess
    expect(partial.actions.map((a) => [a.type, a.kind, a.changes?.map((c) => c.field)])).toEqual([['UpdateService', 'rollout', ['desiredCount']]]);
    expect(rest.actions.map((a) => [a.type, a.kind])).toEqual([
      ['RegisterTaskDefinition', undefined],
      ['UpdateService', 'rollout'],
    ]);
    expect(partial.counts.driftCorrections + rest.counts.driftCorrections).toBe(0);
    expect((await h.status(WEB))?.drift).toBeUndefined();
    expect((await h.describe('apps', 'web'))?.taskDefinition).toMatch(/apps-web:2$/);
  });

  it('circuit breaker off, unpullable image: Degraded with LagBeyondGrace and the pull error as reason', async () => {
    // Prepare
    await h.putSpec(
      aSpecItem({
        image: 'public.ecr.aws/nginx/unpullable:1',
        desiredCount: 2,
        lagGraceSeconds: 120,
        deployment: { circuitBreaker: { enable: false, rollback: false } },
      }),
    );

    // Act: six minutes of passes.
    for (let i = 0; i < 7; i++) {
      await h.pass(`p${i}`);
      h.sim.advance(60);
    }
    const last = await h.pass('last');

    // Assess
    const status = await h.status(WEB);
    expect(status).toMatchObject({ phase: 'Degraded', lagBeyondGrace: true, runningCount: 0, desiredCount: 2 });
    expect(reasonOf(status)).toBe(Reason.LagBeyondGrace);
    expect(status?.reason).toMatch(/CannotPullContainerError/);
    expect(last.actions).toEqual([]);
    expect(h.metrics.latest(METRIC.taskLag, WEB)).toBe(2);
    expect(h.metrics.latest(METRIC.servicesLaggingBeyondGrace)).toBe(1);
  });

  it('UpdateService failing pass after pass after a registered revision: one revision, reused, then converged', async () => {
    // Prepare: every UpdateService fails (after the SDK's retries) for three passes.
    await h.putSpec(aSpecItem({ image: GOOD }));
    await h.converge();
    await h.editSpec(WEB, { image: 'public.ecr.aws/nginx/nginx:1.28' });
    h.sim.injectFault({ action: 'UpdateService', fraction: 1, times: 9, errorType: 'ServerException' });

    // Act
    const failing = [];
    for (let i = 0; i < 3; i++) {
      failing.push(await h.pass(`failing-${i}`));
      h.sim.advance(60);
    }
    const statusWhileFailing = await h.status(WEB);
    await h.converge(20);

    // Assess
    expect(failing.map((s) => s.actions.map((a) => `${a.type}:${a.outcome}`))).toEqual([
      ['RegisterTaskDefinition:applied', 'UpdateService:failed'],
      ['RegisterTaskDefinition:applied', 'UpdateService:failed'],
      ['RegisterTaskDefinition:applied', 'UpdateService:failed'],
    ]);
    expect(failing.slice(1).map((s) => s.actions[0].detail)).toEqual([expect.stringMatching(/^reused /), expect.stringMatching(/^reused /)]);
    expect(await revisions(h, 'apps-web')).toHaveLength(2);
    expect(statusWhileFailing?.lastAppliedSpecHash).toBe(aValidSpec({ image: GOOD }).hash);
    expect(statusWhileFailing?.lastAction?.error).toMatch(/^transient: /);
    expect((await h.describe('apps', 'web'))?.taskDefinition).toMatch(/apps-web:2$/);
  });
});

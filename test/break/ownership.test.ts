/**
 * Breaking ownership and lifecycle end to end (dynalite + the ECS simulator): services the
 * reconciler does not own, adoption that cannot tag, invalid specs over owned services,
 * autoscaling out of band, deleting while DRAINING, re-creating after a prune.
 */
import { describe, expect, it } from 'vitest';
import { CreateServiceCommand, RegisterTaskDefinitionCommand } from '@aws-sdk/client-ecs';
import { Reason } from '../../lambda/core/status';
import { recordCalls } from '../runtime/support';
import { aSpecItem, handMadeService, personEcs, useSimHarness } from './support';

const WEB = { cluster: 'apps', service: 'web' };
const OLD = { cluster: 'apps', service: 'old' };

describe('ownership and lifecycle under attack', () => {
  const h = useSimHarness();

  it('adoption whose TagResource is refused: the unowned services are neither updated nor deleted', async () => {
    // Prepare: two hand-made services; one spec adopts `web`, one adopts `old` to delete it.
    await handMadeService(h, { service: 'web', desiredCount: 1 });
    await handMadeService(h, { service: 'old', desiredCount: 1 });
    await h.putSpec(aSpecItem({ adopt: true, desiredCount: 3 }));
    await h.putSpec(aSpecItem({ service: 'old', adopt: true, state: 'absent' }));
    h.sim.injectFault({ action: 'TagResource', fraction: 1, errorType: 'AccessDeniedException', message: 'not authorized to perform ecs:TagResource' });
    h.sim.clearCalls();

    // Act
    const s = await h.pass('adopt');

    // Assess: only the refused TagResource calls reached ECS.
    expect(h.writes()).toEqual(['TagResource', 'TagResource']);
    expect(s.actions.filter((a) => a.type !== 'TagResource').map((a) => [a.service, a.type, a.outcome])).toEqual([
      ['web', 'RegisterTaskDefinition', 'skipped'],
      ['web', 'UpdateService', 'skipped'],
      ['old', 'DeleteService', 'skipped'],
    ]);
    expect((await h.describe('apps', 'web'))?.desiredCount).toBe(1);
    expect((await h.describe('apps', 'old'))?.status).toBe('ACTIVE');
    expect((await h.status(WEB))?.lastAction?.error).toMatch(/AccessDenied|not authorized/);
    expect((await h.status(OLD))?.lastAction?.error).toMatch(/AccessDenied|not authorized/);
  });

  it('service tags follow the spec; a refused tag update does not hold back the rollout', async () => {
    // Prepare: a converged owned service, then its spec changes a tag and desiredCount.
    await h.putSpec(aSpecItem({ desiredCount: 1, tags: { team: 'storefront' } }));
    await h.converge();
    await h.editSpec(WEB, { tags: { team: 'payments' }, desiredCount: 2 });
    h.sim.injectFault({ action: 'TagResource', fraction: 1, errorType: 'AccessDeniedException', message: 'not authorized to perform ecs:TagResource' });
    h.sim.clearCalls();

    // Act: the tag update is refused, the desiredCount change still goes through.
    const refused = await h.pass('tag-refused');
    h.sim.clearFaults();
    h.sim.advance(60);
    const retried = await h.pass('tag-retried');

    // Assess
    expect(refused.actions.map((a) => [a.type, a.outcome])).toEqual([
      ['TagResource', 'failed'],
      ['UpdateService', 'applied'],
    ]);
    expect(retried.actions.map((a) => [a.type, a.outcome])).toEqual([['TagResource', 'applied']]);
    const live = await h.describe('apps', 'web');
    expect(live?.desiredCount).toBe(2);
    expect(live?.tags).toEqual(expect.arrayContaining([{ key: 'team', value: 'payments' }]));
  });

  it('a hand-made service named like a spec: never written to, and not pruned when the spec goes away', async () => {
    // Prepare: a person's service `web` (no owner tag) and a spec of the same name.
    await handMadeService(h, { service: 'web', desiredCount: 1 });
    await h.putSpec(aSpecItem({ desiredCount: 3 }));
    h.sim.clearCalls();

    // Act
    const named = await h.pass('named');
    await h.deleteSpec(WEB);
    h.sim.advance(60);
    const gone = await h.pass('spec-gone');

    // Assess
    expect(h.writes()).toEqual([]);
    expect([...named.actions, ...gone.actions]).toEqual([]);
    expect(named.statuses['apps/web'].conditions.find((c) => c.type === 'Blocked')?.reason).toBe(Reason.NotOwned);
    expect(await h.describe('apps', 'web')).toMatchObject({ status: 'ACTIVE', desiredCount: 1 });
  });

  it('seven specs set absent at once: at most five deletes a pass (MAX_DELETES_PER_PASS), the rest the next pass', async () => {
    // Prepare
    const names = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7'];
    for (const n of names) await h.putSpec(aSpecItem({ service: n, desiredCount: 1 }));
    await h.converge();
    for (const n of names) await h.editSpec({ cluster: 'apps', service: n }, { state: 'absent' });
    h.sim.advance(60);

    // Act
    const first = await h.pass('first');
    h.sim.advance(60);
    const second = await h.pass('second');

    // Assess
    expect(first.actions.filter((a) => a.type === 'DeleteService').map((a) => a.service)).toEqual(['a1', 'a2', 'a3', 'a4', 'a5']);
    expect(first.statuses['apps/a6'].conditions.some((c) => c.reason === Reason.DeleteLimitReached)).toBe(true);
    expect(second.actions.filter((a) => a.type === 'DeleteService').map((a) => a.service)).toEqual(['a6', 'a7']);
    expect(h.sim.calls({ action: 'DeleteService', outcome: 'ok' })).toHaveLength(7);
  });

  it('state: absent on a service it does not own: Blocked NotOwned, never deleted', async () => {
    // Prepare
    await handMadeService(h, { service: 'web' });
    await h.putSpec(aSpecItem({ state: 'absent' }));
    h.sim.clearCalls();

    // Act
    const summaries = [];
    for (let i = 0; i < 3; i++) {
      summaries.push(await h.pass(`p${i}`));
      h.sim.advance(60);
    }

    // Assess
    expect(h.writes()).toEqual([]);
    expect(summaries.flatMap((s) => s.actions)).toEqual([]);
    expect((await h.describe('apps', 'web'))?.status).toBe('ACTIVE');
    const status = await h.status(WEB);
    expect(status?.phase).toBe('Blocked');
    expect(status?.conditions.find((c) => c.type === 'Blocked')?.reason).toBe(Reason.NotOwned);
  });

  it('an owned service whose spec turns invalid is neither changed nor pruned, and says why', async () => {
    // Prepare
    await h.putSpec(aSpecItem({ desiredCount: 2 }));
    await h.converge();
    await h.editSpec(WEB, { cpu: 3, desiredCount: 0 });
    h.sim.setDesiredCount({ cluster: 'apps', service: 'web', desiredCount: 4 });
    h.sim.clearCalls();

    // Act
    for (let i = 0; i < 3; i++) {
      h.sim.advance(60);
      await h.pass(`p${i}`);
    }

    // Assess
    expect(h.writes()).toEqual([]);
    const web = await h.describe('apps', 'web');
    expect(web).toMatchObject({ status: 'ACTIVE', desiredCount: 4 });
    const status = await h.status(WEB);
    expect(status?.phase).toBe('Invalid');
    expect(status?.conditions.find((c) => c.type === 'Blocked')).toMatchObject({ reason: Reason.SpecInvalid });
    expect(status?.conditions.find((c) => c.type === 'Blocked')?.message).toContain('cpu');
  });

  it('an autoscaled service scaled out of band is not reverted; lag is measured against the live count', async () => {
    // Prepare
    await h.putSpec(aSpecItem({ autoscaled: true, desiredCount: 2 }));
    await h.converge();
    h.sim.setDesiredCount({ cluster: 'apps', service: 'web', desiredCount: 5 });
    h.sim.clearCalls();

    // Act
    const first = await h.pass('scaled');
    for (let i = 0; i < 3; i++) {
      h.sim.advance(60);
      await h.pass(`p${i}`);
    }

    // Assess
    expect(h.writes()).toEqual([]);
    expect(first.statuses['apps/web']).toMatchObject({ desiredCount: 5 });
    expect((await h.describe('apps', 'web'))?.desiredCount).toBe(5);
    expect(await h.status(WEB)).toMatchObject({ phase: 'Converged', desiredCount: 5, runningCount: 5 });
  });

  it('a spec deleted while its service is DRAINING: nothing more is sent', async () => {
    // Prepare
    await h.putSpec(aSpecItem({ desiredCount: 1 }));
    await h.converge();
    await h.editSpec(WEB, { state: 'absent' });
    await h.pass('delete');
    expect((await h.describe('apps', 'web'))?.status).toBe('DRAINING');
    await h.deleteSpec(WEB);
    h.sim.clearCalls();

    // Act
    const summaries = [];
    for (let i = 0; i < 3; i++) {
      h.sim.advance(60);
      summaries.push(await h.pass(`p${i}`));
    }

    // Assess
    expect(h.writes()).toEqual([]);
    expect(summaries.flatMap((s) => s.actions)).toEqual([]);
    expect(await h.item(WEB)).toBeUndefined();
    expect((await h.describe('apps', 'web'))?.status).toBe('INACTIVE');
  });

  it('re-creating a service after a prune sends a clientToken other than the first creation (ECS: never reuse a token)', async () => {
    // Prepare: web and api converged; web's spec deleted, pruned; the same spec put back.
    await h.putSpec(aSpecItem({ service: 'web' }));
    await h.putSpec(aSpecItem({ service: 'api' }));
    await h.converge();
    await h.deleteSpec(WEB);
    const prune = await h.pass('prune');
    expect(prune.actions.map((a) => [a.type, a.service])).toEqual([['DeleteService', 'web']]);
    await h.putSpec(aSpecItem({ service: 'web' }));

    // Act
    await h.passUntil((s) => s.actions.some((a) => a.type === 'CreateService' && a.service === 'web'), 30);
    await h.converge();

    // Assess
    const tokens = h.sim
      .calls({ action: 'CreateService' })
      .filter((c) => c.request.serviceName === 'web' && c.outcome === 'ok')
      .map((c) => c.request.clientToken);
    expect(tokens).toHaveLength(2);
    expect(tokens[1]).not.toBe(tokens[0]);
    expect(String(tokens[1])).toMatch(/^[!-~]{1,36}$/);
    expect((await h.describe('apps', 'web'))?.status).toBe('ACTIVE');
  });

  it('adopting a CODE_DEPLOY service sends no circuit breaker and no deployment alarms (ECS has them for the ECS controller only)', async () => {
    // Prepare: a blue/green service made by hand (no breaker), and a spec that adopts it with the
    // reconciler's default breaker and a deployment alarm.
    const tg = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/web/0123456789abcdef';
    const ecs = personEcs(h);
    try {
      const td = await ecs.send(
        new RegisterTaskDefinitionCommand({
          family: 'hand-web',
          networkMode: 'awsvpc',
          requiresCompatibilities: ['FARGATE'],
          cpu: '256',
          memory: '512',
          containerDefinitions: [{ name: 'web', image: 'public.ecr.aws/nginx/nginx:1.27', essential: true, portMappings: [{ containerPort: 80 }] }],
        }),
      );
      await ecs.send(
        new CreateServiceCommand({
          cluster: 'apps',
          serviceName: 'web',
          taskDefinition: td.taskDefinition?.taskDefinitionArn,
          desiredCount: 1,
          launchType: 'FARGATE',
          deploymentController: { type: 'CODE_DEPLOY' },
          loadBalancers: [{ targetGroupArn: tg, containerName: 'web', containerPort: 80 }],
          networkConfiguration: { awsvpcConfiguration: { subnets: ['subnet-0123456789abcdef0'], securityGroups: ['sg-0123456789abcdef0'] } },
        }),
      );
    } finally {
      ecs.destroy();
    }
    await h.putSpec(
      aSpecItem({
        adopt: true,
        desiredCount: 3,
        launchType: 'FARGATE',
        loadBalancer: { targetGroupArn: tg, containerPort: 80 },
        deployment: { alarms: { alarmNames: ['web-5xx'], enable: true, rollback: true } },
      }),
    );
    const sent = recordCalls(h.runtime.ecs);

    // Act
    const adopt = await h.pass('adopt');
    h.sim.advance(60);
    const after = await h.pass('after');

    // Assess: the count is corrected; no UpdateService carried a breaker or alarms; the alarms the
    // spec asks for are named as not updatable under this controller, the breaker is not.
    expect(adopt.actions.filter((a) => a.type === 'UpdateService').map((a) => a.outcome)).toEqual(['applied']);
    const updates = sent.calls.filter((c) => c.action === 'UpdateService').map((c) => c.input as { deploymentConfiguration?: Record<string, unknown> });
    expect(updates.length).toBeGreaterThan(0);
    for (const u of updates) {
      expect(u.deploymentConfiguration?.deploymentCircuitBreaker).toBeUndefined();
      expect(u.deploymentConfiguration?.alarms).toBeUndefined();
    }
    const live = await h.describe('apps', 'web');
    expect(live?.desiredCount).toBe(3);
    expect(live?.deploymentConfiguration?.deploymentCircuitBreaker).toEqual({ enable: false, rollback: false });
    expect(after.actions.filter((a) => a.type === 'UpdateService')).toEqual([]);
    const messages = ((await h.status(WEB))?.conditions ?? []).map((c) => c.message).join('\n');
    expect(messages).toMatch(/CODE_DEPLOY deployment controller, and ECS uses deployment alarms only under the ECS deployment controller: .*deploymentConfiguration\.alarms/);
    expect(messages).not.toMatch(/deploymentCircuitBreaker/);
  });
});

/**
 * The loop and a native deployment ECS runs (docs/ecs-facts.md §14), against the simulator: no
 * UpdateService while a blue/green deployment bakes unless the spec changes, a hand edit made
 * meanwhile corrected only once the deployment ended, the deployment's stage, traffic and bake
 * in the status, and a rollback ECS makes (a canary hook that FAILED) recorded with ECS's reason
 * and never re-applied.
 */
import { UpdateServiceCommand } from '@aws-sdk/client-ecs';
import { describe, expect, it } from 'vitest';
import { aValidSpec, personEcs, useSimHarness } from '../break/support';
import { HOOK_FN, ROLE, WEB, nativeService, nativeSpecItem, newestDeployment } from './support';

const NEW_IMAGE = 'public.ecr.aws/nginx/nginx:1.28';

describe('the loop during a native deployment', () => {
  const h = useSimHarness();

  it('sends one UpdateService for the changed spec, none while the deployment bakes, and corrects a hand edit only after it', async () => {
    // Prepare: a blue/green service with a 10-minute bake; the spec changes the image.
    await nativeService(h, { strategy: 'BLUE_GREEN', bakeTimeInMinutes: 10 });
    await h.editSpec(WEB, { image: NEW_IMAGE });
    h.sim.clearCalls();
    const first = await h.pass('apply');
    expect(first.actions.map((a) => a.type)).toEqual(['RegisterTaskDefinition', 'UpdateService']);

    // Act 1: passes a minute apart until the deployment bakes; a person scales the service then.
    let baking = undefined as undefined | Awaited<ReturnType<typeof h.pass>>;
    for (let i = 0; i < 10 && baking === undefined; i++) {
      h.sim.advance(60);
      const s = await h.pass(`to-bake-${i}`);
      if (s.statuses['apps/web']?.deployment?.lifecycleStage === 'BAKE_TIME') baking = s;
    }
    expect(baking?.statuses['apps/web']).toMatchObject({
      phase: 'Progressing',
      deployment: { strategy: 'BLUE_GREEN', status: 'IN_PROGRESS', lifecycleStage: 'BAKE_TIME', productionTrafficPercent: 100 },
    });
    expect(baking?.statuses['apps/web']?.deployment?.bakeEndsAt).toBeDefined();
    expect((await h.describe('apps', 'web'))?.runningCount).toBe(4);
    const ecs = personEcs(h);
    await ecs.send(new UpdateServiceCommand({ cluster: 'apps', service: 'web', desiredCount: 3 }));
    ecs.destroy();
    h.sim.clearCalls();

    // Act 2: passes through the rest of the bake.
    const during = [];
    for (let i = 0; i < 6; i++) {
      h.sim.advance(60);
      during.push(await h.pass(`bake-${i}`));
      if ((await newestDeployment(h)).status !== 'IN_PROGRESS') break;
    }

    // Assess: nothing sent while ECS ran the deployment; the held drift is named in the status.
    const stillRunning = during.filter((s) => s.statuses['apps/web']?.deployment !== undefined);
    expect(stillRunning.length).toBeGreaterThan(0);
    for (const s of stillRunning) expect(s.actions).toEqual([]);
    const held = stillRunning[0].statuses['apps/web']?.conditions.find((c) => c.type === 'Blocked');
    expect(held?.message).toContain('desiredCount 3 -> 2');
    expect(held?.message).toContain('BLUE_GREEN deployment');

    // Act 3 and assess: once the deployment ended, the hand edit is corrected, once.
    await h.converge();
    const updates = h.sim.calls({ action: 'UpdateService' });
    expect(updates).toHaveLength(1);
    expect(updates[0].request).toMatchObject({ desiredCount: 2 });
    expect((await newestDeployment(h)).status).toBe('SUCCESSFUL');
    expect((await h.status(WEB))?.deployment).toBeUndefined();
  });

  it('a canary whose hook fails is rolled back by ECS: RolloutFailed with the hook and stage, never re-applied', async () => {
    // Prepare: a canary service whose POST_SCALE_UP hook answers FAILED.
    h.sim.setHookTarget(HOOK_FN, () => ({ hookStatus: 'FAILED' }));
    await nativeService(h, {
      strategy: 'CANARY',
      canaryConfiguration: { canaryPercent: 10, canaryBakeTimeInMinutes: 1 },
      lifecycleHooks: [{ targetType: 'AWS_LAMBDA', hookTargetArn: HOOK_FN, roleArn: ROLE, lifecycleStages: ['POST_SCALE_UP'] }],
    });
    await h.editSpec(WEB, { image: NEW_IMAGE });
    h.sim.clearCalls();

    // Act: twelve passes a minute apart.
    const passes = [];
    for (let i = 0; i < 12; i++) {
      passes.push(await h.pass(`canary-${i}`));
      h.sim.advance(60);
    }

    // Assess: one UpdateService for the failed spec; ECS's reason names the hook and its stage.
    expect(h.sim.calls({ action: 'UpdateService' })).toHaveLength(1);
    expect((await newestDeployment(h)).status).toBe('ROLLBACK_SUCCESSFUL');
    const failedHash = aValidSpec(nativeSpecItem({ image: NEW_IMAGE })).hash;
    const status = await h.status(WEB);
    expect(status).toMatchObject({ phase: 'Degraded', failedSpecHash: failedHash });
    const ready = status?.conditions.find((c) => c.type === 'Ready');
    expect(ready?.reason).toBe('RolloutFailed');
    expect(ready?.message).toContain(HOOK_FN);
    expect(ready?.message).toContain('POST_SCALE_UP');
    expect(ready?.message).toContain('CANARY');
    expect(passes.at(-1)?.actions).toEqual([]);
  });
});

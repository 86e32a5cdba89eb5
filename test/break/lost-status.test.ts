/**
 * What a pass knows about a failed rollout must not depend on its status write.
 * A spec whose status can never be written (UpdateItem answers 500, as DynamoDB does for an item
 * too large or an internal error) with an image that cannot be pulled: ECS's circuit breaker
 * rolls the deployment back, and the next passes read that from ECS's deployment history
 * (ListServiceDeployments), not from the lost status, so the failed spec is applied once. With the
 * history unreadable too (a role without ecs:ListServiceDeployments), what DescribeServices shows
 * must do: a PRIMARY deployment that is the circuit breaker's rollback, with no status written
 * since, holds the spec back.
 */
import { describe, expect, it } from 'vitest';
import { aSpecItem, aValidSpec, runtimeWith, statusWritesFailing, useSimHarness } from './support';

const WEB = { cluster: 'apps', service: 'web' };
const BAD = 'public.ecr.aws/nginx/does-not-exist:1';
const DENIED = { action: 'ListServiceDeployments', errorType: 'AccessDeniedException', message: 'not authorized to perform ecs:ListServiceDeployments' };

describe('a failed rollout whose status cannot be written', () => {
  const h = useSimHarness();

  it.each([
    { case: 'the rollback is read from ECS\'s deployment history each pass', denied: false },
    // Found by a breaker run (commit 4fc6a3a): an unreadable history counted as "no rollback".
    { case: 'with ListServiceDeployments denied too, the rollback is read from DescribeServices', denied: true },
  ])('is applied once over many passes, not from the lost status: $case', async ({ denied }) => {
    // Prepare: converged on a good image; then every status write fails (UpdateItem 500) and the
    // spec names an image that cannot be pulled.
    await h.putSpec(aSpecItem());
    await h.converge();
    const before = await h.status(WEB);
    const { doc, refused } = statusWritesFailing(h);
    const runtime = runtimeWith(h, { doc });
    if (denied) h.sim.injectFault(DENIED);
    await h.editSpec(WEB, { image: BAD });
    h.sim.clearCalls();

    // Act: 12 passes a minute apart (the circuit breaker trips and ECS rolls back within them).
    const passes = [];
    for (let i = 0; i < 12; i++) {
      h.sim.advance(60);
      passes.push(await runtime.run({ holder: `lost-${i}` }));
    }

    // Assess: one UpdateService for the failed spec hash; the status was never written; the pass
    // itself reports the failure it found in ECS.
    expect(refused()).toBeGreaterThan(0);
    expect(h.sim.calls({ action: 'UpdateService' })).toHaveLength(1);
    expect(await h.status(WEB)).toEqual(before);
    const last = passes.at(-1)?.statuses['apps/web'];
    expect(last).toMatchObject({ phase: 'Degraded', failedSpecHash: aValidSpec({ image: BAD }).hash });
    expect(last?.conditions.find((c) => c.type === 'Ready')?.reason).toBe('RolloutFailed');
    expect((await h.describe('apps', 'web'))?.taskDefinition).toMatch(/apps-web:1$/);
    if (denied) {
      expect(passes.at(-1)?.errors).toEqual(expect.arrayContaining([expect.stringMatching(/^deployment history apps\/web: .*AccessDeniedException/)]));
    }
    // Bounded: one history read a pass, for the one service whose spec differs from what runs (a
    // denied read: up to the SDK's 3 attempts, as the simulator's virtual clock runs ahead of real
    // time and the SDK retries an error whose Date header corrected its clock offset).
    expect(h.sim.calls({ action: 'ListServiceDeployments' }).length).toBeLessThanOrEqual(denied ? 36 : 12);
    doc.destroy();
  });

  it('with the history denied but the status written: the failure is recorded once, and the next spec (the retry) is applied', async () => {
    // Prepare: converged; the history is denied for good; a spec with an image that cannot be pulled.
    await h.putSpec(aSpecItem());
    await h.converge();
    h.sim.injectFault(DENIED);
    await h.editSpec(WEB, { image: BAD });
    h.sim.clearCalls();

    // Act 1: 8 passes a minute apart.
    for (let i = 0; i < 8; i++) {
      h.sim.advance(60);
      await h.runtime.run({ holder: `denied-${i}` });
    }

    // Assess 1: one rollout; the status says the spec failed.
    expect(h.sim.calls({ action: 'UpdateService' })).toHaveLength(1);
    expect(await h.status(WEB)).toMatchObject({ phase: 'Degraded', failedSpecHash: aValidSpec({ image: BAD }).hash });

    // Act 2: the user fixes the image (a new spec hash).
    const GOOD = 'public.ecr.aws/nginx/nginx:1.28';
    await h.editSpec(WEB, { image: GOOD });
    h.sim.clearCalls();
    await h.converge();

    // Assess 2: applied once and converged, the history still denied.
    expect(h.sim.calls({ action: 'UpdateService' })).toHaveLength(1);
    expect(await h.status(WEB)).toMatchObject({ phase: 'Converged', lastAppliedSpecHash: aValidSpec({ image: GOOD }).hash });
  });
});

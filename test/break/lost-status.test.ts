/**
 * Issue 9, part 1: what a pass knows about a failed rollout must not depend on its status write.
 * A spec whose status can never be written (UpdateItem answers 500, as DynamoDB does for an item
 * too large or an internal error) with an image that cannot be pulled: ECS's circuit breaker
 * rolls the deployment back, and the next passes read that from ECS's deployment history
 * (ListServiceDeployments), not from the lost status, so the failed spec is applied once.
 */
import { describe, expect, it } from 'vitest';
import { localDoc } from '../runtime/support';
import { aSpecItem, aValidSpec, runtimeWith, useSimHarness } from './support';

const WEB = { cluster: 'apps', service: 'web' };
const BAD = 'public.ecr.aws/nginx/does-not-exist:1';
/** lib-dynamodb's UpdateCommand reaches the client's middleware as UpdateItemCommand. */
const isUpdateItem = (command: string | undefined) => command === 'UpdateItemCommand' || command === 'UpdateCommand';

describe('a failed rollout whose status cannot be written', () => {
  const h = useSimHarness();

  it('is applied once over many passes: the rollback is read from ECS each pass, not from the lost status', async () => {
    // Prepare: converged on a good image; then every status write fails (UpdateItem 500) and the
    // spec names an image that cannot be pulled.
    await h.putSpec(aSpecItem());
    await h.converge();
    const before = await h.status(WEB);
    const doc = localDoc(h.db.endpoint);
    let refused = 0;
    doc.middlewareStack.add(
      (next, context) => async (args) => {
        if (isUpdateItem(context.commandName)) {
          refused += 1;
          throw Object.assign(new Error('We encountered an internal error'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } });
        }
        return next(args);
      },
      { step: 'initialize', name: 'statusWritesFail' },
    );
    const runtime = runtimeWith(h, { doc });
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
    expect(refused).toBeGreaterThan(0);
    expect(h.sim.calls({ action: 'UpdateService' })).toHaveLength(1);
    expect(await h.status(WEB)).toEqual(before);
    const last = passes.at(-1)?.statuses['apps/web'];
    expect(last).toMatchObject({ phase: 'Degraded', failedSpecHash: aValidSpec({ image: BAD }).hash });
    expect(last?.conditions.find((c) => c.type === 'Ready')?.reason).toBe('RolloutFailed');
    expect((await h.describe('apps', 'web'))?.taskDefinition).toMatch(/apps-web:1$/);
    // Bounded: the history is read only for the service whose spec differs from what runs.
    expect(h.sim.calls({ action: 'ListServiceDeployments' }).length).toBeLessThanOrEqual(12);
    doc.destroy();
  });
});

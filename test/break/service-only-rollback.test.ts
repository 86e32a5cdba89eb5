/**
 * A failed rollout remembered without a status write, for a spec change of service settings alone (subnets, security groups: not the
 * task definition). ECS's circuit breaker rolls such a deployment back like any other, to the old
 * settings; the next passes must read that from ECS's deployment history (the rolled-back service
 * deployment's target service revision carries the failed settings), and not correct the
 * rolled-back settings as drift every pass, whether or not the status that recorded the failure
 * could be written. Found by a breaker run (branch breaker-findings, commit 4fc6a3a).
 */
import { describe, expect, it } from 'vitest';
import { aSpecItem, aValidSpec, personEcs, runtimeWith, statusWritesFailing, useSimHarness, type SimHarness } from './support';
import { UpdateServiceCommand } from '@aws-sdk/client-ecs';

const WEB = { cluster: 'apps', service: 'web' };
const NEW_SUBNET = 'subnet-0123456789abcdef1';
/**
 * Makes every task fail to pull (until {@link untilFailedThenHeal}), so that the next deployment
 * fails and the circuit breaker's rollback to the old settings completes once tasks start again.
 */
function failNextDeployment(h: SimHarness): void {
  h.sim.setFailureRules([{ match: 'nginx', mode: 'pull-error' }], { prepend: true });
}

/** Advances the simulator until a deployment is FAILED, then lets tasks start again. */
async function untilFailedThenHeal(h: SimHarness): Promise<void> {
  for (let k = 0; k < 300; k++) {
    h.sim.advance(2);
    const d = await h.describe('apps', 'web');
    if (d?.deployments?.some((x) => x.rolloutState === 'FAILED')) {
      h.sim.setFailureRules([{ match: 'nginx', mode: 'ok' }], { prepend: true });
      return;
    }
  }
  throw new Error('no deployment FAILED within 600 simulated seconds');
}

describe('a rolled-back change of service settings alone', () => {
  const h = useSimHarness();

  it.each([
    { case: 'subnets, status writes work', change: { subnets: [NEW_SUBNET] }, failing: false },
    { case: 'subnets, every status write fails', change: { subnets: [NEW_SUBNET] }, failing: true },
    { case: 'security groups, every status write fails', change: { securityGroups: ['sg-0123456789abcdef9'] }, failing: true },
    { case: 'subnets, every status write fails and ListServiceDeployments is denied', change: { subnets: [NEW_SUBNET] }, failing: true, denied: true },
  ])('$case: applied once, never re-applied as drift; the pass and the status say RolloutFailed', async ({ change, failing, denied }) => {
    // Prepare: converged; then the spec changes service settings only, and its deployment fails.
    await h.putSpec(aSpecItem());
    await h.converge();
    const before = await h.status(WEB);
    const writes = statusWritesFailing(h, failing);
    const runtime = runtimeWith(h, { doc: writes.doc });
    const oldNetwork = (await h.describe('apps', 'web'))?.networkConfiguration;
    failNextDeployment(h);
    if (denied) h.sim.injectFault({ action: 'ListServiceDeployments', errorType: 'AccessDeniedException', message: 'not authorized' });
    await h.editSpec(WEB, change);
    h.sim.clearCalls();

    // Act: 12 passes a minute apart; the first applies, the circuit breaker trips and ECS rolls back.
    const passes = [];
    for (let i = 0; i < 12; i++) {
      h.sim.advance(60);
      passes.push(await runtime.run({ holder: `svc-only-${i}` }));
      if (i === 0) await untilFailedThenHeal(h);
    }

    // Assess: one UpdateService for the failed spec hash; ECS runs the old settings again.
    expect(h.sim.calls({ action: 'UpdateService' })).toHaveLength(1);
    expect((await h.describe('apps', 'web'))?.networkConfiguration).toEqual(oldNetwork);
    const failedHash = aValidSpec(change).hash;
    const last = passes.at(-1)?.statuses['apps/web'];
    expect(last).toMatchObject({ phase: 'Degraded', failedSpecHash: failedHash });
    expect(last?.conditions.find((c) => c.type === 'Ready')?.reason).toBe('RolloutFailed');
    if (failing) {
      expect(writes.refused()).toBeGreaterThan(0);
      expect(await h.status(WEB)).toEqual(before);
      // Bounded: the history is read at most once a pass, for the one service that differs (a
      // denied read: up to the SDK's 3 attempts, see lost-status.test.ts).
      expect(h.sim.calls({ action: 'ListServiceDeployments' }).length).toBeLessThanOrEqual(denied ? 36 : 12);
    } else {
      expect(await h.status(WEB)).toMatchObject({ phase: 'Degraded', failedSpecHash: failedHash });
    }
    writes.doc.destroy();
  });

  it('a new spec after the failure (the retry) is applied; settings a person changed by hand are still corrected as drift', async () => {
    // Prepare: a service-only change that failed and was rolled back (status writes work).
    await h.putSpec(aSpecItem());
    await h.converge();
    failNextDeployment(h);
    await h.editSpec(WEB, { subnets: [NEW_SUBNET] });
    h.sim.advance(60);
    await h.runtime.run({ holder: 'first' });
    await untilFailedThenHeal(h);
    for (let i = 0; i < 3; i++) {
      h.sim.advance(60);
      await h.runtime.run({ holder: `after-${i}` });
    }
    expect((await h.status(WEB))?.phase).toBe('Degraded');

    // Act 1: the user edits the spec (another subnet): a retry, applied once, converges.
    const RETRY = 'subnet-0123456789abcdef2';
    await h.editSpec(WEB, { subnets: [RETRY] });
    h.sim.clearCalls();
    await h.converge();
    expect(h.sim.calls({ action: 'UpdateService' })).toHaveLength(1);
    expect((await h.describe('apps', 'web'))?.networkConfiguration?.awsvpcConfiguration?.subnets).toEqual([RETRY]);
    expect((await h.status(WEB))?.phase).toBe('Converged');

    // Act 2: a person moves the service back to the subnet that failed before, and it runs there:
    // that is drift from the spec (the newest deployment of the spec's settings succeeded).
    const ecs = personEcs(h);
    await ecs.send(
      new UpdateServiceCommand({ cluster: 'apps', service: 'web', networkConfiguration: { awsvpcConfiguration: { subnets: [NEW_SUBNET] } } }),
    );
    ecs.destroy();
    h.sim.advance(300);
    h.sim.clearCalls();
    await h.converge();
    const corrections = h.sim.calls({ action: 'UpdateService' });
    expect(corrections).toHaveLength(1);
    expect((await h.describe('apps', 'web'))?.networkConfiguration?.awsvpcConfiguration?.subnets).toEqual([RETRY]);
  });
});

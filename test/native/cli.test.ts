/**
 * `ecsr continue` and `ecsr abort` end to end (the CLI in process, the local stack: simulator and
 * dynalite, passes run here a simulated minute apart): a blue/green deployment waits on a PAUSE
 * hook, `ecsr describe` shows where it stands, `ecsr continue` lets it finish and `ecsr wait`
 * sees it converge; `ecsr abort` rolls it back, the reconciler records the spec as failed and
 * does not apply it again, and `ecsr wait` exits 1 with ECS's reason.
 */
import { ECSClient } from '@aws-sdk/client-ecs';
import { describe, expect, it } from 'vitest';
import { ecsr } from '../support/cli-in-process';
import { spec, useCliStack } from '../cli/harness';
import { TG_BLUE, moveToNative, newestOf } from './support';

const FAST = ['--interval', '200ms'];
const SLOW = 300_000;
const LB = `containerPort: 80\nloadBalancer:\n  targetGroupArn: ${TG_BLUE}\n  containerPort: 80\n`;

describe('ecsr continue and ecsr abort', () => {
  const { stack, aCase } = useCliStack('nd');

  /** A converged blue/green `web` whose next deployment waits on a PAUSE hook, and that deployment started by `ecsr set image`. */
  async function pausedDeployment() {
    const c = await aCase();
    expect((await ecsr(['apply', '-f', c.file('web.yaml', spec(c.cluster, 'web', LB))], { env: c.env })).code).toBe(0);
    const converge = async () => {
      for (let i = 0; i < 15 && (await c.item('web'))?.status?.phase !== 'Converged'; i++) {
        await c.pass();
        stack().sim.clock.advance(60);
      }
      expect((await c.item('web'))?.status?.phase).toBe('Converged');
    };
    await converge();
    const ecs = new ECSClient(stack().ecsClientConfig);
    await moveToNative(ecs, c.cluster, { strategy: 'BLUE_GREEN', bakeTimeInMinutes: 2, lifecycleHooks: [{ targetType: 'PAUSE', lifecycleStages: ['POST_TEST_TRAFFIC_SHIFT'] }] }, (s) => stack().sim.clock.advance(s));
    await converge();
    const updatesBefore = c.writeCalls().filter((x) => x.action === 'UpdateService').length;
    expect((await ecsr(['set', 'image', `${c.cluster}/web`, 'public.ecr.aws/nginx/nginx:1.28'], { env: c.env })).code).toBe(0);
    for (let i = 0; i < 15 && (await c.item('web'))?.status?.deployment?.awaitingHookId === undefined; i++) {
      await c.pass();
      stack().sim.clock.advance(60);
    }
    expect((await c.item('web'))?.status?.deployment).toMatchObject({ strategy: 'BLUE_GREEN', lifecycleStage: 'POST_TEST_TRAFFIC_SHIFT', testTrafficPercent: 100 });
    const updates = () => c.writeCalls().filter((x) => x.action === 'UpdateService').length - updatesBefore;
    return { c, ecs, updates };
  }

  it('continue answers the PAUSE hook: the deployment bakes and ends, and ecsr wait sees it converge', async () => {
    // Prepare
    const { c, ecs, updates } = await pausedDeployment();
    const described = await ecsr(['describe', `${c.cluster}/web`], { env: { ...c.env, COLUMNS: '200' } });

    // Act
    const r = await ecsr(['continue', `${c.cluster}/web`], { env: c.env });
    const stop = c.passLoop();
    const waited = await ecsr(['wait', `${c.cluster}/web`, ...FAST, '--timeout', '120s'], { env: c.env });
    await stop();

    // Assess
    expect(described.stdout).toMatch(/^ {2}Deployment: +BLUE_GREEN at POST_TEST_TRAFFIC_SHIFT, production 0%, test 100%, waiting for ecsr continue \(hook \S+\)/m);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/BLUE_GREEN deployment \S+ \(IN_PROGRESS at POST_TEST_TRAFFIC_SHIFT\) continues \(hook \S+\)/);
    expect(waited.code).toBe(0);
    expect(waited.stdout).toMatch(/BLUE_GREEN at BAKE_TIME, production 100%, test 100%, bake/);
    expect((await newestOf(ecs, c.cluster)).status).toBe('SUCCESSFUL');
    expect(updates()).toBe(1);
    ecs.destroy();
  }, SLOW);

  it('abort rolls the deployment back: its spec is failed, never applied again, and ecsr wait exits 1 with the reason', async () => {
    // Prepare
    const { c, ecs, updates } = await pausedDeployment();

    // Act
    const r = await ecsr(['abort', `${c.cluster}/web`], { env: c.env });
    const stop = c.passLoop();
    const waited = await ecsr(['wait', `${c.cluster}/web`, ...FAST, '--timeout', '120s'], { env: c.env });
    for (let i = 0; i < 5; i++) await c.pass();
    await stop();
    const again = await ecsr(['abort', `${c.cluster}/web`], { env: c.env });

    // Assess
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/rolls back; the reconciler records its spec as failed/);
    expect((await newestOf(ecs, c.cluster)).status).toBe('ROLLBACK_SUCCESSFUL');
    expect(waited.code).toBe(1);
    expect(waited.stderr).toMatch(/StopServiceDeployment/);
    const status = (await c.item('web'))?.status;
    expect(status?.phase).toBe('Degraded');
    expect(status?.conditions.find((x: { type: string }) => x.type === 'Ready')?.reason).toBe('RolloutFailed');
    expect(updates()).toBe(1);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/runs no deployment/);
    ecs.destroy();
  }, SLOW);
});

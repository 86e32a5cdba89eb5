/**
 * ECS's native deployment strategies in the simulator, over HTTP with the AWS SDK: BLUE_GREEN
 * scales green up beside blue and moves test then production traffic on the listener rules;
 * LINEAR and CANARY shift in steps with bake timers; lifecycle hooks (a local function, scripted
 * answers through the control endpoint, an HTTP endpoint, PAUSE answered with
 * ContinueServiceDeployment) run at their stages; a failed hook, an alarm and
 * StopServiceDeployment roll back to blue. Moto does not serve these calls (no native
 * deployments, no ContinueServiceDeployment or StopServiceDeployment).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ContinueServiceDeploymentCommand,
  CreateServiceCommand,
  DescribeServiceDeploymentsCommand,
  ListServiceDeploymentsCommand,
  RegisterTaskDefinitionCommand,
  StopServiceDeploymentCommand,
  UpdateServiceCommand,
  type DeploymentConfiguration,
  type ECSClient,
  type ServiceDeployment,
} from '@aws-sdk/client-ecs';
import { startSimulator, type Simulator } from '../../local/sim';
import { aService, aTaskDefinition, advanceUntil, deploy, describeService, ecsClient, serviceTasks } from './helpers';

const TG_BLUE = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/web-blue/1111111111111111';
const TG_GREEN = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/web-green/2222222222222222';
const PROD_RULE = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener-rule/app/lb/1/2/prod';
const TEST_RULE = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener-rule/app/lb/1/2/test';
const ROLE = 'arn:aws:iam::123456789012:role/ecs-infrastructure';
const HOOK_FN = 'arn:aws:lambda:us-east-1:123456789012:function:check-green';
const LB = {
  targetGroupArn: TG_BLUE,
  containerName: 'web',
  containerPort: 80,
  advancedConfiguration: { alternateTargetGroupArn: TG_GREEN, productionListenerRule: PROD_RULE, testListenerRule: TEST_RULE, roleArn: ROLE },
};

describe('simulator: native deployments', () => {
  let sim: Simulator;
  let ecs: ECSClient;
  beforeAll(async () => {
    sim = await startSimulator({ startTime: new Date('2026-01-01T00:00:00Z') });
    ecs = ecsClient(sim);
  });
  afterAll(async () => {
    ecs.destroy();
    await sim.close();
  });
  beforeEach(() => sim.reset());

  /** A steady service on v1 with `cfg`, then an UpdateService to v2; returns v1, v2 and the new deployment's ARN. */
  async function rollout(cfg: DeploymentConfiguration) {
    const v1 = await deploy(ecs, { svc: { loadBalancers: [LB], deploymentConfiguration: cfg } });
    await advanceUntil(sim, async () => (await describeService(ecs, 'c1', 'web')).deployments?.[0].rolloutState === 'COMPLETED', { what: 'v1 steady' });
    const v2 = (await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition({ image: 'app:2' })))).taskDefinition?.taskDefinitionArn as string;
    await ecs.send(new UpdateServiceCommand({ cluster: 'c1', service: 'web', taskDefinition: v2 }));
    const listed = await ecs.send(new ListServiceDeploymentsCommand({ cluster: 'c1', service: 'web' }));
    return { v1, v2, arn: listed.serviceDeployments?.[0].serviceDeploymentArn as string };
  }
  const describe1 = async (arn: string): Promise<ServiceDeployment> =>
    (await ecs.send(new DescribeServiceDeploymentsCommand({ serviceDeploymentArns: [arn] }))).serviceDeployments?.[0] as ServiceDeployment;
  const productionWeights = () => sim.listenerRules().find((r) => r.ruleArn === PROD_RULE)?.targetGroups.map((t) => t.weight);

  it('BLUE_GREEN: green beside blue, test then production traffic, bake with both, clean-up, target groups swapped', async () => {
    // A local function hook records the traffic it sees after the test and the production shift.
    const weights: { stage: string; test: number; production: number }[] = [];
    sim.setHookTarget(HOOK_FN, (p) => {
      const green = p.executionDetails.targetServiceRevisionArn;
      weights.push({ stage: p.lifecycleStage, test: p.executionDetails.testTrafficWeights[green], production: p.executionDetails.productionTrafficWeights[green] });
      return { hookStatus: 'SUCCEEDED' };
    });
    const hooks = [{ hookTargetArn: HOOK_FN, roleArn: ROLE, lifecycleStages: ['POST_TEST_TRAFFIC_SHIFT' as const, 'POST_PRODUCTION_TRAFFIC_SHIFT' as const] }];
    const { v2, arn } = await rollout({ strategy: 'BLUE_GREEN', bakeTimeInMinutes: 5, lifecycleHooks: hooks });
    const seen = new Set<string>();
    let bothRunning = 0;
    await advanceUntil(
      sim,
      async () => {
        const sd = await describe1(arn);
        seen.add(sd.lifecycleStage as string);
        const tasks = await serviceTasks(ecs, 'c1', 'web');
        if (sd.lifecycleStage === 'BAKE_TIME') bothRunning = Math.max(bothRunning, tasks.filter((t) => t.lastStatus === 'RUNNING').length);
        return sd.status === 'SUCCESSFUL';
      },
      { maxSeconds: 1800, what: 'blue/green SUCCESSFUL' },
    );

    const svc = await describeService(ecs, 'c1', 'web');
    const sd = await describe1(arn);
    expect([...seen]).toEqual(expect.arrayContaining(['SCALE_UP', 'BAKE_TIME', 'CLEAN_UP']));
    expect(bothRunning).toBe(4);
    expect(weights).toEqual([
      { stage: 'POST_TEST_TRAFFIC_SHIFT', test: 100, production: 0 },
      { stage: 'POST_PRODUCTION_TRAFFIC_SHIFT', test: 100, production: 100 },
    ]);
    expect(sd).toMatchObject({ lifecycleStage: 'CLEAN_UP', targetServiceRevision: { requestedProductionTrafficWeight: 100 }, deploymentConfiguration: { strategy: 'BLUE_GREEN', bakeTimeInMinutes: 5 } });
    expect(svc.taskDefinition).toBe(v2);
    // The green target group takes all production traffic and is the primary one from now on.
    expect(sim.listenerRules().find((r) => r.ruleArn === PROD_RULE)?.targetGroups).toEqual([
      { targetGroupArn: TG_GREEN, weight: 100 },
      { targetGroupArn: TG_BLUE, weight: 0 },
    ]);
  });

  it('LINEAR shifts production traffic in steps with a bake between them', async () => {
    const { arn } = await rollout({ strategy: 'LINEAR', linearConfiguration: { stepPercent: 30, stepBakeTimeInMinutes: 2 } });
    const weights: number[] = [];
    await advanceUntil(
      sim,
      async () => {
        const w = (await describe1(arn)).targetServiceRevision?.requestedProductionTrafficWeight ?? 0;
        if (weights.at(-1) !== w) weights.push(w);
        return (await describe1(arn)).status === 'SUCCESSFUL';
      },
      { step: 10, maxSeconds: 1800, what: 'linear SUCCESSFUL' },
    );
    expect(weights).toEqual([0, 30, 60, 90, 100]);
  });

  it('CANARY whose hook fails once at POST_SCALE_UP is rolled back: blue serves again, the reason names the hook', async () => {
    // The hook's answers come through the control endpoint, as a scenario supplies them.
    const res = await fetch(`${sim.endpoint}/_sim/lifecycle-hook`, {
      method: 'POST',
      body: JSON.stringify({ hookTargetArn: HOOK_FN, answers: [{ hookStatus: 'IN_PROGRESS', callBackDelay: 10 }, { hookStatus: 'FAILED' }] }),
    });
    expect(res.status).toBe(200);
    const hooks = [{ targetType: 'AWS_LAMBDA' as const, hookTargetArn: HOOK_FN, roleArn: ROLE, lifecycleStages: ['POST_SCALE_UP' as const] }];
    const { v1, arn } = await rollout({ strategy: 'CANARY', canaryConfiguration: { canaryPercent: 10, canaryBakeTimeInMinutes: 1 }, lifecycleHooks: hooks });
    await advanceUntil(sim, async () => (await describe1(arn)).status === 'ROLLBACK_SUCCESSFUL', { maxSeconds: 900, what: 'rolled back' });

    const sd = await describe1(arn);
    const svc = await describeService(ecs, 'c1', 'web');
    expect(sd.rollback?.reason).toContain(HOOK_FN);
    expect(sd.rollback?.reason).toContain('POST_SCALE_UP');
    expect(sd.rollback?.serviceRevisionArn).toBe(sd.sourceServiceRevisions?.[0].arn);
    expect(svc.taskDefinition).toBe(v1);
    expect(svc.deployments?.map((d) => d.taskDefinition)).toContain(v1);
    expect(productionWeights()).toEqual([100, 0]);
  });

  it('a hook answered by an HTTP endpoint receives the payload; SUCCEEDED lets the deployment go on', async () => {
    const payloads: { lifecycleStage?: string; executionDetails?: { serviceArn?: string } }[] = [];
    const server: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        payloads.push(JSON.parse(body) as (typeof payloads)[number]);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ hookStatus: 'SUCCEEDED' }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      sim.setHookTarget(HOOK_FN, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` });
      const hooks = [{ hookTargetArn: HOOK_FN, roleArn: ROLE, lifecycleStages: ['PRE_SCALE_UP' as const] }];
      const { arn } = await rollout({ strategy: 'BLUE_GREEN', bakeTimeInMinutes: 0, lifecycleHooks: hooks });
      for (let i = 0; i < 400 && (await describe1(arn)).status !== 'SUCCESSFUL'; i++) {
        await new Promise((r) => setTimeout(r, 5));
        sim.advance(5);
      }
      expect((await describe1(arn)).status).toBe('SUCCESSFUL');
      expect(payloads).toHaveLength(1);
      expect(payloads[0]).toMatchObject({ lifecycleStage: 'PRE_SCALE_UP', executionDetails: { serviceArn: expect.stringContaining('service/c1/web') } });
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('a PAUSE hook waits for ContinueServiceDeployment; ROLLBACK rolls back, CONTINUE goes on', async () => {
    const pause = [{ targetType: 'PAUSE' as const, lifecycleStages: ['POST_TEST_TRAFFIC_SHIFT' as const] }];
    const awaiting = async (arn: string) => (await describe1(arn)).lifecycleHookDetails?.find((h) => h.status === 'AWAITING_ACTION');

    const { arn } = await rollout({ strategy: 'BLUE_GREEN', bakeTimeInMinutes: 0, lifecycleHooks: pause });
    await advanceUntil(sim, async () => (await awaiting(arn)) !== undefined, { what: 'paused' });
    sim.advance(3600);
    const hook = await awaiting(arn);
    expect((await describe1(arn)).status).toBe('IN_PROGRESS');
    await ecs.send(new ContinueServiceDeploymentCommand({ serviceDeploymentArn: arn, hookId: hook?.hookId, action: 'CONTINUE' }));
    await advanceUntil(sim, async () => (await describe1(arn)).status === 'SUCCESSFUL', { maxSeconds: 900, what: 'continued' });

    const v3 = (await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition({ image: 'app:3' })))).taskDefinition?.taskDefinitionArn as string;
    await ecs.send(new UpdateServiceCommand({ cluster: 'c1', service: 'web', taskDefinition: v3 }));
    const second = (await ecs.send(new ListServiceDeploymentsCommand({ cluster: 'c1', service: 'web' }))).serviceDeployments?.[0].serviceDeploymentArn as string;
    await advanceUntil(sim, async () => (await awaiting(second)) !== undefined, { what: 'paused again' });
    await ecs.send(new ContinueServiceDeploymentCommand({ serviceDeploymentArn: second, hookId: (await awaiting(second))?.hookId, action: 'ROLLBACK' }));
    await advanceUntil(sim, async () => (await describe1(second)).status === 'ROLLBACK_SUCCESSFUL', { what: 'rolled back' });
    expect((await describeService(ecs, 'c1', 'web')).taskDefinition).not.toBe(v3);
    await expect(ecs.send(new ContinueServiceDeploymentCommand({ serviceDeploymentArn: second, hookId: 'nope' }))).rejects.toMatchObject({ name: 'InvalidParameterException' });
  });

  it('StopServiceDeployment and an alarm in ALARM roll back; a finished deployment cannot be stopped', async () => {
    const { v1, arn } = await rollout({ strategy: 'BLUE_GREEN', bakeTimeInMinutes: 10 });
    await advanceUntil(sim, async () => (await describe1(arn)).lifecycleStage === 'BAKE_TIME', { maxSeconds: 900, what: 'baking' });
    await ecs.send(new StopServiceDeploymentCommand({ serviceDeploymentArn: arn, stopType: 'ROLLBACK' }));
    await advanceUntil(sim, async () => (await describe1(arn)).status === 'ROLLBACK_SUCCESSFUL', { what: 'stopped' });
    expect((await describe1(arn)).rollback?.reason).toContain('StopServiceDeployment');
    expect((await describeService(ecs, 'c1', 'web')).taskDefinition).toBe(v1);
    await expect(ecs.send(new StopServiceDeploymentCommand({ serviceDeploymentArn: arn }))).rejects.toMatchObject({ name: 'ConflictException' });

    await ecs.send(
      new UpdateServiceCommand({
        cluster: 'c1',
        service: 'web',
        taskDefinition: 'web:2',
        deploymentConfiguration: { alarms: { alarmNames: ['web-5xx'], enable: true, rollback: true } },
      }),
    );
    const next = (await ecs.send(new ListServiceDeploymentsCommand({ cluster: 'c1', service: 'web' }))).serviceDeployments?.[0].serviceDeploymentArn as string;
    await advanceUntil(sim, async () => (await describe1(next)).lifecycleStage === 'BAKE_TIME', { maxSeconds: 900, what: 'baking again' });
    sim.setAlarmState('web-5xx', 'ALARM');
    await advanceUntil(sim, async () => (await describe1(next)).status === 'ROLLBACK_SUCCESSFUL', { what: 'alarm rollback' });
    expect(await describe1(next)).toMatchObject({ alarms: { status: 'TRIGGERED', triggeredAlarmNames: ['web-5xx'] }, rollback: { reason: expect.stringContaining('web-5xx') } });
  });

  it('refuses a native strategy without advancedConfiguration, and out-of-range strategy members', async () => {
    await deploy(ecs);
    const create = (over: Parameters<typeof aService>[0]) => ecs.send(new CreateServiceCommand(aService({ serviceName: 'other', taskDefinition: 'web', ...over })));
    await expect(create({ loadBalancers: [{ targetGroupArn: TG_BLUE, containerName: 'web', containerPort: 80 }], deploymentConfiguration: { strategy: 'BLUE_GREEN' } })).rejects.toMatchObject({
      name: 'InvalidParameterException',
      message: expect.stringContaining('advancedConfiguration'),
    });
    await expect(create({ deploymentConfiguration: { strategy: 'CANARY' } })).rejects.toMatchObject({ name: 'InvalidParameterException' });
    await expect(create({ loadBalancers: [LB], deploymentConfiguration: { strategy: 'LINEAR', linearConfiguration: { stepPercent: 2 } } })).rejects.toMatchObject({
      message: expect.stringContaining('stepPercent'),
    });
    await expect(
      create({ loadBalancers: [LB], deploymentConfiguration: { strategy: 'BLUE_GREEN', lifecycleHooks: [{ targetType: 'PAUSE', lifecycleStages: ['PRODUCTION_TRAFFIC_SHIFT'] }] } }),
    ).rejects.toMatchObject({ message: expect.stringContaining('PAUSE') });
    await expect(create({ loadBalancers: [LB], deploymentConfiguration: { strategy: 'BLUE_GREEN', bakeTimeInMinutes: 1 } })).resolves.toBeDefined();
  });
});

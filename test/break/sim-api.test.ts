/**
 * Adversarial review of the ECS simulator's API behaviour (local/sim): requests that fail must
 * change nothing, failure rules must not be able to break the simulator, lists must follow the
 * API reference's order, ARNs the simulator issues must be accepted back, and parallel callers must
 * see one consistent state. Each case here failed before its fix (see docs/HARDENING.md).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  CreateClusterCommand,
  CreateServiceCommand,
  InvalidParameterException,
  ListServicesCommand,
  ListTagsForResourceCommand,
  ListTaskDefinitionsCommand,
  RegisterTaskDefinitionCommand,
  TagResourceCommand,
  UpdateServiceCommand,
  type ECSClient,
} from '@aws-sdk/client-ecs';
import { SimulatedEcs, startSimulator, type Simulator } from '../../local/sim';
import { aService, aTaskDefinition, deploy, describeService, ecsClient } from '../sim/helpers';

const T0 = new Date('2025-01-01T00:00:00Z');

/** `n` tags `prefix0..prefix{n-1}`, value `v`. */
function someTags(n: number, prefix: string): { key: string; value: string }[] {
  return Array.from({ length: n }, (_, i) => ({ key: `${prefix}${i}`, value: 'v' }));
}

describe('simulator under attack: API behaviour', () => {
  let sim: Simulator;
  let ecs: ECSClient;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0, startTime: T0, throttling: false, seed: 11 });
    ecs = ecsClient(sim, { maxAttempts: 1 });
  });
  afterAll(async () => {
    await sim?.close();
  });
  beforeEach(() => sim.reset());

  describe('a refused request changes nothing', () => {
    it.each([
      { case: 'minimumHealthyPercent above 100', deploymentConfiguration: { minimumHealthyPercent: 150 } },
      { case: 'maximumPercent below 100', deploymentConfiguration: { maximumPercent: 50 } },
    ])('UpdateService with desiredCount and $case keeps the old desiredCount', async ({ deploymentConfiguration }) => {
      // Prepare
      await deploy(ecs, { svc: { desiredCount: 2 } });

      // Act
      const update = ecs.send(new UpdateServiceCommand({ cluster: 'c1', service: 'web', desiredCount: 7, deploymentConfiguration }));

      // Assess
      await expect(update).rejects.toBeInstanceOf(InvalidParameterException);
      const svc = await describeService(ecs, 'c1', 'web');
      expect(svc.desiredCount).toBe(2);
      expect(svc.deploymentConfiguration).toMatchObject({ minimumHealthyPercent: 100, maximumPercent: 200 });
    });

    it('TagResource beyond 50 tags is refused and leaves the tags as they were', async () => {
      // Prepare
      const created = await ecs.send(new CreateClusterCommand({ clusterName: 'c1', tags: someTags(45, 'old') }));
      const arn = created.cluster?.clusterArn as string;

      // Act
      const tag = ecs.send(new TagResourceCommand({ resourceArn: arn, tags: [{ key: 'old0', value: 'changed' }, ...someTags(10, 'new')] }));

      // Assess
      await expect(tag).rejects.toThrow('at most 50 tags');
      const after = await ecs.send(new ListTagsForResourceCommand({ resourceArn: arn }));
      expect(after.tags).toHaveLength(45);
      expect(after.tags?.find((t) => t.key === 'old0')?.value).toBe('v');
    });
  });

  describe('failure rules cannot break the simulator', () => {
    it.each([
      { case: 'an unterminated group', match: '/(web/' },
      { case: 'a dangling quantifier', match: '/*web/' },
    ])('refuses a /regular expression/ rule with $case and keeps launching tasks', async ({ match }) => {
      // Prepare
      await deploy(ecs, { svc: { desiredCount: 1 } });
      const before = sim.failureRules();

      // Act
      const set = () => sim.setFailureRules([{ match, mode: 'crash-loop' }], { prepend: true });

      // Assess
      expect(set).toThrow(/regular expression/);
      expect(sim.failureRules()).toEqual(before);
      await ecs.send(new UpdateServiceCommand({ cluster: 'c1', service: 'web', desiredCount: 2 }));
      expect(() => sim.advance(60)).not.toThrow();
      expect((await describeService(ecs, 'c1', 'web')).runningCount).toBe(2);
    });
  });

  describe('ListTaskDefinitions order (API reference: families lexicographically, then revision)', () => {
    it.each([
      { case: 'ASC', sort: 'ASC' as const, expected: ['api:1', 'api:2', 'web:1', 'web:2', 'web-2:1', 'web-2:2'] },
      { case: 'DESC reverses family and revision', sort: 'DESC' as const, expected: ['web-2:2', 'web-2:1', 'web:2', 'web:1', 'api:2', 'api:1'] },
    ])('$case', async ({ sort, expected }) => {
      // Prepare
      for (const family of ['web-2', 'web', 'api']) {
        for (let i = 0; i < 2; i++) await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition({ family })));
      }

      // Act: pages of 4, so that the order must also hold across a nextToken.
      const arns: string[] = [];
      let nextToken: string | undefined;
      do {
        const out = await ecs.send(new ListTaskDefinitionsCommand({ sort, maxResults: 4, nextToken }));
        arns.push(...(out.taskDefinitionArns ?? []));
        nextToken = out.nextToken;
      } while (nextToken);

      // Assess
      expect(arns.map((a) => a.split('/').pop())).toEqual(expected);
    });
  });

  describe('parallel callers', () => {
    it('creates 60 services from parallel requests, lists each once across pages, and answers one service per name', async () => {
      // Prepare
      await ecs.send(new CreateClusterCommand({ clusterName: 'c1', capacityProviders: ['FARGATE', 'FARGATE_SPOT'] }));
      const td = (await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition()))).taskDefinition?.taskDefinitionArn;
      const names = Array.from({ length: 60 }, (_, i) => `svc-${String(i).padStart(2, '0')}`);

      // Act: every name twice at once, with the same clientToken and parameters.
      const created = await Promise.all(
        [...names, ...names].map((serviceName) =>
          ecs.send(new CreateServiceCommand(aService({ serviceName, taskDefinition: td, desiredCount: 0, clientToken: `tok-${serviceName}` }))),
        ),
      );
      const listed: string[] = [];
      let nextToken: string | undefined;
      do {
        const out = await ecs.send(new ListServicesCommand({ cluster: 'c1', maxResults: 7, nextToken }));
        listed.push(...(out.serviceArns ?? []));
        nextToken = out.nextToken;
      } while (nextToken);

      // Assess
      expect(new Set(created.map((c) => c.service?.serviceArn)).size).toBe(60);
      expect(listed.map((a) => a.split('/').pop())).toEqual(names);
    });

    it('keeps paging correctly when services are created and deleted between pages', async () => {
      // Prepare
      await deploy(ecs, { svc: { serviceName: 'b-00', desiredCount: 0 } });
      for (const n of ['b-01', 'b-02', 'b-03', 'b-04', 'b-05']) {
        await ecs.send(new CreateServiceCommand(aService({ serviceName: n, taskDefinition: 'web', desiredCount: 0 })));
      }

      // Act
      const first = await ecs.send(new ListServicesCommand({ cluster: 'c1', maxResults: 3 }));
      sim.call('DeleteService', { cluster: 'c1', service: 'b-02' }); // the last one returned
      await ecs.send(new CreateServiceCommand(aService({ serviceName: 'a-00', taskDefinition: 'web', desiredCount: 0 })));
      await ecs.send(new CreateServiceCommand(aService({ serviceName: 'b-06', taskDefinition: 'web', desiredCount: 0 })));
      const second = await ecs.send(new ListServicesCommand({ cluster: 'c1', maxResults: 3, nextToken: first.nextToken }));
      const third = await ecs.send(new ListServicesCommand({ cluster: 'c1', maxResults: 3, nextToken: second.nextToken }));

      // Assess: no repeats, nothing after the token skipped; a-00 sorts before the token.
      const names = (xs: string[] | undefined) => (xs ?? []).map((a) => a.split('/').pop());
      expect(names(first.serviceArns)).toEqual(['b-00', 'b-01', 'b-02']);
      expect(names(second.serviceArns)).toEqual(['b-03', 'b-04', 'b-05']);
      expect(names(third.serviceArns)).toEqual(['b-06']);
      expect(third.nextToken).toBeUndefined();
    });
  });
});

describe('simulator under attack: held up (guards)', () => {
  it('rolls back to the last COMPLETED deployment, not the first one', () => {
    // Prepare: web:1 completes, web:2 completes, web:3 crash-loops with rollback on.
    const core = new SimulatedEcs({ startTime: T0, throttling: false, seed: 4 });
    const call = (action: string, input: Record<string, unknown>) => core.call(action, input) as Record<string, any>;
    call('CreateCluster', { clusterName: 'c1', capacityProviders: ['FARGATE', 'FARGATE_SPOT'] });
    for (const image of ['nginx:1', 'nginx:2', 'app:crashloop']) call('RegisterTaskDefinition', { ...aTaskDefinition({ image }) });
    call('CreateService', {
      ...aService({ taskDefinition: 'web:1', desiredCount: 4 }),
      deploymentConfiguration: { deploymentCircuitBreaker: { enable: true, rollback: true } },
    });
    core.advance(300);
    call('UpdateService', { cluster: 'c1', service: 'web', taskDefinition: 'web:2' });
    core.advance(300);

    // Act
    call('UpdateService', { cluster: 'c1', service: 'web', taskDefinition: 'web:3' });
    core.advance(900);
    const svc = call('DescribeServices', { cluster: 'c1', services: ['web'] }).services[0];

    // Assess
    expect(svc.taskDefinition.split('/').pop()).toBe('web:2');
    expect(svc.deployments.map((d: { taskDefinition: string; rolloutState: string }) => [d.taskDefinition.split('/').pop(), d.rolloutState])).toEqual([
      ['web:2', 'COMPLETED'],
    ]);
    expect(svc.events.map((e: { message: string }) => e.message)).toContainEqual(expect.stringMatching(/deployment failed: tasks failed to start/));
    core.close();
  });

  it('never hands out an earlier time on a scaled clock, across advances and background ticks', async () => {
    // Prepare
    const core = new SimulatedEcs({ speed: 1000, startTime: T0, throttling: false, seed: 9 });
    call(core, 'CreateCluster', { clusterName: 'c1', capacityProviders: ['FARGATE', 'FARGATE_SPOT'] });
    call(core, 'RegisterTaskDefinition', { ...aTaskDefinition() });
    call(core, 'CreateService', { ...aService({ taskDefinition: 'web', desiredCount: 5 }) });
    const seen: number[] = [];

    // Act: event times and the clock, read between real pauses and jumps.
    for (let i = 0; i < 40; i++) {
      if (i % 5 === 0) core.advance(2);
      await new Promise((r) => setTimeout(r, 2));
      const events = call(core, 'DescribeServices', { cluster: 'c1', services: ['web'] }).services[0].events as { createdAt: Date }[];
      const newest = Math.max(...events.map((e) => e.createdAt.getTime()));
      const now = core.clock.nowMs();
      expect(newest).toBeLessThanOrEqual(now);
      seen.push(now);
    }
    core.close();

    // Assess
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
  });
});

function call(core: SimulatedEcs, action: string, input: Record<string, unknown>): Record<string, any> {
  return core.call(action, input) as Record<string, any>;
}

describe('simulator under attack: the account and Region it is given', () => {
  it.each([
    { case: 'a short account id', opts: { accountId: '42' } },
    { case: 'an account id with letters', opts: { accountId: 'local' } },
    { case: 'a Region name outside AWS', opts: { region: 'local' } },
  ])('accepts back the ARNs it issues with $case', ({ opts }) => {
    // Prepare
    const core = new SimulatedEcs({ startTime: T0, throttling: false, ...opts });
    const call = (action: string, input: Record<string, unknown>) => core.call(action, input) as Record<string, any>;
    const cluster = call('CreateCluster', { clusterName: 'c1', capacityProviders: ['FARGATE', 'FARGATE_SPOT'] }).cluster.clusterArn as string;
    const td = call('RegisterTaskDefinition', { ...aTaskDefinition() }).taskDefinition.taskDefinitionArn as string;

    // Act
    const created = call('CreateService', { ...aService({ cluster, taskDefinition: td }) }).service;
    const described = call('DescribeServices', { cluster, services: [created.serviceArn] });
    const tags = call('ListTagsForResource', { resourceArn: created.serviceArn });

    // Assess
    expect(created.taskDefinition).toBe(td);
    expect(described.services.map((s: { serviceArn: string }) => s.serviceArn)).toEqual([created.serviceArn]);
    expect(described.failures).toEqual([]);
    expect(tags.tags).toEqual([]);
    core.close();
  });
});

/**
 * Adversarial review of the ECS simulator on the wire (AWS JSON 1.1) and of its control endpoint:
 * malformed and mistyped requests must be answered as client errors (never a 500, which the SDK
 * retries, and never a state that breaks later calls), oversized bodies must get an answer, and
 * bad control input must not break the clock. Cases that held up before any fix are marked so.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ECSClient, ListClustersCommand } from '@aws-sdk/client-ecs';
import { ECS_TARGET_PREFIX, startSimulator, type Simulator } from '../../local/sim';
import { aService, aTaskDefinition } from '../sim/helpers';

const T0 = new Date('2025-01-01T00:00:00Z');

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

describe('simulator under attack: the wire', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0, startTime: T0, throttling: false, seed: 3 });
  });
  afterAll(async () => {
    await sim?.close();
  });
  beforeEach(() => sim.reset());

  /** One ECS call with a raw JSON body. */
  async function ecsCall(action: string, body: string): Promise<Answer> {
    const res = await fetch(sim.endpoint, {
      method: 'POST',
      headers: { 'x-amz-target': `${ECS_TARGET_PREFIX}.${action}`, 'content-type': 'application/x-amz-json-1.1' },
      body,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  async function control(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Answer> {
    const res = await fetch(`${sim.endpoint}/_sim/${path}`, { method, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  /** A cluster `c1`, task definition `web:1` and service `web` (1 task), made in process. */
  function seed(): void {
    sim.call('CreateCluster', { clusterName: 'c1', capacityProviders: ['FARGATE', 'FARGATE_SPOT'] });
    sim.call('RegisterTaskDefinition', aTaskDefinition());
    sim.call('CreateService', { ...aService({ taskDefinition: 'web', desiredCount: 1 }) });
  }

  describe('mistyped members are client errors, and leave nothing behind', () => {
    it.each([
      { case: 'DescribeServices with a number among the services', action: 'DescribeServices', input: { cluster: 'c1', services: [1] } },
      { case: 'DescribeServices with null among the services', action: 'DescribeServices', input: { cluster: 'c1', services: [null] } },
      { case: 'DescribeServices with include as a string', action: 'DescribeServices', input: { cluster: 'c1', services: ['web'], include: 5 } },
      { case: 'DescribeTasks with a number among the tasks', action: 'DescribeTasks', input: { cluster: 'c1', tasks: [7] } },
      { case: 'DescribeClusters with clusters as a number', action: 'DescribeClusters', input: { clusters: 5 } },
      { case: 'DescribeClusters with clusters as a string', action: 'DescribeClusters', input: { clusters: 'c1' } },
      { case: 'DescribeTaskDefinition with include as a map', action: 'DescribeTaskDefinition', input: { taskDefinition: 'web', include: {} } },
      { case: 'RegisterTaskDefinition with containerDefinitions as a map', action: 'RegisterTaskDefinition', input: { ...aTaskDefinition(), containerDefinitions: {} } },
      { case: 'RegisterTaskDefinition with a null container', action: 'RegisterTaskDefinition', input: { ...aTaskDefinition(), containerDefinitions: [null] } },
      { case: 'RegisterTaskDefinition with portMappings as a number', action: 'RegisterTaskDefinition', input: { ...aTaskDefinition(), containerDefinitions: [{ name: 'web', image: 'nginx', portMappings: 5 }] } },
      { case: 'RegisterTaskDefinition with requiresCompatibilities as a string', action: 'RegisterTaskDefinition', input: { ...aTaskDefinition(), requiresCompatibilities: 'FARGATE' } },
      { case: 'RunTask with a number as taskDefinition', action: 'RunTask', input: { cluster: 'c1', taskDefinition: 5, launchType: 'FARGATE' } },
      { case: 'UpdateService with loadBalancers as a map', action: 'UpdateService', input: { cluster: 'c1', service: 'web', loadBalancers: {} } },
      { case: 'UpdateService with a null in capacityProviderStrategy', action: 'UpdateService', input: { cluster: 'c1', service: 'web', capacityProviderStrategy: [null], forceNewDeployment: true } },
      { case: 'CreateService with a number as clientToken', action: 'CreateService', input: { ...aService({ serviceName: 'other', taskDefinition: 'web' }), clientToken: 5 } },
      { case: 'CreateService with securityGroups as a number', action: 'CreateService', input: { ...aService({ serviceName: 'other', taskDefinition: 'web' }), networkConfiguration: { awsvpcConfiguration: { subnets: ['subnet-1'], securityGroups: 5 } } } },
    ])('$case', async ({ action, input }) => {
      // Prepare
      seed();

      // Act
      const out = await ecsCall(action, JSON.stringify(input));

      // Assess
      expect(out.status).toBe(400);
      expect(out.body.__type).toMatch(/^(SerializationException|InvalidParameterException|ClientException)$/);
      expect(await ecsCall('ListTaskDefinitionFamilies', '{}')).toMatchObject({ status: 200, body: { families: ['web'] } });
    });

    it('takes a null clientToken as absent (JSON null), not as a server error', async () => {
      // Prepare
      seed();

      // Act
      const out = await ecsCall('CreateService', JSON.stringify({ ...aService({ serviceName: 'other', taskDefinition: 'web' }), clientToken: null }));

      // Assess
      expect(out.status).toBe(200);
      expect((out.body.service as { serviceName: string }).serviceName).toBe('other');
    });

    it.each([
      { case: 'a number', family: 5 },
      { case: 'a list holding a valid name', family: ['api'] },
    ])('refuses a family given as $case, and ListTaskDefinitionFamilies keeps working', async ({ family }) => {
      // Act
      const out = await ecsCall('RegisterTaskDefinition', JSON.stringify({ ...aTaskDefinition(), family }));
      const families = await ecsCall('ListTaskDefinitionFamilies', '{}');

      // Assess
      expect(out.status).toBe(400);
      expect(families).toEqual({ status: 200, body: { families: [] } });
    });

    it.each([
      { case: 'a container name given as a number', containers: [{ name: 5, image: 'nginx' }] },
      { case: 'an image given as a list', containers: [{ name: 'web', image: ['nginx'] }] },
    ])('refuses $case', async ({ containers }) => {
      // Act
      const out = await ecsCall('RegisterTaskDefinition', JSON.stringify({ ...aTaskDefinition(), containerDefinitions: containers }));

      // Assess
      expect(out.status).toBe(400);
      expect(out.body.__type).toBe('ClientException');
    });
  });

  describe('desiredCount beyond what ECS takes', () => {
    it.each([
      { case: 'above the 32-bit integer ECS declares', desiredCount: 2 ** 31 },
      { case: 'astronomically large', desiredCount: 1e300 },
    ])('refuses a desiredCount $case', async ({ desiredCount }) => {
      // Prepare
      seed();

      // Act
      const out = await ecsCall('UpdateService', JSON.stringify({ cluster: 'c1', service: 'web', desiredCount }));

      // Assess
      expect(out).toMatchObject({ status: 400, body: { __type: 'InvalidParameterException' } });
      expect(sim.snapshot().clusters[0].services[0].desiredCount).toBe(1);
    });

    it('launches at most 500 tasks of a service per minute (Fargate "Rate of tasks launched by a service" quota)', async () => {
      // Prepare
      seed();

      // Act
      const out = await ecsCall('UpdateService', JSON.stringify({ cluster: 'c1', service: 'web', desiredCount: 1200 }));
      const first = sim.snapshot().clusters[0].tasks.length;
      sim.advance(60);
      const second = sim.snapshot().clusters[0].tasks.length;
      sim.advance(120);
      const third = sim.snapshot().clusters[0].tasks.length;

      // Assess
      expect(out.status).toBe(200);
      expect(first).toBe(500);
      expect(second).toBe(1000);
      expect(third).toBe(1200);
    });
  });

  describe('bodies', () => {
    it('answers a body above 10 MiB with an error (not a reset connection), and keeps serving', async () => {
      // Prepare
      const body = JSON.stringify({ clusterName: 'x'.repeat(11 * 1024 * 1024) });

      // Act
      const out = await new Promise<{ status?: number; text?: string; error?: string }>((resolve) => {
        const req = request(
          sim.endpoint,
          { method: 'POST', headers: { 'x-amz-target': `${ECS_TARGET_PREFIX}.CreateCluster`, 'content-type': 'application/x-amz-json-1.1' } },
          (res) => {
            let text = '';
            res.on('data', (c: Buffer) => (text += c.toString()));
            res.on('end', () => resolve({ status: res.statusCode, text }));
          },
        );
        req.on('error', (e) => resolve({ error: e.message }));
        req.end(body);
      });
      const ecs = new ECSClient({ endpoint: sim.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
      const after = await ecs.send(new ListClustersCommand({}));

      // Assess
      expect(out.error).toBeUndefined();
      expect(out.status).toBe(413);
      expect(JSON.parse(out.text ?? '{}')).toMatchObject({ __type: 'SerializationException' });
      expect(after.clusterArns).toEqual([]);
    });

    // Held up before any fix: kept as guards.
    it.each([
      { case: 'invalid JSON', body: '{"clusters": [', type: 'SerializationException' },
      { case: 'a JSON list', body: '[]', type: 'SerializationException' },
      { case: 'JSON null', body: 'null', type: 'SerializationException' },
      { case: 'a forged nextToken', body: '{"nextToken": "eyJsIjoieCIsImsiOiJ5In0"}', type: 'InvalidParameterException' },
      { case: 'maxResults as a string', body: '{"maxResults": "5"}', type: 'InvalidParameterException' },
    ])('answers $case with $type', async ({ body, type }) => {
      const out = await ecsCall('ListClusters', body);
      expect(out).toMatchObject({ status: 400, body: { __type: type } });
    });

    it.each([
      { case: 'an unknown action', target: `${ECS_TARGET_PREFIX}.LaunchRockets` },
      { case: 'an inherited property name', target: `${ECS_TARGET_PREFIX}.constructor` },
      { case: 'another service', target: 'DynamoDB_20120810.ListTables' },
    ])('answers $case with UnknownOperationException (held up)', async ({ target }) => {
      const res = await fetch(sim.endpoint, { method: 'POST', headers: { 'x-amz-target': target }, body: '{}' });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { __type: string }).__type).toBe('UnknownOperationException');
    });
  });

  describe('the control endpoint', () => {
    it.each([
      { case: 'beyond the last representable time', seconds: 1e20 },
      { case: 'a hundred million years', seconds: 3.2e15 },
    ])('refuses to advance $case and keeps a working clock', async ({ seconds }) => {
      // Act
      const out = await control('POST', 'advance', { seconds });
      const next = await control('POST', 'advance', { seconds: 60 });
      const created = await ecsCall('CreateCluster', '{"clusterName":"c9"}');

      // Assess
      expect(out).toMatchObject({ status: 400, body: { error: 'InvalidInput' } });
      expect(next).toEqual({ status: 200, body: { now: '2025-01-01T00:01:00.000Z' } });
      expect(created.status).toBe(200);
    });

    it('refuses calls?since= that is not a time', async () => {
      // Prepare
      await ecsCall('ListClusters', '{}');

      // Act
      const bad = await control('GET', 'calls?since=yesterday-ish');
      const good = await control('GET', `calls?since=${encodeURIComponent(T0.toISOString())}`);

      // Assess
      expect(bad).toMatchObject({ status: 400, body: { error: 'InvalidInput' } });
      expect((good.body.calls as unknown[]).length).toBe(1);
    });

    it('refuses an invalid /regular expression/ failure rule with 400 and keeps the rules', async () => {
      // Prepare
      const before = await control('GET', 'failure-rules');

      // Act
      const out = await control('POST', 'failure-rules', { rules: [{ match: '/[unclosed/', mode: 'pull-error' }], prepend: true });
      const after = await control('GET', 'failure-rules');

      // Assess
      expect(out).toMatchObject({ status: 400, body: { error: 'InvalidInput' } });
      expect(String(out.body.message)).toContain('rules.0.match');
      expect(after.body).toEqual(before.body);
    });
  });
});

describe('simulator under attack: a scaled clock', () => {
  it('survives an invalid failure rule sent while its background timer runs', async () => {
    // Prepare
    const sim = await startSimulator({ port: 0, speed: 600, throttling: false, seed: 5 });
    try {
      sim.call('CreateCluster', { clusterName: 'c1', capacityProviders: ['FARGATE', 'FARGATE_SPOT'] });
      sim.call('RegisterTaskDefinition', aTaskDefinition());
      sim.call('CreateService', { ...aService({ taskDefinition: 'web', desiredCount: 2 }) });

      // Act
      const res = await fetch(`${sim.endpoint}/_sim/failure-rules`, {
        method: 'POST',
        body: JSON.stringify({ rules: [{ match: '/(/', mode: 'crash-loop' }], prepend: true }),
      });
      await new Promise((r) => setTimeout(r, 300)); // about 3 virtual minutes of background ticks
      sim.call('UpdateService', { cluster: 'c1', service: 'web', desiredCount: 3 });
      await new Promise((r) => setTimeout(r, 300));
      const svc = (sim.call('DescribeServices', { cluster: 'c1', services: ['web'] }) as { services: { runningCount: number }[] }).services[0];

      // Assess
      expect(res.status).toBe(400);
      expect(svc.runningCount).toBe(3);
    } finally {
      await sim.close();
    }
  });
});

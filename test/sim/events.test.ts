/**
 * The simulator emits ECS's events: the EventBridge envelope and the detail of
 * `ECS Service Action`, `ECS Deployment State Change`, `ECS Task State Change` and
 * `AWS API Call via CloudTrail`, with the same keys and JSON types as the AWS documents' examples
 * kept in test/fixtures/events/ (each with its source URL in the README there), and the caller's
 * identity in CloudTrail events, so the reconciler's own calls can be told from a person's.
 *
 * A story runs against the simulator over HTTP with the real SDK: a service is created and
 * reaches a steady state, a task is stopped by API and one by hand, the service is tagged,
 * untagged, updated, a failing image trips the circuit breaker, and the service is deleted.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  DeleteServiceCommand,
  DescribeServicesCommand,
  ECSClient,
  RegisterTaskDefinitionCommand,
  StopTaskCommand,
  TagResourceCommand,
  UntagResourceCommand,
  UpdateServiceCommand,
} from '@aws-sdk/client-ecs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hintOf } from '../../lambda/core/events';
import { startSimulator, type Simulator } from '../../local/sim';
import { assumedRoleIdentity, type BusEvent } from '../../local/sim/events';
import { accessKeyIdOf } from '../../local/sim/server';
import { aTaskDefinition, advanceUntil, deploy, describeService, serviceTasks } from './helpers';

type Json = Record<string, unknown>;
const fixture = (name: string) => JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'events', name), 'utf8')) as Json;

/** JSON type of a value: `string`, `number`, `boolean`, `null`, `array`, `object`. */
function typeOf(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

/**
 * Where `actual` differs in shape from `expected` (an AWS example): a key of the example that is
 * missing (unless listed in `optional`), a key the example does not have (unless in `extra`), or a
 * key whose JSON type differs. Arrays compare their first elements. Paths are dotted.
 */
function shapeDiff(expected: unknown, actual: unknown, opts: { optional?: readonly string[]; extra?: readonly string[] } = {}, path = ''): string[] {
  const out: string[] = [];
  const te = typeOf(expected);
  const ta = typeOf(actual);
  // A null in an example is a member that may hold anything (CloudTrail's responseElements).
  if (te === 'null' || ta === 'null') return out;
  if (te !== ta) return [`${path || '(root)'}: ${ta}, the example has ${te}`];
  if (te === 'array') {
    const [e] = expected as unknown[];
    const [a] = actual as unknown[];
    if (e !== undefined && a !== undefined) out.push(...shapeDiff(e, a, opts, `${path}[]`));
    return out;
  }
  if (te !== 'object') return out;
  const e = expected as Json;
  const a = actual as Json;
  for (const k of Object.keys(e)) {
    const p = path ? `${path}.${k}` : k;
    if (!(k in a)) {
      if (!opts.optional?.includes(p)) out.push(`${p}: missing`);
      continue;
    }
    out.push(...shapeDiff(e[k], a[k], opts, p));
  }
  for (const k of Object.keys(a)) {
    const p = path ? `${path}.${k}` : k;
    if (!(k in e) && !opts.extra?.includes(p)) out.push(`${p}: not in the example`);
  }
  return out;
}

const ENVELOPE = ['version', 'id', 'detail-type', 'source', 'account', 'time', 'region', 'resources', 'detail'];
const RECONCILER_KEY = 'ASIARECONCILERTEST01';
const RECONCILER_ROLE = 'arn:aws:iam::123456789012:role/reconciler';

let sim: Simulator;
let person: ECSClient;
let reconciler: ECSClient;
const events: BusEvent[] = [];

function ofType(detailType: string, pred: (e: BusEvent) => boolean = () => true): BusEvent[] {
  return events.filter((e) => e['detail-type'] === detailType && pred(e));
}
const apiCalls = (name: string) => ofType('AWS API Call via CloudTrail', (e) => e.detail.eventName === name);

beforeAll(async () => {
  sim = await startSimulator({ seed: 7, startTime: new Date('2026-01-01T00:00:00Z') });
  sim.setCaller(RECONCILER_KEY, {
    identity: assumedRoleIdentity(sim.accountId, 'reconciler', 'pass-1', RECONCILER_KEY),
    userAgent: 'ecs-reconciler',
    sourceIPAddress: '127.0.0.1',
  });
  sim.events.subscribe((e) => events.push(e));
  const client = (accessKeyId: string) =>
    new ECSClient({ region: 'us-east-1', endpoint: sim.endpoint, credentials: { accessKeyId, secretAccessKey: 'x' }, maxAttempts: 1 });
  person = client('AKIAPERSONTEST000001');
  reconciler = client(RECONCILER_KEY);

  // The reconciler creates the service; it reaches a steady state.
  await deploy(reconciler, { svc: { deploymentConfiguration: { deploymentCircuitBreaker: { enable: true, rollback: true } } } });
  await advanceUntil(sim, async () => (await describeService(person, 'c1', 'web')).runningCount === 2, { what: 'web running' });
  await advanceUntil(sim, () => ofType('ECS Service Action').some((e) => e.detail.eventName === 'SERVICE_STEADY_STATE'), { what: 'steady state' });
  const svcArn = (await describeService(person, 'c1', 'web')).serviceArn as string;
  // A person stops a task by API and another by hand (the console), tags and untags the service.
  const [t1, t2] = await serviceTasks(person, 'c1', 'web');
  await person.send(new StopTaskCommand({ cluster: 'c1', task: t1.taskArn, reason: 'by API' }));
  sim.stopTask({ cluster: 'c1', task: t2.taskArn as string, reason: 'by hand' });
  await person.send(new TagResourceCommand({ resourceArn: svcArn, tags: [{ key: 'team', value: 'a' }] }));
  await person.send(new UntagResourceCommand({ resourceArn: svcArn, tagKeys: ['team'] }));
  await person.send(new UpdateServiceCommand({ cluster: 'c1', service: 'web', desiredCount: 3 })).catch(() => undefined);
  // A failing image trips the circuit breaker (pull errors).
  const bad = await person.send(new RegisterTaskDefinitionCommand(aTaskDefinition({ image: 'public.ecr.aws/nginx/nginx:does-not-exist' })));
  await person.send(new UpdateServiceCommand({ cluster: 'c1', service: 'web', taskDefinition: bad.taskDefinition?.taskDefinitionArn }));
  await advanceUntil(sim, () => ofType('ECS Deployment State Change').some((e) => e.detail.eventName === 'SERVICE_DEPLOYMENT_FAILED'), {
    what: 'deployment failed',
    maxSeconds: 1800,
    step: 10,
  });
  // A failed call (unknown service) and the end of the service.
  await person.send(new UpdateServiceCommand({ cluster: 'c1', service: 'nope', desiredCount: 1 })).catch(() => undefined);
  await person.send(new UpdateServiceCommand({ cluster: 'c1', service: 'web', desiredCount: 0 }));
  await person.send(new DeleteServiceCommand({ cluster: 'c1', service: 'web' }));
  await person.send(new DescribeServicesCommand({ cluster: 'c1', services: ['web'] }));
  sim.advance(600); // every task stopped
}, 120_000);

afterAll(async () => {
  person?.destroy();
  reconciler?.destroy();
  await sim?.close();
});

describe('the envelope', () => {
  it('every event has the EventBridge envelope of the AWS examples, source aws.ecs, the simulator account and Region', () => {
    expect(events.length).toBeGreaterThan(20);
    const example = fixture('ecs-service-action.json');
    for (const e of events) {
      expect(Object.keys(e).sort()).toEqual([...ENVELOPE].sort());
      expect(shapeDiff({ ...example, detail: {} }, { ...e, detail: {} })).toEqual([]);
      expect(e).toMatchObject({ version: '0', source: 'aws.ecs', account: sim.accountId, region: sim.region });
      expect(e.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    }
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
  });
});

describe('ECS events: the keys and types of the AWS examples', () => {
  it('ECS Service Action: SERVICE_STEADY_STATE like the document, the service ARN in resources', () => {
    const [steady] = ofType('ECS Service Action', (e) => e.detail.eventName === 'SERVICE_STEADY_STATE');
    expect(shapeDiff(fixture('ecs-service-action.json'), steady)).toEqual([]);
    expect(steady.resources).toEqual([`arn:aws:ecs:us-east-1:123456789012:service/c1/web`]);
    expect(steady.detail).toMatchObject({ eventType: 'INFO', clusterArn: 'arn:aws:ecs:us-east-1:123456789012:cluster/c1' });
  });

  it('ECS Service Action: SERVICE_TASK_START_IMPAIRED (WARN) when tasks keep failing', () => {
    const impaired = ofType('ECS Service Action', (e) => e.detail.eventName === 'SERVICE_TASK_START_IMPAIRED');
    expect(impaired.length).toBeGreaterThan(0);
    expect(shapeDiff(fixture('ecs-service-action.json'), impaired[0])).toEqual([]);
    expect(impaired[0].detail.eventType).toBe('WARN');
  });

  it('ECS Deployment State Change: in progress, completed and failed, with deploymentId and reason', () => {
    const names = ofType('ECS Deployment State Change').map((e) => e.detail.eventName);
    expect(names).toEqual(expect.arrayContaining(['SERVICE_DEPLOYMENT_IN_PROGRESS', 'SERVICE_DEPLOYMENT_COMPLETED', 'SERVICE_DEPLOYMENT_FAILED']));
    for (const e of ofType('ECS Deployment State Change')) {
      expect(shapeDiff(fixture('ecs-deployment-state-change.json'), e)).toEqual([]);
      expect(e.detail.deploymentId).toMatch(/^ecs-svc\/\d{19}$/);
    }
    const failed = ofType('ECS Deployment State Change', (e) => e.detail.eventName === 'SERVICE_DEPLOYMENT_FAILED')[0];
    expect(failed.detail).toMatchObject({ eventType: 'ERROR', reason: expect.stringContaining('circuit breaker') });
  });

  it('ECS Task State Change: every transition of a task, the STOPPED one like the document (group service:NAME, stopCode, stoppedReason)', () => {
    const stopped = ofType('ECS Task State Change', (e) => e.detail.lastStatus === 'STOPPED' && e.detail.stoppedReason === 'by API');
    expect(stopped).toHaveLength(1);
    // Fields the document's Fargate example has and a task of this story need not: an exit code
    // (the container was stopped, it did not exit on its own).
    expect(shapeDiff(fixture('ecs-task-state-change-stopped.json'), stopped[0], {
      optional: ['detail.containers[].exitCode'],
      extra: [
        'detail.capacityProviderName',
        'detail.enableExecuteCommand',
        'detail.ephemeralStorage',
        'detail.healthStatus',
        'detail.platformFamily',
        'detail.containers[].runtimeId',
        'detail.containers[].networkBindings',
        'detail.containers[].networkInterfaces',
        'detail.containers[].healthStatus',
        'detail.containers[].memory',
        'detail.overrides.inferenceAcceleratorOverrides',
      ],
    })).toEqual([]);
    expect(stopped[0].detail).toMatchObject({ group: 'service:web', stopCode: 'UserInitiated', desiredStatus: 'STOPPED', launchType: 'FARGATE' });
    // Every status a task went through, in order, with its version growing.
    const arn = stopped[0].resources[0];
    const mine = ofType('ECS Task State Change', (e) => e.resources[0] === arn);
    expect(mine.map((e) => e.detail.lastStatus)).toEqual(['PROVISIONING', 'PENDING', 'ACTIVATING', 'RUNNING', 'DEACTIVATING', 'STOPPING', 'DEPROVISIONING', 'STOPPED']);
    const versions = mine.map((e) => e.detail.version as number);
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
  });
});

describe('CloudTrail events of ECS writes', () => {
  const cases = [
    { name: 'CreateService', file: 'cloudtrail-create-service.json' },
    { name: 'UpdateService', file: 'cloudtrail-update-service.json' },
    { name: 'DeleteService', file: 'cloudtrail-delete-service.json' },
    { name: 'TagResource', file: 'cloudtrail-tag-resource.json' },
    { name: 'UntagResource', file: 'cloudtrail-untag-resource.json' },
    { name: 'StopTask', file: 'cloudtrail-stop-task.json' },
    { name: 'RegisterTaskDefinition', file: 'cloudtrail-register-task-definition.json' },
  ];

  it.each(cases)('$name: the keys and types of the example (request and response as ECS has them)', ({ name, file }) => {
    const [e] = apiCalls(name);
    expect(e, `no ${name} event`).toBeDefined();
    const example = fixture(file);
    const detail = example.detail as Json;
    // The envelope and CloudTrail's own members; the request and response are compared at their
    // top level (their members are the ECS API's, which differ per call).
    // The caller's identity is compared on its own below (an IAM user has no session context).
    const top = (d: Json) => ({ ...d, requestParameters: {}, responseElements: {}, userIdentity: {} });
    expect(shapeDiff({ ...example, detail: top(detail) }, { ...e, detail: top(e.detail) }, { optional: ['detail.tlsDetails'] })).toEqual([]);
    expect(typeOf(e.detail.requestParameters)).toBe('object');
    expect(e.detail).toMatchObject({ eventSource: 'ecs.amazonaws.com', eventName: name, awsRegion: sim.region, readOnly: false, eventType: 'AwsApiCall' });
    // What the reconciler reads from the example, it finds here too.
    for (const key of Object.keys(detail.requestParameters as Json)) {
      if (['cluster', 'service', 'serviceName', 'resourceArn', 'family', 'task'].includes(key)) expect(e.detail.requestParameters).toHaveProperty(key);
    }
  });

  it('StopTask by a person: the response names the task group (service:NAME), which the reconciler reads', () => {
    const [e] = apiCalls('StopTask');
    expect((e.detail.responseElements as Json).task).toMatchObject({ group: 'service:web', stopCode: 'UserInitiated' });
  });

  it("the caller's identity: the reconciler's key is its role session (sessionIssuer.arn), another key an IAM user, a hand edit the console role", () => {
    const [create] = apiCalls('CreateService');
    expect(create.detail.userIdentity).toMatchObject({ type: 'AssumedRole', arn: 'arn:aws:sts::123456789012:assumed-role/reconciler/pass-1', sessionContext: { sessionIssuer: { arn: RECONCILER_ROLE } } });
    expect(shapeDiff((fixture('cloudtrail-update-service.json').detail as Json).userIdentity, create.detail.userIdentity)).toEqual([]);
    const [tag] = apiCalls('TagResource');
    expect(tag.detail.userIdentity).toMatchObject({ type: 'IAMUser', arn: 'arn:aws:iam::123456789012:user/AKIAPERSONTEST000001', accessKeyId: 'AKIAPERSONTEST000001' });
    const byHand = apiCalls('StopTask').find((e) => (e.detail.requestParameters as Json).reason === 'by hand');
    expect(byHand?.detail.userIdentity).toMatchObject({ type: 'AssumedRole', sessionContext: { sessionIssuer: { arn: 'arn:aws:iam::123456789012:role/Admin' } } });
    expect(byHand?.detail.userAgent).toBe('console.amazonaws.com');
  });

  it('a failed write is recorded with errorCode and errorMessage; reads are never delivered', () => {
    const failed = apiCalls('UpdateService').filter((e) => e.detail.errorCode !== undefined);
    expect(failed.map((e) => e.detail.errorCode)).toContain('ServiceNotFoundException');
    expect(failed.every((e) => e.detail.responseElements === null && typeof e.detail.errorMessage === 'string')).toBe(true);
    expect(ofType('AWS API Call via CloudTrail', (e) => /^(List|Describe|Get)/.test(String(e.detail.eventName)))).toEqual([]);
  });

  it('the SigV4 Authorization header names the access key', () => {
    expect(accessKeyIdOf('AWS4-HMAC-SHA256 Credential=AKIAEXAMPLE/20260101/us-east-1/ecs/aws4_request, SignedHeaders=host, Signature=abc')).toBe('AKIAEXAMPLE');
    expect(accessKeyIdOf(undefined)).toBeUndefined();
  });
});

describe('the reconciler reads them (lambda/core/events.ts)', () => {
  it('service actions, deployment changes, stopped service tasks and writes by others name the service; its own writes are ignored', () => {
    const hint = (e: BusEvent) => hintOf(JSON.stringify(e), { ignorePrincipals: [RECONCILER_ROLE] });
    const key = { cluster: 'c1', service: 'web' };
    expect(hint(ofType('ECS Service Action')[0])).toMatchObject({ kind: 'service', key });
    expect(hint(ofType('ECS Deployment State Change')[0])).toMatchObject({ kind: 'service', key });
    expect(hint(ofType('ECS Task State Change', (e) => e.detail.lastStatus === 'STOPPED')[0])).toMatchObject({ kind: 'service', key });
    for (const name of ['UpdateService', 'DeleteService', 'TagResource', 'UntagResource', 'StopTask']) {
      expect(hint(apiCalls(name).find((e) => e.detail.errorCode === undefined) as BusEvent), name).toMatchObject({ kind: 'service', key });
    }
    expect(hint(apiCalls('RegisterTaskDefinition').at(-1) as BusEvent)).toMatchObject({ kind: 'family', family: 'web' });
    expect(hint(apiCalls('CreateService')[0])).toMatchObject({ kind: 'ignored', why: expect.stringContaining('reconciler itself') });
  });
});

describe('cost', () => {
  it('without a subscriber no event is built, and the story runs the same (same seed, same task ids)', async () => {
    const run = async (listen: boolean) => {
      const s = await startSimulator({ seed: 3, startTime: new Date('2026-01-01T00:00:00Z') });
      const seen: BusEvent[] = [];
      if (listen) s.events.subscribe((e) => seen.push(e));
      const ecs = new ECSClient({ region: 'us-east-1', endpoint: s.endpoint, credentials: { accessKeyId: 'k', secretAccessKey: 'x' } });
      try {
        await deploy(ecs);
        s.advance(120);
        return { seen: seen.length, tasks: (await serviceTasks(ecs, 'c1', 'web')).map((t) => t.taskArn).sort() };
      } finally {
        ecs.destroy();
        await s.close();
      }
    };
    const quiet = await run(false);
    const loud = await run(true);
    expect(quiet.seen).toBe(0);
    expect(loud.seen).toBeGreaterThan(0);
    expect(loud.tasks).toEqual(quiet.tasks);
  });
});

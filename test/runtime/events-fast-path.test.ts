/**
 * The events fast path (ECS's own events): the Lambda handler, configured only by
 * environment variables, gets batches of the second queue the construct's ECS event rules feed
 * (as Lambda's SQS event source mapping hands them over) and runs a pass restricted to the
 * services they name, so the status item shows what ECS did within seconds, not at the next
 * scheduled pass. Everything runs on loopback: the ECS simulator emits the events, the local bus
 * applies the construct's rules into the local SQS queues, dynalite holds the specs.
 */
import type { SQSRecord } from 'aws-lambda';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { CreateServiceCommand, ECSClient, RegisterTaskDefinitionCommand } from '@aws-sdk/client-ecs';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { PassSummary } from '../../lambda/core/pass';
import { routeEvents } from '../../lambda/core/event-routing';
import type { ServiceStatus } from '../../lambda/core/types';
import { LOCAL_EVENTS_FAST_QUEUE, LOCAL_RECONCILER_CREDENTIALS, LOCAL_VPC, localReconcilerEnv, startLocalStack, type LocalStack } from '../../local/stack';
import { aLambdaContext, aSpecItem, importHandler, type HandlerModule } from './support';

const WEB = { cluster: 'apps', service: 'web' };

let stack: LocalStack;
let handler: HandlerModule['handler'];
/** Every event the simulator put on the bus. */
const bus: string[] = [];

/** The fast path queue's messages as one event source mapping batch (`Records[]`, `aws:sqs`). */
function fastPathBatch(): { Records: SQSRecord[] } | undefined {
  const sqs = stack.events!.sqs;
  const records: SQSRecord[] = [];
  for (;;) {
    const got = sqs.call('ReceiveMessage', { QueueUrl: stack.events!.fastPathQueueUrl, MaxNumberOfMessages: 10 }) as {
      Messages?: { MessageId: string; ReceiptHandle: string; Body: string; MD5OfBody: string }[];
    };
    if (!got.Messages) break;
    for (const m of got.Messages) {
      records.push({
        messageId: m.MessageId,
        receiptHandle: m.ReceiptHandle,
        body: m.Body,
        attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 'events.amazonaws.com', ApproximateFirstReceiveTimestamp: '0' },
        messageAttributes: {},
        md5OfBody: m.MD5OfBody,
        eventSource: 'aws:sqs',
        eventSourceARN: `arn:aws:sqs:${stack.region}:${stack.sim.accountId}:${LOCAL_EVENTS_FAST_QUEUE}`,
        awsRegion: stack.region,
      });
    }
  }
  if (records.length === 0) return undefined;
  // The mapping deletes a batch the function returned from without an error.
  for (const r of records) sqs.call('DeleteMessage', { QueueUrl: stack.events!.fastPathQueueUrl, ReceiptHandle: r.receiptHandle });
  return { Records: records };
}

/** Runs the handler on the fast path queue's messages now, as the event source mapping would. */
async function deliverFastPath(): Promise<(PassSummary & { ignored?: unknown }) | undefined> {
  const batch = fastPathBatch();
  return batch ? ((await handler(batch, aLambdaContext(50_000, `fast-${Date.now()}`))) as PassSummary) : undefined;
}

async function statusOf(key = WEB): Promise<ServiceStatus | undefined> {
  const out = await stack.doc.send(new GetCommand({ TableName: stack.table, Key: key, ConsistentRead: true }));
  return out.Item?.status as ServiceStatus | undefined;
}

/** What one event names when it is this account's (the handler's own routing, outside fan-out mode). */
const routeEventsOf = (body: string) =>
  routeEvents([body], [{ name: 'default', clusters: [], source: 'implicit' }], { account: stack.sim.accountId, region: stack.region }).byTarget.get('default') ?? [];

const scheduledPass = () => handler({ source: 'aws.events', 'detail-type': 'Scheduled Event' }, aLambdaContext(50_000, `sched-${Date.now()}`));

beforeAll(async () => {
  stack = await startLocalStack({ events: true, clusters: ['apps'], throttling: false });
  stack.sim.events.subscribe((e) => bus.push(JSON.stringify(e)));
  await stack.doc.send(new PutCommand({ TableName: stack.table, Item: aSpecItem({ desiredCount: 2, subnets: [LOCAL_VPC.subnets[0]], securityGroups: [LOCAL_VPC.securityGroups[0]], deployment: { circuitBreaker: { enable: true, rollback: false } } }) }));
  ({ handler } = await importHandler({
    ...localReconcilerEnv(stack),
    ...stack.env,
    // The Lambda's own role: the simulator records its writes as the reconciler role's session.
    AWS_ACCESS_KEY_ID: LOCAL_RECONCILER_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_RECONCILER_CREDENTIALS.secretAccessKey,
    POWERTOOLS_DEV: '',
    POWERTOOLS_LOG_LEVEL: 'ERROR',
    POWERTOOLS_METRICS_DISABLED: 'true',
  }));
  // The service is created by a scheduled pass and runs.
  stack.events!.heartbeat(stack.sim.clock.now());
  await scheduledPass();
  stack.sim.advance(180);
  await deliverFastPath();
  stack.events!.heartbeat(stack.sim.clock.now());
  await scheduledPass();
}, 120_000);

afterEach(() => {
  vi.clearAllMocks();
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await stack?.close();
});

describe('the events fast path through the handler', () => {
  it('the service runs and is Converged before the disturbances', async () => {
    expect(await statusOf()).toMatchObject({ phase: 'Converged', runningCount: 2, desiredCount: 2 });
  });

  it("the reconciler's own writes are not hints: a batch of only them runs no pass", async () => {
    // Prepare: the CloudTrail events of the reconciler's own writes (CreateService...), as delivered.
    const own = bus.filter((b) => b.includes('AWS API Call via CloudTrail') && b.includes('assumed-role/ecsr-local-reconciler/'));
    expect(own.length).toBeGreaterThan(0);
    const batch = { Records: own.map((body, i) => ({ messageId: String(i), receiptHandle: `h${i}`, body, eventSource: 'aws:sqs' }) as SQSRecord) };

    // Act
    const out = await handler(batch, aLambdaContext(50_000, 'own-writes'));

    // Assess
    expect(own.map((b) => (JSON.parse(b) as { detail: { eventName: string } }).detail.eventName)).toEqual(expect.arrayContaining(['RegisterTaskDefinition', 'CreateService']));
    expect(out).toEqual({ outcome: 'nothing-to-reconcile', ignored: { events: own.length, families: 0 } });
  });

  it('a hand edit seen through CloudTrail (desiredCount 5 in the console) is corrected and shown within seconds, no simulated time passing', async () => {
    // Prepare
    const before = stack.sim.clock.nowMs();
    stack.sim.setDesiredCount({ cluster: 'apps', service: 'web', desiredCount: 5 });

    // Act
    const summary = await deliverFastPath();

    // Assess
    expect(stack.sim.clock.nowMs()).toBe(before);
    expect(summary?.outcome).toBe('completed');
    expect(summary?.actions.map((a) => [a.type, a.kind, a.outcome])).toEqual([['UpdateService', 'drift', 'applied']]);
    const status = await statusOf();
    expect(status?.drift).toEqual(['desiredCount 5 -> 2']);
    expect(stack.sim.snapshot().clusters[0].services.find((s) => s.name === 'web')?.desiredCount).toBe(2);
  });

  it("an event of another account or Region naming our service's name is dropped and counted, no pass runs", async () => {
    // Prepare: the simulator's own event of apps/web, as if it came from another account, and from another Region
    const mine = JSON.stringify({
      version: '0',
      id: 'a1b2',
      'detail-type': 'ECS Service Action',
      source: 'aws.ecs',
      account: stack.sim.accountId,
      time: '2026-12-02T08:00:00Z',
      region: stack.region,
      resources: [`arn:aws:ecs:${stack.region}:${stack.sim.accountId}:service/apps/web`],
      detail: { eventType: 'INFO', eventName: 'SERVICE_STEADY_STATE', clusterArn: `arn:aws:ecs:${stack.region}:${stack.sim.accountId}:cluster/apps` },
    });
    const as = (account: string, region: string) => JSON.stringify({ ...(JSON.parse(mine) as object), account, region });
    const batch = { Records: [as('999999999999', stack.region), as(stack.sim.accountId, 'eu-central-1')].map((body, i) => ({ messageId: String(i), receiptHandle: `x${i}`, body, eventSource: 'aws:sqs' }) as SQSRecord) };
    stack.sim.clearCalls();

    // Act
    const out = await handler(batch, aLambdaContext(50_000, 'foreign'));

    // Assess: the same batch from this account would name apps/web; from elsewhere it names nothing
    expect(routeEventsOf(mine)).toEqual([WEB]);
    expect(out).toEqual({ outcome: 'nothing-to-reconcile', ignored: { events: 2, families: 0 } });
    expect(stack.sim.calls({ action: 'DescribeServices' })).toEqual([]);
  });

  it("someone else's service named by events is not read and starts no pass (only services with a spec)", async () => {
    // Prepare: a person creates a service the reconciler has no spec for.
    const person = new ECSClient({ ...stack.ecsClientConfig, maxAttempts: 1 });
    const td = await person.send(
      new RegisterTaskDefinitionCommand({ family: 'theirs', networkMode: 'awsvpc', requiresCompatibilities: ['FARGATE'], cpu: '256', memory: '512', containerDefinitions: [{ name: 'c', image: 'public.ecr.aws/nginx/nginx:1.27' }] }),
    );
    await person.send(
      new CreateServiceCommand({
        cluster: 'apps',
        serviceName: 'theirs',
        taskDefinition: td.taskDefinition?.taskDefinitionArn,
        desiredCount: 1,
        launchType: 'FARGATE',
        networkConfiguration: { awsvpcConfiguration: { subnets: [LOCAL_VPC.subnets[0]] } },
      }),
    );
    person.destroy();
    stack.sim.clearCalls();

    // Act
    const summary = await deliverFastPath();

    // Assess: no pass ran (no spec item for `theirs`: no lease, no Scan) and nothing of `theirs` was read.
    expect(summary).toMatchObject({ outcome: 'nothing-to-reconcile' });
    expect(summary?.counts?.servicesRead ?? 0).toBe(0);
    expect(stack.sim.calls({ action: 'DescribeServices' })).toEqual([]);
  });

  it('a failed deployment (the circuit breaker) shows in the status within seconds of ECS saying so', async () => {
    // Prepare: the spec asks for an image that cannot be pulled; the scheduled pass rolls it out.
    await stack.doc.send(
      new UpdateCommand({ TableName: stack.table, Key: WEB, UpdateExpression: 'SET image = :i', ExpressionAttributeValues: { ':i': 'public.ecr.aws/nginx/nginx:does-not-exist' } }),
    );
    stack.events!.heartbeat(stack.sim.clock.now());
    const rollout = await scheduledPass();
    expect(rollout.actions.map((a) => [a.type, a.kind])).toContainEqual(['UpdateService', 'rollout']);
    fastPathBatch(); // the rollout's own events so far
    // ECS works on it until the circuit breaker trips.
    const failed = () => stack.events!.sqs.bodies(LOCAL_EVENTS_FAST_QUEUE).some((b) => b.includes('SERVICE_DEPLOYMENT_FAILED'));
    for (let i = 0; i < 120 && !failed(); i++) stack.sim.advance(10);
    expect(failed()).toBe(true);
    expect((await statusOf())?.failedSpecHash).toBeUndefined();

    // Act
    const summary = await deliverFastPath();

    // Assess
    expect(summary?.outcome).toBe('completed');
    const status = await statusOf();
    expect(status?.phase).toBe('Degraded');
    // ECS's words: the deployment failed (the service event), or the stopped task's pull error.
    expect(status?.reason).toMatch(/deployment failed|CannotPullContainerError/);
    expect(status?.conditions).toContainEqual(expect.objectContaining({ type: 'Ready', status: 'False', reason: 'RolloutFailed' }));
    expect(status?.failedSpecHash).toBe(status?.specHash);
  });
});

/**
 * The Lambda handler in process, configured only through environment variables set before the
 * module is imported: the SDK's standard endpoint variables point it at the simulator and dynalite.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Context } from 'aws-lambda';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { startSimulator, type Simulator } from '../../local/sim';
import { startEmbeddedDynamoDb, type EmbeddedDynamoDb } from '../../local/embedded-dynamodb';
import { ConfigError, ENV } from '../../lambda/config';
import type { PassSummary } from '../../lambda/core/pass';
import { aSpecItem, createSpecsTable, isEcsWrite, localDoc } from './support';

function aContext(remainingMs: number, requestId = 'req-1'): Context {
  return {
    awsRequestId: requestId,
    functionName: 'ecs-reconciler',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:ecs-reconciler',
    memoryLimitInMB: '256',
    logGroupName: '/aws/lambda/ecs-reconciler',
    logStreamName: 'stream',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => remainingMs,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

type HandlerModule = { handler: (event: unknown, context: Context) => Promise<PassSummary> };

async function importHandler(env: Record<string, string | undefined>): Promise<HandlerModule> {
  vi.resetModules();
  for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
  return (await import('../../lambda/handler')) as HandlerModule;
}

/** Lines written to stdout/stderr while `fn` runs (Powertools' EMF and JSON logs). */
async function capture<T>(fn: () => Promise<T>): Promise<{ result: T; lines: string[] }> {
  const lines: string[] = [];
  const record = (chunk: string | Uint8Array) => {
    lines.push(...String(chunk).split('\n').filter((l) => l.trim() !== ''));
    return true;
  };
  const spies = [vi.spyOn(process.stdout, 'write').mockImplementation(record), vi.spyOn(process.stderr, 'write').mockImplementation(record)];
  try {
    return { result: await fn(), lines };
  } finally {
    spies.forEach((s) => s.mockRestore());
  }
}

describe('lambda/handler', () => {
  let sim: Simulator;
  let db: EmbeddedDynamoDb;
  let env: Record<string, string>;

  beforeAll(async () => {
    sim = await startSimulator({ clusters: ['apps'] });
    db = await startEmbeddedDynamoDb();
    await createSpecsTable(db.endpoint, 'handler-specs');
    const doc = localDoc(db.endpoint);
    await doc.send(new PutCommand({ TableName: 'handler-specs', Item: aSpecItem({ service: 'web' }) }));
    doc.destroy();
    env = {
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_ENDPOINT_URL_ECS: sim.endpoint,
      AWS_ENDPOINT_URL_DYNAMODB: db.endpoint,
      POWERTOOLS_DEV: '',
      [ENV.specsTable]: 'handler-specs',
      [ENV.ownerId]: 'handler-test',
      [ENV.metricsNamespace]: 'HandlerTest',
    };
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });
  afterAll(async () => {
    await sim?.close();
    await db?.stop();
  });

  it('runs one pass against the endpoints from the environment and returns a JSON-safe summary', async () => {
    // Prepare
    const { handler } = await importHandler(env);

    // Act
    const { result: summary, lines } = await capture(() => handler({ source: 'aws.events' }, aContext(60_000, 'req-1')));

    // Assess
    expect(summary.outcome).toBe('completed');
    expect(summary.holder).toBe('req-1');
    expect(summary.actions.map((a) => [a.type, a.outcome])).toEqual([
      ['RegisterTaskDefinition', 'applied'],
      ['CreateService', 'applied'],
    ]);
    expect(JSON.parse(JSON.stringify(summary))).toEqual(summary);
    expect(sim.calls({ action: 'CreateService' })).toHaveLength(1);
    const json = lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const emf = json.filter((j) => j._aws !== undefined);
    expect(emf.some((j) => j.PassSucceeded === 1)).toBe(true);
    expect(emf.find((j) => j.TaskLag !== undefined)).toMatchObject({ Cluster: 'apps', Service: 'web', TaskLag: 2 });
    expect(json.find((j) => j.message === 'pass completed')).toMatchObject({ function_request_id: 'req-1' });
  });

  it('starts no action when less than the reserve of invocation time is left', async () => {
    // Prepare: a second spec to create, 5 s left.
    const doc = localDoc(db.endpoint);
    await doc.send(new PutCommand({ TableName: 'handler-specs', Item: aSpecItem({ service: 'late' }) }));
    doc.destroy();
    const { handler } = await importHandler(env);
    sim.clearCalls();

    // Act
    const { result: summary } = await capture(() => handler({}, aContext(5_000, 'req-2')));

    // Assess
    expect(summary.outcome).toBe('completed');
    expect(summary.counts.actionsPlanned).toBeGreaterThan(0);
    expect(summary.counts.actionsSkipped).toBe(summary.counts.actionsPlanned);
    expect(sim.calls().filter((c) => isEcsWrite(c.action))).toEqual([]);
  });

  it.each([
    { case: 'table missing', change: { [ENV.specsTable]: undefined }, variable: ENV.specsTable },
    { case: 'budget above 1', change: { [ENV.apiBudgetFraction]: '2' }, variable: ENV.apiBudgetFraction },
    { case: 'delete limit not a number', change: { [ENV.maxDeletesPerPass]: 'many' }, variable: ENV.maxDeletesPerPass },
  ])('fails at cold start naming the bad variable: $case', async ({ change, variable }) => {
    let err: unknown;
    try {
      await importHandler({ ...env, ...change });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).name).toBe('ConfigError');
    expect((err as ConfigError).variables).toEqual([variable]);
    expect((err as Error).message).toContain(variable);
  });
});

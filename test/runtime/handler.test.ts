/**
 * The Lambda handler in process, configured only through environment variables set before the
 * module is imported: the SDK's standard endpoint variables point it at the simulator and dynalite.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { startSimulator, type Simulator } from '../../local/sim';
import { startEmbeddedDynamoDb, type EmbeddedDynamoDb } from '../../local/embedded-dynamodb';
import { ConfigError, ENV } from '../../lambda/config';
import { aLambdaContext, aSpecItem, aStreamRecord, createSpecsTable, importHandler, isEcsWrite, localDoc, localHandlerEnv, type HandlerModule } from './support';

type HandlerModuleWithTracer = HandlerModule & { tracer: Tracer };

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
    env = localHandlerEnv({ ecs: sim.endpoint, dynamodb: db.endpoint }, 'handler-specs', 'handler-test', {
      [ENV.metricsNamespace]: 'HandlerTest',
    });
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
    const { result: summary, lines } = await capture(() => handler({ source: 'aws.events' }, aLambdaContext(60_000, 'req-1')));

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
    const { result: summary } = await capture(() => handler({}, aLambdaContext(5_000, 'req-2')));

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

  it('with tracing on (POWERTOOLS_TRACE_ENABLED=true, as the construct deploys it), runs outside Lambda without an X-Ray daemon', async () => {
    // Prepare: nothing listens for X-Ray here; Powertools turns the Tracer off outside Lambda.
    const mod = (await importHandler({ ...env, POWERTOOLS_TRACE_ENABLED: 'true' })) as HandlerModuleWithTracer;
    // Act
    const { result: summary } = await capture(() => mod.handler({}, aLambdaContext(60_000, 'req-traced')));
    // Assess
    expect(summary.outcome).toBe('completed');
    expect(mod.tracer.isTracingEnabled()).toBe(false);
  });


  it('a stream batch runs the fast path on the services it names; a status-only batch runs nothing', async () => {
    // Prepare: `fast` is new; a record names it; another new spec (`quiet`) is named by none.
    const doc = localDoc(db.endpoint);
    const fast = aSpecItem({ service: 'fast' });
    await doc.send(new PutCommand({ TableName: 'handler-specs', Item: fast }));
    await doc.send(new PutCommand({ TableName: 'handler-specs', Item: aSpecItem({ service: 'quiet' }) }));
    doc.destroy();
    const { handler } = await importHandler(env);
    sim.clearCalls();
    const key = { cluster: 'apps', service: 'fast' };

    // Act
    const { result: summary, lines } = await capture(() => handler({ Records: [aStreamRecord('INSERT', key, { new: fast })] }, aLambdaContext(60_000, 'req-fast')));
    const statusOnly = { Records: [aStreamRecord('MODIFY', key, { old: { ...fast, status: { phase: 'Pending' } }, new: { ...fast, status: { phase: 'Converged' } } })] };
    const callsBefore = sim.calls().length;
    const { result: nothing } = await capture(() => handler(statusOnly, aLambdaContext(60_000, 'req-status')));

    // Assess
    expect(summary.outcome).toBe('completed');
    expect(summary.holder).toBe('req-fast');
    expect(summary.actions.map((a) => [a.type, a.service])).toEqual([
      ['RegisterTaskDefinition', 'fast'],
      ['CreateService', 'fast'],
    ]);
    expect(sim.calls({ action: 'CreateService' }).map((c) => c.request.serviceName)).toEqual(['fast']);
    const emf = lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>).filter((j) => j._aws !== undefined);
    expect(emf.some((j) => j.ActionsApplied === 2)).toBe(true);
    expect(emf.some((j) => j.PassSucceeded !== undefined)).toBe(false);
    expect(nothing).toEqual({ outcome: 'nothing-to-reconcile', ignored: { reserved: 0, statusOnly: 1, malformed: 0 } });
    expect(sim.calls().length).toBe(callsBefore);
  });
});

/**
 * Tracing is really emitted: the Lambda handler, imported as a Lambda container
 * does (`LAMBDA_TASK_ROOT`, `AWS_EXECUTION_ENV`, a sampled `_X_AMZN_TRACE_ID`), sends X-Ray
 * subsegments over UDP to `AWS_XRAY_DAEMON_ADDRESS`; a listener on loopback plays the X-Ray daemon
 * (AWS X-Ray Developer Guide, "Sending segment documents to the X-Ray daemon": a JSON header line,
 * a newline, then the segment document). `POWERTOOLS_TRACE_ENABLED=false` (the construct's
 * `tracing: DISABLED`) sends nothing.
 *
 * A file of its own: the X-Ray SDK reads `LAMBDA_TASK_ROOT` and the daemon address once, when it
 * is first loaded, so no other handler import may come first in this process.
 */
import { createSocket, type Socket } from 'node:dgram';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmbeddedDynamoDb, type EmbeddedDynamoDb } from '../../local/embedded-dynamodb';
import { startSimulator, type Simulator } from '../../local/sim';
import { ENV } from '../../lambda/config';
import { aLambdaContext, aSpecItem, createSpecsTable, importHandler, localDoc, localHandlerEnv } from './support';

/** One segment document as the daemon receives it (the fields these tests read). */
interface SegmentDocument {
  name: string;
  id: string;
  trace_id?: string;
  parent_id?: string;
  type?: string;
  namespace?: string;
  in_progress?: boolean;
  annotations?: Record<string, unknown>;
  aws?: { operation?: string; table_name?: string };
  subsegments?: SegmentDocument[];
}

const TRACE_ROOT = '1-67a1b2c3-0123456789abcdef01234567';

/** Runs `fn` with the handler's JSON logs and EMF (stdout) kept out of the test output. */
async function quietly<T>(fn: () => Promise<T>): Promise<T> {
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  try {
    return await fn();
  } finally {
    spy.mockRestore();
  }
}

/** Every (sub)segment of the received documents, nested ones included. */
function flatten(docs: SegmentDocument[]): SegmentDocument[] {
  return docs.flatMap((d) => [d, ...flatten(d.subsegments ?? [])]);
}

describe('X-Ray tracing of a pass, received by a UDP listener standing in for the daemon', () => {
  let daemon: Socket;
  const received: SegmentDocument[] = [];
  let sim: Simulator;
  let db: EmbeddedDynamoDb;
  let env: Record<string, string>;

  beforeAll(async () => {
    daemon = createSocket('udp4');
    daemon.on('message', (msg) => {
      const text = msg.toString('utf8');
      const newline = text.indexOf('\n');
      // Header `{"format": "json", "version": 1}`, then the document.
      expect(JSON.parse(text.slice(0, newline))).toEqual({ format: 'json', version: 1 });
      received.push(JSON.parse(text.slice(newline + 1)) as SegmentDocument);
    });
    await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
    sim = await startSimulator({ clusters: ['apps'] });
    db = await startEmbeddedDynamoDb();
    await createSpecsTable(db.endpoint, 'traced-specs');
    const doc = localDoc(db.endpoint);
    await doc.send(new PutCommand({ TableName: 'traced-specs', Item: aSpecItem({ service: 'web' }) }));
    doc.destroy();
    env = localHandlerEnv({ ecs: sim.endpoint, dynamodb: db.endpoint }, 'traced-specs', 'trace-test', {
      [ENV.metricsNamespace]: 'TraceTest',
      // What Lambda sets in a function with active tracing.
      LAMBDA_TASK_ROOT: '/var/task',
      AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
      AWS_LAMBDA_FUNCTION_NAME: 'ecs-reconciler',
      AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${daemon.address().port}`,
      AWS_XRAY_CONTEXT_MISSING: 'LOG_ERROR',
      _X_AMZN_TRACE_ID: `Root=${TRACE_ROOT};Parent=53995c3f42cd8ad8;Sampled=1`,
    });
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    daemon?.close();
    await sim?.close();
    await db?.stop();
  });

  /** Waits (real time, generous) until `n` documents arrived or `ms` passed; UDP on loopback is prompt. */
  async function settle(ms = 2_000): Promise<void> {
    const end = Date.now() + ms;
    let last = -1;
    while (Date.now() < end && received.length !== last) {
      last = received.length;
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it('on (POWERTOOLS_TRACE_ENABLED=true, the default the construct deploys): the pass subsegment and one subsegment per ECS and DynamoDB call arrive', async () => {
    // Prepare
    const { handler } = await importHandler({ ...env, POWERTOOLS_TRACE_ENABLED: 'true' });
    // Act
    const summary = await quietly(() => handler({}, aLambdaContext(60_000, 'req-traced')));
    await settle();
    // Assess
    expect(summary.outcome).toBe('completed');
    const all = flatten(received);
    const pass = all.find((s) => s.name === '## reconcile pass');
    expect(pass).toBeDefined();
    expect(pass?.trace_id).toBe(TRACE_ROOT);
    expect(pass?.annotations).toMatchObject({ Service: 'ecs-reconciler', readsComplete: true, actions: 2 });
    const aws = all.filter((s) => s.namespace === 'aws');
    const ops = (service: string) => new Set(aws.filter((s) => s.name === service).map((s) => s.aws?.operation));
    expect([...ops('ECS')]).toEqual(expect.arrayContaining(['ListServices', 'RegisterTaskDefinition', 'CreateService']));
    expect([...ops('DynamoDB')]).toEqual(expect.arrayContaining(['Scan']));
    // The AWS calls are children of the pass subsegment (sent nested in it, or on their own with its id as parent).
    const nested = flatten(pass?.subsegments ?? []);
    const children = aws.filter((s) => nested.includes(s) || s.parent_id === pass?.id);
    expect(new Set(children.map((s) => s.name))).toEqual(new Set(['ECS', 'DynamoDB']));
  });

  it('off (POWERTOOLS_TRACE_ENABLED=false, `tracing: DISABLED`): nothing is sent', async () => {
    // Prepare
    const { handler } = await importHandler({ ...env, POWERTOOLS_TRACE_ENABLED: 'false' });
    received.length = 0;
    // Act
    const summary = await quietly(() => handler({}, aLambdaContext(60_000, 'req-untraced')));
    await settle();
    // Assess
    expect(summary.outcome).toBe('completed');
    expect(summary.counts.servicesRead).toBeGreaterThan(0);
    expect(received).toEqual([]);
  });
});

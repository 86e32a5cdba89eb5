/**
 * The fan-out over real protocol servers: one spec table on dynalite, one ECS
 * simulator per target account and Region, moto for SQS (the fan-out queue) and STS (the target
 * roles). moto runs with IAM authorization on (`INITIAL_NO_AUTH_ACTION_COUNT`): the reconciler's
 * user may assume the good roles only, so AssumeRole of the broken target's role is refused by
 * the server (moto's STS would otherwise assume any role).
 *
 * Targets: default (simulator A, the reconciler's own account), staging (simulator B, eu-west-1,
 * same cluster and service names as default), slow (simulator C behind a gate that holds every
 * request until the test opens it), failing (an ECS endpoint nobody listens on), broken (a
 * `#target` item whose role cannot be assumed).
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DescribeServicesCommand, ECSClient } from '@aws-sdk/client-ecs';
import { CreateAccessKeyCommand, CreateRoleCommand, CreateUserCommand, IAMClient, PutUserPolicyCommand } from '@aws-sdk/client-iam';
import { CreateQueueCommand, DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoTargetDirectory, SqsFanOutQueue, TargetRunner, type TargetPassResult } from '../../lambda/adapters/fan-out';
import { RecordingLog } from '../../lambda/adapters/logger';
import { InMemoryMetricsSink } from '../../lambda/adapters/metrics';
import { ENV, loadConfig, type ReconcilerConfig } from '../../lambda/config';
import { dispatchTargets } from '../../lambda/core/fan-out';
import { DIMENSION, METRIC } from '../../lambda/core/metric-names';
import { NEVER_PASSED_AGE_SECONDS, parseFanOutMessage, type FanOutMessage } from '../../lambda/core/targets';
import { startEmbeddedDynamoDb, type EmbeddedDynamoDb } from '../../local/embedded-dynamodb';
import { deliver } from '../../local/fan-out';
import { startSimulator, type Simulator } from '../../local/sim';
import { freePort, startMoto, type MotoServer } from '../support/moto';
import { needs } from '../support/tools';
import { aSpecItem, createSpecsTable, LOCAL, localDoc } from './support';

const TABLE = 'fanout-specs';
const ACCOUNT = '123456789012';
const TRUST_ANYONE = JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: { AWS: '*' }, Action: 'sts:AssumeRole' }] });

/** A loopback proxy to `target` that holds every request until `open()`. */
async function gatedProxy(target: string): Promise<{ endpoint: string; open: () => void; held: () => number; close: () => Promise<void> }> {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let held = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      held += 1;
      void gate.then(async () => {
        const headers = Object.fromEntries(Object.entries(req.headers).filter(([k, v]) => typeof v === 'string' && k !== 'host' && k !== 'content-length')) as Record<string, string>;
        const answer = await fetch(`${target}${req.url ?? '/'}`, { method: req.method, headers, body: Buffer.concat(chunks) });
        res.writeHead(answer.status, Object.fromEntries(answer.headers.entries()));
        res.end(Buffer.from(await answer.arrayBuffer()));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    open: () => open(),
    held: () => held,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('the fan-out: one invocation per target, each on its own', needs('moto'), () => {
  let db: EmbeddedDynamoDb;
  let doc: DynamoDBDocumentClient;
  let moto: MotoServer;
  let simA: Simulator;
  let simB: Simulator;
  let simC: Simulator;
  let gate: Awaited<ReturnType<typeof gatedProxy>>;
  let sqs: SQSClient;
  let queueUrl: string;
  let userCredentials: { accessKeyId: string; secretAccessKey: string };
  let goodRole: string;
  let badRole: string;
  let deadPort: number;
  let config: ReconcilerConfig;

  beforeAll(async () => {
    // Six unauthenticated actions for the set-up below, then every request is authorized.
    [db, moto, simA, simB, simC] = await Promise.all([
      startEmbeddedDynamoDb(0),
      startMoto({ INITIAL_NO_AUTH_ACTION_COUNT: '6' }),
      startSimulator({ port: 0, seed: 1, clusters: ['apps'] }),
      startSimulator({ port: 0, seed: 2, clusters: ['apps'], region: 'eu-west-1' }),
      startSimulator({ port: 0, seed: 3, clusters: ['apps'], region: 'eu-central-1' }),
    ]);
    gate = await gatedProxy(simC.endpoint);
    // Only the reconciler's calls count below (the clusters' creation is not one).
    for (const sim of [simA, simB, simC]) sim.clearCalls();
    deadPort = await freePort();
    await createSpecsTable(db.endpoint, TABLE);
    doc = localDoc(db.endpoint);
    const motoConfig = { ...LOCAL, endpoint: moto.endpoint };
    const iam = new IAMClient(motoConfig);
    goodRole = (await iam.send(new CreateRoleCommand({ RoleName: 'ecs-reconciler-target', AssumeRolePolicyDocument: TRUST_ANYONE }))).Role!.Arn!;
    badRole = (await iam.send(new CreateRoleCommand({ RoleName: 'not-for-the-reconciler', AssumeRolePolicyDocument: TRUST_ANYONE }))).Role!.Arn!;
    await iam.send(new CreateUserCommand({ UserName: 'reconciler' }));
    await iam.send(
      new PutUserPolicyCommand({
        UserName: 'reconciler',
        PolicyName: 'reconciler',
        PolicyDocument: JSON.stringify({
          Version: '2012-10-17',
          Statement: [
            { Effect: 'Allow', Action: 'sts:AssumeRole', Resource: goodRole },
            { Effect: 'Allow', Action: 'sqs:*', Resource: '*' },
          ],
        }),
      }),
    );
    const key = (await iam.send(new CreateAccessKeyCommand({ UserName: 'reconciler' }))).AccessKey!;
    userCredentials = { accessKeyId: key.AccessKeyId!, secretAccessKey: key.SecretAccessKey! };
    iam.destroy();
    sqs = new SQSClient({ ...LOCAL, endpoint: moto.endpoint, credentials: userCredentials });
    queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'fanout' }))).QueueUrl!;

    const target = (name: string, region: string) => ({ name, account: ACCOUNT, region, clusters: ['apps'], roleArn: goodRole });
    config = loadConfig({
      [ENV.specsTable]: TABLE,
      [ENV.ownerId]: 'fanout-test',
      [ENV.managedClusters]: 'apps',
      [ENV.region]: 'us-east-1',
      [ENV.fanOutQueueUrl]: queueUrl,
      [ENV.targets]: JSON.stringify([target('staging', 'eu-west-1'), target('slow', 'eu-central-1'), target('failing', 'eu-north-1')]),
    });
    // The broken target is declared by a table item, as a platform team adds an account later.
    await doc.send(
      new PutCommand({ TableName: TABLE, Item: { cluster: '#target', service: 'broken', account: ACCOUNT, region: 'ap-southeast-2', clusters: ['apps'], roleArn: badRole } }),
    );
    // The same cluster and service names in two accounts: two items, two keys.
    await doc.send(new PutCommand({ TableName: TABLE, Item: aSpecItem({ cluster: 'apps', service: 'web', desiredCount: 1 }) }));
    for (const t of ['staging', 'slow', 'failing', 'broken']) {
      await doc.send(new PutCommand({ TableName: TABLE, Item: aSpecItem({ cluster: `${t}/apps`, service: 'web', desiredCount: 2 }) }));
    }
  }, 120_000);

  afterAll(async () => {
    gate?.open();
    sqs?.destroy();
    doc?.destroy();
    await Promise.all([gate?.close(), simA?.close(), simB?.close(), simC?.close(), moto?.stop(), db?.stop()]);
  });

  const endpointOf: Record<string, () => string> = {
    default: () => simA.endpoint,
    staging: () => simB.endpoint,
    slow: () => gate.endpoint,
    failing: () => `http://127.0.0.1:${deadPort}`,
    broken: () => `http://127.0.0.1:${deadPort}`,
  };

  function aRunner(metrics: InMemoryMetricsSink, log: RecordingLog): TargetRunner {
    return new TargetRunner(config, {
      doc,
      metrics,
      log,
      ecsClientConfigFor: (t) => ({ endpoint: endpointOf[t.name](), credentials: t.roleArn ? undefined : LOCAL.credentials }),
      stsClientConfig: { ...LOCAL, endpoint: moto.endpoint, credentials: userCredentials },
    });
  }

  /** Every message waiting in the fan-out queue, deleted as the event source mapping would. */
  async function receiveAll(): Promise<FanOutMessage[]> {
    const out: FanOutMessage[] = [];
    for (let empty = 0; empty < 2; ) {
      const got = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
      if (!got.Messages?.length) {
        empty += 1;
        continue;
      }
      for (const m of got.Messages) {
        const parsed = parseFanOutMessage(m.Body ?? '');
        if (!parsed.ok) throw new Error(parsed.error);
        out.push(parsed.message);
        await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle! }));
      }
    }
    return out;
  }

  const serviceIn = async (sim: Simulator) => {
    const ecs = new ECSClient({ ...LOCAL, endpoint: sim.endpoint });
    try {
      return (await ecs.send(new DescribeServicesCommand({ cluster: 'apps', services: ['web'] }))).services?.[0];
    } finally {
      ecs.destroy();
    }
  };

  it('a slow, a failing and an unassumable target never delay or fail the others; budgets and metrics are per target', async () => {
    // Prepare
    const metrics = new InMemoryMetricsSink();
    const log = new RecordingLog();
    const runner = aRunner(metrics, log);
    const dispatchPorts = { directory: new DynamoTargetDirectory(doc, TABLE), queue: new SqsFanOutQueue(sqs, queueUrl), metrics, log, clock: { now: () => new Date() } };
    const options = { propTargets: config.fanOut!.propTargets, defaultClusters: config.plan.managedClusters };

    // Act: one tick, and the mapping delivering every message at once (maximumConcurrency 5)
    const tick = await dispatchTargets(dispatchPorts, options);
    const messages = await receiveAll();
    const ended: string[] = [];
    const all = deliver(messages, 5, (m) => runner.run(m, { holder: `test:${m.target.name}` }), (d) => ended.push(d.message.target.name));
    // The slow target's requests are held: the others must all end while it is still waiting.
    await expect.poll(() => ended.length, { timeout: 60_000, interval: 100 }).toBe(4);
    const heldBeforeOpen = gate.held();
    gate.open();
    const deliveries = await all;
    const ecsCalls = { a: simA.calls({}).length, b: simB.calls({}).length };

    // Assess
    expect(tick.targets).toEqual(['default', 'broken', 'failing', 'slow', 'staging']);
    expect(tick.passAgeSeconds).toEqual(Object.fromEntries(tick.targets.map((t) => [t, NEVER_PASSED_AGE_SECONDS])));
    expect(messages.map((m) => m.target.name).sort()).toEqual([...tick.targets].sort());
    expect(ended.at(-1)).toBe('slow');
    expect(heldBeforeOpen).toBeGreaterThan(0);
    const result = (name: string) => {
      const d = deliveries.find((x) => x.message.target.name === name);
      if (!d || !('result' in d)) throw new Error(`no result for ${name}`);
      return d.result as TargetPassResult;
    };
    // default and staging: the same cluster/service names, each created in its own account.
    expect(result('default')).toMatchObject({ outcome: 'pass', summary: { outcome: 'completed', readsComplete: true } });
    expect(result('staging')).toMatchObject({ outcome: 'pass', summary: { outcome: 'completed', readsComplete: true } });
    expect(result('slow')).toMatchObject({ outcome: 'pass', summary: { outcome: 'completed', readsComplete: true } });
    expect(await serviceIn(simA)).toMatchObject({ serviceName: 'web', desiredCount: 1 });
    expect(await serviceIn(simB)).toMatchObject({ serviceName: 'web', desiredCount: 2 });
    expect(await serviceIn(simC)).toMatchObject({ serviceName: 'web', desiredCount: 2 });
    const staged = (await doc.send(new GetCommand({ TableName: TABLE, Key: { cluster: 'staging/apps', service: 'web' }, ConsistentRead: true }))).Item;
    expect(staged?.status).toMatchObject({ phase: expect.any(String), desiredCount: 2 });
    // the failing target: its pass ends with its errors, nothing else is touched.
    const failing = result('failing');
    expect(failing).toMatchObject({ outcome: 'pass', summary: { outcome: 'completed', readsComplete: false } });
    expect(failing.outcome === 'pass' && failing.summary.errors.length).toBeGreaterThan(0);
    // the broken target: refused by STS, no ECS call; each of its specs says so in its status.
    const broken = result('broken');
    expect(broken).toMatchObject({ outcome: 'target-unreachable', target: 'broken', statusesWritten: 1 });
    expect(broken.outcome === 'target-unreachable' && broken.error).toMatch(/AccessDenied|not authorized/);
    expect(log.lines.some((l) => l.message.includes('cannot be assumed') && l.fields?.target === 'broken')).toBe(true);
    const unreachable = (await doc.send(new GetCommand({ TableName: TABLE, Key: { cluster: 'broken/apps', service: 'web' }, ConsistentRead: true }))).Item;
    expect(unreachable?.status).toMatchObject({
      phase: 'Blocked',
      reason: expect.stringMatching(/^cluster apps cannot be read: the role .* of target broken cannot be assumed: .*(AccessDenied|not authorized)/),
      conditions: expect.arrayContaining([expect.objectContaining({ type: 'Blocked', reason: 'TargetUnreachable' })]),
    });
    // budgets: one limiter per account and Region, each counting only its own target's calls.
    const target = (name: string) => messages.find((m) => m.target.name === name)!.target;
    const limiterA = runner.limiterOf(target('default'));
    const limiterB = runner.limiterOf(target('staging'));
    expect(limiterA).not.toBe(limiterB);
    const callsOf = (l: typeof limiterA) => Object.values(l.snapshot()).reduce((n, c) => n + (c?.calls ?? 0), 0);
    expect(callsOf(limiterA)).toBe(ecsCalls.a);
    expect(callsOf(limiterB)).toBe(ecsCalls.b);
    expect(ecsCalls.a).toBeGreaterThan(0);
    expect(ecsCalls.b).toBeGreaterThan(0);
    // metrics: a Target dimension per pass, TaskLag under the stored key.
    const succeeded = metrics.data.filter((d) => d.name === METRIC.passSucceeded && d.dimensions[DIMENSION.target]).map((d) => d.dimensions[DIMENSION.target]);
    // PassSucceeded says the spec read completed (as for one target); the unreachable ECS of the
    // failing target shows in TargetPassAge below, which counts only passes whose reads completed.
    expect(succeeded.sort()).toEqual(['default', 'failing', 'slow', 'staging']);
    expect(metrics.data.some((d) => d.name === METRIC.taskLag && d.dimensions[DIMENSION.cluster] === 'staging/apps')).toBe(true);

    // Act again: the next tick sees who passed
    const next = await dispatchTargets(dispatchPorts, options);
    await receiveAll();

    // Assess: the stopped targets (failing, broken) report NEVER_PASSED, the others a recent pass
    expect(next.passAgeSeconds.broken).toBe(NEVER_PASSED_AGE_SECONDS);
    expect(next.passAgeSeconds.failing).toBe(NEVER_PASSED_AGE_SECONDS);
    for (const t of ['default', 'staging', 'slow']) expect(next.passAgeSeconds[t]).toBeLessThan(600);
    const ages = metrics.data.filter((d) => d.name === METRIC.targetPassAge).map((d) => d.dimensions[DIMENSION.target]);
    expect(new Set(ages)).toEqual(new Set(tick.targets));
    runner.destroy();
  }, 180_000);

  it('two targets in the same account and Region share one budget; a stale message is dropped', async () => {
    // Prepare
    const runner = aRunner(new InMemoryMetricsSink(), new RecordingLog());
    const a = { name: 'a', account: ACCOUNT, region: 'eu-west-1', clusters: [], roleArn: goodRole, source: 'prop' as const };
    const b = { ...a, name: 'b' };
    const c = { ...a, name: 'c', region: 'eu-west-2' };
    const old: FanOutMessage = { kind: 'ecsr.target-pass', target: a, sentAt: new Date(Date.now() - 5 * 60_000).toISOString(), declared: ['default', 'a'] };

    // Act
    const stale = await runner.run(old);

    // Assess
    expect(runner.limiterOf(a)).toBe(runner.limiterOf(b));
    expect(runner.limiterOf(a)).not.toBe(runner.limiterOf(c));
    expect(stale).toEqual({ outcome: 'stale', target: 'a', sentAt: old.sentAt });
    runner.destroy();
  });
});

/**
 * `TargetPassAge` in events mode (a breaker's finding). In events mode (the construct's
 * default) a pass reads its share of the fleet by design, so `readsComplete` is false on every
 * pass of a fleet spread over more clusters than a share. The heartbeat once needed
 * `readsComplete`: the default target's TargetPassAge stayed 1,000,000 and TargetPassesStopped
 * fired for a target whose passes all succeeded. Now a pass that read every spec and met no error
 * writes it.
 *
 * Real servers: dynalite (spec table, heartbeat items), the ECS simulator (10 clusters), the local
 * SQS server as the events queue (the Lambda's SqsEventFeed reads it), TargetRunner and the
 * dispatcher.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoTargetDirectory, TargetRunner } from '../../lambda/adapters/fan-out';
import { RecordingLog } from '../../lambda/adapters/logger';
import { InMemoryMetricsSink } from '../../lambda/adapters/metrics';
import { ENV, loadConfig } from '../../lambda/config';
import { dispatchTargets } from '../../lambda/core/fan-out';
import { NEVER_PASSED_AGE_SECONDS } from '../../lambda/core/targets';
import { startEmbeddedDynamoDb, type EmbeddedDynamoDb } from '../../local/embedded-dynamodb';
import { InMemoryFanOutQueue } from '../../local/fan-out';
import { startSimulator, type Simulator } from '../../local/sim';
import { LocalSqs } from '../../local/sqs';
import { aSpecItem, createSpecsTable, LOCAL, localDoc } from './support';

const TABLE = 'breaker-pass-age';
const CLUSTERS = Array.from({ length: 10 }, (_, i) => `c${i}`);

describe('TargetPassAge of a target in events mode', () => {
  let db: EmbeddedDynamoDb;
  let sim: Simulator;
  let sqs: LocalSqs;
  let doc: DynamoDBDocumentClient;
  let queueUrl: string;

  beforeAll(async () => {
    [db, sim] = await Promise.all([startEmbeddedDynamoDb(0), startSimulator({ port: 0, seed: 9, clusters: CLUSTERS })]);
    sqs = new LocalSqs({ accountId: '123456789012', region: sim.region, nowMs: () => Date.now() });
    await sqs.start();
    sqs.createQueue('events-dlq');
    queueUrl = sqs.createQueue('events', { visibilityTimeoutSeconds: 60, maxReceiveCount: 5, deadLetterQueue: 'events-dlq' });
    await createSpecsTable(db.endpoint, TABLE);
    doc = localDoc(db.endpoint);
    for (const c of CLUSTERS) await doc.send(new PutCommand({ TableName: TABLE, Item: aSpecItem({ cluster: c, service: 'web', desiredCount: 1 }) }));
  }, 120_000);
  afterEach(() => vi.unstubAllEnvs());
  afterAll(async () => {
    doc?.destroy();
    await Promise.all([sim?.close(), sqs?.close(), db?.stop()]);
  });

  it('the default target passing every tick in events mode keeps TargetPassAge low', async () => {
    // Prepare: the Lambda's SQS client configured by the environment, as in AWS
    vi.stubEnv('AWS_ENDPOINT_URL_SQS', sqs.endpoint);
    vi.stubEnv('AWS_REGION', sim.region);
    vi.stubEnv('AWS_ACCESS_KEY_ID', LOCAL.credentials.accessKeyId);
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', LOCAL.credentials.secretAccessKey);
    const config = loadConfig({
      [ENV.specsTable]: TABLE,
      [ENV.ownerId]: 'breaker',
      [ENV.region]: sim.region,
      [ENV.fanOutQueueUrl]: 'http://local/fan-out',
      [ENV.eventsQueueUrl]: queueUrl,
      [ENV.resyncMinutes]: '10',
      [ENV.scheduleMinutes]: '1',
    });
    const log = new RecordingLog();
    const metrics = new InMemoryMetricsSink();
    const runner = new TargetRunner(config, { doc, metrics, log, ecsClientConfigFor: () => ({ endpoint: sim.endpoint, credentials: LOCAL.credentials }) });
    const queue = new InMemoryFanOutQueue();
    const ports = { directory: new DynamoTargetDirectory(doc, TABLE), queue, metrics, log, clock: { now: () => new Date() } };
    const options = { propTargets: [], defaultClusters: [] };
    const heartbeatEvent = () =>
      JSON.stringify({ version: '0', id: `hb-${Date.now()}`, 'detail-type': 'Scheduled Event', source: 'aws.events', account: '123456789012', time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'), region: sim.region, resources: [], detail: {} });

    // Act: three ticks, the heartbeat rule firing before each, the default target's message run
    const modes: unknown[] = [];
    for (let tick = 0; tick < 3; tick++) {
      sqs.send('events', heartbeatEvent());
      await dispatchTargets(ports, options);
      for (const m of queue.take()) {
        const r = await runner.run(m, { holder: `t${tick}` });
        if (r.outcome === 'pass') modes.push({ outcome: r.summary.outcome, mode: r.summary.events?.mode, errors: r.summary.errors.length });
      }
    }
    const last = await dispatchTargets(ports, options);
    queue.take();
    runner.destroy();

    // Assess: every pass completed in events mode, without errors ...
    expect(modes).toEqual(Array.from({ length: 3 }, () => ({ outcome: 'completed', mode: 'events', errors: 0 })));
    // ... so its pass age is that of the last pass, not "never passed"
    expect(last.passAgeSeconds.default).toBeLessThan(NEVER_PASSED_AGE_SECONDS);
    expect(last.passAgeSeconds.default).toBeLessThan(180);
  }, 180_000);
});

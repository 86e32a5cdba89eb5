/**
 * A target's `clusters` means one thing for its passes and its events (from a breaker's
 * finding): the clusters listed every pass (for prune and drift) besides every cluster its specs
 * name, as MANAGED_CLUSTERS is for the reconciler's own account. A spec of the target in a cluster
 * not listed is reconciled by its passes, so that service's ECS events reach the target's fast path
 * too; they used to be dropped and counted in EventsUnrouted. Events are routed by account and
 * Region alone, and the services they name that have no spec item start no pass (one BatchGetItem
 * before any lease), so someone else's clusters in a covered account cost no pass and are not
 * "unrouted" either.
 *
 * Real servers: dynalite (spec table), the ECS simulator (the target's account), the function's
 * dispatcher (`dispatchEvents`) with its DynamoTargetDirectory and TargetRunner, the in-memory
 * fan-out queue.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoTargetDirectory, TargetRunner } from '../../lambda/adapters/fan-out';
import { RecordingLog } from '../../lambda/adapters/logger';
import { InMemoryMetricsSink } from '../../lambda/adapters/metrics';
import { ENV, loadConfig, type ReconcilerConfig } from '../../lambda/config';
import { dispatchEvents } from '../../lambda/core/fan-out';
import { METRIC } from '../../lambda/core/metric-names';
import { FAN_OUT_MESSAGE_KIND, mergeTargets } from '../../lambda/core/targets';
import { startEmbeddedDynamoDb, type EmbeddedDynamoDb } from '../../local/embedded-dynamodb';
import { InMemoryFanOutQueue } from '../../local/fan-out';
import { startSimulator, type Simulator } from '../../local/sim';
import { aSpecItem, createSpecsTable, LOCAL, localDoc } from './support';

const TABLE = 'target-clusters';
const HOME = { account: '111111111111', region: 'us-east-1' };
const ACCOUNT = '333333333333';

/** An ECS Service Action event of `account`/`region` naming `cluster/service`. */
function serviceAction(account: string, region: string, cluster: string, service: string): string {
  return JSON.stringify({
    version: '0',
    id: `${account}-${cluster}-${service}`,
    'detail-type': 'ECS Service Action',
    source: 'aws.ecs',
    account,
    time: new Date().toISOString(),
    region,
    resources: [`arn:aws:ecs:${region}:${account}:service/${cluster}/${service}`],
    detail: { eventType: 'INFO', eventName: 'SERVICE_STEADY_STATE', clusterArn: `arn:aws:ecs:${region}:${account}:cluster/${cluster}` },
  });
}

describe("a target's clusters: its passes and its events agree", () => {
  let db: EmbeddedDynamoDb;
  let sim: Simulator;
  let doc: DynamoDBDocumentClient;
  let config: ReconcilerConfig;

  beforeAll(async () => {
    [db, sim] = await Promise.all([startEmbeddedDynamoDb(0), startSimulator({ port: 0, seed: 5, clusters: ['web', 'api'], region: 'eu-west-1' })]);
    await createSpecsTable(db.endpoint, TABLE);
    doc = localDoc(db.endpoint);
    config = loadConfig({
      [ENV.specsTable]: TABLE,
      [ENV.ownerId]: 'clusters',
      [ENV.region]: HOME.region,
      [ENV.managedClusters]: 'apps',
      [ENV.fanOutQueueUrl]: 'http://local/fan-out',
      [ENV.targets]: JSON.stringify([{ name: 'staging', account: ACCOUNT, region: 'eu-west-1', clusters: ['web'], roleArn: `arn:aws:iam::${ACCOUNT}:role/ecs-reconciler-target` }]),
    });
    // staging lists cluster web; its spec names cluster api.
    await doc.send(new PutCommand({ TableName: TABLE, Item: aSpecItem({ cluster: 'staging/api', service: 'svc', desiredCount: 1 }) }));
  }, 120_000);

  afterAll(async () => {
    doc?.destroy();
    await Promise.all([sim?.close(), db?.stop()]);
  });

  it("the events of a service the target's pass reconciles outside its clusters reach its fast path; services with no spec start no pass and are not unrouted", async () => {
    // Prepare
    const log = new RecordingLog();
    const metrics = new InMemoryMetricsSink();
    const runner = new TargetRunner(config, {
      doc,
      metrics,
      log,
      ecsClientConfigFor: () => ({ endpoint: sim.endpoint, credentials: LOCAL.credentials }),
      credentialsFor: () => async () => LOCAL.credentials,
    });
    const { targets } = mergeTargets(config.fanOut!.propTargets, [], config.plan.managedClusters, HOME);
    const staging = targets.find((t) => t.name === 'staging')!;
    const queue = new InMemoryFanOutQueue();
    const ports = { directory: new DynamoTargetDirectory(doc, TABLE), queue, metrics, log, clock: { now: () => new Date() } };
    const options = { propTargets: config.fanOut!.propTargets, defaultClusters: config.plan.managedClusters, home: HOME };

    try {
      // Act 1: staging's scheduled pass creates api/svc
      const pass = await runner.run({ kind: FAN_OUT_MESSAGE_KIND, target: staging, sentAt: new Date().toISOString(), declared: ['default', 'staging'] }, { holder: 't:staging' });
      const created = sim.calls({ action: 'CreateService' }).map((c) => `${String(c.request.cluster)}/${String(c.request.serviceName)}`);

      // Act 2: a batch with that service's event, someone else's service in the same account (a
      // listed and an unlisted cluster), and the home account's noise of an unmanaged cluster
      const sent = await dispatchEvents(ports, options, [
        serviceAction(ACCOUNT, 'eu-west-1', 'api', 'svc'),
        serviceAction(ACCOUNT, 'eu-west-1', 'api', 'theirs'),
        serviceAction(ACCOUNT, 'eu-west-1', 'web', 'theirs'),
        serviceAction(HOME.account, HOME.region, 'batch', 'nightly'),
      ]);
      const messages = queue.take();
      sim.clearCalls();
      const fast = await runner.run(messages[0], { holder: 't:staging-events' });

      // Assess
      expect(pass).toMatchObject({ outcome: 'pass', summary: { outcome: 'completed' } });
      expect(created).toEqual(['api/svc']);
      expect(sent).toMatchObject({ outcome: 'events-dispatched', targets: { staging: 1 }, unrouted: 0, withoutSpec: 3, failed: [] });
      expect(messages.map((m) => [m.target.name, m.keys, m.fromEvents])).toEqual([['staging', [{ cluster: 'api', service: 'svc' }], true]]);
      expect(fast).toMatchObject({ outcome: 'pass', target: 'staging', fastPath: true, summary: { outcome: 'completed', counts: { servicesRead: 1 } } });
      expect(sim.calls({ action: 'DescribeServices' }).map((c) => c.request.cluster)).toEqual(['api']);
      expect(metrics.data.filter((m) => m.name === METRIC.eventsUnrouted)).toEqual([]);
    } finally {
      runner.destroy();
    }
  }, 120_000);

  it('an event of an account and Region no target covers is still dropped and counted', async () => {
    // Prepare
    const metrics = new InMemoryMetricsSink();
    const queue = new InMemoryFanOutQueue();
    const ports = { directory: new DynamoTargetDirectory(doc, TABLE), queue, metrics, log: new RecordingLog(), clock: { now: () => new Date() } };

    // Act: staging's very service names, from another Region of its account
    const sent = await dispatchEvents(ports, { propTargets: config.fanOut!.propTargets, defaultClusters: ['apps'], home: HOME }, [serviceAction(ACCOUNT, 'eu-central-1', 'api', 'svc')]);

    // Assess
    expect(sent).toMatchObject({ targets: {}, unrouted: 1, withoutSpec: 0 });
    expect(queue.size).toBe(0);
    expect(metrics.data.filter((m) => m.name === METRIC.eventsUnrouted).map((m) => m.value)).toEqual([1]);
  });

  it('a #target item may give clusters as a string set (SS), as the console makes it, or a list (L); a number set is refused with the reason', async () => {
    // Prepare: lib-dynamodb writes a Set of strings as SS, of numbers as NS, an array as L
    const item = (name: string, account: string, clusters: unknown) => ({ cluster: '#target', service: name, account, region: 'eu-west-2', clusters, roleArn: `arn:aws:iam::${account}:role/ecs-reconciler-target` });
    await doc.send(new PutCommand({ TableName: TABLE, Item: item('sets', '444444444444', new Set(['jobs', 'apps'])) }));
    await doc.send(new PutCommand({ TableName: TABLE, Item: item('lists', '555555555555', ['web']) }));
    await doc.send(new PutCommand({ TableName: TABLE, Item: item('numbers', '666666666666', new Set([1, 2])) }));

    // Act
    const read = await new DynamoTargetDirectory(doc, TABLE).read();

    // Assess
    const byName = new Map(read.declarations.map((d) => [d.ok ? d.target.name : d.name, d]));
    expect(byName.get('sets')).toMatchObject({ ok: true, target: { clusters: ['apps', 'jobs'], source: 'table' } });
    expect(byName.get('lists')).toMatchObject({ ok: true, target: { clusters: ['web'] } });
    expect(byName.get('numbers')).toMatchObject({ ok: false, errors: expect.arrayContaining([expect.stringMatching(/target numbers: clusters.0 .*expected string/)]) });
  });

  it('keysWithSpec: more than one BatchGetItem of keys, duplicates once, the order kept; an unreadable table keeps every key with the reason', async () => {
    // Prepare: 150 keys (two calls), two with a spec, one named twice
    const keys = [...Array.from({ length: 148 }, (_, i) => ({ cluster: 'staging/api', service: `none-${i}` })), { cluster: 'staging/api', service: 'svc' }, { cluster: 'staging/api', service: 'svc' }];
    await doc.send(new PutCommand({ TableName: TABLE, Item: aSpecItem({ cluster: 'staging/api', service: 'none-140' }) }));

    // Act
    const found = await new DynamoTargetDirectory(doc, TABLE).keysWithSpec(keys);
    const unreadable = await new DynamoTargetDirectory(doc, 'no-such-table').keysWithSpec(keys.slice(0, 3));

    // Assess
    expect(found).toEqual({ keys: [{ cluster: 'staging/api', service: 'none-140' }, { cluster: 'staging/api', service: 'svc' }, { cluster: 'staging/api', service: 'svc' }] });
    expect(unreadable.keys).toEqual(keys.slice(0, 3));
    expect(unreadable.error).toMatch(/BatchGetItem in no-such-table/);
  });
});

/**
 * One target per account and Region (a breaker's finding). Two targets in the same
 * account and Region with a cluster in common would each see the other's services as owned
 * services without a spec (one owner tag per reconciler) and prune them, and the other would
 * create them again, forever. The dispatcher refuses the second declaration, names why, and never
 * sends it; the first target's pass deletes nothing.
 *
 * Real servers: dynalite (spec table), one ECS simulator (the one account and Region both targets
 * name), the fan-out's own dispatcher and TargetRunner.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DescribeServicesCommand, ECSClient } from '@aws-sdk/client-ecs';
import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoTargetDirectory, TargetRunner } from '../../lambda/adapters/fan-out';
import { RecordingLog } from '../../lambda/adapters/logger';
import { InMemoryMetricsSink } from '../../lambda/adapters/metrics';
import { ENV, loadConfig, type ReconcilerConfig } from '../../lambda/config';
import { dispatchTargets } from '../../lambda/core/fan-out';
import { startEmbeddedDynamoDb, type EmbeddedDynamoDb } from '../../local/embedded-dynamodb';
import { InMemoryFanOutQueue } from '../../local/fan-out';
import { startSimulator, type Simulator } from '../../local/sim';
import { aSpecItem, createSpecsTable, LOCAL, localDoc } from '../runtime/support';

const TABLE = 'breaker-same-account';
const ACCOUNT = '123456789012';

describe('two targets declared in the same account and Region', () => {
  let db: EmbeddedDynamoDb;
  let sim: Simulator;
  let doc: DynamoDBDocumentClient;
  let config: ReconcilerConfig;

  beforeAll(async () => {
    [db, sim] = await Promise.all([startEmbeddedDynamoDb(0), startSimulator({ port: 0, seed: 7, clusters: ['apps'] })]);
    await createSpecsTable(db.endpoint, TABLE);
    doc = localDoc(db.endpoint);
    config = loadConfig({
      [ENV.specsTable]: TABLE,
      [ENV.ownerId]: 'breaker',
      [ENV.region]: sim.region,
      [ENV.fanOutQueueUrl]: 'http://local/fan-out',
      [ENV.targets]: JSON.stringify([
        { name: 'blue', account: ACCOUNT, region: sim.region, clusters: ['apps'], roleArn: `arn:aws:iam::${ACCOUNT}:role/ecs-reconciler-target` },
        { name: 'green', account: ACCOUNT, region: sim.region, clusters: ['apps'], roleArn: `arn:aws:iam::${ACCOUNT}:role/ecs-reconciler-target` },
      ]),
    });
    await doc.send(new PutCommand({ TableName: TABLE, Item: aSpecItem({ cluster: 'blue/apps', service: 'api', desiredCount: 1 }) }));
    await doc.send(new PutCommand({ TableName: TABLE, Item: aSpecItem({ cluster: 'green/apps', service: 'worker', desiredCount: 1 }) }));
  }, 120_000);

  afterAll(async () => {
    doc?.destroy();
    await Promise.all([sim?.close(), db?.stop()]);
  });

  it('the second is refused and never dispatched; the first one\'s passes delete nothing', async () => {
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
    const queue = new InMemoryFanOutQueue();
    const ports = { directory: new DynamoTargetDirectory(doc, TABLE), queue, metrics, log, clock: { now: () => new Date() } };
    const options = { propTargets: config.fanOut!.propTargets, defaultClusters: config.plan.managedClusters };

    // Act: three ticks, each dispatched non-default target's message run in turn
    const dispatched: string[][] = [];
    const problems: string[] = [];
    for (let tick = 0; tick < 3; tick++) {
      const summary = await dispatchTargets(ports, options);
      problems.push(...summary.problems);
      const messages = queue.take().filter((m) => m.target.name !== 'default');
      dispatched.push(messages.map((m) => m.target.name));
      for (const m of messages) await runner.run(m, { holder: `t${tick}:${m.target.name}` });
    }
    runner.destroy();

    // Assess: green refused with the reason at every tick, blue alone reconciled, nothing pruned
    expect(dispatched).toEqual([['blue'], ['blue'], ['blue']]);
    expect(problems).toHaveLength(3);
    expect(problems[0]).toMatch(/^target green: account 123456789012 Region .* is already target blue's; one target per account and Region/);
    const ecs = new ECSClient({ ...LOCAL, endpoint: sim.endpoint });
    const services = (await ecs.send(new DescribeServicesCommand({ cluster: 'apps', services: ['api', 'worker'] }))).services ?? [];
    ecs.destroy();
    expect(sim.calls({ action: 'DeleteService' })).toEqual([]);
    expect(sim.calls({ action: 'UpdateService' }).filter((c) => c.request.desiredCount === 0)).toEqual([]);
    expect(services.map((s) => [s.serviceName, s.status, s.desiredCount])).toEqual([['api', 'ACTIVE', 1]]);
  }, 120_000);
});

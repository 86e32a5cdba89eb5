/**
 * A fan-out message is a hint: it names a target, and the runner reads that target's declaration
 * (the `targets` prop, then the `#target` items) before it assumes a role or calls ECS. Anyone who
 * may send to the fan-out queue can write any body, so a body naming a declared target with other
 * default subnets, another account, Region or role, or naming a target nobody declared, must
 * change nothing.
 *
 * Real servers: dynalite (the spec table and its `#target` items), one ECS simulator per account
 * (staging's, qa's and an attacker's), the dispatcher and TargetRunner; the bodies go through
 * `parseFanOutMessage` as the handler reads them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DescribeServicesCommand, ECSClient } from '@aws-sdk/client-ecs';
import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoTargetDirectory, TargetRunner, type TargetPassResult } from '../../lambda/adapters/fan-out';
import { RecordingLog } from '../../lambda/adapters/logger';
import { InMemoryMetricsSink } from '../../lambda/adapters/metrics';
import { ENV, loadConfig, type ReconcilerConfig } from '../../lambda/config';
import { dispatchTargets } from '../../lambda/core/fan-out';
import { parseFanOutMessage, type FanOutMessage } from '../../lambda/core/targets';
import { startEmbeddedDynamoDb, type EmbeddedDynamoDb } from '../../local/embedded-dynamodb';
import { InMemoryFanOutQueue } from '../../local/fan-out';
import { startSimulator, type Simulator } from '../../local/sim';
import { aSpecItem, createSpecsTable, LOCAL, localDoc } from './support';

const TABLE = 'fan-out-forged';
const STAGING = '222222222222';
const QA = '333333333333';
const ATTACKER = '999999999999';
const role = (account: string) => `arn:aws:iam::${account}:role/ecs-reconciler-target`;
const STAGING_DEFAULTS = { subnets: ['subnet-0aaaaaaaaaaaaaaa1'], securityGroups: ['sg-0aaaaaaaaaaaaaaa1'], assignPublicIp: false };
const QA_DEFAULTS = { subnets: ['subnet-0ccccccccccccccc3'], securityGroups: ['sg-0ccccccccccccccc3'] };
const FORGED_DEFAULTS = { subnets: ['subnet-0bbbbbbbbbbbbbbb2'], securityGroups: ['sg-0bbbbbbbbbbbbbbb2'], assignPublicIp: true };

/** A spec that takes its network from its target's defaults. */
function specUsingDefaults(cluster: string, service: string): Record<string, unknown> {
  const { subnets: _s, securityGroups: _g, ...item } = aSpecItem({ cluster, service, desiredCount: 1 });
  void _s;
  void _g;
  return item;
}

describe('a forged fan-out message is not obeyed', () => {
  let db: EmbeddedDynamoDb;
  let doc: DynamoDBDocumentClient;
  let staging: Simulator;
  let qa: Simulator;
  let attacker: Simulator;
  let config: ReconcilerConfig;
  let runner: TargetRunner;
  let log: RecordingLog;
  const rolesAssumed: string[] = [];
  const home = { account: '111111111111', region: 'us-east-1' };

  beforeAll(async () => {
    [db, staging, qa, attacker] = await Promise.all([
      startEmbeddedDynamoDb(0),
      startSimulator({ port: 0, seed: 1, clusters: ['apps'], accountId: STAGING, region: 'eu-west-1' }),
      startSimulator({ port: 0, seed: 2, clusters: ['apps'], accountId: QA, region: 'eu-central-1' }),
      startSimulator({ port: 0, seed: 3, clusters: ['apps', 'other'], accountId: ATTACKER, region: 'eu-west-1' }),
    ]);
    await createSpecsTable(db.endpoint, TABLE);
    doc = localDoc(db.endpoint);
    config = loadConfig({
      [ENV.specsTable]: TABLE,
      [ENV.ownerId]: 'forged',
      [ENV.region]: home.region,
      [ENV.managedClusters]: 'apps',
      [ENV.fanOutQueueUrl]: 'http://local/fan-out',
      [ENV.targets]: JSON.stringify([{ name: 'staging', account: STAGING, region: 'eu-west-1', clusters: ['apps'], roleArn: role(STAGING), defaults: STAGING_DEFAULTS }]),
    });
    // qa is declared by a table item, as a platform team adds an account later.
    await doc.send(
      new PutCommand({ TableName: TABLE, Item: { cluster: '#target', service: 'qa', account: QA, region: 'eu-central-1', clusters: ['apps'], roleArn: role(QA), defaults: QA_DEFAULTS } }),
    );
    for (const target of ['staging', 'qa']) {
      for (const service of ['web', 'api']) await doc.send(new PutCommand({ TableName: TABLE, Item: specUsingDefaults(`${target}/apps`, service) }));
    }
    const byAccount = new Map([
      [STAGING, staging],
      [QA, qa],
    ]);
    log = new RecordingLog();
    runner = new TargetRunner(config, {
      doc,
      metrics: new InMemoryMetricsSink(),
      log,
      home,
      // Each account's ECS is its own simulator; any other account is the attacker's.
      ecsClientConfigFor: (t) => ({ endpoint: (byAccount.get(t.account ?? '') ?? attacker).endpoint, credentials: LOCAL.credentials }),
      credentialsFor: (t) => {
        rolesAssumed.push(t.roleArn ?? '');
        return async () => LOCAL.credentials;
      },
    });
  }, 120_000);

  afterAll(async () => {
    runner?.destroy();
    doc?.destroy();
    await Promise.all([staging?.close(), qa?.close(), attacker?.close(), db?.stop()]);
  });

  async function network(sim: Simulator, service: string) {
    const ecs = new ECSClient({ ...LOCAL, endpoint: sim.endpoint, region: sim.region });
    try {
      const out = await ecs.send(new DescribeServicesCommand({ cluster: 'apps', services: [service] }));
      const s = out.services?.[0];
      return { ...s?.networkConfiguration?.awsvpcConfiguration, taskDefinition: s?.taskDefinition, deployments: s?.deployments?.length };
    } finally {
      ecs.destroy();
    }
  }

  /** A body as anyone allowed to send to the queue could write it, read as the handler reads it. */
  function received(body: unknown): FanOutMessage {
    const parsed = parseFanOutMessage(JSON.stringify(body));
    if (!parsed.ok) throw new Error(`the forged body does not parse: ${parsed.error}`);
    return parsed.message;
  }

  it('a body naming staging or qa with other subnets, account, Region, role or clusters runs the declared target; an undeclared name is refused', async () => {
    // Prepare: one honest tick, every target converged on its declared network
    const queue = new InMemoryFanOutQueue();
    const ports = { directory: new DynamoTargetDirectory(doc, TABLE), queue, metrics: new InMemoryMetricsSink(), log, clock: { now: () => new Date() } };
    await dispatchTargets(ports, { propTargets: config.fanOut!.propTargets, defaultClusters: config.plan.managedClusters, home });
    const honest = queue.take();
    for (const m of honest) expect((await runner.run(m, { holder: `honest:${m.target.name}` })).outcome).toBe('pass');
    const before = { staging: await network(staging, 'web'), stagingApi: await network(staging, 'api'), qa: await network(qa, 'web') };
    expect(before.staging).toMatchObject({ subnets: STAGING_DEFAULTS.subnets, securityGroups: STAGING_DEFAULTS.securityGroups, assignPublicIp: 'DISABLED' });
    expect(before.qa).toMatchObject({ subnets: QA_DEFAULTS.subnets });
    const stagingMessage = honest.find((m) => m.target.name === 'staging')!;
    const qaMessage = honest.find((m) => m.target.name === 'qa')!;
    for (const sim of [staging, qa, attacker]) sim.clearCalls();
    log.lines.length = 0;
    const sentAt = new Date().toISOString();

    // Act: forged bodies, each sent as a fresh tick's message
    const forged = [
      // staging's name with other default subnets, security groups and a public IP
      { ...stagingMessage, sentAt, target: { ...stagingMessage.target, defaults: FORGED_DEFAULTS } },
      // staging's name in another account, Region and role, with other clusters
      { ...stagingMessage, sentAt, target: { ...stagingMessage.target, account: ATTACKER, region: 'eu-west-1', roleArn: role(ATTACKER), clusters: ['other'] } },
      // qa's name (a #target item) with the attacker's role and subnets, and a `declared` list that hides the others
      { ...qaMessage, sentAt, declared: ['qa'], target: { ...qaMessage.target, account: ATTACKER, roleArn: role(ATTACKER), defaults: FORGED_DEFAULTS } },
      // a fast-path body for staging's services, from another account
      { ...stagingMessage, sentAt, keys: [{ cluster: 'apps', service: 'web' }], target: { ...stagingMessage.target, account: ATTACKER, roleArn: role(ATTACKER), defaults: FORGED_DEFAULTS } },
    ].map(received);
    const results: TargetPassResult[] = [];
    for (const m of forged) results.push(await runner.run(m, { holder: `forged:${m.target.name}` }));
    const unknown = await runner.run(
      received({ ...stagingMessage, sentAt, target: { name: 'evil', account: ATTACKER, region: 'eu-west-1', clusters: ['apps'], roleArn: role(ATTACKER) } }),
      { holder: 'forged:evil' },
    );

    // Assess: the declared targets ran, on their declarations; nothing moved, nothing reached the attacker
    expect(results.map((r) => [r.outcome, 'target' in r ? r.target : undefined])).toEqual([
      ['pass', 'staging'],
      ['pass', 'staging'],
      ['pass', 'qa'],
      ['pass', 'staging'],
    ]);
    for (const r of results) if (r.outcome === 'pass') expect(r.summary.counts.actionsApplied).toBe(0);
    expect({ staging: await network(staging, 'web'), stagingApi: await network(staging, 'api'), qa: await network(qa, 'web') }).toEqual(before);
    expect(attacker.calls()).toEqual([]);
    // Every role ever asked for (honest tick included) is a declared one.
    expect([...new Set(rolesAssumed)].sort()).toEqual([role(STAGING), role(QA)].sort());
    for (const sim of [staging, qa]) expect(sim.calls().filter((c) => !/^(List|Describe)/.test(c.action)).map((c) => c.action)).toEqual([]);
    expect(unknown).toMatchObject({ outcome: 'unknown-target', target: 'evil' });
    expect(unknown.outcome === 'unknown-target' && unknown.error).toMatch(/target evil is not declared/);
    expect(log.lines.find((l) => l.level === 'error' && l.fields.target === 'evil')?.fields).toMatchObject({ messageAccount: ATTACKER, messageRoleArn: role(ATTACKER) });
    expect(log.lines.filter((l) => l.level === 'warn' && /differs from its declaration/.test(l.message)).map((l) => l.fields.target)).toEqual(['staging', 'staging', 'qa', 'staging']);
  }, 120_000);
});

/**
 * The target `default` stays the reconciler's own account, Region and role (a breaker's
 * finding): its specs are today's plain-keyed items, so a declaration naming it may give it
 * clusters and defaults, never another account's role. Before the fix, a `#target` item `default`
 * (anyone who may write the table) or a prop entry could move every plain-keyed spec into another
 * account.
 *
 * Real servers: dynalite (the spec table), the dispatcher reading `#target` items from it, and the
 * construct's own validation (synth).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { App, Stack } from 'aws-cdk-lib';
import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoTargetDirectory } from '../../lambda/adapters/fan-out';
import { RecordingLog } from '../../lambda/adapters/logger';
import { InMemoryMetricsSink } from '../../lambda/adapters/metrics';
import { dispatchTargets } from '../../lambda/core/fan-out';
import { startEmbeddedDynamoDb, type EmbeddedDynamoDb } from '../../local/embedded-dynamodb';
import { InMemoryFanOutQueue } from '../../local/fan-out';
import { EcsReconciler } from '../../lib/ecs-reconciler';
import { createSpecsTable, localDoc } from './support';

const TABLE = 'breaker-default-target';
const OTHER_ROLE = 'arn:aws:iam::999999999999:role/ecs-reconciler-target';

describe('the target named default', () => {
  let db: EmbeddedDynamoDb;
  let doc: DynamoDBDocumentClient;

  beforeAll(async () => {
    db = await startEmbeddedDynamoDb(0);
    await createSpecsTable(db.endpoint, TABLE);
    doc = localDoc(db.endpoint);
  }, 60_000);
  afterAll(async () => {
    doc?.destroy();
    await db?.stop();
  });

  it('a #target item "default" cannot send the default target (plain-keyed specs) to a role of another account', async () => {
    // Prepare: a table item redeclaring default with another account's role (no account given)
    await doc.send(new PutCommand({ TableName: TABLE, Item: { cluster: '#target', service: 'default', roleArn: OTHER_ROLE } }));
    const queue = new InMemoryFanOutQueue();
    const log = new RecordingLog();
    const ports = { directory: new DynamoTargetDirectory(doc, TABLE), queue, metrics: new InMemoryMetricsSink(), log, clock: { now: () => new Date() } };

    // Act
    const tick = await dispatchTargets(ports, { propTargets: [], defaultClusters: ['apps'] });
    const sentDefault = queue.take().find((m) => m.target.name === 'default');

    // Assess: the declaration is refused (named in problems), and default runs with its own role
    expect(tick.problems.some((p) => p.includes('default'))).toBe(true);
    expect(sentDefault?.target.roleArn).toBeUndefined();
  }, 60_000);

  it('the construct refuses a prop target named default in another account', () => {
    // Prepare
    const app = new App();
    const stack = new Stack(app, 'Home', { env: { account: '111111111111', region: 'eu-west-1' } });

    // Act / Assess: "default is the reconciler's own account"
    expect(
      () =>
        new EcsReconciler(stack, 'Reconciler', {
          clusters: ['web'],
          defaultSubnets: ['subnet-0a1'],
          targets: [{ name: 'default', account: '999999999999', region: 'us-east-1' }],
        }),
    ).toThrow(/default/);
  });

  it('the construct refuses two targets in one account and Region, and a target in its own', () => {
    const build = (targets: { name: string; account: string; region: string }[]) => () =>
      new EcsReconciler(new Stack(new App(), 'Home', { env: { account: '111111111111', region: 'eu-west-1' } }), 'Reconciler', {
        clusters: ['web'],
        defaultSubnets: ['subnet-0a1'],
        targets,
      });
    expect(build([{ name: 'blue', account: '222222222222', region: 'us-east-1' }, { name: 'green', account: '222222222222', region: 'us-east-1' }])).toThrow(
      /Target "green": account 222222222222 Region us-east-1 is already target "blue"'s; one target per account and Region/,
    );
    expect(build([{ name: 'home', account: '111111111111', region: 'eu-west-1' }])).toThrow(/Target "home": .* is already target "default"'s/);
    expect(build([{ name: 'blue', account: '222222222222', region: 'us-east-1' }, { name: 'green', account: '222222222222', region: 'eu-west-1' }])).not.toThrow();
  });
});

/**
 * The durable description cache in a pass, against the ECS simulator with ECS's
 * throttling and dynalite: a new container whose lease leaves time to describe only part of the
 * fleet (`cold-start.test.ts` shows it deferring without the cache) reads the cache in bulk and
 * compares every service on its first pass; a cache that is empty, corrupt or missing leaves it
 * describing what it lacks, as without the table, and the pass never fails for it.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { CreateTableCommand, DeleteItemCommand, DynamoDBClient, PutItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { RegisterTaskDefinitionCommand } from '@aws-sdk/client-ecs';
import { taskDefinitionCacheTableDefinition } from '../../lambda/adapters/dynamo-task-definition-cache';
import { ENV } from '../../lambda/config';
import { CACHE_CONFIRMATIONS_PER_PASS, DRIFT_CONFIRMATIONS_PER_PASS, type PassSummary } from '../../lambda/core/pass';
import { ConditionType, Reason } from '../../lambda/core/status';
import { LOCAL } from '../runtime/support';
import { aSpecItem, personEcs, useSimHarness } from '../break/support';

const FLEET = 60;
const name = (i: number) => `s${String(i).padStart(3, '0')}`;
/** As in cold-start.test.ts: time to describe about 47 of the 60 task definitions. */
const SHORT_LEASE_SECONDS = 9;
const CACHE_TABLE = 'td-cache';

describe('a new container with the durable task definition cache', () => {
  const h = useSimHarness({ resetEach: false });
  let ddb: DynamoDBClient;

  async function cacheItems() {
    return (await ddb.send(new ScanCommand({ TableName: CACHE_TABLE }))).Items ?? [];
  }

  /** The first pass of a new container: short lease, calls counted from here. */
  async function newContainerPass(holder: string): Promise<PassSummary> {
    h.newContainer();
    h.sim.advance(60);
    h.sim.clearCalls();
    return h.runtime.run({ holder, leaseTtlSeconds: SHORT_LEASE_SECONDS });
  }

  const describes = () => h.sim.calls({ action: 'DescribeTaskDefinition' }).length;
  /**
   * Describes of revisions the cache lacked: all of them less the cached descriptions the pass had
   * ECS confirm (a few a pass, `CACHE_CONFIRMATIONS_PER_PASS`; the cache is trusted for nothing alone).
   */
  const described = (s: PassSummary) => {
    const confirmed = s.taskDefinitionCache?.confirmed ?? 0;
    expect(confirmed).toBeLessThanOrEqual(CACHE_CONFIRMATIONS_PER_PASS);
    return describes() - confirmed;
  };
  const notCompared = (s: PassSummary) =>
    Object.entries(s.statuses).filter(([, st]) => st.conditions.some((c) => c.type === ConditionType.Incomplete && c.reason === Reason.TaskDefinitionNotDescribed));

  beforeAll(async () => {
    ddb = new DynamoDBClient({ ...LOCAL, endpoint: h.db.endpoint });
    await ddb.send(new CreateTableCommand(taskDefinitionCacheTableDefinition(CACHE_TABLE)));
    await h.reset({ env: { [ENV.taskDefinitionCacheTable]: CACHE_TABLE } });
    for (let i = 0; i < FLEET; i++) await h.putSpec(aSpecItem({ service: name(i), desiredCount: 1 }));
    await h.converge(20);
  });

  it('the container that registered the fleet wrote every revision in use to the cache', async () => {
    const arns = (await cacheItems()).map((i) => i.arn.S);
    expect(arns).toHaveLength(FLEET);
    expect(arns.every((a) => a?.includes(':task-definition/apps-s'))).toBe(true);
  });

  it('a new container compares every service on its first pass without describing any revision', async () => {
    const s = await newContainerPass('warm-1');
    expect(described(s)).toBe(0);
    expect(s.taskDefinitionCache?.replaced).toEqual([]);
    expect(s.counts.taskDefinitionsPending).toBe(0);
    expect(notCompared(s)).toEqual([]);
    expect(Object.keys(s.statuses)).toHaveLength(FLEET);
    expect(s.actions).toEqual([]);
    expect(s.errors).toEqual([]);
  });

  it('a revision set by hand is not in the cache: described and corrected on the first pass', async () => {
    const person = personEcs(h);
    const td = await person.send(
      new RegisterTaskDefinitionCommand({
        family: 'hand-made',
        networkMode: 'awsvpc',
        requiresCompatibilities: ['FARGATE'],
        cpu: '256',
        memory: '512',
        containerDefinitions: [{ name: name(5), image: 'public.ecr.aws/nginx/nginx:1.25', essential: true }],
      }),
    );
    person.destroy();
    const handArn = td.taskDefinition?.taskDefinitionArn ?? '';
    h.sim.setTaskDefinition({ cluster: 'apps', service: name(5), taskDefinition: handArn });

    const s = await newContainerPass('warm-hand');

    // By ARN, only the hand-made revision besides the sweep's confirmations (the actuator also asks
    // for the family's latest revision before registering).
    const byArn = h.sim.calls({ action: 'DescribeTaskDefinition' }).map((c) => String(c.request.taskDefinition)).filter((t) => t.startsWith('arn:'));
    expect(byArn).toContain(handArn);
    expect(byArn.length - (s.taskDefinitionCache?.confirmed ?? 0)).toBe(1);
    expect(s.actions.filter((a) => a.type === 'UpdateService').map((a) => [a.service, a.kind, a.outcome])).toEqual([[name(5), 'drift', 'applied']]);
    expect(notCompared(s)).toEqual([]);
    await h.converge(20);
  });

  it('behind more drift corrections than a pass can send, spec edits are confirmed first and rolled out on the first pass', async () => {
    // Prepare: every other service scaled by hand (each correction decides by a cached revision ECS
    // must confirm first) and spec edits on the last services in order.
    const drifted = Array.from({ length: FLEET - 3 }, (_, i) => name(i));
    const edited = [name(FLEET - 3), name(FLEET - 2), name(FLEET - 1)];
    expect(drifted.length).toBeGreaterThan(DRIFT_CONFIRMATIONS_PER_PASS);
    for (const service of drifted) h.sim.setDesiredCount({ cluster: 'apps', service, desiredCount: 2 });
    for (const service of edited) await h.putSpec(aSpecItem({ service, desiredCount: 1, image: 'public.ecr.aws/nginx/nginx:1.28' }));

    // Act
    const s = await newContainerPass('warm-behind-drift');

    // Assess: the spec edits' revisions were asked of ECS before any correction's, and rolled out.
    const asked = h.sim
      .calls({ action: 'DescribeTaskDefinition' })
      .map((c) => String(c.request.taskDefinition))
      .filter((t) => t.startsWith('arn:'));
    const serviceOf = (arn: string) => /task-definition\/apps-(s\d+):/.exec(arn)?.[1] ?? arn;
    const firstCorrection = asked.findIndex((arn) => drifted.includes(serviceOf(arn)));
    const lastEdit = Math.max(...edited.map((e) => asked.findIndex((arn) => serviceOf(arn) === e)));
    expect(lastEdit).toBeGreaterThanOrEqual(0);
    expect(lastEdit).toBeLessThan(firstCorrection);
    const updated = (drift: boolean) =>
      s.actions.filter((a) => a.type === 'UpdateService' && a.outcome === 'applied' && (a.kind === 'drift') === drift).map((a) => a.service);
    expect(updated(false).sort()).toEqual(edited);
    // No more corrections confirmed than a pass can send; the others wait.
    const correctionsAsked = new Set(asked.map(serviceOf).filter((svc) => drifted.includes(svc)));
    expect(correctionsAsked.size).toBeLessThanOrEqual(DRIFT_CONFIRMATIONS_PER_PASS + CACHE_CONFIRMATIONS_PER_PASS);
    // Their desiredCount is corrected all the same; their task definitions are compared on a later pass.
    const waiting = notCompared(s).map(([id]) => id.split('/')[1]);
    expect(waiting.length).toBeGreaterThan(0);
    expect(waiting.every((svc) => drifted.includes(svc) && !correctionsAsked.has(svc))).toBe(true);
    await h.converge(20);
    for (const service of drifted) expect((await h.status({ cluster: 'apps', service }))?.phase).toBe('Converged');
  });

  it('a corrupt cache (every item garbage) is ignored: the container describes instead, acts on nothing wrongly, and rewrites it', async () => {
    for (const item of await cacheItems()) {
      await ddb.send(new PutItemCommand({ TableName: CACHE_TABLE, Item: { arn: item.arn, v: { N: '1' }, body: { B: Buffer.from('garbage') }, sha: { S: 'x' }, seenOn: { S: 'x' } } }));
    }
    await ddb.send(new PutItemCommand({ TableName: CACHE_TABLE, Item: { arn: { S: 'not-an-arn' }, whatever: { BOOL: true } } }));

    const first = await newContainerPass('corrupt-1');
    expect(first.outcome).toBe('completed');
    expect(describes()).toBeGreaterThan(0);
    expect(first.actions).toEqual([]);
    expect(first.errors).toEqual([]);
    // The descriptions it paid for replace the garbage, so the next new container is warm again.
    const second = await newContainerPass('corrupt-2');
    const third = await newContainerPass('corrupt-3');
    expect(notCompared(third)).toEqual([]);
    expect(described(third)).toBe(0);
    expect([second.actions, third.actions]).toEqual([[], []]);
  });

  it('an empty cache: the container describes as without one, and fills it', async () => {
    for (const item of await cacheItems()) await ddb.send(new DeleteItemCommand({ TableName: CACHE_TABLE, Key: { arn: item.arn } }));
    const first = await newContainerPass('empty-1');
    expect(described(first) + first.counts.taskDefinitionsPending).toBe(FLEET);
    expect(first.actions).toEqual([]);
    await newContainerPass('empty-2');
    expect((await cacheItems()).length).toBe(FLEET);
    const warm = await newContainerPass('empty-3');
    expect(described(warm)).toBe(0);
    expect(notCompared(warm)).toEqual([]);
  });

  it('a missing cache table: the pass completes, describes what it lacks, and warns', async () => {
    h.newContainer({ [ENV.taskDefinitionCacheTable]: 'no-such-table' });
    h.sim.advance(60);
    const s = await h.runtime.run({ holder: 'missing' });
    expect(s.outcome).toBe('completed');
    expect(s.actions).toEqual([]);
    expect(notCompared(s)).toEqual([]);
    expect(h.log.lines.some((e) => e.level === 'warn' && /task definition cache/.test(e.message))).toBe(true);
    h.newContainer({ [ENV.taskDefinitionCacheTable]: CACHE_TABLE });
  });
});

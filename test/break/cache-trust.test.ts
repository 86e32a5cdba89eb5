/**
 * The durable task definition cache is a cache, never a witness: entries written straight to its
 * table, well formed (gzip, a matching SHA-256, the ARN of their key) but not what ECS describes.
 * Against the ECS simulator and dynalite, each pass in a new container (the one that reads the
 * table in bulk), as after a deploy or when Lambda replaces containers.
 *
 * - An entry of the running revision with another description: the pass would "roll out" the
 *   revision already running and then mark the healthy service RolloutFailed. It must confirm the
 *   description with ECS before acting or judging, and put ECS's description back in the table.
 * - A hand edit to a foreign revision whose entry is forged to look like the spec: the pass would
 *   see no drift, indefinitely. A revision the service did not run at its last status is confirmed
 *   at the first pass that sees it; when ECS cannot confirm it then, the sweep confirms every
 *   revision in use read from the cache within ceil(n / CACHE_CONFIRMATIONS_PER_PASS) passes a
 *   minute apart (n revisions in use).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { CreateTableCommand, DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { RegisterTaskDefinitionCommand, UpdateServiceCommand } from '@aws-sdk/client-ecs';
import { taskDefinitionCacheTableDefinition } from '../../lambda/adapters/dynamo-task-definition-cache';
import { ENV } from '../../lambda/config';
import { CACHE_CONFIRMATIONS_PER_PASS, type PassSummary } from '../../lambda/core/pass';
import { Reason } from '../../lambda/core/status';
import type { TaskDefinition } from '../../lambda/core/types';
import { LOCAL } from '../runtime/support';
import { aSpecItem, personEcs, useSimHarness } from './support';

const SPEC_IMAGE = 'public.ecr.aws/nginx/nginx:1.27';
const HAND_IMAGE = 'public.ecr.aws/nginx/nginx:1.25';

describe('the durable task definition cache is checked against ECS', () => {
  const h = useSimHarness({ resetEach: false });
  let ddb: DynamoDBClient;
  let table = '';
  let tables = 0;

  beforeEach(async () => {
    ddb = new DynamoDBClient({ ...LOCAL, endpoint: h.db.endpoint });
    table = `td-trust-${++tables}`;
    await ddb.send(new CreateTableCommand(taskDefinitionCacheTableDefinition(table)));
    await h.reset({ env: { [ENV.taskDefinitionCacheTable]: table } });
  });
  afterEach(() => ddb.destroy());

  async function cached(arn: string): Promise<TaskDefinition | undefined> {
    const item = (await ddb.send(new GetItemCommand({ TableName: table, Key: { arn: { S: arn } } }))).Item;
    return item?.body?.B ? (JSON.parse(gunzipSync(item.body.B).toString('utf8')) as TaskDefinition) : undefined;
  }

  /** Writes a well-formed entry for `arn` (what anyone who may write the table can do). */
  async function forge(arn: string, td: TaskDefinition): Promise<void> {
    const text = JSON.stringify(td);
    const today = h.sim.clock.now().toISOString().slice(0, 10);
    await ddb.send(
      new PutItemCommand({
        TableName: table,
        Item: {
          arn: { S: arn },
          v: { N: '1' },
          body: { B: gzipSync(text) },
          sha: { S: createHash('sha256').update(text).digest('hex') },
          seenOn: { S: today },
          expiresAt: { N: String(Math.floor(Date.parse(today) / 1000) + 30 * 86_400) },
        },
      }),
    );
  }

  /** A pass a minute after the last one, in a new container (it reads the cache table first). */
  async function newContainerPass(holder: string): Promise<PassSummary> {
    h.sim.advance(60);
    h.newContainer();
    h.sim.clearCalls();
    return h.runtime.run({ holder });
  }

  const rolloutFailed = (s: PassSummary) =>
    Object.entries(s.statuses).filter(([, st]) => st.conditions.some((c) => c.reason === Reason.RolloutFailed)).map(([id]) => id);
  const ecsWrites = () => h.sim.calls().filter((c) => ['RegisterTaskDefinition', 'UpdateService', 'CreateService', 'DeleteService'].includes(c.action));
  const image = (td: TaskDefinition | undefined) => td?.containerDefinitions?.[0]?.image;

  async function fleet(names: string[]): Promise<Map<string, string>> {
    for (const service of names) await h.putSpec(aSpecItem({ service, desiredCount: 1 }));
    await h.converge(20);
    const arns = new Map<string, string>();
    for (const service of names) arns.set(service, (await h.describe('apps', service))?.taskDefinition ?? '');
    return arns;
  }

  /**
   * Registers a revision of the service's own family by hand, with another image, and points
   * `service` at it, as a person in the console would.
   */
  async function handEdit(service: string): Promise<string> {
    const person = personEcs(h);
    try {
      const td = await person.send(
        new RegisterTaskDefinitionCommand({
          family: `apps-${service}`,
          networkMode: 'awsvpc',
          requiresCompatibilities: ['FARGATE'],
          cpu: '256',
          memory: '512',
          containerDefinitions: [{ name: service, image: HAND_IMAGE, essential: true }],
        }),
      );
      const arn = td.taskDefinition?.taskDefinitionArn ?? '';
      await person.send(new UpdateServiceCommand({ cluster: 'apps', service, taskDefinition: arn }));
      return arn;
    } finally {
      person.destroy();
    }
  }

  /** The spec revision's description, relabelled as the revision `arn` (its key, family and revision). */
  async function lookingLikeTheSpec(specArn: string, arn: string): Promise<TaskDefinition> {
    const spec = (await cached(specArn)) as TaskDefinition;
    const [, family, revision] = /task-definition\/(.+):(\d+)$/.exec(arn) as RegExpExecArray;
    return { ...spec, taskDefinitionArn: arn, family, revision: Number(revision) };
  }

  it('an entry of the running revision with another description: no rollout, no RolloutFailed, the entry is put right', async () => {
    const arns = await fleet(['web', 'api']);
    const web = arns.get('web') as string;
    const real = (await cached(web)) as TaskDefinition;
    expect(image(real)).toBe(SPEC_IMAGE);
    const tampered: TaskDefinition = {
      ...real,
      containerDefinitions: [{ ...real.containerDefinitions?.[0], image: 'public.ecr.aws/evil/evil:1' }, ...(real.containerDefinitions ?? []).slice(1)],
    };
    await forge(web, tampered);

    const passes: PassSummary[] = [];
    const writes: string[] = [];
    for (let i = 0; i < 4; i++) {
      passes.push(await newContainerPass(`tampered-${i}`));
      writes.push(...ecsWrites().map((c) => `${c.action} ${String(c.request.service ?? c.request.family ?? '')}`));
    }

    expect(writes).toEqual([]);
    expect(passes.map((s) => s.actions)).toEqual([[], [], [], []]);
    expect(passes.flatMap(rolloutFailed)).toEqual([]);
    for (const s of passes) expect(Object.values(s.statuses).map((st) => st.phase)).toEqual(['Converged', 'Converged']);
    // The first pass confirmed the entry with ECS and wrote ECS's description back.
    expect(passes[0].taskDefinitionCache?.replaced).toEqual([web]);
    expect(image(await cached(web))).toBe(SPEC_IMAGE);
    expect(passes.slice(1).map((s) => s.taskDefinitionCache?.replaced ?? [])).toEqual([[], [], []]);
  });

  it('a hand edit to a foreign revision whose entry is forged to look like the spec: corrected at the first pass', async () => {
    const arns = await fleet(['web', 'api']);
    const foreign = await handEdit('web');
    await forge(foreign, await lookingLikeTheSpec(arns.get('web') as string, foreign));

    const s = await newContainerPass('forged');

    expect(s.actions.map((a) => [a.type, a.service, a.kind, a.outcome])).toEqual([
      ['RegisterTaskDefinition', 'web', undefined, 'applied'],
      ['UpdateService', 'web', 'drift', 'applied'],
    ]);
    expect(s.actions[1].changes?.map((c) => [c.field, c.from, c.to])).toContainEqual(['containerDefinitions[web].image', HAND_IMAGE, SPEC_IMAGE]);
    expect(s.taskDefinitionCache?.replaced).toEqual([foreign]);
    expect(image(await cached(foreign))).toBe(HAND_IMAGE);
    await h.converge(20);
    const now = (await h.describe('apps', 'web'))?.taskDefinition ?? '';
    expect(now).not.toBe(foreign);
    expect(image(await cached(now))).toBe(SPEC_IMAGE);
  });

  it('the same forgery when ECS cannot confirm it at first: left alone, then found by the sweep within ceil(n / 20) passes', async () => {
    const names = Array.from({ length: 45 }, (_, i) => `s${String(i).padStart(2, '0')}`);
    const arns = await fleet(names);
    const victim = 's37';
    const foreign = await handEdit(victim);
    await forge(foreign, await lookingLikeTheSpec(arns.get(victim) as string, foreign));

    // IAM refuses DescribeTaskDefinition for a pass: the forged description is not used.
    const denied = h.sim.injectFault({ action: 'DescribeTaskDefinition', errorType: 'AccessDeniedException', message: 'not authorized to perform: ecs:DescribeTaskDefinition' });
    const first = await newContainerPass('denied');
    h.sim.removeFault(denied);
    expect(first.actions).toEqual([]);
    expect(first.taskDefinitionCache?.unconfirmed).toEqual([foreign]);
    const left = first.statuses[`apps/${victim}`];
    expect(left.conditions.map((c) => c.reason)).toContain(Reason.TaskDefinitionNotDescribed);
    // Its status now remembers the foreign revision: later passes no longer see a revision change.
    expect((await h.status({ cluster: 'apps', service: victim }))?.taskDefinitionArn).toBe(foreign);

    const bound = Math.ceil((names.length + 1) / CACHE_CONFIRMATIONS_PER_PASS);
    const later: PassSummary[] = [];
    let describes = 0;
    for (let i = 0; i < bound; i++) {
      const s = await newContainerPass(`sweep-${i}`);
      later.push(s);
      describes = Math.max(describes, h.sim.calls({ action: 'DescribeTaskDefinition' }).filter((c) => String(c.request.taskDefinition).startsWith('arn:')).length);
      if (s.actions.length > 0) break;
    }

    const corrected = later.flatMap((s) => s.actions.filter((a) => a.type === 'UpdateService').map((a) => [a.service, a.kind, a.outcome]));
    expect(corrected).toEqual([[victim, 'drift', 'applied']]);
    // No pass described more than the sweep's share (and the revision it then acted on).
    expect(describes).toBeLessThanOrEqual(CACHE_CONFIRMATIONS_PER_PASS + 1);
    expect(later.flatMap(rolloutFailed)).toEqual([]);
  });
});

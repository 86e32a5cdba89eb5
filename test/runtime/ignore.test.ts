/**
 * A spec's `ignore` against the ECS simulator and dynalite: fields another controller owns (an
 * autoscaler's desiredCount, a pipeline's image or whole task definition, a tag set by hand) are
 * neither compared nor sent, and a revision the spec needs for another reason keeps them as they
 * are live.
 */
import { DescribeTaskDefinitionCommand, ECSClient, RegisterTaskDefinitionCommand, TagResourceCommand, UpdateServiceCommand } from '@aws-sdk/client-ecs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { renderDescribe } from '../../bin/commands/describe';
import { statusReasonLines } from '../../bin/commands/support/format';
import { SpecTable } from '../../bin/commands/support/spec-table';
import { parseSpecItem } from '../../lambda/core/spec';
import { aSpecItem, LOCAL, useSimHarness } from './support';

const WEB = { cluster: 'apps', service: 'web' };

describe('ignore', () => {
  const h = useSimHarness();
  let ecs: ECSClient;
  beforeEach(() => {
    ecs = new ECSClient({ ...LOCAL, endpoint: h.sim.endpoint });
  });
  afterEach(() => ecs.destroy());

  /** Registers a revision of the service's family with `image` and points the service at it, as a deploy pipeline does. */
  async function pipelineDeploys(image: string): Promise<string> {
    const live = await h.describe('apps', 'web');
    const td = (await ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: live?.taskDefinition }))).taskDefinition!;
    const { taskDefinitionArn: _a, revision: _r, status: _s, requiresAttributes: _q, compatibilities: _c, registeredAt: _t, registeredBy: _b, ...input } = td;
    const next = await ecs.send(
      new RegisterTaskDefinitionCommand({ ...input, family: td.family!, containerDefinitions: td.containerDefinitions!.map((c) => ({ ...c, image })) }),
    );
    await ecs.send(new UpdateServiceCommand({ cluster: 'apps', service: 'web', taskDefinition: next.taskDefinition!.taskDefinitionArn }));
    return next.taskDefinition!.taskDefinitionArn!;
  }

  async function liveImage(): Promise<string | undefined> {
    const live = await h.describe('apps', 'web');
    const td = (await ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: live?.taskDefinition }))).taskDefinition!;
    return td.containerDefinitions?.[0]?.image;
  }

  it('desiredCount: a count an autoscaler set is left alone, and the status counts against the live desired count', async () => {
    // Prepare
    await h.putSpec(aSpecItem({ desiredCount: 2, ignore: ['desiredCount'] }));
    await h.converge();
    await ecs.send(new UpdateServiceCommand({ cluster: 'apps', service: 'web', desiredCount: 4 }));
    h.sim.advance(60);
    h.sim.clearCalls();
    // Act
    const passes = await h.converge();
    // Assess
    expect(h.writes()).toEqual([]);
    expect((await h.describe('apps', 'web'))?.desiredCount).toBe(4);
    const status = await h.status(WEB);
    expect(status?.phase).toBe('Converged');
    expect(status?.desiredCount).toBe(4);
    expect(passes.flatMap((p) => p.actions)).toEqual([]);
    // ecsr get and describe say what is left alone.
    const entry = (await new SpecTable(h.table, h.doc).get(WEB))!;
    expect(statusReasonLines([entry], 200)).toEqual(['apps/web: left to another controller (ignore): desiredCount']);
    expect(renderDescribe(entry, { tasks: [] }, { table: h.table, events: 0, width: 200 })).toMatch(/Left alone: +desiredCount \(ignore: another controller owns them\)/);
  });

  it('containerDefinitions[*].image: a pipeline\'s image stays; a spec change registers a revision with the live image and the spec\'s new value', async () => {
    // Prepare: the pipeline deploys nginx 1.28 after the reconciler created the service with 1.27.
    await h.putSpec(aSpecItem({ desiredCount: 1, ignore: ['containerDefinitions[*].image'] }));
    await h.converge();
    const pipelines = await pipelineDeploys('public.ecr.aws/nginx/nginx:1.28');
    h.sim.advance(60);
    h.sim.clearCalls();
    // Act
    await h.converge();
    const writesAfterPipeline = h.writes();
    await h.editSpec(WEB, { environment: { LOG_LEVEL: 'debug' } });
    h.sim.advance(60);
    const changed = await h.pass('changed');
    // Assess
    expect(writesAfterPipeline).toEqual([]);
    expect(changed.actions.map((a) => `${a.type} ${a.outcome}`)).toEqual(['RegisterTaskDefinition applied', 'UpdateService applied']);
    const live = await h.describe('apps', 'web');
    expect(live?.taskDefinition).not.toBe(pipelines);
    expect(await liveImage()).toBe('public.ecr.aws/nginx/nginx:1.28');
    const td = (await ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: live?.taskDefinition }))).taskDefinition!;
    expect(td.containerDefinitions?.[0]?.environment).toEqual([{ name: 'LOG_LEVEL', value: 'debug' }]);
  });

  it('the same pipeline deploy without ignore is drift: the spec\'s image is put back', async () => {
    // Prepare
    await h.putSpec(aSpecItem({ desiredCount: 1 }));
    await h.converge();
    await pipelineDeploys('public.ecr.aws/nginx/nginx:1.28');
    h.sim.advance(60);
    // Act
    const s = await h.pass('drift');
    // Assess
    expect(s.actions.map((a) => a.type)).toEqual(['RegisterTaskDefinition', 'UpdateService']);
    expect(await liveImage()).toBe('public.ecr.aws/nginx/nginx:1.27');
  });

  it('taskDefinition: the pipeline\'s revision stays; a spec change of a service field is still applied', async () => {
    // Prepare
    await h.putSpec(aSpecItem({ desiredCount: 1, ignore: ['taskDefinition'] }));
    await h.converge();
    const pipelines = await pipelineDeploys('public.ecr.aws/nginx/nginx:1.28');
    h.sim.advance(60);
    // Act
    await h.editSpec(WEB, { desiredCount: 2, image: 'public.ecr.aws/nginx/nginx:1.29' });
    h.sim.advance(60);
    const s = await h.pass('changed');
    // Assess
    expect(s.actions.map((a) => a.type)).toEqual(['UpdateService']);
    const update = s.actions[0] as { input?: Record<string, unknown> };
    expect((await h.describe('apps', 'web'))?.taskDefinition).toBe(pipelines);
    expect((await h.describe('apps', 'web'))?.desiredCount).toBe(2);
    expect(update.input?.taskDefinition).toBeUndefined();
  });

  it('tags: a service tag changed by hand is not set back', async () => {
    // Prepare
    await h.putSpec(aSpecItem({ desiredCount: 1, tags: { team: 'web' }, ignore: ['tags'] }));
    await h.converge();
    const arn = (await h.describe('apps', 'web'))!.serviceArn!;
    await ecs.send(new TagResourceCommand({ resourceArn: arn, tags: [{ key: 'team', value: 'platform' }] }));
    h.sim.advance(60);
    h.sim.clearCalls();
    // Act
    await h.converge();
    // Assess
    expect(h.writes()).toEqual([]);
    expect((await h.describe('apps', 'web'))?.tags?.find((t) => t.key === 'team')?.value).toBe('platform');
  });
});

describe('ignore entries the parser refuses', () => {
  it.each([
    { entry: 'desiredcount', says: '"desiredcount" is not a field the reconciler can leave alone' },
    { entry: 'containerDefinitions[web].imag', says: '"imag" is not a container field ECS has' },
    { entry: 'containerDefinitions[].image', says: 'is not a field the reconciler can leave alone' },
    { entry: 'family', says: '"family" is not a field the reconciler can leave alone' },
  ])('$entry: the status names the entry and what is allowed', ({ entry, says }) => {
    const r = parseSpecItem(aSpecItem({ ignore: ['desiredCount', entry] }));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map((e) => e.path)).toEqual(['ignore[1]']);
    expect(r.errors[0].message).toContain(says);
  });

  it.each(['desiredCount', 'networkConfiguration', 'platformVersion', 'taskDefinition', 'cpu', 'taskRoleArn', 'containerDefinitions[web].image', 'containerDefinitions[*].environment'])(
    'accepts %s',
    (entry) => {
      expect(parseSpecItem(aSpecItem({ ignore: [entry] })).ok).toBe(true);
    },
  );
});

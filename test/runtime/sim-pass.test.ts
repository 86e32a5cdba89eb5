/**
 * Full passes over HTTP: the runtime (`createRuntime`) against dynalite and the ECS simulator,
 * with the simulator's virtual clock advanced between passes.
 */
import { describe, expect, it } from 'vitest';
import { CreateServiceCommand, ECSClient, RegisterTaskDefinitionCommand } from '@aws-sdk/client-ecs';
import { DynamoSpecStore } from '../../lambda/adapters/dynamo-spec-store';
import { METRIC } from '../../lambda/core/metric-names';
import { OWNER_TAG_KEY } from '../../lambda/core/ports';
import { Reason } from '../../lambda/core/status';
import { aSpecItem, aValidSpec, isEcsWrite, LOCAL, useSimHarness } from './support';

const WEB = { cluster: 'apps', service: 'web' };
const API = { cluster: 'apps', service: 'api' };

describe('full passes against dynalite and the ECS simulator', () => {
  const h = useSimHarness();

  it('creates from empty and converges', async () => {
    // Prepare
    await h.putSpec(aSpecItem({ desiredCount: 2 }));

    // Act
    const first = await h.pass('p1');
    const rest = await h.converge();

    // Assess
    expect(first.actions.map((a) => [a.type, a.outcome])).toEqual([
      ['RegisterTaskDefinition', 'applied'],
      ['CreateService', 'applied'],
    ]);
    const web = await h.describe('apps', 'web');
    expect(web).toMatchObject({ status: 'ACTIVE', desiredCount: 2, runningCount: 2 });
    expect(web?.tags).toEqual(expect.arrayContaining([{ key: OWNER_TAG_KEY, value: 'sim-test' }]));
    expect(await h.status(WEB)).toMatchObject({ phase: 'Converged', runningCount: 2, lastAppliedSpecHash: aValidSpec().hash });
    expect(rest.at(-1)?.counts.servicesLaggingBeyondGrace).toBe(0);
    expect(h.metrics.latest(METRIC.taskLag, WEB)).toBe(0);
    expect(h.metrics.latest(METRIC.passSucceeded)).toBe(1);
  });

  it('steady state: a pass makes no ECS write calls and no status writes', async () => {
    // Prepare
    await h.putSpec(aSpecItem());
    await h.converge();
    h.sim.clearCalls();
    h.sim.advance(60);

    // Act
    const steady = await h.pass('steady');

    // Assess
    expect(steady.actions).toEqual([]);
    expect(h.writes()).toEqual([]);
    expect(steady.counts.statusesWritten).toBe(0);
    expect(h.sim.calls({ action: 'DescribeTaskDefinition' })).toHaveLength(0);
  });

  it('reverts drift made out of band (desiredCount scaled in the console)', async () => {
    // Prepare
    await h.putSpec(aSpecItem({ desiredCount: 2 }));
    await h.converge();
    h.sim.setDesiredCount({ cluster: 'apps', service: 'web', desiredCount: 5 });
    h.sim.clearCalls();

    // Act
    const corrected = await h.pass('drift');

    // Assess
    expect(corrected.actions).toHaveLength(1);
    expect(corrected.actions[0]).toMatchObject({ type: 'UpdateService', kind: 'drift', outcome: 'applied' });
    expect(corrected.actions[0].changes).toEqual([{ field: 'desiredCount', from: '5', to: '2' }]);
    expect(h.sim.calls({ action: 'UpdateService' }).map((c) => c.request.desiredCount)).toEqual([2]);
    expect(corrected.counts.driftCorrections).toBe(1);
    expect(h.metrics.latest(METRIC.driftCorrections)).toBe(1);
    expect((await h.status(WEB))?.drift).toEqual(['desiredCount 5 -> 2']);
    const line = h.log.lines.find((l) => l.message === 'UpdateService apps/web applied');
    expect(line?.fields).toMatchObject({ kind: 'drift', changes: [{ field: 'desiredCount', from: '5', to: '2' }] });
  });

  it('rolls out an image change with a new revision and converges on it', async () => {
    // Prepare
    await h.putSpec(aSpecItem({ image: 'public.ecr.aws/nginx/nginx:1.27' }));
    await h.converge();
    await h.editSpec(WEB, { image: 'public.ecr.aws/nginx/nginx:1.28' });
    const newHash = aValidSpec({ image: 'public.ecr.aws/nginx/nginx:1.28' }).hash;

    // Act
    const rollout = await h.pass('rollout');
    await h.converge();

    // Assess
    expect(rollout.actions.map((a) => [a.type, a.kind, a.outcome])).toEqual([
      ['RegisterTaskDefinition', undefined, 'applied'],
      ['UpdateService', 'rollout', 'applied'],
    ]);
    expect(rollout.counts.driftCorrections).toBe(0);
    const web = await h.describe('apps', 'web');
    expect(web?.taskDefinition).toMatch(/apps-web:2$/);
    expect(web?.runningCount).toBe(2);
    expect(await h.status(WEB)).toMatchObject({ phase: 'Converged', lastAppliedSpecHash: newHash });
  });

  it('prunes an owned service whose spec was deleted (scale to zero, then delete)', async () => {
    // Prepare
    await h.putSpec(aSpecItem({ service: 'web' }));
    await h.putSpec(aSpecItem({ service: 'api' }));
    await h.converge();
    await h.deleteSpec(API);
    h.sim.clearCalls();

    // Act
    const prune = await h.pass('prune');

    // Assess
    expect(prune.actions.map((a) => [a.type, a.service, a.outcome])).toEqual([['DeleteService', 'api', 'applied']]);
    expect(h.writes()).toEqual(['UpdateService', 'DeleteService']);
    expect(h.sim.calls({ action: 'UpdateService' })[0].request).toMatchObject({ service: 'api', desiredCount: 0 });
    expect((await h.describe('apps', 'api'))?.status).toMatch(/DRAINING|INACTIVE/);
    expect((await h.describe('apps', 'web'))?.status).toBe('ACTIVE');
    expect(await h.item(API)).toBeUndefined();
  });

  it('leaves a service it does not own untouched, and says so when a spec names it', async () => {
    // Prepare: a service created by someone else (no owner tag).
    const ecs = new ECSClient({ ...LOCAL, endpoint: h.sim.endpoint });
    const td = await ecs.send(
      new RegisterTaskDefinitionCommand({
        family: 'legacy',
        networkMode: 'awsvpc',
        requiresCompatibilities: ['FARGATE'],
        cpu: '256',
        memory: '512',
        containerDefinitions: [{ name: 'legacy', image: 'public.ecr.aws/nginx/nginx:1.25', essential: true }],
      }),
    );
    await ecs.send(
      new CreateServiceCommand({
        cluster: 'apps',
        serviceName: 'legacy',
        taskDefinition: td.taskDefinition?.taskDefinitionArn,
        desiredCount: 1,
        launchType: 'FARGATE',
        networkConfiguration: { awsvpcConfiguration: { subnets: ['subnet-0123456789abcdef0'] } },
      }),
    );
    ecs.destroy();
    await h.putSpec(aSpecItem({ service: 'web' }));
    await h.putSpec(aSpecItem({ service: 'legacy', desiredCount: 3 }));
    h.sim.clearCalls();

    // Act
    const summaries = await h.passUntil((s) => s.statuses['apps/web']?.phase === 'Converged');

    // Assess
    const writesToLegacy = h.sim.calls().filter((c) => isEcsWrite(c.action) && JSON.stringify(c.request).includes('legacy'));
    expect(writesToLegacy).toEqual([]);
    expect(h.writes().length).toBeGreaterThan(0);
    expect(summaries.flatMap((s) => s.actions).filter((a) => a.service === 'legacy')).toEqual([]);
    expect((await h.describe('apps', 'legacy'))?.desiredCount).toBe(1);
    const legacy = await h.status({ cluster: 'apps', service: 'legacy' });
    expect(legacy?.phase).toBe('Blocked');
    expect(legacy?.conditions.find((c) => c.type === 'Blocked')?.reason).toBe(Reason.NotOwned);
  });

  it('reports an invalid item while the others converge', async () => {
    // Prepare
    await h.putSpec(aSpecItem({ service: 'web' }));
    await h.putSpec(aSpecItem({ service: 'broken', cpu: 3 }));

    // Act
    const summaries = await h.passUntil((s) => s.statuses['apps/web']?.phase === 'Converged');

    // Assess
    expect(summaries[0].counts).toMatchObject({ specs: 2, invalid: 1 });
    expect(summaries.flatMap((s) => s.actions).filter((a) => a.service === 'broken')).toEqual([]);
    const broken = await h.status({ cluster: 'apps', service: 'broken' });
    expect(broken?.phase).toBe('Invalid');
    expect(broken?.conditions.find((c) => c.reason === Reason.SpecInvalid)?.message).toContain('cpu');
    expect(h.metrics.latest(METRIC.invalidSpecs)).toBe(1);
    expect((await h.describe('apps', 'web'))?.runningCount).toBe(2);
  });

  it('does not re-apply a rollout that failed (unpullable image, circuit breaker)', async () => {
    // Prepare: a converged service, then an image the simulator cannot pull.
    await h.putSpec(aSpecItem({ image: 'public.ecr.aws/nginx/nginx:1.27', desiredCount: 2 }));
    await h.converge();
    await h.editSpec(WEB, { image: 'public.ecr.aws/nginx/does-not-exist:1' });
    const badHash = aValidSpec({ image: 'public.ecr.aws/nginx/does-not-exist:1' }).hash;

    // Act: passes until the status records the failed hash, then three more.
    await h.passUntil((s) => s.statuses['apps/web']?.failedSpecHash === badHash, 40);
    h.sim.clearCalls();
    const after = [];
    for (let i = 0; i < 3; i++) {
      h.sim.advance(60);
      after.push(await h.pass(`after-${i}`));
    }

    // Assess
    expect(h.writes()).toEqual([]);
    expect(after.flatMap((s) => s.actions)).toEqual([]);
    const status = await h.status(WEB);
    expect(status?.phase).toBe('Degraded');
    expect(status?.failedSpecHash).toBe(badHash);
    const failed = status?.conditions.find((c) => c.reason === Reason.RolloutFailed);
    expect(failed?.message).toMatch(/circuit breaker/);
    const web = await h.describe('apps', 'web');
    expect(web?.taskDefinition).toMatch(/apps-web:1$/);
  });

  it('waits for a DRAINING name before creating it again', async () => {
    // Prepare: delete the service through its spec, then want it back at once.
    await h.putSpec(aSpecItem({ desiredCount: 1 }));
    await h.converge();
    await h.editSpec(WEB, { state: 'absent' });
    const deleted = await h.pass('delete');
    expect(deleted.actions.map((a) => a.type)).toEqual(['DeleteService']);
    expect((await h.describe('apps', 'web'))?.status).toBe('DRAINING');
    await h.editSpec(WEB, { state: 'present' });
    h.sim.clearCalls();

    // Act
    const waiting = await h.pass('waiting');
    const summaries = await h.passUntil((s) => s.actions.some((a) => a.type === 'CreateService'), 30);

    // Assess: no create while DRAINING; the status says why; created once INACTIVE.
    expect(waiting.actions.filter((a) => a.type === 'CreateService')).toEqual([]);
    expect(waiting.statuses['apps/web'].conditions.some((c) => c.reason === Reason.PreviousServiceDraining)).toBe(true);
    const created = summaries.at(-1)?.actions.find((a) => a.type === 'CreateService');
    expect(created?.outcome).toBe('applied');
    expect(h.sim.calls({ action: 'CreateService', outcome: 'error' })).toEqual([]);
    await h.converge();
    expect((await h.describe('apps', 'web'))?.status).toBe('ACTIVE');
  });

  it('of two overlapping passes, exactly one acts', async () => {
    // Prepare
    await h.putSpec(aSpecItem());

    // Act
    const both = await Promise.all([h.pass('left'), h.pass('right')]);

    // Assess
    expect(both.map((s) => s.outcome).sort()).toEqual(['completed', 'lease-held']);
    const held = both.find((s) => s.outcome === 'lease-held');
    expect(held?.lease?.holder).toBe(both.find((s) => s.outcome === 'completed')?.holder);
    expect(h.sim.calls({ action: 'CreateService' })).toHaveLength(1);
  });

  it('exits cleanly when another pass holds the lease, naming it', async () => {
    // Prepare
    await h.putSpec(aSpecItem());
    const other = new DynamoSpecStore(h.doc, h.table);
    expect((await other.acquireLease('other-pass', 90, h.sim.clock.now())).acquired).toBe(true);
    h.sim.clearCalls();

    // Act
    const summary = await h.pass('second');

    // Assess
    expect(summary.outcome).toBe('lease-held');
    expect(summary.lease?.holder).toBe('other-pass');
    expect(summary.lease?.expiresAt).toBe(new Date(h.sim.clock.now().getTime() + 90_000).toISOString());
    expect(h.sim.calls()).toEqual([]);
    expect(await h.status(WEB)).toBeUndefined();
    expect(h.log.lines.at(-1)?.fields).toMatchObject({ leaseHolder: 'other-pass' });
  });
});

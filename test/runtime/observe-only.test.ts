/**
 * Observe-only mode against the ECS simulator and dynalite: a spec with `observeOnly: true`, or
 * any spec of a cluster in OBSERVE_ONLY_CLUSTERS, is compared as usual and nothing is written to
 * ECS; the status names what a pass would change, `DriftObserved` counts it and the lag is still
 * reported. Turning the mode off lets the next pass act.
 */
import { CreateServiceCommand, ECSClient, RegisterTaskDefinitionCommand } from '@aws-sdk/client-ecs';
import { describe, expect, it } from 'vitest';
import { renderDescribe } from '../../bin/commands/describe';
import { statusRow } from '../../bin/commands/support/format';
import { SpecTable } from '../../bin/commands/support/spec-table';
import { fleetService } from '../../bin/commands/support/ui-fleet';
import { ENV } from '../../lambda/config';
import { METRIC } from '../../lambda/core/metric-names';
import { OWNER_TAG_KEY } from '../../lambda/core/ports';
import { Reason } from '../../lambda/core/status';
import type { ServiceStatus } from '../../lambda/core/types';
import { aSpecItem, LOCAL, type SimHarness, useSimHarness } from './support';

const WEB = { cluster: 'apps', service: 'web' };

/** A service another tool made (no owner tag), running nginx 1.25 with `desiredCount` tasks. */
async function aServiceMadeByHand(h: SimHarness, service: string, desiredCount: number): Promise<void> {
  const ecs = new ECSClient({ ...LOCAL, endpoint: h.sim.endpoint });
  try {
    const td = await ecs.send(
      new RegisterTaskDefinitionCommand({
        family: `apps-${service}`,
        networkMode: 'awsvpc',
        requiresCompatibilities: ['FARGATE'],
        cpu: '256',
        memory: '512',
        containerDefinitions: [{ name: service, image: 'public.ecr.aws/nginx/nginx:1.25', essential: true }],
      }),
    );
    await ecs.send(
      new CreateServiceCommand({
        cluster: 'apps',
        serviceName: service,
        taskDefinition: td.taskDefinition?.taskDefinitionArn,
        desiredCount,
        launchType: 'FARGATE',
        networkConfiguration: { awsvpcConfiguration: { subnets: ['subnet-0123456789abcdef0'], securityGroups: ['sg-0123456789abcdef0'] } },
      }),
    );
  } finally {
    ecs.destroy();
  }
}

function condition(status: ServiceStatus | undefined, type: string) {
  return status?.conditions.find((c) => c.type === type);
}

function driftObserved(h: SimHarness): number[] {
  return h.metrics.data.filter((d) => d.name === METRIC.driftObserved).map((d) => d.value);
}

describe('a spec with observeOnly: true', () => {
  const h = useSimHarness();

  it('over a service made by hand: no ECS write, no owner tag; the status names each difference, DriftObserved counts it', async () => {
    // Prepare: the spec wants 3 tasks of nginx 1.27; the live service runs 1 of 1.25.
    await aServiceMadeByHand(h, 'web', 1);
    await h.putSpec(aSpecItem({ observeOnly: true, desiredCount: 3 }));
    h.sim.clearCalls();
    // Act
    const first = await h.pass('p1');
    h.sim.advance(60);
    await h.pass('p2');
    h.sim.advance(60);
    const third = await h.pass('p3');
    // Assess
    const status = await h.status(WEB);
    expect(h.writes()).toEqual([]);
    expect(first.actions).toEqual([]);
    expect(status?.phase).toBe('Blocked');
    expect(status?.observeOnly).toBe(true);
    expect(condition(status, 'Blocked')?.reason).toBe(Reason.ObserveOnly);
    expect(condition(status, 'Blocked')?.message).toContain('the spec sets observeOnly: true');
    expect(status?.observedDrift).toEqual(expect.arrayContaining(['desiredCount 1 -> 3']));
    expect(status?.observedDrift?.some((l) => l.includes('nginx:1.25') && l.includes('nginx:1.27'))).toBe(true);
    // Nothing was applied, so no spec hash is recorded as applied.
    expect(status?.lastAppliedSpecHash).toBeUndefined();
    expect((await h.describe('apps', 'web'))?.tags?.some((t) => t.key === OWNER_TAG_KEY)).toBe(false);
    expect(driftObserved(h)).toEqual([1, 1, 1]);
    // Its lag (3 wanted, 1 running) is reported although the service is not ours.
    expect(h.metrics.data.some((d) => d.name === METRIC.taskLag && d.dimensions.Service === 'web')).toBe(true);
    // Once ECS's events settle, an unchanged difference writes no status.
    expect(third.counts.statusesWritten).toBe(0);
  });

  it('in sync with the service: Converged and marked observeOnly, nothing written after the first pass', async () => {
    // Prepare: the reconciler made the service; then the spec turns observe-only.
    await h.putSpec(aSpecItem({ desiredCount: 1 }));
    await h.converge();
    await h.editSpec(WEB, { observeOnly: true });
    h.sim.clearCalls();
    // Act
    const marked = await h.pass('marked');
    h.sim.advance(60);
    const steady = await h.pass('steady');
    // Assess
    const status = await h.status(WEB);
    expect(h.writes()).toEqual([]);
    expect(status?.phase).toBe('Converged');
    expect(status?.observeOnly).toBe(true);
    expect(status?.observedDrift).toBeUndefined();
    expect(marked.counts.statusesWritten).toBe(1);
    expect(steady.counts.statusesWritten).toBe(0);
    expect(driftObserved(h).at(-1)).toBe(0);
  });

  it('a hand edit is reported, not reverted, until observeOnly is turned off; then the next pass corrects it as drift', async () => {
    // Prepare: an owned, converged service, observe-only; a person scales it to 4 by hand.
    await h.putSpec(aSpecItem({ desiredCount: 2, observeOnly: true }));
    await h.editSpec(WEB, { observeOnly: false });
    await h.converge();
    await h.editSpec(WEB, { observeOnly: true });
    await h.pass('marked');
    const ecs = new ECSClient({ ...LOCAL, endpoint: h.sim.endpoint });
    try {
      const { UpdateServiceCommand } = await import('@aws-sdk/client-ecs');
      await ecs.send(new UpdateServiceCommand({ cluster: 'apps', service: 'web', desiredCount: 4 }));
    } finally {
      ecs.destroy();
    }
    h.sim.advance(60);
    h.sim.clearCalls();
    // Act
    await h.pass('observed');
    const observed = await h.status(WEB);
    const writesWhileObserved = h.writes();
    await h.editSpec(WEB, { observeOnly: false });
    h.sim.advance(60);
    const emittedWhileObserving = driftObserved(h).length;
    const corrected = await h.pass('corrected');
    // Assess
    expect(writesWhileObserved).toEqual([]);
    expect(observed?.observedDrift).toEqual(['desiredCount 4 -> 2']);
    expect(observed?.drift).toBeUndefined();
    const update = corrected.actions.find((a) => a.type === 'UpdateService');
    expect(update?.outcome).toBe('applied');
    expect((await h.status(WEB))?.drift).toEqual(['desiredCount 4 -> 2']);
    expect((await h.status(WEB))?.observeOnly).toBeUndefined();
    expect((await h.describe('apps', 'web'))?.desiredCount).toBe(2);
    // No observe-only service left and no observe-only cluster: the series is not emitted.
    expect(emittedWhileObserving).toBeGreaterThan(0);
    expect(driftObserved(h)).toHaveLength(emittedWhileObserving);
  });
});

describe('ecsr get, describe and the live page of an observe-only service', () => {
  const h = useSimHarness();

  it('say so: SYNCED "no (observe)", the mode and what was not corrected', async () => {
    // Prepare
    await aServiceMadeByHand(h, 'web', 1);
    await h.putSpec(aSpecItem({ observeOnly: true, desiredCount: 3 }));
    await h.pass('p1');
    const entry = (await new SpecTable(h.table, h.doc).get(WEB))!;
    // Act
    const row = statusRow(entry);
    const text = renderDescribe(entry, { tasks: [] }, { table: h.table, events: 0, width: 400 });
    const page = fleetService(entry, []);
    // Assess
    expect(row.phase).toBe('Blocked');
    expect(row.synced).toBe('no (observe)');
    expect(row.reason).toMatch(/^ObserveOnly: observe-only, the spec sets observeOnly: true: not corrected: .*desiredCount 1 -> 3/);
    expect(text).toMatch(/Mode: +observe-only: drift and lag are reported, nothing is changed/);
    expect(text).toMatch(/Not corrected: +containerDefinitions\[web\].image public.ecr.aws\/nginx\/nginx:1.25 -> public.ecr.aws\/nginx\/nginx:1.27, desiredCount 1 -> 3/);
    expect(page.observeOnly).toBe(true);
    expect(page.observedDrift).toContain('desiredCount 1 -> 3');
  });
});

describe('a cluster in OBSERVE_ONLY_CLUSTERS', () => {
  const h = useSimHarness({ resetEach: { env: { [ENV.observeOnlyClusters]: 'apps' }, clusters: ['apps', 'live'] } });

  it('creates nothing and prunes nothing there; a spec with observeOnly: false is acted on; another cluster is not affected', async () => {
    // Prepare: an owned service loses its spec (a prune candidate) in the observe-only cluster.
    await h.putSpec(aSpecItem({ service: 'old', desiredCount: 1, observeOnly: false }));
    await h.converge();
    await h.deleteSpec({ cluster: 'apps', service: 'old' });
    await h.putSpec(aSpecItem({ service: 'new', desiredCount: 1 }));
    await h.putSpec(aSpecItem({ service: 'opted-in', desiredCount: 1, observeOnly: false }));
    await h.putSpec(aSpecItem({ cluster: 'live', service: 'other', desiredCount: 1 }));
    h.sim.clearCalls();
    // Act
    const s = await h.pass('p1');
    // Assess
    const created = s.actions.filter((a) => a.type === 'CreateService').map((a) => `${a.cluster}/${a.service}`);
    expect(created.sort()).toEqual(['apps/opted-in', 'live/other']);
    expect(s.actions.some((a) => a.type === 'DeleteService')).toBe(false);
    expect((await h.describe('apps', 'old'))?.status).toBe('ACTIVE');
    const old = s.statuses['apps/old'];
    expect(old.phase).toBe('Blocked');
    expect(old.observedDrift).toEqual(['service present -> deleted (no spec: prune)']);
    expect(condition(old, 'Blocked')?.message).toContain('cluster apps is observe-only (OBSERVE_ONLY_CLUSTERS)');
    const fresh = await h.status({ cluster: 'apps', service: 'new' });
    expect(fresh?.observedDrift).toEqual(['service absent -> created']);
    expect(fresh?.lagBeyondGrace).toBe(false);
    expect(s.statuses['live/other'].observeOnly).toBeUndefined();
    expect(s.counts.driftObserved).toBe(2);
  });
});

/**
 * Faults during a pass (dynalite + the ECS simulator): throttling storms, a CreateService answer
 * lost on the wire, the lease running out mid-pass, the time budget running out, and people
 * editing or deleting spec items while a pass writes statuses.
 */
import { describe, expect, it } from 'vitest';
import type { PassSummary } from '../../lambda/core/pass';
import { LOCAL, localDoc } from '../runtime/support';
import { aSpecItem, aValidSpec, instantRetries, revisions, runtimeWith, useSimHarness } from './support';

const WEB = { cluster: 'apps', service: 'web' };
/** lib-dynamodb's UpdateCommand reaches the client's middleware as UpdateItemCommand. */
const isUpdateItem = (command: string | undefined) => command === 'UpdateItemCommand' || command === 'UpdateCommand';
const name = (i: number) => `s${String(i).padStart(2, '0')}`;

describe('faults during a pass', () => {
  const h = useSimHarness();

  it('a throttling storm (half of all ECS calls) creates no duplicate and loses no status; it converges after', async () => {
    // Prepare: 12 specs; half of every ECS call answers ThrottlingException (the SDK retries
    // without real-time backoff here).
    const runtime = runtimeWith(h, { ecsClientConfig: { ...LOCAL, endpoint: h.sim.endpoint, retryStrategy: instantRetries } });
    for (let i = 0; i < 12; i++) await h.putSpec(aSpecItem({ service: name(i) }));
    h.sim.injectFault({ action: '*', fraction: 0.5, errorType: 'ThrottlingException', message: 'Rate exceeded' });

    // Act
    const stormy: PassSummary[] = [];
    for (let i = 0; i < 8; i++) {
      stormy.push(await runtime.run({ holder: `storm-${i}` }));
      h.sim.advance(60);
    }
    h.sim.clearFaults();
    await h.converge(20);

    // Assess
    expect(stormy.some((s) => s.counts.actionsFailed > 0 || !s.readsComplete)).toBe(true);
    expect(stormy.flatMap((s) => s.actions).filter((a) => a.outcome === 'failed' && a.errorClass !== 'throttled')).toEqual([]);
    const created = h.sim.calls({ action: 'CreateService', outcome: 'ok' }).map((c) => c.request.serviceName);
    expect([...created].sort()).toEqual(Array.from({ length: 12 }, (_, i) => name(i)));
    expect(h.sim.calls().filter((c) => c.outcome !== 'ok' && c.outcome !== 'ThrottlingException' && c.action !== 'DescribeTaskDefinition')).toEqual([]);
    for (let i = 0; i < 12; i++) {
      expect(await revisions(h, `apps-${name(i)}`)).toHaveLength(1);
      expect(await h.status({ cluster: 'apps', service: name(i) })).toMatchObject({
        phase: 'Converged',
        lastAppliedSpecHash: aValidSpec({ service: name(i) }).hash,
      });
    }
  });

  it('a CreateService answer lost on the wire: the SDK retry with the same clientToken gets the same service', async () => {
    // Prepare: the first CreateService answer is replaced by a timeout after ECS acted.
    const runtime = runtimeWith(h, { ecsClientConfig: { ...LOCAL, endpoint: h.sim.endpoint, retryStrategy: instantRetries } });
    let answers = 0;
    runtime.ecs.middlewareStack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        if (context.commandName === 'CreateServiceCommand' && answers++ === 0) {
          throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
        }
        return out;
      },
      { step: 'deserialize', name: 'loseCreateAnswer' },
    );
    await h.putSpec(aSpecItem());

    // Act
    const s = await runtime.run({ holder: 'lossy' });

    // Assess
    expect(s.actions.map((a) => [a.type, a.outcome])).toEqual([
      ['RegisterTaskDefinition', 'applied'],
      ['CreateService', 'applied'],
    ]);
    const creates = h.sim.calls({ action: 'CreateService' });
    expect(creates.map((c) => c.outcome)).toEqual(['ok', 'ok']);
    expect(creates[1].request.clientToken).toBe(creates[0].request.clientToken);
    expect(h.sim.snapshot().clusters.find((c) => c.name === 'apps')?.services).toHaveLength(1);
  });

  it('the lease running out mid-pass: no action starts after it; the next pass finishes without duplicates', async () => {
    // Prepare: 30 new services need 30 registrations, which the rate limiter spreads over more
    // virtual time than a 30-second lease.
    for (let i = 0; i < 30; i++) await h.putSpec(aSpecItem({ service: name(i) }));
    const startedAt = h.sim.clock.now().getTime();

    // Act
    const short = await h.runtime.run({ holder: 'short', leaseTtlSeconds: 30 });
    const lastApplied = Math.max(...h.sim.calls().filter((c) => c.action === 'CreateService').map((c) => c.at.getTime()));
    h.sim.advance(60);
    const next = await h.runtime.run({ holder: 'next', leaseTtlSeconds: 600 });

    // Assess
    expect(short.counts.actionsSkipped).toBeGreaterThan(0);
    expect(lastApplied - startedAt).toBeLessThan(30_000);
    const skipped = short.actions.filter((a) => a.outcome === 'skipped').map((a) => `${a.type} ${a.service}`);
    expect(next.actions.filter((a) => a.type === 'CreateService').map((a) => `CreateService ${a.service}`)).toEqual(
      skipped.filter((x) => x.startsWith('CreateService')),
    );
    expect(next.actions.every((a) => a.outcome === 'applied')).toBe(true);
    expect(h.sim.calls({ action: 'CreateService', outcome: 'error' })).toEqual([]);
    for (let i = 0; i < 30; i++) expect(await revisions(h, `apps-${name(i)}`)).toHaveLength(1);
    const skippedService = skipped[skipped.length - 1].split(' ')[1];
    const statusAfterShort = short.statuses[`apps/${skippedService}`];
    expect(statusAfterShort.lastAppliedSpecHash).toBeUndefined();
    // A skipped action is not recorded: a service still waiting keeps its status (no rewrite per pass).
    expect(statusAfterShort.lastAction).toBeUndefined();
  });

  it('the time budget running out midway: the rest is left for the next pass, which reuses the registered revision', async () => {
    // Prepare
    for (let i = 0; i < 3; i++) await h.putSpec(aSpecItem({ service: name(i) }));
    let budget = 3;

    // Act
    const cut = await h.runtime.run({ holder: 'cut', shouldContinue: () => budget-- > 0 });
    h.sim.advance(60);
    const rest = await h.pass('rest');

    // Assess
    expect(cut.actions.map((a) => `${a.service} ${a.type} ${a.outcome}`)).toEqual([
      's00 RegisterTaskDefinition applied',
      's00 CreateService applied',
      's01 RegisterTaskDefinition applied',
      's01 CreateService skipped',
      's02 RegisterTaskDefinition skipped',
      's02 CreateService skipped',
    ]);
    expect(rest.actions.map((a) => `${a.service} ${a.type} ${a.outcome}`)).toEqual([
      's01 RegisterTaskDefinition applied',
      's01 CreateService applied',
      's02 RegisterTaskDefinition applied',
      's02 CreateService applied',
    ]);
    expect(rest.actions[0].detail).toMatch(/^reused /);
    expect(await revisions(h, 'apps-s01')).toHaveLength(1);
  });

  it('a person edits the spec while the pass writes statuses: the edit survives and is applied next pass', async () => {
    // Prepare: a person's UpdateItem lands between the pass's read and its status write.
    await h.putSpec(aSpecItem({ desiredCount: 2 }));
    await h.converge();
    await h.editSpec(WEB, { image: 'public.ecr.aws/nginx/nginx:1.28' });
    const doc = localDoc(h.db.endpoint);
    let edited = false;
    doc.middlewareStack.add(
      (next, context) => async (args) => {
        if (isUpdateItem(context.commandName) && !edited) {
          edited = true;
          await h.editSpec(WEB, { desiredCount: 4 });
        }
        return next(args);
      },
      { step: 'initialize', name: 'personEditsDuringStatusWrite' },
    );
    const runtime = runtimeWith(h, { doc });
    h.sim.advance(60);

    // Act
    const racing = await runtime.run({ holder: 'racing' });
    const item = await h.item(WEB);
    h.sim.advance(60);
    const next = await h.pass('next');

    // Assess
    expect(edited).toBe(true);
    expect(racing.counts.statusesWritten).toBe(1);
    expect(item).toMatchObject({ desiredCount: 4, image: 'public.ecr.aws/nginx/nginx:1.28' });
    expect((item?.status as { specHash?: string }).specHash).toBe(aValidSpec({ image: 'public.ecr.aws/nginx/nginx:1.28' }).hash);
    expect(next.actions.map((a) => [a.type, a.kind, a.changes])).toEqual([
      ['UpdateService', 'rollout', [{ field: 'desiredCount', from: '2', to: '4' }]],
    ]);
    doc.destroy();
  });

  it('a person deletes the spec item while the pass writes statuses: the item is not resurrected', async () => {
    // Prepare
    await h.putSpec(aSpecItem({ desiredCount: 1 }));
    const doc = localDoc(h.db.endpoint);
    let deleted = false;
    doc.middlewareStack.add(
      (next, context) => async (args) => {
        if (isUpdateItem(context.commandName) && !deleted) {
          deleted = true;
          await h.deleteSpec(WEB);
        }
        return next(args);
      },
      { step: 'initialize', name: 'personDeletesDuringStatusWrite' },
    );
    const runtime = runtimeWith(h, { doc });

    // Act
    const s = await runtime.run({ holder: 'racing' });

    // Assess
    expect(deleted).toBe(true);
    expect(s.counts.statusesWritten).toBe(0);
    expect(s.errors).toEqual([]);
    expect(await h.item(WEB)).toBeUndefined();
    doc.destroy();
  });
});

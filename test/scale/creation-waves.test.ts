/**
 * A fleet created over several bounded passes (the ECS simulator and dynalite): the services still
 * waiting for their turn keep the status they got when first seen, so a pass writes the statuses of
 * the services it acted on, not the whole waiting fleet again.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ENV } from '../../lambda/config';
import type { PassSummary } from '../../lambda/core/pass';
import type { ServiceStatus } from '../../lambda/core/types';
import { aSpecItem, useSimHarness } from '../break/support';

const FLEET = 40;
/** 11 s of actions: at half of ECS's RegisterTaskDefinition budget, about 15 creations a pass. */
const LEASE_SECONDS = 16;
const name = (i: number) => `s${String(i).padStart(2, '0')}`;

describe('creating a fleet over several bounded passes', () => {
  const h = useSimHarness({ resetEach: false });

  beforeAll(async () => {
    await h.reset();
    for (let i = 0; i < FLEET; i++) await h.putSpec(aSpecItem({ service: name(i), desiredCount: 1 }));
  });

  async function stored(): Promise<Record<string, ServiceStatus | undefined>> {
    const out: Record<string, ServiceStatus | undefined> = {};
    for (let i = 0; i < FLEET; i++) out[name(i)] = await h.status({ cluster: 'apps', service: name(i) });
    return out;
  }
  const actedOn = (s: PassSummary) => new Set(s.actions.filter((a) => a.outcome !== 'skipped').map((a) => a.service));

  it('services still waiting are not rewritten from one pass to the next', async () => {
    // Act
    const first = await h.runtime.run({ holder: 'wave-1', leaseTtlSeconds: LEASE_SECONDS });
    const afterFirst = await stored();
    h.sim.advance(60);
    const second = await h.runtime.run({ holder: 'wave-2', leaseTtlSeconds: LEASE_SECONDS });
    const afterSecond = await stored();

    // Assess
    const waiting = Array.from({ length: FLEET }, (_, i) => name(i)).filter((s) => !actedOn(first).has(s) && !actedOn(second).has(s));
    expect(waiting.length).toBeGreaterThan(0);
    expect(first.counts.statusesWritten).toBe(FLEET);
    for (const s of waiting) {
      expect(afterSecond[s]).toEqual(afterFirst[s]);
      expect(afterSecond[s]?.lastAction).toBeUndefined();
      expect(afterSecond[s]?.phase).toBe('Progressing');
    }
    expect(second.counts.statusesWritten).toBeLessThanOrEqual(FLEET - waiting.length);
    expect(second.counts.statusesPending).toBe(0);
  });
});

describe('a spec edit is not held back by a mass of hand edits (acted on by the next pass)', () => {
  const h = useSimHarness({ resetEach: false });
  const FEW = 30;

  beforeAll(async () => {
    // A tenth of ECS's rates: 5 UpdateService at once, then one every 2 s.
    await h.reset({ env: { [ENV.apiBudgetFraction]: '0.1' } });
    for (let i = 0; i < FEW; i++) await h.putSpec(aSpecItem({ service: name(i), desiredCount: 1 }));
    await h.converge(30);
  });

  it('the edited spec is rolled out in the pass that sees it, ahead of the drift corrections, which follow in the next passes', async () => {
    // Prepare: every service but the last scaled by hand; the last one's spec edited (last in name order).
    for (let i = 0; i < FEW - 1; i++) h.sim.setDesiredCount({ cluster: 'apps', service: name(i), desiredCount: 2 });
    await h.editSpec({ cluster: 'apps', service: name(FEW - 1) }, { image: 'public.ecr.aws/nginx/nginx:1.28.0' });
    h.sim.advance(60);
    h.sim.clearCalls();

    // Act: a pass with time for a few UpdateService calls only.
    const s = await h.runtime.run({ holder: 'tight', leaseTtlSeconds: 20 });

    // Assess: the edit went first; the budget left room for only part of the drift.
    const updates = h.sim.calls({ action: 'UpdateService', outcome: 'ok' }).map((c) => String(c.request.service));
    expect(updates[0]).toBe(name(FEW - 1));
    expect(updates.length).toBeLessThan(FEW);
    expect(s.counts.actionsSkipped).toBeGreaterThan(0);
    const rest = await h.passUntil((p) => p.counts.actionsPlanned === 0, 15);
    expect(rest.at(-1)?.counts.actionsPlanned).toBe(0);
  });
});

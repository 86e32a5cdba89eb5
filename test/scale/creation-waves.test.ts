/**
 * A fleet created over several bounded passes (the ECS simulator and dynalite): the services still
 * waiting for their turn keep the status they got when first seen, so a pass writes the statuses of
 * the services it acted on, not the whole waiting fleet again.
 */
import { beforeAll, describe, expect, it } from 'vitest';
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

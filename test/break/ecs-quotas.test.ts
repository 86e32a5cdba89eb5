/**
 * ECS's task definition size quota (64 KiB, docs/ecs-facts.md §12) in the pass: a spec whose
 * rendered task definition ECS would refuse gets an Invalid status that says so, and nothing is
 * sent to ECS for it; every other service is reconciled.
 */
import { describe, expect, it } from 'vitest';
import { aSpecItem, useSimHarness } from './support';

/** `n` variables of 12-character values (about 36 bytes each once rendered). */
const environment = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`VAR_${String(i).padStart(5, '0')}`, 'x'.repeat(12)]));

describe('a spec whose task definition is over ECS quota', () => {
  const h = useSimHarness();

  it('is Invalid with the field and ECS figure, registers nothing, and the other services converge', async () => {
    // Prepare: about 144 KB of environment (4,000 entries) beside an ordinary spec.
    await h.putSpec(aSpecItem({ service: 'big', environment: environment(4_000) }));
    await h.putSpec(aSpecItem({ service: 'web' }));

    // Act
    const s = await h.pass('quota');

    // Assess
    expect(s.statuses['apps/big']).toMatchObject({ phase: 'Invalid' });
    const written = await h.status({ cluster: 'apps', service: 'big' });
    expect(written?.phase).toBe('Invalid');
    const blocked = written?.conditions.find((c) => c.type === 'Blocked');
    expect(blocked?.reason).toBe('SpecInvalid');
    expect(blocked?.message).toMatch(/environment: makes the rendered task definition \d+ bytes .*ECS refuses a task definition over 65536 bytes/);
    expect(h.sim.calls({ action: 'RegisterTaskDefinition' }).map((c) => c.request.family)).toEqual(['apps-web']);
    expect(s.actions.map((a) => `${a.service} ${a.type} ${a.outcome}`)).toEqual(['web RegisterTaskDefinition applied', 'web CreateService applied']);
  });
});

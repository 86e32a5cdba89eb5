/**
 * The `status` attribute sits in items people edit by hand. A malformed one must neither stop the
 * pass for every service (a TypeError escapes the pass) nor invent memory (a lag that started in
 * 1970), and what it still says correctly (failedSpecHash) must be kept.
 */
import { describe, expect, it } from 'vitest';
import { parseRememberedStatus } from '../../lambda/adapters/dynamo-spec-store';
import { aSpecItem, aValidSpec, useSimHarness } from './support';

const WEB = { cluster: 'apps', service: 'web' };
const API = { cluster: 'apps', service: 'api' };

describe('a status attribute edited by hand', () => {
  const h = useSimHarness();

  it.each([
    { case: 'conditions as a map', status: { phase: 'Converged', conditions: { Ready: 'True' } } },
    { case: 'conditions as a string', status: { phase: 'Degraded', conditions: 'reset' } },
    { case: 'a condition without lastTransitionTime', status: { phase: 'Pending', conditions: [{ type: 'Ready', status: 'False' }, 7] } },
    { case: 'laggingSince as a number', status: { phase: 'Progressing', conditions: [], laggingSince: 5, lagBeyondGrace: true } },
    { case: 'reasonsFirstSeen as a string', status: { phase: 'Progressing', conditions: [], reasonsFirstSeen: 'abc' } },
  ])('$case: the pass completes, every service is reconciled, the status is rewritten whole', async ({ status }) => {
    // Prepare
    await h.putSpec(aSpecItem({ service: 'api' }));
    await h.putSpec(aSpecItem({ service: 'web', status }));

    // Act
    const s = await h.pass('malformed');

    // Assess
    expect(s.outcome).toBe('completed');
    expect(s.actions.map((a) => `${a.service} ${a.type} ${a.outcome}`)).toEqual([
      'api RegisterTaskDefinition applied',
      'api CreateService applied',
      'web RegisterTaskDefinition applied',
      'web CreateService applied',
    ]);
    const written = await h.status(WEB);
    expect(written?.phase).toBe('Progressing');
    expect(written?.conditions.map((c) => c.type)).toEqual(['Ready', 'Progressing']);
    expect(written?.conditions.every((c) => !Number.isNaN(Date.parse(c.lastTransitionTime)))).toBe(true);
    expect(written?.lagBeyondGrace).toBe(false);
    expect(written?.laggingSince).toBe(h.sim.clock.now().toISOString());
    expect(Object.keys(written?.reasonsFirstSeen ?? {})).not.toContain('0');
    expect((await h.status(API))?.phase).toBe('Progressing');
  });

  it('memory that is still right is kept: a failedSpecHash next to garbage still stops a re-apply', async () => {
    // Prepare: the spec's hash is remembered as failed; the conditions were mangled.
    const spec = aValidSpec({ image: 'public.ecr.aws/nginx/does-not-exist:1' });
    await h.putSpec(
      aSpecItem({
        image: 'public.ecr.aws/nginx/does-not-exist:1',
        status: { phase: 'Degraded', conditions: 'mangled', failedSpecHash: spec.hash, desiredCount: 'two' },
      }),
    );
    h.sim.clearCalls();

    // Act
    const s = await h.pass('remembers');

    // Assess
    expect(s.actions).toEqual([]);
    expect(h.writes()).toEqual([]);
    expect(await h.status(WEB)).toMatchObject({ phase: 'Degraded', failedSpecHash: spec.hash, desiredCount: 2 });
  });

  it('reads a first rollout recorded the old way (rolloutFromTaskDefinitionArn "") as firstRollout, with no empty ARN', () => {
    expect(parseRememberedStatus({ phase: 'Progressing', rolloutFromTaskDefinitionArn: '' })).toMatchObject({ firstRollout: true });
    expect(parseRememberedStatus({ phase: 'Progressing', rolloutFromTaskDefinitionArn: '' })).not.toHaveProperty('rolloutFromTaskDefinitionArn');
    expect(parseRememberedStatus({ phase: 'Progressing', rolloutFromTaskDefinitionArn: 'arn:x', firstRollout: 'yes' })).toEqual(
      expect.not.objectContaining({ firstRollout: expect.anything() }),
    );
  });

  it.each([
    { case: 'not a map', value: 'Converged', remembered: false },
    { case: 'unknown phase', value: { phase: 'Happy' }, remembered: false },
    { case: 'minimal', value: { phase: 'Converged' }, remembered: true },
  ])('parseRememberedStatus, $case', ({ value, remembered }) => {
    // Act
    const parsed = parseRememberedStatus(value);

    // Assess
    expect(parsed !== undefined).toBe(remembered);
    if (parsed) expect(parsed).toMatchObject({ phase: 'Converged', conditions: [], desiredCount: 0, lagBeyondGrace: false });
  });
});

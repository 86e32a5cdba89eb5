import { describe, expect, it } from 'vitest';
import { parseSpecItem } from '../../lambda/core/spec';
import { attributesSize, MAX_SPEC_ATTRIBUTES_BYTES } from '../../lambda/core/item-size';
import { aSpecItem, useSimHarness } from './support';

/** 4000 environment names that are invalid (start with a digit): an item of about 100 KB. */
const badEnv = Object.fromEntries(Array.from({ length: 4000 }, (_, i) => [`${i}_BAD_NAME_PADDING_X`, 'v']));

/** Found by a breaker run: an Invalid status was unbounded (4,000 errors gave 2 MB), so it could not be written. */
describe('an invalid spec well under the size limit', () => {
  const h = useSimHarness();

  it('still gets its Invalid status (or an error in the summary)', async () => {
    const item = aSpecItem({ service: 'bad', environment: badEnv });
    expect(attributesSize(item)).toBeLessThan(MAX_SPEC_ATTRIBUTES_BYTES);
    const r = parseSpecItem(item);
    expect(r.ok).toBe(false);
    await h.putSpec(item);
    await h.putSpec(aSpecItem({ service: 'web' }));

    const s = await h.pass('invalid-big');
    const msg = JSON.stringify(s.statuses['apps/bad'] ?? {});
    const written = await h.status({ cluster: 'apps', service: 'bad' });
    expect(written?.phase).toBe('Invalid');
  }, 60_000);

  it('an item of about 350 KiB (under 368 KiB) with 200 invalid environment names: its status is written, or its errors reach the summary', async () => {
    const env: Record<string, string> = Object.fromEntries(Array.from({ length: 34 }, (_, i) => [`V${i}`, 'x'.repeat(10 * 1024)]));
    for (let i = 0; i < 200; i++) env[`${i}-bad`] = 'v';
    const item = aSpecItem({ service: 'bad', environment: env });
    const size = attributesSize(item);
    expect(size).toBeLessThan(MAX_SPEC_ATTRIBUTES_BYTES);
    await h.putSpec(item);
    const s = await h.pass('invalid-350k');
    const written = await h.status({ cluster: 'apps', service: 'bad' });
    const inSummary = s.errors.some((e) => e.includes('environment.0-bad'));
    expect(written?.phase === 'Invalid' || inSummary).toBe(true);
  }, 60_000);
});

/**
 * A spec item that leaves no room for its status is invalid. Its own attributes
 * (everything but `status`) may take at most 368 KiB (DynamoDB's 400 KB item limit less 32 KiB for
 * the status): beyond, the item is refused with an error that needs no status write (logs and the
 * pass summary), every other service is reconciled, and `ecsr validate` says so.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_SPEC_ATTRIBUTES_BYTES, attributesSize } from '../../lambda/core/item-size';
import { parseSpecItem } from '../../lambda/core/spec';
import { baseEnv } from '../cli/run-cli';
import { ecsr } from '../support/cli-in-process';
import { aSpecItem, useSimHarness } from './support';

/** `n` environment values of 10 KiB each. */
const bigEnvironment = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`VAR_${i}`, 'x'.repeat(10 * 1024)]));

describe('a spec item too large to leave room for its status', () => {
  const h = useSimHarness();

  it.each([
    // Within the item limit, but refused for ECS's task definition size (64 KiB), not the item's.
    { case: '30 values of 10 KiB (about 300 KiB): within the item limit', n: 30, oversized: false },
    { case: '37 values of 10 KiB (above 368 KiB): invalid', n: 37, oversized: true },
  ])('$case', ({ n, oversized }) => {
    const item = aSpecItem({ environment: bigEnvironment(n) });
    const r = parseSpecItem(item);
    expect(attributesSize(item) > MAX_SPEC_ATTRIBUTES_BYTES).toBe(oversized);
    expect(r.ok).toBe(false);
    if (!r.ok && oversized) {
      expect(r.errors).toEqual([
        expect.objectContaining({ path: '(item)', message: expect.stringMatching(/^the spec's attributes take \d+ bytes; at most 376832 \(368 KiB:/) }),
      ]);
    }
    if (!r.ok && !oversized) {
      expect(r.errors).toEqual([expect.objectContaining({ path: 'environment', message: expect.stringMatching(/^makes the rendered task definition \d+ bytes/) })]);
    }
  });

  it('is refused in the pass with an error in the logs and the summary; the other services are reconciled', async () => {
    // Prepare: one oversized spec (about 371 KiB, below DynamoDB's 400 KB) and one ordinary spec.
    await h.putSpec(aSpecItem({ service: 'big', environment: bigEnvironment(37) }));
    await h.putSpec(aSpecItem({ service: 'web' }));

    // Act
    const s = await h.pass('oversized');

    // Assess
    expect(s.actions.map((a) => `${a.service} ${a.type} ${a.outcome}`)).toEqual(['web RegisterTaskDefinition applied', 'web CreateService applied']);
    expect(s.errors).toEqual(expect.arrayContaining([expect.stringMatching(/^spec apps\/big: \(item\): the spec's attributes take \d+ bytes/)]));
    expect(h.log.lines.some((e) => e.level === 'warn' && /spec item refused/.test(e.message) && e.fields.serviceName === 'apps/big')).toBe(true);
    expect(s.statuses['apps/big']).toMatchObject({ phase: 'Invalid' });
    // The small Invalid status still fits the item and is written.
    expect((await h.status({ cluster: 'apps', service: 'big' }))?.phase).toBe('Invalid');
    expect(h.sim.calls({ action: 'CreateService' }).map((c) => c.request.serviceName)).toEqual(['web']);
  });

  it('ecsr validate reports it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ecsr-big-'));
    const env = bigEnvironment(37);
    const yaml = `cluster: shop\nservice: big\nimage: public.ecr.aws/nginx/nginx:1.27\ndesiredCount: 1\nenvironment:\n${Object.entries(env)
      .map(([k, v]) => `  ${k}: ${v}`)
      .join('\n')}\n`;
    writeFileSync(join(dir, 'big.yaml'), yaml);

    const r = await ecsr(['validate', '-f', join(dir, 'big.yaml')], { env: baseEnv({ AWS_ENDPOINT_URL: 'http://127.0.0.1:9' }) });

    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/big\.yaml:1: shop\/big: \(item\): the spec's attributes take \d+ bytes; at most 376832/);
  });
});

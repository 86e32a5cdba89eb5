/**
 * Existing specs render the same RegisterTaskDefinition and CreateService inputs, byte for byte,
 * and keep their hash: `test/fixtures/render-pin.json` was written by the code as it stood before
 * the vocabulary moved onto `lambda/core/vocab/`, from the items of `./pin-items` and
 * the example files, each with two sets of reconciler defaults.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { plan } from '../../lambda/core/planner';
import { parseSpecItem, parseSpecsYaml } from '../../lambda/core/spec';
import { PIN_DEFAULTS, PIN_ITEMS } from './pin-items';

interface Pinned {
  name: string;
  defaults: string;
  hash: string;
  actions: string;
}

const pinned = JSON.parse(readFileSync(new URL('../fixtures/render-pin.json', import.meta.url), 'utf8')) as Pinned[];

function items(): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>(PIN_ITEMS.map((x) => [x.name, x.item]));
  for (const file of ['examples/web.yaml', 'examples/shop.yaml']) {
    const { docs } = parseSpecsYaml(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8'));
    docs.forEach((d, i) => {
      if (d.item) out.set(`${file}#${i}`, d.item);
    });
  }
  return out;
}

describe('existing specs render unchanged', () => {
  const byName = items();
  it('covers every pinned case', () => {
    expect(pinned.length).toBeGreaterThanOrEqual(10);
    for (const p of pinned) expect(byName.has(p.name), p.name).toBe(true);
  });
  it.each(pinned.map((p) => ({ case: `${p.name} (${p.defaults} defaults)`, ...p })))('$case', (p) => {
    const r = parseSpecItem(byName.get(p.name)!);
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.hash).toBe(p.hash);
    const out = plan({
      specs: [r],
      specsComplete: true,
      observed: {
        clusters: { [r.key.cluster]: { cluster: r.key.cluster, complete: true, exists: true, services: {} } },
        taskDefinitions: {},
      },
      remembered: {},
      options: {
        ownerId: 'pin-owner',
        managedClusters: [],
        prune: true,
        maxDeletesPerPass: 5,
        defaultLagGraceSeconds: 300,
        defaults: PIN_DEFAULTS[p.defaults],
        allow: {},
      },
      now: new Date('2026-01-01T00:00:00Z'),
    });
    expect(JSON.stringify(out.actions.map((a) => ({ type: a.type, input: 'input' in a ? a.input : undefined })))).toBe(p.actions);
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { plan } from '../lambda/core/planner';
import { aPlanInput, anInvalidSpec, anObservedCluster, anObservedState, aSpec } from './support/builders';

/** Cluster names where one is another's prefix (`a` < `a-b` < `a0`, and `/` sorts after `-`): a sort of `cluster/service` texts would differ. */
const CLUSTERS = ['a', 'a-b', 'a0', 'b', 'B'];
const SERVICES = ['x', 'x-1', 'x1', 'y', 'Y', 'svc-00010', 'svc-00009'];

const byKey = (a: string, b: string): number => {
  const [ca, sa] = a.split('/');
  const [cb, sb] = b.split('/');
  if (ca !== cb) return ca < cb ? -1 : 1;
  return sa < sb ? -1 : sa > sb ? 1 : 0;
};

describe('plan order', () => {
  it('plans the specs by cluster, then service, whatever the order they come in (statuses and actions)', () => {
    const keys = fc.uniqueArray(fc.tuple(fc.constantFrom(...CLUSTERS), fc.constantFrom(...SERVICES)), {
      minLength: 1,
      maxLength: 20,
      selector: ([c, s]) => `${c}/${s}`,
    });
    fc.assert(
      fc.property(keys, fc.array(fc.boolean(), { minLength: 20, maxLength: 20 }), (pairs, invalid) => {
        const specs = pairs.map(([cluster, service], i) =>
          invalid[i] ? anInvalidSpec({ cluster, service }) : aSpec({ cluster, service }),
        );
        const input = aPlanInput({ specs, observed: anObservedState(CLUSTERS.map((c) => anObservedCluster(c))) });
        const p = plan(input);
        const ids = Object.keys(p.statuses);
        expect(ids).toEqual([...ids].sort(byKey));
        expect(new Set(ids)).toEqual(new Set(pairs.map(([c, s]) => `${c}/${s}`)));
        const actionIds = p.actions.map((a) => `${a.cluster}/${a.service}`);
        expect(actionIds).toEqual([...actionIds].sort(byKey));
        // The same plan, key order included, for the specs in reverse.
        expect(JSON.stringify(plan({ ...input, specs: [...specs].reverse() }))).toBe(JSON.stringify(p));
      }),
      { numRuns: 150 },
    );
  });
});

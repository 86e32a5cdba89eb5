/**
 * Hash-first comparison (issue 12 part 5): a service whose spec hash and live task definition are
 * unchanged since its last comparison is not canonicalized again, and everything that did change
 * (the spec, the live revision, the service by hand) is still compared and found.
 * Speed is measured in `npm run bench`, never here: these tests count digests computed.
 */
import { describe, expect, it } from 'vitest';
import { BoundedMemo, clearCompareMemo, digestsComputed } from '../lambda/core/compare-memo';
import { plan } from '../lambda/core/planner';
import { canonicalTaskDefinitionHash } from '../lambda/core/taskdef';
import type { PlanInput } from '../lambda/core/planner';
import type { TaskDefinition } from '../lambda/core/types';
import { aConvergedService, aPlanInput, aServiceSpec, aSpec, anObservedCluster, anObservedState, describedTaskDefinitionFor } from './support/builders';
import { taskDefinitionArn } from './support/fake-ecs';

/** A converged fleet of `n` services in cluster `apps`, as one plan input. */
function convergedFleet(n: number, image = 'public.ecr.aws/nginx/nginx:1.27'): PlanInput {
  const specs = Array.from({ length: n }, (_, i) => aSpec({ service: `web-${i}`, image }));
  const converged = specs.map((s) => aConvergedService(s.spec));
  return aPlanInput({
    specs,
    observed: anObservedState(
      [anObservedCluster('apps', converged.map((c) => c.service))],
      Object.assign({}, ...converged.map((c) => c.taskDefinitions)) as Record<string, TaskDefinition>,
    ),
  });
}

describe('hash-first planner', () => {
  it('a steady fleet planned again computes no digest and plans nothing', () => {
    clearCompareMemo();
    const input = convergedFleet(20);
    const before = digestsComputed();
    expect(plan(input).actions).toEqual([]);
    // Each service's live and rendered digests, once.
    expect(digestsComputed() - before).toBe(40);
    const second = digestsComputed();
    expect(plan(input).actions).toEqual([]);
    expect(plan(input).actions).toEqual([]);
    expect(digestsComputed()).toBe(second);
  });

  it('a changed spec is compared again and rolled out', () => {
    clearCompareMemo();
    const input = convergedFleet(3);
    plan(input);
    const edited = aSpec({ service: 'web-1', image: 'public.ecr.aws/nginx/nginx:1.28' });
    const before = digestsComputed();
    const p = plan({ ...input, specs: input.specs.map((s) => (s.key?.service === 'web-1' ? edited : s)) });
    expect(digestsComputed() - before).toBe(1); // the new spec's rendered digest only
    expect(p.actions.map((a) => `${a.type} ${a.service}`)).toEqual(['RegisterTaskDefinition web-1', 'UpdateService web-1']);
    expect(p.actions[0].reason).toContain('containerDefinitions[web-1].image public.ecr.aws/nginx/nginx:1.27 -> public.ecr.aws/nginx/nginx:1.28');
  });

  it('a changed live revision (registered and set by hand) is compared again and corrected', () => {
    clearCompareMemo();
    const input = convergedFleet(3);
    plan(input);
    const spec = input.specs[2];
    if (!spec.ok) throw new Error('setup');
    const handArn = taskDefinitionArn('apps-web-2', 2);
    const handTd: TaskDefinition = {
      ...describedTaskDefinitionFor(aServiceSpec({ service: 'web-2', image: 'public.ecr.aws/nginx/nginx:hand' }), { revision: 2 }),
      taskDefinitionArn: handArn,
    };
    const services = { ...input.observed.clusters.apps.services };
    services['web-2'] = { ...services['web-2'], taskDefinition: handArn };
    const p = plan({
      ...input,
      observed: {
        clusters: { apps: { ...input.observed.clusters.apps, services } },
        taskDefinitions: { ...input.observed.taskDefinitions, [handArn]: handTd },
      },
    });
    expect(p.actions.map((a) => `${a.type} ${a.service}`)).toEqual(['RegisterTaskDefinition web-2', 'UpdateService web-2']);
    expect(p.actions[0].reason).toContain('image public.ecr.aws/nginx/nginx:hand -> public.ecr.aws/nginx/nginx:1.27');
  });

  it('a hand edit of the service itself is still found with every digest remembered', () => {
    clearCompareMemo();
    const input = convergedFleet(3);
    plan(input);
    const services = { ...input.observed.clusters.apps.services };
    services['web-0'] = { ...services['web-0'], desiredCount: 7 };
    const before = digestsComputed();
    const p = plan({ ...input, observed: { ...input.observed, clusters: { apps: { ...input.observed.clusters.apps, services } } } });
    expect(digestsComputed()).toBe(before);
    expect(p.actions.map((a) => `${a.type} ${a.service}`)).toEqual(['UpdateService web-0']);
    expect(p.actions[0].reason).toMatch(/: desiredCount 7 -> 2$/);
  });

  it('a description with a remembered ARN but other content (a new object) is hashed afresh', () => {
    clearCompareMemo();
    const input = convergedFleet(1);
    plan(input);
    const [arn, td] = Object.entries(input.observed.taskDefinitions)[0];
    const changed: TaskDefinition = { ...td, containerDefinitions: td.containerDefinitions?.map((c) => ({ ...c, image: 'other:1' })) };
    const p = plan({ ...input, observed: { ...input.observed, taskDefinitions: { [arn]: changed } } });
    expect(p.actions.map((a) => a.type)).toEqual(['RegisterTaskDefinition', 'UpdateService']);
  });

  it('the digest is the same for canonically equal task definitions and differs for a real change', () => {
    const spec = aServiceSpec();
    const described = describedTaskDefinitionFor(spec);
    const reordered = Object.fromEntries(Object.entries(described).reverse()) as TaskDefinition;
    expect(canonicalTaskDefinitionHash(reordered)).toBe(canonicalTaskDefinitionHash(described));
    expect(canonicalTaskDefinitionHash({ ...described, memory: '1024' })).not.toBe(canonicalTaskDefinitionHash(described));
  });

  it('the memo keeps at most its bound, dropping the least recently used', () => {
    const memo = new BoundedMemo<number>(2);
    memo.set('a', 1);
    memo.set('b', 2);
    expect(memo.get('a')).toBe(1); // a is now the most recent
    memo.set('c', 3);
    expect(memo.size).toBe(2);
    expect(memo.get('b')).toBeUndefined();
    expect(memo.get('a')).toBe(1);
    expect(memo.get('c')).toBe(3);
  });
});

/**
 * Properties of the planner over random specs and random ECS states, applied to the in-memory ECS
 * model (`test/support/fake-ecs.ts`). fast-check prints the seed and the shrunk counterexample on
 * failure; replay one with `FC_SEED=<seed> npx vitest run test/planner.property.test.ts`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PlanOptions } from '../lambda/core/options';
import { CompareCache } from '../lambda/core/compare-cache';
import { fullPlan } from './support/steady-memo';
import { plan, type PlanInput } from '../lambda/core/planner';
import { OWNER_TAG_KEY } from '../lambda/core/ports';
import { statusChanged } from '../lambda/core/status';
import type { ObservedState, Plan, SpecParseResult } from '../lambda/core/types';
import {
  NOW,
  SG_1,
  SG_DEFAULT,
  SUBNET_A,
  SUBNET_B,
  SUBNET_DEFAULT,
  aConvergedService,
  aSpec,
  anInvalidSpec,
  describedTaskDefinitionFor,
  planOptions,
  type ValidSpec,
} from './support/builders';
import { FakeEcs, type FakeEcsOptions } from './support/fake-ecs';

const CLUSTERS = ['c1', 'c2'] as const;
/** Named by specs but absent from ECS. */
const MISSING_CLUSTER = 'gone';
const NAMES = ['a', 'b', 'c', 'd', 'e'] as const;
const IMAGES = ['public.ecr.aws/nginx/nginx:1.27', 'public.ecr.aws/nginx/nginx:1.28', 'nginx:1.27'] as const;

const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined;
const RUNS = { numRuns: 150, seed };

// ---------------------------------------------------------------------------------------------
// Scenario generators
// ---------------------------------------------------------------------------------------------

const specShape = fc.record({
  kind: fc.constantFrom('none', 'none', 'present', 'present', 'present', 'absent', 'invalid'),
  image: fc.constantFrom(...IMAGES),
  desiredCount: fc.integer({ min: 0, max: 3 }),
  autoscaled: fc.boolean(),
  autoscaledCount: fc.boolean(),
  adopt: fc.boolean(),
  capacityProvider: fc.constantFrom('FARGATE' as const, 'FARGATE_SPOT' as const),
  subnets: fc.option(fc.subarray([SUBNET_A, SUBNET_B], { minLength: 1 }), { nil: undefined }),
  environment: fc.dictionary(fc.constantFrom('A', 'B', 'C'), fc.constantFrom('1', '2')),
  loadBalancer: fc.boolean(),
  // The parser rejects rollback without enable (ECS rolls back only when the breaker trips).
  circuitBreaker: fc.constantFrom(
    undefined,
    { enable: false, rollback: false },
    { enable: true, rollback: false },
    { enable: true, rollback: true },
  ),
  lagGraceSeconds: fc.option(fc.integer({ min: 0, max: 600 }), { nil: undefined }),
});

const liveShape = fc.record({
  kind: fc.constantFrom('none', 'owned', 'owned', 'owned', 'unowned', 'other-owner', 'draining', 'inactive'),
  desiredCount: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
  runningCount: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
  image: fc.option(fc.constantFrom(...IMAGES), { nil: undefined }),
  launchType: fc.boolean(),
  reversedSubnets: fc.boolean(),
  securityGroups: fc.constantFrom<string[] | undefined>(undefined, [SG_1], [SG_DEFAULT], ['sg-0ffffffffffffffff']),
  noDeploymentConfiguration: fc.boolean(),
});

const slot = fc.record({
  cluster: fc.constantFrom(...CLUSTERS, ...CLUSTERS, ...CLUSTERS, MISSING_CLUSTER),
  name: fc.constantFrom(...NAMES),
  spec: specShape,
  live: liveShape,
});

const scenarioShape = fc.record({
  slots: fc.uniqueArray(slot, { maxLength: 8, selector: (s) => `${s.cluster}/${s.name}` }),
  specsComplete: fc.constantFrom(true, true, true, false),
  // Mostly complete reads; an incomplete one hides some services of that cluster.
  incomplete: fc.record({
    c1: fc.oneof({ arbitrary: fc.constant(undefined), weight: 5 }, { arbitrary: fc.subarray([...NAMES]), weight: 1 }),
    c2: fc.oneof({ arbitrary: fc.constant(undefined), weight: 5 }, { arbitrary: fc.subarray([...NAMES]), weight: 1 }),
  }),
  hideTaskDefinitions: fc.constantFrom(false, false, false, true),
  prune: fc.constantFrom(true, true, false),
  maxDeletesPerPass: fc.integer({ min: 0, max: 6 }),
  managedClusters: fc.subarray([...CLUSTERS]),
  defaultSubnets: fc.constantFrom([SUBNET_DEFAULT], [SUBNET_DEFAULT], [] as string[]),
  allowRegistries: fc.constantFrom<string[] | undefined>(undefined, undefined, ['public.ecr.aws']),
});

type ScenarioShape = typeof scenarioShape extends fc.Arbitrary<infer T> ? T : never;
type Slot = ScenarioShape['slots'][number];

/** A built scenario: the model ECS seeded, the specs, and how observations are made partial. */
interface Scenario {
  readonly ecs: FakeEcs;
  readonly specs: SpecParseResult[];
  readonly specsComplete: boolean;
  readonly options: PlanOptions;
  /** cluster -> services hidden from the (incomplete) observation of that cluster. */
  readonly incomplete: Record<string, readonly string[]>;
  readonly hiddenTaskDefinitions: ReadonlySet<string>;
}

function specFor(s: Slot): ValidSpec | undefined {
  const shape = s.spec;
  if (shape.kind !== 'present' && shape.kind !== 'absent') return undefined;
  return aSpec({
    cluster: s.cluster,
    service: s.name,
    image: shape.image,
    desiredCount: shape.autoscaled && !shape.autoscaledCount ? undefined : shape.desiredCount,
    autoscaled: shape.autoscaled,
    adopt: shape.adopt,
    capacityProvider: shape.capacityProvider,
    subnets: shape.subnets,
    environment: shape.environment,
    loadBalancer: shape.loadBalancer
      ? { targetGroupArn: `arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/${s.name}/0123456789abcdef`, containerPort: 80 }
      : undefined,
    deployment: shape.circuitBreaker ? { circuitBreaker: shape.circuitBreaker } : undefined,
    lagGraceSeconds: shape.lagGraceSeconds,
    state: shape.kind,
  });
}

/** The model ECS of the properties: rollouts of nginx 1.28 fail (circuit breaker), others complete. */
const FAILING_1_28: FakeEcsOptions = {
  rolloutOutcome: (td) => (td.containerDefinitions?.[0]?.image?.endsWith(':1.28') ? 'FAILED' : 'COMPLETED'),
};

function buildScenario(shape: ScenarioShape, ecsOptions: FakeEcsOptions = FAILING_1_28): Scenario {
  const options = planOptions({
    prune: shape.prune,
    maxDeletesPerPass: shape.maxDeletesPerPass,
    managedClusters: shape.managedClusters,
    defaults: { subnets: shape.defaultSubnets, securityGroups: [SG_DEFAULT] },
    allow: shape.allowRegistries ? { imageRegistries: shape.allowRegistries } : {},
  });
  const ecs = new FakeEcs(ecsOptions);
  for (const c of CLUSTERS) ecs.addCluster(c);
  const specs: SpecParseResult[] = [];
  const hidden = new Set<string>();
  for (const s of shape.slots) {
    const parsed = specFor(s);
    const spec = parsed?.spec;
    if (s.spec.kind === 'invalid') specs.push(anInvalidSpec({ cluster: s.cluster, service: s.name }));
    else if (parsed) specs.push(parsed);

    if (s.cluster === MISSING_CLUSTER || s.live.kind === 'none') continue;
    const base = spec && spec.state === 'present' ? spec : aSpec({ cluster: s.cluster, service: s.name }).spec;
    const liveSpec = s.live.image ? { ...base, image: s.live.image } : base;
    const td = describedTaskDefinitionFor(liveSpec, { plan: options });
    const { service } = aConvergedService(base, { taskDefinition: td.taskDefinitionArn! }, { plan: options });
    service.deployments[0].taskDefinition = td.taskDefinitionArn!;
    if (s.live.desiredCount !== undefined) service.desiredCount = s.live.desiredCount;
    service.runningCount = s.live.runningCount ?? service.desiredCount;
    if (s.live.launchType) {
      service.capacityProviderStrategy = undefined;
      service.launchType = 'FARGATE';
    }
    const net = service.networkConfiguration!.awsvpcConfiguration!;
    if (s.live.reversedSubnets) net.subnets = [...(net.subnets ?? [])].reverse();
    if (s.live.securityGroups) net.securityGroups = s.live.securityGroups;
    if (s.live.noDeploymentConfiguration) service.deploymentConfiguration = undefined;
    if (s.live.kind === 'unowned') delete service.tags[OWNER_TAG_KEY];
    if (s.live.kind === 'other-owner') service.tags[OWNER_TAG_KEY] = 'another-reconciler';
    if (s.live.kind === 'draining') Object.assign(service, { status: 'DRAINING', desiredCount: 0 });
    if (s.live.kind === 'inactive') Object.assign(service, { status: 'INACTIVE', desiredCount: 0, runningCount: 0, deployments: [] });
    ecs.putTaskDefinition(td);
    ecs.putService(s.cluster, service);
    if (shape.hideTaskDefinitions) hidden.add(td.taskDefinitionArn!);
  }
  const incomplete: Record<string, readonly string[]> = {};
  for (const c of CLUSTERS) {
    const hiddenNames = shape.incomplete[c];
    if (hiddenNames !== undefined) incomplete[c] = hiddenNames;
  }
  return { ecs, specs, specsComplete: shape.specsComplete, options, incomplete, hiddenTaskDefinitions: hidden };
}

/** What the observer would see: the model ECS, minus the parts of the read that failed. */
function observe(sc: Scenario): ObservedState {
  const observed = sc.ecs.snapshot([...CLUSTERS, MISSING_CLUSTER]);
  for (const [cluster, hiddenNames] of Object.entries(sc.incomplete)) {
    const cl = observed.clusters[cluster];
    cl.complete = false;
    cl.error = 'DescribeServices throttled';
    for (const name of hiddenNames) delete cl.services[name];
  }
  for (const arn of sc.hiddenTaskDefinitions) delete observed.taskDefinitions[arn];
  return observed;
}

function inputAt(sc: Scenario, round: number, remembered: PlanInput['remembered']): PlanInput {
  return {
    specs: sc.specs,
    specsComplete: sc.specsComplete,
    observed: observe(sc),
    remembered,
    options: sc.options,
    now: new Date(NOW.getTime() + round * 60_000),
  };
}

/** Applies a plan to the model ECS; every planned action must be accepted. */
function applyAll(sc: Scenario, p: Plan): void {
  const failed = sc.ecs.applyAll(p.actions).filter((r) => !r.ok);
  expect(failed, 'ECS rejected planned actions').toEqual([]);
}

const heldBack = (p: Plan) =>
  Object.values(p.statuses).some((s) => s.conditions.some((c) => c.reason === 'DeleteLimitReached' || c.reason === 'PruneBlocked'));

const describeActions = (p: Plan) => p.actions.map((a) => `${a.type} ${a.cluster}/${a.service}`);

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

describe('planner properties', () => {
  it('(a) idempotence: after applying a plan, planning again gives no actions', () => {
    fc.assert(
      fc.property(scenarioShape, (shape) => {
        // Prepare
        const sc = buildScenario(shape);
        const first = plan(inputAt(sc, 0, {}));
        // A safety limit that held deletes back leaves work for the next pass by design.
        fc.pre(!heldBack(first));
        applyAll(sc, first);
        // Act
        const second = plan(inputAt(sc, 1, first.statuses));
        // Assess
        expect(describeActions(second)).toEqual([]);
      }),
      RUNS,
    );
  });

  it('(b) no action targets a service that is not owned, unless its spec adopts it', () => {
    fc.assert(
      fc.property(scenarioShape, (shape) => {
        // Prepare
        const sc = buildScenario(shape);
        const input = inputAt(sc, 0, {});
        // Act
        const p = plan(input);
        // Assess
        for (const a of p.actions) {
          const live = input.observed.clusters[a.cluster]?.services[a.service];
          if (!live || live.status === 'INACTIVE') {
            expect(a.type, `${a.type} on ${a.cluster}/${a.service} with no live service`).toMatch(/^(RegisterTaskDefinition|CreateService)$/);
            continue;
          }
          if (live.tags[OWNER_TAG_KEY] === sc.options.ownerId) continue;
          const spec = input.specs.find((r) => r.ok && r.key.cluster === a.cluster && r.key.service === a.service);
          expect(spec?.ok && spec.spec.adopt, `${a.type} on unowned ${a.cluster}/${a.service}`).toBe(true);
          expect(live.status).toBe('ACTIVE');
        }
      }),
      RUNS,
    );
  });

  it('(c) invalid specs and incomplete reads never produce deletes; no delete and create of one service in a pass', () => {
    fc.assert(
      fc.property(scenarioShape, (shape) => {
        // Prepare
        const sc = buildScenario(shape);
        const input = inputAt(sc, 0, {});
        // Act
        const p = plan(input);
        // Assess
        const deletes = p.actions.filter((a) => a.type === 'DeleteService');
        if (!input.specsComplete) expect(deletes).toEqual([]);
        for (const d of deletes) {
          expect(input.observed.clusters[d.cluster].complete, `delete in incomplete cluster ${d.cluster}`).toBe(true);
          const invalid = input.specs.some((r) => !r.ok && r.key?.cluster === d.cluster && r.key.service === d.service);
          expect(invalid, `delete of ${d.cluster}/${d.service} protected by an invalid spec`).toBe(false);
          expect(p.actions.some((a) => a.type === 'CreateService' && a.cluster === d.cluster && a.service === d.service)).toBe(false);
        }
        expect(deletes.length).toBeLessThanOrEqual(sc.options.maxDeletesPerPass);
      }),
      RUNS,
    );
  });

  it('(d) from any start, the third plan/apply round has nothing left to do', () => {
    fc.assert(
      fc.property(scenarioShape, (shape) => {
        // Prepare: a delete budget that never binds, so that only the dynamics are measured.
        const sc = buildScenario({ ...shape, maxDeletesPerPass: 100 });
        let remembered: PlanInput['remembered'] = {};
        const history: string[][] = [];
        // Act
        for (let round = 0; round < 3; round += 1) {
          const p = plan(inputAt(sc, round, remembered));
          history.push(describeActions(p));
          applyAll(sc, p);
          remembered = p.statuses;
          sc.ecs.tick();
        }
        // Assess
        expect(history[2], JSON.stringify(history)).toEqual([]);
      }),
      RUNS,
    );
  });

  it('(e) once converged, status is a fixpoint: planned again from its own status, nothing changes', () => {
    fc.assert(
      fc.property(scenarioShape, (shape) => {
        // Prepare: three passes (rollouts of nginx 1.28 fail, so remembered failures are in play).
        const sc = buildScenario({ ...shape, maxDeletesPerPass: 100 });
        let remembered: PlanInput['remembered'] = {};
        for (let round = 0; round < 3; round += 1) {
          const p = plan(inputAt(sc, round, remembered));
          applyAll(sc, p);
          remembered = p.statuses;
          sc.ecs.tick();
        }
        const input = inputAt(sc, 3, remembered);
        const first = plan(input);
        // Act
        const again = plan({ ...input, remembered: first.statuses });
        // Assess
        expect(describeActions(first)).toEqual([]);
        expect(describeActions(again)).toEqual([]);
        for (const [id, status] of Object.entries(again.statuses)) {
          expect(statusChanged(first.statuses[id], status), `${id}: ${JSON.stringify([first.statuses[id], status])}`).toBe(false);
        }
      }),
      { ...RUNS, numRuns: 100 },
    );
  });

  it('(f) judged versions: with a cache and the statuses of earlier rounds, the plan is the full comparison\'s (no cache, no judged versions), round after round', () => {
    fc.assert(
      fc.property(scenarioShape, fc.boolean(), (shape, cold) => {
        const sc = buildScenario(shape);
        const cache = new CompareCache();
        let remembered: PlanInput['remembered'] = {};
        for (let round = 0; round < 3; round++) {
          const input = { ...inputAt(sc, round, remembered), ...(cold ? {} : { cache }) };
          const fast = plan(input);
          const slow = fullPlan(input);
          // Same members, same undefined members, same key order.
          expect(fast).toStrictEqual(slow);
          expect(JSON.stringify(fast)).toBe(JSON.stringify(slow));
          applyAll(sc, fast);
          remembered = fast.statuses;
        }
      }),
      { ...RUNS, numRuns: 100 },
    );
  });

  it('is deterministic: the same input gives the same plan, whatever the order of the specs', () => {
    fc.assert(
      fc.property(scenarioShape, (shape) => {
        const sc = buildScenario(shape);
        const input = inputAt(sc, 0, {});
        expect(plan({ ...input, specs: [...input.specs].reverse() })).toEqual(plan(input));
      }),
      { ...RUNS, numRuns: 100 },
    );
  });
});

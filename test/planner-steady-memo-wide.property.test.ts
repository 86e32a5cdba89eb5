/**
 * The steady judgement against the full comparison, wider than test/planner-steady-memo.test.ts's
 * property (which varies only the live service from a fixed list): here the spec, the options, the
 * remembered status, the task definition objects and the clock (jumps of an hour) vary too
 * (written by a breaker). Every pass is planned from the statuses of the pass before (their
 * judged versions included) and compared with the full comparison (no cache, no judged versions)
 * of the same input.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planChecked, steadyFleet } from './support/steady-memo';
import { CompareCache } from '../lambda/core/compare-cache';
import type { PlanInput } from '../lambda/core/planner';
import { OWNER_TAG_KEY } from '../lambda/core/ports';
import type { ObservedService } from '../lambda/core/types';
import { SUBNET_A, aDeployment, aSpec } from './support/builders';

const SERVICES = ['web-0', 'web-1'];

type Change = (input: PlanInput, name: string) => PlanInput;

const live = (f: (s: ObservedService) => void): Change => (input, name) => {
  const cl = input.observed.clusters.apps;
  if (cl.services[name] === undefined) return input;
  const copy = structuredClone(cl.services[name]);
  f(copy);
  return { ...input, observed: { ...input.observed, clusters: { apps: { ...cl, services: { ...cl.services, [name]: copy } } } } };
};
const spec = (o: Record<string, unknown>): Change => (input, name) => ({
  ...input,
  specs: input.specs.map((s) => (s.ok && s.key.service === name ? aSpec({ ...s.spec, ...o }) : s)),
});

const CHANGES: Change[] = [
  live((s) => void (s.runningCount = Math.max(0, s.runningCount - 1))),
  live((s) => void (s.runningCount += 1)),
  live((s) => void (s.desiredCount += 1)),
  live((s) => void (s.deployments[0] && (s.deployments[0].rolloutState = 'FAILED'))),
  live((s) => void (s.deployments[0] && (s.deployments[0].rolloutState = 'IN_PROGRESS'))),
  live((s) => void (s.deployments[0] && (s.deployments[0].rolloutState = 'COMPLETED'))),
  live((s) => void s.deployments.push(aDeployment({ id: 'ecs-svc/old', status: 'ACTIVE', taskDefinition: s.taskDefinition }))),
  live((s) => void (s.deployments = s.deployments.slice(0, 1))),
  live((s) => void (s.tags[OWNER_TAG_KEY] = 'someone-else')),
  live((s) => void delete s.tags[OWNER_TAG_KEY]),
  live((s) => void (s.tags[OWNER_TAG_KEY] = 'ecs-reconciler')),
  live((s) => void (s.status = 'DRAINING')),
  live((s) => void (s.status = 'ACTIVE')),
  live((s) => void (s.status = 'INACTIVE')),
  live((s) => void (s.networkConfiguration!.awsvpcConfiguration!.subnets = [SUBNET_A])),
  live((s) => void (s.tags.team = 'x')),
  spec({ desiredCount: 4 }),
  spec({ tags: { team: 'x' } }),
  spec({ autoscaled: true, desiredCount: undefined }),
  spec({ lagGraceSeconds: 30 }),
  spec({ lagGraceSeconds: 3000 }),
  spec({ subnets: [SUBNET_A] }),
  spec({ adopt: true }),
  // The clock jumps well past any grace.
  (input) => ({ ...input, now: new Date(input.now.getTime() + 3_600_000) }),
  // Options between passes.
  (input) => ({ ...input, options: { ...input.options, defaultLagGraceSeconds: 10 } }),
  (input) => ({ ...input, options: { ...input.options, defaults: { ...input.options.defaults, subnets: [SUBNET_A] } } }),
  (input) => ({ ...input, options: { ...input.options, allowAdoption: false } }),
  (input) => ({ ...input, options: { ...input.options, prune: false } }),
  // The remembered status lost, or saying this spec hash failed.
  (input, name) => {
    const remembered = { ...input.remembered };
    delete remembered[`apps/${name}`];
    return { ...input, remembered };
  },
  (input, name) => {
    const s = input.specs.find((x) => x.ok && x.key.service === name);
    const rem = input.remembered[`apps/${name}`];
    if (!s?.ok || rem === undefined) return input;
    return { ...input, remembered: { ...input.remembered, [`apps/${name}`]: { ...rem, failedSpecHash: s.hash } } };
  },
  // A remembered failure of another spec, or a different applied spec hash / deployment.
  (input, name) => {
    const rem = input.remembered[`apps/${name}`];
    if (rem === undefined) return input;
    return { ...input, remembered: { ...input.remembered, [`apps/${name}`]: { ...rem, failedSpecHash: 'another', lastAppliedSpecHash: 'another' } } };
  },
  (input, name) => {
    const rem = input.remembered[`apps/${name}`];
    if (rem === undefined) return input;
    return { ...input, remembered: { ...input.remembered, [`apps/${name}`]: { ...rem, appliedDeploymentId: 'ecs-svc/x', appliedRolloutState: 'IN_PROGRESS', laggingSince: new Date(input.now.getTime() - 7_200_000).toISOString() } } };
  },
  live((s) => void s.deployments.push(aDeployment({ id: 'ecs-svc/failed', status: 'ACTIVE', rolloutState: 'FAILED', taskDefinition: s.taskDefinition }))),
  live((s) => void (s.serviceDeployments = [])),
  live((s) => void delete s.serviceDeployments),
  // A new description object of the live revision (a cache refreshed).
  (input, name) => {
    const arn = input.observed.clusters.apps.services[name]?.taskDefinition;
    if (arn === undefined || input.observed.taskDefinitions[arn] === undefined) return input;
    return { ...input, observed: { ...input.observed, taskDefinitions: { ...input.observed.taskDefinitions, [arn]: { ...input.observed.taskDefinitions[arn] } } } };
  },
  // The service deleted.
  (input, name) => {
    const cl = input.observed.clusters.apps;
    const services = { ...cl.services };
    delete services[name];
    return { ...input, observed: { ...input.observed, clusters: { apps: { ...cl, services } } } };
  },
];

describe('steady judgement: a wide property over passes (written by a breaker)', () => {
  it('spec, options, clock, remembered status, descriptions and live service varied across passes: every plan is the full comparison', () => {
    const cache = new CompareCache();
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.tuple(fc.constantFrom(...SERVICES), fc.integer({ min: 0, max: CHANGES.length - 1 })), { maxLength: 3 }), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 0, max: 900 }),
        (rounds, step) => {
          let input: PlanInput = { ...steadyFleet(SERVICES), cache };
          planChecked(input);
          for (const changes of rounds) {
            for (const [name, i] of changes) input = CHANGES[i](input, name);
            const p = planChecked(input);
            // Actions are not applied: ECS stays as it was; the statuses carry over; the clock moves.
            input = { ...input, remembered: p.statuses, now: new Date(input.now.getTime() + step * 1000) };
            planChecked(input);
          }
        },
      ),
      { numRuns: process.env.FC_RUNS ? Number(process.env.FC_RUNS) : 300, seed: process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined },
    );
    // Judgements were actually taken (the property is not vacuous).
    expect(cache.judgementsTaken()).toBeGreaterThan(100);
  });
});

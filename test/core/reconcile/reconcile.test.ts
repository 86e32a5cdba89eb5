/**
 * `reconcileService`, one key at a time: each branch of the dispatcher from a view built as the
 * fleet entry point builds it (`fleetFacts`, `planContext`, `serviceView`).
 */
import { describe, expect, it } from 'vitest';
import { type PlanInput, fleetFacts, planContext, reconcileService, serviceView } from '../../../lambda/core/planner';
import type { Decision } from '../../../lambda/core/reconcile/types';
import { Reason } from '../../../lambda/core/status';
import { type ServiceKey, serviceId } from '../../../lambda/core/types';
import {
  CLUSTER,
  SERVICE,
  aConvergedService,
  aPlanInput,
  aSpec,
  aStatus,
  anInvalidSpec,
  anObservedCluster,
  anObservedService,
  anObservedState,
  familyOf,
  planOptions,
} from '../../support/builders';

const KEY: ServiceKey = { cluster: CLUSTER, service: SERVICE };

/** The decision for `key` (default `apps/web`) in the pass of `input`. */
function decide(input: PlanInput, key: ServiceKey = KEY): Decision {
  const fleet = fleetFacts(input);
  const ctx = planContext(input, fleet);
  const id = serviceId(key);
  const at = fleet.specIds.indexOf(id);
  const cluster = fleet.clusters.get(key.cluster);
  if (cluster === undefined) throw new Error(`cluster ${key.cluster} is not managed`);
  return reconcileService(serviceView(input, key, id, at >= 0 ? fleet.specResults[at] : undefined, cluster), ctx);
}

/** The decision's action types, its phase and its Ready reason. */
function summary(d: Decision): { actions: string[]; phase?: string; reason?: string } {
  const ready = d.status?.conditions.find((c) => c.type === 'Ready');
  return { actions: d.actions.map((a) => a.type), phase: d.status?.phase, reason: ready?.reason };
}

const spec = aSpec();
const converged = aConvergedService(spec.spec);

describe('reconcileService: one key, each branch of the dispatcher', () => {
  it.each([
    {
      case: 'orphan: an owned service without a spec, in a cluster with specs, is a delete candidate',
      input: aPlanInput({
        specs: [aSpec({ service: 'api' })],
        observed: anObservedState([anObservedCluster(CLUSTER, [anObservedService()])]),
      }),
      want: { actions: [], phase: undefined, reason: undefined },
      candidate: 'orphan',
    },
    {
      case: 'orphan not ours: no action, no status',
      input: aPlanInput({
        specs: [aSpec({ service: 'api' })],
        observed: anObservedState([anObservedCluster(CLUSTER, [anObservedService({ tags: {} })])]),
      }),
      want: { actions: [], phase: undefined, reason: undefined },
    },
    {
      case: 'invalid spec item: nothing changes, phase Invalid',
      input: aPlanInput({ specs: [anInvalidSpec()], observed: anObservedState([anObservedCluster(CLUSTER, [anObservedService()])]) }),
      want: { actions: [], phase: 'Invalid', reason: Reason.SpecInvalid },
    },
    {
      case: 'state absent with an owned live service: a delete candidate, no status before the budget',
      input: aPlanInput({ specs: [aSpec({ state: 'absent' })], observed: anObservedState([anObservedCluster(CLUSTER, [anObservedService()])]) }),
      want: { actions: [], phase: undefined, reason: undefined },
      candidate: 'absent',
    },
    {
      case: 'guard: the cluster does not exist',
      input: aPlanInput({ specs: [spec], observed: anObservedState([anObservedCluster(CLUSTER, [], { exists: false })]) }),
      want: { actions: [], phase: 'Blocked', reason: Reason.ClusterNotFound },
    },
    {
      case: 'guard: neither the spec nor the reconciler names a subnet',
      input: aPlanInput({ specs: [aSpec({ subnets: undefined })], options: planOptions({ defaults: { subnets: [], securityGroups: [] } }) }),
      want: { actions: [], phase: 'Blocked', reason: Reason.NoSubnets },
    },
    {
      case: 'not read: no service seen in a cluster read in part',
      input: aPlanInput({ specs: [spec], observed: anObservedState([anObservedCluster(CLUSTER, [], { complete: false, error: 'throttled' })]) }),
      want: { actions: [], phase: 'Pending', reason: Reason.ObservationIncomplete },
    },
    {
      case: 'absent service: register and create',
      input: aPlanInput({ specs: [spec] }),
      want: { actions: ['RegisterTaskDefinition', 'CreateService'], phase: 'Progressing', reason: Reason.Creating },
    },
    {
      case: 'absent service whose spec hash failed before: not created again',
      input: aPlanInput({ specs: [spec], remembered: { [serviceId(KEY)]: aStatus({ phase: 'Degraded', failedSpecHash: spec.hash }) } }),
      want: { actions: [], phase: 'Degraded', reason: Reason.RolloutFailed },
    },
    {
      case: 'draining: the previous service of the name is DRAINING',
      input: aPlanInput({ specs: [spec], observed: anObservedState([anObservedCluster(CLUSTER, [anObservedService({ status: 'DRAINING' })])]) }),
      want: { actions: [], phase: 'Pending', reason: Reason.PreviousServiceDraining },
    },
    {
      case: 'not ours: a live service without the owner tag and no adopt',
      input: aPlanInput({ specs: [spec], observed: anObservedState([anObservedCluster(CLUSTER, [{ ...converged.service, tags: {} }])], converged.taskDefinitions) }),
      want: { actions: [], phase: 'Blocked', reason: Reason.NotOwned },
    },
    {
      case: 'ECS manages it itself (Express Mode), owned and scaled by hand: never written to',
      input: aPlanInput({ specs: [spec], observed: anObservedState([anObservedCluster(CLUSTER, [{ ...converged.service, resourceManagementType: 'ECS', desiredCount: 5 }])], converged.taskDefinitions) }),
      want: { actions: [], phase: 'Blocked', reason: Reason.ManagedByEcs },
    },
    {
      case: 'on the MANAGED_INSTANCES launch type, owned and scaled by hand: never written to',
      input: aPlanInput({
        specs: [spec],
        observed: anObservedState([anObservedCluster(CLUSTER, [{ ...converged.service, capacityProviderStrategy: undefined, launchType: 'MANAGED_INSTANCES', desiredCount: 5 }])], converged.taskDefinitions),
      }),
      want: { actions: [], phase: 'Blocked', reason: Reason.UnmanagedCapacity },
    },
    {
      case: 'on a capacity provider the spec cannot express (a Managed Instances one): never written to',
      input: aPlanInput({
        specs: [spec],
        observed: anObservedState([anObservedCluster(CLUSTER, [{ ...converged.service, capacityProviderStrategy: [{ capacityProvider: 'mi-provider', weight: 1 }] }])], converged.taskDefinitions),
      }),
      want: { actions: [], phase: 'Blocked', reason: Reason.UnmanagedCapacity },
    },
    {
      case: 'existing and converged: no action',
      input: aPlanInput({ specs: [spec], observed: anObservedState([anObservedCluster(CLUSTER, [converged.service])], converged.taskDefinitions) }),
      want: { actions: [], phase: 'Converged', reason: Reason.ServiceConverged },
    },
    {
      case: 'existing, scaled by hand: UpdateService corrects the drift',
      input: aPlanInput({
        specs: [spec],
        observed: anObservedState([anObservedCluster(CLUSTER, [{ ...converged.service, desiredCount: 5 }])], converged.taskDefinitions),
        remembered: { [serviceId(KEY)]: aStatus({ specHash: spec.hash, lastAppliedSpecHash: spec.hash }) },
      }),
      want: { actions: ['UpdateService'], phase: 'Progressing', reason: Reason.DriftCorrected },
    },
  ])('$case', ({ input, want, candidate }) => {
    const d = decide(input);
    expect(summary(d)).toEqual(want);
    expect(d.deleteCandidate?.cause).toBe(candidate);
  });

  it('orphan in a cluster the table holds no spec for: Blocked, and asks to hold the cluster', () => {
    const input = aPlanInput({ observed: anObservedState([anObservedCluster(CLUSTER, [anObservedService()])]), options: planOptions({ managedClusters: [CLUSTER] }) });
    const d = decide(input);
    expect(summary(d)).toEqual({ actions: [], phase: 'Blocked', reason: Reason.PruneBlocked });
    expect(d.hold).toEqual({ cluster: CLUSTER, reason: `no spec at all for cluster ${CLUSTER}, where this reconciler owns 1 service` });
  });

  it('a spec that renders another task definition asks for the deployment history it has not read', () => {
    const input = aPlanInput({
      specs: [aSpec({ image: 'public.ecr.aws/nginx/nginx:1.28' })],
      observed: anObservedState([anObservedCluster(CLUSTER, [converged.service])], converged.taskDefinitions),
    });
    const d = decide(input);
    expect(summary(d)).toEqual({ actions: ['RegisterTaskDefinition', 'UpdateService'], phase: 'Progressing', reason: Reason.SpecApplied });
    expect(d.wantsDeploymentHistory).toBe(true);
  });
});

describe('family claims', () => {
  const named = aSpec({ service: 'api', family: familyOf(KEY) });

  it('computed from the specs: the spec whose service runs a revision of the family keeps it', () => {
    const input = aPlanInput({ specs: [named, spec], observed: anObservedState([anObservedCluster(CLUSTER, [converged.service])], converged.taskDefinitions) });
    expect([...fleetFacts(input).familyClaims]).toEqual([[familyOf(KEY), { key: KEY, running: true }]]);
    expect(summary(decide(input, { cluster: CLUSTER, service: 'api' }))).toMatchObject({ phase: 'Blocked', reason: Reason.FamilyCollision });
    expect(summary(decide(input))).toMatchObject({ phase: 'Converged' });
  });

  it('handed in by a caller that read only some keys: they decide, not the specs read', () => {
    // Only `apps/api` was read; the claim says `apps/web` keeps the family `apps/api` names.
    const input = aPlanInput({ specs: [named], familyClaims: new Map([[familyOf(KEY), { key: KEY, running: true }]]) });
    expect(summary(decide(input, { cluster: CLUSTER, service: 'api' }))).toEqual({ actions: [], phase: 'Blocked', reason: Reason.FamilyCollision });
    // Computed from the specs read, the family is free: `apps/api` would be created.
    const computed = aPlanInput({ specs: [named] });
    expect(summary(decide(computed, { cluster: CLUSTER, service: 'api' })).actions).toEqual(['RegisterTaskDefinition', 'CreateService']);
  });
});

describe('fleet facts', () => {
  it('keys in cluster/service order, an invalid item winning over a valid one of the same key', () => {
    const b = aSpec({ service: 'b' });
    const input = aPlanInput({ specs: [b, aSpec({ service: 'a' }), anInvalidSpec({ cluster: CLUSTER, service: 'b' }), anInvalidSpec(null)] });
    const fleet = fleetFacts(input);
    expect(fleet.specIds).toEqual([`${CLUSTER}/a`, `${CLUSTER}/b`]);
    expect(fleet.specResults[1].ok).toBe(false);
    expect(fleet.unkeyedInvalid).toBe(1);
  });

  it('counts the orphans a prune could delete only where the cluster and the table were read whole', () => {
    const owned = [anObservedService({ serviceName: 'x' }), anObservedService({ serviceName: 'y', status: 'DRAINING' }), anObservedService({ serviceName: 'z', tags: {} })];
    const input = aPlanInput({
      specs: [aSpec()],
      observed: anObservedState([anObservedCluster(CLUSTER, owned), anObservedCluster('other', owned, { complete: false })]),
      options: planOptions({ managedClusters: ['other'] }),
    });
    const fleet = fleetFacts(input);
    expect(fleet.orphans).toEqual([
      { cluster: CLUSTER, names: ['x', 'y', 'z'] },
      { cluster: 'other', names: ['x', 'y', 'z'] },
    ]);
    expect([...fleet.orphanCounts]).toEqual([[CLUSTER, 1]]);
    expect(fleetFacts({ ...input, specsComplete: false }).orphanCounts.size).toBe(0);
  });
});


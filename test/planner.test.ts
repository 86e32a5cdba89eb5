import { describe, expect, it } from 'vitest';
import { clientToken, plan, type PlanInput } from '../lambda/core/planner';
import { imageAllowed, imageRegistry } from '../lambda/core/allow-lists';
import { OWNER_TAG_KEY } from '../lambda/core/ports';
import { Reason, statusChanged } from '../lambda/core/status';
import { renderTaskDefinition } from '../lambda/core/taskdef';
import type {
  Action,
  CreateServiceAction,
  ObservedService,
  Plan,
  ServiceStatus,
  SpecParseResult,
  TagResourceAction,
  TaskDefinition,
  UpdateServiceAction,
} from '../lambda/core/types';
import {
  CLUSTER,
  NOW,
  OWNER,
  SERVICE,
  SG_1,
  SG_DEFAULT,
  SUBNET_A,
  SUBNET_B,
  SUBNET_DEFAULT,
  aCondition,
  aConvergedService,
  aDeployment,
  aPlanInput,
  aSpec,
  aStatus,
  anInvalidSpec,
  anObservedCluster,
  anObservedService,
  anObservedState,
  at,
  describedTaskDefinitionFor,
  familyOf,
  planOptions,
  type ValidSpec,
} from './support/builders';
import { FakeEcs, taskDefinitionArn } from './support/fake-ecs';

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

const ID = `${CLUSTER}/${SERVICE}`;

/** `Type cluster/service` per action, in plan order. */
function actionList(p: Plan): string[] {
  return p.actions.map((a) => `${a.type} ${a.cluster}/${a.service}`);
}

function only<T extends Action['type']>(p: Plan, type: T): Extract<Action, { type: T }> {
  const found = p.actions.filter((a) => a.type === type);
  expect(found, `exactly one ${type} in ${JSON.stringify(actionList(p))}`).toHaveLength(1);
  return found[0] as Extract<Action, { type: T }>;
}

/** Reasons of all conditions of a status. */
function reasons(s: ServiceStatus | undefined): string[] {
  return (s?.conditions ?? []).map((c) => c.reason);
}

function condition(s: ServiceStatus | undefined, type: string) {
  return s?.conditions.find((c) => c.type === type);
}

/** A plan for one spec and its live service (converged unless mutated), with the described TD. */
function planFor(
  spec: ValidSpec,
  mutate: (svc: ObservedService) => void = () => {},
  extra: Partial<PlanInput> = {},
): Plan {
  const { service, taskDefinitions } = aConvergedService(spec.spec);
  mutate(service);
  return plan(
    aPlanInput({
      specs: [spec],
      observed: anObservedState([anObservedCluster(spec.key.cluster, [service])], taskDefinitions),
      ...extra,
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// Managed clusters
// ---------------------------------------------------------------------------------------------

describe('managed clusters', () => {
  it.each([
    {
      case: 'cluster that does not exist: Blocked ClusterNotFound, no create',
      observed: anObservedState([anObservedCluster(CLUSTER, [], { exists: false })]),
      actions: [],
      phase: 'Blocked',
      reason: Reason.ClusterNotFound,
    },
    {
      case: 'cluster observed in part, service not seen: no create (absence unproven)',
      observed: anObservedState([anObservedCluster(CLUSTER, [], { complete: false, error: 'ListServices throttled' })]),
      actions: [],
      phase: 'Pending',
      reason: Reason.ObservationIncomplete,
    },
    {
      case: 'cluster not reported by the observer at all: treated as incomplete',
      observed: anObservedState([]),
      actions: [],
      phase: 'Pending',
      reason: Reason.ObservationIncomplete,
    },
    {
      case: 'complete cluster without the service: create',
      observed: anObservedState([anObservedCluster(CLUSTER, [])]),
      actions: [`RegisterTaskDefinition ${ID}`, `CreateService ${ID}`],
      phase: 'Progressing',
      reason: Reason.Creating,
    },
  ])('$case', ({ observed, actions, phase, reason }) => {
    // Prepare
    const input = aPlanInput({ specs: [aSpec()], observed });
    // Act
    const p = plan(input);
    // Assess
    expect(actionList(p)).toEqual(actions);
    expect(p.statuses[ID].phase).toBe(phase);
    expect(reasons(p.statuses[ID])).toContain(reason);
  });

  it('keeps the last known counts of a service a partial read did not show (no invented lag)', () => {
    // Prepare
    const remembered = { [ID]: aStatus({ desiredCount: 3, runningCount: 3 }) };
    const observed = anObservedState([anObservedCluster(CLUSTER, [], { complete: false })]);
    // Act
    const p = plan(aPlanInput({ specs: [aSpec({ desiredCount: 3 })], observed, remembered }));
    // Assess
    expect(p.statuses[ID]).toMatchObject({ desiredCount: 3, runningCount: 3, lagBeyondGrace: false });
    expect(p.statuses[ID].laggingSince).toBeUndefined();
  });

  it('updates an observed owned service even when its cluster was read in part', () => {
    // Prepare
    const spec = aSpec({ desiredCount: 3 });
    const { service, taskDefinitions } = aConvergedService(spec.spec, { desiredCount: 5, runningCount: 5 });
    const observed = anObservedState([anObservedCluster(CLUSTER, [service], { complete: false })], taskDefinitions);
    // Act
    const p = plan(aPlanInput({ specs: [spec], observed }));
    // Assess
    expect(only(p, 'UpdateService').input).toEqual({ cluster: CLUSTER, service: SERVICE, desiredCount: 3 });
  });

  it.each([
    {
      case: 'cluster named only in options.managedClusters is pruned once a person confirmed it',
      managedClusters: ['batch'],
      confirmed: ['batch'],
      deletes: ['DeleteService batch/old'],
    },
    { case: 'cluster named by no spec nor option is left alone', managedClusters: [], confirmed: ['batch'], deletes: [] },
  ])('$case', ({ managedClusters, confirmed, deletes }) => {
    // Prepare
    const orphan = anObservedService({ cluster: 'batch', serviceName: 'old' });
    const input = aPlanInput({
      specs: [aSpec()],
      observed: anObservedState([anObservedCluster(CLUSTER, []), anObservedCluster('batch', [orphan])]),
      options: planOptions({ managedClusters }),
      pruneConfirmedClusters: confirmed,
    });
    // Act
    const p = plan(input);
    // Assess
    expect(actionList(p).filter((a) => a.startsWith('Delete'))).toEqual(deletes);
    expect(p.statuses['batch/old'] !== undefined).toBe(deletes.length > 0);
  });
});

// ---------------------------------------------------------------------------------------------
// Ownership and adoption
// ---------------------------------------------------------------------------------------------

describe('ownership', () => {
  it.each([
    { case: 'no owner tag, adopt false: NotOwned', tags: {} as Record<string, string>, adopt: false, expected: [] as string[] },
    {
      case: 'another reconciler owns it, adopt false: NotOwned',
      tags: { [OWNER_TAG_KEY]: 'team-b' },
      adopt: false,
      expected: [],
    },
    {
      case: 'no owner tag, adopt true: TagResource then UpdateService',
      tags: {},
      adopt: true,
      expected: [`TagResource ${ID}`, `UpdateService ${ID}`],
    },
  ])('$case', ({ tags, adopt, expected }) => {
    // Prepare
    const spec = aSpec({ adopt, desiredCount: 3 });
    // Act
    const p = planFor(spec, (svc) => {
      svc.tags = tags;
      svc.desiredCount = 5;
    });
    // Assess
    expect(actionList(p)).toEqual(expected);
    if (adopt) {
      const tag = only(p, 'TagResource') as TagResourceAction;
      expect(tag.resourceArn).toBe(`arn:aws:ecs:eu-west-1:123456789012:service/${CLUSTER}/${SERVICE}`);
      expect(tag.tags).toContainEqual({ key: OWNER_TAG_KEY, value: OWNER });
      expect((only(p, 'UpdateService') as UpdateServiceAction).kind).toBe('adopt');
      expect(reasons(p.statuses[ID])).toContain(Reason.Adopting);
    } else {
      expect(p.statuses[ID].phase).toBe('Blocked');
      expect(condition(p.statuses[ID], 'Blocked')?.reason).toBe(Reason.NotOwned);
      expect(condition(p.statuses[ID], 'Blocked')?.message).toContain('adopt: true');
    }
  });

  it('adopting a service that already matches the spec sends only TagResource, with the spec tags', () => {
    // Prepare
    const spec = aSpec({ adopt: true, tags: { team: 'payments' } });
    // Act
    const p = planFor(spec, (svc) => {
      svc.tags = { team: 'payments' };
    });
    // Assess
    expect(actionList(p)).toEqual([`TagResource ${ID}`]);
    expect((only(p, 'TagResource') as TagResourceAction).tags).toEqual([
      { key: OWNER_TAG_KEY, value: OWNER },
      { key: 'team', value: 'payments' },
    ]);
  });

  it.each([
    { case: 'present', state: 'present' as const },
    { case: 'absent (delete by adoption)', state: 'absent' as const },
  ])('adopt: true never takes a service whose owner tag names another owner id ($case): OwnedByAnother, no action', ({ state }) => {
    // Prepare
    const spec = aSpec({ adopt: true, state, desiredCount: 3 });
    // Act
    const p = planFor(spec, (svc) => {
      svc.tags = { [OWNER_TAG_KEY]: 'team-b' };
      svc.desiredCount = 5;
    });
    // Assess
    expect(actionList(p)).toEqual([]);
    expect(p.statuses[ID].phase).toBe('Blocked');
    expect(condition(p.statuses[ID], 'Blocked')?.reason).toBe(Reason.OwnedByAnother);
    expect(condition(p.statuses[ID], 'Blocked')?.message).toContain('ecs-reconciler:owner=team-b');
  });

  it('with adoption turned off, adopt: true on an untagged service is NotAllowed, no action', () => {
    // Prepare
    const spec = aSpec({ adopt: true, desiredCount: 3 });
    // Act
    const p = planFor(spec, (svc) => {
      svc.tags = {};
      svc.desiredCount = 5;
    }, { options: planOptions({ allowAdoption: false }) });
    // Assess
    expect(actionList(p)).toEqual([]);
    expect(condition(p.statuses[ID], 'Blocked')?.reason).toBe(Reason.NotAllowed);
    expect(condition(p.statuses[ID], 'Blocked')?.message).toContain('adoption is turned off');
  });

  it('never prunes a service it does not own', () => {
    // Prepare
    const stranger = anObservedService({ serviceName: 'stranger', tags: { [OWNER_TAG_KEY]: 'someone-else' } });
    const untagged = anObservedService({ serviceName: 'untagged', tags: {} });
    const mine = anObservedService({ serviceName: 'mine' });
    const input = aPlanInput({
      observed: anObservedState([anObservedCluster(CLUSTER, [stranger, untagged, mine])]),
      options: planOptions({ managedClusters: [CLUSTER] }),
      pruneConfirmedClusters: [CLUSTER],
    });
    // Act
    const p = plan(input);
    // Assess
    expect(actionList(p)).toEqual([`DeleteService ${CLUSTER}/mine`]);
    expect(Object.keys(p.statuses)).toEqual([`${CLUSTER}/mine`]);
  });
});

// ---------------------------------------------------------------------------------------------
// Invalid specs
// ---------------------------------------------------------------------------------------------

describe('invalid spec', () => {
  it('writes nothing to its service and does not prune it, but plans the others', () => {
    // Prepare
    const drifted = anObservedService({ desiredCount: 9 });
    const other = aSpec({ service: 'api' });
    const input = aPlanInput({
      specs: [
        anInvalidSpec({ cluster: CLUSTER, service: SERVICE }, [
          { path: 'cpu', value: '300', message: 'must be one of 256, 512' },
          { path: 'image', value: '', message: 'is required' },
        ]),
        other,
      ],
      observed: anObservedState([anObservedCluster(CLUSTER, [drifted])]),
    });
    // Act
    const p = plan(input);
    // Assess
    expect(actionList(p)).toEqual([`RegisterTaskDefinition ${CLUSTER}/api`, `CreateService ${CLUSTER}/api`]);
    const s = p.statuses[ID];
    expect(s.phase).toBe('Invalid');
    expect(condition(s, 'Blocked')?.reason).toBe(Reason.SpecInvalid);
    expect(condition(s, 'Blocked')?.message).toContain('cpu: must be one of 256, 512; image: is required');
  });

  it('an invalid item without a usable key holds back every orphan prune', () => {
    // Prepare
    const orphan = anObservedService({ serviceName: 'orphan' });
    const input = aPlanInput({
      specs: [anInvalidSpec(null)],
      observed: anObservedState([anObservedCluster(CLUSTER, [orphan])]),
      options: planOptions({ managedClusters: [CLUSTER] }),
    });
    // Act
    const p = plan(input);
    // Assess
    expect(p.actions).toEqual([]);
    expect(condition(p.statuses[`${CLUSTER}/orphan`], 'Blocked')?.reason).toBe(Reason.PruneBlocked);
  });
});

// ---------------------------------------------------------------------------------------------
// Allow-lists and network defaults
// ---------------------------------------------------------------------------------------------

describe('allow-lists', () => {
  const ROLE_OK = 'arn:aws:iam::123456789012:role/app';
  const ROLE_BAD = 'arn:aws:iam::123456789012:role/admin';
  it.each([
    {
      case: 'task role outside the list',
      spec: { taskRoleArn: ROLE_BAD },
      allow: { taskRoleArns: [ROLE_OK] },
      blocked: ROLE_BAD,
    },
    { case: 'task role inside the list', spec: { taskRoleArn: ROLE_OK }, allow: { taskRoleArns: [ROLE_OK] }, blocked: undefined },
    {
      case: 'execution role outside the list',
      spec: { executionRoleArn: ROLE_BAD },
      allow: { executionRoleArns: [ROLE_OK] },
      blocked: ROLE_BAD,
    },
    {
      case: 'Docker Hub image when only ECR Public is allowed',
      spec: { image: 'nginx:1.27' },
      allow: { imageRegistries: ['public.ecr.aws'] },
      blocked: 'docker.io',
    },
    {
      case: 'ECR Public image when ECR Public is allowed',
      spec: { image: 'public.ecr.aws/nginx/nginx:1.27' },
      allow: { imageRegistries: ['public.ecr.aws'] },
      blocked: undefined,
    },
    {
      case: 'undefined lists allow anything',
      spec: { taskRoleArn: ROLE_BAD, image: 'nginx' },
      allow: { taskRoleArns: undefined },
      blocked: undefined,
    },
    {
      case: 'an empty list (NONE) allows nothing',
      spec: { taskRoleArn: ROLE_BAD, image: 'nginx' },
      allow: { taskRoleArns: [] },
      blocked: 'allow-list ALLOWED_TASK_ROLE_ARNS is empty',
    },
  ])('$case', ({ spec, allow, blocked }) => {
    // Prepare
    const input = aPlanInput({ specs: [aSpec(spec)], options: planOptions({ allow }) });
    // Act
    const p = plan(input);
    // Assess
    if (blocked === undefined) {
      expect(actionList(p)).toEqual([`RegisterTaskDefinition ${ID}`, `CreateService ${ID}`]);
    } else {
      expect(p.actions).toEqual([]);
      expect(p.statuses[ID].phase).toBe('Blocked');
      const c = condition(p.statuses[ID], 'Blocked');
      expect(c?.reason).toBe(Reason.NotAllowed);
      expect(c?.message).toContain(blocked);
      expect(c?.message).toContain('allow-list');
    }
  });

  it('blocks drift correction too: no writes to a service outside the allow-list', () => {
    // Prepare
    const spec = aSpec({ image: 'docker.io/library/nginx:1' });
    // Act
    const p = planFor(spec, (svc) => (svc.desiredCount = 7), { options: planOptions({ allow: { imageRegistries: ['ghcr.io'] } }) });
    // Assess
    expect(p.actions).toEqual([]);
    expect(reasons(p.statuses[ID])).toContain(Reason.NotAllowed);
  });

  it.each([
    { image: 'nginx', registry: 'docker.io' },
    { image: 'nginx:1.27', registry: 'docker.io' },
    { image: 'library/nginx@sha256:abc', registry: 'docker.io' },
    { image: 'index.docker.io/library/nginx', registry: 'docker.io' },
    { image: 'ghcr.io/acme/app:2', registry: 'ghcr.io' },
    { image: 'localhost/app', registry: 'localhost' },
    { image: 'registry.local:5000/app', registry: 'registry.local:5000' },
    { image: '123456789012.dkr.ecr.eu-west-1.amazonaws.com/app:1', registry: '123456789012.dkr.ecr.eu-west-1.amazonaws.com' },
  ])('image $image is on registry $registry', ({ image, registry }) => {
    expect(imageRegistry(image)).toBe(registry);
  });
});

describe('network defaults', () => {
  it.each([
    {
      case: 'spec without subnets and groups uses the defaults',
      spec: { subnets: undefined, securityGroups: undefined },
      defaults: { subnets: [SUBNET_DEFAULT], securityGroups: [SG_DEFAULT], assignPublicIp: true },
      net: { subnets: [SUBNET_DEFAULT], securityGroups: [SG_DEFAULT], assignPublicIp: 'ENABLED' },
    },
    {
      case: 'spec values win over the defaults',
      spec: { subnets: [SUBNET_A], securityGroups: [SG_1], assignPublicIp: false },
      defaults: { subnets: [SUBNET_DEFAULT], securityGroups: [SG_DEFAULT], assignPublicIp: true },
      net: { subnets: [SUBNET_A], securityGroups: [SG_1], assignPublicIp: 'DISABLED' },
    },
    {
      case: 'assignPublicIp defaults to DISABLED',
      spec: { subnets: [SUBNET_A] },
      defaults: { subnets: [], securityGroups: [] },
      net: { subnets: [SUBNET_A], securityGroups: [SG_1], assignPublicIp: 'DISABLED' },
    },
  ])('$case', ({ spec, defaults, net }) => {
    // Act
    const p = plan(aPlanInput({ specs: [aSpec(spec)], options: planOptions({ defaults }) }));
    // Assess
    expect((only(p, 'CreateService') as CreateServiceAction).input.networkConfiguration.awsvpcConfiguration).toEqual(net);
  });

  it('a spec left without subnets is Blocked NoSubnets, even with a live service to correct', () => {
    // Prepare
    const spec = aSpec({ subnets: undefined });
    // Act
    const p = planFor(spec, (svc) => (svc.desiredCount = 9), {
      options: planOptions({ defaults: { subnets: [], securityGroups: [SG_DEFAULT] } }),
    });
    // Assess
    expect(p.actions).toEqual([]);
    expect(p.statuses[ID].phase).toBe('Blocked');
    expect(condition(p.statuses[ID], 'Blocked')?.reason).toBe(Reason.NoSubnets);
  });
});

// ---------------------------------------------------------------------------------------------
// Prune and deletes
// ---------------------------------------------------------------------------------------------

function owned(n: number, prefix = 's', cluster = CLUSTER): ObservedService[] {
  return Array.from({ length: n }, (_, i) => anObservedService({ cluster, serviceName: `${prefix}${i}` }));
}

/** Specs for some of the owned services (so the rest are orphans). */
function specsFor(services: ObservedService[], cluster = CLUSTER): SpecParseResult[] {
  return services.map((s) => aSpec({ cluster, service: s.serviceName }));
}

describe('prune of owned services without a spec', () => {
  it.each([
    { case: 'prune on, complete reads: deleted', over: {}, deletes: 1, reason: Reason.Deleting, phase: 'Deleting' },
    {
      case: 'spec read incomplete: kept',
      over: { specsComplete: false },
      deletes: 0,
      reason: Reason.SpecsIncomplete,
      phase: 'Pending',
    },
    {
      case: 'cluster read incomplete: kept',
      over: { incomplete: true },
      deletes: 0,
      reason: Reason.ObservationIncomplete,
      phase: 'Pending',
    },
    { case: 'prune disabled: kept', over: { prune: false }, deletes: 0, reason: Reason.PruneDisabled, phase: 'Blocked' },
  ])('$case', ({ over, deletes, reason, phase }) => {
    // Prepare
    const orphan = anObservedService({ serviceName: 'orphan', desiredCount: 2 });
    const o = over as { specsComplete?: boolean; incomplete?: boolean; prune?: boolean };
    const input = aPlanInput({
      specs: [aSpec()],
      specsComplete: o.specsComplete ?? true,
      observed: anObservedState([anObservedCluster(CLUSTER, [orphan], { complete: !o.incomplete })]),
      options: planOptions({ prune: o.prune ?? true }),
    });
    // Act
    const p = plan(input);
    // Assess
    const del = p.actions.filter((a) => a.type === 'DeleteService');
    expect(del).toHaveLength(deletes);
    if (deletes) expect(del[0]).toMatchObject({ cause: 'orphan', scaleToZero: true, service: 'orphan' });
    expect(p.statuses[`${CLUSTER}/orphan`].phase).toBe(phase);
    expect(reasons(p.statuses[`${CLUSTER}/orphan`])).toContain(reason);
  });

  it.each([
    { case: '3 orphans, maxDeletesPerPass 2: all blocked', owned: 3, withSpec: 0, max: 2, deleted: 0 },
    { case: '2 orphans, maxDeletesPerPass 2, prune confirmed: both deleted', owned: 2, withSpec: 0, max: 2, deleted: 2, confirmed: true },
    { case: '2 orphans, no spec in the cluster, not confirmed: both blocked', owned: 2, withSpec: 0, max: 2, deleted: 0 },
    { case: '6 owned, 4 without spec (more than half), prune confirmed: deleted', owned: 6, withSpec: 2, max: 10, deleted: 4, confirmed: true },
    { case: '6 owned, 4 without spec (more than half): all blocked', owned: 6, withSpec: 2, max: 10, deleted: 0 },
    { case: '6 owned, 3 without spec (half): deleted', owned: 6, withSpec: 3, max: 10, deleted: 3 },
    { case: '4 owned, 3 without spec (small cluster): deleted', owned: 4, withSpec: 1, max: 10, deleted: 3 },
  ])('$case', ({ owned: n, withSpec, max, deleted, confirmed }: { owned: number; withSpec: number; max: number; deleted: number; confirmed?: boolean }) => {
    // Prepare
    const services = owned(n);
    const input = aPlanInput({
      specs: specsFor(services.slice(0, withSpec)),
      observed: anObservedState([anObservedCluster(CLUSTER, services)]),
      options: planOptions({ maxDeletesPerPass: max, managedClusters: [CLUSTER] }),
      ...(confirmed ? { pruneConfirmedClusters: [CLUSTER] } : {}),
    });
    // Act
    const p = plan(input);
    // Assess
    const deletes = p.actions.filter((a) => a.type === 'DeleteService');
    expect(deletes).toHaveLength(deleted);
    const orphanStatuses = services.slice(withSpec).map((s) => p.statuses[`${CLUSTER}/${s.serviceName}`]);
    for (const s of orphanStatuses) {
      expect(reasons(s)).toContain(deleted === 0 ? Reason.PruneBlocked : Reason.Deleting);
    }
  });

  it.each([
    { case: 'an empty table', specs: () => [], blocked: true },
    { case: 'specs only for another cluster', specs: () => [aSpec({ cluster: 'other', service: 'x' })], blocked: true },
    { case: 'an invalid spec item of the cluster (the table is not empty there)', specs: () => [anInvalidSpec({ cluster: CLUSTER, service: 'broken' })], blocked: false },
    { case: 'a spec with state: absent in the cluster', specs: () => [aSpec({ service: 'gone', state: 'absent' })], blocked: false },
  ])('no spec at all for a cluster with owned services: PruneBlocked, naming the fix ($case)', ({ specs, blocked }) => {
    // Prepare
    const orphan = anObservedService({ serviceName: 'orphan' });
    const input = aPlanInput({
      specs: specs(),
      observed: anObservedState([anObservedCluster(CLUSTER, [orphan]), anObservedCluster('other', [])]),
      options: planOptions({ managedClusters: [CLUSTER, 'other'] }),
    });
    // Act
    const p = plan(input);
    // Assess
    const deletes = p.actions.filter((a) => a.type === 'DeleteService' && a.service === 'orphan');
    expect(deletes).toHaveLength(blocked ? 0 : 1);
    if (blocked) {
      const c = condition(p.statuses[`${CLUSTER}/orphan`], 'Blocked');
      expect(p.statuses[`${CLUSTER}/orphan`].phase).toBe('Blocked');
      expect(c?.reason).toBe(Reason.PruneBlocked);
      expect(c?.message).toContain(`holds no spec at all for cluster ${CLUSTER}`);
      expect(c?.message).toContain(`ecsr prune --confirm ${CLUSTER}`);
    }
  });

  it('a confirmation for another cluster does not lift the block', () => {
    const input = aPlanInput({
      specs: [],
      observed: anObservedState([anObservedCluster(CLUSTER, [anObservedService({ serviceName: 'orphan' })])]),
      options: planOptions({ managedClusters: [CLUSTER] }),
      pruneConfirmedClusters: ['other'],
    });
    expect(plan(input).actions).toEqual([]);
  });

  it('an invalid spec protects its owned service from prune', () => {
    // Prepare
    const input = aPlanInput({
      specs: [anInvalidSpec()],
      observed: anObservedState([anObservedCluster(CLUSTER, [anObservedService()])]),
    });
    // Act
    const p = plan(input);
    // Assess
    expect(p.actions).toEqual([]);
    expect(p.statuses[ID].phase).toBe('Invalid');
  });
});

describe('prune hold: memory of a wiped or half-restored table', () => {
  const HOLD = { cluster: CLUSTER, since: '2026-01-01T00:00:00.000Z', reason: `11 of the 12 owned services of cluster ${CLUSTER} without a spec (more than half)` };
  const deletesOf = (p: Plan) => p.actions.filter((a) => a.type === 'DeleteService').map((a) => `${a.cluster}/${a.service}`);

  /** 12 owned services in CLUSTER, the first `withSpec` of them with a spec. */
  function twelveOwned(withSpec: number, over: Partial<PlanInput> = {}, observedOver: { complete?: boolean } = {}): PlanInput {
    const services = owned(12);
    return aPlanInput({
      specs: specsFor(services.slice(0, withSpec)),
      observed: anObservedState([anObservedCluster(CLUSTER, services, observedOver)]),
      options: planOptions({ managedClusters: [CLUSTER] }),
      ...over,
    });
  }

  it.each([
    { case: 'more than half of the cluster lost its spec', input: () => twelveOwned(1), reason: '11 of the 12 owned services' },
    { case: 'no spec at all for the cluster', input: () => twelveOwned(0), reason: 'no spec at all for cluster' },
    {
      case: 'more prunes than maxDeletesPerPass',
      input: () => twelveOwned(6, { options: planOptions({ managedClusters: [CLUSTER], maxDeletesPerPass: 5 }) }),
      reason: '6 owned services without a spec in one pass, more than maxDeletesPerPass (5)',
    },
  ])('a pass that holds prunes because $case sets a hold, and says how to release it', ({ input, reason }) => {
    // Act
    const p = plan(input());
    // Assess
    expect(deletesOf(p)).toEqual([]);
    expect(p.pruneHolds?.set).toEqual([{ cluster: CLUSTER, since: NOW.toISOString(), reason: expect.stringContaining(reason) }]);
    expect(p.pruneHolds?.held.map((h) => h.cluster)).toEqual([CLUSTER]);
    expect(p.pruneHolds?.held[0].release).toContain(`ecsr prune --confirm ${CLUSTER}`);
    expect(condition(p.statuses[`${CLUSTER}/s11`], 'Blocked')?.message).toContain('stay held until every owned service there has a spec again');
  });

  it('an invalid item without a usable key holds this pass back but sets no hold', () => {
    const services = owned(6);
    const p = plan(aPlanInput({ specs: [...specsFor(services.slice(0, 5)), anInvalidSpec(null)], observed: anObservedState([anObservedCluster(CLUSTER, services)]) }));
    expect(deletesOf(p)).toEqual([]);
    expect(p.pruneHolds).toBeUndefined();
  });

  it.each([
    { case: '7 of 12 specs back (5 missing, within both limits)', withSpec: 7, missing: 5 },
    { case: '11 of 12 specs back', withSpec: 11, missing: 1 },
  ])('a held cluster prunes nothing while specs are missing: $case', ({ withSpec, missing }) => {
    // Prepare
    const without = plan(twelveOwned(withSpec));
    // Act
    const p = plan(twelveOwned(withSpec, { pruneHolds: [HOLD] }));
    // Assess: the same read without the hold prunes them.
    expect(deletesOf(without)).toHaveLength(missing);
    expect(deletesOf(p)).toEqual([]);
    expect(p.pruneHolds).toEqual({ held: [{ ...HOLD, missing, release: expect.stringContaining(`(${missing} still`) }], set: [], cleared: [] });
    const c = condition(p.statuses[`${CLUSTER}/s11`], 'Blocked');
    expect(p.statuses[`${CLUSTER}/s11`].phase).toBe('Blocked');
    expect(c?.reason).toBe(Reason.PruneBlocked);
    expect(c?.message).toContain(`prune held since ${HOLD.since}: a pass found ${HOLD.reason}`);
    expect(c?.message).toContain(`ecsr prune --confirm ${CLUSTER}`);
  });

  it.each([
    { case: 'every owned service has a spec again: released (restored)', input: () => twelveOwned(12, { pruneHolds: [HOLD] }), cleared: [{ cluster: CLUSTER, because: 'restored' }], deletes: 0 },
    {
      case: 'a person confirmed: released (confirmed), and the orphan is pruned',
      input: () => twelveOwned(11, { pruneHolds: [HOLD], pruneConfirmedClusters: [CLUSTER] }),
      cleared: [{ cluster: CLUSTER, because: 'confirmed' }],
      deletes: 1,
    },
  ])('$case', ({ input, cleared, deletes }) => {
    const p = plan(input());
    expect(p.pruneHolds).toEqual({ held: [], set: [], cleared });
    expect(deletesOf(p)).toHaveLength(deletes);
  });

  it.each([
    { case: 'the cluster was read only in part', input: () => twelveOwned(12, { pruneHolds: [HOLD] }, { complete: false }) },
    { case: 'the spec table was read only in part', input: () => twelveOwned(12, { pruneHolds: [HOLD], specsComplete: false }) },
    { case: 'the cluster is not observed this pass', input: () => aPlanInput({ specs: [aSpec({ cluster: 'other', service: 'x' })], observed: anObservedState([anObservedCluster('other', [])]), pruneHolds: [HOLD] }) },
  ])('a hold is kept, not released, when $case', ({ input }) => {
    const p = plan(input());
    expect(p.pruneHolds).toEqual({ held: [{ ...HOLD, release: expect.any(String) }], set: [], cleared: [] });
  });

  it('a hold in one cluster neither blocks another cluster nor counts against maxDeletesPerPass there', () => {
    // Prepare: 4 held orphans in CLUSTER, 2 plain ones in batch; 6 would exceed the cap of 5.
    const held = owned(12);
    const batch = owned(3, 'b', 'batch');
    const input = aPlanInput({
      specs: [...specsFor(held.slice(0, 8)), ...specsFor(batch.slice(0, 1), 'batch')],
      observed: anObservedState([anObservedCluster(CLUSTER, held), anObservedCluster('batch', batch)]),
      options: planOptions({ managedClusters: [CLUSTER, 'batch'], maxDeletesPerPass: 5 }),
      pruneHolds: [HOLD],
    });
    // Act
    const p = plan(input);
    // Assess
    expect(deletesOf(p)).toEqual(['batch/b1', 'batch/b2']);
    expect(p.pruneHolds?.held.map((h) => [h.cluster, h.missing])).toEqual([[CLUSTER, 4]]);
  });

  it('with prune disabled a hold is kept and the orphans say PruneDisabled', () => {
    const p = plan(twelveOwned(11, { pruneHolds: [HOLD], options: planOptions({ managedClusters: [CLUSTER], prune: false }) }));
    expect(deletesOf(p)).toEqual([]);
    expect(reasons(p.statuses[`${CLUSTER}/s11`])).toContain(Reason.PruneDisabled);
    expect(p.pruneHolds?.held.map((h) => h.cluster)).toEqual([CLUSTER]);
  });
});

describe('state: absent', () => {
  it.each([
    {
      case: 'owned ACTIVE service with tasks: deleted, scaled to zero first',
      live: {},
      actions: [`DeleteService ${ID}`],
      phase: 'Deleting',
    },
    {
      case: 'owned ACTIVE service at 0 tasks: deleted without scaling',
      live: { desiredCount: 0, runningCount: 0 },
      actions: [`DeleteService ${ID}`],
      phase: 'Deleting',
    },
    { case: 'DRAINING service: Deleting, no action', live: { status: 'DRAINING' }, actions: [], phase: 'Deleting' },
    { case: 'INACTIVE service: Deleted', live: { status: 'INACTIVE' }, actions: [], phase: 'Deleted' },
    { case: 'missing service: Deleted', live: undefined, actions: [], phase: 'Deleted' },
    { case: 'service not owned: Blocked NotOwned', live: { tags: {} }, actions: [], phase: 'Blocked' },
  ])('$case', ({ live, actions, phase }) => {
    // Prepare
    const services = live === undefined ? [] : [anObservedService(live as Partial<ObservedService>)];
    const input = aPlanInput({ specs: [aSpec({ state: 'absent' })], observed: anObservedState([anObservedCluster(CLUSTER, services)]) });
    // Act
    const p = plan(input);
    // Assess
    expect(actionList(p)).toEqual(actions);
    expect(p.statuses[ID].phase).toBe(phase);
    if (actions.length) {
      const del = only(p, 'DeleteService');
      expect(del.cause).toBe('absent');
      expect(del.scaleToZero).toBe((live as { desiredCount?: number }).desiredCount !== 0);
    }
  });

  it.each([
    { case: 'delete planned', live: {}, reason: /DeleteService planned: the spec says state: absent/ },
    { case: 'DRAINING', live: { status: 'DRAINING' }, reason: /DRAINING/ },
    { case: 'INACTIVE', live: { status: 'INACTIVE' }, reason: /INACTIVE/ },
  ])('the reason while deleting ($case) is the deletion, not the newest ECS event', ({ live, reason }) => {
    // Prepare: the newest event is about tasks starting, which says nothing about the deletion.
    const events = [{ id: 'e1', createdAt: new Date(NOW.getTime() - 1000), message: '(service web) has started 3 tasks: (task abc).' }];
    const services = [anObservedService({ ...(live as Partial<ObservedService>), events })];
    const input = aPlanInput({ specs: [aSpec({ state: 'absent' })], observed: anObservedState([anObservedCluster(CLUSTER, services)]) });
    // Act
    const p = plan(input);
    // Assess
    expect(p.statuses[ID].reason).toMatch(reason);
    expect(p.statuses[ID].reason).not.toMatch(/has started/);
  });

  it.each([
    { case: 'spec read incomplete', specsComplete: false, complete: true },
    { case: 'cluster read incomplete', specsComplete: true, complete: false },
  ])('no delete when the $case', ({ specsComplete, complete }) => {
    // Prepare
    const input = aPlanInput({
      specs: [aSpec({ state: 'absent' })],
      specsComplete,
      observed: anObservedState([anObservedCluster(CLUSTER, [anObservedService()], { complete })]),
    });
    // Act
    const p = plan(input);
    // Assess
    expect(p.actions).toEqual([]);
    expect(p.statuses[ID].phase).toBe('Pending');
  });

  it('absent deletes are limited by maxDeletesPerPass: the first in order go, the rest wait', () => {
    // Prepare
    const services = owned(4, 'x');
    const input = aPlanInput({
      specs: [...services].reverse().map((s) => aSpec({ service: s.serviceName, state: 'absent' })),
      observed: anObservedState([anObservedCluster(CLUSTER, services)]),
      options: planOptions({ maxDeletesPerPass: 3 }),
    });
    // Act
    const p = plan(input);
    // Assess
    expect(actionList(p)).toEqual([`DeleteService ${CLUSTER}/x0`, `DeleteService ${CLUSTER}/x1`, `DeleteService ${CLUSTER}/x2`]);
    expect(p.statuses[`${CLUSTER}/x3`].phase).toBe('Pending');
    expect(reasons(p.statuses[`${CLUSTER}/x3`])).toContain(Reason.DeleteLimitReached);
  });

  it('absent deletes are not held back by the orphan safety valve (more than half of a cluster)', () => {
    // Prepare
    const services = owned(6);
    const input = aPlanInput({
      specs: [
        ...services.slice(0, 4).map((s): SpecParseResult => aSpec({ service: s.serviceName, state: 'absent' })),
        ...specsFor(services.slice(4)),
      ],
      observed: anObservedState([anObservedCluster(CLUSTER, services)]),
      options: planOptions({ maxDeletesPerPass: 5 }),
    });
    // Act
    const p = plan(input);
    // Assess
    expect(p.actions.filter((a) => a.type === 'DeleteService')).toHaveLength(4);
  });
});

// ---------------------------------------------------------------------------------------------
// Draining and create
// ---------------------------------------------------------------------------------------------

describe('a previous service of the same name', () => {
  it.each([
    {
      case: 'DRAINING: wait',
      status: 'DRAINING',
      actions: [] as string[],
      phase: 'Pending',
      reason: Reason.PreviousServiceDraining,
    },
    {
      case: 'INACTIVE: create',
      status: 'INACTIVE',
      actions: [`RegisterTaskDefinition ${ID}`, `CreateService ${ID}`],
      phase: 'Progressing',
      reason: Reason.Creating,
    },
    {
      case: 'MISSING: create',
      status: undefined,
      actions: [`RegisterTaskDefinition ${ID}`, `CreateService ${ID}`],
      phase: 'Progressing',
      reason: Reason.Creating,
    },
  ])('$case', ({ status, actions, phase, reason }) => {
    // Prepare
    const services = status ? [anObservedService({ status, tags: {} })] : [];
    const input = aPlanInput({ specs: [aSpec()], observed: anObservedState([anObservedCluster(CLUSTER, services)]) });
    // Act
    const p = plan(input);
    // Assess
    expect(actionList(p)).toEqual(actions);
    expect(p.statuses[ID].phase).toBe(phase);
    expect(reasons(p.statuses[ID])).toContain(reason);
  });
});

describe('create', () => {
  it('registers the rendered task definition, then creates the service with every field set', () => {
    // Prepare
    const spec = aSpec({
      tags: { team: 'payments' },
      loadBalancer: { targetGroupArn: 'arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/web/0123456789abcdef', containerPort: 80 },
    });
    // Act
    const p = plan(aPlanInput({ specs: [spec] }));
    // Assess
    expect(actionList(p)).toEqual([`RegisterTaskDefinition ${ID}`, `CreateService ${ID}`]);
    const options = planOptions();
    expect(only(p, 'RegisterTaskDefinition').input).toEqual(
      renderTaskDefinition(spec.spec, { defaults: options.defaults, ownerId: options.ownerId }),
    );
    expect((only(p, 'CreateService') as CreateServiceAction).input).toEqual({
      cluster: CLUSTER,
      serviceName: SERVICE,
      taskDefinition: familyOf(),
      desiredCount: 2,
      capacityProviderStrategy: [{ capacityProvider: 'FARGATE', weight: 1 }],
      networkConfiguration: { awsvpcConfiguration: { subnets: [SUBNET_A, SUBNET_B], securityGroups: [SG_1], assignPublicIp: 'DISABLED' } },
      deploymentConfiguration: { minimumHealthyPercent: 100, maximumPercent: 200, deploymentCircuitBreaker: { enable: true, rollback: true } },
      loadBalancers: [{ targetGroupArn: spec.spec.loadBalancer!.targetGroupArn, containerName: SERVICE, containerPort: 80 }],
      propagateTags: 'SERVICE',
      tags: [
        { key: OWNER_TAG_KEY, value: OWNER },
        { key: 'team', value: 'payments' },
      ],
      clientToken: clientToken(spec.key, spec.hash),
    });
    expect(p.statuses[ID].lastAppliedSpecHash).toBe(spec.hash);
  });

  it.each([
    {
      case: 'spec deployment settings are sent',
      deployment: { minimumHealthyPercent: 50, maximumPercent: 150, circuitBreaker: { enable: false, rollback: false } },
      expected: { minimumHealthyPercent: 50, maximumPercent: 150, deploymentCircuitBreaker: { enable: false, rollback: false } },
    },
    {
      case: 'defaults: 100/200 and circuit breaker with rollback',
      deployment: undefined,
      expected: { minimumHealthyPercent: 100, maximumPercent: 200, deploymentCircuitBreaker: { enable: true, rollback: true } },
    },
  ])('$case', ({ deployment, expected }) => {
    const p = plan(aPlanInput({ specs: [aSpec({ deployment })] }));
    expect((only(p, 'CreateService') as CreateServiceAction).input.deploymentConfiguration).toEqual(expected);
  });

  it.each([
    { case: 'fixed count', over: { desiredCount: 3 }, desired: 3 },
    { case: 'autoscaled with a count: that count to start', over: { autoscaled: true, desiredCount: 4 }, desired: 4 },
    { case: 'autoscaled without a count: 1 to start', over: { autoscaled: true, desiredCount: undefined }, desired: 1 },
  ])('desiredCount on create, $case', ({ over, desired }) => {
    const p = plan(aPlanInput({ specs: [aSpec(over)] }));
    expect((only(p, 'CreateService') as CreateServiceAction).input.desiredCount).toBe(desired);
  });
});

describe('clientToken', () => {
  it.each([
    { case: 'plain names', key: { cluster: 'apps', service: 'web' }, hash: '0123456789abcdef' },
    { case: 'long names', key: { cluster: 'c'.repeat(255), service: 's'.repeat(255) }, hash: 'f'.repeat(16) },
  ])('$case: at most 36 printable ASCII characters, stable', ({ key, hash }) => {
    const token = clientToken(key, hash);
    expect(token.length).toBeLessThanOrEqual(36);
    expect(token).toMatch(/^[\x21-\x7e]+$/);
    expect(clientToken(key, hash)).toBe(token);
  });

  it.each([
    { case: 'another hash', other: [{ cluster: 'apps', service: 'web' }, 'ffffffffffffffff'] as const },
    { case: 'another service', other: [{ cluster: 'apps', service: 'api' }, '0123456789abcdef'] as const },
    { case: 'another cluster', other: [{ cluster: 'prod', service: 'web' }, '0123456789abcdef'] as const },
  ])('differs for $case', ({ other }) => {
    expect(clientToken(other[0], other[1])).not.toBe(clientToken({ cluster: 'apps', service: 'web' }, '0123456789abcdef'));
  });
});

// ---------------------------------------------------------------------------------------------
// Drift
// ---------------------------------------------------------------------------------------------

describe('drift of the live service', () => {
  it.each([
    {
      case: 'desiredCount changed by hand',
      mutate: (s: ObservedService) => (s.desiredCount = 5),
      input: { desiredCount: 2 },
      changes: [{ field: 'desiredCount', from: '5', to: '2' }],
    },
    {
      case: 'subnets in another order: no drift',
      mutate: (s: ObservedService) => (s.networkConfiguration!.awsvpcConfiguration!.subnets = [SUBNET_B, SUBNET_A]),
      input: undefined,
      changes: [],
    },
    {
      case: 'a subnet removed',
      mutate: (s: ObservedService) => (s.networkConfiguration!.awsvpcConfiguration!.subnets = [SUBNET_A]),
      input: { networkConfiguration: { awsvpcConfiguration: { subnets: [SUBNET_A, SUBNET_B], securityGroups: [SG_1], assignPublicIp: 'DISABLED' } } },
      changes: [{ field: 'networkConfiguration.subnets', from: SUBNET_A, to: `${SUBNET_A},${SUBNET_B}` }],
    },
    {
      case: 'assignPublicIp absent means DISABLED: no drift',
      mutate: (s: ObservedService) => delete s.networkConfiguration!.awsvpcConfiguration!.assignPublicIp,
      input: undefined,
      changes: [],
    },
    {
      case: 'circuit breaker object absent means disabled: drift against the default',
      mutate: (s: ObservedService) => (s.deploymentConfiguration = { minimumHealthyPercent: 100, maximumPercent: 200 }),
      input: { deploymentConfiguration: { minimumHealthyPercent: 100, maximumPercent: 200, deploymentCircuitBreaker: { enable: true, rollback: true } } },
      changes: [{ field: 'deploymentConfiguration.deploymentCircuitBreaker', from: 'enable=false,rollback=false', to: 'enable=true,rollback=true' }],
    },
    {
      case: 'deploymentConfiguration absent means 100/200',
      mutate: (s: ObservedService) => (s.deploymentConfiguration = { deploymentCircuitBreaker: { enable: true, rollback: true } }),
      input: undefined,
      changes: [],
    },
    {
      case: 'capacity provider switched to FARGATE_SPOT by hand: forced new deployment',
      mutate: (s: ObservedService) => (s.capacityProviderStrategy = [{ capacityProvider: 'FARGATE_SPOT', weight: 1 }]),
      input: { capacityProviderStrategy: [{ capacityProvider: 'FARGATE', weight: 1 }], forceNewDeployment: true },
      changes: [{ field: 'capacityProviderStrategy', from: 'FARGATE_SPOT:1', to: 'FARGATE:1' }],
    },
    {
      case: 'service on launchType FARGATE: moved to the strategy with a forced new deployment',
      mutate: (s: ObservedService) => {
        s.capacityProviderStrategy = undefined;
        s.launchType = 'FARGATE';
      },
      input: { capacityProviderStrategy: [{ capacityProvider: 'FARGATE', weight: 1 }], forceNewDeployment: true },
      changes: [{ field: 'capacityProviderStrategy', from: 'launchType FARGATE', to: 'FARGATE:1' }],
    },
    {
      case: 'load balancer attached by hand',
      mutate: (s: ObservedService) => (s.loadBalancers = [{ targetGroupArn: 'tg', containerName: 'web', containerPort: 80 }]),
      input: { loadBalancers: [] },
      changes: [{ field: 'loadBalancers', from: 'tg|web|80', to: '(none)' }],
    },
  ])('$case', ({ mutate, input, changes }) => {
    // Prepare
    const spec = aSpec();
    // Act
    const p = planFor(spec, mutate, { remembered: { [ID]: aStatus({ lastAppliedSpecHash: spec.hash }) } });
    // Assess
    if (input === undefined) {
      expect(p.actions).toEqual([]);
      expect(p.statuses[ID].phase).toBe('Converged');
      return;
    }
    const update = only(p, 'UpdateService') as UpdateServiceAction;
    expect(update.input).toEqual({ cluster: CLUSTER, service: SERVICE, ...input });
    expect(update.changes).toEqual(changes);
    expect(update.kind).toBe('drift');
    expect(p.statuses[ID].drift).toEqual(changes.map((c) => `${c.field} ${c.from} -> ${c.to}`));
    expect(reasons(p.statuses[ID])).toContain(Reason.DriftCorrected);
  });

  it.each<{ case: string; specTags: Record<string, string>; liveTags: Record<string, string>; lastApplied: string; tags?: { key: string; value: string }[]; kind?: string }>([
    {
      case: 'a spec tag changed in the spec (rollout)',
      specTags: { team: 'payments', tier: 'web' },
      liveTags: { team: 'storefront', tier: 'web' },
      lastApplied: 'older-hash',
      tags: [{ key: 'team', value: 'payments' }],
      kind: 'rollout',
    },
    {
      case: 'a spec tag changed by hand on the service (drift)',
      specTags: { team: 'payments' },
      liveTags: { team: 'hacked' },
      lastApplied: 'same',
      tags: [{ key: 'team', value: 'payments' }],
      kind: 'drift',
    },
    {
      case: 'a spec tag missing on the service',
      specTags: { team: 'payments', cost: 'cc-1' },
      liveTags: { team: 'payments' },
      lastApplied: 'same',
      tags: [{ key: 'cost', value: 'cc-1' }],
      kind: 'drift',
    },
    {
      case: 'a tag added by hand that the spec does not name: left alone',
      specTags: { team: 'payments' },
      liveTags: { team: 'payments', 'added-by': 'someone' },
      lastApplied: 'same',
      tags: undefined,
      kind: undefined,
    },
  ])('service tags: $case', ({ specTags, liveTags, lastApplied, tags, kind }) => {
    // Prepare
    const spec = aSpec({ tags: specTags });
    const remembered = { [ID]: aStatus({ lastAppliedSpecHash: lastApplied === 'same' ? spec.hash : lastApplied }) };
    // Act
    const p = planFor(spec, (svc) => (svc.tags = { ...liveTags, [OWNER_TAG_KEY]: OWNER }), { remembered });
    // Assess
    if (tags === undefined) {
      expect(p.actions).toEqual([]);
      expect(p.statuses[ID].phase).toBe('Converged');
      return;
    }
    expect(actionList(p)).toEqual([`TagResource ${ID}`]);
    const tag = only(p, 'TagResource') as TagResourceAction;
    expect(tag.tags).toEqual(tags);
    expect(tag.tags.some((t) => t.key === OWNER_TAG_KEY)).toBe(false);
    expect(tag.reason).toBe(`service tags differ: ${tags.map((t) => `tags.${t.key} ${liveTags[t.key] ?? '(none)'} -> ${t.value}`).join(', ')}`);
    if (kind === 'drift') expect(p.statuses[ID].drift).toEqual(tags.map((t) => `tags.${t.key} ${liveTags[t.key] ?? '(none)'} -> ${t.value}`));
    else expect(p.statuses[ID].drift).toBeUndefined();
  });

  it('a changed image in the live task definition: register a revision and point the service at the family', () => {
    // Prepare
    const spec = aSpec({ image: 'public.ecr.aws/nginx/nginx:1.28' });
    const { service } = aConvergedService(spec.spec);
    const old = describedTaskDefinitionFor(aSpec({ image: 'public.ecr.aws/nginx/nginx:1.27' }).spec, { revision: 4 });
    service.taskDefinition = old.taskDefinitionArn!;
    const input = aPlanInput({
      specs: [spec],
      observed: anObservedState([anObservedCluster(CLUSTER, [service])], { [old.taskDefinitionArn!]: old }),
      remembered: { [ID]: aStatus({ lastAppliedSpecHash: 'older-hash' }) },
    });
    // Act
    const p = plan(input);
    // Assess
    expect(actionList(p)).toEqual([`RegisterTaskDefinition ${ID}`, `UpdateService ${ID}`]);
    const update = only(p, 'UpdateService') as UpdateServiceAction;
    expect(update.input).toEqual({ cluster: CLUSTER, service: SERVICE, taskDefinition: familyOf() });
    expect(update.kind).toBe('rollout');
    expect(update.changes).toEqual([
      {
        field: 'containerDefinitions[web].image',
        from: 'public.ecr.aws/nginx/nginx:1.27',
        to: 'public.ecr.aws/nginx/nginx:1.28',
      },
    ]);
    expect(p.statuses[ID].lastAppliedSpecHash).toBe(spec.hash);
    expect(p.statuses[ID].drift).toBeUndefined();
    expect(reasons(p.statuses[ID])).toContain(Reason.SpecApplied);
  });

  it.each([
    {
      case: 'hash differs from lastAppliedSpecHash: rollout',
      lastApplied: 'other',
      kind: 'rollout',
      drift: ['desiredCount 1 -> 0'],
    },
    { case: 'same hash: drift, recorded in status', lastApplied: 'SPEC', kind: 'drift', drift: ['desiredCount 5 -> 2'] },
  ])('$case', ({ lastApplied, kind, drift }) => {
    // Prepare
    const spec = aSpec();
    const remembered = { [ID]: aStatus({ lastAppliedSpecHash: lastApplied === 'SPEC' ? spec.hash : lastApplied, drift: ['desiredCount 1 -> 0'] }) };
    // Act
    const p = planFor(spec, (s) => (s.desiredCount = 5), { remembered });
    // Assess
    expect((only(p, 'UpdateService') as UpdateServiceAction).kind).toBe(kind);
    expect(p.statuses[ID].drift).toEqual(drift);
  });

  it('a task definition that could not be described is left alone; other drift is corrected', () => {
    // Prepare
    const spec = aSpec({ image: 'public.ecr.aws/nginx/nginx:9' });
    const { service } = aConvergedService(spec.spec, { desiredCount: 5, taskDefinition: taskDefinitionArn(familyOf(), 77) });
    const input = aPlanInput({ specs: [spec], observed: anObservedState([anObservedCluster(CLUSTER, [service])], {}) });
    // Act
    const p = plan(input);
    // Assess
    expect(actionList(p)).toEqual([`UpdateService ${ID}`]);
    expect((only(p, 'UpdateService') as UpdateServiceAction).input.taskDefinition).toBeUndefined();
    expect(condition(p.statuses[ID], 'Incomplete')?.reason).toBe(Reason.TaskDefinitionNotDescribed);
  });

  it('ECS read-back defaults in the task definition are not drift', () => {
    // Prepare
    const spec = aSpec({
      environment: { B: '2', A: '1' },
      secrets: { TOKEN: 'arn:aws:ssm:eu-west-1:123456789012:parameter/token', KEY: 'arn:aws:ssm:eu-west-1:123456789012:parameter/key' },
      healthCheck: { command: ['CMD-SHELL', 'true'] },
    });
    // Act
    const p = planFor(spec);
    // Assess
    expect(p.actions).toEqual([]);
    expect(p.statuses[ID].phase).toBe('Converged');
  });

  it('autoscaled: desiredCount is never sent and lag is measured against the live count', () => {
    // Prepare
    const spec = aSpec({ autoscaled: true, desiredCount: 2 });
    // Act
    const p = planFor(spec, (s) => {
      s.desiredCount = 7;
      s.runningCount = 5;
    });
    // Assess
    expect(p.actions).toEqual([]);
    expect(p.statuses[ID]).toMatchObject({ desiredCount: 7, runningCount: 5, laggingSince: NOW.toISOString() });
  });

  it('autoscaled: other drift is corrected without desiredCount', () => {
    const p = planFor(aSpec({ autoscaled: true }), (s) => {
      s.desiredCount = 7;
      s.networkConfiguration!.awsvpcConfiguration!.securityGroups = ['sg-0ffffffffffffffff'];
    });
    expect((only(p, 'UpdateService') as UpdateServiceAction).input.desiredCount).toBeUndefined();
    expect((only(p, 'UpdateService') as UpdateServiceAction).input.networkConfiguration).toBeDefined();
  });
});

// ---------------------------------------------------------------------------------------------
// Failed rollouts
// ---------------------------------------------------------------------------------------------

describe('failed rollout', () => {
  const spec = aSpec({ image: 'public.ecr.aws/nginx/nginx:broken' });
  const good = describedTaskDefinitionFor(aSpec().spec, { revision: 1 });
  const bad = describedTaskDefinitionFor(spec.spec, { revision: 2 });
  const tds: Record<string, TaskDefinition> = { [good.taskDefinitionArn!]: good, [bad.taskDefinitionArn!]: bad };

  it.each([
    {
      case: 'PRIMARY deployment of our task definition FAILED (no rollback)',
      live: bad.taskDefinitionArn!,
      deployments: [aDeployment({ id: 'd2', taskDefinition: bad.taskDefinitionArn!, rolloutState: 'FAILED', rolloutStateReason: 'tasks failed to start' })],
      remembered: { lastAppliedSpecHash: spec.hash },
      failed: true,
    },
    {
      case: 'rolled back: ACTIVE FAILED deployment of ours, PRIMARY back on the old revision',
      live: good.taskDefinitionArn!,
      deployments: [
        aDeployment({ id: 'd3', taskDefinition: good.taskDefinitionArn! }),
        aDeployment({ id: 'd2', status: 'ACTIVE', taskDefinition: bad.taskDefinitionArn!, rolloutState: 'FAILED', rolloutStateReason: 'tasks failed to start' }),
      ],
      remembered: { lastAppliedSpecHash: spec.hash },
      failed: true,
    },
    {
      case: 'rolled back, failed deployment already forgotten: new PRIMARY, applied one never completed',
      live: good.taskDefinitionArn!,
      deployments: [aDeployment({ id: 'd3', taskDefinition: good.taskDefinitionArn! })],
      remembered: { lastAppliedSpecHash: spec.hash, appliedDeploymentId: 'd2', appliedRolloutState: 'IN_PROGRESS' as const },
      failed: true,
    },
    {
      case: 'same picture, but the applied deployment had COMPLETED: a hand change, corrected as drift',
      live: good.taskDefinitionArn!,
      deployments: [aDeployment({ id: 'd3', taskDefinition: good.taskDefinitionArn! })],
      remembered: { lastAppliedSpecHash: spec.hash, appliedDeploymentId: 'd2', appliedRolloutState: 'COMPLETED' as const },
      failed: false,
    },
    {
      case: 'failedSpecHash remembered for this hash: stays failed whatever ECS shows',
      live: good.taskDefinitionArn!,
      deployments: [aDeployment({ id: 'd9', taskDefinition: good.taskDefinitionArn! })],
      remembered: { lastAppliedSpecHash: 'older', failedSpecHash: spec.hash },
      failed: true,
    },
    {
      case: 'a FAILED deployment of another task definition is not ours',
      live: good.taskDefinitionArn!,
      deployments: [
        aDeployment({ id: 'd3', taskDefinition: good.taskDefinitionArn! }),
        aDeployment({ id: 'd2', status: 'ACTIVE', taskDefinition: taskDefinitionArn(familyOf(), 99), rolloutState: 'FAILED' }),
      ],
      remembered: { lastAppliedSpecHash: 'older' },
      failed: false,
    },
  ])('$case', ({ live, deployments, remembered, failed }) => {
    // Prepare
    const service = anObservedService({ taskDefinition: live, deployments });
    const input = aPlanInput({
      specs: [spec],
      observed: anObservedState([anObservedCluster(CLUSTER, [service])], tds),
      remembered: { [ID]: aStatus(remembered) },
    });
    // Act
    const p = plan(input);
    // Assess
    if (failed) {
      expect(p.actions).toEqual([]);
      expect(p.statuses[ID]).toMatchObject({ phase: 'Degraded', failedSpecHash: spec.hash });
      expect(condition(p.statuses[ID], 'Progressing')).toMatchObject({ status: 'False', reason: Reason.RolloutFailed });
      expect(condition(p.statuses[ID], 'Progressing')?.message).toContain('edit the spec to retry');
    } else {
      expect(actionList(p)).toEqual([`RegisterTaskDefinition ${ID}`, `UpdateService ${ID}`]);
      expect(p.statuses[ID].failedSpecHash).toBeUndefined();
    }
  });

  it('carries the rolloutStateReason into the condition message', () => {
    const service = anObservedService({
      taskDefinition: bad.taskDefinitionArn!,
      deployments: [aDeployment({ id: 'd2', taskDefinition: bad.taskDefinitionArn!, rolloutState: 'FAILED', rolloutStateReason: 'ECS deployment circuit breaker: tasks failed to start.' })],
    });
    const p = plan(aPlanInput({ specs: [spec], observed: anObservedState([anObservedCluster(CLUSTER, [service])], tds) }));
    expect(condition(p.statuses[ID], 'Ready')?.message).toContain('ECS deployment circuit breaker: tasks failed to start.');
  });

  it('a new spec hash after a failure is applied again', () => {
    // Prepare
    const fixed = aSpec({ image: 'public.ecr.aws/nginx/nginx:fixed' });
    const service = anObservedService({ taskDefinition: good.taskDefinitionArn!, deployments: [aDeployment({ id: 'd3', taskDefinition: good.taskDefinitionArn! })] });
    const input = aPlanInput({
      specs: [fixed],
      observed: anObservedState([anObservedCluster(CLUSTER, [service])], tds),
      remembered: { [ID]: aStatus({ phase: 'Degraded', lastAppliedSpecHash: spec.hash, failedSpecHash: spec.hash }) },
    });
    // Act
    const p = plan(input);
    // Assess
    expect(actionList(p)).toEqual([`RegisterTaskDefinition ${ID}`, `UpdateService ${ID}`]);
    expect(p.statuses[ID]).toMatchObject({ lastAppliedSpecHash: fixed.hash, phase: 'Progressing' });
    expect(p.statuses[ID].failedSpecHash).toBeUndefined();
  });

  it.each([
    { case: 'rollout in progress on the desired task definition', rolloutState: 'IN_PROGRESS' as const, phase: 'Progressing' },
    { case: 'rollout completed', rolloutState: 'COMPLETED' as const, phase: 'Converged' },
  ])('records the PRIMARY deployment running the desired task definition: $case', ({ rolloutState, phase }) => {
    const p = planFor(spec, (s) => (s.deployments = [aDeployment({ id: 'd7', taskDefinition: s.taskDefinition, rolloutState })]), {
      remembered: { [ID]: aStatus({ lastAppliedSpecHash: spec.hash }) },
    });
    expect(p.statuses[ID]).toMatchObject({ appliedDeploymentId: 'd7', appliedRolloutState: rolloutState, phase });
  });
});

// ---------------------------------------------------------------------------------------------
// Status
// ---------------------------------------------------------------------------------------------

describe('status', () => {
  it.each([
    { case: 'lag starts now', running: 1, remembered: {}, since: NOW.toISOString(), beyond: false, phase: 'Progressing' },
    {
      case: 'lag kept from memory, within grace',
      running: 1,
      remembered: { laggingSince: at(-200).toISOString() },
      since: at(-200).toISOString(),
      beyond: false,
      phase: 'Progressing',
    },
    {
      case: 'lag beyond the default grace (300 s)',
      running: 1,
      remembered: { laggingSince: at(-301).toISOString() },
      since: at(-301).toISOString(),
      beyond: true,
      phase: 'Degraded',
    },
    {
      case: 'no lag: cleared',
      running: 2,
      remembered: { laggingSince: at(-900).toISOString() },
      since: undefined,
      beyond: false,
      phase: 'Converged',
    },
  ])('$case', ({ running, remembered, since, beyond, phase }) => {
    const spec = aSpec();
    const p = planFor(spec, (s) => (s.runningCount = running), { remembered: { [ID]: aStatus({ ...remembered, lastAppliedSpecHash: spec.hash }) } });
    expect(p.statuses[ID].laggingSince).toBe(since);
    expect(p.statuses[ID].lagBeyondGrace).toBe(beyond);
    expect(p.statuses[ID].phase).toBe(phase);
  });

  it.each([
    { case: "the spec's lagGraceSeconds wins over the default", grace: 60, beyond: true },
    { case: 'a longer grace tolerates the lag', grace: 600, beyond: false },
  ])('$case', ({ grace, beyond }) => {
    const spec = aSpec({ lagGraceSeconds: grace });
    const p = planFor(spec, (s) => (s.runningCount = 0), { remembered: { [ID]: aStatus({ laggingSince: at(-120).toISOString() }) } });
    expect(p.statuses[ID].lagBeyondGrace).toBe(beyond);
    expect(reasons(p.statuses[ID])).toContain(beyond ? Reason.LagBeyondGrace : Reason.TasksLagging);
  });

  it.each([
    {
      case: 'latest STOPPED task wins over events',
      mutate: (s: ObservedService) => {
        s.events = [{ id: 'e1', createdAt: at(-10), message: '(service web) was unable to place a task.' }];
        s.stoppedTasks = [
          { taskArn: 't1', stopCode: 'TaskFailedToStart', stoppedReason: 'old reason', stoppedAt: at(-600), containers: [] },
          {
            taskArn: 't2',
            stopCode: 'TaskFailedToStart',
            stoppedReason: 'CannotPullContainerError: pull access denied',
            stoppedAt: at(-30),
            containers: [],
          },
        ];
      },
      reason: 'TaskFailedToStart: CannotPullContainerError: pull access denied',
    },
    {
      case: 'newest event that is not a steady-state message',
      mutate: (s: ObservedService) => {
        s.events = [
          { id: 'e2', createdAt: at(-5), message: '(service web) has reached a steady state.' },
          {
            id: 'e1',
            createdAt: at(-10),
            message: '(service web) was unable to place a task because no container instance met all of its requirements.',
          },
        ];
      },
      reason: '(service web) was unable to place a task because no container instance met all of its requirements.',
    },
    {
      case: 'nothing useful',
      mutate: (s: ObservedService) => (s.events = [{ id: 'e2', createdAt: at(-5), message: '(service web) has reached a steady state.' }]),
      reason: undefined,
    },
  ])('reason: $case', ({ mutate, reason }) => {
    const p = planFor(aSpec(), (s) => {
      s.runningCount = 1;
      mutate(s);
    });
    expect(p.statuses[ID].reason).toBe(reason);
    if (reason) expect(p.statuses[ID].reasonsFirstSeen).toEqual({ [reason]: NOW.toISOString() });
  });

  it.each([
    { case: 'the same task definition: the remembered root cause stays', sameRevision: true, reason: 'TaskFailedToStart: CannotPullContainerError: not found' },
    { case: 'a new task definition: the event explains the new revision', sameRevision: false, reason: '(service web) deployment ecs-svc/1 deployment failed: tasks failed to start.' },
  ])('a remembered stopped-task reason beats a newer generic event while the lag lasts: $case', ({ sameRevision, reason }) => {
    // Prepare: ECS forgot the stopped tasks (about an hour) and has only the generic event left
    const first = at(-3600).toISOString();
    const remembered = aStatus({ laggingSince: first, reason: 'TaskFailedToStart: CannotPullContainerError: not found' });
    const p = planFor(
      aSpec(),
      (s) => {
        s.runningCount = 0;
        s.stoppedTasks = [];
        s.events = [{ id: 'e1', createdAt: at(-60), message: '(service web) deployment ecs-svc/1 deployment failed: tasks failed to start.' }];
        remembered.taskDefinitionArn = sameRevision ? s.taskDefinition : `${s.taskDefinition}-older`;
      },
      { remembered: { [ID]: remembered } },
    );
    // Assess
    expect(p.statuses[ID].reason).toBe(reason);
  });

  it.each([
    { case: 'a task stopped 15 minutes ago, no steady state since', steadyAt: undefined, since: at(-900).toISOString(), beyond: true },
    { case: 'the service was steady after that stop', steadyAt: at(-100), since: NOW.toISOString(), beyond: false },
  ])('laggingSince comes from ECS when the status was lost (a PutItem without status): $case', ({ steadyAt, since, beyond }) => {
    // Prepare: no remembered status at all
    const p = planFor(aSpec(), (s) => {
      s.runningCount = 1;
      s.stoppedTasks = [{ taskArn: 't1', stopCode: 'EssentialContainerExited', stoppedReason: 'Essential container in task exited', stoppedAt: at(-900), containers: [] }];
      s.events = steadyAt ? [{ id: 'e1', createdAt: steadyAt, message: '(service web) has reached a steady state.' }] : [];
    });
    // Assess: the lag grace (300 s) counts from the stop, not from this pass
    expect(p.statuses[ID].laggingSince).toBe(since);
    expect(p.statuses[ID].lagBeyondGrace).toBe(beyond);
  });

  it('keeps the remembered reason and its first sighting while the lag lasts and the stopped task is gone', () => {
    const first = at(-1800).toISOString();
    const p = planFor(aSpec(), (s) => (s.runningCount = 1), {
      remembered: { [ID]: aStatus({ laggingSince: first, reason: 'TaskFailedToStart: x', reasonsFirstSeen: { 'TaskFailedToStart: x': first } }) },
    });
    expect(p.statuses[ID].reason).toBe('TaskFailedToStart: x');
    expect(p.statuses[ID].reasonsFirstSeen).toEqual({ 'TaskFailedToStart: x': first });
  });

  it.each([
    {
      case: 'condition status unchanged: lastTransitionTime kept',
      rememberedStatus: 'True' as const,
      expected: at(-3600).toISOString(),
    },
    {
      case: 'condition status changed: lastTransitionTime is now',
      rememberedStatus: 'False' as const,
      expected: NOW.toISOString(),
    },
  ])('$case', ({ rememberedStatus, expected }) => {
    const spec = aSpec();
    const remembered = { [ID]: aStatus({ conditions: [aCondition({ type: 'Ready', status: rememberedStatus })] }) };
    const p = planFor(spec, () => {}, { remembered });
    expect(condition(p.statuses[ID], 'Ready')).toMatchObject({ status: 'True', reason: Reason.ServiceConverged, lastTransitionTime: expected });
  });

  it('a converged service has Ready True, Progressing False, the spec hash and its task definition', () => {
    const spec = aSpec();
    const p = planFor(spec);
    const s = p.statuses[ID];
    expect(s).toMatchObject({ phase: 'Converged', specHash: spec.hash, desiredCount: 2, runningCount: 2, lagBeyondGrace: false, observedAt: NOW.toISOString() });
    expect(s.taskDefinitionArn).toBe(taskDefinitionArn(familyOf(), 1));
    expect(s.conditions.map((c) => [c.type, c.status])).toEqual([
      ['Ready', 'True'],
      ['Progressing', 'False'],
    ]);
  });

  it('carries lastAction over from memory (the pass sets it)', () => {
    const lastAction = { type: 'UpdateService' as const, at: at(-60).toISOString(), summary: 'desiredCount 5 -> 2' };
    const p = planFor(aSpec(), () => {}, { remembered: { [ID]: aStatus({ lastAction }) } });
    expect(p.statuses[ID].lastAction).toEqual(lastAction);
  });
});

describe('statusChanged', () => {
  const base = aStatus({ specHash: 'h1', drift: ['desiredCount 5 -> 2'] });
  it.each([
    { case: 'no previous status', prev: undefined, next: base, changed: true },
    { case: 'only observedAt differs', prev: base, next: { ...base, observedAt: NOW.toISOString() }, changed: false },
    {
      case: 'same content, other key order',
      prev: base,
      next: Object.fromEntries(Object.entries(base).reverse()) as unknown as ServiceStatus,
      changed: false,
    },
    { case: 'undefined member vs missing member', prev: base, next: { ...base, reason: undefined }, changed: false },
    { case: 'phase differs', prev: base, next: { ...base, phase: 'Degraded' as const }, changed: true },
    { case: 'running count differs', prev: base, next: { ...base, runningCount: 1 }, changed: true },
    {
      case: 'a condition message differs',
      prev: base,
      next: { ...base, conditions: [aCondition({ message: 'x' })] },
      changed: true,
    },
  ])('$case', ({ prev, next, changed }) => {
    expect(statusChanged(prev, next)).toBe(changed);
  });

  it('an unchanged world gives an unchanged status on the next pass', () => {
    const spec = aSpec();
    const first = planFor(spec);
    const second = planFor(spec, () => {}, { remembered: first.statuses, now: at(60) });
    expect(statusChanged(first.statuses[ID], second.statuses[ID])).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// Order and determinism
// ---------------------------------------------------------------------------------------------

describe('order', () => {
  it('sorts by cluster and service, Tag before Register before Update, deletes last; input order does not matter', () => {
    // Prepare
    const adopt = aSpec({ cluster: 'b', service: 'adopted', adopt: true, image: 'public.ecr.aws/x/y:2' });
    const fresh = aSpec({ cluster: 'a', service: 'new' });
    const gone = aSpec({ cluster: 'a', service: 'zz-gone', state: 'absent' });
    const { service: adoptedLive, taskDefinitions } = aConvergedService(aSpec({ cluster: 'b', service: 'adopted' }).spec, { tags: {} });
    const observed = anObservedState(
      [
        anObservedCluster('a', [anObservedService({ cluster: 'a', serviceName: 'zz-gone' }), anObservedService({ cluster: 'a', serviceName: 'orphan' })]),
        anObservedCluster('b', [adoptedLive]),
      ],
      taskDefinitions,
    );
    const specs = [adopt, gone, fresh];
    // Act
    const p1 = plan(aPlanInput({ specs, observed }));
    const p2 = plan(aPlanInput({ specs: [...specs].reverse(), observed }));
    // Assess
    expect(actionList(p1)).toEqual([
      'RegisterTaskDefinition a/new',
      'CreateService a/new',
      'TagResource b/adopted',
      'RegisterTaskDefinition b/adopted',
      'UpdateService b/adopted',
      'DeleteService a/orphan',
      'DeleteService a/zz-gone',
    ]);
    expect(p2).toEqual(p1);
  });
});

// ---------------------------------------------------------------------------------------------
// Several passes against the in-memory ECS model
// ---------------------------------------------------------------------------------------------

describe('passes against the model ECS', () => {
  /** Plans and applies one pass; returns the plan. Every action must be accepted. */
  function pass(ecs: FakeEcs, specs: SpecParseResult[], remembered: Record<string, ServiceStatus>, minute: number): Plan {
    const p = plan(aPlanInput({ specs, observed: ecs.snapshot([CLUSTER]), remembered, now: at(minute * 60) }));
    expect(ecs.applyAll(p.actions).filter((r) => !r.ok)).toEqual([]);
    return p;
  }

  it('a failed rollout is not re-applied pass after pass; a changed spec is', () => {
    // Prepare: a model ECS whose circuit breaker trips for the broken image.
    const ecs = new FakeEcs({
      rolloutOutcome: (td) => (td.containerDefinitions?.[0]?.image?.endsWith(':broken') ? 'FAILED' : 'COMPLETED'),
    }).addCluster(CLUSTER);
    const v1 = aSpec();
    const broken = aSpec({ image: 'public.ecr.aws/nginx/nginx:broken' });
    const v3 = aSpec({ image: 'public.ecr.aws/nginx/nginx:1.28' });
    let memory = pass(ecs, [v1], {}, 0).statuses;
    memory = pass(ecs, [v1], memory, 1).statuses;
    expect(memory[ID].phase).toBe('Converged');

    // Act: the broken spec is applied once, ECS rolls back, then three more passes.
    const rollout = pass(ecs, [broken], memory, 2);
    const after = [3, 4, 5].map((minute) => {
      if (minute === 5) ecs.forgetFinishedDeployments();
      const p = pass(ecs, [broken], memory, minute);
      memory = p.statuses;
      return p;
    });
    const retried = pass(ecs, [v3], memory, 6);

    // Assess
    expect(actionList(rollout)).toEqual([`RegisterTaskDefinition ${ID}`, `UpdateService ${ID}`]);
    for (const p of after) {
      expect(p.actions).toEqual([]);
      expect(p.statuses[ID]).toMatchObject({ phase: 'Degraded', failedSpecHash: broken.hash });
    }
    expect(condition(after[0].statuses[ID], 'Ready')?.message).toContain('circuit breaker');
    expect(statusChanged(after[1].statuses[ID], after[2].statuses[ID])).toBe(false);
    expect(actionList(retried)).toEqual([`RegisterTaskDefinition ${ID}`, `UpdateService ${ID}`]);
    expect(ecs.applied.filter((a) => a.type === 'RegisterTaskDefinition')).toHaveLength(3);
  });

  it('drift made by hand is corrected once and reported, then the service is converged', () => {
    // Prepare
    const ecs = new FakeEcs().addCluster(CLUSTER);
    const spec = aSpec({ desiredCount: 3 });
    let memory = pass(ecs, [spec], {}, 0).statuses;
    memory = pass(ecs, [spec], memory, 1).statuses;
    ecs.service(CLUSTER, SERVICE)!.desiredCount = 6;
    ecs.service(CLUSTER, SERVICE)!.runningCount = 6;
    // Act
    const correction = pass(ecs, [spec], memory, 2);
    const next = pass(ecs, [spec], correction.statuses, 3);
    // Assess
    expect((only(correction, 'UpdateService') as UpdateServiceAction).kind).toBe('drift');
    expect(correction.statuses[ID].drift).toEqual(['desiredCount 6 -> 3']);
    expect(next.actions).toEqual([]);
    expect(next.statuses[ID]).toMatchObject({ phase: 'Converged', drift: ['desiredCount 6 -> 3'], driftCorrectedAt: at(120).toISOString() });
  });

  it('the model refuses what ECS refuses: create over a DRAINING name, delete above 0 tasks without scaling', () => {
    // Prepare: actions planned against an empty cluster, applied where the name is DRAINING.
    const create = plan(aPlanInput({ specs: [aSpec()] })).actions;
    const ecs = new FakeEcs()
      .putService(CLUSTER, anObservedService({ status: 'DRAINING' }))
      .putService(CLUSTER, anObservedService({ serviceName: 'busy', desiredCount: 2 }));
    // Act
    const results = ecs.applyAll([
      ...create,
      { type: 'DeleteService', cluster: CLUSTER, service: 'busy', reason: 'test', cause: 'orphan', scaleToZero: false },
    ]);
    // Assess
    expect(results.map((r) => `${r.action.type}: ${r.ok ? 'ok' : r.message}`)).toEqual([
      'RegisterTaskDefinition: ok',
      'CreateService: InvalidParameterException: Unable to Start a service that is still Draining.',
      'DeleteService: InvalidParameterException: The service cannot be stopped while it is scaled above 0.',
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// Task definition family collisions
// ---------------------------------------------------------------------------------------------

describe('task definition family collisions', () => {
  it('a-b/c and a/b-c render the same family: the first keeps it, the other is refused with FamilyCollision', () => {
    // Prepare
    const first = aSpec({ cluster: 'a', service: 'b-c' });
    const second = aSpec({ cluster: 'a-b', service: 'c' });
    const input = aPlanInput({
      specs: [second, first],
      observed: anObservedState([anObservedCluster('a', []), anObservedCluster('a-b', [])]),
    });
    // Act
    const p = plan(input);
    // Assess
    expect(actionList(p)).toEqual(['RegisterTaskDefinition a/b-c', 'CreateService a/b-c']);
    expect(p.statuses['a-b/c'].phase).toBe('Blocked');
    expect(condition(p.statuses['a-b/c'], 'Blocked')?.reason).toBe(Reason.FamilyCollision);
    expect(condition(p.statuses['a-b/c'], 'Blocked')?.message).toContain('a-b/c and a/b-c both render task definition family a-b-c');
  });

  it.each([
    { case: 'at the second dash of the longer name', clusters: ['x-a', 'x-a-b'], services: ['b-c', 'c'], family: 'x-a-b-c' },
    { case: 'with a cluster name starting with a dash', clusters: ['-a', '-a-b'], services: ['b-c', 'c'], family: '-a-b-c' },
    { case: 'among other clusters that collide with nothing', clusters: ['p', 'q-r'], services: ['r-s', 's'], family: null },
  ])('a family shared through cluster names is found $case', ({ clusters, services, family }) => {
    // Prepare
    const specs = [aSpec({ cluster: clusters[1], service: services[1] }), aSpec({ cluster: clusters[0], service: services[0] })];
    const input = aPlanInput({ specs, observed: anObservedState(clusters.map((c) => anObservedCluster(c, []))) });
    // Act
    const p = plan(input);
    // Assess
    const refused = Object.entries(p.statuses).filter(([, st]) => condition(st, 'Blocked')?.reason === Reason.FamilyCollision);
    if (family === null) {
      expect(refused).toEqual([]);
      expect(p.actions).toHaveLength(4);
    } else {
      expect(refused.map(([id]) => id)).toEqual([`${clusters[1]}/${services[1]}`]);
      expect(condition(refused[0][1], 'Blocked')?.message).toContain(`both render task definition family ${family} (its default <cluster>-<service>); ${clusters[0]}/${services[0]} keeps it`);
    }
  });

  it('the spec whose service already runs a revision of the family keeps it, even when it sorts later', () => {
    // Prepare
    const newcomer = aSpec({ cluster: 'a', service: 'b-c' });
    const holder = aSpec({ cluster: 'a-b', service: 'c' });
    const { service, taskDefinitions } = aConvergedService(holder.spec);
    const input = aPlanInput({
      specs: [newcomer, holder],
      observed: anObservedState([anObservedCluster('a', []), anObservedCluster('a-b', [service])], taskDefinitions),
    });
    // Act
    const p = plan(input);
    // Assess
    expect(actionList(p)).toEqual([]);
    expect(condition(p.statuses['a/b-c'], 'Blocked')?.reason).toBe(Reason.FamilyCollision);
    expect(p.statuses['a-b/c'].phase).toBe('Converged');
  });

  it('two specs naming the same family: the first by key keeps it, the other is refused naming both', () => {
    // Prepare
    const keeper = aSpec({ cluster: 'prod', service: 'api', family: 'shop' });
    const refused = aSpec({ cluster: 'prod', service: 'web', family: 'shop' });
    const input = aPlanInput({ specs: [refused, keeper], observed: anObservedState([anObservedCluster('prod', [])]) });
    // Act
    const p = plan(input);
    // Assess
    expect(actionList(p)).toEqual(['RegisterTaskDefinition prod/api', 'CreateService prod/api']);
    expect(condition(p.statuses['prod/web'], 'Blocked')?.reason).toBe(Reason.FamilyCollision);
    const message = condition(p.statuses['prod/web'], 'Blocked')?.message;
    expect(message).toContain('prod/web and prod/api both render task definition family shop (named by its family attribute)');
    expect(message).toContain('prod/api keeps it (first by cluster, then service)');
    expect(p.statuses['prod/api'].phase).not.toBe('Blocked');
  });

  it("a spec naming another spec's default <cluster>-<service> family is refused, in either order", () => {
    // Prepare: prod/web's default family is prod-web; prod/api names it.
    const named = aSpec({ cluster: 'prod', service: 'api', family: 'prod-web' });
    const byDefault = aSpec({ cluster: 'prod', service: 'web' });
    for (const specs of [
      [named, byDefault],
      [byDefault, named],
    ]) {
      const input = aPlanInput({ specs, observed: anObservedState([anObservedCluster('prod', [])]) });
      // Act
      const p = plan(input);
      // Assess: prod/api sorts first and keeps it; prod/web, by default, is refused.
      expect(actionList(p)).toEqual(['RegisterTaskDefinition prod/api', 'CreateService prod/api']);
      expect(condition(p.statuses['prod/web'], 'Blocked')?.reason).toBe(Reason.FamilyCollision);
      expect(condition(p.statuses['prod/web'], 'Blocked')?.message).toContain(
        'prod/web and prod/api both render task definition family prod-web (its default <cluster>-<service>)',
      );
    }
  });

  it('the spec whose service runs a revision of a named family keeps it, though it sorts later', () => {
    // Prepare: prod/web runs prod-web (its default); a new spec prod/api names family prod-web.
    const holder = aSpec({ cluster: 'prod', service: 'web' });
    const newcomer = aSpec({ cluster: 'prod', service: 'api', family: 'prod-web' });
    const { service, taskDefinitions } = aConvergedService(holder.spec);
    const input = aPlanInput({ specs: [newcomer, holder], observed: anObservedState([anObservedCluster('prod', [service])], taskDefinitions) });
    // Act
    const p = plan(input);
    // Assess
    expect(actionList(p)).toEqual([]);
    expect(p.statuses['prod/web'].phase).toBe('Converged');
    expect(condition(p.statuses['prod/api'], 'Blocked')?.reason).toBe(Reason.FamilyCollision);
    expect(condition(p.statuses['prod/api'], 'Blocked')?.message).toContain('prod/web keeps it (its service runs a revision of it)');
  });

  it('a spec naming its own default family collides with nothing', () => {
    const p = plan(
      aPlanInput({
        specs: [aSpec({ cluster: 'prod', service: 'web', family: 'prod-web' }), aSpec({ cluster: 'prod', service: 'api' })],
        observed: anObservedState([anObservedCluster('prod', [])]),
      }),
    );
    expect(Object.values(p.statuses).map((st) => condition(st, 'Blocked')?.reason)).not.toContain(Reason.FamilyCollision);
    expect(p.actions).toHaveLength(4);
  });

  it('distinct families do not collide', () => {
    const p = plan(
      aPlanInput({
        specs: [aSpec({ cluster: 'a', service: 'b' }), aSpec({ cluster: 'a', service: 'c' })],
        observed: anObservedState([anObservedCluster('a', [])]),
      }),
    );
    expect(Object.values(p.statuses).map((st) => st.phase)).toEqual(['Progressing', 'Progressing']);
  });
});

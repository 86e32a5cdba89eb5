/**
 * The steady comparison memo (issue 12): a service whose spec hash, rendering options, live task
 * definition and live service print are those of its last comparison, and that comparison found
 * nothing to do, gets what that comparison found; its status is still assembled from the
 * remembered status of this pass. These tests prove that the plan is always the one the full
 * comparison gives (memo off), and that every member of a live service the comparison reads
 * makes the memo miss when it changes, in a copy or in place.
 * Speed is measured in `npm run bench`, never here.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planChecked, steadyFleet } from './support/steady-memo';
import {
  clearCompareMemo,
  setSteadyMemoEnabled,
  steadyComparisonsReused,
} from '../lambda/core/compare-memo';
import { SERVICE_MEMBERS } from '../lambda/core/observed-print';
import { plan, type PlanInput } from '../lambda/core/planner';
import { OWNER_TAG_KEY } from '../lambda/core/ports';
import type { ObservedService, ServiceStatus, TaskDefinition } from '../lambda/core/types';
import {
  NOW,
  SG_1,
  SUBNET_A,
  aDeployment,
  aSpec,
  at,
} from './support/builders';

const SERVICES = ['web-0', 'web-1', 'web-2'];


/** `input` with the live service `name` replaced by `change` of a deep copy of it (task definitions may be added). */
function withLive(input: PlanInput, name: string, change: (s: ObservedService, tds: Record<string, TaskDefinition>) => void): PlanInput {
  const cl = input.observed.clusters.apps;
  const copy = structuredClone(cl.services[name]);
  const tds = { ...input.observed.taskDefinitions };
  change(copy, tds);
  return {
    ...input,
    observed: { ...input.observed, taskDefinitions: tds, clusters: { apps: { ...cl, services: { ...cl.services, [name]: copy } } } },
  };
}

/** Every kind of change to a live service, each named after what it changes. */
const CHANGES: [string, (s: ObservedService, tds: Record<string, TaskDefinition>) => void][] = [
  ['status', (s) => void (s.status = 'DRAINING')],
  ['desiredCount', (s) => void (s.desiredCount += 1)],
  ['runningCount (lag)', (s) => void (s.runningCount -= 1)],
  ['runningCount (above desired)', (s) => void (s.runningCount += 1)],
  ['pendingCount', (s) => void (s.pendingCount = 1)],
  ['taskDefinition (undescribed)', (s) => void (s.taskDefinition = s.taskDefinition.replace(/:1$/, ':7'))],
  [
    'taskDefinition (another revision, described)',
    (s, tds) => {
      const arn = s.taskDefinition.replace(/:1$/, ':8');
      tds[arn] = { ...tds[s.taskDefinition], taskDefinitionArn: arn, revision: 8, cpu: '512' };
      s.taskDefinition = arn;
      s.deployments[0].taskDefinition = arn;
    },
  ],
  ['launchType', (s) => void (s.launchType = 'FARGATE')],
  ['capacityProviderStrategy provider', (s) => void (s.capacityProviderStrategy = [{ capacityProvider: 'FARGATE_SPOT', weight: 1 }])],
  ['capacityProviderStrategy weight', (s) => void (s.capacityProviderStrategy![0].weight = 2)],
  ['capacityProviderStrategy base', (s) => void (s.capacityProviderStrategy![0].base = 1)],
  ['capacityProviderStrategy second provider', (s) => void s.capacityProviderStrategy!.push({ capacityProvider: 'FARGATE_SPOT', weight: 1 })],
  ['deploymentConfiguration absent', (s) => void delete s.deploymentConfiguration],
  ['minimumHealthyPercent', (s) => void (s.deploymentConfiguration!.minimumHealthyPercent = 50)],
  ['maximumPercent', (s) => void (s.deploymentConfiguration!.maximumPercent = 150)],
  ['circuit breaker rollback', (s) => void (s.deploymentConfiguration!.deploymentCircuitBreaker!.rollback = false)],
  ['circuit breaker absent', (s) => void delete s.deploymentConfiguration!.deploymentCircuitBreaker],
  ['alarms', (s) => void (s.deploymentConfiguration!.alarms = { alarmNames: ['a'], enable: true, rollback: false })],
  ['deploymentController', (s) => void (s.deploymentController = { type: 'CODE_DEPLOY' })],
  ['subnets (another)', (s) => void (s.networkConfiguration!.awsvpcConfiguration!.subnets = [SUBNET_A])],
  ['subnets (same set, other order)', (s) => void s.networkConfiguration!.awsvpcConfiguration!.subnets!.reverse()],
  ['securityGroups', (s) => void (s.networkConfiguration!.awsvpcConfiguration!.securityGroups = [SG_1, 'sg-0ffffffffffffffff'])],
  ['assignPublicIp', (s) => void (s.networkConfiguration!.awsvpcConfiguration!.assignPublicIp = 'ENABLED')],
  ['networkConfiguration absent', (s) => void delete s.networkConfiguration],
  [
    'loadBalancers',
    (s) =>
      void (s.loadBalancers = [
        { targetGroupArn: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/web/0123456789abcdef', containerName: s.serviceName, containerPort: 80 },
      ]),
  ],
  ['second deployment (ACTIVE)', (s) => void s.deployments.push(aDeployment({ id: 'ecs-svc/old', status: 'ACTIVE', taskDefinition: s.taskDefinition }))],
  ['deployment rolloutState IN_PROGRESS', (s) => void (s.deployments[0].rolloutState = 'IN_PROGRESS')],
  ['deployment rolloutState FAILED', (s) => void (s.deployments[0].rolloutState = 'FAILED')],
  ['deployment rolloutState absent', (s) => void delete s.deployments[0].rolloutState],
  ['deployment id', (s) => void (s.deployments[0].id = 'ecs-svc/0000002')],
  ['deployment status', (s) => void (s.deployments[0].status = 'ACTIVE')],
  ['deployment taskDefinition', (s) => void (s.deployments[0].taskDefinition = s.taskDefinition.replace(/:1$/, ':0'))],
  ['deployment serviceConnectConfiguration', (s) => void (s.deployments[0].serviceConnectConfiguration = { enabled: true, namespace: 'ns' })],
  ['deployment volumeConfigurations', (s) => void (s.deployments[0].volumeConfigurations = [{ name: 'data' }])],
  ['no deployment', (s) => void (s.deployments = [])],
  ['tag of the spec changed', (s) => void (s.tags.team = 'other')],
  ['owner tag removed', (s) => void delete s.tags[OWNER_TAG_KEY]],
  ['owner tag of another owner', (s) => void (s.tags[OWNER_TAG_KEY] = 'someone-else')],
  ['tag of the spec removed', (s) => void delete s.tags.team],
  ['platformVersion', (s) => void (s.platformVersion = '1.4.0')],
  ['propagateTags', (s) => void (s.propagateTags = 'NONE')],
  ['enableExecuteCommand', (s) => void (s.enableExecuteCommand = true)],
  ['healthCheckGracePeriodSeconds', (s) => void (s.healthCheckGracePeriodSeconds = 30)],
  ['enableECSManagedTags', (s) => void (s.enableECSManagedTags = true)],
  ['availabilityZoneRebalancing', (s) => void (s.availabilityZoneRebalancing = 'DISABLED')],
  ['serviceRegistries', (s) => void (s.serviceRegistries = [{ registryArn: 'arn:aws:servicediscovery:us-east-1:123456789012:service/srv-0123456789abcdef' }])],
  ['serviceDeploymentsError', (s) => void (s.serviceDeploymentsError = 'AccessDenied')],
  ['serviceDeployments', (s) => void (s.serviceDeployments = [])],
  ['a value of an unknown kind (a Map)', (s) => void ((s as unknown as Record<string, unknown>).propagateTags = new Map([['a', 1]]))],
];

/** Changes the comparison never reads: the memo is reused, and the plan is still the full one. */
const NOT_READ: [string, (s: ObservedService) => void][] = [
  ['a tag added by hand', (s) => void (s.tags.hand = 'made')],
  ['serviceArn', (s) => void (s.serviceArn = `${s.serviceArn}-x`)],
  ['a deployment count', (s) => void (s.deployments[0].failedTasks = 3)],
];

/** Changes the status reads itself every pass: the memo may be reused, the status still follows them. */
const READ_BY_STATUS: [string, (s: ObservedService) => void][] = [
  ['a new service event', (s) => void s.events.unshift({ id: 'e1', createdAt: at(-5), message: '(service web-1) was unable to place a task.' })],
  [
    'a stopped task',
    (s) =>
      void (s.stoppedTasks = [
        { taskArn: 'arn:aws:ecs:us-east-1:123456789012:task/apps/1', stopCode: 'EssentialContainerExited', stoppedReason: 'exit 1', stoppedAt: at(-10), containers: [] },
      ]),
  ],
];

describe('steady comparison memo', () => {
  it('a steady service planned again is not compared again, and its plan is the full comparison', () => {
    clearCompareMemo();
    const input = steadyFleet(SERVICES);
    planChecked(input); // compares and remembers each service
    const before = steadyComparisonsReused();
    const p = planChecked(input);
    expect(steadyComparisonsReused() - before).toBe(SERVICES.length);
    expect(p.actions).toEqual([]);
    expect(Object.values(p.statuses).map((s) => s.phase)).toEqual(['Converged', 'Converged', 'Converged']);
  });

  it('a new copy of the same observation (as every pass reads one) is recognised by content', () => {
    clearCompareMemo();
    const input = steadyFleet(SERVICES);
    planChecked(input);
    const before = steadyComparisonsReused();
    planChecked({ ...input, observed: { ...input.observed, clusters: structuredClone(input.observed.clusters) }, remembered: structuredClone(input.remembered) });
    expect(steadyComparisonsReused() - before).toBe(SERVICES.length);
  });

  it.each(CHANGES)('%s changed in ECS since the last comparison: compared again, the plan of the full comparison', (_name, change) => {
    clearCompareMemo();
    const input = steadyFleet(SERVICES);
    planChecked(input);
    const before = steadyComparisonsReused();
    planChecked(withLive(input, 'web-1', change));
    // The two others reused, web-1 compared again.
    expect(steadyComparisonsReused() - before).toBe(SERVICES.length - 1);
  });

  it.each(CHANGES)('%s changed in place (the same objects) since the last comparison: compared again', (_name, change) => {
    clearCompareMemo();
    const input = structuredClone(steadyFleet(SERVICES));
    planChecked(input);
    const before = steadyComparisonsReused();
    change(input.observed.clusters.apps.services['web-1'], input.observed.taskDefinitions);
    planChecked(input);
    expect(steadyComparisonsReused() - before).toBe(SERVICES.length - 1);
  });

  it.each(NOT_READ)('%s (never read by the comparison): reused, the plan of the full comparison', (_name, change) => {
    clearCompareMemo();
    const input = steadyFleet(SERVICES);
    planChecked(input);
    const before = steadyComparisonsReused();
    planChecked(withLive(input, 'web-1', change));
    expect(steadyComparisonsReused() - before).toBe(SERVICES.length);
  });

  it.each(READ_BY_STATUS)('%s: the status says so as the full comparison does', (_name, change) => {
    clearCompareMemo();
    const input = steadyFleet(SERVICES);
    planChecked(input);
    const p = planChecked(withLive(input, 'web-1', change));
    expect(p.statuses['apps/web-1'].reason).toBeDefined();
    expect(p.statuses['apps/web-1'].reason).not.toBe(input.remembered['apps/web-1'].reason);
  });

  it('a new description object of the same revision is compared again (descriptions are known by identity)', () => {
    clearCompareMemo();
    const input = steadyFleet(SERVICES);
    planChecked(input);
    const before = steadyComparisonsReused();
    const arn = input.observed.clusters.apps.services['web-1'].taskDefinition;
    planChecked({ ...input, observed: { ...input.observed, taskDefinitions: { ...input.observed.taskDefinitions, [arn]: { ...input.observed.taskDefinitions[arn] } } } });
    expect(steadyComparisonsReused() - before).toBe(SERVICES.length - 1);
  });

  it('a changed spec, other rendering options or a remembered failure of this spec are compared again', () => {
    clearCompareMemo();
    const input = steadyFleet(SERVICES);
    planChecked(input);
    let before = steadyComparisonsReused();
    const edited = aSpec({ service: 'web-1', desiredCount: 5, tags: { team: 't1' } });
    const p = planChecked({ ...input, specs: input.specs.map((s) => (s.key?.service === 'web-1' ? edited : s)) });
    expect(p.actions.map((a) => `${a.type} ${a.service}`)).toEqual(['UpdateService web-1']);
    expect(steadyComparisonsReused() - before).toBe(SERVICES.length - 1);

    before = steadyComparisonsReused();
    const spec = input.specs[1];
    if (!spec.ok) throw new Error('setup');
    const failed: ServiceStatus = { ...input.remembered['apps/web-1'], failedSpecHash: spec.hash };
    const q = planChecked({ ...input, remembered: { ...input.remembered, 'apps/web-1': failed } });
    expect(q.statuses['apps/web-1'].phase).toBe('Degraded');
    expect(steadyComparisonsReused() - before).toBe(SERVICES.length - 1);

    before = steadyComparisonsReused();
    planChecked({ ...input, options: { ...input.options, ownerId: 'another-owner' } });
    planChecked({ ...input, options: { ...input.options, defaults: { ...input.options.defaults, executionRoleArn: 'arn:aws:iam::123456789012:role/other' } } });
    expect(steadyComparisonsReused() - before).toBe(0);
  });

  it('the remembered status is never part of what is kept: any remembered status gives the full comparison\'s status', () => {
    clearCompareMemo();
    const input = steadyFleet(SERVICES);
    planChecked(input);
    const rem = input.remembered['apps/web-1'];
    const variants: (ServiceStatus | undefined)[] = [
      undefined,
      { ...rem, conditions: [] },
      { ...rem, conditions: rem.conditions.map((c) => ({ ...c, status: 'False' as const })) },
      { ...rem, lastAppliedSpecHash: 'another' },
      { ...rem, appliedDeploymentId: 'ecs-svc/9', appliedRolloutState: 'IN_PROGRESS' },
      { ...rem, firstRollout: true, rolloutFromTaskDefinitionArn: 'arn:aws:ecs:us-east-1:123456789012:task-definition/x:1' },
      { ...rem, drift: ['desiredCount 1 -> 2'], driftCorrectedAt: at(-600).toISOString() },
      { ...rem, reasonsFirstSeen: { 'a reason': at(-900).toISOString() } },
      { ...rem, laggingSince: at(-900).toISOString(), reason: 'remembered reason' },
      { ...rem, lastAction: { type: 'UpdateService', at: at(-600).toISOString(), summary: 'UpdateService desiredCount 1 -> 2' } },
    ];
    for (const v of variants) {
      const before = steadyComparisonsReused();
      const remembered = { ...input.remembered };
      if (v === undefined) delete remembered['apps/web-1'];
      else remembered['apps/web-1'] = v;
      planChecked({ ...input, remembered, now: new Date(NOW.getTime() + 60_000) });
      expect(steadyComparisonsReused() - before).toBe(SERVICES.length);
    }
  });

  it('random changes over passes: with the memo warm from earlier passes, every plan is the full comparison\'s', () => {
    const change = fc.constantFrom(...CHANGES.map(([, f]) => f), ...NOT_READ.map(([, f]) => f), ...READ_BY_STATUS.map(([, f]) => f));
    fc.assert(
      fc.property(fc.array(fc.array(fc.tuple(fc.constantFrom(...SERVICES), change), { maxLength: 3 }), { minLength: 1, maxLength: 4 }), (rounds) => {
        clearCompareMemo();
        let input = steadyFleet(SERVICES);
        planChecked(input);
        for (const changes of rounds) {
          for (const [name, f] of changes) {
            try {
              input = withLive(input, name, f);
            } catch (err) {
              // A change that does not apply to what an earlier one left (a member it deleted).
              if (!(err instanceof TypeError)) throw err;
            }
          }
          const p = planChecked(input);
          input = { ...input, remembered: p.statuses, now: new Date(input.now.getTime() + 60_000) };
          planChecked(input);
        }
      }),
      { numRuns: 150, seed: process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined },
    );
  });

  it('the memo can be turned off alone: then nothing is reused', () => {
    clearCompareMemo();
    const input = steadyFleet(SERVICES);
    setSteadyMemoEnabled(false);
    try {
      planChecked(input);
      const before = steadyComparisonsReused();
      planChecked(input);
      expect(steadyComparisonsReused()).toBe(before);
    } finally {
      setSteadyMemoEnabled(true);
    }
  });

  it('every member of a live service is either printed or read by the status itself', () => {
    const kinds = new Set(Object.values(SERVICE_MEMBERS));
    expect([...kinds].sort()).toEqual(['acting path only', 'print', 'print: read fields', 'status reads it']);
    expect(Object.entries(SERVICE_MEMBERS).filter(([, k]) => k === 'status reads it').map(([m]) => m).sort()).toEqual(['events', 'stoppedTasks']);
  });
});

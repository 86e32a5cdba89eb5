/**
 * Helpers of the steady judgement's tests (`lambda/core/reconcile/steady.ts`, the version a status
 * records in `judged`): the full comparison to check a plan against, and a steady fleet to start
 * from.
 */
import { expect } from 'vitest';
import { CompareCache } from '../../lambda/core/compare-cache';
import { plan, type PlanInput } from '../../lambda/core/planner';
import type { Plan, ServiceId, ServiceStatus, TaskDefinition } from '../../lambda/core/types';
import { OWNER_TAG_KEY } from '../../lambda/core/ports';
import type { ObservedService } from '../../lambda/core/types';
import { SG_1, SUBNET_A, aConvergedService, aDeployment, aPlanInput, aSpec, anObservedCluster, anObservedState, at } from './builders';

/** `remembered` without the judged versions: every existing service is compared in full. */
export function withoutJudged(remembered: Record<ServiceId, ServiceStatus>): Record<ServiceId, ServiceStatus> {
  const out: Record<ServiceId, ServiceStatus> = {};
  for (const [id, s] of Object.entries(remembered)) {
    const copy = { ...s };
    delete copy.judged;
    out[id] = copy;
  }
  return out;
}

/** The plan of the full comparison: no cache, and remembered statuses without their judged versions. */
export function fullPlan(input: PlanInput): Plan {
  return plan({ ...input, cache: undefined, remembered: withoutJudged(input.remembered) });
}

/**
 * The plan as it is (the input's cache and judged versions), and the full comparison's; asserts
 * they are the same, key order and undefined members included.
 */
export function planChecked(input: PlanInput): Plan {
  const fast = plan(input);
  const slow = fullPlan(input);
  expect(fast).toStrictEqual(slow);
  expect(JSON.stringify(fast)).toBe(JSON.stringify(slow));
  return fast;
}

/** How many steady judgements `f` took from statuses instead of comparing, counted by `input`'s cache. */
export function judgementsTaken(input: PlanInput, f: () => void): number {
  const cache = input.cache;
  if (!(cache instanceof CompareCache)) throw new Error('the input has no CompareCache');
  const before = cache.judgementsTaken();
  f();
  return cache.judgementsTaken() - before;
}

/**
 * Converged services `services` in cluster `apps` (desiredCount 1, 2, ...; tag `team`), with the
 * statuses a previous pass left (a fixed point, their judged versions included) and a fresh cache.
 */
export function steadyFleet(services: readonly string[]): PlanInput {
  const specs = services.map((service, i) => aSpec({ service, desiredCount: 1 + i, tags: { team: `t${i}` } }));
  const converged = specs.map((s) => aConvergedService(s.spec));
  const input = aPlanInput({
    specs,
    observed: anObservedState(
      [anObservedCluster('apps', converged.map((c) => c.service))],
      Object.assign({}, ...converged.map((c) => c.taskDefinitions)) as Record<string, TaskDefinition>,
    ),
  });
  const first = plan(input);
  const second = plan({ ...input, remembered: first.statuses });
  return { ...input, remembered: second.statuses, cache: new CompareCache() };
}

/** `input` with the live service `name` replaced by `change` of a deep copy of it (task definitions may be added). */
export function withLive(input: PlanInput, name: string, change: (s: ObservedService, tds: Record<string, TaskDefinition>) => void): PlanInput {
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
export const CHANGES: [string, (s: ObservedService, tds: Record<string, TaskDefinition>) => void][] = [
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
  ['a tag added by hand (every tag is in the digest)', (s) => void (s.tags.hand = 'made')],
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

/** Changes the comparison never reads: the judgement is taken, and the plan is still the full one. */
export const NOT_READ: [string, (s: ObservedService) => void][] = [
  ['serviceArn', (s) => void (s.serviceArn = `${s.serviceArn}-x`)],
  ['a deployment count', (s) => void (s.deployments[0].failedTasks = 3)],
];

/** Changes the status reads itself every pass: the judgement may be taken, the status still follows them. */
export const READ_BY_STATUS: [string, (s: ObservedService) => void][] = [
  ['a new service event', (s) => void s.events.unshift({ id: 'e1', createdAt: at(-5), message: '(service web-1) was unable to place a task.' })],
  [
    'a stopped task',
    (s) =>
      void (s.stoppedTasks = [
        { taskArn: 'arn:aws:ecs:us-east-1:123456789012:task/apps/1', stopCode: 'EssentialContainerExited', stoppedReason: 'exit 1', stoppedAt: at(-10), containers: [] },
      ]),
  ],
];

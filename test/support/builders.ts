/**
 * Small builders for core tests: specs, observed services and clusters, remembered statuses, plan
 * inputs. Every builder returns a fresh object with sensible defaults; pass only what the test is
 * about.
 */
import { DEFAULT_PLAN_OPTIONS, type PlanOptions } from '../../lambda/core/options';
import type { PlanInput } from '../../lambda/core/planner';
import { OWNER_TAG_KEY } from '../../lambda/core/ports';
import { parseSpecItem, specToItem } from '../../lambda/core/spec';
import { renderTaskDefinition, taskDefinitionFamily } from '../../lambda/core/taskdef';
import type {
  Condition,
  ObservedCluster,
  ObservedDeployment,
  ObservedService,
  ObservedState,
  ServiceKey,
  ServiceSpec,
  ServiceStatus,
  SpecError,
  SpecParseResult,
  TaskDefinition,
} from '../../lambda/core/types';
import { clusterArn, describeAsEcs, serviceArn, taskDefinitionArn } from './fake-ecs';

/** The `now` of most tests. */
export const NOW = new Date('2025-06-01T12:00:00.000Z');
export const OWNER = DEFAULT_PLAN_OPTIONS.ownerId;
export const CLUSTER = 'apps';
export const SERVICE = 'web';
export const SUBNET_A = 'subnet-0a1b2c3d4e5f60001';
export const SUBNET_B = 'subnet-0a1b2c3d4e5f60002';
export const SUBNET_DEFAULT = 'subnet-0d0d0d0d0d0d0d0d0';
export const SG_1 = 'sg-0a1b2c3d4e5f60001';
export const SG_DEFAULT = 'sg-0d0d0d0d0d0d0d0d0';

/** Seconds after {@link NOW}, as a Date (negative for earlier). */
export function at(secondsFromNow: number): Date {
  return new Date(NOW.getTime() + secondsFromNow * 1000);
}

/** PlanOptions for tests: the defaults plus one default subnet and security group. */
export function planOptions(overrides: Partial<PlanOptions> = {}): PlanOptions {
  return {
    ...DEFAULT_PLAN_OPTIONS,
    defaults: { subnets: [SUBNET_DEFAULT], securityGroups: [SG_DEFAULT] },
    ...overrides,
  };
}

/** A valid, normalized spec (what `parseSpecItem` yields for a small item). */
export function aServiceSpec(overrides: Partial<ServiceSpec> = {}): ServiceSpec {
  return {
    cluster: CLUSTER,
    service: SERVICE,
    image: 'public.ecr.aws/nginx/nginx:1.27',
    desiredCount: 2,
    cpu: 256,
    memory: 512,
    containerPort: 80,
    environment: {},
    secrets: {},
    subnets: [SUBNET_A, SUBNET_B],
    securityGroups: [SG_1],
    capacityProvider: 'FARGATE',
    cpuArchitecture: 'X86_64',
    state: 'present',
    adopt: false,
    autoscaled: false,
    tags: {},
    ...overrides,
  };
}

export type ValidSpec = Extract<SpecParseResult, { ok: true }>;

/**
 * A valid parse result for `aServiceSpec(overrides)`: the spec written as an item (`specToItem`)
 * and read back with the real `parseSpecItem`, so it is normalized exactly as in a pass.
 * @throws Error listing the parser's errors when the overrides make the spec invalid.
 */
export function aSpec(overrides: Partial<ServiceSpec> = {}): ValidSpec {
  const result = parseSpecItem(specToItem(aServiceSpec(overrides)));
  if (!result.ok) {
    throw new Error(`aSpec: invalid spec: ${result.errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`);
  }
  return result;
}

/** An invalid parse result for `key`. */
export function anInvalidSpec(
  key: ServiceKey | null = { cluster: CLUSTER, service: SERVICE },
  errors: SpecError[] = [{ path: 'cpu', value: '300', message: 'must be one of 256, 512, 1024, 2048, 4096, 8192, 16384' }],
): SpecParseResult {
  return { ok: false, key, errors };
}

/** A deployment; PRIMARY COMPLETED by default. */
export function aDeployment(overrides: Partial<ObservedDeployment> = {}): ObservedDeployment {
  return {
    id: 'ecs-svc/0000001',
    status: 'PRIMARY',
    taskDefinition: taskDefinitionArn(`${CLUSTER}-${SERVICE}`, 1),
    desiredCount: 2,
    runningCount: 2,
    pendingCount: 0,
    failedTasks: 0,
    rolloutState: 'COMPLETED',
    rolloutStateReason: 'ECS deployment ecs-svc/0000001 completed.',
    createdAt: at(-3600),
    updatedAt: at(-3500),
    ...overrides,
  };
}

/**
 * A generic ACTIVE service owned by the default owner: `apps/web`, 2 of 2 tasks RUNNING on
 * FARGATE, one COMPLETED PRIMARY deployment.
 */
export function anObservedService(overrides: Partial<ObservedService> & { cluster?: string } = {}): ObservedService {
  const { cluster = CLUSTER, ...rest } = overrides;
  const name = rest.serviceName ?? SERVICE;
  const td = rest.taskDefinition ?? taskDefinitionArn(`${cluster}-${name}`, 1);
  return {
    serviceArn: serviceArn(cluster, name),
    serviceName: name,
    clusterArn: clusterArn(cluster),
    status: 'ACTIVE',
    desiredCount: 2,
    runningCount: 2,
    pendingCount: 0,
    taskDefinition: td,
    capacityProviderStrategy: [{ capacityProvider: 'FARGATE', weight: 1, base: 0 }],
    platformVersion: 'LATEST',
    propagateTags: 'SERVICE',
    deploymentConfiguration: {
      minimumHealthyPercent: 100,
      maximumPercent: 200,
      deploymentCircuitBreaker: { enable: true, rollback: true },
    },
    networkConfiguration: {
      awsvpcConfiguration: { subnets: [SUBNET_A, SUBNET_B], securityGroups: [SG_1], assignPublicIp: 'DISABLED' },
    },
    loadBalancers: [],
    deployments: [aDeployment({ taskDefinition: td, desiredCount: rest.desiredCount ?? 2, runningCount: rest.runningCount ?? 2 })],
    events: [],
    tags: { [OWNER_TAG_KEY]: OWNER },
    createdAt: at(-86_400),
    ...rest,
  };
}

/**
 * What DescribeTaskDefinition returns for the task definition the reconciler renders for `spec`
 * (numeric-string cpu, `essential: true`, `hostPort`, `registeredAt`, ...; see `describeAsEcs`).
 */
export function describedTaskDefinitionFor(
  spec: ServiceSpec,
  options: { plan?: PlanOptions; revision?: number } = {},
): TaskDefinition {
  const plan = options.plan ?? planOptions();
  const rendered = renderTaskDefinition(spec, { defaults: plan.defaults, ownerId: plan.ownerId });
  const revision = options.revision ?? 1;
  return describeAsEcs(rendered, taskDefinitionArn(rendered.family, revision), revision, at(-7200));
}

/**
 * The live service and described task definition of `spec` after the reconciler created it and
 * ECS converged: the service as DescribeServices returns it (ECS shapes, written out here rather
 * than derived from the planner), owned, with `overrides` applied last.
 */
export function aConvergedService(
  spec: ServiceSpec,
  overrides: Partial<ObservedService> = {},
  options: { plan?: PlanOptions; revision?: number } = {},
): { service: ObservedService; taskDefinitions: Record<string, TaskDefinition> } {
  const plan = options.plan ?? planOptions();
  const td = describedTaskDefinitionFor(spec, options);
  const arn = td.taskDefinitionArn!;
  const desired = spec.desiredCount ?? 1;
  const service = anObservedService({
    cluster: spec.cluster,
    serviceName: spec.service,
    taskDefinition: arn,
    desiredCount: desired,
    runningCount: desired,
    capacityProviderStrategy: [{ capacityProvider: spec.capacityProvider, weight: 1, base: 0 }],
    deploymentConfiguration: {
      minimumHealthyPercent: spec.deployment?.minimumHealthyPercent ?? 100,
      maximumPercent: spec.deployment?.maximumPercent ?? 200,
      deploymentCircuitBreaker: spec.deployment?.circuitBreaker ?? { enable: true, rollback: true },
    },
    networkConfiguration: {
      awsvpcConfiguration: {
        subnets: spec.subnets ?? plan.defaults.subnets,
        securityGroups: spec.securityGroups ?? plan.defaults.securityGroups,
        assignPublicIp: (spec.assignPublicIp ?? plan.defaults.assignPublicIp ?? false) ? 'ENABLED' : 'DISABLED',
      },
    },
    loadBalancers: spec.loadBalancer
      ? [{ targetGroupArn: spec.loadBalancer.targetGroupArn, containerName: spec.service, containerPort: spec.loadBalancer.containerPort }]
      : [],
    deployments: [aDeployment({ taskDefinition: arn, desiredCount: desired, runningCount: desired })],
    tags: { ...spec.tags, [OWNER_TAG_KEY]: plan.ownerId },
    ...overrides,
  });
  return { service, taskDefinitions: { [arn]: td } };
}

/** The task definition family the reconciler uses for `apps/web` (or `key`). */
export function familyOf(key: ServiceKey = { cluster: CLUSTER, service: SERVICE }): string {
  return taskDefinitionFamily(key);
}

/** A cluster observation: complete and existing unless overridden. */
export function anObservedCluster(
  name: string = CLUSTER,
  services: ObservedService[] = [],
  overrides: Partial<ObservedCluster> = {},
): ObservedCluster {
  return {
    cluster: name,
    complete: true,
    exists: true,
    services: Object.fromEntries(services.map((s) => [s.serviceName, s])),
    ...overrides,
  };
}

export function anObservedState(
  clusters: ObservedCluster[] = [anObservedCluster()],
  taskDefinitions: Record<string, TaskDefinition> = {},
): ObservedState {
  return { clusters: Object.fromEntries(clusters.map((c) => [c.cluster, c])), taskDefinitions };
}

/** A remembered condition. */
export function aCondition(overrides: Partial<Condition> = {}): Condition {
  return {
    type: 'Ready',
    status: 'True',
    reason: 'ServiceConverged',
    message: '',
    lastTransitionTime: at(-3600).toISOString(),
    ...overrides,
  };
}

/** A remembered status (the planner's memory): converged 2/2 by default. */
export function aStatus(overrides: Partial<ServiceStatus> = {}): ServiceStatus {
  return {
    phase: 'Converged',
    conditions: [aCondition(), aCondition({ type: 'Progressing', status: 'False' })],
    desiredCount: 2,
    runningCount: 2,
    pendingCount: 0,
    lagBeyondGrace: false,
    observedAt: at(-60).toISOString(),
    ...overrides,
  };
}

/** A plan input: no specs, one empty complete cluster `apps`, test options, {@link NOW}. */
export function aPlanInput(overrides: Partial<PlanInput> = {}): PlanInput {
  return {
    specs: [],
    specsComplete: true,
    observed: anObservedState(),
    remembered: {},
    options: planOptions(),
    now: NOW,
    ...overrides,
  };
}

/**
 * The service-level half of the planner: the CreateService / UpdateService fields a spec asks for,
 * their comparison with a live service (ECS defaults applied first, sets compared as sets), and the
 * allow-list checks. Pure functions; the task definition half lives in `./taskdef`.
 */
import type { AllowLists, ReconcilerDefaults } from './options';
import type {
  CreateServiceInput,
  FieldChange,
  ObservedService,
  ServiceSpec,
  UpdateServiceInput,
} from './types';

/** The service fields a spec asks for, ECS shapes, reconciler defaults applied. */
export interface DesiredServiceConfig {
  /** Undefined when Application Auto Scaling owns the count (`autoscaled`, ECS-FACTS §8). */
  readonly desiredCount?: number;
  readonly capacityProviderStrategy: CreateServiceInput['capacityProviderStrategy'];
  readonly networkConfiguration: CreateServiceInput['networkConfiguration'];
  readonly deploymentConfiguration: CreateServiceInput['deploymentConfiguration'];
  /** [] when the spec names no load balancer. */
  readonly loadBalancers: NonNullable<CreateServiceInput['loadBalancers']>;
}

/** ECS's own defaults for a REPLICA service (ECS-FACTS §6, service level). */
export const ECS_SERVICE_DEFAULTS = {
  minimumHealthyPercent: 100,
  maximumPercent: 200,
  deploymentCircuitBreaker: { enable: false, rollback: false },
  assignPublicIp: 'DISABLED',
} as const;

/**
 * The reconciler's circuit breaker default for services it creates or manages: enabled with
 * rollback, so that a failed rollout is detected (rolloutState FAILED) and ECS rolls back to the
 * last COMPLETED deployment (ECS-FACTS §4) instead of retrying a broken image forever.
 */
export const DEFAULT_CIRCUIT_BREAKER = { enable: true, rollback: true } as const;

/** desiredCount sent on CreateService for an autoscaled spec that gives none (tasks). */
export const AUTOSCALED_INITIAL_DESIRED_COUNT = 1;

/** Subnets after the reconciler's defaults; [] means the spec cannot be placed (`NoSubnets`). */
export function effectiveSubnets(spec: ServiceSpec, defaults: ReconcilerDefaults): string[] {
  return spec.subnets && spec.subnets.length > 0 ? [...spec.subnets] : [...defaults.subnets];
}

/**
 * The service fields for `spec`: subnets, security groups and assignPublicIp fall back to
 * `defaults`; deploymentConfiguration to ECS's 100/200 with {@link DEFAULT_CIRCUIT_BREAKER};
 * capacityProviderStrategy `[{ capacityProvider, weight: 1 }]`; a load balancer's `containerName`
 * is the service name (the rendered task definition names its container so).
 */
export function desiredServiceConfig(spec: ServiceSpec, defaults: ReconcilerDefaults): DesiredServiceConfig {
  const publicIp = spec.assignPublicIp ?? defaults.assignPublicIp ?? false;
  return {
    desiredCount: spec.autoscaled ? undefined : spec.desiredCount,
    capacityProviderStrategy: [{ capacityProvider: spec.capacityProvider, weight: 1 }],
    networkConfiguration: {
      awsvpcConfiguration: {
        subnets: effectiveSubnets(spec, defaults),
        securityGroups:
          spec.securityGroups && spec.securityGroups.length > 0 ? [...spec.securityGroups] : [...defaults.securityGroups],
        assignPublicIp: publicIp ? 'ENABLED' : 'DISABLED',
      },
    },
    deploymentConfiguration: {
      minimumHealthyPercent: spec.deployment?.minimumHealthyPercent ?? ECS_SERVICE_DEFAULTS.minimumHealthyPercent,
      maximumPercent: spec.deployment?.maximumPercent ?? ECS_SERVICE_DEFAULTS.maximumPercent,
      deploymentCircuitBreaker: { ...(spec.deployment?.circuitBreaker ?? DEFAULT_CIRCUIT_BREAKER) },
    },
    loadBalancers: spec.loadBalancer
      ? [
          {
            targetGroupArn: spec.loadBalancer.targetGroupArn,
            containerName: spec.service,
            containerPort: spec.loadBalancer.containerPort,
          },
        ]
      : [],
  };
}

const NONE = '(none)';
const setText = (xs: readonly string[] | undefined): string => {
  const sorted = [...new Set(xs ?? [])].sort();
  return sorted.length > 0 ? sorted.join(',') : NONE;
};
const strategyText = (
  xs: readonly { capacityProvider: string; weight?: number; base?: number }[] | undefined,
  launchType?: string,
): string => {
  if ((!xs || xs.length === 0) && launchType) return `launchType ${launchType}`;
  return setText((xs ?? []).map((s) => `${s.capacityProvider}:${s.weight ?? 0}${s.base ? `:base=${s.base}` : ''}`));
};
const lbText = (xs: readonly { targetGroupArn?: string; containerName?: string; containerPort?: number }[] | undefined) =>
  setText((xs ?? []).map((l) => `${l.targetGroupArn ?? ''}|${l.containerName ?? ''}|${l.containerPort ?? ''}`));
const breakerText = (b: { enable: boolean; rollback: boolean }) => `enable=${b.enable},rollback=${b.rollback}`;

/** Result of comparing a desired service configuration with the live service. */
export interface ServiceDiff {
  /** Field-level differences, live -> desired, in a fixed order. */
  readonly changes: FieldChange[];
  /** The UpdateService fields to send (only those that differ); `{}` when none. */
  readonly input: Omit<UpdateServiceInput, 'cluster' | 'service'>;
}

/**
 * Compares `desired` with the live service as DescribeServices returns it, after applying ECS's
 * service defaults to the live side (ECS-FACTS §6: deploymentConfiguration 200/100, circuit breaker
 * `{enable: false, rollback: false}` when absent, assignPublicIp DISABLED). Subnets, security
 * groups, capacity providers and load balancers compare as sets. Whole objects are sent for
 * networkConfiguration and deploymentConfiguration (UpdateService replaces them as a whole), and
 * `forceNewDeployment: true` accompanies any capacityProviderStrategy change, including from a
 * launch type (ECS-FACTS §7). `desiredCount` is never compared when the spec is autoscaled.
 */
export function diffService(desired: DesiredServiceConfig, live: ObservedService): ServiceDiff {
  const changes: FieldChange[] = [];
  const input: { -readonly [K in keyof ServiceDiff['input']]: ServiceDiff['input'][K] } = {};

  if (desired.desiredCount !== undefined && desired.desiredCount !== live.desiredCount) {
    changes.push({ field: 'desiredCount', from: String(live.desiredCount), to: String(desired.desiredCount) });
    input.desiredCount = desired.desiredCount;
  }

  const liveStrategy = strategyText(live.capacityProviderStrategy, live.launchType);
  const wantStrategy = strategyText(desired.capacityProviderStrategy);
  if (liveStrategy !== wantStrategy) {
    changes.push({ field: 'capacityProviderStrategy', from: liveStrategy, to: wantStrategy });
    input.capacityProviderStrategy = desired.capacityProviderStrategy.map((s) => ({ ...s }));
    input.forceNewDeployment = true;
  }

  const liveNet = live.networkConfiguration?.awsvpcConfiguration;
  const wantNet = desired.networkConfiguration.awsvpcConfiguration;
  const netChanges: FieldChange[] = [];
  const compare = (field: string, from: string, to: string) => {
    if (from !== to) netChanges.push({ field, from, to });
  };
  compare('networkConfiguration.subnets', setText(liveNet?.subnets), setText(wantNet.subnets));
  compare('networkConfiguration.securityGroups', setText(liveNet?.securityGroups), setText(wantNet.securityGroups));
  compare(
    'networkConfiguration.assignPublicIp',
    liveNet?.assignPublicIp ?? ECS_SERVICE_DEFAULTS.assignPublicIp,
    wantNet.assignPublicIp,
  );
  if (netChanges.length > 0) {
    changes.push(...netChanges);
    input.networkConfiguration = {
      awsvpcConfiguration: { ...wantNet, subnets: [...wantNet.subnets], securityGroups: [...wantNet.securityGroups] },
    };
  }

  const liveDep = live.deploymentConfiguration;
  const wantDep = desired.deploymentConfiguration;
  const depChanges: FieldChange[] = [];
  const liveMin = liveDep?.minimumHealthyPercent ?? ECS_SERVICE_DEFAULTS.minimumHealthyPercent;
  const liveMax = liveDep?.maximumPercent ?? ECS_SERVICE_DEFAULTS.maximumPercent;
  const liveBreaker = liveDep?.deploymentCircuitBreaker ?? ECS_SERVICE_DEFAULTS.deploymentCircuitBreaker;
  if (liveMin !== wantDep.minimumHealthyPercent) {
    depChanges.push({
      field: 'deploymentConfiguration.minimumHealthyPercent',
      from: String(liveMin),
      to: String(wantDep.minimumHealthyPercent),
    });
  }
  if (liveMax !== wantDep.maximumPercent) {
    depChanges.push({ field: 'deploymentConfiguration.maximumPercent', from: String(liveMax), to: String(wantDep.maximumPercent) });
  }
  if (breakerText(liveBreaker) !== breakerText(wantDep.deploymentCircuitBreaker)) {
    depChanges.push({
      field: 'deploymentConfiguration.deploymentCircuitBreaker',
      from: breakerText(liveBreaker),
      to: breakerText(wantDep.deploymentCircuitBreaker),
    });
  }
  if (depChanges.length > 0) {
    changes.push(...depChanges);
    input.deploymentConfiguration = { ...wantDep, deploymentCircuitBreaker: { ...wantDep.deploymentCircuitBreaker } };
  }

  const liveLb = lbText(live.loadBalancers);
  const wantLb = lbText(desired.loadBalancers);
  if (liveLb !== wantLb) {
    changes.push({ field: 'loadBalancers', from: liveLb, to: wantLb });
    input.loadBalancers = desired.loadBalancers.map((l) => ({ ...l }));
  }

  return { changes, input };
}

/**
 * Registry host of an image reference, following Docker's reference grammar: the first
 * `/`-separated component is a registry when it contains `.` or `:` or is `localhost`; otherwise
 * (and for references without `/`) the image is on Docker Hub, registry `docker.io`. Docker Hub's
 * aliases `index.docker.io` and `registry-1.docker.io` map to `docker.io`. Lower case.
 */
export function imageRegistry(image: string): string {
  const slash = image.indexOf('/');
  if (slash < 0) return 'docker.io';
  const first = image.slice(0, slash).toLowerCase();
  if (!(first.includes('.') || first.includes(':') || first === 'localhost')) return 'docker.io';
  if (first === 'index.docker.io' || first === 'registry-1.docker.io') return 'docker.io';
  return first;
}

/**
 * Why `spec` is outside the allow-lists, one sentence per violation naming the value and the list;
 * [] when allowed. An undefined list allows anything; an empty list allows nothing (configured as
 * `NONE`, e.g. when the deployment allow-lists no task role). The execution role checked is the
 * effective one (spec's, else the reconciler's default), since that is what gets registered.
 */
export function allowListViolations(spec: ServiceSpec, allow: AllowLists, defaults: ReconcilerDefaults): string[] {
  const out: string[] = [];
  const check = (what: string, value: string | undefined, list: string[] | undefined, same: (a: string, b: string) => boolean) => {
    if (value === undefined || list === undefined) return;
    if (!list.some((x) => same(x, value))) {
      out.push(
        list.length === 0
          ? `${what} ${value} is not allowed: the allow-list is empty (NONE)`
          : `${what} ${value} is not in the allow-list [${list.join(', ')}]`,
      );
    }
  };
  const exact = (a: string, b: string) => a === b;
  check('taskRoleArn', spec.taskRoleArn, allow.taskRoleArns, exact);
  check('executionRoleArn', spec.executionRoleArn ?? defaults.executionRoleArn, allow.executionRoleArns, exact);
  check('image registry', imageRegistry(spec.image), allow.imageRegistries, (a, b) => a.toLowerCase() === b);
  return out;
}

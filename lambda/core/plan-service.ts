/**
 * The service-level half of the planner: the CreateService / UpdateService fields a spec asks for,
 * their comparison with a live service (ECS defaults applied first, sets compared as sets).
 * The allow-list checks live in `./allow-lists`. Pure functions; the task definition half lives in `./taskdef`.
 */
import type { ReconcilerDefaults } from './options';
import { own } from './dict';
import { type CanonicalValue, canonicalOf, deepEqual } from './vocab/decl';
import {
  CORE_SERVICE_FIELD_CONTROLLERS,
  type DeploymentControllerType,
  SERVICE_FIELDS,
  SERVICE_FIELD_NAMES,
  type ServiceFieldDecl,
  type ServiceFieldName,
} from './vocab/service';
import type {
  CreateServiceInput,
  FieldChange,
  ObservedService,
  ServiceSpec,
  UpdateServiceInput,
} from './types';

/** The service fields a spec asks for, ECS shapes, reconciler defaults applied. */
export interface DesiredServiceConfig {
  /** Undefined when Application Auto Scaling owns the count (`autoscaled`, docs/ecs-facts.md §8). */
  readonly desiredCount?: number;
  readonly capacityProviderStrategy: NonNullable<CreateServiceInput['capacityProviderStrategy']>;
  readonly networkConfiguration: CreateServiceInput['networkConfiguration'];
  readonly deploymentConfiguration: CreateServiceInput['deploymentConfiguration'];
  /** [] when the spec names no load balancer. */
  readonly loadBalancers: NonNullable<CreateServiceInput['loadBalancers']>;
  /** `FARGATE` when the spec asks for the launch type (then the strategy is []). */
  readonly launchType?: 'FARGATE';
  /**
   * The fields of `SERVICE_FIELDS` (`./vocab/service.ts`): the spec's value, else the stated
   * default; `given` holds those the spec sets (CreateService sends only these and propagateTags).
   */
  readonly fields: Readonly<Record<ServiceFieldName, unknown>>;
  readonly given: ReadonlySet<ServiceFieldName>;
}

/** ECS's own defaults for a REPLICA service (docs/ecs-facts.md §6, service level). */
export const ECS_SERVICE_DEFAULTS = {
  minimumHealthyPercent: 100,
  maximumPercent: 200,
  deploymentCircuitBreaker: { enable: false, rollback: false },
  assignPublicIp: 'DISABLED',
} as const;

/**
 * The reconciler's circuit breaker default for services it creates or manages: enabled with
 * rollback, so that a failed rollout is detected (rolloutState FAILED) and ECS rolls back to the
 * last COMPLETED deployment (docs/ecs-facts.md §4) instead of retrying a broken image forever.
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
  const fields = {} as Record<ServiceFieldName, unknown>;
  const given = new Set<ServiceFieldName>();
  const source = spec as unknown as Record<string, unknown>;
  for (const name of SERVICE_FIELD_NAMES) {
    const value = source[name];
    if (value !== undefined) given.add(name);
    fields[name] = value ?? (SERVICE_FIELDS[name] as ServiceFieldDecl).field.default;
  }
  const strategy: NonNullable<CreateServiceInput['capacityProviderStrategy']> = spec.launchType
    ? []
    : spec.capacityProviderStrategy
      ? spec.capacityProviderStrategy.map((s) => ({
          capacityProvider: s.capacityProvider,
          weight: s.weight ?? 0,
          ...(s.base !== undefined ? { base: s.base } : {}),
        }))
      : [{ capacityProvider: spec.capacityProvider, weight: 1 }];
  return {
    desiredCount: spec.autoscaled ? undefined : spec.desiredCount,
    ...(spec.launchType ? { launchType: spec.launchType } : {}),
    fields,
    given,
    capacityProviderStrategy: strategy,
    networkConfiguration: {
      awsvpcConfiguration: {
        subnets: effectiveSubnets(spec, defaults),
        securityGroups:
          spec.securityGroups && spec.securityGroups.length > 0 ? [...spec.securityGroups] : [...defaults.securityGroups],
        assignPublicIp: publicIp ? 'ENABLED' : 'DISABLED',
      },
    },
    deploymentConfiguration: deploymentConfigurationOf(spec),
    loadBalancers: loadBalancersOf(spec),
  };
}

/**
 * The ECS deploymentConfiguration a spec asks for: its `deployment` with the circuit breaker under
 * ECS's name, ECS's 100/200, the reconciler's {@link DEFAULT_CIRCUIT_BREAKER} when the spec names
 * none, and for BLUE_GREEN a bake time of 0 when the spec gives none (ECS requires the member for
 * that strategy; 0 is its default).
 */
export function deploymentConfigurationOf(spec: ServiceSpec): DesiredServiceConfig['deploymentConfiguration'] {
  const { circuitBreaker, minimumHealthyPercent, maximumPercent, ...rest } = structuredClone(spec.deployment ?? {});
  return {
    minimumHealthyPercent: minimumHealthyPercent ?? ECS_SERVICE_DEFAULTS.minimumHealthyPercent,
    maximumPercent: maximumPercent ?? ECS_SERVICE_DEFAULTS.maximumPercent,
    deploymentCircuitBreaker: circuitBreaker ?? { ...DEFAULT_CIRCUIT_BREAKER },
    ...rest,
    ...(rest.strategy === 'BLUE_GREEN' && rest.bakeTimeInMinutes === undefined ? { bakeTimeInMinutes: 0 } : {}),
  };
}

/** The spec's load balancers in ECS's shape: `loadBalancers`, or the shorthand's one, sending to the container named after the service. */
function loadBalancersOf(spec: ServiceSpec): DesiredServiceConfig['loadBalancers'] {
  if (spec.loadBalancers) return structuredClone(spec.loadBalancers);
  const lb = spec.loadBalancer;
  if (!lb) return [];
  return [
    {
      targetGroupArn: lb.targetGroupArn,
      containerName: spec.service,
      containerPort: lb.containerPort,
      ...(lb.advancedConfiguration ? { advancedConfiguration: structuredClone(lb.advancedConfiguration) } : {}),
    },
  ];
}

/**
 * The CreateService fields of `SERVICE_FIELDS` for `desired`: only those the spec sets (ECS's
 * create defaults are the stated defaults), plus `propagateTags` (the reconciler's default SERVICE
 * differs from ECS's NONE).
 */
export function createServiceFields(desired: DesiredServiceConfig): Partial<CreateServiceInput> {
  const out: Partial<Record<ServiceFieldName, unknown>> = {};
  for (const name of SERVICE_FIELD_NAMES) {
    if (desired.given.has(name) || name === 'propagateTags') out[name] = structuredClone(desired.fields[name]);
  }
  return out as Partial<CreateServiceInput>;
}

const NONE = '(none)';
const setText = (xs: readonly string[] | undefined): string => {
  if (xs === undefined || xs.length === 0) return NONE;
  if (xs.length === 1) return xs[0];
  if (xs.length === 2) {
    // Two members, the usual subnets: the same text as the general case, without a Set and a sort.
    const [a, b] = xs;
    return a === b ? a : a < b ? `${a},${b}` : `${b},${a}`;
  }
  const sorted = [...new Set(xs)].sort();
  return sorted.join(',');
};
/**
 * Whether `setText(xs) === text`, without building the text for the usual one or two members
 * (subnets, security groups): the steady comparison of every service every pass allocates nothing.
 */
function setTextEquals(xs: readonly string[] | undefined, text: string): boolean {
  if (xs === undefined || xs.length === 0) return text === NONE;
  if (xs.length === 1) return xs[0] === text;
  if (xs.length === 2) {
    const a = xs[0];
    const b = xs[1];
    if (a === b) return a === text;
    const lo = a < b ? a : b;
    const hi = a < b ? b : a;
    return text.length === lo.length + 1 + hi.length && text.startsWith(lo) && text.charCodeAt(lo.length) === 44 /* , */ && text.endsWith(hi);
  }
  return setText(xs) === text;
}
const strategyText = (
  xs: readonly { capacityProvider: string; weight?: number; base?: number }[] | undefined,
  launchType?: string,
): string => {
  if ((!xs || xs.length === 0) && launchType) return `launchType ${launchType}`;
  if (!xs || xs.length === 0) return NONE;
  if (xs.length === 1) return strategyItemText(xs[0]);
  return setText(xs.map(strategyItemText));
};
/**
 * Whether `strategyText` of the live service is that of `desired` for the usual one-provider
 * strategy (no launch type), told without building either text: same provider, same weight
 * (absent = 0) and base (absent or 0 = none). False means "compare the texts".
 */
function sameSingleStrategy(live: ObservedService, desired: DesiredServiceConfig): boolean {
  const xs = live.capacityProviderStrategy;
  const ys = desired.capacityProviderStrategy;
  if (xs === undefined || xs.length !== 1 || ys.length !== 1) return false;
  const x = xs[0];
  const y = ys[0];
  return (
    typeof x.capacityProvider === 'string' &&
    x.capacityProvider === y.capacityProvider &&
    typeof (x.weight ?? 0) === 'number' &&
    (x.weight ?? 0) === (y.weight ?? 0) &&
    typeof (x.base ?? 0) === 'number' &&
    (x.base || 0) === (y.base || 0)
  );
}
const strategyItemText = (s: { capacityProvider: string; weight?: number; base?: number }): string =>
  `${s.capacityProvider}:${s.weight ?? 0}${s.base ? `:base=${s.base}` : ''}`;
const lbText = (xs: readonly { targetGroupArn?: string; containerName?: string; containerPort?: number }[] | undefined) =>
  !xs || xs.length === 0 ? NONE : setText(xs.map((l) => `${l.targetGroupArn ?? ''}|${l.containerName ?? ''}|${l.containerPort ?? ''}`));
const breakerText = (b: { enable: boolean; rollback: boolean }) => `enable=${b.enable},rollback=${b.rollback}`;
/** `breakerText(live) === breakerText(want)`, without the texts when both are booleans (always, from ECS). */
const sameBreaker = (live: { enable: boolean; rollback: boolean }, want: { enable: boolean; rollback: boolean }): boolean =>
  typeof live.enable === 'boolean' && typeof live.rollback === 'boolean' && typeof want.enable === 'boolean' && typeof want.rollback === 'boolean'
    ? live.enable === want.enable && live.rollback === want.rollback
    : breakerText(live) === breakerText(want);

/** The texts the desired side of {@link diffService} compares. */
interface DesiredTexts {
  readonly strategy: string;
  readonly subnets: string;
  readonly securityGroups: string;
  readonly breaker: string;
  readonly alarms: string;
  readonly loadBalancers: string;
}

function desiredTexts(desired: DesiredServiceConfig): DesiredTexts {
  const net = desired.networkConfiguration.awsvpcConfiguration;
  return {
    strategy: strategyText(desired.capacityProviderStrategy, desired.launchType),
    subnets: setText(net.subnets),
    securityGroups: setText(net.securityGroups),
    breaker: breakerText(desired.deploymentConfiguration.deploymentCircuitBreaker),
    alarms: alarmsText(desired.deploymentConfiguration.alarms),
    loadBalancers: lbText(desired.loadBalancers),
  };
}

/** Result of comparing a desired service configuration with the live service. */
export interface ServiceDiff {
  /** Field-level differences, live -> desired, in a fixed order. */
  readonly changes: FieldChange[];
  /** The UpdateService fields to send (only those that differ); `{}` when none. */
  readonly input: Omit<UpdateServiceInput, 'cluster' | 'service'>;
  /** Differences ECS does not let UpdateService correct (not in `changes` nor `input`). */
  readonly unsendable: UnsendableChange[];
}

/**
 * Compares `desired` with the live service as DescribeServices returns it, after applying ECS's
 * service defaults to the live side (docs/ecs-facts.md §6: deploymentConfiguration 200/100, circuit breaker
 * `{enable: false, rollback: false}` when absent, assignPublicIp DISABLED). Subnets, security
 * groups, capacity providers and load balancers compare as sets. Whole objects are sent for
 * networkConfiguration and deploymentConfiguration (UpdateService replaces them as a whole), and
 * `forceNewDeployment: true` accompanies any capacityProviderStrategy change, including from a
 * launch type (docs/ecs-facts.md §7). `desiredCount` is never compared when the spec is autoscaled.
 * Every live value read here is part of the steady print (`./observed-print`): a read added here
 * must be added there, or the planner would reuse a comparison that did not read it.
 */
export function diffService(desired: DesiredServiceConfig, live: ObservedService): ServiceDiff {
  // Allocated on the first difference only: a steady service (almost all of them, every pass)
  // gets the shared empty results and no intermediate text or array.
  let changes: FieldChange[] | undefined;
  let unsendable: UnsendableChange[] | undefined;
  let input: { -readonly [K in keyof ServiceDiff['input']]: ServiceDiff['input'][K] } | undefined;

  if (desired.desiredCount !== undefined && desired.desiredCount !== live.desiredCount) {
    (changes ??= []).push({ field: 'desiredCount', from: String(live.desiredCount), to: String(desired.desiredCount) });
    (input ??= {}).desiredCount = desired.desiredCount;
  }

  const texts = desiredTexts(desired);
  const wantStrategy = texts.strategy;
  const liveStrategy = sameSingleStrategy(live, desired) ? wantStrategy : strategyText(live.capacityProviderStrategy, live.launchType);
  if (liveStrategy !== wantStrategy) {
    const change = { field: desired.launchType ? 'launchType' : 'capacityProviderStrategy', from: liveStrategy, to: wantStrategy };
    if (desired.launchType) {
      // UpdateService moves a service from a launch type to a strategy, never back.
      (unsendable ??= []).push({ ...change, why: 'ECS cannot move a service from a capacity provider strategy to a launch type' });
    } else {
      (changes ??= []).push(change);
      input ??= {};
      input.capacityProviderStrategy = desired.capacityProviderStrategy.map((s) => ({ ...s }));
      input.forceNewDeployment = true;
    }
  }

  const liveNet = live.networkConfiguration?.awsvpcConfiguration;
  const wantNet = desired.networkConfiguration.awsvpcConfiguration;
  const liveIp = liveNet?.assignPublicIp ?? ECS_SERVICE_DEFAULTS.assignPublicIp;
  if (!setTextEquals(liveNet?.subnets, texts.subnets) || !setTextEquals(liveNet?.securityGroups, texts.securityGroups) || liveIp !== wantNet.assignPublicIp) {
    const netChanges: FieldChange[] = [];
    const compare = (field: string, from: string, to: string) => {
      if (from !== to) netChanges.push({ field, from, to });
    };
    compare('networkConfiguration.subnets', setText(liveNet?.subnets), texts.subnets);
    compare('networkConfiguration.securityGroups', setText(liveNet?.securityGroups), texts.securityGroups);
    compare('networkConfiguration.assignPublicIp', liveIp, wantNet.assignPublicIp);
    (changes ??= []).push(...netChanges);
    (input ??= {}).networkConfiguration = {
      awsvpcConfiguration: { ...wantNet, subnets: [...wantNet.subnets], securityGroups: [...wantNet.securityGroups] },
    };
  }

  const liveDep = live.deploymentConfiguration;
  const wantDep = desired.deploymentConfiguration;
  const liveMin = liveDep?.minimumHealthyPercent ?? ECS_SERVICE_DEFAULTS.minimumHealthyPercent;
  const liveMax = liveDep?.maximumPercent ?? ECS_SERVICE_DEFAULTS.maximumPercent;
  // The circuit breaker and deployment alarms exist only under ECS's own (rolling update)
  // deployment controller (Amazon ECS API Reference, DeploymentCircuitBreaker: "can only be used
  // for services using the rolling update (ECS) deployment type"; DeploymentAlarms: "only ... when
  // the DeploymentController is set to ECS"): for a CODE_DEPLOY or EXTERNAL service they are never
  // sent. The breaker is not compared there (the reconciler's default breaker does not apply);
  // alarms a spec asks for are reported as not sendable.
  const controller = live.deploymentController?.type ?? 'ECS';
  const rolling = controller === 'ECS';
  const liveBreaker = liveDep?.deploymentCircuitBreaker ?? ECS_SERVICE_DEFAULTS.deploymentCircuitBreaker;
  const liveAlarms = rolling ? alarmsText(liveDep?.alarms) : NONE;
  const wantAlarms = rolling ? texts.alarms : NONE;
  if (!rolling && texts.alarms !== NONE) {
    (unsendable ??= []).push({
      field: 'deploymentConfiguration.alarms',
      from: alarmsText(liveDep?.alarms),
      to: texts.alarms,
      why: `the service uses the ${controller} deployment controller, and ECS uses deployment alarms only under the ECS deployment controller`,
    });
  }
  if (
    liveMin !== wantDep.minimumHealthyPercent ||
    liveMax !== wantDep.maximumPercent ||
    (rolling && !sameBreaker(liveBreaker, wantDep.deploymentCircuitBreaker)) ||
    liveAlarms !== wantAlarms
  ) {
    const depChanges: FieldChange[] = [];
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
    const liveBreakerText = breakerText(liveBreaker);
    if (rolling && liveBreakerText !== texts.breaker) {
      depChanges.push({
        field: 'deploymentConfiguration.deploymentCircuitBreaker',
        from: liveBreakerText,
        to: texts.breaker,
      });
    }
    if (liveAlarms !== wantAlarms) {
      depChanges.push({ field: 'deploymentConfiguration.alarms', from: liveAlarms, to: wantAlarms });
    }
    if (depChanges.length > 0) {
      (changes ??= []).push(...depChanges);
      (input ??= {}).deploymentConfiguration = rolling
        ? {
            // The members the spec does not manage (strategy, bake time, hooks, the breaker's
            // thresholds) go back as ECS answered them: sending the object must not strip them.
            ...structuredClone(liveDep?.unmanaged ?? {}),
            ...wantDep,
            deploymentCircuitBreaker: { ...structuredClone(liveDep?.unmanagedCircuitBreaker ?? {}), ...wantDep.deploymentCircuitBreaker },
            // UpdateService replaces the whole object: alarms removed from the spec are switched off.
            ...(wantDep.alarms || live.deploymentConfiguration?.alarms
              ? { alarms: wantDep.alarms ? { ...wantDep.alarms, alarmNames: [...wantDep.alarms.alarmNames] } : NO_ALARMS }
              : {}),
          }
        : { minimumHealthyPercent: wantDep.minimumHealthyPercent, maximumPercent: wantDep.maximumPercent };
    }
  }

  const liveLb = lbText(live.loadBalancers);
  const wantLb = texts.loadBalancers;
  if (liveLb !== wantLb) {
    (changes ??= []).push({ field: 'loadBalancers', from: liveLb, to: wantLb });
    (input ??= {}).loadBalancers = desired.loadBalancers.map((l) => withLiveAdvancedConfiguration(l, live.loadBalancers));
  }

  // The declared service fields (./vocab/service.ts), one rule for all: the spec's value or the
  // stated default, against the live value or what ECS's absence means.
  let primary: ObservedService['deployments'][number] | undefined;
  for (const d of live.deployments) {
    if (d.status === 'PRIMARY') {
      primary = d;
      break;
    }
  }
  const liveSource = live as unknown as Record<string, unknown>;
  const primarySource = primary as unknown as Record<string, unknown> | undefined;
  const wants = canonicalWants(desired);
  for (let i = 0; i < SERVICE_FIELD_NAMES.length; i++) {
    const name = SERVICE_FIELD_NAMES[i];
    const decl: ServiceFieldDecl = SERVICE_FIELDS[name];
    if (decl.comparedOnlyWhenSet && !desired.given.has(name)) continue;
    const observed = decl.observedOn === 'service' ? liveSource[name] : primarySource?.[name];
    const liveValue = observed ?? decl.absentMeans ?? decl.field.default;
    const b = wants[i];
    // The usual case, a scalar the live service reports as the spec wants it, needs no canonical form.
    if (liveValue === b && b !== undefined && (typeof b === 'string' ? b !== '' : typeof b === 'number' || typeof b === 'boolean') && canonicalIsItself(decl)) {
      continue;
    }
    // Neither side set (a list or object field nobody uses): canonicalOf of undefined is undefined.
    if (liveValue === undefined && b === undefined && decl.field.type.normalize === undefined) continue;
    const want = desired.fields[name];
    const a = canonicalOf(decl.field.type, liveValue, SERVICE_CONTEXT);
    if (deepEqual(a, b)) continue;
    (changes ??= []).push({ field: name, from: shownValue(a), to: shownValue(b) });
    input ??= {};
    (input as Record<string, unknown>)[name] = want === undefined ? clearValue(decl) : structuredClone(want);
  }

  return { changes: changes ?? NO_CHANGES, input: input ?? NO_INPUT, unsendable: unsendable ?? NO_UNSENDABLE };
}

/**
 * A desired load balancer with the live `advancedConfiguration` (native blue/green: alternate target
 * group, listener rules, role), which the spec does not manage, of the live entry for the same
 * container and port whose target group is this one or its alternate (ECS swaps the two between
 * deployments): resending loadBalancers must not strip it.
 */
function withLiveAdvancedConfiguration(
  want: DesiredServiceConfig['loadBalancers'][number],
  live: ObservedService['loadBalancers'],
): NonNullable<ServiceDiff['input']['loadBalancers']>[number] {
  const match = (live ?? []).find(
    (l) =>
      l.advancedConfiguration !== undefined &&
      l.containerName === want.containerName &&
      l.containerPort === want.containerPort &&
      (l.targetGroupArn === want.targetGroupArn || own(l.advancedConfiguration, 'alternateTargetGroupArn') === want.targetGroupArn),
  );
  if (want.advancedConfiguration || !match?.advancedConfiguration) return structuredClone(want);
  const advancedConfiguration = structuredClone(match.advancedConfiguration) as Record<string, unknown>;
  // After a swap the spec's target group is the live alternate: the live primary is the alternate now.
  if (match.targetGroupArn !== want.targetGroupArn && match.targetGroupArn !== undefined) advancedConfiguration.alternateTargetGroupArn = match.targetGroupArn;
  return { ...want, advancedConfiguration } as typeof want;
}

/** The shared results of a comparison that found nothing (frozen: a caller's push would throw, not leak). */
const NO_CHANGES = Object.freeze([]) as unknown as FieldChange[];
const NO_UNSENDABLE = Object.freeze([]) as unknown as UnsendableChange[];
const NO_INPUT: ServiceDiff['input'] = Object.freeze({});

/**
 * Whether the canonical form of a scalar of this field is the scalar itself (no normalisation):
 * then a live value identical to the wanted canonical value is equal without canonicalizing it.
 */
function canonicalIsItself(decl: ServiceFieldDecl): boolean {
  const t = decl.field.type;
  return t.normalize === undefined && (t.kind === 'string' || t.kind === 'enum' || t.kind === 'int' || t.kind === 'bool');
}

const SERVICE_CONTEXT = { networkMode: 'awsvpc' };

/** Canonical forms of a desired configuration's declared fields, in `SERVICE_FIELD_NAMES` order. */
function canonicalWants(desired: DesiredServiceConfig): readonly (CanonicalValue | undefined)[] {
  return SERVICE_FIELD_NAMES.map((name) => canonicalOf(SERVICE_FIELDS[name].field.type, desired.fields[name], SERVICE_CONTEXT));
}
const NO_ALARMS = { alarmNames: [], enable: false, rollback: false };

function alarmsText(a: { alarmNames?: string[]; enable?: boolean; rollback?: boolean } | undefined): string {
  if (!a || (!a.enable && !a.rollback && (a.alarmNames ?? []).length === 0)) return NONE;
  return `${setText(a.alarmNames)} enable=${!!a.enable},rollback=${!!a.rollback}`;
}

/** What UpdateService takes to remove a field the spec no longer sets (lists: [], Service Connect: off). */
function clearValue(decl: ServiceFieldDecl): unknown {
  if (decl.field.type.kind === 'list') return [];
  if (decl.field.type.kind === 'object') return { enabled: false };
  return undefined;
}

function shownValue(v: CanonicalValue | undefined): string {
  if (v === undefined) return NONE;
  const text = typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : JSON.stringify(v);
  return text.length <= 100 ? text : `${text.slice(0, 99)}…`;
}

/** One difference ECS does not let UpdateService correct, and why. */
export interface UnsendableChange extends FieldChange {
  readonly why: string;
}

/**
 * Removes from `diff` what ECS does not let UpdateService change for the live service's deployment
 * controller (Amazon ECS API reference, UpdateService: with CODE_DEPLOY, only desiredCount,
 * deploymentConfiguration, healthCheckGracePeriodSeconds, enableECSManagedTags and propagateTags;
 * with EXTERNAL the same without deploymentConfiguration). The task definition half counts as the
 * field `taskDefinition`. Returns the diff to send and what was held back.
 */
export function limitToDeploymentController(
  controller: string | undefined,
  changes: FieldChange[],
  input: ServiceDiff['input'],
): { changes: FieldChange[]; input: ServiceDiff['input']; held: UnsendableChange[] } {
  const type = (controller ?? 'ECS') as DeploymentControllerType;
  if (type === 'ECS') return { changes, input, held: [] };
  const allowed = (field: string): boolean => {
    const top = field.startsWith('containerDefinitions') || !/^[a-zA-Z]+/.test(field) ? 'taskDefinition' : field.split(/[.[]/)[0];
    const decl = own(SERVICE_FIELDS as Record<string, ServiceFieldDecl>, top);
    const controllers = decl?.controllers ?? own(CORE_SERVICE_FIELD_CONTROLLERS, top) ?? CORE_SERVICE_FIELD_CONTROLLERS.taskDefinition;
    return controllers.includes(type);
  };
  const why = `the service uses the ${type} deployment controller, and ECS lets UpdateService change only desiredCount, ` +
    `${type === 'CODE_DEPLOY' ? 'deploymentConfiguration, ' : ''}healthCheckGracePeriodSeconds, enableECSManagedTags and propagateTags ` +
    `for it (${type === 'CODE_DEPLOY' ? 'create a CodeDeploy deployment' : 'create a task set'} for the rest)`;
  const kept: FieldChange[] = [];
  const held: UnsendableChange[] = [];
  for (const c of changes) {
    if (allowed(c.field)) kept.push(c);
    else held.push({ ...c, why });
  }
  const out = Object.fromEntries(
    Object.entries(input).filter(([k]) => k !== 'forceNewDeployment' && allowed(k === 'taskDefinition' ? 'containerDefinitions' : k)),
  );
  return { changes: kept, input: out as ServiceDiff['input'], held };
}

/**
 * `ecsr import`: the spec that reproduces a live service and its task definition exactly, with
 * `adopt: true` and the live family, so that the pass after writing it makes one write (the owner
 * tag) and no RegisterTaskDefinition, no UpdateService, no task restarted.
 *
 * Built from the vocabulary's declarations (`./vocab/`): the task definition half is the
 * {@link importOf} walk of {@link TASK_DEFINITION} (ECS's shape kept, defaults and empties left
 * out, every undeclared or Fargate-refused field collected by path), then mapped onto the spec's
 * attributes by one table ({@link TASK_DEFINITION_ATTRIBUTES}); the service half walks the
 * declared service fields ({@link SERVICE_FIELDS}) and the attributes the planner compares by hand.
 *
 * Never a spec that silently differs: a field the spec cannot express stops the import of that
 * service with a problem naming the field, and the result is checked by the planner's own
 * comparison (render, canonical task definition diff, service diff): any difference left is a
 * problem too. Pure: no I/O, no SDK.
 */
import { dict, own, putOwn } from './dict';
import type { ReconcilerDefaults } from './options';
import { desiredServiceConfig, diffService } from './plan-service';
import { OWNER_TAG_KEY } from './ports';
import { formatSpecError, parseSpecItem, specToItem } from './spec';
import { diffTaskDefinitions, renderTaskDefinition, SERVER_ONLY_TASK_DEFINITION_FIELDS } from './taskdef';
import type { ObservedService, ServiceKey, ServiceSpec, TaskDefinition } from './types';
import { type Node, type Unexpressible, canonicalOf, deepEqual, importOf, isRecord, list, prune } from './vocab/decl';
import { CAPACITY_PROVIDER_STRATEGY_ITEM, DEPLOYMENT_CONFIGURATION_NEVER_SET, LOAD_BALANCER, SERVICE_FIELDS, SERVICE_FIELD_NAMES, type ServiceFieldDecl } from './vocab/service';
import { FARGATE_OPERATING_SYSTEM_FAMILIES, TASK_DEFINITION } from './vocab/task';

/** One reason a service cannot be imported: the live field and what is wrong. */
export interface ImportProblem {
  /** `taskDefinition.containerDefinitions[0].links`, `service.placementStrategy`. */
  readonly path: string;
  readonly message: string;
}

export type ImportResult =
  | {
      readonly ok: true;
      readonly key: ServiceKey;
      readonly spec: ServiceSpec;
      readonly item: Record<string, unknown>;
      /**
       * Live fields the spec does not manage and that hold a value (`vpcLatticeConfigurations`):
       * left alone, which ECS keeps as they are, since no request of the reconciler names them.
       */
      readonly unmanaged: readonly string[];
    }
  | {
      readonly ok: false;
      readonly key: ServiceKey;
      readonly problems: readonly ImportProblem[];
      /** The owner tag's value when another reconciler owns the service (then nothing else is checked). */
      readonly ownedBy?: string;
    };

export interface ImportInput {
  readonly key: ServiceKey;
  /** The Service as DescribeServices answers it (with `include: ["TAGS"]`), as plain JSON. */
  readonly service: Record<string, unknown>;
  /** The same service as the observer maps it (what the planner compares). */
  readonly observed: ObservedService;
  /** The service's task definition as DescribeTaskDefinition answers it (`taskDefinition`). */
  readonly taskDefinition: Record<string, unknown>;
  /** The reconciler's defaults (what the spec gets when it leaves a field out). */
  readonly defaults: ReconcilerDefaults;
  /** The owner tag's value of this reconciler (only to render; tags are not compared). */
  readonly ownerId: string;
}

/**
 * Where each declared task definition field goes in the spec: `copy` (same name, the imported
 * value), `number` (task `cpu` / `memory`: the spec holds numbers), `checked` (the spec renders it
 * as one fixed value, which the live one must equal), or `refused` (the spec has no attribute for
 * it: a value stops the import).
 */
export const TASK_DEFINITION_ATTRIBUTES: Readonly<Record<keyof typeof TASK_DEFINITION.fields, { readonly to: 'copy' | 'number' | 'checked' | 'refused'; readonly attr?: string; readonly why?: string }>> = {
  family: { to: 'copy', attr: 'family' },
  networkMode: { to: 'checked', why: 'the reconciler runs tasks on Fargate, in the awsvpc network mode' },
  requiresCompatibilities: { to: 'checked', why: 'the reconciler registers task definitions for FARGATE only' },
  cpu: { to: 'number', attr: 'cpu' },
  memory: { to: 'number', attr: 'memory' },
  runtimePlatform: { to: 'checked', why: 'the spec sets cpuArchitecture and operatingSystemFamily, on the families Fargate runs' },
  taskRoleArn: { to: 'copy', attr: 'taskRoleArn' },
  executionRoleArn: { to: 'copy', attr: 'executionRoleArn' },
  containerDefinitions: { to: 'copy', attr: 'containers' },
  volumes: { to: 'copy', attr: 'volumes' },
  ephemeralStorage: { to: 'copy', attr: 'ephemeralStorage' },
  pidMode: { to: 'copy', attr: 'pidMode' },
  proxyConfiguration: { to: 'copy', attr: 'proxyConfiguration' },
  enableFaultInjection: { to: 'copy', attr: 'enableFaultInjection' },
  placementConstraints: { to: 'refused', why: 'the spec has no task placement constraints (Fargate ignores them)' },
  ipcMode: { to: 'refused', why: 'Fargate does not support ipcMode' },
  inferenceAccelerators: { to: 'refused', why: 'Fargate does not support inference accelerators' },
};

/**
 * Service fields DescribeServices reports that are state, not configuration (or that the spec
 * expresses through other attributes read below): never a reason to stop.
 */
const SERVICE_STATE_FIELDS: ReadonlySet<string> = new Set([
  'serviceArn', 'serviceName', 'clusterArn', 'status', 'desiredCount', 'runningCount', 'pendingCount', 'taskDefinition',
  'deployments', 'events', 'createdAt', 'createdBy', 'platformFamily', 'tags', 'launchType', 'capacityProviderStrategy',
  'networkConfiguration', 'deploymentConfiguration', 'loadBalancers', 'deploymentController', 'schedulingStrategy',
  'roleArn', 'placementConstraints', 'placementStrategy', 'taskSets', 'version', 'currentServiceDeployment',
  'currentServiceRevisions', 'resourceManagementType', ...SERVICE_FIELD_NAMES,
]);

/**
 * Service fields the spec does not manage, where DescribeServices reports them: import names those
 * that hold a value as left unmanaged. The reconciler never sends them (UpdateService keeps what it
 * does not name), so they stay as they are.
 */
export const UNMANAGED_SERVICE_FIELDS: Readonly<Record<string, 'service' | 'primaryDeployment'>> = dict();

/** The live fields of {@link UNMANAGED_SERVICE_FIELDS} that hold a value, by name. */
function unmanagedFields(raw: Record<string, unknown>): string[] {
  const deployments = Array.isArray(raw.deployments) ? raw.deployments : [];
  const primary = deployments.find((d): d is Record<string, unknown> => isRecord(d) && d.status === 'PRIMARY');
  return Object.entries(UNMANAGED_SERVICE_FIELDS)
    .filter(([field, where]) => nonEmpty(own(where === 'service' ? raw : (primary ?? {}), field)) || nonEmpty(own(raw, field)))
    .map(([field]) => field);
}

/** The service-linked role ECS uses for awsvpc services (DescribeServices `roleArn`). */
const SERVICE_LINKED_ROLE_RE = /^arn:aws(?:-[a-z]+)*:iam::\d{12}:role\/aws-service-role\/ecs\.amazonaws\.com\/AWSServiceRoleForECS$/;

const CTX = { networkMode: 'awsvpc' };
const nonEmpty = (v: unknown): boolean => prune(v) !== undefined;

/**
 * The spec item that reproduces the live service and task definition (see the module doc), or
 * every problem that keeps it from doing so. A service whose owner tag names another reconciler
 * is refused first (`ownedBy`): the pass never lets `adopt: true` take it (`OwnedByAnother`).
 * Never throws.
 */
export function importService(input: ImportInput): ImportResult {
  const { key } = input;
  const owner = own(input.observed.tags, OWNER_TAG_KEY);
  if (owner !== undefined && owner !== input.ownerId) {
    return {
      ok: false,
      key,
      ownedBy: owner,
      problems: [
        {
          path: `service.tags.${OWNER_TAG_KEY}`,
          message:
            `is ${owner}: the service is owned by another reconciler (this one is ${input.ownerId}), and adoption never takes a ` +
            `service from another owner; import it with that reconciler (its OWNER_ID), or change the tag by hand if that reconciler is gone`,
        },
      ],
    };
  }
  const problems: ImportProblem[] = [];
  const problem = (path: string, message: string) => problems.push({ path, message });
  const item: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  item.cluster = key.cluster;
  item.service = key.service;
  item.adopt = true;

  importTaskDefinition(input.taskDefinition, item, problem);
  importServiceFields(input.service, input.observed, item, problem);
  if (problems.length > 0) return { ok: false, key, problems };

  const parsed = parseSpecItem({ ...item });
  if (!parsed.ok) {
    return { ok: false, key, problems: parsed.errors.map((e) => ({ path: `spec.${e.path}`, message: `${formatSpecError(e)} (value ${e.value})` })) };
  }
  // The planner's own comparison, as the next pass will run it.
  const rendered = renderTaskDefinition(parsed.spec, { defaults: input.defaults, ownerId: input.ownerId });
  for (const c of diffTaskDefinitions(rendered, input.taskDefinition as TaskDefinition)) {
    problem(`taskDefinition.${c.field}`, `the spec would render ${c.to} where the live task definition has ${c.from}`);
  }
  for (const c of diffService(desiredServiceConfig(parsed.spec, input.defaults), input.observed).changes) {
    problem(`service.${c.field}`, `the spec would set ${c.to} where the live service has ${c.from}`);
  }
  if (problems.length > 0) return { ok: false, key, problems };
  const out = specToItem(parsed.spec);
  const again = parseSpecItem(out);
  if (!again.ok) return { ok: false, key, problems: again.errors.map((e) => ({ path: `spec.${e.path}`, message: formatSpecError(e) })) };
  return { ok: true, key, spec: parsed.spec, item: out, unmanaged: unmanagedFields(input.service) };
}

type Problem = (path: string, message: string) => void;

function importTaskDefinition(raw: Record<string, unknown>, item: Record<string, unknown>, problem: Problem): void {
  const td: Record<string, unknown> = { ...raw };
  for (const f of SERVER_ONLY_TASK_DEFINITION_FIELDS) delete td[f];
  const unexpressible: Unexpressible[] = [];
  const imported = importOf(TASK_DEFINITION, td, '', unexpressible, CTX);
  for (const u of unexpressible) problem(`taskDefinition.${u.path}`, 'is not part of the spec (ECS field the reconciler cannot set)');
  const out = isRecord(imported) ? imported : {};

  const networkMode = td.networkMode;
  if (networkMode !== 'awsvpc') problem('taskDefinition.networkMode', `must be awsvpc for the spec to reproduce it, got ${JSON.stringify(networkMode ?? null)} (${TASK_DEFINITION_ATTRIBUTES.networkMode.why})`);
  const compat = canonicalOf(TASK_DEFINITION.fields.requiresCompatibilities.type, td.requiresCompatibilities, CTX);
  if (!deepEqual(compat, ['FARGATE'])) {
    problem('taskDefinition.requiresCompatibilities', `must be ["FARGATE"] for the spec to reproduce it, got ${JSON.stringify(td.requiresCompatibilities ?? null)} (${TASK_DEFINITION_ATTRIBUTES.requiresCompatibilities.why})`);
  }
  const platform = isRecord(td.runtimePlatform) ? td.runtimePlatform : {};
  const os = platform.operatingSystemFamily;
  if (os !== undefined && os !== null && os !== 'LINUX') {
    if ((FARGATE_OPERATING_SYSTEM_FAMILIES as readonly unknown[]).includes(os)) item.operatingSystemFamily = os;
    else problem('taskDefinition.runtimePlatform.operatingSystemFamily', `must be one Fargate runs (${FARGATE_OPERATING_SYSTEM_FAMILIES.join(', ')}), got ${JSON.stringify(os)} (${TASK_DEFINITION_ATTRIBUTES.runtimePlatform.why})`);
  }
  const arch = platform.cpuArchitecture;
  if (typeof arch === 'string') item.cpuArchitecture = arch;

  for (const [field, where] of Object.entries(TASK_DEFINITION_ATTRIBUTES)) {
    const value = own(out, field);
    if (value === undefined) continue;
    if (where.to === 'copy' && where.attr) putOwn(item, where.attr, value);
    else if (where.to === 'number' && where.attr) {
      const c = canonicalOf((own(TASK_DEFINITION.fields, field) as { type: Node }).type, value, CTX);
      const n = typeof c === 'string' && /^\d+$/.test(c) ? Number(c) : Number.NaN;
      if (Number.isInteger(n)) putOwn(item, where.attr, n);
      else problem(`taskDefinition.${field}`, `must be a number of ${field === 'cpu' ? 'CPU units' : 'MiB'}, got ${JSON.stringify(value)}`);
    } else if (where.to === 'refused') problem(`taskDefinition.${field}`, `is not part of the spec: ${where.why}`);
  }
  for (const field of ['cpu', 'memory']) {
    if (!nonEmpty(own(td, field))) problem(`taskDefinition.${field}`, 'is required: a Fargate task definition has a task-level size, and the spec renders one');
  }
}

function importServiceFields(raw: Record<string, unknown>, observed: ObservedService, item: Record<string, unknown>, problem: Problem): void {
  for (const [field, value] of Object.entries(raw)) {
    if (!SERVICE_STATE_FIELDS.has(field) && nonEmpty(value)) problem(`service.${field}`, 'is not part of the spec (ECS field the reconciler cannot set)');
  }
  const scheduling = raw.schedulingStrategy;
  if (scheduling !== undefined && scheduling !== 'REPLICA') problem('service.schedulingStrategy', `must be REPLICA, got ${JSON.stringify(scheduling)} (Fargate runs REPLICA services only)`);
  for (const field of ['placementConstraints', 'placementStrategy']) {
    if (nonEmpty(own(raw, field))) problem(`service.${field}`, 'is not part of the spec (Fargate places tasks itself)');
  }
  const role = raw.roleArn;
  if (typeof role === 'string' && !SERVICE_LINKED_ROLE_RE.test(role)) {
    problem('service.roleArn', `is not part of the spec: the reconciler's services use ECS's service-linked role, got ${role}`);
  }
  const controller = observed.deploymentController?.type ?? 'ECS';
  if (observed.taskDefinition === '') {
    problem('service.taskDefinition', `is missing: under the ${controller} deployment controller the tasks come from task sets, which the spec cannot describe`);
  }

  item.desiredCount = observed.desiredCount;

  // Launch type or capacity provider strategy.
  if (observed.launchType !== undefined) {
    if (observed.launchType === 'FARGATE') item.launchType = 'FARGATE';
    else problem('service.launchType', `must be FARGATE, got ${observed.launchType}`);
  } else {
    const strategy = importOf(list(CAPACITY_PROVIDER_STRATEGY_ITEM, { order: 'set' }), raw.capacityProviderStrategy, 'service.capacityProviderStrategy', [], CTX);
    if (Array.isArray(strategy)) item.capacityProviderStrategy = strategy;
    else problem('service.capacityProviderStrategy', 'is missing: the service has neither a launch type nor a capacity provider strategy');
  }

  // awsvpc network, written out so that the reconciler's defaults never apply.
  const vpc = observed.networkConfiguration?.awsvpcConfiguration;
  if (!vpc) problem('service.networkConfiguration', 'is missing: a Fargate service has an awsvpcConfiguration');
  else {
    if (vpc.subnets && vpc.subnets.length > 0) item.subnets = [...vpc.subnets].sort();
    if (vpc.securityGroups && vpc.securityGroups.length > 0) item.securityGroups = [...vpc.securityGroups].sort();
    item.assignPublicIp = vpc.assignPublicIp === 'ENABLED';
  }

  // deploymentConfiguration: the spec's defaults are ECS's 100/200 and the reconciler's circuit
  // breaker (enabled, with rollback), so a live service without one says so explicitly.
  const dcRaw = isRecord(raw.deploymentConfiguration) ? raw.deploymentConfiguration : {};
  for (const [field, value] of Object.entries(dcRaw)) {
    if (['minimumHealthyPercent', 'maximumPercent', 'deploymentCircuitBreaker', 'alarms'].includes(field)) continue;
    if (Object.hasOwn(DEPLOYMENT_CONFIGURATION_NEVER_SET, field) && (value === undefined || value === own(DEPLOYMENT_CONFIGURATION_NEVER_SET, field))) continue;
    if (nonEmpty(value)) problem(`service.deploymentConfiguration.${field}`, 'is not part of the spec (the reconciler runs rolling deployments)');
  }
  const dc = observed.deploymentConfiguration ?? {};
  const deployment = dict<unknown>();
  if (dc.minimumHealthyPercent !== undefined && dc.minimumHealthyPercent !== 100) deployment.minimumHealthyPercent = dc.minimumHealthyPercent;
  if (dc.maximumPercent !== undefined && dc.maximumPercent !== 200) deployment.maximumPercent = dc.maximumPercent;
  const breaker = dc.deploymentCircuitBreaker ?? { enable: false, rollback: false };
  if (!(breaker.enable && breaker.rollback)) deployment.circuitBreaker = { enable: breaker.enable, rollback: breaker.rollback };
  const alarms = dc.alarms;
  if (alarms && (alarms.enable || alarms.rollback || (alarms.alarmNames ?? []).length > 0)) {
    // ECS's DeploymentAlarms shape (DEPLOYMENT_ALARMS): all three fields are required there.
    deployment.alarms = { alarmNames: [...(alarms.alarmNames ?? [])], enable: !!alarms.enable, rollback: !!alarms.rollback };
  }
  if (Object.keys(deployment).length > 0) item.deployment = deployment;

  // Load balancers: target groups only (a classic load balancer has no spec attribute).
  const lbs = Array.isArray(raw.loadBalancers) ? raw.loadBalancers : [];
  lbs.forEach((lb, i) => {
    if (isRecord(lb) && typeof lb.loadBalancerName === 'string') {
      problem(`service.loadBalancers[${i}].loadBalancerName`, 'is a Classic Load Balancer, which the spec cannot name (use a target group)');
    }
  });
  if (lbs.length > 0) {
    const unexpressible: Unexpressible[] = [];
    const imported = importOf(list(LOAD_BALANCER, { order: 'set' }), lbs, 'service.loadBalancers', unexpressible, CTX);
    for (const u of unexpressible) if (!u.path.endsWith('.loadBalancerName')) problem(u.path, 'is not part of the spec');
    if (Array.isArray(imported)) item.loadBalancers = imported;
  }

  // The declared service fields: the live value (or what ECS's absence means) when it is not the
  // spec's default.
  const primary = observed.deployments.find((d) => d.status === 'PRIMARY');
  for (const name of SERVICE_FIELD_NAMES) {
    const decl: ServiceFieldDecl = SERVICE_FIELDS[name];
    const source = decl.observedOn === 'service' ? raw : ((primary ?? {}) as unknown as Record<string, unknown>);
    const liveValue = own(source, name) ?? decl.absentMeans ?? decl.field.default;
    const live = canonicalOf(decl.field.type, liveValue, CTX);
    const fallback = canonicalOf(decl.field.type, decl.field.default, CTX);
    if (deepEqual(live, fallback)) continue;
    if (live === undefined) {
      // The spec's default is not ECS's absence and the spec cannot say "none" (no such field today).
      problem(`service.${name}`, `is not set, and the spec cannot leave it unset (its default is ${JSON.stringify(decl.field.default)})`);
      continue;
    }
    const unexpressible: Unexpressible[] = [];
    const value = importOf(decl.field.type, liveValue, `service.${name}`, unexpressible, CTX);
    for (const u of unexpressible) problem(u.path, 'is not part of the spec');
    if (value !== undefined) item[name] = value;
    else if (decl.field.type.kind === 'bool') item[name] = liveValue;
  }

  // Tags: the owner tag is the adoption's to write; `aws:` tags belong to AWS.
  const tags = dict<string>();
  for (const [k, v] of Object.entries(observed.tags)) {
    if (k === OWNER_TAG_KEY || k.toLowerCase().startsWith('aws:')) continue;
    putOwn(tags, k, v);
  }
  if (Object.keys(tags).length > 0) item.tags = tags;
}

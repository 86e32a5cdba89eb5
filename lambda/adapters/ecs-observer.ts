/**
 * The ECS observer: what ECS says about the managed clusters, their services, the task definitions
 * those services run and, for services that lag, why their tasks stopped.
 *
 * Calls per cluster (Amazon ECS API reference; docs/ecs-facts.md §1, §5):
 * - ListServices, `maxResults` 100, SDK paginator: `ceil(n / 100)` calls;
 * - DescribeServices with `include: ['TAGS']`, 10 names per call, at most `concurrency` in flight:
 *   `ceil(n / 10)` calls, listed names plus names from specs (DRAINING services are not listed);
 * - only for services with `runningCount < desiredCount`, and those the caller names
 *   (`readStoppedTasks`: a crash loop between two glimpses of a task RUNNING): ListTasks (`desiredStatus: STOPPED`,
 *   `serviceName`) and DescribeTasks (100 per call). These reasons are best effort: a failure
 *   leaves that service's `stoppedTasks` undefined and is reported in `warnings`, never as a
 *   partial observation (which would block creates and prunes in the whole cluster).
 * DescribeTaskDefinition runs once per task definition ARN while the description is in use:
 * revisions are immutable, so each description is kept in a module-level cache as soon as it
 * arrives (a pass cut short by its deadline, or an invocation that times out, keeps what it
 * described). The cache is bounded: a description no pass asked for in
 * {@link TASK_DEFINITION_CACHE_IDLE_SECONDS} (an old revision after a rollout) is dropped, and at
 * most {@link MAX_CACHED_TASK_DEFINITIONS} are kept, the least recently used dropped first; the
 * service revision cache likewise. A dropped description that is wanted again is described again
 * (or read from the durable cache by a new container).
 */
import {
  DescribeServiceDeploymentsCommand,
  DescribeServiceRevisionsCommand,
  DescribeServicesCommand,
  DescribeTaskDefinitionCommand,
  DescribeTasksCommand,
  ListServiceDeploymentsCommand,
  ListTasksCommand,
  paginateListServices,
  type ECSClient,
  type Service,
  type ServiceDeployment,
  type ServiceRevision,
  type Task,
} from '@aws-sdk/client-ecs';
import { ECS_LIMITS } from '../core/ecs-limits';
import type {
  Clock,
  DescribeTaskDefinitionsOptions,
  EcsReader,
  ObserveClusterOptions,
  ServiceDescriptions,
  ServiceListing,
  ServiceReadOptions,
  TaskDefinitionConfirmation,
} from '../core/ports';
import type {
  DescribedServiceFields,
  ObservedCluster,
  ObservedDeployment,
  ObservedService,
  ObservedServiceDeployment,
  ObservedServiceDeploymentDetail,
  ObservedServiceRevision,
  StoppedTask,
  TaskDefinition,
} from '../core/types';
import { chunk, mapSettledLimit } from './concurrency';
import { AwsCallError, isAccessDenied, isClusterNotFound, isProgrammingError } from './errors';
import { Reason } from '../core/status';
import { dict } from '../core/dict';
import { SERVICE_FIELDS_ON_DEPLOYMENT, SERVICE_FIELDS_ON_SERVICE } from '../core/vocab/service';
import type { CompareCache } from '../core/compare-cache';
import { EcsClockRecorder } from './ecs-clock';
import type { CacheLoad, DynamoTaskDefinitionCache } from './dynamo-task-definition-cache';

/**
 * Seconds a cached description (task definition or service revision) is kept without being asked
 * for. Every scheduled pass asks for the revision of each service it reads and of each service at
 * rest it remembers, so a description in use is asked for every minute; one idle this long belongs
 * to a revision no service runs any more (a rollout replaced it).
 */
export const TASK_DEFINITION_CACHE_IDLE_SECONDS = 3600;

/**
 * Descriptions kept at most per cache, whatever their use: 20,000 services over a rollout (each with
 * its revision and the one it replaces) and some room. About 2.5 KiB of heap each: at most ~90 MiB.
 */
export const MAX_CACHED_TASK_DEFINITIONS = 36_000;

/** Seconds between two sweeps of the idle descriptions. */
const SWEEP_EVERY_SECONDS = 60;

/**
 * A bounded map of immutable descriptions by ARN: least recently used first (a `get` moves the entry
 * to the end), each with the time it was last asked for.
 */
class DescriptionCache<T> {
  private readonly entries = new Map<string, { value: T; usedAtMs: number }>();
  private lastSweepMs = Number.NEGATIVE_INFINITY;

  get size(): number {
    return this.entries.size;
  }

  has(arn: string): boolean {
    return this.entries.has(arn);
  }

  /** The description, marked used at `nowMs`. */
  get(arn: string, nowMs: number): T | undefined {
    const e = this.entries.get(arn);
    if (!e) return undefined;
    this.entries.delete(arn);
    e.usedAtMs = nowMs;
    this.entries.set(arn, e);
    return e.value;
  }

  set(arn: string, value: T, nowMs: number): void {
    this.entries.delete(arn);
    this.entries.set(arn, { value, usedAtMs: nowMs });
    while (this.entries.size > MAX_CACHED_TASK_DEFINITIONS) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  /** Drops the descriptions idle for {@link TASK_DEFINITION_CACHE_IDLE_SECONDS} (at most once a minute of `nowMs`). */
  sweep(nowMs: number): void {
    if (nowMs - this.lastSweepMs < SWEEP_EVERY_SECONDS * 1000 && nowMs >= this.lastSweepMs) return;
    this.lastSweepMs = nowMs;
    const before = nowMs - TASK_DEFINITION_CACHE_IDLE_SECONDS * 1000;
    // Least recently used first: stop at the first one used since.
    for (const [arn, e] of this.entries) {
      if (e.usedAtMs >= before) break;
      this.entries.delete(arn);
    }
  }

  clear(): void {
    this.entries.clear();
    this.lastSweepMs = Number.NEGATIVE_INFINITY;
  }
}

/**
 * Task definitions described so far, by ARN, for the life of the Lambda container while in use
 * (a revision never changes once registered: Amazon ECS Developer Guide, "Task definition states").
 */
const taskDefinitionCache = new DescriptionCache<TaskDefinition>();

/**
 * ARNs whose description in {@link taskDefinitionCache} came from the durable cache and for which
 * ECS has not answered in this process. Such a description decides nothing alone: whoever can write
 * the cache table can write any well-formed entry, so the pass has ECS confirm it
 * (`confirmTaskDefinitions`) before it acts on it or judges a rollout by it, and confirms the
 * others a few a pass (`../core/pass.ts`).
 */
const unconfirmed = new Set<string>();

/**
 * Each service revision described so far, while in use (a service revision is immutable: Amazon ECS
 * Developer Guide, "Amazon ECS service revisions").
 */
const serviceRevisionCache = new DescriptionCache<ObservedServiceRevision>();

/** The reconciler's time as the last observer call saw it (epoch ms): the caches' clock. */
let cacheNowMs = Date.now();

/** Service deployments read per service and pass: ListServiceDeployments' default page. */
export const SERVICE_DEPLOYMENTS_READ = 20;
/** DescribeServiceDeployments takes at most 20 ARNs (Amazon ECS API reference). */
const DESCRIBE_SERVICE_DEPLOYMENTS_BATCH = 20;
/** ServiceDeploymentStatus values of a deployment ECS is still running (Amazon ECS Developer Guide, "View service history using Amazon ECS service deployments"). */
const ONGOING_SERVICE_DEPLOYMENT: ReadonlySet<string> = new Set(['PENDING', 'IN_PROGRESS', 'STOP_REQUESTED', 'ROLLBACK_REQUESTED', 'ROLLBACK_IN_PROGRESS']);

/**
 * What the planner reads of a DescribeServiceDeployments `ServiceDeployment`: strategy, stage,
 * traffic of the target revision, bake times, the current stage's hooks, and why it was rolled
 * back (Amazon ECS API reference, "ServiceDeployment").
 */
export function serviceDeploymentDetail(sd: ServiceDeployment): ObservedServiceDeploymentDetail {
  const dc = sd.deploymentConfiguration;
  const target = sd.targetServiceRevision;
  const step = dc?.strategy === 'CANARY' ? dc.canaryConfiguration?.canaryBakeTimeInMinutes : dc?.strategy === 'LINEAR' ? dc.linearConfiguration?.stepBakeTimeInMinutes : undefined;
  const out: ObservedServiceDeploymentDetail = {
    ...(dc?.strategy ? { strategy: dc.strategy } : {}),
    ...(sd.lifecycleStage ? { lifecycleStage: sd.lifecycleStage } : {}),
    ...(sd.updatedAt ? { updatedAt: sd.updatedAt } : {}),
    ...(target?.requestedProductionTrafficWeight !== undefined ? { productionTrafficPercent: target.requestedProductionTrafficWeight } : {}),
    ...(target?.requestedTestTrafficWeight !== undefined ? { testTrafficPercent: target.requestedTestTrafficWeight } : {}),
    ...(dc?.bakeTimeInMinutes !== undefined ? { bakeTimeInMinutes: dc.bakeTimeInMinutes } : {}),
    ...(step !== undefined ? { stepBakeTimeInMinutes: step } : {}),
    ...(sd.lifecycleHookDetails && sd.lifecycleHookDetails.length > 0
      ? {
          hooks: sd.lifecycleHookDetails.map((h) => ({
            ...(h.hookId ? { hookId: h.hookId } : {}),
            ...(h.targetType ? { targetType: h.targetType } : {}),
            ...(h.targetArn ? { targetArn: h.targetArn } : {}),
            ...(h.status ? { status: h.status } : {}),
            ...(h.expiresAt ? { expiresAt: h.expiresAt } : {}),
          })),
        }
      : {}),
    ...(sd.rollback?.reason ? { rollbackReason: sd.rollback.reason } : {}),
    ...(sd.alarms?.triggeredAlarmNames && sd.alarms.triggeredAlarmNames.length > 0 ? { triggeredAlarms: [...sd.alarms.triggeredAlarmNames] } : {}),
    ...(sd.deploymentCircuitBreaker?.status === 'TRIGGERED'
      ? { circuitBreaker: { status: 'TRIGGERED', failureCount: sd.deploymentCircuitBreaker.failureCount, threshold: sd.deploymentCircuitBreaker.threshold } }
      : {}),
  };
  return out;
}

/** DescribeServiceRevisions takes at most 20 ARNs (Amazon ECS API reference). */
const DESCRIBE_SERVICE_REVISIONS_BATCH = 20;

/** Empties the process-wide caches (tests and the local run's "cold start"). */
export function clearTaskDefinitionCache(): void {
  taskDefinitionCache.clear();
  unconfirmed.clear();
  serviceRevisionCache.clear();
}

/**
 * Puts a description in the process-wide cache by its `taskDefinitionArn` (e.g. what
 * RegisterTaskDefinition answered: the same shape as DescribeTaskDefinition's), so that a
 * container that registered a revision never describes it. Ignored without an ARN.
 */
export function rememberTaskDefinition(td: TaskDefinition): void {
  if (!td.taskDefinitionArn) return;
  taskDefinitionCache.set(td.taskDefinitionArn, td, cacheNowMs);
  unconfirmed.delete(td.taskDefinitionArn);
}

/**
 * The task definition of a DescribeTaskDefinition or RegisterTaskDefinition answer (both carry
 * `taskDefinition` and `tags`), with its tags when it has any; undefined without one.
 */
export function taskDefinitionOf(out: { taskDefinition?: unknown; tags?: { key?: string; value?: string }[] }): TaskDefinition | undefined {
  if (!out.taskDefinition) return undefined;
  return { ...(out.taskDefinition as TaskDefinition), ...(out.tags && out.tags.length > 0 ? { tags: out.tags } : {}) };
}

/** Number of task definitions in the process-wide cache. */
export function taskDefinitionCacheSize(): number {
  return taskDefinitionCache.size;
}

/** Number of service revisions in the process-wide cache. */
export function serviceRevisionCacheSize(): number {
  return serviceRevisionCache.size;
}

export interface EcsObserverOptions {
  /** DescribeServices / DescribeTaskDefinition calls in flight at once (default 4). */
  readonly concurrency?: number;
  /** Stopped tasks kept per lagging service, newest first (default 10). */
  readonly maxStoppedTasks?: number;
  /**
   * The durable description cache: read in bulk before the first description
   * this observer serves, written by {@link EcsObserver.keepDescriptions}. None: descriptions are
   * cached in memory only.
   */
  readonly durable?: DynamoTaskDefinitionCache;
  /**
   * The reconciler's clock: when given, ECS's clock is read from the `Date` header of every ECS
   * response on this client (`./ecs-clock`) and {@link EcsObserver.ecsClockOffsetMs} reports the
   * offset. None: ECS's timestamps are taken as the reconciler's time.
   */
  readonly clock?: Clock;
  /**
   * The runtime's comparison cache: each service read is stamped in it with its digest
   * ({@link observedAndStamped}), for the planner that is handed the same cache. None: no stamp.
   */
  readonly compareCache?: CompareCache;
}

/** The resource name at the end of an ECS ARN: `arn:...:service/cluster/web` -> `web`. */
export function nameFromArn(arn: string): string {
  const slash = arn.lastIndexOf('/');
  return slash >= 0 ? arn.slice(slash + 1) : arn;
}

function tagMap(tags: { key?: string; value?: string }[] | undefined): Record<string, string> {
  const out: Record<string, string> = dict();
  for (const t of tags ?? []) if (t.key !== undefined) out[t.key] = t.value ?? '';
  return out;
}

const EPOCH = new Date(0);

/**
 * Maps one DescribeServiceRevisions `serviceRevisions[]` entry to the core's
 * {@link ObservedServiceRevision}: the same fields as a service's, mapped the same way (ECS
 * answers Service Connect and EBS volumes per deployment, so they are read as a PRIMARY's).
 */
export function toObservedServiceRevision(r: ServiceRevision): ObservedServiceRevision {
  const view = toObservedService({
    ...r,
    deployments: [{ status: 'PRIMARY', taskDefinition: r.taskDefinition, ...declaredFieldsOf(r, SERVICE_FIELDS_ON_DEPLOYMENT) }],
  } as Service);
  const primary = view.deployments[0];
  return {
    taskDefinition: r.taskDefinition ?? '',
    ...(view.launchType ? { launchType: view.launchType } : {}),
    ...(view.capacityProviderStrategy ? { capacityProviderStrategy: view.capacityProviderStrategy } : {}),
    ...(view.platformVersion ? { platformVersion: view.platformVersion } : {}),
    ...(view.networkConfiguration ? { networkConfiguration: view.networkConfiguration } : {}),
    ...(view.loadBalancers ? { loadBalancers: view.loadBalancers } : {}),
    ...(view.serviceRegistries ? { serviceRegistries: view.serviceRegistries } : {}),
    ...(primary ? declaredFieldsOf(primary, SERVICE_FIELDS_ON_DEPLOYMENT) : {}),
  };
}

/**
 * {@link toObservedService}, stamped in `cache` with its digest while its values are at hand
 * (`CompareCache.stamp`, lambda/core/compare-cache.ts): the planner then tells a steady service by
 * one string instead of walking its objects. What the observer reads is never changed in place
 * afterwards (only `stoppedTasks`, which the digest leaves to the status, is added).
 */
export function observedAndStamped(s: Service, cache: CompareCache): ObservedService {
  const out = toObservedService(s);
  cache.stamp(out);
  return out;
}

/**
 * A copy of what ECS answered for a declared field: `undefined` for an absence (`undefined`,
 * `null`, `""`, `[]`), else the value with its lists and plain objects copied (Dates kept).
 */
function copyAnswer(x: unknown): unknown {
  if (x === undefined || x === null || x === '') return undefined;
  if (Array.isArray(x)) return x.length === 0 ? undefined : x.map((v) => (typeof v === 'object' && v !== null ? copyAnswer(v) : v));
  if (typeof x !== 'object' || x instanceof Date) return x;
  const out: Record<string, unknown> = dict();
  for (const [k, v] of Object.entries(x)) out[k] = typeof v === 'object' && v !== null ? (copyAnswer(v) ?? v) : v;
  return out;
}

/**
 * The declared service fields `names` of an SDK answer (a `Service` or a `Deployment`), copied.
 * The parameter's type checks, field by field, that the SDK's type fits what the vocabulary
 * declares (`DescribedServiceFields`): a declared field whose SDK shape differs does not compile.
 */
function declaredFieldsOf<K extends keyof DescribedServiceFields>(
  from: { readonly [P in K]?: DescribedServiceFields[P] | undefined },
  names: readonly K[],
): Partial<Pick<DescribedServiceFields, K>> {
  const out: Partial<Pick<DescribedServiceFields, K>> = {};
  for (const name of names) {
    const value = copyAnswer(from[name]);
    if (value !== undefined) out[name] = value as DescribedServiceFields[K];
  }
  return out;
}

/** Maps one DescribeServices `services[]` entry to the core's {@link ObservedService}. */
export function toObservedService(s: Service): ObservedService {
  const deployments: ObservedDeployment[] = (s.deployments ?? []).map((d) => ({
    id: d.id ?? '',
    status: d.status ?? '',
    taskDefinition: d.taskDefinition ?? '',
    desiredCount: d.desiredCount ?? 0,
    runningCount: d.runningCount ?? 0,
    pendingCount: d.pendingCount ?? 0,
    failedTasks: d.failedTasks ?? 0,
    ...(d.rolloutState ? { rolloutState: d.rolloutState } : {}),
    ...(d.rolloutStateReason ? { rolloutStateReason: d.rolloutStateReason } : {}),
    createdAt: d.createdAt ?? EPOCH,
    updatedAt: d.updatedAt ?? d.createdAt ?? EPOCH,
    ...declaredFieldsOf(d, SERVICE_FIELDS_ON_DEPLOYMENT),
  }));
  const primary = deployments.find((d) => d.status === 'PRIMARY');
  const dc = s.deploymentConfiguration;
  const vpc = s.networkConfiguration?.awsvpcConfiguration;
  const out: ObservedService = {
    serviceArn: s.serviceArn ?? '',
    serviceName: s.serviceName ?? nameFromArn(s.serviceArn ?? ''),
    clusterArn: s.clusterArn ?? '',
    status: s.status ?? '',
    desiredCount: s.desiredCount ?? 0,
    runningCount: s.runningCount ?? 0,
    pendingCount: s.pendingCount ?? 0,
    taskDefinition: s.taskDefinition ?? primary?.taskDefinition ?? '',
    deployments,
    events: (s.events ?? []).map((e) => ({ id: e.id ?? '', createdAt: e.createdAt ?? EPOCH, message: e.message ?? '' })),
    tags: tagMap(s.tags),
    // Every declared service field (lambda/core/vocab/service.ts), as DescribeServices reports it:
    // a walk over the declarations, so that no declared field can be left uncopied (invisible drift).
    ...declaredFieldsOf(s, SERVICE_FIELDS_ON_SERVICE),
  };
  if (s.launchType) out.launchType = s.launchType;
  if (s.resourceManagementType) out.resourceManagementType = s.resourceManagementType;
  if (s.currentServiceDeployment) out.currentServiceDeployment = s.currentServiceDeployment;
  if (s.capacityProviderStrategy) {
    out.capacityProviderStrategy = s.capacityProviderStrategy.map((c) => ({
      capacityProvider: c.capacityProvider ?? '',
      ...(c.weight !== undefined ? { weight: c.weight } : {}),
      ...(c.base !== undefined ? { base: c.base } : {}),
    }));
  }
  if (s.deploymentController?.type) out.deploymentController = { type: s.deploymentController.type };
  if (dc) {
    out.deploymentConfiguration = {
      ...(dc.minimumHealthyPercent !== undefined ? { minimumHealthyPercent: dc.minimumHealthyPercent } : {}),
      ...(dc.maximumPercent !== undefined ? { maximumPercent: dc.maximumPercent } : {}),
      ...(dc.deploymentCircuitBreaker
        ? { deploymentCircuitBreaker: { enable: !!dc.deploymentCircuitBreaker.enable, rollback: !!dc.deploymentCircuitBreaker.rollback } }
        : {}),
      ...(dc.alarms ? { alarms: { alarmNames: [...(dc.alarms.alarmNames ?? [])], enable: !!dc.alarms.enable, rollback: !!dc.alarms.rollback } } : {}),
    };
    const { minimumHealthyPercent: _min, maximumPercent: _max, deploymentCircuitBreaker, alarms: _alarms, ...unmanaged } = dc as Record<string, unknown>;
    if (Object.keys(unmanaged).length > 0) out.deploymentConfiguration.unmanaged = structuredClone(unmanaged);
    if (deploymentCircuitBreaker && typeof deploymentCircuitBreaker === 'object') {
      const { enable: _e, rollback: _r, ...breakerRest } = deploymentCircuitBreaker as Record<string, unknown>;
      if (Object.keys(breakerRest).length > 0) out.deploymentConfiguration.unmanagedCircuitBreaker = structuredClone(breakerRest);
    }
  }
  if (vpc) {
    out.networkConfiguration = {
      awsvpcConfiguration: {
        ...(vpc.subnets ? { subnets: vpc.subnets } : {}),
        ...(vpc.securityGroups ? { securityGroups: vpc.securityGroups } : {}),
        ...(vpc.assignPublicIp ? { assignPublicIp: vpc.assignPublicIp } : {}),
      },
    };
  }
  if (s.loadBalancers && s.loadBalancers.length > 0) {
    out.loadBalancers = s.loadBalancers.map((lb) => ({
      ...(lb.targetGroupArn ? { targetGroupArn: lb.targetGroupArn } : {}),
      ...(lb.containerName ? { containerName: lb.containerName } : {}),
      ...(lb.containerPort !== undefined ? { containerPort: lb.containerPort } : {}),
      ...(lb.advancedConfiguration ? { advancedConfiguration: structuredClone(lb.advancedConfiguration) as Record<string, unknown> } : {}),
    }));
  }
  if (s.createdAt) out.createdAt = s.createdAt;
  return out;
}

/** Maps one DescribeTasks `tasks[]` entry (a STOPPED task) to {@link StoppedTask}. */
export function toStoppedTask(t: Task): StoppedTask {
  return {
    taskArn: t.taskArn ?? '',
    ...(t.taskDefinitionArn ? { taskDefinitionArn: t.taskDefinitionArn } : {}),
    ...(t.stopCode ? { stopCode: t.stopCode } : {}),
    ...(t.stoppedReason ? { stoppedReason: t.stoppedReason } : {}),
    ...(t.stoppedAt ? { stoppedAt: t.stoppedAt } : {}),
    containers: (t.containers ?? []).map((c) => ({
      name: c.name ?? '',
      ...(c.reason ? { reason: c.reason } : {}),
      ...(c.exitCode !== undefined && c.exitCode !== null ? { exitCode: c.exitCode } : {}),
      ...(c.lastStatus ? { lastStatus: c.lastStatus } : {}),
    })),
  };
}

/** Throws programming errors; returns anything else as an AWS failure message. */
function failureMessage(operation: string, err: unknown): string {
  if (isProgrammingError(err)) throw err;
  return new AwsCallError(operation, err).message;
}

/**
 * {@link EcsReader} on an ECSClient (which carries the rate limiter and standard retries).
 * No method throws for an AWS failure: a cluster read that failed is `complete: false` with the
 * error; a failed stopped-task read is a warning; task definitions that could not be described
 * are left out of the result.
 */
export class EcsObserver implements EcsReader {
  private readonly concurrency: number;
  private readonly maxStoppedTasks: number;

  private readonly durable: DynamoTaskDefinitionCache | undefined;
  private warm: Promise<CacheLoad> | undefined;
  private loadWarning: string | undefined;

  private readonly serverClock: EcsClockRecorder | undefined;
  private readonly clock: Clock | undefined;
  private readonly compareCache: CompareCache | undefined;

  constructor(
    private readonly ecs: ECSClient,
    options: EcsObserverOptions = {},
  ) {
    this.serverClock = options.clock ? new EcsClockRecorder(ecs, options.clock) : undefined;
    this.clock = options.clock;
    this.concurrency = Math.max(1, options.concurrency ?? 4);
    this.maxStoppedTasks = Math.max(1, options.maxStoppedTasks ?? 10);
    this.durable = options.durable;
    this.compareCache = options.compareCache;
  }

  /**
   * Reads the durable cache into the process-wide one, once per observer (a container's life);
   * concurrent callers share the read. A failed read leaves what was read (it is not retried: the
   * container describes what it lacks, as without the table).
   */
  private warmUp(): Promise<CacheLoad> | undefined {
    if (!this.durable) return undefined;
    this.warm ??= this.durable.load().then(({ descriptions, result }) => {
      // Marked used now: one that no pass asks for is dropped once idle for TASK_DEFINITION_CACHE_IDLE_SECONDS.
      for (const [arn, td] of descriptions) {
        if (taskDefinitionCache.has(arn)) continue;
        taskDefinitionCache.set(arn, td, this.now());
        unconfirmed.add(arn);
      }
      if (result.error) this.loadWarning = `read: ${result.error}`;
      return result;
    });
    return this.warm;
  }

  /** The reconciler's time (the caches' clock), remembered for {@link rememberTaskDefinition}. */
  private now(): number {
    cacheNowMs = this.clock ? this.clock.now().getTime() : Date.now();
    return cacheNowMs;
  }

  /** What the durable cache's bulk read found; undefined before it ran or without the cache. */
  async descriptionCacheLoad(): Promise<CacheLoad | undefined> {
    return this.warm;
  }

  /**
   * Called once a pass has asked for every revision it uses (`arns`, and those it expected from
   * memory): drops from the process-wide caches what no pass asked for in
   * {@link TASK_DEFINITION_CACHE_IDLE_SECONDS}; then writes to the durable cache the described
   * revisions of `arns` it does not hold yet (or holds from a week ago or more), all of them, and
   * deletes the expired entries the bulk read found. Never throws for a DynamoDB failure.
   */
  async keepDescriptions(arns: readonly string[]): Promise<{ warning?: string }> {
    // The pass has asked for every revision it uses by now: what was not asked for in a while goes.
    const now = this.now();
    for (const arn of arns) taskDefinitionCache.get(arn, now);
    taskDefinitionCache.sweep(now);
    serviceRevisionCache.sweep(now);
    if (!this.durable) return {};
    await this.warmUp();
    const inUse: [string, TaskDefinition][] = [];
    for (const arn of arns) {
      const td = taskDefinitionCache.get(arn, now);
      // An entry ECS has not confirmed is not refreshed: writing it back would only extend it.
      if (td && !unconfirmed.has(arn)) inUse.push([arn, td]);
    }
    this.durable.keep(inUse);
    const errorsBefore = this.durable.errors;
    await this.durable.flush();
    const warnings = [
      ...(this.loadWarning ? [this.loadWarning] : []),
      ...(this.durable.errors > errorsBefore ? [`write: ${this.durable.lastError}`] : []),
    ];
    this.loadWarning = undefined;
    return warnings.length > 0 ? { warning: warnings.join('; ') } : {};
  }

  /**
   * Observes one cluster: every listed service plus `extraServiceNames` (named by specs; DRAINING
   * services are described by name because ListServices omits them). Services DescribeServices
   * reports `MISSING` are absent from the result. `options.onServices` gets each
   * DescribeServices answer as it arrives. Stopped-task reasons of lagging services are read while
   * `options.shouldContinue()` holds; a failed one is a warning (docs/ecs-facts.md §5: they explain a lag,
   * they do not decide what exists). Listing and describing are never cut here (the pass uses
   * {@link listServices} and {@link readServices} to bound them).
   * @param cluster cluster name.
   */
  async observeCluster(cluster: string, extraServiceNames: string[], options: ObserveClusterOptions = {}): Promise<ObservedCluster> {
    const listing = await this.listServices(cluster);
    if (!listing.exists) return { cluster, complete: true, exists: false, services: dict() };
    const names = [...new Set([...listing.names, ...extraServiceNames])];
    const read = await this.readServices(cluster, names, {
      onServices: options.onServices,
      ...(options.shouldContinue ? { stoppedTasksWhile: options.shouldContinue } : {}),
      ...(options.readStoppedTasks ? { readStoppedTasks: options.readStoppedTasks } : {}),
    });
    const errors = [...(listing.error ? [listing.error] : []), ...read.errors];
    if (!read.exists && listing.names.length === 0 && errors.length === 0) {
      return { cluster, complete: true, exists: false, services: dict() };
    }
    const services: Record<string, ObservedService> = dict();
    for (const o of read.services) services[o.serviceName] = o;
    const refused = listing.refused ?? read.refused;
    return {
      cluster,
      complete: errors.length === 0,
      ...(refused !== undefined ? { refused: { reason: Reason.ClusterAccessDenied, message: refused } } : {}),
      ...(errors.length > 0 ? { error: errors.join('; ') } : {}),
      ...(read.warnings.length > 0 ? { warnings: read.warnings } : {}),
      exists: true,
      services,
    };
  }

  /**
   * ListServices of one cluster (`maxResults` 100, SDK paginator: `ceil(n / 100)` calls), each
   * page only while `options.shouldContinue()` holds. ClusterNotFoundException gives
   * `exists: false`. Never throws for an AWS failure (`complete: false`, `error`).
   */
  async listServices(cluster: string, options: ServiceReadOptions = {}): Promise<ServiceListing> {
    const names: string[] = [];
    const shouldContinue = options.shouldContinue ?? (() => true);
    const cut = (): ServiceListing => ({ exists: true, names, complete: false, error: `ECS ListServices cluster=${cluster}: not read to the end (deadline)` });
    try {
      const pages = paginateListServices(
        { client: this.ecs, pageSize: ECS_LIMITS.listServicesMaxResults },
        { cluster, maxResults: ECS_LIMITS.listServicesMaxResults },
      );
      if (!shouldContinue()) return cut();
      for await (const page of pages) {
        for (const arn of page.serviceArns ?? []) names.push(nameFromArn(arn));
        // The paginator asks for the next page only when the loop goes on.
        if (page.nextToken && !shouldContinue()) return cut();
      }
      return { exists: true, names, complete: true };
    } catch (err) {
      if (isClusterNotFound(err)) return { exists: false, names: [], complete: true };
      const error = failureMessage(`ECS ListServices cluster=${cluster}`, err);
      return { exists: true, names, complete: false, error, ...(isAccessDenied(err) ? { refused: error } : {}) };
    }
  }

  /**
   * DescribeServices with `include: ['TAGS']` of `names` in batches of 10, in the order given, at
   * most `concurrency` in flight; a batch starts only while `options.shouldContinue()` holds, so
   * the names read are a prefix of `names` (less failed batches). Then the stopped tasks of the
   * lagging services read, while the same condition holds (or `stoppedTasksWhile`, when given).
   * Never throws for an AWS failure.
   */
  async readServices(
    cluster: string,
    names: string[],
    options: ServiceReadOptions = {},
  ): Promise<ServiceDescriptions> {
    const errors: string[] = [];
    const described: string[] = [];
    const byName = new Map<string, ObservedService>();
    let clusterMissing = false;
    let refused: string | undefined;
    const shouldContinue = options.shouldContinue ?? (() => true);
    const batches = chunk([...new Set(names)], ECS_LIMITS.describeServicesBatch);
    const results = await mapSettledLimit(batches, this.concurrency, async (batch) => {
      if (!shouldContinue()) return undefined;
      const out = await this.ecs.send(new DescribeServicesCommand({ cluster, services: batch, include: ['TAGS'] }));
      const cache = this.compareCache;
      const observed = (out.services ?? []).map((d) => (cache ? observedAndStamped(d, cache) : toObservedService(d)));
      options.onServices?.(observed);
      return { observed, failures: out.failures ?? [] };
    });
    results.forEach((r, i) => {
      if (r.status === 'rejected') {
        if (isClusterNotFound(r.reason)) clusterMissing = true;
        else {
          const error = failureMessage(`ECS DescribeServices cluster=${cluster}`, r.reason);
          errors.push(error);
          if (refused === undefined && isAccessDenied(r.reason)) refused = error;
        }
        return;
      }
      if (!r.value) return;
      const failed = new Set<string>();
      for (const f of r.value.failures) {
        if (f.reason === 'MISSING') continue;
        if (f.arn) failed.add(nameFromArn(f.arn));
        errors.push(`ECS DescribeServices cluster=${cluster}: ${f.arn ?? '?'} ${f.reason ?? ''} ${f.detail ?? ''}`.trim());
      }
      for (const name of batches[i]) if (!failed.has(name)) described.push(name);
      for (const o of r.value.observed) {
        // A name may be both INACTIVE (old) and ACTIVE (re-created): the live one wins.
        const prev = byName.get(o.serviceName);
        if (!prev || prev.status === 'INACTIVE') byName.set(o.serviceName, o);
      }
    });

    const warnings: string[] = [];
    const stoppedWhile = options.stoppedTasksWhile ?? shouldContinue;
    // Lagging services, and those the caller asks for (a crash loop between glimpses of RUNNING).
    const wanted = options.readStoppedTasks;
    const lagging = [...byName.values()].filter(
      (s) => s.status !== 'INACTIVE' && (s.runningCount < s.desiredCount || (wanted !== undefined && s.status === 'ACTIVE' && wanted(s))),
    );
    const stopped = await mapSettledLimit(lagging, this.concurrency, (s) =>
      stoppedWhile() ? this.stoppedTasks(cluster, s.serviceName) : Promise.resolve(undefined),
    );
    stopped.forEach((r, i) => {
      if (r.status === 'fulfilled') {
        if (r.value) lagging[i].stoppedTasks = r.value;
      } else {
        warnings.push(failureMessage(`ECS ListTasks/DescribeTasks cluster=${cluster} service=${lagging[i].serviceName}`, r.reason));
      }
    });
    return { exists: !clusterMissing, services: [...byName.values()], described, errors, warnings, ...(refused !== undefined ? { refused } : {}) };
  }

  /**
   * The newest STOPPED tasks of a service (at most `maxStoppedTasks`), with stop codes and reasons.
   * Tasks of other services are filtered out by `group` (`service:NAME`) in case the server ignores
   * the `serviceName` filter.
   * @throws the SDK error of a failed call.
   */
  private async stoppedTasks(cluster: string, serviceName: string): Promise<StoppedTask[]> {
    const list = await this.ecs.send(
      new ListTasksCommand({ cluster, serviceName, desiredStatus: 'STOPPED', maxResults: ECS_LIMITS.listTasksMaxResults }),
    );
    const arns = list.taskArns ?? [];
    const tasks: Task[] = [];
    for (const batch of chunk(arns, ECS_LIMITS.describeTasksBatch)) {
      const out = await this.ecs.send(new DescribeTasksCommand({ cluster, tasks: batch }));
      tasks.push(...(out.tasks ?? []));
    }
    return tasks
      .filter((t) => !t.group || t.group === `service:${serviceName}`)
      .map(toStoppedTask)
      .sort((a, b) => (b.stoppedAt?.getTime() ?? 0) - (a.stoppedAt?.getTime() ?? 0))
      .slice(0, this.maxStoppedTasks);
  }

  /**
   * Describes the task definitions not yet cached (with tags), in the order given, at most
   * `concurrency` at once. Each description enters the process-wide cache as soon as it arrives,
   * so a caller cut short (deadline, invocation timeout) keeps every description it paid for.
   * @param arns task definition ARNs (revisions); the caller puts the most useful first.
   * @param options `shouldDescribe(arn)` is asked just before each uncached ARN is described;
   *   false defers it (left out of the result).
   * @returns the descriptions found, by the ARN asked for; failed and deferred ones are left out.
   * @throws only programming errors.
   */
  async describeTaskDefinitions(arns: string[], options: DescribeTaskDefinitionsOptions = {}): Promise<Record<string, TaskDefinition>> {
    await this.warmUp();
    const now = this.now();
    const wanted = [...new Set(arns.filter((a) => a.length > 0))];
    const out: Record<string, TaskDefinition> = dict();
    const missing: string[] = [];
    for (const a of wanted) {
      const td = taskDefinitionCache.get(a, now);
      if (td) out[a] = td;
      else missing.push(a);
    }
    const shouldDescribe = options.shouldDescribe ?? (() => true);
    const results = await mapSettledLimit(missing, this.concurrency, async (arn) => {
      if (!shouldDescribe(arn)) return;
      const td = await this.describeOne(arn);
      if (!td) return;
      const at = this.now();
      taskDefinitionCache.set(arn, td, at);
      unconfirmed.delete(arn);
      if (td.taskDefinitionArn) {
        taskDefinitionCache.set(td.taskDefinitionArn, td, at);
        unconfirmed.delete(td.taskDefinitionArn);
      }
      out[arn] = td;
    });
    for (const r of results) if (r.status === 'rejected' && isProgrammingError(r.reason)) throw r.reason;
    return out;
  }

  /**
   * The latest ACTIVE revision of `family` (DescribeTaskDefinition with the family name), or
   * undefined when the family has none. Not cached by family (a new revision may appear); the
   * description is cached by its ARN.
   * @throws AwsCallError for failures other than "no such task definition".
   */
  async latestActiveTaskDefinition(family: string): Promise<TaskDefinition | undefined> {
    try {
      const td = await this.describeOne(family);
      if (td?.taskDefinitionArn) {
        taskDefinitionCache.set(td.taskDefinitionArn, td, this.now());
        unconfirmed.delete(td.taskDefinitionArn);
      }
      return td && td.status !== 'INACTIVE' ? td : undefined;
    } catch (err) {
      // ECS answers ClientException "Unable to describe task definition." for an unknown family.
      const e = err as { name?: string; message?: string };
      if (e.name === 'ClientException' || e.name === 'InvalidParameterException' || e.name === 'ResourceNotFoundException') {
        return undefined;
      }
      throw new AwsCallError(`ECS DescribeTaskDefinition ${family}`, err);
    }
  }

  /** Those of `arns` whose description is held only from the durable cache (not confirmed by ECS in this process). */
  unconfirmedTaskDefinitions(arns: readonly string[]): string[] {
    return arns.filter((a) => unconfirmed.has(a) && taskDefinitionCache.has(a));
  }

  /**
   * DescribeTaskDefinition of each of `arns` (with tags), at most `concurrency` at once, each only
   * while `options.shouldDescribe(arn)` holds, whatever the caches hold. ECS's answer is confirmed
   * for the life of the process; when it differs from the cached description (a durable cache
   * entry that is not what ECS says), it replaces it in memory and, with `options.repair`, in the
   * durable cache (written at once).
   * @throws only programming errors.
   */
  async confirmTaskDefinitions(
    arns: readonly string[],
    options: { readonly shouldDescribe?: (arn: string) => boolean; readonly repair?: boolean } = {},
  ): Promise<TaskDefinitionConfirmation> {
    await this.warmUp();
    const replaced: Record<string, TaskDefinition> = dict();
    const confirmed: string[] = [];
    const failed: string[] = [];
    let error: string | undefined;
    const shouldDescribe = options.shouldDescribe ?? (() => true);
    const results = await mapSettledLimit([...new Set(arns.filter((a) => a.length > 0))], this.concurrency, async (arn) => {
      if (!shouldDescribe(arn)) return;
      let td: TaskDefinition | undefined;
      try {
        td = await this.describeOne(arn);
      } catch (err) {
        if (isProgrammingError(err)) throw err;
        failed.push(arn);
        error ??= failureMessage(`ECS DescribeTaskDefinition ${arn}`, err);
        return;
      }
      if (!td) {
        failed.push(arn);
        error ??= `ECS DescribeTaskDefinition ${arn}: no task definition in the answer`;
        return;
      }
      const now = this.now();
      const cached = taskDefinitionCache.get(arn, now);
      unconfirmed.delete(arn);
      confirmed.push(arn);
      // The same content keeps the cached object (the comparison memos know it by identity).
      if (cached !== undefined && JSON.stringify(cached) === JSON.stringify(td)) return;
      taskDefinitionCache.set(arn, td, now);
      replaced[arn] = td;
      if (options.repair) this.durable?.put(td);
    });
    for (const r of results) if (r.status === 'rejected' && isProgrammingError(r.reason)) throw r.reason;
    if (options.repair && this.durable && Object.keys(replaced).length > 0) await this.durable.flush();
    return { replaced, confirmed, failed, ...(error !== undefined ? { error } : {}) };
  }

  /** ECS's clock minus the reconciler's (ms), when the observer was given the reconciler's clock. */
  ecsClockOffsetMs(): number | undefined {
    return this.serverClock?.offsetMs();
  }

  /**
   * The newest {@link SERVICE_DEPLOYMENTS_READ} service deployments of a service (one
   * ListServiceDeployments call), newest first, each with the task definition of its target
   * service revision: DescribeServiceRevisions (20 ARNs a call) only for revisions not described
   * before in this process. A revision ECS does not describe leaves `targetTaskDefinition` unset.
   * @returns `{ error }` for a failed call, never throws for an AWS failure.
   */
  async readServiceDeployments(cluster: string, service: string): Promise<{ deployments: ObservedServiceDeployment[] } | { error: string }> {
    try {
      const out = await this.ecs.send(new ListServiceDeploymentsCommand({ cluster, service, maxResults: SERVICE_DEPLOYMENTS_READ }));
      const briefs = out.serviceDeployments ?? [];
      const unknown = [...new Set(briefs.map((b) => b.targetServiceRevisionArn ?? ''))].filter((a) => a !== '' && !serviceRevisionCache.has(a));
      for (const batch of chunk(unknown, DESCRIBE_SERVICE_REVISIONS_BATCH)) {
        const revs = await this.ecs.send(new DescribeServiceRevisionsCommand({ serviceRevisionArns: batch }));
        for (const r of revs.serviceRevisions ?? []) {
          if (r.serviceRevisionArn && r.taskDefinition) serviceRevisionCache.set(r.serviceRevisionArn, toObservedServiceRevision(r), this.now());
        }
      }
      const now = this.now();
      const deployments = briefs
        .filter((b) => b.serviceDeploymentArn)
        .map((b): ObservedServiceDeployment => {
          const rev = b.targetServiceRevisionArn ? serviceRevisionCache.get(b.targetServiceRevisionArn, now) : undefined;
          return {
            serviceDeploymentArn: b.serviceDeploymentArn as string,
            status: b.status ?? '',
            ...(b.statusReason ? { statusReason: b.statusReason } : {}),
            createdAt: b.createdAt ?? EPOCH,
            ...(b.finishedAt ? { finishedAt: b.finishedAt } : {}),
            ...(rev ? { targetTaskDefinition: rev.taskDefinition, targetRevision: rev } : {}),
          };
        })
        // Newest first, whatever order the page came in.
        .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
      return { deployments: await this.withDetails(deployments) };
    } catch (err) {
      return { error: failureMessage(`ECS ListServiceDeployments ${cluster}/${service}`, err) };
    }
  }

  /**
   * `deployments` with the {@link ObservedServiceDeploymentDetail} of the ongoing ones and of the
   * newest rolled-back one (one DescribeServiceDeployments call, at most 20 ARNs): the lifecycle
   * stage, traffic and hooks of a native deployment, and ECS's reason for a rollback. A refused
   * or failed call leaves them without detail (the history alone still tells a rollback).
   */
  private async withDetails(deployments: ObservedServiceDeployment[]): Promise<ObservedServiceDeployment[]> {
    const rolledBack = deployments.find((d) => d.status.startsWith('ROLLBACK_'));
    const wanted = deployments.filter((d) => ONGOING_SERVICE_DEPLOYMENT.has(d.status) || d === rolledBack).slice(0, DESCRIBE_SERVICE_DEPLOYMENTS_BATCH);
    if (wanted.length === 0) return deployments;
    let described: ServiceDeployment[];
    try {
      described = (await this.ecs.send(new DescribeServiceDeploymentsCommand({ serviceDeploymentArns: wanted.map((d) => d.serviceDeploymentArn) }))).serviceDeployments ?? [];
    } catch (err) {
      if (isProgrammingError(err)) throw err;
      return deployments;
    }
    const byArn = new Map(described.map((sd) => [sd.serviceDeploymentArn ?? '', sd]));
    return deployments.map((d) => {
      const sd = byArn.get(d.serviceDeploymentArn);
      return sd ? { ...d, detail: serviceDeploymentDetail(sd) } : d;
    });
  }

  private async describeOne(taskDefinition: string): Promise<TaskDefinition | undefined> {
    return taskDefinitionOf(await this.ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition, include: ['TAGS'] })));
  }
}

/**
 * The simulated ECS service scheduler and Fargate task lifecycle, on the virtual clock.
 *
 * Follows docs/ecs-facts.md §3-§5 and the Amazon ECS Developer Guide ("Task lifecycle", "Deploy Amazon ECS
 * services by replacing tasks", "How the Amazon ECS deployment circuit breaker detects failures"):
 * - tasks go PROVISIONING -> PENDING -> ACTIVATING -> RUNNING, and when stopped DEACTIVATING ->
 *   STOPPING -> DEPROVISIONING -> STOPPED; stopped tasks stay describable for an hour;
 * - each service is kept at its desiredCount; a rolling deployment starts new tasks within
 *   maximumPercent and stops old ones while at least minimumHealthyPercent stay healthy;
 * - the circuit breaker fails a deployment at min(200, max(3, ceil(0.5 x desiredCount))) failed
 *   tasks and, with rollback, starts a new PRIMARY deployment with the last COMPLETED one's task
 *   definition; repeated failures back off further launches (up to 15 minutes).
 * Durations are drawn from a seeded generator, so a run is reproducible.
 */
import type { TaskDefinition } from '@aws-sdk/client-ecs';
import type { Arns } from './arns';
import type { TimerHandle, VirtualClock } from './clock';
import { ruleForTask, type FailureRule } from './failure-modes';
import { rolloutReason, serviceEvent, stoppedReason, type StopCode } from './messages';
import type { SeededRandom } from './random';
import {
  PENDING_STATES,
  type DeploymentTemplate,
  type LastStatus,
  type SimCluster,
  type SimContainer,
  type SimDeployment,
  type SimService,
  type SimTask,
  type Tag,
} from './state';

/** Durations in virtual seconds; ranges are [min, max] drawn uniformly. */
export interface SimTimings {
  provisioning: [number, number];
  /** Image pull. */
  pending: [number, number];
  activating: [number, number];
  deactivating: [number, number];
  /** SIGTERM to exit (ECS waits up to stopTimeout, 30 s by default). */
  stopping: [number, number];
  deprovisioning: [number, number];
  /** Time until a failing pull gives up. */
  pullFailure: [number, number];
  /** crash-loop: seconds RUNNING before the essential container exits (rule.runSeconds overrides). */
  crashAfter: [number, number];
  /** slow-start: extra seconds PENDING (rule.pendingSeconds overrides). */
  slowStartPendingSeconds: number;
  /** spot-interruption: seconds RUNNING before the interruption (rule.runSeconds overrides). */
  spotInterruptAfterSeconds: number;
  /** Seconds RUNNING after which a task without health check counts as healthy for the breaker. */
  stableAfterSeconds: number;
  /** An init container (others wait for it to COMPLETE / SUCCESS): seconds RUNNING before it exits 0. */
  initContainerRunSeconds: [number, number];
  /** Placement retry after a placement failure. */
  placementRetrySeconds: number;
  /** Stopped tasks stay describable this long (ECS: at least one hour). */
  stoppedTaskRetentionSeconds: number;
  /** INACTIVE services stay describable this long, then DescribeServices answers MISSING. */
  inactiveServiceRetentionSeconds: number;
}

export const DEFAULT_TIMINGS: SimTimings = {
  provisioning: [2, 6],
  pending: [6, 18],
  activating: [1, 3],
  deactivating: [1, 3],
  stopping: [2, 25],
  deprovisioning: [2, 6],
  pullFailure: [5, 15],
  crashAfter: [3, 10],
  slowStartPendingSeconds: 300,
  spotInterruptAfterSeconds: 120,
  stableAfterSeconds: 30,
  initContainerRunSeconds: [2, 8],
  placementRetrySeconds: 60,
  stoppedTaskRetentionSeconds: 3600,
  inactiveServiceRetentionSeconds: 3600,
};

/**
 * Seconds a container waits for its dependencies when its definition sets no startTimeout (ECS on
 * Fargate: 3 minutes; ContainerDefinition.startTimeout).
 */
export const DEFAULT_START_TIMEOUT_SECONDS = 180;

/** Latest events kept per service (ECS keeps 100). */
export const MAX_SERVICE_EVENTS = 100;
/** Service deployments the simulator keeps per service (its own bound; ECS keeps them longer). */
export const MAX_SERVICE_DEPLOYMENTS = 100;
/** A repeated warning is re-emitted only after this long (ECS: six hours). */
const WARNING_REPEAT_MS = 6 * 3600 * 1000;
/** ECS's task launch backoff grows up to 15 minutes. */
const MAX_LAUNCH_BACKOFF_SECONDS = 900;
/**
 * Tasks one service launches per minute on Fargate (ECS service quota "Rate of tasks launched by a
 * service on AWS Fargate", default 500). Also what keeps a huge desiredCount from launching
 * millions of tasks in one step.
 */
export const MAX_LAUNCHES_PER_MINUTE = 500;
const LAUNCH_WINDOW_MS = 60_000;

export interface SchedulerContext {
  readonly clock: VirtualClock;
  readonly rng: SeededRandom;
  readonly arns: Arns;
  readonly timings: SimTimings;
  rules(): readonly FailureRule[];
  cluster(name: string): SimCluster | undefined;
  taskDefinition(arn: string): TaskDefinition | undefined;
  /** Tags given when the revision was registered. */
  taskDefinitionTags(arn: string): Tag[];
  /** ECS's events on the bus (`./events`): a task's state changed, a service action, a deployment state change. */
  readonly events: {
    task(t: SimTask): void;
    serviceAction(svc: SimService, eventType: 'INFO' | 'WARN' | 'ERROR', eventName: string, reason?: string): void;
    deployment(svc: SimService, d: SimDeployment, eventType: 'INFO' | 'ERROR', eventName: string, reason: string): void;
  };
}

/** Where and how one task is launched. */
export interface LaunchRequest {
  cluster: SimCluster;
  taskDefinition: TaskDefinition;
  service?: SimService;
  deployment?: SimDeployment;
  launchType: 'FARGATE' | 'EC2';
  capacityProviderName?: string;
  platformVersion?: string;
  subnets: string[];
  startedBy?: string;
  group: string;
  tags: Tag[];
}

/** Circuit breaker threshold (docs/ecs-facts.md §4): min(200, max(3, ceil(0.5 x desiredCount))). */
export function circuitBreakerThreshold(desiredCount: number): number {
  return Math.min(200, Math.max(3, Math.ceil(0.5 * desiredCount)));
}

export function isLive(t: SimTask): boolean {
  return t.desiredStatus === 'RUNNING';
}

/** RUNNING and, for tasks with a container health check, HEALTHY. */
export function isHealthyRunning(t: SimTask): boolean {
  if (t.lastStatus !== 'RUNNING' || t.desiredStatus !== 'RUNNING') return false;
  if (t.healthCheck) return t.healthStatus === 'HEALTHY';
  return t.healthStatus !== 'UNHEALTHY';
}

export class Scheduler {
  /** Mode timers (crash, health, spot) per task id, separate from lifecycle timers. */
  private readonly modeTimers = new Map<string, TimerHandle[]>();
  private readonly evaluating = new Set<SimService>();

  constructor(private readonly ctx: SchedulerContext) {}

  private now(): number {
    return this.ctx.clock.nowMs();
  }

  private draw([min, max]: [number, number]): number {
    return this.ctx.rng.between(min, max);
  }

  // -------------------------------------------------------------------------------------------
  // Service scheduler
  // -------------------------------------------------------------------------------------------

  /** Schedules an evaluation of the service at the current virtual time (coalesced). */
  kick(svc: SimService): void {
    if (svc.status === 'INACTIVE' || svc.evaluation || this.evaluating.has(svc)) return;
    svc.evaluation = this.ctx.clock.schedule(this.now(), () => {
      svc.evaluation = undefined;
      this.evaluate(svc);
    });
  }

  private retryAt(svc: SimService, at: number): void {
    if (svc.retry && svc.retry.at <= at && svc.retry.at > this.now()) return;
    svc.retry?.cancel();
    svc.retry = this.ctx.clock.schedule(at, () => {
      svc.retry = undefined;
      this.evaluate(svc);
    });
  }

  /**
   * Tasks of each service by cluster (the tasks map) and service name, in start order: the same
   * tasks as the cluster's map (kept at the only places it changes, {@link launch} and the
   * removal of a stopped task), so that a service's tasks are found without scanning its
   * cluster's (a quadratic cost at thousands of services a cluster).
   */
  private readonly byService = new WeakMap<Map<string, SimTask>, Map<string, Set<SimTask>>>();

  private serviceTasks(tasks: Map<string, SimTask>, service: string): Set<SimTask> | undefined {
    return this.byService.get(tasks)?.get(service);
  }

  private indexTask(tasks: Map<string, SimTask>, t: SimTask): void {
    if (t.service === undefined) return;
    let names = this.byService.get(tasks);
    if (!names) this.byService.set(tasks, (names = new Map()));
    let set = names.get(t.service);
    if (!set) names.set(t.service, (set = new Set()));
    set.add(t);
  }

  tasksOf(svc: SimService): SimTask[] {
    const cluster = this.ctx.cluster(svc.cluster);
    if (!cluster) return [];
    const set = this.serviceTasks(cluster.tasks, svc.name);
    if (!set) return [];
    const out: SimTask[] = [];
    for (const t of set) if (t.createdAt >= svc.createdAt && cluster.tasks.get(t.id) === t) out.push(t);
    return out;
  }

  /** runningCount / pendingCount of a service or of one deployment (DescribeServices). */
  counts(svc: SimService, deploymentId?: string): { running: number; pending: number } {
    let running = 0;
    let pending = 0;
    for (const t of this.tasksOf(svc)) {
      if (deploymentId !== undefined && t.deploymentId !== deploymentId) continue;
      if (t.lastStatus === 'RUNNING' && t.desiredStatus === 'RUNNING') running++;
      else if (PENDING_STATES.has(t.lastStatus) && t.desiredStatus === 'RUNNING') pending++;
    }
    return { running, pending };
  }

  /** desiredCount of a deployment: the service's for PRIMARY, the tasks still kept for older ones. */
  deploymentDesired(svc: SimService, d: SimDeployment): number {
    if (d === svc.deployments[0]) return svc.status === 'ACTIVE' ? svc.desiredCount : 0;
    return this.tasksOf(svc).filter((t) => t.deploymentId === d.id && isLive(t)).length;
  }

  /**
   * Creates a new PRIMARY deployment; the previous PRIMARY becomes ACTIVE. Like ECS, each one
   * rolls out a new service revision as a new service deployment (the one in progress, if any,
   * is STOPPED), except a circuit-breaker rollback (`rollbackOf`, the failed deployment): it runs
   * `rollbackRevisionArn` again within the failed deployment's service deployment, which goes to
   * ROLLBACK_IN_PROGRESS (Amazon ECS Developer Guide, "View service history using Amazon ECS
   * service deployments").
   */
  startDeployment(
    svc: SimService,
    template: DeploymentTemplate,
    reason?: string,
    rollback?: { of: SimDeployment; revisionArn: string },
  ): SimDeployment {
    const now = this.now();
    const id = `ecs-svc/${this.ctx.rng.digits(19)}`;
    const sources = [...new Set(svc.deployments.map((d) => d.serviceRevisionArn))];
    for (const d of svc.deployments) {
      d.status = 'ACTIVE';
      d.updatedAt = now;
    }
    let revisionArn: string;
    let serviceDeploymentArn: string;
    const cfg = svc.deploymentConfiguration;
    const ofRollback = rollback ? svc.serviceDeployments.find((x) => x.arn === rollback.of.serviceDeploymentArn) : undefined;
    if (rollback && ofRollback) {
      revisionArn = rollback.revisionArn;
      serviceDeploymentArn = ofRollback.arn;
      ofRollback.status = 'ROLLBACK_IN_PROGRESS';
      ofRollback.statusReason = rolloutReason.failed();
      ofRollback.rollback = { reason: rolloutReason.failed(), startedAt: now, serviceRevisionArn: revisionArn };
      ofRollback.updatedAt = now;
    } else {
      revisionArn = this.ctx.arns.serviceRevision(svc.cluster, svc.name, this.ctx.rng.digits(19));
      svc.serviceRevisions.set(revisionArn, { arn: revisionArn, createdAt: now, template: structuredClone(template) });
      for (const sd of svc.serviceDeployments) {
        if (sd.status === 'IN_PROGRESS' || sd.status === 'PENDING' || sd.status === 'ROLLBACK_IN_PROGRESS') {
          sd.status = 'STOPPED';
          sd.statusReason = 'Service deployment stopped: a new service deployment started.';
          sd.stoppedAt = now;
          sd.updatedAt = now;
        }
      }
      serviceDeploymentArn = this.ctx.arns.serviceDeployment(svc.cluster, svc.name, this.ctx.rng.hex(22));
      svc.serviceDeployments.unshift({
        arn: serviceDeploymentArn,
        createdAt: now,
        startedAt: now,
        updatedAt: now,
        sourceServiceRevisionArns: sources,
        targetServiceRevisionArn: revisionArn,
        status: 'IN_PROGRESS',
        deploymentCircuitBreaker: { ...cfg.deploymentCircuitBreaker },
        minimumHealthyPercent: cfg.minimumHealthyPercent,
        maximumPercent: cfg.maximumPercent,
      });
      if (svc.serviceDeployments.length > MAX_SERVICE_DEPLOYMENTS) svc.serviceDeployments.length = MAX_SERVICE_DEPLOYMENTS;
    }
    const d: SimDeployment = {
      ...structuredClone(template),
      id,
      serviceRevisionArn: revisionArn,
      serviceDeploymentArn,
      status: 'PRIMARY',
      failedTasks: 0,
      createdAt: now,
      updatedAt: now,
      rolloutState: 'IN_PROGRESS',
      rolloutStateReason: reason ?? rolloutReason.inProgress(id),
    };
    svc.deployments.unshift(d);
    this.ctx.events.deployment(svc, d, 'INFO', 'SERVICE_DEPLOYMENT_IN_PROGRESS', d.rolloutStateReason ?? rolloutReason.inProgress(id));
    svc.steady = false;
    // A new deployment resets ECS's launch backoff (docs/ecs-facts.md §4).
    svc.consecutiveFailures = 0;
    svc.launchBackoffUntil = 0;
    this.kick(svc);
    return d;
  }

  /** The service deployment a deployment belongs to. */
  private serviceDeploymentOf(svc: SimService, d: SimDeployment) {
    return svc.serviceDeployments.find((x) => x.arn === d.serviceDeploymentArn);
  }

  pushEvent(svc: SimService, message: string): void {
    svc.events.unshift({ id: this.ctx.rng.uuid(), createdAt: this.now(), message });
    if (svc.events.length > MAX_SERVICE_EVENTS) svc.events.length = MAX_SERVICE_EVENTS;
  }

  /**
   * Emits a warning event unless the same one was emitted in the last six hours.
   * @returns true when it was emitted.
   */
  private warn(svc: SimService, message: string): boolean {
    const last = svc.warnings.get(message);
    if (last !== undefined && this.now() - last < WARNING_REPEAT_MS) return false;
    svc.warnings.set(message, this.now());
    this.pushEvent(svc, message);
    return true;
  }

  /** One pass of the service scheduler over one service. */
  evaluate(svc: SimService): void {
    if (svc.status === 'INACTIVE') return;
    const cluster = this.ctx.cluster(svc.cluster);
    if (!cluster) return;
    this.evaluating.add(svc);
    try {
      this.evaluateInner(svc, cluster);
    } finally {
      this.evaluating.delete(svc);
    }
  }

  private evaluateInner(svc: SimService, cluster: SimCluster): void {
    const now = this.now();
    const primary = svc.deployments[0];
    const tasks = this.tasksOf(svc);
    const live = tasks.filter(isLive);
    if (primary === undefined) {
      // An EXTERNAL service without task sets: nothing runs; a deleted one is INACTIVE at once.
      if (svc.status === 'DRAINING') {
        svc.status = 'INACTIVE';
        svc.inactiveAt = now;
      }
      return;
    }

    if (svc.status === 'DRAINING') {
      this.stopByScheduler(svc, live, primary);
      if (tasks.every((t) => t.lastStatus === 'STOPPED')) {
        svc.status = 'INACTIVE';
        svc.inactiveAt = now;
        svc.deployments = svc.deployments.slice(0, 1);
        for (const d of svc.deployments) d.updatedAt = now;
        svc.retry?.cancel();
        // INACTIVE services are purged later; then DescribeServices answers MISSING (docs/ecs-facts.md §3).
        this.ctx.clock.after(this.ctx.timings.inactiveServiceRetentionSeconds, () => {
          if (cluster.services.get(svc.name) === svc) cluster.services.delete(svc.name);
        });
      }
      return;
    }

    const desired = svc.desiredCount;
    const cfg = svc.deploymentConfiguration;
    const primaryLive = live.filter((t) => t.deploymentId === primary.id);
    const oldLive = live.filter((t) => t.deploymentId !== primary.id);

    // Scale in the primary: stop the least advanced (pending first), newest first.
    if (primaryLive.length > desired) {
      const order = [...primaryLive].sort((a, b) => rank(a) - rank(b) || b.createdAt - a.createdAt);
      this.stopByScheduler(svc, order.slice(0, primaryLive.length - desired), primary);
    }

    // Replace old deployments' tasks while keeping minimumHealthyPercent.
    if (primary.rolloutState !== 'FAILED' && oldLive.length > 0) {
      const minHealthy = Math.ceil((desired * cfg.minimumHealthyPercent) / 100);
      let healthy = live.filter(isHealthyRunning).length;
      const toStop: SimTask[] = [];
      const order = [...oldLive].sort((a, b) => Number(isHealthyRunning(a)) - Number(isHealthyRunning(b)));
      for (const t of order) {
        if (!isHealthyRunning(t)) toStop.push(t);
        else if (healthy - 1 >= minHealthy) {
          toStop.push(t);
          healthy--;
        }
      }
      this.stopByScheduler(svc, toStop, primary);
    }

    // Start tasks for the primary within maximumPercent (counting tasks not yet STOPPED).
    const liveNow = this.tasksOf(svc).filter(isLive);
    const primaryLiveNow = liveNow.filter((t) => t.deploymentId === primary.id).length;
    const missing = desired - primaryLiveNow;
    if (missing > 0 && primary.rolloutState !== 'FAILED') {
      const notStopped = this.tasksOf(svc).filter((t) => t.lastStatus !== 'STOPPED').length;
      const oldRemaining = liveNow.length - primaryLiveNow;
      const maxTasks = Math.floor((desired * cfg.maximumPercent) / 100);
      const room = oldRemaining > 0 || notStopped > primaryLiveNow ? Math.max(0, maxTasks - notStopped) : missing;
      const n = Math.min(missing, room);
      if (n > 0) {
        if (now < svc.launchBackoffUntil) {
          this.retryAt(svc, svc.launchBackoffUntil);
        } else {
          this.launchForService(svc, cluster, primary, n);
        }
      }
    }

    this.dropDrainedDeployments(svc);
    this.checkSteadyState(svc);
  }

  private launchForService(svc: SimService, cluster: SimCluster, d: SimDeployment, wanted: number): void {
    const td = this.ctx.taskDefinition(d.taskDefinition);
    if (!td) return;
    const now = this.now();
    if (!svc.launchWindow || now - svc.launchWindow.startMs >= LAUNCH_WINDOW_MS) svc.launchWindow = { startMs: now, launched: 0 };
    const window = svc.launchWindow;
    const n = Math.min(wanted, MAX_LAUNCHES_PER_MINUTE - window.launched);
    if (n < wanted) this.retryAt(svc, window.startMs + LAUNCH_WINDOW_MS);
    const started: string[] = [];
    const subnets = d.networkConfiguration?.awsvpcConfiguration.subnets ?? [];
    for (let i = 0; i < n; i++) {
      const placement = this.placement(svc, cluster, d);
      if (!placement.ok) {
        if (this.warn(svc, placement.message)) this.ctx.events.serviceAction(svc, 'ERROR', 'SERVICE_TASK_PLACEMENT_FAILURE', 'RESOURCE:EC2');
        this.retryAt(svc, this.now() + this.ctx.timings.placementRetrySeconds * 1000);
        break;
      }
      const { rule } = ruleForTask(this.ctx.rules(), td.containerDefinitions ?? []);
      if (rule.mode === 'no-capacity') {
        if (this.warn(svc, serviceEvent.noFargateCapacity(svc.name))) this.ctx.events.serviceAction(svc, 'ERROR', 'SERVICE_TASK_PLACEMENT_FAILURE', 'RESOURCE:FARGATE');
        this.retryAt(svc, this.now() + this.ctx.timings.placementRetrySeconds * 1000);
        break;
      }
      const t = this.launch({
        cluster,
        taskDefinition: td,
        service: svc,
        deployment: d,
        launchType: placement.launchType,
        capacityProviderName: placement.capacityProviderName,
        platformVersion: d.platformVersion,
        subnets,
        startedBy: d.id,
        group: `service:${svc.name}`,
        tags: this.taskTags(svc, d),
      });
      window.launched++;
      started.push(t.id);
    }
    if (started.length > 0) this.pushEvent(svc, serviceEvent.started(svc.name, started));
  }

  /** Tags of a new service task: propagated ones, plus ECS managed tags when enabled. */
  private taskTags(svc: SimService, d: SimDeployment): Tag[] {
    const tags: Tag[] =
      svc.propagateTags === 'SERVICE'
        ? svc.tags.map((t) => ({ ...t }))
        : svc.propagateTags === 'TASK_DEFINITION'
          ? this.ctx.taskDefinitionTags(d.taskDefinition).map((t) => ({ ...t }))
          : [];
    if (svc.enableECSManagedTags) {
      tags.push({ key: 'aws:ecs:clusterName', value: svc.cluster }, { key: 'aws:ecs:serviceName', value: svc.name });
    }
    return tags;
  }

  /** Launch type / capacity provider for the next task of the deployment. */
  private placement(
    svc: SimService,
    cluster: SimCluster,
    d: SimDeployment,
  ):
    | { ok: true; launchType: 'FARGATE' | 'EC2'; capacityProviderName?: string }
    | { ok: false; message: string } {
    const strategy =
      d.capacityProviderStrategy && d.capacityProviderStrategy.length > 0
        ? d.capacityProviderStrategy
        : d.launchType
          ? undefined
          : cluster.defaultCapacityProviderStrategy;
    if (strategy && strategy.length > 0) {
      const live = this.tasksOf(svc).filter((t) => isLive(t) && t.deploymentId === d.id);
      const count = (p: string) => live.filter((t) => t.capacityProviderName === p).length;
      let chosen: string | undefined;
      for (const s of strategy) {
        if ((s.base ?? 0) > count(s.capacityProvider ?? '')) {
          chosen = s.capacityProvider;
          break;
        }
      }
      if (!chosen) {
        let best = Infinity;
        for (const s of strategy) {
          const w = s.weight ?? 0;
          if (w <= 0 || !s.capacityProvider) continue;
          const score = (Math.max(0, count(s.capacityProvider) - (s.base ?? 0)) + 1) / w;
          if (score < best) {
            best = score;
            chosen = s.capacityProvider;
          }
        }
      }
      chosen ??= strategy[0].capacityProvider;
      if (chosen === 'FARGATE' || chosen === 'FARGATE_SPOT') return { ok: true, launchType: 'FARGATE', capacityProviderName: chosen };
      return { ok: false, message: serviceEvent.noContainerInstances(svc.name) };
    }
    if (d.launchType === 'FARGATE') return { ok: true, launchType: 'FARGATE' };
    // EC2 (explicit, or the default without any strategy): the simulated cluster has no instances.
    return { ok: false, message: serviceEvent.noContainerInstances(svc.name) };
  }

  private stopByScheduler(svc: SimService, tasks: SimTask[], primary: SimDeployment): void {
    const stopped: string[] = [];
    for (const t of tasks) {
      if (!isLive(t)) continue;
      const wasRunning = t.lastStatus === 'RUNNING';
      this.stopTask(t, 'ServiceSchedulerInitiated', stoppedReason.scaling(primary.id));
      if (wasRunning) stopped.push(t.id);
    }
    if (stopped.length > 0) this.pushEvent(svc, serviceEvent.stopped(svc.name, stopped));
  }

  private dropDrainedDeployments(svc: SimService): void {
    const tasks = this.tasksOf(svc);
    svc.deployments = svc.deployments.filter(
      (d, i) => i === 0 || tasks.some((t) => t.deploymentId === d.id && t.lastStatus !== 'STOPPED'),
    );
  }

  private checkSteadyState(svc: SimService): void {
    const primary = svc.deployments[0];
    const tasks = this.tasksOf(svc).filter((t) => t.lastStatus !== 'STOPPED');
    const steady =
      svc.deployments.length === 1 &&
      primary.rolloutState !== 'FAILED' &&
      tasks.length === svc.desiredCount &&
      tasks.every((t) => t.deploymentId === primary.id && isHealthyRunning(t));
    if (!steady) {
      svc.steady = false;
      return;
    }
    const now = this.now();
    if (primary.rolloutState === 'IN_PROGRESS') {
      primary.rolloutState = 'COMPLETED';
      primary.rolloutStateReason = rolloutReason.completed(primary.id);
      primary.updatedAt = now;
      const sd = this.serviceDeploymentOf(svc, primary);
      if (sd && (sd.status === 'IN_PROGRESS' || sd.status === 'ROLLBACK_IN_PROGRESS')) {
        sd.status = sd.status === 'IN_PROGRESS' ? 'SUCCESSFUL' : 'ROLLBACK_SUCCESSFUL';
        sd.finishedAt = now;
        sd.updatedAt = now;
      }
      this.pushEvent(svc, serviceEvent.deploymentCompleted(svc.name, primary.id));
      this.ctx.events.deployment(svc, primary, 'INFO', 'SERVICE_DEPLOYMENT_COMPLETED', primary.rolloutStateReason);
    }
    if (primary.rolloutState === 'COMPLETED') svc.lastCompleted = structuredClone(primary);
    if (!svc.steady) {
      svc.steady = true;
      svc.warnings.clear();
      svc.consecutiveFailures = 0;
      svc.launchBackoffUntil = 0;
      this.pushEvent(svc, serviceEvent.steadyState(svc.name));
      this.ctx.events.serviceAction(svc, 'INFO', 'SERVICE_STEADY_STATE');
    }
  }

  /** Counts a failed task against its deployment: circuit breaker and launch backoff. */
  private recordFailure(t: SimTask): void {
    if (t.countedFailed || !t.service) return;
    t.countedFailed = true;
    const cluster = this.ctx.cluster(t.cluster);
    const svc = cluster?.services.get(t.service);
    if (!svc || svc.status !== 'ACTIVE') return;
    const d = svc.deployments.find((x) => x.id === t.deploymentId);
    if (!d || d.rolloutState !== 'IN_PROGRESS') return;
    d.failedTasks++;
    d.updatedAt = this.now();
    svc.consecutiveFailures++;
    if (svc.consecutiveFailures >= 3) {
      const backoff = Math.min(MAX_LAUNCH_BACKOFF_SECONDS, 10 * 2 ** (svc.consecutiveFailures - 3));
      svc.launchBackoffUntil = this.now() + backoff * 1000;
      if (this.warn(svc, serviceEvent.startImpaired(svc.name))) this.ctx.events.serviceAction(svc, 'WARN', 'SERVICE_TASK_START_IMPAIRED');
    }
    const cb = svc.deploymentConfiguration.deploymentCircuitBreaker;
    if (cb.enable && d === svc.deployments[0] && d.failedTasks >= circuitBreakerThreshold(svc.desiredCount)) {
      this.tripCircuitBreaker(svc, d);
    }
    this.kick(svc);
  }

  private tripCircuitBreaker(svc: SimService, d: SimDeployment): void {
    d.rolloutState = 'FAILED';
    d.rolloutStateReason = rolloutReason.failed();
    d.updatedAt = this.now();
    this.pushEvent(svc, serviceEvent.deploymentFailed(svc.name, d.id));
    this.ctx.events.deployment(svc, d, 'ERROR', 'SERVICE_DEPLOYMENT_FAILED', d.rolloutStateReason);
    const target = svc.lastCompleted;
    const sd = this.serviceDeploymentOf(svc, d);
    const rollingBack = svc.deploymentConfiguration.deploymentCircuitBreaker.rollback && target !== undefined && target.id !== d.id;
    if (sd && (sd.status === 'ROLLBACK_IN_PROGRESS' || !rollingBack)) {
      // A rollback that fails in turn, or a failure without rollback, ends the service deployment.
      sd.status = sd.status === 'ROLLBACK_IN_PROGRESS' ? 'ROLLBACK_FAILED' : 'STOPPED';
      sd.statusReason = rolloutReason.failed();
      sd.stoppedAt = this.now();
      sd.updatedAt = this.now();
    }
    if (rollingBack && target && sd?.status !== 'ROLLBACK_FAILED') {
      this.pushEvent(svc, serviceEvent.rollingBack(svc.name, target.id));
      const template: DeploymentTemplate = {
        taskDefinition: target.taskDefinition,
        launchType: target.launchType,
        capacityProviderStrategy: target.capacityProviderStrategy,
        platformVersion: target.platformVersion,
        networkConfiguration: target.networkConfiguration,
        loadBalancers: target.loadBalancers,
        serviceConnectConfiguration: target.serviceConnectConfiguration,
        serviceConnectResources: target.serviceConnectResources,
        volumeConfigurations: target.volumeConfigurations,
        vpcLatticeConfigurations: target.vpcLatticeConfigurations,
      };
      const copy = structuredClone(template);
      svc.taskDefinition = copy.taskDefinition;
      svc.launchType = copy.launchType;
      svc.capacityProviderStrategy = copy.capacityProviderStrategy;
      svc.platformVersion = copy.platformVersion;
      svc.networkConfiguration = copy.networkConfiguration;
      svc.loadBalancers = copy.loadBalancers;
      svc.vpcLatticeConfigurations = copy.vpcLatticeConfigurations;
      this.startDeployment(svc, template, rolloutReason.rollback(target.id), { of: d, revisionArn: target.serviceRevisionArn });
    }
  }

  // -------------------------------------------------------------------------------------------
  // Task lifecycle
  // -------------------------------------------------------------------------------------------

  /** Creates a task in PROVISIONING and schedules its lifecycle. */
  launch(req: LaunchRequest): SimTask {
    const { rng, arns } = this.ctx;
    const now = this.now();
    const id = rng.hex(32);
    const containersDef = req.taskDefinition.containerDefinitions ?? [];
    const { rule, image } = ruleForTask(this.ctx.rules(), containersDef);
    const hcContainer = containersDef.find((c) => c.essential !== false && c.healthCheck);
    const waitedToExit = new Set(
      containersDef.flatMap((c) => (c.dependsOn ?? []).filter((d) => d.condition === 'COMPLETE' || d.condition === 'SUCCESS').map((d) => d.containerName ?? '')),
    );
    const subnetIndex = req.subnets.length > 0 ? rng.int(0, req.subnets.length - 1) : rng.int(0, 2);
    const region = arns.scope.region;
    const t: SimTask = {
      id,
      arn: arns.task(req.cluster.name, id),
      cluster: req.cluster.name,
      service: req.service?.name,
      deploymentId: req.deployment?.id,
      taskDefinitionArn: req.taskDefinition.taskDefinitionArn as string,
      startedBy: req.startedBy,
      group: req.group,
      lastStatus: 'PROVISIONING',
      desiredStatus: 'RUNNING',
      healthStatus: 'UNKNOWN',
      launchType: req.launchType,
      capacityProviderName: req.capacityProviderName,
      platformVersion: req.launchType === 'FARGATE' ? resolvePlatformVersion(req.platformVersion) : '',
      cpu: req.taskDefinition.cpu,
      memory: req.taskDefinition.memory,
      availabilityZone: `${region}${'abcdef'[subnetIndex % 6]}`,
      subnetId: req.subnets[subnetIndex],
      eniId: `eni-${rng.hex(17)}`,
      attachmentId: rng.uuid(),
      macAddress: Array.from({ length: 6 }, (_, i) => (i === 0 ? '0a' : rng.hex(2))).join(':'),
      privateIp: `10.0.${rng.int(0, 255)}.${rng.int(1, 254)}`,
      createdAt: now,
      containers: containersDef.map((c) => {
        const uuid = rng.uuid();
        const hc = c.healthCheck;
        return {
          dependsOn: (c.dependsOn ?? []).map((d) => ({ containerName: d.containerName ?? '', condition: d.condition ?? 'START' })),
          ...(hc ? { healthyAfter: Math.min(hc.interval ?? 30, (hc.startPeriod ?? 0) + (hc.interval ?? 30)) } : {}),
          init: c.essential === false && waitedToExit.has(c.name ?? ''),
          ...(c.startTimeout !== undefined ? { startTimeout: c.startTimeout } : {}),
          name: c.name ?? '',
          image: c.image ?? '',
          uuid,
          arn: arns.container(req.cluster.name, id, uuid),
          essential: c.essential !== false,
          cpu: c.cpu ?? 0,
          memory: c.memory,
          memoryReservation: c.memoryReservation,
          lastStatus: 'PENDING',
          healthStatus: 'UNKNOWN',
          hasHealthCheck: c.healthCheck !== undefined,
        };
      }),
      tags: req.tags,
      version: 1,
      rule,
      ruleImage: image,
      healthCheck: hcContainer?.healthCheck
        ? {
            interval: hcContainer.healthCheck.interval ?? 30,
            retries: hcContainer.healthCheck.retries ?? 3,
            startPeriod: hcContainer.healthCheck.startPeriod ?? 0,
          }
        : undefined,
      timers: [],
      countedFailed: false,
    };
    req.cluster.tasks.set(id, t);
    this.indexTask(req.cluster.tasks, t);
    this.ctx.events.task(t);
    this.after(t, this.draw(this.ctx.timings.provisioning), () => this.toPending(t));
    return t;
  }

  private after(t: SimTask, seconds: number, fn: () => void): void {
    t.timers.push(this.ctx.clock.after(seconds, fn));
  }

  private afterMode(t: SimTask, seconds: number, fn: () => void): void {
    const list = this.modeTimers.get(t.id) ?? [];
    list.push(this.ctx.clock.after(seconds, fn));
    this.modeTimers.set(t.id, list);
  }

  private cancelModeTimers(t: SimTask): void {
    for (const h of this.modeTimers.get(t.id) ?? []) h.cancel();
    this.modeTimers.delete(t.id);
  }

  private setStatus(t: SimTask, s: LastStatus): void {
    t.lastStatus = s;
    t.version++;
    this.ctx.events.task(t);
  }

  private serviceOf(t: SimTask): SimService | undefined {
    if (!t.service) return undefined;
    const svc = this.ctx.cluster(t.cluster)?.services.get(t.service);
    return svc && svc.createdAt <= t.createdAt ? svc : undefined;
  }

  private kickOwner(t: SimTask): void {
    const svc = this.serviceOf(t);
    if (svc) this.kick(svc);
  }

  private toPending(t: SimTask): void {
    this.setStatus(t, 'PENDING');
    t.connectivityAt = this.now();
    t.pullStartedAt = this.now();
    if (t.rule.mode === 'pull-error') {
      this.after(t, this.draw(this.ctx.timings.pullFailure), () => this.failToStart(t));
      return;
    }
    let pull = this.draw(this.ctx.timings.pending);
    if (t.rule.mode === 'slow-start') pull += t.rule.pendingSeconds ?? this.ctx.timings.slowStartPendingSeconds;
    this.after(t, pull, () => this.toActivating(t));
  }

  private toActivating(t: SimTask): void {
    t.pullStoppedAt = this.now();
    this.setStatus(t, 'ACTIVATING');
    this.after(t, this.draw(this.ctx.timings.activating), () => this.toRunning(t));
  }

  /**
   * Starts the task's containers in their dependsOn order (Amazon ECS Developer Guide, "Container
   * dependency"): a container starts once every container it depends on has started (START),
   * exited (COMPLETE), exited 0 (SUCCESS) or passed its health check (HEALTHY); the task is RUNNING
   * once all its essential containers run. Without dependsOn, every container starts at once.
   */
  private toRunning(t: SimTask): void {
    this.startContainers(t);
    // A container that cannot resolve its dependencies within its startTimeout fails the task.
    for (const c of t.containers) {
      if (c.startedAt !== undefined || !c.essential) continue;
      const timeout = c.startTimeout ?? DEFAULT_START_TIMEOUT_SECONDS;
      this.after(t, timeout, () => {
        if (!isLive(t) || c.startedAt !== undefined) return;
        const waiting = c.dependsOn.map((d) => `${d.containerName} ${d.condition}`).join(', ');
        this.stopTask(t, 'TaskFailedToStart', stoppedReason.dependencyTimeout(c.name, waiting, timeout));
        this.recordFailure(t);
      });
    }
  }

  private startContainers(t: SimTask): void {
    if (!isLive(t)) return;
    const byName = new Map(t.containers.map((c) => [c.name, c]));
    const met = (d: SimContainer['dependsOn'][number]): boolean => {
      const target = byName.get(d.containerName);
      if (!target) return true;
      switch (d.condition) {
        case 'START':
          return target.startedAt !== undefined;
        case 'HEALTHY':
          return target.healthStatus === 'HEALTHY';
        case 'COMPLETE':
          return target.startedAt !== undefined && target.lastStatus === 'STOPPED';
        case 'SUCCESS':
          return target.startedAt !== undefined && target.lastStatus === 'STOPPED' && target.exitCode === 0;
      }
    };
    let started = true;
    while (started) {
      started = false;
      for (const c of t.containers) {
        if (c.startedAt !== undefined || c.lastStatus !== 'PENDING' || !c.dependsOn.every(met)) continue;
        c.startedAt = this.now();
        c.lastStatus = 'RUNNING';
        started = true;
        t.version++;
        // Its own health check, for the containers that wait for it to be HEALTHY (the task's
        // health follows the essential containers', scheduleModeEffects). A container of an
        // `unhealthy` image never passes.
        const failing = t.rule.mode === 'unhealthy' && c.image === t.ruleImage;
        if (c.healthyAfter !== undefined && !failing) {
          this.after(t, c.healthyAfter, () => {
            if (c.lastStatus !== 'RUNNING') return;
            c.healthStatus = 'HEALTHY';
            t.version++;
            this.startContainers(t);
          });
        }
        if (c.init) {
          this.after(t, this.draw(this.ctx.timings.initContainerRunSeconds), () => {
            c.lastStatus = 'STOPPED';
            c.exitCode = 0;
            t.version++;
            this.startContainers(t);
          });
        }
      }
    }
    if (t.lastStatus === 'ACTIVATING' && t.containers.every((c) => !c.essential || c.lastStatus === 'RUNNING')) {
      t.startedAt = this.now();
      this.setStatus(t, 'RUNNING');
      this.scheduleModeEffects(t);
      this.kickOwner(t);
    }
  }

  /** Schedules what the task's failure mode (and its health check) does while RUNNING. */
  private scheduleModeEffects(t: SimTask): void {
    const { timings } = this.ctx;
    const started = t.startedAt ?? this.now();
    const elapsed = (this.now() - started) / 1000;
    const rule = t.rule;
    if (rule.mode === 'crash-loop') {
      const runFor = rule.runSeconds ?? this.draw(timings.crashAfter);
      this.afterMode(t, Math.max(0, runFor - elapsed), () => this.crash(t));
    }
    if (rule.mode === 'spot-interruption' && t.capacityProviderName === 'FARGATE_SPOT') {
      const runFor = rule.runSeconds ?? timings.spotInterruptAfterSeconds;
      this.afterMode(t, Math.max(0, runFor - elapsed), () => this.interruptSpotTask(t));
    }
    const hc = t.healthCheck ?? { interval: 30, retries: 3, startPeriod: 0 };
    if (rule.mode === 'unhealthy') {
      const failAfter = hc.startPeriod + hc.interval * hc.retries;
      this.afterMode(t, Math.max(0, failAfter - elapsed), () => this.becomeUnhealthy(t));
    } else if (t.healthCheck) {
      const healthyAfter = Math.min(hc.interval, hc.startPeriod + hc.interval);
      this.afterMode(t, Math.max(0, healthyAfter - elapsed), () => {
        this.setHealth(t, 'HEALTHY');
        this.markStable(t);
      });
    } else {
      this.afterMode(t, Math.max(0, timings.stableAfterSeconds - elapsed), () => this.markStable(t));
    }
  }

  /** A task that became healthy resets its deployment's failure count (resetOnHealthyTask). */
  private markStable(t: SimTask): void {
    const svc = this.serviceOf(t);
    if (!svc) return;
    const d = svc.deployments.find((x) => x.id === t.deploymentId);
    if (d && d.rolloutState === 'IN_PROGRESS' && d.failedTasks > 0) {
      d.failedTasks = 0;
      d.updatedAt = this.now();
    }
    this.kick(svc);
  }

  private setHealth(t: SimTask, h: 'HEALTHY' | 'UNHEALTHY'): void {
    if (!isLive(t)) return;
    t.healthStatus = h;
    const checked = t.containers.filter((c) => c.hasHealthCheck);
    // Without a container health check the failure mode stands in for one on the matched image.
    const targets = checked.length > 0 ? checked : t.containers.filter((c) => c.image === t.ruleImage);
    for (const c of targets) c.healthStatus = h;
    t.version++;
    this.kickOwner(t);
  }

  private failToStart(t: SimTask): void {
    const reason = t.rule.reason ?? stoppedReason.cannotPull(t.ruleImage);
    for (const c of t.containers) {
      c.lastStatus = 'STOPPED';
      if (c.image === t.ruleImage) c.reason = reason;
    }
    t.pullStoppedAt = this.now();
    this.stopTask(t, 'TaskFailedToStart', reason);
    this.recordFailure(t);
  }

  /**
   * The crash-looping image's containers exit. An essential one stops the task
   * (EssentialContainerExited); a non-essential one only stops itself, and the task runs on (ECS:
   * "If the essential parameter of a container is marked as false, its failure doesn't affect the
   * rest of the containers in a task").
   */
  private crash(t: SimTask): void {
    if (!isLive(t)) return;
    const exitCode = t.rule.exitCode ?? 1;
    let essential = false;
    for (const c of t.containers) {
      if (c.image === t.ruleImage && c.lastStatus === 'RUNNING') {
        c.lastStatus = 'STOPPED';
        c.exitCode = exitCode;
        essential ||= c.essential;
      }
    }
    if (!essential) {
      t.version++;
      this.kickOwner(t);
      return;
    }
    this.stopTask(t, 'EssentialContainerExited', stoppedReason.essentialExited(), { fast: true });
    this.recordFailure(t);
  }

  private becomeUnhealthy(t: SimTask): void {
    if (!isLive(t)) return;
    this.setHealth(t, 'UNHEALTHY');
    const svc = this.serviceOf(t);
    if (!svc) return; // standalone tasks stay UNHEALTHY
    const graceEnd = (t.startedAt ?? 0) + (svc.healthCheckGracePeriodSeconds ?? 0) * 1000;
    const replace = () => {
      if (!isLive(t)) return;
      this.pushEvent(svc, serviceEvent.failedHealthChecks(svc.name, t.id));
      this.stopTask(t, 'ServiceSchedulerInitiated', stoppedReason.failedHealthChecks());
      this.pushEvent(svc, serviceEvent.stopped(svc.name, [t.id]));
      this.recordFailure(t);
    };
    if (graceEnd > this.now()) this.afterMode(t, (graceEnd - this.now()) / 1000, replace);
    else replace();
  }

  private interruptSpotTask(t: SimTask): void {
    if (!isLive(t)) return;
    this.stopTask(t, 'SpotInterruption', stoppedReason.spot());
  }

  /**
   * Stops a task: desiredStatus STOPPED now, then DEACTIVATING -> STOPPING -> DEPROVISIONING ->
   * STOPPED on the clock (a task that never ran goes straight to DEPROVISIONING). No-op for a task
   * already stopping.
   * @param opts.fast the essential container already exited: skip the SIGTERM wait.
   */
  stopTask(t: SimTask, stopCode: StopCode, reason: string, opts: { fast?: boolean } = {}): void {
    if (!isLive(t)) return;
    const { timings } = this.ctx;
    for (const h of t.timers) h.cancel();
    t.timers = [];
    this.cancelModeTimers(t);
    t.desiredStatus = 'STOPPED';
    t.stoppingAt = this.now();
    t.stopCode = stopCode;
    t.stoppedReason = reason;
    const ran = t.lastStatus === 'RUNNING' || t.lastStatus === 'ACTIVATING';
    if (!ran) {
      this.setStatus(t, 'DEPROVISIONING');
      this.after(t, this.draw(timings.deprovisioning), () => this.toStopped(t));
    } else {
      this.setStatus(t, 'DEACTIVATING');
      this.after(t, this.draw(timings.deactivating), () => {
        this.setStatus(t, 'STOPPING');
        const wait = opts.fast ? this.draw([1, 2]) : this.draw(timings.stopping);
        this.after(t, wait, () => {
          t.executionStoppedAt = this.now();
          for (const c of t.containers) {
            if (c.lastStatus !== 'STOPPED') {
              c.lastStatus = 'STOPPED';
              c.exitCode ??= 0;
            }
          }
          this.setStatus(t, 'DEPROVISIONING');
          this.after(t, this.draw(timings.deprovisioning), () => this.toStopped(t));
        });
      });
    }
    this.kickOwner(t);
  }

  private toStopped(t: SimTask): void {
    t.stoppedAt = this.now();
    t.executionStoppedAt ??= t.stoppedAt;
    for (const c of t.containers) c.lastStatus = 'STOPPED';
    this.setStatus(t, 'STOPPED');
    t.timers = [];
    this.ctx.clock.after(this.ctx.timings.stoppedTaskRetentionSeconds, () => {
      const tasks = this.ctx.cluster(t.cluster)?.tasks;
      if (!tasks) return;
      tasks.delete(t.id);
      if (t.service !== undefined) this.serviceTasks(tasks, t.service)?.delete(t);
    });
    this.kickOwner(t);
  }

  /** Stops RUNNING FARGATE_SPOT tasks now (the control surface's Spot interruption). */
  interruptSpot(tasks: Iterable<SimTask>): string[] {
    const ids: string[] = [];
    for (const t of tasks) {
      if (isLive(t) && t.capacityProviderName === 'FARGATE_SPOT' && t.lastStatus === 'RUNNING') {
        this.interruptSpotTask(t);
        ids.push(t.id);
      }
    }
    return ids;
  }

  /** Re-decides the failure mode of every live task after the rules changed. */
  rulesChanged(tasks: Iterable<SimTask>): void {
    for (const t of tasks) {
      if (!isLive(t)) continue;
      const td = this.ctx.taskDefinition(t.taskDefinitionArn);
      const { rule, image } = ruleForTask(this.ctx.rules(), td?.containerDefinitions ?? t.containers);
      if (rule.mode === t.rule.mode && image === t.ruleImage && JSON.stringify(rule) === JSON.stringify(t.rule)) continue;
      t.rule = rule;
      t.ruleImage = image;
      if (t.lastStatus === 'RUNNING') {
        this.cancelModeTimers(t);
        if (rule.mode !== 'unhealthy' && t.healthStatus === 'UNHEALTHY') this.setHealth(t, 'HEALTHY');
        this.scheduleModeEffects(t);
      }
    }
  }
}

function rank(t: SimTask): number {
  // Lower stops first during scale-in: tasks not yet running before running ones.
  return t.lastStatus === 'RUNNING' ? 1 : 0;
}

function resolvePlatformVersion(v: string | undefined): string {
  return !v || v === 'LATEST' ? '1.4.0' : v;
}

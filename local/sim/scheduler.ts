/**
 * The simulated ECS service scheduler on the virtual clock (docs/ecs-facts.md §3-§5; Amazon ECS
 * Developer Guide, "Deploy Amazon ECS services by replacing tasks"): each service is kept at its
 * desiredCount; a rolling deployment starts new tasks within maximumPercent and stops old ones
 * while at least minimumHealthyPercent stay healthy; repeated failures back off further launches
 * (up to 15 minutes). The task lifecycle is ./task-lifecycle, deployments and the circuit breaker
 * ./rollouts. Durations are drawn from a seeded generator, so a run is reproducible.
 */
import { ruleForTask } from './failure-modes';
import { serviceEvent, stoppedReason, type StopCode } from './messages';
import { NativeDeployments } from './native-deployments';
import { Rollouts } from './rollouts';
import { isHealthyRunning, isLive, type LaunchRequest, type SchedulerContext } from './scheduler-context';
import { PENDING_STATES, type DeploymentTemplate, type SimCluster, type SimDeployment, type SimService, type SimServiceDeployment, type SimTask, type Tag } from './state';
import { TaskLifecycle } from './task-lifecycle';
import { LAUNCH_WINDOW_MS, MAX_LAUNCHES_PER_MINUTE, MAX_SERVICE_EVENTS, WARNING_REPEAT_MS } from './timings';

export { DEFAULT_START_TIMEOUT_SECONDS, DEFAULT_TIMINGS, MAX_LAUNCHES_PER_MINUTE, MAX_SERVICE_DEPLOYMENTS, MAX_SERVICE_EVENTS, type SimTimings } from './timings';
export { circuitBreakerThreshold } from './rollouts';
export { isHealthyRunning, isLive, type LaunchRequest, type SchedulerContext } from './scheduler-context';

export class Scheduler {
  private readonly evaluating = new Set<SimService>();
  private readonly tasks: TaskLifecycle;
  private readonly rollouts: Rollouts;
  /** BLUE_GREEN, LINEAR and CANARY deployments. */
  readonly native: NativeDeployments;

  constructor(readonly ctx: SchedulerContext) {
    this.tasks = new TaskLifecycle(ctx, {
      kick: (svc) => this.kick(svc),
      recordFailure: (t) => this.rollouts.recordFailure(t),
      markStable: (t) => this.rollouts.markStable(t),
      pushEvent: (svc, message) => this.pushEvent(svc, message),
    });
    this.native = new NativeDeployments(this);
    this.rollouts = new Rollouts(this, this.native);
  }

  private now(): number {
    return this.ctx.clock.nowMs();
  }

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


  /** The service's tasks still describable, in start order. */
  tasksOf(svc: SimService): SimTask[] {
    return this.tasks.tasksOf(svc);
  }

  /** The service that started a task, if it is still that service. */
  serviceOf(t: SimTask): SimService | undefined {
    return this.tasks.serviceOf(t);
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

  /** A new PRIMARY deployment of `template` (see Rollouts.startDeployment). */
  startDeployment(svc: SimService, template: DeploymentTemplate, reason?: string, rollback?: { of: SimDeployment; revisionArn: string }): SimDeployment {
    return this.rollouts.startDeployment(svc, template, reason, rollback);
  }

  /** Adds a service event (the newest first, at most 100 kept). */
  pushEvent(svc: SimService, message: string): void {
    svc.events.unshift({ id: this.ctx.rng.uuid(), createdAt: this.now(), message });
    if (svc.events.length > MAX_SERVICE_EVENTS) svc.events.length = MAX_SERVICE_EVENTS;
  }

  /**
   * Emits a warning event unless the same one was emitted in the last six hours.
   * @returns true when it was emitted.
   */
  warn(svc: SimService, message: string): boolean {
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
    const primary = svc.deployments[0];
    if (primary === undefined) {
      // An EXTERNAL service without task sets: nothing runs; a deleted one is INACTIVE at once.
      if (svc.status === 'DRAINING') {
        svc.status = 'INACTIVE';
        svc.inactiveAt = this.now();
      }
      return;
    }
    if (svc.status === 'DRAINING') return this.drain(svc, cluster, primary);
    this.replaceTasks(svc, primary);
    this.startPrimaryTasks(svc, cluster, primary);
    this.dropDrainedDeployments(svc);
    this.checkSteadyState(svc);
    this.native.advance(svc);
  }

  /** A DRAINING service stops its tasks and becomes INACTIVE once they all stopped. */
  private drain(svc: SimService, cluster: SimCluster, primary: SimDeployment): void {
    const tasks = this.tasksOf(svc);
    this.stopByScheduler(svc, tasks.filter(isLive), primary);
    if (!tasks.every((t) => t.lastStatus === 'STOPPED')) return;
    const now = this.now();
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

  /**
   * Scales the primary in to desiredCount (the least advanced first, newest first), and stops old
   * deployments' tasks while at least minimumHealthyPercent stay healthy.
   */
  private replaceTasks(svc: SimService, primary: SimDeployment): void {
    const desired = svc.desiredCount;
    const live = this.tasksOf(svc).filter(isLive);
    const primaryLive = live.filter((t) => t.deploymentId === primary.id);
    const kept = this.native.keptDeployment(svc);
    const oldLive = live.filter((t) => t.deploymentId !== primary.id && t.deploymentId !== kept);
    if (primaryLive.length > desired) {
      const order = [...primaryLive].sort((a, b) => rank(a) - rank(b) || b.createdAt - a.createdAt);
      this.stopByScheduler(svc, order.slice(0, primaryLive.length - desired), primary);
    }
    if (primary.rolloutState === 'FAILED' || oldLive.length === 0) return;
    const minHealthy = Math.ceil((desired * svc.deploymentConfiguration.minimumHealthyPercent) / 100);
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

  /** Starts tasks for the primary within maximumPercent (counting tasks not yet STOPPED). */
  private startPrimaryTasks(svc: SimService, cluster: SimCluster, primary: SimDeployment): void {
    const desired = svc.desiredCount;
    const liveNow = this.tasksOf(svc).filter(isLive);
    const primaryLiveNow = liveNow.filter((t) => t.deploymentId === primary.id).length;
    const missing = desired - primaryLiveNow;
    if (missing <= 0 || primary.rolloutState === 'FAILED' || this.native.holdsLaunches(svc, primary)) return;
    // A native deployment scales a full set of green tasks up beside blue.
    const native = this.native.keptDeployment(svc) !== undefined;
    const notStopped = this.tasksOf(svc).filter((t) => t.lastStatus !== 'STOPPED').length;
    const oldRemaining = liveNow.length - primaryLiveNow;
    const maxTasks = Math.floor((desired * svc.deploymentConfiguration.maximumPercent) / 100);
    const room = native || !(oldRemaining > 0 || notStopped > primaryLiveNow) ? missing : Math.max(0, maxTasks - notStopped);
    const n = Math.min(missing, room);
    if (n <= 0) return;
    if (this.now() < svc.launchBackoffUntil) this.retryAt(svc, svc.launchBackoffUntil);
    else this.launchForService(svc, cluster, primary, n);
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
    const kept = this.native.keptDeployment(svc);
    svc.deployments = svc.deployments.filter(
      (d, i) => i === 0 || d.id === kept || tasks.some((t) => t.deploymentId === d.id && t.lastStatus !== 'STOPPED'),
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
    if (primary.rolloutState === 'IN_PROGRESS' && !this.native.holdsCompletion(svc)) this.rollouts.complete(svc, primary);
    if (primary.rolloutState === 'IN_PROGRESS') return;
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


  /** StopServiceDeployment: rolls the service deployment back (see Rollouts.stop). */
  stopServiceDeployment(svc: SimService, sd: SimServiceDeployment, reason: string): void {
    this.rollouts.stop(svc, sd, reason);
    this.kick(svc);
  }

  /** Creates a task in PROVISIONING and schedules its lifecycle. */
  launch(req: LaunchRequest): SimTask {
    return this.tasks.launch(req);
  }

  /** Stops a task on the clock (see TaskLifecycle.stopTask). */
  stopTask(t: SimTask, stopCode: StopCode, reason: string, opts: { fast?: boolean } = {}): void {
    this.tasks.stopTask(t, stopCode, reason, opts);
  }

  /** Stops RUNNING FARGATE_SPOT tasks now (the control surface's Spot interruption). */
  interruptSpot(tasks: Iterable<SimTask>): string[] {
    return this.tasks.interruptSpot(tasks);
  }

  /** Re-decides the failure mode of every live task after the rules changed. */
  rulesChanged(tasks: Iterable<SimTask>): void {
    this.tasks.rulesChanged(tasks);
  }
}

function rank(t: SimTask): number {
  // Lower stops first during scale-in: tasks not yet running before running ones.
  return t.lastStatus === 'RUNNING' ? 1 : 0;
}

/**
 * The Fargate task lifecycle on the virtual clock (Amazon ECS Developer Guide, "Task lifecycle"):
 * PROVISIONING -> PENDING -> ACTIVATING -> RUNNING, and when stopped DEACTIVATING -> STOPPING ->
 * DEPROVISIONING -> STOPPED; containers start in their dependsOn order; failure modes (pull
 * errors, crash loops, failing health checks, Spot interruptions) act on their timers. Stopped
 * tasks stay describable for an hour. What a task's fate means for its service (failure counts,
 * the circuit breaker) is the owner's ({@link TaskOwner}).
 */
import type { TimerHandle } from './clock';
import { ruleForTask } from './failure-modes';
import { serviceEvent, stoppedReason, type StopCode } from './messages';
import { isLive, type LaunchRequest, type SchedulerContext } from './scheduler-context';
import type { LastStatus, SimContainer, SimService, SimTask } from './state';
import { DEFAULT_START_TIMEOUT_SECONDS } from './timings';

/** What the lifecycle tells the service scheduler. */
export interface TaskOwner {
  /** Re-evaluate the service soon. */
  kick(svc: SimService): void;
  /** A task failed (to start, or while running): count it against its deployment. */
  recordFailure(t: SimTask): void;
  /** A task has run long enough, or passed its health check. */
  markStable(t: SimTask): void;
  pushEvent(svc: SimService, message: string): void;
}

export class TaskLifecycle {
  /** Mode timers (crash, health, spot) per task id, separate from lifecycle timers. */
  private readonly modeTimers = new Map<string, TimerHandle[]>();

  constructor(
    private readonly ctx: SchedulerContext,
    private readonly owner: TaskOwner,
  ) {}

  private now(): number {
    return this.ctx.clock.nowMs();
  }

  private draw([min, max]: [number, number]): number {
    return this.ctx.rng.between(min, max);
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

  /** The service's tasks still describable, in start order (none of an older service of that name). */
  tasksOf(svc: SimService): SimTask[] {
    const cluster = this.ctx.cluster(svc.cluster);
    if (!cluster) return [];
    const set = this.serviceTasks(cluster.tasks, svc.name);
    if (!set) return [];
    const out: SimTask[] = [];
    for (const t of set) if (t.createdAt >= svc.createdAt && cluster.tasks.get(t.id) === t) out.push(t);
    return out;
  }

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

  serviceOf(t: SimTask): SimService | undefined {
    if (!t.service) return undefined;
    const svc = this.ctx.cluster(t.cluster)?.services.get(t.service);
    return svc && svc.createdAt <= t.createdAt ? svc : undefined;
  }

  private kickOwner(t: SimTask): void {
    const svc = this.serviceOf(t);
    if (svc) this.owner.kick(svc);
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
        this.owner.recordFailure(t);
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
        this.owner.markStable(t);
      });
    } else {
      this.afterMode(t, Math.max(0, timings.stableAfterSeconds - elapsed), () => this.owner.markStable(t));
    }
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
    this.owner.recordFailure(t);
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
    this.owner.recordFailure(t);
  }

  private becomeUnhealthy(t: SimTask): void {
    if (!isLive(t)) return;
    this.setHealth(t, 'UNHEALTHY');
    const svc = this.serviceOf(t);
    if (!svc) return; // standalone tasks stay UNHEALTHY
    const graceEnd = (t.startedAt ?? 0) + (svc.healthCheckGracePeriodSeconds ?? 0) * 1000;
    const replace = () => {
      if (!isLive(t)) return;
      this.owner.pushEvent(svc, serviceEvent.failedHealthChecks(svc.name, t.id));
      this.stopTask(t, 'ServiceSchedulerInitiated', stoppedReason.failedHealthChecks());
      this.owner.pushEvent(svc, serviceEvent.stopped(svc.name, [t.id]));
      this.owner.recordFailure(t);
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

function resolvePlatformVersion(v: string | undefined): string {
  return !v || v === 'LATEST' ? '1.4.0' : v;
}

/**
 * Deployments and service deployments (Amazon ECS Developer Guide, "Deploy Amazon ECS services by
 * replacing tasks", "How the Amazon ECS deployment circuit breaker detects failures", "View
 * service history using Amazon ECS service deployments"): a new deployment rolls out a new service
 * revision as a new service deployment; it completes when the service is steady on it; the circuit
 * breaker fails it at min(200, max(3, ceil(0.5 x desiredCount))) failed tasks and, with rollback,
 * runs the last completed revision again within the failed service deployment.
 */
import { rolloutReason, serviceEvent } from './messages';
import { activeRun, type NativeDeployments } from './native-deployments';
import type { SchedulerContext } from './scheduler-context';
import type { DeploymentTemplate, SimDeployment, SimService, SimServiceDeployment, SimTask } from './state';
import { MAX_LAUNCH_BACKOFF_SECONDS, MAX_SERVICE_DEPLOYMENTS } from './timings';

/** What the rollouts need of the service scheduler. */
export interface RolloutHost {
  readonly ctx: SchedulerContext;
  kick(svc: SimService): void;
  pushEvent(svc: SimService, message: string): void;
  /** @returns true when the warning was emitted (not repeated within six hours). */
  warn(svc: SimService, message: string): boolean;
  serviceOf(t: SimTask): SimService | undefined;
}

/** Circuit breaker threshold (docs/ecs-facts.md §4): min(200, max(3, ceil(0.5 x desiredCount))). */
export function circuitBreakerThreshold(desiredCount: number): number {
  return Math.min(200, Math.max(3, Math.ceil(0.5 * desiredCount)));
}

/** A service deployment in progress ends when another one starts. */
const ONGOING = new Set(['IN_PROGRESS', 'PENDING', 'ROLLBACK_IN_PROGRESS']);

export class Rollouts {
  constructor(
    private readonly host: RolloutHost,
    private readonly native: NativeDeployments,
  ) {}

  private now(): number {
    return this.host.ctx.clock.nowMs();
  }

  /**
   * Creates a new PRIMARY deployment; the previous PRIMARY becomes ACTIVE. Like ECS, each one
   * rolls out a new service revision as a new service deployment (the one in progress, if any,
   * is STOPPED), except a circuit-breaker rollback (`rollback.of`, the failed deployment): it runs
   * `rollback.revisionArn` again within the failed deployment's service deployment, which goes to
   * ROLLBACK_IN_PROGRESS.
   */
  startDeployment(svc: SimService, template: DeploymentTemplate, reason?: string, rollback?: { of: SimDeployment; revisionArn: string }): SimDeployment {
    const { rng } = this.host.ctx;
    const now = this.now();
    const id = `ecs-svc/${rng.digits(19)}`;
    const sources = [...new Set(svc.deployments.map((d) => d.serviceRevisionArn))];
    const previous = svc.deployments[0];
    for (const d of svc.deployments) {
      d.status = 'ACTIVE';
      d.updatedAt = now;
    }
    const ofRollback = rollback ? svc.serviceDeployments.find((x) => x.arn === rollback.of.serviceDeploymentArn) : undefined;
    const record = rollback && ofRollback ? this.rollingBack(ofRollback, rollback.revisionArn) : this.newServiceDeployment(svc, template, sources);
    const d: SimDeployment = {
      ...structuredClone(template),
      id,
      serviceRevisionArn: record.revisionArn,
      serviceDeploymentArn: record.serviceDeploymentArn,
      status: 'PRIMARY',
      failedTasks: 0,
      createdAt: now,
      updatedAt: now,
      rolloutState: 'IN_PROGRESS',
      rolloutStateReason: reason ?? rolloutReason.inProgress(id),
    };
    svc.deployments.unshift(d);
    const sd = this.serviceDeploymentOf(svc, d);
    if (sd && !rollback) this.native.begin(svc, sd, d, previous);
    this.host.ctx.events.deployment(svc, d, 'INFO', 'SERVICE_DEPLOYMENT_IN_PROGRESS', d.rolloutStateReason ?? rolloutReason.inProgress(id));
    svc.steady = false;
    // A new deployment resets ECS's launch backoff (docs/ecs-facts.md §4).
    svc.consecutiveFailures = 0;
    svc.launchBackoffUntil = 0;
    this.host.kick(svc);
    return d;
  }

  /** The failed service deployment goes to ROLLBACK_IN_PROGRESS, running `revisionArn` again. */
  private rollingBack(sd: SimServiceDeployment, revisionArn: string): { revisionArn: string; serviceDeploymentArn: string } {
    const now = this.now();
    sd.status = 'ROLLBACK_IN_PROGRESS';
    sd.statusReason = rolloutReason.failed();
    sd.rollback = { reason: rolloutReason.failed(), startedAt: now, serviceRevisionArn: revisionArn };
    sd.updatedAt = now;
    return { revisionArn, serviceDeploymentArn: sd.arn };
  }

  /** A new service revision of `template` and a new service deployment of it (the ongoing one STOPPED). */
  private newServiceDeployment(svc: SimService, template: DeploymentTemplate, sources: string[]): { revisionArn: string; serviceDeploymentArn: string } {
    const { arns, rng } = this.host.ctx;
    const now = this.now();
    const cfg = svc.deploymentConfiguration;
    const revisionArn = arns.serviceRevision(svc.cluster, svc.name, rng.digits(19));
    svc.serviceRevisions.set(revisionArn, { arn: revisionArn, createdAt: now, template: structuredClone(template) });
    for (const sd of svc.serviceDeployments) {
      if (!ONGOING.has(sd.status)) continue;
      sd.status = 'STOPPED';
      sd.statusReason = 'Service deployment stopped: a new service deployment started.';
      sd.stoppedAt = now;
      sd.updatedAt = now;
    }
    const serviceDeploymentArn = arns.serviceDeployment(svc.cluster, svc.name, rng.hex(22));
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
      configuration: structuredClone(cfg),
    });
    if (svc.serviceDeployments.length > MAX_SERVICE_DEPLOYMENTS) svc.serviceDeployments.length = MAX_SERVICE_DEPLOYMENTS;
    return { revisionArn, serviceDeploymentArn };
  }

  /** The service deployment a deployment belongs to. */
  serviceDeploymentOf(svc: SimService, d: SimDeployment): SimServiceDeployment | undefined {
    return svc.serviceDeployments.find((x) => x.arn === d.serviceDeploymentArn);
  }

  /** The service is steady on its PRIMARY deployment: it COMPLETED, and its service deployment ends. */
  complete(svc: SimService, primary: SimDeployment): void {
    const now = this.now();
    primary.rolloutState = 'COMPLETED';
    primary.rolloutStateReason = rolloutReason.completed(primary.id);
    primary.updatedAt = now;
    const sd = this.serviceDeploymentOf(svc, primary);
    if (sd && (sd.status === 'IN_PROGRESS' || sd.status === 'ROLLBACK_IN_PROGRESS')) {
      // ECS swaps the roles of the primary and alternate target groups after a native deployment.
      if (sd.native && sd.status === 'IN_PROGRESS') svc.targetGroupsSwapped = !svc.targetGroupsSwapped;
      sd.status = sd.status === 'IN_PROGRESS' ? 'SUCCESSFUL' : 'ROLLBACK_SUCCESSFUL';
      sd.finishedAt = now;
      sd.updatedAt = now;
    }
    this.host.pushEvent(svc, serviceEvent.deploymentCompleted(svc.name, primary.id));
    this.host.ctx.events.deployment(svc, primary, 'INFO', 'SERVICE_DEPLOYMENT_COMPLETED', primary.rolloutStateReason);
  }

  /** Counts a failed task against its deployment: circuit breaker and launch backoff. */
  recordFailure(t: SimTask): void {
    if (t.countedFailed || !t.service) return;
    t.countedFailed = true;
    const cluster = this.host.ctx.cluster(t.cluster);
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
      if (this.host.warn(svc, serviceEvent.startImpaired(svc.name))) this.host.ctx.events.serviceAction(svc, 'WARN', 'SERVICE_TASK_START_IMPAIRED');
    }
    const cb = svc.deploymentConfiguration.deploymentCircuitBreaker;
    if (cb.enable && d === svc.deployments[0] && d.failedTasks >= circuitBreakerThreshold(svc.desiredCount)) {
      this.tripCircuitBreaker(svc, d);
    }
    this.host.kick(svc);
  }

  /** A task that became healthy resets its deployment's failure count (resetOnHealthyTask). */
  markStable(t: SimTask): void {
    const svc = this.host.serviceOf(t);
    if (!svc) return;
    const d = svc.deployments.find((x) => x.id === t.deploymentId);
    if (d && d.rolloutState === 'IN_PROGRESS' && d.failedTasks > 0) {
      d.failedTasks = 0;
      d.updatedAt = this.now();
    }
    this.host.kick(svc);
  }

  /** The breaker fails the deployment and, with rollback, rolls back to the last completed one. */
  private tripCircuitBreaker(svc: SimService, d: SimDeployment): void {
    d.rolloutState = 'FAILED';
    d.rolloutStateReason = rolloutReason.failed();
    d.updatedAt = this.now();
    this.host.pushEvent(svc, serviceEvent.deploymentFailed(svc.name, d.id));
    this.host.ctx.events.deployment(svc, d, 'ERROR', 'SERVICE_DEPLOYMENT_FAILED', d.rolloutStateReason);
    const target = svc.lastCompleted;
    const sd = this.serviceDeploymentOf(svc, d);
    const native = activeRun(svc);
    if (native && native.run.greenDeploymentId === d.id && svc.deploymentConfiguration.deploymentCircuitBreaker.rollback) {
      return this.native.rollback(svc, native.sd, 'Service deployment rolled back because the circuit breaker threshold was exceeded.');
    }
    const rollingBack = svc.deploymentConfiguration.deploymentCircuitBreaker.rollback && target !== undefined && target.id !== d.id;
    if (sd && (sd.status === 'ROLLBACK_IN_PROGRESS' || !rollingBack)) {
      // A rollback that fails in turn, or a failure without rollback, ends the service deployment.
      sd.status = sd.status === 'ROLLBACK_IN_PROGRESS' ? 'ROLLBACK_FAILED' : 'STOPPED';
      sd.statusReason = rolloutReason.failed();
      sd.stoppedAt = this.now();
      sd.updatedAt = this.now();
    }
    if (rollingBack && target && sd?.status !== 'ROLLBACK_FAILED') this.rollBackTo(svc, d, target);
  }

  /**
   * StopServiceDeployment (stopType ROLLBACK): a native deployment rolls back to blue; a rolling
   * one deploys the last completed revision again as its rollback (STOPPED when there is none).
   */
  stop(svc: SimService, sd: SimServiceDeployment, reason: string): void {
    if (sd.native) return this.native.rollback(svc, sd, reason);
    const primary = svc.deployments[0];
    const target = svc.lastCompleted;
    primary.rolloutState = 'FAILED';
    primary.rolloutStateReason = reason;
    primary.updatedAt = this.now();
    if (!target || target.id === primary.id || target.serviceRevisionArn === primary.serviceRevisionArn) {
      Object.assign(sd, { status: 'STOPPED', statusReason: reason, stoppedAt: this.now(), updatedAt: this.now() });
      return;
    }
    this.rollBackTo(svc, primary, target);
    sd.statusReason = reason;
    if (sd.rollback) sd.rollback.reason = reason;
  }

  /** Points the service back at `target`'s configuration and deploys it as the rollback of `failed`. */
  private rollBackTo(svc: SimService, failed: SimDeployment, target: SimDeployment): void {
    this.host.pushEvent(svc, serviceEvent.rollingBack(svc.name, target.id));
    const template = templateOfDeployment(target);
    const copy = structuredClone(template);
    svc.taskDefinition = copy.taskDefinition;
    svc.launchType = copy.launchType;
    svc.capacityProviderStrategy = copy.capacityProviderStrategy;
    svc.platformVersion = copy.platformVersion;
    svc.networkConfiguration = copy.networkConfiguration;
    svc.loadBalancers = copy.loadBalancers;
    svc.vpcLatticeConfigurations = copy.vpcLatticeConfigurations;
    this.startDeployment(svc, template, rolloutReason.rollback(target.id), { of: failed, revisionArn: target.serviceRevisionArn });
  }
}

/** The template a deployment runs (its own copy of the service's fields). */
export function templateOfDeployment(d: SimDeployment): DeploymentTemplate {
  return {
    taskDefinition: d.taskDefinition,
    launchType: d.launchType,
    capacityProviderStrategy: d.capacityProviderStrategy,
    platformVersion: d.platformVersion,
    networkConfiguration: d.networkConfiguration,
    loadBalancers: d.loadBalancers,
    serviceConnectConfiguration: d.serviceConnectConfiguration,
    serviceConnectResources: d.serviceConnectResources,
    volumeConfigurations: d.volumeConfigurations,
    vpcLatticeConfigurations: d.vpcLatticeConfigurations,
  };
}

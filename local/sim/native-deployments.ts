/**
 * ECS's native deployment strategies, BLUE_GREEN, LINEAR and CANARY (Amazon ECS Developer Guide,
 * "Amazon ECS blue/green deployments", "linear deployments", "canary deployments", "Lifecycle
 * hooks for Amazon ECS service deployments"; API reference: ServiceDeployment,
 * DeploymentLifecycleHook, AdvancedConfiguration). A new service deployment of a service that
 * already runs (blue) goes through the lifecycle stages: RECONCILE_SERVICE, PRE_SCALE_UP,
 * SCALE_UP (a full set of green tasks beside blue), POST_SCALE_UP, TEST_TRAFFIC_SHIFT (test
 * traffic to green), POST_TEST_TRAFFIC_SHIFT, PRODUCTION_TRAFFIC_SHIFT (all at once, in linear
 * steps, or a canary then the rest, with bake timers between), POST_PRODUCTION_TRAFFIC_SHIFT,
 * BAKE_TIME (blue still running) and CLEAN_UP (blue stopped). Lifecycle hooks run at their
 * stages; a FAILED hook, a timed-out one (timeout action ROLLBACK), an alarm in ALARM, the
 * circuit breaker or StopServiceDeployment rolls back: traffic returns to blue, green stops.
 * Traffic weights are the simulator's model of the two target groups' listener rules.
 */
import type { DeploymentLifecycleHook } from '@aws-sdk/client-ecs';
import { rolloutReason, serviceEvent, stoppedReason } from './messages';
import { isLive, type SchedulerContext } from './scheduler-context';
import {
  LIFECYCLE_STAGES,
  type DeploymentConfig,
  type HookAnswer,
  type LifecycleStage,
  type NativeRun,
  type SimDeployment,
  type SimHookRun,
  type SimService,
  type SimServiceDeployment,
  type SimTask,
} from './state';
import type { TimerHandle } from './clock';

/** A hook target a test or scenario supplies: a local function, synchronous or not. */
export type HookTarget = (payload: HookPayload) => HookAnswer | Promise<HookAnswer>;

/** What a hook is invoked with (the Lambda hook's event, as the Developer Guide describes it). */
export interface HookPayload {
  executionId: string;
  lifecycleStage: string;
  resourceArn: string;
  executionDetails: {
    serviceArn: string;
    targetServiceRevisionArn: string;
    testTrafficWeights: Record<string, number>;
    productionTrafficWeights: Record<string, number>;
  };
  hookDetails?: unknown;
}

/** What the engine needs of the service scheduler. */
export interface NativeHost {
  readonly ctx: SchedulerContext;
  kick(svc: SimService): void;
  pushEvent(svc: SimService, message: string): void;
  tasksOf(svc: SimService): SimTask[];
  stopTask(t: SimTask, stopCode: 'ServiceSchedulerInitiated', reason: string): void;
}

type Hook = DeploymentLifecycleHook;

/** Seconds before an IN_PROGRESS hook is invoked again when it names no callBackDelay. */
const DEFAULT_CALLBACK_SECONDS = 30;
const DEFAULT_HOOK_TIMEOUT_MINUTES = 1440;
const ONGOING = new Set(['IN_PROGRESS', 'ROLLBACK_IN_PROGRESS', 'ROLLBACK_REQUESTED', 'STOP_REQUESTED']);

/** The native run of the service's newest service deployment while it is ongoing. */
export function activeRun(svc: SimService): { sd: SimServiceDeployment; run: NativeRun } | undefined {
  const sd = svc.serviceDeployments[0];
  return sd?.native && ONGOING.has(sd.status) ? { sd, run: sd.native } : undefined;
}

/**
 * Production traffic on green after each step of the shift (percent): BLUE_GREEN all at once,
 * CANARY the canary percent then all, LINEAR stepPercent more each step.
 */
export function shiftSteps(cfg: DeploymentConfig): number[] {
  if (cfg.strategy === 'CANARY') {
    const canary = Number((cfg.canaryConfiguration as { canaryPercent?: number } | undefined)?.canaryPercent ?? 5);
    return canary >= 100 ? [100] : [canary, 100];
  }
  if (cfg.strategy === 'LINEAR') {
    const step = Number((cfg.linearConfiguration as { stepPercent?: number } | undefined)?.stepPercent ?? 10);
    const out: number[] = [];
    for (let w = step; w < 100; w = Math.round((w + step) * 10) / 10) out.push(Math.round(w * 10) / 10);
    return [...out, 100];
  }
  return [100];
}

/** Minutes to wait after each step but the last (canaryBakeTimeInMinutes, stepBakeTimeInMinutes). */
function stepBakeMinutes(cfg: DeploymentConfig): number {
  if (cfg.strategy === 'CANARY') return Number((cfg.canaryConfiguration as { canaryBakeTimeInMinutes?: number } | undefined)?.canaryBakeTimeInMinutes ?? 10);
  if (cfg.strategy === 'LINEAR') return Number((cfg.linearConfiguration as { stepBakeTimeInMinutes?: number } | undefined)?.stepBakeTimeInMinutes ?? 6);
  return 0;
}

export class NativeDeployments {
  private readonly wakeUps = new WeakMap<SimService, TimerHandle>();

  constructor(private readonly host: NativeHost) {}

  private now(): number {
    return this.host.ctx.clock.nowMs();
  }

  /** Starts the native run of a new service deployment when the service has a blue deployment to replace. */
  begin(svc: SimService, sd: SimServiceDeployment, green: SimDeployment, blue: SimDeployment | undefined): void {
    const strategy = svc.deploymentConfiguration.strategy;
    if (strategy === 'ROLLING' || svc.deploymentController !== 'ECS' || !blue) return;
    sd.native = {
      strategy,
      stage: 'RECONCILE_SERVICE',
      blueDeploymentId: blue.id,
      greenDeploymentId: green.id,
      blueRevisionArn: blue.serviceRevisionArn,
      productionWeight: 0,
      testWeight: 0,
      step: 0,
      bakedStep: 0,
      preProductionDone: false,
      hooks: [],
      rolledBack: false,
    };
  }

  /** The green deployment launches no task before SCALE_UP. */
  holdsLaunches(svc: SimService, d: SimDeployment): boolean {
    const a = activeRun(svc);
    return !!a && !a.run.rolledBack && a.run.greenDeploymentId === d.id && LIFECYCLE_STAGES.indexOf(a.run.stage) < LIFECYCLE_STAGES.indexOf('SCALE_UP');
  }

  /** The blue deployment whose tasks stay until CLEAN_UP (or after a rollback, the primary again). */
  keptDeployment(svc: SimService): string | undefined {
    const a = activeRun(svc);
    if (!a || a.run.stage === 'CLEAN_UP' || a.run.rolledBack) return undefined;
    return a.run.blueDeploymentId;
  }

  /** The native run decides when the deployment completes: not before CLEAN_UP. */
  holdsCompletion(svc: SimService): boolean {
    const a = activeRun(svc);
    return !!a && !a.run.rolledBack && a.run.stage !== 'CLEAN_UP';
  }

  /** One pass of the state machine, after the scheduler's pass over the service. */
  advance(svc: SimService): void {
    const a = activeRun(svc);
    if (!a) return;
    const { sd, run } = a;
    if (run.rolledBack) return this.finishRollback(svc, sd, run);
    const alarm = this.alarmInAlarm(sd);
    if (alarm) return this.rollback(svc, sd, `Service deployment rolled back because the alarm ${alarm} is in ALARM state.`);
    for (let i = 0; i < 2 * LIFECYCLE_STAGES.length + 200 && this.stepOnce(svc, sd, run); i++);
  }

  /** @returns true when the run moved on (another step may follow at once). */
  private stepOnce(svc: SimService, sd: SimServiceDeployment, run: NativeRun): boolean {
    if (run.rolledBack) return false;
    if (run.waitUntil !== undefined) {
      if (this.now() < run.waitUntil) {
        this.wakeAt(svc, run.waitUntil);
        return false;
      }
      run.waitUntil = undefined;
    }
    switch (run.stage) {
      case 'SCALE_UP':
        return this.greenReady(svc, run) && this.enter(svc, sd, run, 'POST_SCALE_UP');
      case 'PRODUCTION_TRAFFIC_SHIFT':
        return this.shiftProduction(svc, sd, run);
      case 'BAKE_TIME':
        return this.enter(svc, sd, run, 'CLEAN_UP');
      case 'CLEAN_UP':
        return false;
      default: {
        if (this.runHooks(svc, sd, run, run.stage, run.stage) !== 'done') return false;
        if (run.stage === 'POST_TEST_TRAFFIC_SHIFT' && !run.preProductionDone) {
          if (this.runHooks(svc, sd, run, 'PRE_PRODUCTION_TRAFFIC_SHIFT', 'PRE_PRODUCTION_TRAFFIC_SHIFT') !== 'done') return false;
          run.preProductionDone = true;
        }
        return this.enter(svc, sd, run, LIFECYCLE_STAGES[LIFECYCLE_STAGES.indexOf(run.stage) + 1]);
      }
    }
  }

  private enter(svc: SimService, sd: SimServiceDeployment, run: NativeRun, stage: LifecycleStage): boolean {
    run.stage = stage;
    sd.updatedAt = this.now();
    const cfg = sd.configuration ?? svc.deploymentConfiguration;
    if (stage === 'TEST_TRAFFIC_SHIFT') run.testWeight = 100;
    if (stage === 'BAKE_TIME') run.waitUntil = this.now() + cfg.bakeTimeInMinutes * 60_000;
    // The scheduler's pass that runs this one ignores kicks: evaluate again once it is over.
    if (stage === 'SCALE_UP' || stage === 'CLEAN_UP') this.wakeAt(svc, this.now());
    return true;
  }

  /** Every green task RUNNING and healthy, as many as the service wants. */
  private greenReady(svc: SimService, run: NativeRun): boolean {
    const green = this.host.tasksOf(svc).filter((t) => t.deploymentId === run.greenDeploymentId && isLive(t));
    const healthy = green.filter((t) => t.lastStatus === 'RUNNING' && t.healthStatus !== 'UNHEALTHY' && (!t.healthCheck || t.healthStatus === 'HEALTHY'));
    return healthy.length >= svc.desiredCount;
  }

  /** One step of the production shift, its hooks, then the bake before the next step. */
  private shiftProduction(svc: SimService, sd: SimServiceDeployment, run: NativeRun): boolean {
    const cfg = sd.configuration ?? svc.deploymentConfiguration;
    const steps = shiftSteps(cfg);
    if (run.step === 0) {
      run.productionWeight = steps[0];
      run.step = 1;
      sd.updatedAt = this.now();
    }
    if (this.runHooks(svc, sd, run, 'PRODUCTION_TRAFFIC_SHIFT', `PRODUCTION_TRAFFIC_SHIFT#${run.step}`) !== 'done') return false;
    if (run.step >= steps.length) return this.enter(svc, sd, run, 'POST_PRODUCTION_TRAFFIC_SHIFT');
    if (run.bakedStep < run.step) {
      run.bakedStep = run.step;
      const minutes = stepBakeMinutes(cfg);
      if (minutes > 0) {
        run.waitUntil = this.now() + minutes * 60_000;
        return true;
      }
    }
    run.productionWeight = steps[run.step];
    run.step++;
    sd.updatedAt = this.now();
    return true;
  }

  /**
   * Runs the hooks configured for `stage` (once per `key`): 'done' when every one SUCCEEDED (or
   * timed out with action CONTINUE), 'waiting' while one is IN_PROGRESS or AWAITING_ACTION,
   * 'failed' when one failed or timed out with action ROLLBACK (the deployment rolls back).
   */
  private runHooks(svc: SimService, sd: SimServiceDeployment, run: NativeRun, stage: string, key: string): 'done' | 'waiting' | 'failed' {
    const cfg = sd.configuration ?? svc.deploymentConfiguration;
    const hooks = ((cfg.lifecycleHooks ?? []) as Hook[]).map((h, i) => ({ h, i })).filter(({ h }) => (h.lifecycleStages ?? []).includes(stage as never));
    let waiting = false;
    for (const { h, i } of hooks) {
      const hr = run.hooks.find((x) => x.key === `${key}#${i}`) ?? this.startHook(svc, sd, run, h, stage, `${key}#${i}`);
      this.checkHook(svc, sd, run, hr, h, stage);
      if (hr.status === 'SUCCEEDED' || (hr.status === 'TIMED_OUT' && hr.timeoutAction === 'CONTINUE')) continue;
      if (hr.status === 'FAILED' || hr.status === 'TIMED_OUT') {
        const why = hr.status === 'TIMED_OUT' ? 'timed out' : `failed${hr.reason ? `: ${hr.reason}` : ''}`;
        this.rollback(svc, sd, `Service deployment rolled back because the lifecycle hook ${hr.targetArn ?? hr.hookId} at ${stage} ${why}.`);
        return 'failed';
      }
      waiting = true;
    }
    return waiting ? 'waiting' : 'done';
  }

  private startHook(svc: SimService, sd: SimServiceDeployment, run: NativeRun, h: Hook, stage: string, key: string): SimHookRun {
    const timeout = (h.timeoutConfiguration ?? {}) as { timeoutInMinutes?: number; action?: string };
    const pause = h.targetType === 'PAUSE';
    const hr: SimHookRun = {
      key,
      stage,
      hookId: this.host.ctx.rng.uuid(),
      targetType: pause ? 'PAUSE' : 'AWS_LAMBDA',
      ...(h.hookTargetArn ? { targetArn: h.hookTargetArn } : {}),
      status: pause ? 'AWAITING_ACTION' : 'IN_PROGRESS',
      expiresAt: this.now() + (timeout.timeoutInMinutes ?? DEFAULT_HOOK_TIMEOUT_MINUTES) * 60_000,
      timeoutAction: timeout.action === 'CONTINUE' ? 'CONTINUE' : 'ROLLBACK',
      inFlight: false,
      ...(pause ? {} : { nextInvokeAt: this.now() }),
    };
    run.hooks.push(hr);
    if (pause) this.host.pushEvent(svc, `(service ${svc.name}) service deployment ${sd.arn} is waiting for ContinueServiceDeployment at ${stage}.`);
    return hr;
  }

  /** Times a hook out, or invokes a Lambda hook that is due. */
  private checkHook(svc: SimService, sd: SimServiceDeployment, run: NativeRun, hr: SimHookRun, h: Hook, stage: string): void {
    const pending = hr.status === 'IN_PROGRESS' || hr.status === 'AWAITING_ACTION';
    if (!pending) return;
    if (this.now() >= hr.expiresAt) {
      hr.status = 'TIMED_OUT';
      return;
    }
    if (hr.targetType === 'AWS_LAMBDA' && !hr.inFlight && hr.nextInvokeAt !== undefined && hr.nextInvokeAt <= this.now()) {
      this.invoke(svc, sd, run, hr, h, stage);
    }
    if (hr.status === 'IN_PROGRESS' || hr.status === 'AWAITING_ACTION') this.wakeAt(svc, Math.min(hr.expiresAt, hr.nextInvokeAt ?? Infinity));
  }

  private invoke(svc: SimService, sd: SimServiceDeployment, run: NativeRun, hr: SimHookRun, h: Hook, stage: string): void {
    hr.nextInvokeAt = undefined;
    const target = hr.targetArn ? this.host.ctx.hookTarget(hr.targetArn) : undefined;
    if (!target) return this.answer(hr, undefined, `the function ${hr.targetArn ?? '(none)'} could not be invoked (not found)`);
    let out: HookAnswer | Promise<HookAnswer>;
    try {
      out = target(this.payload(svc, sd, run, hr, h, stage));
    } catch (e) {
      return this.answer(hr, undefined, e instanceof Error ? e.message : String(e));
    }
    if (out && typeof (out as Promise<HookAnswer>).then === 'function') {
      hr.inFlight = true;
      (out as Promise<HookAnswer>).then(
        (a) => this.settle(svc, hr, a, undefined),
        (e: unknown) => this.settle(svc, hr, undefined, e instanceof Error ? e.message : String(e)),
      );
      return;
    }
    this.answer(hr, out as HookAnswer, undefined);
  }

  private settle(svc: SimService, hr: SimHookRun, a: HookAnswer | undefined, error: string | undefined): void {
    hr.inFlight = false;
    if (hr.status !== 'IN_PROGRESS') return;
    this.answer(hr, a, error);
    this.host.kick(svc);
  }

  /** Records a hook's answer; anything but SUCCEEDED, FAILED or IN_PROGRESS fails it. */
  private answer(hr: SimHookRun, a: HookAnswer | undefined, error: string | undefined): void {
    const status = a?.hookStatus;
    if (error !== undefined || (status !== 'SUCCEEDED' && status !== 'FAILED' && status !== 'IN_PROGRESS')) {
      hr.status = 'FAILED';
      hr.reason = error ?? `invalid hook answer ${JSON.stringify(a ?? null)}`;
      return;
    }
    if (status === 'IN_PROGRESS') {
      hr.nextInvokeAt = this.now() + Number(a?.callBackDelay ?? DEFAULT_CALLBACK_SECONDS) * 1000;
      return;
    }
    hr.status = status;
  }

  private payload(svc: SimService, sd: SimServiceDeployment, run: NativeRun, hr: SimHookRun, h: Hook, stage: string): HookPayload {
    const target = sd.targetServiceRevisionArn;
    return {
      executionId: hr.hookId,
      lifecycleStage: stage,
      resourceArn: sd.arn,
      executionDetails: {
        serviceArn: svc.arn,
        targetServiceRevisionArn: target,
        testTrafficWeights: { [run.blueRevisionArn]: 100 - run.testWeight, [target]: run.testWeight },
        productionTrafficWeights: { [run.blueRevisionArn]: 100 - run.productionWeight, [target]: run.productionWeight },
      },
      ...(h.hookDetails !== undefined ? { hookDetails: structuredClone(h.hookDetails) } : {}),
    };
  }

  /** ContinueServiceDeployment on a PAUSE hook: CONTINUE succeeds it, ROLLBACK rolls the deployment back. */
  continueHook(svc: SimService, sd: SimServiceDeployment, hr: SimHookRun, action: 'CONTINUE' | 'ROLLBACK'): void {
    if (action === 'ROLLBACK') {
      hr.status = 'FAILED';
      this.rollback(svc, sd, `Service deployment rolled back by ContinueServiceDeployment at ${hr.stage}.`);
    } else hr.status = 'SUCCEEDED';
    this.host.kick(svc);
  }

  /**
   * Rolls the native deployment back: traffic returns to blue, green is FAILED and its tasks stop,
   * blue is PRIMARY again; the service deployment is ROLLBACK_IN_PROGRESS until green stopped.
   */
  rollback(svc: SimService, sd: SimServiceDeployment, reason: string): void {
    const run = sd.native;
    if (!run || run.rolledBack) return;
    const now = this.now();
    run.rolledBack = true;
    run.productionWeight = 0;
    run.testWeight = 0;
    run.waitUntil = undefined;
    Object.assign(sd, { status: 'ROLLBACK_IN_PROGRESS', statusReason: reason, updatedAt: now });
    sd.rollback = { reason, startedAt: now, serviceRevisionArn: run.blueRevisionArn };
    const green = svc.deployments.find((d) => d.id === run.greenDeploymentId);
    const blue = svc.deployments.find((d) => d.id === run.blueDeploymentId);
    if (green) {
      Object.assign(green, { rolloutState: 'FAILED', rolloutStateReason: rolloutReason.failed(), status: 'ACTIVE', updatedAt: now });
      this.host.pushEvent(svc, serviceEvent.deploymentFailed(svc.name, green.id));
      this.host.ctx.events.deployment(svc, green, 'ERROR', 'SERVICE_DEPLOYMENT_FAILED', reason);
    }
    if (blue) this.restoreBlue(svc, blue);
    for (const t of this.host.tasksOf(svc)) {
      if (t.deploymentId === run.greenDeploymentId && isLive(t)) this.host.stopTask(t, 'ServiceSchedulerInitiated', stoppedReason.scaling(blue?.id ?? ''));
    }
    this.wakeAt(svc, now);
  }

  /** Blue is the PRIMARY deployment again, and the service points at its configuration. */
  private restoreBlue(svc: SimService, blue: SimDeployment): void {
    svc.deployments = [blue, ...svc.deployments.filter((d) => d !== blue)];
    blue.status = 'PRIMARY';
    blue.updatedAt = this.now();
    svc.taskDefinition = blue.taskDefinition;
    svc.launchType = blue.launchType;
    svc.capacityProviderStrategy = blue.capacityProviderStrategy;
    svc.platformVersion = blue.platformVersion;
    svc.networkConfiguration = blue.networkConfiguration;
    svc.loadBalancers = structuredClone(blue.loadBalancers);
    svc.vpcLatticeConfigurations = blue.vpcLatticeConfigurations;
  }

  /** ROLLBACK_SUCCESSFUL once every green task stopped. */
  private finishRollback(svc: SimService, sd: SimServiceDeployment, run: NativeRun): void {
    if (this.host.tasksOf(svc).some((t) => t.deploymentId === run.greenDeploymentId && t.lastStatus !== 'STOPPED')) return;
    const now = this.now();
    Object.assign(sd, { status: 'ROLLBACK_SUCCESSFUL', finishedAt: now, updatedAt: now });
  }

  /** The first alarm of the deployment's configuration in ALARM, when alarms roll back. */
  private alarmInAlarm(sd: SimServiceDeployment): string | undefined {
    const alarms = sd.configuration?.alarms;
    if (!alarms?.enable || !alarms.rollback) return undefined;
    return (alarms.alarmNames ?? []).find((name) => this.host.ctx.alarmState(name) === 'ALARM');
  }

  /** Evaluates the service again at `at` (one wake-up per service, the earliest). */
  private wakeAt(svc: SimService, at: number): void {
    if (!Number.isFinite(at)) return;
    const current = this.wakeUps.get(svc);
    if (current && current.at <= at && current.at > this.now()) return;
    current?.cancel();
    this.wakeUps.set(svc, this.host.ctx.clock.schedule(Math.max(at, this.now()), () => {
      this.wakeUps.delete(svc);
      this.host.kick(svc);
    }));
  }
}

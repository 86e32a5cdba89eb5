/**
 * `SimulatedEcs`: the in-process core of the ECS simulator, usable without HTTP. `call(action,
 * input)` answers one ECS API action with ECS's request and response shapes (as the AWS SDK types
 * them), throwing {@link EcsApiError} with ECS's error types and wording. Control methods do what
 * a person does by hand in the console, out of band (never recorded as API calls).
 *
 * Behaviour follows docs/ecs-facts.md (batch and page limits, throttling, service lifecycle,
 * deployments, circuit breaker, stop codes, task definition defaults) and the Amazon ECS API
 * reference for each action.
 */
import { buildHandlers, type Handler } from './api/handlers';
import { createCluster } from './api/clusters';
import { assertCount } from './api/inputs';
import { tagsOf } from './api/tags';
import { Arns } from './arns';
import { CallLog, FaultInjector, Throttle, keyFields, type CallCount, type CallFilter, type CallRecord, type FaultSpec } from './calls';
import { VirtualClock } from './clock';
import { SimCore } from './core';
import { templateOf } from './deployment-config';
import { EcsApiError, invalidParameter, throttled } from './errors';
import { DEFAULT_FAILURE_RULES, failureRuleSchema, type FailureRule } from './failure-modes';
import { stoppedReason } from './messages';
import { SeededRandom } from './random';
import { DEFAULT_TIMINGS, Scheduler, isLive, type SimTimings } from './scheduler';
import { snapshotOf, type SimSnapshot, type SimVpc } from './snapshot';
import { emptyState, type SimTask } from './state';
import { SimEventBus, assumedRoleIdentity, iamUserIdentity, isDeliveredApiCall, type Caller } from './events';
import { own } from '../../lambda/core/dict';
import { ecsAuthorizations, type AuthorizationView } from './authorization';
import { accessDeniedMessage, evaluatePolicy } from './iam';
import { taskToWire } from './wire';
import { hookTargetOf } from './hook-targets';
import { listenerRules, type ListenerRuleState } from './listener-rules';
import type { HookTarget } from './native-deployments';
import type { HookAnswer } from './state';

export type { SimSnapshot, SimVpc } from './snapshot';

export interface SimulatedEcsOptions {
  /** Virtual seconds per real second; undefined (default) means a manual clock. */
  readonly speed?: number;
  /** Virtual time at start (default: now). */
  readonly startTime?: Date;
  /** Seed of every random choice (task durations, ids); default 1. */
  readonly seed?: number;
  /** ECS request throttling (default true). */
  readonly throttling?: boolean;
  /** Default `us-east-1`. */
  readonly region?: string;
  /** Default `123456789012`. */
  readonly accountId?: string;
  /**
   * Clusters created at start (and after reset), with the FARGATE and FARGATE_SPOT capacity
   * providers associated, as the console creates a Fargate cluster. A cluster made by
   * CreateCluster gets only the providers the call names.
   */
  readonly clusters?: string[];
  /**
   * The account's VPC as far as ECS looks it up: the subnets and security groups that exist.
   * Given, CreateService, UpdateService and RunTask refuse any other with ECS's
   * InvalidParameterException; not given, every subnet and security group id is taken as existing
   * (see docs/simulator.md, "Where it differs from real ECS").
   */
  readonly vpc?: SimVpc;
  /** Overrides of task lifecycle durations (virtual seconds). */
  readonly timings?: Partial<SimTimings>;
  /** Initial failure rules (default {@link DEFAULT_FAILURE_RULES}). */
  readonly failureRules?: FailureRule[];
  /**
   * Who calls with which access key id (the `Credential=` of a SigV4 `Authorization` header), for
   * the `userIdentity` of the CloudTrail events; an unknown key is the IAM user named after the key.
   */
  readonly callers?: Record<string, Caller>;
  /**
   * Who makes the control surface's hand edits (stopTask, stopServiceTasks, setDesiredCount,
   * setTaskDefinition), recorded as CloudTrail events as a console user's calls are (default
   * {@link SimulatedEcs.consoleCaller}: the role `Admin`, session `console-user`).
   */
  readonly handCaller?: Caller;
}

/** One out-of-band change made through the control surface. */
export interface ControlRecord {
  readonly at: Date;
  readonly command: string;
  readonly args: Record<string, unknown>;
  /** Always true: these are not ECS API calls (they never appear in `calls()`). */
  readonly outOfBand: true;
}

export class SimulatedEcs {
  readonly clock: VirtualClock;
  readonly region: string;
  readonly accountId: string;
  readonly arns: Arns;
  /** Real milliseconds added to each HTTP call (applied by the server). */
  latencyMs = 0;
  /**
   * ECS's events on the default EventBridge bus (`./events`): service actions, deployment state
   * changes, task state changes and the CloudTrail events of every write call; built only while
   * someone subscribes.
   */
  readonly events: SimEventBus;
  private readonly callers: Map<string, Caller>;
  private readonly handCaller: Caller;

  private readonly seed: number;
  private readonly startTime: Date | undefined;
  private readonly timings: SimTimings;
  private readonly initialClusters: string[];
  private readonly initialVpc: SimVpc | undefined;
  private readonly initialRules: FailureRule[];
  private readonly core: SimCore;
  private readonly throttle: Throttle;
  private readonly faultInjector: FaultInjector;
  private readonly log = new CallLog();
  private controlRecords: ControlRecord[] = [];
  private readonly handlers: Record<string, Handler>;

  constructor(opts: SimulatedEcsOptions = {}) {
    this.clock = new VirtualClock({ speed: opts.speed, startTime: opts.startTime });
    this.region = opts.region ?? 'us-east-1';
    this.accountId = opts.accountId ?? '123456789012';
    this.arns = new Arns({ region: this.region, accountId: this.accountId });
    this.seed = opts.seed ?? 1;
    this.startTime = opts.startTime;
    this.timings = { ...DEFAULT_TIMINGS, ...opts.timings };
    this.initialClusters = [...(opts.clusters ?? [])];
    this.initialVpc = opts.vpc ? { subnets: [...opts.vpc.subnets], securityGroups: [...opts.vpc.securityGroups] } : undefined;
    this.initialRules = (opts.failureRules ?? [...DEFAULT_FAILURE_RULES]).map((r) => failureRuleSchema.parse(r));
    this.core = new SimCore(this.clock, this.arns, this.timings, this.seed);
    this.core.rules = [...this.initialRules];
    this.throttle = new Throttle(opts.throttling ?? true);
    this.faultInjector = new FaultInjector(this.seed);
    this.handlers = buildHandlers(this.core);
    this.events = new SimEventBus({ account: this.accountId, region: this.region }, this.seed);
    this.callers = new Map(Object.entries(opts.callers ?? {}));
    this.handCaller = opts.handCaller ?? SimulatedEcs.consoleCaller(this.accountId);
    this.resetState();
  }

  /** A person in the console: role `Admin`, session `console-user`, the console's user agent. */
  static consoleCaller(accountId: string): Caller {
    return { identity: assumedRoleIdentity(accountId, 'Admin', 'console-user', 'ASIACONSOLEUSER00001'), userAgent: 'console.amazonaws.com', sourceIPAddress: '203.0.113.10' };
  }

  /** Who calls with `accessKeyId` (see the `callers` option); undefined: an anonymous local user. */
  callerOf(accessKeyId: string | undefined): Caller {
    const known = accessKeyId ? this.callers.get(accessKeyId) : undefined;
    if (known) return known;
    const key = accessKeyId || 'ANONYMOUS';
    return { identity: iamUserIdentity(this.accountId, key, key), userAgent: 'aws-sdk', sourceIPAddress: '127.0.0.1' };
  }

  /** Records `caller` as the one calling with `accessKeyId` from now on. */
  setCaller(accessKeyId: string, caller: Caller): void {
    this.callers.set(accessKeyId, caller);
  }

  /** ECS action names this simulator answers. */
  get actions(): string[] {
    return Object.keys(this.handlers);
  }

  // -------------------------------------------------------------------------------------------
  // The API
  // -------------------------------------------------------------------------------------------

  /**
   * Answers one ECS API call: runs due transitions, applies fault injection and throttling,
   * dispatches, and records the call.
   * @param action e.g. `DescribeServices` (the part after the dot of `X-Amz-Target`).
   * @param input the JSON request body.
   * @param caller who calls (default: {@link callerOf} an unknown key): the `userIdentity` of the
   *   CloudTrail event a write emits.
   * @returns the response body (Dates for timestamps).
   * @throws EcsApiError with ECS's `__type`, message and HTTP status.
   */
  call(action: string, input: unknown, caller?: Caller): unknown {
    this.clock.runDue();
    const at = this.clock.now();
    const request = keyFields(input);
    const who = caller ? { caller: caller.identity.arn } : {};
    let injected = false;
    try {
      const handler = own(this.handlers, action);
      if (!handler) throw new EcsApiError('UnknownOperationException', `Operation ${action} is not supported.`);
      if (input !== undefined && (input === null || typeof input !== 'object' || Array.isArray(input))) {
        throw new EcsApiError('SerializationException', 'Start of structure or map found where not expected.');
      }
      // IAM before anything else: AWS refuses an unauthorized call whatever it names.
      const denied = this.authorize(action, (input ?? {}) as Record<string, unknown>, caller);
      if (denied) throw denied;
      const fault = this.faultInjector.check(action, input);
      if (fault) {
        injected = true;
        throw fault;
      }
      if (!this.throttle.take(action, at.getTime())) throw throttled();
      const out = handler((input ?? {}) as Record<string, unknown>);
      this.log.record({ action, at, outcome: 'ok', request, ...who });
      if (isDeliveredApiCall(action)) this.events.apiCall(at.getTime(), action, caller ?? this.callerOf(undefined), input ?? {}, { response: out });
      return out;
    } catch (e) {
      const err =
        e instanceof EcsApiError
          ? e
          : new EcsApiError('ServerException', `The simulator failed: ${e instanceof Error ? e.message : String(e)}`);
      this.log.record({ action, at, outcome: err.type, request, ...(injected ? { injected: true } : {}), ...who });
      // CloudTrail records a failed call too, with its error (nothing changed).
      if (own(this.handlers, action) && isDeliveredApiCall(action)) {
        this.events.apiCall(at.getTime(), action, caller ?? this.callerOf(undefined), input ?? {}, { errorCode: err.type, errorMessage: err.message });
      }
      throw err;
    }
  }

  /**
   * The AccessDeniedException AWS would answer `caller` for this call under its policy
   * (`Caller.policy`), or undefined when the call is allowed or the caller has no policy.
   */
  private authorize(action: string, input: Record<string, unknown>, caller: Caller | undefined): EcsApiError | undefined {
    const policy = caller?.policy;
    if (!policy) return undefined;
    for (const request of ecsAuthorizations(action, input, this.authorizationView())) {
      const decision = evaluatePolicy(policy, request);
      if (decision !== 'Allow') return new EcsApiError('AccessDeniedException', accessDeniedMessage(caller.identity.arn, request, decision));
    }
    return undefined;
  }

  /** The state as the authorization sees it (`./authorization`): lookups that never throw. */
  private authorizationView(): AuthorizationView {
    return {
      arns: this.arns,
      tagsOf: (arn) => {
        try {
          return tagsOf(this.core, arn);
        } catch {
          return undefined;
        }
      },
      taskDefinitionArn: (ref) => {
        const found = this.core.lookupTaskDefinition(ref);
        return found?.family.revisions[found.index].taskDefinition.taskDefinitionArn;
      },
      nextRevision: (family) => (this.core.state.families.get(family)?.revisions.length ?? 0) + 1,
    };
  }

  /** The CloudTrail event of a hand edit made through the control surface (a console user's call). */
  private handCall(eventName: string, request: Record<string, unknown>, response: unknown): void {
    this.events.apiCall(this.clock.nowMs(), eventName, this.handCaller, request, { response });
  }

  // -------------------------------------------------------------------------------------------
  // Inspection
  // -------------------------------------------------------------------------------------------

  /** Recorded ECS API calls (never control commands), optionally filtered. */
  calls(filter: CallFilter = {}): CallRecord[] {
    return this.log.list(filter);
  }

  /** Per action: total, ok, throttled, errors. */
  callCounts(): Record<string, CallCount> {
    return this.log.counts();
  }

  clearCalls(): void {
    this.log.clear();
  }

  /** Out-of-band changes made through the control surface. */
  controlLog(): ControlRecord[] {
    return [...this.controlRecords];
  }

  /** A JSON-friendly picture of the whole simulator (for `GET /_sim/state`). */
  snapshot(): SimSnapshot {
    this.clock.runDue();
    return snapshotOf(this.core, {
      throttling: this.throttle.enabled,
      latencyMs: this.latencyMs,
      failureRules: this.failureRules(),
      faults: this.faultInjector.list(),
      vpc: this.vpcState() ?? null,
    });
  }

  // -------------------------------------------------------------------------------------------
  // Control surface (out of band)
  // -------------------------------------------------------------------------------------------

  private control(command: string, args: Record<string, unknown>): void {
    this.clock.runDue();
    this.controlRecords.push({ at: this.clock.now(), command, args: structuredClone(args), outOfBand: true });
  }

  /**
   * Moves the virtual clock forward, running every transition due on the way.
   * @returns the new virtual time.
   */
  advance(seconds: number): Date {
    this.control('advance', { seconds });
    return this.clock.advance(seconds);
  }

  /**
   * Stops one task as a person would in the console (stopCode UserInitiated).
   * @throws EcsApiError ClusterNotFoundException / InvalidParameterException (unknown task).
   */
  stopTask(args: { cluster?: string; task: string; reason?: string }): { taskArn: string } {
    this.control('stopTask', args);
    const cluster = this.core.resolveCluster(args.cluster);
    const t = this.core.findTask(cluster, args.task);
    if (!t) throw invalidParameter('The referenced task was not found.');
    const reason = args.reason ?? stoppedReason.userDefault();
    this.core.scheduler.stopTask(t, 'UserInitiated', reason);
    this.handCall('StopTask', { cluster: cluster.name, task: t.id, reason }, { task: taskToWire(this.core, t, false) });
    return { taskArn: t.arn };
  }

  /**
   * Stops every live task of a service (stopCode UserInitiated); the scheduler replaces them.
   * @returns the stopped task ARNs.
   */
  stopServiceTasks(args: { cluster?: string; service: string; reason?: string }): { taskArns: string[] } {
    this.control('stopServiceTasks', args);
    const cluster = this.core.resolveCluster(args.cluster);
    const svc = this.core.requireService(cluster, args.service);
    const stopped: string[] = [];
    for (const t of this.core.scheduler.tasksOf(svc).filter(isLive)) {
      const reason = args.reason ?? stoppedReason.userDefault();
      this.core.scheduler.stopTask(t, 'UserInitiated', reason);
      this.handCall('StopTask', { cluster: cluster.name, task: t.id, reason }, { task: taskToWire(this.core, t, false) });
      stopped.push(t.arn);
    }
    return { taskArns: stopped };
  }

  /** Changes a service's desiredCount out of band (drift the reconciler should see). */
  setDesiredCount(args: { cluster?: string; service: string; desiredCount: number }): void {
    this.control('setDesiredCount', args);
    const svc = this.core.requireActiveService(this.core.resolveCluster(args.cluster), args.service);
    assertCount(args.desiredCount);
    svc.desiredCount = args.desiredCount;
    this.core.scheduler.kick(svc);
    this.handCall('UpdateService', { cluster: svc.cluster, service: svc.name, desiredCount: args.desiredCount }, { service: { serviceArn: svc.arn, serviceName: svc.name, clusterArn: this.arns.cluster(svc.cluster), status: svc.status, desiredCount: svc.desiredCount } });
  }

  /** Points a service at another task definition out of band; starts a deployment. */
  setTaskDefinition(args: { cluster?: string; service: string; taskDefinition: string }): { taskDefinitionArn: string } {
    this.control('setTaskDefinition', args);
    const svc = this.core.requireActiveService(this.core.resolveCluster(args.cluster), args.service);
    const td = this.core.resolveTaskDefinitionForService(args.taskDefinition);
    const arn = td.taskDefinitionArn as string;
    if (arn !== svc.taskDefinition) {
      svc.taskDefinition = arn;
      this.core.scheduler.startDeployment(svc, templateOf(svc));
    }
    this.handCall('UpdateService', { cluster: svc.cluster, service: svc.name, taskDefinition: args.taskDefinition }, { service: { serviceArn: svc.arn, serviceName: svc.name, clusterArn: this.arns.cluster(svc.cluster), status: svc.status, taskDefinition: svc.taskDefinition } });
    return { taskDefinitionArn: arn };
  }

  /**
   * Supplies what the lifecycle hook `hookTargetArn` (a Lambda function ARN) does: a local
   * function, scripted answers (the last one repeats), or an HTTP endpoint that receives the hook
   * payload as a JSON POST and answers `{hookStatus, callBackDelay?, hookDetails?}`. An ARN with
   * no target fails its hook, as invoking a missing function does.
   */
  setHookTarget(hookTargetArn: string, target: HookTarget | { answers: HookAnswer[] } | { url: string }): void {
    this.control('setHookTarget', { hookTargetArn, ...(typeof target === 'function' ? { function: true } : target) });
    this.core.hookTargets.set(hookTargetArn, hookTargetOf(target));
  }

  /**
   * Makes an existing service one ECS manages itself, as Express Mode creates them
   * (`resourceManagementType: ECS` in DescribeServices); the simulator serves no Express Mode API.
   */
  manageByEcs(args: { cluster?: string; service: string }): void {
    this.control('manageByEcs', args);
    const svc = this.core.requireActiveService(this.core.resolveCluster(args.cluster), args.service);
    svc.resourceManagementType = 'ECS';
  }

  /** Sets a CloudWatch alarm's state (deployment alarms roll back a deployment while ALARM). */
  setAlarmState(alarmName: string, state: 'OK' | 'ALARM' | 'INSUFFICIENT_DATA'): void {
    this.control('setAlarmState', { alarmName, state });
    this.core.alarms.set(alarmName, state);
    for (const c of this.core.state.clusters.values()) for (const svc of c.services.values()) this.core.scheduler.kick(svc);
  }

  /** The listener rules of native deployments and their target group weights (see ./listener-rules). */
  listenerRules(): ListenerRuleState[] {
    this.clock.runDue();
    return listenerRules(this.core);
  }

  /** The failure rules in effect, first match wins. */
  failureRules(): FailureRule[] {
    return this.core.rules.map((r) => ({ ...r }));
  }

  /**
   * Replaces the failure rules (or puts `rules` in front of the current ones with `prepend`);
   * live tasks are re-decided (a RUNNING task can start crash-looping or failing health checks).
   * @throws ZodError for an invalid rule.
   */
  setFailureRules(rules: FailureRule[], opts: { prepend?: boolean } = {}): void {
    this.control('setFailureRules', { rules, prepend: opts.prepend ?? false });
    const parsed = rules.map((r) => failureRuleSchema.parse(r));
    this.core.rules = opts.prepend ? [...parsed, ...this.core.rules] : parsed;
    this.core.scheduler.rulesChanged(this.core.allTasks());
  }

  /** Adds one rule in front of the others. */
  addFailureRule(rule: FailureRule): void {
    this.setFailureRules([rule], { prepend: true });
  }

  /** Back to the rules given at start (default conventions). */
  resetFailureRules(): void {
    this.setFailureRules(this.initialRules);
  }

  /**
   * Interrupts RUNNING FARGATE_SPOT tasks now (stopCode SpotInterruption), of one service, one
   * cluster, or everywhere.
   * @returns the interrupted task ARNs.
   */
  interruptSpot(args: { cluster?: string; service?: string } = {}): { taskArns: string[] } {
    this.control('interruptSpot', args);
    let tasks: SimTask[];
    if (args.service !== undefined) {
      tasks = this.core.scheduler.tasksOf(this.core.requireService(this.core.resolveCluster(args.cluster), args.service));
    } else if (args.cluster !== undefined) {
      tasks = [...this.core.resolveCluster(args.cluster).tasks.values()];
    } else {
      tasks = this.core.allTasks();
    }
    const ids = this.core.scheduler.interruptSpot(tasks);
    return { taskArns: tasks.filter((t) => ids.includes(t.id)).map((t) => t.arn) };
  }

  /** Turns ECS request throttling on or off. */
  setThrottling(enabled: boolean): void {
    this.control('setThrottling', { enabled });
    this.throttle.enabled = enabled;
    this.throttle.reset();
  }

  get throttling(): boolean {
    return this.throttle.enabled;
  }

  /** Real milliseconds of latency added to each HTTP call. */
  setLatency(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`latency must be >= 0 milliseconds, got ${ms}`);
    this.control('setLatency', { ms });
    this.latencyMs = ms;
  }

  /**
   * Makes calls fail: the Nth call of an action, or a seeded fraction of calls, with a chosen
   * error type, message and HTTP status.
   * @returns the fault id (for {@link removeFault}).
   * @throws ZodError for an invalid spec.
   */
  injectFault(spec: FaultSpec): number {
    this.control('injectFault', spec as Record<string, unknown>);
    return this.faultInjector.add(spec);
  }

  removeFault(id: number): void {
    this.control('removeFault', { id });
    this.faultInjector.remove(id);
  }

  clearFaults(): void {
    this.control('clearFaults', {});
    this.faultInjector.clear();
  }

  faults(): ReturnType<FaultInjector['list']> {
    return this.faultInjector.list();
  }

  /**
   * Forgets every cluster, service, task, task definition, call, fault and rule change and
   * restarts the seed; the clock goes back to `startTime` when one was given (so that a reset
   * simulator repeats a run exactly), else keeps its time.
   */
  reset(): void {
    if (this.startTime) this.clock.resetTo(this.startTime);
    else this.clock.clearTimers();
    this.log.clear();
    this.controlRecords = [];
    this.faultInjector.clear();
    this.throttle.reset();
    this.core.rules = [...this.initialRules];
    this.core.rng = new SeededRandom(this.seed);
    this.core.hookTargets.clear();
    this.core.alarms.clear();
    this.resetState();
  }

  /** Stops the clock's background timer (scaled mode). */
  close(): void {
    this.clock.stop();
  }

  private resetState(): void {
    this.core.state = emptyState();
    this.core.scheduler = new Scheduler({
      clock: this.clock,
      rng: this.core.rng,
      arns: this.arns,
      timings: this.timings,
      rules: () => this.core.rules,
      cluster: (name) => this.core.state.clusters.get(name),
      taskDefinition: (arn) => this.core.taskDefinitionByArn(arn),
      events: {
        task: (t) => {
          if (!this.events.active) return;
          const { tags: _tags, attributes: _attributes, ...task } = taskToWire(this.core, t, false);
          this.events.taskStateChange(this.clock.nowMs(), { ...task, taskArn: t.arn, updatedAt: this.clock.now() });
        },
        serviceAction: (svc, eventType, eventName, reason) =>
          this.events.serviceAction(this.clock.nowMs(), this.arns.service(svc.cluster, svc.name), this.arns.cluster(svc.cluster), eventType, eventName, reason ? { reason } : {}),
        deployment: (svc, d, eventType, eventName, reason) =>
          this.events.deploymentStateChange(this.clock.nowMs(), this.arns.service(svc.cluster, svc.name), eventType, eventName, d.id, reason),
      },
      hookTarget: (arn) => this.core.hookTargets.get(arn),
      alarmState: (name) => this.core.alarms.get(name) ?? 'OK',
      taskDefinitionTags: (arn) => {
        const p = this.arns.parse(arn);
        return p?.kind === 'task-definition' ? (this.core.state.families.get(p.family)?.revisions[p.revision - 1]?.tags ?? []) : [];
      },
    });
    for (const name of this.initialClusters) createCluster(this.core, { clusterName: name, capacityProviders: ['FARGATE', 'FARGATE_SPOT'] });
    this.core.vpc = this.initialVpc ? { subnets: new Set(this.initialVpc.subnets), securityGroups: new Set(this.initialVpc.securityGroups) } : undefined;
  }

  /**
   * Declares the subnets and security groups that exist (replacing any declared before), as a
   * person creates them in the VPC console; `undefined` goes back to taking every id as existing.
   * Out of band; a reset goes back to the `vpc` option.
   */
  setVpc(vpc: SimVpc | undefined): void {
    this.control('setVpc', vpc ? { subnets: [...vpc.subnets], securityGroups: [...vpc.securityGroups] } : {});
    this.core.vpc = vpc ? { subnets: new Set(vpc.subnets), securityGroups: new Set(vpc.securityGroups) } : undefined;
  }

  /** The declared VPC (see {@link setVpc}), or undefined when every id is taken as existing. */
  vpcState(): SimVpc | undefined {
    return this.core.vpc ? { subnets: [...this.core.vpc.subnets].sort(), securityGroups: [...this.core.vpc.securityGroups].sort() } : undefined;
  }

}

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
import type {
  CapacityProviderStrategyItem,
  Cluster,
  ContainerDefinition,
  CreateServiceRequest,
  Deployment,
  DeploymentConfiguration,
  NetworkConfiguration,
  RegisterTaskDefinitionRequest,
  RunTaskRequest,
  Service,
  Task,
  TaskDefinition,
  VpcLatticeConfiguration,
  UpdateServiceRequest,
} from '@aws-sdk/client-ecs';
import { ECS_LIMITS } from '../../lambda/core/ecs-limits';
import { Arns, shortName } from './arns';
import { CallLog, FaultInjector, Throttle, keyFields, type CallCount, type CallFilter, type CallRecord, type FaultSpec } from './calls';
import { VirtualClock } from './clock';
import {
  EcsApiError,
  clientException,
  clusterNotFound,
  invalidParameter,
  serviceNotActive,
  serviceNotFound,
  throttled,
} from './errors';
import { DEFAULT_FAILURE_RULES, failureRuleSchema, ruleForTask, type FailureRule } from './failure-modes';
import { stoppedReason } from './messages';
import { page } from './paging';
import { listMember, stringMember } from './protocol';
import { SeededRandom } from './random';
import { DEFAULT_TIMINGS, Scheduler, isLive, type SimTimings } from './scheduler';
import {
  PENDING_STATES,
  emptyState,
  type DeploymentConfig,
  type DeploymentTemplate,
  type SimCluster,
  type SimDeployment,
  type SimFamily,
  type SimService,
  type SimServiceDeployment,
  type SimState,
  type SimTask,
  type Tag,
} from './state';
import {
  MAX_LOAD_BALANCERS,
  alarmsOf,
  azRebalancingOf,
  checkControllerUpdate,
  deploymentControllerOf,
  propagateTagsOf,
  serviceConnectOf,
  volumeConfigurationsOf,
} from './service-rules';
import { buildTaskDefinition } from './task-definitions';
import { SimEventBus, assumedRoleIdentity, iamUserIdentity, isDeliveredApiCall, type Caller } from './events';
import { own } from '../../lambda/core/dict';
import { ecsAuthorizations, type AuthorizationView } from './authorization';
import { accessDeniedMessage, evaluatePolicy } from './iam';

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

/** Subnets and security groups that exist in the simulated account (the `vpc` option). */
export interface SimVpc {
  readonly subnets: readonly string[];
  readonly securityGroups: readonly string[];
}

/** One out-of-band change made through the control surface. */
export interface ControlRecord {
  readonly at: Date;
  readonly command: string;
  readonly args: Record<string, unknown>;
  /** Always true: these are not ECS API calls (they never appear in `calls()`). */
  readonly outOfBand: true;
}

type Handler = (input: Record<string, unknown>) => unknown;

const NAME_RE = /^[A-Za-z0-9_-]{1,255}$/;

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
  private vpc: { subnets: Set<string>; securityGroups: Set<string> } | undefined;
  private readonly initialRules: FailureRule[];
  private state: SimState = emptyState();
  private rng: SeededRandom;
  private rules: FailureRule[];
  private scheduler!: Scheduler;
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
    this.rng = new SeededRandom(this.seed);
    this.rules = [...this.initialRules];
    this.throttle = new Throttle(opts.throttling ?? true);
    this.faultInjector = new FaultInjector(this.seed);
    this.handlers = this.buildHandlers();
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
          return this.tagsOf(arn);
        } catch {
          return undefined;
        }
      },
      taskDefinitionArn: (ref) => {
        const found = this.lookupTaskDefinition(ref);
        return found?.family.revisions[found.index].taskDefinition.taskDefinitionArn;
      },
      nextRevision: (family) => (this.state.families.get(family)?.revisions.length ?? 0) + 1,
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
    const clusters = [...this.state.clusters.values()].map((c) => ({
      name: c.name,
      status: c.status,
      services: [...c.services.values()].map((s) => {
        const counts = this.scheduler.counts(s);
        return {
          name: s.name,
          status: s.status,
          desiredCount: s.desiredCount,
          runningCount: counts.running,
          pendingCount: counts.pending,
          taskDefinition: s.taskDefinition,
          deployments: s.deployments.map((d) => ({
            id: d.id,
            status: d.status,
            taskDefinition: d.taskDefinition,
            rolloutState: d.rolloutState,
            failedTasks: d.failedTasks,
            ...this.scheduler.counts(s, d.id),
          })),
          latestEvents: s.events.slice(0, 5).map((e) => e.message),
        };
      }),
      tasks: [...c.tasks.values()].map((t) => ({
        id: t.id,
        service: t.service,
        lastStatus: t.lastStatus,
        desiredStatus: t.desiredStatus,
        healthStatus: t.healthStatus,
        taskDefinitionArn: t.taskDefinitionArn,
        capacityProviderName: t.capacityProviderName,
        failureMode: t.rule.mode,
        stopCode: t.stopCode,
        stoppedReason: t.stoppedReason,
      })),
    }));
    return {
      now: this.clock.now().toISOString(),
      speed: this.clock.speed ?? null,
      throttling: this.throttle.enabled,
      latencyMs: this.latencyMs,
      failureRules: this.failureRules(),
      faults: this.faultInjector.list(),
      vpc: this.vpcState() ?? null,
      clusters,
      taskDefinitionFamilies: [...this.state.families.values()].map((f) => ({
        family: f.name,
        revisions: f.revisions.map((r) => ({ revision: r.taskDefinition.revision, status: r.taskDefinition.status })),
      })),
    };
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
    const cluster = this.resolveCluster(args.cluster);
    const t = this.findTask(cluster, args.task);
    if (!t) throw invalidParameter('The referenced task was not found.');
    const reason = args.reason ?? stoppedReason.userDefault();
    this.scheduler.stopTask(t, 'UserInitiated', reason);
    this.handCall('StopTask', { cluster: cluster.name, task: t.id, reason }, { task: this.taskToWire(t, false) });
    return { taskArn: t.arn };
  }

  /**
   * Stops every live task of a service (stopCode UserInitiated); the scheduler replaces them.
   * @returns the stopped task ARNs.
   */
  stopServiceTasks(args: { cluster?: string; service: string; reason?: string }): { taskArns: string[] } {
    this.control('stopServiceTasks', args);
    const cluster = this.resolveCluster(args.cluster);
    const svc = this.requireService(cluster, args.service);
    const stopped: string[] = [];
    for (const t of this.scheduler.tasksOf(svc).filter(isLive)) {
      const reason = args.reason ?? stoppedReason.userDefault();
      this.scheduler.stopTask(t, 'UserInitiated', reason);
      this.handCall('StopTask', { cluster: cluster.name, task: t.id, reason }, { task: this.taskToWire(t, false) });
      stopped.push(t.arn);
    }
    return { taskArns: stopped };
  }

  /** Changes a service's desiredCount out of band (drift the reconciler should see). */
  setDesiredCount(args: { cluster?: string; service: string; desiredCount: number }): void {
    this.control('setDesiredCount', args);
    const svc = this.requireActiveService(this.resolveCluster(args.cluster), args.service);
    assertCount(args.desiredCount);
    svc.desiredCount = args.desiredCount;
    this.scheduler.kick(svc);
    this.handCall('UpdateService', { cluster: svc.cluster, service: svc.name, desiredCount: args.desiredCount }, { service: { serviceArn: svc.arn, serviceName: svc.name, clusterArn: this.arns.cluster(svc.cluster), status: svc.status, desiredCount: svc.desiredCount } });
  }

  /** Points a service at another task definition out of band; starts a deployment. */
  setTaskDefinition(args: { cluster?: string; service: string; taskDefinition: string }): { taskDefinitionArn: string } {
    this.control('setTaskDefinition', args);
    const svc = this.requireActiveService(this.resolveCluster(args.cluster), args.service);
    const td = this.resolveTaskDefinitionForService(args.taskDefinition);
    const arn = td.taskDefinitionArn as string;
    if (arn !== svc.taskDefinition) {
      svc.taskDefinition = arn;
      this.scheduler.startDeployment(svc, templateOf(svc));
    }
    this.handCall('UpdateService', { cluster: svc.cluster, service: svc.name, taskDefinition: args.taskDefinition }, { service: { serviceArn: svc.arn, serviceName: svc.name, clusterArn: this.arns.cluster(svc.cluster), status: svc.status, taskDefinition: svc.taskDefinition } });
    return { taskDefinitionArn: arn };
  }

  /** The failure rules in effect, first match wins. */
  failureRules(): FailureRule[] {
    return this.rules.map((r) => ({ ...r }));
  }

  /**
   * Replaces the failure rules (or puts `rules` in front of the current ones with `prepend`);
   * live tasks are re-decided (a RUNNING task can start crash-looping or failing health checks).
   * @throws ZodError for an invalid rule.
   */
  setFailureRules(rules: FailureRule[], opts: { prepend?: boolean } = {}): void {
    this.control('setFailureRules', { rules, prepend: opts.prepend ?? false });
    const parsed = rules.map((r) => failureRuleSchema.parse(r));
    this.rules = opts.prepend ? [...parsed, ...this.rules] : parsed;
    this.scheduler.rulesChanged(this.allTasks());
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
      tasks = this.scheduler.tasksOf(this.requireService(this.resolveCluster(args.cluster), args.service));
    } else if (args.cluster !== undefined) {
      tasks = [...this.resolveCluster(args.cluster).tasks.values()];
    } else {
      tasks = this.allTasks();
    }
    const ids = this.scheduler.interruptSpot(tasks);
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
    this.rules = [...this.initialRules];
    this.rng = new SeededRandom(this.seed);
    this.resetState();
  }

  /** Stops the clock's background timer (scaled mode). */
  close(): void {
    this.clock.stop();
  }

  private resetState(): void {
    this.state = emptyState();
    this.scheduler = new Scheduler({
      clock: this.clock,
      rng: this.rng,
      arns: this.arns,
      timings: this.timings,
      rules: () => this.rules,
      cluster: (name) => this.state.clusters.get(name),
      taskDefinition: (arn) => this.taskDefinitionByArn(arn),
      events: {
        task: (t) => {
          if (!this.events.active) return;
          const { tags: _tags, attributes: _attributes, ...task } = this.taskToWire(t, false);
          this.events.taskStateChange(this.clock.nowMs(), { ...task, taskArn: t.arn, updatedAt: this.clock.now() });
        },
        serviceAction: (svc, eventType, eventName, reason) =>
          this.events.serviceAction(this.clock.nowMs(), this.arns.service(svc.cluster, svc.name), this.arns.cluster(svc.cluster), eventType, eventName, reason ? { reason } : {}),
        deployment: (svc, d, eventType, eventName, reason) =>
          this.events.deploymentStateChange(this.clock.nowMs(), this.arns.service(svc.cluster, svc.name), eventType, eventName, d.id, reason),
      },
      taskDefinitionTags: (arn) => {
        const p = this.arns.parse(arn);
        return p?.kind === 'task-definition' ? (this.state.families.get(p.family)?.revisions[p.revision - 1]?.tags ?? []) : [];
      },
    });
    for (const name of this.initialClusters) this.createCluster({ clusterName: name, capacityProviders: ['FARGATE', 'FARGATE_SPOT'] });
    this.vpc = this.initialVpc ? { subnets: new Set(this.initialVpc.subnets), securityGroups: new Set(this.initialVpc.securityGroups) } : undefined;
  }

  /**
   * Declares the subnets and security groups that exist (replacing any declared before), as a
   * person creates them in the VPC console; `undefined` goes back to taking every id as existing.
   * Out of band; a reset goes back to the `vpc` option.
   */
  setVpc(vpc: SimVpc | undefined): void {
    this.control('setVpc', vpc ? { subnets: [...vpc.subnets], securityGroups: [...vpc.securityGroups] } : {});
    this.vpc = vpc ? { subnets: new Set(vpc.subnets), securityGroups: new Set(vpc.securityGroups) } : undefined;
  }

  /** The declared VPC (see {@link setVpc}), or undefined when every id is taken as existing. */
  vpcState(): SimVpc | undefined {
    return this.vpc ? { subnets: [...this.vpc.subnets].sort(), securityGroups: [...this.vpc.securityGroups].sort() } : undefined;
  }

  // -------------------------------------------------------------------------------------------
  // Lookups
  // -------------------------------------------------------------------------------------------

  private allTasks(): SimTask[] {
    return [...this.state.clusters.values()].flatMap((c) => [...c.tasks.values()]);
  }

  private clusterName(nameOrArn: unknown): string {
    if (nameOrArn === undefined || nameOrArn === null || nameOrArn === '') return 'default';
    if (typeof nameOrArn !== 'string') throw invalidParameter('cluster must be a string.');
    if (nameOrArn.startsWith('arn:')) {
      const p = this.arns.parse(nameOrArn);
      if (!p || p.kind !== 'cluster') throw invalidParameter(`Invalid cluster ARN: ${nameOrArn}`);
      return p.cluster;
    }
    return nameOrArn;
  }

  /** @throws EcsApiError ClusterNotFoundException unless ACTIVE. */
  private resolveCluster(nameOrArn: unknown): SimCluster {
    const c = this.state.clusters.get(this.clusterName(nameOrArn));
    if (!c || c.status !== 'ACTIVE') throw clusterNotFound();
    return c;
  }

  private findService(cluster: SimCluster, nameOrArn: string): SimService | undefined {
    if (nameOrArn.startsWith('arn:')) {
      const p = this.arns.parse(nameOrArn);
      if (!p || p.kind !== 'service' || p.cluster !== cluster.name) return undefined;
      return cluster.services.get(p.service);
    }
    return cluster.services.get(nameOrArn);
  }

  /** @throws EcsApiError ServiceNotFoundException. */
  private requireService(cluster: SimCluster, nameOrArn: unknown): SimService {
    if (typeof nameOrArn !== 'string' || nameOrArn === '') throw invalidParameter('Service can not be blank.');
    const s = this.findService(cluster, nameOrArn);
    if (!s) throw serviceNotFound();
    return s;
  }

  /** @throws EcsApiError ServiceNotFoundException / ServiceNotActiveException. */
  private requireActiveService(cluster: SimCluster, nameOrArn: unknown): SimService {
    const s = this.requireService(cluster, nameOrArn);
    if (s.status !== 'ACTIVE') throw serviceNotActive();
    return s;
  }

  private findTask(cluster: SimCluster, idOrArn: string): SimTask | undefined {
    if (idOrArn.startsWith('arn:')) {
      const p = this.arns.parse(idOrArn);
      if (!p || p.kind !== 'task' || p.cluster !== cluster.name) return undefined;
      return cluster.tasks.get(p.taskId);
    }
    return cluster.tasks.get(idOrArn);
  }

  private taskDefinitionByArn(arn: string): TaskDefinition | undefined {
    const p = this.arns.parse(arn);
    if (!p || p.kind !== 'task-definition') return undefined;
    return this.state.families.get(p.family)?.revisions[p.revision - 1]?.taskDefinition;
  }

  /**
   * `family` (latest ACTIVE), `family:revision` or an ARN.
   * @returns undefined when there is no such revision.
   */
  private lookupTaskDefinition(ref: string): { family: SimFamily; index: number } | undefined {
    let familyName: string;
    let revision: number | undefined;
    if (ref.startsWith('arn:')) {
      const p = this.arns.parse(ref);
      if (!p || p.kind !== 'task-definition') return undefined;
      familyName = p.family;
      revision = p.revision;
    } else {
      const m = /^([^:]+)(?::(\d+))?$/.exec(ref);
      if (!m) return undefined;
      familyName = m[1];
      revision = m[2] !== undefined ? Number(m[2]) : undefined;
    }
    const family = this.state.families.get(familyName);
    if (!family) return undefined;
    if (revision === undefined) {
      for (let i = family.revisions.length - 1; i >= 0; i--) {
        if (family.revisions[i].taskDefinition.status === 'ACTIVE') return { family, index: i };
      }
      return undefined;
    }
    if (revision < 1 || revision > family.revisions.length) return undefined;
    return { family, index: revision - 1 };
  }

  /** For CreateService / UpdateService: must exist and be ACTIVE. */
  private resolveTaskDefinitionForService(ref: unknown): TaskDefinition {
    if (typeof ref !== 'string' || ref === '') throw invalidParameter('TaskDefinition can not be blank.');
    const found = this.lookupTaskDefinition(ref);
    if (!found) throw clientException('TaskDefinition not found.');
    const td = found.family.revisions[found.index].taskDefinition;
    if (td.status !== 'ACTIVE') throw clientException('TaskDefinition is inactive');
    return td;
  }

  // -------------------------------------------------------------------------------------------
  // Wire shapes
  // -------------------------------------------------------------------------------------------

  private clusterToWire(c: SimCluster, include: string[] = []): Cluster {
    const tasks = [...c.tasks.values()];
    return {
      clusterArn: c.arn,
      clusterName: c.name,
      status: c.status,
      registeredContainerInstancesCount: 0,
      runningTasksCount: tasks.filter((t) => t.lastStatus === 'RUNNING').length,
      pendingTasksCount: tasks.filter((t) => PENDING_STATES.has(t.lastStatus)).length,
      activeServicesCount: [...c.services.values()].filter((s) => s.status === 'ACTIVE').length,
      statistics: [],
      tags: include.includes('TAGS') ? c.tags.map((t) => ({ ...t })) : [],
      ...(include.includes('SETTINGS') ? { settings: c.settings.map((s) => ({ ...s })) } : {}),
      capacityProviders: [...c.capacityProviders],
      defaultCapacityProviderStrategy: structuredClone(c.defaultCapacityProviderStrategy),
      ...(c.serviceConnectNamespace ? { serviceConnectDefaults: { namespace: c.serviceConnectNamespace } } : {}),
    } as Cluster;
  }

  private deploymentToWire(svc: SimService, d: SimDeployment): Deployment {
    const counts = this.scheduler.counts(svc, d.id);
    return {
      id: d.id,
      status: d.status,
      taskDefinition: d.taskDefinition,
      desiredCount: this.scheduler.deploymentDesired(svc, d),
      pendingCount: counts.pending,
      runningCount: counts.running,
      failedTasks: d.failedTasks,
      createdAt: new Date(d.createdAt),
      updatedAt: new Date(d.updatedAt),
      ...launchFields(d),
      ...(d.networkConfiguration ? { networkConfiguration: structuredClone(d.networkConfiguration) as NetworkConfiguration } : {}),
      rolloutState: d.rolloutState,
      rolloutStateReason: d.rolloutStateReason,
      ...(d.serviceConnectConfiguration ? { serviceConnectConfiguration: structuredClone(d.serviceConnectConfiguration) } : {}),
      ...(d.serviceConnectResources ? { serviceConnectResources: structuredClone(d.serviceConnectResources) } : {}),
      ...(d.volumeConfigurations ? { volumeConfigurations: structuredClone(d.volumeConfigurations) } : {}),
      ...(d.vpcLatticeConfigurations ? { vpcLatticeConfigurations: structuredClone(d.vpcLatticeConfigurations) } : {}),
    };
  }

  private serviceToWire(svc: SimService, includeTags: boolean): Service {
    const counts = this.scheduler.counts(svc);
    return {
      serviceArn: svc.arn,
      serviceName: svc.name,
      clusterArn: this.arns.cluster(svc.cluster),
      loadBalancers: structuredClone(svc.loadBalancers),
      serviceRegistries: structuredClone(svc.serviceRegistries),
      status: svc.status,
      desiredCount: svc.desiredCount,
      runningCount: counts.running,
      pendingCount: counts.pending,
      ...launchFields(svc),
      ...(svc.taskDefinition !== '' ? { taskDefinition: svc.taskDefinition } : {}),
      deploymentConfiguration: structuredClone(svc.deploymentConfiguration),
      ...(svc.deploymentController === 'EXTERNAL' ? { taskSets: [] } : {}),
      deployments: svc.deployments.map((d) => this.deploymentToWire(svc, d)),
      events: svc.events.map((e) => ({ id: e.id, createdAt: new Date(e.createdAt), message: e.message })),
      createdAt: new Date(svc.createdAt),
      placementConstraints: structuredClone(svc.placementConstraints) as Service['placementConstraints'],
      placementStrategy: structuredClone(svc.placementStrategy) as Service['placementStrategy'],
      ...(svc.networkConfiguration ? { networkConfiguration: structuredClone(svc.networkConfiguration) as NetworkConfiguration } : {}),
      // ECS answers 0 when none was given (API reference, Service; every recent answer in test/fixtures/real).
      healthCheckGracePeriodSeconds: svc.healthCheckGracePeriodSeconds ?? 0,
      schedulingStrategy: 'REPLICA',
      deploymentController: { type: svc.deploymentController },
      ...(includeTags ? { tags: svc.tags.map((t) => ({ ...t })) } : {}),
      createdBy: svc.createdBy,
      enableECSManagedTags: svc.enableECSManagedTags,
      propagateTags: svc.propagateTags as Service['propagateTags'],
      enableExecuteCommand: svc.enableExecuteCommand,
      availabilityZoneRebalancing: svc.availabilityZoneRebalancing,
    };
  }

  private taskToWire(t: SimTask, includeTags: boolean): Task {
    const time = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms));
    const out: Task = {
      attachments: [
        {
          id: t.attachmentId,
          type: 'ElasticNetworkInterface',
          status: t.lastStatus === 'STOPPED' ? 'DELETED' : t.lastStatus === 'PROVISIONING' ? 'PRECREATED' : 'ATTACHED',
          details: [
            ...(t.subnetId ? [{ name: 'subnetId', value: t.subnetId }] : []),
            { name: 'networkInterfaceId', value: t.eniId },
            { name: 'macAddress', value: t.macAddress },
            { name: 'privateIPv4Address', value: t.privateIp },
          ],
        },
      ],
      attributes: [{ name: 'ecs.cpu-architecture', value: 'x86_64' }],
      availabilityZone: t.availabilityZone,
      ...(t.capacityProviderName ? { capacityProviderName: t.capacityProviderName } : {}),
      clusterArn: this.arns.cluster(t.cluster),
      connectivity: t.connectivityAt !== undefined ? 'CONNECTED' : undefined,
      connectivityAt: time(t.connectivityAt),
      containers: t.containers.map((c) => ({
        containerArn: c.arn,
        taskArn: t.arn,
        name: c.name,
        image: c.image,
        runtimeId: `${t.id}-${c.uuid.slice(0, 10)}`,
        lastStatus: c.lastStatus,
        ...(c.exitCode !== undefined ? { exitCode: c.exitCode } : {}),
        ...(c.reason !== undefined ? { reason: c.reason } : {}),
        networkBindings: [],
        networkInterfaces: [{ attachmentId: t.attachmentId, privateIpv4Address: t.privateIp }],
        healthStatus: c.healthStatus,
        cpu: String(c.cpu),
        ...(c.memory !== undefined ? { memory: String(c.memory) } : {}),
        ...(c.memoryReservation !== undefined ? { memoryReservation: String(c.memoryReservation) } : {}),
      })),
      cpu: t.cpu,
      createdAt: new Date(t.createdAt),
      desiredStatus: t.desiredStatus,
      enableExecuteCommand: false,
      executionStoppedAt: time(t.executionStoppedAt),
      group: t.group,
      healthStatus: t.healthStatus,
      lastStatus: t.lastStatus,
      launchType: t.launchType,
      memory: t.memory,
      overrides: { containerOverrides: t.containers.map((c) => ({ name: c.name })), inferenceAcceleratorOverrides: [] },
      ...(t.platformVersion ? { platformVersion: t.platformVersion, platformFamily: 'Linux' } : {}),
      pullStartedAt: time(t.pullStartedAt),
      pullStoppedAt: time(t.pullStoppedAt),
      startedAt: time(t.startedAt),
      ...(t.startedBy ? { startedBy: t.startedBy } : {}),
      ...(t.stopCode ? { stopCode: t.stopCode as Task['stopCode'] } : {}),
      stoppedAt: time(t.stoppedAt),
      ...(t.stoppedReason ? { stoppedReason: t.stoppedReason } : {}),
      stoppingAt: time(t.stoppingAt),
      tags: includeTags ? t.tags.map((x) => ({ ...x })) : [],
      taskArn: t.arn,
      taskDefinitionArn: t.taskDefinitionArn,
      version: t.version,
      ephemeralStorage: { sizeInGiB: 20 },
    };
    // Drop undefined members so the JSON has only what ECS would send.
    for (const k of Object.keys(out) as (keyof Task)[]) if (out[k] === undefined) delete out[k];
    return out;
  }

  // -------------------------------------------------------------------------------------------
  // Actions
  // -------------------------------------------------------------------------------------------

  private buildHandlers(): Record<string, Handler> {
    return {
      CreateCluster: (i) => ({ cluster: this.clusterToWire(this.createCluster(i), ['TAGS', 'SETTINGS']) }),
      DescribeClusters: (i) => this.describeClusters(i),
      PutClusterCapacityProviders: (i) => {
        const cluster = this.resolveCluster(i.cluster as string | undefined);
        const providers = (i.capacityProviders as string[] | undefined) ?? [];
        for (const p of providers) {
          if (p !== 'FARGATE' && p !== 'FARGATE_SPOT') {
            throw invalidParameter(`The specified capacity provider '${p}' does not exist. The simulator knows FARGATE and FARGATE_SPOT.`);
          }
        }
        cluster.capacityProviders = [...providers];
        cluster.defaultCapacityProviderStrategy = structuredClone((i.defaultCapacityProviderStrategy as CapacityProviderStrategyItem[] | undefined) ?? []);
        return { cluster: this.clusterToWire(cluster) };
      },
      ListClusters: (i) => {
        const arns = [...this.state.clusters.values()].filter((c) => c.status === 'ACTIVE').map((c) => c.arn);
        const p = page('clusters', arns, pageReq(i), { defaultMax: 100, max: 100 });
        return { clusterArns: p.items, ...(p.nextToken ? { nextToken: p.nextToken } : {}) };
      },
      DeleteCluster: (i) => this.deleteCluster(i),
      RegisterTaskDefinition: (i) => this.registerTaskDefinition(i as unknown as RegisterTaskDefinitionRequest),
      DescribeTaskDefinition: (i) => this.describeTaskDefinition(i),
      DeregisterTaskDefinition: (i) => this.deregisterTaskDefinition(i),
      ListTaskDefinitions: (i) => this.listTaskDefinitions(i),
      ListTaskDefinitionFamilies: (i) => this.listTaskDefinitionFamilies(i),
      CreateService: (i) => this.createService(i as unknown as CreateServiceRequest),
      UpdateService: (i) => this.updateService(i as unknown as UpdateServiceRequest),
      DeleteService: (i) => this.deleteService(i),
      DescribeServices: (i) => this.describeServices(i),
      ListServices: (i) => this.listServices(i),
      ListTasks: (i) => this.listTasks(i),
      DescribeTasks: (i) => this.describeTasks(i),
      StopTask: (i) => this.stopTaskApi(i),
      RunTask: (i) => this.runTask(i as unknown as RunTaskRequest),
      TagResource: (i) => this.tagResource(i),
      UntagResource: (i) => this.untagResource(i),
      ListTagsForResource: (i) => ({ tags: this.tagsOf(str(i, 'resourceArn', true)).map((t) => ({ ...t })) }),
      ListServiceDeployments: (i) => this.listServiceDeployments(i),
      DescribeServiceDeployments: (i) => this.describeServiceDeployments(i),
      DescribeServiceRevisions: (i) => this.describeServiceRevisions(i),
    };
  }

  // Clusters ----------------------------------------------------------------------------------

  private createCluster(i: Record<string, unknown>): SimCluster {
    const name = (i.clusterName as string | undefined) ?? 'default';
    if (typeof name !== 'string' || !NAME_RE.test(name)) {
      throw invalidParameter(
        'Cluster name is invalid: up to 255 letters (uppercase and lowercase), numbers, underscores, and hyphens are allowed.',
      );
    }
    const existing = this.state.clusters.get(name);
    if (existing && existing.status === 'ACTIVE') return existing;
    const providers = (i.capacityProviders as string[] | undefined) ?? [];
    for (const p of providers) {
      if (p !== 'FARGATE' && p !== 'FARGATE_SPOT') {
        throw invalidParameter(`The specified capacity provider '${p}' does not exist. The simulator knows FARGATE and FARGATE_SPOT.`);
      }
    }
    const c: SimCluster = {
      name,
      arn: this.arns.cluster(name),
      status: 'ACTIVE',
      tags: tagsInput(i.tags),
      settings: (i.settings as { name: string; value: string }[] | undefined) ?? [{ name: 'containerInsights', value: 'disabled' }],
      capacityProviders: providers,
      defaultCapacityProviderStrategy: structuredClone((i.defaultCapacityProviderStrategy as CapacityProviderStrategyItem[] | undefined) ?? []),
      ...this.serviceConnectDefaults(i.serviceConnectDefaults),
      createdAt: this.clock.nowMs(),
      services: new Map(),
      tasks: new Map(),
    };
    this.state.clusters.set(name, c);
    return c;
  }

  /** CreateCluster `serviceConnectDefaults`: a namespace name becomes a Cloud Map namespace ARN. */
  private serviceConnectDefaults(given: unknown): { serviceConnectNamespace?: string } {
    const ns = (given as { namespace?: unknown } | undefined)?.namespace;
    if (ns === undefined) return {};
    if (typeof ns !== 'string' || ns === '') throw invalidParameter('serviceConnectDefaults.namespace can not be blank.');
    const s = this.arns.scope;
    return { serviceConnectNamespace: ns.startsWith('arn:') ? ns : `arn:aws:servicediscovery:${s.region}:${s.accountId}:namespace/ns-${this.rng.hex(16)}` };
  }

  /** The Cloud Map service ECS creates for a Service Connect discovery name. */
  private discoveryArn(): string {
    const s = this.arns.scope;
    return `arn:aws:servicediscovery:${s.region}:${s.accountId}:service/srv-${this.rng.hex(16)}`;
  }

  private describeClusters(i: Record<string, unknown>): unknown {
    const include = (listMember(i, 'include', 'string') as string[] | undefined) ?? [];
    const refs = (listMember(i, 'clusters', 'string') as string[] | undefined) ?? ['default'];
    const clusters: Cluster[] = [];
    const failures: { arn: string; reason: string }[] = [];
    for (const ref of refs) {
      const name = this.clusterName(ref);
      const c = this.state.clusters.get(name);
      if (c) clusters.push(this.clusterToWire(c, include));
      else failures.push({ arn: ref.startsWith('arn:') ? ref : this.arns.cluster(name), reason: 'MISSING' });
    }
    return { clusters, failures };
  }

  private deleteCluster(i: Record<string, unknown>): unknown {
    const c = this.resolveCluster(str(i, 'cluster', true));
    if ([...c.services.values()].some((s) => s.status !== 'INACTIVE')) {
      throw new EcsApiError('ClusterContainsServicesException', 'The Cluster cannot be deleted while Services are active.');
    }
    if ([...c.tasks.values()].some((t) => t.lastStatus !== 'STOPPED')) {
      throw new EcsApiError('ClusterContainsTasksException', 'The Cluster cannot be deleted while Tasks are active.');
    }
    c.status = 'INACTIVE';
    return { cluster: this.clusterToWire(c) };
  }

  // Task definitions --------------------------------------------------------------------------

  private registerTaskDefinition(req: RegisterTaskDefinitionRequest): unknown {
    const familyName = req.family ?? '';
    const existing = this.state.families.get(familyName);
    const revision = (existing?.revisions.length ?? 0) + 1;
    const td = buildTaskDefinition(req, {
      arn: this.arns.taskDefinition(familyName, revision),
      revision,
      registeredAt: this.clock.now(),
      registeredBy: this.arns.principal(),
    });
    const tags = tagsInput(req.tags);
    const family = existing ?? { name: familyName, revisions: [] };
    family.revisions.push({ taskDefinition: td, tags });
    this.state.families.set(familyName, family);
    return { taskDefinition: structuredClone(td), ...(tags.length > 0 ? { tags: tags.map((t) => ({ ...t })) } : {}) };
  }

  private describeTaskDefinition(i: Record<string, unknown>): unknown {
    const ref = str(i, 'taskDefinition', true);
    const found = this.lookupTaskDefinition(ref);
    if (!found) throw clientException('Unable to describe task definition.');
    const rev = found.family.revisions[found.index];
    const include = (listMember(i, 'include', 'string') as string[] | undefined) ?? [];
    return {
      taskDefinition: structuredClone(rev.taskDefinition),
      ...(include.includes('TAGS') ? { tags: rev.tags.map((t) => ({ ...t })) } : {}),
    };
  }

  private deregisterTaskDefinition(i: Record<string, unknown>): unknown {
    const ref = str(i, 'taskDefinition', true);
    if (!ref.startsWith('arn:') && !ref.includes(':')) {
      throw clientException('Invalid revision number. Number: undefined');
    }
    const found = this.lookupTaskDefinition(ref);
    if (!found) throw clientException('The specified task definition does not exist.');
    const td = found.family.revisions[found.index].taskDefinition;
    if (td.status === 'ACTIVE') {
      td.status = 'INACTIVE';
      td.deregisteredAt = this.clock.now();
    }
    return { taskDefinition: structuredClone(td) };
  }

  private listTaskDefinitions(i: Record<string, unknown>): unknown {
    const prefix = i.familyPrefix as string | undefined;
    const status = (i.status as string | undefined) ?? 'ACTIVE';
    const sort = (i.sort as string | undefined) ?? 'ASC';
    // API reference (ListTaskDefinitions `sort`): family names lexicographically, then revisions
    // in ascending numerical order; DESC reverses both. The key separates family and revision with
    // a character below every family character, so that "web" sorts before "web-2".
    const byKey = new Map<string, string>();
    for (const f of this.state.families.values()) {
      if (prefix !== undefined && f.name !== prefix) continue; // ECS: familyPrefix matches the full family
      for (const r of f.revisions) {
        if (status !== 'ALL' && r.taskDefinition.status !== status) continue;
        const rev = r.taskDefinition.revision as number;
        byKey.set(`${f.name}\u0000${String(rev).padStart(10, '0')}`, r.taskDefinition.taskDefinitionArn as string);
      }
    }
    const p = page('taskDefinitions', [...byKey.keys()], pageReq(i), { defaultMax: 100, max: 100, descending: sort === 'DESC' });
    return { taskDefinitionArns: p.items.map((k) => byKey.get(k) as string), ...(p.nextToken ? { nextToken: p.nextToken } : {}) };
  }

  private listTaskDefinitionFamilies(i: Record<string, unknown>): unknown {
    const prefix = (i.familyPrefix as string | undefined) ?? '';
    const status = (i.status as string | undefined) ?? 'ACTIVE';
    const names = [...this.state.families.values()]
      .filter((f) => f.name.startsWith(prefix))
      .filter((f) => {
        const anyActive = f.revisions.some((r) => r.taskDefinition.status === 'ACTIVE');
        return status === 'ALL' || (status === 'ACTIVE' ? anyActive : !anyActive);
      })
      .map((f) => f.name);
    const p = page('families', names, pageReq(i), { defaultMax: 100, max: 100 });
    return { families: p.items, ...(p.nextToken ? { nextToken: p.nextToken } : {}) };
  }

  // Services ----------------------------------------------------------------------------------

  private createService(req: CreateServiceRequest): unknown {
    const cluster = this.resolveCluster(req.cluster);
    const name = req.serviceName;
    if (typeof name !== 'string' || !NAME_RE.test(name)) {
      throw invalidParameter(
        'Service name is invalid: up to 255 letters (uppercase and lowercase), numbers, underscores, and hyphens are allowed.',
      );
    }
    const clientToken = stringMember(req as unknown as Record<string, unknown>, 'clientToken');
    if (clientToken !== undefined && (clientToken.length > ECS_LIMITS.clientTokenMaxLength || !/^[\x21-\x7e]*$/.test(clientToken))) {
      throw invalidParameter('clientToken must be up to 36 ASCII characters (codes 33 to 126).');
    }
    const fingerprint = canonicalJson({ ...req, clientToken: undefined, cluster: cluster.name });
    const existing = cluster.services.get(name);
    if (existing?.status === 'DRAINING') throw invalidParameter('Unable to Start a service that is still Draining.');
    if (existing?.status === 'ACTIVE') {
      if (existing.clientToken === clientToken && existing.creationFingerprint === fingerprint) {
        return { service: this.serviceToWire(existing, true) };
      }
      throw invalidParameter('Creation of service was not idempotent.');
    }
    if (req.schedulingStrategy !== undefined && req.schedulingStrategy !== 'REPLICA') {
      throw invalidParameter('The simulator supports only the REPLICA scheduling strategy.');
    }
    const controller = deploymentControllerOf(req.deploymentController);
    if (req.desiredCount === undefined) {
      throw invalidParameter('desiredCount is required for a service with the REPLICA scheduling strategy.');
    }
    assertCount(req.desiredCount);
    // EXTERNAL services get their task definition, network and load balancers from task sets.
    const td = controller === 'EXTERNAL' && req.taskDefinition === undefined ? undefined : this.resolveTaskDefinitionForService(req.taskDefinition);
    const launch = td ? this.launchChoice(req.launchType, req.capacityProviderStrategy, td) : this.launchChoice(req.launchType, req.capacityProviderStrategy, { compatibilities: ['EC2', 'FARGATE'] });
    assertProvidersAssociated(cluster, req.capacityProviderStrategy);
    const networkConfiguration = td ? this.networkConfiguration(req.networkConfiguration, td) : undefined;
    const loadBalancers = td ? this.loadBalancers(req.loadBalancers, td) : [];
    if (controller === 'CODE_DEPLOY' && loadBalancers.length === 0) {
      throw invalidParameter('A service using the CODE_DEPLOY deployment controller needs a load balancer (blue/green shifts its traffic).');
    }
    const deploymentConfiguration = deploymentConfig(req.deploymentConfiguration, undefined);
    const serviceConnect = serviceConnectOf(req.serviceConnectConfiguration, td, cluster.serviceConnectNamespace, () => this.discoveryArn());
    const volumeConfigurations = volumeConfigurationsOf(req.volumeConfigurations, td);
    const vpcLatticeConfigurations = vpcLatticeConfigurationsOf(req.vpcLatticeConfigurations);
    const propagateTags = propagateTagsOf(req.propagateTags);
    const availabilityZoneRebalancing = azRebalancingOf(req.availabilityZoneRebalancing);
    const tags = tagsInput(req.tags);
    const now = this.clock.nowMs();
    const svc: SimService = {
      name,
      arn: this.arns.service(cluster.name, name),
      cluster: cluster.name,
      status: 'ACTIVE',
      desiredCount: req.desiredCount,
      taskDefinition: (td?.taskDefinitionArn as string | undefined) ?? '',
      ...launch,
      platformVersion: launch.launchType === 'FARGATE' || launch.capacityProviderStrategy ? (req.platformVersion ?? 'LATEST') : req.platformVersion,
      networkConfiguration,
      loadBalancers,
      ...(serviceConnect ? { serviceConnectConfiguration: serviceConnect.configuration, serviceConnectResources: serviceConnect.resources } : {}),
      ...(volumeConfigurations ? { volumeConfigurations } : {}),
      ...(vpcLatticeConfigurations ? { vpcLatticeConfigurations } : {}),
      deploymentConfiguration,
      serviceRegistries: structuredClone(req.serviceRegistries ?? []),
      healthCheckGracePeriodSeconds: req.healthCheckGracePeriodSeconds,
      deploymentController: controller,
      availabilityZoneRebalancing,
      placementConstraints: structuredClone(req.placementConstraints ?? []),
      placementStrategy: structuredClone(req.placementStrategy ?? []),
      enableECSManagedTags: req.enableECSManagedTags ?? false,
      propagateTags,
      enableExecuteCommand: req.enableExecuteCommand ?? false,
      tags,
      createdAt: now,
      createdBy: this.arns.principal(),
      clientToken,
      creationFingerprint: fingerprint,
      deployments: [],
      serviceDeployments: [],
      serviceRevisions: new Map(),
      events: [],
      steady: false,
      consecutiveFailures: 0,
      launchBackoffUntil: 0,
      warnings: new Map(),
    };
    cluster.services.set(name, svc);
    // An EXTERNAL service runs nothing until a task set is created (not simulated).
    if (controller !== 'EXTERNAL') this.scheduler.startDeployment(svc, templateOf(svc));
    return { service: this.serviceToWire(svc, true) };
  }

  /** launchType or capacityProviderStrategy, validated against the task definition. */
  private launchChoice(
    launchType: string | undefined,
    strategy: CapacityProviderStrategyItem[] | undefined,
    td: TaskDefinition,
  ): Pick<DeploymentTemplate, 'launchType' | 'capacityProviderStrategy'> {
    listMember({ capacityProviderStrategy: strategy }, 'capacityProviderStrategy', 'structure');
    if (launchType !== undefined && strategy !== undefined && strategy.length > 0) {
      throw invalidParameter('Specifying both a launch type and capacity provider strategy is not supported. Remove one and try again.');
    }
    if (launchType !== undefined && launchType !== 'FARGATE' && launchType !== 'EC2') {
      throw invalidParameter(`launchType ${launchType} is not supported by the simulator (FARGATE or EC2).`);
    }
    const fargate = launchType === 'FARGATE' || (strategy ?? []).some((s) => s.capacityProvider?.startsWith('FARGATE'));
    if (fargate && !(td.compatibilities ?? []).includes('FARGATE')) {
      throw invalidParameter('Task definition does not support launch_type FARGATE.');
    }
    for (const s of strategy ?? []) {
      if (!s.capacityProvider) throw invalidParameter('capacityProvider can not be blank.');
      if ((s.weight ?? 0) < 0 || (s.weight ?? 0) > 1000) throw invalidParameter('weight must be between 0 and 1000.');
      if ((s.base ?? 0) < 0 || (s.base ?? 0) > 100000) throw invalidParameter('base must be between 0 and 100000.');
    }
    if (strategy && strategy.filter((s) => (s.base ?? 0) > 0).length > 1) {
      throw invalidParameter('Only one capacity provider in a strategy can have a base defined.');
    }
    if (strategy && strategy.length > 0) return { capacityProviderStrategy: structuredClone(strategy) };
    return launchType ? { launchType: launchType as 'FARGATE' | 'EC2' } : {};
  }

  private networkConfiguration(
    nc: NetworkConfiguration | undefined,
    td: TaskDefinition,
  ): DeploymentTemplate['networkConfiguration'] {
    if (td.networkMode === 'awsvpc' && !nc?.awsvpcConfiguration) {
      throw invalidParameter("Network Configuration must be provided when networkMode 'awsvpc' is specified.");
    }
    if (!nc?.awsvpcConfiguration) return undefined;
    const v = nc.awsvpcConfiguration;
    if (typeof v !== 'object' || Array.isArray(v)) {
      throw new EcsApiError('SerializationException', 'awsvpcConfiguration must be a structure.');
    }
    listMember(v as unknown as Record<string, unknown>, 'subnets', 'string');
    listMember(v as unknown as Record<string, unknown>, 'securityGroups', 'string');
    if (!v.subnets || v.subnets.length === 0) throw invalidParameter('subnets can not be empty.');
    if (v.subnets.length > 16) throw invalidParameter('subnets can have at most 16 items.');
    if ((v.securityGroups ?? []).length > 5) throw invalidParameter('securityGroups can have at most 5 items.');
    this.assertNetworkExists(v.subnets, v.securityGroups ?? []);
    return {
      awsvpcConfiguration: {
        subnets: [...v.subnets],
        ...(v.securityGroups ? { securityGroups: [...v.securityGroups] } : {}),
        assignPublicIp: v.assignPublicIp ?? 'DISABLED',
      },
    };
  }

  /**
   * ECS looks the subnets and security groups up in EC2 and refuses ids EC2 does not know, with
   * EC2's error code in its message (only when a VPC is declared: the `vpc` option, {@link setVpc}).
   * With several unknown ids the simulator names the first.
   */
  private assertNetworkExists(subnets: readonly string[], securityGroups: readonly string[]): void {
    if (!this.vpc) return;
    const subnet = subnets.find((id) => !this.vpc?.subnets.has(id));
    if (subnet !== undefined) {
      throw invalidParameter(`Error retrieving subnet information for [${subnet}]: The subnet ID '${subnet}' does not exist (ErrorCode: InvalidSubnetID.NotFound)`);
    }
    const group = securityGroups.find((id) => !this.vpc?.securityGroups.has(id));
    if (group !== undefined) {
      throw invalidParameter(`Error retrieving security group information for [${group}]: The security group '${group}' does not exist (ErrorCode: InvalidGroup.NotFound)`);
    }
  }

  private loadBalancers(lbs: DeploymentTemplate['loadBalancers'] | undefined, td: TaskDefinition): DeploymentTemplate['loadBalancers'] {
    listMember({ loadBalancers: lbs }, 'loadBalancers', 'structure');
    if ((lbs ?? []).length > MAX_LOAD_BALANCERS) throw invalidParameter(`loadBalancers can have at most ${MAX_LOAD_BALANCERS} items.`);
    for (const lb of lbs ?? []) {
      const c = (td.containerDefinitions ?? []).find((x: ContainerDefinition) => x.name === lb.containerName);
      if (!c) throw invalidParameter(`The container ${lb.containerName} does not exist in the task definition.`);
      if (!(c.portMappings ?? []).some((p) => p.containerPort === lb.containerPort)) {
        throw invalidParameter(
          `The container ${lb.containerName} did not have a container port ${lb.containerPort} defined.`,
        );
      }
    }
    return structuredClone(lbs ?? []);
  }

  private updateService(req: UpdateServiceRequest): unknown {
    const cluster = this.resolveCluster(req.cluster);
    const svc = this.requireActiveService(cluster, req.service);
    checkControllerUpdate(svc.deploymentController, req);
    let newDeployment = req.forceNewDeployment === true;
    if (req.desiredCount !== undefined) assertCount(req.desiredCount);
    if (svc.deploymentController === 'EXTERNAL') return this.updateExternalService(svc, req);
    let td = this.taskDefinitionByArn(svc.taskDefinition) as TaskDefinition;
    if (req.taskDefinition !== undefined) {
      td = this.resolveTaskDefinitionForService(req.taskDefinition);
      if (td.taskDefinitionArn !== svc.taskDefinition) newDeployment = true;
    }
    let launch: Pick<DeploymentTemplate, 'launchType' | 'capacityProviderStrategy'> = {
      launchType: svc.launchType,
      capacityProviderStrategy: svc.capacityProviderStrategy,
    };
    if (req.capacityProviderStrategy !== undefined) {
      const changed = canonicalJson(req.capacityProviderStrategy) !== canonicalJson(svc.capacityProviderStrategy ?? []);
      if (changed && req.forceNewDeployment !== true && (svc.launchType !== undefined || svc.capacityProviderStrategy !== undefined)) {
        throw invalidParameter(
          'When switching from launch type to capacity provider strategy on an existing service, or making a change to a capacity provider strategy on a service that is already using one, you must force a new deployment.',
        );
      }
      launch = this.launchChoice(undefined, req.capacityProviderStrategy, td);
      assertProvidersAssociated(cluster, req.capacityProviderStrategy);
      if (changed) newDeployment = true;
    } else {
      this.launchChoice(svc.launchType, svc.capacityProviderStrategy, td);
    }
    let networkConfiguration = svc.networkConfiguration;
    if (req.networkConfiguration !== undefined) {
      networkConfiguration = this.networkConfiguration(req.networkConfiguration, td);
      if (canonicalJson(networkConfiguration) !== canonicalJson(svc.networkConfiguration)) newDeployment = true;
    } else if (td.networkMode === 'awsvpc' && !networkConfiguration) {
      this.networkConfiguration(undefined, td);
    }
    let loadBalancers = svc.loadBalancers;
    if (req.loadBalancers !== undefined) {
      loadBalancers = this.loadBalancers(req.loadBalancers, td);
      if (canonicalJson(loadBalancers) !== canonicalJson(svc.loadBalancers)) newDeployment = true;
    }
    if (req.platformVersion !== undefined && req.platformVersion !== svc.platformVersion) newDeployment = true;
    let serviceConnect = svc.serviceConnectConfiguration ? { configuration: svc.serviceConnectConfiguration, resources: svc.serviceConnectResources ?? [] } : undefined;
    if (req.serviceConnectConfiguration !== undefined) {
      const same = canonicalJson(req.serviceConnectConfiguration) === canonicalJson(svc.serviceConnectConfiguration);
      if (!same) {
        serviceConnect = serviceConnectOf(req.serviceConnectConfiguration, td, cluster.serviceConnectNamespace, () => this.discoveryArn());
        newDeployment = true;
      }
    } else if (serviceConnect && td.taskDefinitionArn !== svc.taskDefinition) {
      // A new task definition must still have the ports Service Connect names.
      serviceConnectOf(serviceConnect.configuration, td, cluster.serviceConnectNamespace, () => '');
    }
    let volumeConfigurations = svc.volumeConfigurations;
    if (req.volumeConfigurations !== undefined) {
      volumeConfigurations = req.volumeConfigurations.length === 0 ? undefined : volumeConfigurationsOf(req.volumeConfigurations, td);
      if (canonicalJson(volumeConfigurations ?? []) !== canonicalJson(svc.volumeConfigurations ?? [])) newDeployment = true;
    } else if (volumeConfigurations && td.taskDefinitionArn !== svc.taskDefinition) {
      volumeConfigurationsOf(volumeConfigurations, td);
    }
    let vpcLatticeConfigurations = svc.vpcLatticeConfigurations;
    if (req.vpcLatticeConfigurations !== undefined) {
      // Given, it replaces the service's ("This parameter triggers a new service deployment"); [] removes it.
      vpcLatticeConfigurations = vpcLatticeConfigurationsOf(req.vpcLatticeConfigurations);
      if (canonicalJson(vpcLatticeConfigurations ?? []) !== canonicalJson(svc.vpcLatticeConfigurations ?? [])) newDeployment = true;
    }
    const propagateTags = propagateTagsOf(req.propagateTags, svc.propagateTags);
    const availabilityZoneRebalancing = azRebalancingOf(req.availabilityZoneRebalancing, svc.availabilityZoneRebalancing);
    // Validated before anything changes: a refused UpdateService leaves the service as it was.
    const deploymentConfiguration =
      req.deploymentConfiguration !== undefined
        ? deploymentConfig(req.deploymentConfiguration, svc.deploymentConfiguration)
        : svc.deploymentConfiguration;

    // Apply (validation passed).
    if (req.desiredCount !== undefined) svc.desiredCount = req.desiredCount;
    svc.deploymentConfiguration = deploymentConfiguration;
    if (req.healthCheckGracePeriodSeconds !== undefined) svc.healthCheckGracePeriodSeconds = req.healthCheckGracePeriodSeconds;
    if (req.enableECSManagedTags !== undefined) svc.enableECSManagedTags = req.enableECSManagedTags;
    svc.propagateTags = propagateTags;
    svc.availabilityZoneRebalancing = availabilityZoneRebalancing;
    if (req.enableExecuteCommand !== undefined) svc.enableExecuteCommand = req.enableExecuteCommand;
    if (req.placementConstraints !== undefined) svc.placementConstraints = structuredClone(req.placementConstraints);
    if (req.placementStrategy !== undefined) svc.placementStrategy = structuredClone(req.placementStrategy);
    if (req.serviceRegistries !== undefined) svc.serviceRegistries = structuredClone(req.serviceRegistries);
    svc.taskDefinition = td.taskDefinitionArn as string;
    svc.launchType = launch.launchType;
    svc.capacityProviderStrategy = launch.capacityProviderStrategy;
    if (req.platformVersion !== undefined) svc.platformVersion = req.platformVersion;
    svc.networkConfiguration = networkConfiguration;
    svc.loadBalancers = loadBalancers;
    svc.serviceConnectConfiguration = serviceConnect?.configuration;
    svc.serviceConnectResources = serviceConnect?.resources;
    svc.volumeConfigurations = volumeConfigurations;
    svc.vpcLatticeConfigurations = vpcLatticeConfigurations;
    if (newDeployment) this.scheduler.startDeployment(svc, templateOf(svc));
    else {
      svc.steady = svc.steady && req.desiredCount === undefined;
      this.scheduler.kick(svc);
    }
    return { service: this.serviceToWire(svc, false) };
  }

  /** UpdateService on an EXTERNAL service: only what the API reference lets it change. */
  private updateExternalService(svc: SimService, req: UpdateServiceRequest): unknown {
    const propagateTags = propagateTagsOf(req.propagateTags, svc.propagateTags);
    if (req.desiredCount !== undefined) svc.desiredCount = req.desiredCount;
    if (req.healthCheckGracePeriodSeconds !== undefined) svc.healthCheckGracePeriodSeconds = req.healthCheckGracePeriodSeconds;
    if (req.enableECSManagedTags !== undefined) svc.enableECSManagedTags = req.enableECSManagedTags;
    if (req.enableExecuteCommand !== undefined) svc.enableExecuteCommand = req.enableExecuteCommand;
    if (req.placementConstraints !== undefined) svc.placementConstraints = structuredClone(req.placementConstraints);
    if (req.placementStrategy !== undefined) svc.placementStrategy = structuredClone(req.placementStrategy);
    svc.propagateTags = propagateTags;
    return { service: this.serviceToWire(svc, false) };
  }

  private deleteService(i: Record<string, unknown>): unknown {
    const cluster = this.resolveCluster(i.cluster);
    const svc = this.requireActiveService(cluster, i.service);
    if (svc.desiredCount > 0 && i.force !== true) {
      throw invalidParameter('The service cannot be stopped while it is scaled above 0.');
    }
    svc.desiredCount = 0;
    svc.status = 'DRAINING';
    svc.steady = false;
    svc.retry?.cancel();
    this.scheduler.kick(svc);
    return { service: this.serviceToWire(svc, false) };
  }

  private describeServices(i: Record<string, unknown>): unknown {
    const cluster = this.resolveCluster(i.cluster);
    const refs = listMember(i, 'services', 'string');
    if (!refs || refs.length === 0) throw invalidParameter('Services cannot be empty.');
    if (refs.length > ECS_LIMITS.describeServicesBatch) {
      throw invalidParameter(`service names can have at most ${ECS_LIMITS.describeServicesBatch} items.`);
    }
    const includeTags = (listMember(i, 'include', 'string') ?? []).includes('TAGS');
    const services: Service[] = [];
    const failures: { arn: string; reason: string }[] = [];
    for (const ref of refs as string[]) {
      const svc = this.findService(cluster, ref);
      if (svc) services.push(this.serviceToWire(svc, includeTags));
      else failures.push({ arn: ref.startsWith('arn:') ? ref : this.arns.service(cluster.name, ref), reason: 'MISSING' });
    }
    return { services, failures };
  }

  private listServices(i: Record<string, unknown>): unknown {
    const cluster = this.resolveCluster(i.cluster);
    const launchType = i.launchType as string | undefined;
    const arns = [...cluster.services.values()]
      .filter((s) => s.status === 'ACTIVE')
      .filter((s) => launchType === undefined || (s.launchType ?? (s.capacityProviderStrategy ? 'FARGATE' : 'EC2')) === launchType)
      .map((s) => s.arn);
    const p = page(`services:${cluster.name}`, arns, pageReq(i), {
      defaultMax: ECS_LIMITS.listServicesDefaultMaxResults,
      max: ECS_LIMITS.listServicesMaxResults,
    });
    return { serviceArns: p.items, ...(p.nextToken ? { nextToken: p.nextToken } : {}) };
  }

  // Service deployments and revisions ---------------------------------------------------------

  /**
   * ListServiceDeployments (Amazon ECS API reference): the service's deployments, newest first,
   * filtered by `status` and `createdAt` (`after` / `before`, epoch seconds on the wire);
   * `maxResults` 1..100, default 20.
   * @throws EcsApiError ClusterNotFoundException, ServiceNotFoundException, InvalidParameterException.
   */
  private listServiceDeployments(i: Record<string, unknown>): unknown {
    const cluster = this.resolveCluster(i.cluster);
    const svc = this.requireService(cluster, i.service);
    const statuses = listMember(i, 'status', 'string') as string[] | undefined;
    const created = (own(i, 'createdAt') ?? {}) as { after?: unknown; before?: unknown };
    const ms = (v: unknown): number | undefined => (v === undefined || v === null ? undefined : v instanceof Date ? v.getTime() : Number(v) * 1000);
    const after = ms(created.after);
    const before = ms(created.before);
    const chosen = svc.serviceDeployments.filter(
      (sd) =>
        (statuses === undefined || statuses.length === 0 || statuses.includes(sd.status)) &&
        (after === undefined || sd.createdAt >= after) &&
        (before === undefined || sd.createdAt <= before),
    );
    // Keys sort by creation time (fixed width), then ARN; the page is newest first.
    const keyOf = (sd: SimServiceDeployment) => `${String(sd.createdAt).padStart(16, '0')}#${sd.arn}`;
    const byKey = new Map(chosen.map((sd) => [keyOf(sd), sd]));
    const p = page(`service-deployments:${svc.arn}`, [...byKey.keys()], pageReq(i), { defaultMax: 20, max: 100, descending: true });
    return {
      serviceDeployments: p.items.map((k) => {
        const sd = byKey.get(k) as SimServiceDeployment;
        return {
          serviceDeploymentArn: sd.arn,
          serviceArn: svc.arn,
          clusterArn: cluster.arn,
          startedAt: new Date(sd.startedAt),
          createdAt: new Date(sd.createdAt),
          ...(sd.finishedAt !== undefined ? { finishedAt: new Date(sd.finishedAt) } : {}),
          targetServiceRevisionArn: sd.targetServiceRevisionArn,
          status: sd.status,
          ...(sd.statusReason ? { statusReason: sd.statusReason } : {}),
        };
      }),
      ...(p.nextToken ? { nextToken: p.nextToken } : {}),
    };
  }

  /** The service a service-deployment / service-revision ARN names, if it exists. */
  private serviceOfArn(arn: string, kind: 'service-revision' | 'service-deployment'): SimService | undefined {
    const p = this.arns.parse(arn);
    if (!p || p.kind !== kind) return undefined;
    return this.state.clusters.get(p.cluster)?.services.get(p.service);
  }

  private arnList(i: Record<string, unknown>, key: string): string[] {
    const arns = listMember(i, key, 'string') as string[] | undefined;
    if (!arns || arns.length === 0) throw invalidParameter(`${key} can not be empty.`);
    if (arns.length > 20) throw invalidParameter(`${key} can have at most 20 items.`);
    return arns;
  }

  /** DescribeServiceDeployments: up to 20 ARNs; unknown ones in `failures` with reason MISSING. */
  private describeServiceDeployments(i: Record<string, unknown>): unknown {
    const serviceDeployments: unknown[] = [];
    const failures: { arn: string; reason: string }[] = [];
    for (const arn of this.arnList(i, 'serviceDeploymentArns')) {
      const svc = this.serviceOfArn(arn, 'service-deployment');
      const sd = svc?.serviceDeployments.find((x) => x.arn === arn);
      if (!svc || !sd) {
        failures.push({ arn, reason: 'MISSING' });
        continue;
      }
      const summary = (revisionArn: string) => {
        const d = svc.deployments.find((x) => x.serviceRevisionArn === revisionArn);
        const counts = d ? this.scheduler.counts(svc, d.id) : { running: 0, pending: 0 };
        return {
          arn: revisionArn,
          requestedTaskCount: d ? this.scheduler.deploymentDesired(svc, d) : 0,
          runningTaskCount: counts.running,
          pendingTaskCount: counts.pending,
        };
      };
      const date = (ms: number | undefined) => (ms === undefined ? {} : { at: new Date(ms) });
      serviceDeployments.push({
        serviceDeploymentArn: sd.arn,
        serviceArn: svc.arn,
        clusterArn: this.arns.cluster(svc.cluster),
        createdAt: new Date(sd.createdAt),
        startedAt: new Date(sd.startedAt),
        updatedAt: new Date(sd.updatedAt),
        ...(date(sd.finishedAt).at ? { finishedAt: date(sd.finishedAt).at } : {}),
        ...(date(sd.stoppedAt).at ? { stoppedAt: date(sd.stoppedAt).at } : {}),
        sourceServiceRevisions: sd.sourceServiceRevisionArns.map(summary),
        targetServiceRevision: summary(sd.targetServiceRevisionArn),
        status: sd.status,
        ...(sd.statusReason ? { statusReason: sd.statusReason } : {}),
        deploymentConfiguration: {
          deploymentCircuitBreaker: { ...sd.deploymentCircuitBreaker },
          minimumHealthyPercent: sd.minimumHealthyPercent,
          maximumPercent: sd.maximumPercent,
        },
        ...(sd.rollback
          ? { rollback: { reason: sd.rollback.reason, startedAt: new Date(sd.rollback.startedAt), serviceRevisionArn: sd.rollback.serviceRevisionArn } }
          : {}),
      });
    }
    return { serviceDeployments, failures };
  }

  /** DescribeServiceRevisions: up to 20 ARNs; unknown ones in `failures` with reason MISSING. */
  private describeServiceRevisions(i: Record<string, unknown>): unknown {
    const serviceRevisions: unknown[] = [];
    const failures: { arn: string; reason: string }[] = [];
    for (const arn of this.arnList(i, 'serviceRevisionArns')) {
      const svc = this.serviceOfArn(arn, 'service-revision');
      const rev = svc?.serviceRevisions.get(arn);
      if (!svc || !rev) {
        failures.push({ arn, reason: 'MISSING' });
        continue;
      }
      const t = rev.template;
      serviceRevisions.push({
        serviceRevisionArn: rev.arn,
        serviceArn: svc.arn,
        clusterArn: this.arns.cluster(svc.cluster),
        taskDefinition: t.taskDefinition,
        ...launchFields(t),
        ...(t.networkConfiguration ? { networkConfiguration: structuredClone(t.networkConfiguration) as NetworkConfiguration } : {}),
        loadBalancers: structuredClone(t.loadBalancers),
        ...(t.serviceConnectConfiguration ? { serviceConnectConfiguration: structuredClone(t.serviceConnectConfiguration) } : {}),
        ...(t.volumeConfigurations ? { volumeConfigurations: structuredClone(t.volumeConfigurations) } : {}),
        ...(t.vpcLatticeConfigurations ? { vpcLatticeConfigurations: structuredClone(t.vpcLatticeConfigurations) } : {}),
        createdAt: new Date(rev.createdAt),
      });
    }
    return { serviceRevisions, failures };
  }

  // Tasks -------------------------------------------------------------------------------------

  private listTasks(i: Record<string, unknown>): unknown {
    const cluster = this.resolveCluster(i.cluster);
    let svc: SimService | undefined;
    if (i.serviceName !== undefined) svc = this.requireService(cluster, i.serviceName);
    const desiredStatus = (i.desiredStatus as string | undefined) ?? 'RUNNING';
    if (!['RUNNING', 'PENDING', 'STOPPED'].includes(desiredStatus)) {
      throw invalidParameter('desiredStatus must be one of RUNNING, PENDING, STOPPED.');
    }
    const family = i.family as string | undefined;
    const startedBy = i.startedBy as string | undefined;
    const launchType = i.launchType as string | undefined;
    const tasks = (svc ? this.scheduler.tasksOf(svc) : [...cluster.tasks.values()]).filter(
      (t) =>
        (desiredStatus === 'STOPPED' ? t.desiredStatus === 'STOPPED' : t.desiredStatus === 'RUNNING') &&
        (desiredStatus !== 'PENDING' || PENDING_STATES.has(t.lastStatus)) &&
        (family === undefined || shortName(t.taskDefinitionArn).split(':')[0] === family) &&
        (startedBy === undefined || t.startedBy === startedBy) &&
        (launchType === undefined || t.launchType === launchType),
    );
    const p = page(`tasks:${cluster.name}`, tasks.map((t) => t.arn), pageReq(i), {
      defaultMax: ECS_LIMITS.listTasksDefaultMaxResults,
      max: ECS_LIMITS.listTasksMaxResults,
    });
    return { taskArns: p.items, ...(p.nextToken ? { nextToken: p.nextToken } : {}) };
  }

  private describeTasks(i: Record<string, unknown>): unknown {
    const cluster = this.resolveCluster(i.cluster);
    const refs = listMember(i, 'tasks', 'string');
    if (!refs || refs.length === 0) throw invalidParameter('Tasks cannot be empty.');
    if (refs.length > ECS_LIMITS.describeTasksBatch) {
      throw invalidParameter(`taskIds can have at most ${ECS_LIMITS.describeTasksBatch} items.`);
    }
    const includeTags = (listMember(i, 'include', 'string') ?? []).includes('TAGS');
    const tasks: Task[] = [];
    const failures: { arn: string; reason: string }[] = [];
    for (const ref of refs as string[]) {
      const t = this.findTask(cluster, ref);
      if (t) tasks.push(this.taskToWire(t, includeTags));
      else failures.push({ arn: ref.startsWith('arn:') ? ref : this.arns.task(cluster.name, ref), reason: 'MISSING' });
    }
    return { tasks, failures };
  }

  private stopTaskApi(i: Record<string, unknown>): unknown {
    const cluster = this.resolveCluster(i.cluster);
    const t = this.findTask(cluster, str(i, 'task', true));
    if (!t) throw invalidParameter('The referenced task was not found.');
    const reason = typeof i.reason === 'string' && i.reason !== '' ? i.reason : stoppedReason.userDefault();
    this.scheduler.stopTask(t, 'UserInitiated', reason);
    return { task: this.taskToWire(t, false) };
  }

  private runTask(req: RunTaskRequest): unknown {
    const cluster = this.resolveCluster(req.cluster);
    const count = req.count ?? 1;
    if (!Number.isInteger(count) || count < 1 || count > 10) throw invalidParameter('count must be between 1 and 10.');
    const ref = stringMember(req as unknown as Record<string, unknown>, 'taskDefinition');
    const found = ref ? this.lookupTaskDefinition(ref) : undefined;
    if (!found) throw clientException('TaskDefinition not found.');
    const td = found.family.revisions[found.index].taskDefinition;
    const launch = this.launchChoice(req.launchType, req.capacityProviderStrategy, td);
    assertProvidersAssociated(cluster, req.capacityProviderStrategy);
    const nc = this.networkConfiguration(req.networkConfiguration, td);
    const strategy = launch.capacityProviderStrategy ?? (launch.launchType ? undefined : cluster.defaultCapacityProviderStrategy);
    const provider = strategy && strategy.length > 0 ? strategy[0].capacityProvider : undefined;
    const launchType = provider?.startsWith('FARGATE') || launch.launchType === 'FARGATE' ? 'FARGATE' : 'EC2';
    const tasks: Task[] = [];
    const failures: { arn?: string; reason: string }[] = [];
    const { rule } = ruleForTask(this.rules, td.containerDefinitions ?? []);
    for (let n = 0; n < count; n++) {
      if (launchType === 'EC2') {
        failures.push({ reason: 'No Container Instances were found in your cluster.' });
        continue;
      }
      if (rule.mode === 'no-capacity') {
        failures.push({ reason: 'Capacity is unavailable at this time. Please try again later or in a different availability zone' });
        continue;
      }
      const t = this.scheduler.launch({
        cluster,
        taskDefinition: td,
        launchType,
        capacityProviderName: provider,
        platformVersion: req.platformVersion,
        subnets: nc?.awsvpcConfiguration.subnets ?? [],
        startedBy: req.startedBy,
        group: req.group ?? `family:${td.family}`,
        tags: tagsInput(req.tags),
      });
      tasks.push(this.taskToWire(t, false));
    }
    return { tasks, failures };
  }

  // Tags --------------------------------------------------------------------------------------

  /** The live tag list of the resource an ARN names. */
  private tagsOf(arn: string): Tag[] {
    const p = this.arns.parse(arn);
    if (!p) throw invalidParameter(`Invalid resource ARN: ${arn}`);
    switch (p.kind) {
      case 'cluster': {
        const c = this.state.clusters.get(p.cluster);
        if (!c || c.status !== 'ACTIVE') throw clusterNotFound();
        return c.tags;
      }
      case 'service': {
        const c = this.state.clusters.get(p.cluster);
        if (!c || c.status !== 'ACTIVE') throw clusterNotFound();
        const s = c.services.get(p.service);
        if (!s || s.status === 'INACTIVE') throw serviceNotFound();
        return s.tags;
      }
      case 'task': {
        const c = this.state.clusters.get(p.cluster);
        if (!c) throw clusterNotFound();
        const t = c.tasks.get(p.taskId);
        if (!t) throw new EcsApiError('ResourceNotFoundException', 'The specified task was not found.');
        return t.tags;
      }
      case 'task-definition': {
        const rev = this.state.families.get(p.family)?.revisions[p.revision - 1];
        if (!rev) throw clientException('The specified task definition does not exist.');
        return rev.tags;
      }
      default:
        throw invalidParameter(`Resource ${arn} cannot be tagged.`);
    }
  }

  private tagResource(i: Record<string, unknown>): unknown {
    const tags = this.tagsOf(str(i, 'resourceArn', true));
    const add = tagsInput(i.tags);
    if (add.length === 0) throw invalidParameter('Tags cannot be empty.');
    // Merge into a copy and check the limit before changing the resource: a refused TagResource
    // changes no tag.
    const merged = tags.map((t) => ({ ...t }));
    for (const t of add) {
      const existing = merged.find((x) => x.key === t.key);
      if (existing) existing.value = t.value;
      else merged.push(t);
    }
    if (merged.length > 50) throw invalidParameter('The resource can have at most 50 tags.');
    tags.splice(0, tags.length, ...merged);
    return {};
  }

  private untagResource(i: Record<string, unknown>): unknown {
    const tags = this.tagsOf(str(i, 'resourceArn', true));
    const keys = listMember(i, 'tagKeys', 'string');
    if (!keys || keys.length === 0) throw invalidParameter('TagKeys cannot be empty.');
    for (const k of keys) {
      const idx = tags.findIndex((t) => t.key === k);
      if (idx >= 0) tags.splice(idx, 1);
    }
    return {};
  }
}

/** Shape of {@link SimulatedEcs.snapshot}. */
export interface SimSnapshot {
  now: string;
  speed: number | null;
  throttling: boolean;
  latencyMs: number;
  failureRules: FailureRule[];
  faults: ReturnType<FaultInjector['list']>;
  /** The declared subnets and security groups; null: every id is taken as existing. */
  vpc: SimVpc | null;
  clusters: {
    name: string;
    status: string;
    services: {
      name: string;
      status: string;
      desiredCount: number;
      runningCount: number;
      pendingCount: number;
      taskDefinition: string;
      deployments: {
        id: string;
        status: string;
        taskDefinition: string;
        rolloutState: string;
        failedTasks: number;
        running: number;
        pending: number;
      }[];
      latestEvents: string[];
    }[];
    tasks: {
      id: string;
      service?: string;
      lastStatus: string;
      desiredStatus: string;
      healthStatus: string;
      taskDefinitionArn: string;
      capacityProviderName?: string;
      failureMode: string;
      stopCode?: string;
      stoppedReason?: string;
    }[];
  }[];
  taskDefinitionFamilies: { family: string; revisions: { revision?: number; status?: string }[] }[];
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

function str(i: Record<string, unknown>, key: string, required: true): string {
  const v = own(i, key);
  if (typeof v !== 'string' || (required && v === '')) {
    throw invalidParameter(`${key} can not be blank.`);
  }
  return v;
}

function pageReq(i: Record<string, unknown>): { maxResults?: number; nextToken?: string } {
  return {
    ...(i.maxResults !== undefined ? { maxResults: i.maxResults as number } : {}),
    ...(typeof i.nextToken === 'string' && i.nextToken !== '' ? { nextToken: i.nextToken } : {}),
  };
}

/** ECS declares desiredCount an Integer (32-bit): 0..2147483647 tasks. */
const MAX_DESIRED_COUNT = 2_147_483_647;

function assertCount(n: unknown): void {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > MAX_DESIRED_COUNT) {
    throw invalidParameter(`desiredCount must be a whole number from 0 to ${MAX_DESIRED_COUNT}.`);
  }
}

function tagsInput(tags: unknown): Tag[] {
  if (tags === undefined) return [];
  if (!Array.isArray(tags)) throw invalidParameter('tags must be a list of {key, value}.');
  if (tags.length > 50) throw invalidParameter('tags can have at most 50 items.');
  return tags.map((t: { key?: unknown; value?: unknown }) => {
    if (typeof t?.key !== 'string' || t.key.length < 1 || t.key.length > 128) {
      throw invalidParameter('Tag keys must be 1 to 128 characters.');
    }
    if (t.key.toLowerCase().startsWith('aws:')) throw invalidParameter('Tag keys beginning with aws: are reserved.');
    const value = t.value === undefined ? '' : t.value;
    if (typeof value !== 'string' || value.length > 256) throw invalidParameter('Tag values must be at most 256 characters.');
    return { key: t.key, value };
  });
}

const DEPLOYMENT_STRATEGIES = ['ROLLING', 'BLUE_GREEN', 'LINEAR', 'CANARY'] as const;
/** Members of the native strategies the simulator keeps as given (it deploys them all rolling). */
const STRATEGY_MEMBERS = ['lifecycleHooks', 'linearConfiguration', 'canaryConfiguration'] as const;

/**
 * Defaults: 100 / 200, circuit breaker off (docs/ecs-facts.md §6), strategy ROLLING and bake time
 * 0 (§13); an update keeps what it omits.
 */
function deploymentConfig(given: DeploymentConfiguration | undefined, current: DeploymentConfig | undefined): DeploymentConfig {
  const strategy = given?.strategy ?? current?.strategy ?? 'ROLLING';
  if (!(DEPLOYMENT_STRATEGIES as readonly string[]).includes(strategy)) {
    throw invalidParameter(`Invalid deploymentConfiguration.strategy '${strategy}'. Valid values: ${DEPLOYMENT_STRATEGIES.join(', ')}.`);
  }
  const bakeTimeInMinutes = given?.bakeTimeInMinutes ?? current?.bakeTimeInMinutes ?? 0;
  if (!Number.isInteger(bakeTimeInMinutes) || bakeTimeInMinutes < 0) throw invalidParameter('bakeTimeInMinutes must be a whole number of minutes, 0 or more.');
  const { enable: _e, rollback: _r, ...breakerRest } = (given?.deploymentCircuitBreaker ?? {}) as Record<string, unknown>;
  const { enable: _ce, rollback: _cr, ...currentBreakerRest } = current?.deploymentCircuitBreaker ?? {};
  const out: DeploymentConfig = {
    minimumHealthyPercent: given?.minimumHealthyPercent ?? current?.minimumHealthyPercent ?? 100,
    maximumPercent: given?.maximumPercent ?? current?.maximumPercent ?? 200,
    deploymentCircuitBreaker: {
      ...structuredClone(given?.deploymentCircuitBreaker ? breakerRest : currentBreakerRest),
      enable: given?.deploymentCircuitBreaker?.enable ?? current?.deploymentCircuitBreaker.enable ?? false,
      rollback: given?.deploymentCircuitBreaker?.rollback ?? current?.deploymentCircuitBreaker.rollback ?? false,
    },
    strategy: strategy as DeploymentConfig['strategy'],
    bakeTimeInMinutes,
  };
  for (const member of STRATEGY_MEMBERS) {
    const value = given?.[member] ?? current?.[member];
    if (value !== undefined) out[member] = structuredClone(value);
  }
  const alarms = alarmsOf(given?.alarms, current?.alarms);
  if (alarms) out.alarms = alarms;
  if (!Number.isInteger(out.minimumHealthyPercent) || out.minimumHealthyPercent < 0 || out.minimumHealthyPercent > 100) {
    throw invalidParameter('minimumHealthyPercent must be between 0 and 100.');
  }
  if (!Number.isInteger(out.maximumPercent) || out.maximumPercent < 100) {
    throw invalidParameter('maximumPercent must be at least 100 for a REPLICA service.');
  }
  return out;
}

function templateOf(svc: SimService): DeploymentTemplate {
  return {
    taskDefinition: svc.taskDefinition,
    launchType: svc.launchType,
    capacityProviderStrategy: svc.capacityProviderStrategy,
    platformVersion: svc.platformVersion,
    networkConfiguration: svc.networkConfiguration,
    loadBalancers: svc.loadBalancers,
    serviceConnectConfiguration: svc.serviceConnectConfiguration,
    serviceConnectResources: svc.serviceConnectResources,
    volumeConfigurations: svc.volumeConfigurations,
    vpcLatticeConfigurations: svc.vpcLatticeConfigurations,
  };
}

/**
 * VPC Lattice configurations as stored: each names a role, a Lattice target group and a port name
 * (Amazon ECS API Reference, VpcLatticeConfiguration: all three required); `[]` is none.
 * @throws InvalidParameterException for a malformed entry.
 */
function vpcLatticeConfigurationsOf(given: unknown): VpcLatticeConfiguration[] | undefined {
  if (given === undefined) return undefined;
  if (!Array.isArray(given)) throw invalidParameter('vpcLatticeConfigurations must be a list.');
  for (const c of given) {
    for (const member of ['roleArn', 'targetGroupArn', 'portName']) {
      const v = c && typeof c === 'object' ? own(c as Record<string, unknown>, member) : undefined;
      if (typeof v !== 'string' || v === '') throw invalidParameter(`vpcLatticeConfigurations.${member} can not be blank.`);
    }
  }
  return given.length > 0 ? structuredClone(given as VpcLatticeConfiguration[]) : undefined;
}

/** launchType or capacityProviderStrategy, and for Fargate the platform fields. */
function launchFields(x: DeploymentTemplate): Partial<Service & Deployment> {
  const fargate = x.launchType === 'FARGATE' || (x.capacityProviderStrategy ?? []).length > 0;
  return {
    ...(x.capacityProviderStrategy && x.capacityProviderStrategy.length > 0
      ? { capacityProviderStrategy: structuredClone(x.capacityProviderStrategy) }
      : {}),
    ...(x.launchType ? { launchType: x.launchType } : {}),
    ...(x.platformVersion ? { platformVersion: x.platformVersion } : {}),
    ...(fargate ? { platformFamily: 'Linux' } : {}),
  };
}

/** JSON with object keys sorted and undefined dropped (parameter comparison). */
function canonicalJson(v: unknown): string {
  return JSON.stringify(v, (_k, value: unknown) => {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      return Object.fromEntries(
        Object.entries(value as Record<string, unknown>)
          .filter(([, x]) => x !== undefined)
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
      );
    }
    return value;
  });
}


/**
 * CreateService / UpdateService with a capacity provider strategy naming a provider the cluster
 * does not have: ECS refuses with this InvalidParameterException (the FARGATE and FARGATE_SPOT
 * providers must be associated with the cluster first, PutClusterCapacityProviders; a cluster
 * made by CreateCluster without `capacityProviders` has none).
 */
function assertProvidersAssociated(cluster: SimCluster, strategy: CapacityProviderStrategyItem[] | undefined): void {
  for (const s of strategy ?? []) {
    if (s.capacityProvider && !cluster.capacityProviders.includes(s.capacityProvider)) {
      throw invalidParameter(
        'The specified capacity provider strategy cannot contain a capacity provider that is not associated with the cluster. Associate the capacity provider with the cluster or specify a valid capacity provider and try again.',
      );
    }
  }
}

/**
 * An in-memory model of ECS for core tests: it applies the planner's actions (RegisterTaskDefinition,
 * CreateService, UpdateService, DeleteService, TagResource) to its state and answers observations
 * in the planner's shapes (`ObservedState`), or through the `EcsReader` / `EcsWriter` ports.
 *
 * The dynamics are deliberately instant: tasks are RUNNING at once, a deployment is COMPLETED at
 * once (unless `rolloutOutcome` says FAILED: then the circuit breaker, when enabled, trips and,
 * with rollback, ECS returns to the previous task definition), DeleteService makes a service
 * INACTIVE at once;
 * services seeded as DRAINING become INACTIVE on `tick()`. Task definitions read back with the
 * server defaults of docs/ecs-facts.md §6 (see {@link describeAsEcs}). For realistic timing use the
 * simulator (`local/`), for request shapes moto.
 */
import type { ActionResult, EcsReader, EcsWriter } from '../../lambda/core/ports';
import type {
  Action,
  ContainerDefinition,
  CreateServiceInput,
  ObservedCluster,
  ObservedDeployment,
  ObservedService,
  ObservedState,
  TaskDefinition,
  UpdateServiceInput,
} from '../../lambda/core/types';

export const FAKE_REGION = 'eu-west-1';
export const FAKE_ACCOUNT = '123456789012';

export interface FakeEcsOptions {
  /** Time stamped on deployments, events and registrations; default 2025-01-01T00:00:00Z. */
  readonly now?: () => Date;
  /**
   * Outcome of each new deployment of a task definition; default always COMPLETED. FAILED models
   * tasks that cannot start: with the service's circuit breaker enabled the deployment ends FAILED
   * (and rolls back when `rollback` is set, docs/ecs-facts.md §4); without it the deployment stays
   * IN_PROGRESS with no new task running, as ECS keeps retrying.
   */
  readonly rolloutOutcome?: (taskDefinition: TaskDefinition, service: ObservedService) => 'COMPLETED' | 'FAILED';
}

/** ARN of a task definition revision. */
export function taskDefinitionArn(family: string, revision: number): string {
  return `arn:aws:ecs:${FAKE_REGION}:${FAKE_ACCOUNT}:task-definition/${family}:${revision}`;
}

/** ARN of a service (new ARN format, with the cluster name). */
export function serviceArn(cluster: string, service: string): string {
  return `arn:aws:ecs:${FAKE_REGION}:${FAKE_ACCOUNT}:service/${cluster}/${service}`;
}

export function clusterArn(cluster: string): string {
  return `arn:aws:ecs:${FAKE_REGION}:${FAKE_ACCOUNT}:cluster/${cluster}`;
}

/** "0.25 vCPU" -> "256", "1 GB" -> "1024", "512" -> "512" (docs/ecs-facts.md §6: numeric strings). */
function numericUnits(value: string | undefined, unit: 'vcpu' | 'gb'): string | undefined {
  if (value === undefined) return undefined;
  const m = /^\s*([\d.]+)\s*([a-z]*)\s*$/i.exec(value);
  if (!m) return value;
  const n = Number(m[1]);
  return m[2].toLowerCase() === unit ? String(Math.round(n * 1024)) : String(n);
}

/**
 * What DescribeTaskDefinition returns for a RegisterTaskDefinition `input` (docs/ecs-facts.md §6): container
 * `essential` true and `cpu` 0 when unset, port mappings with `protocol: tcp` and `hostPort` =
 * `containerPort`, empty lists (`mountPoints`, `volumesFrom`, `portMappings`, `environment`,
 * `systemControls`, `volumes`, `placementConstraints`), health check defaults (interval 30 s,
 * timeout 5 s, retries 3), task `cpu`/`memory` as numeric strings, environment and secrets in
 * another order, no `tags` (they need include=TAGS), and the server-only fields.
 */
export function describeAsEcs(input: TaskDefinition, arn: string, revision: number, registeredAt: Date): TaskDefinition {
  const { tags: _tags, ...td } = structuredClone(input);
  const containerDefinitions = (td.containerDefinitions ?? []).map((c): ContainerDefinition => {
    const out: ContainerDefinition = {
      ...c,
      essential: c.essential ?? true,
      cpu: c.cpu ?? 0,
      portMappings: (c.portMappings ?? []).map((p) => ({
        ...p,
        hostPort: p.hostPort ?? p.containerPort,
        protocol: p.protocol ?? 'tcp',
      })),
      environment: [...(c.environment ?? [])].reverse(),
      mountPoints: c.mountPoints ?? [],
      volumesFrom: c.volumesFrom ?? [],
      systemControls: c.systemControls ?? [],
    };
    if (c.secrets) out.secrets = [...c.secrets].reverse();
    if (c.healthCheck) out.healthCheck = { interval: 30, timeout: 5, retries: 3, ...c.healthCheck };
    return out;
  });
  return {
    ...td,
    containerDefinitions,
    cpu: numericUnits(td.cpu, 'vcpu'),
    memory: numericUnits(td.memory, 'gb'),
    volumes: td.volumes ?? [],
    placementConstraints: td.placementConstraints ?? [],
    taskDefinitionArn: arn,
    revision,
    status: 'ACTIVE',
    requiresAttributes: [{ name: 'com.amazonaws.ecs.capability.docker-remote-api.1.18' }],
    compatibilities: ['EC2', 'FARGATE'],
    registeredAt,
    registeredBy: `arn:aws:iam::${FAKE_ACCOUNT}:root`,
  };
}

class FakeEcsError extends Error {
  constructor(
    readonly errorClass: 'invalid' | 'not-found',
    message: string,
  ) {
    super(message);
  }
}

/** The in-memory ECS. Seed it with `addCluster`, `putService`, `putTaskDefinition`. */
export class FakeEcs implements EcsReader, EcsWriter {
  /** Services by cluster name, then service name. Mutable for tests that drift by hand. */
  readonly clusters = new Map<string, Map<string, ObservedService>>();
  /** Described task definitions by ARN. */
  readonly taskDefinitions = new Map<string, TaskDefinition>();
  /** Every action applied, in order, whatever its outcome. */
  readonly applied: Action[] = [];
  private readonly latestRevision = new Map<string, number>();
  private readonly clientTokens = new Map<string, string>();
  private readonly now: () => Date;
  private readonly rolloutOutcome: NonNullable<FakeEcsOptions['rolloutOutcome']>;
  private seq = 0;

  constructor(options: FakeEcsOptions = {}) {
    const fixed = new Date('2025-01-01T00:00:00Z');
    this.now = options.now ?? (() => fixed);
    this.rolloutOutcome = options.rolloutOutcome ?? (() => 'COMPLETED');
  }

  addCluster(name: string): this {
    if (!this.clusters.has(name)) this.clusters.set(name, new Map());
    return this;
  }

  /** Seeds (or replaces) a service; its cluster is created when missing. */
  putService(cluster: string, service: ObservedService): this {
    this.addCluster(cluster).clusters.get(cluster)!.set(service.serviceName, structuredClone(service));
    return this;
  }

  service(cluster: string, name: string): ObservedService | undefined {
    return this.clusters.get(cluster)?.get(name);
  }

  /** Seeds a described task definition (its `taskDefinitionArn`, `family` and `revision` set). */
  putTaskDefinition(described: TaskDefinition): this {
    const arn = described.taskDefinitionArn;
    if (!arn || !described.family || described.revision === undefined) {
      throw new Error('putTaskDefinition needs taskDefinitionArn, family and revision');
    }
    this.taskDefinitions.set(arn, structuredClone(described));
    this.latestRevision.set(described.family, Math.max(this.latestRevision.get(described.family) ?? 0, described.revision));
    return this;
  }

  /** RegisterTaskDefinition: always a new revision; returns the described form. */
  registerTaskDefinition(input: TaskDefinition & { family: string }): TaskDefinition {
    const revision = (this.latestRevision.get(input.family) ?? 0) + 1;
    const arn = taskDefinitionArn(input.family, revision);
    const described = describeAsEcs(input, arn, revision, this.now());
    this.taskDefinitions.set(arn, described);
    this.latestRevision.set(input.family, revision);
    return structuredClone(described);
  }

  /** DRAINING services become INACTIVE (time passes). */
  tick(): void {
    for (const services of this.clusters.values()) {
      for (const s of services.values()) {
        if (s.status === 'DRAINING') Object.assign(s, { status: 'INACTIVE', runningCount: 0, pendingCount: 0, desiredCount: 0 });
      }
    }
  }

  /** Drops every deployment but the PRIMARY (ECS forgets finished deployments). */
  forgetFinishedDeployments(): void {
    for (const services of this.clusters.values()) {
      for (const s of services.values()) s.deployments = s.deployments.filter((d) => d.status === 'PRIMARY');
    }
  }

  /**
   * A complete observation of `clusters` (default: every cluster known): a cluster the fake does
   * not have is reported `exists: false`. Described task definitions cover every task definition
   * a service or deployment refers to. Deep copies: mutate freely.
   */
  snapshot(clusters: string[] = [...this.clusters.keys()]): ObservedState {
    const observed: ObservedState = { clusters: {}, taskDefinitions: {} };
    for (const name of clusters) {
      const services = this.clusters.get(name);
      observed.clusters[name] = {
        cluster: name,
        complete: true,
        exists: services !== undefined,
        services: Object.fromEntries([...(services ?? new Map()).entries()].map(([k, v]) => [k, structuredClone(v)])),
      };
      for (const s of services?.values() ?? []) {
        for (const arn of [s.taskDefinition, ...s.deployments.map((d) => d.taskDefinition)]) {
          const td = this.taskDefinitions.get(arn);
          if (td) observed.taskDefinitions[arn] = structuredClone(td);
        }
      }
    }
    return observed;
  }

  // -------------------------------------------------------------------------------------------
  // Ports
  // -------------------------------------------------------------------------------------------

  /** ListServices (ACTIVE only) + DescribeServices of `extraServiceNames` (any status). */
  async observeCluster(cluster: string, extraServiceNames: string[]): Promise<ObservedCluster> {
    const services = this.clusters.get(cluster);
    if (!services) return { cluster, complete: true, exists: false, services: {} };
    const out: Record<string, ObservedService> = {};
    for (const [name, s] of services) {
      if (s.status === 'ACTIVE' || extraServiceNames.includes(name)) out[name] = structuredClone(s);
    }
    return { cluster, complete: true, exists: true, services: out };
  }

  async describeTaskDefinitions(arns: string[]): Promise<Record<string, TaskDefinition>> {
    const out: Record<string, TaskDefinition> = {};
    for (const arn of arns) {
      const td = this.taskDefinitions.get(arn);
      if (td) out[arn] = structuredClone(td);
    }
    return out;
  }

  async latestActiveTaskDefinition(family: string): Promise<TaskDefinition | undefined> {
    const revision = this.latestRevision.get(family);
    return revision === undefined ? undefined : structuredClone(this.taskDefinitions.get(taskDefinitionArn(family, revision)));
  }

  async apply(actions: Action[], shouldContinue: () => boolean = () => true): Promise<ActionResult[]> {
    return this.applyAll(actions, shouldContinue);
  }

  /**
   * Applies actions in order, synchronously. A family name in CreateService/UpdateService
   * `taskDefinition` resolves to the revision registered earlier in the same call, else to the
   * family's latest revision (as the actuator does). One failed action does not stop the others.
   */
  applyAll(actions: Action[], shouldContinue: () => boolean = () => true): ActionResult[] {
    const registered = new Map<string, string>();
    return actions.map((action): ActionResult => {
      if (!shouldContinue()) return { ok: false, action, errorClass: 'skipped', message: 'pass out of time' };
      this.applied.push(action);
      try {
        switch (action.type) {
          case 'RegisterTaskDefinition': {
            const td = this.registerTaskDefinition(action.input);
            registered.set(action.input.family, td.taskDefinitionArn!);
            return { ok: true, action, taskDefinitionArn: td.taskDefinitionArn };
          }
          case 'CreateService':
            this.createService(action.input, registered);
            return { ok: true, action };
          case 'UpdateService':
            this.updateService(action.input, registered);
            return { ok: true, action };
          case 'DeleteService':
            this.deleteService(action.cluster, action.service, action.scaleToZero);
            return { ok: true, action };
          case 'TagResource':
            this.tagResource(action.resourceArn, action.tags);
            return { ok: true, action };
        }
      } catch (e) {
        if (e instanceof FakeEcsError) return { ok: false, action, errorClass: e.errorClass, message: e.message };
        throw e;
      }
    });
  }

  // -------------------------------------------------------------------------------------------
  // ECS calls
  // -------------------------------------------------------------------------------------------

  private resolveTaskDefinition(ref: string, registered: Map<string, string>): string {
    let arn: string | undefined;
    if (ref.startsWith('arn:')) arn = ref;
    else if (ref.includes(':')) {
      const [family, rev] = ref.split(':');
      arn = taskDefinitionArn(family, Number(rev));
    } else {
      const rev = this.latestRevision.get(ref);
      arn = registered.get(ref) ?? (rev === undefined ? undefined : taskDefinitionArn(ref, rev));
    }
    if (!arn || !this.taskDefinitions.has(arn)) {
      throw new FakeEcsError('invalid', `ClientException: Unable to describe task definition ${ref}.`);
    }
    return arn;
  }

  private nextId(prefix: string): string {
    this.seq += 1;
    return `${prefix}${String(this.seq).padStart(6, '0')}`;
  }

  private deployment(
    status: string,
    taskDefinition: string,
    desiredCount: number,
    rolloutState: 'COMPLETED' | 'FAILED' | 'IN_PROGRESS',
    running: number,
  ): ObservedDeployment {
    const at = this.now();
    return {
      id: this.nextId('ecs-svc/'),
      status,
      taskDefinition,
      desiredCount,
      runningCount: running,
      pendingCount: 0,
      failedTasks: rolloutState === 'FAILED' ? 3 : 0,
      rolloutState,
      rolloutStateReason:
        rolloutState === 'FAILED'
          ? 'ECS deployment circuit breaker: tasks failed to start.'
          : rolloutState === 'IN_PROGRESS'
            ? 'ECS deployment in progress.'
            : 'ECS deployment ecs-svc completed.',
      createdAt: at,
      updatedAt: at,
    };
  }

  private event(svc: ObservedService, message: string): void {
    svc.events = [{ id: this.nextId('ev-'), createdAt: this.now(), message: `(service ${svc.serviceName}) ${message}` }, ...svc.events].slice(0, 100);
  }

  /** Starts a deployment of `arn` on `svc` and settles it at once. */
  private deploy(svc: ObservedService, arn: string): void {
    const previous = svc.deployments.find((d) => d.status === 'PRIMARY');
    const outcome = this.rolloutOutcome(this.taskDefinitions.get(arn)!, svc);
    if (outcome === 'COMPLETED') {
      svc.taskDefinition = arn;
      svc.deployments = [this.deployment('PRIMARY', arn, svc.desiredCount, 'COMPLETED', svc.desiredCount)];
      svc.runningCount = svc.desiredCount;
      svc.pendingCount = 0;
      this.event(svc, 'has reached a steady state.');
      return;
    }
    const breaker = svc.deploymentConfiguration?.deploymentCircuitBreaker;
    if (breaker?.enable !== true) {
      // Without a circuit breaker ECS keeps trying: the deployment never leaves IN_PROGRESS.
      const stuck = this.deployment('PRIMARY', arn, svc.desiredCount, 'IN_PROGRESS', 0);
      svc.taskDefinition = arn;
      svc.deployments = previous ? [stuck, { ...previous, status: 'ACTIVE' }] : [stuck];
      svc.runningCount = previous ? previous.runningCount : 0;
      svc.pendingCount = 0;
      this.event(svc, 'is unable to consistently start tasks successfully.');
      return;
    }
    const failed = this.deployment('PRIMARY', arn, svc.desiredCount, 'FAILED', 0);
    this.event(svc, `deployment ${failed.id} deployment failed: tasks failed to start.`);
    const rollback = breaker.rollback === true;
    if (previous && rollback) {
      const back = this.deployment('PRIMARY', previous.taskDefinition, svc.desiredCount, 'COMPLETED', svc.desiredCount);
      svc.taskDefinition = previous.taskDefinition;
      svc.deployments = [back, { ...failed, status: 'ACTIVE' }];
      svc.runningCount = svc.desiredCount;
      this.event(svc, `rolling back to deployment ${previous.id}.`);
      return;
    }
    svc.taskDefinition = arn;
    svc.deployments = previous ? [failed, { ...previous, status: 'ACTIVE' }] : [failed];
    svc.runningCount = previous ? previous.runningCount : 0;
    svc.pendingCount = 0;
  }

  private createService(input: CreateServiceInput, registered: Map<string, string>): void {
    const services = this.clusters.get(input.cluster);
    if (!services) throw new FakeEcsError('not-found', 'ClusterNotFoundException: Cluster not found.');
    const existing = services.get(input.serviceName);
    if (existing && existing.status === 'ACTIVE' && this.clientTokens.get(existing.serviceArn) === input.clientToken) return;
    if (existing?.status === 'ACTIVE') {
      throw new FakeEcsError('invalid', 'InvalidParameterException: Creation of service was not idempotent.');
    }
    if (existing?.status === 'DRAINING') {
      throw new FakeEcsError('invalid', 'InvalidParameterException: Unable to Start a service that is still Draining.');
    }
    const arn = this.resolveTaskDefinition(input.taskDefinition, registered);
    const svc: ObservedService = {
      serviceArn: serviceArn(input.cluster, input.serviceName),
      serviceName: input.serviceName,
      clusterArn: clusterArn(input.cluster),
      status: 'ACTIVE',
      desiredCount: input.desiredCount ?? 0,
      runningCount: 0,
      pendingCount: 0,
      taskDefinition: arn,
      ...(input.launchType
        ? { launchType: input.launchType }
        : { capacityProviderStrategy: (input.capacityProviderStrategy ?? []).map((s) => ({ base: 0, ...s })) }),
      platformVersion: input.platformVersion ?? 'LATEST',
      propagateTags: input.propagateTags ?? 'NONE',
      enableECSManagedTags: input.enableECSManagedTags ?? false,
      enableExecuteCommand: input.enableExecuteCommand ?? false,
      ...(input.healthCheckGracePeriodSeconds !== undefined ? { healthCheckGracePeriodSeconds: input.healthCheckGracePeriodSeconds } : {}),
      ...(input.serviceRegistries ? { serviceRegistries: structuredClone(input.serviceRegistries) } : {}),
      deploymentConfiguration: structuredClone(input.deploymentConfiguration),
      networkConfiguration: structuredClone(input.networkConfiguration),
      loadBalancers: structuredClone(input.loadBalancers ?? []),
      deployments: [],
      events: [],
      tags: Object.fromEntries(input.tags.map((t) => [t.key, t.value])),
      createdAt: this.now(),
    };
    services.set(input.serviceName, svc);
    this.clientTokens.set(svc.serviceArn, input.clientToken);
    this.deploy(svc, arn);
  }

  private updateService(input: UpdateServiceInput, registered: Map<string, string>): void {
    const svc = this.clusters.get(input.cluster)?.get(input.service);
    if (!this.clusters.has(input.cluster)) throw new FakeEcsError('not-found', 'ClusterNotFoundException: Cluster not found.');
    if (!svc || svc.status !== 'ACTIVE') throw new FakeEcsError('not-found', 'ServiceNotActiveException: Service was not ACTIVE.');
    let redeploy = input.forceNewDeployment === true;
    let arn = svc.taskDefinition;
    if (input.taskDefinition !== undefined) {
      arn = this.resolveTaskDefinition(input.taskDefinition, registered);
      redeploy ||= arn !== svc.taskDefinition;
    }
    if (input.desiredCount !== undefined) svc.desiredCount = input.desiredCount;
    if (input.capacityProviderStrategy !== undefined) {
      svc.capacityProviderStrategy = input.capacityProviderStrategy.map((s) => ({ base: 0, ...s }));
      delete svc.launchType;
      redeploy = true;
    }
    if (input.networkConfiguration !== undefined) {
      svc.networkConfiguration = structuredClone(input.networkConfiguration);
      redeploy = true;
    }
    if (input.deploymentConfiguration !== undefined) svc.deploymentConfiguration = structuredClone(input.deploymentConfiguration);
    if (input.loadBalancers !== undefined) {
      svc.loadBalancers = structuredClone(input.loadBalancers);
      redeploy = true;
    }
    // The declared service fields, as ECS stores them.
    for (const name of ['platformVersion', 'healthCheckGracePeriodSeconds', 'enableExecuteCommand', 'propagateTags', 'enableECSManagedTags', 'availabilityZoneRebalancing', 'serviceRegistries'] as const) {
      if (input[name] !== undefined) (svc as unknown as Record<string, unknown>)[name] = structuredClone(input[name]);
    }
    if (input.platformVersion !== undefined || input.serviceRegistries !== undefined) redeploy = true;
    if (redeploy) {
      this.deploy(svc, arn);
      return;
    }
    const primary = svc.deployments.find((d) => d.status === 'PRIMARY');
    if (primary) primary.desiredCount = svc.desiredCount;
    if (primary?.rolloutState !== 'FAILED') {
      svc.runningCount = svc.desiredCount;
      if (primary) primary.runningCount = svc.desiredCount;
    }
  }

  private deleteService(cluster: string, name: string, scaleToZero: boolean): void {
    const svc = this.clusters.get(cluster)?.get(name);
    if (!svc || svc.status === 'INACTIVE') throw new FakeEcsError('not-found', 'ServiceNotFoundException: Service not found.');
    if (svc.status === 'DRAINING') throw new FakeEcsError('invalid', 'InvalidParameterException: Service is DRAINING.');
    if (svc.desiredCount > 0 && !scaleToZero) {
      throw new FakeEcsError('invalid', 'InvalidParameterException: The service cannot be stopped while it is scaled above 0.');
    }
    Object.assign(svc, { status: 'INACTIVE', desiredCount: 0, runningCount: 0, pendingCount: 0, deployments: [] });
  }

  private tagResource(resourceArn: string, tags: { key: string; value: string }[]): void {
    for (const services of this.clusters.values()) {
      for (const s of services.values()) {
        if (s.serviceArn === resourceArn && s.status !== 'INACTIVE') {
          for (const t of tags) s.tags[t.key] = t.value;
          return;
        }
      }
    }
    throw new FakeEcsError('not-found', `InvalidParameterException: The specified resource ${resourceArn} is not found.`);
  }
}

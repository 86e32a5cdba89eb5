/**
 * `SimCore`: the state one simulator answers from, and the lookups every API area shares (a
 * cluster by name or ARN, a service, a task, a task definition revision). The API areas under
 * `./api/` are functions of a core and a request; `SimulatedEcs` (`./ecs`) owns one core for its
 * lifetime and resets it in place.
 */
import type { TaskDefinition } from '@aws-sdk/client-ecs';
import type { Arns } from './arns';
import type { VirtualClock } from './clock';
import { clientException, clusterNotFound, invalidParameter, serviceNotActive, serviceNotFound } from './errors';
import type { FailureRule } from './failure-modes';
import type { HookTarget } from './native-deployments';
import { SeededRandom } from './random';
import type { Scheduler, SimTimings } from './scheduler';
import { emptyState, type SimCluster, type SimFamily, type SimService, type SimState, type SimTask } from './state';

/** The declared VPC: the subnets and security groups that exist (undefined: every id exists). */
export type VpcState = { subnets: Set<string>; securityGroups: Set<string> } | undefined;

export class SimCore {
  state: SimState = emptyState();
  rng: SeededRandom;
  rules: FailureRule[] = [];
  scheduler!: Scheduler;
  vpc: VpcState;
  /** Lifecycle hook targets by ARN (the control surface's `setHookTarget`). */
  readonly hookTargets = new Map<string, HookTarget>();
  /** CloudWatch alarm states by name (the control surface's `setAlarmState`); absent is OK. */
  readonly alarms = new Map<string, 'OK' | 'ALARM' | 'INSUFFICIENT_DATA'>();

  constructor(
    readonly clock: VirtualClock,
    readonly arns: Arns,
    readonly timings: SimTimings,
    seed: number,
  ) {
    this.rng = new SeededRandom(seed);
  }

  allTasks(): SimTask[] {
    return [...this.state.clusters.values()].flatMap((c) => [...c.tasks.values()]);
  }

  /** A cluster reference as a name (`default` when absent). @throws InvalidParameterException. */
  clusterName(nameOrArn: unknown): string {
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
  resolveCluster(nameOrArn: unknown): SimCluster {
    const c = this.state.clusters.get(this.clusterName(nameOrArn));
    if (!c || c.status !== 'ACTIVE') throw clusterNotFound();
    return c;
  }

  findService(cluster: SimCluster, nameOrArn: string): SimService | undefined {
    if (nameOrArn.startsWith('arn:')) {
      const p = this.arns.parse(nameOrArn);
      if (!p || p.kind !== 'service' || p.cluster !== cluster.name) return undefined;
      return cluster.services.get(p.service);
    }
    return cluster.services.get(nameOrArn);
  }

  /** @throws EcsApiError ServiceNotFoundException. */
  requireService(cluster: SimCluster, nameOrArn: unknown): SimService {
    if (typeof nameOrArn !== 'string' || nameOrArn === '') throw invalidParameter('Service can not be blank.');
    const s = this.findService(cluster, nameOrArn);
    if (!s) throw serviceNotFound();
    return s;
  }

  /** @throws EcsApiError ServiceNotFoundException / ServiceNotActiveException. */
  requireActiveService(cluster: SimCluster, nameOrArn: unknown): SimService {
    const s = this.requireService(cluster, nameOrArn);
    if (s.status !== 'ACTIVE') throw serviceNotActive();
    return s;
  }

  findTask(cluster: SimCluster, idOrArn: string): SimTask | undefined {
    if (idOrArn.startsWith('arn:')) {
      const p = this.arns.parse(idOrArn);
      if (!p || p.kind !== 'task' || p.cluster !== cluster.name) return undefined;
      return cluster.tasks.get(p.taskId);
    }
    return cluster.tasks.get(idOrArn);
  }

  taskDefinitionByArn(arn: string): TaskDefinition | undefined {
    const p = this.arns.parse(arn);
    if (!p || p.kind !== 'task-definition') return undefined;
    return this.state.families.get(p.family)?.revisions[p.revision - 1]?.taskDefinition;
  }

  /**
   * `family` (latest ACTIVE), `family:revision` or an ARN.
   * @returns undefined when there is no such revision.
   */
  lookupTaskDefinition(ref: string): { family: SimFamily; index: number } | undefined {
    const parsed = this.parseTaskDefinitionRef(ref);
    if (!parsed) return undefined;
    const family = this.state.families.get(parsed.family);
    if (!family) return undefined;
    const revision = parsed.revision;
    if (revision === undefined) {
      for (let i = family.revisions.length - 1; i >= 0; i--) {
        if (family.revisions[i].taskDefinition.status === 'ACTIVE') return { family, index: i };
      }
      return undefined;
    }
    if (revision < 1 || revision > family.revisions.length) return undefined;
    return { family, index: revision - 1 };
  }

  private parseTaskDefinitionRef(ref: string): { family: string; revision?: number } | undefined {
    if (ref.startsWith('arn:')) {
      const p = this.arns.parse(ref);
      return p && p.kind === 'task-definition' ? { family: p.family, revision: p.revision } : undefined;
    }
    const m = /^([^:]+)(?::(\d+))?$/.exec(ref);
    if (!m) return undefined;
    return { family: m[1], ...(m[2] !== undefined ? { revision: Number(m[2]) } : {}) };
  }

  /** For CreateService / UpdateService: must exist and be ACTIVE. */
  resolveTaskDefinitionForService(ref: unknown): TaskDefinition {
    if (typeof ref !== 'string' || ref === '') throw invalidParameter('TaskDefinition can not be blank.');
    const found = this.lookupTaskDefinition(ref);
    if (!found) throw clientException('TaskDefinition not found.');
    const td = found.family.revisions[found.index].taskDefinition;
    if (td.status !== 'ACTIVE') throw clientException('TaskDefinition is inactive');
    return td;
  }

  /** The Cloud Map service ECS creates for a Service Connect discovery name. */
  discoveryArn(): string {
    const s = this.arns.scope;
    return `arn:aws:servicediscovery:${s.region}:${s.accountId}:service/srv-${this.rng.hex(16)}`;
  }

  /** The service a service-deployment / service-revision ARN names, if it exists. */
  serviceOfArn(arn: string, kind: 'service-revision' | 'service-deployment'): SimService | undefined {
    const p = this.arns.parse(arn);
    if (!p || p.kind !== kind) return undefined;
    return this.state.clusters.get(p.cluster)?.services.get(p.service);
  }
}

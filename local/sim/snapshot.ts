/**
 * A JSON-friendly picture of the whole simulator (`GET /_sim/state`): clusters with their
 * services, deployments and tasks, task definition families, and the simulator's own settings.
 */
import type { FaultInjector } from './calls';
import type { SimCore } from './core';
import type { FailureRule } from './failure-modes';
import type { SimCluster } from './state';

/** The declared subnets and security groups (`SimulatedEcs.vpcState`). */
export interface SimVpc {
  readonly subnets: readonly string[];
  readonly securityGroups: readonly string[];
}

/** Shape of `SimulatedEcs.snapshot()`. */
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

/** The simulator's own settings shown beside the state. */
export type SnapshotSettings = Pick<SimSnapshot, 'throttling' | 'latencyMs' | 'failureRules' | 'faults' | 'vpc'>;

/** The snapshot of `core` now (run due transitions first). */
export function snapshotOf(core: SimCore, settings: SnapshotSettings): SimSnapshot {
  const clusters = [...core.state.clusters.values()].map((c) => clusterSnapshot(core, c));
  return {
    now: core.clock.now().toISOString(),
    speed: core.clock.speed ?? null,
    ...settings,
    clusters,
    taskDefinitionFamilies: [...core.state.families.values()].map((f) => ({
      family: f.name,
      revisions: f.revisions.map((r) => ({ revision: r.taskDefinition.revision, status: r.taskDefinition.status })),
    })),
  };
}

function clusterSnapshot(core: SimCore, c: SimCluster): SimSnapshot['clusters'][number] {
  return {
    name: c.name,
    status: c.status,
    services: [...c.services.values()].map((s) => {
      const counts = core.scheduler.counts(s);
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
          ...core.scheduler.counts(s, d.id),
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
  };
}

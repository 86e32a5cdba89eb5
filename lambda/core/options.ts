/**
 * Options of the planner and of a pass, shared by every caller (Lambda handler, `ecsr`, local run).
 */
import type { AllowLists } from './allow-lists';

/** Values used when a spec leaves a field to the reconciler. */
export interface ReconcilerDefaults {
  /** awsvpc subnets for specs that name none. */
  readonly subnets: string[];
  /** awsvpc security groups for specs that name none. */
  readonly securityGroups: string[];
  /** assignPublicIp for specs that do not say (default false). */
  readonly assignPublicIp?: boolean;
  /** Task execution role for specs that name none (needed for awslogs and image pulls). */
  readonly executionRoleArn?: string;
  /**
   * CloudWatch Logs group prefix: when set, rendered task definitions log with awslogs to
   * `${logGroupPrefix}${cluster}`, stream prefix = service name.
   */
  readonly logGroupPrefix?: string;
  /** Region for the awslogs driver (`awslogs-region`). */
  readonly region?: string;
}

/** Allow-lists (`./allow-lists.ts`); an undefined list means "anything", an empty list "nothing". */
export type { AllowLists } from './allow-lists';

export interface PlanOptions {
  /** Value of the owner tag on services this reconciler owns. */
  readonly ownerId: string;
  /** Clusters managed even when no spec names them (for pruning). */
  readonly managedClusters: string[];
  /** Delete owned services that have no spec. Default true. */
  readonly prune: boolean;
  /**
   * Whether `adopt: true` may take over an existing service without an owner tag (TagResource).
   * The CDK construct turns it off unless `allowAdoption` is set (its IAM then refuses the tag
   * too); a spec adopting while it is off gets `NotAllowed`. A service whose owner tag names
   * another owner id is never adopted (`OwnedByAnother`). Unset or true allows it (CLI, local runs).
   */
  readonly allowAdoption?: boolean;
  /**
   * Clusters in observe-only mode: their services' drift and lag are reported (status, metrics,
   * alarms) and nothing is corrected, created, tagged or deleted. A spec's own `observeOnly`
   * wins over its cluster's. Unset: none.
   */
  readonly observeOnlyClusters?: readonly string[];
  /** At most this many deletes per pass (default 5). */
  readonly maxDeletesPerPass: number;
  /** Seconds of lag tolerated for specs that set no `lagGraceSeconds` (default 300). */
  readonly defaultLagGraceSeconds: number;
  readonly defaults: ReconcilerDefaults;
  readonly allow: AllowLists;
}

export const DEFAULT_PLAN_OPTIONS: PlanOptions = {
  ownerId: 'ecs-reconciler',
  managedClusters: [],
  prune: true,
  allowAdoption: true,
  maxDeletesPerPass: 5,
  defaultLagGraceSeconds: 300,
  defaults: { subnets: [], securityGroups: [] },
  allow: {},
};

/**
 * Whether a key is in observe-only mode: the spec's own `observeOnly` when it sets one (so
 * `false` opts one service of an observe-only cluster in), else whether `cluster` is one of
 * `options.observeOnlyClusters`.
 * @returns `'spec'` or `'cluster'` (where the mode comes from), or undefined when the key is managed.
 */
export function observeOnlyOf(options: PlanOptions, cluster: string, observeOnly: boolean | undefined): 'spec' | 'cluster' | undefined {
  if (observeOnly !== undefined) return observeOnly ? 'spec' : undefined;
  const clusters = options.observeOnlyClusters;
  return clusters !== undefined && clusters.includes(cluster) ? 'cluster' : undefined;
}

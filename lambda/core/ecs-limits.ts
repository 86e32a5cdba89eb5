/**
 * ECS API limits and throttling categories, as documented in the Amazon ECS API reference
 * ("Request throttling", "DescribeServices", "DescribeTasks", "ListServices"); see
 * `docs/ecs-facts.md` §1-§2. The simulator throttles with these buckets and the actuator
 * rate-limits itself to a fraction of them: one table, two users.
 */

/** ECS throttling category of an action (per account and Region, token bucket per category). */
export type ThrottleCategory =
  | 'serviceRead'
  | 'serviceModify'
  | 'clusterResourceRead'
  | 'clusterResourceModify'
  | 'taskDefinitionRead'
  | 'taskDefinitionModify'
  | 'clusterRead'
  | 'clusterModify'
  | 'tagModify'
  | 'tagRead'
  | 'serviceDeployments';

/** Burst (tokens) and refill (tokens per second) per category. */
export const THROTTLE_BUCKETS: Readonly<Record<ThrottleCategory, { burst: number; refillPerSecond: number }>> = {
  serviceRead: { burst: 100, refillPerSecond: 20 },
  serviceModify: { burst: 50, refillPerSecond: 5 },
  clusterResourceRead: { burst: 100, refillPerSecond: 20 },
  clusterResourceModify: { burst: 100, refillPerSecond: 40 },
  taskDefinitionRead: { burst: 50, refillPerSecond: 20 },
  taskDefinitionModify: { burst: 20, refillPerSecond: 1 },
  clusterRead: { burst: 50, refillPerSecond: 20 },
  // Not listed in docs/ecs-facts.md; ECS documents cluster modify actions with the same limits as
  // cluster read. Only the simulator uses it.
  clusterModify: { burst: 50, refillPerSecond: 20 },
  tagModify: { burst: 20, refillPerSecond: 10 },
  tagRead: { burst: 50, refillPerSecond: 20 },
  serviceDeployments: { burst: 50, refillPerSecond: 20 },
};

/** The category of each ECS action the reconciler or the simulator uses. */
export const ACTION_CATEGORY: Readonly<Record<string, ThrottleCategory>> = {
  DescribeServices: 'serviceRead',
  ListServices: 'serviceRead',
  CreateService: 'serviceModify',
  UpdateService: 'serviceModify',
  DeleteService: 'serviceModify',
  DescribeTasks: 'clusterResourceRead',
  ListTasks: 'clusterResourceRead',
  RunTask: 'clusterResourceModify',
  StopTask: 'clusterResourceModify',
  DescribeTaskDefinition: 'taskDefinitionRead',
  ListTaskDefinitions: 'taskDefinitionRead',
  ListTaskDefinitionFamilies: 'taskDefinitionRead',
  RegisterTaskDefinition: 'taskDefinitionModify',
  DeregisterTaskDefinition: 'taskDefinitionModify',
  DescribeClusters: 'clusterRead',
  ListClusters: 'clusterRead',
  CreateCluster: 'clusterModify',
  DeleteCluster: 'clusterModify',
  PutClusterCapacityProviders: 'clusterModify',
  TagResource: 'tagModify',
  UntagResource: 'tagModify',
  ListTagsForResource: 'tagRead',
  ListServiceDeployments: 'serviceDeployments',
  DescribeServiceDeployments: 'serviceDeployments',
  // Not listed in "Request throttling"; counted with the service deployment actions it serves.
  DescribeServiceRevisions: 'serviceDeployments',
};

/**
 * ECS service quotas a spec can reach (Amazon ECS Developer Guide, "Amazon ECS service quotas";
 * docs/ecs-facts.md §12). None is adjustable.
 */
export const ECS_QUOTAS = {
  /**
   * Bytes of a task definition: RegisterTaskDefinition answers ClientException "Actual length:
   * 'N'. Max allowed length is '65536' bytes." above it.
   */
  taskDefinitionMaxBytes: 65_536,
  /** Container definitions per task definition ("Too many containers." above it). */
  containersPerTaskDefinition: 10,
  /** Tags per resource (task definitions, services, tasks, clusters). */
  tagsPerResource: 50,
  /** Target groups per service (Application or Network Load Balancer). */
  targetGroupsPerService: 5,
  /** Subnets and security groups in an awsvpcConfiguration. */
  subnetsPerAwsvpcConfiguration: 16,
  securityGroupsPerAwsvpcConfiguration: 5,
} as const;

/** Batch and page limits (docs/ecs-facts.md §1). */
export const ECS_LIMITS = {
  describeServicesBatch: 10,
  describeTasksBatch: 100,
  listServicesMaxResults: 100,
  listServicesDefaultMaxResults: 10,
  listTasksMaxResults: 100,
  listTasksDefaultMaxResults: 100,
  clientTokenMaxLength: 36,
  /** Stopped tasks stay describable for at least this long (seconds). */
  stoppedTaskRetentionSeconds: 3600,
} as const;

/**
 * A token bucket on an injected clock: `burst` tokens, refilled at `refillPerSecond`.
 * Pure arithmetic; the caller supplies time in milliseconds.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    readonly burst: number,
    readonly refillPerSecond: number,
    nowMs: number,
  ) {
    this.tokens = burst;
    this.last = nowMs;
  }

  private refill(nowMs: number): void {
    if (nowMs > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + ((nowMs - this.last) / 1000) * this.refillPerSecond);
      this.last = nowMs;
    }
  }

  /** Takes one token if available; returns whether it did. */
  tryTake(nowMs: number): boolean {
    this.refill(nowMs);
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    return false;
  }

  /** Milliseconds until one token is available (0 when one is). Does not take it. */
  waitMs(nowMs: number): number {
    this.refill(nowMs);
    if (this.tokens >= 1) return 0;
    return Math.ceil(((1 - this.tokens) / this.refillPerSecond) * 1000);
  }

  /** Tokens available now (fractional). */
  available(nowMs: number): number {
    this.refill(nowMs);
    return this.tokens;
  }
}

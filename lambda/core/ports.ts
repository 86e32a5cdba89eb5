/**
 * The narrow ports a reconcile pass runs over. The Lambda handler, `ecsr reconcile` and the local
 * run (`npm start`) only build these differently; the core never imports an SDK.
 */
import type {
  Action,
  ObservedCluster,
  ObservedService,
  ServiceId,
  ServiceKey,
  ServiceStatus,
  SpecParseResult,
  TaskDefinition,
} from './types';

/** Tag key that marks a service as owned by a reconciler; its value is the owner id. */
export const OWNER_TAG_KEY = 'ecs-reconciler:owner';

/** Whether a live service carries the owner tag of reconciler `ownerId`. */
export function isOwnedBy(svc: ObservedService, ownerId: string): boolean {
  return svc.tags[OWNER_TAG_KEY] === ownerId;
}

/** Injected time (STYLE §5): never read the wall clock in the core. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** Result of reading every spec item. */
export interface SpecRead {
  /** One parse result per item (valid or not). */
  readonly specs: SpecParseResult[];
  /** Remembered status per service, from the items' `status` attribute. */
  readonly statuses: Record<ServiceId, ServiceStatus>;
  /** False when any page failed: the pass must not prune (never "no specs" on a partial read). */
  readonly complete: boolean;
  readonly error?: string;
}

export interface SpecStore {
  /** Consistent, paginated read of all specs. Never throws for a failed page: `complete: false`. */
  readAll(): Promise<SpecRead>;
  /**
   * Writes `status` to the item only if the item still exists; never touches other attributes.
   * Resolves false when the item is gone (ConditionalCheckFailed), throws on other errors.
   */
  writeStatus(key: ServiceKey, status: ServiceStatus): Promise<boolean>;
  /**
   * Takes the pass lease for `ttlSeconds` unless another holder's lease is unexpired.
   * Resolves `{ acquired: false, holder, expiresAt }` when held elsewhere.
   */
  acquireLease(holder: string, ttlSeconds: number, now: Date): Promise<LeaseResult>;
  releaseLease(holder: string): Promise<void>;
}

export type LeaseResult =
  | { readonly acquired: true }
  | { readonly acquired: false; readonly holder: string; readonly expiresAt: Date };

/** Options of {@link EcsReader.observeCluster}. */
export interface ObserveClusterOptions {
  /**
   * Asked before each best-effort read (the stopped-task reasons of one lagging service); false
   * leaves that service's `stoppedTasks` undefined. Listing and describing services is never cut.
   */
  readonly shouldContinue?: () => boolean;
  /**
   * Called with the services of each DescribeServices answer as it arrives, before the cluster is
   * read to the end, so that the caller can start on them (the pass describes their task
   * definitions meanwhile). The same objects end up in the result. Optional for a reader to call.
   */
  readonly onServices?: (services: ObservedService[]) => void;
}

/** Options of {@link EcsReader.describeTaskDefinitions}. */
export interface DescribeTaskDefinitionsOptions {
  /**
   * Asked just before an ARN that is not cached is described (ARNs are described in the order
   * given); false leaves it out of the result, so the caller knows which ones it deferred.
   */
  readonly shouldDescribe?: (arn: string) => boolean;
}

export interface EcsReader {
  /**
   * Observes one cluster: every listed service plus `extraServiceNames` (services named by specs
   * but possibly DRAINING, hence unlisted). Never throws: failures give `complete: false`; failed
   * best-effort reads (stopped tasks) are in `warnings`.
   */
  observeCluster(cluster: string, extraServiceNames: string[], options?: ObserveClusterOptions): Promise<ObservedCluster>;
  /**
   * Described task definitions by ARN, cached for the life of the process (immutable), each as
   * soon as it arrives. Failed and deferred ARNs are left out of the result.
   */
  describeTaskDefinitions(arns: string[], options?: DescribeTaskDefinitionsOptions): Promise<Record<string, TaskDefinition>>;
  /** Latest ACTIVE revision of a family, or undefined. */
  latestActiveTaskDefinition(family: string): Promise<TaskDefinition | undefined>;
}

/** Outcome of applying one action. */
export type ActionResult =
  | { readonly ok: true; readonly action: Action; readonly detail?: string; readonly taskDefinitionArn?: string }
  | {
      readonly ok: false;
      readonly action: Action;
      /** throttled/transient: left for the next pass; invalid: ECS's message in status. */
      readonly errorClass: 'throttled' | 'transient' | 'invalid' | 'not-found' | 'skipped';
      readonly message: string;
    };

export interface EcsWriter {
  /** Applies the plan in order; one failed action does not stop the others. */
  apply(actions: Action[], shouldContinue: () => boolean): Promise<ActionResult[]>;
}

/** Per-pass metrics (Powertools EMF in AWS, in-memory locally). Units in names/docs. */
export interface MetricsSink {
  /** `TaskLag` (tasks) per service, dimensions Cluster and Service. */
  serviceLag(key: ServiceKey, lagTasks: number): void;
  /** Per-pass counters and gauges, e.g. PassSucceeded (count), PassDuration (milliseconds). */
  passMetric(name: string, value: number, unit: 'Count' | 'Milliseconds'): void;
  flush(): Promise<void> | void;
}

/** Structured logging port (Powertools Logger in AWS). */
export interface LogPort {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

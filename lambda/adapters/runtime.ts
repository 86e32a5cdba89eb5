/**
 * Builds the ports of a pass from the configuration: the one factory the Lambda handler,
 * `ecsr reconcile --once` and the local run (`npm start`) share. Only what differs between them
 * is overridden (clients pointed at local servers, a virtual clock, in-memory metrics).
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { ECSClient, ECSClientConfig } from '@aws-sdk/client-ecs';
import type { DynamoDBClient, DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ReconcilerConfig } from '../config';
import { CompareCache } from '../core/compare-cache';
import { runFastPath, type FastPathResult } from '../core/fast-path';
import { runPass, type PassPorts, type PassSummary } from '../core/pass';
import type { ServiceKey } from '../core/types';
import { systemClock, type Clock, type LogPort, type MetricsSink } from '../core/ports';
import { createDocumentClient, createEcsClient } from './clients';
import { DynamoSpecStore } from './dynamo-spec-store';
import { DynamoTaskDefinitionCache } from './dynamo-task-definition-cache';
import { EcsActuator } from './ecs-actuator';
import { EcsObserver } from './ecs-observer';
import { PowertoolsLog } from './logger';
import { PowertoolsMetricsSink } from './metrics';
import { createSqsClient, SqsEventFeed } from './sqs-event-feed';
import type { SQSClientConfig } from '@aws-sdk/client-sqs';
import type { EcsRateLimiter, LimiterTime } from './rate-limiter';

/**
 * Default lease lifetime (seconds) when the caller knows no deadline (CLI, local run). The pass
 * starts no action in the last seconds of its lease, so a long pass (hundreds of creates at the
 * API budget) leaves the rest for the next one; a crashed pass blocks others at most this long.
 */
export const DEFAULT_LEASE_TTL_SECONDS = 600;

export interface RuntimeOverrides {
  /** Use this ECSClient as is (no limiter is added to it). */
  readonly ecs?: ECSClient;
  /** Extra configuration of the ECSClient built here (endpoint, region, credentials). */
  readonly ecsClientConfig?: ECSClientConfig;
  /** Use this document client as is. */
  readonly doc?: DynamoDBDocumentClient;
  /** Extra configuration of the DynamoDB client built here. */
  readonly dynamoClientConfig?: DynamoDBClientConfig;
  /** Share a rate limiter, or inspect it in tests. */
  readonly limiter?: EcsRateLimiter;
  /** Time of a new rate limiter (virtual in the local run). */
  readonly limiterTime?: LimiterTime;
  readonly clock?: Clock;
  readonly log?: LogPort;
  readonly metrics?: MetricsSink;
  readonly monotonicMs?: () => number;
  /** Items per Scan page (tests use small pages). */
  readonly specPageSize?: number;
  /** Calls in flight per cluster observation (default 4). */
  readonly observerConcurrency?: number;
  /** Extra configuration of the SQS client of the event queue (endpoint, region, credentials). */
  readonly sqsClientConfig?: SQSClientConfig;
  /**
   * The target this runtime reconciles (fan-out mode, `lambda/adapters/fan-out.ts`): its spec
   * items, lease and cursor only. Undefined: the default target with no other target declared.
   */
  readonly target?: { readonly name: string; readonly otherTargets: ReadonlySet<string> };
}

/** Options of one {@link Runtime.run}. */
export interface RunOptions {
  /** Lease holder id; a fresh `host:pid:uuid` by default. */
  readonly holder?: string;
  /** Overrides the configured `DRY_RUN`. */
  readonly dryRun?: boolean;
  /** Seconds; default {@link DEFAULT_LEASE_TTL_SECONDS}. */
  readonly leaseTtlSeconds?: number;
  /** Asked before each action; false leaves the rest for the next pass. */
  readonly shouldContinue?: () => boolean;
  /**
   * Milliseconds of invocation time left, asked during the pass (the handler passes
   * `context.getRemainingTimeInMillis`); bounds observation and status writes. Without it the
   * lease is the pass's only deadline.
   */
  readonly remainingMs?: () => number;
  /** Retry refused actions now, whatever their backoff (a person's `ecsr reconcile`). */
  readonly retryRejected?: boolean;
  /** The account cannot be reached: no ECS call; every spec's status says so (`PassOptions.unreachable`). */
  readonly unreachable?: { readonly reason: string; readonly message: string };
}

/** Options of one {@link Runtime.runFastPath}. */
export interface FastPathRunOptions extends RunOptions {
  /** Milliseconds to wait for a lease held by another pass (default `FAST_PATH_LEASE_WAIT_MS`). */
  readonly leaseWaitMs?: number;
  /** Waits in real time by default. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Read only the keys with a spec item (the events fast path: events name any service). */
  readonly keysWithSpecOnly?: boolean;
  /** No log line when the lease stays held (the caller says what happens to the keys). */
  readonly quietLeaseHeld?: boolean;
}

export interface Runtime {
  readonly config: ReconcilerConfig;
  readonly ports: PassPorts;
  /** The ECS client every reader and writer call goes through. */
  readonly ecs: ECSClient;
  readonly doc: DynamoDBDocumentClient;
  /** The rate limiter on `ecs`, when this factory built the client. */
  readonly limiter?: EcsRateLimiter;
  /** Runs one pass with the configured options. */
  run(options?: RunOptions): Promise<PassSummary>;
  /**
   * Reconciles only `keys` (the fast path, `lambda/core/fast-path.ts`), waiting for a held lease.
   * @returns undefined when `keys` is empty.
   */
  runFastPath(keys: readonly ServiceKey[], options?: FastPathRunOptions): Promise<FastPathResult | undefined>;
}

/** A lease holder id unique to this process and call: `host:pid:uuid`. */
export function newHolderId(): string {
  return `${hostname()}:${process.pid}:${randomUUID()}`;
}

/**
 * Wires the ports: DynamoDB spec store on `config.specsTable`, the durable task definition cache
 * on `config.taskDefinitionCacheTable` when configured, ECS observer and actuator on one
 * rate-limited ECSClient (standard retries, `config.apiBudgetFraction` of ECS's rates), Powertools
 * metrics in `config.metricsNamespace` and Powertools logs unless overridden.
 * Endpoints and region come from the SDK's standard configuration unless overridden.
 */
export function createRuntime(config: ReconcilerConfig, overrides: RuntimeOverrides = {}): Runtime {
  let ecs = overrides.ecs;
  let limiter = overrides.limiter;
  if (!ecs) {
    const built = createEcsClient({
      apiBudgetFraction: config.apiBudgetFraction,
      limiter: overrides.limiter,
      limiterTime: overrides.limiterTime,
      clientConfig: overrides.ecsClientConfig,
    });
    ecs = built.ecs;
    limiter = built.limiter;
  }
  const doc = overrides.doc ?? createDocumentClient(overrides.dynamoClientConfig);
  const durable = config.taskDefinitionCacheTable
    ? new DynamoTaskDefinitionCache(doc as unknown as DynamoDBClient, config.taskDefinitionCacheTable)
    : undefined;
  const clock = overrides.clock ?? systemClock;
  // One comparison cache per runtime: the observer stamps what it reads, the planner reads the stamps.
  const compareCache = new CompareCache();
  const reader = new EcsObserver(ecs, { concurrency: overrides.observerConcurrency, clock, compareCache, ...(durable ? { durable } : {}) });
  const ports: PassPorts = {
    specs: new DynamoSpecStore(doc, config.specsTable, {
      pageSize: overrides.specPageSize,
      ...(overrides.target ? { target: overrides.target.name, otherTargets: overrides.target.otherTargets } : {}),
    }),
    reader,
    writer: new EcsActuator(ecs, reader),
    metrics: overrides.metrics ?? new PowertoolsMetricsSink(config.metricsNamespace),
    log: overrides.log ?? new PowertoolsLog(),
    clock,
    compareCache,
    ...(overrides.monotonicMs ? { monotonicMs: overrides.monotonicMs } : {}),
    ...(config.events ? { events: new SqsEventFeed(createSqsClient(overrides.sqsClientConfig), config.events.queueUrl) } : {}),
  };
  const passOptions = (options: RunOptions) => ({
    plan: config.plan,
    dryRun: options.dryRun ?? config.dryRun,
    holder: options.holder ?? newHolderId(),
    leaseTtlSeconds: options.leaseTtlSeconds ?? DEFAULT_LEASE_TTL_SECONDS,
    ...(options.shouldContinue ? { shouldContinue: options.shouldContinue } : {}),
    ...(options.remainingMs ? { remainingMs: options.remainingMs } : {}),
    ...(options.retryRejected ? { retryRejected: true } : {}),
    ...(options.unreachable ? { unreachable: options.unreachable } : {}),
    ...(config.resync ? { resync: config.resync } : {}),
    ...(config.events
      ? {
          events: {
            resyncSeconds: config.events.resyncSeconds,
            passIntervalSeconds: config.events.passIntervalSeconds,
            ignorePrincipals: config.events.ignorePrincipals,
          },
        }
      : {}),
  });
  return {
    config,
    ports,
    ecs,
    doc,
    ...(limiter ? { limiter } : {}),
    run: (options: RunOptions = {}) => runPass(ports, passOptions(options)),
    runFastPath: (keys, options: FastPathRunOptions = {}) =>
      runFastPath(ports, keys, {
        ...passOptions(options),
        sleep: options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
        ...(options.leaseWaitMs !== undefined ? { leaseWaitMs: options.leaseWaitMs } : {}),
        ...(options.keysWithSpecOnly ? { keysWithSpecOnly: true } : {}),
        ...(options.quietLeaseHeld ? { quietLeaseHeld: true } : {}),
        ...(overrides.monotonicMs ? { monotonicMs: overrides.monotonicMs } : {}),
      }),
  };
}

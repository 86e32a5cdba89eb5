/**
 * The local stack of `ecsr local` (and of the CLI tests): dynalite in process, the ECS simulator on
 * loopback with a manual virtual clock, the specs table (partition key `cluster`, sort key
 * `service`, as the CDK construct creates it) and the ECS clusters with the Fargate capacity
 * providers, created through the ECS API like a person would with `aws ecs create-cluster`.
 */
import { createHash } from 'node:crypto';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateClusterCommand, ECSClient } from '@aws-sdk/client-ecs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../lambda/adapters/clients';
import { specsTableDefinition } from '../lambda/adapters/dynamo-spec-store';
import { createRuntime, type Runtime } from '../lambda/adapters/runtime';
import { ENV, loadConfig, type ReconcilerConfig } from '../lambda/config';
import { ecsPolicyStatements, networkConditions, type IamStatement } from '../lambda/core/ecs-policy';
import type { LogPort, MetricsSink } from '../lambda/core/ports';
import { EVENT_RULES } from '../lambda/core/events';
import { startEmbeddedDynamoDb, type EmbeddedDynamoDb } from './embedded-dynamodb';
import { LocalEventBridge } from './eventbridge';
import { startSimulator, type Simulator } from './sim';
import { assumedRoleIdentity } from './sim/events';
import { LocalSqs } from './sqs';
import { LocalLogs } from './logs';
import { feedTaskLogs } from './task-logs';

/** Dummy credentials: the local servers accept any signature. */
export const LOCAL_CREDENTIALS = { accessKeyId: 'test', secretAccessKey: 'test' } as const;

/**
 * The reconciler's own credentials in the local stack: the simulator records its calls as the
 * role {@link LOCAL_RECONCILER_ROLE_NAME}'s (CloudTrail's `sessionIssuer.arn`), as it would the
 * Lambda's role, so the reconciler can tell its own writes from a person's (`EVENTS_IGNORE_PRINCIPALS`).
 */
export const LOCAL_RECONCILER_CREDENTIALS = { accessKeyId: 'ASIAECSRLOCALRECONCILER', secretAccessKey: 'test' } as const;
export const LOCAL_RECONCILER_ROLE_NAME = 'ecsr-local-reconciler';
/** The events queue of the local stack, its dead-letter queue and the heartbeat rule's name. */
export const LOCAL_EVENTS_QUEUE = 'ecsr-events';
export const LOCAL_EVENTS_DLQ = 'ecsr-events-dlq';
/** The events fast path's queue (the construct's `EventsFastPath`): the same rules' second target. */
export const LOCAL_EVENTS_FAST_QUEUE = 'ecsr-events-fast-path';
export const LOCAL_HEARTBEAT_RULE = 'ecsr-local-events-heartbeat';

/**
 * Events mode of the local stack: the local EventBridge bus (the construct's rules) delivering the
 * simulator's events into the local SQS queue the reconciler reads through its own adapter.
 */
export interface LocalEvents {
  readonly sqs: LocalSqs;
  readonly bus: LocalEventBridge;
  readonly queueUrl: string;
  /** The events fast path's queue: what Lambda's event source mapping would hand the function. */
  readonly fastPathQueueUrl: string;
  /** The role ARN whose calls are the reconciler's (EVENTS_IGNORE_PRINCIPALS). */
  readonly reconcilerRoleArn: string;
  /** The heartbeat rule fires (the construct's `EventsHeartbeat`, once per schedule interval). */
  heartbeat(at: Date): void;
}

export interface LocalStackOptions {
  /** Specs table name (default `ecsr-specs`). */
  readonly specsTable?: string;
  /** ECS clusters to create (default `shop`). */
  readonly clusters?: readonly string[];
  /** Seed of the simulator's random choices (default 1): a run is reproducible. */
  readonly seed?: number;
  /** Virtual time at start (default: now). */
  readonly startTime?: Date;
  /** Loopback ports; 0 (default) picks free ones. */
  readonly ecsPort?: number;
  readonly dynamodbPort?: number;
  /** ECS request throttling in the simulator (default true, ECS's documented buckets). */
  readonly throttling?: boolean;
  /**
   * Events mode (default false): a local SQS server and EventBridge bus carry the simulator's
   * events to the reconciler, as the construct's rules and queue do ({@link LocalEvents}).
   */
  readonly events?: boolean;
  /** Loopback port of the local SQS server (events mode); 0 (default) picks a free one. */
  readonly sqsPort?: number;
  /**
   * Subnets and security groups that exist besides {@link LOCAL_VPC}'s (a spec naming any other is
   * refused by the simulator as ECS refuses it).
   */
  readonly vpc?: { readonly subnets?: readonly string[]; readonly securityGroups?: readonly string[] };
  /**
   * A local CloudWatch Logs (and STS GetCallerIdentity) on loopback, fed with the log lines of the
   * simulator's tasks (`./logs`, `./task-logs`), for `ecsr logs` and the spec history's writer.
   */
  readonly logs?: boolean;
}

export interface LocalStack {
  readonly sim: Simulator;
  readonly db: EmbeddedDynamoDb;
  readonly table: string;
  readonly region: string;
  readonly clusters: readonly string[];
  /** Events mode, when started with `events: true`. */
  readonly events?: LocalEvents;
  /** The local CloudWatch Logs, when started with `logs: true`. */
  readonly logs?: LocalLogs;
  /** A document client on dynalite (for writing specs as a person would). */
  readonly doc: DynamoDBDocumentClient;
  /** SDK configuration of a client pointed at the simulator / dynalite. */
  readonly ecsClientConfig: { endpoint: string; region: string; credentials: typeof LOCAL_CREDENTIALS };
  readonly dynamoClientConfig: { endpoint: string; region: string; credentials: typeof LOCAL_CREDENTIALS };
  /**
   * The environment that points the AWS SDK, the AWS CLI and `ecsr` at the stack:
   * `AWS_ENDPOINT_URL_ECS`, `AWS_ENDPOINT_URL_DYNAMODB`, region, dummy credentials, `SPECS_TABLE`.
   */
  readonly env: Readonly<Record<string, string>>;
  /** Stops both servers and the clients. */
  close(): Promise<void>;
}

/**
 * Starts dynalite and the simulator (manual clock: the caller moves time), creates the table and
 * the clusters.
 * @throws SimulatorListenError / a listen error when a given port is taken; SDK errors when the
 *   table or a cluster cannot be created.
 */
export async function startLocalStack(opts: LocalStackOptions = {}): Promise<LocalStack> {
  const table = opts.specsTable ?? 'ecsr-specs';
  const clusters = [...(opts.clusters ?? ['shop'])];
  const db = await startEmbeddedDynamoDb(opts.dynamodbPort ?? 0);
  let sim: Simulator;
  try {
    sim = await startSimulator({
      port: opts.ecsPort ?? 0,
      seed: opts.seed ?? 1,
      throttling: opts.throttling ?? true,
      ...(opts.startTime ? { startTime: opts.startTime } : {}),
      vpc: {
        subnets: [...new Set([...LOCAL_VPC.subnets, ...(opts.vpc?.subnets ?? [])])],
        securityGroups: [...new Set([...LOCAL_VPC.securityGroups, ...(opts.vpc?.securityGroups ?? [])])],
      },
    });
  } catch (err) {
    await db.stop();
    throw err;
  }
  const region = sim.region;
  sim.setCaller(LOCAL_RECONCILER_CREDENTIALS.accessKeyId, {
    identity: assumedRoleIdentity(sim.accountId, LOCAL_RECONCILER_ROLE_NAME, 'ecsr-local', LOCAL_RECONCILER_CREDENTIALS.accessKeyId, sim.clock.now()),
    userAgent: 'ecs-reconciler (aws-sdk-js)',
    sourceIPAddress: '127.0.0.1',
  });
  const ecsClientConfig = { endpoint: sim.endpoint, region, credentials: LOCAL_CREDENTIALS };
  const dynamoClientConfig = { endpoint: db.endpoint, region, credentials: LOCAL_CREDENTIALS };
  const doc = createDocumentClient(dynamoClientConfig);
  let events: LocalEvents | undefined;
  let unsubscribe = () => {};
  let logs: LocalLogs | undefined;
  let stopLogs = () => {};
  const close = async () => {
    unsubscribe();
    stopLogs();
    doc.destroy();
    await logs?.close();
    await events?.sqs.close();
    await sim.close();
    await db.stop();
  };
  try {
    if (opts.events) {
      events = await startLocalEvents(sim, opts.sqsPort ?? 0);
      const bus = events.bus;
      unsubscribe = sim.events.subscribe((e) => void bus.put(e as unknown as Record<string, unknown>));
    }
    if (opts.logs) {
      logs = new LocalLogs(sim.accountId);
      await logs.start(0);
      stopLogs = feedTaskLogs(sim, logs.store);
    }
    await createSpecsTable({ dynamoClientConfig }, table);
    for (const clusterName of clusters) await createCluster({ ecsClientConfig }, clusterName);
  } catch (err) {
    await close();
    throw err;
  }
  return {
    sim,
    db,
    table,
    region,
    clusters,
    doc,
    ecsClientConfig,
    dynamoClientConfig,
    ...(events ? { events } : {}),
    ...(logs ? { logs } : {}),
    env: {
      AWS_ENDPOINT_URL_ECS: sim.endpoint,
      AWS_ENDPOINT_URL_DYNAMODB: db.endpoint,
      ...(events ? { AWS_ENDPOINT_URL_SQS: events.sqs.endpoint } : {}),
      ...(logs ? { AWS_ENDPOINT_URL_CLOUDWATCH_LOGS: logs.endpoint, AWS_ENDPOINT_URL_STS: logs.endpoint } : {}),
      AWS_REGION: region,
      AWS_DEFAULT_REGION: region,
      AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
      SPECS_TABLE: table,
    },
    close,
  };
}

/** Starts the local SQS server with the events queue and the bus with the construct's rules into it. */
async function startLocalEvents(sim: Simulator, port: number): Promise<LocalEvents> {
  const sqs = new LocalSqs({ accountId: sim.accountId, region: sim.region, nowMs: () => sim.clock.nowMs() });
  await sqs.start(port, '--sqs-port');
  // As the construct's queues: the events queue's visibility = the function timeout (the pass
  // itself receives), the fast path's six times it (an event source mapping reads it); 5 receives
  // then the DLQ.
  sqs.createQueue(LOCAL_EVENTS_DLQ);
  const queueUrl = sqs.createQueue(LOCAL_EVENTS_QUEUE, { visibilityTimeoutSeconds: 50, maxReceiveCount: 5, deadLetterQueue: LOCAL_EVENTS_DLQ });
  const fastPathQueueUrl = sqs.createQueue(LOCAL_EVENTS_FAST_QUEUE, { visibilityTimeoutSeconds: 300, maxReceiveCount: 5, deadLetterQueue: LOCAL_EVENTS_DLQ });
  const bus = new LocalEventBridge({ account: sim.accountId, region: sim.region });
  // Each rule has the construct's two targets: the scheduled pass's queue and the fast path's.
  for (const [name, rule] of Object.entries(EVENT_RULES)) {
    bus.addRule({
      name,
      pattern: rule.pattern,
      target: (body) => {
        sqs.send(LOCAL_EVENTS_QUEUE, body);
        sqs.send(LOCAL_EVENTS_FAST_QUEUE, body);
      },
    });
  }
  return {
    sqs,
    bus,
    queueUrl,
    fastPathQueueUrl,
    reconcilerRoleArn: `arn:aws:iam::${sim.accountId}:role/${LOCAL_RECONCILER_ROLE_NAME}`,
    heartbeat: (at) => bus.schedule(LOCAL_HEARTBEAT_RULE, at, (body) => void sqs.send(LOCAL_EVENTS_QUEUE, body)),
  };
}

/**
 * Defaults of the local reconciler, as an operator configures them on the Lambda: subnets, a
 * security group and the task execution role (Fargate needs one to pull from ECR; the simulator
 * checks it like ECS does and accepts any id).
 */
export const LOCAL_DEFAULTS = {
  subnets: 'subnet-0a1b2c3d4e5f60001,subnet-0a1b2c3d4e5f60002',
  securityGroups: 'sg-0a1b2c3d4e5f60001',
  executionRoleArn: 'arn:aws:iam::123456789012:role/ecsTaskExecutionRole',
} as const;

/**
 * The simulated account's VPC: the subnets and security groups that exist in the local stack, so
 * that a spec naming another is refused as ECS refuses it ("Error retrieving subnet information
 * for [...]"). The reconciler's defaults ({@link LOCAL_DEFAULTS}) and those examples/web.yaml
 * names; `ecsr local --subnet / --security-group` add more.
 */
export const LOCAL_VPC = {
  subnets: ['subnet-0a1b2c3d4e5f60001', 'subnet-0a1b2c3d4e5f60002', 'subnet-0a1b2c3d4e5f60718', 'subnet-0f1e2d3c4b5a69788'],
  securityGroups: ['sg-0a1b2c3d4e5f60001', 'sg-0123456789abcdef0'],
} as const;

/**
 * The reconciler's environment variables for a local stack: {@link LOCAL_DEFAULTS} and
 * `MANAGED_CLUSTERS` = the stack's clusters, overridden by any reconciler variable of `env`
 * (PRUNE, DEFAULT_LAG_GRACE_SECONDS, OWNER_ID, ...); `SPECS_TABLE` and `AWS_REGION` are always the
 * stack's.
 */
export function localReconcilerEnv(stack: Pick<LocalStack, 'table' | 'region' | 'clusters' | 'events'>, env: Record<string, string | undefined> = {}): Record<string, string> {
  const out: Record<string, string> = {
    [ENV.defaultSubnets]: LOCAL_DEFAULTS.subnets,
    [ENV.defaultSecurityGroups]: LOCAL_DEFAULTS.securityGroups,
    [ENV.defaultExecutionRoleArn]: LOCAL_DEFAULTS.executionRoleArn,
    [ENV.managedClusters]: stack.clusters.join(','),
    // Events mode as the construct configures it: the queue, and the function's own role ignored.
    ...(stack.events ? { [ENV.eventsQueueUrl]: stack.events.queueUrl, [ENV.eventsIgnorePrincipals]: stack.events.reconcilerRoleArn } : {}),
  };
  for (const name of Object.values(ENV)) {
    const v = env[name];
    if (v !== undefined && name !== ENV.specsTable && name !== ENV.region) out[name] = v;
  }
  out[ENV.specsTable] = stack.table;
  out[ENV.region] = stack.region;
  return out;
}

/**
 * The reconciler's runtime on a local stack: `createRuntime` (the Lambda's factory, the real
 * adapters) with clients on the simulator and dynalite, the simulator's clock as the pass clock,
 * and the API budget waiting in simulated time.
 * @param env the reconciler variables (see {@link localReconcilerEnv}).
 * @throws ConfigError when a variable is invalid.
 */
export function createLocalRuntime(
  stack: LocalStack,
  opts: { env?: Record<string, string | undefined>; metrics: MetricsSink; log: LogPort; table?: string },
): Runtime {
  const config = loadConfig(localReconcilerEnv(opts.table ? { ...stack, table: opts.table } : stack, opts.env));
  const sim = stack.sim;
  return createRuntime(config, {
    // The reconciler's own credentials, under the construct's IAM for this configuration: the
    // simulator records its writes as the reconciler role's and refuses what that policy refuses.
    ecsClientConfig: { ...stack.ecsClientConfig, credentials: localReconcilerCredentials(sim, reconcilerPolicy(config, sim)) },
    ...(stack.events ? { sqsClientConfig: { endpoint: stack.events.sqs.endpoint, region: stack.region, credentials: LOCAL_CREDENTIALS } } : {}),
    doc: stack.doc,
    metrics: opts.metrics,
    log: opts.log,
    clock: { now: () => sim.clock.now() },
    monotonicMs: () => performance.now(),
    limiterTime: { nowMs: () => sim.clock.nowMs(), sleep: async (ms) => void sim.clock.advance(ms / 1000) },
  });
}

/**
 * The ECS policy the construct gives the reconciler's role for `config` (`ecsPolicyStatements`):
 * its managed clusters (every cluster when it names none, as a `ReconcilerTargetRole` without
 * clusters), its owner id, the subnet and public IP allow-lists with its defaults, and adoption with the families it implies (every family with
 * `ALLOW_ADOPTION`, which is on unless set false, else `<cluster>-*` only).
 */
export function reconcilerPolicy(config: ReconcilerConfig, sim: Pick<Simulator, 'region' | 'accountId'>): IamStatement[] {
  const clusters = config.plan.managedClusters;
  return ecsPolicyStatements(
    { partition: 'aws', region: sim.region, account: sim.accountId },
    {
      clusterNames: clusters.length > 0 ? clusters : ['*'],
      ownerId: config.plan.ownerId,
      allowAdoption: config.plan.allowAdoption ?? true,
      network: networkConditions(config.plan.allow.subnets, config.plan.defaults.subnets, config.plan.allow.assignPublicIp, config.plan.defaults.assignPublicIp ?? false),
    },
  );
}

/**
 * Credentials of the reconciler's role under `policy`: an access key of its own per policy (so that
 * runtimes of different configurations on one simulator keep their own), the caller being the role
 * {@link LOCAL_RECONCILER_ROLE_NAME} as with {@link LOCAL_RECONCILER_CREDENTIALS}.
 */
export function localReconcilerCredentials(sim: Simulator, policy: readonly IamStatement[]): { accessKeyId: string; secretAccessKey: string } {
  const accessKeyId = `${LOCAL_RECONCILER_CREDENTIALS.accessKeyId}${createHash('sha256').update(JSON.stringify(policy)).digest('hex').slice(0, 12).toUpperCase()}`;
  sim.setCaller(accessKeyId, {
    identity: assumedRoleIdentity(sim.accountId, LOCAL_RECONCILER_ROLE_NAME, 'ecsr-local', accessKeyId, sim.clock.now()),
    userAgent: 'ecs-reconciler (aws-sdk-js)',
    sourceIPAddress: '127.0.0.1',
    policy,
  });
  return { accessKeyId, secretAccessKey: LOCAL_RECONCILER_CREDENTIALS.secretAccessKey };
}

/** Creates another specs table on the stack's dynalite (tests use one per case). */
export async function createSpecsTable(stack: Pick<LocalStack, 'dynamoClientConfig'>, table: string): Promise<void> {
  const ddb = new DynamoDBClient(stack.dynamoClientConfig);
  try {
    await ddb.send(new CreateTableCommand(specsTableDefinition(table)));
  } finally {
    ddb.destroy();
  }
}

/** Creates an ECS cluster with the Fargate capacity providers on the simulator. */
export async function createCluster(stack: Pick<LocalStack, 'ecsClientConfig'>, clusterName: string): Promise<void> {
  const ecs = new ECSClient(stack.ecsClientConfig);
  try {
    // Fargate and Fargate Spot must be associated with a cluster before services can use them.
    await ecs.send(new CreateClusterCommand({ clusterName, capacityProviders: ['FARGATE', 'FARGATE_SPOT'] }));
  } finally {
    ecs.destroy();
  }
}

/**
 * Builders and helpers shared by the runtime tests (spec store, observer, actuator, passes,
 * handler): a specs table on dynalite or moto, spec items, call counters on SDK clients.
 */
import { afterAll, beforeAll, beforeEach, vi } from 'vitest';
import type { Context, DynamoDBRecord } from 'aws-lambda';
import { marshall } from '@aws-sdk/util-dynamodb';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { CreateClusterCommand, DescribeServicesCommand, ECSClient } from '@aws-sdk/client-ecs';
import { createDocumentClient } from '../../lambda/adapters/clients';
import { specsTableDefinition } from '../../lambda/adapters/dynamo-spec-store';
import { clearTaskDefinitionCache } from '../../lambda/adapters/ecs-observer';
import { RecordingLog } from '../../lambda/adapters/logger';
import { actionOfCommand } from '../../lambda/adapters/rate-limiter';
import { InMemoryMetricsSink } from '../../lambda/adapters/metrics';
import { createRuntime, type Runtime } from '../../lambda/adapters/runtime';
import { ENV, loadConfig } from '../../lambda/config';
import type { PassSummary } from '../../lambda/core/pass';
import { parseSpecItem } from '../../lambda/core/spec';
import type { ServiceKey, ServiceStatus, SpecParseResult } from '../../lambda/core/types';
import { startEmbeddedDynamoDb, type EmbeddedDynamoDb } from '../../local/embedded-dynamodb';
import { startSimulator, type Simulator } from '../../local/sim';
import { LOCAL_CLIENT_CONFIG } from '../support/moto';

export const LOCAL = LOCAL_CLIENT_CONFIG;

/** Creates the specs table ({@link specsTableDefinition}: partition key `cluster`, sort key `service`, on-demand). */
export async function createSpecsTable(endpoint: string, tableName: string): Promise<void> {
  const ddb = new DynamoDBClient({ ...LOCAL, endpoint });
  try {
    await ddb.send(new CreateTableCommand(specsTableDefinition(tableName)));
  } finally {
    ddb.destroy();
  }
}

/** A document client on a local endpoint, as the runtime builds it. */
export function localDoc(endpoint: string): DynamoDBDocumentClient {
  return createDocumentClient({ ...LOCAL, endpoint });
}

/** A valid spec item (as a person writes it); override any attribute. */
export function aSpecItem(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    cluster: 'apps',
    service: 'web',
    image: 'public.ecr.aws/nginx/nginx:1.27',
    desiredCount: 2,
    cpu: 256,
    memory: 512,
    subnets: ['subnet-0123456789abcdef0'],
    securityGroups: ['sg-0123456789abcdef0'],
    ...overrides,
  };
}

/** ECS calls seen by a client, by action name, in order. */
export interface CallLog {
  readonly calls: { action: string; input: Record<string, unknown> }[];
  count(action: string): number;
  writes(): string[];
  reset(): void;
}

const ECS_WRITES = new Set([
  'RegisterTaskDefinition',
  'DeregisterTaskDefinition',
  'CreateService',
  'UpdateService',
  'DeleteService',
  'TagResource',
  'UntagResource',
]);

/** Records every command sent through `client` (one entry per `send`, before retries). */
export function recordCalls(client: ECSClient | DynamoDBDocumentClient): CallLog {
  const calls: { action: string; input: Record<string, unknown> }[] = [];
  (client as ECSClient).middlewareStack.add(
    (next, context) => async (args) => {
      calls.push({ action: actionOfCommand(context.commandName), input: args.input as Record<string, unknown> });
      return next(args);
    },
    { step: 'initialize', name: `testCallLog${Math.random()}` },
  );
  return {
    calls,
    count: (action) => calls.filter((c) => c.action === action).length,
    writes: () => calls.filter((c) => ECS_WRITES.has(c.action)).map((c) => c.action),
    reset: () => {
      calls.length = 0;
    },
  };
}

/**
 * moto's default VPC subnets and security group in us-east-1 (moto validates awsvpc networks
 * against its EC2 model). EC2 speaks the Query protocol; no EC2 SDK client is installed, so this
 * posts the two Describe actions directly.
 */
export async function motoDefaultNetwork(endpoint: string): Promise<{ subnets: string[]; securityGroups: string[] }> {
  const call = async (action: string): Promise<string> => {
    const res = await fetch(endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded; charset=utf-8',
        authorization:
          'AWS4-HMAC-SHA256 Credential=test/20250101/us-east-1/ec2/aws4_request, SignedHeaders=host, Signature=0',
      },
      body: `Action=${action}&Version=2016-11-15`,
    });
    return res.text();
  };
  const subnets = [...(await call('DescribeSubnets')).matchAll(/<subnetId>(subnet-[0-9a-f]+)<\/subnetId>/g)].map((m) => m[1]);
  const groups = [...(await call('DescribeSecurityGroups')).matchAll(/<groupId>(sg-[0-9a-f]+)<\/groupId>/g)].map((m) => m[1]);
  return { subnets: [...new Set(subnets)].slice(0, 2), securityGroups: [...new Set(groups)].slice(0, 1) };
}

/** The parsed spec of {@link aSpecItem}; throws when the item is not valid (a broken builder). */
export function aValidSpec(overrides: Record<string, unknown> = {}): Extract<SpecParseResult, { ok: true }> {
  const r = parseSpecItem(aSpecItem(overrides));
  if (!r.ok) throw new Error(`builder made an invalid spec: ${JSON.stringify(r.errors)}`);
  return r;
}

// ---------------------------------------------------------------------------------------------
// A simulator + dynalite harness for full passes over HTTP
// ---------------------------------------------------------------------------------------------

/** Write actions as the simulator logs them. */
export function isEcsWrite(action: string): boolean {
  return ECS_WRITES.has(action);
}

export interface SimHarnessOptions {
  /** Extra environment for `loadConfig` (SPECS_TABLE and OWNER_ID are set). */
  readonly env?: Record<string, string>;
  /** Clusters created in the simulator. */
  readonly clusters?: string[];
}

/**
 * The ECS simulator (manual virtual clock) and dynalite on loopback, a fresh specs table per
 * `reset`, and a runtime built with `createRuntime` as the CLI and the local run build it: its
 * pass clock is the simulator's clock, and its rate limiter waits in virtual time.
 */
export class SimHarness {
  runtime!: Runtime;
  metrics!: InMemoryMetricsSink;
  log!: RecordingLog;
  table = '';
  private tables = 0;

  private constructor(
    readonly sim: Simulator,
    readonly db: EmbeddedDynamoDb,
    readonly doc: DynamoDBDocumentClient,
  ) {}

  /** @param simOptions options of the simulator (e.g. slower task `timings`). */
  static async start(simOptions: Parameters<typeof startSimulator>[0] = {}): Promise<SimHarness> {
    const sim = await startSimulator(simOptions);
    const db = await startEmbeddedDynamoDb();
    return new SimHarness(sim, db, localDoc(db.endpoint));
  }

  /** Empties the simulator, creates clusters, a new table and a new runtime. */
  async reset(opts: SimHarnessOptions = {}): Promise<void> {
    this.sim.reset();
    clearTaskDefinitionCache();
    this.runtime?.ecs.destroy();
    const clusters = opts.clusters ?? ['apps'];
    const setup = new ECSClient({ ...LOCAL, endpoint: this.sim.endpoint });
    for (const c of clusters) await setup.send(new CreateClusterCommand({ clusterName: c, capacityProviders: ['FARGATE', 'FARGATE_SPOT'] }));
    setup.destroy();
    this.table = `specs-${++this.tables}`;
    await createSpecsTable(this.db.endpoint, this.table);
    this.env = opts.env ?? {};
    this.buildRuntime();
    this.sim.clearCalls();
  }

  /**
   * A new container over the same simulator and table: an empty in-memory task definition cache
   * and a new runtime (new observer, limiter and metrics), with `env` added to the reset's.
   */
  newContainer(env: Record<string, string> = {}): void {
    clearTaskDefinitionCache();
    this.runtime?.ecs.destroy();
    this.env = { ...this.env, ...env };
    this.buildRuntime();
  }

  private env: Record<string, string> = {};

  private buildRuntime(): void {
    this.metrics = new InMemoryMetricsSink();
    this.log = new RecordingLog();
    const config = loadConfig({ [ENV.specsTable]: this.table, [ENV.ownerId]: 'sim-test', ...this.env });
    const sim = this.sim;
    this.runtime = createRuntime(config, {
      ecsClientConfig: { ...LOCAL, endpoint: sim.endpoint },
      doc: this.doc,
      metrics: this.metrics,
      log: this.log,
      clock: { now: () => sim.clock.now() },
      limiterTime: {
        nowMs: () => sim.clock.now().getTime(),
        sleep: async (ms) => {
          sim.advance(ms / 1000);
        },
      },
    });
  }

  async putSpec(item: Record<string, unknown>): Promise<void> {
    await this.doc.send(new PutCommand({ TableName: this.table, Item: item }));
  }

  /** Changes attributes of a spec as a person would (UpdateItem, status untouched). */
  async editSpec(key: ServiceKey, changes: Record<string, unknown>): Promise<void> {
    const names = Object.keys(changes);
    await this.doc.send(
      new UpdateCommand({
        TableName: this.table,
        Key: { ...key },
        UpdateExpression: `SET ${names.map((_, i) => `#a${i} = :v${i}`).join(', ')}`,
        ExpressionAttributeNames: Object.fromEntries(names.map((n, i) => [`#a${i}`, n])),
        ExpressionAttributeValues: Object.fromEntries(names.map((n, i) => [`:v${i}`, changes[n]])),
      }),
    );
  }

  async deleteSpec(key: ServiceKey): Promise<void> {
    await this.doc.send(new DeleteCommand({ TableName: this.table, Key: { ...key } }));
  }

  async item(key: ServiceKey): Promise<Record<string, unknown> | undefined> {
    return (await this.doc.send(new GetCommand({ TableName: this.table, Key: { ...key }, ConsistentRead: true }))).Item;
  }

  async status(key: ServiceKey): Promise<ServiceStatus | undefined> {
    return (await this.item(key))?.status as ServiceStatus | undefined;
  }

  pass(holder = 'pass'): Promise<PassSummary> {
    return this.runtime.run({ holder });
  }

  /**
   * Runs passes `stepSeconds` of virtual time apart until `done(summary)` holds.
   * @returns the summaries; throws after `maxPasses`.
   */
  async passUntil(done: (s: PassSummary) => boolean, maxPasses = 15, stepSeconds = 60): Promise<PassSummary[]> {
    const out: PassSummary[] = [];
    for (let i = 0; i < maxPasses; i++) {
      const s = await this.pass(`pass-${i}`);
      out.push(s);
      if (done(s)) return out;
      this.sim.advance(stepSeconds);
    }
    throw new Error(`not done after ${maxPasses} passes: ${JSON.stringify(out.at(-1)?.statuses)}`);
  }

  /**
   * Passes until one is steady: every status Converged, nothing planned, no status changed (the
   * pass that sees the rollout COMPLETED still records it).
   */
  converge(maxPasses = 15): Promise<PassSummary[]> {
    return this.passUntil(
      (s) =>
        s.actions.length === 0 &&
        s.counts.statusesWritten === 0 &&
        Object.values(s.statuses).length > 0 &&
        Object.values(s.statuses).every((st) => st.phase === 'Converged'),
      maxPasses,
    );
  }

  /** ECS write calls the simulator answered since the last `clearCalls`. */
  writes(): string[] {
    return this.sim.calls().filter((c) => isEcsWrite(c.action)).map((c) => c.action);
  }

  /** A service as the simulator describes it (with tags). */
  async describe(cluster: string, service: string) {
    const ecs = new ECSClient({ ...LOCAL, endpoint: this.sim.endpoint });
    try {
      return (await ecs.send(new DescribeServicesCommand({ cluster, services: [service], include: ['TAGS'] }))).services?.[0];
    } finally {
      ecs.destroy();
    }
  }

  async close(): Promise<void> {
    this.runtime?.ecs.destroy();
    this.doc.destroy();
    await this.sim.close();
    await this.db.stop();
  }
}

/**
 * Registers the hooks of a suite on the simulator and dynalite: starts a `SimHarness` before all
 * tests, closes it after them and, unless `resetEach` is `false`, resets it with `resetEach`
 * before each test. Register it first in the `describe`, so that the suite's own hooks run after
 * these ones.
 * @returns the suite's harness: usable in hooks and tests once the harness has started.
 */
export function useSimHarness(
  opts: { resetEach?: SimHarnessOptions | false; sim?: Parameters<typeof startSimulator>[0] } = {},
): SimHarness {
  const { resetEach = {} } = opts;
  let started: SimHarness | undefined;
  beforeAll(async () => {
    started = await SimHarness.start(opts.sim);
  });
  afterAll(async () => {
    await started?.close();
  });
  if (resetEach !== false) {
    beforeEach(async () => {
      await harness.reset(resetEach);
    });
  }
  const harness = new Proxy({} as SimHarness, {
    get(_, prop) {
      if (!started) throw new Error(`the SimHarness is not started yet (reading ${String(prop)})`);
      const value = Reflect.get(started, prop, started);
      return typeof value === 'function' ? value.bind(started) : value;
    },
    set(_, prop, value) {
      if (!started) throw new Error(`the SimHarness is not started yet (setting ${String(prop)})`);
      return Reflect.set(started, prop, value, started);
    },
  });
  return harness;
}

/** A Lambda invocation context with `remainingMs` left before the deadline. */
export function aLambdaContext(remainingMs: number, requestId = 'req-1'): Context {
  return {
    awsRequestId: requestId,
    functionName: 'ecs-reconciler',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:ecs-reconciler',
    memoryLimitInMB: '256',
    logGroupName: '/aws/lambda/ecs-reconciler',
    logStreamName: 'stream',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => remainingMs,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

export type HandlerModule = { handler: (event: unknown, context: Context) => Promise<PassSummary> };

let sequence = 100;

/** A stream record as Lambda delivers it (NEW_AND_OLD_IMAGES); `undefined` image: absent. */
export function aStreamRecord(
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE',
  key: ServiceKey,
  images: { old?: Record<string, unknown>; new?: Record<string, unknown> },
): DynamoDBRecord {
  sequence += 1;
  const opts = { removeUndefinedValues: true, convertClassInstanceToMap: true };
  return {
    eventID: `event-${sequence}`,
    eventName,
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'us-east-1',
    eventSourceARN: 'arn:aws:dynamodb:us-east-1:123456789012:table/specs/stream/2026-01-01T00:00:00.000',
    dynamodb: {
      Keys: marshall({ cluster: key.cluster, service: key.service }) as never,
      ...(images.old ? { OldImage: marshall(images.old, opts) as never } : {}),
      ...(images.new ? { NewImage: marshall(images.new, opts) as never } : {}),
      SequenceNumber: String(sequence),
      SizeBytes: 100,
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
  };
}


/** Imports `lambda/handler` afresh with `env` stubbed, as a new Lambda container reads it. */
export async function importHandler(env: Record<string, string | undefined>): Promise<HandlerModule> {
  vi.resetModules();
  for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
  return (await import('../../lambda/handler')) as HandlerModule;
}

/**
 * The handler's environment against local servers: region, test credentials, the SDK's standard
 * endpoint variables for ECS and DynamoDB, no Powertools dev mode, the specs table and the owner;
 * then `extra`.
 */
export function localHandlerEnv(
  endpoints: { ecs: string; dynamodb: string },
  table: string,
  ownerId: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_ENDPOINT_URL_ECS: endpoints.ecs,
    AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
    POWERTOOLS_DEV: '',
    [ENV.specsTable]: table,
    [ENV.ownerId]: ownerId,
    ...extra,
  };
}

/**
 * What a fleet of healthy services costs per month, measured: the reconciler's
 * steady passes run against the ECS simulator and dynalite with the Lambda's own sinks (Powertools
 * Metrics writing CloudWatch Embedded Metric Format to stdout, Powertools Logger writing JSON
 * lines), stdout is captured as CloudWatch Logs would take it, and the bill is computed from what
 * was captured and counted:
 * - custom metric series: distinct (namespace, metric name, dimension set and values) in the EMF
 *   (Amazon CloudWatch User Guide, "Embedded metric format specification"); each series that has
 *   data every hour is one metric-month;
 * - datapoints (what PutMetricData would have carried; EMF itself has no request charge);
 * - log bytes: the captured lines, plus the platform lines Lambda writes per invocation (START,
 *   END, REPORT, and XRAY with active tracing), plus 26 bytes of event overhead per line (the size
 *   CloudWatch Logs counts per log event, PutLogEvents);
 * - DynamoDB read and write request units, as dynalite reports them with
 *   `ReturnConsumedCapacity: TOTAL` (same units as on-demand billing: 4 KB per read unit,
 *   strongly consistent reads count 1, 1 KB per write unit);
 * - billed Lambda duration: the pass's real time plus the time its ECS rate limiter waited (in
 *   simulated time here, for real in Lambda), rounded up to the millisecond;
 * - items written to the specs table: each is a record on the table's stream, which (with the
 *   fast path, the construct's default) invokes the function once more at most.
 *
 * Used by `npm run cost` (`bench/cost.ts`) and by `test/bench/cost.test.ts`.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, DynamoDBRecord } from 'aws-lambda';
import { LEASE_KEY, PARTITION_KEY, RESERVED_PARTITIONS, SORT_KEY } from '../lambda/adapters/dynamo-spec-store';
import { taskDefinitionCacheTableDefinition } from '../lambda/adapters/dynamo-task-definition-cache';
import { clearTaskDefinitionCache } from '../lambda/adapters/ecs-observer';
import { LOG_SERVICE_NAME, PowertoolsLog, RecordingLog } from '../lambda/adapters/logger';
import { keysOfStreamRecords } from '../lambda/adapters/stream-records';
import { InMemoryMetricsSink, PowertoolsMetricsSink } from '../lambda/adapters/metrics';
import { ENV } from '../lambda/config';
import { alarmDefinitions } from '../lambda/core/alarms';
import type { PassSummary } from '../lambda/core/pass';
import { createLocalRuntime, startLocalStack, type LocalStack } from '../local/stack';
import { benchSpecItem } from './fixtures';

// --- EMF parsing --------------------------------------------------------------------------------

/** One custom metric series: namespace, metric name and the dimension set with its values. */
export interface MetricSeries {
  readonly namespace: string;
  readonly name: string;
  /** Dimension name -> value, in the order the directive lists them. */
  readonly dimensions: Readonly<Record<string, string>>;
}

/** Series and datapoints found in EMF log lines. */
export interface EmfCount {
  /** Distinct series, keyed by {@link seriesKey}. */
  readonly series: ReadonlyMap<string, MetricSeries>;
  /** Datapoints, one per value (an EMF member may hold an array of values), per dimension set. */
  readonly datapoints: number;
  /** Lines that were EMF documents. */
  readonly emfLines: number;
}

/** `namespace|name|k=v,k=v` with the dimensions sorted by name: one key per series. */
export function seriesKey(s: MetricSeries): string {
  const dims = Object.entries(s.dimensions)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  return `${s.namespace}|${s.name}|${dims}`;
}

interface EmfDirective {
  Namespace: string;
  Dimensions?: string[][];
  Metrics: { Name: string }[];
}

/**
 * Counts the custom metric series and datapoints in log lines, as CloudWatch extracts them from
 * EMF: a line is EMF when it is a JSON object with `_aws.CloudWatchMetrics`; each directive
 * publishes each of its metrics once per dimension set (a directive with no dimension set
 * publishes it without dimensions), the dimension values and metric values being the document's
 * root members. Other lines (JSON logs, text) are skipped.
 * @param lines log lines (one JSON document each, as Lambda writes them).
 * @throws Error naming the line when an EMF document refers to a dimension or metric it lacks.
 */
export function countEmf(lines: Iterable<string>): EmfCount {
  const series = new Map<string, MetricSeries>();
  let datapoints = 0;
  let emfLines = 0;
  for (const line of lines) {
    const text = line.trim();
    if (!text.startsWith('{')) continue;
    let doc: Record<string, unknown>;
    try {
      doc = JSON.parse(text) as Record<string, unknown>;
    } catch {
      continue;
    }
    const aws = doc._aws as { CloudWatchMetrics?: EmfDirective[] } | undefined;
    if (!aws || !Array.isArray(aws.CloudWatchMetrics)) continue;
    emfLines++;
    for (const directive of aws.CloudWatchMetrics) {
      const sets = directive.Dimensions && directive.Dimensions.length > 0 ? directive.Dimensions : [[]];
      for (const set of sets) {
        const dimensions: Record<string, string> = Object.create(null) as Record<string, string>;
        for (const d of set) {
          const v = doc[d];
          if (typeof v !== 'string') throw new Error(`EMF line names dimension ${d} but has no string value for it: ${text.slice(0, 200)}`);
          dimensions[d] = v;
        }
        for (const m of directive.Metrics) {
          const value = doc[m.Name];
          if (value === undefined) throw new Error(`EMF line names metric ${m.Name} but has no value for it: ${text.slice(0, 200)}`);
          const s: MetricSeries = { namespace: directive.Namespace, name: m.Name, dimensions };
          series.set(seriesKey(s), s);
          datapoints += Array.isArray(value) ? value.length : 1;
        }
      }
    }
  }
  return { series, datapoints, emfLines };
}

// --- Capturing stdout ---------------------------------------------------------------------------

/**
 * Runs `fn` with everything written to stdout captured (and not printed): the Powertools Metrics
 * and Logger instances write there through their own `Console`, as in Lambda.
 * @returns fn's result and the lines written.
 */
export async function captureStdout<T>(fn: () => Promise<T>): Promise<{ result: T; lines: string[] }> {
  const chunks: string[] = [];
  const original = process.stdout.write;
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    const cb = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    cb?.();
    return true;
  }) as typeof process.stdout.write;
  try {
    const result = await fn();
    return { result, lines: chunks.join('').split('\n').filter((l) => l !== '') };
  } finally {
    process.stdout.write = original;
  }
}

// --- Measuring a fleet --------------------------------------------------------------------------

/** Memory of the function (MiB): the construct's default `memorySize`. */
export const FUNCTION_MEMORY_MIB = 256;
/** Bytes CloudWatch Logs counts per log event on top of its message (PutLogEvents batch size rule). */
export const LOG_EVENT_OVERHEAD_BYTES = 26;
/** Metrics namespace of the measurement (the construct's default). */
const NAMESPACE = 'EcsReconciler';

/** What the measured steady passes used, per pass on average, and in total. */
export interface FleetMeasurement {
  readonly services: number;
  readonly passes: number;
  /** Distinct custom metric series over all measured passes. */
  readonly series: readonly MetricSeries[];
  /** Series whose metric is `TaskLag` (per service); 0 when every service is healthy. */
  readonly taskLagSeries: number;
  readonly datapointsPerPass: number;
  /** Log bytes per pass: captured lines + Lambda's platform lines + per-event overhead. */
  readonly logBytesPerPass: number;
  /** Of which: bytes of the captured stdout lines (EMF and JSON logs) alone, without overhead. */
  readonly stdoutBytesPerPass: number;
  readonly logEventsPerPass: number;
  readonly readUnitsPerPass: number;
  readonly writeUnitsPerPass: number;
  /**
   * Items the pass wrote to the specs table (the lease's put and delete; status writes): each is
   * one record on the table's stream, so with the fast path (the construct's default) one more
   * invocation at most, which drops the records (reserved and status-only items) and returns.
   */
  readonly streamRecordsPerPass: number;
  /** Billed duration of such an invocation (ms): the handler's record filter, at least 1 ms. */
  readonly streamInvocationBilledMs: number;
  /** Log bytes of such an invocation: Lambda's platform lines only (the handler logs it at debug). */
  readonly streamInvocationLogBytes: number;
  /** Billed duration per pass (ms): real time + rate-limiter waits, rounded up to 1 ms. */
  readonly billedMsPerPass: number;
  /** Of which the rate limiter waited (ms, per pass). */
  readonly limiterWaitMsPerPass: number;
  /** ECS calls per pass (free, for the record). */
  readonly ecsCallsPerPass: number;
  /** Status writes over the measured passes (0 in a steady fleet). */
  readonly statusesWritten: number;
  /** Actions planned over the measured passes (0 in a steady fleet). */
  readonly actions: number;
}

export interface MeasureOptions {
  /** Healthy services, in one cluster (`cost`). */
  readonly services: number;
  /** Steady passes measured, one simulated minute apart (default 10). */
  readonly passes?: number;
  /** Passes allowed to converge the fleet before measuring (default 40). */
  readonly maxConvergePasses?: number;
  /** Progress messages (stderr in the script). */
  readonly progress?: (message: string) => void;
}

const CLUSTER = 'cost';
const TABLE = 'ecsr-cost-specs';
const CACHE_TABLE = 'ecsr-cost-td-cache';

/** A Lambda context as the function's logger sees it (its fields are in every JSON log line). */
function lambdaContext(requestId: string): Context {
  return {
    awsRequestId: requestId,
    functionName: 'EcsReconciler-ReconcilerFunction1A2B3C4D-AbCdEfGh1234',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:EcsReconciler-ReconcilerFunction1A2B3C4D-AbCdEfGh1234',
    memoryLimitInMB: String(FUNCTION_MEMORY_MIB),
    logGroupName: '/aws/lambda/EcsReconciler-ReconcilerFunction1A2B3C4D-AbCdEfGh1234',
    logStreamName: '2025/01/06/[$LATEST]0123456789abcdef0123456789abcdef',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => 50_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/**
 * The lines Lambda itself writes to the function's log group per invocation, with active tracing
 * (AWS Lambda Developer Guide, "Monitoring and troubleshooting": START, END, REPORT; XRAY when
 * traced), filled with this pass's figures so that their length is the real one.
 */
export function platformLines(requestId: string, durationMs: number, maxMemoryMib: number): string[] {
  const billed = Math.ceil(durationMs);
  return [
    `START RequestId: ${requestId} Version: $LATEST`,
    `END RequestId: ${requestId}`,
    `REPORT RequestId: ${requestId}\tDuration: ${durationMs.toFixed(2)} ms\tBilled Duration: ${billed} ms\tMemory Size: ${FUNCTION_MEMORY_MIB} MB\tMax Memory Used: ${maxMemoryMib} MB\t`,
    `XRAY TraceId: 1-67a1b2c3-0123456789abcdef01234567\tSegmentId: 0123456789abcdef\tSampled: true\t`,
  ];
}

const utf8Bytes = (lines: readonly string[]) => lines.reduce((n, l) => n + Buffer.byteLength(l, 'utf8') + 1, 0);

/**
 * Builds a fleet of `services` healthy services, converges it (in-memory sinks, simulated time),
 * then runs `passes` steady passes as a warm Lambda container does, with the Lambda's Powertools
 * sinks, and measures what they use. The first pass of the measuring runtime (a new container:
 * it reads the durable task definition cache) is not counted.
 * @throws Error when the fleet does not converge, or when Powertools metrics are disabled
 *   (`POWERTOOLS_DEV` / `POWERTOOLS_METRICS_DISABLED`), which would measure nothing.
 */
export async function measureFleet(opts: MeasureOptions): Promise<FleetMeasurement> {
  const passes = opts.passes ?? 10;
  const progress = opts.progress ?? (() => undefined);
  const stack = await startLocalStack({ specsTable: TABLE, clusters: [CLUSTER], startTime: new Date('2025-01-06T00:00:30.000Z') });
  try {
    await createCacheTable(stack);
    const env = { [ENV.ownerId]: 'ecsr-cost', [ENV.taskDefinitionCacheTable]: CACHE_TABLE, [ENV.metricsNamespace]: NAMESPACE };
    for (let i = 0; i < opts.services; i++) {
      await stack.doc.send(new PutCommand({ TableName: TABLE, Item: { ...benchSpecItem(i), cluster: CLUSTER } }));
    }
    progress(`${opts.services} services: converging`);
    await converge(stack, env, opts.maxConvergePasses ?? 40);

    // A new container with the Lambda's sinks; dynalite reports consumed capacity.
    clearTaskDefinitionCache();
    const logger = new Logger({ serviceName: LOG_SERVICE_NAME });
    const metrics = new Metrics({ namespace: NAMESPACE });
    if ((metrics as unknown as { isDisabled(): boolean }).isDisabled()) {
      throw new Error('Powertools metrics are disabled (POWERTOOLS_DEV or POWERTOOLS_METRICS_DISABLED is set): nothing would be measured.');
    }
    const runtime = createLocalRuntime(stack, { env, metrics: new PowertoolsMetricsSink(NAMESPACE, metrics), log: new PowertoolsLog(logger) });
    const units = { read: 0, write: 0, specWrites: 0 };
    countCapacity(runtime.doc, units);
    let ecsCalls = 0;
    runtime.ecs.middlewareStack.add(
      (next) => (args) => {
        ecsCalls++;
        return next(args);
      },
      { step: 'initialize', name: 'costEcsCalls' },
    );
    const run = async (requestId: string) => {
      logger.addContext(lambdaContext(requestId));
      const simBefore = stack.sim.clock.nowMs();
      const t0 = performance.now();
      const { result, lines } = await captureStdout(() => runtime.run({ holder: requestId, leaseTtlSeconds: 55 }));
      const realMs = performance.now() - t0;
      const waitedMs = stack.sim.clock.nowMs() - simBefore;
      return { summary: result, lines, realMs, waitedMs };
    };
    try {
      stack.sim.advance(60);
      await run('warm-up'); // a new container's first pass: not a steady one
      const before = { ...units, ecs: ecsCalls };
      const allLines: string[] = [];
      let logBytes = 0;
      let stdoutBytes = 0;
      let logEvents = 0;
      let billedMs = 0;
      let waited = 0;
      let statusesWritten = 0;
      let actions = 0;
      for (let p = 0; p < passes; p++) {
        stack.sim.advance(60);
        const requestId = `0f1e2d3c-4b5a-4968-8776-${String(p).padStart(12, '0')}`;
        const r = await run(requestId);
        checkSteady(r.summary, opts.services);
        statusesWritten += r.summary.counts.statusesWritten;
        actions += r.summary.actions.length;
        const durationMs = r.realMs + r.waitedMs;
        const platform = platformLines(requestId, durationMs, Math.ceil(process.memoryUsage().rss / 2 ** 20));
        allLines.push(...r.lines);
        stdoutBytes += utf8Bytes(r.lines);
        logBytes += utf8Bytes(r.lines) + utf8Bytes(platform) + LOG_EVENT_OVERHEAD_BYTES * (r.lines.length + platform.length);
        logEvents += r.lines.length + platform.length;
        billedMs += Math.ceil(durationMs);
        waited += r.waitedMs;
      }
      const emf = countEmf(allLines);
      const series = [...emf.series.values()];
      return {
        services: opts.services,
        passes,
        series,
        taskLagSeries: series.filter((s) => s.name === 'TaskLag').length,
        datapointsPerPass: emf.datapoints / passes,
        logBytesPerPass: logBytes / passes,
        stdoutBytesPerPass: stdoutBytes / passes,
        logEventsPerPass: logEvents / passes,
        readUnitsPerPass: (units.read - before.read) / passes,
        writeUnitsPerPass: (units.write - before.write) / passes,
        streamRecordsPerPass: (units.specWrites - before.specWrites) / passes,
        streamInvocationBilledMs: ignoredBatchBilledMs(),
        streamInvocationLogBytes: utf8Bytes(platformLines('0f1e2d3c-4b5a-4968-8776-000000000000', 1.23, 90)) + LOG_EVENT_OVERHEAD_BYTES * 4,
        billedMsPerPass: billedMs / passes,
        limiterWaitMsPerPass: waited / passes,
        ecsCallsPerPass: (ecsCalls - before.ecs) / passes,
        statusesWritten,
        actions,
      };
    } finally {
      runtime.ecs.destroy();
    }
  } finally {
    await stack.close();
  }
}

/**
 * Billed milliseconds of a stream invocation that names no service: the handler's record filter
 * (`keysOfStreamRecords`) over the records of the lease's put and delete, timed over many runs;
 * Lambda bills at least 1 ms.
 */
function ignoredBatchBilledMs(): number {
  const key = { [PARTITION_KEY]: { S: LEASE_KEY.cluster }, [SORT_KEY]: { S: LEASE_KEY.service } };
  const records = (['INSERT', 'REMOVE'] as const).map((eventName) => ({ eventName, dynamodb: { Keys: key } })) as DynamoDBRecord[];
  const runs = 1000;
  const t0 = performance.now();
  for (let i = 0; i < runs; i++) {
    if (keysOfStreamRecords(records).keys.length !== 0) throw new Error('the lease records named a service');
  }
  return Math.max(1, Math.ceil((performance.now() - t0) / runs));
}

async function createCacheTable(stack: LocalStack): Promise<void> {
  const ddb = new DynamoDBClient(stack.dynamoClientConfig);
  try {
    await ddb.send(new CreateTableCommand(taskDefinitionCacheTableDefinition(CACHE_TABLE)));
  } finally {
    ddb.destroy();
  }
}

/** Passes one simulated minute apart (in-memory sinks) until one is steady and every service converged. */
async function converge(stack: LocalStack, env: Record<string, string>, maxPasses: number): Promise<void> {
  const runtime = createLocalRuntime(stack, { env, metrics: new InMemoryMetricsSink(), log: new RecordingLog() });
  try {
    for (let i = 0; i < maxPasses; i++) {
      const s = await runtime.run({ holder: `converge-${i}` });
      const statuses = Object.values(s.statuses);
      if (s.actions.length === 0 && s.counts.statusesWritten === 0 && statuses.length > 0 && statuses.every((st) => st.phase === 'Converged')) return;
      stack.sim.advance(60);
    }
    throw new Error(`the fleet did not converge in ${maxPasses} passes`);
  } finally {
    runtime.ecs.destroy();
  }
}

/** A measured pass must be steady: completed, everything read, nothing to do, every service Converged. */
function checkSteady(s: PassSummary, services: number): void {
  const converged = Object.values(s.statuses).filter((st) => st.phase === 'Converged').length;
  if (s.outcome !== 'completed' || !s.readsComplete || converged !== services) {
    throw new Error(`a measured pass was not steady: outcome ${s.outcome}, readsComplete ${s.readsComplete}, ${converged}/${services} Converged`);
  }
}

/**
 * Adds `ReturnConsumedCapacity: TOTAL` to every DynamoDB call of `client` and sums the units
 * reported; counts the items written to the specs table (each successful write is one record on
 * the table's stream, which the fast path's event source mapping hands to the function).
 */
/**
 * Whether a write's stream record passes the fast path's filter (the construct's: `anything-but`
 * the reserved partitions) and so invokes the function.
 */
function invokes(input: Record<string, unknown>): boolean {
  const key = (input.Key ?? input.Item) as Record<string, unknown> | undefined;
  const raw = key?.[PARTITION_KEY];
  // A document client's plain value, or a low-level command's attribute value ({ S: '#lease' }).
  const pk = typeof raw === 'string' ? raw : (raw as { S?: unknown } | undefined)?.S;
  return !(typeof pk === 'string' && RESERVED_PARTITIONS.includes(pk));
}

function countCapacity(client: { middlewareStack: DynamoDBClient['middlewareStack'] }, units: { read: number; write: number; specWrites: number }): void {
  const READS = new Set(['GetItemCommand', 'ScanCommand', 'QueryCommand', 'BatchGetItemCommand', 'GetCommand', 'BatchGetCommand']);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, unknown>;
      input.ReturnConsumedCapacity = 'TOTAL';
      const out = await next(args);
      const consumed = (out.output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }).ConsumedCapacity;
      const total = (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []).reduce((n, c) => n + (c.CapacityUnits ?? 0), 0);
      if (READS.has(context.commandName ?? '')) units.read += total;
      else {
        units.write += total;
        const batch = (input.RequestItems as Record<string, unknown[]> | undefined)?.[TABLE];
        // Records of the reconciler's own items (lease, cursor...) are dropped by the stream's
        // filter before they invoke the function: only the others count.
        if (input.TableName === TABLE) units.specWrites += invokes(input) ? 1 : 0;
        else if (Array.isArray(batch)) units.specWrites += batch.filter((r) => invokes((r as { PutRequest?: Record<string, unknown>; DeleteRequest?: Record<string, unknown> }).PutRequest ?? (r as { DeleteRequest?: Record<string, unknown> }).DeleteRequest ?? {})).length;
      }
      return out;
    },
    { step: 'initialize', name: 'costConsumedCapacity' },
  );
}

// --- Prices and the monthly bill ----------------------------------------------------------------

/**
 * List prices, US East (N. Virginia), as published on the AWS pricing pages (no free tier counted):
 * - CloudWatch (https://aws.amazon.com/cloudwatch/pricing/): custom metrics $0.30 per metric-month
 *   for the first 10,000 (prorated by the hour); standard-resolution alarms $0.10 per alarm metric
 *   per month; dashboards $3.00 each per month; logs ingestion (Standard class) $0.50 per GB,
 *   storage $0.03 per GB-month. A Metrics Insights query alarm is billed per metric it analyzes.
 * - Lambda (https://aws.amazon.com/lambda/pricing/): Arm $0.0000133334 per GB-second, $0.20 per
 *   million requests.
 * - DynamoDB on-demand (https://aws.amazon.com/dynamodb/pricing/on-demand/): $0.125 per million
 *   read request units, $0.625 per million write request units.
 * - X-Ray (https://aws.amazon.com/xray/pricing/): $5.00 per million traces recorded.
 * - EventBridge scheduled rules: no charge.
 */
export const PRICES = {
  metricMonth: 0.3,
  alarmMetricMonth: 0.1,
  dashboardMonth: 3,
  logIngestPerGb: 0.5,
  logStoragePerGbMonth: 0.03,
  lambdaArmPerGbSecond: 0.0000133334,
  lambdaPerMillionRequests: 0.2,
  dynamoPerMillionReadUnits: 0.125,
  dynamoPerMillionWriteUnits: 0.625,
  xrayPerMillionTraces: 5,
} as const;

/** One pass a minute over a 30-day month. */
export const PASSES_PER_MONTH = 30 * 24 * 60;

/** One line of the bill. */
export interface BillLine {
  readonly item: string;
  /** How the amount follows from the measurement. */
  readonly basis: string;
  readonly usd: number;
}

/**
 * The monthly bill of a measured fleet: every usage line scales the measured per-pass figure to
 * {@link PASSES_PER_MONTH}; alarms and the dashboard are those the construct deploys by default
 * (`alarmDefinitions()`; the Metrics Insights alarm analyzes the `TaskLag` series, none while
 * every service is healthy).
 */
export function monthlyBill(m: FleetMeasurement): BillLine[] {
  const n = PASSES_PER_MONTH;
  const defs = alarmDefinitions();
  const standard = defs.filter((d) => d.source.kind !== 'metricsInsights').length;
  const insights = defs.length - standard;
  const gbSeconds = (m.billedMsPerPass / 1000) * (FUNCTION_MEMORY_MIB / 1024) * n;
  const logGb = (m.logBytesPerPass * n) / 1e9;
  const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
  return [
    {
      item: 'Custom metrics',
      basis: `${m.series.length} series in the EMF (${m.taskLagSeries} TaskLag) × $${PRICES.metricMonth}`,
      usd: m.series.length * PRICES.metricMonth,
    },
    {
      item: 'Lambda duration',
      basis: `${fmt(m.billedMsPerPass)} ms × ${FUNCTION_MEMORY_MIB} MB × ${fmt(n)} = ${fmt(gbSeconds)} GB-s`,
      usd: gbSeconds * PRICES.lambdaArmPerGbSecond,
    },
    { item: 'Lambda requests', basis: `${fmt(n)} invocations`, usd: (n / 1e6) * PRICES.lambdaPerMillionRequests },
    {
      item: 'DynamoDB reads',
      basis: `${fmt(m.readUnitsPerPass, 1)} RRU per pass`,
      usd: ((m.readUnitsPerPass * n) / 1e6) * PRICES.dynamoPerMillionReadUnits,
    },
    {
      item: 'DynamoDB writes',
      basis: `${fmt(m.writeUnitsPerPass, 1)} WRU per pass`,
      usd: ((m.writeUnitsPerPass * n) / 1e6) * PRICES.dynamoPerMillionWriteUnits,
    },
    {
      item: 'Logs ingestion',
      basis: `${fmt(m.logBytesPerPass)} B per pass (${fmt(m.logEventsPerPass, 1)} events) = ${fmt(logGb, 3)} GB`,
      usd: logGb * PRICES.logIngestPerGb,
    },
    { item: 'Logs storage', basis: `one month kept, ${fmt(logGb, 3)} GB at most`, usd: logGb * PRICES.logStoragePerGbMonth },
    { item: 'Standard alarms', basis: `${standard} × $${PRICES.alarmMetricMonth}`, usd: standard * PRICES.alarmMetricMonth },
    {
      item: 'Metrics Insights alarm',
      basis: `${insights} alarm over ${m.taskLagSeries} TaskLag series`,
      usd: insights * m.taskLagSeries * PRICES.alarmMetricMonth,
    },
    { item: 'Dashboard', basis: `1 × $${PRICES.dashboardMonth}`, usd: PRICES.dashboardMonth },
    { item: 'X-Ray traces', basis: `${fmt(n)} traces (one per pass)`, usd: (n / 1e6) * PRICES.xrayPerMillionTraces },
    streamInvocationsLine(m),
  ];
}

/**
 * The fast path's invocations caused by the pass's own writes (the construct's default, `fastPath`)
 * that its stream filter lets through (status writes; not the lease's or the cursor's): at most one
 * per stream record (Lambda may batch the lease's put and delete into one), each a
 * request, its billed duration, Lambda's platform log lines and an X-Ray trace.
 */
function streamInvocationsLine(m: FleetMeasurement): BillLine {
  const invocations = m.streamRecordsPerPass * PASSES_PER_MONTH;
  const gbSeconds = (m.streamInvocationBilledMs / 1000) * (FUNCTION_MEMORY_MIB / 1024) * invocations;
  const usd =
    (invocations / 1e6) * (PRICES.lambdaPerMillionRequests + PRICES.xrayPerMillionTraces) +
    gbSeconds * PRICES.lambdaArmPerGbSecond +
    ((m.streamInvocationLogBytes * invocations) / 1e9) * (PRICES.logIngestPerGb + PRICES.logStoragePerGbMonth);
  return {
    item: 'Fast-path invocations for the pass\'s own writes',
    basis: `at most ${m.streamRecordsPerPass} per pass (stream records of status writes; the filter drops the lease's and cursor's) = ${invocations.toLocaleString('en-US')} invocations of ${m.streamInvocationBilledMs} ms, ${m.streamInvocationLogBytes} log bytes and one trace each`,
    usd,
  };
}

/** Sum of a bill, in dollars. */
export function billTotal(lines: readonly BillLine[]): number {
  return lines.reduce((s, l) => s + l.usd, 0);
}

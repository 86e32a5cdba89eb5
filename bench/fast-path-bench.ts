/**
 * The fast path's edit-to-first-call latency, in real time.
 *
 * moto stands for DynamoDB because it has DynamoDB Streams (dynalite has none); the ECS simulator
 * for ECS. A poller stands for Lambda's event source mapping: it reads each shard with GetRecords
 * every {@link POLL_MS} (Lambda polls a stream shard four times a second) and hands each batch to
 * the very code the handler runs for a stream event (`keysOfStreamRecords` then
 * `runtime.runFastPath`), one batch at a time per shard as Lambda does. Beside it a scheduled pass
 * (another runtime, as another Lambda container) runs every {@link SCHEDULE_MS}, so some edits
 * meet a held lease.
 *
 * One edit at a time, back to back (the next edit is made as soon as the previous one's batch is
 * done): an UpdateItem of one service's image; measured from just before the UpdateItem is sent to
 * the first ECS call that names the service (DescribeServices of the fast path's observation) and
 * to its UpdateService (when the reconciler issues it). Not included: the delay of AWS's own stream
 * delivery (a record is typically readable well under a second after the write; Lambda's polling
 * is in the figure).
 *
 * Time: everything is real time except the fast path's rate-limiter waits. Each edit registers a
 * revision, and ECS's RegisterTaskDefinition bucket (per account: 20, then 1 a second; the limiter
 * takes half) is drained by 100 edits back to back after the first 10: waiting for it in real time
 * took about 1.4 s of every edit's 2 s and measured nothing else. The limiter runs on
 * {@link SkippedWaits}: real time plus the waits it was asked for, which it does not wait, so its
 * buckets fill and drain exactly as if it had waited. The UpdateService figure is given both ways:
 * real time (what the reconciler's own path takes), and with the waits before it added back (what
 * the same edits back to back would see in AWS, where the waits are real).
 */
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecordSdk,
} from '@aws-sdk/client-dynamodb-streams';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { createDocumentClient } from '../lambda/adapters/clients';
import { specsTableDefinition } from '../lambda/adapters/dynamo-spec-store';
import { RecordingLog } from '../lambda/adapters/logger';
import { InMemoryMetricsSink } from '../lambda/adapters/metrics';
import { actionOfCommand, type LimiterTime } from '../lambda/adapters/rate-limiter';
import { createRuntime, type Runtime } from '../lambda/adapters/runtime';
import { keysOfStreamRecords } from '../lambda/adapters/stream-records';
import { loadConfig } from '../lambda/config';
import { startSimulator } from '../local/sim';
import { localReconcilerEnv } from '../local/stack';
import { startMoto } from '../test/support/moto';
import { percentile } from './stats';

/** Milliseconds between two GetRecords of a shard (Lambda: four polls a second per shard). */
export const POLL_MS = 250;
/**
 * Milliseconds between two scheduled passes of the bench (the construct's schedule is a minute;
 * shorter here so that about 10 passes run beside the 100 edits and some edits meet a held lease).
 */
export const SCHEDULE_MS = 5_000;

const CLUSTER = 'fast';
const TABLE = 'ecsr-fast-path-bench';
const CREDENTIALS = { region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } } as const;

export interface FastPathBenchOptions {
  readonly edits: number;
  readonly services: number;
  readonly progress: (line: string) => void;
}

export interface FastPathBenchResult {
  readonly edits: number;
  readonly services: number;
  /** Milliseconds from the UpdateItem to the first ECS call naming the service, per edit. */
  readonly toFirstCallMs: number[];
  /** Milliseconds from the UpdateItem to the service's UpdateService, per edit, real time (the limiter's waits skipped). */
  readonly toUpdateServiceMs: number[];
  /** Milliseconds the fast path's limiter was asked to wait between the UpdateItem and the UpdateService, per edit (skipped here, real in AWS). */
  readonly limiterWaitBeforeUpdateMs: number[];
  /** Real milliseconds from the first edit to the end of the last edit's batch. */
  readonly editsRealMs: number;
  /** Edits whose fast path met a held lease and waited. */
  readonly waitedForLease: number;
  /** Edits the fast path left to the scheduled pass (lease held beyond the wait). */
  readonly leftToSchedule: number;
  readonly scheduledPasses: number;
  /** Milliseconds the fast path's rate limiter waited, per ECS throttling category. */
  readonly limiterWaitMs: Record<string, number>;
}

interface EcsCall {
  readonly action: string;
  readonly at: number;
  readonly names: string[];
}

/** Service names an ECS request is about (DescribeServices `services`, UpdateService `service`, RegisterTaskDefinition `family`). */
function namesOf(input: Record<string, unknown>): string[] {
  const out: string[] = [];
  if (Array.isArray(input.services)) out.push(...(input.services as string[]));
  if (typeof input.service === 'string') out.push(input.service);
  if (typeof input.serviceName === 'string') out.push(input.serviceName);
  if (typeof input.family === 'string') out.push(input.family.replace(`${CLUSTER}-`, ''));
  return out;
}

function recordEcsCalls(runtime: Runtime, calls: EcsCall[]): void {
  runtime.ecs.middlewareStack.add(
    (next, context) => async (args) => {
      calls.push({ action: actionOfCommand(context.commandName), at: performance.now(), names: namesOf(args.input as Record<string, unknown>) });
      return next(args);
    },
    { step: 'initialize', name: 'fastPathBenchCalls' },
  );
}

/**
 * The fast path's limiter time: real time plus every wait asked for so far, and a wait returns at
 * once (its length is logged). The buckets then see the time they would have seen had the waits
 * been real: the edits happen at the same points of the limiter's timeline, only sooner in real time.
 */
class SkippedWaits implements LimiterTime {
  private skippedMs = 0;
  /** Each wait: the real time it was asked for (ms, `performance.now()`) and its length (ms). */
  readonly waits: { atMs: number; ms: number }[] = [];
  nowMs(): number {
    return performance.now() + this.skippedMs;
  }
  async sleep(ms: number): Promise<void> {
    this.waits.push({ atMs: performance.now(), ms });
    this.skippedMs += ms;
  }
  /** Milliseconds of the waits asked for in the real interval [fromMs, toMs). */
  waitedBetween(fromMs: number, toMs: number): number {
    return this.waits.filter((w) => w.atMs >= fromMs && w.atMs < toMs).reduce((a, w) => a + w.ms, 0);
  }
}

/** Lambda's shape of a stream record (the SDK's GetRecords answer has the same fields). */
function asLambdaRecord(r: StreamRecordSdk): DynamoDBRecord {
  return r as unknown as DynamoDBRecord;
}

export async function runFastPathBench(opts: FastPathBenchOptions): Promise<FastPathBenchResult> {
  const moto = await startMoto();
  const sim = await startSimulator({ clusters: [CLUSTER] });
  const ddb = new DynamoDBClient({ ...CREDENTIALS, endpoint: moto.endpoint });
  const streams = new DynamoDBStreamsClient({ ...CREDENTIALS, endpoint: moto.endpoint });
  const doc = createDocumentClient({ ...CREDENTIALS, endpoint: moto.endpoint });
  const runtimes: Runtime[] = [];
  let stop = false;
  try {
    const created = await ddb.send(
      new CreateTableCommand({ ...specsTableDefinition(TABLE), StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' } }),
    );
    const streamArn = created.TableDescription?.LatestStreamArn;
    if (!streamArn) throw new Error('moto created the table without a stream');
    const env = localReconcilerEnv({ table: TABLE, region: 'us-east-1', clusters: [CLUSTER] }, { OWNER_ID: 'ecsr-bench' });
    const fastLimiterTime = new SkippedWaits();
    const newRuntime = (limiterTime?: LimiterTime): Runtime => {
      const runtime = createRuntime(loadConfig(env), {
        ...(limiterTime ? { limiterTime } : {}),
        ecsClientConfig: { ...CREDENTIALS, endpoint: sim.endpoint },
        dynamoClientConfig: { ...CREDENTIALS, endpoint: moto.endpoint },
        metrics: new InMemoryMetricsSink(),
        log: new RecordingLog(),
        monotonicMs: () => performance.now(),
      });
      runtimes.push(runtime);
      return runtime;
    };
    const fast = newRuntime(fastLimiterTime);
    const scheduled = newRuntime();
    const calls: EcsCall[] = [];
    recordEcsCalls(fast, calls);
    recordEcsCalls(scheduled, calls);

    opts.progress(`fast path: ${opts.services} services created by a scheduled pass...`);
    const name = (i: number) => `svc-${String(i).padStart(3, '0')}`;
    for (let i = 0; i < opts.services; i++) {
      await doc.send(
        new PutCommand({ TableName: TABLE, Item: { cluster: CLUSTER, service: name(i), image: 'public.ecr.aws/nginx/nginx:1.27', desiredCount: 1, cpu: 256, memory: 512 } }),
      );
    }
    // Created by a container of its own whose limiter skips its waits (20 registrations would wait
    // 20 s of real time for the RegisterTaskDefinition bucket; the creation is not measured).
    await newRuntime(new SkippedWaits()).run({ holder: 'scheduled-0' });
    sim.advance(300);

    // The event source mapping's stand-in: one poller per shard, batches handled one at a time.
    const description = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
    const iterators = new Map<string, string | undefined>();
    for (const shard of description.StreamDescription?.Shards ?? []) {
      const it = await streams.send(new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shard.ShardId, ShardIteratorType: 'LATEST' }));
      iterators.set(shard.ShardId as string, it.ShardIterator);
    }
    let busy = false;
    let waitedForLease = 0;
    let leftToSchedule = 0;
    const poll = async (): Promise<void> => {
      while (!stop) {
        for (const [shard, iterator] of iterators) {
          if (!iterator) continue;
          const page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator }));
          iterators.set(shard, page.NextShardIterator);
          const records = (page.Records ?? []).map(asLambdaRecord);
          if (records.length === 0) continue;
          busy = true;
          try {
            // What the handler does with a stream event (lambda/handler.ts).
            const { keys } = keysOfStreamRecords(records);
            const result = await fast.runFastPath(keys, { holder: `fast-${records[0].dynamodb?.SequenceNumber}` });
            if (result && result.attempts > 1) waitedForLease += 1;
            if (result?.summary.outcome === 'lease-held') leftToSchedule += 1;
          } finally {
            busy = false;
          }
        }
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    };
    let scheduledPasses = 0;
    const schedule = async (): Promise<void> => {
      while (!stop) {
        await new Promise((r) => setTimeout(r, SCHEDULE_MS));
        if (stop) return;
        await scheduled.run({ holder: `scheduled-${++scheduledPasses}` });
      }
    };
    const background = [poll(), schedule()];

    opts.progress(`fast path: ${opts.edits} edits, one at a time...`);
    const toFirstCallMs: number[] = [];
    const toUpdateServiceMs: number[] = [];
    const limiterWaitBeforeUpdateMs: number[] = [];
    const editsBegan = performance.now();
    for (let e = 0; e < opts.edits; e++) {
      const service = name(e % opts.services);
      const t0 = performance.now();
      await doc.send(
        new UpdateCommand({
          TableName: TABLE,
          Key: { cluster: CLUSTER, service },
          UpdateExpression: 'SET #image = :image',
          ExpressionAttributeNames: { '#image': 'image' },
          ExpressionAttributeValues: { ':image': `public.ecr.aws/nginx/nginx:1.${28 + e}` },
        }),
      );
      const deadline = t0 + 60_000;
      let first: number | undefined;
      let update: number | undefined;
      while (performance.now() < deadline && update === undefined) {
        for (const c of calls) {
          if (c.at < t0 || !c.names.includes(service)) continue;
          first ??= c.at;
          if (c.action === 'UpdateService') update ??= c.at;
        }
        if (update === undefined) await new Promise((r) => setTimeout(r, 10));
      }
      if (first === undefined || update === undefined) throw new Error(`edit ${e} of ${service}: no UpdateService within 60 s`);
      toFirstCallMs.push(first - t0);
      toUpdateServiceMs.push(update - t0);
      limiterWaitBeforeUpdateMs.push(fastLimiterTime.waitedBetween(t0, update));
      while (busy) await new Promise((r) => setTimeout(r, 10));
      // Let the rollout finish in simulated time, so that the next edit of this service starts from rest.
      sim.advance(300);
      calls.length = 0;
    }
    const editsRealMs = performance.now() - editsBegan;
    stop = true;
    await Promise.all(background);
    const limiterWaitMs = Object.fromEntries(Object.entries(fast.limiter?.snapshot() ?? {}).map(([c, v]) => [c, Math.round(v?.waitedMs ?? 0)]));
    return {
      edits: opts.edits,
      services: opts.services,
      toFirstCallMs,
      toUpdateServiceMs,
      limiterWaitBeforeUpdateMs,
      editsRealMs,
      waitedForLease,
      leftToSchedule,
      scheduledPasses,
      limiterWaitMs,
    };
  } finally {
    stop = true;
    for (const r of runtimes) r.ecs.destroy();
    doc.destroy();
    ddb.destroy();
    streams.destroy();
    await sim.close();
    await moto.stop();
  }
}

/** The section's table: p50, p99 and max of each latency (p99 of 100 samples is the second largest). */
export function fastPathTable(r: FastPathBenchResult): string {
  const row = (label: string, xs: number[]) =>
    `| ${label} | ${(percentile(xs, 50) / 1000).toFixed(2)} | ${(percentile(xs, 99) / 1000).toFixed(2)} | ${(Math.max(...xs) / 1000).toFixed(2)} |`;
  const withWaits = r.toUpdateServiceMs.map((ms, i) => ms + (r.limiterWaitBeforeUpdateMs[i] ?? 0));
  const waited = r.limiterWaitBeforeUpdateMs.filter((ms) => ms > 0).length;
  return [
    '| edit (UpdateItem) to ... | p50 s | p99 s | max s |',
    '|---|---|---|---|',
    row('first ECS call naming the service (real time)', r.toFirstCallMs),
    row('its UpdateService, real time (the limiter\'s waits skipped)', r.toUpdateServiceMs),
    row('its UpdateService, with the limiter\'s waits before it (as in AWS)', withWaits),
    '',
    `${r.edits} edits over ${r.services} services, back to back (each made once the previous one's batch was done), in ${(r.editsRealMs / 1000).toFixed(0)} s of real time; ` +
      `${r.scheduledPasses} scheduled passes ran beside them; ` +
      `${r.waitedForLease} edits waited for the lease, ${r.leftToSchedule} were left to the scheduled pass.`,
    `rate-limiter waits of the fast path, skipped (ms per category): ${Object.entries(r.limiterWaitMs).filter(([, v]) => v > 0).map(([c, v]) => `${c} ${v}`).join(', ') || 'none'}; ` +
      `${waited} of the ${r.edits} edits had a wait before their UpdateService (one RegisterTaskDefinition per edit: the bucket's burst, then its refill, paces edits made back to back).`,
  ].join('\n');
}

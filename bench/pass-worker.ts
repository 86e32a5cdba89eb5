/**
 * Worker process of the pass benchmark: a stand-in for one Lambda container. It builds the runtime
 * once with `createRuntime` (the real DynamoDB and ECS adapters, Powertools logs and EMF metrics on
 * stdout, the rate limiter at the configured `API_BUDGET_FRACTION`), like `lambda/handler.ts` does
 * at cold start, then runs one pass per request and reports its time and memory.
 *
 * Time: the ECS simulator's clock is manual. The pass clock and the rate limiter run on simulated
 * time: when the limiter has to wait for a token it advances the simulator's clock by the wait
 * (`POST /_sim/advance`) instead of sleeping, as the local run does. So a pass reports two times:
 * real milliseconds (CPU, loopback HTTP, dynalite) and the seconds the limiter waited, which a
 * Lambda in AWS spends for real. The simulator throttles with ECS's documented buckets on the same
 * clock, so a limiter that overdrew its budget would meet ThrottlingExceptions.
 */
import { Agent, request } from 'node:http';
import { getHeapStatistics } from 'node:v8';
import { taskDefinitionCacheSize } from '../lambda/adapters/ecs-observer';
import { createRuntime, type Runtime } from '../lambda/adapters/runtime';
import { loadConfig } from '../lambda/config';
import {
  maxRssBytes,
  maxSample,
  memorySample,
  serveRequests,
  type PassInitRequest,
  type PassInitResponse,
  type PassRequest,
  type PassResponse,
  type WorkerRequest,
  type WorkerResponse,
} from './protocol';

/** As `lambda/handler.ts` RESERVE_MS: no action starts with less invocation time left (ms). */
const HANDLER_RESERVE_MS = 10_000;
/** As `lambda/handler.ts` LEASE_MARGIN_SECONDS: the lease outlives the invocation by this much. */
const HANDLER_LEASE_MARGIN_SECONDS = 5;
/** Lease of an unbounded pass (seconds): long enough for any fleet the benchmark builds. */
const UNBOUNDED_LEASE_SECONDS = 24 * 3600;
/** Errors and services needing attention reported per pass, at most. */
const ATTENTION_MAX = 5;
/** Milliseconds between memory samples during a pass. */
const SAMPLE_EVERY_MS = 10;

let runtime: Runtime | undefined;
let controlEndpoint = '';
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** The simulator's virtual time as this process knows it (epoch ms): only this process moves it during a pass. */
let simNowMs = 0;
/** Milliseconds the limiter waited in the current pass, and real ms spent asking the simulator to advance. */
let waitedMs = 0;
let controlMs = 0;
const dynamoCalls: Record<string, number> = {};
/** Real milliseconds spent in DynamoDB commands this pass, by command (calls in flight overlap: a sum). */
const dynamoMs: Record<string, number> = {};
/** Real milliseconds spent receiving from the event queue this pass. */
let eventsReceiveMs = 0;

/** Advance calls in flight, and since when at least one has been (real ms). */
let advancing = 0;
let advancingSince = 0;

/**
 * Advances the simulator's clock (control endpoint, outside the ECS API and its throttling).
 * `controlMs` grows by the real time during which at least one advance is in flight: limiter waits
 * of two categories (service reads and task definition reads) overlap.
 */
function advanceSimulator(ms: number): Promise<void> {
  const body = JSON.stringify({ seconds: ms / 1000 });
  if (advancing++ === 0) advancingSince = performance.now();
  return new Promise<void>((resolve, reject) => {
    const req = request(
      `${controlEndpoint}/_sim/advance`,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on('end', () => {
          if (--advancing === 0) controlMs += performance.now() - advancingSince;
          if (res.statusCode === 200) resolve();
          else reject(new Error(`the simulator did not advance: HTTP ${res.statusCode}`));
        });
      },
    );
    req.on('error', (err) => {
      if (--advancing === 0) controlMs += performance.now() - advancingSince;
      reject(err);
    });
    req.end(body);
  });
}

function init(req: PassInitRequest): PassInitResponse {
  controlEndpoint = req.ecsEndpoint;
  const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
  runtime = createRuntime(loadConfig(req.env), {
    ecsClientConfig: { endpoint: req.ecsEndpoint, region: req.region, credentials: { ...credentials, ...(req.ecsAccessKeyId ? { accessKeyId: req.ecsAccessKeyId } : {}) } },
    ...(req.sqsEndpoint ? { sqsClientConfig: { endpoint: req.sqsEndpoint, region: req.region, credentials } } : {}),
    dynamoClientConfig: { endpoint: req.dynamodbEndpoint, region: req.region, credentials },
    clock: { now: () => new Date(simNowMs) },
    monotonicMs: () => performance.now(),
    limiterTime: {
      nowMs: () => simNowMs,
      sleep: async (ms) => {
        simNowMs += ms;
        waitedMs += ms;
        await advanceSimulator(ms);
      },
    },
  });
  runtime.doc.middlewareStack.add(
    (next, context) => async (args) => {
      const name = (context.commandName ?? '?').replace(/Command$/, '');
      dynamoCalls[name] = (dynamoCalls[name] ?? 0) + 1;
      const t0 = performance.now();
      try {
        return await next(args);
      } finally {
        dynamoMs[name] = (dynamoMs[name] ?? 0) + performance.now() - t0;
      }
    },
    { step: 'initialize', name: 'benchDynamoCallCount' },
  );
  // The time the pass spends receiving from the event queue (up to 100 ReceiveMessage calls), within its observation window.
  const feed = runtime.ports.events as { receive: (...a: never[]) => Promise<unknown> } | undefined;
  if (feed) {
    const receive = feed.receive.bind(feed);
    feed.receive = async (...a: never[]) => {
      const t0 = performance.now();
      try {
        return await receive(...a);
      } finally {
        eventsReceiveMs += performance.now() - t0;
      }
    };
  }
  return { id: req.id, type: 'init', memory: memorySample(), maxRssBytes: maxRssBytes() };
}

/**
 * The live heap after a full garbage collection (bytes), when the worker runs with `--expose-gc`
 * (`--worker-node-options=--expose-gc`: a diagnosis, it changes when V8 collects).
 */
function liveHeap(): { liveHeapBytes: number } | undefined {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return undefined;
  gc();
  return { liveHeapBytes: getHeapStatistics().used_heap_size };
}

async function pass(req: PassRequest): Promise<PassResponse> {
  if (!runtime) throw new Error('pass before init');
  simNowMs = req.simNowMs;
  waitedMs = 0;
  controlMs = 0;
  for (const k of Object.keys(dynamoCalls)) delete dynamoCalls[k];
  for (const k of Object.keys(dynamoMs)) delete dynamoMs[k];
  eventsReceiveMs = 0;
  const waitsBefore = limiterWaits();

  let peak = memorySample();
  let samples = 1;
  const sampler = setInterval(() => {
    peak = maxSample(peak, memorySample());
    samples += 1;
  }, SAMPLE_EVERY_MS);
  const started = performance.now();
  const simStarted = simNowMs;
  const deadline = req.deadline;
  // In AWS the limiter's waits are real time; here they are simulated: a Lambda's elapsed time is both.
  const elapsedMs = () => performance.now() - started + (simNowMs - simStarted);
  try {
    const summary = await runtime.run({
      holder: `bench:${process.pid}:${req.id}`,
      ...(deadline.kind === 'lambda'
        ? {
            leaseTtlSeconds: deadline.timeoutSeconds + HANDLER_LEASE_MARGIN_SECONDS,
            shouldContinue: () => deadline.timeoutSeconds * 1000 - elapsedMs() >= HANDLER_RESERVE_MS,
            remainingMs: () => deadline.timeoutSeconds * 1000 - elapsedMs(),
          }
        : { leaseTtlSeconds: UNBOUNDED_LEASE_SECONDS }),
    });
    const realMs = performance.now() - started;
    clearInterval(sampler);
    peak = maxSample(peak, memorySample());
    const phases: Record<string, number> = {};
    for (const s of Object.values(summary.statuses)) phases[s.phase] = (phases[s.phase] ?? 0) + 1;
    const attention = new Map<string, { key: string; count: number; example: string }>();
    for (const [id, st] of Object.entries(summary.statuses)) {
      if (st.phase !== 'Degraded' && st.phase !== 'Blocked' && st.phase !== 'Invalid') continue;
      const ready = st.conditions.find((c) => c.type === 'Ready');
      const key = `${st.phase} ${ready?.reason ?? '?'}`;
      const entry = attention.get(key) ?? { key, count: 0, example: `${id}: ${ready?.message ?? st.reason ?? ''}` };
      entry.count += 1;
      attention.set(key, entry);
    }
    const appliedByType: Record<string, number> = {};
    for (const a of summary.actions) if (a.outcome === 'applied') appliedByType[a.type] = (appliedByType[a.type] ?? 0) + 1;
    return {
      id: req.id,
      type: 'pass',
      result: {
        outcome: summary.outcome,
        actionsPlanned: summary.counts.actionsPlanned,
        actionsApplied: summary.counts.actionsApplied,
        actionsFailed: summary.counts.actionsFailed,
        actionsSkipped: summary.counts.actionsSkipped,
        appliedByType,
        statusesWritten: summary.counts.statusesWritten,
        statusesPending: summary.counts.statusesPending,
        taskDefinitionsPending: summary.counts.taskDefinitionsPending,
        servicesRead: summary.counts.servicesRead,
        servicesNotRead: summary.counts.servicesNotRead,
        driftCorrections: summary.counts.driftCorrections,
        rotationComplete: summary.rotation?.complete ?? false,
        ...(summary.events
          ? {
              eventsMode: summary.events.mode,
              eventsReceived: summary.events.received,
              ...(summary.events.budget !== undefined ? { eventsBudget: summary.events.budget } : {}),
              ...(summary.events.reason ? { eventsReason: summary.events.reason } : {}),
            }
          : {}),
        phases,
        errors: summary.errors.slice(0, ATTENTION_MAX),
        attention: [...attention.values()],
        realMs,
        controlMs,
        waitedSeconds: waitedMs / 1000,
        dynamoCalls: { ...dynamoCalls },
        dynamoMs: { ...dynamoMs },
        eventsReceiveMs,
        limiterWaitedMs: Object.fromEntries(Object.entries(limiterWaits()).map(([c, ms]) => [c, ms - (waitsBefore[c] ?? 0)])),
        peak,
        maxRssBytes: maxRssBytes(),
        samples,
        heapAfterBytes: getHeapStatistics().used_heap_size,
        ...(liveHeap() ?? {}),
        cachedTaskDefinitions: taskDefinitionCacheSize(),
      },
    };
  } finally {
    clearInterval(sampler);
  }
}

/** Milliseconds the limiter waited so far, by ECS throttling category. */
function limiterWaits(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [c, stats] of Object.entries(runtime?.limiter?.snapshot() ?? {})) out[c] = stats?.waitedMs ?? 0;
  return out;
}

serveRequests(async (req: WorkerRequest): Promise<WorkerResponse> => {
  switch (req.type) {
    case 'init':
      return init(req);
    case 'pass':
      return pass(req);
    default:
      throw new Error(`the pass worker does not handle ${req.type}`);
  }
});

/**
 * Messages between the benchmark (parent) and its worker processes, over Node's IPC channel
 * (`child_process.fork`). Workers are separate processes so that what they measure (time, heap,
 * RSS) is theirs alone: the simulator and dynalite live in the parent.
 *
 * Every request carries an `id`; the worker answers with the same `id`, or with `error`.
 */

/** One reading of `process.memoryUsage()`, bytes. */
export interface MemorySample {
  readonly rss: number;
  readonly heapUsed: number;
  readonly heapTotal: number;
  readonly external: number;
  readonly arrayBuffers: number;
}

// ---------------------------------------------------------------------------------------------
// Planner worker
// ---------------------------------------------------------------------------------------------

/** `timing`: wall time per call; `alloc`: heap allocated per call (needs a large young generation). */
export type PlannerMode = 'timing' | 'alloc';

export interface PlannerRequest {
  readonly id: number;
  readonly type: 'planner';
  readonly mode: PlannerMode;
  /** Fleet sizes (services). */
  readonly sizes: readonly number[];
  /** The reconciler's environment (`loadConfig` input). */
  readonly env: Record<string, string>;
  /** Milliseconds of measured calls per case, at least (timing mode). */
  readonly budgetMs: number;
}

/**
 * `from-empty` and `steady`: one `plan()` call. `steady, no cache`: the same without the runtime's
 * comparison cache (every service walked and hashed, every task definition digested, each call).
 * `steady, new observation`: the steady plan of a new observation of the same fleet each call (as
 * each pass reads one: new objects, cold in memory, stamped anew), built outside the timing. `map`
 * and `map + stamp`: the observer's work on the same services outside the planner, for
 * comparison: each DescribeServices entry mapped (`toObservedService`), and mapped then stamped
 * with its digest (`observedAndStamped`, what the observer does; the stamp spares the steady plan
 * its walk of each service).
 */
export type PlanCase = 'from-empty' | 'steady' | 'steady, no cache' | 'steady, new observation' | 'map' | 'map + stamp';

export interface PlannerCaseResult {
  readonly services: number;
  readonly case: PlanCase;
  /** Actions the plan holds (from-empty: RegisterTaskDefinition + CreateService per service). */
  readonly actions: number;
  /** Timing mode: measured calls and their wall times, milliseconds. */
  readonly runs?: number;
  readonly medianMs?: number;
  readonly p95Ms?: number;
  readonly minMs?: number;
  /**
   * Alloc mode: median heap growth of one call (bytes) over the calls during which no garbage
   * collection ran; undefined when every call saw one.
   */
  readonly allocatedBytes?: number;
  /** Alloc mode: calls measured and how many of them saw a garbage collection. */
  readonly allocRuns?: number;
  readonly allocRunsWithGc?: number;
}

export interface PlannerResponse {
  readonly id: number;
  readonly type: 'planner';
  readonly results: PlannerCaseResult[];
}

// ---------------------------------------------------------------------------------------------
// Pass worker (a Lambda-like process running passes with the real adapters)
// ---------------------------------------------------------------------------------------------

export interface PassInitRequest {
  readonly id: number;
  readonly type: 'init';
  /** Simulator endpoint (ECS API and its `/_sim/` control endpoint). */
  readonly ecsEndpoint: string;
  readonly dynamodbEndpoint: string;
  readonly region: string;
  /** The reconciler's environment (`loadConfig` input). */
  readonly env: Record<string, string>;
  /** Events on: the local SQS server of the event queue. */
  readonly sqsEndpoint?: string;
  /** The access key the reconciler calls ECS with (the simulator names its caller by it); dummy ones by default. */
  readonly ecsAccessKeyId?: string;
}

/**
 * How a pass is bounded. `unbounded`: no deadline (one pass does all the work, to measure it);
 * `lambda`: as the handler runs it in a function with `timeoutSeconds`, where elapsed time is real
 * time plus the rate limiter's waits (simulated here, real in AWS): no action starts with less than
 * 10 s left, the lease lives the timeout plus 5 s.
 */
export type PassDeadline = { readonly kind: 'unbounded' } | { readonly kind: 'lambda'; readonly timeoutSeconds: number };

export interface PassRequest {
  readonly id: number;
  readonly type: 'pass';
  /** The simulator's virtual time now (epoch ms): the pass clock and the limiter start there. */
  readonly simNowMs: number;
  readonly deadline: PassDeadline;
}

export interface PassResult {
  /** PassSummary.outcome. */
  readonly outcome: string;
  readonly actionsPlanned: number;
  readonly actionsApplied: number;
  readonly actionsFailed: number;
  readonly actionsSkipped: number;
  /** Applied actions by type (RegisterTaskDefinition, CreateService, ...). */
  readonly appliedByType: Record<string, number>;
  readonly statusesWritten: number;
  /** Changed statuses not written: the pass's time for writing ran out. */
  readonly statusesPending: number;
  /** Task definitions in use left undescribed: the pass's time for observation ran out. */
  readonly taskDefinitionsPending: number;
  /** Services read from ECS this pass, and spec items whose service was not (the rotation reads them later). */
  readonly servicesRead: number;
  readonly servicesNotRead: number;
  /** UpdateService actions of kind drift applied. */
  readonly driftCorrections: number;
  /** True when the rotation read every service this pass. */
  readonly rotationComplete: boolean;
  /** Events mode of the pass (`events`, `polling`), absent without a queue; messages received. */
  readonly eventsMode?: string;
  readonly eventsReceived?: number;
  readonly eventsReason?: string;
  /** Events mode: services the rotation had to read at least this pass (its share of the fleet). */
  readonly eventsBudget?: number;
  /** Services by phase after the pass. */
  readonly phases: Record<string, number>;
  /** Errors of the summary (first few). */
  readonly errors: string[];
  /**
   * Services Degraded, Blocked or Invalid after the pass, grouped by phase and the Ready
   * condition's reason (e.g. `Degraded LagBeyondGrace`): how many, and the first one's message.
   */
  readonly attention: { readonly key: string; readonly count: number; readonly example: string }[];
  /** Real milliseconds the pass took in this process (performance.now). */
  readonly realMs: number;
  /**
   * Real milliseconds of `realMs` spent waiting for the simulator to advance its clock (its task
   * scheduling work, not the reconciler's): `realMs - controlMs` is the reconciler's own time.
   */
  readonly controlMs: number;
  /** Seconds the rate limiter waited (simulated time that passed during the pass). */
  readonly waitedSeconds: number;
  /** DynamoDB commands sent, by command name. */
  readonly dynamoCalls: Record<string, number>;
  /** Real milliseconds spent in DynamoDB commands, by command (e.g. `Scan`: the spec table's read). */
  readonly dynamoMs: Record<string, number>;
  /** Real milliseconds spent receiving from the event queue (events on). */
  readonly eventsReceiveMs: number;
  /** Milliseconds the rate limiter waited this pass, by ECS throttling category (e.g. `serviceRead`). */
  readonly limiterWaitedMs: Record<string, number>;
  /** Peaks of the samples taken every few milliseconds during the pass, bytes. */
  readonly peak: MemorySample;
  /** `process.resourceUsage().maxRSS` after the pass: the process's high-water RSS, bytes. */
  readonly maxRssBytes: number;
  /** Samples taken. */
  readonly samples: number;
  /** V8's heap after the pass (`v8.getHeapStatistics().used_heap_size`, bytes) and the process-wide task definition cache's size. */
  readonly heapAfterBytes: number;
  readonly cachedTaskDefinitions: number;
  /** The live heap after a full collection (bytes), only when the worker runs with `--expose-gc`. */
  readonly liveHeapBytes?: number;
}

export interface PassInitResponse {
  readonly id: number;
  readonly type: 'init';
  /** Memory after loading the bundle and building the runtime (a Lambda's init phase). */
  readonly memory: MemorySample;
  readonly maxRssBytes: number;
}

export interface PassResponse {
  readonly id: number;
  readonly type: 'pass';
  readonly result: PassResult;
}

export interface ErrorResponse {
  readonly id: number;
  readonly type: 'error';
  readonly message: string;
}

export type WorkerRequest = PlannerRequest | PassInitRequest | PassRequest;
export type WorkerResponse = PlannerResponse | PassInitResponse | PassResponse | ErrorResponse;

/** A reading of `process.memoryUsage()`. */
export function memorySample(): MemorySample {
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers };
}

/** Field-wise maximum of two samples. */
export function maxSample(a: MemorySample, b: MemorySample): MemorySample {
  return {
    rss: Math.max(a.rss, b.rss),
    heapUsed: Math.max(a.heapUsed, b.heapUsed),
    heapTotal: Math.max(a.heapTotal, b.heapTotal),
    external: Math.max(a.external, b.external),
    arrayBuffers: Math.max(a.arrayBuffers, b.arrayBuffers),
  };
}

/** `process.resourceUsage().maxRSS` (kilobytes on Linux) in bytes. */
export function maxRssBytes(): number {
  return process.resourceUsage().maxRSS * 1024;
}

/**
 * The worker side of the channel: answers each request with `handle`'s result, or an `error`
 * message with the thrown error's stack.
 */
export function serveRequests(handle: (req: WorkerRequest) => Promise<WorkerResponse>): void {
  process.on('message', (msg: WorkerRequest) => {
    handle(msg).then(
      (res) => process.send?.(res),
      (err: unknown) =>
        process.send?.({ id: msg.id, type: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies ErrorResponse),
    );
  });
}

/**
 * `ecsr local` (`npm start`): the reconciler against a simulated Fargate cluster, no AWS account
 * needed. It starts dynalite and the ECS simulator on loopback, writes the example specs to the
 * specs table, and runs the very same pass as the Lambda (`createRuntime` + `runPass`, the real
 * DynamoDB and ECS adapters over HTTP) once per simulated minute, with the clock sped up. The
 * scripted scenario (`./scenario`) disturbs the shop as a person would, the reconciler's alarms are
 * evaluated locally from the definitions the stack deploys (`./alarms`), and the run ends with a
 * summary and the verdict of every expectation.
 *
 * Time: the simulator's clock is manual. Between passes this module moves it forward in one-second
 * steps, sleeping `1 / speed` real seconds per simulated second; a pass itself takes no simulated
 * time (it takes milliseconds of real time). So a run is reproducible (same seed, same story)
 * whatever the machine's load, and `--speed` only changes how fast it is shown.
 */
import { DeleteCommand, PutCommand, UpdateCommand, paginateScan } from '@aws-sdk/lib-dynamodb';
import { isReservedItem } from '../lambda/adapters/dynamo-spec-store';
import { heartbeatItem, type LocalRunHeartbeat } from './heartbeat';
import { RecordingLog } from '../lambda/adapters/logger';
import type { Runtime } from '../lambda/adapters/runtime';
import { ENV, loadConfig } from '../lambda/config';
import { alarmDefinitions } from '../lambda/core/alarms';
import type { PassSummary } from '../lambda/core/pass';
import { parseSpecItem, specToItem } from '../lambda/core/spec';
import { serviceId, type ServiceId, type ServiceKey, type ServiceSpec, type ServiceStatus } from '../lambda/core/types';
import { alarmLabel, LocalAlarms, stateKeyLabel, type AlarmTransition } from './alarms';
import {
  checkExpectations,
  convergenceTimes,
  EXPECTATIONS,
  LAST_PASS_MINUTE,
  SCENARIO_SECONDS,
  SHOP,
  STEPS,
  type ExpectationResult,
  type LiveService,
  type PassRecord,
  type RunRecord,
  type ScenarioActions,
  type ScenarioStep,
  type StepRecord,
} from './scenario';
import { createLocalRuntime, LOCAL_EVENTS_DLQ, localReconcilerEnv, startLocalStack, type LocalStack, type LocalStackOptions } from './stack';
import { renderSummary } from './summary';
import { actionText, CountSampler, type RunTimeline } from './timeline';
import { statusReason, type RunView, type ServiceRow, type ViewModel } from './view';
import { dict, dictOf, own } from '../lambda/core/dict';

/** A valid spec to load, with its hash. */
export interface LocalSpec {
  readonly spec: ServiceSpec;
  readonly hash: string;
}

/** The task log group prefix of `--forever` runs (the construct's default, `DEFAULT_LOG_GROUP_PREFIX`). */
export const LOCAL_LOG_GROUP_PREFIX = '/ecs-reconciler/';

/** Default speed: the scenario's simulated time in about one real minute. */
export const DEFAULT_SPEED = Math.ceil(SCENARIO_SECONDS / 60);

export interface LocalRunOptions {
  /** The specs to load (the example shop for the scenario). */
  readonly specs: readonly LocalSpec[];
  /** Simulated seconds per real second (default {@link DEFAULT_SPEED}). */
  readonly speed?: number;
  /** Keep passing every simulated minute until `signal` aborts; no scripted scenario. */
  readonly forever?: boolean;
  /** Columns the summary's tables fit in (default 120). */
  readonly width?: number;
  readonly view: RunView;
  /** Where the summary goes. */
  readonly write: (text: string) => void;
  /** Simulator seed (default 1). */
  readonly seed?: number;
  /**
   * Events mode (default true): the simulator's events go through the construct's rules into a
   * local SQS queue the passes read with the Lambda's own adapter; false (`--no-events`) polls
   * the whole fleet every pass, the floor events mode falls back to.
   */
  readonly events?: boolean;
  /** Loopback port of the local SQS server (events mode). */
  readonly sqsPort?: number;
  readonly ecsPort?: number;
  readonly dynamodbPort?: number;
  /** Name of the embedded specs table (default `ecsr-specs`). */
  readonly specsTable?: string;
  /**
   * ECS clusters to create besides the specs' own (empty, and managed by the reconciler), e.g.
   * `prod` for `ecsr apply -f examples/web.yaml` against a `--forever` run.
   */
  readonly extraClusters?: readonly string[];
  /** Subnets and security groups of the simulated account besides the local stack's own (`LOCAL_VPC`). */
  readonly vpc?: LocalStackOptions['vpc'];
  /**
   * Environment the reconciler's variables are read from (PRUNE, DEFAULT_LAG_GRACE_SECONDS,
   * OWNER_ID, ...), as the Lambda reads its own; SPECS_TABLE and AWS_REGION are the local ones.
   */
  readonly env?: Record<string, string | undefined>;
  /** Ends the run early (Ctrl+C); with `forever`, the normal way to end. */
  readonly signal?: AbortSignal;
  /**
   * Called once the servers run and the specs are loaded, with the stack (endpoints) and the
   * reconciler variables the passes run with (for `ecsr plan` / `diff` pointed at the stack).
   */
  readonly onReady?: (stack: LocalStack, reconcilerEnv: Readonly<Record<string, string>>) => void;
  /**
   * Called after each pass with the run so far, as `./report` draws it (`ecsr local --report`
   * rewrites its page with it under `--forever`). The arrays are the run's own: read, not kept.
   */
  readonly onPass?: (timeline: RunTimeline) => void;
}

export interface LocalRunResult {
  readonly record: RunRecord;
  /** Empty with `forever`. */
  readonly expectations: ExpectationResult[];
  /** True when every expectation held (and the run was not aborted before its end). */
  readonly ok: boolean;
  readonly aborted: boolean;
  readonly summary: string;
  /** The whole run as `./report` draws it. */
  readonly timeline: RunTimeline;
}

/** Throws when the scenario's services are not among the specs (the scenario needs the shop). */
export function assertScenarioSpecs(specs: readonly LocalSpec[]): void {
  const have = new Set(specs.map((s) => serviceId(s.spec)));
  const missing = [SHOP.web, SHOP.worker, SHOP.thumbnails, SHOP.ledger].map(serviceId).filter((id) => !have.has(id));
  if (missing.length > 0) {
    throw new Error(`The scenario needs the example shop, but ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not among the specs (examples/shop.yaml); use --forever to run other specs without the scenario.`);
  }
}

function sleep(ms: number): Promise<void> {
  return ms >= 1 ? new Promise((r) => setTimeout(r, ms)) : new Promise((r) => setImmediate(r));
}

export { actionText };

/**
 * Runs the local stack and the loop; resolves when the scenario ends (or, with `forever` or on
 * abort, when `signal` aborts). Servers are always stopped before it resolves.
 * @throws Error when the scenario's specs are missing or a server cannot start.
 */
export async function runLocal(opts: LocalRunOptions): Promise<LocalRunResult> {
  if (!opts.forever) assertScenarioSpecs(opts.specs);
  // Passes at hh:mm:30: each pass's metrics fall in the middle of a one-minute alarm period.
  const startTime = new Date(Math.floor(Date.now() / 60_000) * 60_000 + 30_000);
  const stack = await startStack(opts, startTime);
  try {
    const reconciler = wireReconciler(stack, opts, startTime);
    const loadedHashes = await seedSpecs(stack, opts.specs);
    opts.onReady?.(stack, reconciler.env);
    const run = new LocalRun(opts, stack, reconciler, loadedHashes);
    await run.runPasses();
    opts.view.close();
    return await run.finish();
  } finally {
    opts.view.close();
    await stack.close();
  }
}

/**
 * Starts the embedded DynamoDB (dynalite), the ECS simulator with every cluster of the specs and
 * `extraClusters`, and (events mode) the local events bus and queue, on the ports asked for.
 */
function startStack(opts: LocalRunOptions, startTime: Date): Promise<LocalStack> {
  const clusters = [...new Set([...opts.specs.map((s) => s.spec.cluster), ...(opts.extraClusters ?? [])])].sort();
  return startLocalStack({
    clusters,
    seed: opts.seed ?? 1,
    startTime,
    ecsPort: opts.ecsPort,
    dynamodbPort: opts.dynamodbPort,
    events: opts.events ?? true,
    ...(opts.vpc ? { vpc: opts.vpc } : {}),
    ...(opts.sqsPort !== undefined ? { sqsPort: opts.sqsPort } : {}),
    ...(opts.specsTable ? { specsTable: opts.specsTable } : {}),
    // Kept running for ecsr and the AWS CLI: task log lines for `ecsr logs` (awslogs, below).
    ...(opts.forever ? { logs: true } : {}),
  });
}

/** The reconciler as the passes run it, and the alarms that evaluate what it emits. */
interface LocalReconciler {
  /** The reconciler variables the passes run with. */
  readonly env: Readonly<Record<string, string>>;
  readonly alarms: LocalAlarms;
  readonly runtime: Runtime;
}

/**
 * The reconciler's configuration from the local variables, the alarms the stack would deploy
 * for it (a pass a minute), and the runtime of the passes, emitting its metrics to those alarms.
 */
function wireReconciler(stack: LocalStack, opts: LocalRunOptions, startTime: Date): LocalReconciler {
  const clock = { now: () => stack.sim.clock.now() };
  // Under --forever the task definitions log with awslogs, as the construct's do, into the local CloudWatch Logs.
  const reconcilerVars = opts.forever ? { [ENV.logGroupPrefix]: LOCAL_LOG_GROUP_PREFIX, ...(opts.env ?? process.env) } : (opts.env ?? process.env);
  const env = localReconcilerEnv(stack, reconcilerVars);
  const config = loadConfig(env);
  const alarms = new LocalAlarms(
    alarmDefinitions({ namespace: config.metricsNamespace, defaultLagGraceSeconds: config.plan.defaultLagGraceSeconds, scheduleMinutes: 1 }),
    clock,
    startTime,
  );
  const runtime = createLocalRuntime(stack, { env: reconcilerVars, metrics: alarms.sink, log: new RecordingLog() });
  return { env, alarms, runtime };
}

/**
 * Writes the specs to the table as `ecsr apply` writes them.
 * @returns the hash of each spec by service id.
 */
async function seedSpecs(stack: LocalStack, specs: readonly LocalSpec[]): Promise<Record<ServiceId, string>> {
  const loadedHashes: Record<ServiceId, string> = dict();
  for (const s of specs) {
    await stack.doc.send(new PutCommand({ TableName: stack.table, Item: specToItem(s.spec) }));
    loadedHashes[serviceId(s.spec)] = s.hash;
  }
  return loadedHashes;
}

/** What ECS runs now, per service id; a re-created name's ACTIVE service wins over an INACTIVE leftover. */
function liveServices(sim: LocalStack['sim']): Record<ServiceId, LiveService> {
  const out: Record<ServiceId, LiveService> = dict();
  for (const c of sim.snapshot().clusters) {
    for (const s of c.services) {
      const id = `${c.name}/${s.name}`;
      if (out[id] && out[id].status === 'ACTIVE') continue;
      out[id] = { status: s.status, desiredCount: s.desiredCount, runningCount: s.runningCount, pendingCount: s.pendingCount, taskDefinition: s.taskDefinition };
    }
  }
  return out;
}

/** What the scenario's steps do, as a person would: stop tasks and scale by hand, edit and delete specs. */
function scenarioActions(stack: LocalStack): ScenarioActions {
  const { sim } = stack;
  return {
    stopServiceTasks: async (key) => sim.stopServiceTasks({ cluster: key.cluster, service: key.service, reason: 'Stopped by hand in the local run' }).taskArns.length,
    setDesiredCount: async (key, desiredCount) => sim.setDesiredCount({ cluster: key.cluster, service: key.service, desiredCount }),
    editSpec: async (key, changes) => {
      const names = Object.keys(changes);
      const out = await stack.doc.send(
        new UpdateCommand({
          TableName: stack.table,
          Key: { cluster: key.cluster, service: key.service },
          UpdateExpression: `SET ${names.map((_, i) => `#a${i} = :v${i}`).join(', ')}`,
          ExpressionAttributeNames: Object.fromEntries(names.map((n, i) => [`#a${i}`, n])),
          ExpressionAttributeValues: Object.fromEntries(names.map((n, i) => [`:v${i}`, own(changes, n)])),
          ReturnValues: 'ALL_NEW',
        }),
      );
      const { status: _status, ...item } = out.Attributes ?? {};
      const parsed = parseSpecItem(item);
      return parsed.ok ? parsed.hash : 'invalid';
    },
    deleteSpec: async (key: ServiceKey) => {
      await stack.doc.send(new DeleteCommand({ TableName: stack.table, Key: { cluster: key.cluster, service: key.service } }));
    },
  };
}

/** What one pass did: its summary, or the error it threw. */
interface PassOutcome {
  readonly number: number;
  readonly at: Date;
  readonly summary?: PassSummary;
  readonly error?: string;
}

/**
 * One run of the loop over a started stack: moves simulated time, runs the scenario's steps when
 * due and one pass per simulated minute, and keeps what the summary, the expectations and the
 * report read.
 */
class LocalRun {
  private readonly sim: LocalStack['sim'];
  private readonly alarms: LocalAlarms;
  private readonly speed: number;
  private readonly startedAt: Date;
  private readonly passes: PassRecord[] = [];
  private readonly steps: StepRecord[] = [];
  /** The statuses of the latest pass. */
  private latest: Record<ServiceId, ServiceStatus> = dict();
  /** ECS's counts every simulated second (kept when they change), for the report's charts. */
  private readonly sampler = new CountSampler();
  /** The scenario's steps not run yet, in time order. */
  private readonly pending: ScenarioStep[];
  private readonly actions: ScenarioActions;

  constructor(
    private readonly opts: LocalRunOptions,
    private readonly stack: LocalStack,
    private readonly reconciler: LocalReconciler,
    private readonly loadedHashes: Record<ServiceId, string>,
  ) {
    this.sim = stack.sim;
    this.alarms = reconciler.alarms;
    this.speed = opts.speed ?? DEFAULT_SPEED;
    this.startedAt = this.sim.clock.now();
    this.pending = opts.forever ? [] : [...STEPS].sort((a, b) => a.atSeconds - b.atSeconds);
    this.actions = scenarioActions(stack);
  }

  /** One pass per simulated minute, until the scenario's last pass (never with `forever`) or an abort. */
  async runPasses(): Promise<void> {
    for (let minute = 0; this.opts.forever || minute <= LAST_PASS_MINUTE; minute++) {
      await this.advanceTo(this.startedAt.getTime() + minute * 60_000);
      if (this.aborted()) break;
      await this.runOnePass(minute);
    }
  }

  /**
   * What the run left behind, the verdict of every expectation (none with `forever` or after an
   * abort) and the summary; destroys the passes' ECS client.
   */
  async finish(): Promise<LocalRunResult> {
    const record = await this.record();
    const wasAborted = this.aborted() && !this.opts.forever;
    const expectations = this.opts.forever || wasAborted ? [] : checkExpectations(record, EXPECTATIONS);
    const summary = renderSummary(record, expectations, convergenceTimes(record), this.sim.callCounts(), this.opts.width);
    this.reconciler.runtime.ecs.destroy();
    return {
      record,
      expectations,
      ok: !wasAborted && expectations.every((e) => e.ok),
      aborted: wasAborted,
      summary,
      timeline: this.timeline(),
    };
  }

  private aborted(): boolean {
    return this.opts.signal?.aborted === true;
  }

  private event(text: string): void {
    this.opts.view.event(this.sim.clock.now(), this.startedAt, text);
  }

  /** The run so far, as `./report` draws it. */
  private timeline(): RunTimeline {
    return {
      startedAt: this.startedAt,
      endedAt: this.sim.clock.now(),
      passes: this.passes,
      steps: this.steps,
      alarms: this.alarms.transitions,
      alarmStates: this.alarms.allStates(),
      counts: this.sampler.samples(),
      specs: Object.keys(this.loadedHashes),
    };
  }

  /** The live view's frame: one row per service (loaded, live or with a status) and the alarms in ALARM. */
  private model(now: Record<ServiceId, LiveService> = liveServices(this.sim)): ViewModel {
    const { latest, alarms } = this;
    const ids = [...new Set([...Object.keys(this.loadedHashes), ...Object.keys(now), ...Object.keys(latest)])].sort();
    const rows: ServiceRow[] = ids.map((id) => {
      const st = own(latest, id);
      const l = own(now, id);
      const alarm = alarms.state('ServiceLagBeyondGrace', id);
      return {
        id,
        desired: l?.desiredCount,
        running: l?.runningCount,
        pending: l?.pendingCount,
        phase: st?.phase ?? (!l || l.status === 'INACTIVE' ? 'Deleted' : `(${l.status})`),
        reason: st ? statusReason(st) : l && l.status !== 'ACTIVE' ? `ECS: ${l.status}` : '',
        lastAction: st?.lastAction?.summary ?? '',
        alarm: alarm === 'INSUFFICIENT_DATA' ? '-' : alarm,
      };
    });
    const alarmsInAlarm = Object.entries(alarms.allStates())
      .filter(([k, s]) => s === 'ALARM' && !k.includes(' '))
      .map(([k]) => stateKeyLabel(k));
    return {
      now: this.sim.clock.now(),
      startedAt: this.startedAt,
      passes: this.passes.length, // passes are numbered from 1: the latest pass run
      totalPasses: this.opts.forever ? undefined : LAST_PASS_MINUTE + 1,
      speed: this.speed,
      rows,
      alarmsInAlarm,
    };
  }

  /** Moves simulated time to `targetMs` in steps of at most a second, running due steps and showing frames on the way. */
  private async advanceTo(targetMs: number): Promise<void> {
    const { sim } = this;
    while (sim.clock.nowMs() < targetMs && !this.aborted()) {
      const nowMs = sim.clock.nowMs();
      const next = this.pending[0];
      const stepAt = next ? this.startedAt.getTime() + next.atSeconds * 1000 : Infinity;
      const tickEnd = Math.min(targetMs, nowMs + 1000, Math.max(stepAt, nowMs));
      sim.clock.advance((tickEnd - nowMs) / 1000);
      if (next && sim.clock.nowMs() >= stepAt) {
        this.pending.shift();
        await this.runStep(next);
      }
      const services = liveServices(sim);
      this.sampler.observe(sim.clock.now(), services);
      this.opts.view.frame(this.model(services));
      await sleep((tickEnd - nowMs) / this.speed);
    }
  }

  /** Runs one scenario step; a step that throws is recorded, not thrown: the expectations that depend on it say it failed. */
  private async runStep(step: ScenarioStep): Promise<void> {
    let done: { detail: string; data: Record<string, string | number> };
    try {
      done = await step.run(this.actions);
    } catch (err) {
      done = { detail: `FAILED: ${err instanceof Error ? err.message : String(err)}`, data: { failed: 1 } };
    }
    this.steps.push({ id: step.id, at: this.sim.clock.now(), label: step.label, detail: done.detail, data: done.data });
    this.event(`STEP ${step.label}: ${done.detail}`);
  }

  /**
   * One pass, as the schedule would invoke the Lambda, then the alarms evaluated on what it
   * emitted, its record, the heartbeat `ecsr get` prints, and its story told.
   * @param index the pass's minute (0-based); people read passes numbered from 1, as the header counts them.
   */
  private async runOnePass(index: number): Promise<void> {
    const pass = await this.invokePass(index + 1);
    this.alarms.recordInvocation(pass.at, pass.error !== undefined);
    const before = this.latest;
    // Statuses of this pass only: an orphan's disappears once ECS reports it INACTIVE.
    if (pass.summary) this.latest = dictOf(pass.summary.statuses);
    const transitions = this.alarms.evaluate(this.sim.clock.now(), (contributor) => own(this.latest, contributor)?.reason);
    const services = liveServices(this.sim);
    this.sampler.observe(pass.at, services);
    this.passes.push({ index, at: pass.at, ...(pass.summary ? { summary: pass.summary } : {}), ...(pass.error ? { error: pass.error } : {}), live: services });
    await this.writeHeartbeat(pass);
    this.tellPass(pass, before, transitions);
    this.opts.onPass?.(this.timeline());
  }

  /** Runs pass `number` after the construct's heartbeat rule fires (once per schedule interval, just before it). */
  private async invokePass(number: number): Promise<PassOutcome> {
    const at = this.sim.clock.now();
    this.stack.events?.heartbeat(at);
    try {
      return { number, at, summary: await this.reconciler.runtime.run({ holder: `ecsr-local:pass-${number}` }) };
    } catch (err) {
      return { number, at, error: err instanceof Error ? err.message : String(err) };
    }
  }

  /** The heartbeat `ecsr get` prints (local/heartbeat.ts); a failed write only loses that line. */
  private async writeHeartbeat({ number, at, summary, error }: PassOutcome): Promise<void> {
    const heartbeat: LocalRunHeartbeat = {
      pass: number,
      passAt: at.toISOString(),
      realAt: new Date().toISOString(),
      speed: this.speed,
      outcome: error !== undefined ? 'threw' : (summary?.outcome ?? 'unknown'),
      actionsApplied: summary?.counts.actionsApplied ?? 0,
      actionsFailed: summary?.counts.actionsFailed ?? 0,
    };
    await this.stack.doc.send(new PutCommand({ TableName: this.stack.table, Item: heartbeatItem(heartbeat) })).catch(() => undefined);
  }

  /** Event lines of a pass: its failure, its actions, phase changes, alarm transitions and its counts; then a frame. */
  private tellPass({ number, summary, error }: PassOutcome, before: Record<ServiceId, ServiceStatus>, transitions: AlarmTransition[]): void {
    if (error) this.event(`pass ${number} threw: ${error}`);
    else if (summary && summary.outcome !== 'completed') this.event(`pass ${number}: ${summary.outcome} ${summary.errors.join('; ')}`);
    for (const a of summary?.actions ?? []) this.event(actionText(a));
    for (const [id, st] of Object.entries(summary?.statuses ?? {})) {
      const prev = own(before, id)?.phase;
      if (prev !== st.phase) {
        const why = statusReason(st);
        this.event(`${id}: ${prev ?? 'new'} -> ${st.phase}${why ? ` (${why})` : ''}`);
      }
    }
    for (const t of transitions) {
      if (t.from === 'INSUFFICIENT_DATA' && t.to === 'OK') continue; // every new series starts so
      this.event(`ALARM STATE ${alarmLabel(t.alarm, t.contributor)}: ${t.from} -> ${t.to}${t.value !== undefined ? ` (latest datapoint ${t.value})` : ''}${t.reason && t.to === 'ALARM' ? `: ${t.reason}` : ''}`);
    }
    const frame = this.model();
    const counts = summary?.counts;
    if (counts) {
      const rows = frame.rows.map((r) => `${r.id} ${r.running ?? '-'}/${r.desired ?? '-'} ${r.phase}`).join(', ');
      this.event(`pass ${number}: ${counts.actionsApplied} applied, ${counts.actionsFailed} failed; ${rows}`);
    }
    this.opts.view.frame(frame);
  }

  /** What the run left behind: the table's items and statuses, ECS's services and calls, the alarms. */
  private async record(): Promise<RunRecord> {
    const { stack, sim } = this;
    const items = await leftItems(stack, this.loadedHashes);
    return {
      startedAt: this.startedAt,
      passes: this.passes,
      steps: this.steps,
      alarms: this.alarms.transitions,
      finalAlarmStates: this.alarms.allStates(),
      calls: sim.calls(),
      items,
      live: liveServices(sim),
      loadedHashes: this.loadedHashes,
      observation: stack.events
        ? { mode: 'events', bus: { ...stack.events.bus.counts }, deadLettered: stack.events.sqs.depth(LOCAL_EVENTS_DLQ).visible }
        : { mode: 'polling' },
    };
  }
}

/** The table's spec items at the end, with their statuses; a loaded spec no longer there is null. */
async function leftItems(stack: LocalStack, loadedHashes: Record<ServiceId, string>): Promise<RunRecord['items']> {
  const items: RunRecord['items'] = dict();
  for (const id of Object.keys(loadedHashes)) items[id] = null;
  for await (const page of paginateScan({ client: stack.doc }, { TableName: stack.table, ConsistentRead: true })) {
    for (const raw of page.Items ?? []) {
      if (isReservedItem(raw)) continue;
      items[`${raw.cluster as string}/${raw.service as string}`] = { ...(raw.status ? { status: raw.status as ServiceStatus } : {}) };
    }
  }
  return items;
}

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
import { loadConfig } from '../lambda/config';
import { alarmDefinitions } from '../lambda/core/alarms';
import type { PassSummary } from '../lambda/core/pass';
import { parseSpecItem, specToItem } from '../lambda/core/spec';
import { serviceId, type ServiceId, type ServiceKey, type ServiceSpec, type ServiceStatus } from '../lambda/core/types';
import { alarmLabel, LocalAlarms, stateKeyLabel } from './alarms';
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
  const speed = opts.speed ?? DEFAULT_SPEED;
  // Passes at hh:mm:30: each pass's metrics fall in the middle of a one-minute alarm period.
  const startTime = new Date(Math.floor(Date.now() / 60_000) * 60_000 + 30_000);
  const clusters = [...new Set([...opts.specs.map((s) => s.spec.cluster), ...(opts.extraClusters ?? [])])].sort();
  const stack = await startLocalStack({
    clusters,
    seed: opts.seed ?? 1,
    startTime,
    ecsPort: opts.ecsPort,
    dynamodbPort: opts.dynamodbPort,
    events: opts.events ?? true,
    ...(opts.vpc ? { vpc: opts.vpc } : {}),
    ...(opts.sqsPort !== undefined ? { sqsPort: opts.sqsPort } : {}),
    ...(opts.specsTable ? { specsTable: opts.specsTable } : {}),
  });
  const { sim } = stack;
  const clock = { now: () => sim.clock.now() };
  try {
    const env = localReconcilerEnv(stack, opts.env ?? process.env);
    const config = loadConfig(env);
    const alarms = new LocalAlarms(
      alarmDefinitions({ namespace: config.metricsNamespace, defaultLagGraceSeconds: config.plan.defaultLagGraceSeconds, scheduleMinutes: 1 }),
      clock,
      startTime,
    );
    const runtime = createLocalRuntime(stack, { env: opts.env ?? process.env, metrics: alarms.sink, log: new RecordingLog() });

    // The specs, written as `ecsr apply` writes them.
    const loadedHashes: Record<ServiceId, string> = dict();
    for (const s of opts.specs) {
      await stack.doc.send(new PutCommand({ TableName: stack.table, Item: specToItem(s.spec) }));
      loadedHashes[serviceId(s.spec)] = s.hash;
    }
    opts.onReady?.(stack, env);

    const startedAt = sim.clock.now();
    const passes: PassRecord[] = [];
    const steps: StepRecord[] = [];
    let latest: Record<ServiceId, ServiceStatus> = dict();
    const event = (text: string) => opts.view.event(sim.clock.now(), startedAt, text);
    // ECS's counts every simulated second (kept when they change), for the report's charts.
    const sampler = new CountSampler();
    const timeline = (): RunTimeline => ({
      startedAt,
      endedAt: sim.clock.now(),
      passes,
      steps,
      alarms: alarms.transitions,
      alarmStates: alarms.allStates(),
      counts: sampler.samples(),
      specs: Object.keys(loadedHashes),
    });

    const live = (): Record<ServiceId, LiveService> => {
      const out: Record<ServiceId, LiveService> = dict();
      for (const c of sim.snapshot().clusters) {
        for (const s of c.services) {
          const id = `${c.name}/${s.name}`;
          // A re-created name: the ACTIVE one wins over an INACTIVE leftover.
          if (out[id] && out[id].status === 'ACTIVE') continue;
          out[id] = { status: s.status, desiredCount: s.desiredCount, runningCount: s.runningCount, pendingCount: s.pendingCount, taskDefinition: s.taskDefinition };
        }
      }
      return out;
    };

    const model = (now: Record<ServiceId, LiveService> = live()): ViewModel => {
      const ids = [...new Set([...Object.keys(loadedHashes), ...Object.keys(now), ...Object.keys(latest)])].sort();
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
        now: sim.clock.now(),
        startedAt,
        passes: passes.length, // passes are numbered from 1: the latest pass run
        totalPasses: opts.forever ? undefined : LAST_PASS_MINUTE + 1,
        speed,
        rows,
        alarmsInAlarm,
      };
    };

    const actions: ScenarioActions = {
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

    const pending: ScenarioStep[] = opts.forever ? [] : [...STEPS].sort((a, b) => a.atSeconds - b.atSeconds);
    const aborted = () => opts.signal?.aborted === true;

    /** Moves simulated time to `targetMs`, running due steps and showing frames on the way. */
    const advanceTo = async (targetMs: number) => {
      while (sim.clock.nowMs() < targetMs && !aborted()) {
        const nowMs = sim.clock.nowMs();
        const next = pending[0];
        const stepAt = next ? startedAt.getTime() + next.atSeconds * 1000 : Infinity;
        const tickEnd = Math.min(targetMs, nowMs + 1000, Math.max(stepAt, nowMs));
        sim.clock.advance((tickEnd - nowMs) / 1000);
        if (next && sim.clock.nowMs() >= stepAt) {
          pending.shift();
          let done: { detail: string; data: Record<string, string | number> };
          try {
            done = await next.run(actions);
          } catch (err) {
            // Recorded, not thrown: the expectations that depend on the step say it failed.
            done = { detail: `FAILED: ${err instanceof Error ? err.message : String(err)}`, data: { failed: 1 } };
          }
          steps.push({ id: next.id, at: sim.clock.now(), label: next.label, detail: done.detail, data: done.data });
          event(`STEP ${next.label}: ${done.detail}`);
        }
        const services = live();
        sampler.observe(sim.clock.now(), services);
        opts.view.frame(model(services));
        await sleep((tickEnd - nowMs) / speed);
      }
    };

    /** `index` is the pass's minute (0-based); people read passes numbered from 1, as the header counts them. */
    const runOnePass = async (index: number) => {
      const number = index + 1;
      const at = sim.clock.now();
      let summary: PassSummary | undefined;
      let error: string | undefined;
      // The construct's heartbeat rule fires once per schedule interval, just before the pass.
      stack.events?.heartbeat(at);
      try {
        summary = await runtime.run({ holder: `ecsr-local:pass-${number}` });
      } catch (err) {
        error = err instanceof Error ? err.message : String(err);
      }
      alarms.recordInvocation(at, error !== undefined);
      const before = latest;
      // Statuses of this pass only: an orphan's disappears once ECS reports it INACTIVE.
      if (summary) latest = dictOf(summary.statuses);
      const transitions = alarms.evaluate(sim.clock.now(), (contributor) => own(latest, contributor)?.reason);
      const services = live();
      sampler.observe(at, services);
      passes.push({ index, at, ...(summary ? { summary } : {}), ...(error ? { error } : {}), live: services });
      // The heartbeat `ecsr get` prints (local/heartbeat.ts); a failed write only loses that line.
      const heartbeat: LocalRunHeartbeat = {
        pass: number,
        passAt: at.toISOString(),
        realAt: new Date().toISOString(),
        speed,
        outcome: error !== undefined ? 'threw' : (summary?.outcome ?? 'unknown'),
        actionsApplied: summary?.counts.actionsApplied ?? 0,
        actionsFailed: summary?.counts.actionsFailed ?? 0,
      };
      await stack.doc.send(new PutCommand({ TableName: stack.table, Item: heartbeatItem(heartbeat) })).catch(() => undefined);

      if (error) event(`pass ${number} threw: ${error}`);
      else if (summary && summary.outcome !== 'completed') event(`pass ${number}: ${summary.outcome} ${summary.errors.join('; ')}`);
      for (const a of summary?.actions ?? []) event(actionText(a));
      for (const [id, st] of Object.entries(summary?.statuses ?? {})) {
        const prev = own(before, id)?.phase;
        if (prev !== st.phase) {
          const why = statusReason(st);
          event(`${id}: ${prev ?? 'new'} -> ${st.phase}${why ? ` (${why})` : ''}`);
        }
      }
      for (const t of transitions) {
        if (t.from === 'INSUFFICIENT_DATA' && t.to === 'OK') continue; // every new series starts so
        event(`ALARM STATE ${alarmLabel(t.alarm, t.contributor)}: ${t.from} -> ${t.to}${t.value !== undefined ? ` (latest datapoint ${t.value})` : ''}${t.reason && t.to === 'ALARM' ? `: ${t.reason}` : ''}`);
      }
      const frame = model();
      const counts = summary?.counts;
      if (counts) {
        const rows = frame.rows.map((r) => `${r.id} ${r.running ?? '-'}/${r.desired ?? '-'} ${r.phase}`).join(', ');
        event(`pass ${number}: ${counts.actionsApplied} applied, ${counts.actionsFailed} failed; ${rows}`);
      }
      opts.view.frame(frame);
      opts.onPass?.(timeline());
    };

    for (let minute = 0; opts.forever || minute <= LAST_PASS_MINUTE; minute++) {
      await advanceTo(startedAt.getTime() + minute * 60_000);
      if (aborted()) break;
      await runOnePass(minute);
    }
    opts.view.close();

    // What the run left behind.
    const items: RunRecord['items'] = dict();
    for (const id of Object.keys(loadedHashes)) items[id] = null;
    for await (const page of paginateScan({ client: stack.doc }, { TableName: stack.table, ConsistentRead: true })) {
      for (const raw of page.Items ?? []) {
        if (isReservedItem(raw)) continue;
        items[`${raw.cluster as string}/${raw.service as string}`] = { ...(raw.status ? { status: raw.status as ServiceStatus } : {}) };
      }
    }
    const record: RunRecord = {
      startedAt,
      passes,
      steps,
      alarms: alarms.transitions,
      finalAlarmStates: alarms.allStates(),
      calls: sim.calls(),
      items,
      live: live(),
      loadedHashes,
      observation: stack.events
        ? { mode: 'events', bus: { ...stack.events.bus.counts }, deadLettered: stack.events.sqs.depth(LOCAL_EVENTS_DLQ).visible }
        : { mode: 'polling' },
    };
    const wasAborted = aborted() && !opts.forever;
    const expectations = opts.forever || wasAborted ? [] : checkExpectations(record, EXPECTATIONS);
    const summary = renderSummary(record, expectations, convergenceTimes(record), sim.callCounts(), opts.width);
    runtime.ecs.destroy();
    return {
      record,
      expectations,
      ok: !wasAborted && expectations.every((e) => e.ok),
      aborted: wasAborted,
      summary,
      timeline: timeline(),
    };
  } finally {
    opts.view.close();
    await stack.close();
  }
}

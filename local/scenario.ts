/**
 * The scripted scenario of `ecsr local` (`npm start`): what happens to the example shop while the
 * reconciler runs once per simulated minute, and the expectations that must hold for the run to
 * succeed. Each expectation is checked against what was recorded (pass summaries, the simulator's
 * call log, the table's final items, alarm transitions), never assumed.
 *
 * Timeline (simulated seconds after the start; a pass runs at every whole minute):
 * - 0: the example specs are in the table; the first pass creates the four services.
 * - 170: every task of shop/web is stopped by hand: ECS's scheduler replaces them, the
 *   reconciler only watches (the pass at 180 sees the lag; no write for web).
 * - 270: shop/worker is scaled to 6 by hand (out of band): the next pass scales it back (drift).
 * - 390: shop/web's image is changed in its spec item: the next pass rolls it out.
 * - 510: shop/thumbnails' spec item is deleted: the next pass prunes the service.
 * - all along: shop/ledger's image cannot be pulled; its rollout fails once and is not re-applied,
 *   and the per-service lag alarm goes to ALARM with the stop reason.
 */
import type { AlarmState } from '../lambda/core/alarms';
import type { PassAction, PassSummary } from '../lambda/core/pass';
import { taskDefinitionFamily } from '../lambda/core/taskdef';
import { serviceId as id, type ServiceId, type ServiceKey, type ServiceStatus } from '../lambda/core/types';
import type { AlarmTransition } from './alarms';
import type { BusCounts } from './eventbridge';
import type { CallRecord } from './sim';
import { dict, own } from '../lambda/core/dict';

/** The example shop's cluster and services (examples/shop.yaml). */
export const SHOP = {
  cluster: 'shop',
  web: { cluster: 'shop', service: 'web' },
  worker: { cluster: 'shop', service: 'worker' },
  thumbnails: { cluster: 'shop', service: 'thumbnails' },
  ledger: { cluster: 'shop', service: 'ledger' },
} as const;

/** The image shop/web's spec is changed to at {@link STEP_SECONDS.newWebImage}. */
export const NEW_WEB_IMAGE = 'public.ecr.aws/nginx/nginx:1.28';
/** The desiredCount shop/worker is scaled to by hand. */
export const OUT_OF_BAND_WORKER_COUNT = 6;

/** When each step happens, in simulated seconds after the start. */
export const STEP_SECONDS = { stopWebTasks: 170, scaleWorker: 270, newWebImage: 390, deleteThumbnails: 510 } as const;
/** Passes run at minutes 0..{@link LAST_PASS_MINUTE}. */
export const LAST_PASS_MINUTE = 13;
/** Simulated seconds of the whole scenario. */
export const SCENARIO_SECONDS = LAST_PASS_MINUTE * 60;

// ---------------------------------------------------------------------------------------------
// What a run records
// ---------------------------------------------------------------------------------------------

/** A service as the ECS simulator shows it at one moment. */
export interface LiveService {
  readonly status: string;
  readonly desiredCount: number;
  readonly runningCount: number;
  readonly pendingCount: number;
  readonly taskDefinition: string;
}

export interface PassRecord {
  /** 0-based (the pass's minute); shown to people as pass `index + 1`. */
  readonly index: number;
  /** Simulated time of the pass. */
  readonly at: Date;
  /** Undefined when the pass threw (a bug; counted as a function error). */
  readonly summary?: PassSummary;
  readonly error?: string;
  /** The simulator's services right after the pass. */
  readonly live: Record<ServiceId, LiveService>;
}

export type StepId = 'stopWebTasks' | 'scaleWorker' | 'newWebImage' | 'deleteThumbnails';

export interface StepRecord {
  readonly id: StepId;
  readonly at: Date;
  readonly label: string;
  /** What the step did, e.g. `stopped 3 tasks`. */
  readonly detail: string;
  /** Numbers the expectations check (stopped tasks, new spec hash). */
  readonly data: Record<string, string | number>;
}

export interface RunRecord {
  readonly startedAt: Date;
  readonly passes: PassRecord[];
  readonly steps: StepRecord[];
  readonly alarms: AlarmTransition[];
  /** By `stateKey` (`ServiceLagBeyondGrace shop/ledger`, `PassHeartbeat`). */
  readonly finalAlarmStates: Record<string, AlarmState>;
  /** The simulator's ECS call log (control commands are not in it). */
  readonly calls: CallRecord[];
  /** The table's items at the end by `cluster/service`; null when the item is gone. */
  readonly items: Record<ServiceId, { readonly status?: ServiceStatus } | null>;
  /** The simulator's services at the end. */
  readonly live: Record<ServiceId, LiveService>;
  /** Spec hash of each example spec as loaded, by `cluster/service`. */
  readonly loadedHashes: Record<ServiceId, string>;
  /**
   * How the run observed ECS: `events` (the simulator's events through the construct's rules into
   * the local queue; what the bus did) or `polling` (`--no-events`). Absent: not recorded.
   */
  readonly observation?: RunObservation;
}

/** The observation mode a run asked for, and what its event bus did. */
export type RunObservation =
  | { readonly mode: 'events'; readonly bus: BusCounts; readonly deadLettered: number }
  | { readonly mode: 'polling' };

// ---------------------------------------------------------------------------------------------
// Steps
// ---------------------------------------------------------------------------------------------

/** What steps may do: what a person does in the consoles. */
export interface ScenarioActions {
  /** Stops every live task of a service (ECS console: Stop). @returns how many. */
  stopServiceTasks(key: ServiceKey): Promise<number>;
  /** Changes a service's desiredCount outside the reconciler (ECS console: Update service). */
  setDesiredCount(key: ServiceKey, desiredCount: number): Promise<void>;
  /** Changes attributes of a spec item (UpdateItem). @returns the new spec hash. */
  editSpec(key: ServiceKey, changes: Record<string, unknown>): Promise<string>;
  /** Deletes a spec item (DeleteItem). */
  deleteSpec(key: ServiceKey): Promise<void>;
}

export interface ScenarioStep {
  readonly id: StepId;
  readonly atSeconds: number;
  readonly label: string;
  run(actions: ScenarioActions): Promise<{ detail: string; data: Record<string, string | number> }>;
  /** The convergence this step starts, for the summary's time to converge. */
  readonly episode: { readonly key: ServiceKey; readonly label: string; readonly until: 'converged' | 'gone' };
}

export const STEPS: readonly ScenarioStep[] = [
  {
    id: 'stopWebTasks',
    atSeconds: STEP_SECONDS.stopWebTasks,
    label: 'stop every task of shop/web by hand (ECS console: Stop)',
    run: async (a) => {
      const n = await a.stopServiceTasks(SHOP.web);
      return { detail: `stopped ${n} task${n === 1 ? '' : 's'}`, data: { stopped: n } };
    },
    episode: { key: SHOP.web, label: 'tasks stopped by hand', until: 'converged' },
  },
  {
    id: 'scaleWorker',
    atSeconds: STEP_SECONDS.scaleWorker,
    label: `scale shop/worker to ${OUT_OF_BAND_WORKER_COUNT} tasks out of band (ECS console: Update service)`,
    run: async (a) => {
      await a.setDesiredCount(SHOP.worker, OUT_OF_BAND_WORKER_COUNT);
      return { detail: `desiredCount set to ${OUT_OF_BAND_WORKER_COUNT}`, data: { desiredCount: OUT_OF_BAND_WORKER_COUNT } };
    },
    episode: { key: SHOP.worker, label: 'scaled out of band', until: 'converged' },
  },
  {
    id: 'newWebImage',
    atSeconds: STEP_SECONDS.newWebImage,
    label: `change shop/web's image to ${NEW_WEB_IMAGE} in its spec item (DynamoDB UpdateItem)`,
    run: async (a) => {
      const hash = await a.editSpec(SHOP.web, { image: NEW_WEB_IMAGE });
      return { detail: `spec hash now ${hash}`, data: { hash } };
    },
    episode: { key: SHOP.web, label: 'image changed in the spec', until: 'converged' },
  },
  {
    id: 'deleteThumbnails',
    atSeconds: STEP_SECONDS.deleteThumbnails,
    label: "delete shop/thumbnails' spec item (DynamoDB DeleteItem)",
    run: async (a) => {
      await a.deleteSpec(SHOP.thumbnails);
      return { detail: 'item deleted', data: {} };
    },
    episode: { key: SHOP.thumbnails, label: 'spec deleted (prune)', until: 'gone' },
  },
];

// ---------------------------------------------------------------------------------------------
// Expectations
// ---------------------------------------------------------------------------------------------

export interface ExpectationResult {
  readonly id: string;
  readonly description: string;
  readonly ok: boolean;
  /** What was found: the evidence when it held, the reason when it did not. */
  readonly detail: string;
}

export interface Expectation {
  readonly id: string;
  readonly description: string;
  check(run: RunRecord): { ok: boolean; detail: string };
}

const ok = (detail: string) => ({ ok: true, detail });
const notOk = (detail: string) => ({ ok: false, detail });

function step(run: RunRecord, stepId: StepId): StepRecord | undefined {
  return run.steps.find((s) => s.id === stepId);
}

/** Passes at or after `at`, in order. */
function passesFrom(run: RunRecord, at: Date): PassRecord[] {
  return run.passes.filter((p) => p.at.getTime() >= at.getTime());
}

function actionsFor(p: PassRecord | undefined, key: ServiceKey): PassAction[] {
  return (p?.summary?.actions ?? []).filter((a) => a.cluster === key.cluster && a.service === key.service);
}

/** Name of a service in a call's request (a name or an ARN). */
function serviceOf(call: CallRecord): string | undefined {
  const r = call.request;
  const v = (r.serviceName ?? r.service) as string | undefined;
  return typeof v === 'string' ? v.split('/').pop() : undefined;
}

/** ECS write calls for one service (its task definition family `<cluster>-<service>` included). */
export function writeCallsFor(calls: readonly CallRecord[], key: ServiceKey): Record<string, number> {
  const out: Record<string, number> = dict(Object.entries({ RegisterTaskDefinition: 0, CreateService: 0, UpdateService: 0, DeleteService: 0 }));
  for (const c of calls) {
    if (c.outcome !== 'ok') continue;
    const mine =
      c.action === 'RegisterTaskDefinition' ? c.request.family === taskDefinitionFamily(key) : serviceOf(c) === key.service;
    if (mine && Object.hasOwn(out, c.action)) out[c.action] += 1;
  }
  return out;
}

function secondsBetween(a: Date, b: Date): number {
  return Math.round((b.getTime() - a.getTime()) / 1000);
}

export const EXPECTATIONS: readonly Expectation[] = [
  {
    id: 'passes',
    description: 'every pass ran to the end',
    check: (run) => {
      const bad = run.passes.filter((p) => p.summary?.outcome !== 'completed');
      if (run.passes.length === 0) return notOk('no pass ran');
      if (bad.length > 0) return notOk(`pass ${bad[0].index + 1} ${bad[0].error ?? bad[0].summary?.outcome}`);
      return ok(`${run.passes.length} passes completed`);
    },
  },
  {
    id: 'observation',
    description: 'every pass observed ECS in the mode the run asked for',
    check: (run) => {
      const want = run.observation?.mode;
      if (!want) return ok('not recorded');
      const wrong = run.passes.filter((p) => p.summary && (p.summary.events?.mode ?? 'polling') !== want);
      if (wrong.length > 0) {
        const p = wrong[0];
        return notOk(`pass ${p.index + 1} ${p.summary?.events?.mode ?? 'polling'}${p.summary?.events?.reason ? ` (${p.summary.events.reason})` : ''}, not ${want}`);
      }
      if (want === 'polling') return ok('polling (--no-events): every pass read the whole fleet');
      // The hand edits reach the reconciler as events: the pass after each reads a service for one.
      const told = (stepId: StepId) => {
        const at = step(run, stepId)?.at;
        const next = at ? passesFrom(run, at)[0] : undefined;
        return (next?.summary?.events?.services ?? 0) > 0;
      };
      const edits = ['stopWebTasks', 'scaleWorker'] as const;
      if (edits.some((s) => !step(run, s))) return notOk('the step did not run');
      const missed = edits.filter((s) => !told(s));
      if (missed.length > 0) return notOk(`the pass after ${missed.join(', ')} read no service for an event`);
      const received = run.passes.reduce((n, p) => n + (p.summary?.events?.received ?? 0), 0);
      const bus = run.observation?.mode === 'events' ? run.observation.bus : undefined;
      return ok(
        `events: ${received} messages received over ${run.passes.length} passes (${bus?.put ?? 0} events on the bus, ${bus?.delivered ?? 0} delivered by the rules, ${bus?.unmatched ?? 0} matched no rule); the hand edits were named by events`,
      );
    },
  },
  {
    id: 'created',
    description: 'web, worker and thumbnails are created and converge',
    check: (run) => {
      const first = step(run, 'stopWebTasks')?.at ?? new Date(8.64e15);
      const keys = [SHOP.web, SHOP.worker, SHOP.thumbnails];
      const times: string[] = [];
      for (const k of keys) {
        const created = run.passes.some((p) => actionsFor(p, k).some((a) => a.type === 'CreateService' && a.outcome === 'applied'));
        if (!created) return notOk(`${id(k)} was never created`);
        const p = run.passes.find((x) => x.at < first && own(x.summary?.statuses, id(k))?.phase === 'Converged');
        if (!p) return notOk(`${id(k)} did not converge before the first step`);
        times.push(`${id(k)} in ${secondsBetween(run.startedAt, p.at)} s`);
      }
      return ok(`converged: ${times.join(', ')}`);
    },
  },
  {
    id: 'tasks-return',
    description: 'tasks stopped by hand come back (ECS replaces them; the reconciler makes no call for it)',
    check: (run) => {
      const s = step(run, 'stopWebTasks');
      if (!s) return notOk('the step did not run');
      if (!(Number(s.data.stopped) > 0)) return notOk(`the step stopped ${s.data.stopped} tasks`);
      const back = passesFrom(run, s.at).find((p) => {
        const st = own(p.summary?.statuses, id(SHOP.web));
        return st?.phase === 'Converged' && st.runningCount === st.desiredCount && st.desiredCount === 3;
      });
      if (!back) return notOk('shop/web never ran 3 tasks again');
      const waited = secondsBetween(s.at, back.at);
      if (waited > 180) return notOk(`shop/web took ${waited} s to run 3 tasks again (more than 180 s)`);
      const writes = run.calls.filter(
        (c) => c.at >= s.at && c.at <= back.at && serviceOf(c) === SHOP.web.service && ['CreateService', 'UpdateService'].includes(c.action),
      );
      if (writes.length > 0) return notOk(`the reconciler sent ${writes.map((c) => c.action).join(', ')} for shop/web`);
      return ok(`${s.data.stopped} stopped, 3/3 running again ${waited} s later, no write call for shop/web`);
    },
  },
  {
    id: 'drift',
    description: 'a service scaled by hand is scaled back and the drift is reported',
    check: (run) => {
      const s = step(run, 'scaleWorker');
      if (!s) return notOk('the step did not run');
      const next = passesFrom(run, s.at)[0];
      const fix = actionsFor(next, SHOP.worker).find((a) => a.type === 'UpdateService');
      if (!fix) return notOk('the pass after the change made no UpdateService for shop/worker');
      if (fix.kind !== 'drift' || fix.outcome !== 'applied') return notOk(`the UpdateService was ${fix.kind ?? '?'} / ${fix.outcome}`);
      const change = (fix.changes ?? []).find((c) => c.field === 'desiredCount');
      if (!change || change.from !== String(OUT_OF_BAND_WORKER_COUNT) || change.to !== '2') {
        return notOk(`the UpdateService changed ${JSON.stringify(fix.changes)}, not desiredCount ${OUT_OF_BAND_WORKER_COUNT} -> 2`);
      }
      const reported = own(next?.summary?.statuses, id(SHOP.worker))?.drift ?? [];
      if (!reported.includes(`desiredCount ${OUT_OF_BAND_WORKER_COUNT} -> 2`)) return notOk(`status.drift is ${JSON.stringify(reported)}`);
      if ((next?.summary?.counts.driftCorrections ?? 0) < 1) return notOk('the pass counted no DriftCorrections');
      const sent = run.calls.filter((c) => c.at >= s.at && c.action === 'UpdateService' && serviceOf(c) === 'worker' && c.request.desiredCount === 2);
      if (sent.length === 0) return notOk('the simulator received no UpdateService desiredCount 2 for shop/worker');
      const live = own(run.live, id(SHOP.worker));
      if (live?.desiredCount !== 2) return notOk(`shop/worker ends with desiredCount ${live?.desiredCount}`);
      return ok(`reverted by the next pass (${secondsBetween(s.at, next.at)} s later); status.drift = ["desiredCount ${OUT_OF_BAND_WORKER_COUNT} -> 2"]`);
    },
  },
  {
    id: 'rollout',
    description: 'an image change in a spec rolls out',
    check: (run) => {
      const s = step(run, 'newWebImage');
      if (!s) return notOk('the step did not run');
      const next = passesFrom(run, s.at)[0];
      const types = actionsFor(next, SHOP.web).map((a) => `${a.type}${a.kind ? `(${a.kind})` : ''}:${a.outcome}`);
      if (!types.includes('RegisterTaskDefinition:applied') || !types.includes('UpdateService(rollout):applied')) {
        return notOk(`the pass after the edit did ${types.join(', ') || 'nothing'} for shop/web`);
      }
      const done = passesFrom(run, s.at).find((p) => {
        const st = own(p.summary?.statuses, id(SHOP.web));
        return st?.phase === 'Converged' && st.lastAppliedSpecHash === s.data.hash && st.runningCount === 3;
      });
      if (!done) return notOk('shop/web did not converge on the new spec');
      const live = own(run.live, id(SHOP.web));
      if (!live || !live.taskDefinition.endsWith(':2')) return notOk(`shop/web ends on ${live?.taskDefinition ?? 'nothing'}, not revision 2`);
      return ok(`revision 2 rolled out, converged ${secondsBetween(s.at, done.at)} s after the edit`);
    },
  },
  {
    id: 'prune',
    description: 'a spec deleted from the table prunes its service',
    check: (run) => {
      const s = step(run, 'deleteThumbnails');
      if (!s) return notOk('the step did not run');
      const next = passesFrom(run, s.at)[0];
      const del = actionsFor(next, SHOP.thumbnails).find((a) => a.type === 'DeleteService');
      if (!del || del.outcome !== 'applied') return notOk('the pass after the deletion made no DeleteService for shop/thumbnails');
      const live = own(run.live, id(SHOP.thumbnails));
      if (live && live.status === 'ACTIVE') return notOk('shop/thumbnails is still ACTIVE');
      if (own(run.items, id(SHOP.thumbnails))) return notOk('the item of shop/thumbnails is back in the table');
      return ok(`DeleteService ${secondsBetween(s.at, next.at)} s after the deletion; the service is ${live?.status ?? 'gone'}`);
    },
  },
  {
    id: 'failed-rollout',
    description: 'the unpullable image fails its rollout once and is not re-applied',
    check: (run) => {
      const status = own(run.items, id(SHOP.ledger))?.status;
      const hash = own(run.loadedHashes, id(SHOP.ledger));
      if (!status) return notOk('shop/ledger has no status');
      if (status.phase !== 'Degraded' || status.failedSpecHash !== hash) {
        return notOk(`shop/ledger is ${status.phase} with failedSpecHash ${status.failedSpecHash ?? '(none)'}`);
      }
      if (!status.conditions.some((c) => c.reason === 'RolloutFailed')) return notOk('no RolloutFailed condition');
      const w = writeCallsFor(run.calls, SHOP.ledger);
      if (w.RegisterTaskDefinition !== 1 || w.CreateService !== 1 || w.UpdateService !== 0) {
        return notOk(`write calls for shop/ledger: RegisterTaskDefinition ${w.RegisterTaskDefinition}, CreateService ${w.CreateService}, UpdateService ${w.UpdateService} (want 1, 1, 0)`);
      }
      return ok(`Degraded/RolloutFailed; over ${run.passes.length} passes: 1 RegisterTaskDefinition, 1 CreateService, 0 UpdateService`);
    },
  },
  {
    id: 'lag-alarm',
    description: 'the lag alarm goes to ALARM for shop/ledger with the stop reason',
    check: (run) => {
      const t = run.alarms.find((a) => a.alarm === 'ServiceLagBeyondGrace' && a.contributor === id(SHOP.ledger) && a.to === 'ALARM');
      if (!t) return notOk('ServiceLagBeyondGrace never went to ALARM for shop/ledger');
      if (!t.reason?.includes('CannotPullContainerError')) return notOk(`the ALARM came with reason "${t.reason ?? ''}", not the stop reason`);
      if (own(run.finalAlarmStates, `ServiceLagBeyondGrace ${id(SHOP.ledger)}`) !== 'ALARM') return notOk('the alarm did not stay in ALARM');
      if (run.finalAlarmStates.ServicesLaggingBeyondGrace !== 'ALARM') return notOk('ServicesLaggingBeyondGrace is not in ALARM');
      return ok(`ALARM ${secondsBetween(run.startedAt, t.at)} s after the start (TaskLag ${t.value ?? '?'}): ${t.reason}`);
    },
  },
  {
    id: 'no-false-alarm',
    // shop/ledger's lag fires ServiceLagBeyondGrace (its contributor and the alarm as a whole) and
    // ServicesLaggingBeyondGrace (the pass's count of services lagging beyond grace): both are the
    // ledger alarm expectation's, so they are allowed here only while ledger is the one service counted.
    description: "no other alarm fires (the lag alarms fire for shop/ledger alone)",
    check: (run) => {
      const ledger = id(SHOP.ledger);
      const wrong = run.alarms.filter(
        (a) =>
          a.to === 'ALARM' &&
          !(a.alarm === 'ServiceLagBeyondGrace' && (a.contributor === ledger || a.contributor === undefined)) &&
          a.alarm !== 'ServicesLaggingBeyondGrace',
      );
      if (wrong.length > 0) return notOk(`ALARM: ${wrong.map((a) => `${a.alarm}${a.contributor ? ` ${a.contributor}` : ''}`).join(', ')}`);
      const others = new Set<string>();
      for (const p of run.passes) {
        for (const [service, status] of Object.entries(p.summary?.statuses ?? {})) if (status.lagBeyondGrace && service !== ledger) others.add(service);
      }
      if (others.size > 0) return notOk(`${[...others].sort().join(', ')} lagged beyond grace too, so ServicesLaggingBeyondGrace did not count ${ledger} alone`);
      return ok(
        `ServicesLaggingBeyondGrace and ServiceLagBeyondGrace counted ${ledger} alone; PassHeartbeat, FunctionErrors, FunctionThrottles, PassDurationNearTimeout, AsyncEventsDropped, ActionsFailing, InvalidSpecs and the other services stayed out of ALARM`,
      );
    },
  },
];

/** Runs every expectation; an expectation that throws counts as not held. */
export function checkExpectations(run: RunRecord, expectations: readonly Expectation[] = EXPECTATIONS): ExpectationResult[] {
  return expectations.map((e) => {
    try {
      const r = e.check(run);
      return { id: e.id, description: e.description, ok: r.ok, detail: r.detail };
    } catch (err) {
      return { id: e.id, description: e.description, ok: false, detail: `the check failed: ${err instanceof Error ? err.message : String(err)}` };
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Time to converge
// ---------------------------------------------------------------------------------------------

export interface Convergence {
  readonly service: ServiceId;
  readonly label: string;
  readonly startedAt: Date;
  /** Simulated seconds from the start of the episode to the first pass that saw it done; null: never. */
  readonly seconds: number | null;
}

/**
 * Time to converge of each episode: creation of every loaded spec (from the start), and each
 * step's disturbance. Measured at pass resolution (a pass a simulated minute): the first pass at
 * or after the episode's start whose status is Converged (or, for a prune, whose observation no
 * longer has the service ACTIVE).
 */
export function convergenceTimes(run: RunRecord, steps: readonly ScenarioStep[] = STEPS): Convergence[] {
  const episodes: { service: ServiceId; label: string; startedAt: Date; until: 'converged' | 'gone' }[] = [
    ...Object.keys(run.loadedHashes)
      .sort()
      .map((service) => ({ service, label: 'created', startedAt: run.startedAt, until: 'converged' as const })),
    ...steps.flatMap((s) => {
      const rec = run.steps.find((r) => r.id === s.id);
      return rec ? [{ service: id(s.episode.key), label: s.episode.label, startedAt: rec.at, until: s.episode.until }] : [];
    }),
  ];
  return episodes.map((e) => {
    const done = passesFrom(run, e.startedAt).find((p) => {
      if (e.until === 'gone') return own(p.live, e.service)?.status !== 'ACTIVE';
      return own(p.summary?.statuses, e.service)?.phase === 'Converged';
    });
    return { service: e.service, label: e.label, startedAt: e.startedAt, seconds: done ? secondsBetween(e.startedAt, done.at) : null };
  });
}

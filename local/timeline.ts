/**
 * The timeline of a local run, as `ecsr local --report` draws it: per service, ECS's desired,
 * running and pending task counts over simulated time, the phase each pass gave it, and markers
 * for what happened on the way (actions applied, drift corrected, failures with their reasons,
 * alarm transitions, the scenario's disturbances). Everything comes from the run's own records:
 * the simulator's counts (sampled every simulated second between passes, kept only when they
 * change), each pass's summary (its actions and statuses), the alarm transitions the local
 * evaluation found (`./alarms`) and the scenario's steps. Nothing here is in the reconciler's core:
 * it reads what the local run recorded.
 */
import type { AlarmState } from '../lambda/core/alarms';
import type { PassAction } from '../lambda/core/pass';
import { describeChange } from '../lambda/core/status';
import type { ServiceId, ServiceStatus } from '../lambda/core/types';
import { alarmLabel } from './alarms';
import type { AlarmTransition } from './alarms';
import type { LiveService, PassRecord, StepId, StepRecord } from './scenario';
import { needsReason, statusReason } from './view';

/** `UpdateService(drift) shop/worker: desiredCount 6 -> 2`, with the outcome when not applied. */
export function actionText(a: PassAction): string {
  const what = a.changes && a.changes.length > 0 ? a.changes.map(describeChange).join(', ') : a.reason;
  const outcome = a.outcome === 'applied' ? '' : ` [${a.outcome}${a.message ? `: ${a.message}` : ''}]`;
  return `${a.type}${a.kind ? `(${a.kind})` : ''} ${a.cluster}/${a.service}: ${what}${outcome}`;
}

/** A service's counts as ECS (the simulator) showed them from `at` until the next sample. */
export interface CountSample {
  readonly at: Date;
  readonly desired: number;
  readonly running: number;
  readonly pending: number;
  /** ECS's service status (`ACTIVE`, `DRAINING`, `INACTIVE`), or `MISSING` once ECS forgot it. */
  readonly status: string;
}

/**
 * Keeps each service's counts whenever they change. Fed every simulated second, it holds one
 * sample per change, so a long `--forever` run that stays converged adds nothing.
 */
export class CountSampler {
  private readonly last = new Map<ServiceId, string>();
  private readonly series = new Map<ServiceId, CountSample[]>();

  /** Records the services as ECS shows them at `at` (a service no longer shown is `MISSING`, 0 tasks). */
  observe(at: Date, live: Readonly<Record<ServiceId, LiveService>>): void {
    const seen = new Set<ServiceId>();
    for (const [id, s] of Object.entries(live)) {
      seen.add(id);
      this.put(id, { at, desired: s.desiredCount, running: s.runningCount, pending: s.pendingCount, status: s.status });
    }
    for (const id of this.last.keys()) if (!seen.has(id)) this.put(id, { at, desired: 0, running: 0, pending: 0, status: 'MISSING' });
  }

  /** The samples so far by `cluster/service`, each series in time order. */
  samples(): ReadonlyMap<ServiceId, readonly CountSample[]> {
    return this.series;
  }

  private put(id: ServiceId, sample: CountSample): void {
    const key = `${sample.desired}/${sample.running}/${sample.pending}/${sample.status}`;
    if (this.last.get(id) === key) return;
    this.last.set(id, key);
    const list = this.series.get(id);
    if (list) list.push(sample);
    else this.series.set(id, [sample]);
  }
}

/** What a report is drawn from: the run so far (a `--forever` run's page is drawn while it goes on). */
export interface RunTimeline {
  readonly startedAt: Date;
  /** Simulated time the page shows the run up to. */
  readonly endedAt: Date;
  readonly passes: readonly PassRecord[];
  readonly steps: readonly StepRecord[];
  readonly alarms: readonly AlarmTransition[];
  /** Alarm states now, by state key (`ServiceLagBeyondGrace shop/ledger`, `PassHeartbeat`). */
  readonly alarmStates: Readonly<Record<string, AlarmState>>;
  readonly counts: ReadonlyMap<ServiceId, readonly CountSample[]>;
  /** The specs loaded at the start, by `cluster/service`. */
  readonly specs: readonly ServiceId[];
}

/**
 * Marker kinds, each its own lane above a chart: `action` (an action applied), `drift` (an
 * UpdateService correcting drift), `failure` (an action that failed or was skipped, a phase turning
 * Degraded, Invalid or Blocked, a pass that did not complete), `alarm` (an alarm or contributor
 * changing state), `step` (something done by hand: the scenario's disturbances).
 */
export type MarkerKind = 'action' | 'drift' | 'failure' | 'alarm' | 'step';
export const MARKER_KINDS: readonly MarkerKind[] = ['action', 'drift', 'failure', 'alarm', 'step'];

export interface Marker {
  readonly at: Date;
  readonly kind: MarkerKind;
  /** Short label: `UpdateService(drift)`, `-> ALARM`, `Degraded`. */
  readonly label: string;
  /** The whole sentence, reason included. */
  readonly text: string;
  /** For an alarm marker, the state it went to (colours the marker). */
  readonly to?: AlarmState;
}

/** A phase from one pass to the next (the last one to {@link RunTimeline.endedAt}). */
export interface PhaseSpan {
  readonly from: Date;
  readonly to: Date;
  readonly phase: string;
  /** The status's reason (`RolloutFailed: TaskFailedToStart: ...`); empty when converged. */
  readonly reason: string;
}

export interface ServiceTimeline {
  readonly id: ServiceId;
  readonly counts: readonly CountSample[];
  readonly phases: readonly PhaseSpan[];
  readonly markers: readonly Marker[];
  /** Where the service stands at the end of the timeline. */
  readonly final: {
    readonly phase: string;
    readonly reason: string;
    readonly running?: number;
    readonly desired?: number;
    /** Start of the phases since the service was last Converged (or since it appeared); absent when converged or deleted. */
    readonly notConvergedSince?: Date;
    /** The service's contributor to the per-service lag alarm, when it has one. */
    readonly lagAlarm?: AlarmState;
  };
}

export interface TimelineModel {
  readonly startedAt: Date;
  readonly endedAt: Date;
  readonly services: readonly ServiceTimeline[];
  /** Markers not about one service: whole alarms (PassHeartbeat, the lag alarm as a whole), passes that did not complete. */
  readonly reconciler: readonly Marker[];
}

/** Failure phases: a marker when a service enters one. */
const FAILED_PHASES = new Set(['Degraded', 'Invalid', 'Blocked']);

/** The phase a pass gives a service it no longer reports: Deleted when ECS has it INACTIVE or gone. */
function phaseAt(p: PassRecord, id: ServiceId, statuses: ReadonlyMap<ServiceId, ServiceStatus>): { phase: string; reason: string } | undefined {
  const st = statuses.get(id);
  if (st) return { phase: st.phase, reason: statusReason(st) };
  if (!p.summary) return undefined; // the pass threw: nothing known
  const live = Object.entries(p.live).find(([k]) => k === id)?.[1];
  return !live || live.status === 'INACTIVE' ? { phase: 'Deleted', reason: '' } : undefined;
}

function alarmText(t: AlarmTransition): string {
  const value = t.value !== undefined ? ` (latest datapoint ${t.value})` : '';
  return `${alarmLabel(t.alarm, t.contributor)}: ${t.from} -> ${t.to}${value}${t.reason && t.to === 'ALARM' ? `: ${t.reason}` : ''}`;
}

/** Whether an alarm transition is worth a marker: every new series starts INSUFFICIENT_DATA -> OK. */
function shown(t: AlarmTransition): boolean {
  return !(t.from === 'INSUFFICIENT_DATA' && t.to === 'OK');
}

/**
 * Builds what the report draws from the run's records.
 * @param stepService the service a scenario step disturbs (`cluster/service`), or undefined to
 *   show it with the reconciler's markers.
 */
export function buildTimeline(run: RunTimeline, stepService: (step: StepId) => ServiceId | undefined = () => undefined): TimelineModel {
  const ids = new Set<ServiceId>(run.specs);
  for (const id of run.counts.keys()) ids.add(id);
  for (const p of run.passes) for (const id of Object.keys(p.summary?.statuses ?? {})) ids.add(id);

  const markers = new Map<ServiceId, Marker[]>([...ids].map((id) => [id, []]));
  const reconciler: Marker[] = [];
  const add = (id: ServiceId | undefined, m: Marker) => {
    const list = id === undefined ? undefined : markers.get(id);
    (list ?? reconciler).push(m);
  };

  const phases = new Map<ServiceId, PhaseSpan[]>([...ids].map((id) => [id, []]));
  let lastStatuses = new Map<ServiceId, ServiceStatus>();
  run.passes.forEach((p, i) => {
    const number = p.index + 1;
    const to = run.passes[i + 1]?.at ?? run.endedAt;
    if (p.error) add(undefined, { at: p.at, kind: 'failure', label: `pass ${number} threw`, text: `pass ${number} threw: ${p.error}` });
    else if (p.summary && p.summary.outcome !== 'completed') {
      add(undefined, { at: p.at, kind: 'failure', label: `pass ${number} ${p.summary.outcome}`, text: `pass ${number}: ${p.summary.outcome} ${p.summary.errors.join('; ')}`.trim() });
    }
    for (const a of p.summary?.actions ?? []) {
      const id = `${a.cluster}/${a.service}`;
      const kind: MarkerKind = a.outcome === 'failed' || a.outcome === 'skipped' ? 'failure' : a.kind === 'drift' ? 'drift' : 'action';
      add(ids.has(id) ? id : undefined, { at: p.at, kind, label: `${a.type}${a.kind ? `(${a.kind})` : ''}`, text: `pass ${number}: ${actionText(a)}` });
    }
    const statuses = p.summary ? new Map(Object.entries(p.summary.statuses)) : lastStatuses;
    for (const id of ids) {
      const now = phaseAt(p, id, statuses);
      if (!now) continue;
      const spans = phases.get(id) ?? [];
      const prev = spans.at(-1);
      if (FAILED_PHASES.has(now.phase) && (prev?.phase !== now.phase || prev.reason !== now.reason)) {
        const text = `pass ${number}: ${id}: ${prev?.phase ?? 'new'} -> ${now.phase}${now.reason ? ` (${now.reason})` : ''}`;
        add(id, { at: p.at, kind: 'failure', label: now.phase, text });
      }
      if (prev && prev.phase === now.phase && prev.reason === now.reason && prev.to.getTime() === p.at.getTime()) {
        spans[spans.length - 1] = { ...prev, to };
      } else {
        spans.push({ from: p.at, to, ...now });
      }
    }
    lastStatuses = statuses;
  });

  for (const t of run.alarms) {
    if (!shown(t)) continue;
    add(t.contributor, { at: t.at, kind: 'alarm', label: `-> ${t.to}`, text: alarmText(t), to: t.to });
  }
  for (const s of run.steps) add(stepService(s.id), { at: s.at, kind: 'step', label: 'by hand', text: `${s.label}: ${s.detail}` });

  const byTime = (a: Marker, b: Marker) => a.at.getTime() - b.at.getTime();
  const services = [...ids].sort().map((id): ServiceTimeline => {
    const spans = phases.get(id) ?? [];
    const counts = run.counts.get(id) ?? [];
    const last = spans.at(-1);
    const lastCount = counts.at(-1);
    let since: Date | undefined;
    if (last && needsReason(last.phase)) {
      since = last.from;
      for (let i = spans.length - 1; i >= 0 && needsReason(spans[i].phase); i--) since = spans[i].from;
    }
    const lag = Object.entries(run.alarmStates).find(([k]) => k === `ServiceLagBeyondGrace ${id}`)?.[1];
    return {
      id,
      counts,
      phases: spans,
      markers: [...(markers.get(id) ?? [])].sort(byTime),
      final: {
        phase: last?.phase ?? (lastCount ? `(${lastCount.status})` : 'not created'),
        reason: last?.reason ?? '',
        ...(lastCount ? { running: lastCount.running, desired: lastCount.desired } : {}),
        ...(since ? { notConvergedSince: since } : {}),
        ...(lag ? { lagAlarm: lag } : {}),
      },
    };
  });
  return { startedAt: run.startedAt, endedAt: run.endedAt, services, reconciler: reconciler.sort(byTime) };
}

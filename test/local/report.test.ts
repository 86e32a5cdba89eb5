/**
 * The run report's model and page without a browser: which counts the sampler keeps, which markers
 * and phases the timeline makes of a run's records, and that the page is self-contained and
 * escapes what it shows. The page as Chromium renders it, from a real local run, is checked in
 * report-browser.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { PassAction, PassCounts, PassSummary } from '../../lambda/core/pass';
import type { ServiceStatus } from '../../lambda/core/types';
import type { AlarmTransition } from '../../local/alarms';
import { escapeHtml, offsetLabel, renderReport } from '../../local/report';
import type { LiveService, PassRecord } from '../../local/scenario';
import { buildTimeline, CountSampler, type CountSample, type RunTimeline } from '../../local/timeline';
import { aCondition, aStatus } from '../support/builders';

const T0 = new Date('2025-06-01T12:00:30.000Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

function live(desiredCount: number, runningCount: number, pendingCount = 0, status = 'ACTIVE'): LiveService {
  return { status, desiredCount, runningCount, pendingCount, taskDefinition: 'arn:aws:ecs:us-east-1:123456789012:task-definition/shop-web:1' };
}

/** A completed pass at minute `index` with these statuses and actions. */
function aPass(index: number, statuses: Record<string, ServiceStatus>, actions: PassAction[] = [], services: Record<string, LiveService> = {}): PassRecord {
  const summary: PassSummary = {
    outcome: 'completed',
    holder: `test:pass-${index + 1}`,
    dryRun: false,
    startedAt: at(index * 60).toISOString(),
    durationMs: 5,
    counts: {} as PassCounts,
    readsComplete: true,
    specsComplete: true,
    clusters: {},
    actions,
    statuses,
    errors: [],
  };
  return { index, at: at(index * 60), summary, live: services };
}

const failed = aStatus({
  phase: 'Degraded',
  desiredCount: 2,
  runningCount: 0,
  conditions: [aCondition({ type: 'Ready', status: 'False', reason: 'RolloutFailed', message: 'deployment failed' })],
  reason: 'TaskFailedToStart: CannotPullContainerError: pull image manifest has been retried 5 time(s): not found',
});
const progressing = aStatus({
  phase: 'Progressing',
  runningCount: 0,
  conditions: [aCondition({ type: 'Ready', status: 'False', reason: 'Creating' }), aCondition({ type: 'Progressing', status: 'True', reason: 'Creating', message: 'created' })],
});

function aRun(overrides: Partial<RunTimeline> = {}): RunTimeline {
  return { startedAt: T0, endedAt: at(180), passes: [], steps: [], alarms: [], alarmStates: {}, counts: new Map(), specs: [], ...overrides };
}

describe('the run report', () => {
  it('the sampler keeps a service counts only when they change, and a service ECS forgot as MISSING', () => {
    // Prepare
    const sampler = new CountSampler();

    // Act
    sampler.observe(at(0), { 'shop/web': live(3, 0, 3) });
    sampler.observe(at(1), { 'shop/web': live(3, 0, 3) });
    sampler.observe(at(2), { 'shop/web': live(3, 2, 1), 'shop/ledger': live(2, 0, 2) });
    sampler.observe(at(3), { 'shop/web': live(3, 2, 1), 'shop/ledger': live(2, 0, 2) });
    sampler.observe(at(4), { 'shop/web': live(3, 3, 0) });

    // Assess
    const counts = (id: string) => (sampler.samples().get(id) ?? []).map((s: CountSample) => [s.at.getTime() - T0.getTime(), s.desired, s.running, s.pending, s.status]);
    expect(counts('shop/web')).toEqual([
      [0, 3, 0, 3, 'ACTIVE'],
      [2000, 3, 2, 1, 'ACTIVE'],
      [4000, 3, 3, 0, 'ACTIVE'],
    ]);
    expect(counts('shop/ledger')).toEqual([
      [2000, 2, 0, 2, 'ACTIVE'],
      [4000, 0, 0, 0, 'MISSING'],
    ]);
  });

  it('marks actions, drift corrections, failures, alarm transitions and changes by hand on the service they are about', () => {
    // Prepare
    const drift: PassAction = {
      type: 'UpdateService',
      kind: 'drift',
      cluster: 'shop',
      service: 'worker',
      reason: 'drift',
      changes: [{ field: 'desiredCount', from: '6', to: '2' }],
      outcome: 'applied',
    };
    const create: PassAction = { type: 'CreateService', cluster: 'shop', service: 'ledger', reason: 'service ledger does not exist; create it', outcome: 'applied' };
    const throttled: PassAction = { type: 'UpdateService', kind: 'rollout', cluster: 'shop', service: 'worker', reason: 'rollout', outcome: 'failed', message: 'Rate exceeded' };
    const alarms: AlarmTransition[] = [
      { at: at(0), alarm: 'ServiceLagBeyondGrace', contributor: 'shop/worker', from: 'INSUFFICIENT_DATA', to: 'OK' },
      { at: at(120), alarm: 'ServiceLagBeyondGrace', contributor: 'shop/ledger', from: 'INSUFFICIENT_DATA', to: 'ALARM', value: 2, reason: failed.reason },
      { at: at(120), alarm: 'PassHeartbeat', from: 'OK', to: 'ALARM' },
    ];
    const run = aRun({
      specs: ['shop/ledger', 'shop/worker'],
      passes: [
        aPass(0, { 'shop/ledger': progressing, 'shop/worker': aStatus() }, [create]),
        aPass(1, { 'shop/ledger': failed, 'shop/worker': aStatus() }, [drift, throttled]),
        aPass(2, { 'shop/ledger': failed, 'shop/worker': aStatus() }),
      ],
      steps: [{ id: 'scaleWorker', at: at(30), label: 'scale shop/worker to 6 tasks out of band', detail: 'desiredCount set to 6', data: {} }],
      alarms,
      alarmStates: { 'ServiceLagBeyondGrace shop/ledger': 'ALARM', 'ServiceLagBeyondGrace shop/worker': 'OK' },
    });

    // Act
    const model = buildTimeline(run, (step) => (step === 'scaleWorker' ? 'shop/worker' : undefined));

    // Assess
    const [ledger, worker] = model.services;
    expect(model.services.map((s) => s.id)).toEqual(['shop/ledger', 'shop/worker']);
    expect(ledger.markers.map((m) => [m.kind, m.label])).toEqual([
      ['action', 'CreateService'],
      ['failure', 'Degraded'], // once: the next pass's same phase and reason is not a new failure
      ['alarm', '-> ALARM'],
    ]);
    expect(ledger.markers[1].text).toContain('Progressing -> Degraded (RolloutFailed: TaskFailedToStart: CannotPullContainerError');
    expect(ledger.markers[2].text).toBe(
      'ServiceLagBeyondGrace [shop/ledger]: INSUFFICIENT_DATA -> ALARM (latest datapoint 2): TaskFailedToStart: CannotPullContainerError: pull image manifest has been retried 5 time(s): not found',
    );
    expect(worker.markers.map((m) => [m.kind, m.label, m.text])).toEqual([
      ['step', 'by hand', 'scale shop/worker to 6 tasks out of band: desiredCount set to 6'],
      ['drift', 'UpdateService(drift)', 'pass 2: UpdateService(drift) shop/worker: desiredCount 6 -> 2'],
      ['failure', 'UpdateService(rollout)', 'pass 2: UpdateService(rollout) shop/worker: rollout [failed: Rate exceeded]'],
    ]);
    // An alarm as a whole is the reconciler's, not a service's.
    expect(model.reconciler.map((m) => m.text)).toEqual(['PassHeartbeat: OK -> ALARM']);
    // Phases: one span per run of the same phase and reason, the last one to the end.
    expect(ledger.phases.map((p) => [p.phase, offsetLabel(p.from, T0), offsetLabel(p.to, T0)])).toEqual([
      ['Progressing', '+0m00s', '+1m00s'],
      ['Degraded', '+1m00s', '+3m00s'],
    ]);
    expect(ledger.final).toMatchObject({ phase: 'Degraded', notConvergedSince: at(0), lagAlarm: 'ALARM' });
    expect(ledger.final.reason).toContain('CannotPullContainerError');
    expect(worker.final).toEqual({ phase: 'Converged', reason: '', lagAlarm: 'OK' });
  });

  it('a service the passes stop reporting is Deleted once ECS has it INACTIVE', () => {
    const run = aRun({
      specs: ['shop/thumbnails'],
      passes: [aPass(0, { 'shop/thumbnails': aStatus() }), aPass(1, {}, [], { 'shop/thumbnails': live(0, 0, 0, 'INACTIVE') })],
    });

    const [thumbnails] = buildTimeline(run).services;

    expect(thumbnails.phases.map((p) => p.phase)).toEqual(['Converged', 'Deleted']);
    expect(thumbnails.final.notConvergedSince).toBeUndefined();
  });

  it('the page needs nothing from the network and escapes the text it shows', () => {
    // Prepare: a reason and a step with markup in them.
    const evil = '<img src=x onerror="alert(1)">';
    const run = aRun({
      specs: ['shop/ledger'],
      passes: [aPass(0, { 'shop/ledger': { ...failed, reason: evil } })],
      steps: [{ id: 'stopWebTasks', at: at(10), label: `stop ${evil}`, detail: 'done', data: {} }],
      counts: new Map([['shop/ledger', [{ at: at(0), desired: 2, running: 0, pending: 2, status: 'ACTIVE' }]]]),
    });

    // Act
    const html = renderReport(buildTimeline(run, () => 'shop/ledger'), { title: 'a <test> run', facts: ['seed 1'] });

    // Assess
    expect(html).not.toContain('<img');
    expect(html).toContain(escapeHtml(evil));
    expect(html).toContain('<title>a &#60;test&#62; run</title>');
    expect(html).not.toMatch(/\b(src|href)="(https?:)?\/\//);
    expect(html).not.toMatch(/<link\b|@import|url\(/);
    expect(html).toContain('Why not converged: 1 of 1 service not converged at +3m00s');
  });
});

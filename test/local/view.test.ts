/**
 * What the local run shows: the live table's rows, a frame, plain timestamped lines, and the
 * one-line reason of a status.
 */
import { describe, expect, it } from 'vitest';
import type { Condition, ServiceStatus } from '../../lambda/core/types';
import { actionText } from '../../local/run';
import { fitTable, PlainView, renderFrame, renderServiceTable, statusReason, textWidth, timestamp, type ServiceRow } from '../../local/view';

const T = '2025-06-01T12:00:00.000Z';

function condition(type: string, status: Condition['status'], reason: string, message = ''): Condition {
  return { type, status, reason, message, lastTransitionTime: T };
}

function aStatus(overrides: Partial<ServiceStatus> = {}): ServiceStatus {
  return {
    phase: 'Converged',
    conditions: [condition('Ready', 'True', 'ServiceConverged'), condition('Progressing', 'False', 'ServiceConverged')],
    desiredCount: 3,
    runningCount: 3,
    pendingCount: 0,
    lagBeyondGrace: false,
    observedAt: T,
    ...overrides,
  };
}

const ROW: ServiceRow = {
  id: 'shop/ledger',
  desired: 2,
  running: 0,
  pending: 1,
  phase: 'Degraded',
  reason: 'RolloutFailed: TaskFailedToStart: CannotPullContainerError',
  lastAction: 'CreateService: service ledger does not exist; create it',
  alarm: 'ALARM',
};

describe('the local view', () => {
  it.each([
    { case: 'converged: nothing to explain', status: aStatus(), reason: '' },
    {
      case: 'lagging: the progressing reason and the stop reason',
      status: aStatus({
        phase: 'Progressing',
        runningCount: 1,
        reason: 'UserInitiated: Task stopped by user',
        conditions: [condition('Ready', 'False', 'TasksLagging', '1 of 3'), condition('Progressing', 'True', 'TasksLagging', '1 of 3')],
      }),
      reason: 'TasksLagging: UserInitiated: Task stopped by user',
    },
    {
      case: 'drift corrected: what was changed back',
      status: aStatus({
        phase: 'Progressing',
        drift: ['desiredCount 6 -> 2'],
        reason: '(service worker) has started 4 tasks.',
        conditions: [condition('Ready', 'False', 'DriftCorrected', 'x'), condition('Progressing', 'True', 'DriftCorrected', 'x')],
      }),
      reason: 'DriftCorrected: desiredCount 6 -> 2',
    },
    {
      case: 'blocked: the blocking condition',
      status: aStatus({
        phase: 'Blocked',
        conditions: [
          condition('Ready', 'False', 'NotOwned'),
          condition('Progressing', 'False', 'NotOwned'),
          condition('Blocked', 'True', 'NotOwned', 'service legacy exists without the owner tag'),
        ],
      }),
      reason: 'NotOwned: service legacy exists without the owner tag',
    },
    {
      case: 'failed rollout without a stop reason: the condition message',
      status: aStatus({
        phase: 'Degraded',
        conditions: [condition('Ready', 'False', 'RolloutFailed', 'deployment FAILED'), condition('Progressing', 'False', 'RolloutFailed', 'deployment FAILED')],
      }),
      reason: 'RolloutFailed: deployment FAILED',
    },
  ])('statusReason, $case', ({ status, reason }) => {
    expect(statusReason(status)).toBe(reason);
  });

  it('renders the service table with every column', () => {
    // Act
    const text = renderServiceTable([ROW], undefined, 220);

    // Assess
    const [head, , row] = text.split('\n').slice(1);
    expect(head.split('│').map((c) => c.trim()).filter(Boolean)).toEqual(['SERVICE', 'TASKS', 'PHASE', 'REASON', 'LAST ACTION', 'ALARM']);
    expect(row.split('│').map((c) => c.trim()).filter(Boolean)).toEqual([
      'shop/ledger',
      '0/2 +1',
      'Degraded',
      'RolloutFailed',
      'CreateService: service ledger does not exist; create it',
      'ALARM',
    ]);
  });

  it.each([80, 160])('at %i columns the frame fits: the last action then the name are cut, the reason word never, and the whole reason is under the table', (width) => {
    // Prepare
    const long: ServiceRow = { ...ROW, id: 'shop/payments-ledger-reconciliation-worker-with-a-long-name' };

    // Act
    const frame = renderFrame(
      { now: new Date('2025-06-01T12:04:30Z'), startedAt: new Date('2025-06-01T12:00:30Z'), passes: 5, totalPasses: 14, speed: 13, rows: [long], alarmsInAlarm: [] },
      [],
      undefined,
      width,
    );

    // Assess
    const lines = frame.split('\n');
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(width);
    const row = lines.find((l) => l.startsWith('│ shop/'))?.split('│').map((c) => c.trim()) ?? [];
    expect(row[4]).toBe('RolloutFailed');
    expect(row[5]).toMatch(width === 80 ? /^C.*…$/ : /^CreateService: service ledger /);
    expect(row[1]).toMatch(width === 80 ? /^shop\/pay.*…$/ : /^shop\/payments-ledger-reconciliation-worker-with-a-long-name$/);
    const under = lines.slice(lines.findIndex((l) => l.startsWith('└')) + 1, lines.findIndex((l) => l.includes('no alarm in ALARM')));
    expect(under.join(' ').replace(/\s+/g, ' ')).toBe(`${long.id}: RolloutFailed: TaskFailedToStart: CannotPullContainerError`);
  });

  it('renders a frame: simulated time, progress, speed, alarms and the latest events', () => {
    // Act
    const frame = renderFrame(
      {
        now: new Date('2025-06-01T12:04:30Z'),
        startedAt: new Date('2025-06-01T12:00:30Z'),
        passes: 5,
        totalPasses: 14,
        speed: 13,
        rows: [ROW],
        alarmsInAlarm: ['ServiceLagBeyondGrace'],
      },
      ['[12:04:30 +4m00s] something happened'],
    );

    // Assess
    expect(frame.split('\n')[0]).toBe('ecsr local  simulated 12:04:30 +4m00s  pass 5/14  speed 13x');
    expect(frame).toContain('alarms in ALARM: ServiceLagBeyondGrace');
    expect(frame.split('\n').at(-1)).toBe('[12:04:30 +4m00s] something happened');
  });

  it('prints plain lines stamped with simulated time and time since the start', () => {
    // Prepare
    const out: string[] = [];
    const view = new PlainView((t) => out.push(t));

    // Act
    view.event(new Date('2025-06-01T12:02:05Z'), new Date('2025-06-01T12:00:30Z'), 'pass 1: 0 applied');

    // Assess
    expect(out).toEqual(['[12:02:05 +1m35s] pass 1: 0 applied\n']);
    expect(timestamp(new Date('2025-06-01T12:00:30Z'), new Date('2025-06-01T12:00:30Z'))).toBe('12:00:30 +0m00s');
  });

  it('an action event line lists its changes, else its reason, and the outcome when not applied', () => {
    const update = { type: 'UpdateService', cluster: 'shop', service: 'worker', reason: 'drift', kind: 'drift' } as const;
    const changes = [{ field: 'desiredCount', from: '6', to: '2' }];
    expect(actionText({ ...update, changes, outcome: 'applied' })).toBe('UpdateService(drift) shop/worker: desiredCount 6 -> 2');
    expect(actionText({ ...update, outcome: 'failed', message: 'Rate exceeded' })).toBe('UpdateService(drift) shop/worker: drift [failed: Rate exceeded]');
    expect(actionText({ type: 'CreateService', cluster: 'shop', service: 'web', reason: 'no such service', outcome: 'skipped' })).toBe(
      'CreateService shop/web: no such service [skipped]',
    );
  });
});

describe('fitTable', () => {
  const short = 'AccessDenied: not authorized';
  const long = 'UpdateService: containerDefinitions[web].image public.ecr.aws/nginx/nginx:1.27 -> public.ecr.aws/nginx/nginx:1.28 (failed)';

  // Natural widths 10 + 30 + 126 and 4 borders: at 90 and 140 the action alone gives up room; at
  // 60 it reaches the reason's width and both wrap.
  it.each([
    { width: 60, reasonWhole: false },
    { width: 90, reasonWhole: true },
    { width: 140, reasonWhole: true },
  ])('at $width columns the columns that shrink evenly narrow the widest first, and every line fits', ({ width, reasonWhole }) => {
    // Act
    const out = fitTable(['ID', 'REASON', 'LAST ACTION'], [['shop/web', short, long]], { width, shrinkEvenly: [[1, 16], [2, 16]], wrap: [1, 2] });

    // Assess: nothing is cut; the short reason stays on one line while the long action has room to give.
    const lines = out.split('\n');
    for (const l of lines) expect(textWidth(l)).toBeLessThanOrEqual(width);
    expect(out).not.toContain('…');
    expect(out.replace(/[│\s]+/g, ' ')).toContain('shop/web');
    expect(lines.some((l) => l.includes(short))).toBe(reasonWhole);
  });

  it('keeps the line breaks a wrapped cell already has', () => {
    const out = fitTable(['PHASE'], [['Converged\nECS ACTIVE 3/3']], { width: 40, wrap: [0] });
    expect(out.split('\n').map((l) => l.replace(/[│\s]+$|^[│\s]+/g, ''))).toEqual(expect.arrayContaining(['Converged', 'ECS ACTIVE 3/3']));
  });
});

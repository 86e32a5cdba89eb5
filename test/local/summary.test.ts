/**
 * The end-of-run summary's API-call table: which errors the reconciler expects (a family's latest
 * revision asked for before its first registration) and how the table shows them.
 */
import { describe, expect, it } from 'vitest';
import type { CallRecord } from '../../local/sim';
import type { PassSummary } from '../../lambda/core/pass';
import type { LiveService, RunRecord } from '../../local/scenario';
import { actionsByService, expectedErrors, finalPhases, renderSummary } from '../../local/summary';

const AT = new Date('2025-06-01T12:00:30.000Z');

/** Call records in arrival order from `[action, outcome, request]`. */
function aLog(...calls: [string, string, Record<string, unknown>][]): CallRecord[] {
  return calls.map(([action, outcome, request], i) => ({ seq: i + 1, action, at: AT, outcome, request }));
}

const describeFamily = (family: string, outcome = 'ClientException'): [string, string, Record<string, unknown>] => ['DescribeTaskDefinition', outcome, { taskDefinition: family, include: ['TAGS'] }];
const register = (family: string, outcome = 'ok'): [string, string, Record<string, unknown>] => ['RegisterTaskDefinition', outcome, { family }];

/** A run record with nothing but `calls`. */
function aRun(calls: CallRecord[]): RunRecord {
  return { startedAt: AT, passes: [], steps: [], alarms: [], finalAlarmStates: {}, calls, items: {}, live: {}, loadedHashes: {} };
}

describe('the summary of the local run', () => {
  it.each([
    { case: 'a family described before its first registration', log: aLog(describeFamily('shop-web'), register('shop-web')), expected: [1] },
    { case: 'the same family described again after it was registered', log: aLog(describeFamily('shop-web'), register('shop-web'), describeFamily('shop-web')), expected: [1] },
    { case: 'a failed registration leaves the family unknown', log: aLog(describeFamily('shop-web'), register('shop-web', 'ThrottlingException'), describeFamily('shop-web')), expected: [1, 3] },
    { case: 'a revision (family:revision) is not a family', log: aLog(describeFamily('shop-web:3')), expected: [] },
    { case: 'an ARN is not a family', log: aLog(describeFamily('arn:aws:ecs:us-east-1:123456789012:task-definition/shop-web:1')), expected: [] },
    { case: 'another error of an unknown family', log: aLog(describeFamily('shop-web', 'ServerException')), expected: [] },
    { case: 'another action answering ClientException', log: aLog(['CreateService', 'ClientException', { taskDefinition: 'shop-web' }]), expected: [] },
  ])('expected errors: $case', ({ log, expected }) => {
    expect(expectedErrors(log).map((c) => c.seq)).toEqual(expected);
  });

  it.each([
    {
      case: 'only expected errors',
      log: aLog(describeFamily('a'), describeFamily('b'), register('a'), register('b')),
      counts: { DescribeTaskDefinition: { total: 2, ok: 0, throttled: 0, errors: 2 }, RegisterTaskDefinition: { total: 2, ok: 2, throttled: 0, errors: 0 } },
      row: /│ DescribeTaskDefinition +│ 2 +│ 0 +│ 0 +│ 2 \(expected\) +│/,
      note: true,
    },
    {
      case: 'expected and other errors',
      log: aLog(describeFamily('a'), register('a'), describeFamily('a:1', 'ServerException')),
      counts: { DescribeTaskDefinition: { total: 2, ok: 0, throttled: 0, errors: 2 }, RegisterTaskDefinition: { total: 1, ok: 1, throttled: 0, errors: 0 } },
      row: /│ DescribeTaskDefinition +│ 2 +│ 0 +│ 0 +│ 2 \(1 expected\) +│/,
      note: true,
    },
    {
      case: 'no expected error',
      log: aLog(register('a'), describeFamily('a:1', 'ServerException')),
      counts: { DescribeTaskDefinition: { total: 1, ok: 0, throttled: 0, errors: 1 }, RegisterTaskDefinition: { total: 1, ok: 1, throttled: 0, errors: 0 } },
      row: /│ DescribeTaskDefinition +│ 1 +│ 0 +│ 0 +│ 1 +│/,
      note: false,
    },
  ])('the API call table says which errors are expected: $case', ({ log, counts, row, note }) => {
    // Act
    const text = renderSummary(aRun(log), [], [], counts);

    // Assess
    expect(text).toMatch(row);
    expect(text.includes('for a family not registered yet')).toBe(note);
  });

  it('counts applied actions per service and type, and gives each service its final phase', () => {
    // Prepare
    const action = (service: string, type: string, outcome: string, kind?: string) => ({ type, cluster: 'shop', service, reason: 'r', outcome, ...(kind ? { kind } : {}) });
    const pass = (index: number, actions: unknown[], phases: Record<string, string>) => ({
      index,
      at: new Date(AT.getTime() + index * 60_000),
      summary: { actions, statuses: Object.fromEntries(Object.entries(phases).map(([id, phase]) => [id, { phase }])) } as unknown as PassSummary,
      live: {},
    });
    const live = (status: string): LiveService => ({ status, desiredCount: 1, runningCount: 1, pendingCount: 0, taskDefinition: 'td' });
    const run: RunRecord = {
      ...aRun([]),
      passes: [
        pass(0, [action('web', 'CreateService', 'applied'), action('old', 'UpdateService', 'applied', 'drift')], { 'shop/web': 'Progressing', 'shop/old': 'Converged', 'shop/kept': 'Converged' }),
        pass(1, [action('web', 'UpdateService', 'applied', 'drift'), action('web', 'UpdateService', 'failed', 'drift'), action('old', 'DeleteService', 'applied')], { 'shop/web': 'Converged' }),
      ],
      live: { 'shop/web': live('ACTIVE'), 'shop/old': live('INACTIVE'), 'shop/kept': live('ACTIVE') },
    };

    // Act & Assess
    expect(actionsByService(run)).toEqual({
      'shop/web': { CreateService: 1, 'UpdateService(drift)': 1 },
      'shop/old': { 'UpdateService(drift)': 1, DeleteService: 1 },
    });
    expect(finalPhases(run)).toEqual({ 'shop/web': 'Converged', 'shop/old': 'Deleted', 'shop/kept': 'Converged' });
  });
});

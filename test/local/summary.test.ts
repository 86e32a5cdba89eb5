/**
 * The end-of-run summary's API-call table: which errors the reconciler expects (a family's latest
 * revision asked for before its first registration) and how the table shows them.
 */
import { describe, expect, it } from 'vitest';
import type { CallRecord } from '../../local/sim';
import type { RunRecord } from '../../local/scenario';
import { expectedErrors, renderSummary } from '../../local/summary';

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
});

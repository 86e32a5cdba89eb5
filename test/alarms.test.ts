import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  alarmDefinition,
  alarmDefinitions,
  alarmSettingsProblems,
  datapointsFromSamples,
  evaluateAlarm,
  evaluateContributors,
  isBreaching,
  lagPeriods,
  perServiceQuery,
  type AlarmDefinition,
  type AlarmState,
  type Datapoint,
  type TreatMissingData,
} from '../lambda/core/alarms';
import { METRIC } from '../lambda/core/metric-names';

/** A "> 0" alarm with M of N and a missing-data treatment. */
function anAlarm(overrides: Partial<AlarmDefinition> = {}): AlarmDefinition {
  return {
    id: 'ActionsFailing',
    description: 'test',
    source: { kind: 'reconcilerMetric', namespace: 'Test', metricName: 'X', statistic: 'Sum' },
    periodSeconds: 60,
    evaluationPeriods: 3,
    datapointsToAlarm: 3,
    threshold: 0,
    comparisonOperator: 'GreaterThanThreshold',
    treatMissingData: 'missing',
    ...overrides,
  };
}

/** `'0 - X - X'` -> [0, null, 1, null, 1]: the User Guide's notation (0 ok, X breaching, - missing). */
function points(notation: string): Datapoint[] {
  return notation
    .split(/\s+/)
    .filter(Boolean)
    .map((c) => (c === '-' ? null : c === 'X' ? 1 : 0));
}

describe('evaluateAlarm', () => {
  // CloudWatch User Guide, "Alarm evaluation" / "How alarm state is evaluated when data is
  // missing": the table for Datapoints to Alarm = 3, Evaluation Periods = 3, evaluation range 5
  // (from memory of the published table; the evaluator's rules are documented in alarms.ts).
  const table: { points: string; missing: AlarmState | 'retain'; ignore: AlarmState | 'retain'; breaching: AlarmState; notBreaching: AlarmState }[] = [
    { points: '0 - X - X', missing: 'OK', ignore: 'OK', breaching: 'OK', notBreaching: 'OK' },
    { points: '- - - - 0', missing: 'OK', ignore: 'OK', breaching: 'OK', notBreaching: 'OK' },
    { points: '- - - - -', missing: 'INSUFFICIENT_DATA', ignore: 'retain', breaching: 'ALARM', notBreaching: 'OK' },
    { points: '0 X X - X', missing: 'ALARM', ignore: 'ALARM', breaching: 'ALARM', notBreaching: 'ALARM' },
    { points: '- - X - -', missing: 'ALARM', ignore: 'retain', breaching: 'ALARM', notBreaching: 'OK' },
  ];
  const cases = table.flatMap((row) =>
    (['missing', 'ignore', 'breaching', 'notBreaching'] as TreatMissingData[]).flatMap((treat) =>
      (['OK', 'ALARM'] as AlarmState[]).map((previous) => {
        const expected = row[treat];
        return {
          case: `${row.points} ${treat} from ${previous}`,
          row: row.points,
          treat,
          previous,
          expected: expected === 'retain' ? previous : expected,
        };
      }),
    ),
  );

  it.each(cases)('User Guide table (3 of 3): $case', ({ row, treat, previous, expected }) => {
    // Prepare
    const def = anAlarm({ evaluationPeriods: 3, datapointsToAlarm: 3, treatMissingData: treat });
    // Act
    const result = evaluateAlarm(def, points(row), previous);
    // Assess
    expect(result.state).toBe(expected);
  });

  it.each([
    { case: '2 of 3 breaching, M=2', points: '0 X X', m: 2, n: 3, expected: 'ALARM' },
    { case: '1 of 3 breaching, M=2', points: '0 0 X', m: 2, n: 3, expected: 'OK' },
    { case: 'non-consecutive breaches count (3 of 5)', points: 'X 0 X 0 X', m: 3, n: 5, expected: 'ALARM' },
    { case: 'old breaches outside N do not count', points: 'X X X 0 0 0', m: 3, n: 3, expected: 'OK' },
    { case: 'only the last N present points count', points: 'X X 0 0 0 X', m: 2, n: 3, expected: 'OK' },
  ])('M of N: $case', ({ points: p, m, n, expected }) => {
    const def = anAlarm({ evaluationPeriods: n, datapointsToAlarm: m, treatMissingData: 'notBreaching' });
    expect(evaluateAlarm(def, points(p)).state).toBe(expected);
  });

  it.each([
    { case: 'GreaterThan at threshold', op: 'GreaterThanThreshold', value: 1, expected: false },
    { case: 'GreaterThanOrEqual at threshold', op: 'GreaterThanOrEqualToThreshold', value: 1, expected: true },
    { case: 'LessThan below', op: 'LessThanThreshold', value: 0, expected: true },
    { case: 'LessThan at threshold', op: 'LessThanThreshold', value: 1, expected: false },
    { case: 'LessThanOrEqual at threshold', op: 'LessThanOrEqualToThreshold', value: 1, expected: true },
  ] as const)('isBreaching: $case', ({ op, value, expected }) => {
    expect(isBreaching({ threshold: 1, comparisonOperator: op }, value)).toBe(expected);
  });

  it('breaching treatment: a series that stops becomes ALARM once the range is empty of datapoints', () => {
    // Prepare: a healthy heartbeat (Sum 1 per pass) that then stops.
    const def = alarmDefinition('PassHeartbeat');
    const healthy: Datapoint[] = [1, 1, 1, 1, 1];
    // Act
    const states = [0, 1, 2, 3, 4, 5].map((stopped) => evaluateAlarm(def, [...healthy, ...Array(stopped).fill(null)]).state);
    // Assess: with the range N+2 = 5, the fills outnumber the last healthy point after 5 empty periods.
    expect(states).toEqual(['OK', 'OK', 'OK', 'OK', 'OK', 'ALARM']);
  });

  it('a failing pass (PassSucceeded 0) trips the heartbeat after N periods', () => {
    const def = alarmDefinition('PassHeartbeat');
    expect(evaluateAlarm(def, [1, 1, 0, 0]).state).toBe('OK');
    expect(evaluateAlarm(def, [1, 1, 0, 0, 0]).state).toBe('ALARM');
  });

  it('property: with every datapoint present, the treatment does not matter', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 5, maxLength: 12 }),
        fc.integer({ min: 1, max: 5 }),
        fc.constantFrom<TreatMissingData>('missing', 'ignore', 'breaching', 'notBreaching'),
        (values, n, treat) => {
          const def = anAlarm({ evaluationPeriods: n, datapointsToAlarm: Math.max(1, n - 1), treatMissingData: treat });
          const baseline = anAlarm({ evaluationPeriods: n, datapointsToAlarm: Math.max(1, n - 1), treatMissingData: 'notBreaching' });
          expect(evaluateAlarm(def, values, 'ALARM').state).toBe(evaluateAlarm(baseline, values, 'OK').state);
        },
      ),
    );
  });

  it('property: treating missing as breaching never yields a better state than not breaching', () => {
    const rank: Record<AlarmState, number> = { OK: 0, INSUFFICIENT_DATA: 1, ALARM: 2 };
    fc.assert(
      fc.property(fc.array(fc.option(fc.integer({ min: 0, max: 2 }), { nil: null }), { maxLength: 10 }), (values) => {
        const worse = evaluateAlarm(anAlarm({ treatMissingData: 'breaching' }), values).state;
        const better = evaluateAlarm(anAlarm({ treatMissingData: 'notBreaching' }), values).state;
        expect(rank[worse]).toBeGreaterThanOrEqual(rank[better]);
      }),
    );
  });
});

describe('evaluateContributors', () => {
  it('is in ALARM when any contributor is, and names it', () => {
    // Prepare
    const def = anAlarm({ evaluationPeriods: 2, datapointsToAlarm: 2, treatMissingData: 'notBreaching' });
    // Act
    const result = evaluateContributors(def, { 'web/api': [0, 0], 'web/worker': [2, 3], 'jobs/etl': [null, null] });
    // Assess
    expect(result.state).toBe('ALARM');
    expect(result.alarming).toEqual(['web/worker']);
    expect(result.contributors['web/api'].state).toBe('OK');
  });

  it.each<{ case: string; series: Record<string, Datapoint[]>; expected: AlarmState }>([
    { case: 'all OK', series: { a: [0, 0] }, expected: 'OK' },
    { case: 'no contributors', series: {}, expected: 'INSUFFICIENT_DATA' },
  ])('$case', ({ series, expected }) => {
    const def = anAlarm({ evaluationPeriods: 2, datapointsToAlarm: 2, treatMissingData: 'missing' });
    expect(evaluateContributors(def, series).state).toBe(expected);
  });
});

describe('datapointsFromSamples', () => {
  const minute = 60_000;
  const t0 = Date.UTC(2026, 0, 1, 12, 0, 0);

  it.each([
    { case: 'Sum per period, gaps missing', statistic: 'Sum', expected: [3, null, 1] },
    { case: 'Maximum per period', statistic: 'Maximum', expected: [2, null, 1] },
  ] as const)('$case', ({ statistic, expected }) => {
    // Prepare: two samples in the first minute, none in the second, one in the third.
    const samples = [
      { timestamp: t0 + 1_000, value: 1 },
      { timestamp: t0 + 30_000, value: 2 },
      { timestamp: t0 + 2 * minute + 5_000, value: 1 },
      { timestamp: t0 - 5_000, value: 100 }, // before the window
    ];
    // Act
    const result = datapointsFromSamples(samples, statistic, 60, t0 + 3 * minute, 3);
    // Assess
    expect(result).toEqual(expected);
  });
});

describe('alarm definitions', () => {
  it('covers every required alarm once', () => {
    expect(alarmDefinitions().map((d) => d.id)).toEqual([
      'ServiceLagBeyondGrace',
      'ServicesLaggingBeyondGrace',
      'PassHeartbeat',
      'FunctionErrors',
      'FunctionThrottles',
      'PassDurationNearTimeout',
      'AsyncEventsDropped',
      'ActionsFailing',
      'InvalidSpecs',
    ]);
  });

  it('heartbeat treats missing data as breaching and fires below one success', () => {
    const hb = alarmDefinition('PassHeartbeat');
    expect(hb.treatMissingData).toBe('breaching');
    expect(hb.source).toMatchObject({ kind: 'reconcilerMetric', metricName: METRIC.passSucceeded, statistic: 'Sum' });
    expect(hb.comparisonOperator).toBe('LessThanThreshold');
    expect(hb.threshold).toBe(1);
  });

  it.each([
    { case: 'default 300 s grace, 1-minute passes', grace: 300, minutes: 1, periods: 5, period: 60 },
    { case: '90 s grace rounds up', grace: 90, minutes: 1, periods: 2, period: 60 },
    { case: 'zero grace still needs one period', grace: 0, minutes: 1, periods: 1, period: 60 },
    { case: '5-minute passes', grace: 600, minutes: 5, periods: 2, period: 300 },
    { case: 'grace beyond the 3-hour Metrics Insights window is capped', grace: 86_400, minutes: 1, periods: 180, period: 60 },
  ])('per-service lag alarm honours the default grace: $case', ({ grace, minutes, periods, period }) => {
    // Act
    const def = alarmDefinition('ServiceLagBeyondGrace', { namespace: 'Ns', defaultLagGraceSeconds: grace, scheduleMinutes: minutes });
    // Assess
    expect(def.evaluationPeriods).toBe(periods);
    expect(def.datapointsToAlarm).toBe(periods);
    expect(def.periodSeconds).toBe(period);
    expect(def.threshold).toBe(0);
    expect(def.comparisonOperator).toBe('GreaterThanThreshold');
  });

  it('per-service lag alarm is a Metrics Insights query grouped by Cluster and Service', () => {
    const def = alarmDefinition('ServiceLagBeyondGrace', { namespace: 'My/Ns', defaultLagGraceSeconds: 300, scheduleMinutes: 1 });
    expect(def.source).toMatchObject({
      kind: 'metricsInsights',
      query: 'SELECT MAX(TaskLag) FROM SCHEMA("My/Ns", Cluster, Service) GROUP BY Cluster, Service ORDER BY MAX() DESC',
      groupBy: ['Cluster', 'Service'],
    });
  });

  it('a service lagging for exactly the default grace trips its contributor, one minute less does not', () => {
    // Prepare
    const def = alarmDefinition('ServiceLagBeyondGrace'); // 300 s grace, 60 s periods
    // Act
    const result = evaluateContributors(def, {
      'web/api': [0, 2, 2, 2, 2, 2],
      'web/worker': [0, 0, 1, 1, 1, 1],
    });
    // Assess
    expect(result.alarming).toEqual(['web/api']);
  });

  it('every period is the schedule interval and every M <= N', () => {
    for (const def of alarmDefinitions({ namespace: 'N', defaultLagGraceSeconds: 300, scheduleMinutes: 2 })) {
      expect(def.periodSeconds, def.id).toBe(120);
      expect(def.datapointsToAlarm, def.id).toBeLessThanOrEqual(def.evaluationPeriods);
    }
  });

  it.each([
    { case: 'namespace with a quote', settings: { namespace: 'a"b', defaultLagGraceSeconds: 300, scheduleMinutes: 1 }, word: 'namespace' },
    { case: 'negative grace', settings: { namespace: 'N', defaultLagGraceSeconds: -1, scheduleMinutes: 1 }, word: 'grace' },
    { case: 'fractional schedule', settings: { namespace: 'N', defaultLagGraceSeconds: 300, scheduleMinutes: 1.5 }, word: 'schedule' },
  ])('rejects bad settings: $case', ({ settings, word }) => {
    expect(alarmSettingsProblems(settings).join(' ')).toContain(word);
    expect(() => alarmDefinitions(settings)).toThrow(word);
  });

  it('perServiceQuery rejects a namespace it cannot quote', () => {
    expect(() => perServiceQuery('bad"ns')).toThrow(/namespace/);
  });

  it.each([
    { grace: 60, period: 60, expected: { periods: 1, capped: false } },
    { grace: 10_800, period: 60, expected: { periods: 180, capped: false } },
    { grace: 10_801, period: 60, expected: { periods: 180, capped: true } },
  ])('lagPeriods($grace, $period)', ({ grace, period, expected }) => {
    expect(lagPeriods(grace, period)).toEqual(expected);
  });
});

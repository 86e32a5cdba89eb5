/**
 * Local alarm evaluation: the stack's alarm definitions over metrics stamped with the pass clock.
 */
import { describe, expect, it } from 'vitest';
import { alarmDefinitions, DEFAULT_ALARM_SETTINGS } from '../../lambda/core/alarms';
import { METRIC } from '../../lambda/core/metric-names';
import { alarmLabel, LocalAlarms, stateKeyLabel, stateKey } from '../../local/alarms';

const START = Date.parse('2025-06-01T12:00:30.000Z');
const WEB = { cluster: 'shop', service: 'web' };

/** Alarms on a clock the test moves; `pass(minute, lag)` emits what one pass emits. */
function harness(settings = DEFAULT_ALARM_SETTINGS) {
  let now = START;
  const alarms = new LocalAlarms(alarmDefinitions(settings), { now: () => new Date(now) }, new Date(START));
  return {
    alarms,
    at: (minute: number) => {
      now = START + minute * 60_000;
      return new Date(now);
    },
    pass(minute: number, lag: number | undefined, opts: { succeeded?: boolean } = {}) {
      const at = this.at(minute);
      if (lag !== undefined) alarms.sink.serviceLag(WEB, lag);
      if (opts.succeeded !== false) alarms.sink.passMetric(METRIC.passSucceeded, 1, 'Count');
      alarms.sink.passMetric(METRIC.actionsFailed, 0, 'Count');
      void alarms.sink.flush();
      alarms.recordInvocation(at, false);
      return alarms.evaluate(at, (c) => (c === 'shop/web' ? 'TaskFailedToStart: CannotPullContainerError' : undefined));
    },
  };
}

describe('LocalAlarms', () => {
  it.each([
    { case: 'lag for 4 minutes stays OK (grace 300 s = 5 periods)', graceSeconds: 300, laggingPasses: 4, state: 'OK' },
    { case: 'lag for 5 minutes goes to ALARM', graceSeconds: 300, laggingPasses: 5, state: 'ALARM' },
    { case: 'a 120 s grace fires after 2 minutes', graceSeconds: 120, laggingPasses: 2, state: 'ALARM' },
    { case: 'a 120 s grace holds for 1 minute', graceSeconds: 120, laggingPasses: 1, state: 'OK' },
  ])('per-service lag alarm: $case', ({ graceSeconds, laggingPasses, state }) => {
    // Prepare
    const h = harness({ ...DEFAULT_ALARM_SETTINGS, defaultLagGraceSeconds: graceSeconds });
    for (let m = 0; m < 3; m++) h.pass(m, 0);
    for (let m = 3; m < 3 + laggingPasses; m++) h.pass(m, 2);

    // Act: the evaluation after the last lagging minute has closed.
    h.alarms.evaluate(h.at(3 + laggingPasses));

    // Assess
    expect(h.alarms.state('ServiceLagBeyondGrace', 'shop/web')).toBe(state);
    expect(h.alarms.state('ServiceLagBeyondGrace')).toBe(state);
  });

  it('does not count the datapoint of the minute still open', () => {
    // Prepare
    const h = harness();
    for (let m = 0; m < 3; m++) h.pass(m, 0);
    for (let m = 3; m < 7; m++) h.pass(m, 2);

    // Act: the fifth lagging pass, evaluated in its own (open) minute; then once it has closed.
    h.pass(7, 2);
    const during = h.alarms.state('ServiceLagBeyondGrace', 'shop/web');
    h.alarms.evaluate(h.at(8));

    // Assess
    expect(during).toBe('OK');
    expect(h.alarms.state('ServiceLagBeyondGrace', 'shop/web')).toBe('ALARM');
  });

  it('stays INSUFFICIENT_DATA until enough periods have passed since the start', () => {
    // Prepare
    const h = harness();

    // Act
    for (let m = 0; m < 4; m++) h.pass(m, 2);

    // Assess
    expect(h.alarms.state('ServiceLagBeyondGrace', 'shop/web')).toBe('INSUFFICIENT_DATA');
    expect(h.alarms.state('PassHeartbeat')).toBe('OK');
  });

  it('records the transition to ALARM with the latest datapoint and the reason, and back to OK', () => {
    // Prepare
    const h = harness();
    for (let m = 0; m < 3; m++) h.pass(m, 0);
    for (let m = 3; m < 8; m++) h.pass(m, 2);

    // Act
    const toAlarm = h.pass(8, 2);
    for (let m = 9; m < 14; m++) h.pass(m, 0);
    const later = h.pass(14, 0);

    // Assess
    expect(toAlarm).toContainEqual(
      expect.objectContaining({ alarm: 'ServiceLagBeyondGrace', contributor: 'shop/web', from: 'OK', to: 'ALARM', value: 2, reason: 'TaskFailedToStart: CannotPullContainerError' }),
    );
    expect(h.alarms.transitions.filter((t) => t.contributor === 'shop/web').map((t) => `${t.from}->${t.to}`)).toEqual([
      'INSUFFICIENT_DATA->OK',
      'OK->ALARM',
      'ALARM->OK',
    ]);
    expect(later).toEqual([]);
    expect(h.alarms.state('ServiceLagBeyondGrace', 'shop/web')).toBe('OK');
  });

  it('TaskLag only while lagging: silent while healthy stays OK, lag fires after the grace, the one recovery 0 returns to OK, silence after it stays OK', () => {
    // Prepare: what the pass emits (shouldEmitTaskLag): nothing while healthy, the lag every pass, one 0.
    const h = harness();
    const emitted: (number | undefined)[] = [
      ...Array<undefined>(6).fill(undefined), // healthy: no datapoint at all
      ...Array<number>(6).fill(2), // lagging past the 5-period grace
      0, // recovered: once at 0
      ...Array<undefined>(20).fill(undefined), // healthy again: silent
    ];
    const lag = alarmDefinitions().find((d) => d.id === 'ServiceLagBeyondGrace');
    // Act
    const states = emitted.map((v, m) => {
      h.pass(m, v);
      return h.alarms.state('ServiceLagBeyondGrace');
    });
    // Assess
    expect(lag?.treatMissingData).toBe('notBreaching');
    expect(states.slice(0, 6).every((s) => s !== 'ALARM')).toBe(true);
    expect(states.slice(6, 12)).toContain('ALARM');
    expect(states.at(-1)).toBe('OK');
    expect(states.slice(14)).toEqual(Array(states.length - 14).fill('OK'));
    expect(h.alarms.transitions.filter((t) => t.alarm === 'ServiceLagBeyondGrace' && t.to === 'ALARM')).toHaveLength(2); // contributor and alarm, once
  });

  it('the same silence under a breaching missing-data treatment would page: the treatment is what keeps quiet series cheap and silent', () => {
    // Prepare
    const defs = alarmDefinitions().map((d) => (d.id === 'ServiceLagBeyondGrace' ? { ...d, treatMissingData: 'breaching' as const } : d));
    let now = START;
    const alarms = new LocalAlarms(defs, { now: () => new Date(now) }, new Date(START));
    // Act: one lagging pass, its recovery 0, then 10 silent minutes.
    for (let m = 0; m < 12; m++) {
      now = START + m * 60_000;
      if (m === 0) alarms.sink.serviceLag(WEB, 2);
      if (m === 1) alarms.sink.serviceLag(WEB, 0);
      alarms.sink.passMetric(METRIC.passSucceeded, 1, 'Count');
      void alarms.sink.flush();
      alarms.recordInvocation(new Date(now), false);
      alarms.evaluate(new Date(now));
    }
    // Assess
    expect(alarms.state('ServiceLagBeyondGrace', 'shop/web')).toBe('ALARM');
  });

  it('fires the heartbeat alarm when passes stop (missing data is breaching)', () => {
    // Prepare
    const h = harness();
    for (let m = 0; m < 5; m++) h.pass(m, 0);
    expect(h.alarms.state('PassHeartbeat')).toBe('OK');

    // Act: no pass for 6 minutes, evaluated every minute as CloudWatch would.
    const states = [5, 6, 7, 8, 9, 10].map((m) => {
      h.alarms.evaluate(h.at(m));
      return h.alarms.state('PassHeartbeat');
    });

    // Assess
    expect(states).toContain('ALARM');
    expect(states[0]).toBe('OK');
  });

  it('fires the heartbeat alarm when passes run but cannot read their specs (no PassSucceeded)', () => {
    // Prepare
    const h = harness();
    h.pass(0, 0);

    // Act
    for (let m = 1; m <= 6; m++) h.pass(m, 0, { succeeded: false });

    // Assess
    expect(h.alarms.state('PassHeartbeat')).toBe('ALARM');
  });

  it('counts a pass that threw as a function error', () => {
    // Prepare
    const h = harness();

    // Act: the last 2 of 5 passes threw; evaluated once their minutes have closed.
    for (let m = 0; m < 5; m++) h.alarms.recordInvocation(h.at(m), m >= 3);
    h.alarms.evaluate(h.at(5));

    // Assess
    expect(h.alarms.state('FunctionErrors')).toBe('ALARM');
    expect(h.alarms.state('FunctionThrottles')).toBe('OK');
  });

  it.each([
    { case: 'a contributor of the Metrics Insights alarm', alarm: 'ServiceLagBeyondGrace', contributor: 'shop/ledger', label: 'ServiceLagBeyondGrace [shop/ledger]' },
    { case: 'the Metrics Insights alarm as a whole', alarm: 'ServiceLagBeyondGrace', contributor: undefined, label: 'ServiceLagBeyondGrace (any service)' },
    { case: 'an alarm on one metric', alarm: 'ServicesLaggingBeyondGrace', contributor: undefined, label: 'ServicesLaggingBeyondGrace' },
    { case: 'the heartbeat', alarm: 'PassHeartbeat', contributor: undefined, label: 'PassHeartbeat' },
  ] as const)('labels $case: $label', ({ alarm, contributor, label }) => {
    expect(alarmLabel(alarm, contributor)).toBe(label);
    expect(stateKeyLabel(stateKey(alarm, contributor))).toBe(label);
  });
});

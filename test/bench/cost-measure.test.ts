/**
 * The cost measurement of `npm run cost`: it counts custom metric series and
 * datapoints correctly from the EMF the Lambda's own sink (Powertools Metrics) writes, and a
 * measured healthy fleet (ECS simulator + dynalite) has no per-service series at all.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PowertoolsLog } from '../../lambda/adapters/logger';
import { PowertoolsMetricsSink } from '../../lambda/adapters/metrics';
import { METRIC } from '../../lambda/core/metric-names';
import { billTotal, captureStdout, countEmf, measureFleet, monthlyBill, PRICES, seriesKey } from '../../bench/cost-measure';

const PASS_METRICS = [
  METRIC.passSucceeded,
  METRIC.passDuration,
  METRIC.actionsApplied,
  METRIC.actionsFailed,
  METRIC.invalidSpecs,
  METRIC.driftCorrections,
  METRIC.servicesLaggingBeyondGrace,
];

/** One pass worth of metrics through the real sink: the per-pass metrics, then a flush. */
function emitPass(sink: PowertoolsMetricsSink, lags: [string, string, number][]): void {
  for (const [cluster, service, lag] of lags) sink.serviceLag({ cluster, service }, lag);
  for (const name of PASS_METRICS) sink.passMetric(name, name === METRIC.passDuration ? 120 : 1, name === METRIC.passDuration ? 'Milliseconds' : 'Count');
  sink.flush();
}

// EMF as in Lambda: no Powertools dev mode, metrics on.
beforeEach(() => {
  vi.stubEnv('POWERTOOLS_DEV', '');
  vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
});
afterEach(() => {
  vi.unstubAllEnvs();
});

describe('countEmf', () => {

  it('counts the series and datapoints of the EMF Powertools writes, JSON log lines in between ignored', async () => {
    // Prepare: two passes of the Lambda's sink; three services lag in the first (one service name in two
    // clusters), one reports its recovery 0 in the second; a second namespace; the logger's lines.
    const { lines } = await captureStdout(async () => {
      const sink = new PowertoolsMetricsSink('CostTest');
      const log = new PowertoolsLog(new Logger({ serviceName: 'cost-test' }));
      emitPass(sink, [
        ['apps', 'web', 2],
        ['apps', 'api', 1],
        ['batch', 'web', 3],
      ]);
      log.info('pass completed', { counts: { actionsApplied: 0 } });
      emitPass(sink, [['apps', 'web', 0]]);
      const other = new PowertoolsMetricsSink('OtherNs');
      other.passMetric(METRIC.passSucceeded, 1, 'Count');
      other.flush();
    });

    // Act
    const count = countEmf(lines);

    // Assess
    expect(lines.some((l) => l.includes('"pass completed"'))).toBe(true);
    expect(count.emfLines).toBe(3 + 1 + 1 + 1 + 1);
    const keys = [...count.series.keys()].sort();
    expect(keys).toEqual(
      [
        'CostTest|TaskLag|Cluster=apps,Service=api',
        'CostTest|TaskLag|Cluster=apps,Service=web',
        'CostTest|TaskLag|Cluster=batch,Service=web',
        ...PASS_METRICS.map((m) => `CostTest|${m}|`),
        'OtherNs|PassSucceeded|',
      ].sort(),
    );
    expect(count.datapoints).toBe(3 + 7 + 1 + 7 + 1);
  });

  it('publishes a metric once per dimension set and counts every value of an array', () => {
    // Prepare: an EMF document as the specification allows (two dimension sets, an array of values).
    const doc = {
      _aws: {
        Timestamp: 1736121630000,
        CloudWatchMetrics: [{ Namespace: 'Ns', Dimensions: [['Cluster'], ['Cluster', 'Service']], Metrics: [{ Name: 'Latency', Unit: 'Milliseconds' }] }],
      },
      Cluster: 'apps',
      Service: 'web',
      Latency: [10, 20, 30],
    };
    // Act
    const count = countEmf([JSON.stringify(doc), 'START RequestId: x Version: $LATEST', '{"level":"INFO","message":"not EMF"}']);
    // Assess
    expect([...count.series.keys()].sort()).toEqual(['Ns|Latency|Cluster=apps', 'Ns|Latency|Cluster=apps,Service=web']);
    expect(count.datapoints).toBe(6);
    expect(count.emfLines).toBe(1);
  });

  it('names the line when an EMF document lacks the value of a dimension it declares', () => {
    const doc = { _aws: { CloudWatchMetrics: [{ Namespace: 'Ns', Dimensions: [['Cluster']], Metrics: [{ Name: 'TaskLag' }] }] }, TaskLag: 1 };
    expect(() => countEmf([JSON.stringify(doc)])).toThrow(/dimension Cluster/);
  });

  it('keys a series by its dimensions whatever their order', () => {
    expect(seriesKey({ namespace: 'N', name: 'M', dimensions: { Service: 's', Cluster: 'c' } })).toBe(
      seriesKey({ namespace: 'N', name: 'M', dimensions: { Cluster: 'c', Service: 's' } }),
    );
  });
});

describe('measureFleet (simulator + dynalite)', () => {
  it('6 healthy services: only the 7 per-pass series, no TaskLag; reads, lease writes and log bytes are counted', async () => {
    // Act
    const m = await measureFleet({ services: 6, passes: 3 });
    // Assess
    expect(m.taskLagSeries).toBe(0);
    expect(m.series.map((s) => s.name).sort()).toEqual([...PASS_METRICS].sort());
    expect(m.datapointsPerPass).toBe(7);
    expect(m.statusesWritten).toBe(0);
    expect(m.actions).toBe(0);
    expect(m.readUnitsPerPass).toBeGreaterThan(0);
    expect(m.writeUnitsPerPass).toBeGreaterThanOrEqual(2); // the lease: put and delete
    // The same two writes reach the table's stream, but the fast path's filter drops the lease's.
    expect(m.streamRecordsPerPass).toBe(0);
    expect(m.streamInvocationBilledMs).toBeGreaterThanOrEqual(1);
    expect(m.stdoutBytesPerPass).toBeGreaterThan(300);
    expect(m.logBytesPerPass).toBeGreaterThan(m.stdoutBytesPerPass);
    // The bill follows from the measurement.
    const bill = monthlyBill(m);
    expect(bill.find((l) => l.item === 'Custom metrics')?.usd).toBeCloseTo(7 * PRICES.metricMonth, 6);
    expect(bill.find((l) => l.item === 'Metrics Insights alarm')?.usd).toBe(0);
    // Steady passes write no status: nothing of theirs passes the stream's filter.
    expect(bill.find((l) => l.item.startsWith('Fast-path invocations'))?.usd).toBe(0);
    expect(billTotal(bill)).toBeCloseTo(bill.reduce((s, l) => s + l.usd, 0), 9);
    expect(billTotal(bill)).toBeLessThan(15);
  });
});

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PowertoolsMetricsSink, InMemoryMetricsSink } from '../../lambda/adapters/metrics';
import { PowertoolsLog } from '../../lambda/adapters/logger';
import { DIMENSION, METRIC } from '../../lambda/core/metric-names';

/** Captures what Powertools writes to stdout and stderr (EMF blobs, JSON log lines). */
function captureStdout() {
  const lines: string[] = [];
  const record = (chunk: string | Uint8Array) => {
    lines.push(...String(chunk).split('\n').filter((l) => l.trim().length > 0));
    return true;
  };
  const spies = [vi.spyOn(process.stdout, 'write').mockImplementation(record), vi.spyOn(process.stderr, 'write').mockImplementation(record)];
  return {
    lines,
    json: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>),
    restore: () => spies.forEach((s) => s.mockRestore()),
  };
}

interface EmfBlob {
  _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] };
  [key: string]: unknown;
}

describe('PowertoolsMetricsSink (EMF)', () => {
  let out: ReturnType<typeof captureStdout>;
  beforeEach(() => {
    vi.stubEnv('POWERTOOLS_DEV', '');
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
    out = captureStdout();
  });
  afterEach(() => {
    out.restore();
    vi.unstubAllEnvs();
  });

  it('writes one TaskLag blob per service with exactly Cluster and Service dimensions', () => {
    // Prepare
    const sink = new PowertoolsMetricsSink('TestNs');
    sink.serviceLag({ cluster: 'apps', service: 'web' }, 3);
    sink.serviceLag({ cluster: 'apps', service: 'api' }, -2);

    // Act
    sink.flush();

    // Assess
    const blobs = out.json() as unknown as EmfBlob[];
    expect(blobs).toHaveLength(2);
    for (const b of blobs) {
      expect(b._aws.CloudWatchMetrics[0].Namespace).toBe('TestNs');
      expect(b._aws.CloudWatchMetrics[0].Dimensions).toEqual([[DIMENSION.cluster, DIMENSION.service]]);
      expect(b._aws.CloudWatchMetrics[0].Metrics).toEqual([{ Name: METRIC.taskLag, Unit: 'Count' }]);
      expect(b.service).toBeUndefined();
    }
    expect(blobs.map((b) => [b.Cluster, b.Service, b.TaskLag])).toEqual([
      ['apps', 'web', 3],
      ['apps', 'api', 0],
    ]);
  });

  it('writes the per-pass metrics in one blob without dimensions', () => {
    // Prepare
    const sink = new PowertoolsMetricsSink('TestNs');
    sink.passMetric(METRIC.passSucceeded, 1, 'Count');
    sink.passMetric(METRIC.passDuration, 1234, 'Milliseconds');
    sink.passMetric(METRIC.actionsFailed, 2, 'Count');

    // Act
    sink.flush();
    sink.flush();

    // Assess: the second flush has nothing to write.
    const blobs = out.json() as unknown as EmfBlob[];
    expect(blobs).toHaveLength(1);
    expect(blobs[0]._aws.CloudWatchMetrics[0].Dimensions).toEqual([]);
    expect(blobs[0]._aws.CloudWatchMetrics[0].Metrics).toEqual([
      { Name: METRIC.passSucceeded, Unit: 'Count' },
      { Name: METRIC.passDuration, Unit: 'Milliseconds' },
      { Name: METRIC.actionsFailed, Unit: 'Count' },
    ]);
    expect(blobs[0]).toMatchObject({ PassSucceeded: 1, PassDuration: 1234, ActionsFailed: 2 });
  });
});

describe('InMemoryMetricsSink', () => {
  it('keeps datapoints after flush and answers the latest per service', () => {
    const sink = new InMemoryMetricsSink();
    sink.serviceLag({ cluster: 'a', service: 'x' }, 4);
    expect(sink.latest(METRIC.taskLag, { cluster: 'a', service: 'x' })).toBeUndefined();
    sink.flush();
    sink.serviceLag({ cluster: 'a', service: 'x' }, 1);
    sink.serviceLag({ cluster: 'a', service: 'y' }, 7);
    sink.flush();
    expect(sink.latest(METRIC.taskLag, { cluster: 'a', service: 'x' })).toBe(1);
    expect(sink.latest(METRIC.taskLag, { cluster: 'a', service: 'y' })).toBe(7);
    expect(sink.data).toHaveLength(3);
  });
});

describe('PowertoolsLog', () => {
  it('writes one JSON line per call with the fields at top level', () => {
    vi.stubEnv('POWERTOOLS_DEV', '');
    const out = captureStdout();
    try {
      const log = new PowertoolsLog();
      log.info('UpdateService apps/web applied', { cluster: 'apps', changes: [{ field: 'desiredCount', from: '5', to: '2' }] });
      log.warn('lease release failed', { holder: 'p1' });
      const lines = out.json();
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatchObject({
        level: 'INFO',
        message: 'UpdateService apps/web applied',
        service: 'ecs-reconciler',
        cluster: 'apps',
        changes: [{ field: 'desiredCount', from: '5', to: '2' }],
      });
      expect(lines[1]).toMatchObject({ level: 'WARN', holder: 'p1' });
    } finally {
      out.restore();
      vi.unstubAllEnvs();
    }
  });
});

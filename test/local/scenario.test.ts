/**
 * The local run in process: one run of the example shop (servers on loopback, the real pass over
 * HTTP, the clock as fast as it goes), then every expectation of the scenario is shown to hold on
 * it and to fail, with its reason, when the record is changed to lack what it checks.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PassAction } from '../../lambda/core/pass';
import { parseSpecsYaml } from '../../lambda/core/spec';
import { runLocal, type LocalRunResult, type LocalSpec } from '../../local/run';
import { checkExpectations, convergenceTimes, EXPECTATIONS, type RunRecord } from '../../local/scenario';
import { PlainView, renderFrame, type RunView, type ViewModel } from '../../local/view';

function exampleSpecs(): LocalSpec[] {
  const { docs, errors } = parseSpecsYaml(readFileSync(new URL('../../examples/shop.yaml', import.meta.url), 'utf8'));
  if (errors.length > 0) throw new Error(JSON.stringify(errors));
  return docs.map((d) => {
    if (!d.result.ok) throw new Error(JSON.stringify(d.result.errors));
    return { spec: d.result.spec, hash: d.result.hash };
  });
}

/** A deep copy of the record, changed by `mutate`. */
function changed(record: RunRecord, mutate: (r: RunRecord) => void): RunRecord {
  const copy = structuredClone(record);
  mutate(copy);
  return copy;
}

/** Removes the actions `drop` matches from every pass of the record. */
function withoutActions(r: RunRecord, drop: (a: PassAction) => boolean): void {
  r.passes.forEach((p, i) => {
    if (p.summary) r.passes[i] = { ...p, summary: { ...p.summary, actions: p.summary.actions.filter((a) => !drop(a)) } };
  });
}

function stepAt(r: RunRecord, id: string): Date {
  const s = r.steps.find((x) => x.id === id);
  if (!s) throw new Error(`no step ${id}`);
  return s.at;
}

/** A plain view that also keeps, in order, each event and the header of each frame (as the live view draws it). */
class RecordingView implements RunView {
  readonly shown: ({ event: string } | { header: string })[] = [];
  private readonly plain: PlainView;
  constructor(write: (text: string) => void) {
    this.plain = new PlainView(write);
  }
  frame(model: ViewModel): void {
    this.shown.push({ header: renderFrame(model, []).split('\n')[0] });
  }
  event(at: Date, startedAt: Date, text: string): void {
    this.shown.push({ event: text });
    this.plain.event(at, startedAt, text);
  }
  close(): void {}
}

describe('the local run of the example shop', () => {
  let result: LocalRunResult;
  const lines: string[] = [];
  const view = new RecordingView((t) => lines.push(t));

  beforeAll(async () => {
    result = await runLocal({
      specs: exampleSpecs(),
      speed: 1e9,
      view,
      write: () => {},
      env: {},
    });
  });

  it('holds every expectation, each checked on the record', () => {
    // Assess
    expect(result.ok).toBe(true);
    expect(result.expectations.map((e) => [e.id, e.ok, e.detail])).toEqual(EXPECTATIONS.map((e) => [e.id, true, expect.any(String)]));
    expect(checkExpectations(result.record).every((e) => e.ok)).toBe(true);
  });

  it("observes ECS through events by default: the simulator's events, the construct's rules, the local queue, the Lambda's adapter", () => {
    // Assess
    const obs = result.record.observation;
    expect(obs?.mode).toBe('events');
    if (obs?.mode !== 'events') return;
    // Rules filtered: task transitions other than STOPPED, reads... were not delivered.
    expect(obs.bus.unmatched).toBeGreaterThan(0);
    expect(obs.bus.delivered).toBeGreaterThan(0);
    expect(obs.bus.heartbeats).toBe(result.record.passes.length);
    expect(obs.deadLettered).toBe(0);
    for (const p of result.record.passes) expect(p.summary?.events?.mode, `pass ${p.index + 1}`).toBe('events');
    // The reconciler's own writes came back as CloudTrail events and were ignored, not taken as hints.
    const received = result.record.passes.reduce((n, p) => n + (p.summary?.events?.received ?? 0), 0);
    const ignored = result.record.passes.reduce((n, p) => n + (p.summary?.events?.ignored ?? 0), 0);
    expect(received).toBe(obs.bus.delivered + obs.bus.heartbeats);
    expect(ignored).toBeGreaterThan(result.record.passes.length);
    expect(result.summary).toMatch(/Observation: events mode\. The simulator put \d+ events on the bus; the construct's rules delivered \d+ into the events queue/);
  });

  it('the observation expectation fails when a pass polled, or when a hand edit reached no pass as an event', () => {
    // Prepare
    const polled = changed(result.record, (r) => {
      const p = r.passes[3];
      if (p.summary?.events) r.passes[3] = { ...p, summary: { ...p.summary, events: { ...p.summary.events, mode: 'polling', reason: 'the queue cannot be read' } } };
    });
    const deaf = changed(result.record, (r) => {
      r.passes.forEach((p, i) => {
        if (p.summary?.events) r.passes[i] = { ...p, summary: { ...p.summary, events: { ...p.summary.events, services: 0 } } };
      });
    });
    const observation = EXPECTATIONS.filter((e) => e.id === 'observation');

    // Assess
    expect(checkExpectations(polled, observation)[0]).toMatchObject({ ok: false, detail: 'pass 4 polling (the queue cannot be read), not events' });
    expect(checkExpectations(deaf, observation)[0]).toMatchObject({ ok: false, detail: 'the pass after stopWebTasks, scaleWorker read no service for an event' });
  });

  it('prints timestamped lines for steps, actions and alarm transitions when not on a terminal', () => {
    // Assess
    const text = lines.join('');
    expect(text).toMatch(/^\[\d\d:\d\d:\d\d \+0m00s\] RegisterTaskDefinition shop\/web/m);
    expect(text).toMatch(/\[\d\d:\d\d:\d\d \+2m50s\] STEP stop every task of shop\/web by hand/);
    expect(text).toMatch(/UpdateService\(drift\) shop\/worker: desiredCount 6 -> 2/);
    expect(text).toMatch(/ALARM STATE ServiceLagBeyondGrace \[shop\/ledger\]: INSUFFICIENT_DATA -> ALARM .*CannotPullContainerError/);
    expect(text).toMatch(/ALARM STATE ServiceLagBeyondGrace \(any service\): INSUFFICIENT_DATA -> ALARM\n/);
  });

  it('numbers passes from 1 in the log lines and in the live header alike', () => {
    // Prepare: each `pass N:` line and the header of the first frame drawn after it.
    const pairs: [string, string | undefined][] = [];
    view.shown.forEach((x, i) => {
      const n = 'event' in x ? /^pass (\d+): \d+ applied/.exec(x.event)?.[1] : undefined;
      if (n === undefined) return;
      const next = view.shown.slice(i + 1).find((y): y is { header: string } => 'header' in y);
      pairs.push([n, next && /pass (\d+)\/14/.exec(next.header)?.[1]]);
    });

    // Assess
    expect(pairs).toEqual(Array.from({ length: 14 }, (_, i) => [String(i + 1), String(i + 1)]));
    expect(lines.join('')).toMatch(/^\[\d\d:\d\d:\d\d \+0m00s\] pass 1: /m);
    expect(lines.join('')).toMatch(/^\[\d\d:\d\d:\d\d \+13m00s\] pass 14: /m);
  });

  it('summarizes phases, actions, times to converge, alarms and API calls', () => {
    // Assess
    const s = result.summary;
    // One action per line in its cell (a table row spans several lines).
    expect(s).toMatch(/shop\/web +│ Converged +│ RegisterTaskDefinition 2 .*\n.*│ ECS ACTIVE 3\/3 +│ CreateService 1 .*\n.*│ UpdateService\(rollout\) 1/);
    expect(s).toMatch(/shop\/thumbnails +│ Deleted +│ RegisterTaskDefinition 1 .*\n.*CreateService 1 .*\n.*DeleteService 1/);
    expect(s).toMatch(/shop\/ledger .* Degraded .* created: never/);
    expect(s).toMatch(/ServiceLagBeyondGrace \[shop\/ledger\] -> ALARM/);
    expect(s).toMatch(/ServiceLagBeyondGrace \(any service\) -> ALARM/);
    expect(s).toMatch(/in ALARM at the end: .*ServiceLagBeyondGrace \[shop\/ledger\]/);
    expect(s).toMatch(/│ DescribeTaskDefinition +│ \d+ +│ \d+ +│ 0 +│ \d+ \(expected\) +│/);
    expect(s).toMatch(/│ CreateService +│ 4 +│ 4 +│ 0 +│ 0 +│/);
    expect(s).toMatch(/Result: all 10 expectations held\./);
    const times = convergenceTimes(result.record);
    expect(times.find((t) => t.service === 'shop/ledger' && t.label === 'created')?.seconds).toBeNull();
    expect(times.find((t) => t.service === 'shop/web' && t.label === 'created')?.seconds).toBeGreaterThan(0);
  });

  it.each([
    {
      case: 'a pass threw',
      id: 'passes',
      mutate: (r: RunRecord) => {
        r.passes[3] = { ...r.passes[3], summary: undefined, error: 'boom' };
      },
      detail: /pass 4 boom/, // passes[3] is the fourth pass
    },
    {
      case: 'a service was never created',
      id: 'created',
      mutate: (r: RunRecord) => {
        withoutActions(r, (a) => a.service === 'thumbnails');
      },
      detail: /shop\/thumbnails was never created/,
    },
    {
      case: 'the reconciler wrote to a service whose tasks ECS replaces by itself',
      id: 'tasks-return',
      mutate: (r: RunRecord) => {
        const at = new Date(stepAt(r, 'stopWebTasks').getTime() + 1000);
        r.calls.push({ seq: 1e6, action: 'UpdateService', at, outcome: 'ok', request: { cluster: 'shop', service: 'web', desiredCount: 3 } });
      },
      detail: /sent UpdateService for shop\/web/,
    },
    {
      case: 'the stopped tasks never came back',
      id: 'tasks-return',
      mutate: (r: RunRecord) => {
        const at = stepAt(r, 'stopWebTasks');
        for (const p of r.passes) {
          const st = p.summary?.statuses['shop/web'];
          if (p.at >= at && st) p.summary!.statuses['shop/web'] = { ...st, phase: 'Progressing', runningCount: 1 };
        }
      },
      detail: /never ran 3 tasks again/,
    },
    {
      case: 'the drift was not corrected',
      id: 'drift',
      mutate: (r: RunRecord) => {
        withoutActions(r, (a) => a.service === 'worker' && a.type === 'UpdateService');
      },
      detail: /made no UpdateService for shop\/worker/,
    },
    {
      case: 'the service ended at the hand-made count',
      id: 'drift',
      mutate: (r: RunRecord) => {
        r.live['shop/worker'] = { ...r.live['shop/worker'], desiredCount: 6 };
      },
      detail: /ends with desiredCount 6/,
    },
    {
      case: 'the new revision is not live',
      id: 'rollout',
      mutate: (r: RunRecord) => {
        r.live['shop/web'] = { ...r.live['shop/web'], taskDefinition: r.live['shop/web'].taskDefinition.replace(/:2$/, ':1') };
      },
      detail: /not revision 2/,
    },
    {
      case: 'the pruned service is still ACTIVE',
      id: 'prune',
      mutate: (r: RunRecord) => {
        r.live['shop/thumbnails'] = { ...r.live['shop/thumbnails'], status: 'ACTIVE' };
      },
      detail: /still ACTIVE/,
    },
    {
      case: 'the failed rollout was re-applied',
      id: 'failed-rollout',
      mutate: (r: RunRecord) => {
        r.calls.push({ seq: 1e6, action: 'UpdateService', at: r.passes[5].at, outcome: 'ok', request: { cluster: 'shop', service: 'ledger' } });
      },
      detail: /UpdateService 1 \(want 1, 1, 0\)/,
    },
    {
      case: 'the failed spec was not remembered',
      id: 'failed-rollout',
      mutate: (r: RunRecord) => {
        const item = r.items['shop/ledger'];
        if (item?.status) item.status.failedSpecHash = undefined;
      },
      detail: /failedSpecHash \(none\)/,
    },
    {
      case: 'the lag alarm never fired',
      id: 'lag-alarm',
      mutate: (r: RunRecord) => {
        r.alarms.splice(0, r.alarms.length, ...r.alarms.filter((a) => a.contributor !== 'shop/ledger'));
      },
      detail: /never went to ALARM for shop\/ledger/,
    },
    {
      case: 'the alarm came without the stop reason',
      id: 'lag-alarm',
      mutate: (r: RunRecord) => {
        const i = r.alarms.findIndex((a) => a.contributor === 'shop/ledger' && a.to === 'ALARM');
        r.alarms[i] = { ...r.alarms[i], reason: 'something else' };
      },
      detail: /not the stop reason/,
    },
    {
      case: 'another alarm fired',
      id: 'no-false-alarm',
      mutate: (r: RunRecord) => {
        r.alarms.push({ at: r.passes[6].at, alarm: 'PassHeartbeat', from: 'OK', to: 'ALARM' });
      },
      detail: /ALARM: PassHeartbeat/,
    },
    {
      case: 'another service lagged beyond grace (counted by ServicesLaggingBeyondGrace)',
      id: 'no-false-alarm',
      mutate: (r: RunRecord) => {
        const status = r.passes[8].summary?.statuses['shop/web'];
        if (status) (status as { lagBeyondGrace?: boolean }).lagBeyondGrace = true;
      },
      detail: /shop\/web lagged beyond grace too/,
    },
  ])('$case: "$id" does not hold, and says why', ({ id, mutate, detail }) => {
    // Prepare
    const record = changed(result.record, mutate);

    // Act
    const outcome = checkExpectations(record).find((e) => e.id === id);

    // Assess
    expect(outcome?.ok).toBe(false);
    expect(outcome?.detail).toMatch(detail);
  });

  it('fails the step-driven expectations when the steps did not run', () => {
    // Prepare
    const record = changed(result.record, (r) => {
      r.steps.splice(0);
    });

    // Act
    const failed = checkExpectations(record).filter((e) => !e.ok);

    // Assess
    expect(failed.map((e) => [e.id, e.detail])).toEqual([
      ['observation', 'the step did not run'],
      ['tasks-return', 'the step did not run'],
      ['drift', 'the step did not run'],
      ['rollout', 'the step did not run'],
      ['prune', 'the step did not run'],
    ]);
  });
});

describe('the local run with --no-events (events: false)', () => {
  it('polls the whole fleet every pass, says so, and still holds every expectation', async () => {
    // Act
    const result = await runLocal({ specs: exampleSpecs(), speed: 1e9, view: new RecordingView(() => {}), write: () => {}, env: {}, events: false });

    // Assess
    expect(result.record.observation).toEqual({ mode: 'polling' });
    expect(result.record.passes.every((p) => p.summary !== undefined && p.summary.events === undefined)).toBe(true);
    expect(result.expectations.map((e) => [e.id, e.ok])).toEqual(EXPECTATIONS.map((e) => [e.id, true]));
    expect(result.expectations.find((e) => e.id === 'observation')?.detail).toBe('polling (--no-events): every pass read the whole fleet');
    expect(result.summary).toContain('Observation: polling (--no-events): every pass read the whole fleet.');
  }, 120_000);
});

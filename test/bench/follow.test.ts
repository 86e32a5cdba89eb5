/**
 * The pass benchmark's follow-up of changes (bench/pass-bench.ts `follow`) and the report's pass
 * list (bench/report.ts `containerPasses`): changes made together (spec edits and hand edits
 * behind the drift) are followed by the same passes, each change until its own targets are acted
 * on; a shared pass is listed once per container.
 */
import { describe, expect, it } from 'vitest';
import { benchSpecItem } from '../../bench/fixtures';
import { follow, type MeasuredPass, type PassRunner, type Scenario } from '../../bench/pass-bench';
import type { PassResult } from '../../bench/protocol';
import { containerPasses } from '../../bench/report';
import type { CallRecord } from '../../local/sim';

const AT = new Date('2026-12-02T10:00:00Z');

/** An UpdateService of service `i` answered `seconds` after {@link AT}. */
function update(i: number, seconds: number, outcome = 'ok'): CallRecord {
  const item = benchSpecItem(i);
  return { seq: 1, action: 'UpdateService', at: new Date(AT.getTime() + seconds * 1000), outcome, request: { cluster: item.cluster, service: item.service } };
}

/** A container whose passes answer the given call logs in turn (a pass's figures are not looked at). */
function scripted(logs: CallRecord[][]): PassRunner & { asked: { scenario: Scenario; index: number }[] } {
  let n = 0;
  const asked: { scenario: Scenario; index: number }[] = [];
  return {
    mode: 'on',
    fleet: { services: 1000 },
    asked,
    async pass(scenario, index) {
      asked.push({ scenario, index });
      const calls = logs[n] ?? [];
      n += 1;
      const measured = { services: 1000, mode: 'on', scenario, index, pass: 10 + n, result: {} as PassResult } as MeasuredPass;
      return { measured, calls };
    },
  };
}

describe('follow', () => {
  it('follows changes made together by the same passes, each until its own targets are acted on', async () => {
    // Pass 1: both spec edits and one of the two hand edits; pass 2: the other hand edit.
    const c = scripted([[update(1, 30), update(2, 31), update(5, 40), update(7, 45, 'ThrottlingException')], [update(7, 95)], [update(9, 150)]]);
    const [edits, behind] = await follow(
      c,
      [
        { scenario: 'spec edit', targets: [1, 2] },
        { scenario: 'hand edit behind drift', targets: [5, 7] },
      ],
      AT,
      2,
    );
    expect(c.asked).toEqual([
      { scenario: 'spec edit', index: 1 },
      { scenario: 'hand edit behind drift', index: 2 },
    ]);
    expect(edits).toMatchObject({ scenario: 'spec edit', targets: 2, actedOn: 2, actedByPass: [2], editToCallSeconds: [30, 31] });
    expect(edits.passes.map((p) => [p.scenario, p.index, p.pass])).toEqual([['spec edit', 1, 11]]);
    expect(behind).toMatchObject({ scenario: 'hand edit behind drift', targets: 2, actedOn: 2, actedByPass: [1, 2], editToCallSeconds: [40, 95] });
    expect(behind.passes.map((p) => [p.scenario, p.index, p.pass])).toEqual([
      ['hand edit behind drift', 1, 11],
      ['hand edit behind drift', 2, 12],
    ]);
    // The report lists the shared pass once, under both names.
    expect(containerPasses([edits, behind]).map((p) => [p.pass.pass, p.names])).toEqual([
      [11, 'spec edit 1 / hand edit behind drift 1'],
      [12, 'hand edit behind drift 2'],
    ]);
  });

  it('stops at the follow bound with targets left, and runs no pass for a change without targets', async () => {
    const c = scripted([[], [], []]);
    const [drift, none] = await follow(
      c,
      [
        { scenario: 'drift', targets: [3, 4] },
        { scenario: 'hand edit behind drift', targets: [] },
      ],
      AT,
      2,
    );
    expect(c.asked).toHaveLength(2);
    expect(drift).toMatchObject({ targets: 2, actedOn: 0, actedByPass: [0, 0] });
    expect(drift.passes).toHaveLength(2);
    expect(none).toMatchObject({ targets: 0, actedOn: 0, actedByPass: [], passes: [] });
  });
});

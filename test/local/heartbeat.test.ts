/**
 * The local run's heartbeat item (local/heartbeat.ts): what `ecsr get` prints from it, and that a
 * damaged or hand-made item is not read as one.
 */
import { describe, expect, it } from 'vitest';
import { heartbeatItem, heartbeatLine, LOCAL_RUN_KEY, readHeartbeat, type LocalRunHeartbeat } from '../../local/heartbeat';
import { isReservedItem } from '../../lambda/adapters/dynamo-spec-store';

const beat: LocalRunHeartbeat = {
  pass: 42,
  passAt: '2026-12-02T08:43:30.000Z',
  realAt: '2026-12-02T07:40:00.000Z',
  speed: 13,
  outcome: 'completed',
  actionsApplied: 1,
  actionsFailed: 0,
};

describe('the local run heartbeat', () => {
  it('is a reserved item, never a spec, and reads back as written', () => {
    const item = heartbeatItem(beat);
    expect(item).toMatchObject(LOCAL_RUN_KEY);
    expect(isReservedItem(item)).toBe(true);
    expect(readHeartbeat(item)).toEqual(beat);
  });

  it('says the last pass, how long ago in real time, and how far the simulated clock runs ahead', () => {
    const line = heartbeatLine(beat, Date.parse('2026-12-02T07:40:03.000Z'));
    expect(line).toBe(
      "Last pass: 42 at 2026-12-02 08:43:30Z simulated, 3 s ago (the local run's clock runs 13x real time, 1h03m ahead of this computer's); 1 applied, 0 failed.",
    );
  });

  it('says when no pass came for three passes of real time', () => {
    // 13x: a pass every 4.6 s; 30 s is the least it waits.
    expect(heartbeatLine(beat, Date.parse('2026-12-02T07:40:20.000Z'))).not.toContain('still running');
    expect(heartbeatLine(beat, Date.parse('2026-12-02T07:41:00.000Z'))).toMatch(/1m00s ago .*; no pass since: is ecsr local still running\?$/);
  });

  it('at --speed 1 says the clocks run together, and names an outcome other than completed', () => {
    const line = heartbeatLine({ ...beat, speed: 1, passAt: beat.realAt, outcome: 'lease-held' }, Date.parse('2026-12-02T07:40:01.000Z'));
    expect(line).toBe("Last pass: 42 at 2026-12-02 07:40:00Z simulated, 1 s ago (the local run's clock runs at real time); lease-held.");
  });

  it.each([
    { case: 'another reserved item', item: { cluster: '#lease', service: '#lease', holder: 'x' } },
    { case: 'a pass that is not a count', item: { ...heartbeatItem(beat), pass: 'many' } },
    { case: 'a time that is not one', item: { ...heartbeatItem(beat), passAt: 'yesterday' } },
    { case: 'a speed of zero', item: { ...heartbeatItem(beat), speed: 0 } },
  ])('is not read from $case', ({ item }) => {
    expect(readHeartbeat(item)).toBeUndefined();
  });
});

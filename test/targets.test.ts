/**
 * Targets: declarations, the key scheme, merging the prop's and the table's
 * targets, the fan-out message and its staleness, and TARGETS in the configuration.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, ENV, loadConfig } from '../lambda/config';
import {
  DEFAULT_TARGET,
  FAN_OUT_MESSAGE_KIND,
  isStale,
  keysByTarget,
  mergeTargets,
  parseFanOutMessage,
  parseTarget,
  partitionKeyOf,
  splitPartitionKey,
  type FanOutMessage,
} from '../lambda/core/targets';
import { LEASE_HELD_REQUEUE_DELAYS_SECONDS, requeueAfterLeaseHeld } from '../lambda/core/fan-out';
import { FAST_PATH_LEASE_WAIT_MS } from '../lambda/core/fast-path';

const staging = { name: 'staging', account: '222222222222', region: 'eu-west-1', clusters: ['web'], roleArn: 'arn:aws:iam::222222222222:role/ecs-reconciler-target' };

describe('target declarations', () => {
  it('reads a valid declaration and refuses what is wrong, one sentence per problem', () => {
    expect(parseTarget(staging, 'prop')).toEqual({ ok: true, target: { ...staging, source: 'prop' } });
    const bad = parseTarget({ name: 'Staging', account: '2222', region: 'eu-west-1', roleArn: 'arn:aws:iam::999999999999:role/x', rolearn: 'typo' }, 'table');
    expect(bad.ok).toBe(false);
    const errors = bad.ok ? [] : bad.errors;
    expect(errors.join('\n')).toMatch(/name must be 1-32 lowercase/);
    expect(errors.join('\n')).toMatch(/account must be a 12-digit/);
    expect(errors.join('\n')).toMatch(/rolearn/);
    expect(parseTarget({ name: 'x', account: '222222222222', region: 'eu-west-1', roleArn: 'arn:aws:iam::999999999999:role/x' }, 'prop')).toMatchObject({
      ok: false,
      errors: [expect.stringMatching(/must be a role of the target's account 222222222222/)],
    });
    expect(parseTarget({ name: 'x', account: '222222222222', region: 'eu-west-1' }, 'prop')).toMatchObject({ ok: false, errors: [expect.stringMatching(/roleArn is required/)] });
    expect(parseTarget({ name: DEFAULT_TARGET, clusters: ['apps'] }, 'table')).toMatchObject({ ok: true });
  });

  it('the key scheme: plain cluster names are the default target, <target>/<cluster> another', () => {
    expect(splitPartitionKey('web')).toEqual({ target: DEFAULT_TARGET, cluster: 'web' });
    expect(splitPartitionKey('staging/web')).toEqual({ target: 'staging', cluster: 'web' });
    expect(partitionKeyOf(DEFAULT_TARGET, 'web')).toBe('web');
    expect(partitionKeyOf('staging', 'web')).toBe('staging/web');
    expect([...keysByTarget([{ cluster: 'web', service: 'a' }, { cluster: 'staging/web', service: 'a' }, { cluster: 'staging/jobs', service: 'b' }])]).toEqual([
      [DEFAULT_TARGET, [{ cluster: 'web', service: 'a' }]],
      ['staging', [{ cluster: 'web', service: 'a' }, { cluster: 'jobs', service: 'b' }]],
    ]);
  });

  it('merging: the prop wins over an item of the same name, default is always there, bad items are reported', () => {
    const fromProp = [parseTarget(staging, 'prop')];
    const fromTable = [
      parseTarget({ ...staging, region: 'us-east-1' }, 'table'),
      parseTarget({ ...staging, name: 'sandbox', account: '333333333333', roleArn: 'arn:aws:iam::333333333333:role/ecs-reconciler-target' }, 'table'),
      parseTarget({ name: 'bad!' }, 'table'),
    ];
    const set = mergeTargets(fromProp, fromTable, ['apps']);
    expect(set.targets.map((t) => [t.name, t.source, t.region])).toEqual([
      [DEFAULT_TARGET, 'implicit', undefined],
      ['sandbox', 'table', 'eu-west-1'],
      ['staging', 'prop', 'eu-west-1'],
    ]);
    expect(set.targets[0].clusters).toEqual(['apps']);
    expect(set.problems[0]).toMatch(/staging: the table item is ignored/);
    expect(set.problems.slice(1).every((p) => p.startsWith('target bad!: '))).toBe(true);
    expect(set.problems.slice(1).join('\n')).toMatch(/name must be/);
  });
});

describe('one target per account and Region', () => {
  const at = (name: string, account: string, region = 'eu-west-1') => ({ name, account, region, roleArn: `arn:aws:iam::${account}:role/ecs-reconciler-target` });

  it('refuses a second target in an account and Region another holds: default first, then prop targets, then items by name', () => {
    const set = mergeTargets(
      [parseTarget(at('blue', '222222222222'), 'prop')],
      [parseTarget(at('azure', '222222222222'), 'table'), parseTarget(at('green', '222222222222', 'us-east-1'), 'table'), parseTarget(at('home', '111111111111'), 'table')],
      [],
      { account: '111111111111', region: 'eu-west-1' },
    );
    expect(set.targets.map((t) => t.name)).toEqual([DEFAULT_TARGET, 'blue', 'green']);
    expect(set.problems).toHaveLength(2);
    expect(set.problems[0]).toMatch(/^target azure: account 222222222222 Region eu-west-1 is already target blue's; one target per account and Region/);
    expect(set.problems[1]).toMatch(/^target home: account 111111111111 Region eu-west-1 is already target default's/);
  });

  it('without the home account known, still refuses two declared targets in one place', () => {
    const set = mergeTargets([], [parseTarget(at('blue', '222222222222'), 'table'), parseTarget(at('green', '222222222222'), 'table')], []);
    expect(set.targets.map((t) => t.name)).toEqual([DEFAULT_TARGET, 'blue']);
    expect(set.problems).toEqual([expect.stringMatching(/^target green: .* already target blue's/)]);
  });

  it('"default" stays the reconciler\'s own account, Region and role: a declaration may give it clusters, never a place', () => {
    expect(parseTarget({ name: DEFAULT_TARGET, clusters: ['web'] }, 'table')).toMatchObject({ ok: true, target: { name: DEFAULT_TARGET, clusters: ['web'] } });
    const moved = parseTarget({ name: DEFAULT_TARGET, account: '999999999999', region: 'us-east-1', roleArn: 'arn:aws:iam::999999999999:role/x' }, 'table');
    expect(moved.ok).toBe(false);
    expect(moved.ok ? [] : moved.errors).toEqual([
      expect.stringMatching(/^target default: account cannot be set: "default" is the reconciler's own account/),
      expect.stringMatching(/^target default: region cannot be set/),
      expect.stringMatching(/^target default: roleArn cannot be set/),
    ]);
  });
});

describe('the fan-out message', () => {
  const now = new Date('2026-12-02T06:00:00Z');
  const message = (sentAt: string, keys?: { cluster: string; service: string }[]): FanOutMessage => ({
    kind: FAN_OUT_MESSAGE_KIND,
    target: { ...staging, source: 'table' },
    sentAt,
    declared: [DEFAULT_TARGET, 'staging'],
    ...(keys ? { keys } : {}),
  });

  it('round-trips through JSON with the declaration re-validated; anything else is refused with the reason', () => {
    const m = message(now.toISOString(), [{ cluster: 'web', service: 'api' }]);
    expect(parseFanOutMessage(JSON.stringify(m))).toEqual({ ok: true, message: m });
    expect(parseFanOutMessage('{')).toEqual({ ok: false, error: 'the body is not JSON' });
    expect(parseFanOutMessage(JSON.stringify({ ...m, target: { ...staging, account: 'x' } }))).toMatchObject({ ok: false, error: expect.stringMatching(/account/) });
  });

  it('a fast-path message that finds its lease held goes back with the next delay until the delays (30 s, as the single-target wait) are spent; a scheduled one never', () => {
    // Prepare
    let m: FanOutMessage = message(now.toISOString(), [{ cluster: 'web', service: 'api' }]);
    const delays: number[] = [];

    // Act: each delivery finds the lease held
    for (let again = requeueAfterLeaseHeld(m); again; again = requeueAfterLeaseHeld(m)) {
      delays.push(again.delaySeconds);
      m = again.message;
      expect(parseFanOutMessage(JSON.stringify(m))).toEqual({ ok: true, message: m });
    }

    // Assess
    expect(delays).toEqual([...LEASE_HELD_REQUEUE_DELAYS_SECONDS]);
    expect(delays.reduce((a, b) => a + b, 0) * 1000).toBe(FAST_PATH_LEASE_WAIT_MS);
    expect(m).toMatchObject({ leaseTries: delays.length, sentAt: now.toISOString(), keys: [{ cluster: 'web', service: 'api' }] });
    expect(requeueAfterLeaseHeld(message(now.toISOString()))).toBeUndefined();
    expect(parseFanOutMessage(JSON.stringify({ ...m, leaseTries: -1 }))).toMatchObject({ ok: false, error: expect.stringMatching(/leaseTries/) });
  });

  it('a scheduled message older than one interval is stale; a fast-path one lives 5 minutes', () => {
    expect(isStale(message('2026-12-02T05:59:30Z'), now, 60)).toBe(false);
    expect(isStale(message('2026-12-02T05:58:30Z'), now, 60)).toBe(true);
    expect(isStale(message('2026-12-02T05:58:30Z', [{ cluster: 'web', service: 'a' }]), now, 60)).toBe(false);
    expect(isStale(message('2026-12-02T05:54:30Z', [{ cluster: 'web', service: 'a' }]), now, 60)).toBe(true);
  });
});

describe('TARGETS and FANOUT_QUEUE_URL in the configuration', () => {
  const base = { [ENV.specsTable]: 'specs', [ENV.fanOutQueueUrl]: 'https://sqs.eu-west-1.amazonaws.com/111111111111/fanout' };

  it('parses the targets the construct hands over; without the queue there is no fan-out', () => {
    const config = loadConfig({ ...base, [ENV.targets]: JSON.stringify([staging]), [ENV.scheduleMinutes]: '2' });
    expect(config.fanOut).toMatchObject({ queueUrl: base[ENV.fanOutQueueUrl], scheduleSeconds: 120, propTargets: [{ ok: true, target: { name: 'staging' } }] });
    expect(loadConfig({ [ENV.specsTable]: 'specs' }).fanOut).toBeUndefined();
  });

  it('refuses bad TARGETS naming the variable and each problem', () => {
    expect(() => loadConfig({ ...base, [ENV.targets]: 'nope' })).toThrow(/TARGETS must be a JSON array/);
    expect(() => loadConfig({ ...base, [ENV.targets]: JSON.stringify([staging, staging]) })).toThrow(/target staging is declared twice/);
    try {
      loadConfig({ ...base, [ENV.targets]: JSON.stringify([{ ...staging, region: 'moon' }]) });
      throw new Error('not refused');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).variables).toEqual([ENV.targets]);
    }
  });
});

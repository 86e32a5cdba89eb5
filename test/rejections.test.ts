import { describe, expect, it } from 'vitest';
import { holdRejected, recordRejection, rejectionDelaySeconds } from '../lambda/core/rejections';
import type { Action, ServiceStatus } from '../lambda/core/types';

const update = { type: 'UpdateService', cluster: 'apps', service: 'web', reason: 'r', specHash: 'h1', changes: [], input: { cluster: 'apps', service: 'web' } } as unknown as Action;
const tag = { type: 'TagResource', cluster: 'apps', service: 'web', reason: 'r', resourceArn: 'arn', tags: [{ key: 'team', value: 'a' }] } as unknown as Action;

describe('refused actions: backoff', () => {
  it('waits 1, 2, 4, 8 minutes, then 15 minutes at most', () => {
    expect([1, 2, 3, 4, 5, 6, 40].map(rejectionDelaySeconds)).toEqual([60, 120, 240, 480, 900, 900, 900]);
    expect(rejectionDelaySeconds(0)).toBe(60);
    expect(rejectionDelaySeconds(Number.NaN)).toBe(60);
  });

  it('counts refusals of the same call for the same spec hash; another hash starts over', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const first = recordRejection(undefined, { action: update, errorClass: 'denied', message: 'no' }, 'h1', now);
    const second = recordRejection(first, { action: update, errorClass: 'denied', message: 'no' }, 'h1', new Date('2026-01-01T00:01:00Z'));
    const other = recordRejection(second, { action: update, errorClass: 'invalid', message: 'bad' }, 'h2', new Date('2026-01-01T00:02:00Z'));
    expect(first).toMatchObject({ attempts: 1, reason: 'AccessDenied', message: 'UpdateService: no', retryAfter: '2026-01-01T00:01:00.000Z' });
    expect(second).toMatchObject({ attempts: 2, since: first.since, retryAfter: '2026-01-01T00:03:00.000Z' });
    expect(other).toMatchObject({ attempts: 1, reason: 'EcsRejected', specHash: 'h2' });
  });

  it('holds a refused tag update alone, not the rollout beside it', () => {
    const now = new Date('2026-01-01T00:00:30Z');
    const rejection = recordRejection(undefined, { action: tag, errorClass: 'denied', message: 'no' }, 'h1', new Date('2026-01-01T00:00:00Z'));
    const status = { specHash: 'h1' } as ServiceStatus;
    const held = holdRejected([tag, update], { 'apps/web': status }, { 'apps/web': { ...status, rejection } }, now);
    expect(held.actions).toEqual([update]);
    expect(holdRejected([tag, update], { 'apps/web': status }, { 'apps/web': { ...status, rejection } }, now, true).actions).toEqual([tag, update]);
  });
});

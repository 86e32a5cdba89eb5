/**
 * ECS refusing an action (dynalite + the ECS simulator): AccessDenied from IAM, a Fargate rule
 * ECS enforces. The refusal is the status's reason in ECS's words wherever people look, it is
 * classified as what it is, and the same call for the same spec is retried with backoff, at once
 * when the spec changes or a person asks (`retryRejected`).
 */
import { describe, expect, it } from 'vitest';
import { statusRow } from '../../bin/commands/support/format';
import { SpecTable } from '../../bin/commands/support/spec-table';
import { progressLine } from '../../bin/commands/support/wait';
import { Reason } from '../../lambda/core/status';
import type { ServiceStatus } from '../../lambda/core/types';
import { statusReason } from '../../local/view';
import { aSpecItem, useSimHarness } from './support';

const WEB = { cluster: 'apps', service: 'web' };
const DENIED = 'User: arn:aws:sts::123456789012:assumed-role/reconciler/fn is not authorized to perform: ecs:UpdateService on resource: arn:aws:ecs:us-east-1:123456789012:service/apps/web';

const condition = (s: ServiceStatus | undefined, type: string) => s?.conditions.find((c) => c.type === type);

describe('an action ECS refuses', () => {
  const h = useSimHarness();

  /**
   * UpdateService actions a pass started. (Not the simulator's call count: the SDK retries a
   * refused call once it corrects its clock skew, and the simulator's clock runs ahead.)
   */
  const updates = (s: { actions: readonly { type: string; outcome: string }[] }) =>
    s.actions.filter((a) => a.type === 'UpdateService' && a.outcome !== 'skipped').length;

  it('UpdateService answered AccessDenied: the refusal is the reason everywhere, classified as denied, retried with backoff', async () => {
    // Prepare: a converged service, then a new image whose UpdateService IAM refuses.
    await h.putSpec(aSpecItem({ desiredCount: 1 }));
    await h.converge();
    await h.editSpec(WEB, { image: 'public.ecr.aws/nginx/nginx:1.28' });
    h.sim.injectFault({ action: 'UpdateService', fraction: 1, errorType: 'AccessDeniedException', message: DENIED });
    h.sim.advance(60);

    // Act
    const refused = await h.pass('refused');

    // Assess: the item's status says what ECS said, and nothing claims progress or sync.
    const s = await h.status(WEB);
    expect(refused.actions.find((a) => a.type === 'UpdateService')?.outcome).toBe('failed');
    expect(s?.phase).toBe('Degraded');
    expect(s?.reason).toBe(`UpdateService: ${DENIED}`);
    expect(condition(s, 'ActionRejected')).toMatchObject({ status: 'True', reason: Reason.AccessDenied, message: `UpdateService: ${DENIED}` });
    expect(condition(s, 'Ready')).toMatchObject({ status: 'False', reason: Reason.AccessDenied });
    expect(condition(s, 'Progressing')).toMatchObject({ status: 'False', reason: Reason.AccessDenied });
    expect(s?.lastAction?.error).toBe(`denied: ${DENIED}`);
    expect(statusReason(s as ServiceStatus)).toBe(`AccessDenied: UpdateService: ${DENIED}`);
    const entry = await new SpecTable(h.table, h.doc).get(WEB);
    const row = statusRow(entry!);
    expect(row.synced).toBe('no');
    expect(row.reason).toBe(`AccessDenied: UpdateService: ${DENIED}`);
    expect(progressLine({ key: WEB, hash: s!.specHash!, state: 'present' }, s)).toContain('AccessDenied: UpdateService: User: arn:aws:sts');
    expect(refused.statuses['apps/web'].reason).toBe(`UpdateService: ${DENIED}`);

    // Backoff: retried 1 minute after the first refusal, then 2 minutes after the second.
    const calls: number[] = [];
    for (let i = 0; i < 4; i++) {
      h.sim.advance(60);
      calls.push(updates(await h.pass(`backoff-${i}`)));
    }
    expect(calls).toEqual([1, 0, 1, 0]);
    expect((await h.status(WEB))?.rejection?.attempts).toBe(3);

    // A person's pass (ecsr reconcile) retries at once.
    expect(updates(await h.runtime.run({ holder: 'person', retryRejected: true }))).toBe(1);
    // A changed spec is tried at once, whatever the backoff.
    await h.editSpec(WEB, { image: 'public.ecr.aws/nginx/nginx:1.29' });
    expect(updates(await h.pass('spec-changed'))).toBe(1);
    expect((await h.status(WEB))?.rejection?.attempts).toBe(1);

    // Permissions fixed: the next retry goes through and the refusal is gone.
    h.sim.clearFaults();
    h.sim.advance(60);
    expect(updates(await h.pass('fixed'))).toBe(1);
    const fixed = await h.status(WEB);
    expect(condition(fixed, 'ActionRejected')).toBeUndefined();
    expect(fixed?.rejection).toBeUndefined();
    expect((await h.describe('apps', 'web'))?.taskDefinition).toMatch(/apps-web:\d+$/);
    await h.converge();
  });

  it('a Fargate rule ECS enforces (awslogs without an execution role): EcsRejected in ECS\'s words, not a stale "deployment completed"', async () => {
    // Prepare: task definitions log with awslogs, and the spec gives no execution role.
    await h.reset({ env: { LOG_GROUP_PREFIX: '/ecs/' } });
    await h.putSpec(aSpecItem({ desiredCount: 1 }));

    // Act
    const first = await h.pass('first');
    h.sim.advance(60);
    const second = await h.pass('second');
    h.sim.advance(60);
    const third = await h.pass('third');

    // Assess
    const rule = 'Fargate requires task definition to have execution role ARN to support log driver awslogs.';
    const s = await h.status(WEB);
    expect(first.actions.map((a) => `${a.type} ${a.outcome}`)).toEqual(['RegisterTaskDefinition failed', 'CreateService skipped']);
    expect(s?.phase).toBe('Degraded');
    expect(s?.reason).toBe(`RegisterTaskDefinition: ${rule}`);
    expect(condition(s, 'ActionRejected')).toMatchObject({ reason: Reason.EcsRejected, message: `RegisterTaskDefinition: ${rule}` });
    expect(condition(s, 'Progressing')?.status).toBe('False');
    expect(s?.lastAction?.error).toBe(`invalid: ${rule}`);
    expect(statusReason(s as ServiceStatus)).toBe(`EcsRejected: RegisterTaskDefinition: ${rule}`);
    // Retried once a minute later (first delay), then held for two minutes.
    expect(second.actions.map((a) => a.type)).toEqual(['RegisterTaskDefinition', 'CreateService']);
    expect(third.actions).toEqual([]);
    expect(third.statuses['apps/web'].reason).toBe(`RegisterTaskDefinition: ${rule}`);
  });

  it('a dry run (ecsr plan) of a refused spec shows the refusal', async () => {
    // Prepare
    await h.putSpec(aSpecItem({ desiredCount: 1 }));
    await h.converge();
    await h.editSpec(WEB, { desiredCount: 2 });
    h.sim.injectFault({ action: 'UpdateService', fraction: 1, errorType: 'AccessDeniedException', message: DENIED });
    await h.pass('refused');

    // Act
    const plan = await h.runtime.run({ holder: 'plan', dryRun: true });

    // Assess
    expect(plan.actions).toEqual([]);
    expect(plan.statuses['apps/web'].phase).toBe('Degraded');
    expect(statusReason(plan.statuses['apps/web'])).toBe(`AccessDenied: UpdateService: ${DENIED}`);
  });
});

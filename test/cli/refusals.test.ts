/**
 * What a person sees of ECS's refusals, end to end through the CLI (in process) against dynalite and the
 * ECS simulator: `ecsr get` and `ecsr describe` of a service whose UpdateService IAM refuses, and
 * `ecsr get` of specs in a cluster whose reads IAM refuses.
 */
import { describe, expect, it } from 'vitest';
import { spec, useCliStack } from './harness';
import { ecsr } from '../support/cli-in-process';

const DENIED = 'User: arn:aws:sts::123456789012:assumed-role/reconciler/fn is not authorized to perform: ecs:UpdateService';

describe('ECS refusals in ecsr get and describe', () => {
  const harness = useCliStack('rf');

  it('UpdateService denied: get says AccessDenied and SYNCED no, describe gives ECS\'s message and the next retry', async () => {
    // Prepare: a converged service, then an image change whose UpdateService IAM refuses.
    const c = await harness.aCase();
    const stack = harness.stack();
    expect((await ecsr(['apply', '-f', c.file('a.yaml', spec(c.cluster, 'web'))], { env: c.env })).code).toBe(0);
    for (let i = 0; i < 10 && (await c.item('web'))?.status?.phase !== 'Converged'; i++) {
      await c.pass();
      stack.sim.clock.advance(60);
    }
    stack.sim.injectFault({ action: 'UpdateService', cluster: c.cluster, errorType: 'AccessDeniedException', message: DENIED });
    expect((await ecsr(['apply', '-f', c.file('b.yaml', spec(c.cluster, 'web').replace('nginx:1.27', 'nginx:1.28'))], { env: c.env })).code).toBe(0);
    await c.pass();

    // Act
    const get = await ecsr(['get', '-o', 'wide'], { env: { ...c.env, COLUMNS: '400' } });
    const desc = await ecsr(['describe', `${c.cluster}/web`], { env: { ...c.env, COLUMNS: '200' } });
    stack.sim.clearFaults();

    // Assess
    expect(get.code).toBe(0);
    const row = get.stdout.split('\n').find((l) => l.includes(`${c.cluster}/web`)) ?? '';
    expect(row).toMatch(/Degraded/);
    expect(row).toMatch(/│ no +│ AccessDenied: UpdateService: User: arn:aws:sts::123456789012:assumed-role\/reconciler\/fn is not authorized/);
    expect(row).toMatch(/denied: User:/);
    expect(desc.code).toBe(0);
    expect(desc.stdout).toMatch(/Reason: +AccessDenied: UpdateService: User: arn:aws:sts/);
    expect(desc.stdout).toMatch(/Refused: +1 time since .*; next retry after /);
    expect(desc.stdout).toMatch(/^ {2}ActionRejected=True {2}AccessDenied/m);
  });

  it('a cluster whose reads are denied: a new spec there is not "no pass has seen this spec yet"', async () => {
    // Prepare
    const c = await harness.aCase();
    const stack = harness.stack();
    stack.sim.injectFault({ action: '*', cluster: c.cluster, errorType: 'AccessDeniedException', message: 'not authorized to perform: ecs:ListServices' });
    expect((await ecsr(['apply', '-f', c.file('a.yaml', spec(c.cluster, 'web'))], { env: c.env })).code).toBe(0);
    await c.pass();

    // Act
    const get = await ecsr(['get'], { env: { ...c.env, COLUMNS: '200' } });
    stack.sim.clearFaults();

    // Assess
    expect(get.code).toBe(0);
    expect(get.stdout).not.toContain('no pass has seen this spec yet');
    expect(get.stdout).toMatch(new RegExp(`${c.cluster}/web +│ Blocked +│ .* │ ClusterAccessDenied`));
    expect(get.stdout).toMatch(/cluster \S+ cannot be read: ECS \S+ cluster=\S+: AccessDeniedException: not authorized to perform: ecs:ListServices/);
  });
});

/**
 * Condition reasons and the counts `ecsr` prints say what is true, end to end (the CLI in process, dynalite,
 * the ECS simulator): a `SpecApplied` reason never carries ECS's "has started N tasks"; a service
 * being deleted is never "running 3/0"; a created service records its first rollout without an
 * empty `rolloutFromTaskDefinitionArn`.
 */
import { describe, expect, it } from 'vitest';
import type { ServiceStatus } from '../../lambda/core/types';
import { spec, useCliStack } from './harness';
import { ecsr } from '../support/cli-in-process';

describe('conditions and counts say what is true', () => {
  const { stack, aCase } = useCliStack('k');

  /** Passes a simulated minute apart until `service` is Converged (at most 20). */
  async function converge(c: Awaited<ReturnType<typeof aCase>>, service: string): Promise<ServiceStatus | undefined> {
    let status: ServiceStatus | undefined;
    for (let i = 0; i < 20; i++) {
      await c.pass();
      status = (await c.item(service))?.status as ServiceStatus | undefined;
      if (status?.phase === 'Converged') break;
      stack().sim.clock.advance(60);
    }
    return status;
  }

  it('a created service has firstRollout and no empty rolloutFromTaskDefinitionArn; SpecApplied keeps its own message', async () => {
    // Prepare: created and converged with 2 tasks (ECS's latest event: "has started 2 tasks").
    const c = await aCase();
    await ecsr(['apply', '-f', c.file('a.yaml', spec(c.cluster, 'web'))], { env: c.env });
    await c.pass();
    const created = (await c.item('web'))?.status as ServiceStatus;
    await converge(c, 'web');
    await ecsr(['apply', '-f', c.file('b.yaml', spec(c.cluster, 'web').replace('1.27', '1.28'))], { env: c.env });
    await c.pass();

    // Act
    const json = await ecsr(['get', `${c.cluster}/web`, '-o', 'json'], { env: c.env });
    const table = await ecsr(['get'], { env: { ...c.env, COLUMNS: '200' } });

    // Assess
    expect(created).toMatchObject({ firstRollout: true });
    expect(created).not.toHaveProperty('rolloutFromTaskDefinitionArn');
    const status = (JSON.parse(json.stdout) as { status: ServiceStatus }).status;
    expect(status.rolloutFromTaskDefinitionArn).toMatch(/^arn:aws:ecs:.*:task-definition\//);
    const progressing = status.conditions.find((x) => x.type === 'Progressing');
    expect(progressing).toMatchObject({ status: 'True', reason: 'SpecApplied' });
    expect(progressing?.message).toMatch(/^UpdateService planned \(rollout\): /);
    const under = table.stdout.split('\n').filter((l) => l.startsWith(`${c.cluster}/web: `));
    expect(under).toEqual([expect.stringMatching(new RegExp(`^${c.cluster}/web: SpecApplied: UpdateService planned \\(rollout\\): `))]);
    expect(table.stdout).not.toMatch(/SpecApplied: .*has started/);
  });

  it('waiting on a service being deleted says how many tasks are left, never "running 3/0"', async () => {
    // Prepare: 3 tasks running; marked absent; one pass plans the delete (ECS still runs the tasks).
    const c = await aCase();
    await ecsr(['apply', '-f', c.file('a.yaml', spec(c.cluster, 'api').replace('desiredCount: 2', 'desiredCount: 3'))], { env: c.env });
    expect((await converge(c, 'api'))?.runningCount).toBe(3);
    expect((await ecsr(['delete', `${c.cluster}/api`, '--yes'], { env: c.env })).code).toBe(0);
    await c.pass();

    // Act: no more passes, so it times out and explains.
    const r = await ecsr(['wait', `${c.cluster}/api`, '--for', 'deleted', '--timeout', '1s', '--interval', '200ms'], { env: c.env });

    // Assess
    expect(r.code).toBe(2);
    const all = `${r.stdout}${r.stderr}`;
    expect(all).toMatch(new RegExp(`${c.cluster}/api {2}Deleting {2}\\d+ tasks? running`));
    expect(all).toMatch(new RegExp(`${c.cluster}/api: phase Deleting, (\\d+ tasks? running, \\d+ pending|no tasks left)`));
    expect(all).not.toMatch(/running \d+\/0/);
  });
});

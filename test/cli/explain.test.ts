/**
 * What `ecsr plan` and `ecsr diff` say, end to end (the CLI in process, dynalite and the ECS simulator):
 * the plan says what is true when nothing is to be done but a service needs a person, and
 * `diff -o json` carries structured changes (path, from, to).
 */
import { describe, expect, it } from 'vitest';
import { spec, useCliStack } from './harness';
import { ecsr } from '../support/cli-in-process';

describe('ecsr plan and diff say what is true', () => {
  const { stack, aCase } = useCliStack('x');

  it('plan: "No actions; 1 service needs attention" when the only service failed its rollout', async () => {
    // Prepare: an image that cannot be pulled fails its rollout, which is not re-applied
    const c = await aCase();
    await ecsr(['apply', '-f', c.file('s.yaml', spec(c.cluster, 'ledger').replace('nginx:1.27', 'nginx:does-not-exist'))], { env: c.env });
    for (let i = 0; i < 6; i++) {
      await c.pass();
      stack().sim.clock.advance(60);
    }

    // Act
    const r = await ecsr(['plan'], { env: { ...c.env, COLUMNS: '80' } });

    // Assess
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^No actions; 1 service needs attention\.\nNeeds attention \(no action planned\):\n {2}x\d+\/ledger {2}Degraded {2}RolloutFailed: /);
    expect(r.stdout).not.toContain('ECS matches every spec');
    // The whole reason, wrapped to the terminal's 80 columns, never cut (it was cut at 140 characters).
    expect(r.stdout).not.toContain('…');
    expect(r.stdout.replace(/\n {4}/g, ' ')).toMatch(/CannotPullContainerError: .*nginx:does-not-exist: not found/);
    for (const line of r.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
  });

  it('diff -o json: each spec with its changes as path, from and to', async () => {
    // Prepare
    const c = await aCase();
    await ecsr(['apply', '-f', c.file('s.yaml', spec(c.cluster, 'web'))], { env: c.env });
    const next = c.file('next.yaml', `${spec(c.cluster, 'web', 'environment:\n  LOG_LEVEL: debug\n').replace('1.27', '1.28')}---\n${spec(c.cluster, 'api')}`);

    // Act
    const r = await ecsr(['diff', '-f', next, '-o', 'json'], { env: c.env });

    // Assess
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as { specChanges: unknown };
    expect(doc.specChanges).toEqual([
      {
        cluster: c.cluster,
        service: 'web',
        change: 'changed',
        changes: [
          { path: 'environment.LOG_LEVEL', from: null, to: 'debug' },
          { path: 'image', from: 'public.ecr.aws/nginx/nginx:1.27', to: 'public.ecr.aws/nginx/nginx:1.28' },
        ],
      },
      { cluster: c.cluster, service: 'api', change: 'new', changes: [] },
    ]);
  });
});

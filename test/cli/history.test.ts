/**
 * `ecsr history` and `ecsr rollback`, run in process (the commands' own commander programs) against
 * dynalite and the ECS simulator of the CLI harness, with passes run here: every ecsr edit is a
 * revision with its writer, the outcome of the current one comes from the status the pass wrote,
 * `--diff` reuses ecsr diff's changes, rollback writes an earlier spec back as an edit the loop
 * rolls out, and refuses when the spec is no longer the one the person saw.
 */
import { Command } from 'commander';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { applyCommand } from '../../bin/commands/apply';
import { historyCommand } from '../../bin/commands/history';
import { rollbackCommand } from '../../bin/commands/rollback';
import { setCommand } from '../../bin/commands/set';
import { configureUsageErrors } from '../../bin/commands/support/usage-errors';
import { spec, useCliStack } from './harness';

/** Runs one command in this process with `env` as its environment; its output and exit code. */
async function run(make: () => Command, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  const saved = { ...process.env };
  for (const k of Object.keys(process.env)) if (k.startsWith('AWS_') || k === 'SPECS_TABLE') delete process.env[k];
  Object.assign(process.env, env);
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => ((stdout += String(chunk)), true));
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => ((stderr += String(chunk)), true));
  process.exitCode = undefined;
  try {
    // Under a program named ecsr, as bin/ecsr.ts builds it (errors read `ecsr <command>: ...`).
    const command = make();
    await configureUsageErrors(new Command('ecsr').addCommand(command)).parseAsync([command.name(), ...args], { from: 'user' });
  } finally {
    out.mockRestore();
    err.mockRestore();
    process.env = saved;
  }
  const code = typeof process.exitCode === 'number' ? process.exitCode : 0;
  process.exitCode = undefined;
  return { code, stdout, stderr };
}

describe('ecsr history and ecsr rollback', () => {
  const { aCase } = useCliStack('hist');

  it('lists each edit with its writer and outcome, diffs two revisions, and rolls back to an earlier spec the loop rolls out', async () => {
    // Prepare: ecsr applies a spec, the pass converges it, ecsr sets a new image
    const c = await aCase();
    const env = { ...c.env, COLUMNS: '300' };
    const applied = await run(applyCommand, ['-f', c.file('web.yaml', spec(c.cluster, 'web')), '--no-verify'], env);
    await c.pass();
    const set = await run(setCommand, ['image', `${c.cluster}/web`, 'public.ecr.aws/nginx/nginx:1.28'], env);
    await c.pass();

    // Act
    const table = await run(historyCommand, [`${c.cluster}/web`], env);
    const json = await run(historyCommand, [`${c.cluster}/web`, '-o', 'json'], env);
    const diff = await run(historyCommand, [`${c.cluster}/web`, '--diff', '1..2'], env);
    const back = await run(rollbackCommand, [`${c.cluster}/web`, '--if-current', '2'], env);
    await c.pass();
    const after = JSON.parse((await run(historyCommand, [`${c.cluster}/web`, '-o', 'json'], env)).stdout) as { revisions: { revision: number; via: string; current: boolean; spec: { image: string } }[] };

    // Assess
    expect([applied.code, set.code, table.code, json.code, diff.code, back.code]).toEqual([0, 0, 0, 0, 0, 0]);
    expect(table.stdout).toMatch(/REV\s.*WRITTEN\s.*BY\s.*VIA\s.*OUTCOME\s.*CHANGE/);
    expect(table.stdout).toMatch(/\*2 .*ecsr set image/);
    const doc = JSON.parse(json.stdout) as { revisions: { revision: number; writtenBy: string; via: string; current: boolean; outcome?: { kind: string }; changes: { path: string; from: unknown; to: unknown }[] }[] };
    expect(doc.revisions.map((r) => [r.revision, r.via, r.current])).toEqual([
      [2, 'ecsr set image', true],
      [1, 'ecsr apply', false],
    ]);
    expect(doc.revisions[0].writtenBy).not.toBe('');
    expect(doc.revisions[0].outcome?.kind).toMatch(/^(in-progress|converged)$/);
    expect(doc.revisions[0].changes).toEqual([{ path: 'image', from: 'public.ecr.aws/nginx/nginx:1.27', to: 'public.ecr.aws/nginx/nginx:1.28' }]);
    expect(diff.stdout).toBe(`${c.cluster}/web: revision 1 -> 2\n  image "public.ecr.aws/nginx/nginx:1.27" -> "public.ecr.aws/nginx/nginx:1.28"\n`);
    expect(back.stdout).toMatch(new RegExp(`^${c.cluster}/web rolled back to revision 1 \\(spec [0-9a-f]{16}\\); the next pass rolls it out\\.\n  image "public.ecr.aws/nginx/nginx:1.28" -> "public.ecr.aws/nginx/nginx:1.27"\n$`));
    expect(after.revisions.map((r) => [r.revision, r.via, r.current, r.spec.image])).toEqual([
      [3, 'ecsr rollback --to 1', true, 'public.ecr.aws/nginx/nginx:1.27'],
      [2, 'ecsr set image', false, 'public.ecr.aws/nginx/nginx:1.28'],
      [1, 'ecsr apply', false, 'public.ecr.aws/nginx/nginx:1.27'],
    ]);
    expect(c.writeCalls().filter((w) => w.action === 'UpdateService')).toHaveLength(2);
  }, 120_000);

  it('refuses a rollback when the spec is no longer the revision the person saw, and writes nothing', async () => {
    // Prepare: two ecsr revisions, then an edit outside ecsr (no stream path in this run to record it)
    const c = await aCase();
    await run(applyCommand, ['-f', c.file('web.yaml', spec(c.cluster, 'web')), '--no-verify'], c.env);
    await run(setCommand, ['image', `${c.cluster}/web`, 'public.ecr.aws/nginx/nginx:1.28'], c.env);
    const before = await c.item('web');
    await c.pass();

    // Act
    const stale = await run(rollbackCommand, [`${c.cluster}/web`, '--if-current', '1'], c.env);
    const stored = await c.item('web');
    await c.pass();

    // Assess
    expect(stale.code).toBe(1);
    expect(stale.stderr).toBe(`ecsr rollback: The spec ${c.cluster}/web is no longer revision 1: it is revision 2 now, so nothing was written. Look again (ecsr history ${c.cluster}/web).\n`);
    expect({ ...stored, status: undefined }).toEqual({ ...before, status: undefined });
  }, 120_000);

  it('says when the table holds a spec written outside ecsr that no revision records', async () => {
    // Prepare
    const c = await aCase();
    await run(applyCommand, ['-f', c.file('web.yaml', spec(c.cluster, 'web')), '--no-verify'], c.env);
    await c.pass();
    const item = await c.item('web');
    await useTable(c.table, c.env, { ...item, desiredCount: 5 });

    // Act
    const r = await run(historyCommand, [`${c.cluster}/web`], { ...c.env, COLUMNS: '200' });

    // Assess
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^│ +1 +│ .*│ ecsr apply +│ .*│ first revision +│$/m);
    expect(r.stdout).toContain(`The table's spec of ${c.cluster}/web is none of these revisions: it was written outside ecsr and not recorded yet.\n`);
  }, 120_000);
});

/** Writes `item` to `table` as a person would with the console (PutItem). */
async function useTable(table: string, env: NodeJS.ProcessEnv, item: Record<string, unknown> | undefined): Promise<void> {
  const { createDocumentClient } = await import('../../lambda/adapters/clients');
  const doc = createDocumentClient({ endpoint: env.AWS_ENDPOINT_URL_DYNAMODB, region: env.AWS_REGION, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
  try {
    await doc.send(new PutCommand({ TableName: table, Item: item }));
  } finally {
    doc.destroy();
  }
}

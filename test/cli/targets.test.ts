/**
 * `ecsr --target NAME`: the CLI (in process) against dynalite. Keys of a target
 * other than `default` are `<target>/<cluster>` in the table, as the reconciler reads them; `get`
 * shows a TARGET column when several targets are listed (`--all-targets`) and names the other
 * targets under a one-target listing; an unknown target is refused with the ones that exist.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack';
import { spec, useCliStack } from './harness';
import { ecsr } from '../support/cli-in-process';

describe('ecsr --target', () => {
  const harness = useCliStack('t');
  let stack: LocalStack;
  beforeAll(() => {
    stack = harness.stack();
  });

  /** A case whose table declares target `staging` by a #target item. */
  async function aCaseWithStaging() {
    const c = await harness.aCase();
    await stack.doc.send(
      new PutCommand({
        TableName: c.table,
        Item: { cluster: '#target', service: 'staging', account: '222222222222', region: 'eu-west-1', roleArn: 'arn:aws:iam::222222222222:role/ecs-reconciler-target' },
      }),
    );
    const stored = async (pk: string, service: string) => (await stack.doc.send(new GetCommand({ TableName: c.table, Key: { cluster: pk, service }, ConsistentRead: true }))).Item;
    return { ...c, stored };
  }

  it('apply, set image and delete write <target>/<cluster> keys; the default target keeps plain keys', async () => {
    // Prepare
    const c = await aCaseWithStaging();
    const path = c.file('web.yaml', spec(c.cluster, 'web'));

    // Act
    const applied = await ecsr(['apply', '-f', path, '--target', 'staging'], { env: c.env });
    const hoisted = await ecsr(['--target', 'staging', 'set', 'image', `${c.cluster}/web`, 'public.ecr.aws/nginx/nginx:1.28'], { env: c.env });
    const home = await ecsr(['apply', '-f', path], { env: c.env });
    const deleted = await ecsr(['delete', `${c.cluster}/web`, '--target', 'staging', '--yes'], { env: c.env });

    // Assess
    expect(applied.stderr).toContain("target staging's specs are written unchecked");
    expect(applied.stdout).toBe(`staging/${c.cluster}/web created\n`);
    expect(hoisted.stderr).toBe('');
    expect(hoisted).toMatchObject({ code: 0 });
    expect(hoisted.stdout).toContain(`staging/${c.cluster}/web`);
    expect(home.stdout).toBe(`${c.cluster}/web created\n`);
    expect(deleted.stdout).toContain(`staging/${c.cluster}/web marked absent`);
    const staged = await c.stored(`staging/${c.cluster}`, 'web');
    expect(staged).toMatchObject({ cluster: `staging/${c.cluster}`, service: 'web', image: 'public.ecr.aws/nginx/nginx:1.28', state: 'absent' });
    expect(await c.stored(c.cluster, 'web')).toMatchObject({ cluster: c.cluster, image: 'public.ecr.aws/nginx/nginx:1.27' });
    expect((await c.stored(c.cluster, 'web'))?.state).toBeUndefined();
  }, 120_000);

  it('get lists one target (naming the others), --all-targets every one with a TARGET column, JSON says the target', async () => {
    // Prepare
    const c = await aCaseWithStaging();
    await ecsr(['apply', '-f', c.file('a.yaml', spec(c.cluster, 'api'))], { env: c.env });
    await ecsr(['apply', '-f', c.file('b.yaml', `${spec(c.cluster, 'api')}---\n${spec(c.cluster, 'worker')}`), '--target', 'staging'], { env: c.env });

    // Act
    const own = await ecsr(['get'], { env: { ...c.env, COLUMNS: '160' } });
    const staging = await ecsr(['get', '--target', 'staging'], { env: { ...c.env, COLUMNS: '160' } });
    const all = await ecsr(['get', '--all-targets'], { env: { ...c.env, COLUMNS: '160' } });
    const json = await ecsr(['get', '-A', '-o', 'json'], { env: c.env });
    const one = await ecsr(['get', `${c.cluster}/worker`, '--target', 'staging', '-o', 'json'], { env: c.env });

    // Assess
    const rows = (out: string) => out.split('\n').filter((l) => l.startsWith('│')).map((l) => l.split('│').map((x) => x.trim()).filter((x) => x !== ''));
    expect(rows(own.stdout).map((r) => r[0])).toEqual(['SERVICE', `${c.cluster}/api`]);
    expect(own.stdout).toContain('Other targets in this table: staging (2 specs); --all-targets shows every one');
    expect(rows(staging.stdout).map((r) => r[0])).toEqual(['SERVICE', `${c.cluster}/api`, `${c.cluster}/worker`]);
    expect(staging.stdout).toContain('Other targets in this table: default (1 spec)');
    expect(rows(all.stdout).map((r) => r.slice(0, 2))).toEqual([
      ['TARGET', 'SERVICE'],
      ['default', `${c.cluster}/api`],
      ['staging', `${c.cluster}/api`],
      ['staging', `${c.cluster}/worker`],
    ]);
    expect(all.stdout).not.toContain('Other targets');
    expect((JSON.parse(json.stdout) as { target: string; cluster: string; service: string; valid: boolean }[]).map((d) => [d.target, d.cluster, d.service, d.valid])).toEqual([
      ['default', c.cluster, 'api', true],
      ['staging', c.cluster, 'api', true],
      ['staging', c.cluster, 'worker', true],
    ]);
    expect(JSON.parse(one.stdout)).toMatchObject({ target: 'staging', cluster: c.cluster, service: 'worker', valid: true });
  }, 120_000);

  it('an unknown target is refused with the targets that exist; nothing is written', async () => {
    // Prepare
    const c = await aCaseWithStaging();
    const path = c.file('web.yaml', spec(c.cluster, 'web'));

    // Act
    const apply = await ecsr(['apply', '-f', path, '--target', 'qa'], { env: c.env });
    const get = await ecsr(['get', '--target', 'qa'], { env: c.env });
    const bad = await ecsr(['get', '--target', 'QA!'], { env: c.env });
    const fromEnv = await ecsr(['get', '--target', 'prod'], { env: { ...c.env, TARGETS: JSON.stringify([{ name: 'prod', account: '333333333333', region: 'us-east-1', roleArn: 'arn:aws:iam::333333333333:role/ecs-reconciler-target' }]) } });

    // Assess
    expect(apply.code).not.toBe(0);
    // The target is checked first: no warning about the unknown target's specs comes before the refusal.
    expect(apply.stderr).toMatch(new RegExp(`^ecsr apply: Unknown target "qa" in table ${c.table}: the targets are default, staging`));
    expect(apply.stderr).not.toContain('warning:');
    expect(get.stderr).toContain('the targets are default, staging');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('is not a target name');
    expect(fromEnv).toMatchObject({ code: 0 });
    expect(fromEnv.stdout).toContain(`No specs in table ${c.table}.`);
    expect(await c.items()).toHaveLength(1); // the #target item only
  }, 120_000);

  it('describe and export read the target\'s item; describe says its ECS is not read from this shell', async () => {
    // Prepare
    const c = await aCaseWithStaging();
    await ecsr(['apply', '-f', c.file('web.yaml', spec(c.cluster, 'web')), '--target', 'staging'], { env: c.env });

    // Act
    const described = await ecsr(['describe', `${c.cluster}/web`, '--target', 'staging'], { env: c.env });
    const missing = await ecsr(['describe', `${c.cluster}/web`], { env: c.env });
    const exported = await ecsr(['export', '--target', 'staging'], { env: c.env });

    // Assess
    expect(described.code).toBe(0);
    expect(described.stdout).toContain("target staging's services are in another account");
    expect(missing.stderr).toContain(`There is no spec ${c.cluster}/web in table ${c.table}`);
    expect(exported.stdout).toContain(`cluster: ${c.cluster}\n`);
    expect(exported.stdout).toContain('service: web');
  }, 120_000);
});

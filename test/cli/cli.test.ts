/**
 * `ecsr` end to end: the CLI in this process (bin/main.ts, test/support/cli-in-process.ts; the
 * EPIPE and stdin cases in a child process) against dynalite and the ECS simulator started here
 * (manual clock). Where a command waits for the reconciler, a loop in this
 * process runs passes (`createLocalRuntime`: the Lambda's runtime on the local stack) and moves the
 * simulated clock a minute at a time. Each case has its own table and cluster.
 */
import { createServer, type AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { DescribeServicesCommand, DescribeTaskDefinitionCommand, ECSClient } from '@aws-sdk/client-ecs';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { PassSummary } from '../../lambda/core/pass';
import { parseSpecItem, parseSpecsYaml, specToItem } from '../../lambda/core/spec';
import type { ServiceStatus } from '../../lambda/core/types';
import { createCluster, createSpecsTable, type LocalStack } from '../../local/stack';
import { spec, useCliStack } from './harness';
import { baseEnv, ecsrIntoClosedPipe } from './run-cli';
import { ecsr } from '../support/cli-in-process';
import { createDocumentClient } from '../../lambda/adapters/clients';
import { SpecTable } from '../../bin/commands/support/spec-table';

describe('ecsr against dynalite and the ECS simulator', () => {
  const harness = useCliStack('c');
  const aCase = harness.aCase;
  let stack: LocalStack;
  beforeAll(() => {
    stack = harness.stack();
  });

  it('apply writes valid specs, keeps an existing status, and says what changed', async () => {
    // Prepare
    const c = await aCase();
    const path = c.file('shop.yaml', `${spec(c.cluster, 'web', 'containerPort: 80\n')}---\n${spec(c.cluster, 'worker')}`);
    const first = await ecsr(['apply', '-f', path], { env: c.env });
    const status = { phase: 'Converged', conditions: [], desiredCount: 2, runningCount: 2, pendingCount: 0, lagBeyondGrace: false, observedAt: 'x' };
    await stack.doc.send(
      new UpdateCommand({ TableName: c.table, Key: { cluster: c.cluster, service: 'web' }, UpdateExpression: 'SET #s = :s', ExpressionAttributeNames: { '#s': 'status' }, ExpressionAttributeValues: { ':s': status } }),
    );
    const changed = c.file('changed.yaml', `${spec(c.cluster, 'web', 'desiredCount: 3\n').replace('desiredCount: 2\n', '')}---\n${spec(c.cluster, 'worker')}`);

    // Act
    const second = await ecsr(['apply', '-f', changed], { env: c.env });

    // Assess
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(`${c.cluster}/web created\n${c.cluster}/worker created\n`);
    expect(second.code).toBe(0);
    expect(second.stdout).toBe(`${c.cluster}/web configured\n${c.cluster}/worker unchanged\n`);
    const web = await c.item('web');
    expect(web?.status).toEqual(status);
    const { status: _s, ...attributes } = web ?? {};
    const expected = parseSpecItem({ cluster: c.cluster, service: 'web', image: 'public.ecr.aws/nginx/nginx:1.27', desiredCount: 3 });
    if (!expected.ok) throw new Error('bad expected spec');
    expect(attributes).toEqual(specToItem(expected.spec));
    expect(attributes).not.toHaveProperty('containerPort');
  });

  it.each([
    {
      case: 'an invalid attribute: file, line, spec, path and reason',
      text: (cl: string) => `${spec(cl, 'web')}---\n${spec(cl, 'api', 'cpu: 300\n')}`,
      message: /1 problem in the spec file; nothing was written\./,
      // Line 10 is `cpu: 300` (the spec starts on line 6).
      detail: (path: string, cl: string) => new RegExp(`${path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:10: ${cl}/api: cpu: must be one of 256, 512, 1024`),
    },
    {
      case: 'a YAML syntax error with its line',
      text: (cl: string) => `${spec(cl, 'web')}---\ncluster: ${cl}\nservice: [unclosed\n`,
      message: /problem.* in the spec file; nothing was written\./,
      detail: (path: string) => new RegExp(`${path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:\\d+: YAML syntax error`),
    },
    {
      // A map key JavaScript cannot keep as data is refused by name, never dropped on write.
      case: 'a __proto__ key in a container map (dockerLabels)',
      text: (cl: string) =>
        `cluster: ${cl}\nservice: web\ndesiredCount: 1\nsubnets: [subnet-0123456789abcdef0]\ncontainers:\n  - name: app\n    image: public.ecr.aws/nginx/nginx:1.27\n    dockerLabels:\n      __proto__: x\n      OK: "1"\n`,
      message: /1 problem in the spec file; nothing was written\./,
      detail: (path: string, cl: string) =>
        new RegExp(`${path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:9: ${cl}/web: containers\\[0\\]\\.dockerLabels\\.__proto__: name must not be "__proto__"`),
    },
    {
      case: 'the same service twice',
      text: (cl: string) => `${spec(cl, 'web')}---\n${spec(cl, 'web')}`,
      message: /1 problem/,
      detail: (_path: string, cl: string) => new RegExp(`${cl}/web: is also defined at`),
    },
    {
      case: 'two specs naming one task definition family',
      text: (cl: string) => `${spec(cl, 'web', 'family: shop\n')}---\n${spec(cl, 'api', 'family: shop\n')}`,
      message: /1 problem/,
      detail: (_path: string, cl: string) =>
        new RegExp(`${cl}/api: family: task definition family shop is also that of ${cl}/web \\([^)]*bad\\.yaml:1\\)`),
    },
  ])('apply rejects $case, and writes nothing', async ({ text, message, detail }) => {
    // Prepare
    const c = await aCase();
    const path = c.file('bad.yaml', text(c.cluster));

    // Act
    const r = await ecsr(['apply', '-f', path], { env: c.env });

    // Assess
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(detail(path, c.cluster));
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(await c.items()).toEqual([]);
  });

  it('get shows the status table, and JSON and YAML for machines', async () => {
    // Prepare
    const c = await aCase();
    await ecsr(['apply', '-f', c.file('s.yaml', `${spec(c.cluster, 'web')}---\n${spec(c.cluster, 'broken', 'cpu: 3\n')}`)], { env: c.env }).then((r) =>
      expect(r.code).toBe(1),
    );
    await stack.doc.send(new PutCommand({ TableName: c.table, Item: { cluster: c.cluster, service: 'web', image: 'public.ecr.aws/nginx/nginx:1.27', desiredCount: 2 } }));
    await stack.doc.send(new PutCommand({ TableName: c.table, Item: { cluster: c.cluster, service: 'broken', image: 'x', desiredCount: 1, cpu: 3 } }));
    await c.pass();

    // Act
    const table = await ecsr(['get'], { env: c.env });
    const json = await ecsr(['get', c.cluster, '-o', 'json'], { env: c.env });
    const yaml = await ecsr(['get', `${c.cluster}/web`, '-o', 'yaml'], { env: c.env });
    const single = await ecsr(['get', `${c.cluster}/web`, '-o', 'json'], { env: c.env });
    const missing = await ecsr(['get', `${c.cluster}/nope`], { env: c.env });

    // Assess
    expect(table.code).toBe(0);
    const rows = table.stdout.split('\n').filter((l) => l.startsWith('│')).map((l) => l.split('│').map((x) => x.trim()));
    expect(rows[0].slice(1, 6)).toEqual(['SERVICE', 'PHASE', 'TASKS', 'SYNCED', 'REASON']);
    expect(rows.find((r) => r[1] === `${c.cluster}/web`)?.slice(2, 5)).toEqual(['Progressing', '0/2', 'yes']);
    expect(rows.find((r) => r[1] === `${c.cluster}/broken`)?.slice(2, 3)).toEqual(['Invalid']);
    const docs = JSON.parse(json.stdout) as { service: string; valid: boolean; status: ServiceStatus | null; errors?: unknown[] }[];
    expect(docs.map((d) => [d.service, d.valid, d.status?.phase])).toEqual([
      ['broken', false, 'Invalid'],
      ['web', true, 'Progressing'],
    ]);
    expect(docs[0].errors).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'cpu' })]));
    const one = parseSpecsYaml(yaml.stdout).docs;
    expect(yaml.code).toBe(0);
    expect(one).toHaveLength(1);
    expect(one[0].item).toMatchObject({ service: 'web', valid: true, status: { phase: 'Progressing', desiredCount: 2 } });
    expect(JSON.parse(single.stdout)).toMatchObject({ cluster: c.cluster, service: 'web', spec: { image: 'public.ecr.aws/nginx/nginx:1.27' } });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(`ecsr get: There is no spec ${c.cluster}/nope in table ${c.table}.\n`);
  });

  it('diff shows spec changes and the planned actions without writing anything', async () => {
    // Prepare
    const c = await aCase();
    await ecsr(['apply', '-f', c.file('s.yaml', spec(c.cluster, 'web'))], { env: c.env });
    for (let i = 0; i < 3; i++) {
      await c.pass();
      stack.sim.clock.advance(60);
    }
    const before = await c.items();
    const writes = c.writeCalls().length;
    const path = c.file('next.yaml', `${spec(c.cluster, 'web').replace('1.27', '1.28')}---\n${spec(c.cluster, 'api')}`);

    // Act
    const r = await ecsr(['diff', '-f', path, '--exit-code'], { env: c.env });
    const json = await ecsr(['diff', '-f', path, '-o', 'json'], { env: c.env });

    // Assess
    expect(r.code).toBe(2);
    expect(r.stdout).toContain(`~ ${c.cluster}/web\n      image "public.ecr.aws/nginx/nginx:1.27" -> "public.ecr.aws/nginx/nginx:1.28"`);
    expect(r.stdout).toContain(`+ ${c.cluster}/api (new spec)`);
    expect(r.stdout).toContain(`UpdateService (rollout) ${c.cluster}/web: containerDefinitions[web].image public.ecr.aws/nginx/nginx:1.27 -> public.ecr.aws/nginx/nginx:1.28`);
    expect(r.stdout).toContain(`CreateService ${c.cluster}/api`);
    const doc = JSON.parse(json.stdout) as { actions: { type: string; service: string; outcome: string }[] };
    expect(doc.actions.map((a) => [a.type, a.service, a.outcome])).toEqual([
      ['RegisterTaskDefinition', 'api', 'planned'],
      ['CreateService', 'api', 'planned'],
      ['RegisterTaskDefinition', 'web', 'planned'],
      ['UpdateService', 'web', 'planned'],
    ]);
    expect(await c.items()).toEqual(before);
    expect(c.writeCalls()).toHaveLength(writes);
  });

  it('plan lists what the next pass would do for the table as it is', async () => {
    // Prepare
    const c = await aCase();
    await ecsr(['apply', '-f', c.file('s.yaml', spec(c.cluster, 'web'))], { env: c.env });

    // Act
    const r = await ecsr(['plan', '-o', 'json'], { env: c.env });
    const text = await ecsr(['plan'], { env: c.env });

    // Assess
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as { actions: { type: string; cluster: string; service: string }[]; statuses: Record<string, ServiceStatus> };
    expect(doc.actions.map((a) => [a.type, a.cluster, a.service])).toEqual([
      ['RegisterTaskDefinition', c.cluster, 'web'],
      ['CreateService', c.cluster, 'web'],
    ]);
    expect(doc.statuses[`${c.cluster}/web`].phase).toBe('Progressing');
    expect(text.stdout).toMatch(/^The next pass would take 2 actions:\n/);
    expect(c.writeCalls()).toEqual([]);
    expect((await c.item('web'))?.status).toBeUndefined();
  });

  it('apply --wait returns once the rollout completed and running equals desired', async () => {
    // Prepare
    const c = await aCase();
    const stop = c.passLoop();

    // Act
    const r = await ecsr(['apply', '-f', c.file('s.yaml', spec(c.cluster, 'web')), '--wait', '--interval', '200ms', '--timeout', '60s'], { env: c.env });
    await stop();

    // Assess
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`${c.cluster}/web created`);
    expect(r.stdout).toMatch(new RegExp(`${c.cluster}/web  Converged  running 2/2`));
    expect(r.stdout).toMatch(/1 of 1 service converged in \d+s \(this computer's clock\), each stable for 30s \(ECS's clock\)\.\n$/);
    const status = (await c.item('web'))?.status as ServiceStatus;
    expect(status).toMatchObject({ phase: 'Converged', runningCount: 2, desiredCount: 2, appliedRolloutState: 'COMPLETED' });
  });

  it('apply --wait gives up at the timeout, exit code 2, with what it waited for', async () => {
    // Prepare: no pass runs.
    const c = await aCase();

    // Act
    const r = await ecsr(['apply', '-f', c.file('s.yaml', spec(c.cluster, 'web')), '--wait', '--interval', '200ms', '--timeout', '1s'], { env: c.env });

    // Assess
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^ecsr apply: Timed out after \\d+s waiting for ${c.cluster}/web \\(0 of 1 service converged in \\d+s\\)\\.\n`));
    expect(r.stderr).toContain(`${c.cluster}/web: no status yet: no reconcile pass has run since the spec was written`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('apply --wait reports a failed rollout with the latest events and stop reasons', async () => {
    // Prepare
    const c = await aCase();
    const stop = c.passLoop();
    const path = c.file('bad.yaml', spec(c.cluster, 'pay').replace('nginx:1.27', 'nginx:does-not-exist'));

    // Act
    const r = await ecsr(['apply', '-f', path, '--wait', '--interval', '200ms', '--timeout', '60s'], { env: c.env });
    await stop();

    // Assess
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^ecsr apply: The rollout of ${c.cluster}/pay failed, and the reconciler will not re-apply this spec until it changes\\. Fix the cause \\(the stopped tasks' reasons below\\), then change the spec`));
    expect(r.stderr).toMatch(/condition Ready=False RolloutFailed: .*circuit breaker/);
    expect(r.stderr).toMatch(/event .*: \(service pay\) .*deployment failed/);
    expect(r.stderr).toMatch(/stopped task [0-9a-f]+: TaskFailedToStart: CannotPullContainerError/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(c.writeCalls().filter((w) => w.action === 'CreateService')).toHaveLength(1);
  });

  it('delete marks the spec absent, and the next pass deletes the service', async () => {
    // Prepare
    const c = await aCase();
    await ecsr(['apply', '-f', c.file('s.yaml', spec(c.cluster, 'web'))], { env: c.env });
    await c.pass();

    // Act
    const r = await ecsr(['delete', `${c.cluster}/web`, '--yes'], { env: c.env });
    const next = await c.pass();
    const unknown = await ecsr(['delete', `${c.cluster}/nope`], { env: c.env });

    // Assess
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${c.cluster}/web marked absent; the next pass deletes the service.\n`);
    expect((await c.item('web'))?.state).toBe('absent');
    expect(next.actions.map((a) => [a.type, a.service, a.outcome])).toEqual([['DeleteService', 'web', 'applied']]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe(`ecsr delete: There is no spec ${c.cluster}/nope in table ${c.table}.\n`);
  });

  it('export prints YAML that apply reads back to the same specs', async () => {
    // Prepare
    const c = await aCase();
    const text = `${spec(c.cluster, 'web', 'environment:\n  B: "2"\n  A: "1"\nsubnets: [subnet-0b1b2c3d4e5f60001, subnet-0a1b2c3d4e5f60001]\n')}---\n${spec(c.cluster, 'gone', 'state: absent\n')}`;
    await ecsr(['apply', '-f', c.file('s.yaml', text)], { env: c.env });
    const other = `${c.table}-copy`;
    await createSpecsTable(stack, other);

    // Act
    const exported = await ecsr(['export'], { env: c.env });
    const applied = await ecsr(['apply', '-f', '-', '--table', other], { env: c.env, input: exported.stdout });
    const again = await ecsr(['export', '--table', other], { env: c.env });

    // Assess
    expect(exported.code).toBe(0);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toBe(`${c.cluster}/gone created (state: absent)\n${c.cluster}/web created\n`);
    expect(again.stdout).toBe(exported.stdout);
    const hashes = (yaml: string) => parseSpecsYaml(yaml).docs.map((d) => (d.result.ok ? d.result.hash : 'invalid'));
    expect(hashes(exported.stdout)).toEqual(hashes(text).reverse());
    expect(exported.stdout).toMatch(/^---\n# c\d+\/gone\n/);
  });

  it('reconcile (--once optional: its only mode) --json runs one pass with the Lambda code and prints actions and statuses', async () => {
    // Prepare
    const c = await aCase();
    await ecsr(['apply', '-f', c.file('s.yaml', spec(c.cluster, 'web'))], { env: c.env });

    // Act
    const dry = await ecsr(['reconcile', '--dry-run', '--json'], { env: c.env });
    const writesAfterDryRun = c.writeCalls().length;
    const r = await ecsr(['reconcile', '--once', '--json'], { env: c.env });

    // Assess
    expect(dry.code).toBe(0);
    expect(writesAfterDryRun).toBe(0);
    expect((JSON.parse(dry.stdout) as PassSummary).actions.map((a) => a.outcome)).toEqual(['planned', 'planned']);
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout) as PassSummary;
    expect(summary.outcome).toBe('completed');
    expect(summary.actions.map((a) => [a.type, a.cluster, a.service, a.outcome])).toEqual([
      ['RegisterTaskDefinition', c.cluster, 'web', 'applied'],
      ['CreateService', c.cluster, 'web', 'applied'],
    ]);
    expect(summary.statuses[`${c.cluster}/web`]).toMatchObject({ phase: 'Progressing', desiredCount: 2 });
    expect(c.writeCalls().map((w) => w.action)).toEqual(['RegisterTaskDefinition', 'CreateService']);
    expect(((await c.item('web'))?.status as ServiceStatus).lastAction?.type).toBe('CreateService');
  });

  it.each([
    { case: 'no table', args: ['get'], env: { SPECS_TABLE: undefined }, code: 1, stderr: /^ecsr get: No specs table given: pass --table NAME or set SPECS_TABLE\.\n$/ },
    { case: 'a table that does not exist', args: ['get', '--table', 'nope-table'], env: {}, code: 1, stderr: /^ecsr get: The DynamoDB table "nope-table" does not exist: check --table \/ SPECS_TABLE and the region\.\n$/ },
    { case: 'a table that does not exist, for a pass', args: ['reconcile', '--once', '--table', 'nope-table'], env: {}, code: 1, stderr: /^ecsr reconcile: The DynamoDB table "nope-table" does not exist: check --table \/ SPECS_TABLE and the region\.\n$/ },
    { case: 'a table that does not exist, for a plan', args: ['plan', '--table', 'nope-table'], env: {}, code: 1, stderr: /^ecsr plan: The DynamoDB table "nope-table" does not exist: check --table \/ SPECS_TABLE and the region\.\n$/ },
    { case: 'nothing listening at the endpoint', args: ['get'], env: { AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:9' }, code: 1, stderr: /^ecsr get: Cannot connect to AWS \(connection refused\)/ },
    { case: 'a bad duration', args: ['apply', '-f', 'x.yaml', '--timeout', '10x'], env: {}, code: 1, stderr: /"10x" is not a duration; use e\.g\. 90s, 10m, 1h30m\./ },
    { case: 'a bad service reference', args: ['delete', 'no-slash'], env: {}, code: 1, stderr: /"no-slash" is not CLUSTER\/SERVICE/ },
    { case: 'a missing file', args: ['apply', '-f', '/nonexistent/specs.yaml'], env: {}, code: 1, stderr: /^ecsr apply: Cannot read \/nonexistent\/specs\.yaml: no such file\.\n$/ },
    { case: 'an invalid reconciler variable', args: ['plan'], env: { MAX_DELETES_PER_PASS: '-1' }, code: 1, stderr: /^ecsr plan: Invalid configuration: MAX_DELETES_PER_PASS must be a whole number from 0 to 1000, got "-1"\.\n$/ },
  ])('fails with one sentence and no stack trace: $case', async ({ args, env, code, stderr }) => {
    // Prepare
    const c = await aCase();

    // Act
    const r = await ecsr(args, { env: baseEnv({ ...c.env, ...env }) });

    // Assess
    expect(r.code).toBe(code);
    expect(r.stderr).toMatch(stderr);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('--endpoint-url, as the AWS CLI spells it, points every client at one endpoint and wins over the variables', async () => {
    // Prepare: the variables point ECS and DynamoDB at a port where nothing listens; the flag at dynalite
    const c = await aCase();
    await ecsr(['apply', '-f', c.file('s.yaml', spec(c.cluster, 'web'))], { env: c.env });
    const dead = 'http://127.0.0.1:1';
    const env = baseEnv({ ...c.env, AWS_ENDPOINT_URL_DYNAMODB: dead, AWS_ENDPOINT_URL_ECS: dead, AWS_REGION: undefined, AWS_DEFAULT_REGION: undefined });

    // Act
    const withFlags = await ecsr(['export', '--endpoint-url', stack.db.endpoint, '--region', stack.region], { env });
    const withoutFlags = await ecsr(['export', '--region', stack.region], { env });

    // Assess
    expect(withFlags.stderr).toBe('');
    expect(withFlags.code).toBe(0);
    expect(withFlags.stdout).toMatch(new RegExp(`^cluster: ${c.cluster}$`, 'm'));
    expect(withoutFlags.code).toBe(1);
    expect(withoutFlags.stderr).toMatch(/^ecsr export: Cannot connect to AWS \(connection refused\)/);
  });

  it.each([
    { option: '--ecs-port', sentence: (p: number) => `Port ${p} is already in use on 127.0.0.1; choose another with --ecs-port (0 picks a free one).` },
    { option: '--dynamodb-port', sentence: (p: number) => `Port ${p} is already in use on 127.0.0.1; choose another with --dynamodb-port (0 picks a free one).` },
  ])('local $option on a port that is taken says so in one sentence, as sim does', async ({ option, sentence }) => {
    // Prepare: something listens on the port
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;

    // Act
    const r = await ecsr(['local', option, String(port), '--plain'], { env: baseEnv() }).finally(() => taken.close());

    // Assess
    expect(r.stderr).toBe(`ecsr local: ${sentence(port)}\n`);
    expect(r.code).toBe(1);
  });

  it('--debug adds the stack trace', async () => {
    // Prepare
    const c = await aCase();

    // Act
    const r = await ecsr(['get', '--table', 'nope-table', '--debug'], { env: c.env });

    // Assess
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^ecsr get: The DynamoDB table "nope-table" does not exist/);
    expect(r.stderr).toMatch(/\n\s+at /);
  });

  it('applies examples/web.yaml as the deploy docs say (apply -f examples/web.yaml --table NAME)', async () => {
    // Prepare: the cluster prod of the example exists (apply warns about one that does not)
    const c = await aCase();
    await createCluster(stack, 'prod');
    const env = baseEnv({ ...c.env, SPECS_TABLE: undefined });

    // Act
    const r = await ecsr(['apply', '-f', 'examples/web.yaml', '--table', c.table], { env });

    // Assess
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('prod/web created\n');
    const web = (await stack.doc.send(new GetCommand({ TableName: c.table, Key: { cluster: 'prod', service: 'web' }, ConsistentRead: true }))).Item;
    expect(web).toMatchObject({ image: '123456789012.dkr.ecr.eu-west-1.amazonaws.com/web:1.4.2', desiredCount: 3, cpu: 512, memory: 1024, containerPort: 8080 });
  });

  it.each([
    { case: 'export | head', args: () => ['export'], input: undefined },
    { case: 'apply -f - < file | head (the spec is written before the line that cannot be)', args: () => ['apply', '-f', '-'], input: (cl: string) => spec(cl, 'api') },
  ])('a reader that goes away (EPIPE) ends $case quietly with exit code 0', async ({ args, input }) => {
    // Prepare
    const c = await aCase();
    await ecsr(['apply', '-f', c.file('s.yaml', spec(c.cluster, 'web'))], { env: c.env });

    // Act
    const r = await ecsrIntoClosedPipe(args(), { env: c.env, ...(input ? { input: input(c.cluster) } : {}) });

    // Assess
    expect(r.stderr).not.toMatch(/EPIPE|\n\s+at /);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    if (input) expect(await c.item('api')).toBeDefined();
  });
  describe('set image', () => {
    it('changes only the image attribute, keeps status, and the next pass rolls the new image out', async () => {
      // Prepare
      const c = await aCase();
      await ecsr(['apply', '-f', c.file('s.yaml', spec(c.cluster, 'web', 'environment:\n  MODE: blue\n'))], { env: c.env });
      await c.pass();
      const before = await c.item('web');

      // Act
      const r = await ecsr(['set', 'image', `${c.cluster}/web`, 'public.ecr.aws/nginx/nginx:1.28'], { env: c.env });
      const after = await c.item('web');
      const next = await c.pass();

      // Assess
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`${c.cluster}/web image set: public.ecr.aws/nginx/nginx:1.27 -> public.ecr.aws/nginx/nginx:1.28\n`);
      expect(after).toEqual({ ...before, image: 'public.ecr.aws/nginx/nginx:1.28' });
      expect(next.actions.map((a) => [a.type, a.service, a.outcome])).toEqual([
        ['RegisterTaskDefinition', 'web', 'applied'],
        ['UpdateService', 'web', 'applied'],
      ]);
      const ecs = new ECSClient(stack.ecsClientConfig);
      const live = (await ecs.send(new DescribeServicesCommand({ cluster: c.cluster, services: ['web'] }))).services?.[0];
      const td = (await ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: live?.taskDefinition }))).taskDefinition;
      ecs.destroy();
      expect(td?.containerDefinitions?.map((x) => x.image)).toEqual(['public.ecr.aws/nginx/nginx:1.28']);
    });

    it('accepts the shorthand container by its name (the service\'s), and writes nothing when the image is the same', async () => {
      // Prepare
      const c = await aCase();
      await ecsr(['apply', '-f', c.file('s.yaml', spec(c.cluster, 'web'))], { env: c.env });

      // Act
      const named = await ecsr(['set', 'image', `${c.cluster}/web`, 'web=public.ecr.aws/nginx/nginx:1.28'], { env: c.env });
      const again = await ecsr(['set', 'image', `${c.cluster}/web`, 'web=public.ecr.aws/nginx/nginx:1.28'], { env: c.env });

      // Assess
      expect(named.stdout).toBe(`${c.cluster}/web container web image set: public.ecr.aws/nginx/nginx:1.27 -> public.ecr.aws/nginx/nginx:1.28\n`);
      expect(again.code).toBe(0);
      expect(again.stdout).toBe(`${c.cluster}/web container web image unchanged (public.ecr.aws/nginx/nginx:1.28)\n`);
      expect((await c.item('web'))?.image).toBe('public.ecr.aws/nginx/nginx:1.28');
    });

    it('sets the image of a named container in a containers list, guarded by its name at that index', async () => {
      // Prepare: an item with a containers list, written as a person would in the console.
      const c = await aCase();
      const containers = [
        { name: 'app', image: 'public.ecr.aws/nginx/nginx:1.27' },
        { name: 'log_router', image: 'public.ecr.aws/aws-observability/aws-for-fluent-bit:2.32.0' },
      ];
      await stack.doc.send(new PutCommand({ TableName: c.table, Item: { cluster: c.cluster, service: 'web', desiredCount: 1, containers } }));

      // Act
      const r = await ecsr(['set', 'image', `${c.cluster}/web`, 'log_router=public.ecr.aws/aws-observability/aws-for-fluent-bit:2.33.0'], { env: c.env });
      const ambiguous = await ecsr(['set', 'image', `${c.cluster}/web`, 'public.ecr.aws/nginx/nginx:1.28'], { env: c.env });
      const missing = await ecsr(['set', 'image', `${c.cluster}/web`, 'envoy=public.ecr.aws/appmesh/aws-appmesh-envoy:v1.29'], { env: c.env });

      // Assess
      expect(r.stdout).toBe(
        `${c.cluster}/web container log_router image set: public.ecr.aws/aws-observability/aws-for-fluent-bit:2.32.0 -> public.ecr.aws/aws-observability/aws-for-fluent-bit:2.33.0\n`,
      );
      expect((await c.item('web'))?.containers).toEqual([containers[0], { ...containers[1], image: 'public.ecr.aws/aws-observability/aws-for-fluent-bit:2.33.0' }]);
      expect(ambiguous.code).toBe(1);
      expect(ambiguous.stderr).toBe(`ecsr set image: ${c.cluster}/web has 2 containers (app, log_router): name one, CONTAINER=IMAGE.\n`);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toBe(`ecsr set image: ${c.cluster}/web has no container 'envoy' (its containers: app, log_router).\n`);
    });

    it.each([
      { case: 'no such spec', target: 'nope', image: 'public.ecr.aws/nginx/nginx:1.28', stderr: (c: { cluster: string; table: string }) => `ecsr set image: There is no spec ${c.cluster}/nope in table ${c.table}.\n` },
      { case: 'an image the spec refuses', target: 'web', image: 'nginx latest', stderr: (c: { cluster: string }) => new RegExp(`^ecsr set image: ${c.cluster}/web: image: must be an image reference.*; nothing was written\\.\n$`) },
      { case: 'a container the shorthand spec has not', target: 'web', image: 'sidecar=busybox:1.36', stderr: (c: { cluster: string }) => `ecsr set image: ${c.cluster}/web has no container 'sidecar' (its containers: web).\n` },
    ])('refuses $case and writes nothing', async ({ target, image, stderr }) => {
      // Prepare
      const c = await aCase();
      await ecsr(['apply', '-f', c.file('s.yaml', spec(c.cluster, 'web'))], { env: c.env });
      const before = await c.items();

      // Act
      const r = await ecsr(['set', 'image', `${c.cluster}/${target}`, image], { env: c.env });

      // Assess
      expect(r.code).toBe(1);
      const expected = stderr(c);
      if (typeof expected === 'string') expect(r.stderr).toBe(expected);
      else expect(r.stderr).toMatch(expected);
      expect(await c.items()).toEqual(before);
    });

    it('writes with one UpdateItem on the image, conditional on the item existing', async () => {
      // Prepare: the table class used by the command, with a client that records what it sends.
      const c = await aCase();
      await ecsr(['apply', '-f', c.file('s.yaml', spec(c.cluster, 'web'))], { env: c.env });
      const sent: { name: string; input: Record<string, unknown> }[] = [];
      const doc = createDocumentClient({ endpoint: stack.env.AWS_ENDPOINT_URL_DYNAMODB, region: stack.region, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
      doc.middlewareStack.add(
        (next, context) => async (args) => {
          sent.push({ name: context.commandName as string, input: args.input as Record<string, unknown> });
          return next(args);
        },
        { step: 'initialize' },
      );
      const table = new SpecTable(c.table, doc);

      // Act
      await table.setImage({ cluster: c.cluster, service: 'web' }, undefined, 'public.ecr.aws/nginx/nginx:1.28');
      table.close();

      // Assess
      expect(sent.map((s) => s.name)).toEqual(['GetItemCommand', 'UpdateItemCommand']);
      expect(sent[1]).toMatchObject({
        input: { UpdateExpression: 'SET #image = :image', ConditionExpression: 'attribute_exists(#pk)', ExpressionAttributeValues: { ':image': 'public.ecr.aws/nginx/nginx:1.28' } },
      });
    });

    it('--wait returns once the new image is rolled out', async () => {
      // Prepare
      const c = await aCase();
      await ecsr(['apply', '-f', c.file('s.yaml', spec(c.cluster, 'web'))], { env: c.env });
      const stop = c.passLoop();

      // Act
      const r = await ecsr(['set', 'image', `${c.cluster}/web`, 'public.ecr.aws/nginx/nginx:1.28', '--wait', '--interval', '200ms', '--timeout', '60s'], { env: c.env });
      await stop();

      // Assess
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/1 of 1 service converged in [\dhms]+ \(this computer's clock\), each stable for 30s \(ECS's clock\)\.\n$/);
      const status = (await c.item('web'))?.status as ServiceStatus;
      expect(status).toMatchObject({ phase: 'Converged', runningCount: 2, appliedRolloutState: 'COMPLETED' });
      const { status: _status, ...attributes } = (await c.item('web')) ?? {};
      const item = parseSpecItem(attributes);
      expect(item.ok && status.lastAppliedSpecHash === item.hash).toBe(true);
    });
  });
});

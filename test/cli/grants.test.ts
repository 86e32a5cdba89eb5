/**
 * `grantSpecRead` and `grantSpecWrite` cover what the commands they name call: each command runs
 * as the CLI (in process) against the simulator and dynalite with credentials whose policy is the
 * grant's (the statements of the synthesized template, for a construct managing the case's
 * cluster), while every AWS call it makes is recorded: ECS's by the simulator, which evaluates
 * the policy against each call as ECS asks IAM (`local/sim/authorization.ts`), DynamoDB's by a
 * recording proxy (test/support/dynamodb-recorder.ts), each call evaluated against the same
 * statements. A command passes when it succeeds and no call was refused.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EcsReconciler } from '../../lib/ecs-reconciler';
import { assumedRoleIdentity } from '../../local/sim/events';
import type { IamPolicyStatement } from '../../local/sim/iam';
import { startDynamoRecorder, type DynamoRecorder } from '../support/dynamodb-recorder';
import { evaluate, flat, type PolicyStatement } from '../support/iam-eval';
import { spec, useCliStack } from './harness';
import { ecsr } from '../support/cli-in-process';

const ACCOUNT = '123456789012';
const REGION = 'us-east-1';

/** The statements `grant` gives a role, for a reconciler managing `cluster`, and the spec table's ARN as the statements name it. */
function grantStatements(cluster: string, grant: (r: EcsReconciler, role: iam.IRole) => void) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Grants', { env: { account: ACCOUNT, region: REGION } });
  const reconciler = new EcsReconciler(stack, 'Reconciler', { clusters: [cluster], defaultSubnets: ['subnet-0a1b2c3d4e5f60001'], defaultSecurityGroups: ['sg-0a1b2c3d4e5f60001'] });
  const role = new iam.Role(stack, 'Pipeline', { assumedBy: new iam.AccountRootPrincipal() });
  grant(reconciler, role);
  const template = Template.fromStack(stack);
  const roleId = stack.getLogicalId(role.node.defaultChild as iam.CfnRole);
  const statements = Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((p) => JSON.stringify(p.Properties.Roles).includes(roleId))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as PolicyStatement[]);
  const tableArn = `\${${stack.getLogicalId(reconciler.table.node.defaultChild as never)}.Arn}`;
  return { statements, tableArn };
}

/** The statements as the simulator takes them: every value as text. */
const asText = (statements: readonly PolicyStatement[]): IamPolicyStatement[] =>
  statements.map((s) => ({
    Effect: s.Effect,
    ...(s.Action !== undefined ? { Action: s.Action } : {}),
    Resource: (Array.isArray(s.Resource) ? s.Resource : [s.Resource]).map((r) => flat(r, 'aws')),
    ...(s.Condition
      ? { Condition: Object.fromEntries(Object.entries(s.Condition).map(([op, keys]) => [op, Object.fromEntries(Object.entries(keys).map(([k, v]) => [k, (Array.isArray(v) ? v : [v]).map((x) => flat(x, 'aws'))]))])) }
      : {}),
  }));

describe('the grants cover every call of the commands they name', () => {
  const harness = useCliStack('gr');
  let recorder: DynamoRecorder;
  let keys = 0;
  beforeAll(async () => {
    recorder = await startDynamoRecorder(harness.stack().env.AWS_ENDPOINT_URL_DYNAMODB);
  });
  afterAll(async () => {
    await recorder?.close();
  });

  /**
   * Runs `args` with credentials holding only `grant`'s statements; returns the result and every
   * call refused (ECS by the simulator, DynamoDB by evaluation).
   */
  async function asGrantee(c: Awaited<ReturnType<typeof harness.aCase>>, grant: (r: EcsReconciler, role: iam.IRole) => void, args: string[], opts: { input?: string } = {}) {
    const { statements, tableArn } = grantStatements(c.cluster, grant);
    const sim = harness.stack().sim;
    const accessKeyId = `ASIAGRANTEE${String(++keys).padStart(9, '0')}`;
    const principal = `arn:aws:sts::${ACCOUNT}:assumed-role/pipeline/${accessKeyId}`;
    sim.setCaller(accessKeyId, { identity: { ...assumedRoleIdentity(ACCOUNT, 'pipeline', accessKeyId, accessKeyId), arn: principal }, userAgent: 'ecsr', sourceIPAddress: '127.0.0.1', policy: asText(statements) });
    const ecsBefore = sim.calls().length;
    const dynamoBefore = recorder.calls.length;
    const r = await ecsr(args, { env: { ...c.env, AWS_ACCESS_KEY_ID: accessKeyId, AWS_ENDPOINT_URL_DYNAMODB: recorder.endpoint, COLUMNS: '200' }, ...(opts.input ? { input: opts.input } : {}) });
    const ecsCalls = sim.calls().slice(ecsBefore).filter((x) => x.caller === principal);
    const dynamoCalls = recorder.calls.slice(dynamoBefore);
    const resource = (table: string) => (table === c.table ? tableArn : `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${table}`);
    const refused = [
      ...ecsCalls.filter((x) => x.outcome === 'AccessDeniedException').map((x) => `ecs:${x.action} ${JSON.stringify(x.request)}`),
      ...dynamoCalls.flatMap((x) => x.tables.map((t) => ({ action: `dynamodb:${x.action}`, resource: resource(t) }))).filter((q) => evaluate(statements, q) !== 'Allow').map((q) => `${q.action} ${q.resource}`),
    ];
    return { r, refused, calls: [...new Set([...ecsCalls.map((x) => `ecs:${x.action}`), ...dynamoCalls.map((x) => `dynamodb:${x.action}`)])].sort() };
  }

  const read = (r: EcsReconciler, role: iam.IRole) => r.grantSpecRead(role);
  const write = (r: EcsReconciler, role: iam.IRole) => r.grantSpecWrite(role);
  const tableOnly = (r: EcsReconciler, role: iam.IRole) => r.table.grant(role, 'dynamodb:Scan', 'dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:DescribeTable');
  const FAST = ['--interval', '200ms'];
  type Case = Awaited<ReturnType<typeof harness.aCase>>;

  /** A case whose `web` converged (two tasks RUNNING in the case's cluster). */
  async function converged(): Promise<Case> {
    const c = await harness.aCase();
    expect((await ecsr(['apply', '-f', c.file('a.yaml', spec(c.cluster, 'web'))], { env: c.env })).code).toBe(0);
    for (let i = 0; i < 10 && (await c.item('web'))?.status?.phase !== 'Converged'; i++) {
      await c.pass();
      harness.stack().sim.clock.advance(60);
    }
    expect((await c.item('web'))?.status?.phase).toBe('Converged');
    return c;
  }

  const COMMANDS: { command: string; grant: 'grantSpecRead' | 'grantSpecWrite'; args: (c: Case) => string[]; passes?: boolean; calls: string[] }[] = [
    { command: 'get', grant: 'grantSpecRead', args: () => ['get'], calls: ['dynamodb:Scan'] },
    { command: 'export', grant: 'grantSpecRead', args: () => ['export'], calls: ['dynamodb:Scan'] },
    {
      command: 'plan',
      grant: 'grantSpecRead',
      args: () => ['plan'],
      calls: ['dynamodb:Scan', 'ecs:DescribeServices', 'ecs:DescribeTaskDefinition', 'ecs:ListServices'],
    },
    {
      command: 'diff',
      grant: 'grantSpecRead',
      args: (c) => ['diff', '-f', c.file('d.yaml', spec(c.cluster, 'web').replace('nginx:1.27', 'nginx:1.28'))],
      calls: ['dynamodb:Scan', 'ecs:DescribeServices', 'ecs:DescribeTaskDefinition', 'ecs:ListServices'],
    },
    { command: 'describe', grant: 'grantSpecRead', args: (c) => ['describe', `${c.cluster}/web`], calls: ['dynamodb:GetItem', 'ecs:DescribeServices', 'ecs:DescribeTasks', 'ecs:ListTasks'] },
    { command: 'wait', grant: 'grantSpecRead', args: (c) => ['wait', `${c.cluster}/web`, ...FAST, '--timeout', '60s'], passes: true, calls: ['dynamodb:GetItem', 'ecs:DescribeServices', 'ecs:DescribeTasks', 'ecs:ListTasks'] },
    {
      command: 'apply --wait',
      grant: 'grantSpecWrite',
      args: (c) => ['apply', '-f', c.file('b.yaml', spec(c.cluster, 'web').replace('nginx:1.27', 'nginx:1.28')), '--wait', ...FAST, '--timeout', '60s'],
      passes: true,
      calls: ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'ecs:DescribeClusters', 'ecs:DescribeServices', 'ecs:DescribeTasks', 'ecs:ListTasks'],
    },
    { command: 'set image', grant: 'grantSpecWrite', args: (c) => ['set', 'image', `${c.cluster}/web`, 'public.ecr.aws/nginx/nginx:1.29'], calls: ['dynamodb:GetItem', 'dynamodb:UpdateItem'] },
    { command: 'delete', grant: 'grantSpecWrite', args: (c) => ['delete', `${c.cluster}/web`, '--yes'], calls: ['dynamodb:UpdateItem'] },
    { command: 'prune --confirm', grant: 'grantSpecWrite', args: (c) => ['prune', '--confirm', c.cluster], calls: ['dynamodb:PutItem'] },
  ];

  it.each(COMMANDS)('ecsr $command with $grant: succeeds, and no call it makes is refused', async ({ grant, args, passes, calls }) => {
    // Prepare
    const c = await converged();
    const stop = passes ? c.passLoop() : undefined;

    // Act
    const out = await asGrantee(c, grant === 'grantSpecRead' ? read : write, args(c));
    await stop?.();

    // Assess
    expect(out.refused).toEqual([]);
    expect(out.r.stderr).not.toMatch(/AccessDenied|not authorized|could not check/);
    expect(out.r.code).toBe(0);
    expect(out.calls).toEqual(expect.arrayContaining(calls));
  }, 300_000);

  it('the test sees a refusal: plan with the table reads alone is refused by ECS and shows no plan', async () => {
    const c = await converged();
    const out = await asGrantee(c, tableOnly, ['plan']);
    expect(out.refused).toEqual(expect.arrayContaining([expect.stringMatching(/^ecs:ListServices /)]));
    expect(out.r.code).toBe(1);
  }, 300_000);
});

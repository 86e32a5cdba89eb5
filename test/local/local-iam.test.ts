/**
 * The local run is refused what AWS would refuse: its passes (`createLocalRuntime`, as `npm start`
 * runs them) call the simulator with the reconciler role's credentials, and the simulator
 * evaluates the policy the construct writes for that configuration (`ecsPolicyStatements`)
 * against every ECS call. A spec in a cluster outside MANAGED_CLUSTERS (the construct's
 * `clusters`) is read as AWS answers it: AccessDeniedException, so the spec is Blocked /
 * ClusterAccessDenied with AWS's message, and nothing is written there.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RecordingLog } from '../../lambda/adapters/logger';
import { InMemoryMetricsSink } from '../../lambda/adapters/metrics';
import { Reason } from '../../lambda/core/status';
import type { ServiceStatus } from '../../lambda/core/types';
import { createCluster, createLocalRuntime, createSpecsTable, startLocalStack, type LocalStack } from '../../local/stack';

const WRITES = new Set(['RegisterTaskDefinition', 'CreateService', 'UpdateService', 'DeleteService', 'TagResource', 'UntagResource']);

describe('the local run under the construct\'s IAM', () => {
  let stack: LocalStack;
  let n = 0;
  beforeAll(async () => {
    stack = await startLocalStack({ specsTable: 'iam-unused', clusters: [] });
  });
  afterAll(async () => {
    await stack?.close();
  });

  /** A table, the clusters (all exist in the simulator) and a runtime with `env`. */
  async function aCase(clusters: string[], env: Record<string, string>) {
    const table = `iam-specs-${++n}`;
    await createSpecsTable(stack, table);
    for (const c of clusters) await createCluster(stack, c);
    const runtime = createLocalRuntime(stack, { env, table, metrics: new InMemoryMetricsSink(), log: new RecordingLog() });
    const put = (item: Record<string, unknown>) => stack.doc.send(new PutCommand({ TableName: table, Item: { image: 'public.ecr.aws/nginx/nginx:1.27', desiredCount: 1, ...item } }));
    const status = async (cluster: string, service: string) =>
      (await stack.doc.send(new GetCommand({ TableName: table, Key: { cluster, service }, ConsistentRead: true }))).Item?.status as ServiceStatus | undefined;
    return { runtime, put, status };
  }

  it('a spec naming a cluster outside MANAGED_CLUSTERS gets ClusterAccessDenied with AWS\'s message; the managed cluster converges', async () => {
    // Prepare: both clusters exist; the reconciler manages only the first.
    const c = await aCase(['iamapps1', 'iamother1'], { MANAGED_CLUSTERS: 'iamapps1' });
    await c.put({ cluster: 'iamapps1', service: 'web' });
    await c.put({ cluster: 'iamother1', service: 'api' });
    const before = stack.sim.calls().length;

    // Act
    const summary = await c.runtime.run({ holder: 'iam-1' });

    // Assess
    const api = await c.status('iamother1', 'api');
    expect(api?.phase).toBe('Blocked');
    expect(api?.conditions.find((x) => x.type === 'Blocked')?.reason).toBe(Reason.ClusterAccessDenied);
    expect(api?.reason).toMatch(
      /AccessDeniedException: User: arn:aws:sts::123456789012:assumed-role\/ecsr-local-reconciler\/ecsr-local is not authorized to perform: ecs:(DescribeServices|ListServices) on resource: \S+ because no identity-based policy allows the ecs:\1 action/,
    );
    const calls = stack.sim.calls().slice(before);
    expect(calls.filter((x) => x.request.cluster === 'iamother1').map((x) => x.outcome)).toEqual(expect.arrayContaining(['AccessDeniedException']));
    expect(calls.filter((x) => WRITES.has(x.action) && (x.request.cluster === 'iamother1' || String(x.request.family ?? '').startsWith('iamother1-')))).toEqual([]);
    expect(summary.actions.filter((a) => a.cluster === 'iamapps1').map((a) => `${a.type} ${a.outcome}`)).toEqual(['RegisterTaskDefinition applied', 'CreateService applied']);
  });

  it('without adoption, a family outside <cluster>-* is AccessDenied on RegisterTaskDefinition, as on AWS', async () => {
    // Prepare
    const c = await aCase(['iamapps2'], { MANAGED_CLUSTERS: 'iamapps2', ALLOW_ADOPTION: 'false' });
    await c.put({ cluster: 'iamapps2', service: 'web', family: 'web-api' });
    await c.put({ cluster: 'iamapps2', service: 'jobs' });

    // Act
    const summary = await c.runtime.run({ holder: 'iam-2' });

    // Assess
    const web = summary.actions.filter((a) => a.service === 'web');
    expect(web.map((a) => `${a.type} ${a.outcome}`)).toEqual(['RegisterTaskDefinition failed', 'CreateService skipped']);
    expect(web[0]?.errorClass).toBe('denied');
    expect(web[0]?.message).toMatch(/not authorized to perform: ecs:RegisterTaskDefinition on resource: arn:aws:ecs:us-east-1:123456789012:task-definition\/web-api:1/);
    const st = await c.status('iamapps2', 'web');
    expect(st?.reason).toMatch(/^RegisterTaskDefinition: User: .* is not authorized to perform: ecs:RegisterTaskDefinition/);
    expect(st?.conditions.find((x) => x.type === 'ActionRejected')?.reason).toBe(Reason.AccessDenied);
    expect(summary.actions.filter((a) => a.service === 'jobs').map((a) => `${a.type} ${a.outcome}`)).toEqual(['RegisterTaskDefinition applied', 'CreateService applied']);
  });

  it('a person\'s own credentials (the CLI, the AWS CLI) are not the reconciler\'s: the simulator does not restrict them', async () => {
    const c = await aCase(['iamapps3', 'iamother3'], { MANAGED_CLUSTERS: 'iamapps3' });
    expect(c.runtime).toBeDefined();
    const before = stack.sim.calls().length;
    const { ECSClient, ListServicesCommand } = await import('@aws-sdk/client-ecs');
    const ecs = new ECSClient(stack.ecsClientConfig);
    await ecs.send(new ListServicesCommand({ cluster: 'iamother3' }));
    ecs.destroy();
    expect(stack.sim.calls().slice(before).map((x) => x.outcome)).toEqual(['ok']);
  });
});

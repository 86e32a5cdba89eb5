/**
 * `ecsr import` round trips on moto (ECS and DynamoDB both moto's: an implementation we did not
 * write): the same live services as `import.test.ts` (real task definitions and real service
 * settings, `test/support/import-cases.ts`), imported with the CLI (in process) (`--apply`), then one
 * pass with the Lambda's runtime: its only ECS write is TagResource, and the pass after it makes
 * none. moto 5.2.1 keeps neither deploymentConfiguration nor capacityProviderStrategy on
 * CreateService (see `test/runtime/moto-pass.test.ts`): what it describes is what is live, and the
 * imported spec reproduces that. It also describes a service created with a capacity provider
 * strategy as launch type EC2, which no spec can reproduce: those services are created with the
 * FARGATE launch type here, and one case checks that import refuses what moto answers for them.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CreateClusterCommand, CreateServiceCommand, DescribeServicesCommand, RegisterTaskDefinitionCommand, type CreateServiceCommandInput } from '@aws-sdk/client-ecs';
import { ENV, loadConfig } from '../../lambda/config';
import { createRuntime, type Runtime } from '../../lambda/adapters/runtime';
import { clearTaskDefinitionCache } from '../../lambda/adapters/ecs-observer';
import { InMemoryMetricsSink } from '../../lambda/adapters/metrics';
import { RecordingLog } from '../../lambda/adapters/logger';
import { OWNER_TAG_KEY } from '../../lambda/core/ports';
import { startMoto, type MotoServer } from '../support/moto';
import { needs } from '../support/tools';
import { EXECUTION_ROLE, importCases } from '../support/import-cases';
import { createSpecsTable, LOCAL, motoDefaultNetwork, recordCalls, type CallLog } from '../runtime/support';
import { baseEnv } from './run-cli';
import { ecsr } from '../support/cli-in-process';

const REFUSED = new Set(['ecspresso-katsubushi']);

/** moto keeps no capacity provider strategy (see the module doc): the FARGATE launch type instead. */
function onMoto(input: CreateServiceCommandInput): CreateServiceCommandInput {
  const { capacityProviderStrategy, ...rest } = input;
  return capacityProviderStrategy ? { ...rest, launchType: 'FARGATE' } : input;
}

describe('ecsr import on moto', needs('moto'), () => {
  let moto: MotoServer;
  let runtime: Runtime;
  let calls: CallLog;
  let network: { subnets: string[]; securityGroups: string[] };
  let reconcilerEnv: Record<string, string>;

  beforeAll(async () => {
    moto = await startMoto();
  });
  afterAll(async () => {
    runtime?.ecs.destroy();
    runtime?.doc.destroy();
    await moto?.stop();
  });
  beforeEach(async () => {
    await moto.reset();
    clearTaskDefinitionCache();
    network = await motoDefaultNetwork(moto.endpoint);
    await createSpecsTable(moto.endpoint, 'specs');
    reconcilerEnv = {
      [ENV.specsTable]: 'specs',
      [ENV.managedClusters]: 'apps',
      [ENV.defaultSubnets]: network.subnets.join(','),
      [ENV.defaultSecurityGroups]: network.securityGroups.join(','),
      [ENV.defaultExecutionRoleArn]: EXECUTION_ROLE,
    };
    runtime?.ecs.destroy();
    runtime?.doc.destroy();
    runtime = createRuntime(loadConfig(reconcilerEnv), {
      ecsClientConfig: { ...LOCAL, endpoint: moto.endpoint },
      dynamoClientConfig: { ...LOCAL, endpoint: moto.endpoint },
      metrics: new InMemoryMetricsSink(),
      log: new RecordingLog(),
    });
    calls = recordCalls(runtime.ecs);
    await runtime.ecs.send(new CreateClusterCommand({ clusterName: 'apps' }));
  });

  const cases = importCases().filter((k) => !REFUSED.has(k.name));

  /** The CLI's environment: the reconciler's variables, every AWS endpoint on moto. */
  const cliEnv = () =>
    baseEnv({
      ...reconcilerEnv,
      AWS_ENDPOINT_URL: moto.endpoint,
      AWS_REGION: LOCAL.region,
      AWS_ACCESS_KEY_ID: LOCAL.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL.credentials.secretAccessKey,
    });

  it('has at least 10 real task definitions to import', () => {
    expect(cases.length).toBeGreaterThanOrEqual(10);
  });

  it.each(cases.map((k) => ({ name: k.name, source: k.serviceSource, k })))(
    '$name (service settings of $source): import --apply, then one pass makes only TagResource',
    async ({ k }) => {
      // Prepare: the live service, not ours.
      const td = await runtime.ecs.send(new RegisterTaskDefinitionCommand(structuredClone(k.register)));
      await runtime.ecs.send(new CreateServiceCommand(onMoto(k.createService('apps', 'svc', network))));
      const env = cliEnv();
      calls.reset();

      // Act
      const r = await ecsr(['import', 'apps/svc', '--apply'], { env });
      const first = await runtime.run({ holder: 'p1' });
      const firstWrites = calls.writes();
      calls.reset();
      const second = await runtime.run({ holder: 'p2' });

      // Assess
      expect(r.stderr).toBe('apps/svc written to table specs\n');
      expect(r.code).toBe(0);
      expect(first.actions.map((a) => [a.type, a.outcome])).toEqual([['TagResource', 'applied']]);
      expect(firstWrites).toEqual(['TagResource']);
      expect(second.actions).toEqual([]);
      expect(calls.writes()).toEqual([]);
      const live = (await runtime.ecs.send(new DescribeServicesCommand({ cluster: 'apps', services: ['svc'], include: ['TAGS'] }))).services?.[0];
      expect(live?.tags).toEqual(expect.arrayContaining([{ key: OWNER_TAG_KEY, value: 'ecs-reconciler' }]));
      expect(live?.taskDefinition).toBe(td.taskDefinition?.taskDefinitionArn);
    },
  );

  it('refuses a service moto describes with launch type EC2 (created with a capacity provider strategy), naming the field', async () => {
    // Prepare
    const k = cases.find((x) => x.createService('apps', 'svc', network).capacityProviderStrategy !== undefined) as (typeof cases)[number];
    await runtime.ecs.send(new RegisterTaskDefinitionCommand(structuredClone(k.register)));
    await runtime.ecs.send(new CreateServiceCommand(k.createService('apps', 'svc', network)));

    // Act
    const r = await ecsr(['import', 'apps/svc', '--apply'], { env: cliEnv() });
    const pass = await runtime.run({ holder: 'p1' });

    // Assess
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'ecsr import: apps/svc cannot be imported exactly; nothing was written for it:\n' +
        '  service.launchType: must be FARGATE, got EC2\n' +
        'ecsr import: 1 of 1 service could not be imported (see above).\n',
    );
    expect(pass.actions).toEqual([]);
  });
});

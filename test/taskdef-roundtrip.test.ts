/**
 * Round trip through a real register/describe on moto, an independent implementation of the ECS
 * API: render -> RegisterTaskDefinition -> DescribeTaskDefinition -> canonically equal to the
 * rendered input (docs/ecs-facts.md §6: "test each default with a round trip through a real
 * register/describe"). A round trip through our own ECS simulator belongs to the simulator's tests.
 */
import {
  DescribeTaskDefinitionCommand,
  ECSClient,
  RegisterTaskDefinitionCommand,
  type RegisterTaskDefinitionCommandInput,
} from '@aws-sdk/client-ecs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ReconcilerDefaults } from '../lambda/core/options';
import { OWNER_TAG_KEY } from '../lambda/core/ports';
import { diffTaskDefinitions, renderTaskDefinition, taskDefinitionFamily } from '../lambda/core/taskdef';
import type { ServiceSpec, TaskDefinition } from '../lambda/core/types';
import { LOCAL_CLIENT_CONFIG, startMoto, type MotoServer } from './support/moto';
import { needs } from './support/tools';

const ACCOUNT = '123456789012';
const EXECUTION_ROLE = `arn:aws:iam::${ACCOUNT}:role/ecs-reconciler-execution`;
const OWNER = 'ecs-reconciler-test';

function aSpec(overrides: Partial<ServiceSpec> = {}): ServiceSpec {
  return {
    cluster: 'prod',
    service: 'web',
    image: 'public.ecr.aws/nginx/nginx:1.27',
    desiredCount: 2,
    cpu: 256,
    memory: 512,
    environment: {},
    secrets: {},
    capacityProvider: 'FARGATE',
    cpuArchitecture: 'X86_64',
    state: 'present',
    adopt: false,
    autoscaled: false,
    tags: {},
    ...overrides,
  };
}

function someDefaults(overrides: Partial<ReconcilerDefaults> = {}): ReconcilerDefaults {
  return { subnets: ['subnet-0a1b2c3d'], securityGroups: ['sg-0123abcd'], executionRoleArn: EXECUTION_ROLE, ...overrides };
}

describe('task definition round trip through moto', needs('moto'), () => {
  let moto: MotoServer;
  let ecs: ECSClient;

  beforeAll(async () => {
    moto = await startMoto();
    ecs = new ECSClient({ ...LOCAL_CLIENT_CONFIG, endpoint: moto.endpoint });
  });
  afterAll(async () => {
    ecs?.destroy();
    await moto?.stop();
  });
  beforeEach(async () => {
    await moto.reset();
  });

  /** RegisterTaskDefinition with the rendered input, then DescribeTaskDefinition (include TAGS). */
  async function registerAndDescribe(input: TaskDefinition & { family: string }) {
    // Our TaskDefinition uses plain strings where the SDK has string-literal unions (networkMode...).
    const registered = await ecs.send(new RegisterTaskDefinitionCommand(input as unknown as RegisterTaskDefinitionCommandInput));
    const arn = registered.taskDefinition?.taskDefinitionArn;
    if (!arn) throw new Error('RegisterTaskDefinition answered no taskDefinitionArn');
    const out = await ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: arn, include: ['TAGS'] }));
    if (!out.taskDefinition) throw new Error(`DescribeTaskDefinition answered no taskDefinition for ${arn}`);
    // Spread: the SDK's interface becomes a plain object type the core's TaskDefinition accepts.
    return { arn, described: { ...out.taskDefinition } as TaskDefinition, tags: out.tags ?? [] };
  }

  it.each([
    { case: 'minimal: no port, no health check, no logs, X86_64', spec: aSpec(), defaults: someDefaults() },
    {
      case: 'port and health check with every field',
      spec: aSpec({
        containerPort: 8080,
        healthCheck: {
          command: ['CMD-SHELL', 'curl -f http://localhost:8080/ || exit 1'],
          intervalSeconds: 10,
          timeoutSeconds: 3,
          retries: 5,
          startPeriodSeconds: 30,
        },
      }),
      defaults: someDefaults(),
    },
    {
      case: 'health check with only a command (ECS fills the defaults)',
      spec: aSpec({ containerPort: 80, healthCheck: { command: ['CMD', '/bin/true'] } }),
      defaults: someDefaults(),
    },
    {
      case: 'environment and secrets, task role, command',
      spec: aSpec({
        environment: { NODE_ENV: 'production', LOG_LEVEL: 'info', EMPTY: '' },
        secrets: {
          DB_PASSWORD: `arn:aws:secretsmanager:us-east-1:${ACCOUNT}:secret:prod/db-AbCdEf:password::`,
          API_TOKEN: `arn:aws:ssm:us-east-1:${ACCOUNT}:parameter/prod/api-token`,
        },
        taskRoleArn: `arn:aws:iam::${ACCOUNT}:role/prod-web-task`,
        command: ['node', 'server.js', '--port', '8080'],
      }),
      defaults: someDefaults(),
    },
    {
      case: 'awslogs with region',
      spec: aSpec({ containerPort: 8080 }),
      defaults: someDefaults({ logGroupPrefix: '/ecs-reconciler/', region: 'us-east-1' }),
    },
    {
      case: 'ARM64 with everything, bigger task, spec execution role',
      spec: aSpec({
        cluster: 'staging-eu',
        service: 'api_v2',
        cpu: 2048,
        memory: 8192,
        cpuArchitecture: 'ARM64',
        containerPort: 3000,
        environment: { Z: 'last', A: 'first' },
        secrets: { STRIPE_KEY: `arn:aws:ssm:us-east-1:${ACCOUNT}:parameter/stripe` },
        executionRoleArn: `arn:aws:iam::${ACCOUNT}:role/api-execution`,
        healthCheck: { command: ['CMD-SHELL', 'wget -qO- localhost:3000/health'], retries: 2 },
        tags: { team: 'api', cost: 'cc-7' },
      }),
      defaults: someDefaults({ logGroupPrefix: '/apps/' }),
    },
  ])('$case', async ({ spec, defaults }) => {
    const input = renderTaskDefinition(spec, { defaults, ownerId: OWNER });

    const { arn, described, tags } = await registerAndDescribe(input);

    expect(arn).toContain(`:task-definition/${taskDefinitionFamily(spec)}:1`);
    expect(described.revision).toBe(1);
    expect(diffTaskDefinitions(input, described)).toEqual([]);
    expect(tags).toContainEqual({ key: OWNER_TAG_KEY, value: OWNER });
    for (const [key, value] of Object.entries(spec.tags)) expect(tags).toContainEqual({ key, value });
  });

  it('the described form is not the rendered input: the server added fields that compare equal', async () => {
    const input = renderTaskDefinition(aSpec({ containerPort: 8080 }), { defaults: someDefaults(), ownerId: OWNER });

    const { described } = await registerAndDescribe(input);

    expect(described).not.toEqual(input);
    expect(described).toMatchObject({ revision: 1, status: 'ACTIVE' });
    expect(diffTaskDefinitions(input, described)).toEqual([]);
  });

  it('a registered revision that differs from the spec is reported field by field', async () => {
    const old = renderTaskDefinition(aSpec({ image: 'public.ecr.aws/nginx/nginx:1.26', environment: { LOG_LEVEL: 'debug' } }), {
      defaults: someDefaults(),
      ownerId: OWNER,
    });
    const { described } = await registerAndDescribe(old);
    const desired = renderTaskDefinition(aSpec({ environment: { LOG_LEVEL: 'info' }, cpuArchitecture: 'ARM64' }), {
      defaults: someDefaults(),
      ownerId: OWNER,
    });

    expect(diffTaskDefinitions(desired, described)).toEqual([
      { field: 'runtimePlatform.cpuArchitecture', from: 'X86_64', to: 'ARM64' },
      { field: 'containerDefinitions[web].image', from: 'public.ecr.aws/nginx/nginx:1.26', to: 'public.ecr.aws/nginx/nginx:1.27' },
      { field: 'containerDefinitions[web].environment.LOG_LEVEL', from: 'debug', to: 'info' },
    ]);
  });
});

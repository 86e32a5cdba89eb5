import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ReconcilerDefaults } from '../lambda/core/options';
import { OWNER_TAG_KEY } from '../lambda/core/ports';
import {
  ABSENT,
  SERVER_ONLY_TASK_DEFINITION_FIELDS,
  canonicalTaskDefinition,
  diffTaskDefinitions,
  renderTaskDefinition,
  taskDefinitionFamily,
  taskDefinitionsEqual,
} from '../lambda/core/taskdef';
import type { ContainerDefinition, FieldChange, ServiceSpec, TaskDefinition } from '../lambda/core/types';

// ---------------------------------------------------------------------------------------------
// Builders
// ---------------------------------------------------------------------------------------------

const ACCOUNT = '123456789012';
const WEB_IMAGE = `${ACCOUNT}.dkr.ecr.eu-west-1.amazonaws.com/shop/web:2025-01-31.3`;
const EXECUTION_ROLE = `arn:aws:iam::${ACCOUNT}:role/ecs-reconciler-execution`;
const WEB_TASK_ROLE = `arn:aws:iam::${ACCOUNT}:role/prod-web-task`;
const DB_PASSWORD_ARN = `arn:aws:secretsmanager:eu-west-1:${ACCOUNT}:secret:prod/web/db-AbCdEf:password::`;
const STRIPE_KEY_ARN = `arn:aws:ssm:eu-west-1:${ACCOUNT}:parameter/prod/web/stripe-key`;
const HEALTH_COMMAND = ['CMD-SHELL', 'curl -fsS http://localhost:8080/healthz || exit 1'];

/** The spec behind `fixtures/described-web-arm64.json`. */
function aWebSpec(overrides: Partial<ServiceSpec> = {}): ServiceSpec {
  return {
    cluster: 'prod',
    service: 'web',
    image: WEB_IMAGE,
    desiredCount: 3,
    cpu: 512,
    memory: 1024,
    containerPort: 8080,
    environment: { LOG_LEVEL: 'info', FEATURE_FLAGS: 'checkout-v2,search-v3', NODE_ENV: 'production' },
    secrets: { DB_PASSWORD: DB_PASSWORD_ARN, STRIPE_KEY: STRIPE_KEY_ARN },
    capacityProvider: 'FARGATE',
    cpuArchitecture: 'ARM64',
    taskRoleArn: WEB_TASK_ROLE,
    healthCheck: { command: HEALTH_COMMAND, intervalSeconds: 15 },
    state: 'present',
    adopt: false,
    autoscaled: false,
    tags: { team: 'shop' },
    ...overrides,
  };
}

/** The spec behind `fixtures/described-worker-minimal.json`. */
function aWorkerSpec(overrides: Partial<ServiceSpec> = {}): ServiceSpec {
  return {
    cluster: 'batch',
    service: 'worker',
    image: 'public.ecr.aws/docker/library/node:22-alpine',
    desiredCount: 1,
    cpu: 1024,
    memory: 2048,
    environment: {},
    secrets: {},
    command: ['node', 'dist/worker.js', '--queue', 'jobs'],
    capacityProvider: 'FARGATE_SPOT',
    cpuArchitecture: 'X86_64',
    state: 'present',
    adopt: false,
    autoscaled: false,
    tags: {},
    ...overrides,
  };
}

function someDefaults(overrides: Partial<ReconcilerDefaults> = {}): ReconcilerDefaults {
  return {
    subnets: ['subnet-0a1b2c3d'],
    securityGroups: ['sg-0123abcd'],
    executionRoleArn: EXECUTION_ROLE,
    logGroupPrefix: '/ecs-reconciler/',
    region: 'eu-west-1',
    ...overrides,
  };
}

const OWNER = 'ecs-reconciler';

function desiredWeb(overrides: Partial<ServiceSpec> = {}, defaults = someDefaults()): TaskDefinition {
  return renderTaskDefinition(aWebSpec(overrides), { defaults, ownerId: OWNER });
}

function desiredWorker(overrides: Partial<ServiceSpec> = {}): TaskDefinition {
  return renderTaskDefinition(aWorkerSpec(overrides), {
    defaults: someDefaults({ logGroupPrefix: undefined }),
    ownerId: OWNER,
  });
}

/** A fresh copy of a recorded DescribeTaskDefinition answer's `taskDefinition`, optionally edited. */
function described(name: 'web-arm64' | 'worker-minimal', edit?: (td: TaskDefinition) => void): TaskDefinition {
  const path = fileURLToPath(new URL(`./fixtures/described-${name}.json`, import.meta.url));
  const td = (JSON.parse(readFileSync(path, 'utf8')) as { taskDefinition: TaskDefinition }).taskDefinition;
  edit?.(td);
  return td;
}

const liveWeb = (edit?: (td: TaskDefinition) => void) => described('web-arm64', edit);
const liveWorker = (edit?: (td: TaskDefinition) => void) => described('worker-minimal', edit);

/** The container named `name` (default: the first one). */
function containerOf(td: TaskDefinition, name?: string): ContainerDefinition {
  const found = (td.containerDefinitions ?? []).find((c) => name === undefined || c.name === name);
  if (!found) throw new Error(`no container ${name ?? '(first)'}`);
  return found;
}

function edited(td: TaskDefinition, edit: (td: TaskDefinition) => void): TaskDefinition {
  const copy = structuredClone(td);
  edit(copy);
  return copy;
}

function withoutServerOnlyFields(td: TaskDefinition): TaskDefinition {
  const copy: TaskDefinition = { ...td };
  for (const field of SERVER_ONLY_TASK_DEFINITION_FIELDS) delete copy[field];
  delete copy.enableFaultInjection;
  return copy;
}

interface EqualCase {
  case: string;
  desired: TaskDefinition;
  live: TaskDefinition;
}

/** Assess: the two compare equal, although their raw forms differ beyond server-only fields. */
function expectCanonicallyEqualButRawDifferent({ desired, live }: EqualCase): void {
  expect(withoutServerOnlyFields(live)).not.toEqual(withoutServerOnlyFields(desired));
  expect(diffTaskDefinitions(desired, live)).toEqual([]);
  expect(taskDefinitionsEqual(live, desired)).toBe(true);
  expect(canonicalTaskDefinition(live)).toEqual(canonicalTaskDefinition(desired));
}

// ---------------------------------------------------------------------------------------------
// Family and render
// ---------------------------------------------------------------------------------------------

describe('taskDefinitionFamily', () => {
  it.each([
    { case: 'cluster and service joined by a hyphen', cluster: 'prod', service: 'web', family: 'prod-web' },
    { case: 'names with hyphens and underscores', cluster: 'staging-eu', service: 'api_v2', family: 'staging-eu-api_v2' },
  ])('$case', ({ cluster, service, family }) => {
    expect(taskDefinitionFamily({ cluster, service })).toBe(family);
  });
});

describe('renderTaskDefinition', () => {
  it('renders the Fargate task-level fields from the spec', () => {
    const td = desiredWeb();

    expect(td).toMatchObject({
      family: 'prod-web',
      networkMode: 'awsvpc',
      requiresCompatibilities: ['FARGATE'],
      cpu: '512',
      memory: '1024',
      runtimePlatform: { cpuArchitecture: 'ARM64', operatingSystemFamily: 'LINUX' },
      taskRoleArn: WEB_TASK_ROLE,
    });
    expect(td.containerDefinitions).toHaveLength(1);
    expect(containerOf(td)).toMatchObject({ name: 'web', image: WEB_IMAGE, essential: true });
  });

  it.each([
    {
      case: "the spec's execution role wins over the default",
      spec: { executionRoleArn: `arn:aws:iam::${ACCOUNT}:role/web-execution` },
      defaults: someDefaults(),
      executionRoleArn: `arn:aws:iam::${ACCOUNT}:role/web-execution`,
    },
    { case: 'the default execution role when the spec names none', spec: {}, defaults: someDefaults(), executionRoleArn: EXECUTION_ROLE },
    {
      case: 'no execution role when neither names one',
      spec: {},
      defaults: someDefaults({ executionRoleArn: undefined }),
      executionRoleArn: undefined,
    },
  ])('$case', ({ spec, defaults, executionRoleArn }) => {
    expect(desiredWeb(spec, defaults).executionRoleArn).toBe(executionRoleArn);
  });

  it('sorts environment and secrets by name', () => {
    const td = desiredWeb({ environment: { Z_LAST: '1', A_FIRST: '2', M_MIDDLE: '3' }, secrets: { TOKEN: 'arn:t', API_KEY: 'arn:a' } });

    expect(containerOf(td).environment).toEqual([
      { name: 'A_FIRST', value: '2' },
      { name: 'M_MIDDLE', value: '3' },
      { name: 'Z_LAST', value: '1' },
    ]);
    expect(containerOf(td).secrets).toEqual([
      { name: 'API_KEY', valueFrom: 'arn:a' },
      { name: 'TOKEN', valueFrom: 'arn:t' },
    ]);
  });

  it.each([
    { case: 'a port mapping without hostPort when containerPort is set', containerPort: 8080, portMappings: [{ containerPort: 8080, protocol: 'tcp' }] },
    { case: 'no port mapping without containerPort', containerPort: undefined, portMappings: undefined },
  ])('$case', ({ containerPort, portMappings }) => {
    expect(containerOf(desiredWeb({ containerPort })).portMappings).toEqual(portMappings);
  });

  it.each([
    {
      case: 'every health check field in seconds',
      healthCheck: { command: ['CMD', '/bin/probe'], intervalSeconds: 10, timeoutSeconds: 2, retries: 5, startPeriodSeconds: 60 },
      rendered: { command: ['CMD', '/bin/probe'], interval: 10, timeout: 2, retries: 5, startPeriod: 60 },
    },
    {
      case: 'only the health check fields the spec sets',
      healthCheck: { command: ['CMD', '/bin/probe'], retries: 2 },
      rendered: { command: ['CMD', '/bin/probe'], retries: 2 },
    },
    { case: 'no health check when the spec has none', healthCheck: undefined, rendered: undefined },
  ])('$case', ({ healthCheck, rendered }) => {
    expect(containerOf(desiredWeb({ healthCheck })).healthCheck).toStrictEqual(rendered);
  });

  it.each([
    {
      case: 'awslogs with region when a log group prefix and region are set',
      defaults: someDefaults({ logGroupPrefix: '/apps/', region: 'eu-central-1' }),
      logConfiguration: {
        logDriver: 'awslogs',
        options: { 'awslogs-group': '/apps/prod', 'awslogs-region': 'eu-central-1', 'awslogs-stream-prefix': 'web' },
      },
    },
    {
      case: 'awslogs without region when no region is configured',
      defaults: someDefaults({ logGroupPrefix: '/apps/', region: undefined }),
      logConfiguration: { logDriver: 'awslogs', options: { 'awslogs-group': '/apps/prod', 'awslogs-stream-prefix': 'web' } },
    },
    { case: 'no log configuration without a log group prefix', defaults: someDefaults({ logGroupPrefix: undefined }), logConfiguration: undefined },
  ])('$case', ({ defaults, logConfiguration }) => {
    expect(containerOf(desiredWeb({}, defaults)).logConfiguration).toStrictEqual(logConfiguration);
  });

  it.each([
    { case: 'the command as given', command: ['node', 'server.js'], rendered: ['node', 'server.js'] },
    { case: 'no command when the spec has none', command: undefined, rendered: undefined },
    { case: 'no command when the spec has an empty one', command: [], rendered: undefined },
  ])('$case', ({ command, rendered }) => {
    expect(containerOf(desiredWeb({ command })).command).toStrictEqual(rendered);
  });

  it.each([
    {
      case: "the spec's tags sorted by key, then the owner tag",
      tags: { team: 'shop', cost: 'cc-12' } as Record<string, string>,
      rendered: [
        { key: 'cost', value: 'cc-12' },
        { key: 'team', value: 'shop' },
        { key: OWNER_TAG_KEY, value: OWNER },
      ],
    },
    {
      case: 'the owner tag cannot be overridden by the spec',
      tags: { [OWNER_TAG_KEY]: 'someone-else' } as Record<string, string>,
      rendered: [{ key: OWNER_TAG_KEY, value: OWNER }],
    },
  ])('$case', ({ tags, rendered }) => {
    expect(desiredWeb({ tags }).tags).toEqual(rendered);
  });

  it('does not share arrays with the spec', () => {
    const spec = aWebSpec({ command: ['node', 'server.js'] });
    const td = renderTaskDefinition(spec, { defaults: someDefaults(), ownerId: OWNER });

    containerOf(td).command?.push('--debug');
    containerOf(td).healthCheck?.command?.push('extra');

    expect(spec.command).toEqual(['node', 'server.js']);
    expect(spec.healthCheck?.command).toEqual(HEALTH_COMMAND);
  });
});

// ---------------------------------------------------------------------------------------------
// Canonical comparison, one block per class of docs/ecs-facts.md §6
// ---------------------------------------------------------------------------------------------

describe('canonical comparison', () => {
  it.each<EqualCase>([
    { case: 'web (ARM64, port, health check, secrets, awslogs) as DescribeTaskDefinition answers it', desired: desiredWeb(), live: liveWeb() },
    { case: 'worker (no port, no logs, command) as DescribeTaskDefinition answers it', desired: desiredWorker(), live: liveWorker() },
  ])('$case', (c) => expectCanonicallyEqualButRawDifferent(c));

  describe('ECS defaults filled in by the server', () => {
    it.each<EqualCase>([
      {
        case: 'container essential absent in the input, true in the description',
        desired: edited(desiredWeb(), (td) => delete containerOf(td).essential),
        live: liveWeb(),
      },
      {
        case: 'port mapping protocol absent in the input, tcp in the description',
        desired: edited(desiredWeb(), (td) => delete containerOf(td).portMappings![0].protocol),
        live: liveWeb(),
      },
      {
        case: 'hostPort absent in the input, equal to containerPort in awsvpc',
        desired: desiredWeb(),
        live: liveWeb((td) => expect(containerOf(td).portMappings![0].hostPort).toBe(8080)),
      },
      {
        case: 'hostPort 0 (dynamic) in a description',
        desired: desiredWeb(),
        live: liveWeb((td) => (containerOf(td).portMappings![0].hostPort = 0)),
      },
      {
        case: 'container cpu 0 in the description',
        desired: desiredWorker(),
        live: liveWorker((td) => expect(containerOf(td).cpu).toBe(0)),
      },
      {
        case: 'health check timeout 5 and retries 3 filled in',
        desired: desiredWeb({ healthCheck: { command: HEALTH_COMMAND, intervalSeconds: 15 } }),
        live: liveWeb((td) => expect(containerOf(td).healthCheck).toMatchObject({ timeout: 5, retries: 3 })),
      },
      {
        case: 'health check interval 30 filled in when the spec sets none',
        desired: desiredWeb({ healthCheck: { command: HEALTH_COMMAND } }),
        live: liveWeb((td) => (containerOf(td).healthCheck!.interval = 30)),
      },
      {
        case: 'health check startPeriod 0 in the description',
        desired: desiredWeb(),
        live: liveWeb((td) => (containerOf(td).healthCheck!.startPeriod = 0)),
      },
      {
        case: 'health check defaults given explicitly in the spec',
        desired: desiredWeb({ healthCheck: { command: HEALTH_COMMAND, intervalSeconds: 30, timeoutSeconds: 5, retries: 3, startPeriodSeconds: 0 } }),
        live: liveWeb((td) => delete containerOf(td).healthCheck!.interval),
      },
      {
        case: 'log configuration secretOptions [] in the description',
        desired: desiredWeb(),
        live: liveWeb((td) => expect(containerOf(td).logConfiguration?.secretOptions).toEqual([])),
      },
      {
        case: 'runtimePlatform absent on an older revision = LINUX / X86_64',
        desired: desiredWorker(),
        live: liveWorker((td) => delete td.runtimePlatform),
      },
      {
        case: 'runtimePlatform without operatingSystemFamily = LINUX',
        desired: desiredWeb(),
        live: liveWeb((td) => (td.runtimePlatform = { cpuArchitecture: 'ARM64' })),
      },
      {
        case: 'networkMode absent in a Fargate input = awsvpc',
        desired: edited(desiredWeb(), (td) => delete td.networkMode),
        live: liveWeb(),
      },
    ])('$case', (c) => expectCanonicallyEqualButRawDifferent(c));
  });

  describe('empty lists and missing fields', () => {
    const emptyContainerLists = [
      'mountPoints',
      'volumesFrom',
      'portMappings',
      'environment',
      'secrets',
      'systemControls',
      'command',
      'entryPoint',
      'ulimits',
      'dnsServers',
      'dnsSearchDomains',
      'extraHosts',
      'links',
      'environmentFiles',
      'dependsOn',
      'credentialSpecs',
      'resourceRequirements',
    ];
    it.each<EqualCase>([
      ...emptyContainerLists.map((field) => ({
        case: `container ${field}: [] = absent`,
        desired: desiredWorker({ command: undefined }),
        live: liveWorker((td) => {
          const c = containerOf(td);
          delete c.command;
          for (const f of emptyContainerLists) delete c[f];
          c[field] = [];
        }),
      })),
      ...['volumes', 'placementConstraints', 'inferenceAccelerators'].map((field) => ({
        case: `task ${field}: [] = absent`,
        desired: desiredWorker(),
        live: liveWorker((td) => {
          delete td.volumes;
          delete td.placementConstraints;
          td[field] = [];
        }),
      })),
      {
        case: 'an empty command in the spec and [] in the description',
        desired: desiredWorker({ command: [] }),
        live: liveWorker((td) => (containerOf(td).command = [])),
      },
      {
        case: 'dockerLabels {} and empty linuxParameters',
        desired: desiredWorker(),
        live: liveWorker((td) => {
          containerOf(td).dockerLabels = {};
          containerOf(td).linuxParameters = { capabilities: { add: [], drop: [] }, devices: [], tmpfs: [] };
        }),
      },
      {
        case: 'null where a field is unset',
        desired: desiredWorker(),
        live: liveWorker((td) => {
          td.proxyConfiguration = null;
          td.pidMode = null;
          containerOf(td).logConfiguration = null as never;
        }),
      },
      {
        case: 'an environment entry without value = value ""',
        desired: desiredWeb({ environment: { ...aWebSpec().environment, EMPTY: '' } }),
        live: liveWeb((td) => containerOf(td).environment!.push({ name: 'EMPTY' })),
      },
      {
        case: 'a task role given as undefined in the input',
        desired: desiredWorker({ taskRoleArn: undefined }),
        live: liveWorker((td) => (td.taskRoleArn = undefined)),
      },
    ])('$case', (c) => expectCanonicallyEqualButRawDifferent(c));
  });

  describe('task cpu and memory as numeric strings', () => {
    it.each([
      { case: '"0.25 vCPU" / "0.5 GB" register as "256" / "512"', cpu: '0.25 vCPU', memory: '0.5 GB', describedCpu: '256', describedMemory: '512' },
      { case: '"1 vCPU" / "2 GB" register as "1024" / "2048"', cpu: '1 vCPU', memory: '2 GB', describedCpu: '1024', describedMemory: '2048' },
      { case: 'lower case without a space: "2vcpu" / "4gb"', cpu: '2vcpu', memory: '4gb', describedCpu: '2048', describedMemory: '4096' },
      { case: 'numbers 512 / 1024 instead of strings', cpu: 512, memory: 1024, describedCpu: '512', describedMemory: '1024' },
      { case: 'surrounding spaces " 4096 "', cpu: ' 4096 ', memory: '8192', describedCpu: '4096', describedMemory: '8192' },
    ])('$case', ({ cpu, memory, describedCpu, describedMemory }) => {
      const desired = edited(desiredWorker(), (td) => {
        td.cpu = cpu as string;
        td.memory = memory as string;
      });
      const live = liveWorker((td) => {
        td.cpu = describedCpu;
        td.memory = describedMemory;
      });

      expectCanonicallyEqualButRawDifferent({ case: '', desired, live });
      expect(canonicalTaskDefinition(desired)).toMatchObject({ cpu: describedCpu, memory: describedMemory });
    });

    it.each([
      { case: 'unparseable cpu is kept and differs', cpu: 'a lot', field: 'cpu' },
      { case: 'a fraction of a vCPU unit is kept and differs', cpu: '0.0001 vCPU', field: 'cpu' },
    ])('$case', ({ cpu, field }) => {
      const desired = edited(desiredWorker(), (td) => (td.cpu = cpu));

      expect(diffTaskDefinitions(desired, liveWorker())).toEqual([{ field, from: '1024', to: cpu }]);
    });
  });

  describe('server-only fields', () => {
    // Live = rendered input + what only the server adds: nothing else differs.
    const withServerFields = (edit: (td: TaskDefinition) => void) => edited(desiredWeb(), edit);
    it.each<EqualCase>([
      {
        case: 'taskDefinitionArn, revision, status, registeredAt, registeredBy',
        desired: desiredWeb(),
        live: withServerFields((td) => {
          td.taskDefinitionArn = `arn:aws:ecs:eu-west-1:${ACCOUNT}:task-definition/prod-web:14`;
          td.revision = 14;
          td.status = 'ACTIVE';
          td.registeredAt = new Date('2025-01-31T12:27:22.117Z');
          td.registeredBy = `arn:aws:sts::${ACCOUNT}:assumed-role/ecs-reconciler-fn/ecs-reconciler`;
        }),
      },
      {
        case: 'requiresAttributes and compatibilities',
        desired: desiredWeb(),
        live: withServerFields((td) => {
          td.requiresAttributes = liveWeb().requiresAttributes;
          td.compatibilities = ['EC2', 'FARGATE'];
        }),
      },
      {
        case: 'an INACTIVE revision with deregisteredAt and deleteRequestedAt',
        desired: desiredWeb(),
        live: withServerFields((td) => {
          td.status = 'DELETE_IN_PROGRESS';
          td.deregisteredAt = 1738412842.5;
          td.deleteRequestedAt = 1738412900.1;
        }),
      },
      {
        case: 'tags are not compared (other tags, or none)',
        desired: desiredWeb(),
        live: withServerFields((td) => (td.tags = [{ key: 'team', value: 'platform' }])),
      },
      {
        case: 'enableFaultInjection: false',
        desired: desiredWeb(),
        live: withServerFields((td) => (td.enableFaultInjection = false)),
      },
    ])('$case', ({ desired, live }) => {
      expect(live).not.toEqual(desired);
      expect(diffTaskDefinitions(desired, live)).toEqual([]);
      expect(taskDefinitionsEqual(desired, live)).toBe(true);
    });

    it('the canonical form holds no server-only field', () => {
      const canonical = canonicalTaskDefinition(liveWeb());

      for (const field of SERVER_ONLY_TASK_DEFINITION_FIELDS) expect(canonical).not.toHaveProperty(field);
      expect(canonical).not.toHaveProperty('enableFaultInjection');
    });
  });

  describe('order', () => {
    const sidecar: ContainerDefinition = { name: 'datadog-agent', image: 'public.ecr.aws/datadog/agent:7', essential: false };
    it.each<EqualCase>([
      {
        case: 'environment is a set keyed by name',
        desired: desiredWeb(),
        live: liveWeb((td) => containerOf(td).environment!.reverse()),
      },
      {
        case: 'secrets are a set keyed by name',
        desired: desiredWeb(),
        live: liveWeb((td) => containerOf(td).secrets!.reverse()),
      },
      {
        case: 'containers are matched by name',
        desired: edited(desiredWeb(), (td) => td.containerDefinitions!.push(structuredClone(sidecar))),
        live: liveWeb((td) => td.containerDefinitions!.unshift(structuredClone(sidecar))),
      },
      {
        case: 'requiresCompatibilities is a set',
        desired: edited(desiredWeb(), (td) => (td.requiresCompatibilities = ['EC2', 'FARGATE'])),
        live: liveWeb((td) => (td.requiresCompatibilities = ['FARGATE', 'EC2'])),
      },
      {
        case: 'port mappings are a set',
        desired: edited(desiredWeb(), (td) => containerOf(td).portMappings!.push({ containerPort: 9090, protocol: 'tcp' })),
        live: liveWeb((td) => containerOf(td).portMappings!.unshift({ containerPort: 9090, hostPort: 9090, protocol: 'tcp' })),
      },
      {
        case: 'log secretOptions are a set keyed by name',
        desired: edited(desiredWeb(), (td) => {
          containerOf(td).logConfiguration!.secretOptions = [
            { name: 'apikey', valueFrom: `arn:aws:ssm:eu-west-1:${ACCOUNT}:parameter/dd/apikey` },
            { name: 'tls', valueFrom: `arn:aws:ssm:eu-west-1:${ACCOUNT}:parameter/dd/tls` },
          ];
        }),
        live: liveWeb((td) => {
          containerOf(td).logConfiguration!.secretOptions = [
            { name: 'tls', valueFrom: `arn:aws:ssm:eu-west-1:${ACCOUNT}:parameter/dd/tls` },
            { name: 'apikey', valueFrom: `arn:aws:ssm:eu-west-1:${ACCOUNT}:parameter/dd/apikey` },
          ];
        }),
      },
      {
        case: 'object key order means nothing',
        desired: desiredWeb(),
        live: liveWeb((td) => {
          const options = containerOf(td).logConfiguration!.options!;
          containerOf(td).logConfiguration!.options = Object.fromEntries(Object.entries(options).reverse());
        }),
      },
    ])('$case', (c) => expectCanonicallyEqualButRawDifferent(c));

    it('command order is meaningful', () => {
      const live = liveWorker((td) => containerOf(td).command!.reverse());

      expect(diffTaskDefinitions(desiredWorker(), live)).toEqual([
        {
          field: 'containerDefinitions[worker].command',
          from: '["jobs","--queue","dist/worker.js","node"]',
          to: '["node","dist/worker.js","--queue","jobs"]',
        },
      ]);
    });
  });

  describe('fields the reconciler never renders', () => {
    it.each<EqualCase>([
      {
        case: 'booleans at their default false',
        desired: desiredWeb(),
        live: liveWeb((td) => {
          Object.assign(containerOf(td), {
            readonlyRootFilesystem: false,
            privileged: false,
            interactive: false,
            pseudoTerminal: false,
            disableNetworking: false,
          });
        }),
      },
      {
        case: 'versionConsistency "enabled" (image tag resolved to a digest, the default)',
        desired: desiredWeb(),
        live: liveWeb((td) => (containerOf(td).versionConsistency = 'enabled')),
      },
      {
        case: 'stopTimeout 30 seconds (the Fargate default)',
        desired: desiredWeb(),
        live: liveWeb((td) => (containerOf(td).stopTimeout = 30)),
      },
      {
        case: 'restartPolicy disabled',
        desired: desiredWeb(),
        live: liveWeb((td) => (containerOf(td).restartPolicy = { enabled: false, ignoredExitCodes: [] })),
      },
      {
        case: 'ephemeralStorage 20 GiB (the Fargate default)',
        desired: desiredWeb(),
        live: liveWeb((td) => (td.ephemeralStorage = { sizeInGiB: 20 })),
      },
      {
        case: 'awslogs secretOptions and options given as empty',
        desired: desiredWorker(),
        live: liveWorker((td) => (containerOf(td).logConfiguration = { options: {}, secretOptions: [] } as never)),
      },
    ])('$case', (c) => expectCanonicallyEqualButRawDifferent(c));

    it('an EFS volume with ECS defaults equals the same volume without them', () => {
      const volume = { name: 'shared', efsVolumeConfiguration: { fileSystemId: 'fs-0abc1234' } };
      const desired = edited(desiredWeb(), (td) => (td.volumes = [structuredClone(volume)]));
      const live = liveWeb((td) => {
        td.volumes = [
          {
            name: 'shared',
            efsVolumeConfiguration: {
              fileSystemId: 'fs-0abc1234',
              rootDirectory: '/',
              transitEncryption: 'DISABLED',
              authorizationConfig: { iam: 'DISABLED' },
            },
          },
        ];
      });

      expectCanonicallyEqualButRawDifferent({ case: '', desired, live });
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Real differences
// ---------------------------------------------------------------------------------------------

describe('diffTaskDefinitions reports every real difference (from = live, to = desired)', () => {
  const web = 'containerDefinitions[web]';
  it.each<{ case: string; desired: TaskDefinition; live: TaskDefinition; changes: FieldChange[] }>([
    {
      case: 'image',
      desired: desiredWeb({ image: `${ACCOUNT}.dkr.ecr.eu-west-1.amazonaws.com/shop/web:2025-02-03.1` }),
      live: liveWeb(),
      changes: [{ field: `${web}.image`, from: WEB_IMAGE, to: `${ACCOUNT}.dkr.ecr.eu-west-1.amazonaws.com/shop/web:2025-02-03.1` }],
    },
    {
      case: 'environment value',
      desired: desiredWeb({ environment: { ...aWebSpec().environment, LOG_LEVEL: 'debug' } }),
      live: liveWeb(),
      changes: [{ field: `${web}.environment.LOG_LEVEL`, from: 'info', to: 'debug' }],
    },
    {
      case: 'environment variable added by the spec',
      desired: desiredWeb({ environment: { ...aWebSpec().environment, CACHE_URL: 'redis://cache:6379' } }),
      live: liveWeb(),
      changes: [{ field: `${web}.environment.CACHE_URL`, from: ABSENT, to: 'redis://cache:6379' }],
    },
    {
      case: 'environment variable added by hand',
      desired: desiredWeb(),
      live: liveWeb((td) => containerOf(td).environment!.push({ name: 'DEBUG', value: '*' })),
      changes: [{ field: `${web}.environment.DEBUG`, from: '*', to: ABSENT }],
    },
    {
      case: 'environment variable set to an empty string',
      desired: desiredWeb({ environment: { ...aWebSpec().environment, EMPTY: '' } }),
      live: liveWeb(),
      changes: [{ field: `${web}.environment.EMPTY`, from: ABSENT, to: '' }],
    },
    {
      case: 'task cpu',
      desired: desiredWeb({ cpu: 1024 }),
      live: liveWeb(),
      changes: [{ field: 'cpu', from: '512', to: '1024' }],
    },
    {
      case: 'task memory',
      desired: desiredWeb({ memory: 2048 }),
      live: liveWeb(),
      changes: [{ field: 'memory', from: '1024', to: '2048' }],
    },
    {
      case: 'container port',
      desired: desiredWeb({ containerPort: 9090 }),
      live: liveWeb(),
      changes: [
        {
          field: `${web}.portMappings`,
          from: '[{"containerPort":8080}]',
          to: '[{"containerPort":9090}]',
        },
      ],
    },
    {
      case: 'container port removed',
      desired: desiredWeb({ containerPort: undefined }),
      live: liveWeb(),
      changes: [{ field: `${web}.portMappings`, from: '[{"containerPort":8080}]', to: ABSENT }],
    },
    {
      case: 'a hostPort other than containerPort',
      desired: desiredWeb(),
      live: liveWeb((td) => (containerOf(td).portMappings![0].hostPort = 80)),
      changes: [
        {
          field: `${web}.portMappings`,
          from: '[{"containerPort":8080,"hostPort":80}]',
          to: '[{"containerPort":8080}]',
        },
      ],
    },
    {
      case: 'secret source',
      desired: desiredWeb({ secrets: { ...aWebSpec().secrets, DB_PASSWORD: `${DB_PASSWORD_ARN}v2` } }),
      live: liveWeb(),
      changes: [{ field: `${web}.secrets.DB_PASSWORD`, from: DB_PASSWORD_ARN, to: `${DB_PASSWORD_ARN}v2` }],
    },
    {
      case: 'secret removed',
      desired: desiredWeb({ secrets: { DB_PASSWORD: DB_PASSWORD_ARN } }),
      live: liveWeb(),
      changes: [{ field: `${web}.secrets.STRIPE_KEY`, from: STRIPE_KEY_ARN, to: ABSENT }],
    },
    {
      case: 'health check interval',
      desired: desiredWeb({ healthCheck: { command: HEALTH_COMMAND, intervalSeconds: 30 } }),
      live: liveWeb(),
      changes: [{ field: `${web}.healthCheck.interval`, from: '15', to: '30' }],
    },
    {
      case: 'health check command and start period',
      desired: desiredWeb({ healthCheck: { command: ['CMD', '/healthcheck'], intervalSeconds: 15, startPeriodSeconds: 60 } }),
      live: liveWeb(),
      changes: [
        { field: `${web}.healthCheck.command`, from: JSON.stringify(HEALTH_COMMAND), to: '["CMD","/healthcheck"]' },
        { field: `${web}.healthCheck.startPeriod`, from: "0", to: '60' },
      ],
    },
    {
      case: 'health check removed',
      desired: desiredWeb({ healthCheck: undefined }),
      live: liveWeb(),
      changes: [
        {
          field: `${web}.healthCheck`,
          // Shortened for display: the start of the canonical health check.
          from: expect.stringMatching(/^\{"command":\["CMD-SHELL","curl -fsS http:\/\/localhost:8080\/healthz \|\| exit 1"\],"interval":15\}$/),
          to: ABSENT,
        },
      ],
    },
    {
      case: 'task role',
      desired: desiredWeb({ taskRoleArn: `arn:aws:iam::${ACCOUNT}:role/prod-web-task-v2` }),
      live: liveWeb(),
      changes: [{ field: 'taskRoleArn', from: WEB_TASK_ROLE, to: `arn:aws:iam::${ACCOUNT}:role/prod-web-task-v2` }],
    },
    {
      case: 'task role removed',
      desired: desiredWeb({ taskRoleArn: undefined }),
      live: liveWeb(),
      changes: [{ field: 'taskRoleArn', from: WEB_TASK_ROLE, to: ABSENT }],
    },
    {
      case: 'execution role',
      desired: desiredWeb({ executionRoleArn: `arn:aws:iam::${ACCOUNT}:role/web-execution` }),
      live: liveWeb(),
      changes: [{ field: 'executionRoleArn', from: EXECUTION_ROLE, to: `arn:aws:iam::${ACCOUNT}:role/web-execution` }],
    },
    {
      case: 'command added',
      desired: desiredWeb({ command: ['node', 'server.js'] }),
      live: liveWeb(),
      changes: [{ field: `${web}.command`, from: ABSENT, to: '["node","server.js"]' }],
    },
    {
      case: 'cpu architecture',
      desired: desiredWeb({ cpuArchitecture: 'X86_64' }),
      live: liveWeb(),
      changes: [{ field: 'runtimePlatform.cpuArchitecture', from: 'ARM64', to: 'X86_64' }],
    },
    {
      case: 'ARM64 wanted, runtimePlatform absent (X86_64) on the live revision',
      desired: desiredWorker({ cpuArchitecture: 'ARM64' }),
      live: liveWorker((td) => delete td.runtimePlatform),
      changes: [{ field: 'runtimePlatform.cpuArchitecture', from: 'X86_64', to: 'ARM64' }],
    },
    {
      case: 'an extra container added by hand',
      desired: desiredWeb(),
      live: liveWeb((td) =>
        td.containerDefinitions!.push({ name: 'datadog-agent', image: 'public.ecr.aws/datadog/agent:7', cpu: 0, essential: false }),
      ),
      changes: [{ field: 'containerDefinitions[datadog-agent]', from: 'container (image public.ecr.aws/datadog/agent:7)', to: ABSENT }],
    },
    {
      case: 'a volume and its mount point added by hand',
      desired: desiredWeb(),
      live: liveWeb((td) => {
        td.volumes = [{ name: 'scratch', host: {} }];
        containerOf(td).mountPoints = [{ sourceVolume: 'scratch', containerPath: '/tmp/scratch', readOnly: false }];
      }),
      changes: [
        { field: `${web}.mountPoints`, from: '[{"containerPath":"/tmp/scratch","sourceVolume":"scratch"}]', to: ABSENT },
        { field: 'volumes', from: '[{"name":"scratch"}]', to: ABSENT },
      ],
    },
    {
      case: 'logging switched off in the configuration',
      desired: desiredWeb({}, someDefaults({ logGroupPrefix: undefined })),
      live: liveWeb(),
      changes: [
        {
          field: `${web}.logConfiguration`,
          from: expect.stringMatching(/^\{"logDriver":"awslogs","options":\{"awslogs-group":"\/ecs-reconciler\/prod",/),
          to: ABSENT,
        },
      ],
    },
    {
      case: 'log group renamed',
      desired: desiredWeb({}, someDefaults({ logGroupPrefix: '/apps/' })),
      live: liveWeb(),
      changes: [{ field: `${web}.logConfiguration.options.awslogs-group`, from: '/ecs-reconciler/prod', to: '/apps/prod' }],
    },
    {
      case: 'container made non-essential by hand',
      desired: desiredWeb(),
      live: liveWeb((td) => (containerOf(td).essential = false)),
      changes: [{ field: `${web}.essential`, from: 'false', to: 'true' }],
    },
    {
      case: 'a non-default field the reconciler never renders',
      desired: desiredWeb(),
      live: liveWeb((td) => (containerOf(td).readonlyRootFilesystem = true)),
      changes: [{ field: `${web}.readonlyRootFilesystem`, from: 'true', to: "false" }],
    },
    {
      case: 'ephemeral storage beyond the default',
      desired: desiredWeb(),
      live: liveWeb((td) => (td.ephemeralStorage = { sizeInGiB: 50 })),
      changes: [{ field: 'ephemeralStorage.sizeInGiB', from: '50', to: '20' }],
    },
    {
      case: 'EC2-only compatibility',
      desired: desiredWeb(),
      live: liveWeb((td) => (td.requiresCompatibilities = ['EC2'])),
      changes: [{ field: 'requiresCompatibilities', from: '["EC2"]', to: '["FARGATE"]' }],
    },
    {
      case: 'another family (a service adopted with its own task definition)',
      desired: desiredWeb(),
      live: liveWeb((td) => (td.family = 'legacy-web')),
      changes: [{ field: 'family', from: 'legacy-web', to: 'prod-web' }],
    },
  ])('$case', ({ desired, live, changes }) => {
    expect(diffTaskDefinitions(desired, live)).toEqual(changes);
    expect(taskDefinitionsEqual(desired, live)).toBe(false);
  });

  it('lists several differences in a stable order: task fields, then containers by name', () => {
    const desired = desiredWeb({
      cpu: 1024,
      image: 'nginx:1.27',
      taskRoleArn: undefined,
      environment: { ...aWebSpec().environment, LOG_LEVEL: 'warn' },
    });
    const live = liveWeb((td) => td.containerDefinitions!.push({ name: 'datadog-agent', image: 'datadog/agent:7' }));

    expect(diffTaskDefinitions(desired, live).map((c) => c.field)).toEqual([
      'cpu',
      'taskRoleArn',
      'containerDefinitions[datadog-agent]',
      'containerDefinitions[web].image',
      'containerDefinitions[web].environment.LOG_LEVEL',
    ]);
  });

  it('swapping desired and live swaps from and to', () => {
    const desired = desiredWeb({ image: 'nginx:1.27', memory: 2048 });
    const live = liveWeb();

    const forward = diffTaskDefinitions(desired, live);
    const backward = diffTaskDefinitions(live, desired);

    expect(forward).toHaveLength(2);
    expect(backward).toEqual(forward.map(({ field, from, to }) => ({ field, from: to, to: from })));
  });

  it('shortens long values', () => {
    const longImage = `registry.example.com/${'very-long-path/'.repeat(20)}app:1`;

    const [change] = diffTaskDefinitions(desiredWeb({ image: longImage }), liveWeb());

    expect(change.to.length).toBeLessThanOrEqual(100);
    expect(change.to.endsWith('…')).toBe(true);
    expect(longImage.startsWith(change.to.slice(0, -1))).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

/** What ECS does to a RegisterTaskDefinition input before answering it (docs/ecs-facts.md §6). */
function asEcsDescribesIt(input: TaskDefinition, seed: number): TaskDefinition {
  const shuffle = <T>(xs: T[] | undefined): T[] => {
    const out = [...(xs ?? [])];
    let s = seed >>> 0 || 1;
    for (let i = out.length - 1; i > 0; i--) {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0;
      const j = s % (i + 1);
      [out[i], out[j]] = [out[j], out[i]];
    }
    return out;
  };
  const { tags: _tags, ...rest } = structuredClone(input);
  return {
    taskDefinitionArn: `arn:aws:ecs:eu-west-1:${ACCOUNT}:task-definition/${input.family}:1`,
    ...rest,
    containerDefinitions: (rest.containerDefinitions ?? []).map((c) => ({
      ...c,
      cpu: c.cpu ?? 0,
      essential: c.essential ?? true,
      portMappings: (c.portMappings ?? []).map((p) => ({ ...p, hostPort: p.hostPort ?? p.containerPort, protocol: p.protocol ?? 'tcp' })),
      environment: shuffle(c.environment),
      secrets: c.secrets ? shuffle(c.secrets) : undefined,
      mountPoints: [],
      volumesFrom: [],
      systemControls: [],
      healthCheck: c.healthCheck
        ? { interval: 30, timeout: 5, retries: 3, ...c.healthCheck }
        : undefined,
      logConfiguration: c.logConfiguration ? { ...c.logConfiguration, secretOptions: [] } : undefined,
    })),
    revision: 1,
    volumes: [],
    status: 'ACTIVE',
    requiresAttributes: [{ name: 'com.amazonaws.ecs.capability.docker-remote-api.1.18' }, { name: 'ecs.capability.task-eni' }],
    placementConstraints: [],
    compatibilities: ['EC2', 'FARGATE'],
    registeredAt: new Date('2025-01-31T12:00:00Z'),
    registeredBy: `arn:aws:iam::${ACCOUNT}:root`,
    enableFaultInjection: false,
  };
}

const fargateSizes = fc.constantFrom([256, 512], [512, 1024], [1024, 2048], [2048, 4096], [4096, 8192], [8192, 16384]);
const envName = fc.stringMatching(/^[A-Z_][A-Z0-9_]{0,12}$/);
const arbitrarySpec = fc
  .record({
    service: fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
    image: fc.stringMatching(/^[a-z0-9./-]{1,30}:[a-z0-9.-]{1,10}$/),
    size: fargateSizes,
    containerPort: fc.option(fc.integer({ min: 1, max: 65_535 }), { nil: undefined }),
    environment: fc.dictionary(envName, fc.string({ maxLength: 20 }), { maxKeys: 8 }),
    secrets: fc.dictionary(envName, fc.stringMatching(/^arn:aws:ssm:eu-west-1:\d{12}:parameter\/[a-z/]{1,20}$/), { maxKeys: 4 }),
    command: fc.option(fc.array(fc.string({ maxLength: 10 }), { maxLength: 4 }), { nil: undefined }),
    cpuArchitecture: fc.constantFrom('X86_64' as const, 'ARM64' as const),
    taskRoleArn: fc.option(fc.constant(WEB_TASK_ROLE), { nil: undefined }),
    healthCheck: fc.option(
      fc.record(
        {
          command: fc.constant(HEALTH_COMMAND),
          intervalSeconds: fc.integer({ min: 5, max: 300 }),
          timeoutSeconds: fc.integer({ min: 2, max: 60 }),
          retries: fc.integer({ min: 1, max: 10 }),
          startPeriodSeconds: fc.integer({ min: 0, max: 300 }),
        },
        { requiredKeys: ['command'] },
      ),
      { nil: undefined },
    ),
    logGroupPrefix: fc.option(fc.constantFrom('/ecs/', '/apps/'), { nil: undefined }),
  })
  .map(({ size, logGroupPrefix, ...s }) => ({
    spec: aWebSpec({ ...s, cpu: size[0], memory: size[1] }),
    defaults: someDefaults({ logGroupPrefix }),
  }));

describe('properties', () => {
  it('any rendered spec equals what ECS makes of it', () => {
    fc.assert(
      fc.property(arbitrarySpec, fc.integer(), ({ spec, defaults }, seed) => {
        const desired = renderTaskDefinition(spec, { defaults, ownerId: OWNER });
        expect(diffTaskDefinitions(desired, asEcsDescribesIt(desired, seed))).toEqual([]);
      }),
    );
  });

  it('a changed environment value is reported under its name, and nothing else', () => {
    fc.assert(
      fc.property(
        arbitrarySpec.filter(({ spec }) => Object.keys(spec.environment).length > 0),
        fc.nat(),
        fc.string({ maxLength: 20 }),
        ({ spec, defaults }, pick, newValue) => {
          const names = Object.keys(spec.environment);
          const name = names[pick % names.length];
          fc.pre(spec.environment[name] !== newValue);
          const live = asEcsDescribesIt(renderTaskDefinition(spec, { defaults, ownerId: OWNER }), pick);
          const changed = { ...spec, environment: { ...spec.environment, [name]: newValue } };

          const changes = diffTaskDefinitions(renderTaskDefinition(changed, { defaults, ownerId: OWNER }), live);

          expect(changes.map((c) => c.field)).toEqual([`containerDefinitions[${spec.service}].environment.${name}`]);
        },
      ),
    );
  });
});

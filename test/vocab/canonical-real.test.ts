/**
 * The canonical comparison at full breadth, table-driven over the real payloads of
 * `test/fixtures/real/`:
 *
 * - zero false differences: each real task definition, as published, against the form the ECS
 *   simulator describes it in (ECS's defaults filled in, empty lists added, hostPort set, numbers
 *   as strings), and against the same form reordered and respelled the ways ECS and people write
 *   it (containers, environment, secrets, ports and mount points in another order; task cpu and
 *   memory as numbers, `"1 vCPU"` / `"2 GB"`; protocol in upper case);
 * - no missed real difference: for each class of field, a mutated live value is reported under its
 *   own path, and only there, for every fixture where the field exists.
 *
 * The service half: each real Fargate service answer, imported, compares equal to itself, and a
 * mutated live field is reported under its path.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DescribeTaskDefinitionCommand, ECSClient, RegisterTaskDefinitionCommand } from '@aws-sdk/client-ecs';
import { toObservedService } from '../../lambda/adapters/ecs-observer';
import { importService } from '../../lambda/core/import-spec';
import { desiredServiceConfig, diffService } from '../../lambda/core/plan-service';
import { diffTaskDefinitions } from '../../lambda/core/taskdef';
import type { ObservedService, TaskDefinition } from '../../lambda/core/types';
import { startSimulator, type Simulator } from '../../local/sim';
import { asFargateRegistration, concretize, importCases } from '../support/import-cases';
import { LOCAL_CLIENT_CONFIG } from '../support/moto';
import { realServices } from '../support/real-fixtures';

type Json = Record<string, any>;

let sim: Simulator;
let ecs: ECSClient;
beforeAll(async () => {
  sim = await startSimulator({ port: 0, throttling: false });
  ecs = new ECSClient({ ...LOCAL_CLIENT_CONFIG, endpoint: sim.endpoint, maxAttempts: 1 });
});
afterAll(async () => {
  ecs?.destroy();
  await sim?.close();
});

const cases = importCases();
let n = 0;

/** The published task definition (made Fargate) and the form the simulator describes it in. */
async function registered(register: Json): Promise<{ input: TaskDefinition; described: TaskDefinition }> {
  const input = { ...structuredClone(register), family: `${register.family}-${++n}` } as Json;
  const reg = await ecs.send(new RegisterTaskDefinitionCommand(input as never));
  const out = await ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: reg.taskDefinition?.taskDefinitionArn }));
  return { input: input as TaskDefinition, described: JSON.parse(JSON.stringify(out.taskDefinition)) as TaskDefinition };
}

/** The same task definition written another way: orders reversed, numbers respelled. */
function respelled(td: Json): Json {
  const out = structuredClone(td);
  out.containerDefinitions = [...out.containerDefinitions].reverse();
  for (const c of out.containerDefinitions) {
    for (const list of ['environment', 'secrets', 'portMappings', 'mountPoints', 'ulimits', 'dependsOn', 'volumesFrom']) {
      if (Array.isArray(c[list])) c[list] = [...c[list]].reverse();
    }
    for (const p of c.portMappings ?? []) if (typeof p.protocol === 'string') p.protocol = p.protocol.toUpperCase();
  }
  if (Array.isArray(out.volumes)) out.volumes = [...out.volumes].reverse();
  if (out.cpu === '1024') out.cpu = '1 vCPU';
  else if (typeof out.cpu === 'string') out.cpu = Number(out.cpu);
  if (out.memory === '2048') out.memory = '2 GB';
  else if (typeof out.memory === 'string') out.memory = Number(out.memory);
  return out;
}

describe.each(cases.map((k) => [k.name, k] as const))('real task definition %s', (_name, k) => {
  it('has zero false differences against its described form, and against the same written another way', async () => {
    const { input, described } = await registered(k.register as Json);
    expect(diffTaskDefinitions(input, described)).toEqual([]);
    expect(diffTaskDefinitions(input, respelled(described) as TaskDefinition)).toEqual([]);
    expect(diffTaskDefinitions(respelled(input) as TaskDefinition, described)).toEqual([]);
  });
});

/**
 * One class of field: where it is in a task definition (`find` returns the container, or
 * undefined when the fixture has none such), how to change it on the live side, and the path the
 * change must be reported under.
 */
interface MutationClass {
  readonly name: string;
  readonly mutate: (td: Json) => string | undefined;
}

const firstContainer = (td: Json, has: (c: Json) => boolean) => (td.containerDefinitions as Json[]).find(has);
const containerMutation = (name: string, has: (c: Json) => boolean, change: (c: Json) => string): MutationClass => ({
  name,
  mutate: (td) => {
    const c = firstContainer(td, has);
    return c ? `containerDefinitions[${c.name}]${change(c)}` : undefined;
  },
});

const MUTATIONS: MutationClass[] = [
  containerMutation('image', () => true, (c) => ((c.image = `${c.image}-changed`), '.image')),
  containerMutation('container cpu', () => true, (c) => ((c.cpu = (c.cpu ?? 0) + 128), '.cpu')),
  containerMutation('container memoryReservation', (c) => c.memoryReservation !== undefined, (c) => ((c.memoryReservation += 1), '.memoryReservation')),
  containerMutation('essential', () => true, (c) => ((c.essential = c.essential === false), '.essential')),
  containerMutation('environment value', (c) => (c.environment ?? []).length > 0, (c) => ((c.environment[0].value = `${c.environment[0].value}x`), `.environment.${c.environment[0].name}`)),
  containerMutation('environment added', () => true, (c) => ((c.environment = [...(c.environment ?? []), { name: 'ADDED_BY_HAND', value: '1' }]), '.environment.ADDED_BY_HAND')),
  containerMutation('secret', (c) => (c.secrets ?? []).length > 0, (c) => ((c.secrets[0].valueFrom = `${c.secrets[0].valueFrom}-2`), `.secrets.${c.secrets[0].name}`)),
  containerMutation('command', (c) => (c.command ?? []).length > 0, (c) => ((c.command = [...c.command, '--extra']), '.command')),
  containerMutation('entryPoint', (c) => (c.entryPoint ?? []).length > 0, (c) => ((c.entryPoint = [...c.entryPoint].reverse().concat('x')), '.entryPoint')),
  containerMutation('port mapping', (c) => (c.portMappings ?? []).length > 0, (c) => ((c.portMappings[0].containerPort += 1), '.portMappings')),
  containerMutation('health check interval', (c) => c.healthCheck !== undefined, (c) => ((c.healthCheck.interval = (c.healthCheck.interval ?? 30) + 7), '.healthCheck.interval')),
  containerMutation('dependsOn condition', (c) => (c.dependsOn ?? []).length > 0, (c) => {
    const d = c.dependsOn[0];
    d.condition = d.condition === 'START' ? 'HEALTHY' : 'START';
    return `.dependsOn.${d.containerName}`;
  }),
  containerMutation('log option', (c) => c.logConfiguration?.options !== undefined && Object.keys(c.logConfiguration.options).length > 0, (c) => {
    const key = Object.keys(c.logConfiguration.options).sort()[0];
    c.logConfiguration.options[key] = `${c.logConfiguration.options[key]}-changed`;
    return `.logConfiguration.options.${key}`;
  }),
  containerMutation('log driver', (c) => c.logConfiguration !== undefined, (c) => ((c.logConfiguration.logDriver = c.logConfiguration.logDriver === 'awslogs' ? 'splunk' : 'awslogs'), '.logConfiguration.logDriver')),
  containerMutation('firelens type', (c) => c.firelensConfiguration !== undefined, (c) => ((c.firelensConfiguration.type = c.firelensConfiguration.type === 'fluentbit' ? 'fluentd' : 'fluentbit'), '.firelensConfiguration.type')),
  containerMutation('mount point', (c) => (c.mountPoints ?? []).length > 0, (c) => ((c.mountPoints[0].readOnly = !c.mountPoints[0].readOnly), '.mountPoints')),
  containerMutation('ulimit', (c) => (c.ulimits ?? []).length > 0, (c) => ((c.ulimits[0].softLimit += 1), `.ulimits[${c.ulimits[0].name}].softLimit`)),
  containerMutation('docker label', () => true, (c) => ((c.dockerLabels = { ...(c.dockerLabels ?? {}), 'changed.by': 'hand' }), '.dockerLabels.changed.by')),
  containerMutation('stopTimeout', () => true, (c) => ((c.stopTimeout = 90), '.stopTimeout')),
  { name: 'a container added by hand', mutate: (td) => ((td.containerDefinitions = [...td.containerDefinitions, { name: 'by-hand', image: 'busybox:1.36', essential: false }]), 'containerDefinitions[by-hand]') },
  { name: 'task memory', mutate: (td) => ((td.memory = String(Number(td.memory) * 2)), 'memory') },
  { name: 'task role', mutate: (td) => ((td.taskRoleArn = 'arn:aws:iam::123456789012:role/changed'), 'taskRoleArn') },
  { name: 'cpu architecture', mutate: (td) => ((td.runtimePlatform = { ...(td.runtimePlatform ?? {}), cpuArchitecture: td.runtimePlatform?.cpuArchitecture === 'ARM64' ? 'X86_64' : 'ARM64' }), 'runtimePlatform.cpuArchitecture') },
  { name: 'ephemeral storage', mutate: (td) => ((td.ephemeralStorage = { sizeInGiB: (td.ephemeralStorage?.sizeInGiB ?? 20) + 10 }), 'ephemeralStorage.sizeInGiB') },
  {
    name: 'EFS file system',
    mutate: (td) => {
      const v = (td.volumes ?? []).find((x: Json) => x.efsVolumeConfiguration);
      if (!v) return undefined;
      v.efsVolumeConfiguration.fileSystemId = 'fs-0000000000000000f';
      return `volumes[${v.name}].efsVolumeConfiguration.fileSystemId`;
    },
  },
  {
    name: 'proxy configuration',
    mutate: (td) => {
      if (!td.proxyConfiguration) return undefined;
      td.proxyConfiguration.containerName = 'other';
      return 'proxyConfiguration.containerName';
    },
  },
];

describe('a real change is reported under its path, and only there', () => {
  // The classes each fixture has (its published form tells which fields it holds).
  const rows = cases.flatMap((k) =>
    MUTATIONS.filter((m) => m.mutate(structuredClone(k.register) as Json) !== undefined).map((m) => ({ fixture: k.name, mutation: m.name, k, m })),
  );

  it('covers every class on at least one real task definition', () => {
    for (const m of MUTATIONS) {
      expect(cases.some((k) => m.mutate(structuredClone(k.register) as Json) !== undefined), m.name).toBe(true);
    }
  });

  it.each(rows)('$mutation in $fixture', async ({ k, m }) => {
    const { input, described } = await registered(k.register as Json);
    const live = structuredClone(described) as Json;
    const path = m.mutate(live);
    const changes = diffTaskDefinitions(input, live as TaskDefinition);
    expect(changes.map((c) => c.field)).toEqual([path]);
  });
});

// ---------------------------------------------------------------------------------------------
// The service half
// ---------------------------------------------------------------------------------------------

const DEFAULTS = { subnets: ['subnet-0a1b2c3d4e5f60001'], securityGroups: ['sg-0a1b2c3d4e5f60001'], executionRoleArn: 'arn:aws:iam::123456789012:role/ecsTaskExecutionRole' };
const FARGATE_SERVICES = ['awscli-create-fargate', 'awscli-update-desired-count', 'devguide-service-connect-nginx', 'awscli-update-task-definition', 'devguide-fargate-describe', 'awscli-update-az-rebalancing', 'awscli-update-ebs', 'awscli-update-remove-ebs'];

/** A real Fargate service answer on valid network ids (the answers' ids are placeholders) and its import. */
function importedService(name: string) {
  const raw = concretize(structuredClone(realServices().find((s) => s.name === name)?.payloads[0] as Json));
  raw.networkConfiguration = { awsvpcConfiguration: { ...raw.networkConfiguration.awsvpcConfiguration, subnets: ['subnet-0123456789abcdef0', 'subnet-0123456789abcdef1'], securityGroups: ['sg-0123456789abcdef0'] } };
  // Service Connect and EBS need task definition ports and volumes the answers' own task definitions had.
  for (const d of raw.deployments ?? []) {
    delete d.serviceConnectConfiguration;
    delete d.serviceConnectResources;
    delete d.volumeConfigurations;
  }
  const td = asFargateRegistration(cases.find((k) => k.name === 'devguide-fargate-webserver')?.register as unknown as Json) as unknown as Json;
  const observed = toObservedService(raw as never);
  const r = importService({ key: { cluster: 'c', service: raw.serviceName }, service: raw, observed, taskDefinition: td, defaults: DEFAULTS, ownerId: 'o' });
  return { raw, observed, r };
}

/** A change made by hand to a live service field, and the field it is reported under. */
const SERVICE_MUTATIONS: { name: string; mutate: (s: Json) => string }[] = [
  { name: 'desiredCount', mutate: (s) => ((s.desiredCount += 3), 'desiredCount') },
  { name: 'platformVersion', mutate: (s) => ((s.platformVersion = s.platformVersion === '1.4.0' ? 'LATEST' : '1.4.0'), 'platformVersion') },
  { name: 'enableExecuteCommand', mutate: (s) => ((s.enableExecuteCommand = !s.enableExecuteCommand), 'enableExecuteCommand') },
  { name: 'propagateTags', mutate: (s) => ((s.propagateTags = s.propagateTags === 'TASK_DEFINITION' ? 'SERVICE' : 'TASK_DEFINITION'), 'propagateTags') },
  { name: 'enableECSManagedTags', mutate: (s) => ((s.enableECSManagedTags = !s.enableECSManagedTags), 'enableECSManagedTags') },
  { name: 'healthCheckGracePeriodSeconds', mutate: (s) => ((s.healthCheckGracePeriodSeconds = (s.healthCheckGracePeriodSeconds ?? 0) + 60), 'healthCheckGracePeriodSeconds') },
  // availabilityZoneRebalancing is compared only when the spec sets it (test/vocab/never-set-defaults.test.ts).
  { name: 'minimumHealthyPercent', mutate: (s) => ((s.deploymentConfiguration = { ...s.deploymentConfiguration, minimumHealthyPercent: 50 }), 'deploymentConfiguration.minimumHealthyPercent') },
  { name: 'circuit breaker', mutate: (s) => ((s.deploymentConfiguration = { ...s.deploymentConfiguration, deploymentCircuitBreaker: { enable: !s.deploymentConfiguration?.deploymentCircuitBreaker?.enable, rollback: false } }), 'deploymentConfiguration.deploymentCircuitBreaker') },
  { name: 'deployment alarms', mutate: (s) => ((s.deploymentConfiguration = { ...s.deploymentConfiguration, alarms: { alarmNames: ['by-hand'], enable: true, rollback: true } }), 'deploymentConfiguration.alarms') },
  { name: 'a subnet added', mutate: (s) => (s.networkConfiguration.awsvpcConfiguration.subnets.push('subnet-0123456789abcdef2'), 'networkConfiguration.subnets') },
  { name: 'assignPublicIp', mutate: (s) => ((s.networkConfiguration.awsvpcConfiguration.assignPublicIp = s.networkConfiguration.awsvpcConfiguration.assignPublicIp === 'ENABLED' ? 'DISABLED' : 'ENABLED'), 'networkConfiguration.assignPublicIp') },
];

describe.each(FARGATE_SERVICES)('real service answer %s', (name) => {
  it('has zero false differences against itself, imported, written another way', () => {
    const { raw, observed, r } = importedService(name);
    expect(r.ok ? [] : r.problems).toEqual([]);
    if (!r.ok) return;
    const desired = desiredServiceConfig(r.spec, DEFAULTS);
    expect(diffService(desired, observed).changes).toEqual([]);
    // Sets in another order, ECS's absent defaults spelled out.
    const other = structuredClone(raw);
    other.networkConfiguration.awsvpcConfiguration.subnets.reverse();
    other.deploymentConfiguration = { minimumHealthyPercent: 100, maximumPercent: 200, ...other.deploymentConfiguration };
    other.healthCheckGracePeriodSeconds ??= 0;
    other.enableExecuteCommand ??= false;
    expect(diffService(desired, toObservedService(other as never)).changes).toEqual([]);
  });

  it.each(SERVICE_MUTATIONS)('reports a hand edit of $name under its field, and only there', ({ mutate }) => {
    const { raw, r } = importedService(name);
    if (!r.ok) throw new Error('not imported');
    const live = structuredClone(raw);
    const field = mutate(live);
    const changes = diffService(desiredServiceConfig(r.spec, DEFAULTS), toObservedService(live as never) as ObservedService).changes;
    expect(changes.map((c) => c.field)).toEqual([field]);
  });
});

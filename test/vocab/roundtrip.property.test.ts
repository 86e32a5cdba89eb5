/**
 * The round-trip property at full breadth: a task definition rendered from any valid spec
 * (the shorthand, a `containers` list of sidecars, or both; volumes, health checks, dependsOn,
 * named ports, log configuration, ulimits, labels, ephemeral storage...) registered with the ECS
 * simulator and with moto, and described back, compares equal to what was rendered (zero
 * differences), though each server answers with its own defaults filled in. Fixed seeds: the same
 * cases run every time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DescribeTaskDefinitionCommand, ECSClient, RegisterTaskDefinitionCommand, type RegisterTaskDefinitionCommandInput } from '@aws-sdk/client-ecs';
import { parseSpecItem } from '../../lambda/core/spec';
import { diffTaskDefinitions, renderTaskDefinition } from '../../lambda/core/taskdef';
import type { TaskDefinition } from '../../lambda/core/types';
import { startSimulator, type Simulator } from '../../local/sim';
import { LOCAL_CLIENT_CONFIG, startMoto, type MotoServer } from '../support/moto';
import { needs } from '../support/tools';

const ACCOUNT = '123456789012';
const DEFAULTS = { subnets: ['subnet-0a1b2c3d'], securityGroups: ['sg-0123abcd'], executionRoleArn: `arn:aws:iam::${ACCOUNT}:role/ecsTaskExecutionRole` };
const SIZES: [number, number][] = [[256, 512], [512, 1024], [1024, 2048], [2048, 4096], [4096, 8192]];

const envName = fc.stringMatching(/^[A-Z][A-Z0-9_]{0,11}$/);
const kv = (valueKey: 'value' | 'valueFrom', value: fc.Arbitrary<string>) =>
  fc.uniqueArray(fc.record({ name: envName, [valueKey]: value }), { selector: (x) => x.name, maxLength: 4 });
const secretRef = fc.stringMatching(/^arn:aws:ssm:us-east-1:123456789012:parameter\/[a-z]{1,12}$/);
const image = fc.stringMatching(/^public\.ecr\.aws\/[a-z]{1,10}\/[a-z]{1,10}:[0-9]\.[0-9]{1,2}$/);
const healthCheck = fc.record(
  {
    command: fc.constant(['CMD-SHELL', 'curl -f http://localhost/ || exit 1']),
    interval: fc.integer({ min: 5, max: 300 }),
    timeout: fc.integer({ min: 2, max: 60 }),
    retries: fc.integer({ min: 1, max: 10 }),
    startPeriod: fc.integer({ min: 0, max: 300 }),
  },
  { requiredKeys: ['command'] },
);
const logConfiguration = fc.record({
  logDriver: fc.constant('awslogs'),
  options: fc.record({ 'awslogs-group': fc.constantFrom('/ecs/app', '/ecs/sidecar'), 'awslogs-region': fc.constant('us-east-1'), 'awslogs-stream-prefix': fc.constantFrom('ecs', 'app'), mode: fc.constantFrom('blocking', 'non-blocking') }, { requiredKeys: ['awslogs-group'] }),
});

/** One sidecar (its name, ports and dependencies are fixed by {@link arbitraryItem}). */
const container = fc.record(
  {
    image,
    essential: fc.boolean(),
    cpu: fc.integer({ min: 0, max: 64 }),
    memoryReservation: fc.integer({ min: 6, max: 64 }),
    environment: kv('value', fc.string({ maxLength: 12 })),
    secrets: kv('valueFrom', secretRef),
    command: fc.array(fc.string({ maxLength: 8 }), { minLength: 1, maxLength: 3 }),
    entryPoint: fc.array(fc.constantFrom('sh', '-c', '/entrypoint'), { minLength: 1, maxLength: 2 }),
    workingDirectory: fc.constantFrom('/app', '/srv'),
    user: fc.constantFrom('1000', 'nobody'),
    healthCheck,
    logConfiguration,
    ulimits: fc.uniqueArray(fc.record({ name: fc.constantFrom('nofile', 'nproc', 'core'), softLimit: fc.integer({ min: 0, max: 4096 }), hardLimit: fc.constant(65535) }), { selector: (u) => u.name, maxLength: 2 }),
    dockerLabels: fc.dictionary(fc.stringMatching(/^[a-z]{1,8}(\.[a-z]{1,8})?$/), fc.string({ maxLength: 8 }), { maxKeys: 3 }),
    readonlyRootFilesystem: fc.boolean(),
    stopTimeout: fc.integer({ min: 2, max: 120 }),
    linuxParameters: fc.record({ initProcessEnabled: fc.boolean() }),
  },
  { requiredKeys: ['image'] },
);

/** A valid spec item: the shorthand or not, 0-3 sidecars, EFS and bind volumes mounted by the first container. */
const arbitraryItem = fc
  .record({
    shorthand: fc.boolean(),
    size: fc.constantFrom(...SIZES),
    cpuArchitecture: fc.constantFrom('X86_64', 'ARM64'),
    containers: fc.array(container, { minLength: 1, maxLength: 3 }),
    ports: fc.uniqueArray(fc.integer({ min: 1024, max: 9999 }), { minLength: 3, maxLength: 3 }),
    named: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
    dependsOn: fc.array(fc.constantFrom('START', 'HEALTHY', 'COMPLETE', 'SUCCESS'), { minLength: 3, maxLength: 3 }),
    efs: fc.option(fc.record({ fileSystemId: fc.stringMatching(/^fs-[0-9a-f]{8}$/), transitEncryption: fc.constantFrom('ENABLED', 'DISABLED'), rootDirectory: fc.constantFrom('/', '/data') }, { requiredKeys: ['fileSystemId'] }), { nil: undefined }),
    bind: fc.boolean(),
    ephemeral: fc.option(fc.integer({ min: 21, max: 200 }), { nil: undefined }),
    pidMode: fc.boolean(),
  })
  .map((g) => {
    const item: Record<string, unknown> = { cluster: 'prop', service: 'app', desiredCount: 1, cpu: g.size[0], memory: g.size[1], cpuArchitecture: g.cpuArchitecture };
    if (g.shorthand) {
      item.image = 'public.ecr.aws/nginx/nginx:1.27';
      item.containerPort = 80;
    }
    const containers = g.containers.map((c, i) => {
      const out: Record<string, unknown> = { name: `c${i}`, ...c, portMappings: [{ containerPort: g.ports[i], ...(g.named[i] ? { name: `port-${i}`, appProtocol: 'http' } : {}) }] };
      if (i === 0 && !g.shorthand) out.essential = true;
      return out;
    });
    // dependsOn an earlier container, with a condition ECS allows for it.
    containers.forEach((c, i) => {
      if (i === 0) return;
      const target = containers[i - 1];
      let condition = g.dependsOn[i];
      if ((condition === 'COMPLETE' || condition === 'SUCCESS') && target.essential !== false) condition = 'START';
      if (condition === 'HEALTHY' && target.healthCheck === undefined) condition = 'START';
      c.dependsOn = [{ containerName: target.name, condition }];
    });
    const volumes: Record<string, unknown>[] = [];
    const mounts: Record<string, unknown>[] = [];
    if (g.efs) {
      volumes.push({ name: 'shared', efsVolumeConfiguration: g.efs });
      mounts.push({ sourceVolume: 'shared', containerPath: '/mnt/efs', readOnly: true });
    }
    if (g.bind) {
      volumes.push({ name: 'scratch' });
      mounts.push({ sourceVolume: 'scratch', containerPath: '/scratch' });
    }
    if (mounts.length > 0) containers[0].mountPoints = mounts;
    if (volumes.length > 0) item.volumes = volumes;
    if (g.ephemeral !== undefined) item.ephemeralStorage = { sizeInGiB: g.ephemeral };
    if (g.pidMode) item.pidMode = 'task';
    item.containers = containers;
    return item;
  });

let family = 0;
/** The rendered task definition of a generated item (the item must be valid). */
function rendered(item: Record<string, unknown>): TaskDefinition & { family: string } {
  const r = parseSpecItem({ ...item, family: `prop-${++family}` });
  if (!r.ok) throw new Error(`the generator made an invalid spec: ${r.errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`);
  return renderTaskDefinition(r.spec, { defaults: DEFAULTS, ownerId: 'prop' });
}

async function roundTrip(ecs: ECSClient, input: TaskDefinition & { family: string }): Promise<TaskDefinition> {
  const reg = await ecs.send(new RegisterTaskDefinitionCommand(input as unknown as RegisterTaskDefinitionCommandInput));
  const out = await ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: reg.taskDefinition?.taskDefinitionArn }));
  return { ...out.taskDefinition } as TaskDefinition;
}

/** fast-check's async property, with a fixed seed and a bounded number of runs. */
async function checkRoundTrips(ecs: () => ECSClient, seed: number, numRuns: number): Promise<void> {
  await fc.assert(
    fc.asyncProperty(arbitraryItem, async (item) => {
      const input = rendered(item);
      const described = await roundTrip(ecs(), input);
      expect(diffTaskDefinitions(input, described)).toEqual([]);
    }),
    { seed, numRuns },
  );
}

describe('a task definition rendered from any valid spec, registered and described back, compares equal', () => {
  describe('on the ECS simulator', () => {
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

    it('holds for 60 generated specs', async () => {
      await checkRoundTrips(() => ecs, 20261201, 60);
    }, 120_000);

    it('the generated specs use the breadth of the vocabulary (the property is not vacuous)', () => {
      const items = fc.sample(arbitraryItem, { seed: 20261201, numRuns: 60 });
      const tds = items.map(rendered);
      const containers = tds.flatMap((t) => t.containerDefinitions ?? []) as Record<string, unknown>[];
      for (const field of ['healthCheck', 'dependsOn', 'logConfiguration', 'ulimits', 'dockerLabels', 'secrets', 'environment', 'mountPoints', 'entryPoint', 'linuxParameters']) {
        expect(containers.some((c) => c[field] !== undefined), field).toBe(true);
      }
      expect(tds.some((t) => (t.containerDefinitions ?? []).length >= 3)).toBe(true);
      expect(tds.some((t) => (t.volumes as Record<string, unknown>[] | undefined)?.some((v) => v.efsVolumeConfiguration !== undefined))).toBe(true);
      expect(tds.some((t) => t.ephemeralStorage !== undefined)).toBe(true);
    });
  });

  describe('on moto', needs('moto'), () => {
    let moto: MotoServer;
    let ecs: ECSClient;
    beforeAll(async () => {
      moto = await startMoto();
      ecs = new ECSClient({ ...LOCAL_CLIENT_CONFIG, endpoint: moto.endpoint, maxAttempts: 1 });
    });
    afterAll(async () => {
      ecs?.destroy();
      await moto?.stop();
    });

    it('holds for 30 generated specs', async () => {
      await checkRoundTrips(() => ecs, 20261202, 30);
    }, 180_000);
  });
});

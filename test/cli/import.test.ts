/**
 * `ecsr import` end to end against the ECS simulator and dynalite: a live service made from a real
 * task definition and real service settings (`test/support/import-cases.ts`), imported with the
 * CLI, in process (`--apply`), then one pass: its only ECS write is the owner tag (TagResource), and the
 * pass after it writes nothing.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { CreateServiceCommand, DescribeServicesCommand, ECSClient, RegisterTaskDefinitionCommand, UpdateServiceCommand } from '@aws-sdk/client-ecs';
import { parse as parseYaml } from 'yaml';
import type { LocalStack } from '../../local/stack';
import { LOCAL_DEFAULTS } from '../../local/stack';
import { OWNER_TAG_KEY } from '../../lambda/core/ports';
import { parseSpecItem } from '../../lambda/core/spec';
import { importCases, type ImportCase } from '../support/import-cases';
import { useCliStack } from './harness';
import { ecsr } from '../support/cli-in-process';

const WRITES = new Set(['RegisterTaskDefinition', 'CreateService', 'UpdateService', 'DeleteService', 'TagResource', 'UntagResource']);
const NETWORK = { subnets: LOCAL_DEFAULTS.subnets.split(','), securityGroups: LOCAL_DEFAULTS.securityGroups.split(',') };

describe('ecsr import against the ECS simulator', () => {
  const harness = useCliStack('imp');
  let stack: LocalStack;
  beforeAll(() => {
    stack = harness.stack();
  });

  async function live(c: { cluster: string }, k: ImportCase, service: string, edit: (r: ImportCase['register']) => ImportCase['register'] = (r) => r) {
    const ecs = new ECSClient(stack.ecsClientConfig);
    try {
      const td = await ecs.send(new RegisterTaskDefinitionCommand(edit(structuredClone(k.register))));
      await ecs.send(new CreateServiceCommand(k.createService(c.cluster, service, NETWORK)));
      return td.taskDefinition?.taskDefinitionArn;
    } finally {
      ecs.destroy();
    }
  }

  /** Real task definitions the spec cannot reproduce, and the fields import names. */
  const REFUSED: Record<string, string[]> = {
    // ecspresso's template: a template expression as the image tag, an App Mesh proxy naming a
    // container the task does not have.
    'ecspresso-katsubushi': ['spec.containers[0].image', 'spec.proxyConfiguration.containerName'],
  };
  const cases = importCases().filter((k) => !Object.hasOwn(REFUSED, k.name));

  it('has at least 10 real task definitions to import', () => {
    expect(cases.length).toBeGreaterThanOrEqual(10);
  });

  it.each(cases.map((k) => ({ name: k.name, source: k.serviceSource, k })))(
    '$name (service settings of $source): import --apply, then one pass makes only TagResource',
    async ({ k }) => {
      // Prepare: the live service, not ours.
      const c = await harness.aCase();
      const service = 'svc';
      const tdArn = await live(c, k, service);
      const before = stack.sim.calls().length;

      // Act
      const r = await ecsr(['import', `${c.cluster}/${service}`, '--apply'], { env: c.env });
      const afterImport = stack.sim.calls().length;
      const first = await c.pass();
      const second = await c.pass();

      // Assess: the spec printed is the one written, adopts, keeps the live family.
      expect(r.stderr).toBe(`${c.cluster}/${service} written to table ${c.table}\n`);
      expect(r.code).toBe(0);
      const printed = parseYaml(r.stdout.replace(/^---\n/, '')) as Record<string, unknown>;
      expect(printed).toMatchObject({ cluster: c.cluster, service, adopt: true, family: k.register.family });
      const { status: _s, ...stored } = (await c.item(service)) ?? {};
      expect(stored).toEqual(printed);
      const reparsed = parseSpecItem(printed);
      expect(reparsed.ok ? [] : reparsed.errors).toEqual([]);
      // import itself only reads ECS.
      expect(stack.sim.calls().slice(before, afterImport).map((x) => x.action).filter((a) => !a.startsWith('Describe') && !a.startsWith('List'))).toEqual([]);
      // One write: the owner tag.
      expect(first.actions.map((a) => [a.type, a.outcome])).toEqual([['TagResource', 'applied']]);
      const writes = stack.sim.calls().slice(afterImport).filter((x) => WRITES.has(x.action));
      expect(writes.map((x) => x.action)).toEqual(['TagResource']);
      const ecs = new ECSClient(stack.ecsClientConfig);
      const tagged = (await ecs.send(new DescribeServicesCommand({ cluster: c.cluster, services: [service], include: ['TAGS'] }))).services?.[0];
      ecs.destroy();
      expect(tagged?.tags).toEqual(expect.arrayContaining([{ key: OWNER_TAG_KEY, value: 'ecs-reconciler' }]));
      expect(tagged?.taskDefinition).toBe(tdArn);
      expect(second.actions).toEqual([]);
    },
  );

  it('imports vpcLatticeConfigurations into the spec, writes only the owner tag, and a later correction keeps the Lattice target group', async () => {
    // Prepare: a live service with a VPC Lattice target group (reported on its deployments) on
    // the task's port mapping named "http", as a Lattice port name must be.
    const lattice = [{ roleArn: 'arn:aws:iam::123456789012:role/ecsInfrastructureRoleForVpcLattice', targetGroupArn: 'arn:aws:vpc-lattice:us-east-1:123456789012:targetgroup/tg-0123456789abcdef0', portName: 'http' }];
    const k = cases.find((x) => x.name === 'devguide-fargate-webserver') as ImportCase;
    const c = await harness.aCase();
    const ecs = new ECSClient(stack.ecsClientConfig);
    try {
      const register = structuredClone(k.register);
      for (const cd of register.containerDefinitions ?? []) for (const m of cd.portMappings ?? []) m.name = 'http';
      await ecs.send(new RegisterTaskDefinitionCommand(register));
      await ecs.send(new CreateServiceCommand({ ...k.createService(c.cluster, 'svc', NETWORK), vpcLatticeConfigurations: lattice }));

      // Act: import, a pass, a hand edit of desiredCount, a pass that corrects it.
      const r = await ecsr(['import', `${c.cluster}/svc`, '--apply'], { env: c.env });
      const first = await c.pass();
      const before = (await ecs.send(new DescribeServicesCommand({ cluster: c.cluster, services: ['svc'] }))).services?.[0];
      await ecs.send(new UpdateServiceCommand({ cluster: c.cluster, service: 'svc', desiredCount: (before?.desiredCount ?? 0) + 2 }));
      const corrected = await c.pass();
      const after = (await ecs.send(new DescribeServicesCommand({ cluster: c.cluster, services: ['svc'] }))).services?.[0];

      // Assess
      expect(r.code).toBe(0);
      expect(r.stderr).toBe(`${c.cluster}/svc written to table ${c.table}\n`);
      expect((await c.item('svc'))?.vpcLatticeConfigurations).toEqual(lattice);
      expect(first.actions.map((a) => a.type)).toEqual(['TagResource']);
      expect(corrected.actions.map((a) => [a.type, a.outcome])).toEqual([['UpdateService', 'applied']]);
      expect(after?.desiredCount).toBe(before?.desiredCount);
      expect(after?.deployments?.find((d) => d.status === 'PRIMARY')?.vpcLatticeConfigurations).toEqual(lattice);
    } finally {
      ecs.destroy();
    }
  });

  async function refusedCase(k: ImportCase, edit?: (r: ImportCase['register']) => ImportCase['register']) {
    const c = await harness.aCase();
    await live(c, k, 'svc', edit);
    const r = await ecsr(['import', `${c.cluster}/svc`, '--apply'], { env: c.env });
    const pass = await c.pass();
    return { c, r, pass };
  }

  it.each(Object.entries(REFUSED).map(([name, paths]) => ({ name, paths })))(
    '$name: import stops with a message naming each field the spec cannot reproduce, and writes nothing',
    async ({ name, paths }) => {
      // Prepare, Act
      const k = importCases().find((x) => x.name === name) as ImportCase;
      const { c, r, pass } = await refusedCase(k);

      // Assess
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      const named = r.stderr.split('\n').filter((l) => l.startsWith('  ')).map((l) => l.trim().split(':')[0]);
      expect(named).toEqual(paths);
      expect(r.stderr).toMatch(new RegExp(`^ecsr import: ${c.cluster}/svc cannot be imported exactly; nothing was written for it:\n`));
      expect(r.stderr).toMatch(/\necsr import: 1 of 1 service could not be imported \(see above\)\.\n$/);
      expect(await c.item('svc')).toBeUndefined();
      expect(pass.actions).toEqual([]);
    },
  );

  it('stops when the live task definition has no execution role and the reconciler would render its default', async () => {
    // Prepare, Act: the published payload as it is, without the execution role the cases add.
    const k = cases.find((x) => x.name === 'awscli-register-sleep360') as ImportCase;
    const { c, r } = await refusedCase(k, ({ executionRoleArn: _e, ...rest }) => rest);

    // Assess
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `  taskDefinition.executionRoleArn: the spec would render ${LOCAL_DEFAULTS.executionRoleArn} where the live task definition has (none)\n`,
    );
    expect(await c.item('svc')).toBeUndefined();
  });

  it('prints JSON with -o json, imports every service of a cluster with --all, and writes nothing without --apply', async () => {
    // Prepare: two live services.
    const c = await harness.aCase();
    const [a, b] = cases;
    await live(c, a, 'one');
    await live(c, b, 'two');

    // Act
    const r = await ecsr(['import', '--all', c.cluster, '-o', 'json'], { env: c.env });

    // Assess
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const items = JSON.parse(r.stdout) as Record<string, unknown>[];
    expect(items.map((i) => [i.service, i.family, i.adopt])).toEqual([
      ['one', a.register.family, true],
      ['two', b.register.family, true],
    ]);
    expect(await c.items()).toEqual([]);
  });

  it('refuses a service another reconciler owns, naming that owner, exit 1, and writes nothing for it', async () => {
    // Prepare: two live services, one tagged by another reconciler.
    const c = await harness.aCase();
    const [k] = cases;
    const ecs = new ECSClient(stack.ecsClientConfig);
    try {
      const td = await ecs.send(new RegisterTaskDefinitionCommand(structuredClone(k.register)));
      const theirs = k.createService(c.cluster, 'theirs', NETWORK);
      await ecs.send(
        new CreateServiceCommand({
          ...theirs,
          taskDefinition: td.taskDefinition?.taskDefinitionArn,
          tags: [...(theirs.tags ?? []), { key: OWNER_TAG_KEY, value: 'team-b-reconciler' }],
        }),
      );
    } finally {
      ecs.destroy();
    }
    await live(c, k, 'free');

    // Act
    const r = await ecsr(['import', '--all', c.cluster, '--apply'], { env: c.env });
    const pass = await c.pass();

    // Assess: the free one is imported, the owned one is refused with its owner's name.
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `ecsr import: ${c.cluster}/theirs is owned by another reconciler (${OWNER_TAG_KEY}=team-b-reconciler); nothing was written for it:\n` +
        `  service.tags.${OWNER_TAG_KEY}: is team-b-reconciler: the service is owned by another reconciler (this one is ecs-reconciler)`,
    );
    expect(r.stderr).toMatch(/\necsr import: 1 of 2 services could not be imported \(see above\)\.\n$/);
    expect(r.stdout).not.toContain('service: theirs');
    expect(await c.item('theirs')).toBeUndefined();
    expect(await c.item('free')).toMatchObject({ service: 'free', adopt: true });
    expect(pass.actions.filter((a) => a.service === 'theirs')).toEqual([]);
  });

  it('names a cluster ECS does not have in one sentence, for a named service and for --all', async () => {
    // Prepare
    const c = await harness.aCase();

    // Act
    const named = await ecsr(['import', 'no-such-cluster/web'], { env: c.env });
    const all = await ecsr(['import', '--all', 'no-such-cluster'], { env: c.env });

    // Assess: not "ClusterNotFoundException: Cluster not found."
    expect(named).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'ecsr import: no-such-cluster/web cannot be imported exactly; nothing was written for it:\n' +
        '  cluster: no-such-cluster does not exist in ECS (in this region and account): check the name (aws ecs list-clusters lists them)\n' +
        'ecsr import: 1 of 1 service could not be imported (see above).\n',
    });
    expect(all).toEqual({
      code: 1,
      stdout: '',
      stderr: 'ecsr import: Cluster no-such-cluster does not exist in ECS (in this region and account): check the name (aws ecs list-clusters lists them).\n',
    });
  });
});

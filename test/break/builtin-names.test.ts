/**
 * Names that are also members of JavaScript's built-in prototypes. A spec item
 * `c1/constructor` used to stop every pass (`cl.services[key.service]` found
 * `Object.prototype.constructor`). Full passes over HTTP (ECS simulator + dynalite): clusters,
 * services, tag keys and environment names are drawn from every own property name of
 * `Object.prototype` and `Function.prototype` (plus `__proto__`); every valid spec converges with
 * exactly what it asked for, a foreign service with such names is left alone, and a sentinel
 * service with ordinary names converges as if nothing else were there.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CreateServiceCommand, DescribeTaskDefinitionCommand, ECSClient, RegisterTaskDefinitionCommand } from '@aws-sdk/client-ecs';
import { OWNER_TAG_KEY } from '../../lambda/core/ports';
import { aSpecItem, LOCAL, useSimHarness } from '../runtime/support';

/** Every own string-keyed property name of the two prototypes, `__proto__` included. */
export const BUILTIN_NAMES: readonly string[] = [
  ...new Set([...Object.getOwnPropertyNames(Object.prototype), ...Object.getOwnPropertyNames(Function.prototype), '__proto__']),
].sort();

/** ECS names: letters, numbers, hyphens and underscores, up to 255 (CreateService, CreateCluster). */
const ECS_NAME = /^[A-Za-z0-9_-]{1,255}$/;

/**
 * Names a DynamoDB map attribute can carry through lib-dynamodb today: `__proto__` as a map key is
 * lost by its unmarshall (tested in dynamo-raw-attributes.test.ts).
 */
const MAP_KEYS = BUILTIN_NAMES.filter((n) => n !== '__proto__');

const SENTINEL = { cluster: 'apps', service: 'sentinel' };

describe('names of JavaScript built-ins', () => {
  const h = useSimHarness({ resetEach: false });

  it('draws from every built-in name', () => {
    expect(BUILTIN_NAMES).toEqual(expect.arrayContaining(['constructor', 'toString', 'hasOwnProperty', 'valueOf', '__proto__', 'apply', 'bind', 'call']));
    expect(BUILTIN_NAMES.every((n) => ECS_NAME.test(n))).toBe(true);
  });

  it('every valid spec named after a built-in converges; other services are unaffected', { timeout: 600_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          cluster: fc.constantFrom('apps', ...BUILTIN_NAMES),
          services: fc.uniqueArray(fc.constantFrom(...BUILTIN_NAMES), { minLength: 1, maxLength: 3 }),
          tagKeys: fc.uniqueArray(fc.constantFrom(...MAP_KEYS), { maxLength: 3 }),
          envNames: fc.uniqueArray(fc.constantFrom(...MAP_KEYS), { maxLength: 3 }),
          foreign: fc.constantFrom(...BUILTIN_NAMES),
        }),
        async ({ cluster, services, tagKeys, envNames, foreign }) => {
          // Prepare: a foreign service (no owner tag) in the same cluster, named and tagged after a built-in.
          const foreignName = services.includes(foreign) ? `${foreign}-foreign` : foreign;
          await h.reset({ clusters: [...new Set(['apps', cluster])] });
          const ecs = new ECSClient({ ...LOCAL, endpoint: h.sim.endpoint });
          try {
            const td = await ecs.send(
              new RegisterTaskDefinitionCommand({
                family: `hand-${foreignName}`,
                requiresCompatibilities: ['FARGATE'],
                networkMode: 'awsvpc',
                cpu: '256',
                memory: '512',
                containerDefinitions: [{ name: 'app', image: 'public.ecr.aws/nginx/nginx:1.27', essential: true }],
              }),
            );
            await ecs.send(
              new CreateServiceCommand({
                cluster,
                serviceName: foreignName,
                taskDefinition: td.taskDefinition?.taskDefinitionArn,
                desiredCount: 1,
                launchType: 'FARGATE',
                networkConfiguration: { awsvpcConfiguration: { subnets: ['subnet-0123456789abcdef0'] } },
                tags: [{ key: foreign, value: 'by-hand' }],
              }),
            );
            const tags = Object.fromEntries(tagKeys.map((k) => [k, `tag-${k}`]));
            const environment = Object.fromEntries(envNames.map((k) => [k, `env-${k}`]));
            for (const service of services) await h.putSpec(aSpecItem({ cluster, service, desiredCount: 1, tags, environment }));
            await h.putSpec(aSpecItem({ ...SENTINEL, desiredCount: 1 }));
            h.sim.clearCalls();

            // Act
            const passes = await h.converge(12);

            // Assess: nothing threw, every spec converged with what it asked for.
            const last = passes.at(-1);
            expect(last?.outcome).toBe('completed');
            for (const service of [...services.map((s) => ({ cluster, service: s })), SENTINEL]) {
              expect((await h.status(service))?.phase, `${service.cluster}/${service.service}`).toBe('Converged');
              const live = await h.describe(service.cluster, service.service);
              expect(live).toMatchObject({ status: 'ACTIVE', runningCount: 1 });
              const liveTags = Object.fromEntries((live?.tags ?? []).map((t) => [t.key, t.value]));
              if (service !== SENTINEL) for (const k of tagKeys) expect(Object.hasOwn(liveTags, k) && liveTags[k]).toBe(`tag-${k}`);
              expect(Object.hasOwn(liveTags, OWNER_TAG_KEY) && liveTags[OWNER_TAG_KEY]).toBe('sim-test');
              const described = await ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: live?.taskDefinition }));
              const env = described.taskDefinition?.containerDefinitions?.[0]?.environment ?? [];
              const want = service === SENTINEL ? [] : envNames.map((k) => ({ name: k, value: `env-${k}` }));
              expect(env.map((e) => ({ name: e.name, value: e.value })).sort((a, b) => (a.name ?? '').localeCompare(b.name ?? ''))).toEqual(
                want.sort((a, b) => a.name.localeCompare(b.name)),
              );
            }
            // The foreign service: never written to, still running as it was.
            const touched = h.sim.calls().filter((c) => ['UpdateService', 'DeleteService'].includes(c.action) && c.request.service === foreignName);
            expect(touched).toEqual([]);
            expect(await h.describe(cluster, foreignName)).toMatchObject({
              status: 'ACTIVE',
              desiredCount: 1,
              taskDefinition: td.taskDefinition?.taskDefinitionArn,
              tags: [{ key: foreign, value: 'by-hand' }],
            });
          } finally {
            ecs.destroy();
          }
        },
      ),
      { numRuns: 10, endOnFailure: true },
    );
  });

  it('all of them at once: every name a service, every name a tag key and an environment name', { timeout: 600_000 }, async () => {
    // Prepare
    await h.reset({ clusters: ['apps', 'constructor'] });
    const tags = Object.fromEntries(MAP_KEYS.map((k) => [k, `tag-${k}`]));
    const environment = Object.fromEntries(MAP_KEYS.map((k) => [k, `env-${k}`]));
    for (const service of BUILTIN_NAMES) await h.putSpec(aSpecItem({ cluster: 'constructor', service, desiredCount: 1, tags, environment }));
    await h.putSpec(aSpecItem({ ...SENTINEL, desiredCount: 1 }));

    // Act
    const passes = await h.converge(15);

    // Assess
    const statuses = passes.at(-1)?.statuses ?? {};
    expect(Object.keys(statuses).sort()).toEqual([...BUILTIN_NAMES.map((s) => `constructor/${s}`), 'apps/sentinel'].sort());
    expect(Object.values(statuses).every((s) => s.phase === 'Converged')).toBe(true);
    const live = await h.describe('constructor', 'hasOwnProperty');
    expect(Object.fromEntries((live?.tags ?? []).map((t) => [t.key, t.value]))).toEqual({ ...tags, [OWNER_TAG_KEY]: 'sim-test' });
  });
});

/**
 * An empty string is a value, never an absence: App Mesh proxy properties such as `IgnoredGID: ""`
 * and `EgressIgnoredPorts: ""` (as ecspresso's real task definition has them) and environment
 * values `""` are kept by import, sent by the rendered task definition, accepted and answered by
 * the simulator, and compare equal; a proxy property without a value is refused, as ECS refuses it
 * ("ProxyConfiguration properties value cannot be null", docs/ecs-facts.md §13).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientException, DescribeTaskDefinitionCommand, ECSClient, RegisterTaskDefinitionCommand } from '@aws-sdk/client-ecs';
import { toObservedService } from '../../lambda/adapters/ecs-observer';
import { importService } from '../../lambda/core/import-spec';
import { parseSpecItem } from '../../lambda/core/spec';
import { diffTaskDefinitions, renderTaskDefinition } from '../../lambda/core/taskdef';
import type { TaskDefinition } from '../../lambda/core/types';
import { startSimulator, type Simulator } from '../../local/sim';
import { asFargateRegistration, concretize, importCases } from '../support/import-cases';
import { LOCAL_CLIENT_CONFIG } from '../support/moto';
import { realServices, realTaskDefinitions } from '../support/real-fixtures';

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

const DEFAULTS = { subnets: ['subnet-0a1b2c3d4e5f60001'], securityGroups: ['sg-0a1b2c3d4e5f60001'], executionRoleArn: 'arn:aws:iam::123456789012:role/ecsTaskExecutionRole' };

/** The developer guide's App Mesh task with ecspresso's proxy properties (two of them `""`) and an empty environment value. */
function meshTask(family: string): Json {
  const guide = asFargateRegistration(importCases().find((k) => k.name === 'devguide-appmesh-proxy')?.register as unknown as Json) as unknown as Json;
  const katsubushi = realTaskDefinitions().find((t) => t.name === 'ecspresso-katsubushi')?.payloads[0] as Json;
  guide.family = family;
  guide.proxyConfiguration = { ...guide.proxyConfiguration, properties: structuredClone(katsubushi.proxyConfiguration.properties) };
  const app = guide.containerDefinitions.find((c: Json) => c.name === 'app');
  app.environment = [...(app.environment ?? []), { name: 'FEATURE_FLAGS', value: '' }];
  return guide;
}

async function described(input: Json): Promise<Json> {
  const reg = await ecs.send(new RegisterTaskDefinitionCommand(input as never));
  const out = await ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: reg.taskDefinition?.taskDefinitionArn }));
  return JSON.parse(JSON.stringify(out.taskDefinition)) as Json;
}

function serviceAnswer(): Json {
  const raw = concretize(structuredClone(realServices().find((s) => s.name === 'awscli-create-fargate')?.payloads[0] as Json));
  raw.networkConfiguration = { awsvpcConfiguration: { ...raw.networkConfiguration.awsvpcConfiguration, subnets: ['subnet-0123456789abcdef0'], securityGroups: ['sg-0123456789abcdef0'] } };
  return raw;
}

describe('empty values', () => {
  it('are kept by import and by the rendered task definition, which ECS (the simulator) accepts and answers back unchanged', async () => {
    const live = await described(meshTask('mesh-empty'));
    expect(live.proxyConfiguration.properties).toContainEqual({ name: 'IgnoredGID', value: '' });

    const raw = serviceAnswer();
    const r = importService({ key: { cluster: 'c', service: raw.serviceName }, service: raw, observed: toObservedService(raw as never), taskDefinition: live, defaults: DEFAULTS, ownerId: 'o' });
    expect(r.ok ? [] : r.problems).toEqual([]);
    if (!r.ok) return;
    const item = r.item as Json;
    expect(item.proxyConfiguration.properties).toContainEqual({ name: 'IgnoredGID', value: '' });
    expect(item.proxyConfiguration.properties).toContainEqual({ name: 'EgressIgnoredPorts', value: '' });
    expect(item.containers.find((c: Json) => c.name === 'app').environment).toContainEqual({ name: 'FEATURE_FLAGS', value: '' });

    // What the reconciler registers for it, and what ECS answers for that.
    const rendered = renderTaskDefinition(r.spec, { defaults: DEFAULTS, ownerId: 'o' });
    expect((rendered as Json).proxyConfiguration.properties).toContainEqual({ name: 'EgressIgnoredPorts', value: '' });
    const again = await described({ ...rendered, family: 'mesh-empty-rendered' });
    expect(again.proxyConfiguration.properties).toEqual(live.proxyConfiguration.properties);
    expect(diffTaskDefinitions(rendered, live as TaskDefinition)).toEqual([]);
  });

  it('a proxy property without a value is refused by ECS (the simulator), in its words', async () => {
    const td = meshTask('mesh-null');
    td.proxyConfiguration.properties = td.proxyConfiguration.properties.map((p: Json) => (p.value === '' ? { name: p.name } : p));
    const err = await ecs.send(new RegisterTaskDefinitionCommand(td as never)).then(() => undefined, (e: unknown) => e as Error);
    expect(err).toBeInstanceOf(ClientException);
    expect(err?.message).toBe('ProxyConfiguration properties value cannot be null.');
  });

  it('a spec whose proxy property has no value is invalid at that property', () => {
    const r = parseSpecItem({
      cluster: 'c',
      service: 'web',
      desiredCount: 1,
      image: 'public.ecr.aws/nginx/nginx:1.27',
      containers: [{ name: 'envoy', image: 'public.ecr.aws/appmesh/aws-appmesh-envoy:v1.29.6.0-prod' }],
      proxyConfiguration: { type: 'APPMESH', containerName: 'envoy', properties: [{ name: 'AppPorts', value: '80' }, { name: 'IgnoredGID' }] },
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map((e) => e.path)).toEqual(['proxyConfiguration.properties[1].value']);
  });
});

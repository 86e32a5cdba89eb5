import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { OWNER_TAG_KEY } from '../lambda/core/ports';
import { FARGATE_CPU_VALUES, SPEC_ATTRIBUTES, SPEC_DEFAULTS, STATUS_ATTRIBUTE, parseSpecItem } from '../lambda/core/spec';
import { SPEC_SCHEMA_PATH, renderSpecJsonSchema, specJsonSchema } from '../lambda/core/spec-json-schema';

type Json = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------
// A small evaluator for the JSON Schema keywords the generated file uses. zod's fromJSONSchema
// supports neither if/then/else nor Unicode property escapes, and no JSON Schema validator is a
// dependency; an unknown keyword throws, so the evaluator cannot silently skip a rule.
// ---------------------------------------------------------------------------------------------

const ANNOTATIONS = new Set(['$schema', 'title', 'description', 'default', '$defs', 'then', 'else']);

function typeOk(type: string, v: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof v === 'string';
    case 'number':
      return typeof v === 'number';
    case 'integer':
      return Number.isInteger(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'array':
      return Array.isArray(v);
    case 'object':
      return v !== null && typeof v === 'object' && !Array.isArray(v);
    default:
      throw new Error(`evaluator: unknown type ${type}`);
  }
}

function valid(schema: Json | boolean, v: unknown, root: Json): boolean {
  if (typeof schema === 'boolean') return schema;
  const isObj = typeOk('object', v);
  const obj = v as Json;
  const arr = v as unknown[];
  for (const [kw, arg] of Object.entries(schema)) {
    if (ANNOTATIONS.has(kw)) continue;
    const a = arg as never;
    let ok: boolean;
    switch (kw) {
      case '$ref': {
        const name = String(arg).replace('#/$defs/', '');
        ok = valid((root.$defs as Json)[name] as Json, v, root);
        break;
      }
      case 'type':
        ok = typeOk(a, v);
        break;
      case 'enum':
        ok = (arg as unknown[]).some((x) => x === v);
        break;
      case 'const':
        ok = arg === v;
        break;
      case 'pattern':
        ok = typeof v !== 'string' || new RegExp(a, 'u').test(v);
        break;
      case 'minLength':
        ok = typeof v !== 'string' || [...v].length >= a;
        break;
      case 'maxLength':
        ok = typeof v !== 'string' || [...v].length <= a;
        break;
      case 'minimum':
        ok = typeof v !== 'number' || v >= a;
        break;
      case 'maximum':
        ok = typeof v !== 'number' || v <= a;
        break;
      case 'minItems':
        ok = !Array.isArray(v) || arr.length >= a;
        break;
      case 'maxItems':
        ok = !Array.isArray(v) || arr.length <= a;
        break;
      case 'uniqueItems':
        ok = !Array.isArray(v) || !arg || new Set(arr.map((x) => JSON.stringify(x))).size === arr.length;
        break;
      case 'items':
        ok = !Array.isArray(v) || arr.slice(((schema.prefixItems as unknown[]) ?? []).length).every((x) => valid(a, x, root));
        break;
      case 'prefixItems':
        ok = !Array.isArray(v) || (arg as Json[]).every((s, i) => i >= arr.length || valid(s, arr[i], root));
        break;
      case 'properties':
        ok = !isObj || Object.entries(arg as Json).every(([k, s]) => !(k in obj) || valid(s as Json, obj[k], root));
        break;
      case 'required':
        ok = !isObj || (arg as string[]).every((k) => k in obj);
        break;
      case 'additionalProperties': {
        const known = Object.keys((schema.properties as Json) ?? {});
        ok = !isObj || Object.keys(obj).filter((k) => !known.includes(k)).every((k) => valid(a, obj[k], root));
        break;
      }
      case 'propertyNames':
        ok = !isObj || Object.keys(obj).every((k) => valid(a, k, root));
        break;
      case 'maxProperties':
        ok = !isObj || Object.keys(obj).length <= a;
        break;
      case 'anyOf':
        ok = (arg as Json[]).some((s) => valid(s, v, root));
        break;
      case 'allOf':
        ok = (arg as Json[]).every((s) => valid(s, v, root));
        break;
      case 'not':
        ok = !valid(a, v, root);
        break;
      case 'if':
        ok = valid(a, v, root)
          ? schema.then === undefined || valid(schema.then as Json, v, root)
          : schema.else === undefined || valid(schema.else as Json, v, root);
        break;
      default:
        throw new Error(`evaluator: unsupported keyword ${kw}`);
    }
    if (!ok) return false;
  }
  return true;
}

const fileSchema = specJsonSchema();
const schemaAccepts = (doc: unknown) => valid(fileSchema, doc, fileSchema);
const parserAccepts = (item: Json) => parseSpecItem(item).ok;

function anItem(overrides: Json = {}): Json {
  return { cluster: 'prod', service: 'web', image: 'nginx:1.27', desiredCount: 2, ...overrides };
}

// ---------------------------------------------------------------------------------------------

describe('schema/service-spec.schema.json', () => {
  it('is up to date with the zod schema (run `npm run schema` when this fails)', () => {
    const committed = readFileSync(resolve(import.meta.dirname, '..', SPEC_SCHEMA_PATH), 'utf8');
    expect(committed).toBe(renderSpecJsonSchema());
  });

  it('describes what a person writes: the spec attributes, cluster and service required, nothing else', () => {
    const spec = (fileSchema.$defs as Json).ServiceSpec as Json;
    expect(Object.keys(spec.properties as Json)).toEqual(SPEC_ATTRIBUTES.filter((a) => a !== STATUS_ATTRIBUTE));
    expect(spec.required).toEqual(['cluster', 'service']);
    expect(spec.additionalProperties).toBe(false);
  });

  it('states the parser defaults as JSON Schema defaults', () => {
    const props = ((fileSchema.$defs as Json).ServiceSpec as Json).properties as Record<string, Json>;
    const defaults = Object.fromEntries(Object.entries(props).filter(([, p]) => 'default' in p).map(([k, p]) => [k, p.default]));
    expect(defaults).toEqual({ ...SPEC_DEFAULTS, environment: {}, secrets: {}, tags: {} });
  });

  it.each([
    { case: 'one spec', doc: anItem(), want: true },
    { case: 'a list of specs', doc: [anItem(), anItem({ service: 'api' })], want: true },
    { case: 'an empty list', doc: [], want: true },
    { case: 'a list holding a bad spec', doc: [anItem(), anItem({ cpu: 300 })], want: false },
    { case: 'a scalar', doc: 'prod/web', want: false },
  ])('accepts a YAML document that is $case: $want', ({ doc, want }) => {
    expect(schemaAccepts(doc)).toBe(want);
  });
});

describe('the JSON Schema agrees with the parser', () => {
  const TG = 'arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/web/0123456789abcdef';
  it.each([
    { case: 'minimal', item: anItem() },
    { case: 'status is not input', item: anItem({ status: { phase: 'Converged' } }) },
    { case: 'unknown attribute', item: anItem({ replicas: 2 }) },
    { case: 'bad cluster name', item: anItem({ cluster: 'a b' }) },
    { case: 'image with digest', item: anItem({ image: `nginx@sha256:${'f'.repeat(64)}` }) },
    { case: 'bad image', item: anItem({ image: 'nginx latest' }) },
    { case: 'negative desiredCount', item: anItem({ desiredCount: -1 }) },
    { case: 'fractional desiredCount', item: anItem({ desiredCount: 0.5 }) },
    { case: 'desiredCount as a string', item: anItem({ desiredCount: '2' }) },
    { case: 'containerPort 65536', item: anItem({ containerPort: 65536 }) },
    { case: 'environment name', item: anItem({ environment: { 'A-B': 'x' } }) },
    { case: 'environment value number', item: anItem({ environment: { A: 1 } }) },
    { case: 'secret as SSM name', item: anItem({ secrets: { DB: '/app/db' } }) },
    { case: 'secret as S3 ARN', item: anItem({ secrets: { DB: 'arn:aws:s3:::b/k' } }) },
    { case: 'empty command', item: anItem({ command: [] }) },
    { case: '16 subnets', item: anItem({ subnets: Array.from({ length: 16 }, (_, i) => `subnet-${String(i).padStart(8, '0')}`) }) },
    { case: '17 subnets', item: anItem({ subnets: Array.from({ length: 17 }, (_, i) => `subnet-${String(i).padStart(8, '0')}`) }) },
    { case: 'repeated subnet', item: anItem({ subnets: ['subnet-0a1b2c3d', 'subnet-0a1b2c3d'] }) },
    { case: 'bad security group', item: anItem({ securityGroups: ['sg-1'] }) },
    { case: 'capacityProvider lower case', item: anItem({ capacityProvider: 'fargate_spot' }) },
    { case: 'Spot on X86_64', item: anItem({ capacityProvider: 'FARGATE_SPOT' }) },
    { case: 'Spot on ARM64', item: anItem({ capacityProvider: 'FARGATE_SPOT', cpuArchitecture: 'ARM64' }) },
    { case: 'role ARN', item: anItem({ taskRoleArn: 'arn:aws:iam::123456789012:role/x' }) },
    { case: 'user ARN as role', item: anItem({ taskRoleArn: 'arn:aws:iam::123456789012:user/x' }) },
    { case: 'health check', item: anItem({ healthCheck: { command: ['CMD-SHELL', 'true'], intervalSeconds: 5 } }) },
    { case: 'health check without CMD', item: anItem({ healthCheck: { command: ['true', 'x'] } }) },
    { case: 'health check CMD alone', item: anItem({ healthCheck: { command: ['CMD'] } }) },
    { case: 'health check interval 4', item: anItem({ healthCheck: { command: ['CMD', 'true'], intervalSeconds: 4 } }) },
    { case: 'health check unknown key', item: anItem({ healthCheck: { command: ['CMD', 'true'], interval: 10 } }) },
    { case: 'load balancer', item: anItem({ loadBalancer: { targetGroupArn: TG, containerPort: 80 } }) },
    { case: 'load balancer bad ARN', item: anItem({ loadBalancer: { targetGroupArn: 'tg', containerPort: 80 } }) },
    { case: 'deployment 50/200', item: anItem({ deployment: { minimumHealthyPercent: 50, maximumPercent: 200 } }) },
    { case: 'deployment max 100 (min defaults to 100)', item: anItem({ deployment: { maximumPercent: 100 } }) },
    { case: 'deployment 100/100', item: anItem({ deployment: { minimumHealthyPercent: 100, maximumPercent: 100 } }) },
    { case: 'deployment 50/100', item: anItem({ deployment: { minimumHealthyPercent: 50, maximumPercent: 100 } }) },
    { case: 'rollback without enable', item: anItem({ deployment: { circuitBreaker: { enable: false, rollback: true } } }) },
    { case: 'rollback with enable', item: anItem({ deployment: { circuitBreaker: { enable: true, rollback: true } } }) },
    { case: 'state absent alone', item: { cluster: 'prod', service: 'web', state: 'absent' } },
    { case: 'no image', item: { cluster: 'prod', service: 'web', desiredCount: 1 } },
    { case: 'no desiredCount', item: { cluster: 'prod', service: 'web', image: 'nginx' } },
    { case: 'autoscaled without desiredCount', item: { cluster: 'prod', service: 'web', image: 'nginx', autoscaled: true } },
    { case: 'lagGraceSeconds 86401', item: anItem({ lagGraceSeconds: 86_401 }) },
    { case: 'tags', item: anItem({ tags: { 'équipe': 'données web' } }) },
    { case: 'tag aws:', item: anItem({ tags: { 'Aws:x': 'y' } }) },
    { case: 'owner tag', item: anItem({ tags: { [OWNER_TAG_KEY]: 'y' } }) },
    { case: 'tag value with #', item: anItem({ tags: { k: '#' } }) },
    { case: '49 tags', item: anItem({ tags: Object.fromEntries(Array.from({ length: 49 }, (_, i) => [`k${i}`, 'v'])) }) },
    { case: '50 tags', item: anItem({ tags: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, 'v'])) }) },
  ])('$case', ({ item }) => {
    // A document in a file holds no status; the parser ignores it, the schema does not know it.
    const { status: _status, ...doc } = item as Json;
    expect(schemaAccepts(doc)).toBe(parserAccepts(item));
  });

  const cpus: (number | undefined)[] = [undefined, ...FARGATE_CPU_VALUES, 300];
  const memories: (number | undefined)[] = [undefined, 512, 1024, 2048, 3072, 4096, 5120, 8192, 9216, 16384, 17408, 20480, 30720, 31744, 36864, 40960, 61440, 122880];
  const sizes = cpus.flatMap((cpu) => memories.map((memory) => ({ cpu, memory })));

  it.each(sizes)('task size cpu $cpu, memory $memory', ({ cpu, memory }) => {
    const item = anItem({ ...(cpu === undefined ? {} : { cpu }), ...(memory === undefined ? {} : { memory }) });
    expect(schemaAccepts(item)).toBe(parserAccepts(item));
  });

  it('cannot express loadBalancer.containerPort == containerPort: only the parser rejects a mismatch', () => {
    const item = anItem({ containerPort: 8080, loadBalancer: { targetGroupArn: TG, containerPort: 80 } });
    expect([schemaAccepts(item), parserAccepts(item)]).toEqual([true, false]);
  });
});

// The ECS vocabulary in the schema: the real-world example of docs/spec.md is accepted, and what
// the declarations refuse in a container, a volume or a service field is refused by the schema too.
describe('the JSON Schema covers the ECS vocabulary', () => {
  const page = readFileSync(resolve(import.meta.dirname, '..', 'docs', 'spec.md'), 'utf8');
  const at = page.indexOf('### Example: a real-world service');
  const example = parseYaml(/```yaml\n([\s\S]*?)```/.exec(page.slice(at))?.[1] ?? '') as Json;
  const edited = (edit: (x: any) => void): Json => {
    const x = structuredClone(example);
    edit(x);
    return x;
  };

  it('accepts the real-world example (sidecars, EFS, two target groups), as the parser does', () => {
    expect(parserAccepts(example)).toBe(true);
    expect(schemaAccepts(example)).toBe(true);
  });

  it.each([
    { case: 'an unknown container field', edit: (x: any) => (x.containers[0].imagePullPolicy = 'Always') },
    { case: 'a dependsOn condition ECS does not have', edit: (x: any) => (x.containers[0].dependsOn[0].condition = 'READY') },
    { case: 'a port name with upper case', edit: (x: any) => (x.containers[0].portMappings[0].name = 'HTTP') },
    { case: 'a health check interval below 5 s', edit: (x: any) => (x.containers[0].healthCheck.interval = 1) },
    { case: 'a log driver Fargate does not take', edit: (x: any) => (x.containers[1].logConfiguration.logDriver = 'json-file') },
    { case: 'privileged (refused on Fargate)', edit: (x: any) => (x.containers[0].privileged = true) },
    { case: 'an EFS id that is not one', edit: (x: any) => (x.volumes[0].efsVolumeConfiguration.fileSystemId = 'media') },
    { case: 'ephemeral storage of 20 GiB or less', edit: (x: any) => (x.ephemeralStorage = { sizeInGiB: 20 }) },
    { case: 'a target group port out of range', edit: (x: any) => (x.loadBalancers[0].containerPort = 70000) },
    { case: 'a capacity provider that is not Fargate', edit: (x: any) => (x.capacityProviderStrategy[0].capacityProvider = 'EC2') },
    { case: 'a platform version that is not one', edit: (x: any) => (x.platformVersion = 'newest') },
    { case: 'propagateTags of another value', edit: (x: any) => (x.propagateTags = 'ALL') },
  ])('refuses $case, as the parser does', ({ edit }) => {
    const doc = edited(edit);
    expect(parserAccepts(doc)).toBe(false);
    expect(schemaAccepts(doc)).toBe(false);
  });
});


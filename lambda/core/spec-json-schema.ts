/**
 * The JSON Schema of spec files, for editors (YAML language server, VS Code): generated from the
 * zod schema's INPUT side (what a person writes), so it cannot drift from the parser. Written to
 * `schema/service-spec.schema.json` by `npm run schema`; a test fails when that file is stale.
 */
import { z } from 'zod';
import { FARGATE_CPU_MEMORY, FARGATE_CPU_VALUES, SPEC_DEFAULTS, serviceSpecSchema } from './spec';

/** Where the schema file lives, relative to the repository root. */
export const SPEC_SCHEMA_PATH = 'schema/service-spec.schema.json';

type JsonObject = Record<string, unknown>;

const isAbsent: JsonObject = { required: ['state'], properties: { state: { const: 'absent' } } };

/**
 * Rules across attributes, as JSON Schema conditionals (what zod's `superRefine` checks and
 * `z.toJSONSchema` cannot express): image (unless containers) and desiredCount requirements, the Fargate task size
 * pairs. `loadBalancer.containerPort == containerPort` has no
 * JSON Schema form; the parser still checks it.
 */
function crossAttributeRules(): JsonObject[] {
  const rules: JsonObject[] = [
    // image, unless the spec is absent or lists its containers (then they are the whole task).
    { if: { anyOf: [isAbsent, { required: ['containers'] }] }, else: { required: ['image'] } },
    {
      if: { anyOf: [isAbsent, { required: ['autoscaled'], properties: { autoscaled: { const: true } } }] },
      else: { required: ['desiredCount'] },
    },
  ];
  for (const cpu of FARGATE_CPU_VALUES) {
    const memories = [...FARGATE_CPU_MEMORY[cpu]];
    if (cpu === SPEC_DEFAULTS.cpu) {
      // Also applies when cpu is omitted (the default); memory may then be omitted too (512 is valid).
      rules.push({ if: { properties: { cpu: { const: cpu } } }, then: { properties: { memory: { enum: memories } } } });
    } else {
      // The default memory (512) is never valid with a larger cpu: memory must be given.
      rules.push({
        if: { required: ['cpu'], properties: { cpu: { const: cpu } } },
        then: { required: ['memory'], properties: { memory: { enum: memories } } },
      });
    }
  }
  return rules;
}

/**
 * The JSON Schema (draft 2020-12) of one YAML document of a spec file: one spec, or a list of
 * specs. The spec itself is `$defs.ServiceSpec`.
 */
export function specJsonSchema(): JsonObject {
  const { $schema, ...spec } = z.toJSONSchema(serviceSpecSchema, { io: 'input', unrepresentable: 'throw' }) as JsonObject;
  const serviceSpec: JsonObject = {
    title: 'ECS service spec',
    description: 'The desired state of one ECS service on Fargate (ecs-reconciler).',
    ...spec,
    allOf: crossAttributeRules(),
  };
  return {
    $schema,
    title: 'ecs-reconciler service specs',
    description: 'One YAML document: a service spec, or a list of service specs.',
    anyOf: [{ $ref: '#/$defs/ServiceSpec' }, { type: 'array', items: { $ref: '#/$defs/ServiceSpec' } }],
    $defs: { ServiceSpec: serviceSpec },
  };
}

/** The schema file's exact text: 2-space indented JSON with a final newline. */
export function renderSpecJsonSchema(): string {
  return `${JSON.stringify(specJsonSchema(), null, 2)}\n`;
}

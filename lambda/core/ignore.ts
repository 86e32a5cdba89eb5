/**
 * A spec's `ignore`: fields another controller owns (an autoscaler, a deploy pipeline, a person's
 * runbook), in the manner of Argo CD's `ignoreDifferences`. An ignored field is neither compared
 * nor sent: the live value stays, and a new task definition revision the spec needs for another
 * reason takes the ignored fields from the live revision rather than from the spec.
 *
 * Paths name ECS fields as drift lines show them:
 * - a service field UpdateService takes: `desiredCount`, `capacityProviderStrategy`,
 *   `networkConfiguration`, `deploymentConfiguration`, `loadBalancers`, `tags` (service tags), or
 *   one of the declared service fields (`platformVersion`, `healthCheckGracePeriodSeconds`, ...);
 * - `taskDefinition`: the whole task definition (a pipeline registers revisions and points the
 *   service at them);
 * - a task definition field (`cpu`, `memory`, `taskRoleArn`, `volumes`, ...);
 * - a container field: `containerDefinitions[NAME].FIELD`, or `containerDefinitions[*].FIELD` for
 *   every container (`containerDefinitions[*].image`: a pipeline pushes images).
 * Ignoring is for fields of a service that exists: a service is created from its spec whole.
 */
import { own, putOwn } from './dict';
import type { ServiceDiff } from './plan-service';
import type { RegisterTaskDefinitionInput, TaskDefinition } from './types';
import { CONTAINER, TASK_DEFINITION } from './vocab/task';
import { SERVICE_FIELD_NAMES } from './vocab/service';

/** Service-level paths an `ignore` entry may name (each an UpdateService member, or `tags`). */
export const IGNORABLE_SERVICE_FIELDS: readonly string[] = Object.freeze([
  'desiredCount',
  'capacityProviderStrategy',
  'networkConfiguration',
  'deploymentConfiguration',
  'loadBalancers',
  'tags',
  ...SERVICE_FIELD_NAMES,
]);

/** Task definition fields an `ignore` entry may name (the family is the spec's own). */
export const IGNORABLE_TASK_DEFINITION_FIELDS: readonly string[] = Object.freeze(Object.keys(TASK_DEFINITION.fields).filter((f) => f !== 'family'));

/** Container fields an `containerDefinitions[NAME].FIELD` entry may name (the name is the key). */
export const IGNORABLE_CONTAINER_FIELDS: readonly string[] = Object.freeze(Object.keys(CONTAINER.fields).filter((f) => f !== 'name'));

const CONTAINER_PATH = /^containerDefinitions\[(\*|[A-Za-z0-9_-]{1,255})\]\.([A-Za-z]+)$/;

/** At most this many `ignore` entries (ours: a longer list means the spec is not what runs). */
export const MAX_IGNORE_ENTRIES = 50;

/**
 * Why `path` is not an `ignore` entry, or undefined when it is one.
 * @returns one sentence naming what is allowed.
 */
export function ignorePathProblem(path: string): string | undefined {
  if (path === 'taskDefinition' || IGNORABLE_SERVICE_FIELDS.includes(path) || IGNORABLE_TASK_DEFINITION_FIELDS.includes(path)) return undefined;
  const m = CONTAINER_PATH.exec(path);
  if (m !== null) {
    return IGNORABLE_CONTAINER_FIELDS.includes(m[2])
      ? undefined
      : `"${m[2]}" is not a container field ECS has (e.g. image, environment, secrets, cpu, memory, command)`;
  }
  return (
    `"${path}" is not a field the reconciler can leave alone: name a service field (${IGNORABLE_SERVICE_FIELDS.slice(0, 6).join(', ')}, ...), ` +
    '`taskDefinition`, a task definition field (cpu, memory, taskRoleArn, ...) or `containerDefinitions[NAME].FIELD` (NAME may be *)'
  );
}

/** A spec's `ignore` entries, sorted by what they apply to. */
export interface IgnoreRules {
  /** Service-level fields (UpdateService members, `tags`). */
  readonly service: ReadonlySet<string>;
  /** The whole task definition is someone else's: no task definition change is made. */
  readonly taskDefinition: boolean;
  /** Top-level task definition fields kept as they are live. */
  readonly taskDefinitionFields: readonly string[];
  /** Container fields kept as they are live: `container` is a name or `*`. */
  readonly containerFields: readonly { readonly container: string; readonly field: string }[];
}

/** The rules of `ignore` (entries already validated by the spec parser), or undefined for none. */
export function ignoreRules(ignore: readonly string[] | undefined): IgnoreRules | undefined {
  if (ignore === undefined || ignore.length === 0) return undefined;
  const service = new Set<string>();
  const taskDefinitionFields: string[] = [];
  const containerFields: { container: string; field: string }[] = [];
  let taskDefinition = false;
  for (const path of ignore) {
    const m = CONTAINER_PATH.exec(path);
    if (path === 'taskDefinition') taskDefinition = true;
    else if (m !== null) containerFields.push({ container: m[1], field: m[2] });
    else if (IGNORABLE_SERVICE_FIELDS.includes(path)) service.add(path);
    else taskDefinitionFields.push(path);
  }
  return { service, taskDefinition, taskDefinitionFields, containerFields };
}

/**
 * `want` with the ignored fields as they are in `live`: a top-level field, or a container's field
 * (containers matched by name; a container only one side has is left as it is). A field `live`
 * does not have is removed from the result. `want` is not changed.
 */
export function withLiveIgnored(want: RegisterTaskDefinitionInput, live: TaskDefinition, rules: IgnoreRules): RegisterTaskDefinitionInput {
  if (rules.taskDefinitionFields.length === 0 && rules.containerFields.length === 0) return want;
  const out = { ...want } as unknown as Record<string, unknown>;
  const liveRecord = live as unknown as Record<string, unknown>;
  for (const field of rules.taskDefinitionFields) setOrDelete(out, field, own(liveRecord, field));
  if (rules.containerFields.length > 0) {
    const liveContainers = new Map((live.containerDefinitions ?? []).map((c) => [c.name, c as unknown as Record<string, unknown>]));
    out.containerDefinitions = want.containerDefinitions.map((c) => {
      const from = liveContainers.get(c.name);
      if (from === undefined) return c;
      const copy = { ...c } as unknown as Record<string, unknown>;
      for (const { container, field } of rules.containerFields) {
        if (container === '*' || container === c.name) setOrDelete(copy, field, own(from, field));
      }
      return copy;
    });
  }
  return out as unknown as RegisterTaskDefinitionInput;
}

function setOrDelete(target: Record<string, unknown>, field: string, value: unknown): void {
  if (value === undefined) delete target[field];
  else putOwn(target, field, structuredClone(value));
}

/**
 * `diff` without the ignored service fields: their changes (a field, or any part of it such as
 * `networkConfiguration.subnets`) and their UpdateService members are dropped; a forced new
 * deployment that only a capacity provider change asked for goes with it.
 */
export function withoutIgnoredServiceFields(diff: ServiceDiff, rules: IgnoreRules): ServiceDiff {
  if (rules.service.size === 0) return diff;
  const ignored = (field: string) => {
    const top = /^[A-Za-z]+/.exec(field)?.[0] ?? field;
    return rules.service.has(top) || (top === 'launchType' && rules.service.has('capacityProviderStrategy'));
  };
  const changes = diff.changes.filter((c) => !ignored(c.field));
  const unsendable = diff.unsendable.filter((c) => !ignored(c.field));
  if (changes.length === diff.changes.length && unsendable.length === diff.unsendable.length) return diff;
  const input = { ...diff.input } as Record<string, unknown>;
  for (const name of rules.service) delete input[name];
  if (rules.service.has('capacityProviderStrategy')) delete input.forceNewDeployment;
  return { changes, unsendable, input: input as ServiceDiff['input'] };
}

/**
 * The comparison of a spec with its live service: the task definition (hashes first), the service
 * fields, the service revision's settings, and what the deployment controller lets UpdateService send.
 */
import { NO_DIGEST, taskDefinitionDigest } from '../compare-cache';
import { own } from '../dict';
import {
  type DesiredServiceConfig,
  type ServiceDiff,
  type UnsendableChange,
  desiredServiceConfig,
  diffService,
  limitToDeploymentController,
} from '../plan-service';
import { type IgnoreRules, ignoreRules, withLiveIgnored, withoutIgnoredServiceFields } from '../ignore';
import { diffTaskDefinitions, renderTaskDefinition } from '../taskdef';
import type { FieldChange, ObservedService, RegisterTaskDefinitionInput, ServiceSpec, TaskDefinition, UpdateServiceInput } from '../types';
import type { PlanContext, ValidSpec } from './types';

/** The task definition rendered for a spec, rendered on first call only. */
export type Rendered = () => RegisterTaskDefinitionInput;

/** The task definition of `spec`, rendered on first use only (a steady service never needs it). */
export function lazyRender(spec: ServiceSpec, ctx: PlanContext): Rendered {
  let td: (RegisterTaskDefinitionInput) | undefined;
  return () => (td ??= renderTaskDefinition(spec, { defaults: ctx.options.defaults, ownerId: ctx.options.ownerId }));
}

/**
 * Changes of the live task definition against the one rendered for the spec, hashes first: equal
 * canonical digests are no change (the live one's digest is the runtime's, computed once per
 * description); only different ones are diffed. A family other than ours counts as a change too.
 */
export function taskDefinitionChanges(ctx: PlanContext, rendered: Rendered, live: TaskDefinition): FieldChange[] {
  const want = rendered();
  const wantDigest = taskDefinitionDigest(want);
  if (wantDigest !== NO_DIGEST && wantDigest === ctx.digests.taskDefinitionDigest(live)) return [];
  const changes = diffTaskDefinitions(want, live);
  if (live.family !== undefined && live.family !== want.family && !changes.some((c) => c.field === 'family')) {
    return [{ field: 'family', from: live.family, to: want.family }, ...changes];
  }
  return changes;
}

/**
 * Service settings a service revision fixes (Amazon ECS API reference, "ServiceRevision"):
 * changing one starts a deployment (docs/ecs-facts.md §7), which ECS's circuit breaker can roll back.
 */
const REVISION_FIELDS: ReadonlySet<string> = new Set([
  'capacityProviderStrategy',
  'launchType',
  'networkConfiguration',
  'loadBalancers',
  'platformVersion',
  'serviceRegistries',
  'serviceConnectConfiguration',
  'volumeConfigurations',
]);

/** Whether a service change is one of a service revision's settings ({@link REVISION_FIELDS}). */
export function isRevisionChange(c: FieldChange): boolean {
  return REVISION_FIELDS.has(c.field.split(/[.[]/)[0]);
}

/** What comparing a spec with its existing live service found, before any rule reads memory. */
export interface Comparison {
  readonly rendered: Rendered;
  /** The live task definition, when it was described. */
  readonly liveTd?: TaskDefinition;
  /** Task definition changes, live -> desired; undefined when the live one was not described. */
  readonly tdChanges?: FieldChange[];
  readonly desired: DesiredServiceConfig;
  /** Every service field difference (sendable or not). */
  readonly diff: ServiceDiff;
  /** The differences among a service revision's settings, sendable or not. */
  readonly revisionChanges: readonly FieldChange[];
  /** The spec's `ignore`, when it has one: what was left out of the comparison. */
  readonly ignore?: IgnoreRules;
}

/** Compares the spec `r` with the live service `svc` (its task definition `liveTd` when described). */
export function compareExisting(r: ValidSpec, svc: ObservedService, liveTd: TaskDefinition | undefined, ctx: PlanContext): Comparison {
  const ignore = ignoreRules(r.spec.ignore);
  const rendered = ignore !== undefined && liveTd !== undefined ? withLiveRender(lazyRender(r.spec, ctx), liveTd, ignore) : lazyRender(r.spec, ctx);
  const tdChanges = ignore?.taskDefinition ? [] : liveTd ? taskDefinitionChanges(ctx, rendered, liveTd) : undefined;
  const desired = desiredServiceConfig(r.spec, ctx.options.defaults);
  const diff = ignore !== undefined ? withoutIgnoredServiceFields(diffService(desired, svc), ignore) : diffService(desired, svc);
  const revisionChanges =
    diff.changes.length === 0 && diff.unsendable.length === 0 ? [] : [...diff.changes, ...diff.unsendable].filter(isRevisionChange);
  return { rendered, liveTd, tdChanges, desired, diff, revisionChanges, ...(ignore !== undefined ? { ignore } : {}) };
}

/** `rendered` with the fields the spec ignores taken from the live task definition, on first call only. */
function withLiveRender(rendered: Rendered, liveTd: TaskDefinition, ignore: IgnoreRules): Rendered {
  let td: RegisterTaskDefinitionInput | undefined;
  return () => (td ??= withLiveIgnored(rendered(), liveTd, ignore));
}

/** Whether the spec renders another revision than the live one (task definition or revision settings). */
export function rendersOtherRevision(c: Comparison): boolean {
  return c.tdChanges !== undefined && (c.tdChanges.length > 0 || c.revisionChanges.length > 0);
}

/** What UpdateService may send under the live service's deployment controller, and what it holds back. */
export interface Sendable {
  readonly tdChanges?: FieldChange[];
  readonly input: Omit<UpdateServiceInput, 'cluster' | 'service'>;
  readonly serviceChanges: FieldChange[];
  /** Differences not sent: unsendable ones, and those the controller does not let UpdateService change. */
  readonly held: readonly UnsendableChange[];
}

/**
 * Under the CODE_DEPLOY or EXTERNAL deployment controller, what ECS does not let UpdateService
 * change is observed and never sent: it is reported as NotUpdatable instead. Under ECS's own
 * controller everything may be sent: no list to build.
 */
export function sendable(c: Comparison, svc: ObservedService): Sendable {
  const { diff, tdChanges } = c;
  const controller = svc.deploymentController?.type;
  if (controller === undefined || controller === 'ECS') {
    return { tdChanges, input: diff.input, serviceChanges: diff.changes, held: diff.unsendable };
  }
  const limited = limitToDeploymentController(controller, [...(tdChanges ?? []), ...diff.changes], diff.input);
  const held = diff.unsendable.length === 0 ? limited.held : [...diff.unsendable, ...limited.held];
  // Nothing held back (nothing to change): the diffs stand as they are.
  if (limited.held.length === 0) return { tdChanges, input: limited.input, serviceChanges: diff.changes, held };
  return {
    tdChanges: tdChanges?.filter((x) => limited.changes.includes(x)),
    input: limited.input,
    serviceChanges: diff.changes.filter((x) => limited.changes.includes(x)),
    held,
  };
}

/** The live task definition of `svc`, when this pass described it. */
export function liveTaskDefinitionOf(svc: ObservedService, ctx: PlanContext): TaskDefinition | undefined {
  return own(ctx.observed.taskDefinitions, svc.taskDefinition);
}

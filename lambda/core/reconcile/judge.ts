/**
 * What an existing service needs, judged from the comparison: the kind of update, the changes to
 * send, the service tags to set, and what cannot be corrected or compared this pass.
 */
import { own } from '../dict';
import type { UnsendableChange } from '../plan-service';
import { type ConditionDrafts, Reason } from '../status';
import type { FieldChange, ObservedDeployment, ObservedService, ServiceSpec, ServiceStatus, TaskDefinition, UpdateKind, UpdateServiceInput } from '../types';
import { type Comparison, type Rendered, sendable } from './compare';
import { primaryDeployment } from './live';
import { isRetryOfFailedRollout } from './rollout';
import { changesText } from './text';
import type { PlanContext, ValidSpec } from './types';

/** What an existing service needs this pass (nothing, when {@link acts} says so). */
export interface PlannedUpdate {
  readonly adopting: boolean;
  readonly kind: UpdateKind;
  /** A retry of the PRIMARY deployment that FAILED: UpdateService forces a new deployment. */
  readonly retry: boolean;
  readonly primary?: ObservedDeployment;
  readonly liveTd?: TaskDefinition;
  readonly rendered: Rendered;
  /** Task definition changes that may be sent; undefined when the live one was not described. */
  readonly tdChanges?: FieldChange[];
  /** The UpdateService fields that differ and may be sent. */
  readonly input: Omit<UpdateServiceInput, 'cluster' | 'service'>;
  /** Every change the UpdateService applies (task definition, service fields, a forced deployment). */
  readonly changes: FieldChange[];
  /** Service tags of the spec whose live value differs, by key. */
  readonly tagChanges: [string, string][];
  /** Every difference held back (not sendable, or not under this deployment controller). */
  readonly held: readonly UnsendableChange[];
  readonly incomplete: ConditionDrafts['incomplete'];
  readonly notUpdatable: ConditionDrafts['blocked'];
}

/** Whether the service needs an action (adopt, tag, register, update). */
export function acts(u: PlannedUpdate): boolean {
  return u.adopting || u.tagChanges.length > 0 || (u.tdChanges !== undefined && u.tdChanges.length > 0) || u.changes.length > 0;
}

/** The update an existing service needs, from the comparison `c` of spec `r` with `svc`. */
export function plannedUpdate(
  r: ValidSpec,
  svc: ObservedService,
  rem: ServiceStatus | undefined,
  adopting: boolean,
  c: Comparison,
  ctx: PlanContext,
): PlannedUpdate {
  const send = sendable(c, svc);
  const kind: UpdateKind = adopting ? 'adopt' : rem?.lastAppliedSpecHash !== r.hash ? 'rollout' : 'drift';
  const primary = primaryDeployment(svc);
  const retry = isRetryOfFailedRollout(kind === 'drift', primary, send.tdChanges, send.input);
  const tdChanges = send.tdChanges ?? [];
  const changes =
    tdChanges.length > 0 || send.serviceChanges.length > 0 || retry ? [...tdChanges, ...send.serviceChanges, ...retryChange(retry, primary)] : [];
  return {
    adopting,
    kind,
    retry,
    primary,
    liveTd: c.liveTd,
    rendered: c.rendered,
    tdChanges: send.tdChanges,
    input: send.input,
    changes,
    tagChanges: adopting || c.ignore?.service.has('tags') ? [] : tagChangesOf(r.spec, svc),
    held: send.held,
    incomplete: c.liveTd ? undefined : notDescribed(svc, ctx),
    notUpdatable: send.held.length > 0 ? { reason: Reason.NotUpdatable, message: `not corrected, because ${send.held[0].why}: ${changesText(send.held)}` } : undefined,
  };
}

/**
 * The change a retry adds: a FAILED deployment launches no tasks (docs/ecs-facts.md §4) and an
 * UpdateService without a new task definition starts none, so a retry of the same task
 * definition must force one.
 */
function retryChange(retry: boolean, primary: ObservedDeployment | undefined): FieldChange[] {
  return retry && primary !== undefined ? [{ field: 'deployment', from: `${primary.id} FAILED`, to: 'new deployment (forceNewDeployment)' }] : [];
}

/** Why the live task definition could not be compared: not described this pass. */
function notDescribed(svc: ObservedService, ctx: PlanContext): ConditionDrafts['incomplete'] {
  return {
    reason: Reason.TaskDefinitionNotDescribed,
    message: ctx.pendingTaskDefinitions.has(svc.taskDefinition)
      ? `task definition ${svc.taskDefinition} is not described yet (this pass ran out of time to observe; a later pass compares it); it is left alone this pass`
      : `task definition ${svc.taskDefinition} could not be described; it is left alone this pass`,
  };
}

/**
 * Service tags from the spec whose live value differs, sorted by key (docs/ecs-facts.md §7: tags
 * are not an UpdateService field; TagResource adds or overwrites them). Tags a person added by
 * hand are left alone; a tag removed from the spec is not removed from the service (the
 * reconciler does not remember which keys it set).
 */
function tagChangesOf(spec: ServiceSpec, svc: ObservedService): [string, string][] {
  const out: [string, string][] = [];
  for (const k in spec.tags) {
    if (!Object.hasOwn(spec.tags, k)) continue;
    const v = own(spec.tags, k) as string;
    if (own(svc.tags, k) !== v) out.push([k, v]);
  }
  if (out.length > 1) out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return out;
}

/**
 * An existing service with something to do: adopt it (TagResource with the owner tag), set its
 * service tags, register a task definition and update the service; status Progressing.
 */
import { own } from '../dict';
import { OWNER_TAG_KEY } from '../ports';
import { Reason, describeChange } from '../status';
import type { Action, ObservedService, UpdateKind, UpdateServiceInput } from '../types';
import type { PlannedUpdate } from './judge';
import { rolloutStateOf } from './live';
import { rolloutFrom, startsDeployment } from './rollout';
import { drafts, graceOf, serviceStatus } from './status';
import { changesText, serviceTags } from './text';
import type { Counts, Decision, Memory, PlanContext, ServiceView, ValidSpec } from './types';

const UPDATE_PURPOSE: Record<UpdateKind, string> = {
  rollout: 'apply changed spec',
  drift: 'correct drift',
  adopt: 'reconcile adopted service',
};

/** The actions of `u` and the service's status: Progressing, with the memory of what was applied. */
export function updateDecision(view: ServiceView, r: ValidSpec, svc: ObservedService, counts: Counts, u: PlannedUpdate, ctx: PlanContext): Decision {
  const { actions, input, tagLines } = updateActions(r, svc, u, ctx);
  const tagText = tagLines.join(', ');
  const reason = u.adopting ? Reason.Adopting : u.kind === 'drift' ? Reason.DriftCorrected : Reason.SpecApplied;
  const message =
    u.changes.length > 0
      ? `UpdateService planned (${u.kind}): ${changesText(u.changes)}${tagText ? `; TagResource: ${tagText}` : ''}`
      : u.adopting
        ? `TagResource planned: adopting service ${r.key.service}`
        : `TagResource planned (${u.kind}): ${tagText}`;
  const status = serviceStatus(ctx, view.remembered, {
    specHash: r.hash,
    graceSeconds: graceOf(ctx, r.spec),
    service: svc,
    desiredCount: counts.desiredCount,
    runningCount: counts.runningCount,
    pendingCount: counts.pendingCount,
    phase: 'Progressing',
    conditions: drafts('Progressing', reason, message, {
      ...(u.incomplete ? { incomplete: u.incomplete } : {}),
      ...(u.notUpdatable ? { blocked: u.notUpdatable } : {}),
    }),
    memory: appliedMemory(view, r, svc, u, startsDeployment(input), tagLines, ctx),
  });
  return { actions, status };
}

/** The actions in their order (the plan sorts them again), the UpdateService input, and the tag changes in words. */
function updateActions(r: ValidSpec, svc: ObservedService, u: PlannedUpdate, ctx: PlanContext): { actions: Action[]; input: UpdateServiceInput; tagLines: string[] } {
  const { key, spec, hash } = r;
  const actions: Action[] = [];
  if (u.adopting) {
    const reason = `adopt service ${key.service}: add the owner tag ${OWNER_TAG_KEY}=${ctx.options.ownerId}`;
    actions.push({ type: 'TagResource', ...key, specHash: hash, reason, resourceArn: svc.serviceArn, tags: serviceTags(spec, ctx.options.ownerId) });
  }
  const tagLines = u.tagChanges.map(([k, v]) => describeChange({ field: `tags.${k}`, from: own(svc.tags, k) ?? '(none)', to: v }));
  if (u.tagChanges.length > 0) {
    const tags = u.tagChanges.map(([k, value]) => ({ key: k, value }));
    actions.push({ type: 'TagResource', ...key, specHash: hash, reason: `service tags differ: ${tagLines.join(', ')}`, resourceArn: svc.serviceArn, tags });
  }
  const input: UpdateServiceInput = { cluster: key.cluster, service: key.service, ...u.input, ...(u.retry ? { forceNewDeployment: true } : {}) };
  if (u.tdChanges && u.tdChanges.length > 0) {
    actions.push({ type: 'RegisterTaskDefinition', ...key, specHash: hash, reason: `task definition differs: ${changesText(u.tdChanges)}`, input: u.rendered() });
    input.taskDefinition = u.rendered().family;
  }
  if (u.changes.length > 0) {
    const reason = `${UPDATE_PURPOSE[u.kind]}: ${changesText(u.changes)}`;
    actions.push({ type: 'UpdateService', ...key, specHash: hash, kind: u.kind, reason, input, changes: u.changes });
  }
  return { actions, input, tagLines };
}

/**
 * The memory of a planned update. Only a spec applied whole counts as applied: with the live task
 * definition unknown, its half of a changed spec is still to come, as a rollout (not as drift)
 * next pass. A new deployment forgets the deployment observed and records where it starts from;
 * otherwise the PRIMARY deployment of the live task definition is the applied one. Drift
 * corrected is recorded in words with the time.
 */
function appliedMemory(view: ServiceView, r: ValidSpec, svc: ObservedService, u: PlannedUpdate, newDeployment: boolean, tagLines: string[], ctx: PlanContext): Memory {
  const rem = view.remembered;
  const { primary } = u;
  const observedDeployment: Memory =
    u.tdChanges !== undefined && u.tdChanges.length === 0 && primary && primary.taskDefinition === svc.taskDefinition
      ? { appliedDeploymentId: primary.id, appliedRolloutState: rolloutStateOf(svc, primary) }
      : {};
  const driftCorrected = u.kind === 'drift' && (u.changes.length > 0 || u.tagChanges.length > 0);
  return {
    lastAppliedSpecHash: u.liveTd || u.kind === 'drift' ? r.hash : rem?.lastAppliedSpecHash,
    failedSpecHash: undefined,
    failedServiceDeploymentArn: undefined,
    ...(newDeployment ? { appliedDeploymentId: undefined, appliedRolloutState: undefined, ...rolloutFrom(svc, rem) } : observedDeployment),
    ...(driftCorrected ? { drift: [...u.changes.map(describeChange), ...tagLines], driftCorrectedAt: ctx.now.toISOString() } : {}),
  };
}

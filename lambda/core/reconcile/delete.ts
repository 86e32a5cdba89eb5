/**
 * Deletes: a spec that says `state: absent`, and the pass's delete budget over every delete
 * candidate (explicit deletes first, then orphan prunes, unless the prune safety valve holds them).
 */
import { putOwn } from '../dict';
import { OWNER_TAG_KEY } from '../ports';
import { type ConditionDrafts, Reason } from '../status';
import { type Action, type DeleteServiceAction, type Phase, type ServiceId, type ServiceStatus, serviceId } from '../types';
import { ownershipRefusal, refusedReadDecision } from './guards';
import { isGone, isOwned } from './live';
import { compareKeys } from './order';
import { type PruneHoldBook, releaseText } from './holds';
import { blockedDrafts, drafts, graceOf, liveCounts, serviceStatus, statusOnly, unknownDrafts } from './status';
import type { DeleteCandidate, DeleteOutcome, Decision, PlanContext, ServiceView, ValidSpec } from './types';
import { readRefused, vouched } from './view';

/**
 * A spec that says `state: absent`: Deleted when its service is gone (or its cluster), Deleting
 * while DRAINING, refused as any change of a service not ours, Pending on a partial read of the
 * table or the cluster (nothing is deleted then), else a delete candidate (with a TagResource
 * first to adopt a service the spec adopts).
 */
export function reconcileAbsentSpec(view: ServiceView, r: ValidSpec, ctx: PlanContext): Decision {
  const { key, spec, hash } = r;
  const svc = view.service;
  const base = { specHash: hash, graceSeconds: graceOf(ctx, spec), service: svc, ...liveCounts(svc, 'zero') };
  const simple = (phase: Phase, reason: Reason, message: string, extra: Pick<ConditionDrafts, 'blocked' | 'incomplete'> = {}) =>
    statusOnly(ctx, view.remembered, { ...base, phase, conditions: drafts(phase, reason, message, extra) });
  const pending = (reason: Reason, message: string) => statusOnly(ctx, view.remembered, { ...base, phase: 'Pending', conditions: unknownDrafts(reason, message) });

  if (!view.cluster.exists) return simple('Deleted', Reason.ServiceDeleted, `cluster ${key.cluster} does not exist`);
  if (readRefused(view)) return refusedReadDecision(view, r, ctx);
  if (svc === undefined && !vouched(view)) {
    return pending(Reason.ObservationIncomplete, `cluster ${key.cluster} was observed only in part; cannot tell whether ${key.service} exists`);
  }
  if (isGone(svc)) return simple('Deleted', Reason.ServiceDeleted, `service ${key.service} is ${svc ? 'INACTIVE' : 'gone'}`);
  if (svc.status === 'DRAINING') return simple('Deleting', Reason.Deleting, `service ${key.service} is DRAINING`);
  const refusal = ownershipRefusal(svc, spec, ctx);
  if (refusal) return simple('Blocked', refusal.reason, refusal.message, { blocked: refusal });
  if (!ctx.fleet.specsComplete) return pending(Reason.SpecsIncomplete, 'the spec table was read only in part this pass; no service is deleted');
  if (!view.cluster.complete) {
    return pending(Reason.ObservationIncomplete, `cluster ${key.cluster} was observed only in part (${view.cluster.error ?? 'partial read'}); no service is deleted`);
  }
  const actions: Action[] = [];
  if (!isOwned(svc, ctx.options)) {
    const reason = `adopt service ${key.service} to delete it (state: absent)`;
    actions.push({ type: 'TagResource', ...key, specHash: hash, reason, resourceArn: svc.serviceArn, tags: [{ key: OWNER_TAG_KEY, value: ctx.options.ownerId }] });
  }
  const candidate: DeleteCandidate = {
    key,
    cause: 'absent',
    service: svc,
    specHash: hash,
    base,
    remembered: view.remembered,
    why: 'the spec says state: absent',
    memory: { lastAppliedSpecHash: hash },
  };
  return { actions, deleteCandidate: candidate };
}

/** The status of a delete candidate once the budget decided: Deleting, Pending (wait) or Blocked. */
export function deleteStatus(ctx: PlanContext, c: DeleteCandidate, outcome: DeleteOutcome): ServiceStatus {
  if (outcome.kind === 'delete') {
    const message = `DeleteService planned: ${c.why}`;
    return serviceStatus(ctx, c.remembered, { ...c.base, phase: 'Deleting', conditions: drafts('Deleting', Reason.Deleting, message), memory: c.memory });
  }
  if (outcome.kind === 'wait') {
    const message = `delete waits for a later pass: maxDeletesPerPass (${ctx.options.maxDeletesPerPass}) reached; ${c.why}`;
    return serviceStatus(ctx, c.remembered, { ...c.base, phase: 'Pending', conditions: drafts('Pending', Reason.DeleteLimitReached, message) });
  }
  return serviceStatus(ctx, c.remembered, { ...c.base, phase: 'Blocked', conditions: blockedDrafts(Reason.PruneBlocked, outcome.message) });
}

/**
 * Applies the pass's delete budget: explicit `state: absent` deletes first (intent, limited only
 * by `maxDeletesPerPass`, in cluster/service order), then orphan prunes, unless the prune safety
 * valve ({@link pruneValve}) holds them all back (and holds their clusters). Writes the
 * candidates' statuses into `statuses`.
 * @returns the DeleteService actions, in cluster/service order.
 */
export function applyDeleteBudget(
  candidates: readonly DeleteCandidate[],
  ctx: PlanContext,
  holds: PruneHoldBook,
  statuses: Record<ServiceId, ServiceStatus>,
): DeleteServiceAction[] {
  let budget = ctx.options.maxDeletesPerPass;
  const out: DeleteServiceAction[] = [];
  const decide = (c: DeleteCandidate) => {
    const take = budget > 0;
    if (take) {
      out.push(deleteAction(c));
      budget -= 1;
    }
    putOwn(statuses, serviceId(c.key), deleteStatus(ctx, c, { kind: take ? 'delete' : 'wait' }));
  };
  const sorted = [...candidates].sort((a, b) => compareKeys(a.key, b.key));
  for (const c of sorted) if (c.cause === 'absent') decide(c);
  const orphans = sorted.filter((x) => x.cause === 'orphan');
  if (orphans.length === 0) return out;
  const message = pruneValve(orphans, ctx, holds);
  if (message !== undefined) {
    for (const c of orphans) putOwn(statuses, serviceId(c.key), deleteStatus(ctx, c, { kind: 'blocked', message }));
    return out;
  }
  for (const c of orphans) decide(c);
  return out;
}

function deleteAction(c: DeleteCandidate): DeleteServiceAction {
  return {
    type: 'DeleteService',
    ...c.key,
    ...(c.specHash !== undefined ? { specHash: c.specHash } : {}),
    reason: c.cause === 'absent' ? 'the spec says state: absent' : 'owned service without a spec (prune)',
    cause: c.cause,
    scaleToZero: c.service.desiredCount > 0,
  };
}

/**
 * The prune safety valve: why this pass's orphan prunes are held back, or undefined when they may
 * go. They are held when an invalid item without a usable key could be any service's, when more
 * orphans (outside confirmed clusters) than `maxDeletesPerPass` lack a spec, or when more than half
 * of a cluster's (more than 4) owned services lack one. The two counting rules are the signature
 * of a wiped or half-restored table, so their clusters are held ({@link PruneHoldBook}); a
 * person's confirmation (`ecsr prune --confirm`) turns the count valve into a rate.
 */
function pruneValve(orphans: readonly DeleteCandidate[], ctx: PlanContext, holds: PruneHoldBook): string | undefined {
  const { fleet } = ctx;
  const max = ctx.options.maxDeletesPerPass;
  const reasons: string[] = [];
  if (fleet.unkeyedInvalid > 0) {
    reasons.push(`${fleet.unkeyedInvalid} invalid spec item(s) have no usable cluster/service key and may belong to any of them`);
  }
  const holdReasons = new Map<string, string>();
  const unconfirmed = orphans.filter((o) => !fleet.pruneConfirmed.has(o.key.cluster));
  if (unconfirmed.length > max) {
    reasons.push(`${unconfirmed.length} owned services have no spec, more than maxDeletesPerPass (${max})`);
    for (const o of unconfirmed) holdReasons.set(o.key.cluster, `${unconfirmed.length} owned services without a spec in one pass, more than maxDeletesPerPass (${max})`);
  }
  for (const cluster of fleet.managedClusters) {
    const cl = fleet.clusters.get(cluster);
    const owned = cl ? Object.values(cl.services).filter((s) => s.status === 'ACTIVE' && isOwned(s, ctx.options)).length : 0;
    const missing = orphans.filter((o) => o.key.cluster === cluster).length;
    if (owned > 4 && missing > owned / 2 && !fleet.pruneConfirmed.has(cluster)) {
      reasons.push(`${missing} of the ${owned} owned services of cluster ${cluster} have no spec (more than half)`);
      holdReasons.set(cluster, `${missing} of the ${owned} owned services of cluster ${cluster} without a spec (more than half)`);
    }
  }
  if (reasons.length === 0) return undefined;
  const heldClusters = [...holdReasons.keys()].sort();
  for (const cluster of heldClusters) holds.hold(cluster, holdReasons.get(cluster) as string);
  const holdNote = heldClusters.length > 0 ? ` The hold stays while specs come back: ${heldClusters.map((c) => releaseText(fleet, c)).join('; ')}` : '';
  return (
    `prune blocked: ${reasons.join('; ')}. Nothing is pruned this pass; restore the missing spec items, ` +
    `or delete the services yourself, or confirm with \`ecsr prune --confirm CLUSTER\` if the deletion is intended.${holdNote}`
  );
}

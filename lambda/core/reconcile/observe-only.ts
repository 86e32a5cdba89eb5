/**
 * Observe-only mode, for adopting a fleet gradually: a key's decision is made as usual (so its
 * status says what differs and why), then its actions are withheld and reported instead.
 */
import { type ConditionDrafts, ConditionType, Reason, describeChange, resolveConditions } from '../status';
import { observeOnlyOf } from '../options';
import type { Action, ServiceStatus } from '../types';
import { blockedDrafts, serviceStatus } from './status';
import type { Decision, DeleteCandidate, PlanContext, ServiceView } from './types';

/** Where a key's observe-only mode comes from: its spec's `observeOnly`, or its cluster's. */
export type ObserveOnlySource = 'spec' | 'cluster';

/** At most this many withheld differences are named in the condition's message (all are in `observedDrift`). */
const MAX_LINES_IN_MESSAGE = 10;

/**
 * Whether the key is observed only ({@link observeOnlyOf}); an invalid item, or a live service
 * without a spec, follows its cluster.
 */
export function observeOnlySource(view: ServiceView, ctx: PlanContext): ObserveOnlySource | undefined {
  const r = view.spec;
  return observeOnlyOf(ctx.options, view.key.cluster, r !== undefined && r.ok ? r.spec.observeOnly : undefined);
}

/**
 * `d` without its actions and its delete: the status marks the key `observeOnly`; when anything
 * was withheld, phase `Blocked` with condition reason {@link Reason.ObserveOnly}, `observedDrift`
 * listing each withheld difference (`desiredCount 5 -> 3`, `service absent -> created`), and the
 * memory of the previous pass kept (nothing was applied, so no spec hash is recorded as applied).
 * Prune holds and the wish to read the deployment history pass through: they only read.
 */
export function withoutActions(view: ServiceView, d: Decision, source: ObserveOnlySource, ctx: PlanContext): Decision {
  const lines = withheldLines(d.actions, d.deleteCandidate);
  if (lines.length === 0) return d.status === undefined ? d : { ...d, status: { ...d.status, observeOnly: true } };
  const shown = lines.slice(0, MAX_LINES_IN_MESSAGE).join(', ');
  const more = lines.length > MAX_LINES_IN_MESSAGE ? ` and ${lines.length - MAX_LINES_IN_MESSAGE} more` : '';
  const why = source === 'spec' ? 'the spec sets observeOnly: true' : `cluster ${view.key.cluster} is observe-only (OBSERVE_ONLY_CLUSTERS)`;
  const message = `observe-only, ${why}: not corrected: ${shown}${more}; set observeOnly: false to let the reconciler act`;
  // What could not be compared this pass is still said (Incomplete), beside what was withheld.
  const incomplete = d.status?.conditions.find((x) => x.type === ConditionType.Incomplete);
  const drafts: ConditionDrafts = {
    ...blockedDrafts(Reason.ObserveOnly, message),
    ...(incomplete !== undefined ? { incomplete: { reason: incomplete.reason as Reason, message: incomplete.message } } : {}),
  };
  const c = d.deleteCandidate;
  const base: ServiceStatus | undefined =
    c !== undefined
      ? serviceStatus(ctx, c.remembered, { ...c.base, phase: 'Blocked', conditions: drafts })
      : d.status !== undefined
        ? { ...withMemoryOf(d.status, view.remembered), phase: 'Blocked', conditions: resolveConditions(drafts, view.remembered?.conditions, ctx.nowIso) }
        : undefined;
  const out: Decision = {
    actions: [],
    ...(base !== undefined ? { status: { ...base, observeOnly: true, observedDrift: lines } } : {}),
    ...(d.wantsDeploymentHistory ? { wantsDeploymentHistory: true } : {}),
    ...(d.hold !== undefined ? { hold: d.hold } : {}),
  };
  return out;
}

/** One line per difference the actions would close (a registration is named by the update it serves). */
function withheldLines(actions: readonly Action[], candidate: DeleteCandidate | undefined): string[] {
  const lines: string[] = [];
  const serves = actions.some((a) => a.type === 'UpdateService' || a.type === 'CreateService');
  for (const a of actions) {
    if (a.type === 'UpdateService') {
      if (a.changes.length > 0) for (const ch of a.changes) lines.push(describeChange(ch));
      else lines.push(`service -> updated (${a.reason})`);
    } else if (a.type === 'CreateService') lines.push('service absent -> created');
    else if (a.type === 'TagResource') for (const t of a.tags) lines.push(`tag ${t.key} -> ${t.value}`);
    else if (a.type === 'RegisterTaskDefinition' && !serves) lines.push(`task definition ${a.input.family} -> new revision`);
    else if (a.type === 'DeleteService') lines.push(`service present -> deleted (${a.cause === 'orphan' ? 'no spec: prune' : 'state: absent'})`);
  }
  if (candidate !== undefined) lines.push(`service present -> deleted (${candidate.cause === 'orphan' ? 'no spec: prune' : 'state: absent'})`);
  return lines;
}

/**
 * `status` with the memory fields of `rem` (or none): what a withheld create or rollout would have
 * recorded as applied, and the steady judgement, are not recorded.
 */
function withMemoryOf(status: ServiceStatus, rem: ServiceStatus | undefined): ServiceStatus {
  const {
    lastAppliedSpecHash: _h,
    failedSpecHash: _fh,
    failedServiceDeploymentArn: _fa,
    appliedDeploymentId: _d,
    appliedRolloutState: _r,
    rolloutFromTaskDefinitionArn: _f,
    firstRollout: _first,
    drift: _drift,
    driftCorrectedAt: _at,
    judged: _judged,
    ...rest
  } = status;
  return {
    ...rest,
    ...(rem?.lastAppliedSpecHash !== undefined ? { lastAppliedSpecHash: rem.lastAppliedSpecHash } : {}),
    ...(rem?.failedSpecHash !== undefined ? { failedSpecHash: rem.failedSpecHash } : {}),
    ...(rem?.failedServiceDeploymentArn !== undefined ? { failedServiceDeploymentArn: rem.failedServiceDeploymentArn } : {}),
    ...(rem?.appliedDeploymentId !== undefined ? { appliedDeploymentId: rem.appliedDeploymentId } : {}),
    ...(rem?.appliedRolloutState !== undefined ? { appliedRolloutState: rem.appliedRolloutState } : {}),
    ...(rem?.rolloutFromTaskDefinitionArn !== undefined ? { rolloutFromTaskDefinitionArn: rem.rolloutFromTaskDefinitionArn } : {}),
    ...(rem?.firstRollout === true ? { firstRollout: true as const } : {}),
    ...(rem?.drift !== undefined ? { drift: rem.drift } : {}),
    ...(rem?.driftCorrectedAt !== undefined ? { driftCorrectedAt: rem.driftCorrectedAt } : {}),
  };
}

/**
 * Rollout judgements: whether the deployment of a spec hash failed or was rolled back (ECS's
 * circuit breaker, docs/ecs-facts.md §4), as small named predicates over the live service, its
 * deployment history and the remembered status, and where a new rollout starts from.
 */
import { own } from '../dict';
import { diffService } from '../plan-service';
import { Reason } from '../status';
import type {
  ObservedDeployment,
  ObservedService,
  ObservedServiceDeployment,
  ObservedServiceRevision,
  ServiceStatus,
  UpdateServiceInput,
} from '../types';
import { type Comparison, isRevisionChange, taskDefinitionChanges } from './compare';
import { anyFailedDeployment, primaryDeployment } from './live';
import { NATIVE_STRATEGIES, rollbackDetailText } from './native';
import { drafts, graceOf, serviceStatus } from './status';
import type { Counts, Decision, Memory, PlanContext, ServiceView, ValidSpec } from './types';

/** A circuit breaker rollback deployment's rolloutStateReason (Amazon ECS Developer Guide, "Deployment circuit breaker"). */
const ROLLING_BACK_REASON = /circuit breaker: rolling back/i;
/** ECS's service event when its circuit breaker starts a rollback. */
const ROLLING_BACK_EVENT = /\) rolling back to deployment /i;
/** How far the rollback event may be from the rollback deployment's createdAt (ms). */
const ROLLBACK_EVENT_WINDOW_MS = 60_000;
/** ECS service deployment statuses of a rolled-back deployment (ServiceDeployment.status). */
const ROLLED_BACK: ReadonlySet<string> = new Set(['ROLLBACK_REQUESTED', 'ROLLBACK_IN_PROGRESS', 'ROLLBACK_SUCCESSFUL', 'ROLLBACK_FAILED']);
/** Appended to every RolloutFailed message. */
const RETRY_HINT = '. The spec is not re-applied until it changes (edit the spec to retry)';

/** A failed rollout: the message, and the rolled-back service deployment's ARN when the history showed one. */
export interface RolloutFailure {
  readonly message: string;
  readonly serviceDeploymentArn?: string;
}

/** The remembered failure message, without the retry hint (added again by {@link failedDecision}). */
export function failedMessage(rem: ServiceStatus | undefined): string {
  const c = rem?.conditions.find((x) => x.reason === Reason.RolloutFailed);
  return c?.message.replace(RETRY_HINT, '') ?? 'the rollout of this spec failed in an earlier pass';
}

/** The failure remembered for this very hash, if the status recorded one. */
export function rememberedFailure(rem: ServiceStatus | undefined, hash: string): RolloutFailure | undefined {
  return rem?.failedSpecHash === hash ? { message: failedMessage(rem), serviceDeploymentArn: rem.failedServiceDeploymentArn } : undefined;
}

/** No action, phase Degraded/RolloutFailed with the retry hint, the hash remembered as failed. */
export function failedDecision(view: ServiceView, r: ValidSpec, counts: Counts, ctx: PlanContext, failure: RolloutFailure): Decision {
  const full = `${failure.message.replace(/\.+$/, '')}${RETRY_HINT}`;
  const status = serviceStatus(ctx, view.remembered, {
    specHash: r.hash,
    graceSeconds: graceOf(ctx, r.spec),
    ...counts,
    service: view.service,
    phase: 'Degraded',
    conditions: drafts('Degraded', Reason.RolloutFailed, full),
    memory: { failedSpecHash: r.hash, failedServiceDeploymentArn: failure.serviceDeploymentArn },
  });
  return { actions: [], status };
}

/** What the failure rules read: the hash, the live service, the comparison and the memory. */
interface RolloutFacts {
  readonly hash: string;
  readonly svc: ObservedService;
  readonly c: Comparison;
  readonly rem: ServiceStatus | undefined;
  /** Whether the spec would start a deployment (another task definition, or revision settings). */
  readonly wouldDeploy: boolean;
}

/**
 * The deployment of the current spec hash ended FAILED (docs/ecs-facts.md §4): a PRIMARY or ACTIVE
 * deployment with rolloutState FAILED whose task definition is ours (unless memory says another
 * hash failed and this one was never applied: a retry), or a rollback seen after the fact
 * ({@link rolledBackAfterTheFact}), or, read from ECS itself whatever the status remembers, a
 * service deployment history whose newest deployment of the rendered task definition was rolled
 * back ({@link rolledBackInHistory}), or a rollback the unreadable history cannot explain
 * ({@link unexplainedRollback}). Returns the failure, or undefined.
 */
export function detectFailedRollout(hash: string, svc: ObservedService, c: Comparison, rem: ServiceStatus | undefined, ctx: PlanContext): RolloutFailure | undefined {
  const remembered = rememberedFailure(rem, hash);
  if (remembered) return remembered;
  // A spec that would start a deployment (another task definition, or other service revision
  // settings: subnets, security groups, load balancers...) may be one ECS already rolled back.
  const wouldDeploy = (c.tdChanges !== undefined && c.tdChanges.length > 0) || c.revisionChanges.length > 0;
  // The steady case: nothing to deploy and no FAILED deployment leave every rule below without a
  // case (each needs one or the other).
  if (!wouldDeploy && !anyFailedDeployment(svc)) return undefined;
  const facts: RolloutFacts = { hash, svc, c, rem, wouldDeploy };
  const rolledBack = wouldDeploy ? rolledBackInHistory(facts, ctx) : undefined;
  const failed = failedDeploymentOf(facts, ctx);
  // ECS's own account of the rollback (which hook, alarm or stage), when the history described it.
  const ecsAccount = rolledBack !== undefined ? rolledBackMessage(rolledBack, svc) : undefined;
  if (failed) {
    const native = rolledBack?.detail?.strategy !== undefined && NATIVE_STRATEGIES.has(rolledBack.detail.strategy);
    const message = (native ? ecsAccount : undefined) ?? `deployment ${failed.id} of ${failed.taskDefinition} FAILED: ${failed.rolloutStateReason ?? 'no reason given'}`;
    return { message, serviceDeploymentArn: rolledBack?.serviceDeploymentArn };
  }
  const primary = primaryDeployment(svc);
  if (primary !== undefined && rolledBackAfterTheFact(facts, primary)) {
    const message = ecsAccount ?? `ECS rolled back to ${svc.taskDefinition} (PRIMARY deployment ${primary.id})` + (primary.rolloutStateReason ? `: ${primary.rolloutStateReason}` : '');
    return { message, serviceDeploymentArn: rolledBack?.serviceDeploymentArn };
  }
  if (rolledBack) {
    const sd = rolledBack;
    const message =
      ecsAccount ??
      `ECS rolled back service deployment ${sd.serviceDeploymentArn} of ${sd.targetTaskDefinition} (${sd.status}` +
        `${sd.statusReason ? `: ${sd.statusReason}` : ''}); the service runs ${svc.taskDefinition}`;
    return { message, serviceDeploymentArn: sd.serviceDeploymentArn };
  }
  if (wouldDeploy && svc.serviceDeploymentsError !== undefined) return unexplainedRollback(svc, rem, ctx);
  return undefined;
}

/**
 * A rolled-back service deployment in ECS's words, when DescribeServiceDeployments described it:
 * `ECS rolled back CANARY service deployment <arn> of <task definition> (ROLLBACK_SUCCESSFUL):
 * <rollback.reason>; at stage POST_SCALE_UP; lifecycle hook <arn> FAILED; the service runs <arn>`.
 */
function rolledBackMessage(sd: ObservedServiceDeployment, svc: ObservedService): string | undefined {
  const account = rollbackDetailText(sd);
  if (account === undefined) return undefined;
  const strategy = sd.detail?.strategy !== undefined && sd.detail.strategy !== 'ROLLING' ? `${sd.detail.strategy} ` : '';
  return `ECS rolled back ${strategy}service deployment ${sd.serviceDeploymentArn} of ${sd.targetTaskDefinition ?? '?'} (${sd.status}): ${account}; the service runs ${svc.taskDefinition}`;
}

/**
 * A PRIMARY or ACTIVE deployment whose rollout FAILED and which is this spec's: the one memory
 * says we applied, or one of the rendered task definition. A FAILED deployment counts against this
 * hash, unless memory says another hash failed: then that failure explains the deployment, and
 * this new hash is the user's retry ("edit the spec to retry"). Without such memory (e.g. a status
 * write lost after a rollout) the safe reading stays: never re-apply what ECS reports FAILED.
 */
function failedDeploymentOf(f: RolloutFacts, ctx: PlanContext): ObservedDeployment | undefined {
  const appliedThis = f.rem?.lastAppliedSpecHash === f.hash;
  if (!appliedThis && f.rem?.failedSpecHash !== undefined) return undefined;
  const ours = (d: ObservedDeployment): boolean => {
    if (appliedThis && f.rem?.appliedDeploymentId === d.id) return true;
    const described = own(ctx.observed.taskDefinitions, d.taskDefinition);
    return described !== undefined && taskDefinitionChanges(ctx, f.c.rendered, described).length === 0;
  };
  return f.svc.deployments.find((d) => (d.status === 'PRIMARY' || d.status === 'ACTIVE') && d.rolloutState === 'FAILED' && ours(d));
}

/**
 * A rollback seen after the fact: this hash was applied, the deployment we applied never
 * COMPLETED, a new PRIMARY runs, and the live task definition is no longer the desired one but the
 * one the rollout started from (`rolloutFromTaskDefinitionArn`). ECS rolls back to the task
 * definition it ran before (none for a first rollout); any other one was set by a person.
 */
function rolledBackAfterTheFact(f: RolloutFacts, primary: ObservedDeployment): boolean {
  const { rem, c } = f;
  return (
    rem?.lastAppliedSpecHash === f.hash &&
    rem.appliedRolloutState !== 'COMPLETED' &&
    primary.id !== rem.appliedDeploymentId &&
    c.tdChanges !== undefined &&
    c.tdChanges.length > 0 &&
    rem.firstRollout !== true &&
    (rem.rolloutFromTaskDefinitionArn === undefined || rem.rolloutFromTaskDefinitionArn === f.svc.taskDefinition)
  );
}

/**
 * With the deployment history unreadable (`serviceDeploymentsError`), what DescribeServices
 * shows must do: when the service's PRIMARY deployment is one ECS's circuit breaker started as a
 * rollback (its `rolloutStateReason`, or a "rolling back to deployment" event at its creation)
 * and no status written since then explains it (memory of a failure, hence of a retry, is older
 * than the rollback or absent), the spec that would start a deployment counts as failed: it may
 * be the very spec rolled back, and re-applying it would start a doomed deployment every pass.
 * The cost: with the status lost too, a new spec waits until the history or the status can be
 * written again.
 */
function unexplainedRollback(svc: ObservedService, rem: ServiceStatus | undefined, ctx: PlanContext): RolloutFailure | undefined {
  const primary = primaryDeployment(svc);
  if (!primary) return undefined;
  const startedAt = primary.createdAt.getTime();
  const byReason = ROLLING_BACK_REASON.test(primary.rolloutStateReason ?? '');
  const event = svc.events.find((e) => ROLLING_BACK_EVENT.test(e.message) && Math.abs(e.createdAt.getTime() - startedAt) <= ROLLBACK_EVENT_WINDOW_MS);
  if (!byReason && !event) return undefined;
  const rememberedAt = rem ? Date.parse(rem.observedAt) : NaN;
  const rollbackAt = startedAt - (ctx.observed.ecsClockOffsetMs ?? 0);
  if (Number.isFinite(rememberedAt) && rememberedAt > rollbackAt) return undefined;
  return {
    message:
      `ECS's circuit breaker rolled this service back (PRIMARY deployment ${primary.id} of ${svc.taskDefinition}, ` +
      `${event ? `event "${event.message}"` : primary.rolloutStateReason}) and its deployment history cannot be read ` +
      `(${svc.serviceDeploymentsError}); this spec, which would start another deployment, is not applied, so as not to ` +
      'start a doomed one again (the reconciler needs ecs:ListServiceDeployments and ecs:DescribeServiceRevisions to tell which spec failed)',
  };
}

/**
 * The newest service deployment of the service's history (ECS's own record, read whatever the
 * status remembers) whose target service revision is the one this spec asks for (its task
 * definition the rendered one, and its revision settings the spec's; a history entry whose
 * revision was not described is judged by its task definition alone, and only for a spec that
 * differs from the live service in its task definition alone), when that deployment was rolled
 * back (ROLLBACK_REQUESTED, _IN_PROGRESS, _SUCCESSFUL or _FAILED); undefined otherwise. A newer
 * deployment of the same task definition (a retry that has not failed) hides older rollbacks. A
 * rollback memory already blamed on another spec hash (`failedServiceDeploymentArn`) makes this
 * hash the user's retry, as does a failure remembered from before the history was read.
 */
function rolledBackInHistory(f: RolloutFacts, ctx: PlanContext): ObservedServiceDeployment | undefined {
  const { hash, svc, c, rem } = f;
  const latest = svc.serviceDeployments?.find((sd) => {
    const described = sd.targetTaskDefinition !== undefined ? own(ctx.observed.taskDefinitions, sd.targetTaskDefinition) : undefined;
    if (described === undefined || taskDefinitionChanges(ctx, c.rendered, described).length > 0) return false;
    if (sd.targetRevision === undefined) return c.revisionChanges.length === 0;
    const diff = diffService(c.desired, asRevision(svc, sd.targetRevision));
    return !diff.changes.some(isRevisionChange) && !diff.unsendable.some(isRevisionChange);
  });
  if (latest === undefined || !ROLLED_BACK.has(latest.status)) return undefined;
  const otherFailure = rem?.failedSpecHash !== undefined && rem.failedSpecHash !== hash;
  if (otherFailure && (rem.failedServiceDeploymentArn === undefined || rem.failedServiceDeploymentArn === latest.serviceDeploymentArn)) {
    return undefined;
  }
  return latest;
}

/**
 * The live service as a deployment of `rev` runs it: the revision's settings over the live
 * service's (a setting the revision does not report keeps the live value).
 */
function asRevision(svc: ObservedService, rev: ObservedServiceRevision): ObservedService {
  const primary = primaryDeployment(svc);
  const base = primary ?? { id: '', taskDefinition: rev.taskDefinition, desiredCount: 0, runningCount: 0, pendingCount: 0, failedTasks: 0, createdAt: new Date(0), updatedAt: new Date(0) };
  return {
    ...svc,
    taskDefinition: rev.taskDefinition,
    launchType: rev.launchType,
    capacityProviderStrategy: rev.capacityProviderStrategy,
    platformVersion: rev.platformVersion ?? svc.platformVersion,
    networkConfiguration: rev.networkConfiguration,
    loadBalancers: rev.loadBalancers,
    serviceRegistries: rev.serviceRegistries ?? svc.serviceRegistries,
    deployments: [
      {
        ...base,
        status: 'PRIMARY',
        taskDefinition: rev.taskDefinition,
        serviceConnectConfiguration: rev.serviceConnectConfiguration,
        volumeConfigurations: rev.volumeConfigurations,
      },
    ],
  };
}

/** Whether an UpdateService with these fields starts a new deployment (docs/ecs-facts.md §7). */
export function startsDeployment(input: Omit<UpdateServiceInput, 'cluster' | 'service'>): boolean {
  return (
    input.taskDefinition !== undefined ||
    input.networkConfiguration !== undefined ||
    input.capacityProviderStrategy !== undefined ||
    input.loadBalancers !== undefined ||
    input.platformVersion !== undefined ||
    input.serviceRegistries !== undefined ||
    input.serviceConnectConfiguration !== undefined ||
    input.volumeConfigurations !== undefined ||
    input.forceNewDeployment === true
  );
}

/**
 * A retry of a failed rollout of the same task definition: not drift, the PRIMARY deployment
 * FAILED, and nothing sent would start a deployment. A FAILED deployment launches no tasks
 * (docs/ecs-facts.md §4), so the retry must force one.
 */
export function isRetryOfFailedRollout(
  drift: boolean,
  primary: ObservedDeployment | undefined,
  tdChanges: readonly unknown[] | undefined,
  input: Omit<UpdateServiceInput, 'cluster' | 'service'>,
): boolean {
  return !drift && primary?.rolloutState === 'FAILED' && tdChanges?.length === 0 && !startsDeployment(input);
}

/**
 * The task definition a rollout planned now starts from, as ECS's circuit breaker would roll
 * back to it: the live one, unless the rollout applied before had not COMPLETED (then ECS's
 * last COMPLETED deployment is still the one that rollout started from).
 */
export function rolloutFrom(svc: ObservedService, rem: ServiceStatus | undefined): Pick<Memory, 'rolloutFromTaskDefinitionArn' | 'firstRollout'> {
  if (rem?.appliedRolloutState !== 'COMPLETED') {
    if (rem?.firstRollout === true) return { rolloutFromTaskDefinitionArn: undefined, firstRollout: true };
    if (rem?.rolloutFromTaskDefinitionArn !== undefined) return { rolloutFromTaskDefinitionArn: rem.rolloutFromTaskDefinitionArn, firstRollout: undefined };
  }
  return { rolloutFromTaskDefinitionArn: svc.taskDefinition, firstRollout: undefined };
}

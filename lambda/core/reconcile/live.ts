/** Small predicates on a live service as ECS describes it. */
import type { PlanOptions } from '../options';
import { isOwnedBy } from '../ports';
import type { ObservedDeployment, ObservedService, ServiceStatus } from '../types';

/** Whether the service carries this reconciler's owner tag. */
export function isOwned(svc: ObservedService, options: PlanOptions): boolean {
  return isOwnedBy(svc, options.ownerId);
}

/** INACTIVE counts as absent (docs/ecs-facts.md §3). */
export function isGone(svc: ObservedService | undefined): svc is undefined | (ObservedService & { status: 'INACTIVE' }) {
  return svc === undefined || svc.status === 'INACTIVE';
}

/** The service's PRIMARY deployment, if ECS reports one. */
export function primaryDeployment(svc: ObservedService): ObservedDeployment | undefined {
  return svc.deployments.find((d) => d.status === 'PRIMARY');
}

/**
 * rolloutState of a deployment. ECS reports none for deployments without a circuit breaker: then a
 * lone deployment at full count counts as COMPLETED.
 */
export function rolloutStateOf(svc: ObservedService, d: ObservedDeployment): ServiceStatus['appliedRolloutState'] {
  if (d.rolloutState) return d.rolloutState;
  return svc.deployments.length === 1 && svc.runningCount >= svc.desiredCount ? 'COMPLETED' : 'IN_PROGRESS';
}

/** Whether any deployment's rollout FAILED (then the failure rules read the remembered status). */
export function anyFailedDeployment(svc: ObservedService): boolean {
  for (const d of svc.deployments) if (d.rolloutState === 'FAILED') return true;
  return false;
}

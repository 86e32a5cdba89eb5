/**
 * A present spec whose service does not exist (or is INACTIVE): register its task definition and
 * create the service.
 */
import { createHash } from 'node:crypto';
import { AUTOSCALED_INITIAL_DESIRED_COUNT, createServiceFields, desiredServiceConfig } from '../plan-service';
import { Reason } from '../status';
import { renderTaskDefinition } from '../taskdef';
import type { CreateServiceAction, ObservedService, RegisterTaskDefinitionAction, ServiceKey, ServiceStatus } from '../types';
import { drafts, graceOf, serviceStatus } from './status';
import { serviceTags } from './text';
import type { Counts, Decision, PlanContext, ServiceView, ValidSpec } from './types';

/**
 * Idempotency token for CreateService (docs/ecs-facts.md §3: at most 36 ASCII characters, codes 33..126):
 * `ecsr-` + 31 hex characters of SHA-256 over cluster, service, spec hash and, for a re-creation,
 * the `incarnation` it follows. The same create of the same spec always gets the same token, so a
 * retried create returns the service created by the first attempt instead of failing; a service
 * created again after a delete gets another token, because ECS answers a reused token with the
 * earlier request's result and "you should not reuse the same client token for other API
 * requests" (Amazon ECS API reference, "Ensuring idempotency").
 * @param incarnation identifies the earlier service of this name (its `createdAt`, or the pass
 *   time when only memory says one existed); undefined for a first creation.
 */
export function clientToken(key: ServiceKey, specHash: string, incarnation?: string): string {
  const material = `${key.cluster}\n${key.service}\n${specHash}${incarnation !== undefined ? `\n${incarnation}` : ''}`;
  const digest = createHash('sha256').update(material).digest('hex');
  return `ecsr-${digest.slice(0, 31)}`;
}

/**
 * RegisterTaskDefinition then CreateService for the spec (the create names the task definition by
 * family; the actuator substitutes the ARN it registered), status Progressing/Creating, memory
 * reset to a first rollout of this hash.
 * @param view its `service` is undefined, or the INACTIVE service of the same name.
 */
export function createDecision(view: ServiceView, r: ValidSpec, counts: Counts, ctx: PlanContext): Decision {
  const { key, spec, hash } = r;
  const rendered = renderTaskDefinition(spec, { defaults: ctx.options.defaults, ownerId: ctx.options.ownerId });
  const register: RegisterTaskDefinitionAction = {
    type: 'RegisterTaskDefinition',
    ...key,
    specHash: hash,
    reason: `register task definition ${rendered.family} for the new service`,
    input: rendered,
  };
  const create = createAction(view, r, rendered.family, ctx);
  const status = serviceStatus(ctx, view.remembered, {
    specHash: hash,
    graceSeconds: graceOf(ctx, spec),
    ...counts,
    desiredCount: create.input.desiredCount ?? counts.desiredCount,
    runningCount: 0,
    pendingCount: 0,
    phase: 'Progressing',
    conditions: drafts('Progressing', Reason.Creating, `CreateService planned for spec ${hash}`),
    memory: {
      lastAppliedSpecHash: hash,
      failedSpecHash: undefined,
      failedServiceDeploymentArn: undefined,
      appliedDeploymentId: undefined,
      appliedRolloutState: undefined,
      // A first deployment has no COMPLETED deployment for ECS to roll back to.
      rolloutFromTaskDefinitionArn: undefined,
      firstRollout: true,
    },
  });
  return { actions: [register, create], status };
}

/** The CreateService of the spec, naming the task definition by `family`. */
function createAction(view: ServiceView, r: ValidSpec, family: string, ctx: PlanContext): CreateServiceAction {
  const { key, spec, hash } = r;
  const previous = view.service;
  const desired = desiredServiceConfig(spec, ctx.options.defaults);
  return {
    type: 'CreateService',
    ...key,
    specHash: hash,
    reason: previous ? `service ${key.service} is INACTIVE; create it from the spec` : `service ${key.service} does not exist; create it`,
    input: {
      cluster: key.cluster,
      serviceName: key.service,
      taskDefinition: family,
      desiredCount: spec.autoscaled ? (spec.desiredCount ?? AUTOSCALED_INITIAL_DESIRED_COUNT) : spec.desiredCount,
      ...(desired.launchType ? { launchType: desired.launchType } : { capacityProviderStrategy: desired.capacityProviderStrategy }),
      networkConfiguration: desired.networkConfiguration,
      deploymentConfiguration: desired.deploymentConfiguration,
      ...(desired.loadBalancers.length > 0 ? { loadBalancers: desired.loadBalancers } : {}),
      ...createServiceFields(desired),
      tags: serviceTags(spec, ctx.options.ownerId),
      clientToken: clientToken(key, hash, incarnation(previous, view.remembered, ctx.now)),
    },
  };
}

/**
 * What tells this creation from an earlier service of the same name, for the clientToken: the
 * INACTIVE service's `createdAt` when ECS still describes it, else the pass time when memory
 * says this item's service was deleted before (or its cluster was gone); undefined for a first
 * creation.
 */
function incarnation(previous: ObservedService | undefined, rem: ServiceStatus | undefined, now: Date): string | undefined {
  if (previous) return (previous.createdAt ?? now).toISOString();
  // A cluster deleted and re-created took this service with it: the earlier creation's token
  // must not answer for the new one (ECS returns a reused token's earlier result).
  const clusterWasGone = rem?.conditions.some((c) => c.reason === Reason.ClusterNotFound) === true;
  const deletedBefore =
    rem !== undefined && (rem.phase === 'Deleted' || rem.phase === 'Deleting' || rem.lastAction?.type === 'DeleteService' || clusterWasGone);
  return deletedBefore ? now.toISOString() : undefined;
}

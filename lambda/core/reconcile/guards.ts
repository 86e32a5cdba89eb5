/**
 * The refusals of a spec before anything is compared: a cluster that does not exist, reads that
 * were refused, a task definition family another spec keeps, a spec outside the allow-lists, no
 * subnets, and a live service that is not ours to change.
 */
import { allowListViolations, describeViolation } from '../allow-lists';
import { OWNER_TAG_KEY } from '../ports';
import { Reason } from '../status';
import type { ObservedService, ServiceSpec } from '../types';
import { familyCollisionMessage, familyHolderOf } from './family';
import { isOwned } from './live';
import { blockedDrafts, graceOf, rememberedCounts, serviceStatus } from './status';
import type { Counts, Decision, PlanContext, ServiceView, ValidSpec } from './types';
import { readRefused } from './view';

/** A refusal: the reason constant and the message people read. */
export interface Refusal {
  readonly reason: Reason;
  readonly message: string;
}

/** A present spec the reconciler refuses to act on (its status Blocked with the refusal's reason). */
export function blockedDecision(view: ServiceView, r: ValidSpec, counts: Counts, ctx: PlanContext, refusal: Refusal): Decision {
  const status = serviceStatus(ctx, view.remembered, {
    specHash: r.hash,
    graceSeconds: graceOf(ctx, r.spec),
    ...counts,
    service: view.service,
    phase: 'Blocked',
    conditions: blockedDrafts(refusal.reason, refusal.message),
  });
  return { actions: [], status };
}

/**
 * The refusal of a present spec that holds before its service is looked at, in this order: its
 * cluster does not exist (the reconciler creates none), its reads were refused (a decision of its
 * own: {@link refusedReadDecision}), another spec keeps its task definition family, it breaks an
 * allow-list, or neither it nor the reconciler names a subnet.
 */
export function presentGuard(view: ServiceView, r: ValidSpec, counts: Counts, ctx: PlanContext): Decision | undefined {
  const { key, spec } = r;
  if (!view.cluster.exists) {
    const message = `cluster ${key.cluster} does not exist; the reconciler does not create clusters`;
    return blockedDecision(view, r, counts, ctx, { reason: Reason.ClusterNotFound, message });
  }
  if (readRefused(view)) return refusedReadDecision(view, r, ctx);
  const holder = familyHolderOf(ctx.fleet.familyClaims, key, spec);
  if (holder) return blockedDecision(view, r, counts, ctx, { reason: Reason.FamilyCollision, message: familyCollisionMessage(key, spec, holder) });
  const violations = ctx.allowListsSet ? allowListViolations(spec, ctx.options.allow) : undefined;
  if (violations !== undefined && violations.length > 0) {
    const message = violations.map((v) => describeViolation(v, ctx.options.allow)).join('; ');
    return blockedDecision(view, r, counts, ctx, { reason: Reason.NotAllowed, message });
  }
  if (!hasSubnets(spec, ctx)) {
    const message = 'the spec names no subnets and the reconciler has no default subnets (DEFAULT_SUBNETS); set `subnets`';
    return blockedDecision(view, r, counts, ctx, { reason: Reason.NoSubnets, message });
  }
  return undefined;
}

/** Whether `effectiveSubnets(spec, defaults)` is not empty (without its copy). */
function hasSubnets(spec: ServiceSpec, ctx: PlanContext): boolean {
  return (spec.subnets && spec.subnets.length > 0 ? spec.subnets : ctx.options.defaults.subnets).length > 0;
}

/**
 * The decision for a spec whose service could not be read because the reads were refused
 * (`ObservedCluster.refused`): no action, phase `Blocked` with the refusal's reason and AWS's
 * message, `Ready` Unknown (nobody can see the service: never a remembered `Converged`),
 * `Progressing` False. Counts and lag stay as last seen (none for a spec no pass has seen); the
 * hashes stay in memory.
 */
export function refusedReadDecision(view: ServiceView, r: ValidSpec, ctx: PlanContext): Decision {
  const refused = view.cluster.refused as { reason: string; message: string };
  const reason = refused.reason as Reason;
  const message = `cluster ${r.key.cluster} cannot be read: ${refused.message}`;
  const rem = view.remembered;
  const known = rememberedCounts(rem) ?? { desiredCount: r.spec.state === 'absent' ? 0 : (r.spec.desiredCount ?? 0), runningCount: 0, pendingCount: 0 };
  const lag = rem?.laggingSince !== undefined ? { laggingSince: rem.laggingSince, lagBeyondGrace: rem.lagBeyondGrace === true } : { lagBeyondGrace: false };
  const status = serviceStatus(ctx, rem, {
    specHash: r.hash,
    graceSeconds: graceOf(ctx, r.spec),
    ...known,
    lag,
    phase: 'Blocked',
    conditions: {
      ready: { status: 'Unknown', reason, message },
      progressing: { status: 'False', reason, message },
      blocked: { reason, message },
    },
  });
  // What people read first (`reason`, the lag alarm's text) is the refusal, not an old ECS event.
  status.reason = message;
  return { actions: [], status };
}

/** The capacity providers a spec speaks (its `capacityProvider`, `capacityProviderStrategy`). */
const FARGATE_PROVIDERS: ReadonlySet<string> = new Set(['FARGATE', 'FARGATE_SPOT']);

/**
 * Why no spec may change `svc`, whoever owns it, or undefined: ECS manages it itself (Express
 * Mode, `resourceManagementType: ECS`; Amazon ECS API reference, Service), or it runs on capacity
 * the spec cannot express (launch type MANAGED_INSTANCES or EC2, or a capacity provider other
 * than FARGATE and FARGATE_SPOT), which an update from the spec would move to Fargate.
 */
export function unmanageableRefusal(svc: ObservedService): Refusal | undefined {
  if (svc.resourceManagementType === 'ECS') {
    return {
      reason: Reason.ManagedByEcs,
      message:
        `service ${svc.serviceName} is managed by ECS itself (Express Mode, resourceManagementType ECS): ` +
        'ECS owns its load balancer, target groups and scaling, so the reconciler never changes it; remove the spec, or change it with ECS Express Mode',
    };
  }
  const launchType = svc.launchType;
  const other = (svc.capacityProviderStrategy ?? []).map((c) => c.capacityProvider).filter((p) => !FARGATE_PROVIDERS.has(p));
  if ((launchType !== undefined && launchType !== 'FARGATE') || other.length > 0) {
    const what = other.length > 0 ? `capacity provider${other.length > 1 ? 's' : ''} ${other.join(', ')}` : `launch type ${launchType}`;
    return {
      reason: Reason.UnmanagedCapacity,
      message:
        `service ${svc.serviceName} runs on ${what} (for example Managed Instances), which a spec cannot express (FARGATE or FARGATE_SPOT only): ` +
        'the reconciler reports it and never changes it; remove the spec, or move the service to Fargate by hand',
    };
  }
  return undefined;
}

/**
 * Why the spec may not change the live service `svc`, or undefined when it may: one no spec may
 * change ({@link unmanageableRefusal}); a service without
 * our owner tag needs `adopt: true` (`NotOwned`); `adopt: true` never takes a service whose owner
 * tag names another owner id (`OwnedByAnother`), and needs adoption turned on (`NotAllowed`).
 * @param observing the key is observe-only: only the first refusal applies.
 */
export function ownershipRefusal(svc: ObservedService, spec: ServiceSpec, ctx: PlanContext, observing = false): Refusal | undefined {
  const unmanageable = unmanageableRefusal(svc);
  if (unmanageable !== undefined) return unmanageable;
  // Observing writes nothing, so it needs no ownership.
  if (observing || isOwned(svc, ctx.options)) return undefined;
  if (!spec.adopt) return { reason: Reason.NotOwned, message: notOwnedMessage(svc, ctx) };
  const other = svc.tags[OWNER_TAG_KEY];
  if (other !== undefined) {
    return {
      reason: Reason.OwnedByAnother,
      message:
        `service ${svc.serviceName} is owned by another reconciler (${OWNER_TAG_KEY}=${other}, this one is ${ctx.options.ownerId}); ` +
        '`adopt: true` never takes a service from another owner: remove the spec, or change the tag by hand if the other reconciler is gone',
    };
  }
  if (ctx.options.allowAdoption === false) {
    return {
      reason: Reason.NotAllowed,
      message: `adopting service ${svc.serviceName} is not allowed: adoption is turned off (ALLOW_ADOPTION=false; the construct's allowAdoption prop)`,
    };
  }
  return undefined;
}

function notOwnedMessage(svc: ObservedService, ctx: PlanContext): string {
  const other = svc.tags[OWNER_TAG_KEY];
  return (
    `service ${svc.serviceName} exists without the owner tag ${OWNER_TAG_KEY}=${ctx.options.ownerId}` +
    (other !== undefined ? ` (its owner tag says ${other})` : '') +
    '; set `adopt: true` in the spec to take it over'
  );
}

/**
 * What CreateService and UpdateService refuse about the native deployment strategies, with the
 * limits of the ECS service model (DeploymentConfiguration, LinearConfiguration,
 * CanaryConfiguration, DeploymentLifecycleHook, AdvancedConfiguration) and the Developer Guide's
 * requirements: BLUE_GREEN, LINEAR and CANARY need the ECS deployment controller and, on every
 * load balancer, an advancedConfiguration (alternate target group, production listener rule,
 * role), or Service Connect; a PAUSE hook cannot run at TEST_TRAFFIC_SHIFT or
 * PRODUCTION_TRAFFIC_SHIFT. ECS's exact wording of these refusals is not documented: the messages
 * are the simulator's, each naming the field and what is allowed.
 */
import type { DeploymentLifecycleHook, LoadBalancer } from '@aws-sdk/client-ecs';
import { invalidParameter } from './errors';
import type { DeploymentConfig, DeploymentControllerType } from './state';

export const HOOK_STAGES = [
  'RECONCILE_SERVICE',
  'PRE_SCALE_UP',
  'POST_SCALE_UP',
  'TEST_TRAFFIC_SHIFT',
  'POST_TEST_TRAFFIC_SHIFT',
  'PRE_PRODUCTION_TRAFFIC_SHIFT',
  'PRODUCTION_TRAFFIC_SHIFT',
  'POST_PRODUCTION_TRAFFIC_SHIFT',
] as const;
const PAUSE_NOT_AT = ['TEST_TRAFFIC_SHIFT', 'PRODUCTION_TRAFFIC_SHIFT'];

function range(name: string, v: unknown, min: number, max: number, whole: boolean): void {
  if (v === undefined) return;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max || (whole && !Number.isInteger(v))) {
    throw invalidParameter(`${name} must be ${whole ? 'a whole number ' : ''}from ${min} to ${max}, got ${JSON.stringify(v)}.`);
  }
}

/**
 * The strategy members of a deployment configuration: linearConfiguration.stepPercent 3.0-100 in
 * 0.1 steps, stepBakeTimeInMinutes 0-1440; canaryConfiguration.canaryPercent 0.1-100,
 * canaryBakeTimeInMinutes 0-1440; each lifecycle hook. @throws InvalidParameterException.
 */
export function checkStrategyMembers(cfg: DeploymentConfig): void {
  const linear = cfg.linearConfiguration as { stepPercent?: unknown; stepBakeTimeInMinutes?: unknown } | undefined;
  const canary = cfg.canaryConfiguration as { canaryPercent?: unknown; canaryBakeTimeInMinutes?: unknown } | undefined;
  range('linearConfiguration.stepPercent', linear?.stepPercent, 3, 100, false);
  if (typeof linear?.stepPercent === 'number' && Math.abs(linear.stepPercent * 10 - Math.round(linear.stepPercent * 10)) > 1e-9) {
    throw invalidParameter('linearConfiguration.stepPercent must be a multiple of 0.1.');
  }
  range('linearConfiguration.stepBakeTimeInMinutes', linear?.stepBakeTimeInMinutes, 0, 1440, true);
  range('canaryConfiguration.canaryPercent', canary?.canaryPercent, 0.1, 100, false);
  range('canaryConfiguration.canaryBakeTimeInMinutes', canary?.canaryBakeTimeInMinutes, 0, 1440, true);
  const hooks = cfg.lifecycleHooks;
  if (hooks === undefined) return;
  if (!Array.isArray(hooks)) throw invalidParameter('lifecycleHooks must be a list.');
  hooks.forEach((h: DeploymentLifecycleHook, i: number) => checkHook(h, i));
}

function checkHook(h: DeploymentLifecycleHook, i: number): void {
  const at = `lifecycleHooks[${i}]`;
  const type = h.targetType ?? 'AWS_LAMBDA';
  if (type !== 'AWS_LAMBDA' && type !== 'PAUSE') throw invalidParameter(`${at}.targetType must be AWS_LAMBDA or PAUSE, got '${String(type)}'.`);
  const stages = h.lifecycleStages ?? [];
  if (stages.length === 0) throw invalidParameter(`${at}.lifecycleStages can not be empty.`);
  for (const s of stages) {
    if (!(HOOK_STAGES as readonly string[]).includes(s)) throw invalidParameter(`${at}.lifecycleStages: '${s}' is not a lifecycle stage (${HOOK_STAGES.join(', ')}).`);
    if (type === 'PAUSE' && PAUSE_NOT_AT.includes(s)) throw invalidParameter(`${at}: a PAUSE hook cannot run at ${s}.`);
  }
  if (type === 'AWS_LAMBDA') {
    if (!h.hookTargetArn) throw invalidParameter(`${at}.hookTargetArn is required for an AWS_LAMBDA hook.`);
    if (!h.roleArn) throw invalidParameter(`${at}.roleArn is required for an AWS_LAMBDA hook (ECS assumes it to invoke the function).`);
  }
  const t = h.timeoutConfiguration;
  range(`${at}.timeoutConfiguration.timeoutInMinutes`, t?.timeoutInMinutes, 1, 20160, true);
  if (t?.action !== undefined && t.action !== 'ROLLBACK' && t.action !== 'CONTINUE') {
    throw invalidParameter(`${at}.timeoutConfiguration.action must be ROLLBACK or CONTINUE.`);
  }
}

/**
 * What a native strategy needs of the rest of the service: the ECS deployment controller, and
 * each load balancer's advancedConfiguration (alternateTargetGroupArn, productionListenerRule,
 * roleArn), or Service Connect when there is no load balancer. @throws InvalidParameterException.
 */
export function checkNativeNeeds(cfg: DeploymentConfig, controller: DeploymentControllerType, lbs: readonly LoadBalancer[], serviceConnect: boolean): void {
  for (const [i, lb] of lbs.entries()) {
    const adv = lb.advancedConfiguration;
    if (adv === undefined) continue;
    if (!adv.alternateTargetGroupArn || !adv.productionListenerRule || !adv.roleArn) {
      throw invalidParameter(`loadBalancers[${i}].advancedConfiguration needs alternateTargetGroupArn, productionListenerRule and roleArn.`);
    }
    if (adv.alternateTargetGroupArn === lb.targetGroupArn) throw invalidParameter(`loadBalancers[${i}].advancedConfiguration.alternateTargetGroupArn must differ from targetGroupArn.`);
  }
  if (cfg.strategy === 'ROLLING') return;
  if (controller !== 'ECS') throw invalidParameter(`deploymentConfiguration.strategy ${cfg.strategy} needs the ECS deployment controller.`);
  const missing = lbs.findIndex((lb) => lb.advancedConfiguration === undefined);
  if (missing >= 0) {
    throw invalidParameter(`deploymentConfiguration.strategy ${cfg.strategy} needs loadBalancers[${missing}].advancedConfiguration (alternateTargetGroupArn, productionListenerRule, roleArn).`);
  }
  if (lbs.length === 0 && !serviceConnect) {
    throw invalidParameter(`deploymentConfiguration.strategy ${cfg.strategy} needs a load balancer with an advancedConfiguration, or Service Connect.`);
  }
}

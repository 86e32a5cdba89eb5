/**
 * A service's `deploymentConfiguration` as CreateService and UpdateService take it (defaults,
 * limits, what an update keeps), the template a new deployment snapshots, and VPC Lattice
 * configurations (Amazon ECS API reference: DeploymentConfiguration, VpcLatticeConfiguration).
 */
import type { DeploymentConfiguration, VpcLatticeConfiguration } from '@aws-sdk/client-ecs';
import { own } from '../../lambda/core/dict';
import { invalidParameter } from './errors';
import { checkStrategyMembers } from './native-rules';
import { alarmsOf } from './service-rules';
import type { DeploymentConfig, DeploymentTemplate, SimService } from './state';

export const DEPLOYMENT_STRATEGIES = ['ROLLING', 'BLUE_GREEN', 'LINEAR', 'CANARY'] as const;
/** Members of the native strategies, kept as given and answered back (./native-deployments runs them). */
const STRATEGY_MEMBERS = ['lifecycleHooks', 'linearConfiguration', 'canaryConfiguration'] as const;

/**
 * Defaults: 100 / 200, circuit breaker off (docs/ecs-facts.md §6), strategy ROLLING and bake time
 * 0 (§13); an update keeps what it omits.
 */
export function deploymentConfig(given: DeploymentConfiguration | undefined, current: DeploymentConfig | undefined): DeploymentConfig {
  const strategy = given?.strategy ?? current?.strategy ?? 'ROLLING';
  if (!(DEPLOYMENT_STRATEGIES as readonly string[]).includes(strategy)) {
    throw invalidParameter(`Invalid deploymentConfiguration.strategy '${strategy}'. Valid values: ${DEPLOYMENT_STRATEGIES.join(', ')}.`);
  }
  const bakeTimeInMinutes = given?.bakeTimeInMinutes ?? current?.bakeTimeInMinutes ?? 0;
  if (!Number.isInteger(bakeTimeInMinutes) || bakeTimeInMinutes < 0) throw invalidParameter('bakeTimeInMinutes must be a whole number of minutes, 0 or more.');
  const { enable: _e, rollback: _r, ...breakerRest } = (given?.deploymentCircuitBreaker ?? {}) as Record<string, unknown>;
  const { enable: _ce, rollback: _cr, ...currentBreakerRest } = current?.deploymentCircuitBreaker ?? {};
  const out: DeploymentConfig = {
    minimumHealthyPercent: given?.minimumHealthyPercent ?? current?.minimumHealthyPercent ?? 100,
    maximumPercent: given?.maximumPercent ?? current?.maximumPercent ?? 200,
    deploymentCircuitBreaker: {
      ...structuredClone(given?.deploymentCircuitBreaker ? breakerRest : currentBreakerRest),
      enable: given?.deploymentCircuitBreaker?.enable ?? current?.deploymentCircuitBreaker.enable ?? false,
      rollback: given?.deploymentCircuitBreaker?.rollback ?? current?.deploymentCircuitBreaker.rollback ?? false,
    },
    strategy: strategy as DeploymentConfig['strategy'],
    bakeTimeInMinutes,
  };
  for (const member of STRATEGY_MEMBERS) {
    const value = given?.[member] ?? current?.[member];
    if (value !== undefined) out[member] = structuredClone(value);
  }
  const alarms = alarmsOf(given?.alarms, current?.alarms);
  if (alarms) out.alarms = alarms;
  if (!Number.isInteger(out.minimumHealthyPercent) || out.minimumHealthyPercent < 0 || out.minimumHealthyPercent > 100) {
    throw invalidParameter('minimumHealthyPercent must be between 0 and 100.');
  }
  if (!Number.isInteger(out.maximumPercent) || out.maximumPercent < 100) {
    throw invalidParameter('maximumPercent must be at least 100 for a REPLICA service.');
  }
  // An update keeps the current criteria, unless it moves the service off ROLLING (where they do not apply).
  const early = given?.earlySuccessCriteria ?? (out.strategy === 'ROLLING' ? current?.earlySuccessCriteria : undefined);
  if (early !== undefined) out.earlySuccessCriteria = earlySuccessCriteriaOf(early, out);
  checkStrategyMembers(out);
  return out;
}

const SOURCE_REVISION_CLEANUP = ['BLOCKING', 'DEFERRED'];

/**
 * `earlySuccessCriteria` (Amazon ECS API reference, DeploymentEarlySuccessCriteria): rolling
 * deployments only; `enable` required; `healthyPercent` a whole percent 0-100, at least
 * `minimumHealthyPercent`; `sourceServiceRevisionCleanup` BLOCKING or DEFERRED. Kept as given.
 * @throws InvalidParameterException naming the member.
 */
function earlySuccessCriteriaOf(given: unknown, cfg: DeploymentConfig): Record<string, unknown> {
  if (given === null || typeof given !== 'object' || Array.isArray(given)) throw invalidParameter('earlySuccessCriteria must be a structure.');
  const e = given as Record<string, unknown>;
  if (cfg.strategy !== 'ROLLING') throw invalidParameter(`earlySuccessCriteria can be used only with the ROLLING deployment strategy, not ${cfg.strategy}.`);
  if (typeof e.enable !== 'boolean') throw invalidParameter('earlySuccessCriteria.enable can not be null.');
  const healthy = e.healthyPercent;
  if (healthy !== undefined && (!Number.isInteger(healthy) || (healthy as number) < 0 || (healthy as number) > 100)) {
    throw invalidParameter('earlySuccessCriteria.healthyPercent must be a whole number between 0 and 100.');
  }
  if (typeof healthy === 'number' && healthy < cfg.minimumHealthyPercent) {
    throw invalidParameter(`earlySuccessCriteria.healthyPercent (${healthy}) must be at least minimumHealthyPercent (${cfg.minimumHealthyPercent}).`);
  }
  const cleanup = e.sourceServiceRevisionCleanup;
  if (cleanup !== undefined && !SOURCE_REVISION_CLEANUP.includes(cleanup as string)) {
    throw invalidParameter(`Invalid earlySuccessCriteria.sourceServiceRevisionCleanup '${String(cleanup)}'. Valid values: ${SOURCE_REVISION_CLEANUP.join(', ')}.`);
  }
  return structuredClone(e);
}

/** The deployment template of the service as it is now (what a new deployment snapshots). */
export function templateOf(svc: SimService): DeploymentTemplate {
  return {
    taskDefinition: svc.taskDefinition,
    launchType: svc.launchType,
    capacityProviderStrategy: svc.capacityProviderStrategy,
    platformVersion: svc.platformVersion,
    networkConfiguration: svc.networkConfiguration,
    loadBalancers: svc.loadBalancers,
    serviceConnectConfiguration: svc.serviceConnectConfiguration,
    serviceConnectResources: svc.serviceConnectResources,
    volumeConfigurations: svc.volumeConfigurations,
    vpcLatticeConfigurations: svc.vpcLatticeConfigurations,
  };
}

/**
 * VPC Lattice configurations as stored: each names a role, a Lattice target group and a port name
 * (Amazon ECS API Reference, VpcLatticeConfiguration: all three required); `[]` is none.
 * @throws InvalidParameterException for a malformed entry.
 */
export function vpcLatticeConfigurationsOf(given: unknown): VpcLatticeConfiguration[] | undefined {
  if (given === undefined) return undefined;
  if (!Array.isArray(given)) throw invalidParameter('vpcLatticeConfigurations must be a list.');
  for (const c of given) {
    for (const member of ['roleArn', 'targetGroupArn', 'portName']) {
      const v = c && typeof c === 'object' ? own(c as Record<string, unknown>, member) : undefined;
      if (typeof v !== 'string' || v === '') throw invalidParameter(`vpcLatticeConfigurations.${member} can not be blank.`);
    }
  }
  return given.length > 0 ? structuredClone(given as VpcLatticeConfiguration[]) : undefined;
}

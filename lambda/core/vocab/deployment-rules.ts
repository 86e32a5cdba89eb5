/**
 * Rules across the members of a deployment configuration and the rest of a service: what ECS
 * refuses at CreateService or UpdateService about its deployment strategies, found before any
 * call. Each refusal names the field and what is allowed.
 *
 * Sources: Amazon ECS API reference (DeploymentConfiguration, LinearConfiguration,
 * CanaryConfiguration, DeploymentLifecycleHook, DeploymentEarlySuccessCriteria,
 * AdvancedConfiguration) and the Developer Guide (blue/green, linear and canary deployments;
 * lifecycle hooks). Where ECS documents no rule, the safe reading is docs/ecs-facts.md §14's.
 */
import { own } from '../dict';
import type { Issue } from './rules';
import { PAUSE_HOOK_REFUSED_STAGES } from './service';

const rec = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Set) && !(v instanceof Map) ? (v as Record<string, unknown>) : undefined;
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** The deployment configuration as written: its attribute (`deployment` or its ECS-named alias), value and breaker's name. */
interface WrittenDeployment {
  readonly attr: 'deployment' | 'deploymentConfiguration';
  readonly value: Record<string, unknown>;
  readonly breaker: 'circuitBreaker' | 'deploymentCircuitBreaker';
}

function writtenDeployment(raw: Record<string, unknown>, issue: Issue): WrittenDeployment | undefined {
  const deployment = rec(raw.deployment);
  const ecs = rec(raw.deploymentConfiguration);
  if (raw.deployment !== undefined && raw.deploymentConfiguration !== undefined) {
    issue(['deploymentConfiguration'], 'must not be given with deployment: use one or the other (deploymentConfiguration is the ECS name of deployment)', raw.deploymentConfiguration);
  }
  if (deployment) return { attr: 'deployment', value: deployment, breaker: 'circuitBreaker' };
  if (ecs) return { attr: 'deploymentConfiguration', value: ecs, breaker: 'deploymentCircuitBreaker' };
  return undefined;
}

/**
 * Every deployment rule, on the raw item (read defensively: the rules run even when single fields
 * are invalid). The strategy is the written one, else ROLLING (ECS's default).
 */
export function checkDeploymentRules(raw: Record<string, unknown>, issue: Issue): void {
  const written = writtenDeployment(raw, issue);
  const strategy = str(written?.value.strategy) ?? 'ROLLING';
  if (written) {
    checkRollingMembers(written, issue);
    checkStrategyMembers(written, strategy, issue);
    arr(written.value.lifecycleHooks).forEach((h, i) => checkHook(rec(h), [written.attr, 'lifecycleHooks', i], issue));
  }
  checkAlternateTargetGroups(raw, issue);
  if (strategy === 'BLUE_GREEN' || strategy === 'LINEAR' || strategy === 'CANARY') checkNativeNeeds(raw, written?.attr ?? 'deployment', strategy, issue);
}

/** minimumHealthyPercent and maximumPercent can progress; the breaker rolls back only when enabled. */
function checkRollingMembers({ attr, value, breaker }: WrittenDeployment, issue: Issue): void {
  const min = num(value.minimumHealthyPercent) ?? 100;
  const max = num(value.maximumPercent) ?? 200;
  if (min === 100 && max === 100) {
    issue([attr, 'maximumPercent'], 'must be above 100 when minimumHealthyPercent is 100: a rollout could neither start nor stop a task, got 100', 100);
  }
  const b = rec(value[breaker]);
  if (b && b.rollback === true && b.enable === false) {
    issue([attr, breaker, 'rollback'], 'needs enable: true (ECS rolls back only when the circuit breaker trips), got true', true);
  }
  const early = rec(value.earlySuccessCriteria);
  const healthy = num(early?.healthyPercent);
  if (healthy !== undefined && healthy < min) {
    issue([attr, 'earlySuccessCriteria', 'healthyPercent'], `must be at least minimumHealthyPercent (${min}), got ${healthy}`, healthy);
  }
}

/** Each strategy's own members, and only with that strategy. */
function checkStrategyMembers({ attr, value }: WrittenDeployment, strategy: string, issue: Issue): void {
  const onlyWith = (member: string, allowed: string, ok: boolean) => {
    const given = own(value, member);
    if (given !== undefined && !ok) issue([attr, member], `is only for strategy ${allowed}, got strategy ${strategy}`, given);
  };
  onlyWith('linearConfiguration', 'LINEAR', strategy === 'LINEAR');
  onlyWith('canaryConfiguration', 'CANARY', strategy === 'CANARY');
  onlyWith('earlySuccessCriteria', 'ROLLING', strategy === 'ROLLING');
  if (strategy === 'ROLLING' && arr(value.lifecycleHooks).length > 0) {
    issue(
      [attr, 'lifecycleHooks'],
      'need strategy BLUE_GREEN, LINEAR or CANARY (ECS runs lifecycle hooks at the stages of those deployments), got strategy ROLLING',
      value.lifecycleHooks,
    );
  }
}

/**
 * An AWS_LAMBDA hook names its function and the role ECS invokes it with; a PAUSE hook names no
 * function and waits at no traffic shift (ECS cannot pause a shift in progress).
 */
function checkHook(hook: Record<string, unknown> | undefined, at: (string | number)[], issue: Issue): void {
  if (!hook) return;
  const type = str(hook.targetType) ?? 'AWS_LAMBDA';
  if (type === 'AWS_LAMBDA') {
    if (hook.hookTargetArn === undefined) issue([...at, 'hookTargetArn'], 'is required for an AWS_LAMBDA hook (the Lambda function ECS invokes)');
    if (hook.roleArn === undefined) issue([...at, 'roleArn'], 'is required for an AWS_LAMBDA hook (the IAM role ECS assumes to invoke the function)');
  }
  if (type !== 'PAUSE') return;
  if (hook.hookTargetArn !== undefined) issue([...at, 'hookTargetArn'], 'must not be given for a PAUSE hook (it invokes nothing; ecsr continue answers it)', hook.hookTargetArn);
  arr(hook.lifecycleStages).forEach((stage, j) => {
    if (typeof stage === 'string' && PAUSE_HOOK_REFUSED_STAGES.includes(stage)) {
      issue([...at, 'lifecycleStages', j], `must not be ${stage} for a PAUSE hook (ECS pauses between stages, not during a traffic shift), got "${stage}"`, stage);
    }
  });
}

/** A load balancer's alternate target group is another target group. */
function checkAlternateTargetGroups(raw: Record<string, unknown>, issue: Issue): void {
  const check = (lb: Record<string, unknown> | undefined, at: (string | number)[]) => {
    const alternate = str(rec(lb?.advancedConfiguration)?.alternateTargetGroupArn);
    if (alternate !== undefined && alternate === str(lb?.targetGroupArn)) {
      issue([...at, 'advancedConfiguration', 'alternateTargetGroupArn'], `must differ from targetGroupArn (ECS shifts traffic between the two), got "${alternate}"`, alternate);
    }
  };
  check(rec(raw.loadBalancer), ['loadBalancer']);
  arr(raw.loadBalancers).forEach((lb, i) => check(rec(lb), ['loadBalancers', i]));
}

/**
 * BLUE_GREEN, LINEAR and CANARY shift traffic: each load balancer needs its advancedConfiguration
 * (the alternate target group and the listener rules), and a service without a load balancer
 * needs Service Connect or a VPC Lattice configuration with one.
 */
function checkNativeNeeds(raw: Record<string, unknown>, attr: string, strategy: string, issue: Issue): void {
  const needs = `with ${attr}.strategy ${strategy} (ECS shifts traffic between the target group and its alternate)`;
  const single = rec(raw.loadBalancer);
  if (single && rec(single.advancedConfiguration) === undefined) {
    issue(['loadBalancer', 'advancedConfiguration'], `is required ${needs}: give alternateTargetGroupArn, productionListenerRule and roleArn`);
  }
  const lbs = arr(raw.loadBalancers);
  lbs.forEach((lb, i) => {
    if (rec(lb) && rec(rec(lb)?.advancedConfiguration) === undefined) {
      issue(['loadBalancers', i, 'advancedConfiguration'], `is required ${needs}: give alternateTargetGroupArn, productionListenerRule and roleArn`);
    }
  });
  const serviceConnect = rec(raw.serviceConnectConfiguration)?.enabled === true;
  const lattice = arr(raw.vpcLatticeConfigurations).some((c) => rec(rec(c)?.advancedConfiguration) !== undefined);
  if (!single && lbs.length === 0 && !serviceConnect && !lattice) {
    issue(
      [attr, 'strategy'],
      `needs a load balancer with an advancedConfiguration, Service Connect, or a VPC Lattice configuration with an advancedConfiguration (ECS shifts traffic through one of them), got strategy ${strategy} with none`,
      strategy,
    );
  }
}

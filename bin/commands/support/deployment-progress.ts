/**
 * A native deployment's progress as `ecsr get`, `describe`, `wait` and `apply --wait` show it,
 * from the status's `deployment` (docs/status.md, "Native deployments").
 */
import type { DeploymentProgress, ServiceStatus } from '../../../lambda/core/types';
import { formatDuration } from './options';

/**
 * `CANARY at PRODUCTION_TRAFFIC_SHIFT, production 10%, test 100%, bake 4m left`, plus `waiting for
 * ecsr continue (hook <id>)` for a PAUSE hook. The bake left counts to `bakeEndsAt` from `now`
 * (ECS's end is an estimate: docs/status.md).
 */
export function deploymentProgressLine(d: DeploymentProgress, now: Date = new Date()): string {
  const parts = [`${d.strategy || 'deployment'} ${d.status === 'IN_PROGRESS' ? '' : `${d.status} `}at ${d.lifecycleStage ?? 'an unknown stage'}`.replace('  ', ' ')];
  if (d.productionTrafficPercent !== undefined) parts.push(`production ${d.productionTrafficPercent}%`);
  if (d.testTrafficPercent !== undefined) parts.push(`test ${d.testTrafficPercent}%`);
  if (d.bakeEndsAt !== undefined) {
    const left = Math.max(0, Math.round((Date.parse(d.bakeEndsAt) - now.getTime()) / 1000));
    parts.push(`bake ${left > 0 ? `${formatDuration(left)} left` : 'ending'}`);
  }
  if (d.awaitingHookId !== undefined) parts.push(`waiting for ecsr continue (hook ${d.awaitingHookId})`);
  return parts.join(', ');
}

/** The progress line of the status's native deployment, or undefined when it records none. */
export function statusDeploymentLine(s: ServiceStatus | undefined, now: Date = new Date()): string | undefined {
  const d = s?.deployment;
  return d !== undefined && typeof d === 'object' && typeof d.serviceDeploymentArn === 'string' ? deploymentProgressLine(d, now) : undefined;
}

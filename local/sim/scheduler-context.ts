/**
 * What the scheduler and the task lifecycle are given by the simulator (clock, seeded random,
 * ARNs, timings, failure rules, lookups and the event sink), and the task predicates they share.
 */
import type { TaskDefinition } from '@aws-sdk/client-ecs';
import type { Arns } from './arns';
import type { VirtualClock } from './clock';
import type { FailureRule } from './failure-modes';
import type { SeededRandom } from './random';
import type { HookTarget } from './native-deployments';
import type { SimCluster, SimDeployment, SimService, SimTask, Tag } from './state';
import type { SimTimings } from './timings';

export interface SchedulerContext {
  readonly clock: VirtualClock;
  readonly rng: SeededRandom;
  readonly arns: Arns;
  readonly timings: SimTimings;
  rules(): readonly FailureRule[];
  cluster(name: string): SimCluster | undefined;
  taskDefinition(arn: string): TaskDefinition | undefined;
  /** Tags given when the revision was registered. */
  taskDefinitionTags(arn: string): Tag[];
  /** The function a lifecycle hook target ARN stands for (supplied through the control surface). */
  hookTarget(arn: string): HookTarget | undefined;
  /** The state of a CloudWatch alarm as set through the control surface (default OK). */
  alarmState(name: string): string;
  /** ECS's events on the bus (`./events`): a task's state changed, a service action, a deployment state change. */
  readonly events: {
    task(t: SimTask): void;
    serviceAction(svc: SimService, eventType: 'INFO' | 'WARN' | 'ERROR', eventName: string, reason?: string): void;
    deployment(svc: SimService, d: SimDeployment, eventType: 'INFO' | 'ERROR', eventName: string, reason: string): void;
  };
}

/** Where and how one task is launched. */
export interface LaunchRequest {
  cluster: SimCluster;
  taskDefinition: TaskDefinition;
  service?: SimService;
  deployment?: SimDeployment;
  launchType: 'FARGATE' | 'EC2';
  capacityProviderName?: string;
  platformVersion?: string;
  subnets: string[];
  startedBy?: string;
  group: string;
  tags: Tag[];
}

/** The task has not been told to stop. */
export function isLive(t: SimTask): boolean {
  return t.desiredStatus === 'RUNNING';
}

/** RUNNING and, for tasks with a container health check, HEALTHY. */
export function isHealthyRunning(t: SimTask): boolean {
  if (t.lastStatus !== 'RUNNING' || t.desiredStatus !== 'RUNNING') return false;
  if (t.healthCheck) return t.healthStatus === 'HEALTHY';
  return t.healthStatus !== 'UNHEALTHY';
}

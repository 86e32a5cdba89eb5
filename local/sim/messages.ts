/**
 * The words ECS uses, in one place: service event messages (Amazon ECS Developer Guide "Service
 * event messages"), rollout reasons (DescribeServices `deployments[].rolloutStateReason`), stop
 * codes and stopped reasons (DescribeTasks; "Amazon ECS stopped task error messages"). Wording is
 * taken from what ECS prints; ids are task ids (32 hex) and deployment ids (`ecs-svc/<19 digits>`).
 */

const TROUBLESHOOTING = 'For more information, see the Troubleshooting section of the Amazon ECS Developer Guide.';

export const serviceEvent = {
  started: (service: string, taskIds: string[]) =>
    `(service ${service}) has started ${taskIds.length} tasks: ${taskIds.map((id) => `(task ${id})`).join(' ')}.`,
  stopped: (service: string, taskIds: string[]) =>
    `(service ${service}) has stopped ${taskIds.length} running tasks: ${taskIds.map((id) => `(task ${id})`).join(' ')}.`,
  steadyState: (service: string) => `(service ${service}) has reached a steady state.`,
  deploymentCompleted: (service: string, deploymentId: string) =>
    `(service ${service}) (deployment ${deploymentId}) deployment completed.`,
  deploymentFailed: (service: string, deploymentId: string) =>
    `(service ${service}) (deployment ${deploymentId}) deployment failed: tasks failed to start.`,
  rollingBack: (service: string, deploymentId: string) => `(service ${service}) rolling back to deployment ${deploymentId}.`,
  /** Fargate had no capacity for the task (the "capacity exhausted" failure mode). */
  noFargateCapacity: (service: string) =>
    `(service ${service}) was unable to place a task. Reason: Capacity is unavailable at this time. Please try again later or in a different availability zone. ${TROUBLESHOOTING}`,
  /** EC2 launch type (the default without a capacity provider strategy) in a cluster of no instances. */
  noContainerInstances: (service: string) =>
    `(service ${service}) was unable to place a task because no container instance met all of its requirements. Reason: No Container Instances were found in your cluster. ${TROUBLESHOOTING}`,
  startImpaired: (service: string) => `(service ${service}) is unable to consistently start tasks successfully. ${TROUBLESHOOTING}`,
  failedHealthChecks: (service: string, taskId: string) => `(service ${service}) (task ${taskId}) failed container health checks.`,
} as const;

export const rolloutReason = {
  inProgress: (deploymentId: string) => `ECS deployment ${deploymentId} in progress.`,
  completed: (deploymentId: string) => `ECS deployment ${deploymentId} completed.`,
  failed: () => 'ECS deployment circuit breaker: tasks failed to start.',
  rollback: (toDeploymentId: string) => `ECS deployment circuit breaker: rolling back to deploymentId ${toDeploymentId}.`,
} as const;

/** DescribeTasks `stopCode` values the simulator produces (docs/ecs-facts.md §5). */
export type StopCode =
  | 'TaskFailedToStart'
  | 'EssentialContainerExited'
  | 'UserInitiated'
  | 'ServiceSchedulerInitiated'
  | 'SpotInterruption';

export const stoppedReason = {
  cannotPull: (image: string) =>
    `CannotPullContainerError: pull image manifest has been retried 5 time(s): failed to resolve ref ${qualifyImage(image)}: ${qualifyImage(image)}: not found`,
  essentialExited: () => 'Essential container in task exited',
  /** The simulator's wording (ECS's exact text for this case is not in public material). */
  dependencyTimeout: (container: string, waiting: string, seconds: number) =>
    `Container ${container} did not start: its dependencies (${waiting}) were not met within its startTimeout of ${seconds} seconds`,
  failedHealthChecks: () => 'Task failed container health checks',
  spot: () => 'Your Spot Task was interrupted.',
  scaling: (deploymentId: string) => `Scaling activity initiated by (deployment ${deploymentId})`,
  userDefault: () => 'Task stopped by user',
} as const;

/** `nginx` -> `docker.io/library/nginx:latest`, as containerd names a reference. */
export function qualifyImage(image: string): string {
  let ref = image;
  const lastSegment = ref.slice(ref.lastIndexOf('/') + 1);
  if (!lastSegment.includes(':') && !ref.includes('@')) ref += ':latest';
  const first = ref.split('/')[0];
  const hasRegistry = ref.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  if (hasRegistry) return ref;
  return ref.includes('/') ? `docker.io/${ref}` : `docker.io/library/${ref}`;
}

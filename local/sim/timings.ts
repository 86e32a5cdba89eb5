/**
 * The simulator's durations and bounds on the virtual clock: how long each task state lasts, when
 * placement is retried, how long stopped tasks and inactive services stay describable, and ECS's
 * per-service limits the scheduler keeps to.
 */

/** Durations in virtual seconds; ranges are [min, max] drawn uniformly. */
export interface SimTimings {
  provisioning: [number, number];
  /** Image pull. */
  pending: [number, number];
  activating: [number, number];
  deactivating: [number, number];
  /** SIGTERM to exit (ECS waits up to stopTimeout, 30 s by default). */
  stopping: [number, number];
  deprovisioning: [number, number];
  /** Time until a failing pull gives up. */
  pullFailure: [number, number];
  /** crash-loop: seconds RUNNING before the essential container exits (rule.runSeconds overrides). */
  crashAfter: [number, number];
  /** slow-start: extra seconds PENDING (rule.pendingSeconds overrides). */
  slowStartPendingSeconds: number;
  /** spot-interruption: seconds RUNNING before the interruption (rule.runSeconds overrides). */
  spotInterruptAfterSeconds: number;
  /** Seconds RUNNING after which a task without health check counts as healthy for the breaker. */
  stableAfterSeconds: number;
  /** An init container (others wait for it to COMPLETE / SUCCESS): seconds RUNNING before it exits 0. */
  initContainerRunSeconds: [number, number];
  /** Placement retry after a placement failure. */
  placementRetrySeconds: number;
  /** Stopped tasks stay describable this long (ECS: at least one hour). */
  stoppedTaskRetentionSeconds: number;
  /** INACTIVE services stay describable this long, then DescribeServices answers MISSING. */
  inactiveServiceRetentionSeconds: number;
}

export const DEFAULT_TIMINGS: SimTimings = {
  provisioning: [2, 6],
  pending: [6, 18],
  activating: [1, 3],
  deactivating: [1, 3],
  stopping: [2, 25],
  deprovisioning: [2, 6],
  pullFailure: [5, 15],
  crashAfter: [3, 10],
  slowStartPendingSeconds: 300,
  spotInterruptAfterSeconds: 120,
  stableAfterSeconds: 30,
  initContainerRunSeconds: [2, 8],
  placementRetrySeconds: 60,
  stoppedTaskRetentionSeconds: 3600,
  inactiveServiceRetentionSeconds: 3600,
};

/**
 * Seconds a container waits for its dependencies when its definition sets no startTimeout (ECS on
 * Fargate: 3 minutes; ContainerDefinition.startTimeout).
 */
export const DEFAULT_START_TIMEOUT_SECONDS = 180;

/** Latest events kept per service (ECS keeps 100). */
export const MAX_SERVICE_EVENTS = 100;
/** Service deployments the simulator keeps per service (its own bound; ECS keeps them longer). */
export const MAX_SERVICE_DEPLOYMENTS = 100;
/** A repeated warning is re-emitted only after this long (ECS: six hours). */
export const WARNING_REPEAT_MS = 6 * 3600 * 1000;
/** ECS's task launch backoff grows up to 15 minutes. */
export const MAX_LAUNCH_BACKOFF_SECONDS = 900;
/**
 * Tasks one service launches per minute on Fargate (ECS service quota "Rate of tasks launched by a
 * service on AWS Fargate", default 500). Also what keeps a huge desiredCount from launching
 * millions of tasks in one step.
 */
export const MAX_LAUNCHES_PER_MINUTE = 500;
export const LAUNCH_WINDOW_MS = 60_000;

/**
 * Metric names and dimensions: one definition for the emitter (`lambda/adapters/metrics.ts`), the
 * alarms (`lambda/core/alarms.ts`, deployed by `lib/` and evaluated locally) and the dashboard.
 */
export const DEFAULT_METRICS_NAMESPACE = 'EcsReconciler';

export const DIMENSION = {
  cluster: 'Cluster',
  service: 'Service',
  /**
   * The target of a per-pass metric in fan-out mode, beside the same metric
   * without dimensions (the sum over targets, which the single-target alarms watch).
   */
  target: 'Target',
} as const;

export const METRIC = {
  /**
   * Per service (Cluster, Service): max(0, desired - running), tasks; emitted only while the
   * service lags, and once at 0 when it recovers (`shouldEmitTaskLag` in `pass.ts`).
   */
  taskLag: 'TaskLag',
  /** Per pass: 1 when the pass completed (heartbeat), Count. */
  passSucceeded: 'PassSucceeded',
  /** Per pass: wall time of the pass, Milliseconds. */
  passDuration: 'PassDuration',
  /** Per pass: actions applied successfully, Count. */
  actionsApplied: 'ActionsApplied',
  /** Per pass: actions that failed, Count. */
  actionsFailed: 'ActionsFailed',
  /** Per pass: spec items that failed validation, Count. */
  invalidSpecs: 'InvalidSpecs',
  /** Per pass: drift corrections (UpdateService actions correcting a live difference), Count. */
  driftCorrections: 'DriftCorrections',
  /**
   * Per pass: services in observe-only mode that differ from their spec and were left as they are
   * (status `observedDrift`), Count.
   */
  driftObserved: 'DriftObserved',
  /** Per pass: services whose lag lasted longer than their grace, Count. */
  servicesLaggingBeyondGrace: 'ServicesLaggingBeyondGrace',
  /**
   * Fan-out mode, per target (dimension Target), emitted by the dispatcher every tick: seconds
   * since the target's last completed scheduled pass (`NEVER_PASSED_AGE_SECONDS` before its
   * first). Keeps reporting while the target's own passes have stopped, so its alarm can fire.
   */
  targetPassAge: 'TargetPassAge',
  /**
   * Per events fast path batch: ECS events naming a service in an account and Region (and cluster)
   * no declared target serves, dropped unapplied (`lambda/core/event-routing.ts`), Count.
   */
  eventsUnrouted: 'EventsUnrouted',
} as const;

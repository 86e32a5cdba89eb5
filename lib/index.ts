/** Public entry of the CDK side: the construct, the stack, and the alarm definitions they deploy. */
export { EcsReconciler, EcsReconcilerPropsError, DEFAULT_LOG_GROUP_PREFIX, HANDLER_ENTRY, reconcilerFunctionRoleArn } from './ecs-reconciler';
export type {
  AlarmOverride,
  EcsReconcilerProps,
  PassMetricOptions,
  ReconcilerAllowListProps,
  ReconcilerClusterProps,
  ReconcilerFanOutProps,
  ReconcilerFunctionProps,
  ReconcilerMonitoringProps,
  ReconcilerPlanProps,
  ReconcilerSpecTableProps,
  ReconcilerTarget,
  ReconcilerTaskLogProps,
  ReconcilerTriggerProps,
} from './ecs-reconciler';
export { EcsReconcilerStack, reconcilerPropsFromContext, ContextError, CONTEXT_KEYS } from './reconciler-stack';
export type { EcsReconcilerStackProps } from './reconciler-stack';
export { alarmDefinitions, evaluateAlarm, evaluateContributors } from '../lambda/core/alarms';
export type { AlarmDefinition, AlarmId, AlarmSettings } from '../lambda/core/alarms';
export { ReconcilerTargetRole, ReconcilerTargetStack, DEFAULT_TARGET_ROLE_NAME } from './target-role';
export type { ReconcilerTargetRoleProps, ReconcilerTargetStackProps } from './target-role';
export { ReconcilerTargetEvents } from './target-events';
export type { ReconcilerTargetEventsProps } from './target-events';

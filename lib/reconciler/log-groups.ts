/**
 * The defaults services need from the construct: the default task execution role and one log
 * group per managed cluster that rendered task definitions use (`<prefix><cluster>`, the prefix
 * the function gets as `LOG_GROUP_PREFIX`).
 */
import { RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { DEFAULT_PLAN_OPTIONS } from '../../lambda/core/options';
import type { ReconcilerClusterProps, ReconcilerTaskLogProps } from './props';
import type { ResolvedSettings } from './settings';

/** Default `LOG_GROUP_PREFIX`: task definitions log to `/ecs-reconciler/<cluster>`. */
export const DEFAULT_LOG_GROUP_PREFIX = '/ecs-reconciler/';

/**
 * An owner id as one segment of a log group name, injectively (a log group name holds only
 * letters, digits and `_ - / . #`; CloudWatch Logs API Reference, CreateLogGroup): letters, digits,
 * `_`, `-` and `.` stay, every other character an owner id may hold (space `+ = : / @`) becomes `#`
 * and its two upper-case hex digits (`team b@x` -> `team#20b#40x`). An owner id never holds `#`,
 * so two owner ids never give one segment, and a segment never holds `/`.
 * @param ownerId a valid owner id (1-256 of letters, digits, spaces and `+ - = . _ : / @`).
 */
export function ownerLogGroupSegment(ownerId: string): string {
  return ownerId.replace(/[^A-Za-z0-9_.-]/g, (c) => `#${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

/**
 * The prefix task definitions log under, `<logGroupPrefix><cluster>` being the group: the prefix
 * itself for the default owner id (existing deployments keep `/ecs-reconciler/<cluster>`), else
 * `<logGroupPrefix><ownerLogGroupSegment(ownerId)>/`. With one prefix, two owner ids never share a
 * group: a cluster name holds no `/`, so what follows the prefix is either `<cluster>` (default
 * owner) or `<segment>/<cluster>`, and segments are injective.
 */
export function effectiveLogGroupPrefix(logGroupPrefix: string, ownerId: string): string {
  return ownerId === DEFAULT_PLAN_OPTIONS.ownerId ? logGroupPrefix : `${logGroupPrefix}${ownerLogGroupSegment(ownerId)}/`;
}

/**
 * The default task execution role for specs that name none: `props.executionRole`, or a new role
 * with AmazonECSTaskExecutionRolePolicy that only ECS tasks of this account may assume.
 */
export function createExecutionRole(scope: Construct, props: ReconcilerClusterProps): iam.IRole {
  if (props.executionRole) return props.executionRole;
  const stack = Stack.of(scope);
  const role = new iam.Role(scope, 'TaskExecutionRole', {
    description: 'ecs-reconciler default task execution role (image pulls, awslogs)',
    assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com').withConditions({
      // Confused-deputy protection (Amazon ECS Developer Guide, "Task execution IAM role").
      StringEquals: { 'aws:SourceAccount': stack.account },
      ArnLike: { 'aws:SourceArn': stack.formatArn({ service: 'ecs', resource: '*' }) },
    }),
    managedPolicies: [iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AmazonECSTaskExecutionRolePolicy')],
  });
  Validations.of(role).acknowledge({
    id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonECSTaskExecutionRolePolicy]',
    reason:
      'AmazonECSTaskExecutionRolePolicy is the AWS-documented policy for Fargate task execution (ECR pulls, awslogs); AWS keeps it current with ECR and Logs API changes.',
  });
  return role;
}

/**
 * One log group per managed cluster (`TaskLogs<i>`, by position in `clusterNames`), named
 * `<effective prefix><cluster>`, that `executionRole` may write to. With `createTaskLogGroups:
 * false` the groups are imported by name instead (they exist already).
 * @returns the groups by cluster name (possibly a token).
 */
export function createTaskLogGroups(
  scope: Construct,
  props: ReconcilerTaskLogProps,
  settings: ResolvedSettings,
  clusterNames: readonly string[],
  executionRole: iam.IRole,
): Record<string, logs.ILogGroup> {
  const logGroups: Record<string, logs.ILogGroup> = {};
  clusterNames.forEach((name, i) => {
    const logGroupName = `${settings.effectiveLogGroupPrefix}${name}`;
    const group =
      props.createTaskLogGroups === false
        ? logs.LogGroup.fromLogGroupName(scope, `TaskLogs${i}`, logGroupName)
        : new logs.LogGroup(scope, `TaskLogs${i}`, {
            logGroupName,
            retention: settings.logRetention,
            // Service logs outlive the reconciler by default: the services keep running and logging.
            removalPolicy: props.taskLogGroupRemovalPolicy ?? RemovalPolicy.RETAIN,
          });
    group.grantWrite(executionRole);
    logGroups[name] = group;
  });
  return logGroups;
}

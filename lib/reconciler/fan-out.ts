/**
 * Fan-out mode (docs/multi-account.md): the schedule sends one message per target into the
 * fan-out queue, and an event source mapping runs one invocation per message, each with its own
 * lease, time and failure.
 */
import { Duration, Stack, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { ReconcilerFanOutProps } from './props';
import { deadLetterQueue, reconcilerQueue, SQS_EVENT_SOURCE_MAX_RECEIVES, SQS_EVENT_SOURCE_VISIBILITY_FACTOR } from './queues';
import type { ResolvedSettings } from './settings';
import { DEFAULT_TARGET_ROLE_NAME, defaultTargetRoleArn } from './target-names';

/** A target of the `targets` prop as the function reads it (`TARGETS`), its role ARN filled in. */
export interface TargetDeclaration {
  readonly name: string;
  readonly account: string;
  readonly region: string;
  readonly clusters?: string[];
  readonly roleArn: string;
  readonly defaults?: NonNullable<ReconcilerFanOutProps['targets']>[number]['defaults'];
}

/** The `targets` prop with each target's default role ARN (`ecs-reconciler-target` in its account). */
export function targetDeclarations(props: ReconcilerFanOutProps): TargetDeclaration[] {
  return (props.targets ?? []).map((t) => ({
    name: t.name,
    account: t.account,
    region: t.region,
    ...(t.clusters ? { clusters: [...t.clusters] } : {}),
    roleArn: t.roleArn ?? defaultTargetRoleArn(t.account, t.region),
    ...(t.defaults ? { defaults: t.defaults } : {}),
  }));
}

/** The fan-out queues. */
export interface FanOutQueues {
  readonly fanOutQueue: sqs.Queue;
  readonly fanOutDeadLetterQueue: sqs.Queue;
}

/** The fan-out queue (`FanOut`) and its dead-letter queue (`FanOutDeadLetters`). */
export function createFanOutQueues(scope: Construct, settings: ResolvedSettings): FanOutQueues {
  const fanOutDeadLetterQueue = deadLetterQueue(scope, 'FanOutDeadLetters');
  const fanOutQueue = reconcilerQueue(scope, 'FanOut', {
    // Lambda Developer Guide ("Creating and configuring an Amazon SQS event source mapping"):
    // at least six times the function timeout. A message back after a timed-out invocation is
    // dropped as stale by the function.
    visibilityTimeout: Duration.seconds(settings.timeoutSeconds * SQS_EVENT_SOURCE_VISIBILITY_FACTOR),
    retentionPeriod: Duration.hours(1),
    deadLetterQueue: { queue: fanOutDeadLetterQueue, maxReceiveCount: SQS_EVENT_SOURCE_MAX_RECEIVES },
  });
  return { fanOutQueue, fanOutDeadLetterQueue };
}

/**
 * The mapping (`FanOutMapping`, one target per invocation, `fanOutConcurrency` at once) and what
 * the function needs: the queue, the target roles (those of the prop, and `ecs-reconciler-target`
 * in any account for targets declared by table items; each trusts this role only), and the
 * `#target` items.
 */
export function wireFanOut(
  scope: Construct,
  settings: ResolvedSettings,
  w: { readonly fn: lambda.IFunction; readonly role: iam.Role; readonly table: dynamodb.ITable; readonly queue: sqs.Queue; readonly targets: readonly TargetDeclaration[] },
): void {
  const stack = Stack.of(scope);
  new lambda.EventSourceMapping(scope, 'FanOutMapping', {
    target: w.fn,
    eventSourceArn: w.queue.queueArn,
    // One target per invocation: its own time, lease and failure.
    batchSize: 1,
    maxConcurrency: settings.fanOutConcurrency,
  });
  // The mapping polls with the function's role (Lambda Developer Guide, SQS execution role
  // permissions); the function sends the tick's messages.
  w.role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'FanOutQueue',
      actions: ['sqs:SendMessage', 'sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'],
      resources: [w.queue.queueArn],
    }),
  );
  w.role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'AssumeTargetRoles',
      actions: ['sts:AssumeRole'],
      resources: [...new Set([...w.targets.map((t) => t.roleArn), `arn:${stack.partition}:iam::*:role/${DEFAULT_TARGET_ROLE_NAME}`])],
    }),
  );
  w.role.addToPolicy(new iam.PolicyStatement({ sid: 'TargetItems', actions: ['dynamodb:Query'], resources: [w.table.tableArn] }));
  const policy = w.role.node.tryFindChild('DefaultPolicy');
  Validations.of(policy ?? w.role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:iam::*:role/${DEFAULT_TARGET_ROLE_NAME}]`,
    reason:
      'Targets may be declared at run time by #target items: the function may assume the role of that one name in any account, and each such role trusts this function role only (ReconcilerTargetRole).',
  });
}

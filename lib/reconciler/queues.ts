/**
 * What every queue of the reconciler shares: SSE-SQS, TLS only, and a resource policy that lets
 * only the function (and, for the event queues, EventBridge) send into it.
 */
import { Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

/**
 * Lambda Developer Guide ("Creating and configuring an Amazon SQS event source mapping"): a queue
 * an event source mapping reads has a visibility timeout of at least six times the function
 * timeout; and several receives before the dead-letter queue, so that a throttled or timed-out
 * batch is tried again (the guide's error handling for SQS asks for a `maxReceiveCount` of 5).
 */
export const SQS_EVENT_SOURCE_VISIBILITY_FACTOR = 6;
export const SQS_EVENT_SOURCE_MAX_RECEIVES = 5;

/** A queue encrypted with SSE-SQS (EventBridge can deliver into it without a key policy) and TLS only. */
export function reconcilerQueue(scope: Construct, id: string, props: Omit<sqs.QueueProps, 'encryption' | 'enforceSSL'>): sqs.Queue {
  return new sqs.Queue(scope, id, { encryption: sqs.QueueEncryption.SQS_MANAGED, enforceSSL: true, ...props });
}

/** A dead-letter or failure queue: messages kept 14 days for people to read. */
export function deadLetterQueue(scope: Construct, id: string): sqs.Queue {
  return reconcilerQueue(scope, id, { retentionPeriod: Duration.days(14) });
}

/**
 * Denies `sqs:SendMessage` on `queue` to every principal but the function's role (its
 * `aws:PrincipalArn`, which a session of the role carries as the role's ARN) and, with
 * `services`, AWS service principals (`aws:PrincipalIsAWSService`), which still need the
 * queue's own Allow to send (IAM User Guide, "AWS global condition context keys"). An explicit
 * Deny in the resource policy wins over any identity policy of the account (IAM User Guide,
 * "Policy evaluation logic"), so no other role or user can put a forged message in the queue.
 */
export function acceptMessagesOnlyFromFunction(queue: sqs.Queue, role: iam.IRole, services: boolean): void {
  queue.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: services ? 'SendOnlyByEventBridgeOrTheReconcilerFunction' : 'SendOnlyByTheReconcilerFunction',
      effect: iam.Effect.DENY,
      principals: [new iam.AnyPrincipal()],
      actions: ['sqs:SendMessage'],
      resources: [queue.queueArn],
      conditions: {
        ArnNotEquals: { 'aws:PrincipalArn': role.roleArn },
        ...(services ? { BoolIfExists: { 'aws:PrincipalIsAWSService': 'false' } } : {}),
      },
    }),
  );
}

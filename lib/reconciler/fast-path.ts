/**
 * The fast path: the spec table's DynamoDB stream triggers a pass restricted to the edited
 * services within seconds; the schedule stays and repairs lost records.
 */
import { Duration, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as eventSources from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { PARTITION_KEY, RESERVED_PARTITIONS } from '../../lambda/adapters/dynamo-spec-store';
import { EcsReconcilerPropsError } from './errors';
import type { ReconcilerSpecTableProps, ReconcilerTriggerProps } from './props';
import { deadLetterQueue } from './queues';

/** Whether the fast path is on: `fastPath`, else for `existingTable` whether it has a stream, else true. */
export function fastPathOn(props: ReconcilerTriggerProps & ReconcilerSpecTableProps): boolean {
  return props.fastPath ?? (props.existingTable ? props.existingTable.tableStreamArn !== undefined : true);
}

/**
 * The stream's event source mapping (`FastPath`), its failure queue (`FastPathFailures`) and the
 * stream reads of the function's role.
 * @returns the failure queue.
 * @throws EcsReconcilerPropsError when the table has no stream.
 */
export function createFastPath(scope: Construct, table: dynamodb.ITable, fn: lambda.IFunction, role: iam.Role): sqs.Queue {
  if (!table.tableStreamArn) {
    throw new EcsReconcilerPropsError([
      '`fastPath` needs the spec table\'s stream: give an `existingTable` with a stream (NEW_AND_OLD_IMAGES) and its `tableStreamArn`, or set `fastPath: false`.',
    ]);
  }
  // Where Lambda puts the description of a batch it gave up on (which shard, which sequence
  // numbers: the records themselves stay in the stream for 24 hours).
  const failures = deadLetterQueue(scope, 'FastPathFailures');
  Validations.of(failures).acknowledge({
    id: 'AwsSolutions-SQS3',
    reason: 'This queue is itself the failure destination of the stream fast path (nothing reads it but people); its messages are alarmed and kept 14 days.',
  });
  // The mapping and its grants by hand: `DynamoEventSource` grants the table key's kms:Decrypt
  // without the kms:ViaService condition the function's other key grant has.
  new lambda.EventSourceMapping(scope, 'FastPath', {
    target: fn,
    eventSourceArn: table.tableStreamArn,
    startingPosition: lambda.StartingPosition.LATEST,
    batchSize: 100,
    // Records are only hints: a failed batch is tried twice more, halved on each function
    // error so one bad record cannot hold its neighbours back (splitting spends no retry),
    // then its description goes to the failure queue (alarmed) and the schedule's pass
    // repairs what it named (Lambda Developer Guide, "Retaining discarded records for a
    // DynamoDB event source in Lambda").
    retryAttempts: 2,
    maxRecordAge: Duration.minutes(5),
    bisectBatchOnError: true,
    onFailure: new eventSources.SqsDlq(failures),
    // The reconciler's own items (lease, cursor, prune confirmations) never invoke the function:
    // a scheduled pass writes its lease twice (Lambda Developer Guide, "Using event filtering
    // with a DynamoDB event source": filter on `dynamodb.Keys`; "Not" is `anything-but` a list).
    filters: [lambda.FilterCriteria.filter({ dynamodb: { Keys: { [PARTITION_KEY]: { S: [{ 'anything-but': [...RESERVED_PARTITIONS] }] } } } })],
  });
  // Lambda's event source mapping reads the stream with the function's role (Lambda Developer
  // Guide, "Using AWS Lambda with Amazon DynamoDB", execution role permissions).
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'SpecTableStreamRead',
      actions: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'],
      resources: [table.tableStreamArn],
    }),
  );
  // ListStreams supports no resource-level permission (Service Authorization Reference).
  role.addToPolicy(new iam.PolicyStatement({ sid: 'SpecTableStreamList', actions: ['dynamodb:ListStreams'], resources: ['*'] }));
  return failures;
}

/**
 * The spec table (created, or `existingTable`) and the durable task definition description cache.
 */
import { RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { HISTORY_TTL_ATTRIBUTE } from '../../lambda/adapters/spec-history';
import { EcsReconcilerPropsError } from './errors';
import type { ReconcilerSpecTableProps, ReconcilerTriggerProps } from './props';

/** The two tables of a reconciler. */
export interface SpecTables {
  readonly table: dynamodb.ITable;
  readonly taskDefinitionCacheTable: dynamodb.Table;
}

/**
 * The spec table (`Specs`: partition key `cluster`, sort key `service`, strings; on-demand,
 * point-in-time recovery, deletion protection, RETAIN, the AWS managed key unless
 * `tableEncryptionKey`; a NEW_AND_OLD_IMAGES stream unless `fastPath: false`), or `existingTable`
 * after checking its keys; and the task definition cache (`TaskDefinitionCache`).
 * @throws EcsReconcilerPropsError when `existingTable` has other keys.
 */
export function createSpecTables(scope: Construct, props: ReconcilerSpecTableProps & ReconcilerTriggerProps): SpecTables {
  const encryption = props.tableEncryptionKey
    ? { encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED, encryptionKey: props.tableEncryptionKey }
    : { encryption: dynamodb.TableEncryption.AWS_MANAGED };
  let table: dynamodb.ITable;
  if (props.existingTable) {
    checkTableSchema(props.existingTable);
    table = props.existingTable;
  } else {
    table = new dynamodb.Table(scope, 'Specs', {
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
      ...encryption,
      // Spec history items expire by TTL (lambda/adapters/spec-history.ts, docs/history.md).
      timeToLiveAttribute: HISTORY_TTL_ATTRIBUTE,
      ...props.tableProps,
      // The fast path reads both images to tell a spec edit from the reconciler's own status write.
      ...(props.fastPath !== false ? { stream: dynamodb.StreamViewType.NEW_AND_OLD_IMAGES } : {}),
      partitionKey: { name: 'cluster', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'service', type: dynamodb.AttributeType.STRING },
    });
  }
  const taskDefinitionCacheTable = new dynamodb.Table(scope, 'TaskDefinitionCache', {
    partitionKey: { name: 'arn', type: dynamodb.AttributeType.STRING },
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    timeToLiveAttribute: 'expiresAt',
    // Only a cache of what ECS answers: losing it costs a new container's describes, nothing else.
    removalPolicy: RemovalPolicy.DESTROY,
    ...encryption,
  });
  Validations.of(taskDefinitionCacheTable).acknowledge({
    id: 'AwsSolutions-DDB3',
    reason: 'A cache of immutable ECS task definition descriptions, rebuilt from ECS when lost: point-in-time recovery would restore nothing of value.',
  });
  return { table, taskDefinitionCacheTable };
}

/**
 * Checks the key schema of an `existingTable` created in this app (`dynamodb.Table`); an imported
 * table cannot be checked and is trusted.
 * @throws EcsReconcilerPropsError when the keys are not `cluster` / `service` strings.
 */
function checkTableSchema(table: dynamodb.ITable): void {
  if (!(table instanceof dynamodb.Table)) return;
  // schemaV2: the key lists (composite keys may have several attributes); `schema()` is deprecated.
  const schema = table.schemaV2();
  const [partitionKey, ...morePartitionKeys] = schema.partitionKeys;
  const [sortKey, ...moreSortKeys] = schema.sortKeys;
  const ok =
    morePartitionKeys.length === 0 &&
    moreSortKeys.length === 0 &&
    partitionKey?.name === 'cluster' &&
    partitionKey.type === dynamodb.AttributeType.STRING &&
    sortKey?.name === 'service' &&
    sortKey.type === dynamodb.AttributeType.STRING;
  if (!ok) {
    const keys = (list: readonly dynamodb.Attribute[]) => list.map((k) => k.name).join(' + ');
    throw new EcsReconcilerPropsError([
      `\`existingTable\` has keys ${keys(schema.partitionKeys)}${schema.sortKeys.length > 0 ? ` / ${keys(schema.sortKeys)}` : ''}: the spec table needs partition key \`cluster\` and sort key \`service\`, both strings.`,
    ]);
  }
}

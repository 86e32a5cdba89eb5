/**
 * The construct's fast path: the spec table's stream (NEW_AND_OLD_IMAGES) and
 * the event source mapping that runs the function on it; off with `fastPath: false`; an existing
 * table without a stream is refused when the fast path is asked for.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { describe, expect, it } from 'vitest';
import { EcsReconciler, type EcsReconcilerProps } from '../../lib/ecs-reconciler';
import { CURSOR_KEY, LEASE_KEY, PRUNE_CONFIRMATION_PARTITION, RESERVED_PARTITIONS } from '../../lambda/adapters/dynamo-spec-store';
import { matchesPattern } from '../../local/eventbridge';
import { aStreamRecord } from '../runtime/support';

function build(props: Partial<EcsReconcilerProps> = {}, more: (s: Stack) => Partial<EcsReconcilerProps> = () => ({})) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Test');
  const reconciler = new EcsReconciler(stack, 'Reconciler', { clusters: ['web'], defaultSubnets: ['subnet-0a1'], defaultSecurityGroups: ['sg-0c3'], ...props, ...more(stack) });
  return { reconciler, template: Template.fromStack(stack) };
}

/** The event source mappings on a DynamoDB stream (the events fast path has one on its queue). */
function streamMappings(template: Template): Record<string, unknown>[] {
  return Object.values(template.findResources('AWS::Lambda::EventSourceMapping'))
    .map((r) => r.Properties as Record<string, unknown>)
    .filter((p) => JSON.stringify(p.EventSourceArn).includes('StreamArn') || p.StartingPosition !== undefined);
}

const specKeys = (): dynamodb.TableProps => ({
  partitionKey: { name: 'cluster', type: dynamodb.AttributeType.STRING },
  sortKey: { name: 'service', type: dynamodb.AttributeType.STRING },
});

describe('fast path (the spec table stream)', () => {
  it('a new table streams both images to the function, a bounded retry, newest records first', () => {
    const { template, reconciler } = build();
    expect(reconciler.fastPath).toBe(true);
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: Match.arrayWith([{ AttributeName: 'cluster', KeyType: 'HASH' }]),
      StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
    });
    expect(streamMappings(template)).toHaveLength(1);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^ReconcilerSpecs'), 'StreamArn'] },
      FunctionName: { Ref: Match.stringLikeRegexp('^ReconcilerFunction') },
      StartingPosition: 'LATEST',
      BatchSize: 100,
      MaximumRetryAttempts: 2,
      MaximumRecordAgeInSeconds: 300,
      BisectBatchOnFunctionError: true,
    });
  });

  it("the stream's filter drops the reconciler's own items (lease, cursor, prune confirmations) before they invoke the function", () => {
    // Prepare
    const { template } = build();
    const [mapping] = streamMappings(template) as { FilterCriteria?: { Filters: { Pattern: string }[] } }[];
    const patterns = (mapping.FilterCriteria?.Filters ?? []).map((f) => JSON.parse(f.Pattern) as Record<string, unknown>);
    // Lambda sends a record that matches any filter (Lambda Developer Guide, "Control which events Lambda sends to your function").
    const sent = (record: unknown) => patterns.some((p) => matchesPattern(p, record));
    const rec = (cluster: string, service: string) => aStreamRecord('MODIFY', { cluster, service }, { old: { cluster, service }, new: { cluster, service, x: 1 } });

    // Assess
    expect(patterns).toEqual([{ dynamodb: { Keys: { cluster: { S: [{ 'anything-but': [...RESERVED_PARTITIONS] }] } } } }]);
    expect(sent(rec(LEASE_KEY.cluster, LEASE_KEY.service))).toBe(false);
    expect(sent(rec(CURSOR_KEY.cluster, CURSOR_KEY.service))).toBe(false);
    expect(sent(rec(PRUNE_CONFIRMATION_PARTITION, 'web'))).toBe(false);
    expect(sent(rec('web', 'api'))).toBe(true);
    expect(sent(aStreamRecord('REMOVE', { cluster: 'web', service: 'api' }, { old: { cluster: 'web', service: 'api' } }))).toBe(true);
  });

  it('fastPath: false: no stream, no mapping', () => {
    const { template, reconciler } = build({ fastPath: false });
    expect(reconciler.fastPath).toBe(false);
    expect(streamMappings(template)).toHaveLength(0);
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: Match.arrayWith([{ AttributeName: 'cluster', KeyType: 'HASH' }]),
      StreamSpecification: Match.absent(),
    });
  });

  it('an existing table with a stream gets the mapping; one without is left on the schedule alone', () => {
    const withStream = build({}, (s) => ({ existingTable: new dynamodb.Table(s, 'Mine', { ...specKeys(), stream: dynamodb.StreamViewType.NEW_AND_OLD_IMAGES }) }));
    expect(streamMappings(withStream.template)).toHaveLength(1);
    const without = build({}, (s) => ({ existingTable: dynamodb.Table.fromTableName(s, 'Imported', 'team-specs') }));
    expect(without.reconciler.fastPath).toBe(false);
    expect(streamMappings(without.template)).toHaveLength(0);
  });

  it('fastPath: true on an existing table without a stream is refused with a sentence', () => {
    expect(() => build({ fastPath: true }, (s) => ({ existingTable: dynamodb.Table.fromTableName(s, 'Imported', 'team-specs') }))).toThrow(
      /`fastPath` needs the spec table's stream/,
    );
  });
});

/**
 * What each EventBridge event tells the pass (lambda/core/events.ts), on the AWS documents' own
 * examples (test/fixtures/events/README.md) and on variants ECS and CloudTrail also produce.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clusterName, familyOf, hintOf, keysOfEvents, serviceKeyOf } from '../lambda/core/events';
import { bodiesOfSqsRecords, isSqsEvent } from '../lambda/adapters/sqs-records';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'events');
const raw = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');
const edit = (name: string, change: (e: any) => void): string => {
  const e = JSON.parse(raw(name));
  change(e);
  return JSON.stringify(e);
};
const SERVICE = { cluster: 'default', service: 'servicetest' };
const ROLE = 'arn:aws:iam::111122223333:role/ecs-reconciler-fn';

describe('hintOf', () => {
  it.each([
    { case: 'ECS Service Action', body: raw('ecs-service-action.json') },
    { case: 'ECS Deployment State Change (cluster from the service ARN)', body: raw('ecs-deployment-state-change.json') },
    { case: 'ECS Task State Change, STOPPED, group service:NAME', body: raw('ecs-task-state-change-stopped.json') },
    { case: 'CloudTrail UpdateService', body: raw('cloudtrail-update-service.json') },
    { case: 'CloudTrail CreateService (cluster as an ARN, serviceName)', body: raw('cloudtrail-create-service.json') },
    { case: 'CloudTrail DeleteService (service as an ARN)', body: raw('cloudtrail-delete-service.json') },
    { case: 'CloudTrail TagResource of a service', body: raw('cloudtrail-tag-resource.json') },
    { case: 'CloudTrail UntagResource of a service', body: raw('cloudtrail-untag-resource.json') },
    { case: 'CloudTrail StopTask (service from responseElements.task.group)', body: raw('cloudtrail-stop-task.json') },
    {
      case: 'CloudTrail UpdateService without cluster (the default cluster)',
      body: edit('cloudtrail-update-service.json', (e) => delete e.detail.requestParameters.cluster),
    },
    {
      case: 'ECS Service Action with an old-format service ARN (service/NAME)',
      body: edit('ecs-service-action.json', (e) => (e.resources = ['arn:aws:ecs:us-west-2:111122223333:service/servicetest'])),
    },
  ])('$case names the service', ({ body }) => {
    expect(hintOf(body)).toMatchObject({ kind: 'service', key: SERVICE });
  });

  it('RegisterTaskDefinition names the family', () => {
    expect(hintOf(raw('cloudtrail-register-task-definition.json'))).toMatchObject({ kind: 'family', family: 'web' });
  });

  it('the construct\'s schedule rule is a heartbeat with its time', () => {
    expect(hintOf(raw('scheduled-event.json'))).toEqual({ kind: 'heartbeat', at: new Date('2015-10-08T16:53:06Z') });
  });

  it.each([
    { case: 'a task that is not STOPPED', body: edit('ecs-task-state-change-stopped.json', (e) => (e.detail.lastStatus = 'RUNNING')), why: /not STOPPED/ },
    { case: 'a task not started by a service', body: edit('ecs-task-state-change-stopped.json', (e) => (e.detail.group = 'family:web')), why: /not a service/ },
    { case: 'the reconciler\'s own UpdateService', body: edit('cloudtrail-update-service.json', (e) => (e.detail.userIdentity.sessionContext.sessionIssuer.arn = ROLE)), why: /reconciler itself/ },
    { case: 'a failed call', body: edit('cloudtrail-update-service.json', (e) => (e.detail.errorCode = 'AccessDenied')), why: /failed/ },
    { case: 'a read call', body: edit('cloudtrail-update-service.json', (e) => (e.detail.eventName = 'DescribeServices')), why: /not a write/ },
    { case: 'another service\'s CloudTrail event', body: edit('cloudtrail-update-service.json', (e) => (e.detail.eventSource = 's3.amazonaws.com')), why: /not an ECS call/ },
    { case: 'TagResource of a task definition', body: edit('cloudtrail-tag-resource.json', (e) => (e.detail.requestParameters.resourceArn = 'arn:aws:ecs:us-west-2:111122223333:task-definition/web:3')), why: /not a service/ },
    { case: 'StopTask without a recorded response', body: edit('cloudtrail-stop-task.json', (e) => delete e.detail.responseElements), why: /StopTask/ },
    { case: 'another source', body: JSON.stringify({ 'detail-type': 'EC2 Instance State-change Notification', source: 'aws.ec2', detail: {} }), why: /source aws.ec2/ },
    { case: 'not JSON', body: '{"detail-type": ', why: /not JSON/ },
    { case: 'JSON that is no event', body: '[1,2]', why: /not an EventBridge event/ },
    { case: 'a prototype key for a cluster', body: edit('ecs-service-action.json', (e) => (e.resources = ['__proto__'])), why: /without a service/ },
  ])('$case is ignored', ({ body, why }) => {
    const h = hintOf(body, { ignorePrincipals: [ROLE] });
    expect(h.kind).toBe('ignored');
    expect(h.kind === 'ignored' && h.why).toMatch(why);
  });
});

describe('names from ARNs', () => {
  it.each([
    { v: 'arn:aws:ecs:us-west-2:111122223333:cluster/prod', want: 'prod' },
    { v: 'prod', want: 'prod' },
    { v: undefined, want: 'default' },
    { v: 'arn:aws:ecs:us-west-2:111122223333:service/prod/web', want: undefined },
  ])('clusterName($v)', ({ v, want }) => expect(clusterName(v)).toBe(want));

  it.each([
    { v: 'arn:aws:ecs:us-west-2:1:service/prod/web', c: undefined, want: { cluster: 'prod', service: 'web' } },
    { v: 'arn:aws:ecs:us-west-2:1:service/web', c: 'prod', want: { cluster: 'prod', service: 'web' } },
    { v: 'web', c: 'prod', want: { cluster: 'prod', service: 'web' } },
    { v: 'arn:aws:ecs:us-west-2:1:task/prod/abc', c: 'prod', want: undefined },
  ])('serviceKeyOf($v, $c)', ({ v, c, want }) => expect(serviceKeyOf(v, c)).toEqual(want));

  it('familyOf', () => {
    expect(familyOf('arn:aws:ecs:us-west-2:1:task-definition/web-app:13')).toBe('web-app');
    expect(familyOf('arn:aws:ecs:us-west-2:1:service/a/b')).toBeUndefined();
  });
});

describe('keysOfEvents (the events fast path batch)', () => {
  it('names each service once in first-seen order; counts what names none and the families left to the scheduled pass', () => {
    // Prepare
    const other = edit('ecs-service-action.json', (e) => (e.resources = ['arn:aws:ecs:us-west-2:111122223333:service/default/other']));
    const bodies = [
      raw('ecs-task-state-change-stopped.json'),
      other,
      raw('ecs-service-action.json'),
      raw('cloudtrail-register-task-definition.json'),
      raw('scheduled-event.json'),
      edit('cloudtrail-update-service.json', (e) => (e.detail.userIdentity.sessionContext.sessionIssuer.arn = ROLE)),
      'not json',
    ];

    // Act
    const out = keysOfEvents(bodies, { ignorePrincipals: [ROLE] });

    // Assess
    expect(out).toEqual({ keys: [SERVICE, { cluster: 'default', service: 'other' }], ignored: 3, families: 1 });
  });

  it('tells a batch of the events queue from a stream batch and the schedule', () => {
    expect(isSqsEvent({ Records: [{ eventSource: 'aws:sqs', body: '{}' }] })).toBe(true);
    expect(isSqsEvent({ Records: [{ eventSource: 'aws:dynamodb' }] })).toBe(false);
    expect(isSqsEvent({ Records: [] })).toBe(false);
    expect(isSqsEvent({ source: 'aws.events' })).toBe(false);
    expect(bodiesOfSqsRecords([{ body: 'a' }, { body: undefined }] as never)).toEqual(['a']);
  });
});

/**
 * Events as hints: what an EventBridge event delivered to the reconciler's queue
 * says about which service to re-read. Nothing else is taken from an event: the pass re-reads the
 * service from ECS and plans from what it reads (level-triggered), so a duplicated, late, reordered
 * or lost event is harmless.
 *
 * Shapes (the EventBridge envelope: `version`, `id`, `detail-type`, `source`, `account`, `time`,
 * `region`, `resources`, `detail`) follow the AWS documents, kept as fixtures in
 * `test/fixtures/events/` with their source:
 * - `ECS Service Action` and `ECS Deployment State Change` (source `aws.ecs`): the service's ARN in
 *   `resources`, `detail.clusterArn` (Amazon ECS Developer Guide, "Amazon ECS service action events",
 *   "Amazon ECS service deployment state change events");
 * - `ECS Task State Change` (source `aws.ecs`): `detail.group` is `service:NAME` for a service's
 *   task, `detail.clusterArn`; only `lastStatus: STOPPED` is a hint ("Amazon ECS task state change
 *   events");
 * - `AWS API Call via CloudTrail` (source `aws.ecs`, `detail.eventSource` `ecs.amazonaws.com`):
 *   `detail.eventName`, `detail.requestParameters`, `detail.responseElements`,
 *   `detail.userIdentity` (EventBridge User Guide, "AWS service events delivered via AWS
 *   CloudTrail"; AWS CloudTrail User Guide, "CloudTrail record contents");
 * - `Scheduled Event` (source `aws.events`): the construct's heartbeat rule, which proves that the
 *   rules deliver into the queue (EventBridge User Guide, "Creating a rule that runs on a schedule").
 */
import { own } from './dict';
import type { ServiceKey } from './types';

/** What one event tells the pass. */
export type EventHint =
  /** Re-read this service. */
  | { readonly kind: 'service'; readonly key: ServiceKey; readonly detailType: string }
  /** Someone registered a revision of this family: re-read the services that run the family. */
  | { readonly kind: 'family'; readonly family: string; readonly detailType: string }
  /** The heartbeat rule fired at `at`: the queue is fed. */
  | { readonly kind: 'heartbeat'; readonly at: Date }
  /** Nothing to re-read (`why` says what the event was). */
  | { readonly kind: 'ignored'; readonly why: string };

/** Options of {@link hintOf}. */
export interface HintOptions {
  /**
   * IAM role ARNs whose own API calls are not hints (the reconciler's role: its writes are the
   * plan it just applied). Matched against `userIdentity.sessionContext.sessionIssuer.arn` and
   * `userIdentity.arn`.
   */
  readonly ignorePrincipals?: readonly string[];
}

/** `detail-type`s the construct's rules deliver. */
export const EVENT_DETAIL_TYPES = {
  serviceAction: 'ECS Service Action',
  deploymentStateChange: 'ECS Deployment State Change',
  taskStateChange: 'ECS Task State Change',
  apiCall: 'AWS API Call via CloudTrail',
  scheduled: 'Scheduled Event',
} as const;

/** ECS API calls by others whose CloudTrail events are hints (the construct's rule matches these). */
export const ECS_WRITE_EVENT_NAMES = ['CreateService', 'UpdateService', 'DeleteService', 'TagResource', 'UntagResource', 'StopTask', 'RegisterTaskDefinition'] as const;

/**
 * An EventBridge event pattern, as JSON (EventBridge User Guide, "Amazon EventBridge event
 * patterns"): a field's list of values matches any of them; `{ prefix }` matches the start of a string.
 */
export type EventPattern = { readonly [field: string]: readonly (string | { readonly prefix: string })[] | EventPattern };

/**
 * The rules that feed the events queue, by construct id: what the construct deploys (`lib/`) and
 * what the local run's bus matches (`local/eventbridge.ts`), so both deliver the same events. The
 * heartbeat (a schedule, no pattern) is the construct's `EventsHeartbeat` rule.
 */
export const EVENT_RULES = {
  EcsServiceEvents: {
    description: 'ecs-reconciler hints: ECS service actions and deployment state changes',
    pattern: { source: ['aws.ecs'], 'detail-type': [EVENT_DETAIL_TYPES.serviceAction, EVENT_DETAIL_TYPES.deploymentStateChange] },
  },
  EcsStoppedTasks: {
    description: 'ecs-reconciler hints: stopped tasks of services',
    pattern: {
      source: ['aws.ecs'],
      'detail-type': [EVENT_DETAIL_TYPES.taskStateChange],
      detail: { lastStatus: ['STOPPED'], group: [{ prefix: 'service:' }] },
    },
  },
  EcsWrites: {
    description: 'ecs-reconciler hints: ECS writes recorded by CloudTrail',
    pattern: {
      source: ['aws.ecs'],
      'detail-type': [EVENT_DETAIL_TYPES.apiCall],
      detail: { eventSource: ['ecs.amazonaws.com'], eventName: [...ECS_WRITE_EVENT_NAMES] },
    },
  },
} as const satisfies Record<string, { readonly description: string; readonly pattern: EventPattern }>;

type Json = Record<string, unknown>;

function obj(v: unknown): Json | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

/** Own property of a parsed JSON object (never an inherited member). */
function field(o: Json | undefined, name: string): unknown {
  return own(o, name);
}

/** The resource part of an ARN (`service/c/s`), or undefined when `s` is not an ARN. */
function arnResource(s: string): string | undefined {
  if (!s.startsWith('arn:')) return undefined;
  const parts = s.split(':');
  return parts.length >= 6 ? parts.slice(5).join(':') : undefined;
}

/**
 * A cluster's name from a name or a cluster ARN (`arn:aws:ecs:REGION:ACCOUNT:cluster/NAME`);
 * ECS's `default` when absent (the API's default cluster).
 */
export function clusterName(v: unknown): string | undefined {
  if (v === undefined || v === null) return 'default';
  const s = str(v);
  if (!s) return undefined;
  const res = arnResource(s);
  if (res === undefined) return s;
  return res.startsWith('cluster/') ? res.slice('cluster/'.length) || undefined : undefined;
}

/**
 * A service key from a service ARN (`service/CLUSTER/NAME`; the old `service/NAME` takes
 * `cluster`) or from a name in `cluster`.
 */
export function serviceKeyOf(service: unknown, cluster: string | undefined): ServiceKey | undefined {
  const s = str(service);
  if (!s) return undefined;
  const res = arnResource(s);
  if (res === undefined) return cluster ? { cluster, service: s } : undefined;
  if (!res.startsWith('service/')) return undefined;
  const rest = res.slice('service/'.length).split('/');
  if (rest.length === 2 && rest[0] && rest[1]) return { cluster: rest[0], service: rest[1] };
  if (rest.length === 1 && rest[0] && cluster) return { cluster, service: rest[0] };
  return undefined;
}

/**
 * What `body` (one queue message: an EventBridge event as JSON) tells the pass. Never throws:
 * anything unreadable or unknown is `ignored` with the reason.
 */
export function hintOf(body: string, options: HintOptions = {}): EventHint {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { kind: 'ignored', why: 'not JSON' };
  }
  const event = obj(parsed);
  const detailType = str(field(event, 'detail-type'));
  const source = str(field(event, 'source'));
  const detail = obj(field(event, 'detail'));
  if (!event || !detailType || !source) return { kind: 'ignored', why: 'not an EventBridge event' };
  if (detailType === EVENT_DETAIL_TYPES.scheduled && source === 'aws.events') {
    const at = new Date(str(field(event, 'time')) ?? '');
    return Number.isNaN(at.getTime()) ? { kind: 'ignored', why: 'heartbeat without a valid time' } : { kind: 'heartbeat', at };
  }
  if (source !== 'aws.ecs') return { kind: 'ignored', why: `source ${source}` };
  const resources = field(event, 'resources');
  switch (detailType) {
    case EVENT_DETAIL_TYPES.serviceAction:
    case EVENT_DETAIL_TYPES.deploymentStateChange: {
      const cluster = clusterName(field(detail, 'clusterArn'));
      const arn = Array.isArray(resources) ? resources.find((r) => typeof r === 'string' && arnResource(r)?.startsWith('service/')) : undefined;
      const key = serviceKeyOf(arn, cluster);
      return key ? { kind: 'service', key, detailType } : { kind: 'ignored', why: `${detailType} without a service` };
    }
    case EVENT_DETAIL_TYPES.taskStateChange: {
      if (field(detail, 'lastStatus') !== 'STOPPED') return { kind: 'ignored', why: `${detailType}: not STOPPED` };
      const group = str(field(detail, 'group'));
      if (!group?.startsWith('service:')) return { kind: 'ignored', why: `${detailType}: not a service's task` };
      const key = serviceKeyOf(group.slice('service:'.length), clusterName(field(detail, 'clusterArn')));
      return key ? { kind: 'service', key, detailType } : { kind: 'ignored', why: `${detailType} without a cluster` };
    }
    case EVENT_DETAIL_TYPES.apiCall:
      return apiCallHint(detail, options);
    default:
      return { kind: 'ignored', why: `detail-type ${detailType}` };
  }
}

function apiCallHint(detail: Json | undefined, options: HintOptions): EventHint {
  const detailType = EVENT_DETAIL_TYPES.apiCall;
  const eventName = str(field(detail, 'eventName'));
  if (field(detail, 'eventSource') !== 'ecs.amazonaws.com' || !eventName) return { kind: 'ignored', why: `${detailType}: not an ECS call` };
  if (field(detail, 'errorCode') !== undefined) return { kind: 'ignored', why: `${eventName} failed: nothing changed` };
  const who = obj(field(detail, 'userIdentity'));
  const issuer = str(field(obj(field(obj(field(who, 'sessionContext')), 'sessionIssuer')), 'arn'));
  const ignore = options.ignorePrincipals ?? [];
  if ((issuer && ignore.includes(issuer)) || ignore.includes(str(field(who, 'arn')) ?? '')) {
    return { kind: 'ignored', why: `${eventName} by the reconciler itself` };
  }
  const req = obj(field(detail, 'requestParameters'));
  const cluster = clusterName(field(req, 'cluster'));
  const service = (key: ServiceKey | undefined): EventHint =>
    key ? { kind: 'service', key, detailType } : { kind: 'ignored', why: `${eventName} without a service` };
  switch (eventName) {
    case 'CreateService':
      return service(serviceKeyOf(field(req, 'serviceName'), cluster));
    case 'UpdateService':
    case 'DeleteService':
      return service(serviceKeyOf(field(req, 'service'), cluster));
    case 'TagResource':
    case 'UntagResource': {
      const arn = str(field(req, 'resourceArn'));
      const key = arn && arnResource(arn)?.startsWith('service/') ? serviceKeyOf(arn, undefined) : undefined;
      return key ? { kind: 'service', key, detailType } : { kind: 'ignored', why: `${eventName} of a resource that is not a service` };
    }
    case 'StopTask': {
      // The request names only the task; its service is in the response's task.group.
      const task = obj(field(obj(field(detail, 'responseElements')), 'task'));
      const group = str(field(task, 'group'));
      if (!group?.startsWith('service:')) return { kind: 'ignored', why: 'StopTask of a task that is not a service\'s (or no response recorded)' };
      return service(serviceKeyOf(group.slice('service:'.length), clusterName(field(task, 'clusterArn') ?? field(req, 'cluster'))));
    }
    case 'RegisterTaskDefinition': {
      const family = str(field(req, 'family'));
      return family ? { kind: 'family', family, detailType } : { kind: 'ignored', why: 'RegisterTaskDefinition without a family' };
    }
    default:
      return { kind: 'ignored', why: `${eventName} is not a write the reconciler watches` };
  }
}

/** What a batch of events names, for the events fast path ({@link keysOfEvents}). */
export interface EventKeys {
  /** Services to re-read, each once, in first-seen order. */
  readonly keys: ServiceKey[];
  /** Events that name no service (heartbeats, the reconciler's own calls, other sources...). */
  readonly ignored: number;
  /**
   * Events that name a task definition family (RegisterTaskDefinition): left to the scheduled
   * pass, which knows which services run the family.
   */
  readonly families: number;
}

/**
 * The services a batch of event bodies (EventBridge events as JSON, e.g. the bodies of the events
 * fast path queue's messages) names, through {@link hintOf}; never throws.
 */
export function keysOfEvents(bodies: readonly string[], options: HintOptions = {}): EventKeys {
  const keys = new Map<string, ServiceKey>();
  let ignored = 0;
  let families = 0;
  for (const body of bodies) {
    const hint = hintOf(body, options);
    if (hint.kind === 'service') {
      const id = `${hint.key.cluster}/${hint.key.service}`;
      if (!keys.has(id)) keys.set(id, hint.key);
    } else if (hint.kind === 'family') families += 1;
    else ignored += 1;
  }
  return { keys: [...keys.values()], ignored, families };
}

/** The family of a task definition ARN (`task-definition/FAMILY:REVISION`), or undefined. */
export function familyOf(taskDefinitionArn: string): string | undefined {
  const res = arnResource(taskDefinitionArn);
  if (!res?.startsWith('task-definition/')) return undefined;
  const fr = res.slice('task-definition/'.length);
  const colon = fr.lastIndexOf(':');
  return colon > 0 ? fr.slice(0, colon) : fr || undefined;
}

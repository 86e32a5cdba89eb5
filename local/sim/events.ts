/**
 * The events ECS puts on the default EventBridge bus, as the simulator emits them: the EventBridge
 * envelope (`version`, `id`, `detail-type`, `source`, `account`, `time`, `region`, `resources`,
 * `detail`; EventBridge User Guide, "Amazon EventBridge events") around
 * - `ECS Service Action` (Amazon ECS Developer Guide, "Amazon ECS service action events"):
 *   SERVICE_STEADY_STATE (INFO), SERVICE_TASK_START_IMPAIRED (WARN), SERVICE_TASK_PLACEMENT_FAILURE
 *   (ERROR, with `reason`);
 * - `ECS Deployment State Change` ("Amazon ECS service deployment state change events"):
 *   SERVICE_DEPLOYMENT_IN_PROGRESS, _COMPLETED (INFO), _FAILED (ERROR), with `deploymentId`,
 *   `updatedAt`, `reason`;
 * - `ECS Task State Change` ("Amazon ECS task state change events"): every change of a task's
 *   `lastStatus` or `desiredStatus`, the task as DescribeTasks shows it with timestamps as ISO
 *   strings and its `version`;
 * - `AWS API Call via CloudTrail` (EventBridge User Guide, "AWS service events delivered via AWS
 *   CloudTrail"; AWS CloudTrail User Guide, "CloudTrail record contents"): every ECS call that is
 *   not a read (EventBridge does not deliver List/Describe/Get calls), with the caller's
 *   `userIdentity`, `requestParameters`, `responseElements` or `errorCode`/`errorMessage`.
 *
 * Examples from those documents are kept in `test/fixtures/events/`; `test/sim/events.test.ts`
 * checks that every event here has their keys and types. This module knows nothing of the
 * reconciler (the simulator is the test oracle): which events matter, and to whom, is for the
 * rules that read the bus (`local/eventbridge.ts`).
 */
import { SeededRandom } from './random';
import type { IamPolicyStatement } from './iam';

/** One event as EventBridge delivers it (the body of an SQS message its rule targets). */
export interface BusEvent {
  readonly version: '0';
  readonly id: string;
  readonly 'detail-type': string;
  readonly source: string;
  readonly account: string;
  /** `YYYY-MM-DDTHH:MM:SSZ`, as EventBridge writes it (no fraction). */
  readonly time: string;
  readonly region: string;
  readonly resources: string[];
  readonly detail: Record<string, unknown>;
}

/**
 * Who made an API call: CloudTrail's `userIdentity` (AWS CloudTrail User Guide, "CloudTrail
 * userIdentity element"). An assumed role carries `sessionContext.sessionIssuer.arn`, the role's ARN.
 */
export interface CallerIdentity {
  readonly type: 'AssumedRole' | 'IAMUser' | 'Root' | 'AWSService';
  readonly principalId: string;
  readonly arn: string;
  readonly accountId: string;
  readonly accessKeyId?: string;
  readonly userName?: string;
  readonly sessionContext?: {
    readonly sessionIssuer: { readonly type: 'Role'; readonly principalId: string; readonly arn: string; readonly accountId: string; readonly userName: string };
    readonly attributes: { readonly creationDate: string; readonly mfaAuthenticated: 'true' | 'false' };
  };
}

/** Who is calling, and with what tool: CloudTrail's identity plus `userAgent` and `sourceIPAddress`. */
export interface Caller {
  readonly identity: CallerIdentity;
  readonly userAgent: string;
  readonly sourceIPAddress: string;
  /**
   * The identity's IAM policy: when given, every ECS call of this caller is evaluated against it
   * and refused with AccessDeniedException as AWS would (`./authorization`, `./iam`); absent, the
   * caller may do anything (a local administrator).
   */
  readonly policy?: readonly IamPolicyStatement[];
}

/** A role session's identity (`arn:aws:sts::ACCOUNT:assumed-role/ROLE/SESSION`, issuer `arn:aws:iam::ACCOUNT:role/ROLE`). */
export function assumedRoleIdentity(accountId: string, roleName: string, sessionName: string, accessKeyId?: string, at = new Date(0)): CallerIdentity {
  const roleId = `AROA${hashId(`${accountId}/${roleName}`)}`;
  return {
    type: 'AssumedRole',
    principalId: `${roleId}:${sessionName}`,
    arn: `arn:aws:sts::${accountId}:assumed-role/${roleName}/${sessionName}`,
    accountId,
    ...(accessKeyId ? { accessKeyId } : {}),
    sessionContext: {
      sessionIssuer: { type: 'Role', principalId: roleId, arn: `arn:aws:iam::${accountId}:role/${roleName}`, accountId, userName: roleName },
      attributes: { creationDate: isoSeconds(at), mfaAuthenticated: 'false' },
    },
  };
}

/** An IAM user's identity (`arn:aws:iam::ACCOUNT:user/NAME`; no session issuer). */
export function iamUserIdentity(accountId: string, userName: string, accessKeyId?: string): CallerIdentity {
  return {
    type: 'IAMUser',
    principalId: `AIDA${hashId(`${accountId}/${userName}`)}`,
    arn: `arn:aws:iam::${accountId}:user/${userName}`,
    accountId,
    ...(accessKeyId ? { accessKeyId } : {}),
    userName,
  };
}

/** A stable 17-character upper-case id from `s` (IAM unique ids look like `AROA` + 17). */
function hashId(s: string): string {
  let h = 2166136261;
  let out = '';
  for (let round = 0; out.length < 17; round++) {
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619) >>> 0;
    h = Math.imul(h ^ round, 16777619) >>> 0;
    out += h.toString(36).toUpperCase();
  }
  return out.slice(0, 17);
}

/** `YYYY-MM-DDTHH:MM:SSZ` (EventBridge's `time`, CloudTrail's `eventTime`). */
export function isoSeconds(at: Date | number): string {
  return new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** ECS calls whose names start so are reads: CloudTrail records them, EventBridge does not deliver them. */
const READ_PREFIXES = ['List', 'Describe', 'Get'];

/** True when EventBridge delivers CloudTrail events of `action` (a write: not List*, Describe*, Get*). */
export function isDeliveredApiCall(action: string): boolean {
  return !READ_PREFIXES.some((p) => action.startsWith(p));
}

/** Dates as ISO strings, undefined members dropped: what a JSON event holds. */
function plain(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value ?? null, (_k, v: unknown) => (v instanceof Date ? v.toISOString() : v))) as unknown;
}

/** Subscribers of the simulator's events; events are built only while someone listens. */
export class SimEventBus {
  private readonly listeners = new Set<(e: BusEvent) => void>();
  private readonly ids: SeededRandom;

  constructor(
    private readonly where: { readonly account: string; readonly region: string },
    seed: number,
  ) {
    // Its own random source: emitting events never changes the simulator's other draws.
    this.ids = new SeededRandom(seed ^ 0x5eed_e7e7);
  }

  /** True while at least one listener is subscribed. */
  get active(): boolean {
    return this.listeners.size > 0;
  }

  /** Calls `listener` with every event from now on; returns the unsubscribe function. */
  subscribe(listener: (e: BusEvent) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Builds the event (only when someone listens) and hands it to every listener, in order. */
  emit(detailType: string, at: number, resources: string[], detail: () => Record<string, unknown>): void {
    if (this.listeners.size === 0) return;
    const event: BusEvent = {
      version: '0',
      id: this.ids.uuid(),
      'detail-type': detailType,
      source: 'aws.ecs',
      account: this.where.account,
      time: isoSeconds(at),
      region: this.where.region,
      resources,
      detail: detail(),
    };
    for (const l of [...this.listeners]) l(event);
  }

  /** An `ECS Service Action` event of service `serviceArn`. */
  serviceAction(
    at: number,
    serviceArn: string,
    clusterArn: string,
    eventType: 'INFO' | 'WARN' | 'ERROR',
    eventName: string,
    extra: { reason?: string; capacityProviderArns?: string[] } = {},
  ): void {
    this.emit('ECS Service Action', at, [serviceArn], () => ({
      eventType,
      eventName,
      clusterArn,
      ...(extra.capacityProviderArns ? { capacityProviderArns: extra.capacityProviderArns } : {}),
      ...(extra.reason ? { reason: extra.reason } : {}),
      createdAt: new Date(at).toISOString(),
    }));
  }

  /** An `ECS Deployment State Change` event of service `serviceArn`. */
  deploymentStateChange(at: number, serviceArn: string, eventType: 'INFO' | 'ERROR', eventName: string, deploymentId: string, reason: string): void {
    this.emit('ECS Deployment State Change', at, [serviceArn], () => ({
      eventType,
      eventName,
      deploymentId,
      updatedAt: isoSeconds(at),
      reason,
    }));
  }

  /** An `ECS Task State Change` event: `task` as DescribeTasks answers it (Dates allowed). */
  taskStateChange(at: number, task: Record<string, unknown> & { taskArn: string }): void {
    this.emit('ECS Task State Change', at, [task.taskArn], () => plain(task) as Record<string, unknown>);
  }

  /**
   * An `AWS API Call via CloudTrail` event of ECS action `eventName` by `caller`: with
   * `responseElements` when it succeeded, `errorCode` and `errorMessage` when it failed.
   */
  apiCall(
    at: number,
    eventName: string,
    caller: Caller,
    requestParameters: unknown,
    outcome: { readonly response: unknown } | { readonly errorCode: string; readonly errorMessage: string },
  ): void {
    this.emit('AWS API Call via CloudTrail', at, [], () => ({
      eventVersion: '1.09',
      userIdentity: plain(caller.identity),
      eventTime: isoSeconds(at),
      eventSource: 'ecs.amazonaws.com',
      eventName,
      awsRegion: this.where.region,
      sourceIPAddress: caller.sourceIPAddress,
      userAgent: caller.userAgent,
      ...('errorCode' in outcome ? { errorCode: outcome.errorCode, errorMessage: outcome.errorMessage } : {}),
      requestParameters: plain(requestParameters),
      responseElements: 'response' in outcome ? plain(outcome.response) : null,
      requestID: this.ids.uuid(),
      eventID: this.ids.uuid(),
      readOnly: false,
      eventType: 'AwsApiCall',
      managementEvent: true,
      recipientAccountId: this.where.account,
      eventCategory: 'Management',
    }));
  }
}

/**
 * Service deployments and revisions: ListServiceDeployments, DescribeServiceDeployments and
 * DescribeServiceRevisions (Amazon ECS API reference for each action).
 */
import type { NetworkConfiguration } from '@aws-sdk/client-ecs';
import { own } from '../../../lambda/core/dict';
import type { SimCore } from '../core';
import { EcsApiError, invalidParameter } from '../errors';
import { page } from '../paging';
import { listMember } from '../protocol';
import { activeRun } from '../native-deployments';
import { circuitBreakerThreshold } from '../rollouts';
import type { NativeRun, SimService, SimServiceDeployment } from '../state';
import { launchFields } from '../wire';
import { pageReq, str } from './inputs';

/**
 * ListServiceDeployments (Amazon ECS API reference): the service's deployments, newest first,
 * filtered by `status` and `createdAt` (`after` / `before`, epoch seconds on the wire);
 * `maxResults` 1..100, default 20.
 * @throws EcsApiError ClusterNotFoundException, ServiceNotFoundException, InvalidParameterException.
 */
export function listServiceDeployments(core: SimCore, i: Record<string, unknown>): unknown {
  const cluster = core.resolveCluster(i.cluster);
  const svc = core.requireService(cluster, i.service);
  const statuses = listMember(i, 'status', 'string') as string[] | undefined;
  const created = (own(i, 'createdAt') ?? {}) as { after?: unknown; before?: unknown };
  const ms = (v: unknown): number | undefined => (v === undefined || v === null ? undefined : v instanceof Date ? v.getTime() : Number(v) * 1000);
  const after = ms(created.after);
  const before = ms(created.before);
  const chosen = svc.serviceDeployments.filter(
    (sd) =>
      (statuses === undefined || statuses.length === 0 || statuses.includes(sd.status)) &&
      (after === undefined || sd.createdAt >= after) &&
      (before === undefined || sd.createdAt <= before),
  );
  // Keys sort by creation time (fixed width), then ARN; the page is newest first.
  const keyOf = (sd: SimServiceDeployment) => `${String(sd.createdAt).padStart(16, '0')}#${sd.arn}`;
  const byKey = new Map(chosen.map((sd) => [keyOf(sd), sd]));
  const p = page(`service-deployments:${svc.arn}`, [...byKey.keys()], pageReq(i), { defaultMax: 20, max: 100, descending: true });
  return {
    serviceDeployments: p.items.map((k) => {
      const sd = byKey.get(k) as SimServiceDeployment;
      return {
        serviceDeploymentArn: sd.arn,
        serviceArn: svc.arn,
        clusterArn: cluster.arn,
        startedAt: new Date(sd.startedAt),
        createdAt: new Date(sd.createdAt),
        ...(sd.finishedAt !== undefined ? { finishedAt: new Date(sd.finishedAt) } : {}),
        targetServiceRevisionArn: sd.targetServiceRevisionArn,
        status: sd.status,
        ...(sd.statusReason ? { statusReason: sd.statusReason } : {}),
      };
    }),
    ...(p.nextToken ? { nextToken: p.nextToken } : {}),
  };
}

/** Up to 20 ARNs of a Describe call. @throws InvalidParameterException for none or more. */
function arnList(i: Record<string, unknown>, key: string): string[] {
  const arns = listMember(i, key, 'string') as string[] | undefined;
  if (!arns || arns.length === 0) throw invalidParameter(`${key} can not be empty.`);
  if (arns.length > 20) throw invalidParameter(`${key} can have at most 20 items.`);
  return arns;
}

/** DescribeServiceDeployments: up to 20 ARNs; unknown ones in `failures` with reason MISSING. */
export function describeServiceDeployments(core: SimCore, i: Record<string, unknown>): unknown {
  const serviceDeployments: unknown[] = [];
  const failures: { arn: string; reason: string }[] = [];
  for (const arn of arnList(i, 'serviceDeploymentArns')) {
    const svc = core.serviceOfArn(arn, 'service-deployment');
    const sd = svc?.serviceDeployments.find((x) => x.arn === arn);
    if (!svc || !sd) failures.push({ arn, reason: 'MISSING' });
    else serviceDeployments.push(serviceDeploymentToWire(core, svc, sd));
  }
  return { serviceDeployments, failures };
}

/** A revision's task counts and, in a native deployment, the traffic it is asked to take. */
function revisionSummary(core: SimCore, svc: SimService, sd: SimServiceDeployment, revisionArn: string) {
  const d = svc.deployments.find((x) => x.serviceRevisionArn === revisionArn);
  const counts = d ? core.scheduler.counts(svc, d.id) : { running: 0, pending: 0 };
  const run = sd.native;
  const green = revisionArn === sd.targetServiceRevisionArn;
  return {
    arn: revisionArn,
    requestedTaskCount: d ? core.scheduler.deploymentDesired(svc, d) : 0,
    runningTaskCount: counts.running,
    pendingTaskCount: counts.pending,
    ...(run
      ? {
          requestedTestTrafficWeight: green ? run.testWeight : 100 - run.testWeight,
          requestedProductionTrafficWeight: green ? run.productionWeight : 100 - run.productionWeight,
        }
      : {}),
  };
}

/** One ServiceDeployment as the API reference names its members. */
function serviceDeploymentToWire(core: SimCore, svc: SimService, sd: SimServiceDeployment): unknown {
  const date = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms));
  const run = sd.native;
  const out: Record<string, unknown> = {
    serviceDeploymentArn: sd.arn,
    serviceArn: svc.arn,
    clusterArn: core.arns.cluster(svc.cluster),
    createdAt: new Date(sd.createdAt),
    startedAt: new Date(sd.startedAt),
    updatedAt: new Date(sd.updatedAt),
    finishedAt: date(sd.finishedAt),
    stoppedAt: date(sd.stoppedAt),
    sourceServiceRevisions: sd.sourceServiceRevisionArns.map((arn) => revisionSummary(core, svc, sd, arn)),
    targetServiceRevision: revisionSummary(core, svc, sd, sd.targetServiceRevisionArn),
    status: sd.status,
    statusReason: sd.statusReason || undefined,
    lifecycleStage: run?.stage,
    lifecycleHookDetails: run ? hookDetails(run) : undefined,
    deploymentConfiguration: structuredClone(sd.configuration) ?? {
      deploymentCircuitBreaker: { ...sd.deploymentCircuitBreaker },
      minimumHealthyPercent: sd.minimumHealthyPercent,
      maximumPercent: sd.maximumPercent,
    },
    rollback: sd.rollback ? { reason: sd.rollback.reason, startedAt: new Date(sd.rollback.startedAt), serviceRevisionArn: sd.rollback.serviceRevisionArn } : undefined,
    deploymentCircuitBreaker: breakerOf(svc, sd),
    alarms: alarmsOf(core, sd),
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined));
}

/** The hooks of the current stage (where a PAUSE hook's hookId is found). */
function hookDetails(run: NativeRun) {
  const stages = run.stage === 'POST_TEST_TRAFFIC_SHIFT' ? [run.stage, 'PRE_PRODUCTION_TRAFFIC_SHIFT'] : [run.stage];
  return run.hooks
    .filter((h) => stages.includes(h.stage))
    .map((h) => ({
      hookId: h.hookId,
      targetType: h.targetType,
      ...(h.targetArn ? { targetArn: h.targetArn } : {}),
      status: h.status,
      expiresAt: new Date(h.expiresAt),
      timeoutAction: h.timeoutAction,
    }));
}

/** ServiceDeploymentCircuitBreaker: DISABLED, MONITORING, or TRIGGERED once it failed the deployment. */
function breakerOf(svc: SimService, sd: SimServiceDeployment) {
  if (!sd.deploymentCircuitBreaker.enable) return { status: 'DISABLED' };
  const d = svc.deployments.find((x) => x.serviceRevisionArn === sd.targetServiceRevisionArn);
  const failed = sd.status.startsWith('ROLLBACK') && /circuit breaker/.test(sd.statusReason ?? '');
  return { status: failed ? 'TRIGGERED' : 'MONITORING', failureCount: d?.failedTasks ?? 0, threshold: circuitBreakerThreshold(svc.desiredCount) };
}

/** ServiceDeploymentAlarms: the alarms watched and those in ALARM. */
function alarmsOf(core: SimCore, sd: SimServiceDeployment) {
  const alarms = sd.configuration?.alarms;
  if (!alarms?.enable) return undefined;
  const names = alarms.alarmNames ?? [];
  const triggered = names.filter((n) => core.alarms.get(n) === 'ALARM');
  return { status: triggered.length > 0 ? 'TRIGGERED' : 'MONITORING', alarmNames: [...names], triggeredAlarmNames: triggered };
}

/** The service deployment an ARN names. @throws ServiceDeploymentNotFoundException. */
function requireServiceDeployment(core: SimCore, arn: unknown): { svc: SimService; sd: SimServiceDeployment } {
  if (typeof arn !== 'string' || arn === '') throw invalidParameter('serviceDeploymentArn can not be blank.');
  const svc = core.serviceOfArn(arn, 'service-deployment');
  const sd = svc?.serviceDeployments.find((x) => x.arn === arn);
  if (!svc || !sd) throw new EcsApiError('ServiceDeploymentNotFoundException', 'The service deployment does not exist.');
  return { svc, sd };
}

/**
 * ContinueServiceDeployment: answers a PAUSE hook AWAITING_ACTION (action CONTINUE, the default,
 * or ROLLBACK). @throws ServiceDeploymentNotFoundException; ConflictException when the hook is not
 * awaiting an action; InvalidParameterException for an unknown hookId or action.
 */
export function continueServiceDeployment(core: SimCore, i: Record<string, unknown>): unknown {
  const { svc, sd } = requireServiceDeployment(core, own(i, 'serviceDeploymentArn'));
  const action = own(i, 'action') ?? 'CONTINUE';
  if (action !== 'CONTINUE' && action !== 'ROLLBACK') throw invalidParameter(`Invalid action '${String(action)}'. Valid values: CONTINUE, ROLLBACK.`);
  const hookId = str(i, 'hookId', true);
  const hr = sd.native?.hooks.find((h) => h.hookId === hookId);
  if (!hr) throw invalidParameter(`The lifecycle hook ${hookId} was not found in the service deployment.`);
  if (hr.status !== 'AWAITING_ACTION' || !activeRun(svc) || activeRun(svc)?.sd !== sd) {
    throw new EcsApiError('ConflictException', `The lifecycle hook ${hookId} is not awaiting an action (status ${hr.status}).`);
  }
  core.scheduler.native.continueHook(svc, sd, hr, action);
  return { serviceDeploymentArn: sd.arn };
}

/**
 * StopServiceDeployment (stopType ROLLBACK, the only one ECS takes): rolls an ongoing service
 * deployment back. @throws ServiceDeploymentNotFoundException; ConflictException when it is not
 * PENDING or IN_PROGRESS.
 */
export function stopServiceDeployment(core: SimCore, i: Record<string, unknown>): unknown {
  const { svc, sd } = requireServiceDeployment(core, own(i, 'serviceDeploymentArn'));
  const stopType = own(i, 'stopType') ?? 'ROLLBACK';
  if (stopType !== 'ROLLBACK') throw invalidParameter(`Invalid stopType '${String(stopType)}'. Valid values: ROLLBACK.`);
  if (sd.status !== 'IN_PROGRESS' && sd.status !== 'PENDING') {
    throw new EcsApiError('ConflictException', `The service deployment is ${sd.status}: only a PENDING or IN_PROGRESS one can be stopped.`);
  }
  core.scheduler.stopServiceDeployment(svc, sd, 'Service deployment rolled back because of a StopServiceDeployment request.');
  return { serviceDeploymentArn: sd.arn };
}

/** DescribeServiceRevisions: up to 20 ARNs; unknown ones in `failures` with reason MISSING. */
export function describeServiceRevisions(core: SimCore, i: Record<string, unknown>): unknown {
  const serviceRevisions: unknown[] = [];
  const failures: { arn: string; reason: string }[] = [];
  for (const arn of arnList(i, 'serviceRevisionArns')) {
    const svc = core.serviceOfArn(arn, 'service-revision');
    const rev = svc?.serviceRevisions.get(arn);
    if (!svc || !rev) {
      failures.push({ arn, reason: 'MISSING' });
      continue;
    }
    const t = rev.template;
    serviceRevisions.push({
      serviceRevisionArn: rev.arn,
      serviceArn: svc.arn,
      clusterArn: core.arns.cluster(svc.cluster),
      taskDefinition: t.taskDefinition,
      ...launchFields(t),
      ...(t.networkConfiguration ? { networkConfiguration: structuredClone(t.networkConfiguration) as NetworkConfiguration } : {}),
      loadBalancers: structuredClone(t.loadBalancers),
      ...(t.serviceConnectConfiguration ? { serviceConnectConfiguration: structuredClone(t.serviceConnectConfiguration) } : {}),
      ...(t.volumeConfigurations ? { volumeConfigurations: structuredClone(t.volumeConfigurations) } : {}),
      ...(t.vpcLatticeConfigurations ? { vpcLatticeConfigurations: structuredClone(t.vpcLatticeConfigurations) } : {}),
      createdAt: new Date(rev.createdAt),
    });
  }
  return { serviceRevisions, failures };
}


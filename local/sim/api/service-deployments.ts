/**
 * Service deployments and revisions: ListServiceDeployments, DescribeServiceDeployments and
 * DescribeServiceRevisions (Amazon ECS API reference for each action).
 */
import type { NetworkConfiguration } from '@aws-sdk/client-ecs';
import { own } from '../../../lambda/core/dict';
import type { SimCore } from '../core';
import { invalidParameter } from '../errors';
import { page } from '../paging';
import { listMember } from '../protocol';
import type { SimServiceDeployment } from '../state';
import { launchFields } from '../wire';
import { pageReq } from './inputs';

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
    if (!svc || !sd) {
      failures.push({ arn, reason: 'MISSING' });
      continue;
    }
    const summary = (revisionArn: string) => {
      const d = svc.deployments.find((x) => x.serviceRevisionArn === revisionArn);
      const counts = d ? core.scheduler.counts(svc, d.id) : { running: 0, pending: 0 };
      return {
        arn: revisionArn,
        requestedTaskCount: d ? core.scheduler.deploymentDesired(svc, d) : 0,
        runningTaskCount: counts.running,
        pendingTaskCount: counts.pending,
      };
    };
    const date = (ms: number | undefined) => (ms === undefined ? {} : { at: new Date(ms) });
    serviceDeployments.push({
      serviceDeploymentArn: sd.arn,
      serviceArn: svc.arn,
      clusterArn: core.arns.cluster(svc.cluster),
      createdAt: new Date(sd.createdAt),
      startedAt: new Date(sd.startedAt),
      updatedAt: new Date(sd.updatedAt),
      ...(date(sd.finishedAt).at ? { finishedAt: date(sd.finishedAt).at } : {}),
      ...(date(sd.stoppedAt).at ? { stoppedAt: date(sd.stoppedAt).at } : {}),
      sourceServiceRevisions: sd.sourceServiceRevisionArns.map(summary),
      targetServiceRevision: summary(sd.targetServiceRevisionArn),
      status: sd.status,
      ...(sd.statusReason ? { statusReason: sd.statusReason } : {}),
      deploymentConfiguration: {
        deploymentCircuitBreaker: { ...sd.deploymentCircuitBreaker },
        minimumHealthyPercent: sd.minimumHealthyPercent,
        maximumPercent: sd.maximumPercent,
      },
      ...(sd.rollback
        ? { rollback: { reason: sd.rollback.reason, startedAt: new Date(sd.rollback.startedAt), serviceRevisionArn: sd.rollback.serviceRevisionArn } }
        : {}),
    });
  }
  return { serviceDeployments, failures };
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


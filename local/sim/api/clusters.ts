/**
 * Clusters: CreateCluster, DescribeClusters, ListClusters, DeleteCluster and
 * PutClusterCapacityProviders (Amazon ECS API reference for each action).
 */
import type { CapacityProviderStrategyItem, Cluster } from '@aws-sdk/client-ecs';
import type { SimCore } from '../core';
import { EcsApiError, invalidParameter } from '../errors';
import { page } from '../paging';
import { listMember } from '../protocol';
import type { SimCluster } from '../state';
import { clusterToWire } from '../wire';
import { NAME_RE, assertKnownProviders, pageReq, str, tagsInput } from './inputs';

/**
 * CreateCluster: an ACTIVE cluster of that name is answered as it is (ECS's idempotency).
 * @throws InvalidParameterException for an invalid name or an unknown capacity provider.
 */
export function createCluster(core: SimCore, i: Record<string, unknown>): SimCluster {
  const name = (i.clusterName as string | undefined) ?? 'default';
  if (typeof name !== 'string' || !NAME_RE.test(name)) {
    throw invalidParameter(
      'Cluster name is invalid: up to 255 letters (uppercase and lowercase), numbers, underscores, and hyphens are allowed.',
    );
  }
  const existing = core.state.clusters.get(name);
  if (existing && existing.status === 'ACTIVE') return existing;
  const providers = (i.capacityProviders as string[] | undefined) ?? [];
  assertKnownProviders(providers);
  const c: SimCluster = {
    name,
    arn: core.arns.cluster(name),
    status: 'ACTIVE',
    tags: tagsInput(i.tags),
    settings: (i.settings as { name: string; value: string }[] | undefined) ?? [{ name: 'containerInsights', value: 'disabled' }],
    capacityProviders: providers,
    defaultCapacityProviderStrategy: structuredClone((i.defaultCapacityProviderStrategy as CapacityProviderStrategyItem[] | undefined) ?? []),
    ...serviceConnectDefaults(core, i.serviceConnectDefaults),
    createdAt: core.clock.nowMs(),
    services: new Map(),
    tasks: new Map(),
  };
  core.state.clusters.set(name, c);
  return c;
}

/** CreateCluster `serviceConnectDefaults`: a namespace name becomes a Cloud Map namespace ARN. */
function serviceConnectDefaults(core: SimCore, given: unknown): { serviceConnectNamespace?: string } {
  const ns = (given as { namespace?: unknown } | undefined)?.namespace;
  if (ns === undefined) return {};
  if (typeof ns !== 'string' || ns === '') throw invalidParameter('serviceConnectDefaults.namespace can not be blank.');
  const s = core.arns.scope;
  return { serviceConnectNamespace: ns.startsWith('arn:') ? ns : `arn:aws:servicediscovery:${s.region}:${s.accountId}:namespace/ns-${core.rng.hex(16)}` };
}

/** DescribeClusters: unknown clusters in `failures` with reason MISSING. */
export function describeClusters(core: SimCore, i: Record<string, unknown>): unknown {
  const include = (listMember(i, 'include', 'string') as string[] | undefined) ?? [];
  const refs = (listMember(i, 'clusters', 'string') as string[] | undefined) ?? ['default'];
  const clusters: Cluster[] = [];
  const failures: { arn: string; reason: string }[] = [];
  for (const ref of refs) {
    const name = core.clusterName(ref);
    const c = core.state.clusters.get(name);
    if (c) clusters.push(clusterToWire(core, c, include));
    else failures.push({ arn: ref.startsWith('arn:') ? ref : core.arns.cluster(name), reason: 'MISSING' });
  }
  return { clusters, failures };
}

/** ListClusters: ACTIVE clusters' ARNs, pages of up to 100. */
export function listClusters(core: SimCore, i: Record<string, unknown>): unknown {
  const arns = [...core.state.clusters.values()].filter((c) => c.status === 'ACTIVE').map((c) => c.arn);
  const p = page('clusters', arns, pageReq(i), { defaultMax: 100, max: 100 });
  return { clusterArns: p.items, ...(p.nextToken ? { nextToken: p.nextToken } : {}) };
}

/** DeleteCluster: refused while services or tasks are active. */
export function deleteCluster(core: SimCore, i: Record<string, unknown>): unknown {
  const c = core.resolveCluster(str(i, 'cluster', true));
  if ([...c.services.values()].some((s) => s.status !== 'INACTIVE')) {
    throw new EcsApiError('ClusterContainsServicesException', 'The Cluster cannot be deleted while Services are active.');
  }
  if ([...c.tasks.values()].some((t) => t.lastStatus !== 'STOPPED')) {
    throw new EcsApiError('ClusterContainsTasksException', 'The Cluster cannot be deleted while Tasks are active.');
  }
  c.status = 'INACTIVE';
  return { cluster: clusterToWire(core, c) };
}

/** PutClusterCapacityProviders: replaces the providers and the default strategy. */
export function putClusterCapacityProviders(core: SimCore, i: Record<string, unknown>): unknown {
  const cluster = core.resolveCluster(i.cluster as string | undefined);
  const providers = (i.capacityProviders as string[] | undefined) ?? [];
  assertKnownProviders(providers);
  cluster.capacityProviders = [...providers];
  cluster.defaultCapacityProviderStrategy = structuredClone((i.defaultCapacityProviderStrategy as CapacityProviderStrategyItem[] | undefined) ?? []);
  return { cluster: clusterToWire(core, cluster) };
}

/**
 * What spans services, computed once per pass: {@link fleetFacts}.
 */
import { dict, own } from '../dict';
import { type ObservedCluster, type ObservedState, type PruneHold, type ServiceId, serviceId } from '../types';
import type { PlanOptions } from '../options';
import { familyClaimsOf } from './family';
import { isGone, isOwned } from './live';
import { compareStrings } from './order';
import type { ClusterOrphans, FleetFacts, KeyedSpec, PlanInput } from './types';

/**
 * The fleet's facts of one pass, a pure function of `input`: the keyed specs (one per key, an
 * invalid item winning over a valid one of the same key, since it is the safer reading) in
 * cluster/service order, the managed clusters and their observations, the family claims
 * (`input.familyClaims` when given, else computed from the specs), each managed cluster's orphans
 * and, where the cluster and the table were read to the end, how many of them a prune could
 * delete, the confirmed clusters and the holds read back.
 */
export function fleetFacts(input: PlanInput): FleetFacts {
  const { ids, results, specNames } = indexSpecs(input.specs);
  const order = specOrder(specNames);
  const clustersWithSpecs: ReadonlySet<string> = new Set(specNames.keys());
  const managedClusters = managedClustersOf(input.options, clustersWithSpecs);
  const clusters = new Map<string, ObservedCluster>();
  for (const name of managedClusters) clusters.set(name, clusterOf(input.observed, name));
  const orphans = managedClusters.map((cluster) => orphansOf(cluster, clusters.get(cluster) as ObservedCluster, specNames.get(cluster)));
  const heldBefore = new Map<string, PruneHold>();
  for (const h of input.pruneHolds ?? []) if (!heldBefore.has(h.cluster)) heldBefore.set(h.cluster, h);
  return {
    specsComplete: input.specsComplete,
    specIds: order.map((i) => ids[i]),
    specResults: order.map((i) => results[i]),
    clustersWithSpecs,
    managedClusters,
    clusters,
    familyClaims: input.familyClaims ?? familyClaimsOf(results, clustersWithSpecs, input.observed, input.options),
    orphans,
    orphanCounts: orphanCountsOf(input, clusters, orphans),
    pruneConfirmed: new Set(input.pruneConfirmedClusters ?? []),
    heldBefore,
    unkeyedInvalid: input.specs.filter((r) => !r.ok && !r.key).length,
  };
}

/** The observation of cluster `name`; one the observer did not report counts as incomplete. */
export function clusterOf(observed: ObservedState, name: string): ObservedCluster {
  return (
    own(observed.clusters, name) ?? {
      cluster: name,
      complete: false,
      exists: true,
      error: 'cluster not observed this pass',
      services: dict(),
    }
  );
}

/**
 * One spec per service id, in the order first seen: `ids[i]` and `results[i]`; an invalid result
 * wins over a valid one for the same key (safer). `specNames`: per cluster, the service names
 * that have a spec and their position (to find duplicates and orphans without a map keyed by
 * `cluster/service`).
 */
function indexSpecs(specs: PlanInput['specs']): { ids: ServiceId[]; results: KeyedSpec[]; specNames: Map<string, Map<string, number>> } {
  const ids: ServiceId[] = [];
  const results: KeyedSpec[] = [];
  const specNames = new Map<string, Map<string, number>>();
  let lastCluster: string | undefined;
  let lastNames: Map<string, number> | undefined;
  for (const r of specs) {
    if (!r.key) continue;
    const { cluster, service } = r.key;
    // Specs of one cluster tend to come together: its names are kept at hand.
    let names = cluster === lastCluster ? lastNames : specNames.get(cluster);
    if (names === undefined) {
      names = new Map();
      specNames.set(cluster, names);
    }
    lastCluster = cluster;
    lastNames = names;
    const at = names.get(service);
    if (at === undefined) {
      names.set(service, ids.length);
      ids.push(serviceId(r.key));
      results.push(r as KeyedSpec);
    } else if (results[at].ok && !r.ok) {
      results[at] = r as KeyedSpec;
    }
  }
  return { ids, results, specNames };
}

/**
 * Positions of the specs (`indexSpecs`) sorted by cluster, then service: the clusters' names
 * sorted, then each cluster's service names, so that a comparison reads one string of each side
 * and sorts a cluster's few hundred names rather than the whole fleet. A DynamoDB Scan returns a
 * partition's items in sort-key order, so each cluster's names usually come sorted already (one
 * run for the sort to find).
 * @param specNames per cluster, each service name and its position.
 */
function specOrder(specNames: ReadonlyMap<string, ReadonlyMap<string, number>>): number[] {
  const order: number[] = [];
  const byName = (a: [string, number], b: [string, number]): number => compareStrings(a[0], b[0]);
  for (const cluster of [...specNames.keys()].sort(compareStrings)) {
    const entries = [...(specNames.get(cluster) as ReadonlyMap<string, number>)].sort(byName);
    for (const [, position] of entries) order.push(position);
  }
  return order;
}

/** Clusters named in the options or by a spec item, sorted. */
function managedClustersOf(options: PlanOptions, clustersWithSpecs: ReadonlySet<string>): string[] {
  const names = new Set(options.managedClusters);
  for (const cluster of clustersWithSpecs) names.add(cluster);
  return [...names].sort();
}

/** The cluster's live services that no spec item names, sorted. */
function orphansOf(cluster: string, cl: ObservedCluster, named: ReadonlyMap<string, number> | undefined): ClusterOrphans {
  const names: string[] = [];
  for (const name in cl.services) {
    if (Object.hasOwn(cl.services, name) && !named?.has(name)) names.push(name);
  }
  names.sort(compareStrings);
  return { cluster, names };
}

/** Per cluster read to the end (with the whole table read): its orphans a prune could delete. */
function orphanCountsOf(input: PlanInput, clusters: ReadonlyMap<string, ObservedCluster>, orphans: readonly ClusterOrphans[]): Map<string, number> {
  const counts = new Map<string, number>();
  if (!input.specsComplete) return counts;
  for (const { cluster, names } of orphans) {
    const cl = clusters.get(cluster) as ObservedCluster;
    if (!cl.complete) continue;
    let prunable = 0;
    for (const name of names) {
      const svc = own(cl.services, name);
      if (!isGone(svc) && isOwned(svc, input.options) && svc.status !== 'DRAINING') prunable += 1;
    }
    counts.set(cluster, prunable);
  }
  return counts;
}

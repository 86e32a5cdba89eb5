/** One key's view ({@link serviceView}) and what it tells about the key's live service. */
import { own } from '../dict';
import type { ObservedCluster, ServiceId, ServiceKey } from '../types';
import type { KeyedSpec, PlanInput, ServiceView } from './types';

/**
 * The view of one key: its spec item (none for an orphan), its cluster's observation, the live
 * service of that name and the status remembered for it.
 */
export function serviceView(
  input: Pick<PlanInput, 'remembered'>,
  key: ServiceKey,
  id: ServiceId,
  spec: KeyedSpec | undefined,
  cluster: ObservedCluster,
): ServiceView {
  return { key, id, spec, cluster, service: own(cluster.services, key.service), remembered: own(input.remembered, id) };
}

/**
 * Whether the key's cluster could not be read because the reads were refused
 * (`ObservedCluster.refused`: AccessDenied, or a target role that cannot be assumed) and ECS did
 * not answer for this very name.
 */
export function readRefused(view: ServiceView): boolean {
  return view.cluster.refused !== undefined && view.service === undefined && !view.cluster.described?.has(view.key.service);
}

/**
 * Whether the observation vouches for the key's name: its cluster was read to the end, or ECS
 * answered for this very name this pass (described, MISSING or INACTIVE). Not seen is not gone
 * otherwise: a cluster read in part still vouches for the names it read.
 */
export function vouched(view: ServiceView): boolean {
  return view.cluster.complete || view.cluster.described?.has(view.key.service) === true;
}

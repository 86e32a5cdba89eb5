/**
 * Task definition family claims: which spec keeps a family that two or more specs render.
 */
import type { PlanOptions } from '../options';
import { own } from '../dict';
import { taskDefinitionFamily } from '../taskdef';
import { type ObservedState, type ServiceId, type ServiceKey, type ServiceSpec, serviceId } from '../types';
import { isGone, isOwned } from './live';
import { compareKeys } from './order';
import type { FamilyClaim, FamilyClaims, KeyedSpec } from './types';

/** A spec refused for its family: the family, and the claim of the spec that keeps it. */
export interface FamilyHolder extends FamilyClaim {
  readonly family: string;
}

/**
 * The claims of the families that more than one valid `present` spec of `results` renders (their
 * effective family: `family` when the spec names one, else `<cluster>-<service>`): two specs
 * naming the same `family`, a `family` that is another spec's default (`family: prod-web` beside
 * `prod`/`web`), or two defaults that join alike (`a-b`/`c` and `a`/`b-c`). Per family, the spec
 * whose service already runs a revision of that family (owned by us, or adopted by the spec) keeps
 * it; otherwise the first by cluster, then service.
 * @param results every keyed spec of the table, one per key.
 * @param clustersWithSpecs the clusters those specs name.
 */
export function familyClaimsOf(
  results: readonly KeyedSpec[],
  clustersWithSpecs: ReadonlySet<string>,
  observed: ObservedState,
  options: PlanOptions,
): Map<string, FamilyClaim> {
  const claims = new Map<string, FamilyClaim>();
  // With no pair of cluster names whose defaults could join alike and no spec naming a family
  // (the usual fleet), no family string need be made at all.
  if (!anyClusterExtendsAnother(clustersWithSpecs) && !results.some((r) => r.ok && r.spec.family !== undefined)) return claims;
  const adopts = new Set<ServiceId>();
  for (const r of results) if (r.ok && r.spec.adopt) adopts.add(serviceId(r.key));
  for (const [family, keys] of sharedFamilies(results)) {
    const holdsFamily = (k: ServiceKey) => {
      const svc = own(own(observed.clusters, k.cluster)?.services, k.service);
      return (
        !isGone(svc) &&
        (isOwned(svc, options) || adopts.has(serviceId(k))) &&
        svc.taskDefinition.includes(`:task-definition/${family}:`)
      );
    };
    const sorted = [...keys].sort(compareKeys);
    const running = sorted.find(holdsFamily);
    claims.set(family, { key: running ?? sorted[0], running: running !== undefined });
  }
  return claims;
}

/** The families that more than one valid `present` spec renders, with those specs' keys. */
function sharedFamilies(results: readonly KeyedSpec[]): Map<string, ServiceKey[]> {
  // The first key per family, and a list only for the (rare) families named more than once.
  const first = new Map<string, ServiceKey>();
  const shared = new Map<string, ServiceKey[]>();
  for (const r of results) {
    if (!r.ok || r.spec.state !== 'present') continue;
    const family = r.spec.family ?? taskDefinitionFamily(r.key);
    const holder = first.get(family);
    if (holder === undefined) first.set(family, r.key);
    else {
      const keys = shared.get(family);
      if (keys) keys.push(r.key);
      else shared.set(family, [holder, r.key]);
    }
  }
  return shared;
}

/**
 * The claim that refuses `spec` of `key` its family (another key keeps it), or undefined when the
 * family is free or its own.
 */
export function familyHolderOf(claims: FamilyClaims, key: ServiceKey, spec: ServiceSpec): FamilyHolder | undefined {
  if (claims.size === 0) return undefined;
  const family = spec.family ?? taskDefinitionFamily(key);
  const claim = claims.get(family);
  if (claim === undefined || (claim.key.cluster === key.cluster && claim.key.service === key.service)) return undefined;
  return { family, key: claim.key, running: claim.running };
}

/**
 * The message of a spec refused for its family: both specs, the family, why the other keeps it,
 * and what to change.
 */
export function familyCollisionMessage(key: ServiceKey, spec: ServiceSpec, holder: FamilyHolder): string {
  const how = spec.family !== undefined ? 'named by its family attribute' : 'its default <cluster>-<service>';
  const why = holder.running ? 'its service runs a revision of it' : 'first by cluster, then service';
  return (
    `${serviceId(key)} and ${serviceId(holder.key)} both render task definition family ${holder.family} (${how}); ` +
    `${serviceId(holder.key)} keeps it (${why}) and ${serviceId(key)} is not reconciled: ` +
    'give one of them another family (family attribute, or a service name that joins differently)'
  );
}

/**
 * Whether one of `clusters` is another one's name followed by `-` and more (`a-b` and `a`): two
 * default families are equal only then, since within one cluster different services have
 * different defaults.
 */
function anyClusterExtendsAnother(clusters: ReadonlySet<string>): boolean {
  for (const name of clusters) {
    for (let i = name.indexOf('-', 1); i !== -1; i = name.indexOf('-', i + 1)) {
      if (clusters.has(name.slice(0, i))) return true;
    }
  }
  return false;
}

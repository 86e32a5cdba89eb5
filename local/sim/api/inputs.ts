/**
 * Request members as ECS reads them: required strings, paging, counts, tags, names, and the
 * canonical JSON the simulator compares parameters with.
 */
import type { CapacityProviderStrategyItem } from '@aws-sdk/client-ecs';
import { own } from '../../../lambda/core/dict';
import { invalidParameter } from '../errors';
import type { SimCluster, Tag } from '../state';

/** Cluster and service names: up to 255 letters, digits, underscores and hyphens. */
export const NAME_RE = /^[A-Za-z0-9_-]{1,255}$/;

/** A required, non-empty string member. @throws InvalidParameterException "<key> can not be blank." */
export function str(i: Record<string, unknown>, key: string, required: true): string {
  const v = own(i, key);
  if (typeof v !== 'string' || (required && v === '')) {
    throw invalidParameter(`${key} can not be blank.`);
  }
  return v;
}

/** `maxResults` and a non-empty `nextToken` of a List call. */
export function pageReq(i: Record<string, unknown>): { maxResults?: number; nextToken?: string } {
  return {
    ...(i.maxResults !== undefined ? { maxResults: i.maxResults as number } : {}),
    ...(typeof i.nextToken === 'string' && i.nextToken !== '' ? { nextToken: i.nextToken } : {}),
  };
}

/** ECS declares desiredCount an Integer (32-bit): 0..2147483647 tasks. */
const MAX_DESIRED_COUNT = 2_147_483_647;

/** @throws InvalidParameterException unless `n` is a whole number from 0 to 2^31-1. */
export function assertCount(n: unknown): void {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > MAX_DESIRED_COUNT) {
    throw invalidParameter(`desiredCount must be a whole number from 0 to ${MAX_DESIRED_COUNT}.`);
  }
}

/**
 * A `tags` member: at most 50, keys 1-128 characters not starting with `aws:`, values up to 256
 * (an absent value is ""). @throws InvalidParameterException.
 */
export function tagsInput(tags: unknown): Tag[] {
  if (tags === undefined) return [];
  if (!Array.isArray(tags)) throw invalidParameter('tags must be a list of {key, value}.');
  if (tags.length > 50) throw invalidParameter('tags can have at most 50 items.');
  return tags.map((t: { key?: unknown; value?: unknown }) => {
    if (typeof t?.key !== 'string' || t.key.length < 1 || t.key.length > 128) {
      throw invalidParameter('Tag keys must be 1 to 128 characters.');
    }
    if (t.key.toLowerCase().startsWith('aws:')) throw invalidParameter('Tag keys beginning with aws: are reserved.');
    const value = t.value === undefined ? '' : t.value;
    if (typeof value !== 'string' || value.length > 256) throw invalidParameter('Tag values must be at most 256 characters.');
    return { key: t.key, value };
  });
}

/** JSON with object keys sorted and undefined dropped (parameter comparison). */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(v, (_k, value: unknown) => {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      return Object.fromEntries(
        Object.entries(value as Record<string, unknown>)
          .filter(([, x]) => x !== undefined)
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
      );
    }
    return value;
  });
}

/**
 * CreateService / UpdateService with a capacity provider strategy naming a provider the cluster
 * does not have: ECS refuses with this InvalidParameterException (the FARGATE and FARGATE_SPOT
 * providers must be associated with the cluster first, PutClusterCapacityProviders; a cluster
 * made by CreateCluster without `capacityProviders` has none).
 */
export function assertProvidersAssociated(cluster: SimCluster, strategy: CapacityProviderStrategyItem[] | undefined): void {
  for (const s of strategy ?? []) {
    if (s.capacityProvider && !cluster.capacityProviders.includes(s.capacityProvider)) {
      throw invalidParameter(
        'The specified capacity provider strategy cannot contain a capacity provider that is not associated with the cluster. Associate the capacity provider with the cluster or specify a valid capacity provider and try again.',
      );
    }
  }
}

/** The capacity providers the simulator knows. @throws InvalidParameterException for another. */
export function assertKnownProviders(providers: readonly string[]): void {
  for (const p of providers) {
    if (p !== 'FARGATE' && p !== 'FARGATE_SPOT') {
      throw invalidParameter(`The specified capacity provider '${p}' does not exist. The simulator knows FARGATE and FARGATE_SPOT.`);
    }
  }
}

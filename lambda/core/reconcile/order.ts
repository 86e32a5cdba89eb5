/** The plan's orders: keys by cluster then service, a key's actions by kind. */
import type { Action, ServiceKey } from '../types';

/** Code-unit order of two strings (as `Array.prototype.sort` without a comparator). */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Keys by cluster, then service. */
export function compareKeys(a: ServiceKey, b: ServiceKey): number {
  if (a.cluster !== b.cluster) return a.cluster < b.cluster ? -1 : 1;
  if (a.service !== b.service) return a.service < b.service ? -1 : 1;
  return 0;
}

/** Within one service: TagResource, RegisterTaskDefinition, CreateService, UpdateService, DeleteService. */
const ACTION_RANK: Record<Action['type'], number> = {
  TagResource: 0,
  RegisterTaskDefinition: 1,
  CreateService: 2,
  UpdateService: 3,
  DeleteService: 4,
};

/** Actions by key, then by {@link ACTION_RANK}. */
export function compareActions(a: Action, b: Action): number {
  return compareKeys(a, b) || ACTION_RANK[a.type] - ACTION_RANK[b.type];
}

/**
 * Prune holds ({@link PruneHold}): a cluster where a pass found the signature of a wiped or
 * half-restored spec table keeps its prunes held in later passes, until none of its owned services
 * lacks a spec or a person confirms it.
 */
import type { PruneHeld, PruneHold, PruneHolds } from '../types';
import { compareStrings } from './order';
import type { FleetFacts } from './types';

/** How a person releases the hold of `cluster`, with the count of services still missing when known. */
export function releaseText(fleet: FleetFacts, cluster: string): string {
  const missing = fleet.orphanCounts.get(cluster);
  const still = missing !== undefined ? ` (${missing} still ${missing === 1 ? 'has' : 'have'} none)` : '';
  return (
    `prunes in cluster ${cluster} stay held until every owned service there has a spec again${still}: ` +
    `restore the missing spec items, or run \`ecsr prune --confirm ${cluster}\` if the deletion is intended`
  );
}

/** The Blocked message of an orphan in a held cluster: since when, why, and how to release it. */
export function heldMessage(fleet: FleetFacts, hold: PruneHold): string {
  return `prune held since ${hold.since}: a pass found ${hold.reason}, the signature of a wiped or half-restored spec table; ${releaseText(fleet, hold.cluster)}`;
}

/** The hold an earlier pass set on `cluster`, unless a person confirmed the cluster's prune. */
export function earlierHoldOf(fleet: FleetFacts, cluster: string): PruneHold | undefined {
  return fleet.pruneConfirmed.has(cluster) ? undefined : fleet.heldBefore.get(cluster);
}

/** The holds of one pass: those read back, and those this pass sets (the first reason per cluster wins). */
export class PruneHoldBook {
  private readonly heldNow = new Map<string, PruneHold>();

  constructor(
    private readonly fleet: FleetFacts,
    private readonly now: Date,
  ) {}

  /** Holds `cluster` from this pass on, unless it is held already or confirmed. */
  hold(cluster: string, reason: string): void {
    if (this.fleet.pruneConfirmed.has(cluster) || this.fleet.heldBefore.has(cluster) || this.heldNow.has(cluster)) return;
    this.heldNow.set(cluster, { cluster, since: this.now.toISOString(), reason });
  }

  /**
   * The holds after this pass: an earlier hold is cleared by a person's confirmation, or when its
   * cluster was read to the end with the whole table and no owned service there lacks a spec;
   * otherwise kept (also when its cluster was not read, or only in part). Undefined when no
   * cluster is held before or after the pass.
   */
  result(): PruneHolds | undefined {
    const fleet = this.fleet;
    const cleared: PruneHolds['cleared'] = [];
    const held: PruneHeld[] = [];
    const report = (h: PruneHold): PruneHeld => {
      const missing = fleet.orphanCounts.get(h.cluster);
      return { ...h, ...(missing !== undefined ? { missing } : {}), release: releaseText(fleet, h.cluster) };
    };
    for (const h of fleet.heldBefore.values()) {
      if (fleet.pruneConfirmed.has(h.cluster)) cleared.push({ cluster: h.cluster, because: 'confirmed' });
      else if (fleet.orphanCounts.get(h.cluster) === 0) cleared.push({ cluster: h.cluster, because: 'restored' });
      else held.push(report(h));
    }
    for (const h of this.heldNow.values()) held.push(report(h));
    if (held.length === 0 && cleared.length === 0) return undefined;
    const byCluster = (a: { cluster: string }, b: { cluster: string }) => compareStrings(a.cluster, b.cluster);
    return { held: held.sort(byCluster), set: [...this.heldNow.values()].sort(byCluster), cleared: cleared.sort(byCluster) };
  }
}

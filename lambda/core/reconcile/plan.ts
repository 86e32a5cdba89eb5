/**
 * The fleet entry point: {@link plan} maps {@link reconcileService} over every key and folds the
 * decisions into one plan.
 */
import { dict } from '../dict';
import { type Action, type ObservedCluster, type Plan, type ServiceId, type ServiceKey, type ServiceStatus, serviceId } from '../types';
import { planContext } from './context';
import { applyDeleteBudget } from './delete';
import { fleetFacts } from './fleet';
import { PruneHoldBook } from './holds';
import { compareActions, compareKeys } from './order';
import { reconcileService } from './reconcile';
import type { Decision, DeleteCandidate, PlanContext, PlanInput } from './types';
import { serviceView } from './view';

/**
 * Plans one reconcile pass. Pure and deterministic: no clock, no I/O.
 *
 * @returns `actions` ordered by cluster, service (within a service TagResource, then
 *   RegisterTaskDefinition, then CreateService/UpdateService), with every DeleteService last; and
 *   one `status` per service the planner knows of: every spec with a usable key, and every owned
 *   service without a spec in a managed cluster (managed = named by a spec or in
 *   `options.managedClusters`).
 * CreateService/UpdateService name the task definition by family when a RegisterTaskDefinition
 * for that family precedes them; the actuator substitutes the ARN it registered or reused.
 * The planned status sets `lastAppliedSpecHash` for a planned create/rollout; the pass reverts it
 * when the action fails, and sets `lastAction`.
 */
export function plan(input: PlanInput): Plan {
  const fleet = fleetFacts(input);
  const ctx = planContext(input, fleet);
  const fold = new PlanFold(ctx);
  for (let i = 0; i < fleet.specIds.length; i++) {
    const r = fleet.specResults[i];
    const id = fleet.specIds[i];
    const cl = fleet.clusters.get(r.key.cluster) as ObservedCluster;
    fold.add(r.key, id, reconcileService(serviceView(input, r.key, id, r, cl), ctx));
  }
  for (const { cluster, names } of fleet.orphans) {
    const cl = fleet.clusters.get(cluster) as ObservedCluster;
    for (const name of names) {
      const key = { cluster, service: name };
      const id = serviceId(key);
      fold.add(key, id, reconcileService(serviceView(input, key, id, undefined, cl), ctx));
    }
  }
  return fold.finish();
}

/** The fold of one pass's decisions: actions, statuses, delete candidates, history wanted, holds. */
class PlanFold {
  private readonly actions: Action[] = [];
  private readonly statuses: Record<ServiceId, ServiceStatus> = dict();
  private readonly candidates: DeleteCandidate[] = [];
  private readonly historyWanted: ServiceKey[] = [];
  private readonly holds: PruneHoldBook;

  constructor(private readonly ctx: PlanContext) {
    this.holds = new PruneHoldBook(ctx.fleet, ctx.now);
  }

  add(key: ServiceKey, id: ServiceId, d: Decision): void {
    for (const a of d.actions) this.actions.push(a);
    if (d.status) this.statuses[id] = d.status;
    if (d.deleteCandidate) this.candidates.push(d.deleteCandidate);
    if (d.wantsDeploymentHistory) this.historyWanted.push(key);
    if (d.hold) this.holds.hold(d.hold.cluster, d.hold.reason);
  }

  /** The plan: the delete budget applied, actions and keys sorted, the holds decided. */
  finish(): Plan {
    const deletes = applyDeleteBudget(this.candidates, this.ctx, this.holds, this.statuses);
    this.actions.sort(compareActions);
    deletes.sort(compareKeys);
    const wanted = this.historyWanted.sort(compareKeys);
    const pruneHolds = this.holds.result();
    return {
      actions: [...this.actions, ...deletes],
      statuses: this.statuses,
      ...(wanted.length > 0 ? { deploymentHistoryWanted: wanted } : {}),
      ...(pruneHolds ? { pruneHolds } : {}),
    };
  }
}

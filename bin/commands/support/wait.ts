/**
 * `--wait` of `ecsr apply` and `ecsr delete`, and `ecsr wait`: polls the items' `status` (and,
 * before it reports success, ECS itself) until every service runs its spec and stayed there, a
 * service cannot converge without a person, or time runs out.
 *
 * A service is done when its status's `specHash` is the hash that was written (a pass has seen
 * this spec), and then:
 * - for `state: present`: phase `Converged`, `runningCount = desiredCount`, the applied deployment
 *   COMPLETED (`appliedRolloutState`, when the status records one) and `lastAppliedSpecHash` the
 *   written hash; and then ECS itself says the service is stable ({@link liveStability}): one
 *   deployment, PRIMARY and COMPLETED, running = desired, no task of that deployment stopped
 *   because it failed (EssentialContainerExited, TaskFailedToStart), and this has held for the
 *   stability window by ECS's clock, seen on two consecutive polls;
 * - for `state: absent`: phase `Deleted`.
 * It has failed when, for that hash, the rollout FAILED (`failedSpecHash`, condition
 * `RolloutFailed`: the reconciler will not re-apply it, docs/ecs-facts.md §4) or the phase is `Invalid` or
 * `Blocked` (a person must act; {@link failureSentence} says what to do per reason), or ECS refused
 * a call for that hash (condition `ActionRejected`: the pass only retries the same call with
 * backoff, so nothing moves until a person acts). Other states (lagging tasks, a partial read)
 * are waited out until the timeout.
 */
import { DescribeServicesCommand, type ECSClient, type Task } from '@aws-sdk/client-ecs';
import { createEcsClient } from '../../../lambda/adapters/clients';
import { toStoppedTask } from '../../../lambda/adapters/ecs-observer';
import { serviceId, type ServiceKey, type ServiceStatus } from '../../../lambda/core/types';
import { formatDuration } from './options';
import { statusDeploymentLine } from './deployment-progress';
import { shorten, statusReason } from './format';
import type { SpecTable } from './spec-table';
import { describeTaskArns, listTaskArns, newestStoppedTasks, stoppedTasks } from './tasks';

/** A service to wait for and the spec hash that was written for it. */
export interface WaitTarget {
  readonly key: ServiceKey;
  readonly hash: string;
  readonly state: 'present' | 'absent';
}

export type WaitVerdict = 'waiting' | 'done' | 'failed';

/** The verdict for one service given its current status (see the module comment). */
export function verdictOf(target: WaitTarget, status: ServiceStatus | undefined): WaitVerdict {
  if (!status || status.specHash !== target.hash) return 'waiting';
  if (status.phase === 'Invalid' || status.phase === 'Blocked') return 'failed';
  // ECS refused a call for this very spec: nothing moves towards it until a person acts (the pass
  // only retries the same call with backoff), so waiting longer would show nothing new.
  if (refusalOf(status) !== undefined) return 'failed';
  if (target.state === 'absent') return status.phase === 'Deleted' ? 'done' : 'waiting';
  if (status.failedSpecHash === target.hash || status.conditions.some((c) => c.reason === 'RolloutFailed' && c.status === 'False')) {
    return 'failed';
  }
  const rolloutDone = status.appliedRolloutState === undefined || status.appliedRolloutState === 'COMPLETED';
  if (
    status.phase === 'Converged' &&
    status.runningCount === status.desiredCount &&
    rolloutDone &&
    (status.lastAppliedSpecHash === undefined || status.lastAppliedSpecHash === target.hash)
  ) {
    return 'done';
  }
  return 'waiting';
}

/**
 * The standing refusal of the status's spec: its condition `ActionRejected` True (reason
 * `AccessDenied`, `EcsRejected`, `CapacityProviderMissing`, message `<call>: <ECS's words>`).
 */
export function refusalOf(status: ServiceStatus | undefined): { reason: string; message: string } | undefined {
  if (!status || !Array.isArray(status.conditions)) return undefined;
  const c = status.conditions.find((x) => x.type === 'ActionRejected' && x.status === 'True');
  return c ? { reason: c.reason, message: c.message } : undefined;
}

/**
 * One progress line: `shop/web  Progressing  running 1/3, pending 2  TasksLagging: ...`; for a
 * service being deleted, the tasks still running (`shop/web  Deleting  3 tasks running`), never a
 * count "of 0".
 */
export function progressLine(target: WaitTarget, status: ServiceStatus | undefined): string {
  const id = serviceId(target.key);
  if (!status) return `${id}  waiting for the first pass`;
  if (status.specHash !== target.hash) return `${id}  waiting for a pass to read the new spec (status is of an older one)`;
  const counts =
    target.state === 'absent'
      ? status.runningCount + status.pendingCount === 0
        ? 'no tasks left'
        : `${status.runningCount} task${status.runningCount === 1 ? '' : 's'} running${status.pendingCount > 0 ? `, ${status.pendingCount} pending` : ''}`
      : `running ${status.runningCount}/${status.desiredCount}${status.pendingCount > 0 ? `, pending ${status.pendingCount}` : ''}`;
  const why = statusDeploymentLine(status) ?? statusReason(status);
  return `${id}  ${status.phase}  ${counts}${why ? `  ${shorten(why, 120)}` : ''}`;
}

/** Default stability window (seconds of ECS's clock) before `--wait` calls a service converged. */
export const DEFAULT_STABLE_SECONDS = 30;

/** Stop codes that mean a task of the deployment failed (not a scale-in, a person or Spot). */
const FAILED_STOP_CODES = new Set(['EssentialContainerExited', 'TaskFailedToStart']);

/** What ECS says about a service that its status calls converged. */
export interface Stability {
  /** Why it is not stable (yet), or undefined when it is. */
  readonly problem?: string;
  /** Seconds, by ECS's clock, since the deployment last changed or a task of it last started. */
  readonly stableForSeconds: number;
}

/**
 * Asks ECS whether `key` is stable: one deployment, PRIMARY, rollout COMPLETED (or no rollout
 * state, as for non-ECS controllers), running = desired, and no task of that deployment stopped
 * with a failure stop code (ECS stamps a service's tasks with `startedBy` = the deployment id).
 * `stableForSeconds` counts from the later of the deployment's `updatedAt` and the newest running
 * task's `startedAt`, to ECS's "now": the local time corrected by the offset the SDK derives from
 * each response's `Date` header (`systemClockOffset`), so that a simulated clock counts too.
 * Calls: DescribeServices, ListTasks (RUNNING, STOPPED; every page), DescribeTasks (100 a call).
 * @throws the SDK's errors (the caller retries at its next poll).
 */
export async function liveStability(ecs: ECSClient, key: ServiceKey): Promise<Stability> {
  const svc = (await ecs.send(new DescribeServicesCommand({ cluster: key.cluster, services: [key.service] }))).services?.[0];
  if (!svc || svc.status !== 'ACTIVE') return { problem: `ECS reports the service ${svc ? svc.status : 'missing'}`, stableForSeconds: 0 };
  const deployments = svc.deployments ?? [];
  const primary = deployments.find((d) => d.status === 'PRIMARY');
  if (!primary) return { problem: 'ECS reports no PRIMARY deployment', stableForSeconds: 0 };
  if (deployments.length > 1) return { problem: `ECS still runs ${deployments.length} deployments (the old one is draining)`, stableForSeconds: 0 };
  if (primary.rolloutState !== undefined && primary.rolloutState !== 'COMPLETED') {
    return { problem: `deployment ${primary.id} is ${primary.rolloutState}`, stableForSeconds: 0 };
  }
  if (svc.runningCount !== svc.desiredCount) return { problem: `ECS reports running ${svc.runningCount}/${svc.desiredCount}`, stableForSeconds: 0 };
  // Every page: the deployment's own tasks may be anywhere in ECS's unordered listing.
  const ofPrimary = (tasks: Task[]) => tasks.filter((t) => t.startedBy === primary.id);
  const failed = ofPrimary(await stoppedTasks(ecs, key)).filter((t) => t.stopCode !== undefined && FAILED_STOP_CODES.has(t.stopCode));
  if (failed.length > 0) {
    const t = failed[0];
    const what = [t.stopCode, t.stoppedReason].filter(Boolean).join(': ');
    return {
      problem: `${failed.length} task${failed.length === 1 ? '' : 's'} of deployment ${primary.id} stopped (task ${t.taskArn?.split('/').pop()}: ${what})`,
      stableForSeconds: 0,
    };
  }
  const running = ofPrimary(await describeTaskArns(ecs, key.cluster, await listTaskArns(ecs, key, 'RUNNING')));
  const since = Math.max(primary.updatedAt?.getTime() ?? 0, ...running.map((t) => t.startedAt?.getTime() ?? 0));
  const ecsNow = Date.now() + (ecs.config.systemClockOffset ?? 0);
  return { stableForSeconds: since === 0 ? 0 : Math.max(0, (ecsNow - since) / 1000) };
}

/**
 * The first sentence and next step of a service that cannot converge without a person, by the
 * reason its status gives (docs/status.md, "Conditions and reasons").
 */
export function failureSentence(target: WaitTarget, status: ServiceStatus | undefined): string {
  const blocked = status?.conditions.find((c) => c.type === 'Blocked' && c.status === 'True');
  const rolloutFailed = status?.failedSpecHash === target.hash || status?.conditions.some((c) => c.reason === 'RolloutFailed' && c.status === 'False');
  const refusal = blocked || status?.phase === 'Invalid' ? undefined : refusalOf(status);
  const reason = blocked?.reason ?? (status?.phase === 'Invalid' ? 'SpecInvalid' : refusal ? refusal.reason : rolloutFailed ? 'RolloutFailed' : undefined);
  return reasonSentence(target.key, reason, blocked?.message ?? refusal?.message ?? `phase ${status?.phase ?? 'unknown'}`);
}

/** {@link failureSentence} for a condition reason; `message` is the condition's. */
export function reasonSentence(key: ServiceKey, reason: string | undefined, message: string): string {
  const id = serviceId(key);
  const { cluster } = key;
  switch (reason) {
    case 'ClusterNotFound':
      return (
        `Cluster ${cluster} does not exist, so ${id} was not created: the reconciler never creates clusters. ` +
        `Create it (aws ecs create-cluster --cluster-name ${cluster}) or fix \`cluster\` in the spec; the spec stays in the table, and the first pass after the cluster exists creates the service.`
      );
    case 'ClusterAccessDenied':
      return (
        `The reconciler may not read cluster ${cluster} (${message}), so it cannot tell what runs there and does nothing for ${id}. ` +
        'Give its role that cluster (with the CDK, the construct\'s `clusters`), or move the spec to a cluster it manages; the first pass that can read the cluster reconciles it.'
      );
    case 'NotOwned':
      return (
        `${id} already exists in ECS without this reconciler's owner tag, so the reconciler leaves it alone. ` +
        `To take it over, set \`adopt: true\` in its spec and apply again; otherwise give the spec another service name.`
      );
    case 'SpecInvalid':
      return `The spec of ${id} in the table is invalid, so the reconciler does nothing for it. Fix the attributes listed below and apply again (ecsr validate -f FILE checks a file offline).`;
    case 'NotAllowed':
      return (
        `The reconciler refuses ${id}: ${message}. ` +
        `Use a value the allow-list permits, or add it to the allow-list (the ALLOWED_* variable named above; with the CDK its prop or -c key, docs/deploy.md "Allow-lists") and redeploy.`
      );
    case 'NoSubnets':
      return `${id} names no subnets and the reconciler has no default subnets, so it cannot be created. Set \`subnets\` in the spec, or DEFAULT_SUBNETS (with the CDK: -c subnets=...).`;
    case 'AccessDenied':
      return (
        `IAM refuses the reconciler's call for ${id}: ${message}. ` +
        "Nothing changes in ECS while it is refused; the reconciler retries with backoff, and at once on a spec change or ecsr reconcile. Give the reconciler's role that permission (with the CDK, the construct's props), or change the spec to what it may do."
      );
    case 'EcsRejected':
    case 'CapacityProviderMissing':
      return (
        `ECS refuses the reconciler's call for ${id}: ${message}. ` +
        'Nothing changes in ECS while it is refused; the reconciler retries with backoff, and at once on a spec change or ecsr reconcile. Fix what ECS names (in the spec, or in the account: the cluster, subnet or role it names) and apply again.'
      );
    case 'RolloutFailed':
      return (
        `The rollout of ${id} failed, and the reconciler will not re-apply this spec until it changes. ` +
        `Fix the cause (the stopped tasks' reasons below), then change the spec: any change rolls out again.`
      );
    default:
      return `${id} is blocked (${reason ? `${reason}: ` : ''}${message}); the reconciler will not act on it until a person does.`;
  }
}

export interface WaitOptions {
  /** Seconds before giving up. */
  readonly timeoutSeconds: number;
  /** Seconds between reads of the statuses. */
  readonly intervalSeconds: number;
  /** Seconds (ECS's clock) a converged service must stay stable; default {@link DEFAULT_STABLE_SECONDS}. */
  readonly stableSeconds?: number;
  /** Where progress goes (one line whenever a service's progress changes). */
  readonly write: (line: string) => void;
  /** ECS client for the stability check (default: the SDK's configuration). */
  readonly ecs?: ECSClient;
  /**
   * false: the reconciler's status alone decides (no ECS stability check): a target other than
   * `default`, whose ECS is in another account than this shell's credentials reach.
   */
  readonly ecsReads?: boolean;
}

export interface WaitResult {
  readonly done: WaitTarget[];
  readonly failed: { target: WaitTarget; status: ServiceStatus | undefined }[];
  /** Services still waiting when time ran out, with what ECS said last when the status was converged. */
  readonly pending: { target: WaitTarget; status: ServiceStatus | undefined; live?: string }[];
  readonly timedOut: boolean;
}

/**
 * Polls until every target is done, any has failed (the others are still reported), or the timeout.
 * Read errors are retried until the timeout (a throttled read is not a failed rollout).
 */
export async function waitForTargets(table: SpecTable, targets: readonly WaitTarget[], opts: WaitOptions): Promise<WaitResult> {
  const deadline = Date.now() + opts.timeoutSeconds * 1000;
  const stableSeconds = opts.stableSeconds ?? DEFAULT_STABLE_SECONDS;
  const ecsReads = opts.ecsReads ?? true;
  const ecs = opts.ecs ?? (ecsReads ? createEcsClient().ecs : undefined);
  const last = new Map<string, string>();
  const statuses = new Map<string, ServiceStatus | undefined>();
  const verdicts = new Map<string, WaitVerdict>();
  /** Consecutive polls at which ECS said the service was stable for the window. */
  const stablePolls = new Map<string, number>();
  const live = new Map<string, string>();
  let lastError = '';
  const say = (id: string, line: string) => {
    if (last.get(id) === line) return;
    opts.write(line);
    last.set(id, line);
  };
  try {
    for (;;) {
      for (const t of targets) {
        const id = serviceId(t.key);
        if (verdicts.get(id) === 'done' || verdicts.get(id) === 'failed') continue;
        try {
          const entry = await table.get(t.key);
          statuses.set(id, entry?.status);
          lastError = '';
        } catch (err) {
          const msg = err instanceof Error ? err.message : String(err);
          if (msg !== lastError) opts.write(`(could not read ${id}: ${msg}; retrying)`);
          lastError = msg;
          continue;
        }
        const status = statuses.get(id);
        let verdict = verdictOf(t, status);
        say(id, progressLine(t, status));
        if (verdict === 'done' && t.state === 'present' && ecs) {
          // The status says converged; ECS must agree, and keep agreeing for the window.
          let stability: Stability;
          try {
            stability = await liveStability(ecs, t.key);
          } catch (err) {
            stability = { problem: `could not read ECS: ${err instanceof Error ? err.message : String(err)}`, stableForSeconds: 0 };
          }
          const stable = stability.problem === undefined && stability.stableForSeconds >= stableSeconds;
          stablePolls.set(id, stable ? (stablePolls.get(id) ?? 0) + 1 : 0);
          if (stability.problem !== undefined) {
            live.set(id, stability.problem);
            say(id, `${id}  not stable yet: ${stability.problem}`);
          } else if (!stable) {
            live.set(id, `stable for ${Math.floor(stability.stableForSeconds)}s of the ${stableSeconds}s window`);
            say(id, `${id}  running as specified; checking that it stays so for ${formatDuration(stableSeconds)} (ECS time)`);
          }
          if ((stablePolls.get(id) ?? 0) < 2) verdict = 'waiting';
        }
        verdicts.set(id, verdict);
      }
      const all = targets.map((t) => ({ target: t, status: statuses.get(serviceId(t.key)), verdict: verdicts.get(serviceId(t.key)) ?? 'waiting' }));
      const failed = all.filter((x) => x.verdict === 'failed');
      const waiting = all.filter((x) => x.verdict === 'waiting');
      const result = (timedOut: boolean): WaitResult => ({
        done: all.filter((x) => x.verdict === 'done').map((x) => x.target),
        failed: failed.map(({ target, status }) => ({ target, status })),
        pending: waiting.map(({ target, status }) => ({ target, status, ...(live.has(serviceId(target.key)) ? { live: live.get(serviceId(target.key)) } : {}) })),
        timedOut,
      });
      if (waiting.length === 0) return result(false);
      if (Date.now() >= deadline) return result(true);
      await new Promise((r) => setTimeout(r, Math.min(opts.intervalSeconds * 1000, Math.max(0, deadline - Date.now()))));
    }
  } finally {
    if (!opts.ecs) ecs?.destroy();
  }
}

/**
 * Why a service did not converge, for the failure report: the status's conditions and reasons,
 * then ECS's latest service events (DescribeServices) and the stop codes and reasons of its five
 * most recently stopped tasks (every page of ListTasks desiredStatus STOPPED + DescribeTasks,
 * sorted by stop time; ECS keeps stopped tasks about an hour, docs/ecs-facts.md §5). When ECS cannot be read, that is said instead.
 */
export async function explain(target: WaitTarget, status: ServiceStatus | undefined, ecs?: ECSClient | false): Promise<string[]> {
  const lines: string[] = [];
  const key = target.key;
  const id = serviceId(key);
  if (!status) {
    lines.push(`${id}: no status yet: no reconcile pass has run since the spec was written (is the reconciler deployed and its schedule enabled?)`);
  } else {
    const stale = status.specHash !== target.hash ? ' (the status is of an older spec: no pass has read the new one yet)' : '';
    // A service being deleted has no desired count to be "of": its tasks left, never "running 3/0".
    const left = status.runningCount + status.pendingCount;
    const counts =
      target.state === 'absent'
        ? left === 0
          ? 'no tasks left'
          : `${status.runningCount} task${status.runningCount === 1 ? '' : 's'} running, ${status.pendingCount} pending`
        : `running ${status.runningCount}/${status.desiredCount}, pending ${status.pendingCount}`;
    lines.push(`${id}: phase ${status.phase}, ${counts}${stale}`);
    for (const c of status.conditions) {
      if (c.status === 'True' && (c.type === 'Ready' || c.type === 'Progressing')) continue;
      if (c.type === 'Progressing' && status.conditions.some((r) => r.type === 'Ready' && r.reason === c.reason && r.message === c.message)) continue;
      lines.push(`  condition ${c.type}=${c.status} ${c.reason}: ${c.message}`);
    }
    if (status.lastAction?.error) lines.push(`  last action ${status.lastAction.summary} failed: ${status.lastAction.error}`);
  }
  if (ecs === false) {
    lines.push("  (ECS not read: the target's services are in another account than this shell's credentials reach)");
    return lines;
  }
  const client = ecs ?? createEcsClient().ecs;
  try {
    const described = await client.send(new DescribeServicesCommand({ cluster: key.cluster, services: [key.service] }));
    const svc = described.services?.[0];
    if (!svc) {
      lines.push(`  (ECS has no service ${key.service} in cluster ${key.cluster})`);
    } else {
      for (const e of (svc.events ?? []).slice(0, 5)) lines.push(`  event ${e.createdAt?.toISOString() ?? '?'}: ${e.message ?? ''}`);
      for (const t of await newestStoppedTasks(client, key, 5)) lines.push(`  stopped task ${t.taskArn?.split('/').pop()}: ${taskStopText(t)}`);
    }
  } catch (err) {
    lines.push(`  (could not read ECS: ${err instanceof Error ? err.message : String(err)})`);
  } finally {
    if (!ecs) client.destroy();
  }
  return lines;
}

/**
 * Why a task stopped: `STOPCODE: stoppedReason`, with container details only where they add to
 * it (another reason, a non-zero exit code): `(app: exit code 137)`. Empty for a running task.
 */
export function taskStopText(task: Task): string {
  const t = toStoppedTask(task);
  const containers = t.containers
    .filter((c) => (c.reason && c.reason !== t.stoppedReason) || (c.exitCode !== undefined && c.exitCode !== 0))
    .map((c) => `${c.name}: ${c.reason && c.reason !== t.stoppedReason ? c.reason : `exit code ${c.exitCode}`}`);
  const what = [t.stopCode, t.stoppedReason].filter(Boolean).join(': ');
  return `${what}${containers.length > 0 ? ` (${containers.join('; ')})` : ''}`;
}

/** `3 of 4 services converged in 2m30s` (`verb`: converged, deleted). */
export function waitSummary(result: WaitResult, total: number, elapsedSeconds: number, verb = 'converged'): string {
  return `${result.done.length} of ${total} service${total === 1 ? '' : 's'} ${verb} in ${formatDuration(elapsedSeconds)}`;
}

/**
 * `--wait` of `ecsr apply` and `ecsr delete`: polls the items' `status` until every service
 * reflects its spec and has converged, a rollout fails, or time runs out.
 *
 * A service is done when its status's `specHash` is the hash that was written (a pass has seen
 * this spec), and then:
 * - for `state: present`: phase `Converged`, `runningCount = desiredCount`, the applied deployment
 *   COMPLETED (`appliedRolloutState`, when the status records one) and `lastAppliedSpecHash` the
 *   written hash;
 * - for `state: absent`: phase `Deleted`.
 * It has failed when, for that hash, the rollout FAILED (`failedSpecHash`, condition
 * `RolloutFailed`: the reconciler will not re-apply it, ECS-FACTS §4) or the phase is `Invalid` or
 * `Blocked` (a person must act). Other states (lagging tasks, rejected calls that the next pass
 * retries) are waited out until the timeout.
 */
import { DescribeServicesCommand, DescribeTasksCommand, ListTasksCommand, type ECSClient } from '@aws-sdk/client-ecs';
import { createEcsClient } from '../../../lambda/adapters/clients';
import { toStoppedTask } from '../../../lambda/adapters/ecs-observer';
import { serviceId, type ServiceKey, type ServiceStatus } from '../../../lambda/core/types';
import { formatDuration } from './options';
import { shorten, statusReason } from './format';
import type { SpecTable } from './spec-table';

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

/** One progress line: `shop/web  Progressing  running 1/3, pending 2  TasksLagging: ...`. */
export function progressLine(target: WaitTarget, status: ServiceStatus | undefined): string {
  const id = serviceId(target.key);
  if (!status) return `${id}  waiting for the first pass`;
  if (status.specHash !== target.hash) return `${id}  waiting for a pass to read the new spec (status is of an older one)`;
  const counts = `running ${status.runningCount}/${status.desiredCount}${status.pendingCount > 0 ? `, pending ${status.pendingCount}` : ''}`;
  const why = statusReason(status);
  return `${id}  ${status.phase}  ${counts}${why ? `  ${shorten(why, 120)}` : ''}`;
}

export interface WaitOptions {
  /** Seconds before giving up. */
  readonly timeoutSeconds: number;
  /** Seconds between reads of the statuses. */
  readonly intervalSeconds: number;
  /** Where progress goes (one line whenever a service's progress changes). */
  readonly write: (line: string) => void;
}

export interface WaitResult {
  readonly done: WaitTarget[];
  readonly failed: { target: WaitTarget; status: ServiceStatus | undefined }[];
  /** Services still waiting when time ran out. */
  readonly pending: { target: WaitTarget; status: ServiceStatus | undefined }[];
  readonly timedOut: boolean;
}

/**
 * Polls until every target is done, any has failed (the others are still reported), or the timeout.
 * Read errors are retried until the timeout (a throttled read is not a failed rollout).
 */
export async function waitForTargets(table: SpecTable, targets: readonly WaitTarget[], opts: WaitOptions): Promise<WaitResult> {
  const deadline = Date.now() + opts.timeoutSeconds * 1000;
  const last = new Map<string, string>();
  const statuses = new Map<string, ServiceStatus | undefined>();
  const verdicts = new Map<string, WaitVerdict>();
  let lastError = '';
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
      const verdict = verdictOf(t, status);
      verdicts.set(id, verdict);
      const line = progressLine(t, status);
      if (last.get(id) !== line) {
        opts.write(line);
        last.set(id, line);
      }
    }
    const all = targets.map((t) => ({ target: t, status: statuses.get(serviceId(t.key)), verdict: verdicts.get(serviceId(t.key)) ?? 'waiting' }));
    const failed = all.filter((x) => x.verdict === 'failed');
    const waiting = all.filter((x) => x.verdict === 'waiting');
    const result = (timedOut: boolean): WaitResult => ({
      done: all.filter((x) => x.verdict === 'done').map((x) => x.target),
      failed: failed.map(({ target, status }) => ({ target, status })),
      pending: waiting.map(({ target, status }) => ({ target, status })),
      timedOut,
    });
    if (waiting.length === 0) return result(false);
    if (Date.now() >= deadline) return result(true);
    await new Promise((r) => setTimeout(r, Math.min(opts.intervalSeconds * 1000, Math.max(0, deadline - Date.now()))));
  }
}

/**
 * Why a service did not converge, for the failure report: the status's conditions and reasons,
 * then ECS's latest service events (DescribeServices) and the stop codes and reasons of its latest
 * stopped tasks (ListTasks desiredStatus STOPPED + DescribeTasks; ECS keeps stopped tasks about an
 * hour, ECS-FACTS §5). When ECS cannot be read, that is said instead.
 */
export async function explain(target: WaitTarget, status: ServiceStatus | undefined, ecs?: ECSClient): Promise<string[]> {
  const lines: string[] = [];
  const key = target.key;
  const id = serviceId(key);
  if (!status) {
    lines.push(`${id}: no status yet: no reconcile pass has run since the spec was written (is the reconciler deployed and its schedule enabled?)`);
  } else {
    const stale = status.specHash !== target.hash ? ' (the status is of an older spec: no pass has read the new one yet)' : '';
    lines.push(`${id}: phase ${status.phase}, running ${status.runningCount}/${status.desiredCount}, pending ${status.pendingCount}${stale}`);
    for (const c of status.conditions) {
      if (c.status === 'True' && (c.type === 'Ready' || c.type === 'Progressing')) continue;
      if (c.type === 'Progressing' && status.conditions.some((r) => r.type === 'Ready' && r.reason === c.reason && r.message === c.message)) continue;
      lines.push(`  condition ${c.type}=${c.status} ${c.reason}: ${c.message}`);
    }
    if (status.lastAction?.error) lines.push(`  last action ${status.lastAction.summary} failed: ${status.lastAction.error}`);
  }
  const client = ecs ?? createEcsClient().ecs;
  try {
    const described = await client.send(new DescribeServicesCommand({ cluster: key.cluster, services: [key.service] }));
    const svc = described.services?.[0];
    if (!svc) {
      lines.push(`  (ECS has no service ${key.service} in cluster ${key.cluster})`);
    } else {
      for (const e of (svc.events ?? []).slice(0, 5)) lines.push(`  event ${e.createdAt?.toISOString() ?? '?'}: ${e.message ?? ''}`);
      const list = await client.send(
        new ListTasksCommand({ cluster: key.cluster, serviceName: key.service, desiredStatus: 'STOPPED', maxResults: 5 }),
      );
      const arns = list.taskArns ?? [];
      if (arns.length > 0) {
        const tasks = (await client.send(new DescribeTasksCommand({ cluster: key.cluster, tasks: arns }))).tasks ?? [];
        for (const t of tasks.map(toStoppedTask)) {
          // Container details only where they add to the task's reason: another reason, a failing exit code.
          const containers = t.containers
            .filter((c) => (c.reason && c.reason !== t.stoppedReason) || (c.exitCode !== undefined && c.exitCode !== 0))
            .map((c) => `${c.name}: ${c.reason && c.reason !== t.stoppedReason ? c.reason : `exit code ${c.exitCode}`}`);
          const what = [t.stopCode, t.stoppedReason].filter(Boolean).join(': ');
          lines.push(`  stopped task ${t.taskArn.split('/').pop()}: ${what}${containers.length > 0 ? ` (${containers.join('; ')})` : ''}`);
        }
      }
    }
  } catch (err) {
    lines.push(`  (could not read ECS: ${err instanceof Error ? err.message : String(err)})`);
  } finally {
    if (!ecs) client.destroy();
  }
  return lines;
}

/** `3 of 4 services converged in 2m30s` (`verb`: converged, deleted). */
export function waitSummary(result: WaitResult, total: number, elapsedSeconds: number, verb = 'converged'): string {
  return `${result.done.length} of ${total} service${total === 1 ? '' : 's'} ${verb} in ${formatDuration(elapsedSeconds)}`;
}

/**
 * A service's tasks as the CLI shows them (`ecsr describe`, `--wait` and its failure report).
 * ListTasks answers in no documented order and 100 a page, so its first page of a service that
 * has stopped many tasks can hold only old ones: the stopped tasks shown are the newest by
 * `stoppedAt`, read over every page and described 100 at a time (DescribeTasks' limit,
 * docs/ecs-facts.md §1). ECS keeps stopped tasks for about an hour (§5), which bounds the pages.
 */
import { DescribeTasksCommand, paginateListTasks, type ECSClient, type Task } from '@aws-sdk/client-ecs';
import { ECS_LIMITS } from '../../../lambda/core/ecs-limits';
import type { ServiceKey } from '../../../lambda/core/types';

/**
 * Every task ARN of the service with `desiredStatus`, over all pages (or the first `limit`).
 * @throws the SDK's errors.
 */
export async function listTaskArns(ecs: ECSClient, key: ServiceKey, desiredStatus: 'RUNNING' | 'STOPPED', limit = Infinity): Promise<string[]> {
  const arns: string[] = [];
  const pages = paginateListTasks(
    { client: ecs, pageSize: ECS_LIMITS.listTasksMaxResults },
    { cluster: key.cluster, serviceName: key.service, desiredStatus },
  );
  for await (const page of pages) {
    arns.push(...(page.taskArns ?? []));
    if (arns.length >= limit) return arns.slice(0, limit);
  }
  return arns;
}

/**
 * DescribeTasks of `arns`, 100 per call, in the order ECS answers.
 * @throws the SDK's errors.
 */
export async function describeTaskArns(ecs: ECSClient, cluster: string, arns: readonly string[]): Promise<Task[]> {
  const tasks: Task[] = [];
  for (let i = 0; i < arns.length; i += ECS_LIMITS.describeTasksBatch) {
    const batch = arns.slice(i, i + ECS_LIMITS.describeTasksBatch);
    tasks.push(...((await ecs.send(new DescribeTasksCommand({ cluster, tasks: batch }))).tasks ?? []));
  }
  return tasks;
}

/** Newest first by `stoppedAt` (a task without one, still stopping, first of all). */
export function byStoppedAtDescending(a: Task, b: Task): number {
  const t = (x: Task) => x.stoppedAt?.getTime() ?? Infinity;
  return t(b) - t(a) || (b.stoppingAt?.getTime() ?? 0) - (a.stoppingAt?.getTime() ?? 0);
}

/**
 * Every stopped task of the service ECS still keeps, described, newest first.
 * @throws the SDK's errors.
 */
export async function stoppedTasks(ecs: ECSClient, key: ServiceKey): Promise<Task[]> {
  const tasks = await describeTaskArns(ecs, key.cluster, await listTaskArns(ecs, key, 'STOPPED'));
  return tasks.sort(byStoppedAtDescending);
}

/**
 * The `n` most recently stopped tasks of the service, newest first.
 * @throws the SDK's errors.
 */
export async function newestStoppedTasks(ecs: ECSClient, key: ServiceKey, n: number): Promise<Task[]> {
  return (await stoppedTasks(ecs, key)).slice(0, n);
}

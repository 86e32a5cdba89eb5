/**
 * Tasks: ListTasks, DescribeTasks, StopTask and RunTask (Amazon ECS API reference for each
 * action); the lifecycle of a task is the scheduler's (../scheduler).
 */
import type { RunTaskRequest, Task } from '@aws-sdk/client-ecs';
import { ECS_LIMITS } from '../../../lambda/core/ecs-limits';
import { shortName } from '../arns';
import type { SimCore } from '../core';
import { clientException, invalidParameter } from '../errors';
import { ruleForTask } from '../failure-modes';
import { stoppedReason } from '../messages';
import { page } from '../paging';
import { listMember, stringMember } from '../protocol';
import type { SimService } from '../state';
import { PENDING_STATES } from '../state';
import { taskToWire } from '../wire';
import { assertProvidersAssociated, pageReq, str, tagsInput } from './inputs';
import { launchChoice, networkConfiguration } from './service-inputs';

// Tasks -------------------------------------------------------------------------------------

/** ListTasks: by service, family, startedBy, launch type and desired status (default RUNNING). */
export function listTasks(core: SimCore, i: Record<string, unknown>): unknown {
  const cluster = core.resolveCluster(i.cluster);
  let svc: SimService | undefined;
  if (i.serviceName !== undefined) svc = core.requireService(cluster, i.serviceName);
  const desiredStatus = (i.desiredStatus as string | undefined) ?? 'RUNNING';
  if (!['RUNNING', 'PENDING', 'STOPPED'].includes(desiredStatus)) {
    throw invalidParameter('desiredStatus must be one of RUNNING, PENDING, STOPPED.');
  }
  const family = i.family as string | undefined;
  const startedBy = i.startedBy as string | undefined;
  const launchType = i.launchType as string | undefined;
  const tasks = (svc ? core.scheduler.tasksOf(svc) : [...cluster.tasks.values()]).filter(
    (t) =>
      (desiredStatus === 'STOPPED' ? t.desiredStatus === 'STOPPED' : t.desiredStatus === 'RUNNING') &&
      (desiredStatus !== 'PENDING' || PENDING_STATES.has(t.lastStatus)) &&
      (family === undefined || shortName(t.taskDefinitionArn).split(':')[0] === family) &&
      (startedBy === undefined || t.startedBy === startedBy) &&
      (launchType === undefined || t.launchType === launchType),
  );
  const p = page(`tasks:${cluster.name}`, tasks.map((t) => t.arn), pageReq(i), {
    defaultMax: ECS_LIMITS.listTasksDefaultMaxResults,
    max: ECS_LIMITS.listTasksMaxResults,
  });
  return { taskArns: p.items, ...(p.nextToken ? { nextToken: p.nextToken } : {}) };
}

/** DescribeTasks: up to 100 ids or ARNs; unknown ones in `failures` with reason MISSING. */
export function describeTasks(core: SimCore, i: Record<string, unknown>): unknown {
  const cluster = core.resolveCluster(i.cluster);
  const refs = listMember(i, 'tasks', 'string');
  if (!refs || refs.length === 0) throw invalidParameter('Tasks cannot be empty.');
  if (refs.length > ECS_LIMITS.describeTasksBatch) {
    throw invalidParameter(`taskIds can have at most ${ECS_LIMITS.describeTasksBatch} items.`);
  }
  const includeTags = (listMember(i, 'include', 'string') ?? []).includes('TAGS');
  const tasks: Task[] = [];
  const failures: { arn: string; reason: string }[] = [];
  for (const ref of refs as string[]) {
    const t = core.findTask(cluster, ref);
    if (t) tasks.push(taskToWire(core, t, includeTags));
    else failures.push({ arn: ref.startsWith('arn:') ? ref : core.arns.task(cluster.name, ref), reason: 'MISSING' });
  }
  return { tasks, failures };
}

/** StopTask: stopCode UserInitiated, with the given reason or ECS's default. */
export function stopTaskApi(core: SimCore, i: Record<string, unknown>): unknown {
  const cluster = core.resolveCluster(i.cluster);
  const t = core.findTask(cluster, str(i, 'task', true));
  if (!t) throw invalidParameter('The referenced task was not found.');
  const reason = typeof i.reason === 'string' && i.reason !== '' ? i.reason : stoppedReason.userDefault();
  core.scheduler.stopTask(t, 'UserInitiated', reason);
  return { task: taskToWire(core, t, false) };
}

/**
 * RunTask: 1-10 standalone tasks; on EC2 (no container instances) or without Fargate capacity each
 * one is a `failures` entry, as ECS answers.
 */
export function runTask(core: SimCore, req: RunTaskRequest): unknown {
  const cluster = core.resolveCluster(req.cluster);
  const count = req.count ?? 1;
  if (!Number.isInteger(count) || count < 1 || count > 10) throw invalidParameter('count must be between 1 and 10.');
  const ref = stringMember(req as unknown as Record<string, unknown>, 'taskDefinition');
  const found = ref ? core.lookupTaskDefinition(ref) : undefined;
  if (!found) throw clientException('TaskDefinition not found.');
  const td = found.family.revisions[found.index].taskDefinition;
  const launch = launchChoice(req.launchType, req.capacityProviderStrategy, td);
  assertProvidersAssociated(cluster, req.capacityProviderStrategy);
  const nc = networkConfiguration(core, req.networkConfiguration, td);
  const strategy = launch.capacityProviderStrategy ?? (launch.launchType ? undefined : cluster.defaultCapacityProviderStrategy);
  const provider = strategy && strategy.length > 0 ? strategy[0].capacityProvider : undefined;
  const launchType = provider?.startsWith('FARGATE') || launch.launchType === 'FARGATE' ? 'FARGATE' : 'EC2';
  const tasks: Task[] = [];
  const failures: { arn?: string; reason: string }[] = [];
  const { rule } = ruleForTask(core.rules, td.containerDefinitions ?? []);
  for (let n = 0; n < count; n++) {
    if (launchType === 'EC2') {
      failures.push({ reason: 'No Container Instances were found in your cluster.' });
      continue;
    }
    if (rule.mode === 'no-capacity') {
      failures.push({ reason: 'Capacity is unavailable at this time. Please try again later or in a different availability zone' });
      continue;
    }
    const t = core.scheduler.launch({
      cluster,
      taskDefinition: td,
      launchType,
      capacityProviderName: provider,
      platformVersion: req.platformVersion,
      subnets: nc?.awsvpcConfiguration.subnets ?? [],
      startedBy: req.startedBy,
      group: req.group ?? `family:${td.family}`,
      tags: tagsInput(req.tags),
    });
    tasks.push(taskToWire(core, t, false));
  }
  return { tasks, failures };
}

// Tags --------------------------------------------------------------------------------------


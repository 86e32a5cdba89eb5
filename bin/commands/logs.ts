/**
 * `ecsr logs CLUSTER/SERVICE [--container NAME] [--since 10m] [--follow]`: the log lines of a
 * service's tasks (running, and the recently stopped ones whose lines say why they stopped), read
 * from CloudWatch Logs where the task definition's container uses the `awslogs` driver: group
 * `awslogs-group`, stream `awslogs-stream-prefix/container/task-id`. Each line names its task and
 * container. What it cannot read is said on stderr, container by container: FireLens
 * (`awsfirelens`, routed to another destination), another driver (splunk, fluentd...), awslogs
 * without a stream prefix, or no log configuration at all.
 *
 * Source: Amazon ECS Developer Guide, "Using the awslogs log driver" (stream name
 * prefix-name/container-name/ecs-task-id) and "Custom log routing" (FireLens); Amazon CloudWatch
 * Logs API Reference, FilterLogEvents (up to 100 logStreamNames, nextToken paging).
 */
import { CloudWatchLogsClient, paginateFilterLogEvents } from '@aws-sdk/client-cloudwatch-logs';
import { DescribeServicesCommand, DescribeTaskDefinitionCommand, type ContainerDefinition, type ECSClient, type Task } from '@aws-sdk/client-ecs';
import { Command, Option } from 'commander';
import { createEcsClient } from '../../lambda/adapters/clients';
import { chunk } from '../../lambda/adapters/concurrency';
import type { ServiceKey } from '../../lambda/core/types';
import { CliError } from './support/errors';
import { parseDuration, parseServiceRef, runAction, withAwsOptions, type AwsOptions } from './support/options';
import { describeTaskArns, listTaskArns } from './support/tasks';

interface LogsOptions extends AwsOptions {
  container?: string;
  since: number;
  follow?: boolean;
  interval: number;
}

/** Where one container of one task writes, or why it cannot be read. */
export type LogSource =
  | { readonly kind: 'awslogs'; readonly taskId: string; readonly container: string; readonly group: string; readonly stream: string; readonly region?: string }
  | { readonly kind: 'unreadable'; readonly container: string; readonly why: string };

/** The id of a task (the last part of its ARN). */
export function taskIdOf(taskArn: string): string {
  return taskArn.split('/').at(-1) ?? taskArn;
}

/**
 * Where `container` of task `taskId` sends its logs: an awslogs stream, or a sentence saying why
 * ecsr cannot read it.
 */
export function logSourceOf(taskId: string, container: ContainerDefinition): LogSource {
  const name = container.name ?? '(unnamed)';
  const config = container.logConfiguration;
  if (!config?.logDriver) return { kind: 'unreadable', container: name, why: `container ${name} has no log configuration: ECS keeps no log of its output` };
  const options = config.options ?? {};
  if (config.logDriver === 'awslogs') {
    const group = options['awslogs-group'];
    const prefix = options['awslogs-stream-prefix'];
    if (!group) return { kind: 'unreadable', container: name, why: `container ${name} uses awslogs without awslogs-group` };
    if (!prefix) return { kind: 'unreadable', container: name, why: `container ${name} uses awslogs without awslogs-stream-prefix, so its stream is not named after the task (group ${group})` };
    const region = options['awslogs-region'];
    return { kind: 'awslogs', taskId, container: name, group, stream: `${prefix}/${name}/${taskId}`, ...(region ? { region } : {}) };
  }
  if (config.logDriver === 'awsfirelens') {
    const to = options.Name ?? options.name;
    return { kind: 'unreadable', container: name, why: `container ${name} sends its logs through FireLens (awsfirelens${to ? `, output ${to}` : ''}) to a destination ecsr does not read; read them there` };
  }
  return { kind: 'unreadable', container: name, why: `container ${name} uses the ${config.logDriver} log driver; ecsr reads only awslogs` };
}

/** The service's tasks: running ones and the recently stopped ones ECS still lists. */
async function serviceTasks(ecs: ECSClient, key: ServiceKey): Promise<Task[]> {
  const arns = [...(await listTaskArns(ecs, key, 'RUNNING')), ...(await listTaskArns(ecs, key, 'STOPPED'))];
  return describeTaskArns(ecs, key.cluster, arns);
}

/**
 * The log sources of the service's tasks (one DescribeTaskDefinition per revision in use),
 * restricted to `container` when given.
 * @throws CliError when the service does not exist, or has no container `container`.
 */
export async function logSources(ecs: ECSClient, key: ServiceKey, container?: string): Promise<LogSource[]> {
  const described = await ecs.send(new DescribeServicesCommand({ cluster: key.cluster, services: [key.service] }));
  const service = described.services?.find((s) => s.status !== 'INACTIVE');
  if (!service) throw new CliError(`There is no service ${key.service} in cluster ${key.cluster}.`);
  const tasks = await serviceTasks(ecs, key);
  const definitions = new Map<string, ContainerDefinition[]>();
  for (const arn of new Set(tasks.map((t) => t.taskDefinitionArn).filter((a): a is string => typeof a === 'string'))) {
    const td = await ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: arn }));
    definitions.set(arn, td.taskDefinition?.containerDefinitions ?? []);
  }
  const names = new Set([...definitions.values()].flat().map((c) => c.name ?? ''));
  if (container !== undefined && names.size > 0 && !names.has(container)) {
    throw new CliError(`${key.cluster}/${key.service} has no container '${container}' (its containers: ${[...names].sort().join(', ')}).`);
  }
  return tasks.flatMap((t) =>
    (definitions.get(t.taskDefinitionArn ?? '') ?? []).filter((c) => container === undefined || c.name === container).map((c) => logSourceOf(taskIdOf(t.taskArn ?? ''), c)),
  );
}

/** One log line with the task and container it came from. */
export interface LogLine {
  readonly timestamp: number;
  readonly taskId: string;
  readonly container: string;
  readonly message: string;
  readonly eventId: string;
}

/**
 * The events of `sources` from `startTime` (epoch milliseconds), oldest first: FilterLogEvents per
 * log group, 100 streams a call, every page through the SDK's paginator.
 */
export async function readLogLines(sources: readonly Extract<LogSource, { kind: 'awslogs' }>[], startTime: number, clientFor: (region?: string) => CloudWatchLogsClient): Promise<LogLine[]> {
  const lines: LogLine[] = [];
  const byGroup = new Map<string, Extract<LogSource, { kind: 'awslogs' }>[]>();
  for (const s of sources) byGroup.set(`${s.region ?? ''}\n${s.group}`, [...(byGroup.get(`${s.region ?? ''}\n${s.group}`) ?? []), s]);
  for (const group of byGroup.values()) {
    const byStream = new Map(group.map((s) => [s.stream, s]));
    for (const streams of chunk([...byStream.keys()], 100)) {
      const pages = paginateFilterLogEvents({ client: clientFor(group[0].region) }, { logGroupName: group[0].group, logStreamNames: streams, startTime });
      try {
        for await (const page of pages) {
          for (const e of page.events ?? []) {
            const s = byStream.get(e.logStreamName ?? '');
            if (s && e.timestamp !== undefined) lines.push({ timestamp: e.timestamp, taskId: s.taskId, container: s.container, message: (e.message ?? '').replace(/\n$/, ''), eventId: e.eventId ?? `${e.logStreamName}:${e.timestamp}:${e.message}` });
          }
        }
      } catch (err) {
        // A group nobody wrote to yet (tasks that never started) has no lines to show.
        if ((err as { name?: string }).name !== 'ResourceNotFoundException') throw err;
      }
    }
  }
  return lines.sort((a, b) => a.timestamp - b.timestamp || a.eventId.localeCompare(b.eventId));
}

/** `2026-06-02T10:20:11.123Z 3f9c… web  message`. */
export function formatLogLine(l: LogLine): string {
  return `${new Date(l.timestamp).toISOString()} ${l.taskId} ${l.container} ${l.message}`;
}

async function showLogs(key: ServiceKey, opts: LogsOptions): Promise<void> {
  const { ecs } = createEcsClient();
  const clients = new Map<string, CloudWatchLogsClient>();
  const clientFor = (region?: string) => {
    const k = region ?? '';
    if (!clients.has(k)) clients.set(k, new CloudWatchLogsClient(region ? { region } : {}));
    return clients.get(k)!;
  };
  try {
    const said = new Set<string>();
    const seen = new Set<string>();
    let startTime = Date.now() - opts.since * 1000;
    for (let round = 0; ; round++) {
      const sources = await logSources(ecs, key, opts.container);
      for (const s of sources) if (s.kind === 'unreadable' && !said.has(s.why)) (said.add(s.why), process.stderr.write(`ecsr logs: ${s.why}.\n`));
      const readable = sources.filter((s): s is Extract<LogSource, { kind: 'awslogs' }> => s.kind === 'awslogs');
      if (round === 0 && sources.length > 0 && readable.length === 0) throw new CliError(`No container of ${key.cluster}/${key.service} logs with awslogs, so there is nothing ecsr can read (see above).`);
      if (round === 0 && sources.length === 0) process.stderr.write(`ecsr logs: ${key.cluster}/${key.service} has no task running or recently stopped.\n`);
      for (const l of await readLogLines(readable, startTime, clientFor)) {
        if (seen.has(l.eventId)) continue;
        seen.add(l.eventId);
        // Equal timestamps can be read again in the next round: the ids above drop them.
        startTime = Math.max(startTime, l.timestamp);
        process.stdout.write(`${formatLogLine(l)}\n`);
      }
      if (!opts.follow) return;
      await new Promise((r) => setTimeout(r, opts.interval * 1000));
    }
  } finally {
    ecs.destroy();
    for (const c of clients.values()) c.destroy();
  }
}

export function logsCommand(): Command {
  const cmd = new Command('logs')
    .description("Print the log lines of a service's tasks (awslogs), each with its task id and container")
    .argument('<cluster/service>', 'the service', parseServiceRef)
    .option('--container <name>', 'only this container')
    .addOption(new Option('--since <duration>', 'how far back to start, e.g. 10m, 1h').argParser(parseDuration).default(600, '10m'))
    .option('-f, --follow', 'keep printing new lines (Ctrl+C stops)')
    .addOption(new Option('--interval <duration>', 'how often --follow reads new lines').argParser(parseDuration).default(2, '2s'));
  return withAwsOptions(cmd, { table: false }).action(runAction(async (key: ServiceKey, opts: LogsOptions) => showLogs(key, opts)));
}

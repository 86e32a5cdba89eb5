/**
 * `ecsr describe CLUSTER/SERVICE`: everything about one service in one place, as `kubectl
 * describe` and `copilot svc status` show it: the spec in the table (or why it is invalid), the
 * reconciler's status and its conditions, the last action, and what ECS says now: the service's
 * deployments, its latest service events, and its tasks (running and recently stopped) with their
 * last status and stop codes and reasons.
 *
 * Calls: DynamoDB GetItem; ECS DescribeServices, ListTasks (RUNNING up to `--tasks`; STOPPED
 * every page, so that the `--tasks` stopped tasks shown are the newest), DescribeTasks (100 a
 * call). ECS keeps stopped tasks visible for about an hour and a service's
 * latest 100 events (Amazon ECS Developer Guide, "Viewing Amazon ECS service event messages").
 * An ECS read that fails is said in its section; the spec and status are still printed.
 */
import { DescribeServicesCommand, type Deployment, type ECSClient, type Service, type ServiceEvent, type Task } from '@aws-sdk/client-ecs';
import { Command, Option } from 'commander';
import wrapAnsi from 'wrap-ansi';
import { createEcsClient } from '../../lambda/adapters/clients';
import { specToItem } from '../../lambda/core/spec';
import { serviceId, type PruneHold, type ServiceKey, type ServiceStatus } from '../../lambda/core/types';
import { fitTable, reasonBlock, terminalWidth } from '../../local/view';
import { CliError } from './support/errors';
import { colorPhase, colorsFor, lastActionText, pruneHoldLines, statusReason, toJson, toYaml } from './support/format';
import { statusDeploymentLine } from './support/deployment-progress';
import { parseInteger, parseServiceRef, runAction, tableOf, withAwsOptions, withTargetOption, type AwsOptions, type TargetOption } from './support/options';
import { entryId, SpecTable, type TableEntry } from './support/spec-table';
import { describeTaskArns, listTaskArns, newestStoppedTasks } from './support/tasks';
import { taskStopText } from './support/wait';

interface DescribeOptions extends AwsOptions, TargetOption {
  output: 'text' | 'json' | 'yaml';
  events: number;
  tasks: number;
}

/** What ECS says about a service now (or why it could not be read). */
export interface LiveService {
  readonly service?: Service;
  readonly tasks: Task[];
  readonly error?: string;
}

/**
 * Reads the service, up to `maxTasks` of its running tasks and its `maxTasks` most recently
 * stopped ones (newest first: every page of ListTasks, ./support/tasks).
 * Never throws for an AWS error: it is returned as `error`.
 */
export async function readLiveService(ecs: ECSClient, key: ServiceKey, maxTasks: number): Promise<LiveService> {
  try {
    const service = (await ecs.send(new DescribeServicesCommand({ cluster: key.cluster, services: [key.service] }))).services?.[0];
    if (!service) return { tasks: [] };
    const running = await describeTaskArns(ecs, key.cluster, await listTaskArns(ecs, key, 'RUNNING', maxTasks));
    const stopped = await newestStoppedTasks(ecs, key, maxTasks);
    return { service, tasks: [...running, ...stopped] };
  } catch (err) {
    return { tasks: [], error: err instanceof Error ? err.message : String(err) };
  }
}

const time = (d: Date | string | undefined) => (d === undefined ? '-' : (typeof d === 'string' ? d : d.toISOString()).replace('T', ' ').replace(/\.\d+Z$/, 'Z'));
const last = (arn: string | undefined) => (arn ? (arn.split('/').pop() ?? arn) : '-');
const wrapLines = (text: string, width: number) => wrapAnsi(text.replace(/\s+/g, ' ').trim(), width, { hard: true, trim: true }).split('\n');
const indent = (text: string) => text.replace(/\n$/, '').split('\n').map((l) => `  ${l}`).join('\n');

/** The machine-readable form: the table's document of the item and ECS's own shapes. */
export function describeDocument(entry: TableEntry, live: LiveService, events: number): Record<string, unknown> {
  const r = entry.result;
  return {
    cluster: entry.key?.cluster,
    service: entry.key?.service,
    valid: r.ok,
    ...(r.ok ? { specHash: r.hash, spec: specToItem(r.spec) } : { errors: r.errors, spec: entry.item }),
    status: entry.status ?? null,
    ecs: live.error
      ? { error: live.error }
      : live.service
        ? {
            status: live.service.status,
            desiredCount: live.service.desiredCount,
            runningCount: live.service.runningCount,
            pendingCount: live.service.pendingCount,
            taskDefinition: live.service.taskDefinition,
            deployments: live.service.deployments ?? [],
            events: (live.service.events ?? []).slice(0, events),
            tasks: live.tasks.map((t) => ({
              taskArn: t.taskArn,
              lastStatus: t.lastStatus,
              desiredStatus: t.desiredStatus,
              taskDefinitionArn: t.taskDefinitionArn,
              startedBy: t.startedBy,
              startedAt: t.startedAt,
              stoppedAt: t.stoppedAt,
              stopCode: t.stopCode,
              stoppedReason: t.stoppedReason,
              containers: (t.containers ?? []).map((c) => ({ name: c.name, lastStatus: c.lastStatus, exitCode: c.exitCode, reason: c.reason })),
            })),
          }
        : null,
  };
}

/** The text of `ecsr describe`, fitted to `width` columns. */
export function renderDescribe(
  entry: TableEntry,
  live: LiveService,
  opts: { table: string; events: number; width: number; pruneHold?: PruneHold },
  c = colorsFor(),
): string {
  const { width } = opts;
  const out = [
    ...headerLines(entry, opts),
    '',
    ...specLines(entry, width),
    '',
    ...statusLines(entry.status, width, c, entry.result.ok ? entry.result.spec.ignore : undefined),
    '',
    ...ecsLines(entry, live, opts.events, width),
  ];
  return `${out.join('\n')}\n`;
}

/** A block of `reasonBlock(label, text)` indented by two spaces, its continuation lines too. */
function indentedReason(label: string, text: string, width: number): string {
  return `  ${reasonBlock(label, text, width - 2).replace(/\n/g, '\n  ')}`;
}

/** The service, the table, and the cluster's prune hold when one is in force. */
function headerLines(entry: TableEntry, opts: { table: string; width: number; pruneHold?: PruneHold }): string[] {
  const out: string[] = [];
  const field = (name: string, value: string) => out.push(`${`${name}:`.padEnd(14)}${value}`);
  field('Service', entry.key ? serviceId(entry.key) : '(no key)');
  field('Table', opts.table);
  // The cluster's hold concerns the services without a spec, which have no item to describe.
  if (opts.pruneHold) field('Prune hold', wrapLines(pruneHoldLines([opts.pruneHold])[0], opts.width - 14).join(`\n${' '.repeat(14)}`));
  return out;
}

/** The spec as the reconciler reads it (with its hash), or the item as stored and its problems. */
function specLines(entry: TableEntry, width: number): string[] {
  const r = entry.result;
  if (r.ok) {
    const seen = entry.status?.specHash === r.hash ? ', seen by the last pass' : ', not seen by a pass yet';
    return [`Spec (hash ${r.hash}${seen}):`, indent(toYaml(specToItem(r.spec)))];
  }
  return [
    'Spec (invalid: the reconciler does nothing for it):',
    indent(toYaml(entry.item)),
    '',
    'Problems:',
    ...r.errors.map((e) => indentedReason(e.path, e.message, width)),
  ];
}

/** The reconciler's status, one value column after the longest label, then its conditions. */
function statusLines(s: ServiceStatus | undefined, width: number, c: ReturnType<typeof colorsFor>, ignored?: readonly string[]): string[] {
  const out = ['Status (written by the reconciler):'];
  if (!s) return [...out, '  none yet: no reconcile pass has seen this spec'];
  // One column for every value, after the longest label (`Task definition:`); wrapped lines continue under it.
  const labels = 17;
  const pad = ' '.repeat(2 + labels);
  const statusField = (name: string, value: string) => out.push(`  ${`${name}:`.padEnd(labels)}${value}`);
  const wrapped = (text: string) => wrapLines(text, width - pad.length).join(`\n${pad}`);
  statusField('Phase', colorPhase(s.phase, c));
  statusField('Tasks', `running ${s.runningCount}/${s.desiredCount}, pending ${s.pendingCount}`);
  const why = statusReason(s);
  if (why) statusField('Reason', wrapped(why));
  const deployment = statusDeploymentLine(s);
  if (deployment) statusField('Deployment', wrapped(`${deployment} (${s.deployment?.serviceDeploymentArn})`));
  if (s.laggingSince) statusField('Lagging since', `${time(s.laggingSince)}${s.lagBeyondGrace ? ' (beyond its grace)' : ''}`);
  if (s.taskDefinitionArn) statusField('Task definition', last(s.taskDefinitionArn));
  if (s.lastAction) statusField('Last action', wrapped(`${lastActionText(s)} at ${time(s.lastAction.at)}`));
  if (s.rejection && typeof s.rejection.retryAfter === 'string') {
    const r = s.rejection;
    statusField('Refused', wrapped(`${r.attempts} time${r.attempts === 1 ? '' : 's'} since ${time(r.since)}; next retry after ${time(r.retryAfter)}, at once on a spec change or ecsr reconcile`));
  }
  if (ignored !== undefined && ignored.length > 0) statusField('Left alone', wrapped(`${ignored.join(', ')} (ignore: another controller owns them)`));
  if (s.observeOnly) statusField('Mode', wrapped('observe-only: drift and lag are reported, nothing is changed (spec observeOnly, or the cluster in OBSERVE_ONLY_CLUSTERS)'));
  if (s.observedDrift && s.observedDrift.length > 0) statusField('Not corrected', wrapped(s.observedDrift.join(', ')));
  if (s.drift && s.drift.length > 0) statusField('Drift', `${s.drift.join(', ')}${s.driftCorrectedAt ? ` (corrected ${time(s.driftCorrectedAt)})` : ''}`);
  statusField('Observed', time(s.observedAt));
  out.push('', 'Conditions:');
  for (const x of s.conditions) {
    out.push(`  ${x.type}=${x.status}  ${x.reason}  since ${time(x.lastTransitionTime)}`);
    if (x.message) out.push(`    ${wrapLines(x.message, width - 4).join('\n    ')}`);
  }
  return out;
}

/** What ECS says: the service's counts, its deployments, latest events and tasks; or why not. */
function ecsLines(entry: TableEntry, live: LiveService, events: number, width: number): string[] {
  if (live.error) return ['ECS:', `  could not read ECS: ${live.error}`];
  const svc = live.service;
  if (!svc) return ['ECS:', `  ECS has no service ${entry.key?.service ?? '?'} in cluster ${entry.key?.cluster ?? '?'}.`];
  return [
    'ECS:',
    `  Status:       ${svc.status}, running ${svc.runningCount ?? 0}/${svc.desiredCount ?? 0}, pending ${svc.pendingCount ?? 0}, task definition ${last(svc.taskDefinition)}`,
    '',
    ...deploymentLines(svc.deployments ?? [], width),
    '',
    ...eventLines((svc.events ?? []).slice(0, events), width),
    '',
    ...taskLines(live.tasks, width),
  ];
}

/** The deployments as a table, then the reason of each that gives one. */
function deploymentLines(deployments: Deployment[], width: number): string[] {
  const rows = deployments.map((d) => [
    d.id ?? '-',
    d.status ?? '-',
    d.rolloutState ?? '-',
    last(d.taskDefinition),
    `${d.runningCount ?? 0}/${d.desiredCount ?? 0}${d.pendingCount ? ` +${d.pendingCount}` : ''}`,
    String(d.failedTasks ?? 0),
    time(d.updatedAt),
  ]);
  const table = fitTable(['ID', 'STATUS', 'ROLLOUT', 'TASK DEFINITION', 'TASKS', 'FAILED', 'UPDATED'], rows, {
    width: width - 2,
    shrink: [[6, 10], [0, 14], [3, 12]],
  });
  const reasons = deployments.filter((d) => d.rolloutStateReason).map((d) => indentedReason(d.id ?? '-', `${d.rolloutState ?? ''}: ${d.rolloutStateReason}`, width));
  return ['Deployments:', indent(table), ...reasons];
}

/** The service's latest events, newest first. */
function eventLines(events: ServiceEvent[], width: number): string[] {
  return [
    `Events (latest ${events.length}, newest first):`,
    ...(events.length === 0 ? ['  none'] : []),
    ...events.map((e) => indentedReason(time(e.createdAt), e.message ?? '', width)),
  ];
}

/** The tasks, running first, as a table, then the stop reason of each stopped one. */
function taskLines(liveTasks: Task[], width: number): string[] {
  const out = ['Tasks (running, then the most recently stopped, newest first):'];
  if (liveTasks.length === 0) return [...out, '  none'];
  const tasks = [...liveTasks].sort((x, y) => (x.desiredStatus === y.desiredStatus ? 0 : x.desiredStatus === 'RUNNING' ? -1 : 1));
  const rows = tasks.map((t) => [last(t.taskArn), t.lastStatus ?? '-', last(t.taskDefinitionArn), time(t.startedAt), time(t.stoppedAt)]);
  out.push(indent(fitTable(['TASK', 'LAST STATUS', 'TASK DEFINITION', 'STARTED', 'STOPPED'], rows, { width: width - 2, shrink: [[0, 14], [2, 12], 3, 4] })));
  const stopped = tasks.filter((t) => taskStopText(t) !== '');
  if (stopped.length > 0) out.push('', 'Stop reasons:');
  for (const t of stopped) out.push(indentedReason(last(t.taskArn), taskStopText(t), width));
  return out;
}

export function describeCommand(): Command {
  const cmd = new Command('describe')
    .description('Show one service in full: spec, status and conditions, ECS deployments, events and tasks with stop reasons')
    .argument('<cluster/service>', 'the service', parseServiceRef)
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json', 'yaml']).default('text'))
    .option('--events <n>', 'latest ECS service events to show', parseInteger, 10)
    .option('--tasks <n>', 'running and stopped tasks to show, each', parseInteger, 10);
  return withAwsOptions(withTargetOption(cmd)).action(
    runAction(async (key: ServiceKey, opts: DescribeOptions) => {
      const table = SpecTable.open(tableOf(opts), opts.target);
      let entry: TableEntry | undefined;
      let pruneHold: PruneHold | undefined;
      try {
        await table.assertTarget();
        entry = await table.get(key);
        pruneHold = entry ? await table.pruneHold(key.cluster) : undefined;
      } finally {
        table.close();
      }
      if (!entry) throw new CliError(`There is no spec ${entryId(opts.target, key)} in table ${table.name}.`);
      let live: LiveService;
      if (opts.target !== 'default') {
        // Another target's ECS is in its account: the reconciler's status is what this shell can read.
        live = { tasks: [], error: `not read: target ${opts.target}'s services are in another account than this shell's credentials reach (its status above is the reconciler's)` };
      } else {
        const { ecs } = createEcsClient();
        try {
          live = await readLiveService(ecs, key, Math.max(1, opts.tasks));
        } finally {
          ecs.destroy();
        }
      }
      if (opts.output === 'json') process.stdout.write(toJson(describeDocument(entry, live, opts.events)));
      else if (opts.output === 'yaml') process.stdout.write(toYaml(describeDocument(entry, live, opts.events)));
      else process.stdout.write(renderDescribe(entry, live, { table: table.name, events: opts.events, width: terminalWidth(), ...(pruneHold ? { pruneHold } : {}) }));
    }),
  );
}

/**
 * Log lines for the simulator's tasks, written into the local CloudWatch Logs (`./logs`) as the
 * awslogs driver of a Fargate task would: group `awslogs-group`, stream
 * `awslogs-stream-prefix/container/task-id`. The feeder only observes the simulator through its
 * event bus (no ECS call, so the simulator's call counts stay the reconciler's): a
 * RegisterTaskDefinition seen in CloudTrail's events gives each revision's containers and log
 * configuration, and each ECS Task State Change gives a task's life. A container that does not
 * use awslogs gets no line (as on ECS, where its output goes elsewhere).
 *
 * The lines are what a person looks for: the container starting (its image), and when it stops,
 * its exit code and ECS's reason, so that "essential container exited" can be followed by why.
 */
import type { BusEvent, Simulator } from './sim';
import type { LocalLogsStore } from './logs';

interface ContainerLogging {
  readonly name: string;
  readonly image: string;
  readonly group: string;
  readonly prefix: string;
}

interface TaskDetail {
  readonly taskArn: string;
  readonly taskDefinitionArn?: string;
  readonly lastStatus?: string;
  readonly stoppedReason?: string;
  readonly containers?: readonly { name?: string; exitCode?: number; reason?: string }[];
}

/** The awslogs containers of a registered task definition (CloudTrail's responseElements). */
function awslogsContainers(taskDefinition: Record<string, unknown>): ContainerLogging[] {
  const defs = Array.isArray(taskDefinition.containerDefinitions) ? (taskDefinition.containerDefinitions as Record<string, unknown>[]) : [];
  return defs.flatMap((c) => {
    const config = c.logConfiguration as { logDriver?: string; options?: Record<string, string> } | undefined;
    const group = config?.options?.['awslogs-group'];
    const prefix = config?.options?.['awslogs-stream-prefix'];
    if (config?.logDriver !== 'awslogs' || !group || !prefix || typeof c.name !== 'string') return [];
    return [{ name: c.name, image: String(c.image ?? ''), group, prefix }];
  });
}

/** The lines a task's containers write when it reaches `lastStatus`. */
export function taskLines(task: TaskDetail, container: ContainerLogging): string[] {
  if (task.lastStatus === 'RUNNING') return [`starting ${container.image}`, `${container.name} is up`];
  if (task.lastStatus !== 'STOPPED') return [];
  const c = task.containers?.find((x) => x.name === container.name);
  const exit = c?.exitCode !== undefined ? `exited with code ${c.exitCode}` : 'stopped';
  return [`${container.name} ${exit}${c?.reason ? `: ${c.reason}` : ''}${task.stoppedReason ? ` (task: ${task.stoppedReason})` : ''}`];
}

/**
 * Feeds `store` with the log lines of `sim`'s tasks from now on.
 * @returns the function that stops the feeding.
 */
export function feedTaskLogs(sim: Pick<Simulator, 'events' | 'clock'>, store: LocalLogsStore): () => void {
  const definitions = new Map<string, ContainerLogging[]>();
  const written = new Set<string>();
  return sim.events.subscribe((e: BusEvent) => {
    const detail = e.detail;
    if (e['detail-type'] === 'AWS API Call via CloudTrail' && detail.eventName === 'RegisterTaskDefinition') {
      const td = (detail.responseElements as { taskDefinition?: Record<string, unknown> } | undefined)?.taskDefinition;
      if (td && typeof td.taskDefinitionArn === 'string') definitions.set(td.taskDefinitionArn, awslogsContainers(td));
      return;
    }
    if (e['detail-type'] !== 'ECS Task State Change') return;
    const task = detail as unknown as TaskDetail;
    const once = `${task.taskArn} ${task.lastStatus}`;
    if (written.has(once)) return;
    written.add(once);
    const taskId = task.taskArn.split('/').at(-1) ?? task.taskArn;
    const at = sim.clock.nowMs();
    for (const c of definitions.get(task.taskDefinitionArn ?? '') ?? []) {
      const lines = taskLines(task, c);
      if (lines.length > 0) store.put(c.group, `${c.prefix}/${c.name}/${taskId}`, lines.map((message, i) => ({ timestamp: at + i, message })), at);
    }
  });
}

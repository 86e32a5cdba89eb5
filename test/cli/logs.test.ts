/**
 * `ecsr logs`: where each container's lines are (awslogs stream prefix/container/task-id) and what
 * it cannot read; the lines read with FilterLogEvents through the SDK paginator from moto's
 * CloudWatch Logs and from the local stand-in (local/logs.ts); and end to end on a local stack
 * with task log lines (the simulator's tasks, fed by local/task-logs.ts), run in process.
 */
import { CloudWatchLogsClient, CreateLogGroupCommand, CreateLogStreamCommand, PutLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import type { ContainerDefinition } from '@aws-sdk/client-ecs';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logSourceOf, readLogLines, type LogSource } from '../../bin/commands/logs';
import { RecordingLog } from '../../lambda/adapters/logger';
import { InMemoryMetricsSink } from '../../lambda/adapters/metrics';
import { ENV } from '../../lambda/config';
import { LocalLogs } from '../../local/logs';
import { createLocalRuntime, startLocalStack, type LocalStack } from '../../local/stack';
import { startMoto, type MotoServer } from '../support/moto';
import { needs } from '../support/tools';
import { ecsr } from '../support/cli-in-process';
import { baseEnv } from './run-cli';

const TASK = '0123456789abcdef0123456789abcdef';
/** A minute ago, whole seconds: CloudWatch Logs refuses events older than 14 days. */
const BASE = Math.floor((Date.now() - 60_000) / 1000) * 1000;
const awslogs = (options: Record<string, string>) => ({ name: 'web', logConfiguration: { logDriver: 'awslogs', options } });

describe('where a container logs', () => {
  it.each([
    { case: 'awslogs with a prefix', c: awslogs({ 'awslogs-group': '/ecs/shop', 'awslogs-stream-prefix': 'web' }), want: { kind: 'awslogs', group: '/ecs/shop', stream: `web/web/${TASK}` } },
    { case: 'awslogs without a prefix', c: awslogs({ 'awslogs-group': '/ecs/shop' }), want: { kind: 'unreadable', why: expect.stringContaining('without awslogs-stream-prefix') } },
    { case: 'FireLens', c: { name: 'web', logConfiguration: { logDriver: 'awsfirelens', options: { Name: 'datadog' } } }, want: { kind: 'unreadable', why: expect.stringContaining('FireLens (awsfirelens, output datadog)') } },
    { case: 'splunk', c: { name: 'web', logConfiguration: { logDriver: 'splunk', options: {} } }, want: { kind: 'unreadable', why: 'container web uses the splunk log driver; ecsr reads only awslogs' } },
    { case: 'no log configuration', c: { name: 'web' }, want: { kind: 'unreadable', why: 'container web has no log configuration: ECS keeps no log of its output' } },
  ])('$case', ({ c, want }) => {
    expect(logSourceOf(TASK, c as ContainerDefinition)).toMatchObject(want);
  });
});

/** 150 events on two tasks' streams (more than one page of the local stand-in). */
async function putEvents(client: CloudWatchLogsClient, group: string): Promise<void> {
  await client.send(new CreateLogGroupCommand({ logGroupName: group }));
  for (const task of ['task-a', 'task-b']) {
    await client.send(new CreateLogStreamCommand({ logGroupName: group, logStreamName: `web/web/${task}` }));
    const logEvents = Array.from({ length: 75 }, (_, i) => ({ timestamp: BASE + i * 2 + (task === 'task-a' ? 0 : 1), message: `${task} line ${i}` }));
    await client.send(new PutLogEventsCommand({ logGroupName: group, logStreamName: `web/web/${task}`, logEvents }));
  }
}

const sources: Extract<LogSource, { kind: 'awslogs' }>[] = ['task-a', 'task-b'].map((t) => ({ kind: 'awslogs', taskId: t, container: 'web', group: '/ecs/shop', stream: `web/web/${t}` }));

function readsEveryLine(start: () => Promise<{ endpoint: string; stop: () => Promise<void> }>) {
  let server: { endpoint: string; stop: () => Promise<void> };
  let client: CloudWatchLogsClient;
  beforeAll(async () => {
    server = await start();
    client = new CloudWatchLogsClient({ endpoint: server.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
  }, 60_000);
  afterAll(async () => {
    client?.destroy();
    await server?.stop();
  });

  it('reads every line of the tasks, oldest first, each with its task id', async () => {
    // Prepare
    await putEvents(client, '/ecs/shop');

    // Act
    const lines = await readLogLines(sources, 0, () => client);

    // Assess
    expect(lines).toHaveLength(150);
    expect(lines.slice(0, 3).map((l) => [l.taskId, l.container, l.message])).toEqual([
      ['task-a', 'web', 'task-a line 0'],
      ['task-b', 'web', 'task-b line 0'],
      ['task-a', 'web', 'task-a line 1'],
    ]);
    expect((await readLogLines(sources, BASE + 140, () => client)).map((l) => l.message)).toEqual(['task-a line 70', 'task-b line 70', 'task-a line 71', 'task-b line 71', 'task-a line 72', 'task-b line 72', 'task-a line 73', 'task-b line 73', 'task-a line 74', 'task-b line 74']);
  });
}

describe('ecsr logs on moto', needs('moto'), () => {
  readsEveryLine(async () => {
    const moto: MotoServer = await startMoto();
    return { endpoint: moto.endpoint, stop: () => moto.stop() };
  });
});

describe('ecsr logs on the local CloudWatch Logs', () => {
  readsEveryLine(async () => {
    const logs = new LocalLogs('123456789012');
    await logs.start(0);
    return { endpoint: logs.endpoint, stop: () => logs.close() };
  });
});

describe('ecsr logs against a local stack', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack({ specsTable: 'logs-specs', clusters: ['shop'], logs: true });
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
  });

  it("prints the service's task lines with their task ids", async () => {
    // Prepare: a spec rolled out by passes whose task definitions log with awslogs
    const env = { [ENV.logGroupPrefix]: '/ecs-reconciler/' };
    const runtime = createLocalRuntime(stack, { env, metrics: new InMemoryMetricsSink(), log: new RecordingLog() });
    await stack.doc.send(new PutCommand({ TableName: stack.table, Item: { cluster: 'shop', service: 'web', image: 'public.ecr.aws/nginx/nginx:1.27', desiredCount: 2 } }));
    for (let i = 0; i < 3; i++) {
      await runtime.run({ holder: 'logs-test' });
      stack.sim.clock.advance(60);
    }

    // Act
    const r = await ecsr(['logs', 'shop/web', '--since', '1h'], { env: baseEnv(stack.env) });

    // Assess
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines.filter((l) => / [0-9a-f]{32} web starting public\.ecr\.aws\/nginx\/nginx:1\.27$/.test(l))).toHaveLength(2);
    expect(lines.every((l) => /^\d{4}-\d\d-\d\dT\S+Z [0-9a-f]{32} web /.test(l))).toBe(true);
  }, 120_000);
});

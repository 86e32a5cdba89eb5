import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { promisify } from 'node:util';
import { ListClustersCommand } from '@aws-sdk/client-ecs';
import { startSimulator, type Simulator } from '../../local/sim';
import { ecsClient } from './helpers';
import { needs } from '../support/tools';

const run = promisify(execFile);

/** Environment for the AWS CLI: dummy credentials, no config files, no instance metadata. */
function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_REGION: 'us-east-1',
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_CONFIG_FILE: '/dev/null',
    AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_PAGER: '',
    ...extra,
  };
}

/** Each `aws` command starts a Python interpreter: seconds apiece on a busy machine. */
const AWS_CLI_TIMEOUT_MS = 300_000;

describe('simulator: the AWS CLI against it', { ...needs('aws'), timeout: AWS_CLI_TIMEOUT_MS }, () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0, startTime: new Date('2025-01-01T00:00:00Z'), throttling: false });
  });
  afterAll(async () => {
    await sim?.close();
  });

  async function aws(args: string[], env: Record<string, string> = {}): Promise<unknown> {
    const { stdout } = await run('aws', ['ecs', ...args, '--output', 'json'], { env: cliEnv(env) });
    return stdout.trim() === '' ? {} : (JSON.parse(stdout) as unknown);
  }

  it('creates a service with aws ecs and watches its tasks reach RUNNING', async () => {
    // Prepare
    const ep = ['--endpoint-url', sim.endpoint];
    await aws(['create-cluster', '--cluster-name', 'cli', ...ep]);
    await aws([
      'register-task-definition',
      '--family', 'web',
      '--network-mode', 'awsvpc',
      '--requires-compatibilities', 'FARGATE',
      '--cpu', '256',
      '--memory', '512',
      '--container-definitions', JSON.stringify([{ name: 'web', image: 'nginx:1.27', portMappings: [{ containerPort: 80 }] }]),
      ...ep,
    ]);
    const created = (await aws([
      'create-service',
      '--cluster', 'cli',
      '--service-name', 'web',
      '--task-definition', 'web',
      '--desired-count', '2',
      '--launch-type', 'FARGATE',
      '--network-configuration', 'awsvpcConfiguration={subnets=[subnet-0a1b2c3d],assignPublicIp=DISABLED}',
      ...ep,
    ])) as { service: { status: string; deployments: unknown[] } };

    // Act: move the clock through the control endpoint, as a person would with curl.
    const advanced = await fetch(`${sim.endpoint}/_sim/advance`, { method: 'POST', body: JSON.stringify({ seconds: 60 }) });
    // Through AWS_ENDPOINT_URL_ECS this time.
    const listed = (await aws(['list-tasks', '--cluster', 'cli', '--service-name', 'web'], { AWS_ENDPOINT_URL_ECS: sim.endpoint })) as {
      taskArns: string[];
    };
    const described = (await aws(['describe-tasks', '--cluster', 'cli', '--tasks', ...listed.taskArns, ...ep])) as {
      tasks: { lastStatus: string; startedAt: number; launchType: string }[];
    };

    // Assess
    expect(created.service.status).toBe('ACTIVE');
    expect(created.service.deployments).toHaveLength(1);
    expect(advanced.status).toBe(200);
    expect(listed.taskArns).toHaveLength(2);
    expect(described.tasks.map((t) => t.lastStatus)).toEqual(['RUNNING', 'RUNNING']);
    expect(described.tasks[0].launchType).toBe('FARGATE');
    // The CLI prints the epoch-seconds timestamps it received.
    expect(described.tasks[0].startedAt).toBeGreaterThan(Date.parse('2025-01-01T00:00:00Z') / 1000);
  });

  it('gets typed errors: the CLI names the ECS exception and exits non-zero', async () => {
    const err = (await run('aws', ['ecs', 'describe-services', '--cluster', 'ghost', '--services', 'web', '--endpoint-url', sim.endpoint], {
      env: cliEnv(),
    }).catch((e: unknown) => e)) as { code: number; stderr: string };

    expect(err.code).not.toBe(0);
    expect(err.stderr).toContain('An error occurred (ClusterNotFoundException) when calling the DescribeServices operation: Cluster not found.');
  });
});

describe('ecsr sim (standalone, child process)', () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    // Each child runs in its own process group: end the whole group.
    for (const c of children) {
      if (c.exitCode === null && c.signalCode === null && c.pid !== undefined) {
        try {
          process.kill(-c.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  });

  function startCli(args: string[]): { child: ChildProcess; output: () => { stdout: string; stderr: string }; exited: Promise<number | null> } {
    // What `npx ecsr sim ...` runs (the build), without npm's wrapper process (which does not pass
    // SIGTERM's outcome on, so the exit code of ecsr itself could not be checked).
    const child = spawn(process.execPath, ['bin/ecsr.js', 'sim', ...args], {
      cwd: process.cwd(),
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return { child, output: () => ({ stdout, stderr }), exited };
  }

  async function waitFor(cond: () => boolean, what: string, ms = 120_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!cond()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('prints the bound port and the environment, answers ListClusters, and stops on SIGTERM', async () => {
    // Prepare
    const cli = startCli(['--port', '0', '--manual', '--cluster', 'demo', '--cluster', 'jobs']);
    await waitFor(() => /listening on http:\/\/127\.0\.0\.1:\d+/.test(cli.output().stdout), 'the listening line');
    const port = Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(cli.output().stdout)?.[1]);
    const endpoint = `http://127.0.0.1:${port}`;

    // Act
    const ecs = ecsClient({ endpoint } as Simulator);
    const clusters = await ecs.send(new ListClustersCommand({}));
    cli.child.kill('SIGTERM');
    const code = await cli.exited;

    // Assess
    expect(port).toBeGreaterThan(0);
    expect(cli.output().stdout).toContain(
      `AWS_ENDPOINT_URL_ECS=${endpoint} AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1 AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test`,
    );
    expect(clusters.clusterArns?.map((a) => a.split('/').pop())).toEqual(['demo', 'jobs']);
    expect(code).toBe(0);
    expect(cli.output().stdout).toContain('ECS simulator stopped.');
  });

  it('runs at --speed: the AWS CLI creates a service and its tasks reach RUNNING in real time', { ...needs('aws'), timeout: AWS_CLI_TIMEOUT_MS }, async () => {
    // Prepare: 120 simulated seconds per real second; no cluster exists beforehand.
    const cli = startCli(['--port', '0', '--speed', '120']);
    await waitFor(() => /listening on http:\/\/127\.0\.0\.1:\d+/.test(cli.output().stdout), 'the listening line');
    const endpoint = `http://127.0.0.1:${/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(cli.output().stdout)?.[1]}`;
    const aws = async (args: string[]) => {
      const { stdout } = await run('aws', ['ecs', ...args, '--output', 'json'], { env: cliEnv({ AWS_ENDPOINT_URL_ECS: endpoint }) });
      return (stdout.trim() === '' ? {} : JSON.parse(stdout)) as Record<string, unknown>;
    };
    await aws(['create-cluster', '--cluster-name', 'speedy']);
    await aws([
      'register-task-definition', '--family', 'web', '--network-mode', 'awsvpc', '--requires-compatibilities', 'FARGATE',
      '--cpu', '256', '--memory', '512', '--container-definitions', JSON.stringify([{ name: 'web', image: 'nginx:1.27' }]),
    ]);
    await aws([
      'create-service', '--cluster', 'speedy', '--service-name', 'web', '--task-definition', 'web', '--desired-count', '2',
      '--launch-type', 'FARGATE', '--network-configuration', 'awsvpcConfiguration={subnets=[subnet-0a1b2c3d],assignPublicIp=DISABLED}',
    ]);

    // Act: nobody advances the clock; the simulator's own speed does.
    let running = 0;
    const deadline = Date.now() + 120_000;
    while (running < 2 && Date.now() < deadline) {
      const listed = (await aws(['list-tasks', '--cluster', 'speedy', '--service-name', 'web'])) as { taskArns: string[] };
      if (listed.taskArns.length > 0) {
        const described = (await aws(['describe-tasks', '--cluster', 'speedy', '--tasks', ...listed.taskArns])) as { tasks: { lastStatus: string }[] };
        running = described.tasks.filter((t) => t.lastStatus === 'RUNNING').length;
      }
      if (running < 2) await new Promise((r) => setTimeout(r, 250));
    }
    cli.child.kill('SIGTERM');
    await cli.exited;

    // Assess
    expect(running).toBe(2);
  });

  describe('with its port taken', () => {
    let blocker: Server;
    let port: number;
    beforeAll(async () => {
      blocker = createServer();
      await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
      port = (blocker.address() as { port: number }).port;
    });
    afterAll(async () => {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    });

    it('says so in one sentence and exits 1', async () => {
      const cli = startCli(['--port', String(port)]);
      const code = await cli.exited;
      expect(code).toBe(1);
      expect(cli.output().stderr.trim()).toBe(
        `ecsr sim: Port ${port} is already in use on 127.0.0.1; choose another with --port (0 picks a free one).`,
      );
    });
  });

  it('refuses an invalid option value', async () => {
    const cli = startCli(['--speed', '-3']);
    const code = await cli.exited;
    expect(code).not.toBe(0);
    expect(cli.output().stderr).toContain("ecsr sim: Invalid --speed '-3': must be a number above 0.");
  });
});

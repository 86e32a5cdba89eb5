/**
 * `ecsr ui` over plain HTTP against dynalite and the ECS simulator of the CLI harness, passes run
 * here: the JSON endpoint lists the fleet with phases, reasons, conditions and the spec history;
 * a spec edit made through the table reaches a page following the events after the next pass;
 * the server listens on 127.0.0.1 alone and refuses another Host; the command as a user runs it
 * prints its URL and stops on Ctrl+C. The page in a browser: ui-browser.test.ts.
 */
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { SpecTable } from '../../bin/commands/support/spec-table';
import type { FleetService, FleetSnapshot } from '../../bin/commands/support/ui-fleet';
import { readFleet } from '../../bin/commands/support/ui-fleet';
import { startUiServer, type UiServer } from '../../bin/commands/support/ui-server';
import type { ServiceStatus } from '../../lambda/core/types';
import { ecsr } from '../support/cli-in-process';
import { spec, useCliStack } from './harness';
import { collect, REPO } from './run-cli';

interface Answer {
  readonly code: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** One request to 127.0.0.1 (or `address`) with the Host header `host` (default: the server's). */
function fetchRaw(port: number, path: string, opts: { host?: string; method?: string; address?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: opts.address ?? '127.0.0.1', port, path, method: opts.method ?? 'GET', headers: { host: opts.host ?? `127.0.0.1:${port}` } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ code: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

type Fleet = FleetSnapshot & { version: number };

async function fleetOf(port: number): Promise<Fleet> {
  const r = await fetchRaw(port, '/api/fleet');
  expect(r.code).toBe(200);
  expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
  return JSON.parse(r.body) as Fleet;
}

/** The `fleet` events of `GET /events`, as they come. */
function followEvents(port: number): { events: { version: number; readAt: string; html?: string }[]; close: () => void } {
  const events: { version: number; readAt: string; html?: string }[] = [];
  let buffer = '';
  const req = request({ host: '127.0.0.1', port, path: '/events', headers: { host: `localhost:${port}` } }, (res) => {
    res.on('data', (d: Buffer) => {
      buffer += d.toString();
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = /^data: (.*)$/m.exec(block);
        if (/^event: fleet$/m.test(block) && data) events.push(JSON.parse(data[1]) as { version: number; readAt: string; html?: string });
      }
    });
  });
  req.on('error', () => undefined);
  req.end();
  return { events, close: () => req.destroy() };
}

async function until(what: string, check: () => boolean | Promise<boolean>, tries = 400): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never: ${what}`);
}

describe('ecsr ui over HTTP', () => {
  const harness = useCliStack('ui');
  let c: Awaited<ReturnType<ReturnType<typeof useCliStack>['aCase']>>;
  let server: UiServer;

  beforeAll(async () => {
    c = await harness.aCase();
    const files = [spec(c.cluster, 'web'), spec(c.cluster, 'pay').replace('nginx:1.27', 'nginx:does-not-exist')].join('---\n');
    expect((await ecsr(['apply', '-f', c.file('s.yaml', files), '--no-verify'], { env: c.env })).code).toBe(0);
    for (let i = 0; i < 40; i++) {
      await c.pass();
      const pay = (await c.item('pay'))?.status as ServiceStatus | undefined;
      if (pay?.failedSpecHash !== undefined && (await c.item('web'))?.status?.phase === 'Converged') break;
      harness.stack().sim.clock.advance(60);
    }
    server = await startUiServer({ read: () => readFleet(new SpecTable(c.table, harness.stack().doc)), port: 0, intervalMs: 200 });
  }, 240_000);

  afterAll(async () => {
    await server?.close();
  });

  it('GET /api/fleet: every service with its phase, tasks, reason, conditions and revisions, the ones not converged first', async () => {
    const fleet = await fleetOf(server.port);

    expect(fleet.table).toBe(c.table);
    expect(fleet.target).toBe('default');
    expect(fleet.services.map((s) => [s.id, s.phase, s.notConverged])).toEqual([
      [`${c.cluster}/pay`, 'Degraded', true],
      [`${c.cluster}/web`, 'Converged', false],
    ]);
    const [pay, web] = fleet.services as FleetService[];
    expect(pay.reason).toMatch(/^RolloutFailed: TaskFailedToStart: CannotPullContainerError: .*nginx:does-not-exist/);
    expect(pay.notConvergedSince).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(pay.conditions.find((x) => x.type === 'Ready')).toMatchObject({ status: 'False', reason: 'RolloutFailed' });
    expect(pay.conditions.find((x) => x.type === 'Ready')?.message).toMatch(/FAILED: ECS deployment circuit breaker/);
    expect(web).toMatchObject({ tasks: { desired: 2, running: 2, pending: 0 }, synced: 'yes', reason: '', drift: [] });
    expect(web.deployment).toBeUndefined();
    expect(web.history).toEqual([expect.objectContaining({ revision: 1, via: 'ecsr apply', current: true, outcome: 'converged', change: 'first revision' })]);
    expect(web.revisionsKept).toBe(1);
    expect(pay.history[0]).toMatchObject({ revision: 1, current: true });
    expect(pay.history[0].outcome).toMatch(/^rolled back by ECS|^degraded/);
  });

  it('a spec edit through the table reaches a page following /events after the next pass, as a new version', async () => {
    // Prepare: a follower, and the version it starts at
    const follower = followEvents(server.port);
    onTestFinished(() => follower.close());
    await until('the first event', () => follower.events.length > 0);
    const first = follower.events[0];
    expect(first.html).toContain(`${c.cluster}/web`);

    // Act: desiredCount 2 -> 3 as the console would write it, then a pass
    await harness.stack().doc.send(
      new UpdateCommand({ TableName: c.table, Key: { cluster: c.cluster, service: 'web' }, UpdateExpression: 'SET desiredCount = :n', ExpressionAttributeValues: { ':n': 3 } }),
    );
    await c.pass();

    // Assess: a later event carries the new fleet, and the JSON says the same
    await until('an event with the new desired count', () => follower.events.some((e) => e.version > first.version && /<td>\d+\/3( \+\d+)?<\/td>/.test(e.html ?? '')));
    const fleet = await fleetOf(server.port);
    expect(fleet.version).toBeGreaterThan(first.version);
    expect(fleet.services.find((s) => s.service === 'web')?.tasks?.desired).toBe(3);
    // Reads that change nothing send the time of the read, not the page again.
    await until('an event without html', () => follower.events.some((e) => e.version > first.version && e.html === undefined));
  });

  it('listens on 127.0.0.1 only, refuses another Host, and is read-only', async () => {
    const page = await fetchRaw(server.port, '/', { host: `localhost:${server.port}` });
    expect(page.code).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain(`<title>ecsr ui: ${c.table}</title>`);
    expect(page.body).not.toMatch(/\b(src|href)="(https?:)?\/\//);

    const rebound = await fetchRaw(server.port, '/api/fleet', { host: `evil.example:${server.port}` });
    expect(rebound.code).toBe(403);
    expect(rebound.body).toBe(`ecsr ui answers only requests to http://127.0.0.1:${server.port}/ or http://localhost:${server.port}/ (Host "evil.example:${server.port}" refused).\n`);
    expect(rebound.body).not.toContain(c.cluster);
    await expect(fetchRaw(server.port, '/', { host: '127.0.0.1:1' })).resolves.toMatchObject({ code: 403 });

    // Another loopback address of this machine reaches no listener: the server is bound to 127.0.0.1 alone.
    await expect(fetchRaw(server.port, '/api/fleet', { address: '127.0.0.2', host: `127.0.0.2:${server.port}` })).rejects.toMatchObject({ code: 'ECONNREFUSED' });

    await expect(fetchRaw(server.port, '/api/fleet', { method: 'POST' })).resolves.toMatchObject({ code: 405, headers: expect.objectContaining({ allow: 'GET, HEAD' }) });
    await expect(fetchRaw(server.port, '/nothing')).resolves.toMatchObject({ code: 404 });
  });

  it('ecsr ui as a user runs it: prints its URL, serves the fleet, and stops on Ctrl+C with exit code 0', { timeout: 120_000 }, async () => {
    // Prepare
    const child = spawn(process.execPath, ['bin/ecsr.js', 'ui', '--port', '0', '--interval', '500ms', '--table', c.table], { cwd: REPO, env: c.env });
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const done = collect(child, { timeoutMs: 110_000 });

    // Act
    await until('the URL', () => /^http:\/\/127\.0\.0\.1:\d+\/$/m.test(out), 2000);
    const url = /^(http:\/\/127\.0\.0\.1:(\d+)\/)$/m.exec(out);
    const fleet = await fleetOf(Number(url?.[2]));
    child.kill('SIGINT');
    const r = await done;

    // Assess
    expect(fleet.services.map((s) => s.service).sort()).toEqual(['pay', 'web']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(`The fleet of table ${c.table}, read every 500ms, read-only, on this machine only:\n${url?.[1]}\n(Ctrl+C to stop)\n`);
  });

  it('a table that does not exist fails at once, in one sentence, before anything listens', async () => {
    const r = await ecsr(['ui', '--port', '0', '--table', 'no-such-table'], { env: c.env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^ecsr ui: .*no-such-table.*\n$/);
    expect(r.stdout).toBe('');
  });
});

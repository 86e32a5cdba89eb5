/**
 * Starts moto (`python3 -m moto.server`, an independent AWS emulator installed on every machine of
 * this project) on a free loopback port for a test file, and stops it afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

export interface MotoServer {
  readonly endpoint: string;
  readonly port: number;
  /** Clears all state (`POST /moto-api/reset`). */
  reset(): Promise<void>;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * @param env extra environment for the server, e.g. `{ MOTO_ECS_SERVICE_RUNNING: '2' }`.
 * @throws Error when moto does not answer within 30 seconds.
 */
export async function startMoto(env: Record<string, string> = {}): Promise<MotoServer> {
  const port = await freePort();
  const child: ChildProcess = spawn('python3', ['-m', 'moto.server', '-p', String(port), '-H', '127.0.0.1'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // Never leave a moto behind when a test worker exits without running afterAll (timeout, crash).
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`moto exited early (${child.exitCode}): ${stderr}`);
    try {
      const res = await fetch(`${endpoint}/moto-api/`);
      if (res.status < 500) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`moto did not start on ${endpoint}: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  return {
    endpoint,
    port,
    async reset() {
      await fetch(`${endpoint}/moto-api/reset`, { method: 'POST' });
    },
    async stop() {
      process.removeListener('exit', killOnExit);
      if (child.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 3000).unref();
      });
    },
  };
}

/** Dummy credentials and region for SDK clients pointed at a local server. */
export const LOCAL_CLIENT_CONFIG = {
  region: 'us-east-1',
  credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
} as const;

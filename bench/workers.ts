/**
 * Worker processes of the benchmark. The workers are bundled with esbuild the way the CDK construct
 * bundles the Lambda handler (ESM, `mainFields: ['module', 'main']`, a `createRequire` banner,
 * minified, target node20), and run with plain `node`: their memory is that of a bundle like the
 * Lambda's, not that of tsx transpiling TypeScript on the fly.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import type { ErrorResponse, WorkerRequest, WorkerResponse } from './protocol';

const HERE = dirname(fileURLToPath(import.meta.url));

/** The bundled workers, in a temporary directory removed by {@link WorkerBundles.remove}. */
export interface WorkerBundles {
  readonly plannerWorker: string;
  readonly passWorker: string;
  remove(): Promise<void>;
}

/**
 * Bundles `bench/planner-worker.ts` and `bench/pass-worker.ts` into a temporary directory.
 * @throws the esbuild error when a worker does not bundle.
 */
export async function bundleWorkers(): Promise<WorkerBundles> {
  const outdir = await mkdtemp(join(tmpdir(), 'ecsr-bench-'));
  try {
    await esbuild.build({
      entryPoints: { 'planner-worker': join(HERE, 'planner-worker.ts'), 'pass-worker': join(HERE, 'pass-worker.ts') },
      outdir,
      outExtension: { '.js': '.mjs' },
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      mainFields: ['module', 'main'],
      banner: { js: "import { createRequire as __ecsrCreateRequire } from 'node:module'; const require = __ecsrCreateRequire(import.meta.url);" },
      minify: true,
      logLevel: 'warning',
    });
  } catch (err) {
    await rm(outdir, { recursive: true, force: true });
    throw err;
  } finally {
    await esbuild.stop();
  }
  return {
    plannerWorker: join(outdir, 'planner-worker.mjs'),
    passWorker: join(outdir, 'pass-worker.mjs'),
    remove: () => rm(outdir, { recursive: true, force: true }),
  };
}

/** Thrown when a worker answers `error` or exits before answering. */
export class WorkerError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'WorkerError';
  }
}

/** Responses of a request type, by the request's `type`. */
type ResponseOf<R extends WorkerRequest> = Extract<WorkerResponse, { type: R['type'] }>;

/** Omit over a union, member by member. */
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** A forked worker: one request at a time, answered in order. */
export class BenchWorker {
  private nextId = 1;
  private stderr = '';
  private waiting: { id: number; resolve: (r: WorkerResponse) => void; reject: (e: Error) => void } | undefined;

  private constructor(private readonly child: ChildProcess) {
    child.stderr?.on('data', (d: Buffer) => {
      this.stderr = (this.stderr + d.toString()).slice(-4000);
    });
    child.on('message', (msg: WorkerResponse) => {
      const w = this.waiting;
      if (!w || msg.id !== w.id) return;
      this.waiting = undefined;
      if (msg.type === 'error') w.reject(new WorkerError((msg as ErrorResponse).message));
      else w.resolve(msg);
    });
    child.on('exit', (code, signal) => {
      const w = this.waiting;
      this.waiting = undefined;
      w?.reject(new WorkerError(`worker exited (${code ?? signal}) before answering: ${this.stderr.trim() || 'no output'}`));
    });
  }

  /**
   * Forks `bundle` with plain node. Its stdout (Powertools logs and EMF metrics) is discarded, as
   * CloudWatch Logs would take it; stderr is kept for error messages.
   * @param execArgv node flags, e.g. the young generation size of the allocation measurement.
   */
  static start(bundle: string, execArgv: string[] = []): BenchWorker {
    const child = fork(bundle, [], {
      execPath: process.execPath,
      execArgv,
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    });
    return new BenchWorker(child);
  }

  /**
   * Sends one request and waits for its answer.
   * @throws WorkerError when the worker answers `error` or exits first.
   */
  request<R extends WorkerRequest>(req: DistributiveOmit<R, 'id'>): Promise<ResponseOf<R>> {
    if (this.waiting) return Promise.reject(new WorkerError('a request is already in flight'));
    const id = this.nextId++;
    return new Promise<ResponseOf<R>>((resolve, reject) => {
      this.waiting = { id, resolve: resolve as (r: WorkerResponse) => void, reject };
      this.child.send({ ...req, id });
    });
  }

  /** Ends the worker (SIGTERM) and waits for it to exit. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.kill('SIGTERM');
    });
  }
}

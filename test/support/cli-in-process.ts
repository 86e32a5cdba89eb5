/**
 * Runs the `ecsr` CLI in the test's own process: `main` of bin/main.ts (what bin/ecsr.ts runs) with
 * `process.stdout` / `process.stderr` captured, `process.env` set to the case's environment, and
 * the exit code it returns. Same signature and result as `ecsr` of test/cli/run-cli.ts, which
 * spawns `node bin/ecsr.js` (about a second per command on a loaded 2-core machine, most of a CLI
 * suite's time); a suite switches by importing `ecsr` from here instead.
 *
 * What stays a child process's: a run given `input` spawns (commands read stdin as file
 * descriptor 0, which a test cannot stand in for), and so do the tests of the process itself
 * (EPIPE, signals, a terminal, the built bundle: test/cli/run-cli.ts).
 *
 * Each run loads the CLI's modules afresh (`vi.resetModules`, then bin/main.ts), so that nothing a
 * module keeps (the observer's caches of task definitions...) carries over from the test's own
 * passes or an earlier run: a run starts as a new process does. Packages under node_modules are
 * shared (Node's own module cache), as they hold no state of the project's.
 *
 * Runs are one at a time (a queue): the captured streams and `process.env` are the process's.
 * While one runs, other code in the process (a pass loop of the harness) sees its environment,
 * harmless for clients built with their own endpoint and credentials.
 */
import { Writable } from 'node:stream';
import { vi } from 'vitest';
import { baseEnv, ecsr as spawnEcsr, type CliResult } from '../cli/run-cli';

/** A non-terminal stream that keeps what is written (as a pipe to a file would receive it). */
function capture(): { stream: NodeJS.WriteStream; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  }) as unknown as NodeJS.WriteStream;
  // Synchronous, as writes to a file or pipe are for process.stdout: nothing is lost when the
  // command ends right after writing.
  stream.write = ((chunk: string | Uint8Array, encodingOrDone?: unknown, done?: unknown) => {
    text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    const callback = typeof encodingOrDone === 'function' ? encodingOrDone : done;
    if (typeof callback === 'function') process.nextTick(callback as () => void);
    return true;
  }) as NodeJS.WriteStream['write'];
  Object.assign(stream, { isTTY: false, fd: -1 });
  return { stream, text: () => text };
}

/** Replaces `process[name]` until the returned function is called. */
function swapStream(name: 'stdout' | 'stderr', stream: NodeJS.WriteStream): () => void {
  const original = Object.getOwnPropertyDescriptor(process, name);
  if (original === undefined) throw new Error(`process.${name} has no property descriptor`);
  Object.defineProperty(process, name, { configurable: true, enumerable: true, get: () => stream });
  return () => Object.defineProperty(process, name, original);
}

/** Sets `process.env` to exactly `env` (in place: holders of the object see it) until restored. */
function swapEnv(env: NodeJS.ProcessEnv): () => void {
  const saved = { ...process.env };
  const set = (to: NodeJS.ProcessEnv) => {
    for (const k of Object.keys(process.env)) delete process.env[k];
    for (const [k, v] of Object.entries(to)) if (v !== undefined) process.env[k] = v;
  };
  set(env);
  return () => set(saved);
}

let queue: Promise<unknown> = Promise.resolve();

async function runInProcess(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  const out = capture();
  const err = capture();
  const restoreEnv = swapEnv(env);
  const restoreStdout = swapStream('stdout', out.stream);
  const restoreStderr = swapStream('stderr', err.stream);
  try {
    vi.resetModules();
    const { main } = await import('../../bin/main');
    const code = await main(args);
    return { code, stdout: out.text(), stderr: err.text() };
  } finally {
    restoreStderr();
    restoreStdout();
    restoreEnv();
  }
}

/**
 * `ecsr ...args` in this process; resolves with its exit code and output once it returns.
 * @param opts.env the CLI's whole environment (default `baseEnv()`); `input`, when given, is written
 *   to stdin of a spawned CLI instead (see the module's comment); `timeoutMs` (default 60 s) rejects.
 */
export function ecsr(args: string[], opts: { env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  if (opts.input !== undefined) return spawnEcsr(args, opts);
  // As bin/ecsr.ts does for its process: the SDK's notice about Node versions is off unless set.
  const env = { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...(opts.env ?? baseEnv()) };
  const run = queue.then(() => runInProcess(args, env));
  queue = run.catch(() => undefined);
  const timeoutMs = opts.timeoutMs ?? 60_000;
  return new Promise<CliResult>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`ecsr ${args.join(' ')}: no result within ${timeoutMs} ms`)), timeoutMs);
    run.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}

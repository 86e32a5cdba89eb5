/**
 * Runs the `ecsr` CLI as a user does, in a child process (`node bin/ecsr.js`, the package's `bin`,
 * which runs the build in dist/ that vitest.config.ts made for this run), and collects its exit
 * code and output.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The environment of a spawned CLI: this process's, without AWS settings that could leak in. */
export function baseEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) {
    if (k.startsWith('AWS_') || k === 'SPECS_TABLE' || k === 'NO_COLOR') delete env[k];
  }
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/**
 * Runs `node bin/ecsr.js ...args` and resolves when it exits.
 * @param opts.input written to stdin (then closed); `timeoutMs` kills it (default 60 s).
 */
export function ecsr(args: string[], opts: { env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  return collect(spawn(process.execPath, ['bin/ecsr.js', ...args], { cwd: REPO, env: opts.env ?? baseEnv() }), opts);
}

/**
 * Collects a child's output until it exits.
 * @param opts.input written to stdin, which is then closed; stdin is closed at once without it,
 *   unless `keepStdinOpen` (the test writes to it later, e.g. a Ctrl+C for a terminal).
 */
export function collect(child: ChildProcess, opts: { input?: string; timeoutMs?: number; keepStdinOpen?: boolean } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`timed out; stdout: ${stdout}\nstderr: ${stderr}`));
    }, opts.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    if (opts.input !== undefined) child.stdin?.end(opts.input);
    else if (!opts.keepStdinOpen) child.stdin?.end();
  });
}

/**
 * Runs `node bin/ecsr.js ...args` with a stdout whose reader has gone away before the CLI writes
 * (what `ecsr export | head -2` becomes once head exits): every write to stdout fails with EPIPE.
 */
export function ecsrIntoClosedPipe(args: string[], opts: { env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  const child = spawn(process.execPath, ['bin/ecsr.js', ...args], { cwd: REPO, env: opts.env ?? baseEnv() });
  child.stdout.destroy();
  return collect(child, opts);
}

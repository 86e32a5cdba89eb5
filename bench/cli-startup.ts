/**
 * Start-up of the built `ecsr` CLI (`node bin/ecsr.js`, what `npx ecsr` runs): real time from
 * spawn to exit of a few commands that need no server, beside `node -e 0` (Node.js's own start-up
 * on this machine) and the same commands through tsx from source (what `ecsr` was before the
 * build). Runs one at a time, after one warm-up run each (the file cache). 10 runs a command by
 * default (`--cli-runs`): in 20 runs of each command (2026-12-02, load 3), the median of
 * either half (10 runs) was within 4% of the median of all 20 and its p90 (by nearest rank, the
 * second slowest of 10) within 8% of theirs; 20 runs cost about 23 s more of the bench.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import Table from 'cli-table3';
import { buildCli, isStale } from '../scripts/build-cli.mjs';
import { median, ms, percentile } from './stats';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

export interface StartupCase {
  readonly label: string;
  readonly argv: readonly string[];
}

export interface StartupResult extends StartupCase {
  readonly runs: number;
  readonly medianMs: number;
  /** 90th percentile by nearest rank (of 10 runs: the second slowest). */
  readonly p90Ms: number;
  readonly minMs: number;
}

const NODE = process.execPath;
const TSX = ['node_modules/tsx/dist/cli.mjs', 'bin/ecsr.ts'];

export const STARTUP_CASES: readonly StartupCase[] = [
  { label: 'node -e 0 (Node.js alone)', argv: [NODE, '-e', '0'] },
  { label: 'ecsr --version', argv: [NODE, 'bin/ecsr.js', '--version'] },
  { label: 'ecsr --help', argv: [NODE, 'bin/ecsr.js', '--help'] },
  { label: 'ecsr validate -f examples/shop.yaml', argv: [NODE, 'bin/ecsr.js', 'validate', '-f', 'examples/shop.yaml'] },
  { label: 'tsx bin/ecsr.ts --version (from source)', argv: [NODE, ...TSX, '--version'] },
];

/** Real milliseconds of one run; throws when the command fails. */
function timeOnce(argv: readonly string[]): number {
  const began = performance.now();
  const r = spawnSync(argv[0], argv.slice(1), { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
  const took = performance.now() - began;
  if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}: ${r.stderr.toString()}`);
  return took;
}

/** Each case `runs` times (after one warm-up run), the CLI built first if a source changed. */
export async function runStartupBench(runs: number, cases: readonly StartupCase[] = STARTUP_CASES): Promise<StartupResult[]> {
  if (isStale()) await buildCli();
  return cases.map((c) => {
    timeOnce(c.argv);
    const samples = Array.from({ length: runs }, () => timeOnce(c.argv));
    return { ...c, runs, medianMs: median(samples), p90Ms: percentile(samples, 90), minMs: Math.min(...samples) };
  });
}

export function startupTable(results: readonly StartupResult[]): string {
  const t = new Table({
    style: { head: [], border: [] },
    head: ['command', 'runs', 'median ms', 'p90 ms', 'min ms'],
    colAligns: ['left', 'right', 'right', 'right', 'right'],
  });
  for (const r of results) t.push([r.label, r.runs, ms(r.medianMs), ms(r.p90Ms), ms(r.minMs)]);
  return t.toString();
}

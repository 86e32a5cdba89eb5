/**
 * `ecsr ui [--port 4780] [--interval 2s] [--open]`: a read-only page of the fleet in a browser,
 * served by this process on 127.0.0.1 with the caller's own credentials (the shared `--table`,
 * `--region`, `--profile`, `--endpoint-url` and `--target` options, as `ecsr get`). The page
 * follows the table live (server-sent events after each read); Ctrl+C (SIGINT) or SIGTERM stop
 * the server, exit code 0. The only AWS call is the Scan of `ecsr get` (./support/ui-fleet.ts).
 */
import { spawn } from 'node:child_process';
import { Command, InvalidArgumentError, Option } from 'commander';
import { formatDuration, parseDuration, parsePort, runAction, tableOf, withAwsOptions, withTargetOption, type AwsOptions, type TargetOption } from './support/options';
import { SpecTable } from './support/spec-table';
import { readFleet } from './support/ui-fleet';
import { startUiServer } from './support/ui-server';

/** The port `ecsr ui` listens on without `--port`: the same every time, so a bookmark keeps working. */
export const DEFAULT_UI_PORT = 4780;

/** `--interval`: a duration of at least 100 ms (seconds). @throws InvalidArgumentError */
function parseInterval(text: string): number {
  const seconds = parseDuration(text);
  if (seconds < 0.1) throw new InvalidArgumentError(`"${text}" is too short: the table is read at most every 100ms.`);
  return seconds;
}

interface UiOptions extends AwsOptions, TargetOption {
  port: number;
  /** Seconds between reads of the table. */
  interval: number;
  open?: boolean;
}

/** Opens `url` in the desktop's browser (open, xdg-open, start); says so on stderr when it cannot. */
function openBrowser(url: string): void {
  const [program, args] =
    process.platform === 'darwin' ? ['open', [url]] : process.platform === 'win32' ? ['cmd', ['/c', 'start', '""', url]] : ['xdg-open', [url]];
  const cannot = (why: string) => process.stderr.write(`ecsr ui: could not open a browser (${program}: ${why}); open ${url} yourself.\n`);
  try {
    const child = spawn(program, args, { detached: true, stdio: 'ignore' });
    child.on('error', (err) => cannot(err.message));
    child.unref();
  } catch (err) {
    cannot(err instanceof Error ? err.message : String(err));
  }
}

/** Resolves on the first SIGINT or SIGTERM (then no longer listens for them). */
function untilStopped(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

async function serve(opts: UiOptions): Promise<void> {
  const table = SpecTable.open(tableOf(opts), opts.target);
  try {
    await table.assertTarget();
    const server = await startUiServer({ read: () => readFleet(table), port: opts.port, intervalMs: opts.interval * 1000 });
    const every = opts.interval < 1 ? `${Math.round(opts.interval * 1000)}ms` : formatDuration(opts.interval);
    process.stdout.write(`The fleet of table ${table.name}${opts.target !== 'default' ? ` (target ${opts.target})` : ''}, read every ${every}, read-only, on this machine only:\n${server.url}\n(Ctrl+C to stop)\n`);
    if (opts.open) openBrowser(server.url);
    await untilStopped();
    await server.close();
  } finally {
    table.close();
  }
}

export function uiCommand(): Command {
  const cmd = new Command('ui')
    .description('Serve a read-only, live page of the fleet on 127.0.0.1 (phases, reasons, drift, deployments, history)')
    .addOption(new Option('--port <port>', 'port on 127.0.0.1 (0 takes a free one)').argParser(parsePort).default(DEFAULT_UI_PORT))
    .addOption(new Option('--interval <duration>', 'how often the table is read while a page is open, e.g. 2s, 10s').argParser(parseInterval).default(2, '2s'))
    .option('--open', "open the page in the desktop's browser");
  return withAwsOptions(withTargetOption(cmd)).action(runAction(async (opts: UiOptions) => serve(opts)));
}

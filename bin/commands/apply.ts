/**
 * `ecsr apply -f FILE [--wait] [--timeout DURATION]`: validates YAML specs and writes them to the
 * specs table; with `--wait`, waits until the reconciler has rolled them out.
 */
import { Command, Option } from 'commander';
import { serviceId } from '../../lambda/core/types';
import { CliError, EXIT } from './support/errors';
import { loadSpecFiles } from './support/spec-file';
import { SpecTable } from './support/spec-table';
import { collect, formatDuration, parseDuration, runAction, tableOf, withAwsOptions, type AwsOptions } from './support/options';
import { explain, waitForTargets, waitSummary, type WaitTarget } from './support/wait';

interface ApplyOptions extends AwsOptions {
  file: string[];
  wait?: boolean;
  timeout: number;
  interval: number;
}

/** Default of `--timeout` (seconds). */
export const DEFAULT_WAIT_TIMEOUT_SECONDS = 600;
/** Default of `--interval` (seconds): how often `--wait` reads the statuses. */
export const DEFAULT_WAIT_INTERVAL_SECONDS = 5;

/** `--timeout` and `--interval` of the commands that can `--wait`. */
export function withWaitOptions(cmd: Command, what: string): Command {
  return cmd
    .option('--wait', what)
    .addOption(new Option('--timeout <duration>', 'how long --wait waits, e.g. 90s, 10m').argParser(parseDuration).default(DEFAULT_WAIT_TIMEOUT_SECONDS, '10m'))
    .addOption(new Option('--interval <duration>', 'how often --wait reads the statuses').argParser(parseDuration).default(DEFAULT_WAIT_INTERVAL_SECONDS, '5s'));
}

/**
 * Waits for `targets` and reports; throws a CliError (exit 1 for failed rollouts, 2 for a
 * timeout) carrying the conditions, latest ECS events and stop reasons of each failed service.
 */
export async function waitAndReport(table: SpecTable, targets: WaitTarget[], opts: { timeout: number; interval: number }): Promise<void> {
  const started = Date.now();
  const deleting = targets.every((t) => t.state === 'absent');
  const goal = deleting ? 'be deleted' : 'converge';
  const verb = deleting ? 'deleted' : 'converged';
  process.stdout.write(`Waiting up to ${formatDuration(opts.timeout)} for ${targets.length} service${targets.length === 1 ? '' : 's'} to ${goal}...\n`);
  const result = await waitForTargets(table, targets, {
    timeoutSeconds: opts.timeout,
    intervalSeconds: opts.interval,
    write: (line) => process.stdout.write(`  ${line}\n`),
  });
  const elapsed = (Date.now() - started) / 1000;
  if (result.failed.length === 0 && !result.timedOut) {
    process.stdout.write(`${waitSummary(result, targets.length, elapsed, verb)}.\n`);
    return;
  }
  const details: string[] = [];
  for (const f of [...result.failed, ...result.pending]) details.push(...(await explain(f.target, f.status)));
  if (result.failed.length > 0) {
    const ids = result.failed.map((f) => serviceId(f.target.key)).join(', ');
    throw new CliError(`The rollout of ${ids} failed; the reconciler will not re-apply this spec until it changes.`, EXIT.failed, details);
  }
  const ids = result.pending.map((f) => serviceId(f.target.key)).join(', ');
  throw new CliError(`Timed out after ${Math.round(elapsed)}s waiting for ${ids} (${waitSummary(result, targets.length, elapsed, verb)}).`, EXIT.timeoutOrChanges, details);
}

export function applyCommand(): Command {
  const cmd = withWaitOptions(
    new Command('apply')
      .description('Validate YAML specs and write them to the specs table (the spec attributes; the status is kept)')
      .requiredOption('-f, --file <path>', 'YAML file or directory of *.yaml, or - for stdin (repeatable)', collect),
    'wait until every service runs its new spec (rollout COMPLETED, running = desired)',
  );
  return withAwsOptions(cmd).action(
    runAction(async (opts: ApplyOptions) => {
      const specs = loadSpecFiles(opts.file, 'nothing was written');
      const table = SpecTable.open(tableOf(opts));
      try {
        for (const s of specs) {
          const outcome = await table.writeSpec(s.spec);
          process.stdout.write(`${serviceId(s.key)} ${outcome}${s.spec.state === 'absent' ? ' (state: absent)' : ''}\n`);
        }
        if (!opts.wait) return;
        const targets: WaitTarget[] = specs.map((s) => ({ key: s.key, hash: s.hash, state: s.spec.state }));
        await waitAndReport(table, targets, opts);
      } finally {
        table.close();
      }
    }),
  );
}

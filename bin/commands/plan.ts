/**
 * `ecsr plan`: the actions the next pass would take for the specs in the table, computed by the
 * same pass code in dry-run mode (no lease, no ECS write, no status write).
 */
import { Command, Option } from 'commander';
import type { PassSummary } from '../../lambda/core/pass';
import type { ServiceStatus } from '../../lambda/core/types';
import { CliError, EXIT, missingTableError } from './support/errors';
import wrapAnsi from 'wrap-ansi';
import { formatAction, pruneHoldLines, statusReason, terminalWidth, toJson, toYaml } from './support/format';
import { runAction, tableOf, withAwsOptions, type AwsOptions } from './support/options';
import { cliConfig, dryRunPass, specReadError } from './support/pass';

export interface PlanOptions extends AwsOptions {
  output: 'text' | 'json' | 'yaml';
  exitCode?: boolean;
  verbose?: boolean;
}

/**
 * Throws when a dry run could not read what it plans from: the table (a missing table is named),
 * or any cluster (a plan over a partial observation would be wrong).
 */
export function assertCompleteRead(summary: PassSummary, table: string): void {
  const specsError = specReadError(summary);
  if (specsError) {
    if (specsError.includes('ResourceNotFoundException')) {
      throw missingTableError(table);
    }
    throw new CliError(`Could not read the specs table ${table}: ${specsError.replace(/^specs: /, '')}.`);
  }
  const partial = Object.entries(summary.clusters).filter(([, complete]) => !complete).map(([c]) => c);
  if (partial.length > 0) {
    const why = summary.errors.filter((e) => partial.some((c) => e.startsWith(`cluster ${c}:`)));
    throw new CliError(`Could not observe ECS cluster${partial.length === 1 ? '' : 's'} ${partial.join(', ')} completely, so no plan is shown.`, EXIT.failed, why);
  }
}

/** Services that get no action but need a person (Invalid, Blocked, Degraded). */
function attention(statuses: Record<string, ServiceStatus>, width: number): string[] {
  return Object.entries(statuses)
    .filter(([, s]) => s.phase === 'Invalid' || s.phase === 'Blocked' || s.phase === 'Degraded')
    .map(([id, s]) =>
      // The whole reason, wrapped to the terminal (never cut: it is what the person must act on).
      wrapAnsi(`${id}  ${s.phase}  ${statusReason(s).replace(/\s+/g, ' ').trim()}`, Math.max(20, width - 4), { hard: true, trim: true })
        .split('\n')
        .map((l, i) => (i === 0 ? l : `    ${l}`))
        .join('\n'),
    );
}

/** Prints the planned actions (text, JSON or YAML; `extra` fields lead the JSON / YAML document). */
export function printPlan(summary: PassSummary, format: PlanOptions['output'], extra: Record<string, unknown> = {}): void {
  if (format !== 'text') {
    const doc = { ...extra, actions: summary.actions, statuses: summary.statuses, ...(summary.pruneHolds ? { pruneHolds: summary.pruneHolds } : {}), errors: summary.errors };
    process.stdout.write(format === 'json' ? toJson(doc) : toYaml(doc));
    return;
  }
  const n = summary.actions.length;
  const notes = attention(summary.statuses, terminalWidth());
  if (n === 0 && notes.length === 0) process.stdout.write('No actions: ECS matches every spec.\n');
  else if (n === 0) process.stdout.write(`No actions; ${notes.length} service${notes.length === 1 ? ' needs' : 's need'} attention.\n`);
  else {
    process.stdout.write(`The next pass would take ${n} action${n === 1 ? '' : 's'}:\n`);
    for (const a of summary.actions) process.stdout.write(`  ${formatAction(a)}\n`);
  }
  if (notes.length > 0) {
    process.stdout.write('Needs attention (no action planned):\n');
    for (const line of notes) process.stdout.write(`  ${line}\n`);
  }
  for (const line of pruneHoldLines(summary.pruneHolds ?? [])) process.stdout.write(`${line}\n`);
}

/** `-o`, `--exit-code` and `--verbose`, shared by plan and diff. */
export function withPlanOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json', 'yaml']).default('text'))
    .option('--exit-code', 'exit with code 2 when there are actions to take (0 when none)')
    .option('--verbose', 'log the pass on stderr');
}

export function planCommand(): Command {
  const cmd = withPlanOptions(new Command('plan').description('Show the actions the next reconcile pass would take (dry run; nothing is written)'));
  return withAwsOptions(cmd).action(
    runAction(async (opts: PlanOptions) => {
      const table = tableOf(opts);
      const summary = await dryRunPass(cliConfig(table), undefined, { verbose: opts.verbose });
      assertCompleteRead(summary, table);
      printPlan(summary, opts.output);
      if (opts.exitCode && summary.actions.length > 0) process.exitCode = EXIT.timeoutOrChanges;
    }),
  );
}

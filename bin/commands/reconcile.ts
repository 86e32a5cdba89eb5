/**
 * `ecsr reconcile [--once] [--dry-run] [--json]`: runs one reconcile pass (`--once`, its only mode, may be left out) from a workstation, with
 * the Lambda's own code (`createRuntime` + `runPass`), against whatever the AWS SDK's
 * configuration points at (profile, region, `AWS_ENDPOINT_URL*`). It takes the same lease as the
 * Lambda, so it never acts at the same time as a scheduled pass.
 */
import { Command } from 'commander';
import type { PassSummary } from '../../lambda/core/pass';
import type { ServiceStatus } from '../../lambda/core/types';
import { CliError, missingTableError } from './support/errors';
import { fitTable, reasonLines, reasonWord } from '../../local/view';
import { colorPhase, colorsFor, formatAction, pruneHoldLines, statusReason, terminalWidth, toJson } from './support/format';
import { runAction, tableOf, withAwsOptions, type AwsOptions } from './support/options';
import { cliConfig, cliRuntime } from './support/pass';

interface ReconcileOptions extends AwsOptions {
  once?: boolean;
  dryRun?: boolean;
  json?: boolean;
  verbose?: boolean;
}

/**
 * The statuses of a pass as a table (service, phase, tasks, reason word) fitted to `width`
 * columns, and under it each service's whole reason when it is not converged.
 */
export function renderPassStatuses(statuses: Record<string, ServiceStatus>, width = terminalWidth()): string {
  const c = colorsFor();
  const rows = Object.entries(statuses)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([id, s]) => ({ id, phase: s.phase, status: s, reason: statusReason(s) }));
  const cells = rows.map((r) => [r.id, colorPhase(r.phase, c), String(r.status.desiredCount), String(r.status.runningCount), String(r.status.pendingCount), reasonWord(r.reason)]);
  const under = reasonLines(rows, width);
  return `${fitTable(['SERVICE', 'PHASE', 'DESIRED', 'RUNNING', 'PENDING', 'REASON'], cells, { width, shrink: [0] })}${under.length > 0 ? `\n\n${under.join('\n')}` : ''}`;
}

/** The pass's outcome as a CliError when it did not complete; undefined when it did. */
export function incompletePass(summary: PassSummary, table: string): CliError | undefined {
  if (summary.outcome === 'completed') return undefined;
  if (summary.outcome === 'lease-held') {
    return new CliError(
      `Another pass holds the lease (${summary.lease?.holder ?? 'unknown'}, until ${summary.lease?.expiresAt ?? '?'}); nothing was done. Try again after it ends.`,
    );
  }
  const error = summary.errors.join('; ');
  if (error.includes('ResourceNotFoundException')) {
    return missingTableError(table);
  }
  return new CliError(`The pass could not start: ${error}.`);
}

export function reconcileCommand(): Command {
  const cmd = new Command('reconcile')
    .description('Run one reconcile pass now, with the Lambda\'s code, against the configured AWS account (or local endpoints)')
    .option('--once', 'run one pass and exit: the only mode, so optional (the every-minute loop is the Lambda\'s schedule, or ecsr local)')
    .option('--dry-run', 'plan only: no lease, no ECS write, no status write')
    .option('--json', 'print the pass summary (actions with type, cluster, service, outcome; statuses; counts) as JSON')
    .option('--verbose', 'log the pass on stderr');
  return withAwsOptions(cmd).action(
    runAction(async (opts: ReconcileOptions) => {
      const table = tableOf(opts);
      const runtime = cliRuntime(cliConfig(table), { verbose: opts.verbose });
      let summary: PassSummary;
      try {
        // A person's pass retries refused calls at once: they most likely just changed the permissions.
        summary = await runtime.run({ retryRejected: true, ...(opts.dryRun ? { dryRun: true } : {}) });
      } finally {
        runtime.close();
      }
      const incomplete = incompletePass(summary, table);
      if (opts.json) {
        process.stdout.write(toJson(summary));
        if (incomplete) throw incomplete;
        return;
      }
      if (incomplete) throw incomplete;
      const k = summary.counts;
      process.stdout.write(
        `Pass ${summary.dryRun ? '(dry run) ' : ''}completed in ${summary.durationMs} ms: ${k.specs} spec${k.specs === 1 ? '' : 's'} (${k.invalid} invalid); ` +
          `${summary.dryRun ? `${k.actionsPlanned} planned` : `${k.actionsApplied} applied, ${k.actionsFailed} failed, ${k.actionsSkipped} skipped`}; ` +
          `${k.statusesWritten} status${k.statusesWritten === 1 ? '' : 'es'} written.\n`,
      );
      for (const a of summary.actions) process.stdout.write(`  ${formatAction(a)}\n`);
      for (const line of pruneHoldLines(summary.pruneHolds ?? [])) process.stdout.write(`${line}\n`);
      for (const r of summary.pruneHoldsReleased ?? []) {
        process.stdout.write(`Prune hold of cluster ${r.cluster} released: ${r.because === 'restored' ? 'every owned service there has a spec again' : 'a person confirmed the prune'}.\n`);
      }
      if (Object.keys(summary.statuses).length > 0) process.stdout.write(`${renderPassStatuses(summary.statuses)}\n`);
      for (const e of summary.errors) process.stderr.write(`warning: ${e}\n`);
    }),
  );
}

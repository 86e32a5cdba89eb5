/**
 * `ecsr prune --confirm CLUSTER`: a person's confirmation that the owned services of CLUSTER that
 * have no spec may be deleted, where the planner refuses on its own (`PruneBlocked`): the table
 * holds no spec at all for the cluster (an empty, replaced or restored table), or more than half of
 * the cluster's owned services lost their spec. The confirmation is an item in the spec table
 * (`#prune-confirmed` / CLUSTER, see `lambda/adapters/dynamo-spec-store.ts`), valid for `--for`
 * (default 1 hour): every pass in that time, the Lambda's included, prunes the cluster, at most
 * `MAX_DELETES_PER_PASS` a pass; afterwards the protection is back. It also releases the
 * cluster's prune hold (`#prune-hold` / CLUSTER: a pass found the signature of a wiped or
 * half-restored table there, and later passes keep holding its prunes until every owned service
 * has a spec again). `--reconcile` also runs one pass now, with the Lambda's code and lease.
 */
import { userInfo, hostname } from 'node:os';
import { Command } from 'commander';
import { DynamoSpecStore } from '../../lambda/adapters/dynamo-spec-store';
import type { PassSummary } from '../../lambda/core/pass';
import type { PruneHold } from '../../lambda/core/types';
import { CliError, missingTableError } from './support/errors';
import { formatAction } from './support/format';
import { formatDuration, parseDuration, runAction, tableOf, withAwsOptions, type AwsOptions } from './support/options';
import { cliConfig, cliRuntime } from './support/pass';
import { SpecTable } from './support/spec-table';
import { incompletePass, renderPassStatuses } from './reconcile';

/** Default lifetime of a confirmation: long enough for a few passes at the default delete cap. */
export const DEFAULT_CONFIRMATION_SECONDS = 3600;
/** Longest confirmation: a day; the protection must come back on its own. */
export const MAX_CONFIRMATION_SECONDS = 86_400;

const CLUSTER_NAME = /^[A-Za-z0-9_-]{1,255}$/;

interface PruneOptions extends AwsOptions {
  confirm?: string;
  for?: number;
  reconcile?: boolean;
  verbose?: boolean;
}

function who(): string {
  try {
    return `${userInfo().username}@${hostname()}`;
  } catch {
    return hostname();
  }
}

export function pruneCommand(): Command {
  const cmd = new Command('prune')
    .description(
      'Confirm pruning a cluster the reconciler refused to prune (PruneBlocked, or a prune hold): releases its hold, and passes delete its owned services without a spec for a while',
    )
    .requiredOption('--confirm <cluster>', 'the cluster whose owned services without a spec may be deleted')
    .option('--for <duration>', 'how long the confirmation holds, e.g. 30m, 2h (at most 24h)', parseDuration, DEFAULT_CONFIRMATION_SECONDS)
    .option('--reconcile', 'also run one reconcile pass now (needs ECS permissions)')
    .option('--verbose', 'log the pass on stderr (with --reconcile)');
  return withAwsOptions(cmd).action(
    runAction(async (opts: PruneOptions) => {
      const cluster = (opts.confirm ?? '').trim();
      if (!CLUSTER_NAME.test(cluster)) {
        throw new CliError(`--confirm needs an ECS cluster name (letters, digits, hyphens, underscores), got "${opts.confirm ?? ''}".`);
      }
      const seconds = opts.for ?? DEFAULT_CONFIRMATION_SECONDS;
      if (!(seconds > 0 && seconds <= MAX_CONFIRMATION_SECONDS)) {
        throw new CliError(`--for must be more than 0 and at most 24h, got ${formatDuration(seconds)}.`);
      }
      const tableName = tableOf(opts);
      const expiresAt = new Date(Date.now() + seconds * 1000);
      const table = SpecTable.open(tableName);
      let released: PruneHold | undefined;
      try {
        const store = new DynamoSpecStore(table.doc, tableName);
        // The confirmation first: a pass that still reads the hold meanwhile releases it itself.
        await store.writePruneConfirmation({ cluster, expiresAt, confirmedBy: who() });
        released = await store.readPruneHold(cluster);
        if (released) await store.clearPruneHold(cluster);
      } catch (err) {
        if ((err as { cause?: { name?: string } }).cause?.name === 'ResourceNotFoundException') throw missingTableError(tableName, err);
        throw err;
      } finally {
        table.close();
      }
      const config = cliConfig(tableName);
      process.stdout.write(
        `Prune of cluster ${cluster} confirmed until ${expiresAt.toISOString()}: each pass until then deletes owned services ` +
          `without a spec there (at most ${config.plan.maxDeletesPerPass} a pass).\n`,
      );
      if (released) {
        process.stdout.write(`Released the prune hold of cluster ${cluster}, held since ${released.since} because a pass found ${released.reason}.\n`);
      }
      if (!opts.reconcile) return;
      const runtime = cliRuntime(config, { verbose: opts.verbose });
      let summary: PassSummary;
      try {
        summary = await runtime.run({});
      } finally {
        runtime.close();
      }
      const incomplete = incompletePass(summary, tableName);
      if (incomplete) throw incomplete;
      const deletes = summary.actions.filter((a) => a.type === 'DeleteService' && a.cluster === cluster);
      process.stdout.write(`Pass: ${deletes.length} DeleteService action(s) in ${cluster}.\n`);
      for (const a of summary.actions) process.stdout.write(`  ${formatAction(a)}\n`);
      const left = Object.entries(summary.statuses).filter(([id]) => id.startsWith(`${cluster}/`));
      if (left.length > 0) process.stdout.write(`${renderPassStatuses(Object.fromEntries(left))}\n`);
      for (const e of summary.errors) process.stderr.write(`warning: ${e}\n`);
    }),
  );
}

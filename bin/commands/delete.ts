/**
 * `ecsr delete CLUSTER/SERVICE [--yes] [--dry-run] [--wait]`: marks a spec `state: absent`; the
 * next pass deletes the service (scaling it to zero first). The item stays, with its status,
 * until you remove it (`ecsr purge`). It first says what the deletion does, from the spec and the
 * last status (no ECS call, so it works for every target), and asks on a terminal; `--yes` does
 * not ask, `--dry-run` writes nothing, and without a terminal and without `--yes` it refuses.
 */
import { Command } from 'commander';
import { waitAndReport, withWaitOptions, type WaitFlags } from './apply';
import type { ServiceKey } from '../../lambda/core/types';
import { confirmOrRefuse } from './support/confirm';
import { CliError } from './support/errors';
import { parseServiceRef, runAction, tableOf, withAwsOptions, withTargetOption, type AwsOptions, type TargetOption } from './support/options';
import { entryId, SpecTable, type TableEntry } from './support/spec-table';
import { recordEdit } from './support/spec-history';

interface DeleteOptions extends AwsOptions, WaitFlags, TargetOption {
  wait?: boolean;
  yes?: boolean;
  dryRun?: boolean;
}

/** What marking `entry` absent does, in one sentence (`id` is its name with the target). */
export function deletionPreview(id: string, key: ServiceKey, entry: TableEntry): string {
  if (entry.result.ok && entry.result.spec.state === 'absent') return `${id} is already marked absent; marking it again changes nothing.`;
  const s = entry.status;
  const seen = s === undefined || s.phase === 'Pending' ? 'no pass has created it yet' : `the last pass saw ${s.runningCount} running of ${s.desiredCount} desired, phase ${s.phase}`;
  const invalid = entry.result.ok ? '' : ' The spec is invalid, so no pass deletes anything until it is fixed.';
  return `Deleting ${id} marks its spec absent: the next pass scales ECS service ${key.service} in cluster ${key.cluster} to 0 tasks and deletes it (${seen}).${invalid}`;
}

export function deleteCommand(): Command {
  const cmd = withWaitOptions(
    new Command('delete')
      .description('Mark a spec absent: the next reconcile pass deletes its ECS service (asks first on a terminal)')
      .argument('<cluster/service>', 'the spec to mark absent', parseServiceRef)
      .option('-y, --yes', 'do not ask (needed when stdin is not a terminal)')
      .option('--dry-run', 'say what it would delete, write nothing'),
    'wait until the service is deleted (phase Deleted)',
  );
  return withAwsOptions(withTargetOption(cmd)).action(
    runAction(async (key: ServiceKey, opts: DeleteOptions) => {
      const table = SpecTable.open(tableOf(opts), opts.target);
      const id = entryId(opts.target, key);
      try {
        await table.assertTarget();
        const current = await table.get(key);
        if (!current) throw new CliError(`There is no spec ${id} in table ${table.name}.`);
        if (opts.dryRun || !opts.yes) process.stdout.write(`${deletionPreview(id, key, current)}\n`);
        if (opts.dryRun) {
          process.stdout.write('Nothing was written (--dry-run).\n');
          return;
        }
        await confirmOrRefuse(`Delete ${id}?`, `mark ${id} absent`, opts);
        const entry = await table.markAbsent(key);
        await recordEdit(table, key, 'ecsr delete');
        process.stdout.write(`${id} marked absent; the next pass deletes the service.\n`);
        if (!opts.wait) return;
        if (!entry.result.ok) throw new CliError(`${id} is not a valid spec, so the reconciler will not delete it: fix it first (ecsr get ${id}).`);
        await waitAndReport(table, [{ key, hash: entry.result.hash, state: 'absent' }], opts);
      } finally {
        table.close();
      }
    }),
  );
}

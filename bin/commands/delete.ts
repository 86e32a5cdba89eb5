/**
 * `ecsr delete CLUSTER/SERVICE`: marks a spec `state: absent`; the next pass deletes the service
 * (scaling it to zero first). The item stays, with its status, until you remove it.
 */
import { Command } from 'commander';
import { serviceId, type ServiceKey } from '../../lambda/core/types';
import { waitAndReport, withWaitOptions, type WaitFlags } from './apply';
import { CliError } from './support/errors';
import { parseServiceRef, runAction, tableOf, withAwsOptions, withTargetOption, type AwsOptions, type TargetOption } from './support/options';
import { entryId, SpecTable } from './support/spec-table';
import { recordEdit } from './support/spec-history';

interface DeleteOptions extends AwsOptions, WaitFlags, TargetOption {
  wait?: boolean;
}

export function deleteCommand(): Command {
  const cmd = withWaitOptions(
    new Command('delete')
      .description('Mark a spec absent: the next reconcile pass deletes its ECS service')
      .argument('<cluster/service>', 'the spec to mark absent', parseServiceRef),
    'wait until the service is deleted (phase Deleted)',
  );
  return withAwsOptions(withTargetOption(cmd)).action(
    runAction(async (key: ServiceKey, opts: DeleteOptions) => {
      const table = SpecTable.open(tableOf(opts), opts.target);
      try {
        await table.assertTarget();
        const entry = await table.markAbsent(key);
        await recordEdit(table, key, 'ecsr delete');
        process.stdout.write(`${entryId(opts.target, key)} marked absent; the next pass deletes the service.\n`);
        if (!opts.wait) return;
        if (!entry.result.ok) {
          throw new CliError(`${entryId(opts.target, key)} is not a valid spec, so the reconciler will not delete it: fix it first (ecsr get ${entryId(opts.target, key)}).`);
        }
        await waitAndReport(table, [{ key, hash: entry.result.hash, state: 'absent' }], opts);
      } finally {
        table.close();
      }
    }),
  );
}

/**
 * `ecsr scale CLUSTER/SERVICE COUNT [--wait]`: sets a spec's `desiredCount`, as `ecspresso scale`
 * and `copilot svc` users change a count, but through the desired state: one conditional
 * UpdateItem of that attribute (`SpecTable.setDesiredCount`), recorded in the spec's history;
 * the next pass sends the count to ECS. With `--wait`, waits as `ecsr apply --wait` does.
 */
import { Command, InvalidArgumentError } from 'commander';
import type { ServiceKey } from '../../lambda/core/types';
import { waitAndReport, withWaitOptions, type WaitFlags } from './apply';
import { CliError } from './support/errors';
import { parseServiceRef, runAction, tableOf, withAwsOptions, withTargetOption, type AwsOptions, type TargetOption } from './support/options';
import { recordEdit } from './support/spec-history';
import { entryId, SpecTable } from './support/spec-table';

interface ScaleOptions extends AwsOptions, WaitFlags, TargetOption {
  wait?: boolean;
}

/** A task count: a whole number from 0. @throws InvalidArgumentError */
export function parseCount(text: string): number {
  if (!/^\d+$/.test(text.trim())) throw new InvalidArgumentError(`"${text}" is not a task count (a whole number from 0).`);
  return Number(text.trim());
}

export function scaleCommand(): Command {
  const cmd = withWaitOptions(
    new Command('scale')
      .description("Set a spec's desiredCount (one conditional write of that attribute); the next pass scales the service")
      .argument('<cluster/service>', 'the spec to scale', parseServiceRef)
      .argument('<count>', 'the number of tasks', parseCount),
    'wait until the service runs that many tasks (rollout COMPLETED, running = desired)',
  );
  return withAwsOptions(withTargetOption(cmd)).action(
    runAction(async (key: ServiceKey, count: number, opts: ScaleOptions) => {
      const table = SpecTable.open(tableOf(opts), opts.target);
      try {
        await table.assertTarget();
        const id = entryId(opts.target, key);
        const { outcome, previous, entry } = await table.setDesiredCount(key, count);
        if (outcome === 'set') await recordEdit(table, key, 'ecsr scale');
        process.stdout.write(outcome === 'unchanged' ? `${id} desiredCount unchanged (${count})\n` : `${id} desiredCount set: ${String(previous ?? '(none)')} -> ${count}\n`);
        if (!opts.wait) return;
        if (!entry.result.ok) throw new CliError(`${id} is not a valid spec, so the reconciler will not scale it: fix it first (ecsr get ${id}).`);
        await waitAndReport(table, [{ key, hash: entry.result.hash, state: 'present' }], opts);
      } finally {
        table.close();
      }
    }),
  );
}

/**
 * `ecsr wait CLUSTER/SERVICE [--for converged|deleted] [--timeout 10m]`: waits on a service
 * whatever changed it (`ecsr apply`, a console edit of its item or of the ECS service, a
 * pipeline), with the rules of `apply --wait` (see `support/wait.ts`): converged means the status
 * reflects the spec in the table now, the deployment is COMPLETED, and ECS kept the service at
 * desired for `--stable-for`; deleted means phase `Deleted` (or, when the spec item is gone,
 * that ECS reports the service INACTIVE or missing).
 */
import { Command, Option } from 'commander';
import { DescribeServicesCommand } from '@aws-sdk/client-ecs';
import { createEcsClient } from '../../lambda/adapters/clients';
import { formatSpecError } from '../../lambda/core/spec';
import { serviceId, type ServiceKey } from '../../lambda/core/types';
import { waitAndReport, withWaitTimings, type WaitFlags } from './apply';
import { CliError, EXIT } from './support/errors';
import { formatDuration, parseServiceRef, runAction, tableOf, withAwsOptions, withTargetOption, type AwsOptions, type TargetOption } from './support/options';
import { entryId } from './support/spec-table';
import { SpecTable } from './support/spec-table';
import { reasonSentence } from './support/wait';

const CONDITIONS = ['converged', 'deleted'] as const;

interface WaitCommandOptions extends AwsOptions, WaitFlags, TargetOption {
  for: (typeof CONDITIONS)[number];
}

/**
 * Polls ECS until the service is INACTIVE or missing (DescribeServices), for a service whose spec
 * item is gone.
 * @throws CliError exit 2 at the timeout.
 */
async function waitGoneFromEcs(key: ServiceKey, opts: WaitFlags): Promise<void> {
  const { ecs } = createEcsClient();
  const deadline = Date.now() + opts.timeout * 1000;
  let last = '';
  try {
    for (;;) {
      const svc = (await ecs.send(new DescribeServicesCommand({ cluster: key.cluster, services: [key.service] }))).services?.[0];
      const state = svc?.status ?? 'MISSING';
      if (state !== last) process.stdout.write(`  ${serviceId(key)}  ECS ${state}${svc ? `, ${svc.runningCount ?? 0} tasks running` : ''}\n`);
      last = state;
      if (state === 'INACTIVE' || state === 'MISSING') {
        process.stdout.write(`${serviceId(key)} is deleted (ECS: ${state}).\n`);
        return;
      }
      if (Date.now() >= deadline) {
        throw new CliError(`Timed out after ${formatDuration(opts.timeout)} waiting for ${serviceId(key)} to be deleted (ECS: ${state}).`, EXIT.timeoutOrChanges);
      }
      await new Promise((r) => setTimeout(r, Math.min(opts.interval * 1000, Math.max(0, deadline - Date.now()))));
    }
  } finally {
    ecs.destroy();
  }
}

export function waitCommand(): Command {
  const cmd = withWaitTimings(
    new Command('wait')
      .description('Wait until a service converges (or is deleted), whatever changed it')
      .argument('<cluster/service>', 'the service to wait for', parseServiceRef)
      .addOption(new Option('--for <condition>', 'what to wait for').choices(CONDITIONS).default('converged')),
    'ecsr wait',
  );
  return withAwsOptions(withTargetOption(cmd)).action(
    runAction(async (key: ServiceKey, opts: WaitCommandOptions) => {
      const id = entryId(opts.target, key);
      const table = SpecTable.open(tableOf(opts), opts.target);
      try {
        await table.assertTarget();
        const entry = await table.get(key);
        if (!entry) {
          if (opts.for === 'deleted' && opts.target !== 'default') {
            throw new CliError(`There is no spec ${id} in table ${table.name}: for target ${opts.target}, ecsr wait follows the reconciler's status, and its ECS is in another account.`);
          }
          if (opts.for === 'deleted') {
            process.stdout.write(`There is no spec ${id} in table ${table.name}; waiting for ECS to report the service deleted...\n`);
            return await waitGoneFromEcs(key, opts);
          }
          throw new CliError(`There is no spec ${id} in table ${table.name}: ecsr wait follows the reconciler's status of a spec (ecsr get lists them).`);
        }
        if (!entry.result.ok) {
          throw new CliError(reasonSentence(key, 'SpecInvalid', ''), EXIT.failed, entry.result.errors.map(formatSpecError));
        }
        const state = entry.result.spec.state;
        if (opts.for === 'converged' && state === 'absent') {
          throw new CliError(`The spec of ${id} says state: absent, so it will not converge: wait with --for deleted, or apply a spec without state: absent.`);
        }
        if (opts.for === 'deleted' && state === 'present') {
          throw new CliError(`The spec of ${id} is present, so the reconciler will not delete it: mark it absent first (ecsr delete ${id} --wait).`);
        }
        await waitAndReport(table, [{ key, hash: entry.result.hash, state }], opts);
      } finally {
        table.close();
      }
    }),
  );
}

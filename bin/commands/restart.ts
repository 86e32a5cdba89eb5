/**
 * `ecsr restart CLUSTER/SERVICE [--wait]`: replaces every task of a managed service with new ones
 * of the same task definition revision, as `ecspresso deploy --force-new-deployment` and
 * `copilot svc deploy --force` do; what a mutable image tag (`:latest`) needs after a push, since
 * the spec, and so the reconciler, did not change. One UpdateService with
 * `forceNewDeployment: true` and nothing else (Amazon ECS API Reference, UpdateService), on a
 * service whose spec is in the table and which carries this reconciler's owner tag
 * (./support/owned-service.ts). With `--wait`, waits as `ecsr wait` does: the new deployment
 * COMPLETED and ECS stable.
 */
import { UpdateServiceCommand } from '@aws-sdk/client-ecs';
import { Command } from 'commander';
import { createEcsClient } from '../../lambda/adapters/clients';
import { serviceId, type ServiceKey } from '../../lambda/core/types';
import { waitAndReport, withWaitOptions, type WaitFlags } from './apply';
import { ownedService } from './support/owned-service';
import { parseServiceRef, runAction, tableOf, withAwsOptions, type AwsOptions } from './support/options';
import { SpecTable } from './support/spec-table';

interface RestartOptions extends AwsOptions, WaitFlags {
  wait?: boolean;
}

export function restartCommand(): Command {
  const cmd = withWaitOptions(
    new Command('restart')
      .description('Replace every task of a managed service with new ones of the same revision (ECS forceNewDeployment), e.g. after pushing a mutable image tag')
      .argument('<cluster/service>', 'the service to restart', parseServiceRef),
    'wait until the new deployment completed and ECS is stable',
  );
  return withAwsOptions(cmd).action(
    runAction(async (key: ServiceKey, opts: RestartOptions) => {
      const table = SpecTable.open(tableOf(opts));
      const { ecs } = createEcsClient();
      try {
        const owned = await ownedService(table, ecs, key, 'restart');
        const out = await ecs.send(new UpdateServiceCommand({ cluster: key.cluster, service: key.service, forceNewDeployment: true }));
        const primary = out.service?.deployments?.find((d) => d.status === 'PRIMARY');
        const revision = (out.service?.taskDefinition ?? owned.service.taskDefinition ?? '').split('/').pop();
        process.stdout.write(`${serviceId(key)} restarting: ECS started deployment ${primary?.id ?? '(unnamed)'} of ${revision}, which replaces every task.\n`);
        if (opts.wait) await waitAndReport(table, [{ key, hash: owned.hash, state: 'present' }], opts);
      } finally {
        ecs.destroy();
        table.close();
      }
    }),
  );
}

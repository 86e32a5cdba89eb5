/**
 * `ecsr continue CLUSTER/SERVICE [--rollback] [--hook-id ID]`: answers a PAUSE lifecycle hook of
 * the deployment ECS is running for the service (ContinueServiceDeployment with the hook's
 * `hookId` from DescribeServiceDeployments; Amazon ECS API reference, ContinueServiceDeployment):
 * CONTINUE lets the deployment go on, `--rollback` rolls it back, after which the reconciler
 * records its spec as failed and does not apply it again.
 */
import { ContinueServiceDeploymentCommand, type ServiceDeployment } from '@aws-sdk/client-ecs';
import { Command } from 'commander';
import { createEcsClient } from '../../lambda/adapters/clients';
import { serviceId, type ServiceKey } from '../../lambda/core/types';
import { deploymentName, runningDeployment } from './support/deployments';
import { CliError } from './support/errors';
import { parseServiceRef, runAction, withAwsOptions, type AwsOptions } from './support/options';

interface ContinueOptions extends AwsOptions {
  rollback?: boolean;
  hookId?: string;
}

/**
 * The hook to answer: `hookId` when given (it must be AWAITING_ACTION), else the one hook that
 * is. @throws CliError when none waits, or several do and none was named.
 */
export function awaitingHook(key: ServiceKey, sd: ServiceDeployment, hookId: string | undefined): string {
  const waiting = (sd.lifecycleHookDetails ?? []).filter((h) => h.status === 'AWAITING_ACTION' && h.hookId);
  const ids = waiting.map((h) => h.hookId as string);
  if (hookId !== undefined) {
    if (!ids.includes(hookId)) throw new CliError(`No hook ${hookId} of ${deploymentName(sd)} awaits an action${ids.length > 0 ? ` (waiting: ${ids.join(', ')})` : ''}.`);
    return hookId;
  }
  if (ids.length === 0) throw new CliError(`No lifecycle hook of ${serviceId(key)}'s ${deploymentName(sd)} is waiting for ecsr continue.`);
  if (ids.length > 1) throw new CliError(`Several hooks of ${deploymentName(sd)} await an action: name one with --hook-id (${ids.join(', ')}).`);
  return ids[0];
}

export function continueCommand(): Command {
  const cmd = new Command('continue')
    .description('Answer a PAUSE lifecycle hook of the deployment ECS runs for a service: go on, or roll back')
    .argument('<cluster/service>', 'the service whose deployment waits', parseServiceRef)
    .option('--rollback', 'roll the deployment back instead of continuing (the reconciler then records its spec as failed)')
    .option('--hook-id <id>', 'the hook to answer, when several wait');
  return withAwsOptions(cmd, { table: false }).action(
    runAction(async (key: ServiceKey, opts: ContinueOptions) => {
      const { ecs } = createEcsClient();
      try {
        const sd = await runningDeployment(ecs, key);
        const hookId = awaitingHook(key, sd, opts.hookId);
        const action = opts.rollback ? 'ROLLBACK' : 'CONTINUE';
        await ecs.send(new ContinueServiceDeploymentCommand({ serviceDeploymentArn: sd.serviceDeploymentArn, hookId, action }));
        process.stdout.write(
          opts.rollback
            ? `${serviceId(key)}: ${deploymentName(sd)} rolls back (hook ${hookId}); the reconciler records its spec as failed and does not apply it again.\n`
            : `${serviceId(key)}: ${deploymentName(sd)} continues (hook ${hookId}).\n`,
        );
      } finally {
        ecs.destroy();
      }
    }),
  );
}

/**
 * `ecsr abort CLUSTER/SERVICE`: rolls back the deployment ECS is running for the service
 * (StopServiceDeployment with stopType ROLLBACK; Amazon ECS API reference, StopServiceDeployment;
 * Amazon ECS Developer Guide, "Stopping Amazon ECS service deployments"). The reconciler then
 * reads the rollback from the service's deployment history, records the spec that deployment
 * applied as failed (RolloutFailed) and does not apply it again until the spec changes.
 */
import { StopServiceDeploymentCommand } from '@aws-sdk/client-ecs';
import { Command } from 'commander';
import { createEcsClient } from '../../lambda/adapters/clients';
import { serviceId, type ServiceKey } from '../../lambda/core/types';
import { deploymentName, runningDeployment } from './support/deployments';
import { CliError } from './support/errors';
import { parseServiceRef, runAction, withAwsOptions } from './support/options';

export function abortCommand(): Command {
  const cmd = new Command('abort')
    .description('Roll back the deployment ECS runs for a service (StopServiceDeployment); its spec is not applied again')
    .argument('<cluster/service>', 'the service whose deployment to roll back', parseServiceRef);
  return withAwsOptions(cmd, { table: false }).action(
    runAction(async (key: ServiceKey) => {
      const { ecs } = createEcsClient();
      try {
        const sd = await runningDeployment(ecs, key);
        if (sd.status !== 'PENDING' && sd.status !== 'IN_PROGRESS') {
          throw new CliError(`${serviceId(key)}: ${deploymentName(sd)} is already being stopped or rolled back.`);
        }
        await ecs.send(new StopServiceDeploymentCommand({ serviceDeploymentArn: sd.serviceDeploymentArn, stopType: 'ROLLBACK' }));
        process.stdout.write(
          `${serviceId(key)}: ${deploymentName(sd)} rolls back; the reconciler records its spec as failed and does not apply it again (edit the spec to retry).\n`,
        );
      } finally {
        ecs.destroy();
      }
    }),
  );
}

/**
 * The service deployment `ecsr continue` and `ecsr abort` act on: the one ECS is running for a
 * service (Amazon ECS API reference: Service `currentServiceDeployment`, ListServiceDeployments,
 * DescribeServiceDeployments).
 */
import {
  DescribeServiceDeploymentsCommand,
  DescribeServicesCommand,
  ListServiceDeploymentsCommand,
  type ECSClient,
  type ServiceDeployment,
} from '@aws-sdk/client-ecs';
import { serviceId, type ServiceKey } from '../../../lambda/core/types';
import { CliError } from './errors';

/** ServiceDeploymentStatus values of a deployment ECS is still running. */
const ONGOING = ['PENDING', 'IN_PROGRESS', 'STOP_REQUESTED', 'ROLLBACK_REQUESTED', 'ROLLBACK_IN_PROGRESS'] as const;

/**
 * The service deployment ECS is running for `key`, as DescribeServiceDeployments answers it: the
 * service's `currentServiceDeployment` when it is still ongoing, else the newest ongoing one
 * ListServiceDeployments lists.
 * @throws CliError (exit 1) when the service is missing or runs no deployment; the SDK's errors.
 */
export async function runningDeployment(ecs: ECSClient, key: ServiceKey): Promise<ServiceDeployment> {
  const svc = (await ecs.send(new DescribeServicesCommand({ cluster: key.cluster, services: [key.service] }))).services?.[0];
  if (!svc || svc.status !== 'ACTIVE') throw new CliError(`ECS reports ${serviceId(key)} ${svc ? svc.status : 'missing'}: there is no deployment to act on.`);
  const current = svc.currentServiceDeployment ? await describeOne(ecs, svc.currentServiceDeployment) : undefined;
  if (current && (ONGOING as readonly string[]).includes(current.status ?? '')) return current;
  const listed = await ecs.send(new ListServiceDeploymentsCommand({ cluster: key.cluster, service: key.service, status: [...ONGOING] }));
  const newest = [...(listed.serviceDeployments ?? [])].sort((a, b) => (b.createdAt?.getTime() ?? 0) - (a.createdAt?.getTime() ?? 0))[0];
  const found = newest?.serviceDeploymentArn ? await describeOne(ecs, newest.serviceDeploymentArn) : undefined;
  if (!found) {
    const last = current ? ` (its newest deployment ${current.serviceDeploymentArn} is ${current.status})` : '';
    throw new CliError(`ECS runs no deployment of ${serviceId(key)}${last}: there is nothing to continue or abort.`);
  }
  return found;
}

async function describeOne(ecs: ECSClient, arn: string): Promise<ServiceDeployment | undefined> {
  return (await ecs.send(new DescribeServiceDeploymentsCommand({ serviceDeploymentArns: [arn] }))).serviceDeployments?.[0];
}

/** `CANARY deployment <arn> (IN_PROGRESS at POST_TEST_TRAFFIC_SHIFT)`. */
export function deploymentName(sd: ServiceDeployment): string {
  const strategy = sd.deploymentConfiguration?.strategy;
  return `${strategy ? `${strategy} ` : ''}deployment ${sd.serviceDeploymentArn} (${sd.status}${sd.lifecycleStage ? ` at ${sd.lifecycleStage}` : ''})`;
}

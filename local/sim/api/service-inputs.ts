/**
 * The members CreateService, UpdateService and RunTask check against the task definition and the
 * account: launch type or capacity provider strategy, the awsvpc network configuration (and
 * whether its subnets and security groups exist), load balancers (Amazon ECS API reference,
 * CreateService).
 */
import type { CapacityProviderStrategyItem, ContainerDefinition, NetworkConfiguration, TaskDefinition } from '@aws-sdk/client-ecs';
import type { SimCore } from '../core';
import { EcsApiError, invalidParameter } from '../errors';
import { listMember } from '../protocol';
import { MAX_LOAD_BALANCERS } from '../service-rules';
import type { DeploymentTemplate } from '../state';

/**
 * launchType or capacityProviderStrategy, validated against the task definition.
 * @throws InvalidParameterException for both given, an unknown launch type, a task definition not
 *   compatible with Fargate, or a malformed strategy.
 */
export function launchChoice(
  launchType: string | undefined,
  strategy: CapacityProviderStrategyItem[] | undefined,
  td: TaskDefinition,
): Pick<DeploymentTemplate, 'launchType' | 'capacityProviderStrategy'> {
  listMember({ capacityProviderStrategy: strategy }, 'capacityProviderStrategy', 'structure');
  if (launchType !== undefined && strategy !== undefined && strategy.length > 0) {
    throw invalidParameter('Specifying both a launch type and capacity provider strategy is not supported. Remove one and try again.');
  }
  if (launchType !== undefined && launchType !== 'FARGATE' && launchType !== 'EC2') {
    throw invalidParameter(`launchType ${launchType} is not supported by the simulator (FARGATE or EC2).`);
  }
  const fargate = launchType === 'FARGATE' || (strategy ?? []).some((s) => s.capacityProvider?.startsWith('FARGATE'));
  if (fargate && !(td.compatibilities ?? []).includes('FARGATE')) {
    throw invalidParameter('Task definition does not support launch_type FARGATE.');
  }
  for (const s of strategy ?? []) {
    if (!s.capacityProvider) throw invalidParameter('capacityProvider can not be blank.');
    if ((s.weight ?? 0) < 0 || (s.weight ?? 0) > 1000) throw invalidParameter('weight must be between 0 and 1000.');
    if ((s.base ?? 0) < 0 || (s.base ?? 0) > 100000) throw invalidParameter('base must be between 0 and 100000.');
  }
  if (strategy && strategy.filter((s) => (s.base ?? 0) > 0).length > 1) {
    throw invalidParameter('Only one capacity provider in a strategy can have a base defined.');
  }
  if (strategy && strategy.length > 0) return { capacityProviderStrategy: structuredClone(strategy) };
  return launchType ? { launchType: launchType as 'FARGATE' | 'EC2' } : {};
}

/**
 * The awsvpc network configuration as stored (assignPublicIp DISABLED unless given); required for
 * an awsvpc task definition. @throws InvalidParameterException.
 */
export function networkConfiguration(
  core: SimCore,
  nc: NetworkConfiguration | undefined,
  td: TaskDefinition,
): DeploymentTemplate['networkConfiguration'] {
  if (td.networkMode === 'awsvpc' && !nc?.awsvpcConfiguration) {
    throw invalidParameter("Network Configuration must be provided when networkMode 'awsvpc' is specified.");
  }
  if (!nc?.awsvpcConfiguration) return undefined;
  const v = nc.awsvpcConfiguration;
  if (typeof v !== 'object' || Array.isArray(v)) {
    throw new EcsApiError('SerializationException', 'awsvpcConfiguration must be a structure.');
  }
  listMember(v as unknown as Record<string, unknown>, 'subnets', 'string');
  listMember(v as unknown as Record<string, unknown>, 'securityGroups', 'string');
  if (!v.subnets || v.subnets.length === 0) throw invalidParameter('subnets can not be empty.');
  if (v.subnets.length > 16) throw invalidParameter('subnets can have at most 16 items.');
  if ((v.securityGroups ?? []).length > 5) throw invalidParameter('securityGroups can have at most 5 items.');
  assertNetworkExists(core, v.subnets, v.securityGroups ?? []);
  return {
    awsvpcConfiguration: {
      subnets: [...v.subnets],
      ...(v.securityGroups ? { securityGroups: [...v.securityGroups] } : {}),
      assignPublicIp: v.assignPublicIp ?? 'DISABLED',
    },
  };
}

/**
 * ECS looks the subnets and security groups up in EC2 and refuses ids EC2 does not know, with
 * EC2's error code in its message (only when a VPC is declared: the `vpc` option, {@link setVpc}).
 * With several unknown ids the simulator names the first.
 */
export function assertNetworkExists(core: SimCore, subnets: readonly string[], securityGroups: readonly string[]): void {
  if (!core.vpc) return;
  const subnet = subnets.find((id) => !core.vpc?.subnets.has(id));
  if (subnet !== undefined) {
    throw invalidParameter(`Error retrieving subnet information for [${subnet}]: The subnet ID '${subnet}' does not exist (ErrorCode: InvalidSubnetID.NotFound)`);
  }
  const group = securityGroups.find((id) => !core.vpc?.securityGroups.has(id));
  if (group !== undefined) {
    throw invalidParameter(`Error retrieving security group information for [${group}]: The security group '${group}' does not exist (ErrorCode: InvalidGroup.NotFound)`);
  }
}

/** Load balancers, each naming a container and port of the task definition (at most five). */
export function loadBalancers(lbs: DeploymentTemplate['loadBalancers'] | undefined, td: TaskDefinition): DeploymentTemplate['loadBalancers'] {
  listMember({ loadBalancers: lbs }, 'loadBalancers', 'structure');
  if ((lbs ?? []).length > MAX_LOAD_BALANCERS) throw invalidParameter(`loadBalancers can have at most ${MAX_LOAD_BALANCERS} items.`);
  for (const lb of lbs ?? []) {
    const c = (td.containerDefinitions ?? []).find((x: ContainerDefinition) => x.name === lb.containerName);
    if (!c) throw invalidParameter(`The container ${lb.containerName} does not exist in the task definition.`);
    if (!(c.portMappings ?? []).some((p) => p.containerPort === lb.containerPort)) {
      throw invalidParameter(
        `The container ${lb.containerName} did not have a container port ${lb.containerPort} defined.`,
      );
    }
  }
  return structuredClone(lbs ?? []);
}

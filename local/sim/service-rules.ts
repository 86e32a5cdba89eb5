/**
 * CreateService / UpdateService checks and defaults for the service vocabulary beyond the rolling
 * basics: deployment controllers (CODE_DEPLOY, EXTERNAL) and what UpdateService refuses for them,
 * deployment alarms, Availability Zone rebalancing, Service Connect, managed EBS volumes, several
 * load balancers, propagateTags.
 *
 * Sources: Amazon ECS API reference, CreateService and UpdateService ("For services using the
 * blue/green (CODE_DEPLOY) deployment controller, only the desired count, deployment
 * configuration, health check grace period, task placement constraints and strategies, enable ECS
 * managed tags option, and propagate tags can be updated using this API ..."; the same list without
 * the deployment configuration for EXTERNAL), Service (availabilityZoneRebalancing defaults to
 * ENABLED on create), DeploymentAlarms, ServiceConnectConfiguration, ServiceVolumeConfiguration.
 * Messages are ECS's own where a public report quotes them (marked), otherwise the simulator's.
 */
import type {
  DeploymentAlarms,
  ServiceConnectConfiguration,
  ServiceConnectServiceResource,
  ServiceVolumeConfiguration,
  TaskDefinition,
  UpdateServiceRequest,
} from '@aws-sdk/client-ecs';
import { invalidParameter } from './errors';
import type { DeploymentControllerType } from './state';

const CONTROLLERS: readonly DeploymentControllerType[] = ['ECS', 'CODE_DEPLOY', 'EXTERNAL'];
const PROPAGATE_TAGS = ['TASK_DEFINITION', 'SERVICE', 'NONE'];
/** A service can have at most five target groups (developer guide, "Register multiple target groups"). */
export const MAX_LOAD_BALANCERS = 5;

/** The deployment controller of a CreateService request (default ECS). @throws InvalidParameterException */
export function deploymentControllerOf(given: { type?: string } | undefined): DeploymentControllerType {
  const type = given?.type ?? 'ECS';
  if (!(CONTROLLERS as readonly string[]).includes(type)) {
    throw invalidParameter(`Invalid deploymentController type '${type}'. Valid values: ${CONTROLLERS.join(', ')}.`);
  }
  return type as DeploymentControllerType;
}

/**
 * UpdateService fields a non-ECS deployment controller does not take: each is refused when present
 * (ECS refuses the call even when the value is unchanged: a CloudFormation update resending the same
 * task definition fails, aws/aws-cdk#23564).
 */
const CODE_DEPLOY_OWNS: readonly (keyof UpdateServiceRequest)[] = [
  'taskDefinition',
  'networkConfiguration',
  'platformVersion',
  'loadBalancers',
  'capacityProviderStrategy',
  'serviceRegistries',
  'serviceConnectConfiguration',
  'volumeConfigurations',
  'forceNewDeployment',
];
const NOT_UPDATABLE: Record<Exclude<DeploymentControllerType, 'ECS'>, readonly (keyof UpdateServiceRequest)[]> = {
  CODE_DEPLOY: CODE_DEPLOY_OWNS,
  // EXTERNAL does not take the deployment configuration either (it has no ECS deployments).
  EXTERNAL: [...CODE_DEPLOY_OWNS, 'deploymentConfiguration'],
};

/** What a person uses instead of UpdateService, per controller. */
const INSTEAD: Record<Exclude<DeploymentControllerType, 'ECS'>, string> = {
  CODE_DEPLOY: 'Use AWS CodeDeploy to trigger a new deployment.',
  EXTERNAL: 'Use a new task set (CreateTaskSet) to change it.',
};

/** ECS's field words in its refusal ("Unable to update task definition on services ..."). */
function words(field: string): string {
  return field === 'taskDefinition' ? 'task definition' : field;
}

/**
 * Refuses an UpdateService that changes what the service's deployment controller owns.
 * @throws InvalidParameterException "Unable to update task definition on services with a
 *   CODE_DEPLOY deployment controller. Use AWS CodeDeploy to trigger a new deployment." (ECS's
 *   wording, quoted in aws/aws-cdk#23564 and many reports), and the same sentence for the other
 *   fields and for EXTERNAL.
 */
export function checkControllerUpdate(controller: DeploymentControllerType, req: UpdateServiceRequest): void {
  if (controller === 'ECS') return;
  for (const field of NOT_UPDATABLE[controller]) {
    const value = req[field];
    if (value === undefined || (field === 'forceNewDeployment' && value !== true)) continue;
    throw invalidParameter(`Unable to update ${words(field)} on services with a ${controller} deployment controller. ${INSTEAD[controller]}`);
  }
}

/** `propagateTags` (default NONE). @throws InvalidParameterException */
export function propagateTagsOf(value: string | undefined, current?: string): string {
  const v = value ?? current ?? 'NONE';
  if (!PROPAGATE_TAGS.includes(v)) throw invalidParameter(`Invalid propagateTags '${v}'. Valid values: ${PROPAGATE_TAGS.join(', ')}.`);
  return v;
}

/**
 * `availabilityZoneRebalancing`: ENABLED when a CreateService omits it, the current value when an
 * UpdateService does (API reference, Service). @throws InvalidParameterException
 */
export function azRebalancingOf(value: string | undefined, current?: 'ENABLED' | 'DISABLED'): 'ENABLED' | 'DISABLED' {
  const v = value ?? current ?? 'ENABLED';
  if (v !== 'ENABLED' && v !== 'DISABLED') throw invalidParameter(`Invalid availabilityZoneRebalancing '${v}'. Valid values: ENABLED, DISABLED.`);
  return v;
}

/** Deployment alarms as stored. @throws InvalidParameterException for a malformed object. */
export function alarmsOf(given: DeploymentAlarms | undefined, current?: DeploymentAlarms): DeploymentAlarms | undefined {
  if (given === undefined) return current;
  if (!Array.isArray(given.alarmNames) || given.alarmNames.some((n) => typeof n !== 'string' || n === '')) {
    throw invalidParameter('deploymentConfiguration.alarms.alarmNames must be a list of alarm names.');
  }
  if (typeof given.enable !== 'boolean' || typeof given.rollback !== 'boolean') {
    throw invalidParameter('deploymentConfiguration.alarms needs enable and rollback (true or false).');
  }
  if (given.enable && given.alarmNames.length === 0) {
    throw invalidParameter('deploymentConfiguration.alarms.alarmNames must name at least one alarm when enable is true.');
  }
  return { alarmNames: [...given.alarmNames], enable: given.enable, rollback: given.rollback };
}

/** The port names of a task definition (PortMapping.name). */
function portNames(td: TaskDefinition): Set<string> {
  const out = new Set<string>();
  for (const c of td.containerDefinitions ?? []) for (const p of c.portMappings ?? []) if (p.name) out.add(p.name);
  return out;
}

/**
 * Service Connect as ECS answers it in a deployment, with the Cloud Map services it creates.
 * @param clusterNamespace the cluster's default namespace, used when the configuration names none.
 * @param discoveryArn makes the ARN of the Cloud Map service for a discovery name.
 * @throws InvalidParameterException when `enabled` is missing, no namespace can be found, a
 *   `portName` names no port mapping of the task definition, or a discovery name is used twice.
 */
export function serviceConnectOf(
  given: ServiceConnectConfiguration | undefined,
  td: TaskDefinition | undefined,
  clusterNamespace: string | undefined,
  discoveryArn: (name: string) => string,
): { configuration: ServiceConnectConfiguration; resources: ServiceConnectServiceResource[] } | undefined {
  if (given === undefined) return undefined;
  if (typeof given.enabled !== 'boolean') throw invalidParameter('serviceConnectConfiguration.enabled must be true or false.');
  if (!given.enabled) return { configuration: structuredClone(given), resources: [] };
  const namespace = given.namespace ?? clusterNamespace;
  if (namespace === undefined) {
    throw invalidParameter('Service Connect needs a namespace: set serviceConnectConfiguration.namespace or the cluster\'s serviceConnectDefaults.');
  }
  const ports = td ? portNames(td) : new Set<string>();
  const resources: ServiceConnectServiceResource[] = [];
  for (const s of given.services ?? []) {
    if (!s.portName || !ports.has(s.portName)) {
      throw invalidParameter(
        `The Service Connect portName '${String(s.portName)}' does not match the name of a port mapping in the task definition (${[...ports].join(', ') || 'none named'}).`,
      );
    }
    const discoveryName = s.discoveryName ?? s.portName;
    if (resources.some((r) => r.discoveryName === discoveryName)) {
      throw invalidParameter(`The Service Connect discovery name '${discoveryName}' is used more than once.`);
    }
    resources.push({ discoveryName, discoveryArn: discoveryArn(discoveryName) });
  }
  return { configuration: { ...structuredClone(given), namespace }, resources };
}

/**
 * Managed EBS volumes: each must name a task definition volume that is `configuredAtLaunch`, with
 * the infrastructure role ECS uses to create it.
 * @throws InvalidParameterException otherwise.
 */
export function volumeConfigurationsOf(given: ServiceVolumeConfiguration[] | undefined, td: TaskDefinition | undefined): ServiceVolumeConfiguration[] | undefined {
  if (given === undefined) return undefined;
  const atLaunch = new Set((td?.volumes ?? []).filter((v) => v.configuredAtLaunch === true).map((v) => v.name));
  for (const v of given) {
    if (!v.name || !atLaunch.has(v.name)) {
      throw invalidParameter(`The volume '${String(v.name)}' is not a volume of the task definition that is configured at launch (configuredAtLaunch: true).`);
    }
    if (!v.managedEBSVolume?.roleArn) throw invalidParameter(`The volume '${v.name}' needs managedEBSVolume.roleArn (the ECS infrastructure role).`);
  }
  return structuredClone(given);
}

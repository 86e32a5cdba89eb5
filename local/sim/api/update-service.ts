/**
 * UpdateService (Amazon ECS API reference): every member is validated before anything changes (a
 * refused update leaves the service as it was); a new task definition, load balancers, network,
 * platform version, Service Connect, volume or VPC Lattice configuration, or
 * `forceNewDeployment`, starts a new deployment; the rest applies in place.
 */
import type { TaskDefinition, UpdateServiceRequest } from '@aws-sdk/client-ecs';
import type { SimCore } from '../core';
import { deploymentConfig, templateOf, vpcLatticeConfigurationsOf } from '../deployment-config';
import { invalidParameter } from '../errors';
import { checkNativeNeeds } from '../native-rules';
import { azRebalancingOf, checkControllerUpdate, propagateTagsOf, serviceConnectOf, volumeConfigurationsOf } from '../service-rules';
import type { DeploymentConfig, DeploymentTemplate, SimCluster, SimService } from '../state';
import { serviceToWire } from '../wire';
import { assertCount, assertProvidersAssociated, canonicalJson } from './inputs';
import { launchChoice, loadBalancers, networkConfiguration } from './service-inputs';

/** What an update will set, validated; `newDeployment` when it starts a deployment. */
interface UpdatePlan {
  newDeployment: boolean;
  td: TaskDefinition;
  launch: Pick<DeploymentTemplate, 'launchType' | 'capacityProviderStrategy'>;
  networkConfiguration: DeploymentTemplate['networkConfiguration'];
  loadBalancers: DeploymentTemplate['loadBalancers'];
  serviceConnect?: { configuration: NonNullable<SimService['serviceConnectConfiguration']>; resources: NonNullable<SimService['serviceConnectResources']> };
  volumeConfigurations: SimService['volumeConfigurations'];
  vpcLatticeConfigurations: SimService['vpcLatticeConfigurations'];
  propagateTags: string;
  availabilityZoneRebalancing: SimService['availabilityZoneRebalancing'];
  deploymentConfiguration: DeploymentConfig;
}

/**
 * UpdateService on an ACTIVE service.
 * @throws ServiceNotFoundException / ServiceNotActiveException, InvalidParameterException,
 *   ClientException (task definition), and what the deployment controller refuses.
 */
export function updateService(core: SimCore, req: UpdateServiceRequest): unknown {
  const cluster = core.resolveCluster(req.cluster);
  const svc = core.requireActiveService(cluster, req.service);
  checkControllerUpdate(svc.deploymentController, req);
  if (req.desiredCount !== undefined) assertCount(req.desiredCount);
  if (svc.deploymentController === 'EXTERNAL') return updateExternalService(core, svc, req);
  const plan = planUpdate(core, cluster, svc, req);
  applyUpdate(svc, req, plan);
  if (plan.newDeployment) core.scheduler.startDeployment(svc, templateOf(svc));
  else {
    svc.steady = svc.steady && req.desiredCount === undefined;
    core.scheduler.kick(svc);
  }
  return { service: serviceToWire(core, svc, false) };
}

/** Validates every member of the update, in ECS's order, without changing the service. */
function planUpdate(core: SimCore, cluster: SimCluster, svc: SimService, req: UpdateServiceRequest): UpdatePlan {
  const flag = { newDeployment: req.forceNewDeployment === true };
  let td = core.taskDefinitionByArn(svc.taskDefinition) as TaskDefinition;
  if (req.taskDefinition !== undefined) {
    td = core.resolveTaskDefinitionForService(req.taskDefinition);
    if (td.taskDefinitionArn !== svc.taskDefinition) flag.newDeployment = true;
  }
  const launch = updatedLaunch(cluster, svc, req, td, flag);
  const network = updatedNetwork(core, svc, req, td, flag);
  let lbs = svc.loadBalancers;
  if (req.loadBalancers !== undefined) {
    lbs = loadBalancers(req.loadBalancers, td);
    if (canonicalJson(lbs) !== canonicalJson(svc.loadBalancers)) flag.newDeployment = true;
  }
  if (req.platformVersion !== undefined && req.platformVersion !== svc.platformVersion) flag.newDeployment = true;
  const serviceConnect = updatedServiceConnect(core, cluster, svc, req, td, flag);
  const volumeConfigurations = updatedVolumes(svc, req, td, flag);
  let vpcLatticeConfigurations = svc.vpcLatticeConfigurations;
  if (req.vpcLatticeConfigurations !== undefined) {
    // Given, it replaces the service's ("This parameter triggers a new service deployment"); [] removes it.
    vpcLatticeConfigurations = vpcLatticeConfigurationsOf(req.vpcLatticeConfigurations);
    if (canonicalJson(vpcLatticeConfigurations ?? []) !== canonicalJson(svc.vpcLatticeConfigurations ?? [])) flag.newDeployment = true;
  }
  const propagateTags = propagateTagsOf(req.propagateTags, svc.propagateTags);
  const availabilityZoneRebalancing = azRebalancingOf(req.availabilityZoneRebalancing, svc.availabilityZoneRebalancing);
  const deploymentConfiguration =
    req.deploymentConfiguration !== undefined ? deploymentConfig(req.deploymentConfiguration, svc.deploymentConfiguration) : svc.deploymentConfiguration;
  checkNativeNeeds(deploymentConfiguration, svc.deploymentController, lbs, serviceConnect !== undefined);
  return {
    newDeployment: flag.newDeployment,
    td,
    launch,
    networkConfiguration: network,
    loadBalancers: lbs,
    serviceConnect,
    volumeConfigurations,
    vpcLatticeConfigurations,
    propagateTags,
    availabilityZoneRebalancing,
    deploymentConfiguration,
  };
}

type Flag = { newDeployment: boolean };

function updatedLaunch(cluster: SimCluster, svc: SimService, req: UpdateServiceRequest, td: TaskDefinition, flag: Flag): UpdatePlan['launch'] {
  if (req.capacityProviderStrategy === undefined) {
    launchChoice(svc.launchType, svc.capacityProviderStrategy, td);
    return { launchType: svc.launchType, capacityProviderStrategy: svc.capacityProviderStrategy };
  }
  const changed = canonicalJson(req.capacityProviderStrategy) !== canonicalJson(svc.capacityProviderStrategy ?? []);
  if (changed && req.forceNewDeployment !== true && (svc.launchType !== undefined || svc.capacityProviderStrategy !== undefined)) {
    throw invalidParameter(
      'When switching from launch type to capacity provider strategy on an existing service, or making a change to a capacity provider strategy on a service that is already using one, you must force a new deployment.',
    );
  }
  const launch = launchChoice(undefined, req.capacityProviderStrategy, td);
  assertProvidersAssociated(cluster, req.capacityProviderStrategy);
  if (changed) flag.newDeployment = true;
  return launch;
}

function updatedNetwork(core: SimCore, svc: SimService, req: UpdateServiceRequest, td: TaskDefinition, flag: Flag): UpdatePlan['networkConfiguration'] {
  if (req.networkConfiguration !== undefined) {
    const network = networkConfiguration(core, req.networkConfiguration, td);
    if (canonicalJson(network) !== canonicalJson(svc.networkConfiguration)) flag.newDeployment = true;
    return network;
  }
  if (td.networkMode === 'awsvpc' && !svc.networkConfiguration) networkConfiguration(core, undefined, td);
  return svc.networkConfiguration;
}

function updatedServiceConnect(core: SimCore, cluster: SimCluster, svc: SimService, req: UpdateServiceRequest, td: TaskDefinition, flag: Flag): UpdatePlan['serviceConnect'] {
  let serviceConnect = svc.serviceConnectConfiguration ? { configuration: svc.serviceConnectConfiguration, resources: svc.serviceConnectResources ?? [] } : undefined;
  if (req.serviceConnectConfiguration !== undefined) {
    const same = canonicalJson(req.serviceConnectConfiguration) === canonicalJson(svc.serviceConnectConfiguration);
    if (!same) {
      serviceConnect = serviceConnectOf(req.serviceConnectConfiguration, td, cluster.serviceConnectNamespace, () => core.discoveryArn());
      flag.newDeployment = true;
    }
  } else if (serviceConnect && td.taskDefinitionArn !== svc.taskDefinition) {
    // A new task definition must still have the ports Service Connect names.
    serviceConnectOf(serviceConnect.configuration, td, cluster.serviceConnectNamespace, () => '');
  }
  return serviceConnect;
}

function updatedVolumes(svc: SimService, req: UpdateServiceRequest, td: TaskDefinition, flag: Flag): UpdatePlan['volumeConfigurations'] {
  let volumeConfigurations = svc.volumeConfigurations;
  if (req.volumeConfigurations !== undefined) {
    volumeConfigurations = req.volumeConfigurations.length === 0 ? undefined : volumeConfigurationsOf(req.volumeConfigurations, td);
    if (canonicalJson(volumeConfigurations ?? []) !== canonicalJson(svc.volumeConfigurations ?? [])) flag.newDeployment = true;
  } else if (volumeConfigurations && td.taskDefinitionArn !== svc.taskDefinition) {
    volumeConfigurationsOf(volumeConfigurations, td);
  }
  return volumeConfigurations;
}

/** Applies a validated plan to the service. */
function applyUpdate(svc: SimService, req: UpdateServiceRequest, plan: UpdatePlan): void {
  if (req.desiredCount !== undefined) svc.desiredCount = req.desiredCount;
  svc.deploymentConfiguration = plan.deploymentConfiguration;
  if (req.healthCheckGracePeriodSeconds !== undefined) svc.healthCheckGracePeriodSeconds = req.healthCheckGracePeriodSeconds;
  if (req.enableECSManagedTags !== undefined) svc.enableECSManagedTags = req.enableECSManagedTags;
  svc.propagateTags = plan.propagateTags;
  svc.availabilityZoneRebalancing = plan.availabilityZoneRebalancing;
  if (req.enableExecuteCommand !== undefined) svc.enableExecuteCommand = req.enableExecuteCommand;
  if (req.placementConstraints !== undefined) svc.placementConstraints = structuredClone(req.placementConstraints);
  if (req.placementStrategy !== undefined) svc.placementStrategy = structuredClone(req.placementStrategy);
  if (req.serviceRegistries !== undefined) svc.serviceRegistries = structuredClone(req.serviceRegistries);
  svc.taskDefinition = plan.td.taskDefinitionArn as string;
  svc.launchType = plan.launch.launchType;
  svc.capacityProviderStrategy = plan.launch.capacityProviderStrategy;
  if (req.platformVersion !== undefined) svc.platformVersion = req.platformVersion;
  svc.networkConfiguration = plan.networkConfiguration;
  svc.loadBalancers = plan.loadBalancers;
  svc.serviceConnectConfiguration = plan.serviceConnect?.configuration;
  svc.serviceConnectResources = plan.serviceConnect?.resources;
  svc.volumeConfigurations = plan.volumeConfigurations;
  svc.vpcLatticeConfigurations = plan.vpcLatticeConfigurations;
}

/** UpdateService on an EXTERNAL service: only what the API reference lets it change. */
function updateExternalService(core: SimCore, svc: SimService, req: UpdateServiceRequest): unknown {
  const propagateTags = propagateTagsOf(req.propagateTags, svc.propagateTags);
  if (req.desiredCount !== undefined) svc.desiredCount = req.desiredCount;
  if (req.healthCheckGracePeriodSeconds !== undefined) svc.healthCheckGracePeriodSeconds = req.healthCheckGracePeriodSeconds;
  if (req.enableECSManagedTags !== undefined) svc.enableECSManagedTags = req.enableECSManagedTags;
  if (req.enableExecuteCommand !== undefined) svc.enableExecuteCommand = req.enableExecuteCommand;
  if (req.placementConstraints !== undefined) svc.placementConstraints = structuredClone(req.placementConstraints);
  if (req.placementStrategy !== undefined) svc.placementStrategy = structuredClone(req.placementStrategy);
  svc.propagateTags = propagateTags;
  return { service: serviceToWire(core, svc, false) };
}

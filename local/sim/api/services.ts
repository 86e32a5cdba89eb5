/**
 * Services: CreateService, DeleteService, DescribeServices and ListServices (Amazon ECS API
 * reference for each action); UpdateService is in ./update-service.
 */
import type { CreateServiceRequest, Service, TaskDefinition } from '@aws-sdk/client-ecs';
import { ECS_LIMITS } from '../../../lambda/core/ecs-limits';
import type { SimCore } from '../core';
import { deploymentConfig, templateOf, vpcLatticeConfigurationsOf } from '../deployment-config';
import { invalidParameter } from '../errors';
import { checkNativeNeeds } from '../native-rules';
import { page } from '../paging';
import { listMember, stringMember } from '../protocol';
import {
  azRebalancingOf,
  deploymentControllerOf,
  propagateTagsOf,
  serviceConnectOf,
  volumeConfigurationsOf,
} from '../service-rules';
import type { DeploymentControllerType, SimCluster, SimService } from '../state';
import { serviceToWire } from '../wire';
import { NAME_RE, assertCount, assertProvidersAssociated, canonicalJson, pageReq, tagsInput } from './inputs';
import { launchChoice, loadBalancers, networkConfiguration } from './service-inputs';

/**
 * CreateService: a REPLICA service and its first deployment. The same request again (same
 * clientToken and parameters) answers the existing service; another one for an ACTIVE name is
 * refused ("Creation of service was not idempotent.").
 * @throws InvalidParameterException, ClientException (task definition), ClusterNotFoundException.
 */
export function createService(core: SimCore, req: CreateServiceRequest): unknown {
  const cluster = core.resolveCluster(req.cluster);
  const name = req.serviceName;
  if (typeof name !== 'string' || !NAME_RE.test(name)) {
    throw invalidParameter(
      'Service name is invalid: up to 255 letters (uppercase and lowercase), numbers, underscores, and hyphens are allowed.',
    );
  }
  const clientToken = stringMember(req as unknown as Record<string, unknown>, 'clientToken');
  if (clientToken !== undefined && (clientToken.length > ECS_LIMITS.clientTokenMaxLength || !/^[\x21-\x7e]*$/.test(clientToken))) {
    throw invalidParameter('clientToken must be up to 36 ASCII characters (codes 33 to 126).');
  }
  const fingerprint = canonicalJson({ ...req, clientToken: undefined, cluster: cluster.name });
  const existing = cluster.services.get(name);
  if (existing?.status === 'DRAINING') throw invalidParameter('Unable to Start a service that is still Draining.');
  if (existing?.status === 'ACTIVE') {
    if (existing.clientToken === clientToken && existing.creationFingerprint === fingerprint) {
      return { service: serviceToWire(core, existing, true) };
    }
    throw invalidParameter('Creation of service was not idempotent.');
  }
  if (req.schedulingStrategy !== undefined && req.schedulingStrategy !== 'REPLICA') {
    throw invalidParameter('The simulator supports only the REPLICA scheduling strategy.');
  }
  const controller = deploymentControllerOf(req.deploymentController);
  if (req.desiredCount === undefined) {
    throw invalidParameter('desiredCount is required for a service with the REPLICA scheduling strategy.');
  }
  assertCount(req.desiredCount);
  const svc = newService(core, cluster, req, controller);
  svc.clientToken = clientToken;
  svc.creationFingerprint = fingerprint;
  cluster.services.set(name, svc);
  // An EXTERNAL service runs nothing until a task set is created (not simulated).
  if (controller !== 'EXTERNAL') core.scheduler.startDeployment(svc, templateOf(svc));
  return { service: serviceToWire(core, svc, true) };
}

/** The members of a new service that depend on its task definition (validated, as stored). */
function runtimeMembers(core: SimCore, cluster: SimCluster, req: CreateServiceRequest, controller: DeploymentControllerType) {
  // EXTERNAL services get their task definition, network and load balancers from task sets.
  const td: TaskDefinition | undefined =
    controller === 'EXTERNAL' && req.taskDefinition === undefined ? undefined : core.resolveTaskDefinitionForService(req.taskDefinition);
  const launch = launchChoice(req.launchType, req.capacityProviderStrategy, td ?? { compatibilities: ['EC2', 'FARGATE'] });
  assertProvidersAssociated(cluster, req.capacityProviderStrategy);
  const network = td ? networkConfiguration(core, req.networkConfiguration, td) : undefined;
  const lbs = td ? loadBalancers(req.loadBalancers, td) : [];
  if (controller === 'CODE_DEPLOY' && lbs.length === 0) {
    throw invalidParameter('A service using the CODE_DEPLOY deployment controller needs a load balancer (blue/green shifts its traffic).');
  }
  const deploymentConfiguration = deploymentConfig(req.deploymentConfiguration, undefined);
  const serviceConnect = serviceConnectOf(req.serviceConnectConfiguration, td, cluster.serviceConnectNamespace, () => core.discoveryArn());
  checkNativeNeeds(deploymentConfiguration, controller, lbs, serviceConnect !== undefined);
  const volumeConfigurations = volumeConfigurationsOf(req.volumeConfigurations, td);
  const vpcLatticeConfigurations = vpcLatticeConfigurationsOf(req.vpcLatticeConfigurations);
  return {
    taskDefinition: (td?.taskDefinitionArn as string | undefined) ?? '',
    ...launch,
    platformVersion: launch.launchType === 'FARGATE' || launch.capacityProviderStrategy ? (req.platformVersion ?? 'LATEST') : req.platformVersion,
    networkConfiguration: network,
    loadBalancers: lbs,
    ...(serviceConnect ? { serviceConnectConfiguration: serviceConnect.configuration, serviceConnectResources: serviceConnect.resources } : {}),
    ...(volumeConfigurations ? { volumeConfigurations } : {}),
    ...(vpcLatticeConfigurations ? { vpcLatticeConfigurations } : {}),
    deploymentConfiguration,
  };
}

/** The record of a new ACTIVE service (no deployment yet). */
function newService(core: SimCore, cluster: SimCluster, req: CreateServiceRequest, controller: DeploymentControllerType): SimService {
  const name = req.serviceName as string;
  const runtime = runtimeMembers(core, cluster, req, controller);
  const propagateTags = propagateTagsOf(req.propagateTags);
  const availabilityZoneRebalancing = azRebalancingOf(req.availabilityZoneRebalancing);
  const tags = tagsInput(req.tags);
  return {
    name,
    arn: core.arns.service(cluster.name, name),
    cluster: cluster.name,
    status: 'ACTIVE',
    desiredCount: req.desiredCount as number,
    ...runtime,
    serviceRegistries: structuredClone(req.serviceRegistries ?? []),
    healthCheckGracePeriodSeconds: req.healthCheckGracePeriodSeconds,
    deploymentController: controller,
    availabilityZoneRebalancing,
    placementConstraints: structuredClone(req.placementConstraints ?? []),
    placementStrategy: structuredClone(req.placementStrategy ?? []),
    enableECSManagedTags: req.enableECSManagedTags ?? false,
    propagateTags,
    enableExecuteCommand: req.enableExecuteCommand ?? false,
    tags,
    createdAt: core.clock.nowMs(),
    createdBy: core.arns.principal(),
    creationFingerprint: '',
    deployments: [],
    serviceDeployments: [],
    serviceRevisions: new Map(),
    events: [],
    steady: false,
    consecutiveFailures: 0,
    launchBackoffUntil: 0,
    warnings: new Map(),
  };
}

/** DeleteService: DRAINING, then INACTIVE once its tasks stopped; refused above 0 without `force`. */
export function deleteService(core: SimCore, i: Record<string, unknown>): unknown {
  const cluster = core.resolveCluster(i.cluster);
  const svc = core.requireActiveService(cluster, i.service);
  if (svc.desiredCount > 0 && i.force !== true) {
    throw invalidParameter('The service cannot be stopped while it is scaled above 0.');
  }
  svc.desiredCount = 0;
  svc.status = 'DRAINING';
  svc.steady = false;
  svc.retry?.cancel();
  core.scheduler.kick(svc);
  return { service: serviceToWire(core, svc, false) };
}

/** DescribeServices: up to 10 names or ARNs; unknown ones in `failures` with reason MISSING. */
export function describeServices(core: SimCore, i: Record<string, unknown>): unknown {
  const cluster = core.resolveCluster(i.cluster);
  const refs = listMember(i, 'services', 'string');
  if (!refs || refs.length === 0) throw invalidParameter('Services cannot be empty.');
  if (refs.length > ECS_LIMITS.describeServicesBatch) {
    throw invalidParameter(`service names can have at most ${ECS_LIMITS.describeServicesBatch} items.`);
  }
  const includeTags = (listMember(i, 'include', 'string') ?? []).includes('TAGS');
  const services: Service[] = [];
  const failures: { arn: string; reason: string }[] = [];
  for (const ref of refs as string[]) {
    const svc = core.findService(cluster, ref);
    if (svc) services.push(serviceToWire(core, svc, includeTags));
    else failures.push({ arn: ref.startsWith('arn:') ? ref : core.arns.service(cluster.name, ref), reason: 'MISSING' });
  }
  return { services, failures };
}

/** ListServices: ACTIVE services' ARNs, optionally of one launch type. */
export function listServices(core: SimCore, i: Record<string, unknown>): unknown {
  const cluster = core.resolveCluster(i.cluster);
  const launchType = i.launchType as string | undefined;
  const arns = [...cluster.services.values()]
    .filter((s) => s.status === 'ACTIVE')
    .filter((s) => launchType === undefined || (s.launchType ?? (s.capacityProviderStrategy ? 'FARGATE' : 'EC2')) === launchType)
    .map((s) => s.arn);
  const p = page(`services:${cluster.name}`, arns, pageReq(i), {
    defaultMax: ECS_LIMITS.listServicesDefaultMaxResults,
    max: ECS_LIMITS.listServicesMaxResults,
  });
  return { serviceArns: p.items, ...(p.nextToken ? { nextToken: p.nextToken } : {}) };
}

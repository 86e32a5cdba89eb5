/**
 * The wire shapes of the simulator's records: Cluster, Service (with its deployments) and Task as
 * the Amazon ECS API reference names their members (the SDK's types), built from the state.
 */
import type { Cluster, Deployment, NetworkConfiguration, Service, Task } from '@aws-sdk/client-ecs';
import type { SimCore } from './core';
import { PENDING_STATES, type DeploymentTemplate, type SimCluster, type SimDeployment, type SimService, type SimTask } from './state';

/** A Cluster; `include` TAGS / SETTINGS adds those members (DescribeClusters `include`). */
export function clusterToWire(core: SimCore, c: SimCluster, include: string[] = []): Cluster {
  const tasks = [...c.tasks.values()];
  return {
    clusterArn: c.arn,
    clusterName: c.name,
    status: c.status,
    registeredContainerInstancesCount: 0,
    runningTasksCount: tasks.filter((t) => t.lastStatus === 'RUNNING').length,
    pendingTasksCount: tasks.filter((t) => PENDING_STATES.has(t.lastStatus)).length,
    activeServicesCount: [...c.services.values()].filter((s) => s.status === 'ACTIVE').length,
    statistics: [],
    tags: include.includes('TAGS') ? c.tags.map((t) => ({ ...t })) : [],
    ...(include.includes('SETTINGS') ? { settings: c.settings.map((s) => ({ ...s })) } : {}),
    capacityProviders: [...c.capacityProviders],
    defaultCapacityProviderStrategy: structuredClone(c.defaultCapacityProviderStrategy),
    ...(c.serviceConnectNamespace ? { serviceConnectDefaults: { namespace: c.serviceConnectNamespace } } : {}),
  } as Cluster;
}

/** One `Service.deployments[]` entry, with its task counts. */
export function deploymentToWire(core: SimCore, svc: SimService, d: SimDeployment): Deployment {
  const counts = core.scheduler.counts(svc, d.id);
  return {
    id: d.id,
    status: d.status,
    taskDefinition: d.taskDefinition,
    desiredCount: core.scheduler.deploymentDesired(svc, d),
    pendingCount: counts.pending,
    runningCount: counts.running,
    failedTasks: d.failedTasks,
    createdAt: new Date(d.createdAt),
    updatedAt: new Date(d.updatedAt),
    ...launchFields(d),
    ...(d.networkConfiguration ? { networkConfiguration: structuredClone(d.networkConfiguration) as NetworkConfiguration } : {}),
    rolloutState: d.rolloutState,
    rolloutStateReason: d.rolloutStateReason,
    ...(d.serviceConnectConfiguration ? { serviceConnectConfiguration: structuredClone(d.serviceConnectConfiguration) } : {}),
    ...(d.serviceConnectResources ? { serviceConnectResources: structuredClone(d.serviceConnectResources) } : {}),
    ...(d.volumeConfigurations ? { volumeConfigurations: structuredClone(d.volumeConfigurations) } : {}),
    ...(d.vpcLatticeConfigurations ? { vpcLatticeConfigurations: structuredClone(d.vpcLatticeConfigurations) } : {}),
  };
}

/** A Service as DescribeServices answers it; tags only with `includeTags`. */
export function serviceToWire(core: SimCore, svc: SimService, includeTags: boolean): Service {
  const counts = core.scheduler.counts(svc);
  return {
    serviceArn: svc.arn,
    serviceName: svc.name,
    clusterArn: core.arns.cluster(svc.cluster),
    loadBalancers: structuredClone(svc.loadBalancers),
    serviceRegistries: structuredClone(svc.serviceRegistries),
    status: svc.status,
    desiredCount: svc.desiredCount,
    runningCount: counts.running,
    pendingCount: counts.pending,
    ...launchFields(svc),
    ...(svc.taskDefinition !== '' ? { taskDefinition: svc.taskDefinition } : {}),
    deploymentConfiguration: structuredClone(svc.deploymentConfiguration),
    ...(svc.deploymentController === 'EXTERNAL' ? { taskSets: [] } : {}),
    deployments: svc.deployments.map((d) => deploymentToWire(core, svc, d)),
    // The newest service deployment (API reference, Service: "The ARN of the current service deployment").
    ...(svc.serviceDeployments[0] ? { currentServiceDeployment: svc.serviceDeployments[0].arn } : {}),
    events: svc.events.map((e) => ({ id: e.id, createdAt: new Date(e.createdAt), message: e.message })),
    createdAt: new Date(svc.createdAt),
    placementConstraints: structuredClone(svc.placementConstraints) as Service['placementConstraints'],
    placementStrategy: structuredClone(svc.placementStrategy) as Service['placementStrategy'],
    ...(svc.networkConfiguration ? { networkConfiguration: structuredClone(svc.networkConfiguration) as NetworkConfiguration } : {}),
    // ECS answers 0 when none was given (API reference, Service; every recent answer in test/fixtures/real).
    healthCheckGracePeriodSeconds: svc.healthCheckGracePeriodSeconds ?? 0,
    schedulingStrategy: 'REPLICA',
    deploymentController: { type: svc.deploymentController },
    ...(includeTags ? { tags: svc.tags.map((t) => ({ ...t })) } : {}),
    createdBy: svc.createdBy,
    enableECSManagedTags: svc.enableECSManagedTags,
    propagateTags: svc.propagateTags as Service['propagateTags'],
    enableExecuteCommand: svc.enableExecuteCommand,
    availabilityZoneRebalancing: svc.availabilityZoneRebalancing,
    ...(svc.resourceManagementType ? { resourceManagementType: svc.resourceManagementType } : {}),
  };
}

/** A Task as DescribeTasks answers it; tags only with `includeTags`. */
export function taskToWire(core: SimCore, t: SimTask, includeTags: boolean): Task {
  const time = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms));
  const out: Task = {
    attachments: [
      {
        id: t.attachmentId,
        type: 'ElasticNetworkInterface',
        status: t.lastStatus === 'STOPPED' ? 'DELETED' : t.lastStatus === 'PROVISIONING' ? 'PRECREATED' : 'ATTACHED',
        details: [
          ...(t.subnetId ? [{ name: 'subnetId', value: t.subnetId }] : []),
          { name: 'networkInterfaceId', value: t.eniId },
          { name: 'macAddress', value: t.macAddress },
          { name: 'privateIPv4Address', value: t.privateIp },
        ],
      },
    ],
    attributes: [{ name: 'ecs.cpu-architecture', value: 'x86_64' }],
    availabilityZone: t.availabilityZone,
    ...(t.capacityProviderName ? { capacityProviderName: t.capacityProviderName } : {}),
    clusterArn: core.arns.cluster(t.cluster),
    connectivity: t.connectivityAt !== undefined ? 'CONNECTED' : undefined,
    connectivityAt: time(t.connectivityAt),
    containers: t.containers.map((c) => ({
      containerArn: c.arn,
      taskArn: t.arn,
      name: c.name,
      image: c.image,
      runtimeId: `${t.id}-${c.uuid.slice(0, 10)}`,
      lastStatus: c.lastStatus,
      ...(c.exitCode !== undefined ? { exitCode: c.exitCode } : {}),
      ...(c.reason !== undefined ? { reason: c.reason } : {}),
      networkBindings: [],
      networkInterfaces: [{ attachmentId: t.attachmentId, privateIpv4Address: t.privateIp }],
      healthStatus: c.healthStatus,
      cpu: String(c.cpu),
      ...(c.memory !== undefined ? { memory: String(c.memory) } : {}),
      ...(c.memoryReservation !== undefined ? { memoryReservation: String(c.memoryReservation) } : {}),
    })),
    cpu: t.cpu,
    createdAt: new Date(t.createdAt),
    desiredStatus: t.desiredStatus,
    enableExecuteCommand: false,
    executionStoppedAt: time(t.executionStoppedAt),
    group: t.group,
    healthStatus: t.healthStatus,
    lastStatus: t.lastStatus,
    launchType: t.launchType,
    memory: t.memory,
    overrides: { containerOverrides: t.containers.map((c) => ({ name: c.name })), inferenceAcceleratorOverrides: [] },
    ...(t.platformVersion ? { platformVersion: t.platformVersion, platformFamily: 'Linux' } : {}),
    pullStartedAt: time(t.pullStartedAt),
    pullStoppedAt: time(t.pullStoppedAt),
    startedAt: time(t.startedAt),
    ...(t.startedBy ? { startedBy: t.startedBy } : {}),
    ...(t.stopCode ? { stopCode: t.stopCode as Task['stopCode'] } : {}),
    stoppedAt: time(t.stoppedAt),
    ...(t.stoppedReason ? { stoppedReason: t.stoppedReason } : {}),
    stoppingAt: time(t.stoppingAt),
    tags: includeTags ? t.tags.map((x) => ({ ...x })) : [],
    taskArn: t.arn,
    taskDefinitionArn: t.taskDefinitionArn,
    version: t.version,
    ephemeralStorage: { sizeInGiB: 20 },
  };
  // Drop undefined members so the JSON has only what ECS would send.
  for (const k of Object.keys(out) as (keyof Task)[]) if (out[k] === undefined) delete out[k];
  return out;
}

/** launchType or capacityProviderStrategy, and for Fargate the platform fields. */
export function launchFields(x: DeploymentTemplate): Partial<Service & Deployment> {
  const fargate = x.launchType === 'FARGATE' || (x.capacityProviderStrategy ?? []).length > 0;
  return {
    ...(x.capacityProviderStrategy && x.capacityProviderStrategy.length > 0
      ? { capacityProviderStrategy: structuredClone(x.capacityProviderStrategy) }
      : {}),
    ...(x.launchType ? { launchType: x.launchType } : {}),
    ...(x.platformVersion ? { platformVersion: x.platformVersion } : {}),
    ...(fargate ? { platformFamily: 'Linux' } : {}),
  };
}


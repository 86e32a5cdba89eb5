/**
 * The ECS actions the simulator answers, by name (the part after the dot of `X-Amz-Target`), each
 * a function of the core and the JSON request.
 */
import type { CreateServiceRequest, RegisterTaskDefinitionRequest, RunTaskRequest, UpdateServiceRequest } from '@aws-sdk/client-ecs';
import type { SimCore } from '../core';
import { clusterToWire } from '../wire';
import { createCluster, deleteCluster, describeClusters, listClusters, putClusterCapacityProviders } from './clusters';
import { str } from './inputs';
import {
  continueServiceDeployment,
  describeServiceDeployments,
  describeServiceRevisions,
  listServiceDeployments,
  stopServiceDeployment,
} from './service-deployments';
import { createService, deleteService, describeServices, listServices } from './services';
import { tagResource, tagsOf, untagResource } from './tags';
import {
  deregisterTaskDefinition,
  describeTaskDefinition,
  listTaskDefinitionFamilies,
  listTaskDefinitions,
  registerTaskDefinition,
} from './task-definitions';
import { describeTasks, listTasks, runTask, stopTaskApi } from './tasks';
import { updateService } from './update-service';

export type Handler = (input: Record<string, unknown>) => unknown;

/** One handler per ECS action, answering from `core`. */
export function buildHandlers(core: SimCore): Record<string, Handler> {
  return {
    CreateCluster: (i) => ({ cluster: clusterToWire(core, createCluster(core, i), ['TAGS', 'SETTINGS']) }),
    DescribeClusters: (i) => describeClusters(core, i),
    PutClusterCapacityProviders: (i) => putClusterCapacityProviders(core, i),
    ListClusters: (i) => listClusters(core, i),
    DeleteCluster: (i) => deleteCluster(core, i),
    RegisterTaskDefinition: (i) => registerTaskDefinition(core, i as unknown as RegisterTaskDefinitionRequest),
    DescribeTaskDefinition: (i) => describeTaskDefinition(core, i),
    DeregisterTaskDefinition: (i) => deregisterTaskDefinition(core, i),
    ListTaskDefinitions: (i) => listTaskDefinitions(core, i),
    ListTaskDefinitionFamilies: (i) => listTaskDefinitionFamilies(core, i),
    CreateService: (i) => createService(core, i as unknown as CreateServiceRequest),
    UpdateService: (i) => updateService(core, i as unknown as UpdateServiceRequest),
    DeleteService: (i) => deleteService(core, i),
    DescribeServices: (i) => describeServices(core, i),
    ListServices: (i) => listServices(core, i),
    ListTasks: (i) => listTasks(core, i),
    DescribeTasks: (i) => describeTasks(core, i),
    StopTask: (i) => stopTaskApi(core, i),
    RunTask: (i) => runTask(core, i as unknown as RunTaskRequest),
    TagResource: (i) => tagResource(core, i),
    UntagResource: (i) => untagResource(core, i),
    ListTagsForResource: (i) => ({ tags: tagsOf(core, str(i, 'resourceArn', true)).map((t) => ({ ...t })) }),
    ListServiceDeployments: (i) => listServiceDeployments(core, i),
    DescribeServiceDeployments: (i) => describeServiceDeployments(core, i),
    DescribeServiceRevisions: (i) => describeServiceRevisions(core, i),
    ContinueServiceDeployment: (i) => continueServiceDeployment(core, i),
    StopServiceDeployment: (i) => stopServiceDeployment(core, i),
  };
}

/**
 * Builders and small helpers for the simulator's tests: an SDK client pointed at a simulator,
 * task definition and service builders, and a manual-clock loop.
 */
import {
  CreateClusterCommand,
  CreateServiceCommand,
  DescribeServicesCommand,
  DescribeTasksCommand,
  ECSClient,
  ListTasksCommand,
  RegisterTaskDefinitionCommand,
  type CreateServiceCommandInput,
  type RegisterTaskDefinitionCommandInput,
  type Service,
  type Task,
} from '@aws-sdk/client-ecs';
import type { SimulatedEcs, Simulator } from '../../local/sim';

export const SUBNETS = ['subnet-0a1b2c3d', 'subnet-4e5f6a7b'];

/** An ECS client pointed at the simulator, dummy credentials (the simulator ignores SigV4). */
export function ecsClient(sim: Simulator, extra: { maxAttempts?: number } = {}): ECSClient {
  return new ECSClient({
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    endpoint: sim.endpoint,
    ...extra,
  });
}

/** A Fargate task definition request: one container `web` of `image`, 256 vCPU units / 512 MiB. */
export function aTaskDefinition(over: Partial<RegisterTaskDefinitionCommandInput> & { image?: string } = {}): RegisterTaskDefinitionCommandInput {
  const { image, ...rest } = over;
  return {
    family: 'web',
    networkMode: 'awsvpc',
    requiresCompatibilities: ['FARGATE'],
    cpu: '256',
    memory: '512',
    containerDefinitions: [{ name: 'web', image: image ?? 'public.ecr.aws/nginx/nginx:1.27', portMappings: [{ containerPort: 80 }] }],
    ...rest,
  };
}

/** A Fargate service request for `web` in cluster `c1` with 2 tasks. */
export function aService(over: Partial<CreateServiceCommandInput> = {}): CreateServiceCommandInput {
  return {
    cluster: 'c1',
    serviceName: 'web',
    taskDefinition: 'web',
    desiredCount: 2,
    capacityProviderStrategy: [{ capacityProvider: 'FARGATE', weight: 1 }],
    networkConfiguration: { awsvpcConfiguration: { subnets: SUBNETS, securityGroups: ['sg-0123'], assignPublicIp: 'DISABLED' } },
    ...over,
  };
}

/** Creates cluster `cluster`, registers `td` and creates `svc`; returns the task definition ARN. */
export async function deploy(
  ecs: ECSClient,
  opts: { cluster?: string; td?: Partial<RegisterTaskDefinitionCommandInput> & { image?: string }; svc?: Partial<CreateServiceCommandInput> } = {},
): Promise<string> {
  const cluster = opts.cluster ?? opts.svc?.cluster ?? 'c1';
  await ecs.send(new CreateClusterCommand({ clusterName: cluster, capacityProviders: ['FARGATE', 'FARGATE_SPOT'] }));
  const reg = await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition(opts.td)));
  await ecs.send(new CreateServiceCommand(aService({ cluster, taskDefinition: reg.taskDefinition?.taskDefinitionArn, ...opts.svc })));
  return reg.taskDefinition?.taskDefinitionArn as string;
}

export async function describeService(ecs: ECSClient, cluster: string, service: string): Promise<Service> {
  const out = await ecs.send(new DescribeServicesCommand({ cluster, services: [service] }));
  const svc = out.services?.[0];
  if (!svc) throw new Error(`service ${cluster}/${service} not described: ${JSON.stringify(out.failures)}`);
  return svc;
}

/** Every task of a service with the given desired status, described. */
export async function serviceTasks(
  ecs: ECSClient,
  cluster: string,
  service: string,
  desiredStatus: 'RUNNING' | 'STOPPED' = 'RUNNING',
): Promise<Task[]> {
  const list = await ecs.send(new ListTasksCommand({ cluster, serviceName: service, desiredStatus }));
  const arns = list.taskArns ?? [];
  if (arns.length === 0) return [];
  return (await ecs.send(new DescribeTasksCommand({ cluster, tasks: arns }))).tasks ?? [];
}

/**
 * Advances the manual clock `step` seconds at a time until `done()` holds, at most `maxSeconds`.
 * @returns the virtual seconds advanced.
 * @throws Error when `done()` never held.
 */
export async function advanceUntil(
  sim: SimulatedEcs,
  done: () => boolean | Promise<boolean>,
  opts: { step?: number; maxSeconds?: number; what?: string } = {},
): Promise<number> {
  const step = opts.step ?? 5;
  const max = opts.maxSeconds ?? 600;
  for (let t = 0; t <= max; t += step) {
    if (await done()) return t;
    sim.advance(step);
  }
  throw new Error(`not reached within ${max} virtual seconds: ${opts.what ?? 'condition'}`);
}

/** Task id (last ARN part). */
export function taskId(arn: string | undefined): string {
  return (arn ?? '').split('/').pop() as string;
}

/**
 * The live services of the `ecsr import` round trips: each real task definition of
 * `test/fixtures/real/task-definitions/` registered as it was published, made a Fargate task
 * definition where the payload leaves that to the reader (`requiresCompatibilities`, `networkMode`,
 * task `cpu` / `memory`, `executionRoleArn`: only fields the payload does not have are added), and
 * a service created from it with the settings of a real Fargate service answer of
 * `test/fixtures/real/services/` (deployment configuration, platform version, tags,
 * propagateTags, ECS managed tags, Exec, AZ rebalancing, launch type or capacity provider
 * strategy), on the test's own network (the answers' subnet ids are placeholders).
 *
 * Documentation placeholders are what a reader fills in before registering, so they are filled in
 * here the same way ({@link concretize}): `{{task-role-arn}}`-style template fields, account ids
 * written as `XXXXXXXXXXXX`, `aws_account_id` or with the wrong number of digits, and CloudFormation's `${Partition}`,
 * `${Region}`, `${Account}` (any other `${Name}` becomes `example-name`).
 */
import type { CreateServiceCommandInput, RegisterTaskDefinitionCommandInput } from '@aws-sdk/client-ecs';
import { realServices, realTaskDefinitions } from './real-fixtures';

type Json = Record<string, unknown>;

/** Task definitions that are not Fargate ones (links, EC2-only fields, a template of every field). */
export const NOT_FARGATE = new Set(['awscli-describe-hello-world', 'devguide-template', 'devguide-ec2-registered']);

/** The real Fargate service answers whose settings the round trips' services take, in turn. */
export const SERVICE_SOURCES = [
  'awscli-create-fargate',
  'awscli-update-desired-count',
  'devguide-service-connect-nginx',
  'awscli-update-task-definition',
  'devguide-fargate-describe',
  'awscli-update-az-rebalancing',
  'awscli-update-ebs',
] as const;

export const EXECUTION_ROLE = 'arn:aws:iam::123456789012:role/ecsTaskExecutionRole';

export interface ImportCase {
  /** Task definition fixture name. */
  readonly name: string;
  /** Service fixture whose settings the service has. */
  readonly serviceSource: string;
  readonly register: RegisterTaskDefinitionCommandInput;
  /** The CreateService input, given the cluster, the service name and the network. */
  createService(cluster: string, service: string, network: { subnets: string[]; securityGroups: string[] }): CreateServiceCommandInput;
}

const SERVER_ONLY = ['taskDefinitionArn', 'revision', 'status', 'requiresAttributes', 'compatibilities', 'registeredAt', 'registeredBy', 'deregisteredAt'];

const ACCOUNT = '123456789012';

/** A placeholder of a published payload filled in as a reader would (see the module doc). */
function fillIn(s: string): string {
  const whole = /^\{\{\s*([A-Za-z0-9_-]+)\s*\}\}$/.exec(s);
  if (whole) {
    const name = whole[1].toLowerCase();
    if (name.includes('execution-role')) return EXECUTION_ROLE;
    if (name.includes('role')) return `arn:aws:iam::${ACCOUNT}:role/ecsTaskRole`;
    if (name.includes('image')) return 'public.ecr.aws/docker/library/busybox:1.36';
    return `example-${name}`;
  }
  return s
    .replace(/\$\{Partition\}/g, 'aws')
    .replace(/\$\{Region\}/g, 'us-east-1')
    .replace(/\$\{Account\}/g, ACCOUNT)
    .replace(/\$\{([A-Za-z]+)\}/g, (_m, name: string) => `example-${name.toLowerCase()}`)
    .replace(/(arn:aws[a-z-]*:[a-z0-9-]+:[a-z0-9-]*:)(X{12}|\d{1,11}|\d{13,}|aws_account_id)(:)/g, `$1${ACCOUNT}$3`);
}

/** Every string of `x` with its placeholders filled in. */
export function concretize<T>(x: T): T {
  if (typeof x === 'string') return fillIn(x) as T;
  if (Array.isArray(x)) return x.map(concretize) as T;
  if (x && typeof x === 'object') return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, concretize(v)])) as T;
  return x;
}

/** The RegisterTaskDefinition input of a real task definition, made Fargate (see the module doc). */
export function asFargateRegistration(td: Json): RegisterTaskDefinitionCommandInput {
  const input: Json = concretize({ ...td });
  for (const f of SERVER_ONLY) delete input[f];
  input.requiresCompatibilities ??= ['FARGATE'];
  input.networkMode ??= 'awsvpc';
  input.cpu ??= '1024';
  input.memory ??= '2048';
  input.executionRoleArn ??= EXECUTION_ROLE;
  return input as unknown as RegisterTaskDefinitionCommandInput;
}

function serviceSettings(source: Json): Partial<CreateServiceCommandInput> {
  const dc = (source.deploymentConfiguration ?? {}) as Json;
  const vpc = ((source.networkConfiguration as Json | undefined)?.awsvpcConfiguration ?? {}) as Json;
  const out: Json = {
    desiredCount: source.desiredCount,
    deploymentConfiguration: dc,
    ...(source.launchType ? { launchType: source.launchType } : { capacityProviderStrategy: source.capacityProviderStrategy }),
  };
  for (const f of ['platformVersion', 'enableExecuteCommand', 'propagateTags', 'enableECSManagedTags', 'availabilityZoneRebalancing', 'tags']) {
    if (source[f] !== undefined) out[f] = source[f];
  }
  out.assignPublicIp = vpc.assignPublicIp;
  return out as Partial<CreateServiceCommandInput>;
}

/** Every round-trip case: the Fargate task definitions, each with the next service source. */
export function importCases(): ImportCase[] {
  const services = new Map(realServices().map((s) => [s.name, s.payloads[0]]));
  return realTaskDefinitions()
    .filter((f) => !NOT_FARGATE.has(f.name))
    .map((f, i) => {
      const serviceSource = SERVICE_SOURCES[i % SERVICE_SOURCES.length];
      const settings = serviceSettings(services.get(serviceSource) as Json);
      const register = asFargateRegistration(f.payloads[0]);
      return {
        name: f.name,
        serviceSource,
        register,
        createService(cluster, service, network) {
          const { assignPublicIp, ...rest } = settings as Json;
          return {
            ...(rest as Partial<CreateServiceCommandInput>),
            cluster,
            serviceName: service,
            taskDefinition: register.family,
            networkConfiguration: {
              awsvpcConfiguration: { subnets: network.subnets, securityGroups: network.securityGroups, assignPublicIp: assignPublicIp as 'ENABLED' | 'DISABLED' },
            },
          };
        },
      };
    });
}

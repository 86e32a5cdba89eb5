/**
 * What IAM authorizes for one ECS API call, as ECS asks it: the IAM actions, the resource ARN of
 * each and the condition keys the request carries (Service Authorization Reference, "Actions,
 * resources, and condition keys for Amazon Elastic Container Service"; the value formats of the
 * `ecs:` keys from the Amazon ECS Developer Guide, "How Amazon Elastic Container Service works
 * with IAM"). The simulator evaluates a caller's policy against these (`./iam`) before it answers.
 *
 * - An action without resource-level permissions (ListServices, ListTasks on Fargate,
 *   DescribeTaskDefinition, ...) is authorized on `*`; ListServices and ListTasks carry
 *   `ecs:cluster` (the cluster's ARN; `default` when the request names none).
 * - A call naming several resources (DescribeServices, DescribeTasks, DescribeClusters,
 *   DescribeServiceRevisions, DescribeServiceDeployments) is authorized once per resource; a
 *   service deployment (DescribeServiceDeployments, StopServiceDeployment,
 *   ContinueServiceDeployment) carries the `ecs:cluster` its ARN names.
 * - Existing resources carry their tags (`aws:ResourceTag/<key>`, `ecs:ResourceTag/<key>`); tags in
 *   the request carry `aws:RequestTag/<key>` and `aws:TagKeys`.
 * - CreateService and RegisterTaskDefinition with tags also need `ecs:TagResource` on the new
 *   resource, with `ecs:CreateAction` naming the call (Amazon ECS Developer Guide, "Grant
 *   permission to tag resources on creation").
 * - CreateService / UpdateService carry `ecs:task-definition` (the revision's full ARN) when they
 *   name one, and `ecs:subnet` / `ecs:auto-assign-public-ip` (`true` or `false`) when they carry
 *   a network configuration. ECS has no condition key for security groups.
 */
import type { Arns } from './arns';
import type { IamRequest } from './iam';
import type { Tag } from './state';

/** What the authorization needs to know of the simulator's state; none of it throws. */
export interface AuthorizationView {
  readonly arns: Arns;
  /** Tags of the resource an ECS ARN names, undefined when it does not exist. */
  tagsOf(arn: string): readonly Tag[] | undefined;
  /** The full ARN of a task definition reference (`family`, `family:revision`, ARN), when it exists. */
  taskDefinitionArn(ref: string): string | undefined;
  /** The revision RegisterTaskDefinition would give `family` next. */
  nextRevision(family: string): number;
}

type Context = Map<string, string | readonly string[]>;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

function requestTags(input: Record<string, unknown>): Tag[] {
  const tags = input.tags;
  if (!Array.isArray(tags)) return [];
  return tags.flatMap((t: unknown) => {
    const rec = t as { key?: unknown; value?: unknown } | null;
    return rec && typeof rec.key === 'string' ? [{ key: rec.key, value: typeof rec.value === 'string' ? rec.value : '' }] : [];
  });
}

function addResourceTags(context: Context, tags: readonly Tag[] | undefined): void {
  for (const t of tags ?? []) {
    context.set(`aws:ResourceTag/${t.key}`, t.value);
    context.set(`ecs:ResourceTag/${t.key}`, t.value);
  }
}

function addRequestTags(context: Context, tags: readonly Tag[]): void {
  if (tags.length === 0) return;
  for (const t of tags) context.set(`aws:RequestTag/${t.key}`, t.value);
  context.set('aws:TagKeys', tags.map((t) => t.key));
}

/** `ecs:subnet` and `ecs:auto-assign-public-ip` of a request's awsvpc network configuration. */
function addNetwork(context: Context, input: Record<string, unknown>): void {
  const network = input.networkConfiguration as { awsvpcConfiguration?: { subnets?: unknown; assignPublicIp?: unknown } } | undefined;
  const awsvpc = network && typeof network === 'object' ? network.awsvpcConfiguration : undefined;
  if (!awsvpc || typeof awsvpc !== 'object') return;
  const subnets = strings(awsvpc.subnets);
  if (subnets.length > 0) context.set('ecs:subnet', subnets);
  // CreateService / UpdateService default to DISABLED (Amazon ECS API Reference, AwsVpcConfiguration).
  context.set('ecs:auto-assign-public-ip', awsvpc.assignPublicIp === 'ENABLED' ? 'true' : 'false');
}

/**
 * The authorizations one ECS call needs, in the order IAM would be asked.
 * @param action the ECS API action (`UpdateService`).
 * @param input the request body.
 */
export function ecsAuthorizations(action: string, input: Record<string, unknown>, view: AuthorizationView): IamRequest[] {
  const arns = view.arns;
  const iamAction = `ecs:${action}`;
  const clusterName = (ref: unknown): string => {
    const s = str(ref);
    if (s === undefined) return 'default';
    const p = s.startsWith('arn:') ? arns.parse(s) : undefined;
    return p?.kind === 'cluster' ? p.cluster : s.startsWith('arn:') ? (s.split('/').pop() ?? s) : s;
  };
  const cluster = clusterName(input.cluster);
  const clusterArn = arns.cluster(cluster);
  const serviceArn = (ref: unknown): string => {
    const s = str(ref) ?? '';
    return s.startsWith('arn:') ? s : arns.service(cluster, s);
  };
  const one = (resource: string, context: Context = new Map()): IamRequest => ({ action: iamAction, resource, context });
  const onExisting = (resource: string, extra: Context = new Map()): IamRequest => {
    const context: Context = new Map([['ecs:cluster', clusterArn], ...extra]);
    addResourceTags(context, view.tagsOf(resource));
    return one(resource, context);
  };

  switch (action) {
    case 'ListServices':
    case 'ListTasks':
      return [one('*', new Map([['ecs:cluster', clusterArn]]))];
    case 'DescribeClusters': {
      const names = strings(input.clusters);
      return (names.length > 0 ? names : ['default']).map((c) => {
        const arn = arns.cluster(clusterName(c));
        const context: Context = new Map();
        addResourceTags(context, view.tagsOf(arn));
        return one(arn, context);
      });
    }
    case 'DescribeServices':
      return strings(input.services).map((s) => onExisting(serviceArn(s)));
    case 'DescribeTasks':
      return strings(input.tasks).map((t) => onExisting(t.startsWith('arn:') ? t : arns.task(cluster, t)));
    case 'ListServiceDeployments':
      return [onExisting(serviceArn(input.service))];
    case 'DescribeServiceRevisions':
      return strings(input.serviceRevisionArns).map((arn) => one(arn, new Map([['ecs:cluster', clusterArn]])));
    // On the service deployment, with the cluster its ARN names (ecs:cluster).
    case 'DescribeServiceDeployments':
      return strings(input.serviceDeploymentArns).map((arn) => onServiceDeployment(arn));
    case 'StopServiceDeployment':
    case 'ContinueServiceDeployment':
      return [onServiceDeployment(str(input.serviceDeploymentArn) ?? '*')];
    case 'DeleteService':
      return [onExisting(serviceArn(input.service))];
    case 'RegisterTaskDefinition': {
      const family = str(input.family) ?? '';
      const arn = arns.taskDefinition(family, view.nextRevision(family));
      const tags = requestTags(input);
      const context: Context = new Map();
      addRequestTags(context, tags);
      const out = [one(arn, context)];
      if (tags.length > 0) out.push(tagOnCreate(arn, 'RegisterTaskDefinition', tags));
      return out;
    }
    case 'CreateService': {
      const arn = arns.service(cluster, str(input.serviceName) ?? '');
      const tags = requestTags(input);
      const context: Context = new Map([['ecs:cluster', clusterArn]]);
      addRequestTags(context, tags);
      const td = str(input.taskDefinition);
      if (td !== undefined) context.set('ecs:task-definition', view.taskDefinitionArn(td) ?? td);
      addNetwork(context, input);
      const out = [one(arn, context)];
      if (tags.length > 0) out.push(tagOnCreate(arn, 'CreateService', tags, clusterArn));
      return out;
    }
    case 'UpdateService': {
      const extra: Context = new Map();
      const td = str(input.taskDefinition);
      if (td !== undefined) extra.set('ecs:task-definition', view.taskDefinitionArn(td) ?? td);
      addNetwork(extra, input);
      return [onExisting(serviceArn(input.service), extra)];
    }
    case 'TagResource':
    case 'UntagResource': {
      const arn = str(input.resourceArn) ?? '*';
      const context: Context = new Map();
      const p = arns.parse(arn);
      if (p && p.kind !== 'task-definition') context.set('ecs:cluster', arns.cluster(p.cluster));
      addResourceTags(context, view.tagsOf(arn));
      if (action === 'TagResource') addRequestTags(context, requestTags(input));
      else if (strings(input.tagKeys).length > 0) context.set('aws:TagKeys', strings(input.tagKeys));
      return [one(arn, context)];
    }
    default:
      // Actions whose resources the simulator does not model are authorized on "*".
      return [one('*')];
  }

  function onServiceDeployment(arn: string): IamRequest {
    const p = arns.parse(arn);
    return one(arn, p && p.kind !== 'task-definition' ? new Map([['ecs:cluster', arns.cluster(p.cluster)]]) : new Map());
  }

  function tagOnCreate(resource: string, createAction: string, tags: readonly Tag[], clusterOf?: string): IamRequest {
    const context: Context = new Map([['ecs:CreateAction', createAction]]);
    if (clusterOf) context.set('ecs:cluster', clusterOf);
    addRequestTags(context, tags);
    return { action: 'ecs:TagResource', resource, context };
  }
}

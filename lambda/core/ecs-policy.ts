/**
 * The ECS statements of the reconciler's least-privilege IAM policy, as IAM policy JSON: written
 * once, deployed by the CDK construct (`lib/ecs-reconciler.ts`, on the function's role and every
 * `ReconcilerTargetRole`) and evaluated by the ECS simulator against each call of the local run
 * (`local/stack.ts`), so that the local tour is refused what AWS would refuse.
 *
 * Actions, resource types and condition keys: Service Authorization Reference, "Actions,
 * resources, and condition keys for Amazon Elastic Container Service" (a copy of the entries used
 * is in test/fixtures/iam/). Pure: the ARN parts may be CDK tokens, which stay inside the strings.
 */
import { OWNER_TAG_KEY } from './ports';

/** One IAM policy statement as JSON (IAM User Guide, "IAM JSON policy element reference"). */
export interface IamStatement {
  readonly Sid?: string;
  readonly Effect: 'Allow' | 'Deny';
  readonly Action: readonly string[];
  readonly Resource: readonly string[];
  readonly Condition?: Readonly<Record<string, Readonly<Record<string, string | readonly string[]>>>>;
}

/** Where the ARNs point: partition (`aws`), Region and account (literal, or CDK tokens). */
export interface ArnScope {
  readonly partition: string;
  readonly region: string;
  readonly account: string;
}

/** `arn:<partition>:ecs:<region>:<account>:<resource>`. */
export function ecsArn(scope: ArnScope, resource: string): string {
  return `arn:${scope.partition}:ecs:${scope.region}:${scope.account}:${resource}`;
}

/**
 * The families the function may register in when `allowedFamilies` is not given: every family
 * with adoption (an adopted service keeps its live family), none beyond `<cluster>-*` without.
 */
export function defaultFamilies(allowAdoption: boolean): string[] {
  return allowAdoption ? ['*'] : [];
}

/**
 * `task-definition/<family>:*` ARNs (every revision) of `<cluster>-*` for each cluster and of each
 * entry of `families` (a name, a prefix ending in `*`, or `*`).
 */
export function taskDefinitionFamilyArns(scope: ArnScope, clusterNames: readonly string[], families: readonly string[]): string[] {
  const arn = (name: string) => ecsArn(scope, `task-definition/${name}`);
  if (families.includes('*')) return [arn('*:*')];
  return [...clusterNames.map((c) => arn(`${c}-*:*`)), ...families.map((f) => arn(`${f}:*`))];
}

const allow = (Sid: string, Action: string[], Resource: string[], Condition?: IamStatement['Condition']): IamStatement => ({
  Sid,
  Effect: 'Allow',
  Action,
  Resource,
  ...(Condition ? { Condition } : {}),
});

/**
 * The ECS reads of the managed clusters: what a pass reads (and so `ecsr plan` and `diff`), what
 * `ecsr describe`, `wait` and `apply --wait` read, and apply's ECS checks. DescribeTaskDefinition
 * on "*" (ECS supports no resource-level permission for it); ListServices and ListTasks only with
 * `ecs:cluster` = a managed cluster; DescribeTasks, DescribeServices, DescribeClusters,
 * ListServiceDeployments, DescribeServiceRevisions and DescribeServiceDeployments on the managed
 * clusters' resources. With no cluster, only DescribeTaskDefinition.
 */
export function ecsReadStatements(scope: ArnScope, clusterNames: readonly string[]): IamStatement[] {
  const arn = (resource: string) => ecsArn(scope, resource);
  const clusterArns = clusterNames.map((c) => arn(`cluster/${c}`));
  const serviceArns = clusterNames.map((c) => arn(`service/${c}/*`));
  // No resource-level permissions for DescribeTaskDefinition.
  const statements: IamStatement[] = [allow('EcsDescribeTaskDefinitions', ['ecs:DescribeTaskDefinition'], ['*'])];
  if (clusterNames.length === 0) return statements;
  statements.push(
    // ListServices has no resource type; ListTasks names container instances, which Fargate tasks
    // have none of: both are scoped by the cluster in the request (ecs:cluster).
    allow('EcsListInManagedClusters', ['ecs:ListServices', 'ecs:ListTasks'], ['*'], { ArnEquals: { 'ecs:cluster': clusterArns } }),
    allow('EcsDescribeTasks', ['ecs:DescribeTasks'], clusterNames.map((c) => arn(`task/${c}/*`))),
    // The pass calls it only when ECS refuses a strategy provider, to name which one the cluster
    // lacks; `ecsr apply` checks that the cluster is ACTIVE.
    allow('EcsDescribeManagedClusters', ['ecs:DescribeClusters'], clusterArns),
    allow('EcsDescribeServices', ['ecs:DescribeServices'], serviceArns),
    // A rollback is read from ECS's deployment history: ListServiceDeployments on the service,
    // DescribeServiceRevisions on the service and its revisions, DescribeServiceDeployments (a
    // native deployment's stage, a rollback's reason) on its service deployments.
    allow('EcsReadDeploymentHistory', ['ecs:ListServiceDeployments', 'ecs:DescribeServiceRevisions', 'ecs:DescribeServiceDeployments'], [
      ...serviceArns,
      ...clusterNames.map((c) => arn(`service-revision/${c}/*`)),
      ...serviceDeploymentArns(scope, clusterNames),
    ]),
  );
  return statements;
}

/** `service-deployment/<cluster>/*` of each managed cluster. */
function serviceDeploymentArns(scope: ArnScope, clusterNames: readonly string[]): string[] {
  return clusterNames.map((c) => ecsArn(scope, `service-deployment/${c}/*`));
}

/**
 * What `ecsr continue` and `ecsr abort` call on top of the reads ({@link ecsReadStatements}):
 * ContinueServiceDeployment (answer a PAUSE lifecycle hook) and StopServiceDeployment (roll a
 * deployment back) on the managed clusters' service deployments (Service Authorization
 * Reference for Amazon ECS: both on the `service-deployment` resource type). Service deployments
 * carry no tags, so the owner tag cannot limit them: whoever holds this may roll back any
 * deployment of the managed clusters. None with no cluster.
 */
export function ecsDeploymentControlStatements(scope: ArnScope, clusterNames: readonly string[]): IamStatement[] {
  if (clusterNames.length === 0) return [];
  return [allow('EcsControlServiceDeployments', ['ecs:ContinueServiceDeployment', 'ecs:StopServiceDeployment'], serviceDeploymentArns(scope, clusterNames))];
}

/** What the policy is for: the managed clusters (`*` for every cluster), the owner id, adoption, families. */
export interface EcsPolicyInput {
  readonly clusterNames: readonly string[];
  readonly ownerId: string;
  readonly allowAdoption: boolean;
  /** Default {@link defaultFamilies}. */
  readonly families?: readonly string[];
  /**
   * The network the function may give a service, backing the subnet and public IP allow-lists
   * with ECS's condition keys (ECS has none for security groups): `subnets`, ids or prefixes
   * ending in `*` (the allow-list and the default subnets), as `ecs:subnet`; `publicIp: false`,
   * no public IP (`ecs:auto-assign-public-ip` false). Absent: no condition.
   */
  readonly network?: { readonly subnets?: readonly string[]; readonly publicIp?: false };
}

/**
 * The `network` of {@link EcsPolicyInput} from the subnet and public IP allow-lists and the
 * reconciler's defaults, which specs that name none get and which the lists never check: the
 * subnets are the allow-list's and the default subnets; no public IP only when the list refuses
 * one (`DISABLED` alone) and the default gives none (IAM cannot tell a default from a spec's
 * choice). Undefined when neither list restricts anything IAM can back.
 */
export function networkConditions(
  allowedSubnets: readonly string[] | undefined,
  defaultSubnets: readonly string[],
  allowedAssignPublicIp: readonly string[] | undefined,
  defaultAssignPublicIp: boolean,
): EcsPolicyInput['network'] {
  const subnets = allowedSubnets === undefined ? undefined : [...new Set([...allowedSubnets, ...defaultSubnets])];
  const noPublicIp = allowedAssignPublicIp !== undefined && !allowedAssignPublicIp.includes('ENABLED') && !defaultAssignPublicIp;
  if (subnets === undefined && !noPublicIp) return undefined;
  return { ...(subnets !== undefined ? { subnets } : {}), ...(noPublicIp ? { publicIp: false as const } : {}) };
}

/**
 * The ECS statements, backing the ownership rule:
 * - the reads of {@link ecsReadStatements};
 * - RegisterTaskDefinition only for families `<managed cluster>-*` and `families`, only with the
 *   owner tag in the request (`aws:RequestTag/ecs-reconciler:owner`); CreateService and
 *   UpdateService only with a task definition of those families (`ecs:task-definition`);
 * - CreateService only with the owner tag in the request; TagResource during creation
 *   (`ecs:CreateAction`) of services and task definitions;
 * - UpdateService, DeleteService, TagResource and UntagResource only on services whose owner tag
 *   is this reconciler's (`aws:ResourceTag/ecs-reconciler:owner`); never a tag request that
 *   changes or removes the owner tag;
 * - adoption (TagResource on a service without any owner tag, adding ours) only with `allowAdoption`;
 * - with `network`, CreateService and UpdateService only in those subnets, without a public IP.
 * With no cluster, only DescribeTaskDefinition.
 */
export function ecsPolicyStatements(scope: ArnScope, input: EcsPolicyInput): IamStatement[] {
  const { clusterNames, ownerId, allowAdoption } = input;
  const families = input.families ?? defaultFamilies(allowAdoption);
  const serviceArns = clusterNames.map((c) => ecsArn(scope, `service/${c}/*`));
  const familyArns = taskDefinitionFamilyArns(scope, clusterNames, families);
  const requestOwner = { [`aws:RequestTag/${OWNER_TAG_KEY}`]: ownerId };
  const resourceOwner = { [`aws:ResourceTag/${OWNER_TAG_KEY}`]: ownerId };
  // ecs:subnet is the request's subnets (every one must be listed: ForAllValues, which also holds
  // for an UpdateService that leaves the network alone); ecs:auto-assign-public-ip is "true" or
  // "false" (Amazon ECS Developer Guide, "How Amazon Elastic Container Service works with IAM").
  const network: Record<string, Record<string, string | readonly string[]>> = {
    ...(input.network?.subnets !== undefined ? { 'ForAllValues:StringLike': { 'ecs:subnet': [...input.network.subnets] } } : {}),
    ...(input.network?.publicIp === false ? { BoolIfExists: { 'ecs:auto-assign-public-ip': 'false' } } : {}),
  };

  const statements = ecsReadStatements(scope, clusterNames);
  if (clusterNames.length === 0) return statements;
  statements.push(
    allow('EcsRegisterOwnedFamilies', ['ecs:RegisterTaskDefinition'], familyArns, { StringEquals: requestOwner }),
    // The task definitions a service may be given are those of the families the function may
    // register in (`ecs:task-definition`, the task definition ARN of the request): never a
    // revision of another family, whoever registered it. UpdateService without a task definition
    // (a scale, a network change) carries no such key.
    allow('EcsCreateServicesWithOwnerTag', ['ecs:CreateService'], serviceArns, { StringEquals: requestOwner, ArnLike: { 'ecs:task-definition': familyArns }, ...network }),
    allow('EcsUpdateOwnedServices', ['ecs:UpdateService'], serviceArns, { StringEquals: resourceOwner, ArnLikeIfExists: { 'ecs:task-definition': familyArns }, ...network }),
    allow('EcsTagWhileCreating', ['ecs:TagResource'], [...serviceArns, ...familyArns], {
      StringEquals: { 'ecs:CreateAction': ['CreateService', 'RegisterTaskDefinition'], ...requestOwner },
    }),
    allow('EcsWriteOwnedServices', ['ecs:DeleteService', 'ecs:TagResource', 'ecs:UntagResource'], serviceArns, { StringEquals: resourceOwner }),
  );
  if (allowAdoption) {
    statements.push(
      allow('EcsAdoptUntaggedServices', ['ecs:TagResource'], serviceArns, {
        Null: { [`aws:ResourceTag/${OWNER_TAG_KEY}`]: 'true' },
        StringEquals: requestOwner,
      }),
    );
  }
  statements.push(
    {
      Sid: 'EcsNeverRetagOwner',
      Effect: 'Deny',
      Action: ['ecs:TagResource'],
      Resource: ['*'],
      Condition: { Null: { [`aws:RequestTag/${OWNER_TAG_KEY}`]: 'false' }, StringNotEquals: requestOwner },
    },
    {
      Sid: 'EcsNeverUntagOwner',
      Effect: 'Deny',
      Action: ['ecs:UntagResource'],
      Resource: ['*'],
      Condition: { 'ForAnyValue:StringEquals': { 'aws:TagKeys': [OWNER_TAG_KEY] } },
    },
  );
  return statements;
}

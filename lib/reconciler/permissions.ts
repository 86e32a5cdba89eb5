/**
 * The function role's least privilege, backing the ownership rule (IAM User Guide; Service
 * Authorization Reference, "Actions, resources, and condition keys for Amazon Elastic Container
 * Service"; the actions and condition keys used are checked against a copy of it in
 * test/fixtures/iam/):
 * - ListServices and ListTasks only with `ecs:cluster` = a managed cluster; DescribeServices and
 *   DescribeTasks on the managed clusters' services and tasks; DescribeTaskDefinition on "*"
 *   (ECS supports no resource-level permission for it);
 * - RegisterTaskDefinition only for families `<managed cluster>-*` and `allowedFamilies`, only
 *   with the owner tag in the request (`aws:RequestTag/ecs-reconciler:owner`); CreateService and
 *   UpdateService only with a task definition of those families (`ecs:task-definition`);
 * - CreateService only with the owner tag in the request; TagResource during creation
 *   (`ecs:CreateAction`) of services and task definitions;
 * - UpdateService, DeleteService, TagResource and UntagResource only on services whose owner tag
 *   is this reconciler's (`aws:ResourceTag/ecs-reconciler:owner`); never a tag request that
 *   changes or removes the owner tag;
 * - adoption (TagResource on a service without any owner tag, adding ours) only with
 *   `allowAdoption`;
 * - `iam:PassRole` only for the allow-listed roles and the default execution role, only to ECS tasks;
 * - the spec table's item actions on the table only.
 * DescribeClusters on the managed clusters only, called when ECS refuses a capacity provider (to
 * name the missing one). Nothing the code never calls (no ListTagsForResource: DescribeServices and
 * DescribeTaskDefinition return tags with `include: ['TAGS']`).
 */
import { Annotations, Stack, Token, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { defaultFamilies, ecsDeploymentControlStatements, ecsPolicyStatements, ecsReadStatements, networkConditions, taskDefinitionFamilyArns as familyArnsIn, type ArnScope, type EcsPolicyInput, type IamStatement } from '../../lambda/core/ecs-policy';
import { EcsReconcilerPropsError } from './errors';
import type { EcsReconcilerProps } from './props';
import type { ResolvedSettings } from './settings';

export { defaultFamilies };

/** The ARN scope of `stack` (its partition, Region and account, tokens when not known at synth). */
export function stackArnScope(stack: Stack): ArnScope {
  return { partition: stack.partition, region: stack.region, account: stack.account };
}

/**
 * `task-definition/<family>:*` ARNs (every revision) of `<cluster>-*` for each cluster and of each
 * entry of `families` (a name, a prefix ending in `*`, or `*`), in the stack's account and Region.
 */
export function taskDefinitionFamilyArns(stack: Stack, clusterNames: readonly string[], families: readonly string[]): string[] {
  return familyArnsIn(stackArnScope(stack), clusterNames, families);
}

/**
 * The ECS statements of the reconciler's least-privilege policy: the function's own role and every
 * `ReconcilerTargetRole` carry exactly these, so a target account grants the
 * reconciler nothing more than its own account does. Written once as IAM JSON in
 * `ecsPolicyStatements` (lambda/core/ecs-policy.ts, which says what each statement backs), which
 * the local run's simulator evaluates against every call.
 * @param stack the stack whose account and Region the ARNs name.
 * @param clusterNames the managed clusters; `*` for every cluster of the account.
 */
export function ecsReconcilerStatements(
  stack: Stack,
  clusterNames: readonly string[],
  ownerId: string,
  allowAdoption: boolean,
  families: readonly string[] = defaultFamilies(allowAdoption),
  network?: EcsPolicyInput['network'],
): iam.PolicyStatement[] {
  return ecsPolicyStatements(stackArnScope(stack), { clusterNames, ownerId, allowAdoption, families, ...(network ? { network } : {}) }).map((json) =>
    iam.PolicyStatement.fromJson(json),
  );
}

/**
 * How cdk-nag 3 prints a resolved ARN in an IAM5 finding id: intrinsic references become
 * `<Ref>` / `<Resource.Attr>` and `Fn::Join` pieces are concatenated.
 */
export function nagResource(resolved: unknown): string {
  if (typeof resolved === 'string') return resolved;
  if (resolved && typeof resolved === 'object') {
    const o = resolved as Record<string, unknown>;
    if ('Fn::Join' in o) {
      const [sep, parts] = o['Fn::Join'] as [string, unknown[]];
      return parts.map(nagResource).join(sep);
    }
    if ('Ref' in o) return `<${String(o.Ref)}>`;
    if ('Fn::GetAtt' in o) {
      const [res, attr] = o['Fn::GetAtt'] as [string, string];
      return `<${res}.${attr}>`;
    }
  }
  return JSON.stringify(resolved);
}

/** What the function's policy is built from. */
export interface PermissionInputs {
  readonly role: iam.Role;
  readonly table: dynamodb.ITable;
  readonly taskDefinitionCacheTable: dynamodb.ITable;
  readonly clusterNames: readonly string[];
  readonly subnets: readonly string[];
  readonly assignPublicIp: boolean;
  /** The task roles and execution roles (the default one included) the function may pass. */
  readonly passableRoleArns: readonly string[];
}

/**
 * The function's own permissions: the table key (when customer managed), ECS (the ownership
 * rule, with the network allow-lists IAM can back), `iam:PassRole` and the two tables.
 * @throws EcsReconcilerPropsError for an `allowedFamilies` entry that is not a family.
 */
export function grantFunctionPermissions(scope: Construct, props: EcsReconcilerProps, settings: ResolvedSettings, inputs: PermissionInputs): void {
  const stack = Stack.of(scope);
  grantTableKey(stack, props, inputs.role);
  const families = allowedFamilies(scope, props, settings);
  // IAM backs the allow-lists ECS has condition keys for: subnets and public IPs (none exists for
  // security groups; Service Authorization Reference, "Actions, resources, and condition keys
  // for Amazon Elastic Container Service").
  const allowedSubnetIds = props.allowedSubnets?.map((s) => (typeof s === 'string' ? s : s.subnetId));
  const publicIp = props.allowPublicIp === undefined ? undefined : props.allowPublicIp ? ['ENABLED', 'DISABLED'] : ['DISABLED'];
  const network = networkConditions(allowedSubnetIds, [...inputs.subnets], publicIp, inputs.assignPublicIp);
  if (props.allowPublicIp === false && inputs.assignPublicIp) {
    Annotations.of(scope).addWarningV2(
      'ecs-reconciler:PublicIpNotBackedByIam',
      'allowPublicIp is false but assignPublicIp (the default for specs that do not say) is true: the planner refuses a spec asking for a public IP, but IAM cannot (it cannot tell the default from a spec\'s choice). Set assignPublicIp: false with subnets that reach your registry (a NAT gateway or VPC endpoints) to have IAM refuse public IPs too.',
    );
  }
  for (const statement of ecsReconcilerStatements(stack, inputs.clusterNames, settings.ownerId, settings.allowAdoption, families, network)) inputs.role.addToPolicy(statement);
  grantTablesAndPassRole(inputs);
  acknowledgeWildcards(stack, inputs.role, inputs.clusterNames, families);
}

/** What DynamoDB needs to use a customer managed table key on the caller's behalf, and only through DynamoDB. */
function grantTableKey(stack: Stack, props: EcsReconcilerProps, role: iam.Role): void {
  const tableKey = props.existingTable ? props.existingTable.encryptionKey : props.tableProps?.encryptionKey ?? props.tableEncryptionKey;
  if (!tableKey) return;
  // AWS KMS Developer Guide, "How Amazon DynamoDB uses AWS KMS".
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'SpecTableKeyViaDynamoDb',
      actions: ['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey', 'kms:DescribeKey'],
      resources: [tableKey.keyArn],
      conditions: { StringEquals: { 'kms:ViaService': `dynamodb.${stack.region}.amazonaws.com` } },
    }),
  );
}

/** The families of `allowedFamilies` (or their default), checked; warns when adoption opens every family. */
function allowedFamilies(scope: Construct, props: EcsReconcilerProps, settings: ResolvedSettings): string[] {
  const families = props.allowedFamilies ? [...props.allowedFamilies] : defaultFamilies(settings.allowAdoption);
  if (!props.allowedFamilies && settings.allowAdoption) {
    Annotations.of(scope).addWarningV2(
      'ecs-reconciler:AnyFamilyForAdoption',
      'allowAdoption without allowedFamilies lets the function register task definitions (with the owner tag) in every family of the account and give owned services their revisions, because an adopted service keeps its live family. List the families of the services you adopt and those specs name (allowedFamilies, -c families=shop,billing-*) to narrow it; <cluster>-* is always allowed.',
    );
  }
  for (const f of families) {
    if (!/^([A-Za-z0-9_-]{1,255}\*?|\*)$/.test(f) && !Token.isUnresolved(f)) {
      throw new EcsReconcilerPropsError([`Family "${f}" in \`allowedFamilies\` is not a task definition family: use letters, digits, hyphens and underscores, optionally ending in * (a prefix), or * alone.`]);
    }
  }
  return families;
}

/** `iam:PassRole` for the allow-listed roles, the spec table and the task definition cache. */
function grantTablesAndPassRole(inputs: PermissionInputs): void {
  inputs.role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'PassAllowListedRolesToEcsTasks',
      actions: ['iam:PassRole'],
      resources: [...inputs.passableRoleArns],
      conditions: { StringEquals: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' } },
    }),
  );
  inputs.role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'SpecTable',
      actions: [
        'dynamodb:Scan',
        'dynamodb:GetItem',
        // The events fast path: which services named by ECS's events have a spec item.
        'dynamodb:BatchGetItem',
        // The stream path's spec history (lambda/adapters/spec-history.ts): one service's revisions.
        'dynamodb:Query',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'dynamodb:DeleteItem',
      ],
      resources: [inputs.table.tableArn],
    }),
  );
  inputs.role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'TaskDefinitionCacheTable',
      actions: ['dynamodb:Scan', 'dynamodb:BatchWriteItem'],
      resources: [inputs.taskDefinitionCacheTable.tableArn],
    }),
  );
}

/** The cdk-nag acknowledgements of the function policy's wildcards, one per finding (never the whole rule). */
function acknowledgeWildcards(stack: Stack, role: iam.Role, clusterNames: readonly string[], families: readonly string[]): void {
  const ecsArn = (resource: string, resourceName: string) => stack.formatArn({ service: 'ecs', resource, resourceName });
  const policy = role.node.tryFindChild('DefaultPolicy');
  const ack = (finding: string, reason: string) => Validations.of(policy ?? role).acknowledge({ id: `AwsSolutions-IAM5[${finding}]`, reason });
  ack(
    'Resource::*',
    'DescribeTaskDefinition supports no resource-level permissions; ListServices/ListTasks are limited by ecs:cluster; the two Deny statements on "*" only take away (Service Authorization Reference for Amazon ECS).',
  );
  for (const arn of [...clusterNames.map((c) => ecsArn('service', `${c}/*`)), ...clusterNames.map((c) => ecsArn('task', `${c}/*`))]) {
    ack(
      `Resource::${nagResource(stack.resolve(arn))}`,
      'Services and tasks are created at run time from specs: the wildcard is limited to the managed cluster in the ARN, and writes to services need the owner tag (aws:ResourceTag/aws:RequestTag).',
    );
  }
  for (const arn of clusterNames.map((c) => ecsArn('service-revision', `${c}/*`))) {
    ack(
      `Resource::${nagResource(stack.resolve(arn))}`,
      'Service revisions are made by ECS at each deployment of a service created at run time: read-only (DescribeServiceRevisions), limited to the managed cluster in the ARN.',
    );
  }
  for (const arn of clusterNames.map((c) => ecsArn('service-deployment', `${c}/*`))) {
    ack(
      `Resource::${nagResource(stack.resolve(arn))}`,
      'Service deployments are made by ECS at each deployment of a service created at run time: read-only (DescribeServiceDeployments), limited to the managed cluster in the ARN.',
    );
  }
  for (const arn of taskDefinitionFamilyArns(stack, clusterNames, families)) {
    ack(
      `Resource::${nagResource(stack.resolve(arn))}`,
      'Task definition families are <cluster>-<service> (or allowedFamilies: explicit and adopted families), services come from specs at run time: registration is limited to those families and needs the owner tag in the request; services may be given only their revisions (ecs:task-definition).',
    );
  }
}

/** What `ecsr get` / `export` / `plan` / `diff` / `describe` / `wait` read of the spec table. */
export const SPEC_READ_ACTIONS = ['dynamodb:Scan', 'dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:DescribeTable'] as const;

/** The ECS reads of the managed clusters (`ecsReadStatements`), on `grantee`'s own policy. */
export function grantClusterReads(stack: Stack, clusterNames: readonly string[], grantee: iam.IGrantable): iam.Grant {
  return grantStatements(ecsReadStatements(stackArnScope(stack), clusterNames), grantee);
}

/** ContinueServiceDeployment and StopServiceDeployment on the managed clusters (`ecsDeploymentControlStatements`), on `grantee`'s own policy. */
export function grantDeploymentControl(stack: Stack, clusterNames: readonly string[], grantee: iam.IGrantable): iam.Grant {
  return grantStatements(ecsDeploymentControlStatements(stackArnScope(stack), clusterNames), grantee);
}

function grantStatements(statements: readonly IamStatement[], grantee: iam.IGrantable): iam.Grant {
  if (statements.length === 0) return iam.Grant.drop(grantee, 'no managed cluster');
  return statements
    .map((s) =>
      iam.Grant.addToPrincipal({
        grantee,
        actions: [...s.Action],
        resourceArns: [...s.Resource],
        ...(s.Condition ? { conditions: s.Condition as Record<string, Record<string, unknown>> } : {}),
      }),
    )
    .reduce((a, b) => a.combine(b));
}

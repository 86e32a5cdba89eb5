/**
 * The function's environment (names: `ENV` in lambda/config.ts and `ALLOW_LIST_ENV` in
 * lambda/core/allow-lists.ts, so construct and parser cannot drift), and the synth warnings of
 * the allow-lists left open.
 */
import { Annotations, Token } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { ENV } from '../../lambda/config';
import { ALLOW_LIST, ALLOW_LIST_ENV } from '../../lambda/core/allow-lists';
import { heapFlag } from '../function-memory';
import { EcsReconcilerPropsError } from './errors';
import type { EcsReconcilerProps, ReconcilerAllowListProps } from './props';
import type { ResolvedSettings } from './settings';

/** What the environment names besides the settings: the resources made before the function. */
export interface EnvironmentInputs {
  readonly table: dynamodb.ITable;
  readonly taskDefinitionCacheTable: dynamodb.ITable;
  readonly clusterNames: readonly string[];
  readonly subnets: readonly string[];
  readonly securityGroups: readonly string[];
  readonly assignPublicIp: boolean;
  readonly executionRole: iam.IRole;
  readonly allowedExecutionRoleArns: readonly string[];
  readonly allowedTaskRoleArns: readonly string[];
  readonly role: iam.IRole;
  readonly eventsQueue?: sqs.IQueue;
  readonly fanOutQueue?: sqs.IQueue;
  /** The `targets` prop as the function reads it (`TARGETS`). */
  readonly targetDeclarations: readonly object[];
}

/** The function's environment variables. */
export function functionEnvironment(props: EcsReconcilerProps, settings: ResolvedSettings, inputs: EnvironmentInputs): Record<string, string> {
  const environment: Record<string, string> = {
    [ENV.specsTable]: inputs.table.tableName,
    [ENV.taskDefinitionCacheTable]: inputs.taskDefinitionCacheTable.tableName,
    [ENV.managedClusters]: inputs.clusterNames.join(','),
    [ENV.defaultAssignPublicIp]: String(inputs.assignPublicIp),
    [ENV.defaultExecutionRoleArn]: inputs.executionRole.roleArn,
    [ENV.logGroupPrefix]: settings.effectiveLogGroupPrefix,
    [ENV.defaultLagGraceSeconds]: String(settings.defaultLagGraceSeconds),
    [ENV.ownerId]: settings.ownerId,
    [ENV.dryRun]: String(settings.dryRun),
    [ENV.prune]: String(settings.prune),
    [ENV.allowAdoption]: String(settings.allowAdoption),
    [ENV.maxDeletesPerPass]: String(settings.maxDeletesPerPass),
    [ENV.apiBudgetFraction]: String(settings.apiBudgetFraction),
    [ENV.allowedExecutionRoleArns]: inputs.allowedExecutionRoleArns.join(','),
    [ENV.metricsNamespace]: settings.metricsNamespace,
    // V8 sizes its heap from the machine's memory: told the function's, it collects in time (lib/function-memory.ts).
    NODE_OPTIONS: `--enable-source-maps ${heapFlag(settings.memorySize)}`,
    // Powertools Tracer: off when the function is not traced, so it never waits for a daemon.
    POWERTOOLS_TRACE_ENABLED: String(settings.tracing !== lambda.Tracing.DISABLED),
    POWERTOOLS_SERVICE_NAME: 'ecs-reconciler',
  };
  if (inputs.eventsQueue) {
    environment[ENV.eventsQueueUrl] = inputs.eventsQueue.queueUrl;
    environment[ENV.resyncMinutes] = String(settings.resyncMinutes);
    environment[ENV.scheduleMinutes] = String(settings.scheduleMinutes);
    // Its own calls are the plan it applied, not news (the rules cannot exclude them: an
    // anything-but pattern would also drop calls of IAM users, which carry no session issuer).
    environment[ENV.eventsIgnorePrincipals] = inputs.role.roleArn;
  }
  if (inputs.fanOutQueue) {
    environment[ENV.fanOutQueueUrl] = inputs.fanOutQueue.queueUrl;
    environment[ENV.scheduleMinutes] = String(settings.scheduleMinutes);
    if (inputs.targetDeclarations.length > 0) environment[ENV.targets] = JSON.stringify(inputs.targetDeclarations);
  }
  const observing = observeOnlyClusters(props, inputs.clusterNames);
  if (observing.length > 0) environment[ENV.observeOnlyClusters] = observing.join(',');
  if (inputs.subnets.length > 0) environment[ENV.defaultSubnets] = inputs.subnets.join(',');
  if (inputs.securityGroups.length > 0) environment[ENV.defaultSecurityGroups] = inputs.securityGroups.join(',');
  // IAM lets the function pass only the allow-listed task roles; say the same to the planner, so
  // a spec naming another role gets a clear NotAllowed status instead of AccessDenied from ECS.
  environment[ENV.allowedTaskRoleArns] = inputs.allowedTaskRoleArns.length > 0 ? inputs.allowedTaskRoleArns.join(',') : 'NONE';
  for (const [name, entries] of allowListEnvironment(props)) environment[name] = entries;
  return environment;
}

/** Warns at synth (`ecs-reconciler:OpenAllowList:<prop>`) for each allow-list left open. */
export function warnOpenAllowLists(scope: Construct, props: ReconcilerAllowListProps): void {
  for (const open of openAllowLists(props)) {
    Annotations.of(scope).addWarningV2(`ecs-reconciler:OpenAllowList:${open.prop}`, open.message);
  }
}

/**
 * The allow-list variables of the props that are set (`lambda/core/allow-lists.ts`): entries
 * joined by commas, `NONE` for an empty list; unset props set nothing (anything allowed). Task and
 * execution roles are set by the constructor (they also scope `iam:PassRole`).
 */
function allowListEnvironment(props: ReconcilerAllowListProps): [string, string][] {
  const out: [string, string][] = [];
  const put = (name: string, entries: readonly string[] | undefined) => {
    if (entries !== undefined) out.push([name, entries.length > 0 ? entries.join(',') : 'NONE']);
  };
  put(ALLOW_LIST_ENV.subnets, props.allowedSubnets?.map((s) => (typeof s === 'string' ? s : s.subnetId)));
  put(ALLOW_LIST_ENV.securityGroups, props.allowedSecurityGroups?.map((g) => (typeof g === 'string' ? g : g.securityGroupId)));
  if (props.allowPublicIp !== undefined) put(ALLOW_LIST_ENV.assignPublicIp, props.allowPublicIp ? ['ENABLED', 'DISABLED'] : ['DISABLED']);
  put(ALLOW_LIST_ENV.targetGroupArns, props.allowedTargetGroups?.map((t) => (typeof t === 'string' ? t : t.targetGroupArn)));
  put(
    ALLOW_LIST_ENV.secrets,
    props.allowedSecrets?.map((x) => (typeof x === 'string' ? x : 'secretArn' in x ? `${x.secretArn}*` : x.parameterArn)),
  );
  put(ALLOW_LIST_ENV.efsFileSystems, props.allowedEfsFileSystems?.map((f) => (typeof f === 'string' ? f : f.fileSystemId)));
  put(ALLOW_LIST_ENV.imageRegistries, props.allowedImageRegistries);
  return out;
}

/**
 * The `-c` key of the quick-start stack (`lib/reconciler-stack.ts` `CONTEXT_KEYS`) that sets each
 * allow-list prop which is open (anything allowed) when unset. The task and execution role lists
 * are closed when unset, and families have their own warning.
 */
const OPEN_WHEN_UNSET: Readonly<Record<string, string>> = {
  allowedSubnets: 'allowedSubnets',
  allowedSecurityGroups: 'allowedSecurityGroups',
  allowPublicIp: 'allowPublicIp',
  allowedTargetGroups: 'targetGroups',
  allowedSecrets: 'secretPrefixes',
  allowedImageRegistries: 'imageRegistries',
  allowedEfsFileSystems: 'efsFileSystems',
};

/**
 * The allow-lists left open (unset: a spec may name anything), each with the sentence synth
 * warns: what a table writer may then name, and the prop and `-c` key that close it.
 */
export function openAllowLists(props: ReconcilerAllowListProps): { prop: string; message: string }[] {
  return Object.values(ALLOW_LIST)
    .filter((list) => Object.hasOwn(OPEN_WHEN_UNSET, list.prop) && (props as Record<string, unknown>)[list.prop] === undefined)
    .map((list) => {
      const key = OPEN_WHEN_UNSET[list.prop];
      const how =
        list.prop === 'allowPublicIp'
          ? `Set allowPublicIp: false (-c ${key}=false) to refuse it, or true to say it is meant.`
          : `Set ${list.prop} (-c ${key}=a,b-* with the quick-start stack; [] or NONE allows nothing).`;
      const what = list.prop === 'allowPublicIp' ? 'may ask for a public IP (assignPublicIp: true)' : `may name any ${list.lists}`;
      return { prop: list.prop, message: `${list.prop} is not set: a spec ${what}, and whoever can write the spec table chooses. ${how}` };
    });
}

/**
 * The `observeOnlyClusters` prop, each one of the reconciler's clusters.
 * @throws EcsReconcilerPropsError naming a cluster the reconciler does not manage.
 */
function observeOnlyClusters(props: EcsReconcilerProps, clusterNames: readonly string[]): readonly string[] {
  const names = props.observeOnlyClusters ?? [];
  const unknown = names.filter((n) => !Token.isUnresolved(n) && !clusterNames.some((c) => Token.isUnresolved(c)) && !clusterNames.includes(n));
  if (unknown.length > 0) {
    throw new EcsReconcilerPropsError([
      `observeOnlyClusters names ${unknown.join(', ')}, which is not among the reconciler's clusters (${clusterNames.join(', ')}); add it to \`clusters\` or remove it.`,
    ]);
  }
  return names;
}

/**
 * `EcsReconcilerStack`: one `EcsReconciler` in a stack with outputs, for `cdk deploy`
 * (`bin/app.ts`). Also `reconcilerPropsFromContext`, which turns `-c key=value` context into props.
 */
import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { EcsReconciler, type EcsReconcilerProps } from './ecs-reconciler';

export interface EcsReconcilerStackProps extends StackProps {
  /** Props of the reconciler construct. */
  readonly reconciler: EcsReconcilerProps;
}

/** A stack holding one {@link EcsReconciler}, with outputs naming what a user needs next. */
export class EcsReconcilerStack extends Stack {
  public readonly reconciler: EcsReconciler;

  constructor(scope: Construct, id: string, props: EcsReconcilerStackProps) {
    super(scope, id, props);
    this.reconciler = new EcsReconciler(this, 'Reconciler', props.reconciler);
    const r = this.reconciler;
    new CfnOutput(this, 'SpecsTableName', {
      value: r.table.tableName,
      description: 'Put specs here: npm run ecsr -- apply -f examples/web.yaml --table <this>',
    });
    new CfnOutput(this, 'FunctionName', { value: r.function.functionName, description: 'The reconciler function' });
    new CfnOutput(this, 'FunctionRoleArn', {
      value: r.role.roleArn,
      description: "The function's role: a target account's ReconcilerTargetRole trusts it (reconcilerRoleArn); fixed with -c functionRoleName=NAME",
    });
    if (r.topic) new CfnOutput(this, 'AlarmTopicArn', { value: r.topic.topicArn, description: 'Alarms notify this topic' });
    if (r.dashboard) new CfnOutput(this, 'DashboardName', { value: r.dashboard.dashboardName, description: 'CloudWatch dashboard' });
    new CfnOutput(this, 'TaskExecutionRoleArn', {
      value: r.executionRole.roleArn,
      description: 'Default task execution role for specs that name none',
    });
    new CfnOutput(this, 'ManagedClusters', { value: r.clusterNames.join(','), description: "Clusters reconciled: a spec's cluster is one of these (with createCluster, the created cluster's generated name)" });
  }
}

/** Context keys `bin/app.ts` reads (`-c key=value` or `cdk.json` "context"). */
export const CONTEXT_KEYS = {
  clusters: 'clusters',
  createCluster: 'createCluster',
  subnets: 'subnets',
  securityGroups: 'securityGroups',
  assignPublicIp: 'assignPublicIp',
  alarmEmail: 'alarmEmail',
  taskRoles: 'taskRoles',
  executionRoles: 'executionRoles',
  imageRegistries: 'imageRegistries',
  allowedSubnets: 'allowedSubnets',
  allowedSecurityGroups: 'allowedSecurityGroups',
  allowPublicIp: 'allowPublicIp',
  targetGroups: 'targetGroups',
  secretPrefixes: 'secretPrefixes',
  efsFileSystems: 'efsFileSystems',
  scheduleMinutes: 'scheduleMinutes',
  lagGraceSeconds: 'lagGraceSeconds',
  metricsNamespace: 'metricsNamespace',
  prune: 'prune',
  maxDeletesPerPass: 'maxDeletesPerPass',
  apiBudgetFraction: 'apiBudgetFraction',
  dryRun: 'dryRun',
  ownerId: 'ownerId',
  allowAdoption: 'allowAdoption',
  observeOnlyClusters: 'observeOnlyClusters',
  families: 'families',
  memorySize: 'memorySize',
  fleetSize: 'fleetSize',
  reserveConcurrency: 'reserveConcurrency',
  tracing: 'tracing',
  functionRoleName: 'functionRoleName',
  taskLogGroupRemovalPolicy: 'taskLogGroupRemovalPolicy',
  createTaskLogGroups: 'createTaskLogGroups',
  stackName: 'stackName',
} as const;

/** Thrown for unusable context; the message is one sentence naming the key(s) and what to pass. */
export class ContextError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ContextError';
  }
}

type ContextReader = (key: string) => unknown;

/** `retain` or `destroy` (`-c taskLogGroupRemovalPolicy=`) as a removal policy; anything else is a problem. */
function removalPolicy(value: string | undefined, problems: string[]): RemovalPolicy | undefined {
  if (value === undefined) return undefined;
  if (value === 'retain') return RemovalPolicy.RETAIN;
  if (value === 'destroy') return RemovalPolicy.DESTROY;
  problems.push(`-c ${CONTEXT_KEYS.taskLogGroupRemovalPolicy}= must be retain or destroy, got "${value}"`);
  return undefined;
}

/** Readers of context values of each kind; a malformed value adds a sentence to `problems`. */
function contextReaders(get: ContextReader, problems: string[]) {
  const str = (key: string): string | undefined => {
    const v = get(key);
    if (v === undefined || v === null || v === '') return undefined;
    return String(v);
  };
  const list = (key: string): string[] | undefined => {
    const v = get(key);
    if (v === undefined || v === null || v === '') return undefined;
    const items = Array.isArray(v) ? v.map(String) : String(v).split(',');
    const clean = items.map((s) => s.trim()).filter((s) => s.length > 0);
    return clean.length > 0 ? clean : undefined;
  };
  /** An allow-list: like `list`, and `NONE` (alone) allows nothing. */
  const allowList = (key: string): string[] | undefined => {
    const items = list(key);
    return items && items.length === 1 && items[0] === 'NONE' ? [] : items;
  };
  const bool = (key: string): boolean | undefined => {
    const v = str(key);
    if (v === undefined) return undefined;
    if (v === 'true') return true;
    if (v === 'false') return false;
    problems.push(`-c ${key}= must be true or false, got "${v}"`);
    return undefined;
  };
  const num = (key: string): number | undefined => {
    const v = str(key);
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isFinite(n)) {
      problems.push(`-c ${key}= must be a number, got "${v}"`);
      return undefined;
    }
    return n;
  };
  return { str, list, allowList, bool, num };
}

/**
 * Builds construct props from CDK context values (strings from `-c`, or JSON values from cdk.json).
 * Lists are comma-separated (an allow-list given as `NONE` allows nothing); booleans are `true`/`false`; numbers are decimal.
 * @throws ContextError naming every missing or malformed key, e.g. when neither `clusters` nor
 *   `createCluster=true` is given.
 */
export function reconcilerPropsFromContext(get: ContextReader): EcsReconcilerProps {
  const problems: string[] = [];
  const { str, list, allowList, bool, num } = contextReaders(get, problems);
  const k = CONTEXT_KEYS;
  const clusters = list(k.clusters);
  const createCluster = bool(k.createCluster) ?? false;
  if (!clusters && !createCluster) {
    problems.push(`missing -c ${k.clusters}=NAME[,NAME...] (or -c ${k.createCluster}=true for a quick-start VPC and cluster)`);
  }
  const subnets = list(k.subnets);
  if (clusters && !createCluster && !subnets) {
    problems.push(`missing -c ${k.subnets}=subnet-...[,subnet-...] (default subnets for specs that name none)`);
  }
  const securityGroups = list(k.securityGroups);
  if (clusters && !createCluster && !securityGroups) {
    problems.push(`missing -c ${k.securityGroups}=sg-...[,sg-...] (default security groups for specs that name none)`);
  }
  const scheduleMinutes = num(k.scheduleMinutes);
  const props: EcsReconcilerProps = {
    clusters,
    createCluster,
    defaultSubnets: subnets,
    defaultSecurityGroups: securityGroups,
    assignPublicIp: bool(k.assignPublicIp),
    alarmEmail: str(k.alarmEmail),
    allowedTaskRoles: allowList(k.taskRoles),
    allowedExecutionRoles: allowList(k.executionRoles),
    allowedImageRegistries: allowList(k.imageRegistries),
    allowedSubnets: allowList(k.allowedSubnets),
    allowedSecurityGroups: allowList(k.allowedSecurityGroups),
    allowPublicIp: bool(k.allowPublicIp),
    allowedTargetGroups: allowList(k.targetGroups),
    allowedSecrets: allowList(k.secretPrefixes),
    allowedEfsFileSystems: allowList(k.efsFileSystems),
    defaultLagGrace: num(k.lagGraceSeconds),
    metricsNamespace: str(k.metricsNamespace),
    prune: bool(k.prune),
    maxDeletesPerPass: num(k.maxDeletesPerPass),
    apiBudgetFraction: num(k.apiBudgetFraction),
    dryRun: bool(k.dryRun),
    ownerId: str(k.ownerId),
    allowAdoption: bool(k.allowAdoption),
    observeOnlyClusters: list(k.observeOnlyClusters),
    allowedFamilies: list(k.families),
    memorySize: num(k.memorySize),
    fleetSize: num(k.fleetSize),
    reserveConcurrency: bool(k.reserveConcurrency),
    ...(bool(k.tracing) === false ? { tracing: lambda.Tracing.DISABLED } : {}),
    functionRoleName: str(k.functionRoleName),
    taskLogGroupRemovalPolicy: removalPolicy(str(k.taskLogGroupRemovalPolicy), problems),
    createTaskLogGroups: bool(k.createTaskLogGroups),
  };
  if (problems.length > 0) {
    throw new ContextError(`Cannot build the stack: ${problems.join('; ')}.`);
  }
  return scheduleMinutes === undefined ? props : { ...props, schedule: Duration.minutes(scheduleMinutes) };
}

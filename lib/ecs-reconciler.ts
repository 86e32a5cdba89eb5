/**
 * `EcsReconciler`: the whole reconciler as one L3 construct — the spec table, the function and its
 * schedule, least-privilege IAM, the defaults services need (task execution role, log groups),
 * alarms and a dashboard. `EcsReconcilerStack` (./reconciler-stack) wraps it for `cdk deploy`;
 * people embed the construct in their own apps the same way.
 *
 * The construct is a facade: each feature is built by one small part in ./reconciler/ (tables,
 * function, permissions, schedule, fast path, event feeds, fan-out, alarms, dashboard, metrics),
 * and its props are split the same way (./reconciler/props.ts). Alarm thresholds and periods
 * come from `lambda/core/alarms.ts` (one source of truth); environment variable names from
 * `lambda/config.ts` (`ENV`), so construct and parser cannot drift.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Annotations, ArnFormat, Duration, Stack, Token, TokenComparison } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as ecs from 'aws-cdk-lib/aws-ecs';
import type * as events from 'aws-cdk-lib/aws-events';
import type * as iam from 'aws-cdk-lib/aws-iam';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { AlarmDefinition, AlarmId } from '../lambda/core/alarms';
import { createAlarms, createAlarmTopic, createDeadLetterAlarms, deployedAlarmDefinitions } from './reconciler/alarms';
import { createDashboard } from './reconciler/dashboard';
import { functionEnvironment, warnOpenAllowLists } from './reconciler/environment';
import { EcsReconcilerPropsError } from './reconciler/errors';
import { buildEventRules, createEventQueues, createEventsFastPath, createTargetEventsPolicy, grantEventsQueue } from './reconciler/event-feeds';
import { createFanOutQueues, targetDeclarations, wireFanOut } from './reconciler/fan-out';
import { createFastPath, fastPathOn } from './reconciler/fast-path';
import { createFunction, createFunctionRole } from './reconciler/function';
import { createExecutionRole, createTaskLogGroups } from './reconciler/log-groups';
import { ReconcilerMetrics, type PassMetricOptions } from './reconciler/metrics';
import { grantClusterReads, grantDeploymentControl, grantFunctionPermissions, SPEC_READ_ACTIONS } from './reconciler/permissions';
import type { EcsReconcilerProps } from './reconciler/props';
import { createQuickStart, type QuickStart } from './reconciler/quick-start';
import { acceptMessagesOnlyFromFunction } from './reconciler/queues';
import { createSchedule } from './reconciler/schedule';
import { resolveSettings, type ResolvedSettings } from './reconciler/settings';
import { createSpecTables } from './reconciler/spec-tables';

export type * from './reconciler/props';
export type { PassMetricOptions } from './reconciler/metrics';
export { EcsReconcilerPropsError } from './reconciler/errors';
export { DEFAULT_LOG_GROUP_PREFIX, effectiveLogGroupPrefix, ownerLogGroupSegment } from './reconciler/log-groups';
export { DEFAULT_TARGET_ROLE_NAME, defaultTargetRoleArn, reconcilerFunctionRoleArn } from './reconciler/target-names';
export { cdkEventPattern } from './reconciler/event-feeds';
export { openAllowLists } from './reconciler/environment';
export { defaultFamilies, ecsReconcilerStatements, nagResource, stackArnScope, taskDefinitionFamilyArns } from './reconciler/permissions';

/** The Lambda entry point (`lambda/handler.ts`, export `handler`). */
export const HANDLER_ENTRY = fileURLToPath(new URL('../lambda/handler.ts', import.meta.url));

/**
 * How the construct bundles the handler at synth (esbuild, through `NodejsFunction`).
 * scripts/build-package.mjs prebuilds the published package's handler with the same options.
 */
export const HANDLER_BUNDLING: nodejs.BundlingOptions = {
  forceDockerBundling: false,
  format: nodejs.OutputFormat.ESM,
  mainFields: ['module', 'main'],
  // ESM bundles still meet CommonJS `require` inside dependencies: the banner gives them one (a bundled ESM module has no `require` of its own).
  banner: "import { createRequire as __ecsrCreateRequire } from 'node:module'; const require = __ecsrCreateRequire(import.meta.url);",
  minify: true,
  sourceMap: true,
  // Line mapping only: stack traces stay readable without shipping the sources twice.
  sourcesContent: false,
  // Runs on the Lambda runtime (Node 24) and on Node 20 locally.
  target: 'node20',
  // Ship the SDK versions the tests ran against, not whatever the runtime carries.
  bundleAwsSDK: true,
};

/**
 * The handler prebuilt by scripts/build-package.mjs, beside the built construct in the published
 * package (`dist/lib/handler/index.mjs`, export `handler`): with it, a consumer's synth needs no
 * bundler. From the repository's sources it does not exist, and the construct bundles
 * {@link HANDLER_ENTRY} with esbuild at synth instead.
 */
export const PREBUILT_HANDLER_DIR = fileURLToPath(new URL('./handler', import.meta.url));

/** Whether `dir` holds a prebuilt handler (`index.mjs`). */
export function hasPrebuiltHandler(dir: string = PREBUILT_HANDLER_DIR): boolean {
  return existsSync(join(dir, 'index.mjs'));
}

/**
 * The serverless ECS reconciler. Creates:
 * - `table`: specs, partition key `cluster`, sort key `service` (strings); on-demand, point-in-time
 *   recovery, deletion protection, RETAIN, encrypted with the AWS managed key (or `tableEncryptionKey`).
 * - `function`: Node.js (newest runtime in aws-cdk-lib), ARM64, no reserved concurrency unless
 *   `reserveConcurrency`, 50 s timeout,
 *   async invocations not retried and dropped after 60 s (docs/ecs-facts.md §9), its own log group.
 * - a schedule (EventBridge rule, every minute by default).
 * - `executionRole` and `logGroups`: the default task execution role and one log group per managed
 *   cluster that rendered task definitions use.
 * - `topic`, `alarms` (from `lambda/core/alarms.ts`) and `dashboard`.
 * @throws EcsReconcilerPropsError when props are invalid or incompatible.
 */
export class EcsReconciler extends Construct {
  // Every part creates its resources in this construct's own scope, not in a child construct:
  // a resource's logical id is its id here, so a deployed stack keeps its resources when the
  // parts change (test/cdk/logical-ids.test.ts).
  /** The spec table (created, or `existingTable`). */
  public readonly table: dynamodb.ITable;
  /**
   * The durable task definition description cache: one item per revision in use, read
   * in bulk by a new container. Only a cache: destroyed with the stack, entries expire by TTL.
   */
  public readonly taskDefinitionCacheTable: dynamodb.Table;
  /** The reconciler function. */
  public readonly function: nodejs.NodejsFunction;
  /** The function's role (least privilege; add statements here for extra needs). */
  public readonly role: iam.Role;
  /** The schedule that invokes the function. */
  public readonly rule: events.Rule;
  /** True when the spec table's stream triggers the function (the fast path). */
  public readonly fastPath: boolean;
  /** Events mode: the queue the event rules deliver into (undefined with `events: false`). */
  public readonly eventsQueue?: sqs.Queue;
  /** Events mode: where messages go after 5 receives without being deleted. */
  public readonly eventsDeadLetterQueue?: sqs.Queue;
  /**
   * The events fast path: the second queue the ECS event rules feed, read by the function through an
   * event source mapping (undefined with `events: false` or `eventsFastPath: false`).
   */
  public readonly eventsFastPathQueue?: sqs.Queue;
  /** Events mode: the rules that feed `eventsQueue` (ECS events, CloudTrail writes, heartbeat). */
  public readonly eventRules: readonly events.Rule[];
  /**
   * The default event bus's policy statement letting the target accounts put ECS's events on it
   * (undefined when no target is in another account, or without the events fast path).
   */
  public readonly targetEventsPolicy?: events.CfnEventBusPolicy;
  /** The topic every alarm notifies; undefined with `createAlarms: false` and no `alarmTopic`. */
  public readonly topic?: sns.ITopic;
  /** Alarms by id (see `AlarmId` in `lambda/core/alarms.ts`); empty with `createAlarms: false`. */
  public readonly alarms: Readonly<Partial<Record<AlarmId, cloudwatch.Alarm>>>;
  /**
   * Alarm states, lag per service, desired vs running, pass duration, actions, invalid specs;
   * undefined with `createDashboard: false`.
   */
  public readonly dashboard?: cloudwatch.Dashboard;
  /** The CloudWatch namespace of the reconciler's metrics. */
  public readonly metricsNamespace: string;
  /** The metric factories behind the `metric*` methods (the schedule's interval as their period). */
  private readonly metricKit: ReconcilerMetrics;
  /**
   * Default task execution role for specs that name none (AmazonECSTaskExecutionRolePolicy, plus
   * write access to the per-cluster log groups). Add secret/parameter read access here when specs
   * use `secrets` without their own execution role.
   */
  public readonly executionRole: iam.IRole;
  /** Per managed cluster (by cluster name, possibly a token), the log group task definitions use. */
  public readonly logGroups: Readonly<Record<string, logs.ILogGroup>>;
  /** Names of the managed clusters (tokens for clusters created in this app). */
  public readonly clusterNames: readonly string[];
  /** The quick-start cluster, when `createCluster` is true. */
  public readonly cluster?: ecs.Cluster;
  /** The quick-start VPC, when `createCluster` is true. */
  public readonly vpc?: ec2.Vpc;
  /** The alarm definitions deployed (from `lambda/core/alarms.ts`). */
  public readonly alarmDefinitions: readonly AlarmDefinition[];
  /** Fan-out mode: the queue with one message per target per tick (undefined without fan-out). */
  public readonly fanOutQueue?: sqs.Queue;
  /** Fan-out mode: where a message goes after 5 receives without success. */
  public readonly fanOutDeadLetterQueue?: sqs.Queue;
  /**
   * The fast path: where the stream's event source mapping sends the description of a batch it
   * discarded after its retries (undefined with `fastPath: false`).
   */
  public readonly fastPathFailureQueue?: sqs.Queue;
  /**
   * One alarm per dead-letter or failure queue (`eventsDeadLetterQueue`, `fanOutDeadLetterQueue`,
   * `fastPathFailureQueue`), by the queue's construct id: `ApproximateNumberOfMessagesVisible` > 0
   * (Amazon SQS Developer Guide, "Creating alarms for dead-letter queues using Amazon CloudWatch");
   * empty with `createAlarms: false`.
   */
  public readonly deadLetterAlarms: Readonly<Record<string, cloudwatch.Alarm>>;


  constructor(scope: Construct, id: string, props: EcsReconcilerProps = {}) {
    super(scope, id);
    const home = Stack.of(scope);
    const settings = resolveSettings(props, {
      ...(Token.isUnresolved(home.account) ? {} : { account: home.account }),
      ...(Token.isUnresolved(home.region) ? {} : { region: home.region }),
    });
    const quickStart = props.createCluster ? createQuickStart(this) : undefined;
    this.vpc = quickStart?.vpc;
    this.cluster = quickStart?.cluster;
    this.metricsNamespace = settings.metricsNamespace;
    this.metricKit = new ReconcilerMetrics(settings.metricsNamespace, Duration.minutes(settings.scheduleMinutes));
    checkClusterEnvironments(Stack.of(this), props.clusters ?? []);
    this.clusterNames = [
      ...(this.cluster ? [this.cluster.clusterName] : []),
      ...(props.clusters ?? []).map((c) => (typeof c === 'string' ? c : c.clusterName)),
    ];
    const network = defaultNetwork(props, quickStart);
    ({ table: this.table, taskDefinitionCacheTable: this.taskDefinitionCacheTable } = createSpecTables(this, props));
    this.executionRole = createExecutionRole(this, props);
    this.logGroups = createTaskLogGroups(this, props, settings, this.clusterNames, this.executionRole);
    const { role, functionLogs } = createFunctionRole(this, props, settings);
    this.role = role;
    const eventQueues = settings.events ? createEventQueues(this, settings) : undefined;
    this.eventsQueue = eventQueues?.eventsQueue;
    this.eventsDeadLetterQueue = eventQueues?.eventsDeadLetterQueue;
    const targets = targetDeclarations(props);
    const fanOutQueues = settings.fanOut ? createFanOutQueues(this, settings) : undefined;
    this.fanOutQueue = fanOutQueues?.fanOutQueue;
    this.fanOutDeadLetterQueue = fanOutQueues?.fanOutDeadLetterQueue;
    const roleArn = (r: string | iam.IRole) => (typeof r === 'string' ? r : r.roleArn);
    const allowedTaskRoleArns = (props.allowedTaskRoles ?? []).map(roleArn);
    const allowedExecutionRoleArns = [this.executionRole.roleArn, ...(props.allowedExecutionRoles ?? []).map(roleArn)];
    const environment = functionEnvironment(props, settings, {
      ...this.tables(),
      ...network,
      clusterNames: this.clusterNames,
      executionRole: this.executionRole,
      allowedExecutionRoleArns,
      allowedTaskRoleArns,
      role,
      ...(this.eventsQueue ? { eventsQueue: this.eventsQueue } : {}),
      ...(this.fanOutQueue ? { fanOutQueue: this.fanOutQueue } : {}),
      targetDeclarations: targets,
    });
    warnOpenAllowLists(this, props);
    this.function = createFunction(this, props, settings, { role, functionLogs, environment, code: handlerCode(props) });
    grantFunctionPermissions(this, props, settings, {
      role,
      ...this.tables(),
      ...network,
      clusterNames: this.clusterNames,
      passableRoleArns: [...allowedTaskRoleArns, ...allowedExecutionRoleArns],
    });
    this.rule = createSchedule(this, this.function, settings.scheduleMinutes);
    this.fastPath = fastPathOn(props);
    if (this.fastPath) this.fastPathFailureQueue = createFastPath(this, this.table, this.function, role);
    if (this.fanOutQueue) wireFanOut(this, settings, { fn: this.function, role, table: this.table, queue: this.fanOutQueue, targets });
    this.eventsFastPathQueue = createEventsFastPath(this, props, settings, this.function, role, eventQueues);
    this.eventRules = eventQueues ? buildEventRules(this, eventQueues, settings.scheduleMinutes, this.eventsFastPathQueue) : [];
    this.guardQueues(props);
    this.targetEventsPolicy = createTargetEventsPolicy(this, props, this.eventsFastPathQueue);
    if (this.eventsQueue) grantEventsQueue(role, this.eventsQueue);
    ({
      topic: this.topic,
      alarmDefinitions: this.alarmDefinitions,
      alarms: this.alarms,
      deadLetterAlarms: this.deadLetterAlarms,
      dashboard: this.dashboard,
    } = this.createMonitoring(props, settings));
  }

  /** The two tables, as the environment and the permissions name them. */
  private tables() {
    return { table: this.table, taskDefinitionCacheTable: this.taskDefinitionCacheTable };
  }

  /**
   * Messages are hints the function acts on: only the function's role may send them (the
   * fan-out ticks, the stream's failure records); the event queues take EventBridge's deliveries,
   * which their Allow statements limit to this construct's rules (the only service principal
   * allowed there). Warns when a reserved execution also caps the fast paths.
   */
  private guardQueues(props: EcsReconcilerProps): void {
    for (const q of [this.fanOutQueue, this.fanOutDeadLetterQueue, this.fastPathFailureQueue]) if (q) acceptMessagesOnlyFromFunction(q, this.role, false);
    for (const q of [this.eventsQueue, this.eventsDeadLetterQueue, this.eventsFastPathQueue]) if (q) acceptMessagesOnlyFromFunction(q, this.role, true);
    if (props.reserveConcurrency && (this.fastPath || this.eventsFastPathQueue)) {
      // One reserved execution is also the fast paths' ceiling: while a scheduled pass runs, Lambda
      // throttles their invocations (Lambda Developer Guide, "Configuring reserved concurrency").
      Annotations.of(this).addWarningV2(
        'ecs-reconciler:FastPathThrottledByReservation',
        'reserveConcurrency caps the function at one invocation, so the fast paths (the table stream and the EventsFastPath queue) are throttled while a scheduled pass runs: an edit or an ECS event can wait for that pass, and a fast-path event throttled three times goes to the events dead-letter queue (the next scheduled pass still reads it). Drop reserveConcurrency (the pass lease already keeps two passes from acting at once), or set fastPath: false and eventsFastPath: false.',
      );
    }
  }

  /** The alarm topic, the alarms (those of the definitions and of the dead-letter queues) and the dashboard. */
  private createMonitoring(props: EcsReconcilerProps, settings: ResolvedSettings) {
    const topic = createAlarmTopic(this, props);
    const alarmDefinitions = deployedAlarmDefinitions(this, props, settings);
    const alarms = createAlarms(this, alarmDefinitions, this.function, topic);
    const deadLetterAlarms =
      (props.createAlarms ?? true)
        ? createDeadLetterAlarms(this, [this.eventsDeadLetterQueue, this.fanOutDeadLetterQueue, this.fastPathFailureQueue], settings.scheduleMinutes, topic)
        : {};
    const dashboard =
      (props.createDashboard ?? true)
        ? createDashboard(this, {
            namespace: settings.metricsNamespace,
            periodSeconds: settings.scheduleMinutes * 60,
            fanOut: settings.fanOut,
            alarms: Object.values(alarms).filter((a): a is cloudwatch.Alarm => a !== undefined),
            fn: this.function,
          })
        : undefined;
    return { topic, alarmDefinitions, alarms, deadLetterAlarms, dashboard };
  }

  /**
   * Lets `grantee` run what reads specs, their status and the services ECS runs for them:
   * `ecsr get`, `export`, `plan`, `diff`, `describe`, `wait` and `ui`. On the spec table: Scan,
   * GetItem, Query and DescribeTable (and decrypt with its key); in ECS, the reads of the managed
   * clusters a pass makes (`ecsReadStatements` in lambda/core/ecs-policy.ts: ListServices and
   * ListTasks with `ecs:cluster`, DescribeServices, DescribeTasks, DescribeClusters,
   * ListServiceDeployments and DescribeServiceRevisions there, DescribeTaskDefinition). No write.
   */
  public grantSpecRead(grantee: iam.IGrantable): iam.Grant {
    return this.table.grant(grantee, ...SPEC_READ_ACTIONS).combine(grantClusterReads(Stack.of(this), this.clusterNames, grantee));
  }

  /**
   * Lets `grantee` write specs as pipelines do (`ecsr apply` with its ECS checks and `--wait`,
   * `ecsr set image`, `ecsr delete`, `ecsr purge`, `ecsr prune --confirm`): what {@link grantSpecRead} allows,
   * plus PutItem, UpdateItem and DeleteItem on the spec table. Whoever holds it chooses what the
   * reconciler deploys, within the allow-lists (docs/deploy.md, "Allow-lists and the trust
   * boundary"); it includes no ECS write. Apply's checks outside ECS (ECR, IAM, Secrets Manager,
   * SSM, EC2, Elastic Load Balancing) need those services' read permissions, which this does not
   * grant: without them each is reported "could not check" and the spec is written all the same.
   */
  public grantSpecWrite(grantee: iam.IGrantable): iam.Grant {
    return this.table
      .grant(grantee, ...SPEC_READ_ACTIONS, 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem')
      .combine(grantClusterReads(Stack.of(this), this.clusterNames, grantee));
  }

  /**
   * Lets `grantee` answer and stop the deployments ECS runs for the managed clusters' services:
   * `ecsr continue` (ContinueServiceDeployment, a PAUSE lifecycle hook) and `ecsr abort`
   * (StopServiceDeployment), with the reads they make (`ecsr describe`'s ECS reads; no spec
   * table access). Service deployments carry no tags, so this cannot be limited to the services
   * this reconciler owns: any deployment of a managed cluster may be continued or rolled back.
   */
  public grantDeploymentControl(grantee: iam.IGrantable): iam.Grant {
    return grantDeploymentControl(Stack.of(this), this.clusterNames, grantee).combine(grantClusterReads(Stack.of(this), this.clusterNames, grantee));
  }

  /**
   * `TaskLag` (desired - running tasks) of one service (`Cluster`, `Service` dimensions), Maximum
   * per schedule interval by default. It has data only while the service lags (and one 0 when it
   * recovers): treat missing data as not breaching. Without a service: a Metrics Insights query
   * over every service, the highest lag first (as the per-service alarm uses).
   * @throws EcsReconcilerPropsError when only one of `cluster` and `service` is given.
   */
  public metricTaskLag(opts: { cluster?: string; service?: string } & cloudwatch.MetricOptions = {}): cloudwatch.IMetric {
    return this.metricKit.taskLag(opts);
  }

  /** `PassSucceeded`: 1 per scheduled pass that completed its reads (the heartbeat), Sum per schedule interval by default. */
  public metricPassSucceeded(options: PassMetricOptions = {}): cloudwatch.Metric {
    return this.metricKit.pass('passSucceeded', options);
  }

  /** `PassDuration`: wall time of a pass, milliseconds; Maximum per schedule interval by default. */
  public metricPassDuration(options: PassMetricOptions = {}): cloudwatch.Metric {
    return this.metricKit.pass('passDuration', options);
  }

  /** `ActionsApplied`: ECS writes a pass applied successfully, Sum per schedule interval by default. */
  public metricActionsApplied(options: PassMetricOptions = {}): cloudwatch.Metric {
    return this.metricKit.pass('actionsApplied', options);
  }

  /** `ActionsFailed`: ECS writes that failed, Sum per schedule interval by default. */
  public metricActionsFailed(options: PassMetricOptions = {}): cloudwatch.Metric {
    return this.metricKit.pass('actionsFailed', options);
  }

  /** `InvalidSpecs`: spec items that failed validation in a pass, Maximum per schedule interval by default. */
  public metricInvalidSpecs(options: PassMetricOptions = {}): cloudwatch.Metric {
    return this.metricKit.pass('invalidSpecs', options);
  }

  /** `DriftCorrections`: UpdateService actions correcting a live difference, Sum per schedule interval by default. */
  public metricDriftCorrections(options: PassMetricOptions = {}): cloudwatch.Metric {
    return this.metricKit.pass('driftCorrections', options);
  }

  /**
   * `DriftObserved`: services in observe-only mode that differ from their spec and were left as
   * they are, Maximum per schedule interval by default. Alarm on it while adopting a fleet.
   */
  public metricDriftObserved(options: PassMetricOptions = {}): cloudwatch.Metric {
    return this.metricKit.pass('driftObserved', options);
  }

  /** `ServicesLaggingBeyondGrace`: services whose lag lasted longer than their grace, Maximum per schedule interval by default. */
  public metricServicesLaggingBeyondGrace(options: PassMetricOptions = {}): cloudwatch.Metric {
    return this.metricKit.pass('servicesLaggingBeyondGrace', options);
  }

  /**
   * `EventsUnrouted`: ECS events naming a service no declared target serves (another account,
   * Region or cluster), dropped unapplied; Sum per schedule interval by default.
   */
  public metricEventsUnrouted(options: PassMetricOptions = {}): cloudwatch.Metric {
    return this.metricKit.pass('eventsUnrouted', options);
  }

  /**
   * Fan-out mode: `TargetPassAge`, seconds since the target's last completed scheduled pass,
   * Maximum per schedule interval by default; without a target, a Metrics Insights query over
   * every target, the oldest first.
   */
  public metricTargetPassAge(opts: { target?: string } & cloudwatch.MetricOptions = {}): cloudwatch.IMetric {
    return this.metricKit.targetPassAge(opts);
  }
}

/** The published package's prebuilt handler, or the entry bundled at synth. */
function handlerCode(props: EcsReconcilerProps) {
  const entry = props.handlerEntry ?? HANDLER_ENTRY;
  return props.handlerEntry === undefined && hasPrebuiltHandler()
    ? { prebuiltDir: PREBUILT_HANDLER_DIR, entry, bundling: HANDLER_BUNDLING }
    : { entry, bundling: HANDLER_BUNDLING };
}

/** The defaults specs that name no network get: the props', or the quick start's. */
function defaultNetwork(props: EcsReconcilerProps, quickStart: QuickStart | undefined) {
  return {
    subnets: props.defaultSubnets ? props.defaultSubnets.map((s) => (typeof s === 'string' ? s : s.subnetId)) : (quickStart?.subnets ?? []),
    securityGroups: props.defaultSecurityGroups
      ? props.defaultSecurityGroups.map((g) => (typeof g === 'string' ? g : g.securityGroupId))
      : (quickStart?.securityGroups ?? []),
    assignPublicIp: props.assignPublicIp ?? Boolean(props.createCluster),
  };
}

/**
 * Refuses clusters of another account or Region (`ecs.Cluster.fromClusterArn` of a foreign ARN,
 * or a cluster of another stack's environment): the function's ECS client, its IAM ARNs and the
 * task definitions it registers all live in the stack's account and Region.
 * @throws EcsReconcilerPropsError naming the cluster and both environments.
 */
function checkClusterEnvironments(stack: Stack, clusters: ReadonlyArray<string | ecs.ICluster>): void {
  const problems: string[] = [];
  for (const c of clusters) {
    if (typeof c === 'string') continue;
    const arn = Token.isUnresolved(c.clusterArn) ? undefined : stack.splitArn(c.clusterArn, ArnFormat.SLASH_RESOURCE_NAME);
    const account = arn?.account ?? c.env.account;
    const region = arn?.region ?? c.env.region;
    const differs = (a: string | undefined, b: string) => a !== undefined && Token.compareStrings(a, b) === TokenComparison.DIFFERENT;
    if (differs(account, stack.account) || differs(region, stack.region)) {
      problems.push(
        `Cluster ${Token.isUnresolved(c.clusterName) ? c.node.path : c.clusterName} is in account ${account} / Region ${region}, but the reconciler runs in ` +
          `${Token.isUnresolved(stack.account) ? 'the stack\'s account' : stack.account} / ${Token.isUnresolved(stack.region) ? 'the stack\'s Region' : stack.region}: ` +
          'deploy a reconciler in that account and Region (one reconciler manages the clusters of its own account and Region).',
      );
    }
  }
  if (problems.length > 0) throw new EcsReconcilerPropsError(problems);
}

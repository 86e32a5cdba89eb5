/**
 * `EcsReconciler`: the whole reconciler as one L3 construct — the spec table, the function and its
 * schedule, least-privilege IAM, the defaults services need (task execution role, log groups),
 * alarms and a dashboard. `EcsReconcilerStack` (./reconciler-stack) wraps it for `cdk deploy`;
 * people embed the construct in their own apps the same way.
 *
 * Alarm thresholds and periods come from `lambda/core/alarms.ts` (one source of truth);
 * environment variable names from `lambda/config.ts` (`ENV`), so construct and parser cannot drift.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Annotations, ArnFormat, Duration, Names, RemovalPolicy, Stack, Token, TokenComparison, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cwActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import type * as efs from 'aws-cdk-lib/aws-efs';
import type * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as eventSources from 'aws-cdk-lib/aws-lambda-event-sources';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as ssm from 'aws-cdk-lib/aws-ssm';
import { Construct } from 'constructs';
import { ENV } from '../lambda/config';
import { DEFAULT_FLEET_SIZE, heapFlag, memoryForFleet } from './function-memory';
import { DEFAULT_FUNCTION_TIMEOUT_SECONDS, alarmDefinitions, lagPeriods, perServiceQuery, perTargetQuery, type AlarmDefinition, type AlarmId } from '../lambda/core/alarms';
import { DEFAULT_METRICS_NAMESPACE, DIMENSION, METRIC } from '../lambda/core/metric-names';
import { ALLOW_LIST, ALLOW_LIST_ENV } from '../lambda/core/allow-lists';
import { DEFAULT_PLAN_OPTIONS } from '../lambda/core/options';
import { OWNER_TAG_KEY } from '../lambda/core/ports';
import { EVENT_RULES, type EventPattern } from '../lambda/core/events';
import { PARTITION_KEY, RESERVED_PARTITIONS } from '../lambda/adapters/dynamo-spec-store';
import { HISTORY_TTL_ATTRIBUTE } from '../lambda/adapters/spec-history';
import { parseTarget } from '../lambda/core/targets';
import { defaultFamilies, ecsPolicyStatements, ecsReadStatements, networkConditions, type EcsPolicyInput, taskDefinitionFamilyArns as familyArnsIn, type ArnScope } from '../lambda/core/ecs-policy';

/** Default name of a target account's `ReconcilerTargetRole` (lib/target-role.ts). */
export const DEFAULT_TARGET_ROLE_NAME = 'ecs-reconciler-target';

/** `arn:<partition of region>:iam::<account>:role/ecs-reconciler-target` (a literal, never a token). */
export function defaultTargetRoleArn(account: string, region: string): string {
  const partition = region.startsWith('cn-') ? 'aws-cn' : region.startsWith('us-gov-') ? 'aws-us-gov' : 'aws';
  return `arn:${partition}:iam::${account}:role/${DEFAULT_TARGET_ROLE_NAME}`;
}

/** Default `LOG_GROUP_PREFIX`: task definitions log to `/ecs-reconciler/<cluster>`. */
export const DEFAULT_LOG_GROUP_PREFIX = '/ecs-reconciler/';

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

/** Props of {@link EcsReconciler}. Everything the function needs is set as environment (ENV names). */
export interface EcsReconcilerProps {
  /**
   * ECS clusters the reconciler manages, by name or as `ICluster`. The function may create, update
   * and delete services only in these clusters (IAM), and prunes owned services without a spec in
   * them. At least one cluster, unless `createCluster` is true.
   * @default - none; required unless `createCluster` is true
   */
  readonly clusters?: ReadonlyArray<string | ecs.ICluster>;
  /**
   * Quick start: create a VPC (two public subnets, no NAT gateway) and a Fargate cluster with the
   * FARGATE and FARGATE_SPOT capacity providers and Container Insights, manage it, and make its
   * subnets and a security group (egress only) the defaults with public IPs assigned.
   * @default false
   */
  readonly createCluster?: boolean;
  /**
   * awsvpc subnets for specs that name none (`DEFAULT_SUBNETS`), as IDs or `ISubnet`s.
   * @default - the quick-start VPC's public subnets with `createCluster`; otherwise none, and
   *   every spec must name its subnets
   */
  readonly defaultSubnets?: ReadonlyArray<string | ec2.ISubnet>;
  /**
   * awsvpc security groups for specs that name none (`DEFAULT_SECURITY_GROUPS`).
   * @default - the quick-start security group with `createCluster`; otherwise none
   */
  readonly defaultSecurityGroups?: ReadonlyArray<string | ec2.ISecurityGroup>;
  /**
   * `assignPublicIp` for specs that do not say (`DEFAULT_ASSIGN_PUBLIC_IP`). Tasks in public
   * subnets without a NAT gateway need it to pull images.
   * @default - true with `createCluster`, otherwise false
   */
  readonly assignPublicIp?: boolean;
  /**
   * Subnets specs may name (`subnets`; `ALLOWED_SUBNETS`). Entries are ids or `ISubnet`s; an entry
   * ending in `*` is a prefix. Allow-lists check only what a spec names, never the defaults above.
   * A spec outside any allow-list gets `NotAllowed` (path, value, list) and no ECS write.
   * `[]` allows nothing.
   * @default - any subnet
   */
  readonly allowedSubnets?: ReadonlyArray<string | ec2.ISubnet>;
  /**
   * Security groups specs may name (`securityGroups`; `ALLOWED_SECURITY_GROUPS`), ids or
   * `ISecurityGroup`s; a trailing `*` is a prefix.
   * @default - any security group
   */
  readonly allowedSecurityGroups?: ReadonlyArray<string | ec2.ISecurityGroup>;
  /**
   * Whether specs may ask for `assignPublicIp: true` (`ALLOWED_ASSIGN_PUBLIC_IP`: `ENABLED,DISABLED`
   * when true, `DISABLED` when false). The default `assignPublicIp` above is not affected.
   * @default - specs may choose either
   */
  readonly allowPublicIp?: boolean;
  /**
   * Target groups specs may attach services to (`loadBalancer.targetGroupArn`,
   * `loadBalancers[].targetGroupArn`; `ALLOWED_TARGET_GROUP_ARNS`): ARNs or `ITargetGroup`s; a
   * trailing `*` is a prefix, e.g. `arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/web-*`.
   * @default - any target group
   */
  readonly allowedTargetGroups?: ReadonlyArray<string | elbv2.ITargetGroup>;
  /**
   * Secrets and parameters specs may reference (`ALLOWED_SECRETS`): every `valueFrom` of `secrets`,
   * of containers' `secrets` and `logConfiguration.secretOptions`, and containers'
   * `repositoryCredentials.credentialsParameter`. Entries are compared with the reference as the
   * spec writes it: exact, or a prefix when they end in `*`, e.g.
   * `arn:aws:ssm:eu-west-1:123456789012:parameter/prod/*`,
   * `arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/*` (specs that name an SSM parameter
   * by name, `/prod/db`, need a name entry, `/prod/*`). An `ISecret` allows its ARN and what
   * follows it (JSON key, version); an `IParameter` its ARN.
   * @default - any secret or parameter
   */
  readonly allowedSecrets?: ReadonlyArray<string | secretsmanager.ISecret | ssm.IParameter>;
  /**
   * EFS file systems specs may mount (`volumes[].efsVolumeConfiguration.fileSystemId`;
   * `ALLOWED_EFS_FILE_SYSTEMS`): ids or `IFileSystem`s.
   * @default - any file system
   */
  readonly allowedEfsFileSystems?: ReadonlyArray<string | efs.IFileSystem>;
  /**
   * Task roles specs may name (`taskRoleArn`). The function may `iam:PassRole` only these (and the
   * execution roles below) to `ecs-tasks.amazonaws.com`; a spec naming another role is rejected by
   * the planner (`ALLOWED_TASK_ROLE_ARNS`; `NONE` when this list is empty), and IAM agrees.
   * @default - none: specs cannot give tasks a role
   */
  readonly allowedTaskRoles?: ReadonlyArray<string | iam.IRole>;
  /**
   * Execution roles specs may name (`executionRoleArn`), in addition to the default execution role
   * this construct creates (which is always allowed).
   * @default - only the default execution role
   */
  readonly allowedExecutionRoles?: ReadonlyArray<string | iam.IRole>;
  /**
   * Where images may come from (`image`, `containers[].image`; `ALLOWED_IMAGE_REGISTRIES`): a
   * registry host such as `public.ecr.aws` or `123456789012.dkr.ecr.eu-west-1.amazonaws.com`
   * (Docker Hub is `docker.io`), or a repository prefix such as `ghcr.io/acme` (that path and
   * below). `[]` allows nothing.
   * @default - any registry
   */
  readonly allowedImageRegistries?: readonly string[];
  /**
   * Time between passes: whole minutes from 1 to 60. Every alarm's period equals it.
   * @default Duration.minutes(1)
   */
  readonly schedule?: Duration;
  /**
   * Events mode (docs/events.md): EventBridge rules deliver ECS's service, deployment and
   * stopped-task events and the CloudTrail events of ECS writes by others into an SQS queue (with a
   * dead-letter queue), and each pass re-reads the services they name plus its share of the fleet
   * (`resyncMinutes`) instead of the whole fleet. False: every pass reads the whole fleet (polling).
   * The CloudTrail events need a trail with management events in the account (EventBridge receives
   * them only then).
   * @default true
   */
  readonly events?: boolean;
  /**
   * Events mode: every service is re-read at least this often (whole minutes, 1 to 1440, at least
   * the schedule's), even if every event is lost (`RESYNC_MINUTES`).
   * @default 10
   */
  readonly resyncMinutes?: number;
  /**
   * Lag tolerated for specs that set no `lagGraceSeconds` (`DEFAULT_LAG_GRACE_SECONDS`): a
   * `Duration`, or whole seconds; 0 to 86400 seconds.
   * @default Duration.seconds(300)
   */
  readonly defaultLagGrace?: Duration | number;
  /**
   * Topic the alarms notify (ALARM and OK). Give this or `alarmEmail`, not both. Its policy and
   * subscriptions are left alone. When it is encrypted with a customer managed KMS key of this
   * app (`masterKey`), that key's policy gets a statement letting CloudWatch use it (without it
   * CloudWatch cannot publish); for an imported key or an imported topic, synth warns what the key
   * policy must allow (`ecs-reconciler:AlarmTopicKeyNotGranted` / `AlarmTopicKeyUnknown`).
   * @default - a new topic (TLS-only), with `alarmEmail` subscribed when given
   */
  readonly alarmTopic?: sns.ITopic;
  /**
   * Email address subscribed to the new alarm topic (confirm the subscription from the mail).
   * @default - no subscription
   */
  readonly alarmEmail?: string;
  /**
   * CloudWatch namespace of the reconciler's metrics (`METRICS_NAMESPACE`); alarms and dashboard
   * query it.
   * @default 'EcsReconciler'
   */
  readonly metricsNamespace?: string;
  /**
   * Delete owned services that have no spec (`PRUNE`).
   * @default true
   */
  readonly prune?: boolean;
  /**
   * Let `adopt: true` take over existing services that carry no owner tag (`ALLOW_ADOPTION`): adds
   * the one IAM permission that tags a service without an owner tag. Off, a spec that adopts gets
   * `NotAllowed` and no ECS write. A service tagged for another owner id is never adopted
   * (`OwnedByAnother`), whatever this says.
   * @default false
   */
  readonly allowAdoption?: boolean;
  /**
   * Task definition families the function may register in, and whose revisions it may give an
   * owned service, besides `<cluster>-*` of each managed cluster (the default family
   * `<cluster>-<service>`): the families specs name with `family:`, and the live families that
   * `ecsr import` keeps for adopted services (`family: shop`). Entries are family names, or
   * prefixes ending in `*`; `['*']` is every family of the account and Region. IAM allows
   * RegisterTaskDefinition only in these families and only with the owner tag in the request, and
   * CreateService / UpdateService only with a task definition of these families (`ecs:task-definition`).
   * @default - `['*']` with `allowAdoption` (an adopted service keeps its own family, whatever
   *   its name; synth warns `ecs-reconciler:AnyFamilyForAdoption`), otherwise none
   */
  readonly allowedFamilies?: readonly string[];
  /**
   * At most this many deletes per pass (`MAX_DELETES_PER_PASS`), whole number 0-1000.
   * @default 5
   */
  readonly maxDeletesPerPass?: number;
  /**
   * Fraction (0, 1] of ECS's documented API rates one pass may use (`API_BUDGET_FRACTION`); the
   * rest is headroom for people, consoles and pipelines (docs/ecs-facts.md §2).
   * @default 0.5
   */
  readonly apiBudgetFraction?: number;
  /**
   * Plan and report without calling ECS writes (`DRY_RUN`).
   * @default false
   */
  readonly dryRun?: boolean;
  /**
   * Value of the owner tag (`ecs-reconciler:owner`) on services this reconciler owns (`OWNER_ID`).
   * Two reconcilers that manage the same cluster need different owner ids.
   * @default 'ecs-reconciler'
   */
  readonly ownerId?: string;
  /**
   * Prefix of the per-cluster log groups task definitions use when a spec names none
   * (`LOG_GROUP_PREFIX`); the groups are `<prefix><cluster>` with the default owner id and
   * `<prefix><owner>/<cluster>` with any other (`<owner>`: {@link ownerLogGroupSegment}), so two
   * reconcilers sharing a cluster (different owner ids) given the same prefix never name the same
   * group. Different prefixes collide only when one is the other plus an owner segment
   * (`/x/b/` beside owner `b` under `/x/`); CloudFormation then refuses the second stack's group.
   * @default '/ecs-reconciler/'
   */
  readonly logGroupPrefix?: string;
  /**
   * Retention of the function's log group and the per-cluster log groups.
   * @default logs.RetentionDays.ONE_MONTH
   */
  readonly logRetention?: logs.RetentionDays;
  /**
   * About how many services the reconciler manages: sizes the function's memory when `memorySize`
   * is not given (up to 5,000: 256 MiB; up to 20,000: 512 MiB; more: 1024 MiB, as measured by
   * `npm run bench`, docs/deploy.md "Memory by fleet size").
   * @default 5000
   */
  readonly fleetSize?: number;
  /**
   * Memory of the function in MiB (128-10240). V8's heap limit is set to half of it
   * (`NODE_OPTIONS=--max-old-space-size`), so that garbage is collected before the function's
   * memory is reached.
   * @default - by `fleetSize` (256 MiB up to 5,000 services)
   */
  readonly memorySize?: number;
  /**
   * Customer managed KMS key for the spec table; the function is granted encrypt/decrypt on it.
   * @default - the AWS managed key `aws/dynamodb` (no key policy to manage, no monthly key fee)
   */
  readonly tableEncryptionKey?: kms.IKey;
  /**
   * Use this spec table instead of creating one. It must have partition key `cluster` and sort key
   * `service`, both strings (checked for a `dynamodb.Table` of this app; an imported table is
   * trusted). Its encryption key, if any, is granted to the function. Give this or `tableProps`.
   * @default - a new table (see `tableProps`)
   */
  readonly existingTable?: dynamodb.ITable;
  /**
   * Overrides for the new spec table (billing, PITR, deletion protection, removal policy,
   * encryption, table name...). The key schema is the reconciler's and cannot be overridden.
   * @default - on-demand, PITR, deletion protection, RETAIN, the AWS managed key
   */
  readonly tableProps?: Omit<Partial<dynamodb.TableProps>, 'partitionKey' | 'sortKey'>;
  /**
   * An existing task execution role for specs that name none, instead of creating one. It needs
   * what AmazonECSTaskExecutionRolePolicy grants; the construct adds write access to the
   * per-cluster log groups when the role is mutable (an imported role with `mutable: false` gets
   * nothing added).
   * @default - a new role with AmazonECSTaskExecutionRolePolicy
   */
  readonly executionRole?: iam.IRole;
  /**
   * Function timeout: 10 s to the schedule's interval (a pass must end before the next starts).
   * The `PassDurationNearTimeout` alarm follows it.
   * @default Duration.seconds(50)
   */
  readonly timeout?: Duration;
  /**
   * X-Ray tracing of the function: `ACTIVE` (the default) traces every pass and its AWS calls with
   * Powertools Tracer (and grants the X-Ray write actions); `DISABLED` turns both off
   * (`POWERTOOLS_TRACE_ENABLED=false`). `PASS_THROUGH` traces only when the caller sampled.
   * @default lambda.Tracing.ACTIVE
   */
  readonly tracing?: lambda.Tracing;
  /**
   * Log format of the function (`TEXT` or `JSON`, Lambda's advanced logging controls). The
   * reconciler's own lines are JSON either way (Powertools Logger).
   * @default - Lambda's default (TEXT)
   */
  readonly loggingFormat?: lambda.LoggingFormat;
  /**
   * Reserve one concurrent execution for the function (`reservedConcurrentExecutions: 1`). Off by
   * default: Lambda refuses a reservation that leaves the account below its minimum unreserved
   * concurrency, which is the whole quota in new accounts (10 or 50), so the quick start would
   * fail to deploy there (docs/ecs-facts.md §9). The pass lease in the table already keeps two passes
   * from acting at once; the reservation only saves the second invocation's few reads. It also
   * caps the fast paths (stream and `EventsFastPath` queue): their invocations are throttled while a
   * scheduled pass runs, and synth warns (`ecs-reconciler:FastPathThrottledByReservation`).
   * @default false
   */
  readonly reserveConcurrency?: boolean;
  /**
   * Create the alarms (and the topic, unless `alarmTopic`). Off: no alarm, no topic, no
   * AlarmsNotifyNobody warning; `alarms` is empty.
   * @default true
   */
  readonly createAlarms?: boolean;
  /**
   * Overrides per alarm (by `AlarmId`): threshold, evaluation periods, datapoints to alarm. Periods
   * stay the schedule's; the local run evaluates the defaults of `lambda/core/alarms.ts`.
   * @default - the definitions of `lambda/core/alarms.ts`
   */
  readonly alarmOverrides?: Partial<Record<AlarmId, AlarmOverride>>;
  /**
   * Create the CloudWatch dashboard.
   * @default true
   */
  readonly createDashboard?: boolean;
  /**
   * TypeScript/JavaScript file exporting `handler`, bundled with esbuild at synth (the app then
   * needs `esbuild` installed). For wrapping the stock handler (e.g. extra middleware); it must
   * keep the stock handler's configuration contract.
   * @default - the published package's prebuilt handler (no bundler at synth); from the
   * repository's sources, `lambda/handler.ts` bundled at synth
   */
  readonly handlerEntry?: string;
  /**
   * The fast path: the spec table's DynamoDB stream (NEW_AND_OLD_IMAGES) triggers a
   * pass restricted to the edited services within seconds; the schedule stays and repairs lost
   * records. With `existingTable`, the table must have a stream (NEW_AND_OLD_IMAGES) and give its
   * `tableStreamArn`.
   * @default true for a new table; for `existingTable`, true when it has a stream
   */
  readonly fastPath?: boolean;
  /**
   * The events fast path: in events mode, the rules for ECS's events and ECS writes also
   * deliver into a second queue, whose event source mapping runs a pass restricted to the services
   * named (those with a spec) within seconds, so a stopped task, a failed deployment or a hand
   * edit shows in the status item while people look. The scheduled pass keeps its own queue and
   * stays the truth. Needs `events`.
   * @default true when `events` is on
   */
  readonly eventsFastPath?: boolean;
  /**
   * Other accounts and Regions this reconciler serves from the same spec table
   * (docs/multi-account.md). Each target's specs have partition key `<name>/<cluster>`; the
   * reconciler's own account keeps plain cluster names (the `default` target). Each target account
   * deploys a `ReconcilerTargetRole` trusting this function's role; `roleArn` defaults to
   * `arn:aws:iam::<account>:role/ecs-reconciler-target`. Giving targets turns `fanOut` on.
   */
  readonly targets?: readonly ReconcilerTarget[];
  /**
   * Fan-out mode: the schedule sends one SQS message per target (the `targets` prop, `#target`
   * items of the table, and `default`), and an event source mapping runs one invocation per
   * message with at most `fanOutConcurrency` at once. Set it to declare targets by table items only.
   * @default true when `targets` is given
   */
  readonly fanOut?: boolean;
  /**
   * Targets reconciled at once (the event source mapping's `maximumConcurrency`, 2-1000).
   * @default 10
   */
  readonly fanOutConcurrency?: number;
  /**
   * Accounts whose ECS events may reach this reconciler (docs/multi-account.md, "ECS events from
   * every target"): the default event bus's resource policy lets them `events:PutEvents` events of
   * source `aws.ecs` (what each target account's `ReconcilerTargetStack` forwards), and the
   * function routes each event to the target of its account and Region. The `targets` prop's
   * accounts are added by themselves; list here the accounts of targets declared by `#target`
   * items. Needs events mode with the events fast path.
   * @default the `targets` prop's accounts
   */
  readonly eventSourceAccounts?: readonly string[];
}

/** One target of {@link EcsReconcilerProps.targets}. */
export interface ReconcilerTarget {
  /** 1-32 lowercase letters, digits and hyphens; the partition key prefix of its specs. */
  readonly name: string;
  /** 12-digit account id. */
  readonly account: string;
  /** Region, e.g. `eu-west-1`. */
  readonly region: string;
  /** ECS clusters managed there; unset: every cluster its specs name. */
  readonly clusters?: readonly string[];
  /** The role to assume there; default `arn:aws:iam::<account>:role/ecs-reconciler-target`. */
  readonly roleArn?: string;
  /** Defaults for the target's specs (its own subnets, security groups, execution role). */
  readonly defaults?: { readonly subnets?: readonly string[]; readonly securityGroups?: readonly string[]; readonly assignPublicIp?: boolean; readonly executionRoleArn?: string };
}

/** What {@link EcsReconcilerProps.alarmOverrides} may change in one alarm. */
export interface AlarmOverride {
  readonly threshold?: number;
  readonly evaluationPeriods?: number;
  readonly datapointsToAlarm?: number;
}

/** Thrown by the {@link EcsReconciler} constructor; one sentence per problem, saying what to change. */
export class EcsReconcilerPropsError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join(' '));
    this.name = 'EcsReconcilerPropsError';
  }
}

const CLUSTER_NAME = /^[A-Za-z0-9_-]{1,255}$/;
const SUBNET_ID = /^subnet-[0-9a-f]+$/;
const SECURITY_GROUP_ID = /^sg-[0-9a-f]+$/;
const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]+$/;
const OWNER_ID = /^[A-Za-z0-9+\-=._:/@ ]{1,256}$/;
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
const REGISTRY = /^[a-z0-9.-]+(:\d+)?(\/[a-z0-9._/-]+)?$/;
const LOG_GROUP_PREFIX = /^[A-Za-z0-9_\-/.#]{1,256}$/;

const isToken = (s: string) => Token.isUnresolved(s);

/**
 * An owner id as one segment of a log group name, injectively (a log group name holds only
 * letters, digits and `_ - / . #`; CloudWatch Logs API Reference, CreateLogGroup): letters, digits,
 * `_`, `-` and `.` stay, every other character an owner id may hold (space `+ = : / @`) becomes `#`
 * and its two upper-case hex digits (`team b@x` -> `team#20b#40x`). An owner id never holds `#`,
 * so two owner ids never give one segment, and a segment never holds `/`.
 * @param ownerId a valid owner id (1-256 of letters, digits, spaces and `+ - = . _ : / @`).
 */
export function ownerLogGroupSegment(ownerId: string): string {
  return ownerId.replace(/[^A-Za-z0-9_.-]/g, (c) => `#${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

/**
 * The prefix task definitions log under, `<logGroupPrefix><cluster>` being the group: the prefix
 * itself for the default owner id (existing deployments keep `/ecs-reconciler/<cluster>`), else
 * `<logGroupPrefix><ownerLogGroupSegment(ownerId)>/`. With one prefix, two owner ids never share a
 * group: a cluster name holds no `/`, so what follows the prefix is either `<cluster>` (default
 * owner) or `<segment>/<cluster>`, and segments are injective.
 */
export function effectiveLogGroupPrefix(logGroupPrefix: string, ownerId: string): string {
  return ownerId === DEFAULT_PLAN_OPTIONS.ownerId ? logGroupPrefix : `${logGroupPrefix}${ownerLogGroupSegment(ownerId)}/`;
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
  /** The schedule's interval: the period of every per-pass metric. */
  private readonly schedulePeriod: Duration;
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
    const stack = Stack.of(this);

    // --- Quick-start VPC and cluster --------------------------------------------------------
    let quickStartSubnets: string[] = [];
    let quickStartSecurityGroups: string[] = [];
    if (props.createCluster) {
      this.vpc = new ec2.Vpc(this, 'Vpc', {
        maxAzs: 2,
        natGateways: 0,
        subnetConfiguration: [{ name: 'public', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24 }],
        // true would add a custom-resource Lambda to the stack just to empty the default group.
        restrictDefaultSecurityGroup: false,
      });
      Validations.of(this.vpc).acknowledge({
        id: 'AwsSolutions-VPC7',
        reason:
          'Quick-start VPC carries only Fargate task traffic; flow logs add cost. Bring your own VPC (defaultSubnets) with flow logs for production.',
      });
      const sg = new ec2.SecurityGroup(this, 'TaskSecurityGroup', {
        vpc: this.vpc,
        description: 'ecs-reconciler quick start: tasks, egress only',
        allowAllOutbound: true,
      });
      this.cluster = new ecs.Cluster(this, 'Cluster', {
        vpc: this.vpc,
        enableFargateCapacityProviders: true,
        containerInsightsV2: ecs.ContainerInsights.ENABLED,
      });
      quickStartSubnets = this.vpc.publicSubnets.map((s) => s.subnetId);
      quickStartSecurityGroups = [sg.securityGroupId];
    }

    this.metricsNamespace = settings.metricsNamespace;
    this.schedulePeriod = Duration.minutes(settings.scheduleMinutes);
    checkClusterEnvironments(stack, props.clusters ?? []);
    const clusterNames = [
      ...(this.cluster ? [this.cluster.clusterName] : []),
      ...(props.clusters ?? []).map((c) => (typeof c === 'string' ? c : c.clusterName)),
    ];
    this.clusterNames = clusterNames;
    const subnets = props.defaultSubnets
      ? props.defaultSubnets.map((s) => (typeof s === 'string' ? s : s.subnetId))
      : quickStartSubnets;
    const securityGroups = props.defaultSecurityGroups
      ? props.defaultSecurityGroups.map((g) => (typeof g === 'string' ? g : g.securityGroupId))
      : quickStartSecurityGroups;
    const assignPublicIp = props.assignPublicIp ?? Boolean(props.createCluster);
    const roleArn = (r: string | iam.IRole) => (typeof r === 'string' ? r : r.roleArn);
    const allowedTaskRoleArns = (props.allowedTaskRoles ?? []).map(roleArn);
    const extraExecutionRoleArns = (props.allowedExecutionRoles ?? []).map(roleArn);

    // --- Spec table -------------------------------------------------------------------------
    if (props.existingTable) {
      checkTableSchema(props.existingTable);
      this.table = props.existingTable;
    } else {
      this.table = new dynamodb.Table(this, 'Specs', {
        billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
        deletionProtection: true,
        removalPolicy: RemovalPolicy.RETAIN,
        ...(props.tableEncryptionKey
          ? { encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED, encryptionKey: props.tableEncryptionKey }
          : { encryption: dynamodb.TableEncryption.AWS_MANAGED }),
        // Spec history items expire by TTL (lambda/adapters/spec-history.ts, docs/history.md).
        timeToLiveAttribute: HISTORY_TTL_ATTRIBUTE,
        ...props.tableProps,
        // The fast path reads both images to tell a spec edit from the reconciler's own status write.
        ...(props.fastPath !== false ? { stream: dynamodb.StreamViewType.NEW_AND_OLD_IMAGES } : {}),
        partitionKey: { name: 'cluster', type: dynamodb.AttributeType.STRING },
        sortKey: { name: 'service', type: dynamodb.AttributeType.STRING },
      });
    }

    this.taskDefinitionCacheTable = new dynamodb.Table(this, 'TaskDefinitionCache', {
      partitionKey: { name: 'arn', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: 'expiresAt',
      // Only a cache of what ECS answers: losing it costs a new container's describes, nothing else.
      removalPolicy: RemovalPolicy.DESTROY,
      ...(props.tableEncryptionKey
        ? { encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED, encryptionKey: props.tableEncryptionKey }
        : { encryption: dynamodb.TableEncryption.AWS_MANAGED }),
    });
    Validations.of(this.taskDefinitionCacheTable).acknowledge({
      id: 'AwsSolutions-DDB3',
      reason: 'A cache of immutable ECS task definition descriptions, rebuilt from ECS when lost: point-in-time recovery would restore nothing of value.',
    });

    // --- Defaults services need: execution role and per-cluster log groups ------------------
    const executionRole = props.executionRole ?? new iam.Role(this, 'TaskExecutionRole', {
      description: 'ecs-reconciler default task execution role (image pulls, awslogs)',
      assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com').withConditions({
        // Confused-deputy protection (Amazon ECS Developer Guide, "Task execution IAM role").
        StringEquals: { 'aws:SourceAccount': stack.account },
        ArnLike: { 'aws:SourceArn': stack.formatArn({ service: 'ecs', resource: '*' }) },
      }),
      managedPolicies: [iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AmazonECSTaskExecutionRolePolicy')],
    });
    if (!props.executionRole) Validations.of(executionRole).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonECSTaskExecutionRolePolicy]',
      reason:
        'AmazonECSTaskExecutionRolePolicy is the AWS-documented policy for Fargate task execution (ECR pulls, awslogs); AWS keeps it current with ECR and Logs API changes.',
    });
    this.executionRole = executionRole;
    const logGroups: Record<string, logs.ILogGroup> = {};
    clusterNames.forEach((name, i) => {
      const group = new logs.LogGroup(this, `TaskLogs${i}`, {
        logGroupName: `${settings.effectiveLogGroupPrefix}${name}`,
        retention: settings.logRetention,
        // Service logs outlive the reconciler: a stack deletion must not erase them.
        removalPolicy: RemovalPolicy.RETAIN,
      });
      group.grantWrite(this.executionRole);
      logGroups[name] = group;
    });
    this.logGroups = logGroups;

    // --- Function ---------------------------------------------------------------------------
    const functionLogs = new logs.LogGroup(this, 'FunctionLogs', {
      retention: settings.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.role = new iam.Role(this, 'FunctionRole', {
      description: 'ecs-reconciler function: ECS in the managed clusters, the spec table, its own logs',
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    });
    functionLogs.grantWrite(this.role);

    const allowedExecutionRoleArns = [this.executionRole.roleArn, ...extraExecutionRoleArns];
    const environment: Record<string, string> = {
      [ENV.specsTable]: this.table.tableName,
      [ENV.taskDefinitionCacheTable]: this.taskDefinitionCacheTable.tableName,
      [ENV.managedClusters]: clusterNames.join(','),
      [ENV.defaultAssignPublicIp]: String(assignPublicIp),
      [ENV.defaultExecutionRoleArn]: this.executionRole.roleArn,
      [ENV.logGroupPrefix]: settings.effectiveLogGroupPrefix,
      [ENV.defaultLagGraceSeconds]: String(settings.defaultLagGraceSeconds),
      [ENV.ownerId]: settings.ownerId,
      [ENV.dryRun]: String(settings.dryRun),
      [ENV.prune]: String(settings.prune),
      [ENV.allowAdoption]: String(settings.allowAdoption),
      [ENV.maxDeletesPerPass]: String(settings.maxDeletesPerPass),
      [ENV.apiBudgetFraction]: String(settings.apiBudgetFraction),
      [ENV.allowedExecutionRoleArns]: allowedExecutionRoleArns.join(','),
      [ENV.metricsNamespace]: settings.metricsNamespace,
      // V8 sizes its heap from the machine's memory: told the function's, it collects in time (lib/function-memory.ts).
      NODE_OPTIONS: `--enable-source-maps ${heapFlag(settings.memorySize)}`,
      // Powertools Tracer: off when the function is not traced, so it never waits for a daemon.
      POWERTOOLS_TRACE_ENABLED: String(settings.tracing !== lambda.Tracing.DISABLED),
      POWERTOOLS_SERVICE_NAME: 'ecs-reconciler',
    };
    if (settings.events) {
      const dlq = new sqs.Queue(this, 'EventsDeadLetters', {
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        retentionPeriod: Duration.days(14),
      });
      this.eventsDeadLetterQueue = dlq;
      this.eventsQueue = new sqs.Queue(this, 'Events', {
        // SSE-SQS: EventBridge can deliver into it without a key policy (a KMS key would need one).
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        // A hint older than the resync interval says nothing the rotation has not re-read.
        retentionPeriod: Duration.minutes(Math.max(60, settings.resyncMinutes * 2)),
        // A message the pass received but could not act on comes back for the next pass.
        visibilityTimeout: Duration.seconds(settings.timeoutSeconds),
        deadLetterQueue: { queue: dlq, maxReceiveCount: 5 },
      });
      environment[ENV.eventsQueueUrl] = this.eventsQueue.queueUrl;
      environment[ENV.resyncMinutes] = String(settings.resyncMinutes);
      environment[ENV.scheduleMinutes] = String(settings.scheduleMinutes);
      // Its own calls are the plan it applied, not news (the rules cannot exclude them: an
      // anything-but pattern would also drop calls of IAM users, which carry no session issuer).
      environment[ENV.eventsIgnorePrincipals] = this.role.roleArn;
    }
    // --- Fan-out: one message per target per tick ------------------------------------------
    const targetDeclarations = (props.targets ?? []).map((t) => ({
      name: t.name,
      account: t.account,
      region: t.region,
      ...(t.clusters ? { clusters: [...t.clusters] } : {}),
      roleArn: t.roleArn ?? defaultTargetRoleArn(t.account, t.region),
      ...(t.defaults ? { defaults: t.defaults } : {}),
    }));
    if (settings.fanOut) {
      const dlq = new sqs.Queue(this, 'FanOutDeadLetters', {
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        retentionPeriod: Duration.days(14),
      });
      this.fanOutDeadLetterQueue = dlq;
      this.fanOutQueue = new sqs.Queue(this, 'FanOut', {
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        // Lambda Developer Guide ("Creating and configuring an Amazon SQS event source mapping"):
        // at least six times the function timeout. A message back after a timed-out invocation is
        // dropped as stale by the function.
        visibilityTimeout: Duration.seconds(settings.timeoutSeconds * SQS_EVENT_SOURCE_VISIBILITY_FACTOR),
        retentionPeriod: Duration.hours(1),
        deadLetterQueue: { queue: dlq, maxReceiveCount: SQS_EVENT_SOURCE_MAX_RECEIVES },
      });
      environment[ENV.fanOutQueueUrl] = this.fanOutQueue.queueUrl;
      environment[ENV.scheduleMinutes] = String(settings.scheduleMinutes);
      if (targetDeclarations.length > 0) environment[ENV.targets] = JSON.stringify(targetDeclarations);
    }
    if (subnets.length > 0) environment[ENV.defaultSubnets] = subnets.join(',');
    if (securityGroups.length > 0) environment[ENV.defaultSecurityGroups] = securityGroups.join(',');
    // IAM lets the function pass only the allow-listed task roles; say the same to the planner, so
    // a spec naming another role gets a clear NotAllowed status instead of AccessDenied from ECS.
    environment[ENV.allowedTaskRoleArns] = allowedTaskRoleArns.length > 0 ? allowedTaskRoleArns.join(',') : 'NONE';
    for (const [name, entries] of allowListEnvironment(props)) environment[name] = entries;
    for (const open of openAllowLists(props)) {
      Annotations.of(this).addWarningV2(`ecs-reconciler:OpenAllowList:${open.prop}`, open.message);
    }

    const functionProps = {
      description: 'ecs-reconciler: one level-triggered reconcile pass over the spec table',
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: settings.memorySize,
      // A pass must end before the next one starts (docs/ecs-facts.md §9).
      timeout: Duration.seconds(settings.timeoutSeconds),
      // Opt-in: the lease prevents overlapping passes (see `reserveConcurrency`).
      ...(props.reserveConcurrency ? { reservedConcurrentExecutions: 1 } : {}),
      tracing: settings.tracing,
      ...(props.loggingFormat ? { loggingFormat: props.loggingFormat } : {}),
      retryAttempts: 0,
      maxEventAge: Duration.seconds(60),
      role: this.role,
      logGroup: functionLogs,
      environment,
    } satisfies Omit<lambda.FunctionProps, 'code' | 'handler'>;
    this.function =
      props.handlerEntry === undefined && hasPrebuiltHandler()
        ? // The published package: the bundle scripts/build-package.mjs made with HANDLER_BUNDLING.
          new lambda.Function(this, 'Function', { ...functionProps, code: lambda.Code.fromAsset(PREBUILT_HANDLER_DIR), handler: 'index.handler' })
        : new nodejs.NodejsFunction(this, 'Function', {
            ...functionProps,
            entry: props.handlerEntry ?? HANDLER_ENTRY,
            handler: 'handler',
            bundling: HANDLER_BUNDLING,
          });
    const tableKey = props.existingTable ? props.existingTable.encryptionKey : props.tableProps?.encryptionKey ?? props.tableEncryptionKey;
    if (tableKey) {
      // What DynamoDB needs to use a customer managed table key on the caller's behalf, and only
      // through DynamoDB (AWS KMS Developer Guide, "How Amazon DynamoDB uses AWS KMS").
      this.role.addToPolicy(
        new iam.PolicyStatement({
          sid: 'SpecTableKeyViaDynamoDb',
          actions: ['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey', 'kms:DescribeKey'],
          resources: [tableKey.keyArn],
          conditions: { StringEquals: { 'kms:ViaService': `dynamodb.${stack.region}.amazonaws.com` } },
        }),
      );
    }
    const families = props.allowedFamilies ? [...props.allowedFamilies] : defaultFamilies(settings.allowAdoption);
    if (!props.allowedFamilies && settings.allowAdoption) {
      Annotations.of(this).addWarningV2(
        'ecs-reconciler:AnyFamilyForAdoption',
        'allowAdoption without allowedFamilies lets the function register task definitions (with the owner tag) in every family of the account and give owned services their revisions, because an adopted service keeps its live family. List the families of the services you adopt and those specs name (allowedFamilies, -c families=shop,billing-*) to narrow it; <cluster>-* is always allowed.',
      );
    }
    for (const f of families) {
      if (!/^([A-Za-z0-9_-]{1,255}\*?|\*)$/.test(f) && !isToken(f)) {
        throw new EcsReconcilerPropsError([`Family "${f}" in \`allowedFamilies\` is not a task definition family: use letters, digits, hyphens and underscores, optionally ending in * (a prefix), or * alone.`]);
      }
    }
    // IAM backs the allow-lists ECS has condition keys for: subnets and public IPs (none exists for
    // security groups; Service Authorization Reference, "Actions, resources, and condition keys
    // for Amazon Elastic Container Service").
    const allowedSubnetIds = props.allowedSubnets?.map((s) => (typeof s === 'string' ? s : s.subnetId));
    const network = networkConditions(allowedSubnetIds, subnets, props.allowPublicIp === undefined ? undefined : props.allowPublicIp ? ['ENABLED', 'DISABLED'] : ['DISABLED'], assignPublicIp);
    if (props.allowPublicIp === false && assignPublicIp) {
      Annotations.of(this).addWarningV2(
        'ecs-reconciler:PublicIpNotBackedByIam',
        'allowPublicIp is false but assignPublicIp (the default for specs that do not say) is true: the planner refuses a spec asking for a public IP, but IAM cannot (it cannot tell the default from a spec\'s choice). Set assignPublicIp: false with subnets that reach your registry (a NAT gateway or VPC endpoints) to have IAM refuse public IPs too.',
      );
    }
    this.grantFunctionPermissions(clusterNames, settings.ownerId, settings.allowAdoption, families, network);
    this.grantTableAndPassRole([...allowedTaskRoleArns, ...allowedExecutionRoleArns], clusterNames, families);

    // --- Schedule ---------------------------------------------------------------------------
    this.rule = new events.Rule(this, 'Schedule', {
      description: `ecs-reconciler pass every ${settings.scheduleMinutes} minute(s)`,
      schedule: events.Schedule.rate(Duration.minutes(settings.scheduleMinutes)),
      targets: [
        new targets.LambdaFunction(this.function, {
          // A missed pass is made up by the next one; never queue stale passes (docs/ecs-facts.md §9).
          retryAttempts: 0,
          maxEventAge: Duration.seconds(60),
        }),
      ],
    });

    // --- Fast path: the table's stream -----------------------------------------------------
    const fastPath = props.fastPath ?? (props.existingTable ? props.existingTable.tableStreamArn !== undefined : true);
    if (fastPath) {
      if (!this.table.tableStreamArn) {
        throw new EcsReconcilerPropsError([
          '`fastPath` needs the spec table\'s stream: give an `existingTable` with a stream (NEW_AND_OLD_IMAGES) and its `tableStreamArn`, or set `fastPath: false`.',
        ]);
      }
      // Where Lambda puts the description of a batch it gave up on (which shard, which sequence
      // numbers: the records themselves stay in the stream for 24 hours).
      const fastPathFailures = new sqs.Queue(this, 'FastPathFailures', {
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        retentionPeriod: Duration.days(14),
      });
      this.fastPathFailureQueue = fastPathFailures;
      Validations.of(fastPathFailures).acknowledge({
        id: 'AwsSolutions-SQS3',
        reason: 'This queue is itself the failure destination of the stream fast path (nothing reads it but people); its messages are alarmed and kept 14 days.',
      });
      // The mapping and its grants by hand: `DynamoEventSource` grants the table key's kms:Decrypt
      // without the kms:ViaService condition the function's other key grant has.
      new lambda.EventSourceMapping(this, 'FastPath', {
        target: this.function,
        eventSourceArn: this.table.tableStreamArn,
        startingPosition: lambda.StartingPosition.LATEST,
        batchSize: 100,
        // Records are only hints: a failed batch is tried twice more, halved on each function
        // error so one bad record cannot hold its neighbours back (splitting spends no retry),
        // then its description goes to `fastPathFailureQueue` (alarmed) and the schedule's pass
        // repairs what it named (Lambda Developer Guide, "Retaining discarded records for a
        // DynamoDB event source in Lambda").
        retryAttempts: 2,
        maxRecordAge: Duration.minutes(5),
        bisectBatchOnError: true,
        onFailure: new eventSources.SqsDlq(fastPathFailures),
        // The reconciler's own items (lease, cursor, prune confirmations) never invoke the function:
        // a scheduled pass writes its lease twice (Lambda Developer Guide, "Using event filtering
        // with a DynamoDB event source": filter on `dynamodb.Keys`; "Not" is `anything-but` a list).
        filters: [lambda.FilterCriteria.filter({ dynamodb: { Keys: { [PARTITION_KEY]: { S: [{ 'anything-but': [...RESERVED_PARTITIONS] }] } } } })],
      });
      // Lambda's event source mapping reads the stream with the function's role (Lambda Developer
      // Guide, "Using AWS Lambda with Amazon DynamoDB", execution role permissions).
      this.role.addToPolicy(
        new iam.PolicyStatement({
          sid: 'SpecTableStreamRead',
          actions: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'],
          resources: [this.table.tableStreamArn],
        }),
      );
      // ListStreams supports no resource-level permission (Service Authorization Reference).
      this.role.addToPolicy(new iam.PolicyStatement({ sid: 'SpecTableStreamList', actions: ['dynamodb:ListStreams'], resources: ['*'] }));
    }
    this.fastPath = fastPath;
    if (this.fanOutQueue) {
      new lambda.EventSourceMapping(this, 'FanOutMapping', {
        target: this.function,
        eventSourceArn: this.fanOutQueue.queueArn,
        // One target per invocation: its own time, lease and failure.
        batchSize: 1,
        maxConcurrency: settings.fanOutConcurrency,
      });
      // The mapping polls with the function's role (Lambda Developer Guide, SQS execution role
      // permissions); the function sends the tick's messages.
      this.role.addToPolicy(
        new iam.PolicyStatement({
          sid: 'FanOutQueue',
          actions: ['sqs:SendMessage', 'sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'],
          resources: [this.fanOutQueue.queueArn],
        }),
      );
      // The target roles: those of the prop, and those named ecs-reconciler-target in any account
      // for targets declared by table items (each trusts this role only).
      this.role.addToPolicy(
        new iam.PolicyStatement({
          sid: 'AssumeTargetRoles',
          actions: ['sts:AssumeRole'],
          resources: [...new Set([...targetDeclarations.map((t) => t.roleArn), `arn:${stack.partition}:iam::*:role/${DEFAULT_TARGET_ROLE_NAME}`])],
        }),
      );
      this.role.addToPolicy(new iam.PolicyStatement({ sid: 'TargetItems', actions: ['dynamodb:Query'], resources: [this.table.tableArn] }));
      const policy = this.role.node.tryFindChild('DefaultPolicy');
      Validations.of(policy ?? this.role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:iam::*:role/${DEFAULT_TARGET_ROLE_NAME}]`,
        reason:
          'Targets may be declared at run time by #target items: the function may assume the role of that one name in any account, and each such role trusts this function role only (ReconcilerTargetRole).',
      });
    }
    // --- Events mode: rules into the queue ------------------------------------------------
    if (props.eventsFastPath && !this.eventsQueue) {
      throw new EcsReconcilerPropsError(['`eventsFastPath` needs events mode: set `events: true` (the default) or leave `eventsFastPath` unset.']);
    }
    if (this.eventsQueue && (props.eventsFastPath ?? true)) {
      // Lambda Developer Guide ("Creating and configuring an Amazon SQS event source mapping"): a
      // visibility timeout of at least six times the function timeout, so a batch held back while
      // the function is throttled or still running is not received again meanwhile, and several
      // receives before the dead-letter queue. The retention outlasts every receive, so a message
      // that keeps failing reaches the dead-letter queue (and its alarm) instead of expiring
      // unseen; a late hint costs one restricted pass over services the schedule reads anyway.
      const fastVisibilitySeconds = settings.timeoutSeconds * SQS_EVENT_SOURCE_VISIBILITY_FACTOR;
      this.eventsFastPathQueue = new sqs.Queue(this, 'EventsFastPath', {
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        retentionPeriod: Duration.seconds(Math.max(settings.scheduleMinutes * 120, fastVisibilitySeconds * SQS_EVENT_SOURCE_MAX_RECEIVES + 60)),
        visibilityTimeout: Duration.seconds(fastVisibilitySeconds),
        deadLetterQueue: { queue: this.eventsDeadLetterQueue as sqs.Queue, maxReceiveCount: SQS_EVENT_SOURCE_MAX_RECEIVES },
      });
      new lambda.EventSourceMapping(this, 'EventsFastPathMapping', {
        target: this.function,
        eventSourceArn: this.eventsFastPathQueue.queueArn,
        // Up to 100 events a batch, gathered for at most a second: a rollout's burst of task
        // events is one restricted pass, not a hundred.
        batchSize: 100,
        maxBatchingWindow: Duration.seconds(1),
        // At most two batches at once (SQS's minimum); they share the pass's lease anyway.
        maxConcurrency: 2,
      });
      // What Lambda's SQS poller needs, on this queue only (Lambda Developer Guide, "Using Lambda
      // with Amazon SQS", execution role permissions).
      this.role.addToPolicy(
        new iam.PolicyStatement({
          sid: 'EventsFastPathQueueRead',
          actions: ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'],
          resources: [this.eventsFastPathQueue.queueArn],
        }),
      );
    }
    this.eventRules = this.eventsQueue ? this.buildEventRules(this.eventsQueue, settings.scheduleMinutes, this.eventsFastPathQueue) : [];
    // Messages are hints the function acts on: only the function's role may send them (the
    // fan-out ticks, the stream's failure records); the event queues take EventBridge's deliveries,
    // which their Allow statements limit to this construct's rules (the only service principal
    // allowed there).
    for (const q of [this.fanOutQueue, this.fanOutDeadLetterQueue, this.fastPathFailureQueue]) if (q) this.acceptMessagesOnlyFromFunction(q, false);
    for (const q of [this.eventsQueue, this.eventsDeadLetterQueue, this.eventsFastPathQueue]) if (q) this.acceptMessagesOnlyFromFunction(q, true);
    if (props.reserveConcurrency && (this.fastPath || this.eventsFastPathQueue)) {
      // One reserved execution is also the fast paths' ceiling: while a scheduled pass runs, Lambda
      // throttles their invocations (Lambda Developer Guide, "Configuring reserved concurrency").
      Annotations.of(this).addWarningV2(
        'ecs-reconciler:FastPathThrottledByReservation',
        'reserveConcurrency caps the function at one invocation, so the fast paths (the table stream and the EventsFastPath queue) are throttled while a scheduled pass runs: an edit or an ECS event can wait for that pass, and a fast-path event throttled three times goes to the events dead-letter queue (the next scheduled pass still reads it). Drop reserveConcurrency (the pass lease already keeps two passes from acting at once), or set fastPath: false and eventsFastPath: false.',
      );
    }
    // --- ECS events from the target accounts -----------------------------------------------
    const eventAccounts = [...new Set([...targetDeclarations.map((t) => t.account), ...(props.eventSourceAccounts ?? [])])].filter((a) => a !== stack.account);
    const badAccounts = (props.eventSourceAccounts ?? []).filter((a) => !/^\d{12}$/.test(a));
    if (badAccounts.length > 0) throw new EcsReconcilerPropsError([`eventSourceAccounts: ${badAccounts.map((a) => `"${a}"`).join(', ')} is not a 12-digit account id.`]);
    if (props.eventSourceAccounts?.length && !this.eventsFastPathQueue) {
      throw new EcsReconcilerPropsError(['`eventSourceAccounts` needs the events fast path: leave `events` and `eventsFastPath` on.']);
    }
    if (this.eventsFastPathQueue && eventAccounts.length > 0) {
      // The receiving bus's resource policy (EventBridge User Guide, "Sending and receiving events
      // between AWS accounts in Amazon EventBridge"; "Permissions for Amazon EventBridge event
      // buses"): the target accounts may put ECS's events on this account's default bus, nothing
      // else; the rules above match them as they match this account's, and the function routes
      // each event to its target by its account and Region.
      this.targetEventsPolicy = new events.CfnEventBusPolicy(this, 'TargetEventsPolicy', {
        eventBusName: 'default',
        statementId: `ecs-reconciler-targets-${Names.uniqueId(this).slice(-24)}`.slice(0, 64),
        statement: {
          Effect: 'Allow',
          Principal: { AWS: eventAccounts.map((a) => `arn:${stack.partition}:iam::${a}:root`) },
          Action: 'events:PutEvents',
          Resource: `arn:${stack.partition}:events:${stack.region}:${stack.account}:event-bus/default`,
          Condition: { StringEquals: { 'events:source': ['aws.ecs'] } },
        },
      });
    }
    if (this.eventsQueue) {
      // Least privilege: receive and delete on this queue only (DeleteMessageBatch needs
      // sqs:DeleteMessage; Amazon SQS Developer Guide, "Amazon SQS API permissions").
      this.role.addToPolicy(
        new iam.PolicyStatement({
          sid: 'EventsQueueReceiveDelete',
          actions: ['sqs:ReceiveMessage', 'sqs:DeleteMessage'],
          resources: [this.eventsQueue.queueArn],
        }),
      );
    }

    // --- Alarms -----------------------------------------------------------------------------
    const createAlarms = props.createAlarms ?? true;
    if (props.alarmTopic) {
      // The user's topic and its policy are theirs: nothing is added to them.
      this.topic = props.alarmTopic;
      this.letCloudWatchUseTopicKey(props.alarmTopic);
    } else if (createAlarms) {
      const topic = new sns.Topic(this, 'AlarmTopic', { displayName: 'ecs-reconciler alarms', enforceSSL: true });
      // enforceSSL makes CDK write an AWS::SNS::TopicPolicy, which replaces the topic's default
      // policy: without an Allow, CloudWatch may not publish and every alarm notifies nobody. Allow
      // CloudWatch alarms of this account and Region only (Amazon SNS Developer Guide, "Amazon SNS
      // access policy examples" / confused-deputy prevention); the TLS Deny still applies to it.
      topic.addToResourcePolicy(
        new iam.PolicyStatement({
          sid: 'CloudWatchAlarmsOfThisAccountPublish',
          principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
          actions: ['sns:Publish'],
          resources: [topic.topicArn],
          conditions: {
            StringEquals: { 'aws:SourceAccount': stack.account },
            ArnLike: { 'aws:SourceArn': stack.formatArn({ service: 'cloudwatch', resource: 'alarm', resourceName: '*', arnFormat: ArnFormat.COLON_RESOURCE_NAME }) },
          },
        }),
      );
      if (props.alarmEmail) topic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail));
      this.topic = topic;
      if (!props.alarmEmail) {
        Annotations.of(this).addWarningV2(
          'ecs-reconciler:AlarmsNotifyNobody',
          'Neither alarmEmail nor alarmTopic is set: the alarms notify a topic nobody is subscribed to. Set alarmEmail (-c alarmEmail=ops@example.com) or alarmTopic, or subscribe to the AlarmTopicArn output.',
        );
      }
    }
    this.alarmDefinitions = createAlarms
      ? withOverrides(
          alarmDefinitions({
            namespace: settings.metricsNamespace,
            defaultLagGraceSeconds: settings.defaultLagGraceSeconds,
            scheduleMinutes: settings.scheduleMinutes,
            functionTimeoutSeconds: settings.timeoutSeconds,
            fanOut: settings.fanOut,
          }),
          props.alarmOverrides ?? {},
        )
      : [];
    const lag = lagPeriods(settings.defaultLagGraceSeconds, settings.scheduleMinutes * 60);
    if (lag.capped && createAlarms) {
      Annotations.of(this).addWarningV2(
        'ecs-reconciler:LagWindowCapped',
        'defaultLagGrace is longer than the 3 hours a Metrics Insights alarm can evaluate: the per-service lag alarm fires after 3 hours; ServicesLaggingBeyondGrace honours the full grace.',
      );
    }
    const action = this.topic ? new cwActions.SnsAction(this.topic) : undefined;
    const alarms: Partial<Record<AlarmId, cloudwatch.Alarm>> = {};
    for (const def of this.alarmDefinitions) {
      const alarm = new cloudwatch.Alarm(this, `${def.id}Alarm`, {
        alarmDescription: def.description,
        metric: this.metricFor(def),
        threshold: def.threshold,
        evaluationPeriods: def.evaluationPeriods,
        datapointsToAlarm: def.datapointsToAlarm,
        comparisonOperator: def.comparisonOperator as cloudwatch.ComparisonOperator,
        treatMissingData: def.treatMissingData as cloudwatch.TreatMissingData,
      });
      if (action) {
        alarm.addAlarmAction(action);
        alarm.addOkAction(action);
      }
      alarms[def.id] = alarm;
    }
    this.alarms = alarms;
    const deadLetterAlarms: Record<string, cloudwatch.Alarm> = {};
    if (createAlarms) {
      for (const queue of [this.eventsDeadLetterQueue, this.fanOutDeadLetterQueue, this.fastPathFailureQueue]) {
        if (!queue) continue;
        const id = queue.node.id;
        // SQS sends this metric every minute while the queue is active; Maximum over the schedule
        // interval sees one message at once (Amazon SQS Developer Guide, "Available CloudWatch
        // metrics for Amazon SQS"). Missing data is an idle queue: not breaching.
        const alarm = new cloudwatch.Alarm(this, `${id}Alarm`, {
          alarmDescription: DEAD_LETTER_ALARM_TEXT[id] ?? `Messages in ${id}: work the reconciler gave up on.`,
          metric: queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: Duration.minutes(Math.max(1, settings.scheduleMinutes)) }),
          threshold: 0,
          evaluationPeriods: 1,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        });
        if (action) {
          alarm.addAlarmAction(action);
          alarm.addOkAction(action);
        }
        deadLetterAlarms[id] = alarm;
      }
    }
    this.deadLetterAlarms = deadLetterAlarms;

    // --- Dashboard --------------------------------------------------------------------------
    if (props.createDashboard ?? true) this.dashboard = this.buildDashboard(settings.metricsNamespace, settings.scheduleMinutes * 60, settings.fanOut);
  }

  /**
   * An alarm topic encrypted with a customer managed KMS key notifies nobody unless the key policy
   * lets CloudWatch use it (Amazon SNS Developer Guide, "Enable compatibility between event
   * sources from AWS services and encrypted topics"): for a key of this app, that statement is
   * added to its policy (kms:Decrypt and kms:GenerateDataKey* for cloudwatch.amazonaws.com, on
   * behalf of this account only); for an imported key, or a topic whose key is unknown (imported
   * by ARN), synth warns what the key policy must allow.
   */
  private letCloudWatchUseTopicKey(topic: sns.ITopic): void {
    const what =
      'its key policy must allow the principal cloudwatch.amazonaws.com kms:Decrypt and kms:GenerateDataKey* (Amazon SNS Developer Guide, "Enable compatibility between event sources from AWS services and encrypted topics"), or every alarm notifies nobody; the AWS managed key alias/aws/sns cannot allow it.';
    const key = topic.masterKey;
    if (key) {
      const added = key.addToResourcePolicy(
        new iam.PolicyStatement({
          sid: 'CloudWatchAlarmsPublishToTheEncryptedAlarmTopic',
          principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
          actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
          resources: ['*'],
          conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
        }),
        true,
      );
      if (!added.statementAdded) {
        Annotations.of(this).addWarningV2('ecs-reconciler:AlarmTopicKeyNotGranted', `alarmTopic is encrypted with a KMS key this app does not manage (${key.keyArn}): ${what}`);
      }
    } else if (!(topic instanceof sns.Topic)) {
      Annotations.of(this).addWarningV2(
        'ecs-reconciler:AlarmTopicKeyUnknown',
        `alarmTopic is imported, so synth cannot tell whether it is encrypted: if it uses a customer managed KMS key, ${what} Import it with sns.Topic.fromTopicAttributes({ topicArn, keyArn }) to have this checked, or acknowledge this warning.`,
      );
    }
  }

  /**
   * Lets `grantee` run what reads specs, their status and the services ECS runs for them:
   * `ecsr get`, `export`, `plan`, `diff`, `describe` and `wait`. On the spec table: Scan,
   * GetItem, Query and DescribeTable (and decrypt with its key); in ECS, the reads of the managed
   * clusters a pass makes (`ecsReadStatements` in lambda/core/ecs-policy.ts: ListServices and
   * ListTasks with `ecs:cluster`, DescribeServices, DescribeTasks, DescribeClusters,
   * ListServiceDeployments and DescribeServiceRevisions there, DescribeTaskDefinition). No write.
   */
  public grantSpecRead(grantee: iam.IGrantable): iam.Grant {
    return this.table.grant(grantee, ...SPEC_READ_ACTIONS).combine(this.grantClusterReads(grantee));
  }

  /**
   * Lets `grantee` write specs as pipelines do (`ecsr apply` with its ECS checks and `--wait`,
   * `ecsr set image`, `ecsr delete`, `ecsr prune --confirm`): what {@link grantSpecRead} allows,
   * plus PutItem, UpdateItem and DeleteItem on the spec table. Whoever holds it chooses what the
   * reconciler deploys, within the allow-lists (docs/deploy.md, "Allow-lists and the trust
   * boundary"); it includes no ECS write. Apply's checks outside ECS (ECR, IAM, Secrets Manager,
   * SSM, EC2, Elastic Load Balancing) need those services' read permissions, which this does not
   * grant: without them each is reported "could not check" and the spec is written all the same.
   */
  public grantSpecWrite(grantee: iam.IGrantable): iam.Grant {
    return this.table
      .grant(grantee, ...SPEC_READ_ACTIONS, 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem')
      .combine(this.grantClusterReads(grantee));
  }

  /** The ECS reads of the managed clusters (`ecsReadStatements`), on `grantee`'s own policy. */
  private grantClusterReads(grantee: iam.IGrantable): iam.Grant {
    return ecsReadStatements(stackArnScope(Stack.of(this)), this.clusterNames)
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

  /**
   * `TaskLag` (desired - running tasks) of one service (`Cluster`, `Service` dimensions), Maximum
   * per schedule interval by default. It has data only while the service lags (and one 0 when it
   * recovers): treat missing data as not breaching. Without a service: a Metrics Insights query
   * over every service, the highest lag first (as the per-service alarm uses).
   */
  public metricTaskLag(opts: { cluster?: string; service?: string } & cloudwatch.MetricOptions = {}): cloudwatch.IMetric {
    const { cluster, service, ...options } = opts;
    if (cluster === undefined || service === undefined) {
      if (cluster !== undefined || service !== undefined) {
        throw new EcsReconcilerPropsError(['metricTaskLag needs both `cluster` and `service`, or neither (every service).']);
      }
      return new cloudwatch.MathExpression({
        expression: perServiceQuery(this.metricsNamespace),
        usingMetrics: {},
        period: options.period ?? this.schedulePeriod,
        label: options.label ?? 'TaskLag per service',
      });
    }
    return new cloudwatch.Metric({
      namespace: this.metricsNamespace,
      metricName: METRIC.taskLag,
      dimensionsMap: { [DIMENSION.cluster]: cluster, [DIMENSION.service]: service },
      statistic: 'Maximum',
      period: this.schedulePeriod,
      ...options,
    });
  }

  /** `PassSucceeded`: 1 per pass that completed, Sum per schedule interval by default. */
  public metricPassSucceeded(options: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: this.metricsNamespace,
      metricName: METRIC.passSucceeded,
      statistic: 'Sum',
      period: this.schedulePeriod,
      ...options,
    });
  }

  /** The CloudWatch metric (or Metrics Insights query) an alarm definition watches. */
  private metricFor(def: AlarmDefinition): cloudwatch.IMetric {
    const period = Duration.seconds(def.periodSeconds);
    switch (def.source.kind) {
      case 'metricsInsights':
        // MathExpression renders `Expression` + `Period` with no `usingMetrics`, which is what
        // AWS::CloudWatch::Alarm takes for a Metrics Insights query alarm.
        return new cloudwatch.MathExpression({
          expression: def.source.query,
          usingMetrics: {},
          period,
          label: `${def.source.metricName} per ${def.source.groupBy.includes(DIMENSION.target) ? 'target' : 'service'}`,
        });
      case 'reconcilerMetric':
        return new cloudwatch.Metric({
          namespace: def.source.namespace,
          metricName: def.source.metricName,
          statistic: def.source.statistic,
          period,
        });
      case 'lambdaMetric':
        return this.function.metric(def.source.metricName, { statistic: def.source.statistic, period });
    }
  }

  /**
   * Least privilege, backing the ownership rule (IAM User Guide; Service Authorization Reference,
   * "Actions, resources, and condition keys for Amazon Elastic Container Service"; the actions and
   * condition keys used are checked against a copy of it in test/fixtures/iam/):
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
  /**
   * The rules of events mode, each delivering the event itself into `queue` (EventBridge adds the
   * queue policy for events.amazonaws.com, scoped to each rule's ARN): ECS's service actions and
   * deployment state changes; stopped tasks of services; the CloudTrail events of the ECS writes
   * in `ECS_WRITE_EVENT_NAMES` (patterns: `EVENT_RULES` in `lambda/core/events.ts`, which the local
   * run's bus matches too); and a heartbeat every schedule interval, which tells the
   * function that the rules deliver (without it the pass polls). Event shapes: docs/events.md.
   */
  private buildEventRules(queue: sqs.Queue, scheduleMinutes: number, fastPathQueue?: sqs.Queue): events.Rule[] {
    // An event EventBridge could not deliver after its retries goes to the events dead-letter
    // queue (alarmed), not nowhere (EventBridge User Guide, "Using dead-letter queues to process
    // undelivered events in EventBridge").
    const deadLetterQueue = this.eventsDeadLetterQueue;
    const target = () => new targets.SqsQueue(queue, { retryAttempts: 2, maxEventAge: Duration.hours(1), deadLetterQueue });
    // The fast path's copy is worth seconds: not retried for long.
    const fastTarget = (q: sqs.Queue) => new targets.SqsQueue(q, { retryAttempts: 2, maxEventAge: Duration.minutes(5), deadLetterQueue });
    return [
      ...Object.entries(EVENT_RULES).map(
        ([id, rule]) =>
          new events.Rule(this, id, {
            description: rule.description,
            eventPattern: cdkEventPattern(rule.pattern),
            targets: [target(), ...(fastPathQueue ? [fastTarget(fastPathQueue)] : [])],
          }),
      ),
      new events.Rule(this, 'EventsHeartbeat', {
        description: 'ecs-reconciler: heartbeat into the events queue (proves the rules deliver)',
        schedule: events.Schedule.rate(Duration.minutes(scheduleMinutes)),
        targets: [target()],
      }),
    ];
  }

  /**
   * Denies `sqs:SendMessage` on `queue` to every principal but the function's role (its
   * `aws:PrincipalArn`, which a session of the role carries as the role's ARN) and, with
   * `services`, AWS service principals (`aws:PrincipalIsAWSService`), which still need the
   * queue's own Allow to send (IAM User Guide, "AWS global condition context keys"). An explicit
   * Deny in the resource policy wins over any identity policy of the account (IAM User Guide,
   * "Policy evaluation logic"), so no other role or user can put a forged message in the queue.
   */
  private acceptMessagesOnlyFromFunction(queue: sqs.Queue, services: boolean): void {
    queue.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: services ? 'SendOnlyByEventBridgeOrTheReconcilerFunction' : 'SendOnlyByTheReconcilerFunction',
        effect: iam.Effect.DENY,
        principals: [new iam.AnyPrincipal()],
        actions: ['sqs:SendMessage'],
        resources: [queue.queueArn],
        conditions: {
          ArnNotEquals: { 'aws:PrincipalArn': this.role.roleArn },
          ...(services ? { BoolIfExists: { 'aws:PrincipalIsAWSService': 'false' } } : {}),
        },
      }),
    );
  }

  private grantFunctionPermissions(clusterNames: string[], ownerId: string, allowAdoption: boolean, families: readonly string[], network: EcsPolicyInput['network']): void {
    for (const statement of ecsReconcilerStatements(Stack.of(this), clusterNames, ownerId, allowAdoption, families, network)) this.role.addToPolicy(statement);
  }

  /** `iam:PassRole`, the spec table, and the cdk-nag acknowledgements of the function policy's wildcards. */
  private grantTableAndPassRole(passableRoleArns: string[], clusterNames: string[], families: readonly string[]): void {
    const stack = Stack.of(this);
    const ecsArn = (resource: string, resourceName: string) => stack.formatArn({ service: 'ecs', resource, resourceName });
    const serviceArns = clusterNames.map((c) => ecsArn('service', `${c}/*`));
    const taskArns = clusterNames.map((c) => ecsArn('task', `${c}/*`));
    const familyArns = taskDefinitionFamilyArns(stack, clusterNames, families);
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'PassAllowListedRolesToEcsTasks',
        actions: ['iam:PassRole'],
        resources: passableRoleArns,
        conditions: { StringEquals: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' } },
      }),
    );
    this.role.addToPolicy(
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
        resources: [this.table.tableArn],
      }),
    );
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'TaskDefinitionCacheTable',
        actions: ['dynamodb:Scan', 'dynamodb:BatchWriteItem'],
        resources: [this.taskDefinitionCacheTable.tableArn],
      }),
    );

    const policy = this.role.node.tryFindChild('DefaultPolicy');
    const ack = (finding: string, reason: string) =>
      Validations.of(policy ?? this.role).acknowledge({ id: `AwsSolutions-IAM5[${finding}]`, reason });
    ack(
      'Resource::*',
      'DescribeTaskDefinition supports no resource-level permissions; ListServices/ListTasks are limited by ecs:cluster; the two Deny statements on "*" only take away (Service Authorization Reference for Amazon ECS).',
    );
    for (const arn of [...serviceArns, ...taskArns]) {
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
    for (const arn of familyArns) {
      ack(
        `Resource::${nagResource(stack.resolve(arn))}`,
        'Task definition families are <cluster>-<service> (or allowedFamilies: explicit and adopted families), services come from specs at run time: registration is limited to those families and needs the owner tag in the request; services may be given only their revisions (ecs:task-definition).',
      );
    }
  }

  private buildDashboard(namespace: string, periodSeconds: number, fanOut: boolean): cloudwatch.Dashboard {
    const period = Duration.seconds(periodSeconds);
    const own = (metricName: string, statistic: string, label?: string) =>
      new cloudwatch.Metric({ namespace, metricName, statistic, period, label });
    const insights = (expression: string, label: string) =>
      new cloudwatch.MathExpression({ expression, usingMetrics: {}, period, label });
    const ciQuery = (metric: string) =>
      `SELECT MAX(${metric}) FROM SCHEMA("ECS/ContainerInsights", ClusterName, ServiceName) GROUP BY ClusterName, ServiceName`;
    const dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      defaultInterval: Duration.hours(3),
    });
    const alarms = Object.values(this.alarms).filter((a): a is cloudwatch.Alarm => a !== undefined);
    if (alarms.length > 0) {
      dashboard.addWidgets(new cloudwatch.AlarmStatusWidget({ title: 'Reconciler alarms', alarms, width: 24, height: 4 }));
    }
    dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Task lag per service (desired - running, tasks)',
        left: [insights(perServiceQuery(namespace), 'TaskLag')],
        width: 12,
        leftYAxis: { min: 0, label: 'tasks' },
      }),
      new cloudwatch.GraphWidget({
        title: 'Desired vs running per service (Container Insights)',
        left: [insights(ciQuery('DesiredTaskCount'), 'desired')],
        right: [insights(ciQuery('RunningTaskCount'), 'running')],
        width: 12,
        leftYAxis: { min: 0, label: 'desired tasks' },
        rightYAxis: { min: 0, label: 'running tasks' },
      }),
    );
    dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Pass duration (ms)',
        left: [own(METRIC.passDuration, 'Average', 'average'), own(METRIC.passDuration, 'Maximum', 'maximum')],
        right: [own(METRIC.passSucceeded, 'Sum', 'passes succeeded')],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Actions per pass',
        left: [
          own(METRIC.actionsApplied, 'Sum', 'applied'),
          own(METRIC.actionsFailed, 'Sum', 'failed'),
          own(METRIC.driftCorrections, 'Sum', 'drift corrected'),
        ],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Specs and services needing attention',
        left: [
          own(METRIC.invalidSpecs, 'Maximum', 'invalid specs'),
          own(METRIC.servicesLaggingBeyondGrace, 'Maximum', 'lagging beyond grace'),
        ],
        width: 8,
      }),
    );
    if (fanOut) {
      // Every target, declared by prop or by item, without redeploying: Metrics Insights by Target.
      const byTarget = (metric: string, stat: string) =>
        `SELECT ${stat}(${metric}) FROM SCHEMA("${namespace}", ${DIMENSION.target}) GROUP BY ${DIMENSION.target} ORDER BY ${stat}() DESC`;
      dashboard.addWidgets(
        new cloudwatch.GraphWidget({
          title: 'Seconds since each target\'s last completed pass',
          left: [insights(perTargetQuery(namespace), 'TargetPassAge')],
          width: 8,
          leftYAxis: { min: 0, label: 'seconds' },
        }),
        new cloudwatch.GraphWidget({
          title: 'Pass duration per target (ms)',
          left: [insights(byTarget(METRIC.passDuration, 'MAX'), 'PassDuration')],
          width: 8,
        }),
        new cloudwatch.GraphWidget({
          title: 'Actions failed per target',
          left: [insights(byTarget(METRIC.actionsFailed, 'SUM'), 'ActionsFailed')],
          width: 8,
        }),
      );
    }
    dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Function',
        left: [
          this.function.metricErrors({ period }),
          this.function.metricThrottles({ period }),
          this.function.metricInvocations({ period }),
        ],
        right: [this.function.metricDuration({ period, statistic: 'Maximum' })],
        width: 24,
      }),
    );
    return dashboard;
  }
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

/**
 * The allow-list variables of the props that are set (`lambda/core/allow-lists.ts`): entries
 * joined by commas, `NONE` for an empty list; unset props set nothing (anything allowed). Task and
 * execution roles are set by the constructor (they also scope `iam:PassRole`).
 */
function allowListEnvironment(props: EcsReconcilerProps): [string, string][] {
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
export function openAllowLists(props: EcsReconcilerProps): { prop: string; message: string }[] {
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
 * Lambda Developer Guide ("Creating and configuring an Amazon SQS event source mapping"): a queue
 * an event source mapping reads has a visibility timeout of at least six times the function
 * timeout; and several receives before the dead-letter queue, so that a throttled or timed-out
 * batch is tried again (the guide's error handling for SQS asks for a `maxReceiveCount` of 5).
 */
const SQS_EVENT_SOURCE_VISIBILITY_FACTOR = 6;
const SQS_EVENT_SOURCE_MAX_RECEIVES = 5;

/** What each dead-letter queue's alarm says (by the queue's construct id). */
const DEAD_LETTER_ALARM_TEXT: Readonly<Record<string, string>> = {
  EventsDeadLetters:
    'Events that never reached a pass: a message of the events queue received 5 times, of the events fast-path queue received 5 times, or an event EventBridge could not deliver. The resync still re-reads every service; read the messages (aws sqs receive-message) to see which services were named, then purge them (only EventBridge may send into the events queues).',
  FanOutDeadLetters:
    'A target pass failed 5 times for one tick: the message names the target. Read it (aws sqs receive-message), check the target in the pass summary and logs (role, ECS permissions), then purge it: the next tick sends a new message (only the function may send into the fan-out queue).',
  FastPathFailures:
    'The spec table stream fast path discarded a batch after its retries: the message names the shard and sequence numbers. The scheduled pass still reconciles those specs; look in the function logs for the error.',
};

/** What `ecsr get` / `export` / `plan` / `diff` / `describe` / `wait` read of the spec table: {@link EcsReconciler.grantSpecRead}. */
const SPEC_READ_ACTIONS = ['dynamodb:Scan', 'dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:DescribeTable'] as const;

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

/**
 * Checks the key schema of an `existingTable` created in this app (`dynamodb.Table`); an imported
 * table cannot be checked and is trusted.
 * @throws EcsReconcilerPropsError when the keys are not `cluster` / `service` strings.
 */
function checkTableSchema(table: dynamodb.ITable): void {
  if (!(table instanceof dynamodb.Table)) return;
  // schemaV2: the key lists (composite keys may have several attributes); `schema()` is deprecated.
  const schema = table.schemaV2();
  const [partitionKey, ...morePartitionKeys] = schema.partitionKeys;
  const [sortKey, ...moreSortKeys] = schema.sortKeys;
  const ok =
    morePartitionKeys.length === 0 &&
    moreSortKeys.length === 0 &&
    partitionKey?.name === 'cluster' &&
    partitionKey.type === dynamodb.AttributeType.STRING &&
    sortKey?.name === 'service' &&
    sortKey.type === dynamodb.AttributeType.STRING;
  if (!ok) {
    const keys = (list: readonly dynamodb.Attribute[]) => list.map((k) => k.name).join(' + ');
    throw new EcsReconcilerPropsError([
      `\`existingTable\` has keys ${keys(schema.partitionKeys)}${schema.sortKeys.length > 0 ? ` / ${keys(schema.sortKeys)}` : ''}: the spec table needs partition key \`cluster\` and sort key \`service\`, both strings.`,
    ]);
  }
}

/** The definitions with `overrides` applied (threshold, evaluation periods, datapoints). */
function withOverrides(defs: readonly AlarmDefinition[], overrides: Partial<Record<AlarmId, AlarmOverride>>): AlarmDefinition[] {
  return defs.map((d) => {
    const o = overrides[d.id];
    if (!o) return d;
    return {
      ...d,
      ...(o.threshold !== undefined ? { threshold: o.threshold } : {}),
      ...(o.evaluationPeriods !== undefined ? { evaluationPeriods: o.evaluationPeriods } : {}),
      ...(o.datapointsToAlarm !== undefined ? { datapointsToAlarm: o.datapointsToAlarm } : {}),
    };
  });
}

interface ResolvedSettings {
  events: boolean;
  resyncMinutes: number;
  metricsNamespace: string;
  defaultLagGraceSeconds: number;
  scheduleMinutes: number;
  ownerId: string;
  prune: boolean;
  allowAdoption: boolean;
  dryRun: boolean;
  maxDeletesPerPass: number;
  apiBudgetFraction: number;
  logGroupPrefix: string;
  /**
   * The prefix task definitions log under: `logGroupPrefix`, plus `<ownerId>/` when the owner id
   * is not the default, so that two reconcilers sharing a cluster (they need different owner ids)
   * create different log groups.
   */
  effectiveLogGroupPrefix: string;
  timeoutSeconds: number;
  tracing: lambda.Tracing;
  logRetention: logs.RetentionDays;
  memorySize: number;
  fanOut: boolean;
  fanOutConcurrency: number;
}

/**
 * Applies defaults and validates props.
 * @throws EcsReconcilerPropsError listing every problem, one sentence each.
 */
/**
 * @param home the stack's account and Region when known at synth (the default target's place).
 */
function resolveSettings(props: EcsReconcilerProps, home: { readonly account?: string; readonly region?: string } = {}): ResolvedSettings {
  const problems: string[] = [];
  const clusters = props.clusters ?? [];
  if (clusters.length === 0 && !props.createCluster) {
    problems.push('Give at least one managed cluster in `clusters`, or set `createCluster: true` for the quick start.');
  }
  const names = clusters.filter((c): c is string => typeof c === 'string');
  for (const name of names) {
    if (!isToken(name) && !CLUSTER_NAME.test(name)) {
      problems.push(
        `Cluster "${name}" is not an ECS cluster name: use 1-255 letters, digits, hyphens and underscores (a name, not an ARN).`,
      );
    }
  }
  const dupes = names.filter((n, i) => !isToken(n) && names.indexOf(n) !== i);
  if (dupes.length > 0) problems.push(`Cluster "${dupes[0]}" is listed twice in \`clusters\`: list each cluster once.`);

  for (const s of props.defaultSubnets ?? []) {
    if (typeof s === 'string' && !isToken(s) && !SUBNET_ID.test(s)) {
      problems.push(`Default subnet "${s}" is not a subnet id: use ids like subnet-0123abcd.`);
    }
  }
  for (const g of props.defaultSecurityGroups ?? []) {
    if (typeof g === 'string' && !isToken(g) && !SECURITY_GROUP_ID.test(g)) {
      problems.push(`Default security group "${g}" is not a security group id: use ids like sg-0123abcd.`);
    }
  }
  const roleStrings = [...(props.allowedTaskRoles ?? []), ...(props.allowedExecutionRoles ?? [])].filter(
    (r): r is string => typeof r === 'string',
  );
  for (const r of roleStrings) {
    if (!isToken(r) && !ROLE_ARN.test(r)) {
      problems.push(`Role "${r}" is not an IAM role ARN: use arn:aws:iam::123456789012:role/NAME (wildcards are not allowed).`);
    }
  }
  const listEntry = (what: string, pattern: RegExp, example: string, entries: ReadonlyArray<unknown> | undefined) => {
    for (const x of entries ?? []) {
      if (typeof x !== 'string' || isToken(x)) continue;
      const plain = x.endsWith('*') ? x.slice(0, -1) : x;
      if (x !== '*' && !pattern.test(plain)) problems.push(`${what} "${x}" is not valid: use ${example} (a trailing * makes it a prefix).`);
    }
  };
  listEntry('Allowed subnet', /^subnet-[0-9a-f]*$/, 'ids like subnet-0123abcd', props.allowedSubnets);
  listEntry('Allowed security group', /^sg-[0-9a-f]*$/, 'ids like sg-0123abcd', props.allowedSecurityGroups);
  listEntry('Allowed target group', /^arn:aws[a-z-]*:elasticloadbalancing:/, 'a target group ARN (arn:aws:elasticloadbalancing:REGION:ACCOUNT:targetgroup/NAME/ID)', props.allowedTargetGroups);
  listEntry('Allowed secret', /^(arn:aws[a-z-]*:(secretsmanager|ssm):|[A-Za-z0-9_.\-/])/, 'a Secrets Manager or SSM parameter ARN, or a parameter name', props.allowedSecrets);
  listEntry('Allowed EFS file system', /^fs-[0-9a-f]*$/, 'ids like fs-0123abcd', props.allowedEfsFileSystems);
  for (const reg of props.allowedImageRegistries ?? []) {
    if (!REGISTRY.test(reg.endsWith('*') ? reg.slice(0, -1) : reg)) {
      problems.push(`Image registry "${reg}" is not a registry host: use a host such as public.ecr.aws or 123456789012.dkr.ecr.eu-west-1.amazonaws.com.`);
    }
  }

  let scheduleMinutes = 1;
  if (props.schedule !== undefined) {
    if (props.schedule.isUnresolved()) {
      problems.push('`schedule` must be a literal Duration, not a token.');
    } else {
      const seconds = props.schedule.toSeconds();
      scheduleMinutes = seconds / 60;
      if (!Number.isInteger(scheduleMinutes) || scheduleMinutes < 1 || scheduleMinutes > 60) {
        problems.push(`\`schedule\` must be whole minutes from 1 to 60 (e.g. Duration.minutes(1)), got ${seconds} seconds.`);
      }
    }
  }

  let defaultLagGraceSeconds = DEFAULT_PLAN_OPTIONS.defaultLagGraceSeconds;
  if (props.defaultLagGrace !== undefined) {
    defaultLagGraceSeconds =
      typeof props.defaultLagGrace === 'number' ? props.defaultLagGrace : props.defaultLagGrace.toSeconds();
    if (!Number.isInteger(defaultLagGraceSeconds) || defaultLagGraceSeconds < 0 || defaultLagGraceSeconds > 86_400) {
      problems.push(
        `\`defaultLagGrace\` must be whole seconds from 0 to 86400 (24 hours), got ${defaultLagGraceSeconds}.`,
      );
    }
  }

  if (props.alarmTopic && props.alarmEmail) {
    problems.push(
      'Give either `alarmTopic` or `alarmEmail`, not both: subscribe the address to your own topic, or drop `alarmTopic` to get a new topic.',
    );
  }
  if (props.alarmEmail !== undefined && !isToken(props.alarmEmail) && !EMAIL.test(props.alarmEmail)) {
    problems.push(`\`alarmEmail\` "${props.alarmEmail}" is not an email address: use e.g. ops@example.com.`);
  }

  const metricsNamespace = props.metricsNamespace ?? DEFAULT_METRICS_NAMESPACE;
  if (!/^[A-Za-z0-9.\-_/#:]{1,255}$/.test(metricsNamespace) || metricsNamespace.startsWith('AWS/')) {
    problems.push(
      `\`metricsNamespace\` "${metricsNamespace}" is not a custom CloudWatch namespace: use 1-255 letters, digits and . - _ / # :, not starting with AWS/.`,
    );
  }

  const maxDeletesPerPass = props.maxDeletesPerPass ?? DEFAULT_PLAN_OPTIONS.maxDeletesPerPass;
  if (!Number.isInteger(maxDeletesPerPass) || maxDeletesPerPass < 0 || maxDeletesPerPass > 1000) {
    problems.push(`\`maxDeletesPerPass\` must be a whole number from 0 to 1000, got ${maxDeletesPerPass}.`);
  }
  const apiBudgetFraction = props.apiBudgetFraction ?? 0.5;
  if (!(apiBudgetFraction > 0 && apiBudgetFraction <= 1)) {
    problems.push(`\`apiBudgetFraction\` must be a fraction above 0 and at most 1 (e.g. 0.5), got ${apiBudgetFraction}.`);
  }
  const ownerId = props.ownerId ?? DEFAULT_PLAN_OPTIONS.ownerId;
  if (!isToken(ownerId) && !OWNER_ID.test(ownerId)) {
    problems.push(`\`ownerId\` "${ownerId}" is not a valid ECS tag value: use 1-256 letters, digits, spaces and + - = . _ : / @.`);
  }
  const logGroupPrefix = props.logGroupPrefix ?? DEFAULT_LOG_GROUP_PREFIX;
  if (!LOG_GROUP_PREFIX.test(logGroupPrefix)) {
    problems.push(`\`logGroupPrefix\` "${logGroupPrefix}" is not a valid log group name prefix: use letters, digits and _ - / . #.`);
  }
  const fleetSize = props.fleetSize ?? DEFAULT_FLEET_SIZE;
  if (!Number.isInteger(fleetSize) || fleetSize < 1) {
    problems.push(`\`fleetSize\` must be a whole number of services, 1 or more, got ${fleetSize}.`);
  }
  const memorySize = props.memorySize ?? memoryForFleet(fleetSize);
  if (!Number.isInteger(memorySize) || memorySize < 128 || memorySize > 10_240) {
    problems.push(`\`memorySize\` must be whole MiB from 128 to 10240, got ${memorySize}.`);
  }
  if (props.createCluster && props.assignPublicIp === false && !props.defaultSubnets) {
    problems.push(
      'The quick-start VPC has no NAT gateway, so its tasks need public IPs to pull images: drop `assignPublicIp: false`, or give `defaultSubnets` with a route to your registry.',
    );
  }

  let timeoutSeconds = DEFAULT_FUNCTION_TIMEOUT_SECONDS;
  if (props.timeout !== undefined) {
    timeoutSeconds = props.timeout.toSeconds();
    if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 10 || timeoutSeconds > Math.min(900, scheduleMinutes * 60)) {
      problems.push(
        `\`timeout\` must be whole seconds from 10 to the schedule's interval (${Math.min(900, scheduleMinutes * 60)} s): a pass must end before the next one starts; got ${timeoutSeconds}.`,
      );
    }
  }
  if (props.existingTable && (props.tableProps || props.tableEncryptionKey)) {
    problems.push('Give `existingTable` or `tableProps` / `tableEncryptionKey`, not both: an existing table keeps its own settings.');
  }
  if (props.tableProps?.encryptionKey && props.tableEncryptionKey) {
    problems.push('Give the table key once: `tableEncryptionKey` or `tableProps.encryptionKey`.');
  }
  if (props.createAlarms === false && props.alarmEmail !== undefined) {
    problems.push('`alarmEmail` has no effect with `createAlarms: false`: drop one of them.');
  }
  for (const [id, o] of Object.entries(props.alarmOverrides ?? {})) {
    if (!o) continue;
    const n = o.evaluationPeriods;
    const m = o.datapointsToAlarm;
    if (n !== undefined && (!Number.isInteger(n) || n < 1)) problems.push(`\`alarmOverrides.${id}.evaluationPeriods\` must be a whole number of at least 1, got ${n}.`);
    if (m !== undefined && (!Number.isInteger(m) || m < 1)) problems.push(`\`alarmOverrides.${id}.datapointsToAlarm\` must be a whole number of at least 1, got ${m}.`);
    if (m !== undefined && n !== undefined && m > n) problems.push(`\`alarmOverrides.${id}\`: datapointsToAlarm (${m}) cannot exceed evaluationPeriods (${n}).`);
    if (o.threshold !== undefined && !Number.isFinite(o.threshold)) problems.push(`\`alarmOverrides.${id}.threshold\` must be a number.`);
  }
  if (isToken(ownerId)) {
    problems.push(
      '`ownerId` must be a literal string, not a token: it names the per-cluster log groups at synth (`<logGroupPrefix><ownerId>/<cluster>`), which must differ from those of any other reconciler sharing a cluster.',
    );
  }

  const resyncMinutes = props.resyncMinutes ?? 10;
  if (!Number.isInteger(resyncMinutes) || resyncMinutes < scheduleMinutes || resyncMinutes > 1440) {
    problems.push(`\`resyncMinutes\` must be whole minutes from the schedule's interval (${scheduleMinutes}) to 1440, got ${resyncMinutes}.`);
  }

  const targetNames = new Set<string>();
  const targetPlaces = new Map<string, string>();
  for (const t of props.targets ?? []) {
    if ([t.name, t.account, t.region, t.roleArn ?? ''].some((v) => isToken(v))) {
      problems.push(`Target "${t.name}": name, account, region and roleArn must be literal strings, not tokens.`);
      continue;
    }
    const parsed = parseTarget(
      { ...t, roleArn: t.roleArn ?? defaultTargetRoleArn(t.account, t.region), ...(t.clusters ? { clusters: [...t.clusters] } : {}) },
      'prop',
    );
    if (!parsed.ok) problems.push(...parsed.errors.map((e) => `${e.charAt(0).toUpperCase()}${e.slice(1)}.`));
    if (targetNames.has(t.name)) problems.push(`Target "${t.name}" is listed twice in \`targets\`.`);
    targetNames.add(t.name);
    // One target per account and Region: two would prune each other's services (one owner tag)
    // and spend the same ECS buckets twice.
    const place = `${t.account}/${t.region}`;
    const holder = home.account !== undefined && home.region !== undefined && place === `${home.account}/${home.region}` ? 'default' : targetPlaces.get(place);
    if (holder !== undefined) {
      problems.push(`Target "${t.name}": account ${t.account} Region ${t.region} is already target "${holder}"'s; one target per account and Region (two would prune each other's services): add its clusters to "${holder}".`);
    } else targetPlaces.set(place, t.name);
  }
  const fanOut = props.fanOut ?? (props.targets ?? []).length > 0;
  if (props.fanOut === false && (props.targets ?? []).length > 0) problems.push('`targets` needs the fan-out: drop `fanOut: false`.');
  if (fanOut && props.reserveConcurrency) {
    problems.push('`reserveConcurrency` caps the function at one invocation, so the fan-out would run one target at a time: drop it (each target has its own lease).');
  }
  const fanOutConcurrency = props.fanOutConcurrency ?? 10;
  if (!Number.isInteger(fanOutConcurrency) || fanOutConcurrency < 2 || fanOutConcurrency > 1000) {
    problems.push(`\`fanOutConcurrency\` must be a whole number from 2 to 1000 (the event source mapping's maximum concurrency), got ${fanOutConcurrency}.`);
  }

  if (problems.length > 0) throw new EcsReconcilerPropsError(problems);
  return {
    fanOut,
    fanOutConcurrency,
    events: props.events ?? true,
    resyncMinutes,
    effectiveLogGroupPrefix: effectiveLogGroupPrefix(logGroupPrefix, ownerId),
    timeoutSeconds,
    tracing: props.tracing ?? lambda.Tracing.ACTIVE,
    metricsNamespace,
    defaultLagGraceSeconds,
    scheduleMinutes,
    ownerId,
    prune: props.prune ?? DEFAULT_PLAN_OPTIONS.prune,
    allowAdoption: props.allowAdoption ?? false,
    dryRun: props.dryRun ?? false,
    maxDeletesPerPass,
    apiBudgetFraction,
    logGroupPrefix,
    logRetention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
    memorySize,
  };
}

/**
 * An EventBridge pattern as JSON (`EVENT_RULES`) in CDK's `EventPattern` shape: `detail-type` is
 * CDK's `detailType`; the other fields, and the operators inside them, render as written.
 */
export function cdkEventPattern(pattern: EventPattern): events.EventPattern {
  const { 'detail-type': detailType, ...rest } = pattern as Record<string, unknown>;
  return { ...rest, ...(detailType !== undefined ? { detailType: detailType as string[] } : {}) } as events.EventPattern;
}

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

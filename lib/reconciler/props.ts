/**
 * The props of `EcsReconciler`, split by feature. Every interface is part of
 * {@link EcsReconcilerProps}, so the props stay one flat object.
 */
import type { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as ecs from 'aws-cdk-lib/aws-ecs';
import type * as efs from 'aws-cdk-lib/aws-efs';
import type * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as ssm from 'aws-cdk-lib/aws-ssm';
import type { AlarmId } from '../../lambda/core/alarms';
/** The managed clusters and the defaults their services get (network, execution role). */
export interface ReconcilerClusterProps {
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
   * An existing task execution role for specs that name none, instead of creating one. It needs
   * what AmazonECSTaskExecutionRolePolicy grants; the construct adds write access to the
   * per-cluster log groups when the role is mutable (an imported role with `mutable: false` gets
   * nothing added).
   * @default - a new role with AmazonECSTaskExecutionRolePolicy
   */
  readonly executionRole?: iam.IRole;
}

/** The per-cluster log groups task definitions use, and the retention of every log group. */
export interface ReconcilerTaskLogProps {
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
   * What happens to the per-cluster task log groups when the construct stops managing them (the
   * stack is destroyed, a cluster is dropped). `RETAIN` keeps the services' logs, and the groups the
   * services that outlive the stack still write to; the groups keep their names, so a new stack
   * with the same `logGroupPrefix` and clusters then needs `createTaskLogGroups: false` (or the
   * groups deleted). `DESTROY` deletes them with the stack, so destroy then deploy just works.
   * @default RemovalPolicy.RETAIN
   */
  readonly taskLogGroupRemovalPolicy?: RemovalPolicy;
  /**
   * Create the per-cluster task log groups. Off: the groups `<logGroupPrefix>[<owner>/]<cluster>`
   * already exist (kept by a destroyed stack with `RETAIN`, or made elsewhere); the construct
   * imports them by name (`logGroups`) and lets the default execution role write to them.
   * @default true
   */
  readonly createTaskLogGroups?: boolean;
}

/** What specs may name (allow-lists: docs/deploy.md, "Allow-lists and the trust boundary"). IAM backs the lists it has condition keys for. */
export interface ReconcilerAllowListProps {
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
}

/** How a pass decides and acts: ownership, pruning, budgets. */
export interface ReconcilerPlanProps {
  /**
   * Lag tolerated for specs that set no `lagGraceSeconds` (`DEFAULT_LAG_GRACE_SECONDS`): a
   * `Duration`, or whole seconds; 0 to 86400 seconds.
   * @default Duration.seconds(300)
   */
  readonly defaultLagGrace?: Duration | number;
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
   * Names of clusters in observe-only mode (`OBSERVE_ONLY_CLUSTERS`): their services' drift and lag
   * are reported in status, metrics (`DriftObserved`, `TaskLag`) and alarms, and nothing is
   * created, updated, tagged or deleted there. A spec's own `observeOnly` wins over its cluster's,
   * so `observeOnly: false` lets the reconciler act on one service at a time. The IAM policy is
   * unchanged (turning the mode off needs no deploy of permissions).
   * @default - none
   */
  readonly observeOnlyClusters?: readonly string[];
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
}

/** What starts a pass: the schedule, the events mode and the two fast paths. */
export interface ReconcilerTriggerProps {
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
}

/** The spec table: created by the construct, or yours. */
export interface ReconcilerSpecTableProps {
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
}

/** The reconciler function: size, time, tracing, logging, code and role. */
export interface ReconcilerFunctionProps {
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
   * TypeScript/JavaScript file exporting `handler`, bundled with esbuild at synth (the app then
   * needs `esbuild` installed). For wrapping the stock handler (e.g. extra middleware); it must
   * keep the stock handler's configuration contract.
   * @default - the published package's prebuilt handler (no bundler at synth); from the
   * repository's sources, `lambda/handler.ts` bundled at synth
   */
  readonly handlerEntry?: string;
  /**
   * Name of the function's IAM role, so that a target account's `ReconcilerTargetRole` can name
   * it before the reconciler is deployed (`reconcilerFunctionRoleArn(account, name)`;
   * docs/multi-account.md). A role name is unique in the account: two reconcilers of one account
   * need different names. Changing it on a deployed stack replaces the role.
   * @default - a name CloudFormation generates (`<stack>-<id>FunctionRole<hash>`)
   */
  readonly functionRoleName?: string;
}

/** Metrics, alarms and the dashboard. */
export interface ReconcilerMonitoringProps {
  /**
   * CloudWatch namespace of the reconciler's metrics (`METRICS_NAMESPACE`); alarms and dashboard
   * query it.
   * @default 'EcsReconciler'
   */
  readonly metricsNamespace?: string;
  /**
   * Create the alarms (and the topic, unless `alarmTopic`). Off: no alarm, no topic, no
   * AlarmsNotifyNobody warning; `alarms` is empty.
   * @default true
   */
  readonly createAlarms?: boolean;
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
}

/** Other accounts and Regions served from the same spec table (docs/multi-account.md). */
export interface ReconcilerFanOutProps {
  /**
   * Other accounts and Regions this reconciler serves from the same spec table
   * (docs/multi-account.md). Each target's specs have partition key `<name>/<cluster>`; the
   * reconciler's own account keeps plain cluster names (the `default` target). Each target account
   * deploys a `ReconcilerTargetRole` trusting this function's role; `roleArn` defaults to
   * `arn:aws:iam::<account>:role/ecs-reconciler-target`. Giving targets turns `fanOut` on.
   * @default - none: the reconciler's own account and Region only
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

/** Props of `EcsReconciler`: every feature's props. Everything the function needs is set as environment (ENV names). */
export interface EcsReconcilerProps
  extends ReconcilerClusterProps,
    ReconcilerTaskLogProps,
    ReconcilerAllowListProps,
    ReconcilerPlanProps,
    ReconcilerTriggerProps,
    ReconcilerSpecTableProps,
    ReconcilerFunctionProps,
    ReconcilerMonitoringProps,
    ReconcilerFanOutProps {}

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

/**
 * `ReconcilerTargetRole`: what a target account needs so that a reconciler in
 * another account can converge its ECS services. One IAM role, deployed in the target account
 * (and used for every Region of it), that:
 * - trusts only the reconciler's function role (its ARN, exactly; no account root, no wildcard),
 *   with `sts:AssumeRole` and nothing else;
 * - carries the same ECS statements as the function's own role (`ecsReconcilerStatements`): the
 *   ownership rule (owner tag on create, writes only to owned services, the owner tag never
 *   changed or removed), scoped to the target's clusters (or every cluster with `clusters` unset);
 * - may pass only the roles listed in `passableRoles` to ECS tasks (`iam:PassRole` with
 *   `iam:PassedToService` = ecs-tasks.amazonaws.com): the task and execution roles of that account
 *   the specs may use. This is the boundary the account-scoped allow-lists are in the reconciler's
 *   own account (docs/multi-account.md).
 *
 * `ReconcilerTargetStack` wraps it for `cdk deploy` into the target account, with the forwarding of
 * the account's ECS events to the reconciler (`ReconcilerTargetEvents`, on by default).
 */
import { Stack, Validations, type StackProps } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { DEFAULT_PLAN_OPTIONS } from '../lambda/core/options';
import { DEFAULT_TARGET_ROLE_NAME, ecsReconcilerStatements, EcsReconcilerPropsError, nagResource } from './ecs-reconciler';
import { ReconcilerTargetEvents } from './target-events';

export { DEFAULT_TARGET_ROLE_NAME };

export interface ReconcilerTargetRoleProps {
  /**
   * ARN of the reconciler's function role (`EcsReconciler.role.roleArn`, e.g.
   * `arn:aws:iam::111111111111:role/Reconciler-FunctionRole...`): the only principal trusted.
   */
  readonly reconcilerRoleArn: string;
  /** ECS clusters of this account the reconciler manages; unset or empty: every cluster. */
  readonly clusters?: readonly string[];
  /** The reconciler's owner id (`ownerId` prop, default `ecs-reconciler`): the owner tag it writes. */
  readonly ownerId?: string;
  /** As the reconciler's `allowAdoption`: tag untagged services with the owner tag (default false). */
  readonly allowAdoption?: boolean;
  /**
   * As the reconciler's `allowedFamilies`: task definition families besides `<cluster>-*` the
   * reconciler may register in and run (default: every family with `allowAdoption`, else none).
   */
  readonly allowedFamilies?: readonly string[];
  /** Task and execution roles of this account the specs may name (iam:PassRole to ECS tasks only). */
  readonly passableRoles?: ReadonlyArray<string | iam.IRole>;
  /** The role's name (default {@link DEFAULT_TARGET_ROLE_NAME}); the target declaration's `roleArn` names it. */
  readonly roleName?: string;
}

/** The target account's role (see the module documentation). */
export class ReconcilerTargetRole extends Construct {
  /** The role; its ARN is the target declaration's `roleArn`. */
  public readonly role: iam.Role;

  constructor(scope: Construct, id: string, props: ReconcilerTargetRoleProps) {
    super(scope, id);
    const problems: string[] = [];
    if (!/^arn:aws[a-z-]*:iam::(\d{12}|\$\{Token\[[^\]]+\]\}):role\/.+$/.test(props.reconcilerRoleArn) && !props.reconcilerRoleArn.includes('${Token[')) {
      problems.push(`reconcilerRoleArn "${props.reconcilerRoleArn}" is not an IAM role ARN: give the reconciler function's role (EcsReconciler.role.roleArn).`);
    }
    for (const c of props.clusters ?? []) {
      if (!/^[A-Za-z0-9_-]{1,255}$/.test(c)) problems.push(`Cluster "${c}" is not an ECS cluster name.`);
    }
    if (problems.length > 0) throw new EcsReconcilerPropsError(problems);
    const stack = Stack.of(this);
    const clusters = props.clusters && props.clusters.length > 0 ? [...props.clusters] : ['*'];
    this.role = new iam.Role(this, 'Role', {
      roleName: props.roleName ?? DEFAULT_TARGET_ROLE_NAME,
      description: 'ecs-reconciler target role: the reconciler function of another account converges ECS services here',
      assumedBy: new iam.ArnPrincipal(props.reconcilerRoleArn),
    });
    for (const statement of ecsReconcilerStatements(stack, clusters, props.ownerId ?? DEFAULT_PLAN_OPTIONS.ownerId, props.allowAdoption ?? false, props.allowedFamilies)) {
      this.role.addToPolicy(statement);
    }
    const passable = (props.passableRoles ?? []).map((r) => (typeof r === 'string' ? r : r.roleArn));
    if (passable.length > 0) {
      this.role.addToPolicy(
        new iam.PolicyStatement({
          sid: 'PassListedRolesToEcsTasks',
          actions: ['iam:PassRole'],
          resources: passable,
          conditions: { StringEquals: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' } },
        }),
      );
    }
    const statements = ecsReconcilerStatements(stack, clusters, props.ownerId ?? DEFAULT_PLAN_OPTIONS.ownerId, props.allowAdoption ?? false, props.allowedFamilies);
    // One acknowledgement per wildcard finding (never the whole rule), as the function's role has.
    const policy = this.role.node.tryFindChild('DefaultPolicy');
    const wildcards = new Set(
      statements
        .filter((st) => st.effect === iam.Effect.ALLOW)
        .flatMap((st) => st.resources)
        .map((r) => nagResource(stack.resolve(r)))
        .filter((r) => r.includes('*')),
    );
    for (const resource of wildcards) {
      Validations.of(policy ?? this.role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::${resource}]`,
        reason:
          resource === '*'
            ? 'DescribeTaskDefinition supports no resource-level permissions; ListServices/ListTasks are limited by ecs:cluster (Service Authorization Reference for Amazon ECS): the same statements as the reconciler function role.'
            : 'Services, tasks, revisions and task definitions are created at run time from specs: limited to the managed clusters in the ARN (every cluster when none are listed), writes need the owner tag; the same statements as the reconciler function role.',
      });
    }
  }
}

export interface ReconcilerTargetStackProps extends StackProps, ReconcilerTargetRoleProps {
  /**
   * Forward this account's ECS events (in this stack's Region) to the reconciler account's event
   * bus, so stopped tasks, failed deployments and hand edits reach the status within seconds
   * ({@link ReconcilerTargetEvents}; docs/multi-account.md). Off: this target is polled only.
   * @default true
   */
  readonly forwardEcsEvents?: boolean;
  /**
   * The reconciler's Region, where its event bus is.
   * @default this stack's Region
   */
  readonly reconcilerRegion?: string;
  /**
   * The reconciler's account.
   * @default the account in `reconcilerRoleArn` (required when that ARN is a token)
   */
  readonly reconcilerAccount?: string;
}

/**
 * A stack holding one {@link ReconcilerTargetRole} and (unless `forwardEcsEvents: false`) the
 * {@link ReconcilerTargetEvents} of its Region, for `cdk deploy` into a target account.
 */
export class ReconcilerTargetStack extends Stack {
  public readonly targetRole: ReconcilerTargetRole;
  /** The forwarding of ECS events to the reconciler (undefined with `forwardEcsEvents: false`). */
  public readonly targetEvents?: ReconcilerTargetEvents;

  constructor(scope: Construct, id: string, props: ReconcilerTargetStackProps) {
    super(scope, id, props);
    this.targetRole = new ReconcilerTargetRole(this, 'TargetRole', props);
    if (props.forwardEcsEvents ?? true) {
      const reconcilerAccount = props.reconcilerAccount ?? /^arn:aws[a-z-]*:iam::(\d{12}):role\//.exec(props.reconcilerRoleArn)?.[1];
      if (!reconcilerAccount) {
        throw new EcsReconcilerPropsError([
          'reconcilerAccount is needed to forward ECS events when reconcilerRoleArn is not a literal role ARN (or set forwardEcsEvents: false).',
        ]);
      }
      this.targetEvents = new ReconcilerTargetEvents(this, 'ForwardEcsEvents', {
        reconcilerAccount,
        ...(props.reconcilerRegion ? { reconcilerRegion: props.reconcilerRegion } : {}),
      });
    }
  }
}

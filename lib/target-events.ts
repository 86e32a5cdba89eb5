/**
 * `ReconcilerTargetEvents`: the target account's half of "ECS events from every
 * target". ECS's events happen on the target account's default event bus, in the target's Region;
 * these rules forward them to the reconciler account's default bus, where the reconciler's own rules
 * deliver them to its events fast path queue and the function routes each one to the target of its
 * `account` and `region` (docs/multi-account.md, "ECS events from every target").
 *
 * As the EventBridge User Guide describes cross-account delivery ("Sending and receiving events
 * between AWS accounts in Amazon EventBridge"; "Sending and receiving events between AWS Regions in
 * Amazon EventBridge" for a reconciler in another Region):
 * - a rule per pattern the reconciler listens for (`EVENT_RULES`: ECS service actions and
 *   deployment state changes, stopped tasks of services, ECS writes recorded by CloudTrail), whose
 *   target is the reconciler account's default event bus;
 * - an IAM role EventBridge assumes for that target ("Using IAM roles to send events to event buses
 *   in other accounts"), trusted by `events.amazonaws.com` from this account only
 *   (`aws:SourceAccount`), allowed `events:PutEvents` on that one bus;
 * - the receiving side (the reconciler's construct) adds a resource policy to its bus letting this
 *   account put `aws.ecs` events (`targets` / `eventSourceAccounts` props).
 *
 * Rules are regional: deploy one per Region the account is a target in (`ReconcilerTargetStack`
 * does it for its own Region).
 */
import { Stack } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { EVENT_RULES } from '../lambda/core/events';
import { cdkEventPattern, EcsReconcilerPropsError } from './ecs-reconciler';

export interface ReconcilerTargetEventsProps {
  /** The reconciler's account (12 digits): where its default event bus is. */
  readonly reconcilerAccount: string;
  /**
   * The reconciler's Region (e.g. `eu-west-1`); EventBridge delivers across Regions too.
   * @default this stack's Region
   */
  readonly reconcilerRegion?: string;
}

/** The forwarding rules and their role (see the module documentation). */
export class ReconcilerTargetEvents extends Construct {
  /** The reconciler account's default event bus: every rule's target. */
  public readonly reconcilerEventBusArn: string;
  /** The role EventBridge assumes to put the events on the reconciler's bus. */
  public readonly role: iam.Role;
  /** One rule per `EVENT_RULES` pattern, by construct id. */
  public readonly rules: readonly events.Rule[];

  constructor(scope: Construct, id: string, props: ReconcilerTargetEventsProps) {
    super(scope, id);
    const problems: string[] = [];
    if (!/^\d{12}$/.test(props.reconcilerAccount)) problems.push(`reconcilerAccount "${props.reconcilerAccount}" is not a 12-digit account id.`);
    if (props.reconcilerRegion !== undefined && !/^[a-z]{2}(-[a-z]+)+-\d$/.test(props.reconcilerRegion)) {
      problems.push(`reconcilerRegion "${props.reconcilerRegion}" is not an AWS Region such as eu-west-1.`);
    }
    if (problems.length > 0) throw new EcsReconcilerPropsError(problems);
    const stack = Stack.of(this);
    this.reconcilerEventBusArn = `arn:${stack.partition}:events:${props.reconcilerRegion ?? stack.region}:${props.reconcilerAccount}:event-bus/default`;
    const bus = events.EventBus.fromEventBusArn(this, 'ReconcilerBus', this.reconcilerEventBusArn);
    this.role = new iam.Role(this, 'PutEventsRole', {
      description: "ecs-reconciler: EventBridge forwards this account's ECS events to the reconciler account's event bus",
      assumedBy: new iam.ServicePrincipal('events.amazonaws.com', { conditions: { StringEquals: { 'aws:SourceAccount': stack.account } } }),
    });
    // The EventBus target grants the role events:PutEvents on that bus, and nothing else.
    this.rules = Object.entries(EVENT_RULES).map(
      ([ruleId, rule]) =>
        new events.Rule(this, ruleId, {
          description: `${rule.description}, forwarded to the reconciler account`,
          eventPattern: cdkEventPattern(rule.pattern),
          // Hints are worth seconds; the scheduled pass repairs a lost one.
          targets: [new targets.EventBus(bus, { role: this.role })],
        }),
    );
  }
}

/** The schedule that invokes the function (an EventBridge rule, every minute by default). */
import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';

/** The rule (`Schedule`) invoking `fn` every `scheduleMinutes`; a missed pass is not retried. */
export function createSchedule(scope: Construct, fn: lambda.IFunction, scheduleMinutes: number): events.Rule {
  return new events.Rule(scope, 'Schedule', {
    description: `ecs-reconciler pass every ${scheduleMinutes} minute(s)`,
    schedule: events.Schedule.rate(Duration.minutes(scheduleMinutes)),
    targets: [
      new targets.LambdaFunction(fn, {
        // A missed pass is made up by the next one; never queue stale passes (docs/ecs-facts.md §9).
        retryAttempts: 0,
        maxEventAge: Duration.seconds(60),
      }),
    ],
  });
}

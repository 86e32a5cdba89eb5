/**
 * The wiring of the CDK app (`bin/app.ts`), kept here so tests can build exactly what `cdk deploy`
 * builds: the stack from context, and cdk-nag's AwsSolutions pack on the whole app (v3 API:
 * `Validations.of(app).addPlugins(...)`; an unacknowledged finding fails the synth).
 */
import { Validations, type App } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
// The package's own entry, as an app that installed it imports it (tsconfig.json's `paths` points it
// at lib/index.ts inside this repository).
import { CONTEXT_KEYS, EcsReconcilerStack, reconcilerPropsFromContext } from 'ecs-reconciler';

/** Default stack name; `-c stackName=...` overrides it. */
export const DEFAULT_STACK_NAME = 'EcsReconciler';

/**
 * Adds the reconciler stack (from the app's context) and the cdk-nag checks to `app`.
 * The stack is environment-agnostic: no account/region lookups, so synth never calls AWS.
 * @throws ContextError when required context is missing or malformed.
 * @throws EcsReconcilerPropsError when the values are invalid for the construct.
 */
export function buildReconcilerApp(app: App): EcsReconcilerStack {
  const get = (key: string): unknown => app.node.tryGetContext(key);
  const stackName = String(get(CONTEXT_KEYS.stackName) ?? DEFAULT_STACK_NAME);
  const stack = new EcsReconcilerStack(app, stackName, {
    description: 'ecs-reconciler: level-triggered reconciler for ECS on Fargate (specs in DynamoDB)',
    reconciler: reconcilerPropsFromContext(get),
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return stack;
}

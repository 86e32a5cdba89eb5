/**
 * The CDK app: `npx cdk deploy -c clusters=web,jobs -c subnets=subnet-a,subnet-b
 * -c securityGroups=sg-1 -c alarmEmail=ops@example.com`, or `npx cdk deploy -c createCluster=true`
 * for the quick start. Context keys: `CONTEXT_KEYS` in lib/reconciler-stack.ts.
 */
import { App } from 'aws-cdk-lib';
import { buildReconcilerApp } from '../lib/app';
import { ContextError, EcsReconcilerPropsError } from 'ecs-reconciler';

const app = new App();
try {
  buildReconcilerApp(app);
} catch (e) {
  if (e instanceof ContextError || e instanceof EcsReconcilerPropsError) {
    // One sentence for the user, no stack trace.
    const message = e.message.startsWith('Cannot build the stack') ? e.message : `Cannot build the stack: ${e.message}`;
    process.stderr.write(`${message}\n`);
    process.exit(1);
  }
  throw e;
}
app.synth();

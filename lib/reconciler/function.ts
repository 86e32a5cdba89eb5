/**
 * The reconciler function, its role and its log group. Everything the function needs is set as
 * environment (`./environment`).
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { ReconcilerFunctionProps } from './props';
import type { ResolvedSettings } from './settings';

/** The function's role and log group, made before the function (its environment names the role). */
export interface FunctionRole {
  readonly role: iam.Role;
  readonly functionLogs: logs.LogGroup;
}

/** The function's log group (`FunctionLogs`, destroyed with the stack) and role (`FunctionRole`), which may write to it. */
export function createFunctionRole(scope: Construct, props: ReconcilerFunctionProps, settings: ResolvedSettings): FunctionRole {
  const functionLogs = new logs.LogGroup(scope, 'FunctionLogs', {
    retention: settings.logRetention,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  const role = new iam.Role(scope, 'FunctionRole', {
    ...(props.functionRoleName !== undefined ? { roleName: props.functionRoleName } : {}),
    description: 'ecs-reconciler function: ECS in the managed clusters, the spec table, its own logs',
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
  });
  functionLogs.grantWrite(role);
  return { role, functionLogs };
}

/** Where the function's code comes from. */
export interface FunctionCode {
  /** The published package's prebuilt handler directory, when it exists and no entry is given. */
  readonly prebuiltDir?: string;
  /** The TypeScript entry bundled at synth otherwise. */
  readonly entry: string;
  readonly bundling: nodejs.BundlingOptions;
}

/**
 * The function (`Function`): Node.js 24, ARM64, the settings' memory and timeout, async
 * invocations not retried and dropped after 60 s (docs/ecs-facts.md §9), no reserved concurrency
 * unless `reserveConcurrency`.
 */
export function createFunction(
  scope: Construct,
  props: ReconcilerFunctionProps,
  settings: ResolvedSettings,
  fn: FunctionRole & { readonly environment: Record<string, string>; readonly code: FunctionCode },
): nodejs.NodejsFunction {
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
    role: fn.role,
    logGroup: fn.functionLogs,
    environment: fn.environment,
  } satisfies Omit<lambda.FunctionProps, 'code' | 'handler'>;
  return fn.code.prebuiltDir !== undefined
    ? // The published package: the bundle scripts/build-package.mjs made with HANDLER_BUNDLING.
      new lambda.Function(scope, 'Function', { ...functionProps, code: lambda.Code.fromAsset(fn.code.prebuiltDir), handler: 'index.handler' })
    : new nodejs.NodejsFunction(scope, 'Function', { ...functionProps, entry: fn.code.entry, handler: 'handler', bundling: fn.code.bundling });
}

/**
 * SDK clients of the reconciler. Region, credentials and endpoints come from the SDK's standard
 * configuration (`AWS_REGION`, `AWS_ENDPOINT_URL`, `AWS_ENDPOINT_URL_ECS`,
 * `AWS_ENDPOINT_URL_DYNAMODB`, ...): nothing is hard-coded, so the same code talks to AWS, the
 * simulator, dynalite and moto.
 */
import { ECSClient, type ECSClientConfig } from '@aws-sdk/client-ecs';
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { addRateLimitMiddleware, EcsRateLimiter, type LimiterTime } from './rate-limiter';

/** SDK standard retry mode with 3 attempts (docs/ecs-facts.md §2): the limiter sits inside the retries. */
export const SDK_RETRY = { retryMode: 'standard', maxAttempts: 3 } as const;

export interface EcsClientOptions {
  /** Fraction (0, 1] of ECS's documented rates this process may use (default 0.5). */
  readonly apiBudgetFraction?: number;
  /** A limiter to share between clients, or to inspect in tests. */
  readonly limiter?: EcsRateLimiter;
  /** Time for a new limiter (tests pass a virtual one). */
  readonly limiterTime?: LimiterTime;
  /** Extra SDK configuration (endpoint, region, credentials); standard config otherwise. */
  readonly clientConfig?: ECSClientConfig;
}

/**
 * An ECSClient with standard retries (3 attempts) and the per-category rate limiter on every call.
 * @returns the client and the limiter it uses.
 */
export function createEcsClient(options: EcsClientOptions = {}): { ecs: ECSClient; limiter: EcsRateLimiter } {
  const limiter = options.limiter ?? new EcsRateLimiter(options.apiBudgetFraction ?? 0.5, options.limiterTime);
  const ecs = new ECSClient({ ...SDK_RETRY, ...options.clientConfig });
  addRateLimitMiddleware(ecs, limiter);
  return { ecs, limiter };
}

/**
 * A DynamoDB document client with standard retries; `undefined` fields of statuses are dropped
 * when marshalled (`removeUndefinedValues`). `convertClassInstanceToMap`: util-dynamodb tells a
 * map from other objects by `value.constructor.name`, so without it a map with a key named
 * `constructor` (an environment variable, a tag) cannot be written at all.
 */
export function createDocumentClient(clientConfig: DynamoDBClientConfig = {}): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(new DynamoDBClient({ ...SDK_RETRY, ...clientConfig }), {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: true },
    unmarshallOptions: { wrapNumbers: false },
  });
}

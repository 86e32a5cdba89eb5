/**
 * Errors at the edge: the adapters translate AWS SDK exceptions into four classes, each
 * decided by a small pure predicate on the error's `name`, `$metadata.httpStatusCode`,
 * `$retryable` and, for Node network failures, `code`.
 *
 * - `throttled`: ECS answered ThrottlingException (or 429, or "Too many concurrent attempts to
 *   create a new revision", docs/ecs-facts.md §1-§2). Retryable: left for the next pass.
 * - `transient`: 5xx, ServerException, timeouts, connection resets. Retryable: next pass.
 * - `not-found`: ServiceNotFoundException, ClusterNotFoundException, ServiceNotActiveException,
 *   ResourceNotFoundException. Terminal for this call.
 * - `denied`: AccessDeniedException (and the other names AWS gives a refused authorization, or
 *   HTTP 403): the caller's IAM does not allow the call. A permission problem, not the spec's:
 *   ECS's own message goes into the service's status, and the call is retried with backoff.
 * - `invalid`: ClientException, InvalidParameterException, ... (any other 4xx). Terminal for this
 *   spec: ECS's own message goes into the service's status.
 *
 * Source: Amazon ECS API reference, "Common Errors" and each action's "Errors" section; AWS SDK for
 * JavaScript v3 service exceptions (`ServiceException.$metadata`, `$retryable`).
 */

/** The class of a failed AWS call, as the pass reports it. */
export type ErrorClass = 'throttled' | 'transient' | 'denied' | 'invalid' | 'not-found';

/** The fields of an SDK v3 error (or a Node system error) the predicates read. */
interface ErrorLike {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  $fault?: unknown;
  $metadata?: { httpStatusCode?: number };
  $retryable?: { throttling?: boolean };
}

function asErrorLike(err: unknown): ErrorLike {
  return typeof err === 'object' && err !== null ? (err as ErrorLike) : {};
}

function nameOf(err: unknown): string {
  const n = asErrorLike(err).name;
  return typeof n === 'string' ? n : '';
}

/** The message of any thrown value, never empty. */
export function errorMessage(err: unknown): string {
  const m = asErrorLike(err).message;
  if (typeof m === 'string' && m.length > 0) return m;
  const n = nameOf(err);
  return n || String(err);
}

function statusOf(err: unknown): number | undefined {
  return asErrorLike(err).$metadata?.httpStatusCode;
}

const THROTTLING_NAMES = new Set([
  'ThrottlingException',
  'Throttling',
  'ThrottledException',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'ProvisionedThroughputExceededException',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
]);

/** RegisterTaskDefinition's burst failure is a ClientException with this text (docs/ecs-facts.md §1). */
const CONCURRENT_REVISION_TEXT = 'too many concurrent attempts';

/** True for throttling answers: retry later, never report as the spec's fault. */
export function isThrottled(err: unknown): boolean {
  const e = asErrorLike(err);
  if (THROTTLING_NAMES.has(nameOf(err))) return true;
  if (e.$retryable?.throttling === true) return true;
  if (statusOf(err) === 429) return true;
  const m = typeof e.message === 'string' ? e.message.toLowerCase() : '';
  return m.includes(CONCURRENT_REVISION_TEXT);
}

const TRANSIENT_NAMES = new Set([
  'ServerException',
  'InternalServerError',
  'InternalFailure',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  'AbortError',
  'NetworkingError',
]);

/** Node system error codes of a broken or refused connection. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
]);

/** True for server-side or network failures that a later pass may not meet again. */
export function isTransient(err: unknown): boolean {
  const e = asErrorLike(err);
  if (TRANSIENT_NAMES.has(nameOf(err))) return true;
  const status = statusOf(err);
  if (status !== undefined && status >= 500) return true;
  if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) return true;
  // A Node system error keeps its code on `cause` when wrapped by the SDK's HTTP handler.
  const cause = (err as { cause?: unknown } | null)?.cause;
  if (cause && cause !== err && typeof (cause as ErrorLike).code === 'string') {
    return NETWORK_CODES.has((cause as ErrorLike).code as string);
  }
  return false;
}

const NOT_FOUND_NAMES = new Set([
  'ServiceNotFoundException',
  'ClusterNotFoundException',
  'ServiceNotActiveException',
  'ResourceNotFoundException',
  'TargetNotFoundException',
]);

/** True when the service, cluster or resource the call names does not exist (or is not ACTIVE). */
export function isNotFound(err: unknown): boolean {
  return NOT_FOUND_NAMES.has(nameOf(err));
}

/**
 * Names AWS answers when the caller's IAM refuses the call: ECS's AccessDeniedException, STS's
 * AccessDenied (AssumeRole), EC2's UnauthorizedOperation (AWS API references, "Common Errors").
 */
const DENIED_NAMES = new Set(['AccessDeniedException', 'AccessDenied', 'UnauthorizedOperation', 'UnauthorizedException', 'NotAuthorized']);

/** True when IAM refused the call (the caller may not do it), not when the request was wrong. */
export function isAccessDenied(err: unknown): boolean {
  if (err instanceof AwsCallError) return err.errorClass === 'denied';
  return DENIED_NAMES.has(nameOf(err)) || statusOf(err) === 403;
}

/** True for ClusterNotFoundException only: the observer reports `exists: false`. */
export function isClusterNotFound(err: unknown): boolean {
  return nameOf(err) === 'ClusterNotFoundException';
}

/** True for DynamoDB's ConditionalCheckFailedException (a condition expression was false). */
export function isConditionalCheckFailed(err: unknown): boolean {
  return nameOf(err) === 'ConditionalCheckFailedException';
}

/**
 * True for errors that are bugs in this program, not answers from AWS: a TypeError or
 * ReferenceError without SDK metadata. The pass lets these escape.
 */
export function isProgrammingError(err: unknown): boolean {
  const e = asErrorLike(err);
  if (e.$metadata !== undefined || e.code !== undefined) return false;
  return err instanceof TypeError || err instanceof ReferenceError || err instanceof SyntaxError;
}

/**
 * Classifies a failed AWS call. Order matters: throttling first (ECS reports the task definition
 * burst limit as a ClientException), then not-found, transient, denied, and every other answer as
 * invalid.
 * An error without HTTP metadata that is not a known network failure counts as transient: the
 * next pass tries again rather than writing a misleading "invalid" into the status. An
 * {@link AwsCallError} keeps the class of the SDK error it wraps.
 */
export function classifyError(err: unknown): ErrorClass {
  // Already wrapped: the class was decided on the SDK error it keeps as cause.
  if (err instanceof AwsCallError) return err.errorClass;
  if (isThrottled(err)) return 'throttled';
  if (isNotFound(err)) return 'not-found';
  if (isTransient(err)) return 'transient';
  if (isAccessDenied(err)) return 'denied';
  const status = statusOf(err);
  if (status !== undefined && status >= 400) return 'invalid';
  const e = asErrorLike(err);
  if (e.$fault === 'client') return 'invalid';
  return 'transient';
}

/** True for the classes a later pass should simply retry. */
export function isRetryableClass(c: ErrorClass): boolean {
  return c === 'throttled' || c === 'transient';
}

/**
 * An AWS call that failed after the SDK's retries, wrapped with what was being done. The original
 * SDK error is kept as `cause`.
 */
export class AwsCallError extends Error {
  override readonly name = 'AwsCallError';
  readonly errorClass: ErrorClass;

  /**
   * @param operation e.g. `ECS DescribeServices cluster=web`.
   * @param cause the SDK error as thrown.
   */
  constructor(
    readonly operation: string,
    cause: unknown,
  ) {
    super(`${operation}: ${nameOf(cause) ? `${nameOf(cause)}: ` : ''}${errorMessage(cause)}`, { cause });
    this.errorClass = classifyError(cause);
  }
}

import { describe, expect, it } from 'vitest';
import {
  ClientException,
  ClusterNotFoundException,
  ECSServiceException,
  InvalidParameterException,
  ServerException,
  ServiceNotActiveException,
  ServiceNotFoundException,
  AccessDeniedException,
} from '@aws-sdk/client-ecs';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  AwsCallError,
  classifyError,
  isConditionalCheckFailed,
  isProgrammingError,
  isRetryableClass,
  type ErrorClass,
} from '../../lambda/adapters/errors';

const meta = (httpStatusCode: number) => ({ httpStatusCode, attempts: 3, totalRetryDelay: 0 });

/** An SDK service exception of a name the ECS model does not list (e.g. ThrottlingException). */
function serviceError(name: string, status: number, extra: Record<string, unknown> = {}): Error {
  return Object.assign(
    new ECSServiceException({ name, $fault: status >= 500 ? 'server' : 'client', $metadata: meta(status), message: `${name} happened` }),
    extra,
  );
}

function networkError(code: string): Error {
  return Object.assign(new Error(`connect ${code} 127.0.0.1:1`), { code });
}

describe('classifyError', () => {
  it.each<{ case: string; err: unknown; expected: ErrorClass }>([
    { case: 'ThrottlingException', err: serviceError('ThrottlingException', 400), expected: 'throttled' },
    { case: 'SDK throttling flag', err: serviceError('SomethingElse', 400, { $retryable: { throttling: true } }), expected: 'throttled' },
    { case: 'HTTP 429', err: serviceError('TooManyRequestsException', 429), expected: 'throttled' },
    {
      case: 'register burst ClientException',
      err: new ClientException({
        $metadata: meta(400),
        message: 'Too many concurrent attempts to create a new revision of the specified family.',
      }),
      expected: 'throttled',
    },
    { case: 'ServerException', err: new ServerException({ $metadata: meta(500), message: 'boom' }), expected: 'transient' },
    { case: 'HTTP 503', err: serviceError('ServiceUnavailable', 503), expected: 'transient' },
    { case: 'connection refused', err: networkError('ECONNREFUSED'), expected: 'transient' },
    { case: 'connection reset on cause', err: Object.assign(new Error('socket hang up'), { cause: networkError('ECONNRESET') }), expected: 'transient' },
    { case: 'SDK timeout', err: Object.assign(new Error('timed out'), { name: 'TimeoutError' }), expected: 'transient' },
    { case: 'ServiceNotFoundException', err: new ServiceNotFoundException({ $metadata: meta(400), message: 'Service not found.' }), expected: 'not-found' },
    { case: 'ClusterNotFoundException', err: new ClusterNotFoundException({ $metadata: meta(400), message: 'Cluster not found.' }), expected: 'not-found' },
    { case: 'ServiceNotActiveException', err: new ServiceNotActiveException({ $metadata: meta(400), message: 'Service was not ACTIVE.' }), expected: 'not-found' },
    { case: 'ClientException', err: new ClientException({ $metadata: meta(400), message: 'Unable to assume role' }), expected: 'invalid' },
    {
      case: 'InvalidParameterException',
      err: new InvalidParameterException({ $metadata: meta(400), message: 'Unable to Start a service that is still Draining.' }),
      expected: 'invalid',
    },
    { case: 'AccessDeniedException', err: new AccessDeniedException({ $metadata: meta(400), message: 'not authorized' }), expected: 'denied' },
    { case: 'STS AccessDenied (403)', err: serviceError('AccessDenied', 403), expected: 'denied' },
    { case: 'unknown 4xx', err: serviceError('UnsupportedFeatureException', 400), expected: 'invalid' },
    { case: 'plain Error without metadata', err: new Error('something odd'), expected: 'transient' },
    {
      case: 'wrapped throttling keeps its class',
      err: new AwsCallError('ECS DescribeTaskDefinition apps-web', serviceError('ThrottlingException', 400)),
      expected: 'throttled',
    },
    {
      case: 'wrapped invalid keeps its class',
      err: new AwsCallError('ECS CreateService', new ClientException({ $metadata: meta(400), message: 'bad role' })),
      expected: 'invalid',
    },
  ])('$case -> $expected', ({ err, expected }) => {
    expect(classifyError(err)).toBe(expected);
  });

  it.each<{ c: ErrorClass; retry: boolean }>([
    { c: 'throttled', retry: true },
    { c: 'transient', retry: true },
    { c: 'invalid', retry: false },
    { c: 'not-found', retry: false },
  ])('$c is retryable: $retry', ({ c, retry }) => {
    expect(isRetryableClass(c)).toBe(retry);
  });
});

describe('small predicates', () => {
  it('recognizes DynamoDB ConditionalCheckFailedException', () => {
    const err = new ConditionalCheckFailedException({ $metadata: meta(400), message: 'The conditional request failed' });
    expect(isConditionalCheckFailed(err)).toBe(true);
    expect(isConditionalCheckFailed(new ClientException({ $metadata: meta(400), message: 'x' }))).toBe(false);
  });

  it.each([
    { case: 'TypeError', err: new TypeError('x is undefined'), bug: true },
    { case: 'ReferenceError', err: new ReferenceError('y'), bug: true },
    { case: 'SDK error', err: new ClientException({ $metadata: meta(400), message: 'x' }), bug: false },
    { case: 'network error', err: networkError('ECONNRESET'), bug: false },
  ])('programming error: $case -> $bug', ({ err, bug }) => {
    expect(isProgrammingError(err)).toBe(bug);
  });
});

describe('AwsCallError', () => {
  it('keeps the SDK error as cause, its class and ECS message', () => {
    const sdk = new InvalidParameterException({ $metadata: meta(400), message: 'subnets can not be empty.' });
    const wrapped = new AwsCallError('ECS CreateService apps/web', sdk);
    expect(wrapped.cause).toBe(sdk);
    expect(wrapped.errorClass).toBe('invalid');
    expect(wrapped.message).toBe('ECS CreateService apps/web: InvalidParameterException: subnets can not be empty.');
  });
});

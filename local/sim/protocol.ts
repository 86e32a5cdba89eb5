/**
 * The AWS JSON 1.1 protocol as ECS speaks it: `POST /` with
 * `X-Amz-Target: AmazonEC2ContainerServiceV20141113.<Action>` and
 * `Content-Type: application/x-amz-json-1.1`; JSON bodies; timestamps as epoch seconds
 * (fractional); errors as `{"__type": "...", "message": "..."}` with the error's HTTP status and an
 * `x-amzn-RequestId` header (AWS SDK "AWS JSON 1.1 protocol" specification).
 */
import { EcsApiError } from './errors';
import { own } from '../../lambda/core/dict';

/** The target prefix of ECS's API version 2014-11-13. */
export const ECS_TARGET_PREFIX = 'AmazonEC2ContainerServiceV20141113';
export const JSON_11_CONTENT_TYPE = 'application/x-amz-json-1.1';

/**
 * The action named by an `X-Amz-Target` header.
 * @throws EcsApiError UnknownOperationException when the header is missing or names another service.
 */
export function actionFromTarget(target: string | undefined): string {
  const prefix = `${ECS_TARGET_PREFIX}.`;
  if (!target || !target.startsWith(prefix) || target.length === prefix.length) {
    throw new EcsApiError('UnknownOperationException', 'The action or operation requested is invalid.');
  }
  return target.slice(prefix.length);
}

/**
 * Parses a request body; an empty body is `{}`.
 * @throws EcsApiError SerializationException for invalid JSON.
 */
export function parseBody(raw: string): unknown {
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw new EcsApiError('SerializationException', 'The request body is not valid JSON.');
  }
}

/** Serializes a response body: Dates become epoch seconds, undefined members are dropped. */
export function encodeBody(value: unknown): string {
  return JSON.stringify(value, function (this: Record<string, unknown>, key: string, v: unknown) {
    const raw = own(this, key);
    if (raw instanceof Date) return raw.getTime() / 1000;
    return v;
  });
}

/** The JSON 1.1 error body. */
export function errorBody(e: EcsApiError): string {
  return JSON.stringify({ __type: e.type, message: e.message });
}

/**
 * A list member of a request body, checked for the JSON type its members must have (the SDK and
 * the CLI never send anything else; a raw request can). ECS answers such a body with
 * SerializationException (400), never a server error.
 * @param of `string` (e.g. DescribeServices `services`) or `structure` (e.g. `containerDefinitions`).
 * @returns the list, or undefined when the member is absent (undefined or null).
 * @throws EcsApiError SerializationException when it is not a list of that type.
 */
export function listMember(input: Record<string, unknown>, key: string, of: 'string' | 'structure'): unknown[] | undefined {
  const v = own(input, key);
  if (v === undefined || v === null) return undefined;
  const ok = (x: unknown) => (of === 'string' ? typeof x === 'string' : x !== null && typeof x === 'object' && !Array.isArray(x));
  if (!Array.isArray(v) || !v.every(ok)) {
    throw new EcsApiError('SerializationException', `${key} must be a list of ${of === 'string' ? 'strings' : 'structures'}.`);
  }
  return v;
}

/**
 * A string member of a request body.
 * @returns the string, or undefined when the member is absent (undefined or null).
 * @throws EcsApiError SerializationException when it is present and not a string.
 */
export function stringMember(input: Record<string, unknown>, key: string): string | undefined {
  const v = own(input, key);
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new EcsApiError('SerializationException', `${key} must be a string.`);
  return v;
}

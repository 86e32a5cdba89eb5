/**
 * How `ecsr` fails: one clear sentence on stderr and a non-zero exit code, never a stack trace
 * unless `--debug` is given. Commands throw {@link CliError} for what the user can fix; every other
 * error (AWS SDK, network, configuration) is turned into a sentence by {@link describeError}.
 */
import { ConfigError } from '../../../lambda/config';
import { AwsCallError, errorMessage } from '../../../lambda/adapters/errors';
import { own } from '../../../lambda/core/dict';

import { EXIT } from './exit-codes';

export { EXIT };

/** An error the user can act on; its message is printed as is. */
export class CliError extends Error {
  override readonly name = 'CliError';

  /**
   * @param message one sentence saying what is wrong and what to do.
   * @param exitCode process exit code (default {@link EXIT.failed}).
   * @param details extra lines printed after the message (e.g. every invalid attribute).
   */
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failed,
    readonly details: readonly string[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The specs table `table` does not exist (a Scan or Get answered ResourceNotFoundException). */
export function missingTableError(table: string, cause?: unknown): CliError {
  return new CliError(`The DynamoDB table "${table}" does not exist: check --table / SPECS_TABLE and the region.`, EXIT.failed, [], cause === undefined ? undefined : { cause });
}

interface ErrorFields {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
  $metadata?: { httpStatusCode?: number };
}

function fields(err: unknown): ErrorFields {
  return typeof err === 'object' && err !== null ? (err as ErrorFields) : {};
}

/** The innermost error: SDK errors are wrapped by AwsCallError, fetch errors carry `cause`. */
function root(err: unknown): unknown {
  let e = err;
  for (let i = 0; i < 5; i++) {
    const f = fields(e);
    if (f.cause === undefined || f.cause === null) break;
    e = f.cause;
  }
  return e;
}

const NETWORK_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

/** The first line of a message, without a trailing period. */
function firstLine(text: string): string {
  return text.split('\n')[0].trim().replace(/\.$/, '');
}

/** Network error code of an error or any error it wraps (AggregateError included). */
function networkCode(err: unknown): string | undefined {
  const seen = new Set<unknown>();
  const stack = [err];
  while (stack.length > 0) {
    const e = stack.pop();
    if (!e || seen.has(e)) continue;
    seen.add(e);
    const f = fields(e);
    if (typeof f.code === 'string' && own(NETWORK_CODES, f.code)) return f.code;
    if (f.cause) stack.push(f.cause);
    if (Array.isArray(f.errors)) stack.push(...f.errors);
  }
  return undefined;
}

/**
 * One sentence for any error a command can meet, e.g.
 * `Cannot connect to AWS (connection refused): check AWS_ENDPOINT_URL and your network.`
 * Known cases: {@link CliError} (as is), configuration errors, missing region or credentials,
 * rejected credentials, access denied, network failures; anything else is `Name: message` (just
 * `message` for a plain `Error`).
 */
export function describeError(err: unknown): string {
  if (err instanceof CliError) return err.message;
  if (err instanceof ConfigError) return `${firstLine(err.message)}.`;
  const inner = root(err);
  const name = typeof fields(inner).name === 'string' ? (fields(inner).name as string) : '';
  const message = firstLine(errorMessage(inner));
  const code = networkCode(err);
  if (code) {
    return `Cannot connect to AWS (${own(NETWORK_CODES, code)}): check AWS_ENDPOINT_URL / AWS_ENDPOINT_URL_DYNAMODB / AWS_ENDPOINT_URL_ECS and your network.`;
  }
  if (/region is missing/i.test(message)) {
    return 'No AWS region is configured: pass --region, set AWS_REGION, or set a region in your AWS profile.';
  }
  if (name === 'CredentialsProviderError' || /could not load credentials/i.test(message)) {
    const profile = process.env.AWS_PROFILE;
    if (profile) {
      return `No AWS credentials were found for profile "${profile}": check that your AWS config or credentials file has it (aws configure list-profiles), or pass another --profile / AWS_PROFILE.`;
    }
    return 'No AWS credentials were found: pass --profile, set AWS_PROFILE, or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.';
  }
  if (['UnrecognizedClientException', 'InvalidSignatureException', 'ExpiredTokenException', 'InvalidClientTokenId'].includes(name)) {
    return `AWS rejected the credentials (${name}): ${message}.`;
  }
  if (name === 'AccessDeniedException' || name === 'AccessDenied') {
    return `Access denied: ${message}.`;
  }
  const what = err instanceof AwsCallError ? `${err.operation} failed: ` : '';
  // A plain `Error` says nothing its message does not; a named one (`ThrottlingException`) does.
  const named = name !== '' && name !== 'Error' && !message.startsWith(name);
  return `${what}${named ? `${name}: ` : ''}${message}.`;
}

/** The exit code for an error: a {@link CliError}'s own, else {@link EXIT.failed}. */
export function exitCodeOf(err: unknown): number {
  return err instanceof CliError ? err.exitCode : EXIT.failed;
}

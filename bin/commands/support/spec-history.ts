/**
 * The CLI's side of the spec history (docs/history.md): who the caller is (STS GetCallerIdentity,
 * which needs no IAM permission), and the revision of each edit ecsr makes, recorded right after
 * its spec write. A failure to record is a warning: the spec was written, and the loop acts on it
 * whatever the history says.
 *
 * Source: AWS Security Token Service API Reference, GetCallerIdentity.
 */
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { SpecHistory, type Revision } from '../../../lambda/adapters/spec-history';
import { errorMessage } from '../../../lambda/adapters/errors';
import type { ServiceKey } from '../../../lambda/core/types';
import { entryId, type SpecTable } from './spec-table';

let cached: Promise<string> | undefined;

/** How long the caller's identity may take (milliseconds): a history write never waits longer for it. */
export const STS_TIMEOUT_MS = 3000;

/**
 * The caller's ARN (`arn:aws:sts::123456789012:assumed-role/Admin/alice`), asked once per
 * process, with one attempt of at most {@link STS_TIMEOUT_MS}; `unknown caller (...)` with the reason when STS
 * does not answer, so that a history write never waits for long.
 */
export function callerArn(): Promise<string> {
  cached ??= (async () => {
    const sts = new STSClient({ maxAttempts: 1, requestHandler: { requestTimeout: STS_TIMEOUT_MS, connectionTimeout: STS_TIMEOUT_MS, throwOnRequestTimeout: true } });
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(new Error(`no answer within ${STS_TIMEOUT_MS / 1000} s`)), STS_TIMEOUT_MS);
    try {
      const out = await sts.send(new GetCallerIdentityCommand({}), { abortSignal: abort.signal });
      return out.Arn ?? 'unknown caller (GetCallerIdentity returned no ARN)';
    } catch (err) {
      return `unknown caller (STS GetCallerIdentity: ${errorMessage(err)})`;
    } finally {
      clearTimeout(timer);
      sts.destroy();
    }
  })();
  return cached;
}

/** The history of `table`'s target, on the table's own client. */
export function historyOf(table: SpecTable): SpecHistory {
  return new SpecHistory(table.doc, table.name, table.target);
}

/**
 * Records the edit `via` (`ecsr apply`...) just made to `key`: the item's spec attributes as they
 * are now (a consistent read) become its revision, by {@link callerArn}. Writes a warning on
 * stderr instead of throwing.
 * @returns the revision, or undefined when it could not be recorded.
 */
export async function recordEdit(table: SpecTable, key: ServiceKey, via: string): Promise<Revision | undefined> {
  try {
    const entry = await table.get(key);
    const by = await callerArn();
    return await historyOf(table).recordCliEdit(key, { writtenBy: by, via, ...(entry ? { spec: entry.item } : {}) });
  } catch (err) {
    process.stderr.write(`warning: ${entryId(table.target, key)} was written, but its history revision was not: ${errorMessage(err)}\n`);
    return undefined;
  }
}

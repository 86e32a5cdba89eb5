/**
 * List paging as ECS does it: `maxResults` with a default and a maximum, and an opaque
 * `nextToken`. Tokens encode the last key returned, so a page stays correct when items are added
 * between calls.
 */
import { invalidParameter } from './errors';

interface TokenBody {
  /** Listing the token belongs to (a token from ListServices is refused by ListTasks). */
  l: string;
  /** Last key returned. */
  k: string;
}

function encode(body: TokenBody): string {
  return Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
}

function decode(token: string, listing: string): TokenBody {
  try {
    const body = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as TokenBody;
    if (body && body.l === listing && typeof body.k === 'string') return body;
  } catch {
    // fall through
  }
  throw invalidParameter('Invalid NextToken.');
}

export interface PageRequest {
  maxResults?: number;
  nextToken?: string;
}

/**
 * One page of `keys` (sorted here, compared as strings; `descending` reverses the order).
 * @param limits ECS's default and maximum page size for the action.
 * @throws EcsApiError InvalidParameterException for maxResults outside 1..max or a bad token.
 */
export function page(
  listing: string,
  keys: string[],
  req: PageRequest,
  limits: { defaultMax: number; max: number; descending?: boolean },
): { items: string[]; nextToken?: string } {
  const max = req.maxResults ?? limits.defaultMax;
  if (!Number.isInteger(max) || max < 1 || max > limits.max) {
    throw invalidParameter(`maxResults must be between 1 and ${limits.max}.`);
  }
  const desc = limits.descending === true;
  const sorted = [...keys].sort();
  if (desc) sorted.reverse();
  let start = 0;
  if (req.nextToken) {
    const { k } = decode(req.nextToken, desc ? `${listing}:desc` : listing);
    start = sorted.findIndex((x) => (desc ? x < k : x > k));
    if (start < 0) start = sorted.length;
  }
  const items = sorted.slice(start, start + max);
  const more = start + max < sorted.length;
  return { items, ...(more ? { nextToken: encode({ l: desc ? `${listing}:desc` : listing, k: items[items.length - 1] }) } : {}) };
}

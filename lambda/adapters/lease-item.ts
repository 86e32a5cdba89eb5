/**
 * The pass lease item read without trusting it: anyone who can write the specs table can
 * write this item, with any attributes of any type. {@link readLeaseItem} never throws; an item it
 * cannot read as a lease counts as expired, and the store takes it over with a condition on its
 * exact current content ({@link exactContentCondition}).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { own } from '../core/dict';
import { describeRawItem } from './attribute-values';

/** Attributes the reconciler writes on the lease item. */
export const LEASE_ATTRIBUTES = ['holder', 'expiresAt', 'expiresAtIso', 'acquiredAt'] as const;

/**
 * A lease expiring later than this after `now` plus the pass's own lease time is not a lease any
 * pass took (a pass's lease lasts at most its own TTL): it counts as malformed, so that a value
 * typed by hand far in the future cannot stop passes for longer than this.
 */
export const LEASE_MAX_AHEAD_SECONDS = 3600;

export type LeaseReading =
  | { readonly valid: true; readonly holder: string; readonly expiresAt: number }
  | { readonly valid: false; readonly problem: string; readonly found: string };

/**
 * Reads a raw lease item (as GetItem returns it).
 * - valid: `holder` a non-empty string (S) and `expiresAt` a number (N) of epoch milliseconds that
 *   is a valid time no later than `now + ttlSeconds + LEASE_MAX_AHEAD_SECONDS`;
 * - otherwise `valid: false` with the problem and a short text of what was found.
 * Never throws.
 */
export function readLeaseItem(item: Record<string, AttributeValue>, now: Date, ttlSeconds: number): LeaseReading {
  const found = describeRawItem(item);
  const bad = (problem: string): LeaseReading => ({ valid: false, problem, found });
  const holder = item.holder;
  const exp = item.expiresAt;
  if (!holder || typeof holder.S !== 'string') return bad('holder is missing or not a string (S)');
  if (holder.S.length === 0) return bad('holder is empty');
  if (!exp || typeof exp.N !== 'string') return bad('expiresAt is missing or not a number (N)');
  const ms = Number(exp.N);
  if (!Number.isFinite(ms) || Number.isNaN(new Date(ms).getTime())) return bad(`expiresAt ${exp.N} is not a time in epoch milliseconds`);
  const limit = now.getTime() + (Math.max(0, ttlSeconds) + LEASE_MAX_AHEAD_SECONDS) * 1000;
  if (ms > limit) {
    return bad(`expiresAt ${new Date(ms).toISOString()} is more than ${LEASE_MAX_AHEAD_SECONDS} s beyond any lease a pass takes`);
  }
  return { valid: true, holder: holder.S, expiresAt: ms };
}

/** Members checked one by one in a map or list before the condition settles for its size. */
const MAX_MEMBERS = 20;
/** Nesting followed before the condition settles for type and size. */
const MAX_DEPTH = 3;

/**
 * A condition that holds only while the item still has the attributes of `item` with the same
 * values (maps and lists member by member, through document paths, up to {@link MAX_DEPTH}
 * levels and {@link MAX_MEMBERS} members; beyond that their type and size), and none of the lease
 * attributes it lacks: the takeover of a malformed lease cannot overwrite a lease another pass
 * wrote in between (a pass rewrites `holder` and `expiresAt`, which are always compared exactly
 * when they are scalars).
 */
export function exactContentCondition(item: Record<string, AttributeValue>): {
  ConditionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues?: Record<string, AttributeValue>;
} {
  const clauses: string[] = [];
  const names = new Map<string, string>();
  const values = new Map<string, AttributeValue>();
  const nameRef = (name: string): string => {
    for (const [ref, n] of names) if (n === name) return ref;
    const ref = `#n${names.size}`;
    names.set(ref, name);
    return ref;
  };
  const valueRef = (v: AttributeValue): string => {
    const ref = `:v${values.size}`;
    values.set(ref, v);
    return ref;
  };
  const typeOf = (v: AttributeValue): string => Object.keys(v).find((k) => own(v as unknown as Record<string, unknown>, k) !== undefined) ?? '?';
  const pin = (path: string, v: AttributeValue, depth: number): void => {
    const type = typeOf(v);
    const raw = v as unknown as Record<string, unknown>;
    if (type === 'S' || type === 'N' || type === 'B' || type === 'BOOL') {
      clauses.push(`${path} = ${valueRef(v)}`);
      return;
    }
    clauses.push(`attribute_type(${path}, ${valueRef({ S: type })})`);
    if (type === 'NULL') return;
    const members = type === 'M' ? Object.entries(raw.M as Record<string, AttributeValue>) : Array.isArray(own(raw, type)) ? (own(raw, type) as unknown[]) : [];
    clauses.push(`size(${path}) = ${valueRef({ N: String(members.length) })}`);
    if (depth >= MAX_DEPTH || members.length > MAX_MEMBERS) return;
    if (type === 'M') for (const [k, x] of members as [string, AttributeValue][]) pin(`${path}.${nameRef(k)}`, x, depth + 1);
    else if (type === 'L') (members as AttributeValue[]).forEach((x, i) => pin(`${path}[${i}]`, x, depth + 1));
    else for (const x of members) clauses.push(`contains(${path}, ${valueRef({ [type.slice(0, 1)]: x } as unknown as AttributeValue)})`);
  };
  for (const [name, value] of Object.entries(item)) {
    if (value && typeof value === 'object') pin(nameRef(name), value, 0);
  }
  for (const name of LEASE_ATTRIBUTES) {
    if (!Object.hasOwn(item, name)) clauses.push(`attribute_not_exists(${nameRef(name)})`);
  }
  return {
    ConditionExpression: clauses.join(' AND '),
    ExpressionAttributeNames: Object.fromEntries(names),
    ...(values.size > 0 ? { ExpressionAttributeValues: Object.fromEntries(values) } : {}),
  };
}

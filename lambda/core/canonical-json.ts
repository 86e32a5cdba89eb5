/**
 * Canonical JSON: one text per value, whatever the key order it was built with. Used for content
 * hashes (the spec hash, `specHash` in `./spec`), so that two equal specs always hash the same,
 * and for `statusChanged` in `./status` (key order does not make a status new).
 */
import { own } from './dict';

/**
 * Serializes `value` as JSON with object keys sorted (UTF-16 code unit order, as
 * `Array.prototype.sort`), no whitespace, and the same omissions as `JSON.stringify`:
 * object properties whose value is `undefined` are left out, `undefined` inside an array becomes
 * `null`. `-0` is written as `0`; a `Date` as its ISO 8601 string; a `Set` as the sorted array of
 * its members' canonical forms (a set has no order).
 *
 * @throws TypeError for values JSON cannot represent faithfully: `undefined` at the top level,
 *   non-finite numbers (NaN, Infinity), bigint, functions, symbols, `Map`, and cycles.
 */
export function canonicalJson(value: unknown): string {
  const text = write(value, new Set());
  if (text === undefined) throw new TypeError('canonicalJson: cannot encode undefined');
  return text;
}

function write(value: unknown, seen: Set<object>): string | undefined {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'undefined':
      return undefined;
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: cannot encode the number ${value}`);
      return Object.is(value, -0) ? '0' : JSON.stringify(value);
    case 'object':
      break;
    default:
      throw new TypeError(`canonicalJson: cannot encode a ${typeof value}`);
  }
  const obj = value as object;
  if (obj instanceof Date) return JSON.stringify(obj.toISOString());
  if (obj instanceof Map) throw new TypeError('canonicalJson: cannot encode a Map (use a plain object)');
  if (seen.has(obj)) throw new TypeError('canonicalJson: cannot encode a cyclic structure');
  seen.add(obj);
  try {
    if (Array.isArray(obj)) {
      return `[${obj.map((x) => write(x, seen) ?? 'null').join(',')}]`;
    }
    if (obj instanceof Set) {
      const members = [...obj].map((x) => write(x, seen) ?? 'null').sort();
      return `[${members.join(',')}]`;
    }
    const parts: string[] = [];
    for (const key of Object.keys(obj).sort()) {
      const text = write(own(obj as Record<string, unknown>, key), seen);
      if (text !== undefined) parts.push(`${JSON.stringify(key)}:${text}`);
    }
    return `{${parts.join(',')}}`;
  } finally {
    seen.delete(obj);
  }
}

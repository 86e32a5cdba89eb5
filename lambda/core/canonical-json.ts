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

/** What {@link compare} found: equal (and both plain), or not known equal. */
const EQUAL = 0;
const DIFFERENT = 1;
type Verdict = typeof EQUAL | typeof DIFFERENT;

/** Nesting followed at most by the structural walk; deeper (or cyclic) values go to {@link canonicalJson}. */
const MAX_DEPTH = 64;

/**
 * Whether `canonicalJson(a) === canonicalJson(b)`, ignoring the top-level member `skipKey` of both
 * (when given, both must be objects, not arrays), without building either text: a structural walk over
 * strings, finite numbers, booleans, null, arrays and objects (own enumerable string keys, key
 * order ignored, an `undefined` member the same as a missing one, `undefined` in an array the
 * same as `null`, `-0` the same as `0`). Any other value met (a Date, Set or Map, a non-finite
 * number, a function, symbol or bigint, an array hole, nesting deeper than 64) is settled by
 * {@link canonicalJson} itself, so the answer and the errors thrown are exactly those of
 * comparing the two texts. Used by `statusChanged` (`./status`) on every service every pass.
 * @throws TypeError as {@link canonicalJson} does, for values it cannot encode.
 */
export function canonicallyEqual(a: unknown, b: unknown, skipKey?: string): boolean {
  if (compare(a, b, 0, skipKey) === EQUAL) return true;
  // A difference is told by the walk only when both values hold nothing canonicalJson would
  // refuse (it throws, where a walk that stopped at the difference would answer) or encode
  // otherwise than the walk reads it.
  if (isPlain(a, 0, skipKey) && isPlain(b, 0, skipKey)) return false;
  return canonicalJson(without(a, skipKey)) === canonicalJson(without(b, skipKey));
}

/** `value` without its own member `key` (a shallow copy), as `const { [key]: _, ...rest } = value`. */
function without(value: unknown, key: string | undefined): unknown {
  if (key === undefined || value === null || typeof value !== 'object') return value;
  const { [key]: _skipped, ...rest } = value as Record<string, unknown>;
  return rest;
}

/** Whether `value` is an Array, or an object compared by its own keys (not a Date, Map or Set). */
function kindOf(value: object): 'array' | 'object' | 'unusual' {
  if (Array.isArray(value)) return 'array';
  if (value instanceof Date || value instanceof Map || value instanceof Set) return 'unusual';
  return 'object';
}

/**
 * EQUAL only when both are plain (see {@link isPlain}) and their canonical texts are equal;
 * DIFFERENT otherwise (a difference, or a value the walk leaves to {@link canonicalJson}).
 */
function compare(a: unknown, b: unknown, depth: number, skipKey?: string): Verdict {
  if (typeof a !== 'object' || typeof b !== 'object') {
    // Strings, booleans and finite numbers are equal when identical (-0 === 0, as canonicalJson
    // writes both 0); anything else (undefined, non-finite, function, symbol, bigint) is left over.
    const t = typeof a;
    return a === b && (t === 'string' || t === 'boolean' || (t === 'number' && Number.isFinite(a))) ? EQUAL : DIFFERENT;
  }
  if (a === null || b === null) return a === b ? EQUAL : DIFFERENT;
  // A shared part is equal to itself if the walk can read it.
  if (a === b) return isPlain(a, depth, skipKey) ? EQUAL : DIFFERENT;
  if (depth >= MAX_DEPTH) return DIFFERENT;
  const ka = kindOf(a);
  if (ka === 'unusual' || ka !== kindOf(b)) return DIFFERENT;
  if (ka === 'array') {
    const xs = a as unknown[];
    const ys = b as unknown[];
    if (xs.length !== ys.length) return DIFFERENT;
    for (let i = 0; i < xs.length; i++) {
      if (!(i in xs) || !(i in ys)) return DIFFERENT;
      const x = xs[i];
      const y = ys[i];
      // canonicalJson writes undefined in an array as null.
      if (compare(x === undefined ? null : x, y === undefined ? null : y, depth + 1) !== EQUAL) return DIFFERENT;
    }
    return EQUAL;
  }
  const oa = a as Record<string, unknown>;
  const ob = b as Record<string, unknown>;
  let defined = 0;
  for (const k in oa) {
    if (k === skipKey) continue;
    // own(): an inherited member counts as missing, as for canonicalJson (Object.keys).
    const x = own(oa, k);
    if (x === undefined) continue;
    defined += 1;
    const y = own(ob, k);
    if (y === undefined || compare(x, y, depth + 1) !== EQUAL) return DIFFERENT;
  }
  for (const k in ob) {
    if (k !== skipKey && own(ob, k) !== undefined) defined -= 1;
  }
  return defined === 0 ? EQUAL : DIFFERENT;
}

/** Whether {@link canonicalJson} encodes `value` without a TypeError, as the walk reads it. */
function isPlain(value: unknown, depth: number, skipKey?: string): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object':
      break;
    default:
      return false;
  }
  if (value === null) return true;
  if (depth >= MAX_DEPTH) return false;
  const kind = kindOf(value);
  if (kind === 'unusual') return false;
  if (kind === 'array') {
    const xs = value as unknown[];
    for (let i = 0; i < xs.length; i++) {
      if (!(i in xs)) return false;
      const x = xs[i];
      if (x !== undefined && !isPlain(x, depth + 1)) return false;
    }
    return true;
  }
  const o = value as Record<string, unknown>;
  for (const k in o) {
    if (k === skipKey) continue;
    const x = own(o, k);
    if (x !== undefined && !isPlain(x, depth + 1)) return false;
  }
  return true;
}

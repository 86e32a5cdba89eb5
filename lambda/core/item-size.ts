/**
 * The size DynamoDB counts for an item, from the values the spec parser sees (decoded attribute
 * values, or a spec file's JSON/YAML). Rules of the Amazon DynamoDB Developer Guide, "Item sizes
 * and formats" / "Data types": an attribute counts its name (UTF-8 bytes) plus its value; a string
 * its UTF-8 bytes; a number about one byte per two significant digits plus one (at most 21); binary
 * its length; null and boolean 1 byte; a list or a map 3 bytes plus one byte per element, plus its
 * elements (a map's keys count like attribute names); a set the sum of its elements.
 */

/** DynamoDB's largest item, 400 KB (Amazon DynamoDB Developer Guide, "Service, account, and table quotas"). */
export const DYNAMODB_MAX_ITEM_BYTES = 400 * 1024;
/** Room kept in every spec item for the reconciler's `status` attribute. */
export const STATUS_RESERVE_BYTES = 32 * 1024;
/** Largest size of a spec item's own attributes (everything but `status`): 368 KiB. */
export const MAX_SPEC_ATTRIBUTES_BYTES = DYNAMODB_MAX_ITEM_BYTES - STATUS_RESERVE_BYTES;

const utf8 = (s: string): number => Buffer.byteLength(s, 'utf8');

function numberSize(n: number | bigint): number {
  const digits = String(n).replace(/^-/, '').replace(/e.*$/i, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return Math.min(21, Math.ceil(Math.max(1, digits.length) / 2) + 1);
}

/** Bytes DynamoDB counts for one value (not its name). Never throws; unknown values count 0. */
export function valueSize(v: unknown, depth = 0): number {
  if (depth > 64) return 0;
  if (typeof v === 'string') return utf8(v);
  if (typeof v === 'number' || typeof v === 'bigint') return numberSize(v);
  if (typeof v === 'boolean' || v === null) return 1;
  if (v instanceof Uint8Array) return v.length;
  if (v instanceof Set) return [...v].reduce((sum: number, x) => sum + valueSize(x, depth + 1), 0);
  if (Array.isArray(v)) return 3 + v.reduce((sum: number, x) => sum + 1 + valueSize(x, depth + 1), 0);
  if (typeof v === 'object') {
    return 3 + Object.entries(v as Record<string, unknown>).reduce((sum, [k, x]) => sum + 1 + utf8(k) + valueSize(x, depth + 1), 0);
  }
  return 0;
}

/** Bytes DynamoDB counts for the attributes of `item`, leaving out those named in `except`. */
export function attributesSize(item: Readonly<Record<string, unknown>>, except: readonly string[] = []): number {
  let total = 0;
  for (const [name, value] of Object.entries(item)) if (!except.includes(name)) total += utf8(name) + valueSize(value);
  return total;
}

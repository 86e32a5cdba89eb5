/**
 * DynamoDB attribute values decoded by this code rather than by util-dynamodb's `unmarshall`
 *: `unmarshall` builds maps by assignment into `{}`, so a map key or a top-level
 * attribute named `__proto__` replaces the object's prototype (a string value simply vanishes),
 * and a number beyond 2^53 that is not an integer makes it throw for the whole Scan page. The SDK's
 * own JSON protocol keeps `__proto__` keys of raw `AttributeValue` maps, so the raw commands of
 * `@aws-sdk/client-dynamodb` plus {@link decodeItem} lose nothing a person typed.
 *
 * Types follow the DynamoDB data type descriptors (Amazon DynamoDB API Reference, AttributeValue):
 * S -> string, N -> number (a bigint for an integer beyond 2^53, as `unmarshall` gives it),
 * BOOL -> boolean, NULL -> null, B -> Uint8Array, L -> array, M -> object, SS/NS/BS -> Set.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/** A value `decodeValue` could not read (no known type descriptor). */
export class UndecodableAttribute {
  constructor(readonly raw: unknown) {}
  toString(): string {
    return `<undecodable ${JSON.stringify(this.raw)?.slice(0, 60) ?? String(this.raw)}>`;
  }
}

/** Own enumerable data properties only, so that `__proto__` stays a key (as `Object.fromEntries` does). */
function objectOf(entries: [string, unknown][]): Record<string, unknown> {
  return Object.fromEntries(entries);
}

function number(text: string): number | bigint {
  const n = Number(text);
  if (Number.isFinite(n) && !Number.isSafeInteger(n) && Number.isInteger(n) && /^-?\d+$/.test(text.trim())) {
    return BigInt(text.trim());
  }
  return n;
}

/**
 * One attribute value as a JS value (see the module docs for the types). Never throws: a value
 * without a known type descriptor becomes an {@link UndecodableAttribute}, which the spec parser
 * reports as a wrong type for its attribute.
 */
export function decodeValue(av: AttributeValue | undefined): unknown {
  if (av === null || typeof av !== 'object') return new UndecodableAttribute(av);
  const v = av as unknown as Record<string, unknown>;
  if (typeof v.S === 'string') return v.S;
  if (typeof v.N === 'string') return number(v.N);
  if (typeof v.BOOL === 'boolean') return v.BOOL;
  if (v.NULL === true) return null;
  if (v.B instanceof Uint8Array) return v.B;
  if (Array.isArray(v.L)) return v.L.map((x) => decodeValue(x as AttributeValue));
  if (v.M !== null && typeof v.M === 'object') {
    return objectOf(Object.entries(v.M as Record<string, AttributeValue>).map(([k, x]) => [k, decodeValue(x)]));
  }
  if (Array.isArray(v.SS)) return new Set(v.SS);
  if (Array.isArray(v.NS)) return new Set((v.NS as string[]).map(number));
  if (Array.isArray(v.BS)) return new Set(v.BS);
  return new UndecodableAttribute(av);
}

/** A whole item: every attribute, `__proto__` included, as an own property. Never throws. */
export function decodeItem(item: Record<string, AttributeValue>): Record<string, unknown> {
  return objectOf(Object.entries(item).map(([k, v]) => [k, decodeValue(v)]));
}

/**
 * Short text of a raw item for logs: `name=S:"value"` per attribute, each value cut at 60
 * characters, at most 10 attributes. Never throws.
 */
export function describeRawItem(item: Record<string, AttributeValue> | undefined): string {
  if (!item) return '(no item)';
  const parts = Object.entries(item)
    .slice(0, 10)
    .map(([k, v]) => {
      const [type, value] = v && typeof v === 'object' ? (Object.entries(v).find(([, x]) => x !== undefined) ?? ['?', undefined]) : ['?', v];
      let text: string;
      try {
        text = value instanceof Uint8Array ? `<${value.length} bytes>` : (JSON.stringify(value) ?? String(value));
      } catch {
        text = String(value);
      }
      return `${k}=${type}:${text.length > 60 ? `${text.slice(0, 57)}...` : text}`;
    });
  const more = Object.keys(item).length - parts.length;
  return parts.join(' ') + (more > 0 ? ` (+${more} more)` : '');
}

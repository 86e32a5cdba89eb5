/**
 * Dictionaries keyed by names that users or AWS choose (clusters, services, families, tags,
 * environment and secret names, statuses by service id).
 *
 * A plain `{}` used as a dictionary answers `constructor`, `toString` or `__proto__` from
 * `Object.prototype`, and `o['__proto__'] = v` replaces its prototype instead of storing `v`. Every
 * such dictionary is therefore a `Map` or a null-prototype object built here, and every lookup in
 * an object that may have come from elsewhere (JSON, the SDK's unmarshall, a test) goes through
 * {@link own}. `test/architecture.test.ts` enforces this (see `test/support/dictionary-lint.ts`).
 */

/** A new null-prototype object, optionally filled from `entries` (own data properties, `__proto__` included). */
export function dict<T>(entries?: Iterable<readonly [string, T]>): Record<string, T> {
  const out = Object.create(null) as Record<string, T>;
  if (entries) for (const [k, v] of entries) out[k] = v;
  return out;
}

/** A null-prototype copy of `source`'s own enumerable string-keyed properties. */
export function dictOf<T>(source: Readonly<Record<string, T>> | undefined): Record<string, T> {
  return dict(source ? Object.entries(source) : []);
}

/** `d[key]` if `key` is an own property of `d`, else `undefined` (never an inherited member). */
export function own<T>(d: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  if (d === undefined || d === null) return undefined;
  // One lookup when the key is absent (the common miss), and when `d` has no prototype (this
  // module's dictionaries: nothing to inherit); an inherited member is never returned.
  const v = d[key];
  return v !== undefined && (Object.getPrototypeOf(d) === null || Object.hasOwn(d, key)) ? v : undefined;
}

/** Whether `key` is an own property of `d`. */
export function hasOwnKey(d: object | undefined, key: string): boolean {
  return d !== undefined && d !== null && Object.hasOwn(d, key);
}

/** Stores `value` under `key` as an own data property, even in an ordinary object and for `__proto__`. */
export function putOwn<T>(d: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(d, key, { value, writable: true, enumerable: true, configurable: true });
}

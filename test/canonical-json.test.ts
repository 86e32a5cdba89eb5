/**
 * `canonicallyEqual` (the structural walk behind `statusChanged`) against its definition: the
 * canonical JSON texts compared, with the same answer and the same TypeError, over random values
 * that include what the walk leaves to `canonicalJson` (Dates, Sets, Maps, NaN, Infinity,
 * undefined, functions, bigints, array holes, deep nesting). Replay with
 * `FC_SEED=<seed> npx vitest run test/canonical-json.test.ts`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, canonicallyEqual } from '../lambda/core/canonical-json';

const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined;

const KEYS = ['a', 'b', 'observedAt', '__proto__', 'constructor', 'z'] as const;

/** Leaves: mostly JSON, some that canonicalJson refuses or writes its own way. */
const leaf = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('', 'x', 'y', '1', 'ü', '\ud800') },
  { weight: 4, arbitrary: fc.constantFrom(0, -0, 1, 1.5, -2) },
  { weight: 3, arbitrary: fc.boolean() },
  { weight: 2, arbitrary: fc.constant(null) },
  { weight: 2, arbitrary: fc.constant(undefined) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<unknown>(NaN, Infinity, 10n, () => 1, Symbol('s'), new Date(0), new Map(), new Set(['b', 'a']), 'x'),
  },
);

const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('value'), { maxLength: 3 }),
    fc.sparseArray(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom(...KEYS), tie('value'), { maxKeys: 4 }),
  ),
}));

/**
 * A value that is often canonically equal to `v` without being the same object: keys reversed,
 * undefined members added, -0 for 0, null for undefined in arrays, parts shared; `mutate` changes
 * one leaf somewhere.
 */
function variant(v: unknown, choices: number[], mutate: boolean): unknown {
  let i = 0;
  const next = () => choices[i++ % choices.length];
  let mutated = !mutate;
  const go = (x: unknown): unknown => {
    if (!mutated && next() % 5 === 0 && (x === null || typeof x !== 'object')) {
      mutated = true;
      return typeof x === 'string' ? `${x}!` : 'changed';
    }
    if (x === 0) return next() % 2 === 0 ? -0 : 0;
    if (x === null || typeof x !== 'object' || x instanceof Date || x instanceof Map || x instanceof Set) return x;
    if (next() % 4 === 0) return x; // shared
    if (Array.isArray(x)) {
      const out: unknown[] = new Array(x.length);
      for (let k = 0; k < x.length; k++) {
        if (!(k in x)) continue;
        const y = go(x[k]);
        out[k] = y === undefined && next() % 2 === 0 ? null : y === null && next() % 3 === 0 ? undefined : y;
      }
      return out;
    }
    const entries = Object.entries(x).map(([k, y]) => [k, go(y)] as const);
    if (next() % 2 === 0) entries.reverse();
    const out = Object.create(next() % 3 === 0 ? null : Object.prototype) as Record<string, unknown>;
    for (const [k, y] of entries) Object.defineProperty(out, k, { value: y, enumerable: true, writable: true, configurable: true });
    if (next() % 3 === 0) out.extra = undefined;
    return out;
  };
  return go(v);
}

/** The definition: canonical texts compared (without `skipKey` at the top), or the error thrown. */
function byText(a: unknown, b: unknown, skipKey?: string): boolean | Error {
  const strip = (v: unknown) => {
    if (skipKey === undefined || v === null || typeof v !== 'object') return v;
    const { [skipKey]: _, ...rest } = v as Record<string, unknown>;
    return rest;
  };
  try {
    return canonicalJson(strip(a)) === canonicalJson(strip(b));
  } catch (err) {
    return err as Error;
  }
}

function check(a: unknown, b: unknown, skipKey?: string): void {
  const want = byText(a, b, skipKey);
  if (want instanceof Error) {
    expect(() => canonicallyEqual(a, b, skipKey)).toThrow(want.message);
  } else {
    expect(canonicallyEqual(a, b, skipKey)).toBe(want);
  }
}

describe('canonicallyEqual', () => {
  it('answers and throws as comparing the canonical texts does', () => {
    const choices = fc.array(fc.nat(60), { minLength: 1, maxLength: 12 });
    fc.assert(
      fc.property(value, choices, fc.boolean(), fc.option(fc.constantFrom(...KEYS), { nil: undefined }), (a, cs, mutate, skip) => {
        const b = variant(a, cs, mutate);
        const isObject = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v);
        const skipKey = skip !== undefined && isObject(a) && isObject(b) ? skip : undefined;
        check(a, b, skipKey);
        check(b, a, skipKey);
        check(a, a, skipKey);
      }),
      { numRuns: 2000, seed },
    );
  });

  it('agrees on independent values too', () => {
    fc.assert(
      fc.property(value, value, (a, b) => {
        check(a, b);
      }),
      { numRuns: 1000, seed },
    );
  });

  it.each([
    { case: 'key order', a: { a: 1, b: [1, 2] }, b: { b: [1, 2], a: 1 }, equal: true },
    { case: 'undefined member vs missing', a: { a: 1, u: undefined }, b: { a: 1 }, equal: true },
    { case: 'undefined vs null in an array', a: [undefined, 1], b: [null, 1], equal: true },
    { case: '-0 vs 0', a: { n: -0 }, b: { n: 0 }, equal: true },
    { case: 'a Date vs its ISO text', a: { t: new Date(0) }, b: { t: '1970-01-01T00:00:00.000Z' }, equal: true },
    { case: 'a Set vs its sorted members', a: { s: new Set(['b', 'a']) }, b: { s: ['a', 'b'] }, equal: true },
    { case: 'array vs object', a: { x: [] }, b: { x: {} }, equal: false },
    { case: 'string vs number', a: ['1'], b: [1], equal: false },
    { case: 'an extra member', a: { a: 1 }, b: { a: 1, b: null }, equal: false },
    { case: 'a longer array', a: [1], b: [1, undefined], equal: false },
    { case: 'null vs missing member', a: { a: null }, b: {}, equal: false },
  ])('$case', ({ a, b, equal }) => {
    expect(canonicallyEqual(a, b)).toBe(equal);
    expect(canonicalJson(a) === canonicalJson(b)).toBe(equal);
  });

  it('throws where canonicalJson throws, even when another part differs', () => {
    expect(() => canonicallyEqual({ a: 1, n: NaN }, { a: 2, n: 1 })).toThrow(TypeError);
    expect(() => canonicallyEqual({ a: 1 }, { a: 2, m: new Map() })).toThrow(TypeError);
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(() => canonicallyEqual(cyclic, cyclic)).toThrow(/cyclic/);
  });

  it('ignores the skipped key at the top only', () => {
    expect(canonicallyEqual({ observedAt: 'x', a: 1 }, { observedAt: 'y', a: 1 }, 'observedAt')).toBe(true);
    expect(canonicallyEqual({ n: { observedAt: 'x' } }, { n: { observedAt: 'y' } }, 'observedAt')).toBe(false);
  });
});

/**
 * Adversarial review of the spec parser (lambda/core/spec.ts): arbitrary JSON-ish values and
 * DynamoDB-unmarshalled shapes (String/Number Sets, Uint8Array binaries, bigint from large N,
 * null-prototype maps), NaN/Infinity, huge strings and JavaScript's special keys (`__proto__`,
 * `constructor`). The parser must never throw, must name the attribute path and the problem of
 * every error, must reject what ECS would reject, and must hash equal specs equally.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SPEC_ATTRIBUTES, parseSpecItem, specHash, specToItem } from '../../lambda/core/spec';
import type { SpecError } from '../../lambda/core/types';

const IMAGE = 'public.ecr.aws/nginx/nginx:1.27';

/** The smallest valid item, plus overrides. */
function anItem(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { cluster: 'prod', service: 'web', image: IMAGE, desiredCount: 2, ...overrides };
}

/** A map without a prototype, as some decoders build them. */
function bareMap(entries: Record<string, unknown>): Record<string, unknown> {
  return Object.assign(Object.create(null) as Record<string, unknown>, entries);
}

/** `JSON.parse`, which (like YAML's toJS) keeps a `__proto__` key as an own attribute. */
const fromJson = (text: string) => JSON.parse(text) as Record<string, unknown>;

function errorsOf(item: unknown): SpecError[] {
  const r = parseSpecItem(item as Record<string, unknown>);
  return r.ok ? [] : r.errors;
}

// ---------------------------------------------------------------------------------------------
// JavaScript's special keys
// ---------------------------------------------------------------------------------------------

describe('spec parser under attack: __proto__ and friends', () => {
  it.each([
    {
      case: 'a top-level __proto__ map that would supply desiredCount',
      item: fromJson(`{"cluster":"prod","service":"web","image":"${IMAGE}","__proto__":{"desiredCount":3}}`),
      path: '__proto__',
    },
    {
      case: 'a top-level __proto__ string',
      item: fromJson(`{"cluster":"prod","service":"web","image":"${IMAGE}","desiredCount":1,"__proto__":"x"}`),
      path: '__proto__',
    },
    {
      case: 'an environment variable named __proto__',
      item: fromJson(`{"cluster":"prod","service":"web","image":"${IMAGE}","desiredCount":1,"environment":{"__proto__":"x","A":"b"}}`),
      path: 'environment.__proto__',
    },
    {
      case: 'an environment variable named __proto__ holding a map',
      item: fromJson(`{"cluster":"prod","service":"web","image":"${IMAGE}","desiredCount":1,"environment":{"__proto__":{"A":"b"}}}`),
      path: 'environment.__proto__',
    },
    {
      case: 'a secret named __proto__',
      item: fromJson(`{"cluster":"prod","service":"web","image":"${IMAGE}","desiredCount":1,"secrets":{"__proto__":"/app/x"}}`),
      path: 'secrets.__proto__',
    },
    {
      case: 'a tag key __proto__',
      item: fromJson(`{"cluster":"prod","service":"web","image":"${IMAGE}","desiredCount":1,"tags":{"__proto__":"x"}}`),
      path: 'tags.__proto__',
    },
  ])('reports $case at its path instead of dropping or inheriting it', ({ item, path }) => {
    // Act
    const r = parseSpecItem(item);

    // Assess
    expect(r.ok).toBe(false);
    expect(r.ok ? [] : r.errors.map((e) => e.path)).toContain(path);
    expect(r.ok ? undefined : r.errors.find((e) => e.path === path)?.message).toMatch(/\S/);
  });

  it.each<{ case: string; env: Record<string, string> }>([
    { case: 'an environment variable named constructor', env: { constructor: 'a', toString: 'b', hasOwnProperty: 'c' } },
    { case: 'an environment variable named valueOf', env: { valueOf: 'x' } },
  ])('keeps $case as plain data (held up)', ({ env }) => {
    const r = parseSpecItem(anItem({ environment: env }));
    expect(r.ok && r.spec.environment).toEqual(env);
  });

  it('rejects an attribute called constructor as unknown (held up)', () => {
    expect(errorsOf(anItem({ constructor: 'x' })).map((e) => e.path)).toEqual(['constructor']);
  });
});

// ---------------------------------------------------------------------------------------------
// DynamoDB shapes
// ---------------------------------------------------------------------------------------------

describe('spec parser under attack: DynamoDB-unmarshalled values', () => {
  it.each([
    {
      case: 'a bigint (N beyond 2^53) inside a map without prototype',
      item: anItem({ deployment: bareMap({ maximumPercent: 99999999999999999999n }) }),
      path: 'deployment.maximumPercent',
      value: '99999999999999999999',
    },
    {
      case: 'a bigint inside a map given for a string',
      item: anItem({ cluster: bareMap({ x: 1n }) }),
      path: 'cluster',
      value: '{"x":1}',
    },
    {
      case: 'a bigint inside a plain map given for a string',
      item: anItem({ image: { tag: 5n } }),
      path: 'image',
      value: '{"tag":5}',
    },
    {
      case: 'a Set inside a map given for a string',
      item: anItem({ image: { tags: new Set(['a']) } }),
      path: 'image',
      value: '{"tags":["a"]}',
    },
    {
      case: 'a binary inside a list given for a map',
      item: anItem({ environment: [new Uint8Array([1, 2, 3])] }),
      path: 'environment',
      value: '["<3 bytes>"]',
    },
  ])('names the path and shows the value of $case', ({ item, path, value }) => {
    // Act
    const errors = errorsOf(item);

    // Assess
    const e = errors.find((x) => x.path === path);
    expect(errors.map((x) => x.path)).not.toContain('(item)');
    expect(e?.value).toBe(value);
    expect(e?.message).toMatch(/^(must be|is too large)/);
  });

  it.each([
    { case: 'desiredCount as a bigint (N beyond 2^53)', over: { desiredCount: 99999999999999999999n }, path: 'desiredCount' },
    { case: 'healthCheck.retries as a bigint', over: { healthCheck: { command: ['CMD', 'true'], retries: 12345678901234567890n } }, path: 'healthCheck.retries' },
  ])('says a too-large number is too large, not the wrong DynamoDB type: $case', ({ over, path }) => {
    const e = errorsOf(anItem(over)).find((x) => x.path === path);
    expect(e?.message).not.toContain('must be a number (DynamoDB type N)');
    expect(e?.message).toContain('too large');
  });

  it.each([
    { case: 'one above the 32-bit integer ECS declares', desiredCount: 2 ** 31 },
    { case: 'a YAML-sized 1e20', desiredCount: 1e20 },
  ])('rejects desiredCount $case, as ECS would', ({ desiredCount }) => {
    const e = errorsOf(anItem({ desiredCount })).find((x) => x.path === 'desiredCount');
    expect(e?.message).toContain('2147483647');
  });

  it('accepts the largest desiredCount ECS takes', () => {
    const r = parseSpecItem(anItem({ desiredCount: 2_147_483_647 }));
    expect(r.ok && r.spec.desiredCount).toBe(2_147_483_647);
  });
});

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

/** Keys that stress the parser: spec attributes, nested keys, JavaScript's special names, "". */
const keyArb = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...SPEC_ATTRIBUTES) },
  {
    weight: 2,
    arbitrary: fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', '', ' ', 'command', 'retries', 'enable', 'A_1'),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
);

const leafArb = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ minLength: 300, maxLength: 400 }),
  fc.integer(),
  fc.double(),
  fc.constantFrom(NaN, Infinity, -Infinity, -0, 2 ** 53 + 2, 256, 512, 'FARGATE', 'absent', 'CMD', 'subnet-0a1b2c3d'),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.bigInt(),
  fc.uint8Array({ maxLength: 4 }),
  fc.date({ noInvalidDate: true }),
);

const { value: valueArb } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leafArb, tie('list'), tie('map'), tie('bareMap'), tie('set')),
  list: fc.array(tie('value'), { maxLength: 3 }),
  map: fc.dictionary(keyArb, tie('value'), { maxKeys: 4 }),
  bareMap: fc.dictionary(keyArb, tie('value'), { maxKeys: 3 }).map(bareMap),
  set: fc.oneof(fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }), fc.array(fc.integer(), { minLength: 1, maxLength: 3 })).map((xs) => new Set<unknown>(xs)),
}));

/** Items: mostly near-valid (a valid base with random attributes), sometimes anything at all. */
const itemArb = fc.oneof(
  { weight: 4, arbitrary: fc.dictionary(keyArb, valueArb, { maxKeys: 6 }).map((extra) => ({ ...anItem(), ...extra })) },
  { weight: 1, arbitrary: fc.dictionary(keyArb, valueArb, { maxKeys: 6 }).map(bareMap) },
  { weight: 1, arbitrary: valueArb },
);

/** Own keys of a map-like value (a prototype-less map included). */
function ownKeys(v: unknown): string[] {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Set) ? Object.keys(v) : [];
}

describe('spec parser under attack: properties', () => {
  it('never throws, and every error names a path inside the item, a value it shows, and the problem', () => {
    fc.assert(
      fc.property(itemArb, (item) => {
        const r = parseSpecItem(item as Record<string, unknown>);
        if (r.ok) return;
        const isMap = item !== null && typeof item === 'object' && !Array.isArray(item) && !(item instanceof Set) && !(item instanceof Uint8Array) && !(item instanceof Date);
        for (const e of r.errors) {
          expect(e.message).toMatch(/\S/);
          expect(e.message).not.toMatch(/could not be parsed|^Invalid input|\[object /);
          expect(e.value).not.toMatch(/\[object /);
          if (!isMap) {
            expect(e.path).toBe('(item)');
            continue;
          }
          // The path starts with an attribute the item has, or one the spec requires.
          expect(namesAttribute(e.path, [...ownKeys(item), ...SPEC_ATTRIBUTES])).toBe(true);
        }
      }),
      { numRuns: 3000, seed: 20250101 },
    );
  });

  it('hashes a spec the same whatever the key order, and after a write/read round trip', () => {
    fc.assert(
      fc.property(
        fc.record({
          desiredCount: fc.integer({ min: 0, max: 100 }),
          environment: fc.dictionary(fc.stringMatching(/^[A-Z_][A-Z0-9_]{0,6}$/), fc.string({ maxLength: 10 }), { maxKeys: 5 }),
          tags: fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9:._-]{0,8}$/), fc.stringMatching(/^[a-z0-9 ]{0,8}$/), { maxKeys: 5 }),
          subnets: fc.uniqueArray(fc.stringMatching(/^subnet-[0-9a-f]{8}$/), { minLength: 1, maxLength: 4 }),
        }),
        fc.integer(),
        (over, seed) => {
          const item = anItem(over);
          const shuffled = Object.fromEntries(shuffle(Object.entries(item), seed).map(([k, v]) => [k, reorder(v, seed)]));
          const a = parseSpecItem(item);
          const b = parseSpecItem(shuffled);
          expect(a.ok && b.ok).toBe(true);
          if (!a.ok || !b.ok) return;
          expect(b.hash).toBe(a.hash);
          expect(specHash(b.spec)).toBe(a.hash);
          const back = parseSpecItem(specToItem(a.spec));
          expect(back.ok && back.hash).toBe(a.hash);
        },
      ),
      { numRuns: 300, seed: 7 },
    );
  });

  it.each([
    // Larger than any DynamoDB item: refused for its size (at most 368 KiB of spec attributes).
    { case: 'a 1 MiB environment value', over: { environment: { BIG: 'x'.repeat(1 << 20) } }, ok: false },
    // Within the item limit, but ECS refuses a task definition over 64 KiB.
    { case: 'a 300 KiB environment value', over: { environment: { BIG: 'x'.repeat(300 * 1024) } }, ok: false },
    { case: 'a 60 KiB environment value', over: { environment: { BIG: 'x'.repeat(60 * 1024) } }, ok: true },
    { case: 'a 1 MiB image reference', over: { image: 'a'.repeat(1 << 20) }, ok: false },
    { case: 'a 100 KiB unknown attribute name', over: { ['q'.repeat(100 * 1024)]: 1 }, ok: false },
  ])('answers $case without throwing, with short error values (held up)', ({ over, ok }) => {
    const r = parseSpecItem(anItem(over));
    expect(r.ok).toBe(ok);
    for (const e of r.ok ? [] : r.errors) expect(e.value.length).toBeLessThanOrEqual(80);
  });
});

/** True when `path` is `name`, `name.more` or `name[i]` for one of `names` ("" shown as `""`). */
function namesAttribute(path: string, names: string[]): boolean {
  return names.some((n) => {
    const shown = n === '' ? '""' : n;
    return path === shown || path.startsWith(`${shown}.`) || path.startsWith(`${shown}[`);
  });
}

/** Deterministic shuffle (Fisher-Yates on a seeded LCG). */
function shuffle<T>(xs: T[], seed: number): T[] {
  const out = [...xs];
  let s = seed >>> 0;
  for (let i = out.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** A map with its keys in another order, a list of ids reversed (their order is not a meaning). */
function reorder(v: unknown, seed: number): unknown {
  if (Array.isArray(v)) return [...v].reverse();
  if (v !== null && typeof v === 'object') return Object.fromEntries(shuffle(Object.entries(v), seed + 1));
  return v;
}

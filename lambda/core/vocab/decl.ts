/**
 * The declaration language of the ECS vocabulary: each ECS shape (ContainerDefinition,
 * HealthCheck, Volume, LoadBalancer, ...) is declared once as a tree of {@link Node}s, and every
 * use of the shape is derived from that one declaration by a walker in this file:
 *
 * - {@link zodOf}: the zod schema that validates what a person writes (and, through zod, the JSON
 *   Schema of spec files), with "must be ..., got ..." messages naming what is allowed;
 * - {@link canonicalOf}: the canonical form in which a rendered value and ECS's described answer
 *   compare equal (one policy: a value equal to its declared default is dropped, as are `null`,
 *   empty lists and maps; lists compare in their declared order semantics);
 * - {@link importOf}: the inverse of rendering, from a described value to what a spec writes
 *   (defaults and empties left out, ECS's own shape kept), refusing any field the vocabulary does
 *   not declare;
 * - {@link knownKeysOf}: the keys of every nested object, for "did you mean" suggestions;
 * - {@link fieldOrderOf}: the order fields are reported in a diff (declaration order);
 * - {@link defaultAt}: the declared default at a path, for showing an absent value in a diff.
 *
 * A declaration states, per field: its type, ECS's default (what an absent value means), whether
 * ECS fills it in when describing, list order semantics (`ordered`, `set`, or `keyed` by a member
 * with an optional value member: `environment` is a map of name to value), Fargate's limits (as
 * ranges, enums, or `refused` with the reason), and a one-line doc. Pure data and pure functions;
 * no SDK.
 */
import { z } from 'zod';
import { dict, own, putOwn } from '../dict';

// ---------------------------------------------------------------------------------------------
// Nodes
// ---------------------------------------------------------------------------------------------

/** A JSON value of a canonical form: no `null`, `undefined`, empty list or empty object. */
export type CanonicalValue = string | number | boolean | CanonicalValue[] | { readonly [key: string]: CanonicalValue };

/** Context of a canonical walk: facts of the enclosing task definition some rules depend on. */
export interface CanonicalContext {
  /** `awsvpc` on Fargate: there `hostPort` equals `containerPort`. */
  readonly networkMode: string;
}

interface NodeBase {
  /** One line for the JSON Schema and the docs. */
  readonly doc?: string;
  /**
   * A normalisation of the described or rendered value before the generic walk (e.g. task `cpu`
   * `"0.25 vCPU"` -> `"256"`, port `protocol` in lower case); returns the value unchanged when it
   * cannot interpret it, so that it shows as a difference instead of being hidden.
   */
  readonly normalize?: (value: unknown, ctx: CanonicalContext) => unknown;
  /**
   * A rule on the canonical form only (comparison, never import): e.g. a load balancer's target
   * group and its alternate as an unordered pair, since ECS swaps them after a blue/green
   * deployment.
   */
  readonly canonicalize?: (value: CanonicalValue) => CanonicalValue;
  /** JSON Schema keywords for a rule across the node's members that zod's schema cannot state (`if`/`then`). */
  readonly jsonSchema?: Readonly<Record<string, unknown>>;
}

export interface StringNode extends NodeBase {
  readonly kind: 'string';
  readonly pattern?: RegExp;
  /** What the pattern allows, in words (the error message). */
  readonly allowed?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
}

export interface IntNode extends NodeBase {
  readonly kind: 'int';
  readonly min?: number;
  readonly max?: number;
  /** e.g. `seconds`, `MiB`, `CPU units`. */
  readonly unit?: string;
}

/**
 * A number that may have a fractional part (ECS `Double`: a traffic percent such as 10.0), with
 * its range and, when ECS takes only multiples of one, that step (`0.1`).
 */
export interface DecimalNode extends NodeBase {
  readonly kind: 'decimal';
  readonly min?: number;
  readonly max?: number;
  readonly step?: number;
  readonly unit?: string;
}

/** Any JSON value, passed through as it is (ECS `Document`: a lifecycle hook's `hookDetails`). */
export interface JsonNode extends NodeBase {
  readonly kind: 'json';
}

/** A JSON value (what ECS's `Document` members hold). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export interface BoolNode extends NodeBase {
  readonly kind: 'bool';
}

export interface EnumNode<V extends string = string> extends NodeBase {
  readonly kind: 'enum';
  readonly values: readonly V[];
}

/**
 * A list. `ordered`: order is meaning (`command`); `set`: order carries none (`mountPoints`);
 * `keyed`: a set whose members are told apart by `key` (`environment` by `name`; with `value`,
 * the canonical form is the map key -> value, so that a diff names the entry:
 * `environment.LOG_LEVEL`).
 */
export interface ListNode<I extends Node = Node> extends NodeBase {
  readonly kind: 'list';
  readonly item: I;
  readonly order: 'ordered' | 'set' | 'keyed';
  readonly key?: string;
  readonly value?: string;
  readonly minItems?: number;
  readonly maxItems?: number;
}

/** The fields of an object node, by name, in diff order. */
export type Fields = Readonly<Record<string, Field>>;

export interface ObjectNode<F extends Fields = Fields> extends NodeBase {
  readonly kind: 'object';
  /** In diff order. */
  readonly fields: F;
}

/** A map of names to strings (`dockerLabels`, log `options`). */
export interface MapNode<V extends Node = Node> extends NodeBase {
  readonly kind: 'map';
  readonly value: V;
  readonly keyPattern?: RegExp;
  readonly keyAllowed?: string;
}

export type Node = StringNode | IntNode | DecimalNode | JsonNode | BoolNode | EnumNode | ListNode | ObjectNode | MapNode;

export interface Field<N extends Node = Node> {
  readonly type: N;
  /** ECS requires it. */
  readonly required?: boolean;
  /**
   * ECS's default: what an absent value means (a boolean without one defaults to false). A value
   * equal to it is dropped from the canonical form and from an import.
   */
  readonly default?: CanonicalValue;
  /** ECS fills it in when describing (documentation; the default makes the comparison work). */
  readonly ecsFills?: boolean;
  /** Fargate refuses the field: the reason, as the error message says it. */
  readonly refused?: string;
  readonly doc?: string;
}

// ---------------------------------------------------------------------------------------------
// Types: what a declaration holds, as TypeScript sees it
// ---------------------------------------------------------------------------------------------

/** Keys of `F` whose field ECS requires (and Fargate does not refuse). */
type RequiredKeys<F extends Fields> = {
  [K in keyof F]: F[K] extends { readonly refused: string } ? never : F[K] extends { readonly required: true } ? K : never;
}[keyof F];
/** Keys of `F` that may be left out (refused ones are never set). */
type OptionalKeys<F extends Fields> = {
  [K in keyof F]: F[K] extends { readonly refused: string } ? never : F[K] extends { readonly required: true } ? never : K;
}[keyof F];
type Flat<T> = { [K in keyof T]: T[K] } & {};

/** The value of an object node with fields `F`: required fields required, the others optional, refused ones absent. */
export type InferFields<F extends Fields> = Flat<
  { [K in RequiredKeys<F>]: Infer<F[K]['type']> } & { [K in OptionalKeys<F>]?: Infer<F[K]['type']> }
>;

/**
 * The TypeScript type of a value a declaration describes, in ECS's shape: `str` a string, `oneOf`
 * the union of its values, `int` a number, `bool` a boolean, `list` an array of its item, `map` a
 * record of names, `obj` an object with its required and optional fields. The spec's ECS
 * attributes, the observed service fields and the requests' fields are typed with it, so a field
 * declared once is typed everywhere.
 */
export type Infer<N> = Node extends N
  ? unknown
  : N extends { readonly kind: 'string' }
  ? string
  : N extends { readonly kind: 'int' } | { readonly kind: 'decimal' }
    ? number
    : N extends { readonly kind: 'json' }
      ? JsonValue
      : N extends { readonly kind: 'bool' }
      ? boolean
      : N extends EnumNode<infer V>
        ? V
        : N extends ListNode<infer I>
          ? Infer<I>[]
          : N extends MapNode<infer V>
            ? Record<string, Infer<V>>
            : N extends ObjectNode<infer F>
              ? InferFields<F>
              : never;

/**
 * What ECS may answer for a declaration (DescribeServices, DescribeTaskDefinition): its shape, every
 * member optional and enums as strings (an answer may hold a value the vocabulary does not allow,
 * which then shows as a difference). The SDK's output types are assignable to it.
 */
export type Described<N> = Node extends N
  ? unknown
  : N extends { readonly kind: 'string' } | EnumNode
    ? string
    : N extends { readonly kind: 'int' } | { readonly kind: 'decimal' }
      ? number
      : N extends { readonly kind: 'json' }
        ? unknown
        : N extends { readonly kind: 'bool' }
        ? boolean
        : N extends ListNode<infer I>
          ? Described<I>[]
          : N extends MapNode<infer V>
            ? Record<string, Described<V>>
            : N extends ObjectNode<infer F>
              ? Flat<{ [K in keyof F]?: Described<F[K]['type']> }>
              : never;

/** The value of a declared field (`Infer` of its type). */
export type InferField<F extends Field> = Infer<F['type']>;

// Constructors, so that declarations read as a table (and keep their types for `Infer`).
type AsField<X> = X extends Node ? { readonly type: X } : X;
export const str = (o: Omit<StringNode, 'kind'> = {}): StringNode => ({ kind: 'string', ...o });
export const int = (o: Omit<IntNode, 'kind'> = {}): IntNode => ({ kind: 'int', ...o });
export const decimal = (o: Omit<DecimalNode, 'kind'> = {}): DecimalNode => ({ kind: 'decimal', ...o });
export const json = (o: Omit<JsonNode, 'kind'> = {}): JsonNode => ({ kind: 'json', ...o });
export const bool = (o: Omit<BoolNode, 'kind'> = {}): BoolNode => ({ kind: 'bool', ...o });
export const oneOf = <const V extends string>(values: readonly V[], o: Omit<EnumNode, 'kind' | 'values'> = {}): EnumNode<V> => ({
  kind: 'enum',
  values,
  ...o,
});
export const list = <I extends Node>(item: I, o: Omit<ListNode, 'kind' | 'item'>): ListNode<I> => ({ kind: 'list', item, ...o });
export const obj = <const F extends Record<string, Field | Node>>(
  fields: F,
  o: Omit<ObjectNode, 'kind' | 'fields'> = {},
): ObjectNode<{ readonly [K in keyof F]: AsField<F[K]> }> => ({
  kind: 'object',
  fields: Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, 'kind' in f ? { type: f as Node } : (f as Field)])) as {
    readonly [K in keyof F]: AsField<F[K]>;
  },
  ...o,
});
export const map = <V extends Node>(value: V, o: Omit<MapNode, 'kind' | 'value'> = {}): MapNode<V> => ({ kind: 'map', value, ...o });
/** A list of `{name, value}` pairs that is a map of names to values (ECS `KeyValuePair`). */
export const nameValueList = <const K extends string, V extends Node>(
  valueKey: K,
  value: V,
  o: Omit<ListNode, 'kind' | 'item' | 'order' | 'key' | 'value'> = {},
) =>
  list(
    obj({ name: { type: str({ minLength: 1 }), required: true }, [valueKey]: { type: value, required: valueKey !== 'value' } }) as ObjectNode<{
      readonly name: { readonly type: StringNode; readonly required: true };
    } & { readonly [P in K]: { readonly type: V; readonly required: P extends 'value' ? false : true } }>,
    {
      order: 'keyed',
      key: 'name',
      value: valueKey,
      ...o,
    },
  );

// ---------------------------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------------------------

/** Kind and value for a message: `string "3"`, `list [...]`, `12`. */
export function describeInput(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') return `string ${short(JSON.stringify(value))}`;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `list ${short(safeJson(value))}`;
  if (typeof value === 'object') return `map ${short(safeJson(value))}`;
  return typeof value;
}

/** JSON for a message that never throws: bigints as digits, anything unprintable as `?`. */
function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x)) ?? typeof v;
  } catch {
    return Array.isArray(v) ? '[?]' : '{?}';
  }
}

function short(s: string, max = 60): string {
  return s.length <= max ? s : `${s.slice(0, max - 3)}...`;
}

const failWith = (allowed: string) => ({ error: (iss: { input?: unknown }) => `${allowed}, got ${describeInput(iss.input)}` });

function decimalText(n: DecimalNode): string {
  const unit = n.unit ? ` (${n.unit})` : '';
  const step = n.step !== undefined ? ` in steps of ${n.step}` : '';
  if (n.min !== undefined && n.max !== undefined) return `must be a number from ${n.min} to ${n.max}${step}${unit}`;
  if (n.min !== undefined) return `must be a number >= ${n.min}${step}${unit}`;
  if (n.max !== undefined) return `must be a number <= ${n.max}${step}${unit}`;
  return `must be a number${step}${unit}`;
}

/** Whether `v` is a whole multiple of `step` (0.1: 10.0 and 2.5 are, 2.55 is not), up to float error. */
function onStep(v: number, step: number): boolean {
  const k = v / step;
  return Math.abs(k - Math.round(k)) < 1e-9;
}

function rangeText(n: IntNode): string {
  const unit = n.unit ? ` (${n.unit})` : '';
  if (n.min !== undefined && n.max !== undefined) return `must be a whole number from ${n.min} to ${n.max}${unit}`;
  if (n.min !== undefined) return `must be a whole number >= ${n.min}${unit}`;
  if (n.max !== undefined) return `must be a whole number <= ${n.max}${unit}`;
  return `must be a whole number${unit}`;
}

// ---------------------------------------------------------------------------------------------
// Walker: zod
// ---------------------------------------------------------------------------------------------

/**
 * The zod schema of a node: strict objects (an unknown key is an error, never dropped), whole
 * numbers checked without aborting the parse (so that every error of an item comes out at once),
 * and messages that say what is allowed and what was given.
 */
export function zodOf<N extends Node>(node: N): z.ZodType<Infer<N>> {
  return zodOfNode(node) as z.ZodType<Infer<N>>;
}

function zodOfNode(node: Node): z.ZodType {
  const described = <T extends z.ZodType>(s: T): T => {
    const withMeta = node.jsonSchema ? (s.meta({ ...node.jsonSchema }) as T) : s;
    return node.doc ? (withMeta.describe(node.doc) as T) : withMeta;
  };
  switch (node.kind) {
    case 'string': {
      let s = z.string();
      if (node.minLength !== undefined) s = s.min(node.minLength, failWith(`must be at least ${node.minLength} character(s)`));
      if (node.maxLength !== undefined) s = s.max(node.maxLength, failWith(`must be at most ${node.maxLength} characters`));
      if (node.pattern) s = s.regex(node.pattern, failWith(node.allowed ?? `must match ${node.pattern.source}`));
      return described(s);
    }
    case 'int': {
      const allowed = rangeText(node);
      let s: z.ZodType<number> = z.number().refine(Number.isInteger, failWith(allowed)).meta({ type: 'integer' });
      const min = node.min;
      const max = node.max;
      if (min !== undefined) s = s.refine((v) => v >= min, failWith(allowed)).meta({ minimum: min });
      if (max !== undefined) s = s.refine((v) => v <= max, failWith(allowed)).meta({ maximum: max });
      return described(s);
    }
    case 'decimal': {
      const { min, max, step } = node;
      // One check for range and step, so that a value outside both gets one message.
      const ok = (v: number) => Number.isFinite(v) && (min === undefined || v >= min) && (max === undefined || v <= max) && (step === undefined || onStep(v, step));
      const s = z.number().refine(ok, failWith(decimalText(node))).meta({ ...(min !== undefined ? { minimum: min } : {}), ...(max !== undefined ? { maximum: max } : {}) });
      return described(s);
    }
    case 'json':
      return described(z.json());
    case 'bool':
      return described(z.boolean());
    case 'enum':
      return described(z.enum(node.values as [string, ...string[]]));
    case 'list': {
      let s = z.array(zodOfNode(node.item));
      if (node.minItems !== undefined) s = s.min(node.minItems, failWith(`must hold at least ${node.minItems} item(s)`));
      if (node.maxItems !== undefined) s = s.max(node.maxItems, failWith(`must hold at most ${node.maxItems} items`));
      return described(s);
    }
    case 'map': {
      const key = node.keyPattern
        ? z.string().regex(node.keyPattern, failWith(node.keyAllowed ?? `must match ${node.keyPattern.source}`))
        : z.string();
      return described(z.record(key, zodOfNode(node.value)));
    }
    case 'object': {
      const shape = dict<z.ZodType>();
      for (const [name, f] of Object.entries(node.fields)) {
        let s = zodOfNode(f.type);
        if (f.refused) {
          const reason = f.refused;
          // `not: {}` in the JSON Schema: no value is allowed (editors flag the field too).
          s = z.unknown().refine(() => false, { error: (iss) => `${reason}, got ${describeInput(iss.input)}` }).meta({ not: {}, description: reason }) as z.ZodType;
        }
        if (f.doc) s = s.describe(f.doc);
        putOwn(shape, name, f.required && !f.refused ? s : s.optional());
      }
      return described(z.strictObject(shape));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Walker: canonical form
// ---------------------------------------------------------------------------------------------

export function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x) && !(x instanceof Date);
}

export function isPlainObject(x: CanonicalValue | undefined): x is { readonly [key: string]: CanonicalValue } {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** Code-point order, independent of the host's locale. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The generic rule for what the vocabulary does not declare: drops `undefined`, `null`, `false`,
 * empty lists and empty objects (after pruning their contents), sorts object keys, turns Dates
 * into ISO strings. Returns undefined when nothing is left.
 */
export function prune(x: unknown): CanonicalValue | undefined {
  if (x === undefined || x === null || x === false) return undefined;
  if (typeof x === 'string' || typeof x === 'number' || x === true) return x;
  if (x instanceof Date) return x.toISOString();
  if (Array.isArray(x)) {
    const items = x.map((item) => prune(item) ?? null).filter((item): item is CanonicalValue => item !== null);
    return items.length > 0 ? items : undefined;
  }
  if (typeof x === 'object') {
    const entries: [string, CanonicalValue][] = [];
    for (const key of Object.keys(x).sort(compareStrings)) {
      const v = prune(own(x as Record<string, unknown>, key));
      if (v !== undefined) entries.push([key, v]);
    }
    return entries.length > 0 ? Object.fromEntries(entries) : undefined;
  }
  return String(x);
}

export function deepEqual(a: CanonicalValue | undefined, b: CanonicalValue | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => deepEqual(item, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(own(a, k), own(b, k)));
  }
  return false;
}

function sortKeys<T>(entries: [string, T][]): Record<string, T> {
  // Map, then fromEntries: a name such as `__proto__` stays an ordinary key.
  return Object.fromEntries(new Map(entries.sort(([a], [b]) => compareStrings(a, b))));
}

/** The key a member of a keyed list is told apart by; `""` when it has none (kept, not hidden). */
function memberKey(node: ListNode, item: unknown): string {
  const k = isRecord(item) && node.key ? own(item, node.key) : undefined;
  return typeof k === 'string' ? k : typeof k === 'number' ? String(k) : '';
}

/**
 * The canonical form of `value` under `node` (see the module doc): defaults dropped, empties
 * dropped, sets sorted, keyed lists as maps keyed by their key (a duplicate key: last wins, as in
 * Docker's environment), undeclared object fields kept after the generic {@link prune} (so a field
 * the vocabulary does not know still shows as a difference). A value of the wrong type is kept as
 * it is. Returns undefined when nothing is left.
 */
export function canonicalOf(node: Node, value: unknown, ctx: CanonicalContext): CanonicalValue | undefined {
  const c = canonicalOfNode(node, value, ctx);
  return c !== undefined && node.canonicalize ? node.canonicalize(c) : c;
}

function canonicalOfNode(node: Node, value: unknown, ctx: CanonicalContext): CanonicalValue | undefined {
  const v = node.normalize ? node.normalize(value, ctx) : value;
  if (v === undefined || v === null) return undefined;
  switch (node.kind) {
    case 'string':
    case 'enum':
      return typeof v === 'string' ? (v === '' ? undefined : v) : prune(v);
    case 'int':
    case 'decimal':
    case 'json':
      return prune(v);
    case 'bool':
      // Kept as it is: whether `false` means "absent" is the field's default, decided by the object.
      return typeof v === 'boolean' ? v : prune(v);
    case 'map': {
      if (!isRecord(v)) return prune(v);
      const entries: [string, CanonicalValue][] = [];
      for (const [k, x] of Object.entries(v)) {
        const c = canonicalOf(node.value, x, ctx);
        // A map value is kept even when empty: `""` is a value a person set.
        entries.push([k, c ?? '']);
      }
      return entries.length > 0 ? sortKeys(entries) : undefined;
    }
    case 'list': {
      if (!Array.isArray(v)) return prune(v);
      if (node.order === 'keyed') {
        const byKey = new Map<string, CanonicalValue>();
        for (const item of v) {
          const key = memberKey(node, item);
          let c: CanonicalValue | undefined;
          if (node.value !== undefined) {
            const itemNode = node.item.kind === 'object' ? own(node.item.fields, node.value)?.type : undefined;
            const raw = isRecord(item) ? own(item, node.value) : item;
            c = itemNode ? canonicalOf(itemNode, raw, ctx) : prune(raw);
            c ??= '';
          } else {
            // The whole member, its key included (a volume of a name only stays `{name}`).
            c = canonicalOf(node.item, item, ctx) ?? true;
          }
          byKey.set(key, c);
        }
        return byKey.size > 0 ? sortKeys([...byKey]) : undefined;
      }
      const items = v.map((item) => canonicalOf(node.item, item, ctx)).filter((x): x is CanonicalValue => x !== undefined);
      if (items.length === 0) return undefined;
      if (node.order === 'set') {
        return items
          .map((item) => ({ item, k: JSON.stringify(item) }))
          .sort((a, b) => compareStrings(a.k, b.k))
          .map(({ item }) => item);
      }
      return items;
    }
    case 'object': {
      if (!isRecord(v)) return prune(v);
      const entries: [string, CanonicalValue][] = [];
      for (const [k, x] of Object.entries(v)) {
        const f = own(node.fields, k);
        if (!f) {
          const c = prune(x);
          if (c !== undefined) entries.push([k, c]);
          continue;
        }
        const c = canonicalOf(f.type, x, ctx);
        if (c === undefined) continue;
        if (f.default !== undefined ? deepEqual(c, f.default) : f.type.kind === 'bool' && c === false) continue;
        entries.push([k, c]);
      }
      // A boolean whose default is true and that is absent stays absent (= its default): nothing
      // to add. `false` for such a field was kept above, as a real value.
      return entries.length > 0 ? sortKeys(entries) : undefined;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Walker: import (described -> spec)
// ---------------------------------------------------------------------------------------------

/** A described field the vocabulary cannot express, by path (`containers[1].links`). */
export interface Unexpressible {
  readonly path: string;
  readonly value: unknown;
}

/**
 * The spec's value for a described `value` under `node`: ECS's own shape and order, with values
 * equal to their declared defaults, `null`, empty lists and maps left out (so that an import
 * writes what a person would, and renders back to a canonically equal value). Fields the
 * vocabulary does not declare (or declares `refused`) and that hold anything are appended to
 * `unexpressible` with their path.
 */
export function importOf(node: Node, value: unknown, path: string, unexpressible: Unexpressible[], ctx: CanonicalContext): unknown {
  if (value === undefined || value === null) return undefined;
  switch (node.kind) {
    case 'string':
    case 'enum':
      return value === '' ? undefined : value;
    case 'int':
    case 'decimal':
    case 'json':
    case 'bool':
      return value;
    case 'map':
      return isRecord(value) && Object.keys(value).length > 0 ? { ...value } : undefined;
    case 'list': {
      if (!Array.isArray(value)) return value;
      const valueKey = node.order === 'keyed' ? node.value : undefined;
      const items = value
        .map((item, i) => {
          const x = importOf(node.item, item, `${path}[${i}]`, unexpressible, ctx);
          // `""` is a value, never an absence: a `{name, value: ""}` member keeps its value (ECS
          // keeps it, and refuses an App Mesh proxy property without one).
          if (valueKey !== undefined && isRecord(item) && own(item, valueKey) === '' && isRecord(x) && !Object.hasOwn(x, valueKey)) putOwn(x, valueKey, '');
          return x;
        })
        .filter((x) => x !== undefined);
      return items.length > 0 ? items : undefined;
    }
    case 'object': {
      if (node.normalize) value = node.normalize(value, ctx);
      if (!isRecord(value)) return value;
      const out = dict<unknown>();
      for (const [k, f] of Object.entries(node.fields)) {
        if (!Object.hasOwn(value, k)) continue;
        const c = canonicalOf(f.type, own(value, k), ctx);
        if (c === undefined) continue;
        if (f.default !== undefined ? deepEqual(c, f.default) : f.type.kind === 'bool' && c === false) continue;
        const sub = `${path === '' ? '' : `${path}.`}${k}`;
        if (f.refused) {
          unexpressible.push({ path: sub, value: own(value, k) });
          continue;
        }
        const x = importOf(f.type, own(value, k), sub, unexpressible, ctx);
        if (x !== undefined) putOwn(out, k, x);
      }
      for (const [k, x] of Object.entries(value)) {
        if (Object.hasOwn(node.fields, k)) continue;
        if (prune(x) !== undefined) unexpressible.push({ path: `${path === '' ? '' : `${path}.`}${k}`, value: x });
      }
      return Object.keys(out).length > 0 ? out : undefined;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Walkers: known keys, diff order, defaults
// ---------------------------------------------------------------------------------------------

/**
 * The declared keys of every object under `node`, by its path of names (list indexes left out:
 * `containers.healthCheck`), for "did you mean" suggestions.
 */
export function knownKeysOf(node: Node, prefix: string, out: Record<string, readonly string[]> = dict()): Record<string, readonly string[]> {
  if (node.kind === 'object') {
    putOwn(out, prefix, Object.keys(node.fields));
    for (const [k, f] of Object.entries(node.fields)) knownKeysOf(f.type, prefix === '' ? k : `${prefix}.${k}`, out);
  } else if (node.kind === 'list') knownKeysOf(node.item, prefix, out);
  else if (node.kind === 'map') knownKeysOf(node.value, prefix, out);
  return out;
}

/** Field names of an object node in declaration order (the diff's order); [] for other nodes. */
export function fieldOrderOf(node: Node | undefined): readonly string[] {
  return node?.kind === 'object' ? Object.keys(node.fields) : [];
}

/**
 * The node a canonical path leads to: object fields by name, keyed lists by member key (one
 * segment), other lists by their item. Undefined when the path leaves the declarations.
 */
export function nodeAt(root: Node, path: readonly string[]): Node | undefined {
  let node: Node | undefined = root;
  for (const seg of path) {
    if (!node) return undefined;
    if (node.kind === 'object') node = own(node.fields, seg)?.type;
    else if (node.kind === 'list') {
      if (node.order !== 'keyed') return undefined;
      node = node.value !== undefined && node.item.kind === 'object' ? own(node.item.fields, node.value)?.type : node.item;
    } else if (node.kind === 'map') node = node.value;
    else return undefined;
  }
  return node;
}

/**
 * True for an object node whose absence means "all defaults": every field optional or, when
 * required, with a declared default (`ephemeralStorage` absent is `sizeInGiB` 20).
 */
export function allOptional(node: Node | undefined): boolean {
  return node?.kind === 'object' && Object.values(node.fields).every((f) => !f.required || f.default !== undefined);
}

/** The declared default of the field at `path` (its last segment a field name), if any. */
export function defaultAt(root: Node, path: readonly string[]): CanonicalValue | undefined {
  if (path.length === 0) return undefined;
  const parent = nodeAt(root, path.slice(0, -1));
  if (parent?.kind !== 'object') return undefined;
  const f = own(parent.fields, path[path.length - 1]);
  if (!f) return undefined;
  return f.default ?? (f.type.kind === 'bool' ? false : undefined);
}

/**
 * The condition of a spec write that must not land on a spec edited since it was read (`ecsr
 * rollback`, docs/history.md): it holds only while the spec item still has exactly the spec
 * attributes that were read. The spec item carries no version of its own (its attributes are the
 * spec a person writes, and `status` is the pass's), so the condition compares the content:
 * every value as read, member by member through document paths, and every other spec attribute
 * absent. `status` is not compared: the pass may write it at any time without changing the spec.
 *
 * DynamoDB caps an expression at 4 KB: a spec with more leaves than fit compares its largest
 * maps and lists whole (`#a = :a`), which DynamoDB and moto evaluate as equality of the document;
 * dynalite compares a whole map by identity, so there such a write is refused as changed (safe:
 * nothing is overwritten).
 *
 * Source: Amazon DynamoDB Developer Guide, "Condition expressions" (document paths, `size`,
 * `attribute_type`, `contains`) and "Expression limits" (4 KB per expression string).
 */
import { SPEC_ATTRIBUTES, STATUS_ATTRIBUTE } from '../core/spec';

/** What an UpdateItem (lib-dynamodb) needs for the condition: names `#c…`, values `:c…`. */
export interface WriteCondition {
  readonly ConditionExpression: string;
  readonly ExpressionAttributeNames: Record<string, string>;
  readonly ExpressionAttributeValues: Record<string, unknown>;
}

/** Longest condition expression this module builds (DynamoDB's limit is 4,096 bytes, the rest of the request has its own). */
export const MAX_CONDITION_CHARS = 3500;

class Builder {
  readonly clauses: string[] = [];
  readonly names = new Map<string, string>();
  readonly values = new Map<string, unknown>();

  name(n: string): string {
    for (const [ref, v] of this.names) if (v === n) return ref;
    const ref = `#c${this.names.size}`;
    this.names.set(ref, n);
    return ref;
  }

  value(v: unknown): string {
    const ref = `:c${this.values.size}`;
    this.values.set(ref, v);
    return ref;
  }

  /** Pins `v` at `path` leaf by leaf (`whole`: one equality of the whole value). */
  pin(path: string, v: unknown, whole: boolean): void {
    if (v === null || v === undefined) {
      this.clauses.push(`attribute_type(${path}, ${this.value('NULL')})`);
    } else if (typeof v !== 'object' || v instanceof Uint8Array || whole) {
      this.clauses.push(`${path} = ${this.value(v)}`);
    } else if (v instanceof Set) {
      this.clauses.push(`size(${path}) = ${this.value(v.size)}`);
      for (const m of v) this.clauses.push(`contains(${path}, ${this.value(m)})`);
    } else if (Array.isArray(v)) {
      this.clauses.push(`attribute_type(${path}, ${this.value('L')})`, `size(${path}) = ${this.value(v.length)}`);
      v.forEach((x, i) => this.pin(`${path}[${i}]`, x, false));
    } else {
      const entries = Object.entries(v as Record<string, unknown>);
      this.clauses.push(`attribute_type(${path}, ${this.value('M')})`, `size(${path}) = ${this.value(entries.length)}`);
      for (const [k, x] of entries) this.pin(`${path}.${this.name(k)}`, x, false);
    }
  }
}

function build(item: Record<string, unknown>, wholeAttributes: ReadonlySet<string>): Builder {
  const b = new Builder();
  for (const [name, value] of Object.entries(item)) {
    if (name === STATUS_ATTRIBUTE) continue;
    b.pin(b.name(name), value, wholeAttributes.has(name));
  }
  for (const name of SPEC_ATTRIBUTES) {
    if (name !== STATUS_ATTRIBUTE && !Object.hasOwn(item, name)) b.clauses.push(`attribute_not_exists(${b.name(name)})`);
  }
  return b;
}

/** The length of a value's pinned clauses, to choose which attributes to compare whole. */
function pinnedLength(name: string, value: unknown): number {
  const b = new Builder();
  b.pin(b.name(name), value, false);
  return b.clauses.join(' AND ').length;
}

/**
 * The condition that the spec item still holds `item`'s spec attributes exactly (plain values as
 * the document client reads them: strings, numbers, booleans, lists, maps, sets).
 */
export function unchangedSpecCondition(item: Record<string, unknown>): WriteCondition {
  const whole = new Set<string>();
  let b = build(item, whole);
  // The largest attributes first, compared whole, until the expression fits.
  const bySize = Object.entries(item)
    .filter(([n, v]) => n !== STATUS_ATTRIBUTE && v !== null && typeof v === 'object')
    .map(([n, v]) => [n, pinnedLength(n, v)] as const)
    .sort((x, y) => y[1] - x[1]);
  for (const [name] of bySize) {
    if (b.clauses.join(' AND ').length <= MAX_CONDITION_CHARS) break;
    whole.add(name);
    b = build(item, whole);
  }
  return {
    ConditionExpression: b.clauses.join(' AND '),
    ExpressionAttributeNames: Object.fromEntries(b.names),
    ExpressionAttributeValues: Object.fromEntries(b.values),
  };
}

/**
 * The local run's EventBridge: the default bus with the construct's rules (`EVENT_RULES`, the very
 * patterns the construct deploys) delivering matching events into the local SQS queue (`./sqs`), as
 * an EventBridge rule with an SQS target does (the message body is the event's JSON), and the
 * heartbeat rule's `Scheduled Event`. An event no rule matches is not delivered, as in AWS.
 *
 * Matching follows the EventBridge User Guide, "Amazon EventBridge event patterns" and "Content
 * filtering in Amazon EventBridge event patterns": every field of the pattern must match; a list
 * matches when the event's value (or, for an array value, any of its elements) equals one of its
 * values or satisfies one of its operators; a nested object matches the event's object at that
 * field. Operators: `prefix`, `suffix`, `equals-ignore-case`, `anything-but` (a value, a list or
 * `{ prefix }`), `exists`. Others (`numeric`, `cidr`, `wildcard`, `$or`) are refused with an error
 * naming them: no rule of the construct uses them.
 */
import { randomUUID } from 'node:crypto';
import { own } from '../lambda/core/dict';

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Thrown for a pattern this matcher does not implement (it never guesses). */
export class UnsupportedPatternError extends Error {
  constructor(what: string) {
    super(`The local EventBridge does not implement ${what} in event patterns (supported: values, prefix, suffix, equals-ignore-case, anything-but, exists).`);
    this.name = 'UnsupportedPatternError';
  }
}

function scalarMatches(condition: unknown, value: unknown): boolean {
  if (!isObject(condition)) return condition === value;
  const [op, arg, ...more] = Object.entries(condition).flat();
  if (more.length > 0) throw new UnsupportedPatternError(`an operator object with several keys (${Object.keys(condition).join(', ')})`);
  switch (op) {
    case 'prefix':
      if (isObject(arg)) throw new UnsupportedPatternError('prefix with options');
      return typeof value === 'string' && value.startsWith(String(arg));
    case 'suffix':
      if (isObject(arg)) throw new UnsupportedPatternError('suffix with options');
      return typeof value === 'string' && value.endsWith(String(arg));
    case 'equals-ignore-case':
      return typeof value === 'string' && value.toLowerCase() === String(arg).toLowerCase();
    case 'anything-but': {
      if (value === undefined) return false;
      if (isObject(arg)) {
        if (typeof arg.prefix === 'string') return typeof value === 'string' && !value.startsWith(arg.prefix);
        throw new UnsupportedPatternError(`anything-but with ${Object.keys(arg).join(', ')}`);
      }
      const banned = Array.isArray(arg) ? arg : [arg];
      return !banned.includes(value);
    }
    default:
      throw new UnsupportedPatternError(`the "${String(op)}" operator`);
  }
}

/** Whether the event's value at a field matches a pattern list. */
function fieldMatches(list: readonly unknown[], value: unknown): boolean {
  const exists = list.find((c) => isObject(c) && 'exists' in c) as Json | undefined;
  if (exists) return exists.exists === (value !== undefined && !isObject(value));
  if (value === undefined) return false;
  const values = Array.isArray(value) ? (value as unknown[]) : [value];
  return list.some((c) => values.some((v) => scalarMatches(c, v)));
}

/**
 * Whether `event` matches the EventBridge `pattern` (see the module docs).
 * @throws UnsupportedPatternError for an operator this matcher does not implement.
 */
export function matchesPattern(pattern: Json, event: unknown): boolean {
  const obj = isObject(event) ? event : {};
  return Object.entries(pattern).every(([field, want]) => {
    if (field === '$or') throw new UnsupportedPatternError('$or');
    const got = own(obj, field);
    if (Array.isArray(want)) return fieldMatches(want, got);
    if (isObject(want)) return matchesPattern(want, got);
    throw new UnsupportedPatternError(`a field given as ${JSON.stringify(want)} (a pattern's values are lists)`);
  });
}

/** One rule of the bus: a pattern and where matching events go. */
export interface LocalRule {
  readonly name: string;
  readonly pattern: Json;
  /** Gets the event's JSON, as an SQS target's message body. */
  readonly target: (body: string) => void;
}

/** What the bus did, for the run's summary. */
export interface BusCounts {
  /** Events put on the bus. */
  put: number;
  /** Deliveries (an event matched by two rules is delivered twice, as in AWS). */
  delivered: number;
  /** Events no rule matched (not delivered). */
  unmatched: number;
  /** Scheduled events (the heartbeat). */
  heartbeats: number;
}

/** The default bus of the local run. */
export class LocalEventBridge {
  private readonly rules: LocalRule[] = [];
  readonly counts: BusCounts = { put: 0, delivered: 0, unmatched: 0, heartbeats: 0 };

  constructor(private readonly where: { readonly account: string; readonly region: string }) {}

  /** Adds a rule; its pattern is checked at once. @throws UnsupportedPatternError */
  addRule(rule: LocalRule): void {
    matchesPattern(rule.pattern, {});
    this.rules.push(rule);
  }

  /** Puts one event on the bus: every rule it matches delivers it. @returns the rules that delivered it. */
  put(event: Json): string[] {
    this.counts.put++;
    const body = JSON.stringify(event);
    const names: string[] = [];
    for (const rule of this.rules) {
      if (!matchesPattern(rule.pattern, event)) continue;
      rule.target(body);
      names.push(rule.name);
      this.counts.delivered++;
    }
    if (names.length === 0) this.counts.unmatched++;
    return names;
  }

  /**
   * A schedule rule fires at `at`: its `Scheduled Event` (source `aws.events`, the rule's ARN in
   * `resources`; EventBridge User Guide, "Creating a rule that runs on a schedule") goes to `target`.
   */
  schedule(ruleName: string, at: Date, target: (body: string) => void): void {
    this.counts.heartbeats++;
    target(
      JSON.stringify({
        version: '0',
        id: randomUUID(),
        'detail-type': 'Scheduled Event',
        source: 'aws.events',
        account: this.where.account,
        time: at.toISOString().replace(/\.\d{3}Z$/, 'Z'),
        region: this.where.region,
        resources: [`arn:aws:events:${this.where.region}:${this.where.account}:rule/${ruleName}`],
        detail: {},
      }),
    );
  }
}

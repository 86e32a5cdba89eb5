/**
 * A small evaluator of IAM policy statements, for template tests: does a request (principal,
 * action, resource, condition context) end up allowed by these statements? It follows the IAM
 * User Guide's "Policy evaluation logic" for one policy set: an explicit Deny wins, else an Allow
 * is needed. Supports the condition operators the project's templates use (StringEquals,
 * StringLike, ArnLike, ArnEquals, Bool, Null, their Not forms, ForAllValues:/ForAnyValue:), `...IfExists`, and
 * action/resource wildcards. Resources and condition values are compared as rendered text (see
 * `flat`; `AWS::Partition` is `aws`), so `{ Ref: X }` matches the request resource `${X}`.
 */

/**
 * Renders a CloudFormation value as text: `Fn::Join` concatenated, `Ref` as `${X}`, `Fn::GetAtt`
 * as `${X.Attr}`; with `partition`, `Ref: AWS::Partition` as that partition (e.g. `aws`).
 */
export function flat(value: unknown, partition?: string): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if ('Fn::Join' in o) {
      const [sep, parts] = o['Fn::Join'] as [string, unknown[]];
      return parts.map((p) => flat(p, partition)).join(sep);
    }
    if ('Ref' in o) return partition !== undefined && o.Ref === 'AWS::Partition' ? partition : `\${${String(o.Ref)}}`;
    if ('Fn::GetAtt' in o) return `\${${(o['Fn::GetAtt'] as string[]).join('.')}}`;
  }
  return JSON.stringify(value);
}

/** {@link flat} in the commercial partition, as the requests of these tests are. */
const text = (value: unknown) => flat(value, 'aws');

export interface PolicyStatement {
  Sid?: string;
  Effect: 'Allow' | 'Deny' | string;
  Principal?: unknown;
  Action?: string | string[];
  NotAction?: string | string[];
  Resource?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

export interface Request {
  /** Action, e.g. `ecs:UpdateService` (case-insensitive, as IAM compares actions). */
  action: string;
  /** Resource ARN as text (CloudFormation values rendered with {@link flat}). */
  resource: string;
  /** Service principal making the call (resource policies); omitted for identity policies. */
  servicePrincipal?: string;
  /** Condition keys present in the request; a missing key is absent. Multi-valued keys as arrays. */
  context?: Record<string, string | string[]>;
}

const list = <T>(x: T | T[] | undefined): T[] => (x === undefined ? [] : Array.isArray(x) ? x : [x]);

/** IAM wildcard match: `*` any run of characters, `?` one character. */
function globMatch(pattern: string, value: string, caseInsensitive = false): boolean {
  const re = new RegExp(
    `^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`,
    caseInsensitive ? 'i' : '',
  );
  return re.test(value);
}

function principalMatches(principal: unknown, req: Request): boolean {
  if (principal === undefined) return true; // identity policy
  if (principal === '*') return true;
  const p = principal as Record<string, unknown>;
  if (p.AWS === '*') return true;
  if (req.servicePrincipal === undefined) return false;
  return list(p.Service as string | string[]).map(text).includes(req.servicePrincipal);
}

function conditionHolds(operator: string, key: string, expected: unknown, ctx: Record<string, string | string[]>): boolean {
  const ifExists = operator.endsWith('IfExists');
  const base = ifExists ? operator.slice(0, -'IfExists'.length) : operator;
  const wanted = list(expected as string | string[]).map(text);
  const actual = ctx[key];
  if (base === 'Null') {
    const isNull = actual === undefined;
    return wanted.some((w) => (w === 'true') === isNull);
  }
  if (base.startsWith('StringNotEquals') || base.startsWith('ArnNotEquals') || base.startsWith('StringNotLike') || base.startsWith('ArnNotLike')) {
    // Negated operators: true when the key is absent, or no value of it matches.
    if (actual === undefined) return true;
    const positive = base.replace('Not', '');
    return !conditionHolds(positive, key, expected, ctx);
  }
  if (actual === undefined) return ifExists || base.startsWith('ForAllValues:');
  const values = list(actual);
  const one = (test: (w: string, v: string) => boolean) => (v: string) => wanted.some((w) => test(w, v));
  const single = (op: string): ((v: string) => boolean) => {
    switch (op) {
      case 'StringEquals':
      case 'ArnEquals':
        return one((w, v) => w === v);
      case 'StringLike':
      case 'ArnLike':
        return one((w, v) => globMatch(w, v));
      case 'Bool':
        return one((w, v) => w.toLowerCase() === v.toLowerCase());
      default:
        throw new Error(`iam-eval: condition operator ${op} not supported`);
    }
  };
  if (base.startsWith('ForAllValues:')) return values.every(single(base.slice('ForAllValues:'.length)));
  if (base.startsWith('ForAnyValue:')) return values.some(single(base.slice('ForAnyValue:'.length)));
  return values.some(single(base));
}

/** Whether `statement` applies to `req` (principal, action, resource and every condition). */
export function statementApplies(statement: PolicyStatement, req: Request): boolean {
  if (!principalMatches(statement.Principal, req)) return false;
  const actionMatches = (patterns: string[]) => patterns.some((a) => globMatch(a, req.action, true));
  if (statement.Action !== undefined && !actionMatches(list(statement.Action))) return false;
  if (statement.NotAction !== undefined && actionMatches(list(statement.NotAction))) return false;
  const resources = list(statement.Resource as unknown).map(text);
  if (resources.length > 0 && !resources.some((r) => globMatch(r, req.resource))) return false;
  const ctx = req.context ?? {};
  for (const [operator, keys] of Object.entries(statement.Condition ?? {})) {
    for (const [key, expected] of Object.entries(keys)) {
      if (!conditionHolds(operator, key, expected, ctx)) return false;
    }
  }
  return true;
}

/** `Allow` when an Allow applies and no Deny does; `ExplicitDeny` / `ImplicitDeny` otherwise. */
export function evaluate(statements: readonly PolicyStatement[], req: Request): 'Allow' | 'ExplicitDeny' | 'ImplicitDeny' {
  const applying = statements.filter((s) => statementApplies(s, req));
  if (applying.some((s) => s.Effect === 'Deny')) return 'ExplicitDeny';
  return applying.some((s) => s.Effect === 'Allow') ? 'Allow' : 'ImplicitDeny';
}

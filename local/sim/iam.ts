/**
 * IAM policy evaluation for the simulator: whether a caller's identity-based policy allows one
 * request (action, resource ARN, condition context), following the IAM User Guide's "Policy
 * evaluation logic" for a single policy set: an explicit Deny wins, else an Allow is needed.
 *
 * Supports the condition operators of the policies this project writes: StringEquals,
 * StringNotEquals, StringLike, StringNotLike, ArnEquals, ArnNotEquals, ArnLike, ArnNotLike, Bool,
 * Null, each with `...IfExists` and the `ForAllValues:` / `ForAnyValue:` set operators, and `*` /
 * `?` wildcards in actions and resources. Values are plain strings: what a policy document holds.
 * Test support evaluates the CDK templates with it too (test/support/iam-eval.ts).
 */

/** One statement of an identity-based policy, as IAM JSON. */
export interface IamPolicyStatement {
  readonly Sid?: string;
  readonly Effect: string;
  readonly Action?: string | readonly string[];
  readonly NotAction?: string | readonly string[];
  readonly Resource?: string | readonly string[];
  readonly Condition?: Readonly<Record<string, Readonly<Record<string, string | readonly string[]>>>>;
}

/** One authorization: an action (`ecs:UpdateService`), the resource ARN, the request's condition keys. */
export interface IamRequest {
  readonly action: string;
  readonly resource: string;
  /** Condition keys present in the request (absent keys are missing); multi-valued keys as arrays. */
  readonly context?: ReadonlyMap<string, string | readonly string[]>;
}

export type IamDecision = 'Allow' | 'ExplicitDeny' | 'ImplicitDeny';

const list = <T>(x: T | readonly T[] | undefined): readonly T[] => (x === undefined ? [] : Array.isArray(x) ? (x as readonly T[]) : [x as T]);

/** IAM wildcard match: `*` any run of characters, `?` one character. */
export function iamGlob(pattern: string, value: string, caseInsensitive = false): boolean {
  const re = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`, caseInsensitive ? 'i' : '');
  return re.test(value);
}

/**
 * Whether one condition (operator, key, expected values) holds in `context`.
 * @throws Error for an operator this evaluator does not know (never silently true).
 */
export function conditionHolds(operator: string, key: string, expected: string | readonly string[], context: ReadonlyMap<string, string | readonly string[]>): boolean {
  const ifExists = operator.endsWith('IfExists');
  const base = ifExists ? operator.slice(0, -'IfExists'.length) : operator;
  const wanted = list(expected);
  const actual = context.get(key);
  if (base === 'Null') return wanted.some((w) => (w === 'true') === (actual === undefined));
  if (/^(String|Arn)Not(Equals|Like)$/.test(base)) {
    // A negated operator holds when the key is absent, or no value of it matches.
    if (actual === undefined) return true;
    return !conditionHolds(base.replace('Not', ''), key, expected, context);
  }
  if (actual === undefined) return ifExists || base.startsWith('ForAllValues:');
  const values = list(actual);
  const single = (op: string): ((v: string) => boolean) => {
    switch (op) {
      case 'StringEquals':
      case 'ArnEquals':
        return (v) => wanted.some((w) => w === v);
      case 'StringLike':
      case 'ArnLike':
        return (v) => wanted.some((w) => iamGlob(w, v));
      case 'Bool':
        return (v) => wanted.some((w) => w.toLowerCase() === v.toLowerCase());
      default:
        throw new Error(`IAM condition operator ${op} is not supported by the simulator`);
    }
  };
  if (base.startsWith('ForAllValues:')) return values.every(single(base.slice('ForAllValues:'.length)));
  if (base.startsWith('ForAnyValue:')) return values.some(single(base.slice('ForAnyValue:'.length)));
  return values.some(single(base));
}

/** Whether `statement` applies to `request` (action, resource and every condition). */
export function statementApplies(statement: IamPolicyStatement, request: IamRequest): boolean {
  const actionMatches = (patterns: readonly string[]) => patterns.some((a) => iamGlob(a, request.action, true));
  if (statement.Action !== undefined && !actionMatches(list(statement.Action))) return false;
  if (statement.NotAction !== undefined && actionMatches(list(statement.NotAction))) return false;
  const resources = list(statement.Resource);
  if (resources.length > 0 && !resources.some((r) => iamGlob(r, request.resource))) return false;
  const context = request.context ?? new Map<string, string | readonly string[]>();
  for (const [operator, keys] of Object.entries(statement.Condition ?? {})) {
    for (const [key, expected] of Object.entries(keys)) {
      if (!conditionHolds(operator, key, expected, context)) return false;
    }
  }
  return true;
}

/** `Allow` when an Allow applies and no Deny does; `ExplicitDeny` / `ImplicitDeny` otherwise. */
export function evaluatePolicy(statements: readonly IamPolicyStatement[], request: IamRequest): IamDecision {
  const applying = statements.filter((s) => statementApplies(s, request));
  if (applying.some((s) => s.Effect === 'Deny')) return 'ExplicitDeny';
  return applying.some((s) => s.Effect === 'Allow') ? 'Allow' : 'ImplicitDeny';
}

/**
 * The message AWS answers with an AccessDeniedException for a refused identity-based policy
 * check, e.g. `User: arn:aws:sts::123456789012:assumed-role/r/s is not authorized to perform:
 * ecs:ListServices on resource: * because no identity-based policy allows the ecs:ListServices action`.
 */
export function accessDeniedMessage(principalArn: string, request: IamRequest, decision: Exclude<IamDecision, 'Allow'>): string {
  const why = decision === 'ExplicitDeny' ? 'with an explicit deny in an identity-based policy' : `because no identity-based policy allows the ${request.action} action`;
  return `User: ${principalArn} is not authorized to perform: ${request.action} on resource: ${request.resource} ${why}`;
}

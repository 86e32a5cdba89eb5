/**
 * IAM policy statements of CDK templates evaluated, for template tests: does a request (principal,
 * action, resource, condition context) end up allowed by these statements? The evaluation is the
 * simulator's (`local/sim/iam.ts`: the IAM User Guide's "Policy evaluation logic" for one policy
 * set), after a principal check for resource policies. Resources and condition values are
 * compared as rendered text (see `flat`; `AWS::Partition` is `aws`), so `{ Ref: X }` matches the
 * request resource `${X}`.
 */

import { evaluatePolicy, statementApplies as simStatementApplies, type IamPolicyStatement, type IamRequest } from '../../local/sim/iam';

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

function principalMatches(principal: unknown, req: Request): boolean {
  if (principal === undefined) return true; // identity policy
  if (principal === '*') return true;
  const p = principal as Record<string, unknown>;
  if (p.AWS === '*') return true;
  if (req.servicePrincipal === undefined) return false;
  return list(p.Service as string | string[]).map(text).includes(req.servicePrincipal);
}

/** The statement with its resources and condition values as text (see {@link flat}). */
function asText(statement: PolicyStatement): IamPolicyStatement {
  const condition = Object.fromEntries(
    Object.entries(statement.Condition ?? {}).map(([op, keys]) => [op, Object.fromEntries(Object.entries(keys).map(([k, v]) => [k, list(v as unknown).map(text)]))]),
  );
  return {
    Effect: statement.Effect,
    ...(statement.Action !== undefined ? { Action: statement.Action } : {}),
    ...(statement.NotAction !== undefined ? { NotAction: statement.NotAction } : {}),
    ...(statement.Resource !== undefined ? { Resource: list(statement.Resource as unknown).map(text) } : {}),
    ...(statement.Condition ? { Condition: condition } : {}),
  };
}

const asRequest = (req: Request): IamRequest => ({ action: req.action, resource: req.resource, context: new Map(Object.entries(req.context ?? {})) });

/** Whether `statement` applies to `req` (principal, action, resource and every condition). */
export function statementApplies(statement: PolicyStatement, req: Request): boolean {
  return principalMatches(statement.Principal, req) && simStatementApplies(asText(statement), asRequest(req));
}

/** `Allow` when an Allow applies and no Deny does; `ExplicitDeny` / `ImplicitDeny` otherwise. */
export function evaluate(statements: readonly PolicyStatement[], req: Request): 'Allow' | 'ExplicitDeny' | 'ImplicitDeny' {
  return evaluatePolicy(statements.filter((s) => principalMatches(s.Principal, req)).map(asText), asRequest(req));
}

/**
 * The module-state lint of the core (`test/core/no-module-state.test.ts`): a module-level binding
 * that can change between calls makes a pure function's answer depend on what ran before it, in
 * this process only. What it refuses at the top level of a module (a function's own variables are
 * its business):
 * - a `let` or `var`;
 * - a `const` made with `new` (a Map, Set, WeakMap, Date, array or instance of any class), unless
 *   its declared type is a read-only view (`ReadonlySet`, `ReadonlyMap`, `ReadonlyArray`, `Readonly`) or it is
 *   a RegExp without the `g` or `y` flag;
 * - a `const` that starts empty (`[]`, `{}`, `dict()`): a cache or a list to fill.
 */
import ts from 'typescript';

const READONLY_TYPES = /^(ReadonlySet|ReadonlyMap|ReadonlyArray|Readonly)<|^readonly /;

function isEmptyStart(init: ts.Expression): boolean {
  let e = init;
  while (ts.isAsExpression(e) || ts.isSatisfiesExpression(e) || ts.isParenthesizedExpression(e)) e = e.expression;
  if (ts.isArrayLiteralExpression(e)) return e.elements.length === 0;
  if (ts.isObjectLiteralExpression(e)) return e.properties.length === 0;
  return ts.isCallExpression(e) && ts.isIdentifier(e.expression) && e.expression.text === 'dict' && e.arguments.length === 0;
}

/** A `new` expression other than a RegExp without the `g` or `y` flag (which alone keep a `lastIndex` between calls). */
function isNew(init: ts.Expression): boolean {
  let e = init;
  while (ts.isAsExpression(e) || ts.isSatisfiesExpression(e) || ts.isParenthesizedExpression(e)) e = e.expression;
  if (!ts.isNewExpression(e)) return false;
  if (!ts.isIdentifier(e.expression) || e.expression.text !== 'RegExp') return true;
  const flags = e.arguments?.[1];
  if (flags === undefined) return false;
  return !ts.isStringLiteral(flags) || /[gy]/.test(flags.text);
}

/**
 * The module-level mutable bindings of one TypeScript source, as `file:line name (why)` texts
 * (empty when there is none).
 */
export function moduleStateOffences(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: string[] = [];
  const at = (n: ts.Node) => `${file}:${source.getLineAndCharacterOfPosition(n.getStart(source)).line + 1}`;
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    const list = statement.declarationList;
    const isConst = (list.flags & ts.NodeFlags.Const) !== 0;
    for (const d of list.declarations) {
      const name = d.name.getText(source);
      if (!isConst) {
        out.push(`${at(d)} ${name} (a module-level ${(list.flags & ts.NodeFlags.Let) !== 0 ? 'let' : 'var'})`);
        continue;
      }
      const init = d.initializer;
      if (init === undefined) continue;
      const readonlyType = d.type !== undefined && READONLY_TYPES.test(d.type.getText(source));
      if (isNew(init) && !readonlyType) out.push(`${at(d)} ${name} (a module-level object made with new)`);
      else if (isEmptyStart(init) && !readonlyType) out.push(`${at(d)} ${name} (a module-level collection that starts empty)`);
    }
  }
  return out;
}

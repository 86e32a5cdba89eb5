/**
 * The dictionary rule (docs/DECISIONS.md): a lookup or store by a key whose type is
 * `string` (a name someone chose) must not reach `Object.prototype`. Flagged, with the TypeScript
 * type checker:
 * - `o[k]` (read or write; `delete o[k]` is harmless) where `k` is typed `string` and `o` is not an array, a string or a
 *   `const` / `readonly` field initialised as a null-prototype object (`dict(...)`, `Object.create(null)`);
 *   use a `Map`, `dict()` or `own(o, k)` from lambda/core/dict.ts;
 * - `const d: Record<string, T> = {}` (a dictionary built here starts as `dict()`);
 * - `k in o` with `k` typed `string` (use `Object.hasOwn` / `hasOwnKey`);
 * - `Object.assign` from anything but literals with fixed keys (it stores with `[[Set]]`, so a `__proto__` key replaces the prototype).
 */
import ts from 'typescript';

export interface Offence {
  readonly file: string;
  readonly line: number;
  readonly text: string;
  readonly rule: string;
}

const NULL_PROTO_INIT = /^(?:Object\.create\(\s*null\s*\)|dict(?:Of)?\s*(?:<[^>]*>)?\()/;

function isStringKey(checker: ts.TypeChecker, expr: ts.Expression): boolean {
  if (ts.isStringLiteralLike(expr) || ts.isNumericLiteral(expr)) return false;
  const type = checker.getTypeAtLocation(expr);
  const parts = type.isUnion() ? type.types : [type];
  return parts.some((t) => (t.flags & (ts.TypeFlags.String | ts.TypeFlags.Any | ts.TypeFlags.TemplateLiteral | ts.TypeFlags.StringMapping)) !== 0);
}

function isSafeContainer(checker: ts.TypeChecker, expr: ts.Expression): boolean {
  const type = checker.getApparentType(checker.getTypeAtLocation(expr));
  if (checker.isArrayType(type) || checker.isTupleType(type)) return true;
  if ((checker.getTypeAtLocation(expr).flags & ts.TypeFlags.StringLike) !== 0) return true;
  const name = type.getSymbol()?.getName();
  if (name && /^(?:Array|ReadonlyArray|String|Uint8Array|Buffer|Int32Array|Float64Array|Map|ReadonlyMap)$/.test(name)) return true;
  // A local or field declared with a null-prototype initialiser.
  const target = ts.isPropertyAccessExpression(expr) ? expr.name : expr;
  const symbol = checker.getSymbolAtLocation(target);
  const decl = symbol?.valueDeclaration;
  if (!decl || !(ts.isVariableDeclaration(decl) || ts.isPropertyDeclaration(decl)) || !decl.initializer) return false;
  // Only bindings that cannot be re-pointed at another object: `const`, `readonly` fields.
  const fixed = ts.isVariableDeclaration(decl)
    ? (ts.getCombinedNodeFlags(decl) & ts.NodeFlags.Const) !== 0
    : (ts.getCombinedModifierFlags(decl) & ts.ModifierFlags.Readonly) !== 0;
  return fixed && NULL_PROTO_INIT.test(decl.initializer.getText());
}

/** A type with a string (or template literal) index signature, e.g. `Record<string, T>`. */
function isDictionaryType(checker: ts.TypeChecker, type: ts.Type): boolean {
  const parts = type.isUnion() ? type.types : [type];
  return parts.some((t) => checker.getIndexInfosOfType(t).some((info) => (info.keyType.flags & (ts.TypeFlags.String | ts.TypeFlags.TemplateLiteral)) !== 0));
}

/** An object literal whose keys are all written out (no spread, no computed name). */
function isFixedLiteral(node: ts.Expression): boolean {
  return ts.isObjectLiteralExpression(node) && node.properties.every((p) => !ts.isSpreadAssignment(p) && !(p.name && ts.isComputedPropertyName(p.name)));
}

/**
 * Every offence in `fileNames` (absolute paths), checked in one program built with `options`.
 * `virtual` adds files (absolute path -> source text) that exist only in memory, e.g. a fixture
 * that proves the rule still catches a regression.
 */
export function dictionaryOffences(
  fileNames: readonly string[],
  options: ts.CompilerOptions,
  virtual: ReadonlyMap<string, string> = new Map(),
): Offence[] {
  const host = ts.createCompilerHost(options, true);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (name, version, onError, create) => {
    const text = virtual.get(name);
    return text !== undefined ? ts.createSourceFile(name, text, version, true) : getSourceFile.call(host, name, version, onError, create);
  };
  host.fileExists = (name) => virtual.has(name) || fileExists.call(host, name);
  host.readFile = (name) => virtual.get(name) ?? readFile.call(host, name);
  const program = ts.createProgram({ rootNames: [...fileNames, ...virtual.keys()], options: { ...options, noEmit: true }, host });
  const checker = program.getTypeChecker();
  const out: Offence[] = [];
  for (const fileName of [...fileNames, ...virtual.keys()]) {
    const sf = program.getSourceFile(fileName);
    if (!sf) throw new Error(`dictionary lint: ${fileName} is not in the program`);
    const report = (node: ts.Node, rule: string): void => {
      const { line } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
      out.push({ file: fileName, line: line + 1, text: node.getText(sf).slice(0, 80), rule });
    };
    const visit = (node: ts.Node): void => {
      if (
        ts.isElementAccessExpression(node) &&
        !ts.isDeleteExpression(node.parent) && // deleting an own property never reaches the prototype
        isStringKey(checker, node.argumentExpression) &&
        !isSafeContainer(checker, node.expression)
      ) {
        report(node, 'lookup by a chosen name in a plain object: use a Map, dict() or own()');
      } else if (
        (ts.isVariableDeclaration(node) || ts.isPropertyDeclaration(node)) &&
        node.initializer &&
        ts.isObjectLiteralExpression(node.initializer) &&
        node.initializer.properties.length === 0 &&
        isDictionaryType(checker, checker.getTypeAtLocation(node.name))
      ) {
        report(node, 'an empty `{}` typed as a dictionary: build it with dict() (or use a Map)');
      } else if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.InKeyword && isStringKey(checker, node.left)) {
        report(node, '`in` also sees Object.prototype: use Object.hasOwn / hasOwnKey');
      } else if (ts.isCallExpression(node) && node.expression.getText(sf) === 'Object.assign' && !node.arguments.slice(1).every(isFixedLiteral)) {
        report(node, 'Object.assign stores with [[Set]] (`__proto__` replaces the prototype): use a spread or dict()');
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return out;
}

/**
 * The tools rule (docs/development.md, "Tests that need an outside tool"): a test file starts an
 * outside program (moto's python3, the AWS CLI, cfn-lint, a browser: every program of `TOOLS` in
 * ./tools-setup.ts) only under the tools guard, so that the suite passes on a machine with Node.js
 * alone. Found from the syntax of each file, without running it:
 *
 * - a start is a call of a `node:child_process` launcher (`spawn`, `spawnSync`, `exec`,
 *   `execSync`, `execFile`, `execFileSync`, `fork`, also promisified or through a namespace
 *   import) whose program is a tool's program: a string literal (for `exec`/`execSync` and for
 *   `sh -c`, the command's first word) or `toolCommand('x')` / `toolPath('x')`; a call of
 *   playwright's `chromium.launch`; or a call of a helper that starts one (a named function of
 *   any file under test/, such as `startMoto` in ./moto.ts, followed through imports);
 * - it is guarded when `needs(..., 'x')`, `has('x')`, `toolCommand('x')` or `toolPath('x')`
 *   appears in the options of an enclosing `describe` / `it` / `test` (`.skipIf(...)` included),
 *   in the condition of an enclosing `if`, `?:`, `&&` or `||`, or in the condition of an `if`
 *   before it in an enclosing block (an early `return` / `continue`);
 * - a start inside a named function that is not guarded there makes that function a helper: its
 *   callers are checked instead.
 */
import { dirname, resolve } from 'node:path';
import ts from 'typescript';
import { TOOL_NAMES, TOOLS, type ToolName } from './tools-setup';

export interface UnguardedStart {
  readonly file: string;
  readonly line: number;
  readonly tool: ToolName;
  readonly text: string;
}

const PROGRAM_TOOL = new Map<string, ToolName>(TOOL_NAMES.flatMap((t) => TOOLS[t].programs.map((p): [string, ToolName] => [p, t])));
const LAUNCHERS = new Set(['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']);
/** Launchers whose first argument is a shell command line rather than a program. */
const SHELL_LAUNCHERS = new Set(['exec', 'execSync']);
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh']);
const TEST_CALLS = new Set(['describe', 'it', 'test', 'suite']);
const GUARDS = new Set(['needs', 'has', 'toolCommand', 'toolPath']);

function toolOfCommandLine(line: string): ToolName | undefined {
  const first = line.trim().split(/\s+/)[0] ?? '';
  return PROGRAM_TOOL.get(first.split('/').pop() ?? '');
}

function toolOfProgram(program: string): ToolName | undefined {
  return PROGRAM_TOOL.get(program.split('/').pop() ?? '');
}

/** `toolCommand('x')` / `toolPath('x')` anywhere in `node`. */
function toolLookupsIn(node: ts.Node): ToolName[] {
  const out: ToolName[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isCallExpression(n) && ts.isIdentifier(n.expression) && (n.expression.text === 'toolCommand' || n.expression.text === 'toolPath')) {
      const arg = n.arguments[0];
      if (arg && ts.isStringLiteralLike(arg) && (TOOL_NAMES as string[]).includes(arg.text)) out.push(arg.text as ToolName);
    }
    ts.forEachChild(n, visit);
  };
  visit(node);
  return out;
}

/** String literals anywhere in `node` (`toolCommand('x') ?? 'x'` names its program twice). */
function literalsIn(node: ts.Node): string[] {
  const out: string[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isStringLiteralLike(n)) out.push(n.text);
    ts.forEachChild(n, visit);
  };
  visit(node);
  return out;
}

/** Whether `node` holds a guard for `tool`: needs(..., 'tool'), has('tool'), toolCommand('tool'), toolPath('tool'). */
function guards(node: ts.Node, tool: ToolName): boolean {
  let found = false;
  const visit = (n: ts.Node): void => {
    if (found) return;
    if (ts.isCallExpression(n) && ts.isIdentifier(n.expression) && GUARDS.has(n.expression.text)) {
      if (n.arguments.some((a) => ts.isStringLiteralLike(a) && a.text === tool)) {
        found = true;
        return;
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(node);
  return found;
}

/** The root identifier of `describe.skipIf(x)(...)`, `it.each(...)(...)`, `test(...)`. */
function testCallRoot(call: ts.CallExpression): string | undefined {
  let e: ts.Expression = call.expression;
  for (;;) {
    if (ts.isCallExpression(e)) e = e.expression;
    else if (ts.isPropertyAccessExpression(e)) e = e.expression;
    else break;
  }
  return ts.isIdentifier(e) ? e.text : undefined;
}

/** The options of a test call and of its callee chain (`it.skipIf(cond)`), not its functions. */
function testCallOptions(call: ts.CallExpression): ts.Node[] {
  const out: ts.Node[] = [];
  let e: ts.Expression = call;
  for (;;) {
    if (ts.isCallExpression(e)) {
      out.push(...e.arguments.filter((a) => !ts.isArrowFunction(a) && !ts.isFunctionExpression(a)));
      e = e.expression;
    } else if (ts.isPropertyAccessExpression(e)) e = e.expression;
    else break;
  }
  return out;
}

/** The name a function is known by in its file, when it is a declared helper (not a callback). */
function helperName(fn: ts.SignatureDeclaration): string | undefined {
  if (ts.isFunctionDeclaration(fn)) return fn.name?.text;
  if ((ts.isArrowFunction(fn) || ts.isFunctionExpression(fn)) && ts.isVariableDeclaration(fn.parent) && ts.isIdentifier(fn.parent.name)) {
    return fn.parent.name.text;
  }
  if (ts.isMethodDeclaration(fn) && ts.isIdentifier(fn.name)) return undefined; // methods: their callers are not followed
  return undefined;
}

type Walk = { guarded: true } | { guarded: false; helper?: string };

/** From a start upwards: is it guarded, or inside a named helper whose callers decide? */
function walkUp(start: ts.Node, tool: ToolName): Walk {
  let child: ts.Node = start;
  for (let n: ts.Node | undefined = start.parent; n !== undefined; child = n, n = n.parent) {
    if (ts.isCallExpression(n) && n !== start) {
      const root = testCallRoot(n);
      if (root !== undefined && TEST_CALLS.has(root) && testCallOptions(n).some((o) => guards(o, tool))) return { guarded: true };
    }
    if (ts.isIfStatement(n) && child !== n.expression && guards(n.expression, tool)) return { guarded: true };
    if (ts.isConditionalExpression(n) && child !== n.condition && guards(n.condition, tool)) return { guarded: true };
    if (ts.isBinaryExpression(n) && child === n.right && (n.operatorToken.kind === ts.SyntaxKind.AmpersandAmpersandToken || n.operatorToken.kind === ts.SyntaxKind.BarBarToken) && guards(n.left, tool)) {
      return { guarded: true };
    }
    if (ts.isBlock(n) || ts.isSourceFile(n) || ts.isCaseClause(n)) {
      const statements = n.statements as ts.NodeArray<ts.Statement>;
      for (const s of statements) {
        if (s === child) break;
        if (ts.isIfStatement(s) && guards(s.expression, tool)) return { guarded: true };
      }
    }
    if (ts.isFunctionLike(n)) {
      const name = helperName(n);
      if (name !== undefined) return { guarded: false, helper: name };
    }
  }
  return { guarded: false };
}

interface FileFacts {
  readonly source: ts.SourceFile;
  /** Local name -> the `node:child_process` launcher it is (`run = promisify(execFile)` included). */
  readonly launchers: Map<string, string>;
  /** Namespace imports of `node:child_process`. */
  readonly childProcessNamespaces: Set<string>;
  /** Local names bound to playwright's `chromium`. */
  readonly browsers: Set<string>;
  /** Local name -> [the file it is imported from, its exported name]. */
  readonly imports: Map<string, [string, string]>;
}

function factsOf(file: string, text: string): FileFacts {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const launchers = new Map<string, string>();
  const childProcessNamespaces = new Set<string>();
  const browsers = new Set<string>();
  const imports = new Map<string, [string, string]>();
  for (const s of source.statements) {
    if (!ts.isImportDeclaration(s) || !ts.isStringLiteral(s.moduleSpecifier)) continue;
    const from = s.moduleSpecifier.text;
    const bindings = s.importClause?.namedBindings;
    if (from === 'node:child_process' || from === 'child_process') {
      if (bindings && ts.isNamespaceImport(bindings)) childProcessNamespaces.add(bindings.name.text);
      if (s.importClause?.name) childProcessNamespaces.add(s.importClause.name.text);
      if (bindings && ts.isNamedImports(bindings)) {
        for (const el of bindings.elements) {
          const imported = (el.propertyName ?? el.name).text;
          if (LAUNCHERS.has(imported)) launchers.set(el.name.text, imported);
        }
      }
    } else if (/^playwright(-core)?$/.test(from) && bindings && ts.isNamedImports(bindings)) {
      for (const el of bindings.elements) if ((el.propertyName ?? el.name).text === 'chromium') browsers.add(el.name.text);
    } else if (from.startsWith('.') && bindings && ts.isNamedImports(bindings)) {
      const target = resolve(dirname(file), from).replace(/\.(ts|js)$/, '') + '.ts';
      for (const el of bindings.elements) imports.set(el.name.text, [target, (el.propertyName ?? el.name).text]);
    }
  }
  // const run = promisify(execFile)
  const visit = (n: ts.Node): void => {
    if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.initializer && ts.isCallExpression(n.initializer)) {
      const call = n.initializer;
      const arg = call.arguments[0];
      if (ts.isIdentifier(call.expression) && call.expression.text === 'promisify' && arg && ts.isIdentifier(arg) && launchers.has(arg.text)) {
        launchers.set(n.name.text, launchers.get(arg.text)!);
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(source);
  return { source, launchers, childProcessNamespaces, browsers, imports };
}

/** The tools a call starts directly (a launcher or a browser), or [] when it starts none. */
function directStarts(call: ts.CallExpression, facts: FileFacts): ToolName[] {
  const callee = call.expression;
  let launcher: string | undefined;
  if (ts.isIdentifier(callee)) launcher = facts.launchers.get(callee.text);
  else if (ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression)) {
    if (facts.childProcessNamespaces.has(callee.expression.text) && LAUNCHERS.has(callee.name.text)) launcher = callee.name.text;
    if (facts.browsers.has(callee.expression.text) && /^launch/.test(callee.name.text)) return ['chromium'];
  }
  if (launcher === undefined) return [];
  const [first, second] = call.arguments;
  if (first === undefined) return [];
  const tools = new Set<ToolName>(toolLookupsIn(first));
  for (const literal of literalsIn(first)) {
    const tool = SHELL_LAUNCHERS.has(launcher) ? toolOfCommandLine(literal) : toolOfProgram(literal);
    if (tool) tools.add(tool);
    // sh -c 'aws ...'
    if (!SHELL_LAUNCHERS.has(launcher) && SHELLS.has(literal) && second && ts.isArrayLiteralExpression(second)) {
      const [flag, line] = second.elements;
      if (flag && ts.isStringLiteralLike(flag) && flag.text === '-c' && line && ts.isStringLiteralLike(line)) {
        const shellTool = toolOfCommandLine(line.text);
        if (shellTool) tools.add(shellTool);
      }
    }
  }
  return [...tools];
}

/**
 * Every start of an outside program in `files` (path -> text) that no tools guard covers.
 * Helpers are followed across the given files, so pass every file of the test tree.
 */
export function unguardedStarts(files: ReadonlyMap<string, string>): UnguardedStart[] {
  const facts = new Map([...files].map(([file, text]) => [file, factsOf(file, text)]));
  /** file -> helper name -> the tools it starts for its callers. */
  const helpers = new Map<string, Map<string, Set<ToolName>>>();
  const helperTools = (file: string, name: string): Set<ToolName> | undefined => helpers.get(file)?.get(name);
  const calledTools = (call: ts.CallExpression, file: string, f: FileFacts): ToolName[] => {
    const direct = directStarts(call, f);
    if (!ts.isIdentifier(call.expression)) return direct;
    const name = call.expression.text;
    const local = helperTools(file, name);
    const imported = f.imports.get(name);
    const viaImport = imported ? helperTools(imported[0], imported[1]) : undefined;
    return [...new Set([...direct, ...(local ?? []), ...(viaImport ?? [])])];
  };
  // Helpers first, to a fixed point: a helper that calls a helper is a helper.
  for (let changed = true; changed; ) {
    changed = false;
    for (const [file, f] of facts) {
      const visit = (n: ts.Node): void => {
        if (ts.isCallExpression(n)) {
          for (const tool of calledTools(n, file, f)) {
            const walk = walkUp(n, tool);
            if (walk.guarded || walk.helper === undefined) continue;
            const byName = helpers.get(file) ?? new Map<string, Set<ToolName>>();
            helpers.set(file, byName);
            const set = byName.get(walk.helper) ?? new Set<ToolName>();
            byName.set(walk.helper, set);
            if (!set.has(tool)) {
              set.add(tool);
              changed = true;
            }
          }
        }
        ts.forEachChild(n, visit);
      };
      visit(f.source);
    }
  }
  const out: UnguardedStart[] = [];
  for (const [file, f] of facts) {
    const visit = (n: ts.Node): void => {
      if (ts.isCallExpression(n)) {
        for (const tool of calledTools(n, file, f)) {
          const walk = walkUp(n, tool);
          if (walk.guarded || walk.helper !== undefined) continue;
          const line = f.source.getLineAndCharacterOfPosition(n.getStart(f.source)).line + 1;
          out.push({ file, line, tool, text: n.getText(f.source).split('\n')[0].slice(0, 80) });
        }
      }
      ts.forEachChild(n, visit);
    };
    visit(f.source);
  }
  return out;
}

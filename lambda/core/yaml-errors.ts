/**
 * YAML syntax errors in the words of the person who made them. The `yaml` package reports where it
 * noticed a problem, which is often the end of the file (an unclosed quote) or the line after it
 * (an unclosed `[`); a person wants the line where the mistake is: where the quote or bracket was
 * opened, the line indented too far, the second copy of a key. This module finds that line in the
 * file's concrete syntax tree (the `yaml` package's `Parser`, which keeps every token's offset) and
 * says what is wrong and what to do in one sentence.
 */
import { Parser, type YAMLError } from 'yaml';

/** A syntax error placed where the mistake is. */
export interface ExplainedYamlError {
  /** 0-based character offset of the mistake (the opening quote or bracket, the bad line's first character). */
  offset: number;
  /** One sentence, without a leading "YAML syntax error". */
  message: string;
}

/** The fields of the `yaml` package's CST tokens this module reads. */
interface Token {
  type: string;
  offset: number;
  indent?: number;
  source?: string;
  start?: Token | Token[];
  end?: Token[];
  value?: Token;
  items?: CollectionItem[];
}

interface CollectionItem {
  start?: Token[];
  key?: Token | null;
  sep?: Token[];
  value?: Token | null;
}

/** A collection token (block map, block sequence, flow collection) with its items. */
interface Collection extends Token {
  items: CollectionItem[];
}


function isToken(x: unknown): x is Token {
  return typeof x === 'object' && x !== null && typeof (x as Token).type === 'string' && typeof (x as Token).offset === 'number';
}

/** Every token of the tree, parents before children, in file order. */
function* walk(token: Token | null | undefined): Generator<Token> {
  if (!isToken(token)) return;
  yield token;
  if (Array.isArray(token.start)) for (const t of token.start) yield* walk(t);
  else if (isToken(token.start)) yield* walk(token.start);
  for (const item of token.items ?? []) {
    for (const t of item.start ?? []) yield* walk(t);
    yield* walk(item.key);
    for (const t of item.sep ?? []) yield* walk(t);
    yield* walk(item.value);
  }
  yield* walk(token.value);
  for (const t of token.end ?? []) yield* walk(t);
}

/** A scalar's text as written, shortened for a message. */
function shown(source: string): string {
  const oneLine = source.split('\n')[0].trim();
  return oneLine.length > 40 ? `${oneLine.slice(0, 39)}…` : oneLine;
}

/** `1 space`, `4 spaces`. */
function spaces(n: number): string {
  return n === 1 ? '1 space' : `${n} spaces`;
}

/** The line starting at `offset`, without its newline. */
function lineText(text: string, offset: number): string {
  const end = text.indexOf('\n', offset);
  return text.slice(offset, end < 0 ? undefined : end);
}

/** Offset of the nearest line before the line starting at `offset` that holds more than a comment. */
function previousContentLine(text: string, offset: number): number | undefined {
  let end = offset - 1;
  while (end > 0) {
    const start = text.lastIndexOf('\n', end - 1) + 1;
    const line = text.slice(start, end).trim();
    if (line !== '' && !line.startsWith('#')) return start;
    end = start - 1;
  }
  return undefined;
}

/** The text of a plain or quoted key, as it reads. */
function keyText(token: Token | null | undefined): string | undefined {
  if (!token || typeof token.source !== 'string') return undefined;
  if (token.type === 'scalar' || token.type === 'single-quoted-scalar' || token.type === 'double-quoted-scalar') return token.source;
  return undefined;
}

/** What an explainer reads: the text, the error, its position and the file's tokens. */
interface YamlErrorContext {
  readonly text: string;
  readonly error: YAMLError;
  /** 0-based offset where the `yaml` package noticed the error. */
  readonly pos: number;
  /** Every CST token of the text, parents before children, in file order. */
  readonly tokens: readonly Token[];
  /** 1-based line of a 0-based offset. */
  readonly lineOf: (offset: number) => number;
}

/** An explanation of one kind of error, or undefined when the error is not of that kind. */
type Explainer = (c: YamlErrorContext) => ExplainedYamlError | undefined;

/** Offset of the start of the line holding `offset`. */
function lineStart(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

/** 1-based column of `offset` on its line. */
function columnOf(text: string, offset: number): number {
  return offset - lineStart(text, offset) + 1;
}

/** The number of spaces that indent the line holding `offset`. */
function indentAt(text: string, offset: number): number {
  return /^ */.exec(lineText(text, lineStart(text, offset)))![0].length;
}

/** An unclosed quote: the quoted scalar that runs up to the error (often the end of the file). */
function unclosedQuote({ text, error, pos, tokens, lineOf }: YamlErrorContext): ExplainedYamlError | undefined {
  if (!(error.code === 'MISSING_CHAR' && /quote/i.test(error.message))) return undefined;
  const quoted = tokens.filter((t) => (t.type === 'double-quoted-scalar' || t.type === 'single-quoted-scalar') && t.offset <= pos).at(-1);
  if (!quoted) return undefined;
  const q = quoted.type === 'double-quoted-scalar' ? '"' : "'";
  const reach = pos >= text.trimEnd().length ? 'YAML read to the end of the file looking for it' : `YAML read on to line ${lineOf(pos)} looking for it`;
  return { offset: quoted.offset, message: `the ${q} opened at column ${columnOf(text, quoted.offset)} is never closed (${reach}): end the value with ${q}.` };
}

/** An unclosed flow collection: the `[` or `{` without its own `]` or `}`. */
function unclosedFlowCollection({ text, error, pos, tokens, lineOf }: YamlErrorContext): ExplainedYamlError | undefined {
  if (!/flow (sequence|map)|end with a [\]}]/i.test(error.message)) return undefined;
  const closer = (t: Token) => (isToken(t.start) && t.start.source === '{' ? 'flow-map-end' : 'flow-seq-end');
  const open = tokens.filter((t) => t.type === 'flow-collection' && t.offset <= pos && !(t.end ?? []).some((e) => e.type === closer(t)));
  const wanted = /flow map|\}/i.test(error.message) ? '{' : /flow sequence|\]/i.test(error.message) ? '[' : undefined;
  const unclosed = open.filter((t) => !wanted || (isToken(t.start) && t.start.source === wanted)).at(-1) ?? open.at(-1);
  if (!unclosed || !isToken(unclosed.start)) return undefined;
  const bracket = unclosed.start.source === '{' ? '{' : '[';
  const close = bracket === '{' ? '}' : ']';
  const what = bracket === '{' ? 'mapping' : 'list';
  const wrong = (unclosed.end ?? []).find((e) => e.type === 'flow-seq-end' || e.type === 'flow-map-end');
  const column = columnOf(text, unclosed.offset);
  const message = wrong
    ? `the ${what} opened with ${bracket} at column ${column} ends with ${wrong.source} on line ${lineOf(wrong.offset)}: close it with ${close}.`
    : `the ${what} opened with ${bracket} at column ${column} is never closed: end it with ${close} (a ${bracket} ${close} ${what} may span lines, each indented more than its key).`;
  return { offset: unclosed.offset, message };
}

/** A closing bracket that closes nothing. */
function strayCloser({ text, error, pos }: YamlErrorContext): ExplainedYamlError | undefined {
  if (!(error.code === 'UNEXPECTED_TOKEN' && /flow-(seq|map)-end/.test(error.message))) return undefined;
  const close = /flow-map-end/.test(error.message) ? '}' : ']';
  const open = close === '}' ? '{' : '[';
  return { offset: pos, message: `the ${close} at column ${columnOf(text, pos)} closes no ${open}: remove it, or add the ${open} it belongs to.` };
}

/** A backslash escape YAML does not know inside double quotes. */
function badEscape({ text, error, pos }: YamlErrorContext): ExplainedYamlError | undefined {
  if (error.code !== 'BAD_DQ_ESCAPE') return undefined;
  const escape = text.slice(pos, pos + 2);
  return {
    offset: pos,
    message: `${escape} at column ${columnOf(text, pos)} is not an escape YAML knows inside "...": write \\\\ for a backslash, or use single quotes, where \\ is an ordinary character.`,
  };
}

/** A plain value starting with a character YAML reserves (`@`, a backquote). */
function badScalarStart({ text, error, pos }: YamlErrorContext): ExplainedYamlError | undefined {
  if (error.code !== 'BAD_SCALAR_START') return undefined;
  const c = text[pos] ?? '';
  return { offset: pos, message: `a value cannot start with ${c} (column ${columnOf(text, pos)}) unless it is quoted: put it in quotes.` };
}

/** A tab used for indentation. */
function tabAsIndent({ text, error, pos }: YamlErrorContext): ExplainedYamlError | undefined {
  if (error.code !== 'TAB_AS_INDENT') return undefined;
  return { offset: lineStart(text, pos), message: 'this line is indented with a tab, and YAML indents with spaces only: replace the tab with spaces.' };
}

/** A duplicate key: the second one, naming the line of the first. */
function duplicateKey({ error, pos, tokens, lineOf }: YamlErrorContext): ExplainedYamlError | undefined {
  if (error.code !== 'DUPLICATE_KEY') return undefined;
  const collections = tokens.filter((t): t is Collection => Array.isArray(t.items));
  for (const c of collections) {
    const keys = c.items.map((i) => i.key).filter(isToken);
    const second = keys.find((k) => k.offset === pos);
    if (!second) continue;
    const name = keyText(second);
    const first = keys.find((k) => k !== second && keyText(k) === name);
    const where = first ? ` (first on line ${lineOf(first.offset)})` : '';
    return { offset: second.offset, message: `${name === undefined ? 'this key' : `\`${shown(name)}\``} is given twice in the same mapping${where}: keep one of them.` };
  }
  return { offset: pos, message: 'a key is given twice in the same mapping: keep one of them.' };
}

/**
 * A line indented under a value that cannot hold it: YAML made one multi-line key of the value
 * and the next line (`image: nginx` then `  desiredCount: 2`), or the value holds `key: value`.
 */
function indentedUnderValue({ text, error, pos, tokens, lineOf }: YamlErrorContext): ExplainedYamlError | undefined {
  if (error.code !== 'BLOCK_AS_IMPLICIT_KEY' && error.code !== 'MULTILINE_IMPLICIT_KEY') return undefined;
  const key = tokens.find((t) => t.type === 'scalar' && t.offset === pos && typeof t.source === 'string');
  const newline = key?.source?.indexOf('\n') ?? -1;
  if (key && newline >= 0) {
    // The first line of the key's continuation that holds text.
    const rest = key.source!.slice(newline + 1);
    const skip = /^\s*/.exec(rest)![0].length;
    const bad = key.offset + newline + 1 + skip;
    const above = lineStart(text, pos);
    const aboveText = lineText(text, above);
    return {
      offset: lineStart(text, bad),
      message:
        `this line is indented ${spaces(indentAt(text, bad))}, more than \`${shown(aboveText)}\` on line ${lineOf(above)}, so YAML reads it as the rest of that value, ` +
        `which cannot hold a key: indent it as the keys above it are.`,
    };
  }
  if (error.code === 'BLOCK_AS_IMPLICIT_KEY') {
    return {
      offset: pos,
      message: 'a value on the same line as its key cannot be a mapping (`a: b: c`): put the inner key on its own line, indented, or quote the value.',
    };
  }
  return undefined;
}

/** An item at a column that matches neither the mapping it follows nor its parent's. */
function misalignedItem({ text, error, pos, lineOf }: YamlErrorContext): ExplainedYamlError | undefined {
  if (!(error.code === 'BAD_INDENT' && /items must start at the same column/i.test(error.message))) return undefined;
  const bad = lineStart(text, pos);
  const above = previousContentLine(text, bad);
  const place = above === undefined ? '' : `, the line above it (\`${shown(lineText(text, above))}\`, line ${lineOf(above)}) ${spaces(indentAt(text, above))}`;
  return {
    offset: bad,
    message: `this line is indented ${spaces(indentAt(text, bad))}${place}: YAML nests by indentation, so indent it as the keys it belongs with.`,
  };
}

/** The explainers, in the order they are tried: the first that recognises the error answers. */
const EXPLAINERS: readonly Explainer[] = [
  unclosedQuote,
  unclosedFlowCollection,
  strayCloser,
  badEscape,
  badScalarStart,
  tabAsIndent,
  duplicateKey,
  indentedUnderValue,
  misalignedItem,
];

/**
 * Tells where a YAML syntax error is and what to do about it, in one sentence.
 * Covers an unclosed `"`, `'`, `[` or `{` (the line where it was opened), a duplicate key (the
 * second one, naming the line of the first), a tab used for indentation, a line indented so that
 * YAML reads it as part of the value above (or as a key no mapping has), and a mapping written as
 * a value on its key's line. Other errors keep the `yaml` package's message at its position.
 * @param text the whole YAML text the error comes from.
 * @param error an error of `parseAllDocuments(text, ...)`.
 * @param lineOf 1-based line of a 0-based character offset of `text`.
 */
export function explainYamlError(text: string, error: YAMLError, lineOf: (offset: number) => number): ExplainedYamlError {
  const pos = error.pos[0];
  const fallback: ExplainedYamlError = { offset: pos, message: error.message };
  let tokens: Token[];
  try {
    tokens = [...new Parser().parse(text)].flatMap((doc) => [...walk(doc as unknown as Token)]);
  } catch {
    return fallback;
  }
  const context: YamlErrorContext = { text, error, pos, tokens, lineOf };
  for (const explain of EXPLAINERS) {
    const explained = explain(context);
    if (explained) return explained;
  }
  return fallback;
}

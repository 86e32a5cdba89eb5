/**
 * Specs in YAML files: what `ecsr` reads (apply, validate, diff) before writing items to the
 * table. A file holds many specs, as several documents (`---`), as a top-level list, or both.
 */
import { Composer, isCollection, isMap, isScalar, isSeq, LineCounter, Parser, visit, type Document, type Node as YamlNode, type YAMLError } from 'yaml';
import { parseSpecItem } from './spec';
import { explainYamlError } from './yaml-errors';
import type { SpecParseResult } from './types';

/** One spec found in a YAML file. */
export interface YamlSpecDoc {
  /** 0-based position of the spec in the file, counting list items and documents. */
  index: number;
  /** 1-based line where the spec's mapping starts. */
  line?: number;
  /** The parse result; its errors name attribute paths within this spec. */
  result: SpecParseResult;
  /** The mapping as plain JS (what would be written to DynamoDB). */
  item?: Record<string, unknown>;
  /**
   * For an invalid spec: the 1-based line of each of `result.errors`, in the same order (the line
   * of the attribute the error names when the YAML has it, else `line`).
   */
  errorLines?: (number | undefined)[];
}

/** A problem with the file itself (YAML syntax, or a document that is not a spec). */
export interface YamlSpecError {
  file?: string;
  /** 1-based line. */
  line?: number;
  message: string;
}

/**
 * Weighted alias uses allowed per document: the `yaml` package's `maxAliasCount`, which counts each
 * use of an anchor times the aliases the anchored node holds itself. Sized for real files (a list
 * of thousands of specs each merging one `<<: *defaults`), while an alias bomb ("billion laughs",
 * an anchor of aliases of anchors of aliases) passes it within a few levels.
 */
export const MAX_ALIAS_COUNT = 5_000;

/**
 * Largest spec file read, in bytes (UTF-8): 4 MiB, thousands of specs. Parsing keeps a
 * syntax tree many times the text's size; a larger set of specs is split over several files
 * (`ecsr apply -f DIR` reads every `*.yaml` of a directory).
 */
export const MAX_SPEC_FILE_BYTES = 4 * 1024 * 1024;

/** The error of a text larger than {@link MAX_SPEC_FILE_BYTES}. */
export function specFileTooLargeMessage(bytes: number): string {
  return (
    `the file is ${bytes} bytes; a spec file may hold at most ${MAX_SPEC_FILE_BYTES} (4 MiB): ` +
    'split the specs over several files (ecsr apply -f DIR reads every *.yaml of a directory)'
  );
}

function kindOf(node: unknown): string {
  if (node === null || node === undefined || (isScalar(node) && node.value === null)) return 'an empty value';
  if (isSeq(node)) return 'a list';
  if (isMap(node)) return 'a mapping';
  return 'a scalar';
}

/**
 * The line of the attribute a spec error names, in the spec's mapping: the line of the deepest
 * key or list item of `path` (`cpu`, `healthCheck.retries`, `environment.MY VAR`, `subnets[2]`)
 * that the YAML has. Names may hold dots (`environment.A.B`), so at each mapping the longest key
 * that the path continues with wins.
 * @returns undefined when not even the first attribute is in the mapping (a missing attribute,
 *   one from a merge key `<<`, or the whole item `(item)`).
 */
export function attributeLine(spec: YamlNode, path: string, lineOf: (offset: number) => number): number | undefined {
  let node: unknown = spec;
  let rest = path;
  let line: number | undefined;
  while (rest !== '') {
    if (isMap(node)) {
      let best: { name: string; keyNode: YamlNode; value: unknown } | undefined;
      for (const pair of node.items) {
        if (!isScalar(pair.key)) continue;
        const key = pair.key.value === null || pair.key.value === undefined ? '' : String(pair.key.value);
        for (const name of key === '' ? ['""', ''] : [key]) {
          const continues = rest === name || rest.startsWith(`${name}.`) || rest.startsWith(`${name}[`);
          if (name !== '' && continues && (!best || name.length > best.name.length)) best = { name, keyNode: pair.key, value: pair.value };
        }
      }
      if (!best) break;
      if (best.keyNode.range) line = lineOf(best.keyNode.range[0]);
      node = best.value;
      rest = rest.slice(best.name.length).replace(/^\./, '');
    } else if (isSeq(node)) {
      const m = /^\[(\d+)\]/.exec(rest);
      const item = m ? (node.items[Number(m[1])] as YamlNode | undefined) : undefined;
      if (!m || !item) break;
      if (item.range) line = lineOf(item.range[0]);
      node = item;
      rest = rest.slice(m[0].length).replace(/^\./, '');
    } else {
      break;
    }
  }
  return line;
}

/** What is wrong with a YAML warning's construct, in one sentence, or the package's message. */
function explainWarning(code: string, message: string): string {
  if (code === 'TAG_RESOLVE_FAILED') {
    const tag = /Unresolved tag: (\S+)/.exec(message)?.[1] ?? 'this tag';
    return (
      `the tag ${tag} is not one YAML knows, and a spec is plain YAML (no CloudFormation !Ref, !Sub or !GetAtt, ` +
      'no custom tags): write the value itself'
    );
  }
  if (code === 'BAD_COLLECTION_TYPE') return `${message}: remove the tag, or write the value it expects`;
  if (code === 'BAD_ALIAS') return `${message}: put a space between the anchor or alias and the colon`;
  return message;
}

/**
 * Why the document could not be turned into values: the `yaml` package's alias limit, said so a
 * person knows what to change; other errors as they are.
 */
function explainToJsError(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (/resource exhaustion/i.test(message)) {
    return (
      `its aliases expand too far (more than ${MAX_ALIAS_COUNT} alias uses, each counted times the aliases its anchor holds: ` +
      'the shape of an alias bomb); share settings with one anchor per document, or split the list into documents (---)'
    );
  }
  return message;
}

/**
 * Reads every spec of a YAML file (YAML 1.2 core schema, so `yes` is a string and `1e3` a
 * number; merge keys `<<` are honoured; duplicate keys are errors).
 *
 * Each document (separated by `---`) is either one spec (a mapping) or a list of specs; empty
 * documents are skipped. A document with a syntax error contributes no spec: its first error is
 * reported at the line where the mistake is (where an unclosed quote or bracket was opened, the
 * line indented too far, the second copy of a key), in one sentence, and the other documents are
 * still read. A document the parser warns about contributes no spec either, one error per warning
 * at its line: a tag YAML does not know (`!Ref`: the package would keep the bare value), an
 * ambiguous anchor, a key that is itself a list or mapping (the package would make a string of
 * it). A document whose aliases expand beyond {@link MAX_ALIAS_COUNT} is refused. A list item or
 * document that is not a mapping is reported in `errors` and skipped. A text larger than
 * {@link MAX_SPEC_FILE_BYTES} is refused whole, unread. Documents are composed one at a time, so
 * only one document's syntax tree is held at once. Never throws.
 *
 * @param text the file's content.
 * @param fileName copied into each file-level error, for display.
 * @returns `docs`, one per spec found (valid or not), in file order; `errors`, the file-level
 *   problems in file order.
 */
export function parseSpecsYaml(
  text: string,
  fileName?: string,
): { docs: YamlSpecDoc[]; errors: YamlSpecError[] } {
  const reading = startReading(text, fileName);
  const { docs, errors } = reading;
  if (tooLarge(reading)) return { docs, errors };
  try {
    // logLevel 'silent': warnings come back in `doc.warnings` and refuse their document here.
    const composer = new Composer({ merge: true, uniqueKeys: true, logLevel: 'silent' });
    let docIndex = 0;
    for (const doc of composer.compose(new Parser(reading.lineCounter.addNewLine).parse(text))) {
      readDocument(reading, doc as unknown as Document.Parsed, docIndex++);
    }
  } catch (err) {
    reading.fail(undefined, `could not read YAML: ${String(err)}`);
  }
  return { docs, errors };
}

/** One file being read: what it found so far, and the lines of its offsets. */
interface SpecsYamlReading {
  readonly text: string;
  readonly docs: YamlSpecDoc[];
  readonly errors: YamlSpecError[];
  /** Fed by the parser as it reads, so a line is known once the parser went past it. */
  readonly lineCounter: LineCounter;
  /** Records a file-level error at 1-based `line` (when known). */
  readonly fail: (line: number | undefined, message: string) => void;
  /** 1-based line of a 0-based offset. */
  readonly lineOfOffset: (offset: number) => number;
  /** 1-based line of an offset, or undefined without one. */
  readonly lineOf: (offset: number | undefined) => number | undefined;
}

/** A reading of `text` with nothing found yet; its errors carry `fileName` when given. */
function startReading(text: string, fileName: string | undefined): SpecsYamlReading {
  const docs: YamlSpecDoc[] = [];
  const errors: YamlSpecError[] = [];
  const fail = (line: number | undefined, message: string) => {
    errors.push({ ...(fileName !== undefined ? { file: fileName } : {}), ...(line !== undefined ? { line } : {}), message });
  };
  const lineCounter = new LineCounter();
  const lineOfOffset = (o: number): number => lineCounter.linePos(o).line;
  const lineOf = (offset: number | undefined): number | undefined => (offset === undefined ? undefined : lineOfOffset(offset));
  return { text, docs, errors, lineCounter, fail, lineOfOffset, lineOf };
}

/** Refuses a text larger than {@link MAX_SPEC_FILE_BYTES}: true (and an error) when it is. */
function tooLarge({ text, fail }: SpecsYamlReading): boolean {
  // At most 4 bytes per UTF-16 code unit: the exact count only when the text may be too large.
  if (text.length * 3 <= MAX_SPEC_FILE_BYTES) return false;
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= MAX_SPEC_FILE_BYTES) return false;
  fail(undefined, specFileTooLargeMessage(bytes));
  return true;
}

/**
 * Reads one document: a syntax error or warnings refuse it, an empty one is skipped, its aliases
 * are expanded within {@link MAX_ALIAS_COUNT}, and each spec it holds (itself, or its list's items)
 * is added.
 */
function readDocument(reading: SpecsYamlReading, doc: Document.Parsed, docIndex: number): void {
  const { fail, lineOf } = reading;
  const docLine = lineOf(doc.range[0]);
  if (doc.errors.length > 0) {
    failSyntax(reading, doc.errors[0], docLine);
    return;
  }
  const warnings = documentWarnings(doc);
  if (warnings.length > 0) {
    for (const w of warnings) fail(lineOf(w.offset) ?? docLine, `YAML problem, document ${docIndex + 1} not read: ${w.message}`);
    return;
  }
  const contents = doc.contents as YamlNode | null;
  // `---` alone, or only comments: an empty document, not a spec.
  if (contents === null || (isScalar(contents) && contents.value === null)) return;
  let js: unknown;
  try {
    js = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    fail(docLine, `document ${docIndex + 1} could not be read: ${explainToJsError(err)}`);
    return;
  }
  if (isSeq(contents)) {
    const values = js as unknown[];
    contents.items.forEach((node, i) => addSpec(reading, node, values[i], `item ${i + 1} of document ${docIndex + 1}`, docLine));
  } else {
    addSpec(reading, contents, js, `document ${docIndex + 1}`, docLine);
  }
}

/**
 * Reports a document's syntax error: the first only, placed where the mistake is (the opening
 * quote or bracket, the line indented too far): the ones after it are usually its consequences,
 * as PyYAML and kubectl also stop at the first.
 */
function failSyntax({ text, fail, lineOf, lineOfOffset }: SpecsYamlReading, first: YAMLError, docLine: number | undefined): void {
  let explained: { offset: number; message: string };
  try {
    explained = explainYamlError(text, first, lineOfOffset);
  } catch {
    explained = { offset: first.pos[0], message: first.message };
  }
  fail(lineOf(explained.offset) ?? docLine, `YAML syntax error: ${explained.message}`);
}

/** A document's warnings, explained, in file order: the package's own and keys that are collections. */
function documentWarnings(doc: Document.Parsed): { offset: number; message: string }[] {
  const warnings: { offset: number; message: string }[] = doc.warnings.map((w) => ({ offset: w.pos[0], message: explainWarning(w.code, w.message) }));
  // A key that is a list or mapping: the package warns only while making values, and only to
  // the console, then makes a string of the key.
  visit(doc, {
    Pair(_, pair) {
      if (isCollection(pair.key)) {
        warnings.push({
          offset: (pair.key as YamlNode).range?.[0] ?? doc.range[0],
          message: 'a key is a list or mapping (`? [a, b]`), which JavaScript would turn into a string: write a plain key',
        });
      }
    },
  });
  return warnings.sort((a, b) => a.offset - b.offset);
}

/**
 * Adds the spec of one mapping `node` (with `value`, its plain JS) to the reading, with the line
 * of each of its errors; a node that is not a mapping is a file-level error naming `where`.
 */
function addSpec(reading: SpecsYamlReading, node: unknown, value: unknown, where: string, docLine: number | undefined): void {
  const { docs, fail, lineOf, lineOfOffset } = reading;
  const line = lineOf((node as YamlNode | null)?.range?.[0]);
  if (!isMap(node)) {
    fail(line ?? docLine, `${where} must be a spec (a mapping with cluster, service, ...), got ${kindOf(node)}`);
    return;
  }
  const item = value as Record<string, unknown>;
  const result = parseSpecItem(item);
  const errorLines = result.ok ? undefined : result.errors.map((e) => attributeLine(node as YamlNode, e.path, lineOfOffset) ?? line);
  docs.push({ index: docs.length, line, result, item, ...(errorLines ? { errorLines } : {}) });
}

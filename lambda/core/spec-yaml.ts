/**
 * Specs in YAML files: what `ecsr` reads (apply, validate, diff) before writing items to the
 * table. A file holds many specs, as several documents (`---`), as a top-level list, or both.
 */
import { isMap, isScalar, isSeq, LineCounter, parseAllDocuments, type Node as YamlNode } from 'yaml';
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
}

/** A problem with the file itself (YAML syntax, or a document that is not a spec). */
export interface YamlSpecError {
  file?: string;
  /** 1-based line. */
  line?: number;
  message: string;
}

/** Aliases expanded per document at most (the `yaml` package's guard against alias bombs). */
const MAX_ALIAS_COUNT = 100;

function kindOf(node: unknown): string {
  if (node === null || node === undefined || (isScalar(node) && node.value === null)) return 'an empty value';
  if (isSeq(node)) return 'a list';
  if (isMap(node)) return 'a mapping';
  return 'a scalar';
}

/**
 * Reads every spec of a YAML file (YAML 1.2 core schema, so `yes` is a string and `1e3` a
 * number; merge keys `<<` are honoured; duplicate keys are errors).
 *
 * Each document (separated by `---`) is either one spec (a mapping) or a list of specs; empty
 * documents are skipped. A document with a syntax error contributes no spec: its first error is
 * reported at the line where the mistake is (where an unclosed quote or bracket was opened, the
 * line indented too far, the second copy of a key), in one sentence, and the other documents are
 * still read. A list item or document that
 * is not a mapping is reported in `errors` and skipped. Never throws.
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
  const docs: YamlSpecDoc[] = [];
  const errors: YamlSpecError[] = [];
  const lineCounter = new LineCounter();
  const lineOf = (offset: number | undefined): number | undefined =>
    offset === undefined ? undefined : lineCounter.linePos(offset).line;
  const fail = (line: number | undefined, message: string) =>
    errors.push({ ...(fileName !== undefined ? { file: fileName } : {}), ...(line !== undefined ? { line } : {}), message });

  let documents;
  try {
    // logLevel 'error': the library's warnings (e.g. a complex key turned into a string) go to the
    // console otherwise; what matters about them comes back as spec errors.
    documents = parseAllDocuments(text, { lineCounter, merge: true, prettyErrors: false, uniqueKeys: true, logLevel: 'error' });
  } catch (err) {
    fail(undefined, `could not read YAML: ${String(err)}`);
    return { docs, errors };
  }
  if (!Array.isArray(documents)) return { docs, errors }; // an empty stream

  documents.forEach((doc, docIndex) => {
    const docLine = lineOf(doc.range[0]);
    if (doc.errors.length > 0) {
      // The first error only, placed where the mistake is (the opening quote or bracket, the line
      // indented too far): the ones after it are usually its consequences, as PyYAML and kubectl
      // also stop at the first.
      const first = doc.errors[0];
      let explained: { offset: number; message: string };
      try {
        explained = explainYamlError(text, first, (o) => lineCounter.linePos(o).line);
      } catch {
        explained = { offset: first.pos[0], message: first.message };
      }
      fail(lineOf(explained.offset) ?? docLine, `YAML syntax error: ${explained.message}`);
      return;
    }
    const contents = doc.contents as YamlNode | null;
    // `---` alone, or only comments: an empty document, not a spec.
    if (contents === null || (isScalar(contents) && contents.value === null)) return;
    let js: unknown;
    try {
      js = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (err) {
      fail(docLine, `document ${docIndex + 1} could not be read: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    const add = (node: unknown, value: unknown, where: string) => {
      const line = lineOf((node as YamlNode | null)?.range?.[0]);
      if (!isMap(node)) {
        fail(line ?? docLine, `${where} must be a spec (a mapping with cluster, service, ...), got ${kindOf(node)}`);
        return;
      }
      const item = value as Record<string, unknown>;
      docs.push({ index: docs.length, line, result: parseSpecItem(item), item });
    };
    if (isSeq(contents)) {
      const values = js as unknown[];
      contents.items.forEach((node, i) => add(node, values[i], `item ${i + 1} of document ${docIndex + 1}`));
    } else {
      add(contents, js, `document ${docIndex + 1}`);
    }
  });
  return { docs, errors };
}

/**
 * Reads spec files for `ecsr apply`, `ecsr validate`, `ecsr diff` and `ecsr local`: YAML (several
 * documents, a list, or both), a directory of `*.yaml` / `*.yml` files, or `-` for stdin. Every
 * problem of every file is reported with file, line, spec and attribute path; the line is the
 * attribute's own when the YAML has it (the spec's first line for a missing attribute, or one that
 * comes from a merge key). One invalid spec rejects the whole set (nothing is written).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, parseAllDocuments, type Node as YamlNode } from 'yaml';
import { parseSpecsYaml } from '../../../lambda/core/spec';
import { taskDefinitionFamily } from '../../../lambda/core/taskdef';
import { serviceId, type ServiceKey, type ServiceSpec } from '../../../lambda/core/types';
import { CliError } from './errors';

/** One valid spec read from a file. */
export interface FileSpec {
  readonly key: ServiceKey;
  readonly spec: ServiceSpec;
  /** specHash of the spec (what the status's `specHash` will say once a pass has seen it). */
  readonly hash: string;
  readonly file: string;
  /** 1-based line of the spec's mapping, when known. */
  readonly line?: number;
}

/** `file:line` or `file`. */
function where(file: string, line: number | undefined): string {
  return line === undefined ? file : `${file}:${line}`;
}

function readText(path: string): string {
  try {
    return path === '-' ? readFileSync(0, 'utf8') : readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as { code?: string }).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'it is a directory' : String((err as Error).message ?? err);
    throw new CliError(`Cannot read ${path}: ${why}.`);
  }
}

/** The YAML files a path names: the file itself, or a directory's `*.yaml` / `*.yml`, sorted. */
export function specFilesOf(path: string): string[] {
  if (path === '-') return [path];
  let isDir = false;
  try {
    isDir = statSync(path).isDirectory();
  } catch {
    return [path]; // readText reports it
  }
  if (!isDir) return [path];
  const files = readdirSync(path)
    .filter((f) => /\.ya?ml$/i.test(f))
    .sort()
    .map((f) => join(path, f));
  if (files.length === 0) throw new CliError(`${path} holds no .yaml or .yml file.`);
  return files;
}

/** Line numbers (1-based) of a text, by character offset. */
type LineOf = (offset: number) => number;

/**
 * The mappings of a YAML text that can be specs (a document's mapping, or a mapping item of a
 * document's list), by the line where each starts, in file order; documents with syntax errors
 * are left out, as `parseSpecsYaml` leaves them out.
 */
function specNodesByLine(text: string): { byLine: Map<number, YamlNode[]>; lineOf: LineOf } {
  const lineCounter = new LineCounter();
  const lineOf: LineOf = (offset) => lineCounter.linePos(offset).line;
  const byLine = new Map<number, YamlNode[]>();
  let documents;
  try {
    documents = parseAllDocuments(text, { lineCounter, merge: true, prettyErrors: false, uniqueKeys: true, logLevel: 'silent' });
  } catch {
    return { byLine, lineOf };
  }
  if (!Array.isArray(documents)) return { byLine, lineOf };
  for (const doc of documents) {
    if (doc.errors.length > 0) continue;
    const contents = doc.contents as YamlNode | null;
    for (const node of isSeq(contents) ? contents.items : [contents]) {
      if (!isMap(node) || !node.range) continue;
      const line = lineOf(node.range[0]);
      byLine.set(line, [...(byLine.get(line) ?? []), node]);
    }
  }
  return { byLine, lineOf };
}

/**
 * The line of the attribute a spec error names, in the spec's mapping: the line of the deepest
 * key or list item of `path` (`cpu`, `healthCheck.retries`, `environment.MY VAR`, `subnets[2]`)
 * that the YAML has. Names may hold dots (`environment.A.B`), so at each mapping the longest key
 * that the path continues with wins.
 * @returns undefined when not even the first attribute is in the mapping (a missing attribute,
 *   one from a merge key `<<`, or the whole item `(item)`).
 */
export function attributeLine(spec: YamlNode, path: string, lineOf: LineOf): number | undefined {
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

/** What {@link readSpecFiles} found. */
export interface SpecFiles {
  /** The valid specs, in file order (a service named twice: the first one). */
  readonly specs: FileSpec[];
  /**
   * One line per problem, in file order: `file:line: cluster/service: path: message` (the line of
   * the attribute when the YAML has it, else of the spec), `file:line: message` for a YAML error.
   */
  readonly problems: string[];
  /** How many files were read. */
  readonly files: number;
}

/**
 * Reads and validates every spec of the given files or directories, without throwing for invalid
 * specs (for `ecsr validate`, which lists them).
 * @throws CliError when a path cannot be read or a directory holds no YAML file.
 */
export function readSpecFiles(paths: readonly string[]): SpecFiles {
  const specs: FileSpec[] = [];
  const problems: string[] = [];
  const seen = new Map<string, string>();
  const families = new Map<string, { id: string; at: string }>();
  // A file named twice (a directory and one of its files) is read once.
  const files = [...new Map(paths.flatMap(specFilesOf).map((f) => [f === '-' ? f : resolve(f), f])).values()];
  for (const file of files) {
    const text = readText(file);
    const display = file === '-' ? '(stdin)' : file;
    const { docs, errors } = parseSpecsYaml(text, display);
    for (const e of errors) problems.push(`${where(display, e.line)}: ${e.message}`);
    const nodes = docs.some((d) => !d.result.ok) ? specNodesByLine(text) : undefined;
    const used = new Map<number, number>();
    for (const doc of docs) {
      const at = where(display, doc.line);
      const r = doc.result;
      if (!r.ok) {
        // The mapping of this spec: the next unused one starting on its line.
        const taken = doc.line === undefined ? 0 : (used.get(doc.line) ?? 0);
        const node = doc.line === undefined ? undefined : nodes?.byLine.get(doc.line)?.[taken];
        if (doc.line !== undefined) used.set(doc.line, taken + 1);
        const name = r.key ? `${serviceId(r.key)}: ` : `spec ${doc.index + 1}: `;
        const located = r.errors.map((e) => ({ e, line: node && nodes ? (attributeLine(node, e.path, nodes.lineOf) ?? doc.line) : doc.line }));
        // In file order within the spec (a stable sort keeps the validator's order on one line).
        located.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
        for (const { e, line } of located) problems.push(`${where(display, line)}: ${name}${e.path}: ${e.message}`);
        continue;
      }
      if (doc.line !== undefined) used.set(doc.line, (used.get(doc.line) ?? 0) + 1);
      const id = serviceId(r.key);
      const first = seen.get(id);
      if (first) {
        problems.push(`${at}: ${id}: is also defined at ${first}; a service has one spec`);
        continue;
      }
      seen.set(id, at);
      if (r.spec.state === 'present') {
        // Two services registering into one family would overwrite each other's revisions; the
        // pass refuses the later one (FamilyCollision), so a file holding both is refused here.
        const family = r.spec.family ?? taskDefinitionFamily(r.key);
        const holder = families.get(family);
        if (holder) {
          const how = r.spec.family !== undefined ? 'family' : 'service';
          problems.push(
            `${at}: ${id}: ${how}: task definition family ${family} is also that of ${holder.id} (${holder.at}); ` +
              'two services cannot share a family: give one of them another family',
          );
          continue;
        }
        families.set(family, { id, at });
      }
      specs.push({ key: r.key, spec: r.spec, hash: r.hash, file: display, ...(doc.line !== undefined ? { line: doc.line } : {}) });
    }
  }
  return { specs, problems, files: files.length };
}

/**
 * Reads and validates every spec of the given files or directories.
 * @param consequence end of the error sentence, e.g. `nothing was written`.
 * @returns the valid specs in file order.
 * @throws CliError when a file cannot be read, holds no spec, has a YAML error, an invalid spec, or
 *   names the same cluster/service twice; `details` has one line per problem, e.g.
 *   `specs.yaml:12: shop/web: cpu: must be one of 256, 512, ... got 300`.
 */
export function loadSpecFiles(paths: readonly string[], consequence = 'fix them and try again'): FileSpec[] {
  const { specs, problems, files } = readSpecFiles(paths);
  if (problems.length > 0) {
    const n = problems.length;
    throw new CliError(`${n} problem${n === 1 ? '' : 's'} in the spec file${files === 1 ? '' : 's'}; ${consequence}.`, 1, problems);
  }
  if (specs.length === 0) throw new CliError(`${paths.join(', ')} holds no spec.`);
  return specs;
}

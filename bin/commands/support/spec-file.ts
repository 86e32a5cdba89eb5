/**
 * Reads spec files for `ecsr apply` and `ecsr diff`: YAML (several documents, a list, or both), a
 * directory of `*.yaml` / `*.yml` files, or `-` for stdin. Every problem of every file is reported
 * with file, line, spec and attribute path; one invalid spec rejects the whole set (nothing is
 * written).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseSpecsYaml } from '../../../lambda/core/spec';
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

/**
 * Reads and validates every spec of the given files or directories.
 * @param consequence end of the error sentence, e.g. `nothing was written`.
 * @returns the valid specs in file order.
 * @throws CliError when a file cannot be read, holds no spec, has a YAML error, an invalid spec, or
 *   names the same cluster/service twice; `details` has one line per problem, e.g.
 *   `specs.yaml:12: shop/web: cpu: must be one of 256, 512, ... got 300`.
 */
export function loadSpecFiles(paths: readonly string[], consequence = 'fix them and try again'): FileSpec[] {
  const specs: FileSpec[] = [];
  const problems: string[] = [];
  const seen = new Map<string, string>();
  for (const file of paths.flatMap(specFilesOf)) {
    const text = readText(file);
    const display = file === '-' ? '(stdin)' : file;
    const { docs, errors } = parseSpecsYaml(text, display);
    for (const e of errors) problems.push(`${where(display, e.line)}: ${e.message}`);
    for (const doc of docs) {
      const at = where(display, doc.line);
      const r = doc.result;
      if (!r.ok) {
        const name = r.key ? `${serviceId(r.key)}: ` : `spec ${doc.index + 1}: `;
        for (const e of r.errors) problems.push(`${at}: ${name}${e.path}: ${e.message}`);
        continue;
      }
      const id = serviceId(r.key);
      const first = seen.get(id);
      if (first) {
        problems.push(`${at}: ${id}: is also defined at ${first}; a service has one spec`);
        continue;
      }
      seen.set(id, at);
      specs.push({ key: r.key, spec: r.spec, hash: r.hash, file: display, ...(doc.line !== undefined ? { line: doc.line } : {}) });
    }
  }
  if (problems.length > 0) {
    const n = problems.length;
    throw new CliError(`${n} problem${n === 1 ? '' : 's'} in the spec file${paths.length === 1 ? '' : 's'}; ${consequence}.`, 1, problems);
  }
  if (specs.length === 0) throw new CliError(`${paths.join(', ')} holds no spec.`);
  return specs;
}

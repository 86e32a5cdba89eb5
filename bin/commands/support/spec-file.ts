/**
 * Reads spec files for `ecsr apply`, `ecsr validate`, `ecsr diff` and `ecsr local`: YAML (several
 * documents, a list, or both), a directory of `*.yaml` / `*.yml` files, or `-` for stdin. Every
 * problem of every file is reported with file, line, spec and attribute path; the line is the
 * attribute's own when the YAML has it (the spec's first line for a missing attribute, or one that
 * comes from a merge key). One invalid spec rejects the whole set (nothing is written).
 */
import { closeSync, fstatSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseSpecsYaml } from '../../../lambda/core/spec';
import { MAX_SPEC_FILE_BYTES, specFileTooLargeMessage } from '../../../lambda/core/spec-yaml';
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

/**
 * The file's text, or its size when it is larger than a spec file may be (read no further than
 * that, so a huge file or stream costs no memory).
 */
function readText(path: string): string | { tooLarge: number } {
  let fd: number | undefined;
  try {
    fd = path === '-' ? 0 : openSync(path, 'r');
    const size = path === '-' ? undefined : fstatSync(fd).size;
    if (size !== undefined && size > MAX_SPEC_FILE_BYTES) return { tooLarge: size };
    const chunks: Buffer[] = [];
    let total = 0;
    const chunk = Buffer.alloc(1024 * 1024);
    for (;;) {
      let n: number;
      try {
        n = readSync(fd, chunk, 0, chunk.length, null);
      } catch (err) {
        if ((err as { code?: string }).code === 'EAGAIN') {
          // A non-blocking stdin with nothing to read yet: wait a little rather than spin.
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
          continue;
        }
        if ((err as { code?: string }).code === 'EOF') break;
        throw err;
      }
      if (n === 0) break;
      total += n;
      if (total > MAX_SPEC_FILE_BYTES) return { tooLarge: total };
      chunks.push(Buffer.from(chunk.subarray(0, n)));
    }
    return Buffer.concat(chunks, total).toString('utf8');
  } catch (err) {
    const code = (err as { code?: string }).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'it is a directory' : String((err as Error).message ?? err);
    throw new CliError(`Cannot read ${path}: ${why}.`);
  } finally {
    if (fd !== undefined && fd !== 0) closeSync(fd);
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

export { attributeLine } from '../../../lambda/core/spec-yaml';

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
    if (typeof text !== 'string') {
      problems.push(`${display}: ${specFileTooLargeMessage(text.tooLarge)}`);
      continue;
    }
    const { docs, errors } = parseSpecsYaml(text, display);
    for (const e of errors) problems.push(`${where(display, e.line)}: ${e.message}`);
    for (const doc of docs) {
      const at = where(display, doc.line);
      const r = doc.result;
      if (!r.ok) {
        const name = r.key ? `${serviceId(r.key)}: ` : `spec ${doc.index + 1}: `;
        const located = r.errors.map((e, i) => ({ e, line: doc.errorLines?.[i] ?? doc.line }));
        // In file order within the spec (a stable sort keeps the validator's order on one line).
        located.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
        for (const { e, line } of located) problems.push(`${where(display, line)}: ${name}${e.path}: ${e.message}`);
        continue;
      }
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

#!/usr/bin/env node
/**
 * Builds the `ecsr` CLI once with esbuild, the way the CDK construct bundles the Lambda (ESM,
 * `mainFields: ['module', 'main']`, a `createRequire` banner, target node20), into `dist/`:
 * `dist/ecsr.js` and one chunk per command (`bin/ecsr.ts` imports each command only when it runs),
 * so that `ecsr --version` loads commander and nothing else. Plain JavaScript, so that
 * `bin/ecsr.js` can run it with no TypeScript loader.
 *
 * Run by `npm ci` / `npm install` (`prepare`), by `npm run build`, once per `vitest` run
 * (vitest.config.ts), and by `bin/ecsr.js` itself when a source file changed since the last build
 * ({@link isStale}: the build records its own source files and their modification times).
 *
 * Files are written beside their final name and renamed into place, unchanged ones not at all,
 * so that a CLI starting while another process builds reads either build, never half of one.
 *
 * Usage: `node scripts/build-cli.mjs` (always builds), `node scripts/build-cli.mjs --if-stale`.
 */
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The package's root directory. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const DIST = join(ROOT, 'dist');
/** What `bin/ecsr.js` runs. */
export const CLI_ENTRY = join(DIST, 'ecsr.js');
/** The project's own files the last build read, with their modification times (ms). */
const MANIFEST = join(DIST, 'sources.json');
/** esbuild's metafile of the last build: every output, its inputs and its imports. */
export const METAFILE = join(DIST, 'meta.json');

/**
 * Packages left out of the bundle and loaded from node_modules when used: dynalite opens LevelDB
 * through native modules and files of its own (only `ecsr local` loads it).
 */
const EXTERNAL = ['dynalite'];

/**
 * Whether `dist/` is missing or older than a source it was built from (or one was deleted).
 * Costs one `stat` per source file of the project (not of node_modules).
 * @param dist the build's directory; `root` the directory its sources are relative to.
 */
export function isStale(dist = DIST, root = ROOT) {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(join(dist, 'sources.json'), 'utf8'));
  } catch {
    return true;
  }
  if (!existsSync(join(dist, 'ecsr.js'))) return true;
  for (const [file, mtimeMs] of Object.entries(manifest.sources ?? {})) {
    try {
      if (statSync(join(root, file)).mtimeMs !== mtimeMs) return true;
    } catch {
      return true;
    }
  }
  return false;
}

/** Writes `contents` to `path` unless it already holds exactly that, through a rename. */
function writeIfChanged(path, contents) {
  try {
    if (Buffer.compare(readFileSync(path), contents) === 0) return;
  } catch {
    // new file
  }
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, contents);
  renameSync(tmp, path);
}

/**
 * Builds `dist/`. Chunks carry a hash of their contents in their names; the entry and the manifest
 * are written last. Chunks no build has used for an hour are removed.
 * @returns the build's real time in milliseconds.
 * @throws the esbuild error when the CLI does not bundle.
 */
export async function buildCli() {
  const startedAt = performance.now();
  const began = Date.now();
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: { ecsr: join(ROOT, 'bin', 'ecsr.ts') },
    outdir: DIST,
    bundle: true,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    mainFields: ['module', 'main'],
    external: EXTERNAL,
    banner: { js: "import { createRequire as __ecsrCreateRequire } from 'node:module'; const require = __ecsrCreateRequire(import.meta.url);" },
    // Whitespace and syntax only: names stay as written (error names, --debug stack traces).
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'none',
    metafile: true,
    write: false,
    logLevel: 'warning',
  });
  await esbuild.stop();
  const sources = {};
  for (const input of Object.keys(result.metafile.inputs)) {
    if (input.includes('node_modules/')) continue;
    const mtimeMs = statSync(join(ROOT, input)).mtimeMs;
    // A file saved while the build ran may not be in it: the next check rebuilds.
    sources[input] = mtimeMs < began ? mtimeMs : 0;
  }
  const outputs = [...result.outputFiles].sort((a, b) => Number(a.path === CLI_ENTRY) - Number(b.path === CLI_ENTRY));
  for (const out of outputs) writeIfChanged(out.path, out.contents);
  writeIfChanged(METAFILE, Buffer.from(`${JSON.stringify(result.metafile)}\n`));
  writeIfChanged(MANIFEST, Buffer.from(`${JSON.stringify({ sources }, null, 1)}\n`));
  const used = new Set(outputs.map((o) => o.path));
  const chunks = join(DIST, 'chunks');
  for (const name of existsSync(chunks) ? readdirSync(chunks) : []) {
    const path = join(chunks, name);
    if (!used.has(path) && Date.now() - statSync(path).mtimeMs > 3_600_000) rmSync(path, { force: true });
  }
  return performance.now() - startedAt;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv.includes('--if-stale') && !isStale()) process.exit(0);
  try {
    await buildCli();
  } catch (err) {
    process.stderr.write(`build-cli: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}

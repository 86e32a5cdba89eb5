#!/usr/bin/env node
/**
 * Builds what the published package ships beside the CLI (scripts/build-cli.mjs), into dist/lib/:
 *
 * - `index.js` / `index.cjs`: the construct entry (lib/index.ts), and `spec.js` / `spec.cjs`: the
 *   spec entry (lib/spec.ts), each as ESM and as CommonJS (an app from `cdk init app --language
 *   typescript` compiles to CommonJS and `require`s it). The project's own files are bundled;
 *   every package stays an import (dependencies and the `aws-cdk-lib`/`constructs` peers), so the
 *   consumer's one copy of aws-cdk-lib is the one the construct uses.
 * - dist/types/: the declarations (see {@link buildDeclarations}).
 * - `handler/index.mjs` (+ `.map`): the Lambda handler, bundled as lib/ecs-reconciler.ts's
 *   `HANDLER_BUNDLING` tells `NodejsFunction` to; the built construct deploys this directory with
 *   `lambda.Code.fromAsset`, so a consumer's synth runs no bundler.
 *
 * Run by `npm run build` and `npm pack` / `npm publish` (`prepack`); not by `npm ci`: the
 * repository's own app and tests use the sources.
 *
 * Usage: `node scripts/build-package.mjs`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildCli } from './build-cli.mjs';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const LIB_DIST = join(ROOT, 'dist', 'lib');
/** The prebuilt handler's directory: `PREBUILT_HANDLER_DIR` of the built construct. */
export const HANDLER_DIST = join(LIB_DIST, 'handler');
/** The declarations, one per source file, as the sources are laid out (`lib/index.d.ts`, ...). */
export const TYPES_DIST = join(ROOT, 'dist', 'types');
const ENTRIES = { index: join(ROOT, 'lib', 'index.ts'), spec: join(ROOT, 'lib', 'spec.ts') };

/** What the CommonJS build reads instead of `import.meta.url`, which CommonJS has not. */
const CJS_IMPORT_META_URL = "const __ecsrImportMetaUrl = require('node:url').pathToFileURL(__filename).href;";

async function buildEntries(esbuild) {
  const common = {
    absWorkingDir: ROOT,
    entryPoints: ENTRIES,
    outdir: LIB_DIST,
    bundle: true,
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'warning',
  };
  await esbuild.build({ ...common, format: 'esm', outExtension: { '.js': '.js' } });
  await esbuild.build({
    ...common,
    format: 'cjs',
    outExtension: { '.js': '.cjs' },
    banner: { js: CJS_IMPORT_META_URL },
    define: { 'import.meta.url': '__ecsrImportMetaUrl' },
  });
}

/** The handler, with esbuild options that say what `HANDLER_BUNDLING` says to `NodejsFunction`. */
async function buildHandler(esbuild) {
  rmSync(HANDLER_DIST, { recursive: true, force: true });
  await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: [join(ROOT, 'lambda', 'handler.ts')],
    outfile: join(HANDLER_DIST, 'index.mjs'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    mainFields: ['module', 'main'],
    banner: { js: "import { createRequire as __ecsrCreateRequire } from 'node:module'; const require = __ecsrCreateRequire(import.meta.url);" },
    minify: true,
    sourcemap: true,
    sourcesContent: false,
    // bundleAwsSDK: nothing external, the SDK included.
    external: [],
    logLevel: 'warning',
  });
}

/**
 * The declarations: tsc (tsconfig.package.json) writes one `.d.ts` per source file into
 * dist/types/; each relative import then gets the explicit extension that `moduleResolution`
 * `node16`/`nodenext` needs, and each file a CommonJS twin (`.d.cts`, importing `.cjs`) for the
 * `require` condition.
 */
function buildDeclarations() {
  rmSync(TYPES_DIST, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.package.json')], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`tsc (declarations) failed:\n${r.stdout}${r.stderr}`);
  for (const file of readdirSync(TYPES_DIST, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.d.ts')) continue;
    const path = join(TYPES_DIST, file);
    const text = readFileSync(path, 'utf8');
    const withExtension = (ext) =>
      text.replace(/((?:from|import)\s*\(?\s*)(['"])(\.{1,2}\/[^'"]*)\2/g, (_, lead, quote, spec) => {
        const target = resolve(dirname(path), spec);
        const rewritten = existsSync(`${target}.d.ts`) ? `${spec}.${ext}` : existsSync(join(target, 'index.d.ts')) ? `${spec}/index.${ext}` : undefined;
        if (rewritten === undefined) throw new Error(`${file}: cannot resolve ${spec}`);
        return `${lead}${quote}${rewritten}${quote}`;
      });
    writeFileSync(path, withExtension('js'));
    writeFileSync(path.replace(/\.d\.ts$/, '.d.cts'), withExtension('cjs'));
  }
}

/** Builds the CLI, the entries, the handler and the declarations. */
export async function buildPackage() {
  const esbuild = await import('esbuild');
  mkdirSync(LIB_DIST, { recursive: true });
  await buildCli();
  await buildEntries(esbuild);
  await buildHandler(esbuild);
  await esbuild.stop();
  buildDeclarations();
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    await buildPackage();
  } catch (err) {
    process.stderr.write(`build-package: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}

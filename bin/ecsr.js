#!/usr/bin/env node
// Executable for the package.json `bin` entry (`npx ecsr`): runs the CLI that
// scripts/build-cli.mjs built from bin/ecsr.ts into dist/. In a clone (`npm ci` builds it) it is
// rebuilt first when a source file changed since (about a second, once); an installed package
// ships the build and neither the sources nor the build script, so it runs as shipped.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const builder = new URL('../scripts/build-cli.mjs', import.meta.url);
if (existsSync(fileURLToPath(builder))) {
  const { buildCli, isStale } = await import(builder.href);
  if (isStale()) await buildCli();
}
await import(new URL('../dist/ecsr.js', import.meta.url).href);

#!/usr/bin/env node
// Executable for the package.json `bin` entry (`npx ecsr`): runs the CLI that
// scripts/build-cli.mjs built from bin/ecsr.ts into dist/ (`npm ci` builds it), rebuilding it
// first when a source file changed since (about a second, once).
import { pathToFileURL } from 'node:url';
import { buildCli, CLI_ENTRY, isStale } from '../scripts/build-cli.mjs';

if (isStale()) await buildCli();
await import(pathToFileURL(CLI_ENTRY).href);

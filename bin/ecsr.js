#!/usr/bin/env node
// Executable shim for the package.json `bin` entry: runs the TypeScript CLI (bin/ecsr.ts) through
// tsx's ESM loader, so `ecsr` works from a checkout (`npm link`) without a build step.
import { register } from 'tsx/esm/api';

register();
await import('./ecsr.ts');

/**
 * `npm run schema`: writes `schema/service-spec.schema.json` from the spec's zod schema.
 * `npm run schema -- --check`: exits 1 (writing nothing) when the committed file is stale.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SPEC_SCHEMA_PATH, renderSpecJsonSchema } from '../lambda/core/spec-json-schema';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const target = resolve(root, SPEC_SCHEMA_PATH);
const text = renderSpecJsonSchema();

if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    // missing counts as stale
  }
  if (current !== text) {
    console.error(`${SPEC_SCHEMA_PATH} is stale: run npm run schema`);
    process.exit(1);
  }
  console.log(`${SPEC_SCHEMA_PATH} is up to date`);
} else {
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, text);
  console.log(`wrote ${SPEC_SCHEMA_PATH}`);
}

/**
 * Loads the real ECS payloads kept in `test/fixtures/real/` (see its README for where each one
 * comes from). Task definitions are returned as the task definition itself (the
 * `{ taskDefinition }` wrapper of a Describe/Register answer removed); services as the Service
 * objects of a DescribeServices, CreateService or UpdateService answer.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** One row of `test/fixtures/real/sources.json`. */
export interface RealFixtureSource {
  readonly kind: 'task-definitions' | 'services';
  /** Path under `test/fixtures/real/`, e.g. `services/awscli-create-ebs.json`. */
  readonly file: string;
  readonly repo: string;
  readonly commit: string;
  readonly path: string;
  readonly line: number | null;
  readonly url: string;
  /** Which ECS answer or request the payload is (`DescribeServices response`, ...). */
  readonly shape: string;
  readonly note: string;
}

/** A loaded fixture: its name (file name without `.json`), the raw JSON and its source row. */
export interface RealFixture<T> {
  readonly name: string;
  readonly raw: unknown;
  /** Task definitions: one entry. Services: every Service in the answer. */
  readonly payloads: readonly T[];
  readonly source: RealFixtureSource;
}

type Json = Record<string, unknown>;

export const REAL_FIXTURES_DIR = fileURLToPath(new URL('../fixtures/real/', import.meta.url));

export function realFixtureSources(): RealFixtureSource[] {
  return JSON.parse(readFileSync(`${REAL_FIXTURES_DIR}sources.json`, 'utf8')) as RealFixtureSource[];
}

/** The `.json` files actually present under `kind/`, sorted. */
export function realFixtureFiles(kind: RealFixtureSource['kind']): string[] {
  return readdirSync(`${REAL_FIXTURES_DIR}${kind}`)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => `${kind}/${f}`);
}

function load<T>(kind: RealFixtureSource['kind'], unwrap: (raw: Json) => T[]): RealFixture<T>[] {
  return realFixtureSources()
    .filter((s) => s.kind === kind)
    .map((source) => {
      const raw = JSON.parse(readFileSync(`${REAL_FIXTURES_DIR}${source.file}`, 'utf8')) as Json;
      const name = source.file.slice(kind.length + 1, -'.json'.length);
      return { name, raw, payloads: unwrap(raw), source };
    });
}

/** Every real task definition, unwrapped from `{ taskDefinition }` where the answer has it. */
export function realTaskDefinitions(): RealFixture<Json>[] {
  return load('task-definitions', (raw) => [(raw.taskDefinition as Json | undefined) ?? raw]);
}

/** Every real service answer with its Service objects (`services[]` or `service`). */
export function realServices(): RealFixture<Json>[] {
  return load('services', (raw) =>
    Array.isArray(raw.services) ? (raw.services as Json[]) : raw.service ? [raw.service as Json] : [],
  );
}

/**
 * `ecsr diff -f FILE`: what applying FILE would change, without writing anything: the spec
 * attributes that differ from the table, and the actions the next pass would take if FILE's specs
 * were in the table (the same pass code in dry-run mode, over the table with FILE's specs added
 * or replacing theirs; specs that FILE does not name stay as they are).
 */
import { Command } from 'commander';
import { specToItem } from '../../lambda/core/spec';
import { serviceId } from '../../lambda/core/types';
import { EXIT } from './support/errors';
import { loadSpecFiles, type FileSpec } from './support/spec-file';
import { SpecTable, type TableEntry } from './support/spec-table';
import { collect, runAction, tableOf, withAwsOptions } from './support/options';
import { cliConfig, dryRunPass } from './support/pass';
import { assertCompleteRead, printPlan, withPlanOptions, type PlanOptions } from './plan';

interface DiffOptions extends PlanOptions {
  file: string[];
}

/** Leaves of a plain value by path: `environment.LOG_LEVEL` -> `"debug"`, `subnets` -> `["a","b"]`. */
function leaves(value: unknown, prefix = '', out: Map<string, unknown> = new Map()): Map<string, unknown> {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) leaves(v, prefix ? `${prefix}.${k}` : k, out);
  } else if (value !== undefined) {
    out.set(prefix, value);
  }
  return out;
}

/** A value of a change as text: JSON, or `(none)`. */
const text = (v: unknown): string => (v === null ? '(none)' : JSON.stringify(v));

/** One attribute that differs: its path, and the values in the table and in the file (null: none). */
export interface SpecChange {
  readonly path: string;
  readonly from: unknown;
  readonly to: unknown;
}

/**
 * Attribute changes from the table's item to the file's spec (both in normalized item form, so
 * defaults and order do not show as changes), by path; `from` / `to` are null where one side has
 * no value.
 */
export function structuredSpecChanges(before: Record<string, unknown> | undefined, after: Record<string, unknown>): SpecChange[] {
  const a = leaves(before ?? {});
  const b = leaves(after);
  const paths = [...new Set([...a.keys(), ...b.keys()])].sort();
  return paths
    .filter((p) => JSON.stringify(a.get(p)) !== JSON.stringify(b.get(p)))
    .map((p) => ({ path: p, from: a.has(p) ? a.get(p) : null, to: b.has(p) ? b.get(p) : null }));
}

/** {@link structuredSpecChanges} as text: `image "a" -> "b"`, `desiredCount (none) -> 3`. */
export function specChanges(before: Record<string, unknown> | undefined, after: Record<string, unknown>): string[] {
  return structuredSpecChanges(before, after).map((c) => `${c.path} ${text(c.from)} -> ${text(c.to)}`);
}

/** What `-o json|yaml` says about one spec of the file. */
export interface SpecDiff {
  readonly cluster: string;
  readonly service: string;
  /** `new`: no item in the table; `changed`; `unchanged`. */
  readonly change: 'new' | 'changed' | 'unchanged';
  /** True when the stored item does not validate (then `changes` start from it as stored). */
  readonly storedInvalid?: boolean;
  readonly changes: SpecChange[];
}

function specDiffs(file: readonly FileSpec[], entries: readonly TableEntry[]): SpecDiff[] {
  const byId = new Map(entries.filter((e) => e.key).map((e) => [serviceId(e.key!), e]));
  return file.map((s) => {
    const current = byId.get(serviceId(s.key));
    if (!current) return { ...s.key, change: 'new', changes: [] };
    const before = current.result.ok ? specToItem(current.result.spec) : current.item;
    const changes = structuredSpecChanges(before, specToItem(s.spec));
    return { ...s.key, change: changes.length === 0 ? 'unchanged' : 'changed', ...(current.result.ok ? {} : { storedInvalid: true }), changes };
  });
}

function specDiffLines(diffs: readonly SpecDiff[]): string[] {
  const lines: string[] = [];
  for (const d of diffs) {
    const id = serviceId(d);
    if (d.change === 'new') lines.push(`+ ${id} (new spec)`);
    else if (d.change === 'unchanged') lines.push(`= ${id} (unchanged)`);
    else lines.push(`~ ${id}${d.storedInvalid ? ' (the stored item is invalid)' : ''}`, ...d.changes.map((c) => `    ${c.path} ${text(c.from)} -> ${text(c.to)}`));
  }
  return lines;
}

export function diffCommand(): Command {
  const cmd = withPlanOptions(
    new Command('diff')
      .description('Show what applying FILE would change: spec attributes and the actions of the next pass (nothing is written)')
      .requiredOption('-f, --file <path>', 'YAML file or directory of *.yaml, or - for stdin (repeatable)', collect),
  );
  return withAwsOptions(cmd).action(
    runAction(async (opts: DiffOptions) => {
      const specs = loadSpecFiles(opts.file, 'no diff was computed');
      const tableName = tableOf(opts);
      const table = SpecTable.open(tableName);
      let entries: TableEntry[];
      try {
        entries = await table.scan();
      } finally {
        table.close();
      }
      const summary = await dryRunPass(
        cliConfig(tableName),
        specs.map((s) => ({ ok: true as const, key: s.key, spec: s.spec, hash: s.hash })),
        { verbose: opts.verbose },
      );
      assertCompleteRead(summary, tableName);
      const diffs = specDiffs(specs, entries);
      if (opts.output === 'text') {
        process.stdout.write('Spec changes (table -> file):\n');
        for (const l of specDiffLines(diffs)) process.stdout.write(`  ${l}\n`);
      }
      printPlan(summary, opts.output, { specChanges: diffs });
      const changed = diffs.some((d) => d.change !== 'unchanged');
      if (opts.exitCode && (summary.actions.length > 0 || changed)) process.exitCode = EXIT.timeoutOrChanges;
    }),
  );
}

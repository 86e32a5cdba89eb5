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
function leaves(value: unknown, prefix = '', out: Map<string, string> = new Map()): Map<string, string> {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) leaves(v, prefix ? `${prefix}.${k}` : k, out);
  } else if (value !== undefined) {
    out.set(prefix, JSON.stringify(value));
  }
  return out;
}

/**
 * Attribute changes from the table's item to the file's spec (both in normalized item form, so
 * defaults and order do not show as changes): `image "a" -> "b"`, `desiredCount (none) -> 3`.
 */
export function specChanges(before: Record<string, unknown> | undefined, after: Record<string, unknown>): string[] {
  const a = leaves(before ?? {});
  const b = leaves(after);
  const paths = [...new Set([...a.keys(), ...b.keys()])].sort();
  return paths.filter((p) => a.get(p) !== b.get(p)).map((p) => `${p} ${a.get(p) ?? '(none)'} -> ${b.get(p) ?? '(none)'}`);
}

function specDiffLines(file: readonly FileSpec[], entries: readonly TableEntry[]): string[] {
  const byId = new Map(entries.filter((e) => e.key).map((e) => [serviceId(e.key!), e]));
  const lines: string[] = [];
  for (const s of file) {
    const id = serviceId(s.key);
    const current = byId.get(id);
    if (!current) {
      lines.push(`+ ${id} (new spec)`);
      continue;
    }
    const before = current.result.ok ? specToItem(current.result.spec) : current.item;
    const changes = specChanges(before, specToItem(s.spec));
    if (changes.length === 0) lines.push(`= ${id} (unchanged)`);
    else lines.push(`~ ${id}${current.result.ok ? '' : ' (the stored item is invalid)'}`, ...changes.map((c) => `    ${c}`));
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
      const lines = specDiffLines(specs, entries);
      if (opts.output === 'text') {
        process.stdout.write('Spec changes (table -> file):\n');
        for (const l of lines) process.stdout.write(`  ${l}\n`);
      }
      printPlan(summary, opts.output, { specChanges: lines });
      const changed = lines.some((l) => !l.startsWith('='));
      if (opts.exitCode && (summary.actions.length > 0 || changed)) process.exitCode = EXIT.timeoutOrChanges;
    }),
  );
}

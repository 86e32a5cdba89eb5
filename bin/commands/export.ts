/**
 * `ecsr export`: every spec of the table as multi-document YAML (one document per service, sorted
 * by cluster/service), for backups and review. The output is what `ecsr apply -f` reads: exporting,
 * applying to an empty table and exporting again gives the same text.
 */
import { Command } from 'commander';
import { Document } from 'yaml';
import { formatSpecError, specToItem } from '../../lambda/core/spec';
import { serviceId } from '../../lambda/core/types';
import { runAction, tableOf, withAwsOptions, withTargetOption, type AwsOptions, type TargetOption } from './support/options';
import { SpecTable, type TableEntry } from './support/spec-table';

/**
 * The YAML of the entries: valid specs in their normalized item form (`specToItem`, without
 * `status`); an invalid item as stored, preceded by comments naming each problem.
 */
export function exportYaml(entries: readonly TableEntry[]): string {
  return entries
    .map((e) => {
      const r = e.result;
      const doc = new Document(r.ok ? specToItem(r.spec) : e.item);
      const id = e.key ? serviceId(e.key) : '(item without a usable key)';
      doc.commentBefore = r.ok
        ? ` ${id}`
        : [` ${id}: INVALID, exported as stored; apply rejects it until fixed:`, ...r.errors.map((x) => `   ${formatSpecError(x)}`)].join('\n');
      return `---\n${doc.toString({ lineWidth: 0 })}`;
    })
    .join('');
}

export function exportCommand(): Command {
  const cmd = new Command('export').description('Print every spec as YAML (multi-document), ready for ecsr apply -f');
  return withAwsOptions(withTargetOption(cmd)).action(
    runAction(async (opts: AwsOptions & TargetOption) => {
      const table = SpecTable.open(tableOf(opts), opts.target);
      let entries: TableEntry[];
      try {
        await table.assertTarget();
        entries = await table.scan();
      } finally {
        table.close();
      }
      process.stdout.write(exportYaml(entries));
      const invalid = entries.filter((e) => !e.result.ok).length;
      if (invalid > 0) {
        process.stderr.write(`ecsr export: ${invalid} invalid spec${invalid === 1 ? ' was' : 's were'} exported as stored; apply rejects ${invalid === 1 ? 'it' : 'them'} until fixed.\n`);
      }
      if (entries.length === 0) process.stderr.write(`ecsr export: table ${table.name} holds no spec.\n`);
    }),
  );
}

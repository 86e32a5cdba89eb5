/**
 * `ecsr get [CLUSTER[/SERVICE]] [-o table|wide|json|yaml]`: the specs and what the reconciler last
 * wrote about each (phase, counts, reason, last action). The table fits the terminal
 * (`COLUMNS`, else the terminal's width); under it, each service not converged has its whole
 * reason on its own lines.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { specToItem } from '../../lambda/core/spec';
import { serviceId } from '../../lambda/core/types';
import { CliError } from './support/errors';
import { GET_FORMATS, renderStatusTable, statusReasonLines, terminalWidth, toJson, toYaml } from './support/format';
import { parseServiceRef, runAction, tableOf, withAwsOptions, type AwsOptions } from './support/options';
import { SpecTable, type TableEntry } from './support/spec-table';

interface GetOptions extends AwsOptions {
  output: (typeof GET_FORMATS)[number];
}

/** A cluster name alone, or CLUSTER/SERVICE. */
type Selector = { cluster: string; service?: string };

function parseSelector(text: string): Selector {
  if (text.includes('/')) return parseServiceRef(text);
  if (!/^[A-Za-z0-9_-]{1,255}$/.test(text)) throw new InvalidArgumentError(`"${text}" is not CLUSTER or CLUSTER/SERVICE.`);
  return { cluster: text };
}

/** The machine-readable form of one item (`-o json|yaml`). */
export function entryDocument(e: TableEntry): Record<string, unknown> {
  const r = e.result;
  return {
    cluster: e.key?.cluster ?? e.item.cluster,
    service: e.key?.service ?? e.item.service,
    valid: r.ok,
    ...(r.ok ? { specHash: r.hash, synced: e.status?.specHash === r.hash } : { errors: r.errors }),
    spec: r.ok ? specToItem(r.spec) : e.item,
    status: e.status ?? null,
  };
}

export function getCommand(): Command {
  const cmd = new Command('get')
    .description('Show specs and their status (phase, tasks, reason, last action)')
    .argument('[selector]', 'CLUSTER or CLUSTER/SERVICE (default: every spec)', parseSelector)
    .addOption(new Option('-o, --output <format>', 'output format').choices(GET_FORMATS).default('table'));
  return withAwsOptions(cmd).action(
    runAction(async (selector: Selector | undefined, opts: GetOptions) => {
      const table = SpecTable.open(tableOf(opts));
      let entries: TableEntry[];
      try {
        if (selector?.service) {
          const one = await table.get({ cluster: selector.cluster, service: selector.service });
          if (!one) throw new CliError(`There is no spec ${serviceId({ cluster: selector.cluster, service: selector.service })} in table ${table.name}.`);
          entries = [one];
        } else {
          entries = (await table.scan()).filter((e) => !selector || e.key?.cluster === selector.cluster);
        }
      } finally {
        table.close();
      }
      // One service: its document; otherwise a list (also when empty).
      const doc = selector?.service ? entryDocument(entries[0]) : entries.map(entryDocument);
      if (opts.output === 'json') {
        process.stdout.write(toJson(doc));
      } else if (opts.output === 'yaml') {
        process.stdout.write(toYaml(doc));
      } else if (entries.length === 0) {
        process.stdout.write(selector ? `No specs in cluster ${selector.cluster} (table ${table.name}).\n` : `No specs in table ${table.name}.\n`);
      } else {
        const width = terminalWidth();
        const under = statusReasonLines(entries, width);
        process.stdout.write(`${renderStatusTable(entries, { wide: opts.output === 'wide', width })}\n${under.length > 0 ? `\n${under.join('\n')}\n` : ''}`);
      }
    }),
  );
}

/**
 * `ecsr get [CLUSTER[/SERVICE]] [-o table|wide|json|yaml] [-l key=value,...]`: the specs (those
 * whose tags meet the `-l` selector) and what the reconciler last wrote about each (phase, counts,
 * reason, last action). The table fits the terminal
 * (`COLUMNS`, else the terminal's width); under it, each service not converged has its whole
 * reason on its own lines.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import wrapAnsi from 'wrap-ansi';
import { specToItem } from '../../lambda/core/spec';
import { serviceId } from '../../lambda/core/types';
import { CliError } from './support/errors';
import { fitRows, GET_FORMATS, pruneHoldLines, renderStatusTable, statusReasonLines, terminalWidth, toJson, toYaml } from './support/format';
import type { PruneHold } from '../../lambda/core/types';
import { formatDuration, parseDuration, parseInteger, parseServiceRef, runAction, tableOf, withAwsOptions, withTargetOption, type AwsOptions, type TargetOption } from './support/options';
import { entryId, SpecTable, type TableEntry } from './support/spec-table';
import { heartbeatLine, type LocalRunHeartbeat } from '../../local/heartbeat';
import { matchesSelector, parseSelector as parseLabelSelector, type Requirement } from './support/selector';

interface GetOptions extends AwsOptions, TargetOption {
  /** Every target's specs, with a TARGET column. */
  allTargets?: boolean;
  output: (typeof GET_FORMATS)[number];
  watch?: boolean;
  /** Seconds between refreshes of --watch. */
  interval: number;
  /** Refreshes of --watch before it ends by itself (undefined: until Ctrl+C). */
  count?: number;
  /** `-l`: only the specs whose tags meet these requirements (`text` as given). */
  selector?: LabelSelector;
}

/** A `-l` selector: its requirements and the text they were read from. */
interface LabelSelector {
  readonly text: string;
  readonly requirements: Requirement[];
}

/** A cluster name alone, or CLUSTER/SERVICE. */
type Selector = { cluster: string; service?: string };

function parseSelector(text: string): Selector {
  if (text.includes('/')) return parseServiceRef(text);
  if (!/^[A-Za-z0-9_-]{1,255}$/.test(text)) throw new InvalidArgumentError(`"${text}" is not CLUSTER or CLUSTER/SERVICE.`);
  return { cluster: text };
}

/**
 * The machine-readable form of one item (`-o json|yaml`); `pruneHold`, when the item's cluster has
 * its prunes held (docs/operations.md, "Prune safety"), is that hold (`cluster`, `since`, `reason`).
 */
export function entryDocument(e: TableEntry, pruneHold?: PruneHold): Record<string, unknown> {
  const r = e.result;
  return {
    target: e.target ?? 'default',
    cluster: e.key?.cluster ?? e.item.cluster,
    service: e.key?.service ?? e.item.service,
    valid: r.ok,
    ...(r.ok ? { specHash: r.hash, synced: e.status?.specHash === r.hash } : { errors: r.errors }),
    spec: r.ok ? specToItem(r.spec) : e.item,
    status: e.status ?? null,
    ...(pruneHold ? { pruneHold } : {}),
  };
}

/**
 * The documents of `-o json|yaml` (one for CLUSTER/SERVICE, else a list), each with its cluster's
 * prune hold, and the lines of the holds of clusters no shown item is in (for stderr: a wiped
 * cluster has no item to carry its hold).
 */
export function machineDocuments(read: Read, one: boolean): { doc: unknown; unattached: string[] } {
  const holds = read.pruneHolds ?? [];
  const holdOf = (e: TableEntry) => {
    const cluster = e.key?.cluster ?? e.item.cluster;
    const id = e.target && e.target !== 'default' && read.targets ? `${e.target}/${String(cluster)}` : cluster;
    return holds.find((h) => h.cluster === id);
  };
  const docs = read.entries.map((e) => entryDocument(e, holdOf(e)));
  const attached = new Set(read.entries.map(holdOf).filter((h) => h !== undefined));
  return { doc: one ? docs[0] : docs, unattached: pruneHoldLines(holds.filter((h) => !attached.has(h))) };
}

/** What `get` read: the entries `selector` names, and the local run's heartbeat when there is one. */
export interface Read {
  entries: TableEntry[];
  heartbeat?: LocalRunHeartbeat;
  /** Several targets are shown: the TARGET column. */
  targets?: boolean;
  /** Spec counts of the targets not shown (listing one target). */
  otherTargets?: Record<string, number>;
  /** Clusters whose prunes are held (the `#prune-hold` items of the target, or of every target). */
  pruneHolds?: PruneHold[];
  /** The `-l` selector the entries were filtered by, as given. */
  labels?: string;
}

/**
 * Reads the entries `selector` names whose tags meet `labels` (invalid items by the tags as
 * written). @throws CliError for CLUSTER/SERVICE without a spec.
 */
async function readEntries(table: SpecTable, selector: Selector | undefined, allTargets = false, labels?: LabelSelector): Promise<Read> {
  if (selector?.service) {
    const one = await table.get({ cluster: selector.cluster, service: selector.service });
    if (!one) throw new CliError(`There is no spec ${entryId(table.target, { cluster: selector.cluster, service: selector.service })} in table ${table.name}.`);
    const hold = await table.pruneHold(selector.cluster);
    return { entries: [one], ...(hold ? { pruneHolds: [hold] } : {}) };
  }
  const { entries, heartbeat, otherTargets, pruneHolds } = await table.scanWithHeartbeat({ allTargets });
  const shown = entries.filter((e) => (!selector || e.key?.cluster === selector.cluster) && (!labels || matchesSelector(tagsOf(e), labels.requirements)));
  const holds = pruneHolds.filter((h) => !selector || h.cluster === selector.cluster);
  const several = allTargets || new Set(shown.map((e) => e.target ?? 'default')).size > 1;
  return {
    entries: shown,
    ...(heartbeat ? { heartbeat } : {}),
    ...(several ? { targets: true } : {}),
    ...(!allTargets && Object.keys(otherTargets).length > 0 ? { otherTargets } : {}),
    ...(holds.length > 0 ? { pruneHolds: holds } : {}),
    ...(labels ? { labels: labels.text } : {}),
  };
}

/** A spec's tags; an invalid item's `tags` as written when they are a map of strings. */
function tagsOf(e: TableEntry): Readonly<Record<string, string>> | undefined {
  if (e.result.ok) return e.result.spec.tags;
  const raw: unknown = e.item.tags;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  return Object.fromEntries(Object.entries(raw).filter((kv): kv is [string, string] => typeof kv[1] === 'string'));
}

/** Under a one-target listing: the other targets of the table, and how to see them. */
function otherTargetsLine(read: Read): string {
  const others = Object.entries(read.otherTargets ?? {});
  if (others.length === 0) return '';
  return `\nOther targets in this table: ${others.map(([t, n]) => `${t} (${n} spec${n === 1 ? '' : 's'})`).join(', ')}; --all-targets shows every one, --target NAME one.\n`;
}

/**
 * The table of the entries (or that there is none) with the whole reasons under it, fitted to
 * `width`; above it, when the table is a local run's, its last pass (the heartbeat).
 */
function renderEntries(read: Read, selector: Selector | undefined, tableName: string, wide: boolean, width: number): string {
  const { entries, heartbeat } = read;
  const wrap = (line: string) => wrapAnsi(line, width, { hard: true, trim: true });
  const lines = [...(heartbeat ? [heartbeatLine(heartbeat, Date.now())] : []), ...pruneHoldLines(read.pruneHolds ?? [])];
  const top = lines.length > 0 ? `${lines.map(wrap).join('\n')}\n\n` : '';
  const matching = read.labels !== undefined ? ` matching -l ${read.labels}` : '';
  if (entries.length === 0) return `${top}${selector ? `No specs${matching} in cluster ${selector.cluster} (table ${tableName}).\n` : `No specs${matching} in table ${tableName}.\n`}${otherTargetsLine(read)}`;
  const under = statusReasonLines(entries, width);
  return `${top}${renderStatusTable(entries, { wide, width, ...(read.targets ? { targets: true } : {}) })}\n${under.length > 0 ? `\n${under.join('\n')}\n` : ''}${otherTargetsLine(read)}`;
}

/**
 * `--watch`: the table again every `interval` seconds, redrawn in place on a terminal (log-update),
 * else printed again under a timestamped header; until Ctrl+C (SIGINT) or SIGTERM, which end it
 * with exit code 0, or `count` refreshes. A read that fails is said in the frame and retried.
 */
async function watchEntries(table: SpecTable, selector: Selector | undefined, opts: GetOptions): Promise<void> {
  const { createLogUpdate } = await import('log-update');
  const tty = Boolean(process.stdout.isTTY);
  const draw = tty ? createLogUpdate(process.stdout) : undefined;
  let stop = false;
  let wake: (() => void) | undefined;
  const onSignal = () => {
    stop = true;
    wake?.();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    for (let n = 1; !stop; n++) {
      let body: string;
      try {
        body = renderEntries(await readEntries(table, selector, opts.allTargets, opts.selector), selector, table.name, opts.output === 'wide', terminalWidth());
      } catch (err) {
        if (err instanceof CliError && selector?.service) throw err;
        body = `could not read table ${table.name}: ${err instanceof Error ? err.message : String(err)}; retrying\n`;
      }
      const every = opts.interval < 1 ? `${Math.round(opts.interval * 1000)}ms` : formatDuration(opts.interval);
      const header = `Every ${every}: ecsr get${selector ? ` ${selector.service ? `${selector.cluster}/${selector.service}` : selector.cluster}` : ''}  ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}  (Ctrl+C to stop)`;
      if (draw) draw(fitRows(`${header}\n\n${body}`, process.stdout.rows));
      else process.stdout.write(`${n > 1 ? '\n' : ''}${header}\n\n${body}`);
      if (opts.count !== undefined && n >= opts.count) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, opts.interval * 1000);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    draw?.done();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

export function getCommand(): Command {
  const cmd = new Command('get')
    .description('Show specs and their status (phase, tasks, reason, last action)')
    .argument('[selector]', 'CLUSTER or CLUSTER/SERVICE (default: every spec)', parseSelector)
    .addOption(new Option('-o, --output <format>', 'output format').choices(GET_FORMATS).default('table'))
    .option('-w, --watch', 'refresh the table in place every --interval until Ctrl+C')
    .addOption(new Option('--interval <duration>', 'how often --watch refreshes, e.g. 2s, 1m').argParser(parseDuration).default(5, '5s'))
    .addOption(new Option('--count <n>', 'end --watch after this many refreshes').argParser(parseInteger))
    .option('-A, --all-targets', 'the specs of every target (account and Region), with a TARGET column')
    .addOption(
      new Option('-l, --selector <requirements>', 'only specs whose tags meet every requirement: key=value, key!=value, key, !key, comma-separated').argParser(
        (text: string): LabelSelector => ({ text, requirements: parseLabelSelector(text) }),
      ),
    );
  return withAwsOptions(withTargetOption(cmd)).action(
    runAction(async (selector: Selector | undefined, opts: GetOptions) => {
      if (opts.allTargets && selector?.service) throw new CliError('--all-targets lists specs: give CLUSTER or nothing, or name the target of CLUSTER/SERVICE with --target.');
      if (opts.allTargets && opts.target !== 'default') throw new CliError('Give --all-targets or --target NAME, not both.');
      if (opts.selector && selector?.service) throw new CliError('-l selects among specs: give CLUSTER or nothing with it, not CLUSTER/SERVICE.');
      const table = SpecTable.open(tableOf(opts), opts.target);
      try {
        await table.assertTarget();
      } catch (err) {
        table.close();
        throw err;
      }
      if (opts.watch) {
        if (opts.output !== 'table' && opts.output !== 'wide') throw new CliError('--watch shows the table: use it with -o table or -o wide.');
        try {
          await watchEntries(table, selector, opts);
        } finally {
          table.close();
        }
        return;
      }
      let read: Read;
      try {
        read = await readEntries(table, selector, opts.allTargets, opts.selector);
      } finally {
        table.close();
      }
      if (opts.output === 'json' || opts.output === 'yaml') {
        // One service: its document; otherwise a list (also when empty).
        const { doc, unattached } = machineDocuments(read, selector?.service !== undefined);
        process.stdout.write(opts.output === 'json' ? toJson(doc) : toYaml(doc));
        for (const line of unattached) process.stderr.write(`ecsr get: ${line}\n`);
      } else process.stdout.write(renderEntries(read, selector, table.name, opts.output === 'wide', terminalWidth()));
    }),
  );
}

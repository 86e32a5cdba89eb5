/**
 * `ecsr purge [CLUSTER] [--dry-run] [--yes]`: removes the tombstones of deleted specs. A spec
 * marked `state: absent` keeps its item after the pass deleted its service, with the status that
 * says so (phase `Deleted`), so that `ecsr get` shows what happened; purge removes those items,
 * in one cluster or in the whole table (of the `--target`). Like `ecsr delete`, it first lists
 * what it removes and asks on a terminal; `--yes` does not ask, `--dry-run` writes nothing, and
 * without a terminal and without `--yes` it refuses.
 *
 * Each removal is a conditional DeleteItem (`SpecTable.removeTombstone`): an item brought back
 * or edited into something else since the Scan is kept. Specs marked absent whose service is not
 * deleted yet are kept and named. The spec history is kept: its revisions expire by their own
 * retention (docs/history.md), and the removal itself becomes a revision by the caller.
 */
import { Command } from 'commander';
import type { ServiceKey } from '../../lambda/core/types';
import { confirmOrRefuse } from './support/confirm';
import { runAction, tableOf, withAwsOptions, withTargetOption, type AwsOptions, type TargetOption } from './support/options';
import { entryId, SpecTable, type TableEntry } from './support/spec-table';
import { recordEdit } from './support/spec-history';

interface PurgeOptions extends AwsOptions, TargetOption {
  yes?: boolean;
  dryRun?: boolean;
}

const CLUSTER_NAME = /^[A-Za-z0-9_-]{1,255}$/;

/** Whether `entry` is a tombstone: a valid spec marked `state: absent` whose status phase is `Deleted`. */
export function isTombstone(entry: TableEntry): boolean {
  return entry.key !== null && entry.result.ok && entry.result.spec.state === 'absent' && entry.status?.phase === 'Deleted';
}

/** Whether `entry` is marked absent and its service is not deleted yet (kept by purge). */
function isStillDeleting(entry: TableEntry): boolean {
  return entry.key !== null && entry.result.ok && entry.result.spec.state === 'absent' && entry.status?.phase !== 'Deleted';
}

/** What purge finds in the entries of one Scan: the tombstones, and absent specs not deleted yet. */
export interface PurgeSelection {
  readonly tombstones: readonly TableEntry[];
  readonly deleting: readonly TableEntry[];
}

/** The tombstones of `entries` (in `cluster` when given), and the absent specs it keeps. */
export function selectTombstones(entries: readonly TableEntry[], cluster: string | undefined): PurgeSelection {
  const inScope = entries.filter((e) => cluster === undefined || e.key?.cluster === cluster);
  return { tombstones: inScope.filter(isTombstone), deleting: inScope.filter(isStillDeleting) };
}

/** `where` for messages: `cluster shop` or `table specs`. */
function scope(table: SpecTable, cluster: string | undefined): string {
  return cluster === undefined ? `table ${table.name}` : `cluster ${cluster} of table ${table.name}`;
}

/**
 * The lines purge prints before it asks (and for `--dry-run`): one line per tombstone with when a
 * pass last saw it deleted, then the absent specs it keeps.
 */
export function purgePreview(target: string | undefined, selection: PurgeSelection, where: string): string {
  const lines: string[] = [];
  const n = selection.tombstones.length;
  if (n === 0) {
    lines.push(`No tombstones in ${where}: no spec marked absent has its service deleted (phase Deleted).`);
  } else {
    lines.push(`Purging removes ${n} ${n === 1 ? 'tombstone' : 'tombstones'} from ${where} (specs marked absent whose service a pass deleted):`);
    for (const e of selection.tombstones) lines.push(`  ${entryId(target, e.key as ServiceKey)}  deleted, last seen ${e.status?.observedAt ?? 'at an unknown time'}`);
  }
  for (const e of selection.deleting) {
    lines.push(`Kept ${entryId(target, e.key as ServiceKey)}: marked absent, but its service is not deleted yet (phase ${e.status?.phase ?? 'none: no pass has seen it'}).`);
  }
  return `${lines.join('\n')}\n`;
}

export function purgeCommand(): Command {
  const cmd = new Command('purge')
    .description('Remove the items of deleted specs (state absent, phase Deleted) from the table; lists them and asks first on a terminal')
    .argument('[cluster]', 'only this ECS cluster (default: every cluster of the target)', (v: string) => {
      if (!CLUSTER_NAME.test(v)) throw new Error(`cluster "${v}" is not an ECS cluster name (1-255 letters, digits, - and _)`);
      return v;
    })
    .option('-y, --yes', 'do not ask (needed when stdin is not a terminal)')
    .option('--dry-run', 'say what it would remove, write nothing');
  return withAwsOptions(withTargetOption(cmd)).action(
    runAction(async (cluster: string | undefined, opts: PurgeOptions) => {
      const table = SpecTable.open(tableOf(opts), opts.target);
      try {
        await table.assertTarget();
        const selection = selectTombstones(await table.scan(), cluster);
        const where = scope(table, cluster);
        const n = selection.tombstones.length;
        if (opts.dryRun || !opts.yes || n === 0) process.stdout.write(purgePreview(opts.target, selection, where));
        if (n === 0) return;
        if (opts.dryRun) {
          process.stdout.write('Nothing was removed (--dry-run).\n');
          return;
        }
        const noun = n === 1 ? 'tombstone' : 'tombstones';
        await confirmOrRefuse(`Remove ${n} ${noun}?`, `remove ${n} ${noun} from ${where}`, opts);
        await removeEach(table, selection.tombstones, opts.target);
      } finally {
        table.close();
      }
    }),
  );
}

/** Removes each tombstone (conditionally), records each removal in the history, says what it did. */
async function removeEach(table: SpecTable, tombstones: readonly TableEntry[], target: string | undefined): Promise<void> {
  let removed = 0;
  for (const e of tombstones) {
    const key = e.key as ServiceKey;
    const id = entryId(target, key);
    if ((await table.removeTombstone(key)) === 'removed') {
      removed += 1;
      await recordEdit(table, key, 'ecsr purge');
      process.stdout.write(`Removed ${id}.\n`);
    } else {
      process.stdout.write(`Kept ${id}: it changed since it was read and is no longer a deleted spec (or it is gone).\n`);
    }
  }
  process.stdout.write(`${removed} ${removed === 1 ? 'tombstone' : 'tombstones'} removed; their history is kept (ecsr history CLUSTER/SERVICE, docs/history.md).\n`);
}

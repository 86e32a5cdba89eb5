/**
 * `ecsr history CLUSTER/SERVICE [--diff A..B] [-o table|json|yaml]`: the revisions of a spec, newest
 * first: when, by whom (the caller's ARN where ecsr wrote it, "unknown: written outside ecsr"
 * otherwise), through what, what changed from the revision before, and the outcome the reconciler
 * saw (converged, rolled back by ECS and why, refused, invalid). The revision the table holds now
 * is marked `*`; its outcome is read from the spec item's status as the pass last wrote it, the
 * others' from the history (docs/history.md). `--diff A..B` shows the attributes that differ
 * between two revisions, as `ecsr diff` shows them.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { outcomeOf, type Revision, type RevisionOutcome } from '../../lambda/adapters/spec-history';
import { parseSpecItem, specToItem } from '../../lambda/core/spec';
import type { ServiceKey } from '../../lambda/core/types';
import { fitTable, shorten } from '../../local/view';
import { structuredSpecChanges, specChanges, type SpecChange } from './diff';
import { CliError } from './support/errors';
import { toJson, toYaml } from './support/format';
import { parseServiceRef, runAction, tableOf, withAwsOptions, withTargetOption, type AwsOptions, type TargetOption } from './support/options';
import { historyOf } from './support/spec-history';
import { entryId, SpecTable, type TableEntry } from './support/spec-table';
import { terminalWidth } from '../../local/view';

interface HistoryOptions extends AwsOptions, TargetOption {
  output: 'table' | 'json' | 'yaml';
  diff?: { from: number; to: number };
}

/** Parses `A..B` (two revision numbers). @throws InvalidArgumentError */
export function parseRevisionRange(text: string): { from: number; to: number } {
  const m = /^(\d+)\.\.(\d+)$/.exec(text.trim());
  if (!m) throw new InvalidArgumentError(`"${text}" is not A..B (two revision numbers, e.g. 3..5).`);
  return { from: Number(m[1]), to: Number(m[2]) };
}

/** The spec of a revision in normalized item form (defaults and order do not show as changes). */
export function normalizedSpec(r: Revision): Record<string, unknown> | undefined {
  if (!r.spec) return undefined;
  const parsed = parseSpecItem(r.spec);
  return parsed.ok ? specToItem(parsed.spec) : r.spec;
}

/** The outcome of a revision as one phrase: `converged`, `rolled back by ECS: ...`. */
export function outcomeText(o: RevisionOutcome | undefined): string {
  if (!o) return '-';
  const words: Record<RevisionOutcome['kind'], string> = {
    converged: 'converged',
    'rolled-back': 'rolled back by ECS',
    refused: 'refused',
    invalid: 'invalid',
    degraded: 'degraded',
    deleted: 'deleted',
    'in-progress': 'in progress',
  };
  return o.message ? `${words[o.kind]}: ${o.message}` : words[o.kind];
}

/** A revision as `ecsr history` shows it: the stored outcome, or the live one for the current revision. */
export interface ShownRevision extends Revision {
  readonly current: boolean;
  /** True for the oldest revision kept (nothing to compare it with). */
  readonly oldest: boolean;
  /** What changed from the revision before it (attribute paths and values). */
  readonly changes: readonly SpecChange[];
}

/**
 * The revisions with the current one marked (the newest whose hash is the table's spec's) and its
 * outcome read from the spec item's status; each with its changes from the one before.
 */
export function showRevisions(revisions: readonly Revision[], entry: TableEntry | undefined): ShownRevision[] {
  const currentHash = entry?.result.ok ? entry.result.hash : undefined;
  const current = revisions.find((r) => currentHash !== undefined && r.specHash === currentHash);
  return revisions.map((r, i) => {
    const before = revisions[i + 1];
    const live = r === current ? outcomeOf(entry?.status, r.specHash) : undefined;
    const outcome = live ?? r.outcome;
    // The oldest revision kept has nothing before it to compare with.
    const changes = r.spec && before ? structuredSpecChanges(normalizedSpec(before), normalizedSpec(r) ?? {}) : [];
    return { ...r, current: r === current, oldest: before === undefined, changes, ...(outcome ? { outcome } : {}) };
  });
}

/** What a revision changed, in a few words: `image "nginx:1.28"`, `first revision`, `item removed`. */
export function changeSummary(r: ShownRevision): string {
  if (r.removed) return 'item removed';
  if (r.invalid) return `invalid: ${r.invalid[0]}`;
  if (r.changes.length === 0) return r.oldest ? (r.revision === 1 ? 'first revision' : 'oldest revision kept') : 'no change';
  const first = r.changes.slice(0, 2).map((c) => `${c.path} ${c.to === null ? '(none)' : JSON.stringify(c.to)}`);
  return `${first.join(', ')}${r.changes.length > 2 ? ` (+${r.changes.length - 2} more)` : ''}`;
}

/** The revisions as a table fitted to `width` columns. */
export function renderHistoryTable(revisions: readonly ShownRevision[], width: number): string {
  const rows = revisions.map((r) => [
    `${r.current ? '*' : ' '}${r.revision}`,
    r.writtenAt.replace(/\.\d{3}Z$/, 'Z'),
    r.writtenBy,
    r.via,
    shorten(outcomeText(r.outcome), 200),
    changeSummary(r),
  ]);
  return fitTable(['REV', 'WRITTEN', 'BY', 'VIA', 'OUTCOME', 'CHANGE'], rows, { width, shrink: [5, 4, 2, 3], wrap: [4, 5] });
}

/** The text of `--diff A..B`. */
function diffText(id: string, from: Revision, to: Revision): string {
  const a = normalizedSpec(from);
  const b = normalizedSpec(to) ?? {};
  const lines = specChanges(a, b);
  return [`${id}: revision ${from.revision} -> ${to.revision}`, ...(lines.length > 0 ? lines.map((l) => `  ${l}`) : ['  (no difference)'])].join('\n') + '\n';
}

function revisionOrFail(revisions: readonly Revision[], n: number, id: string): Revision {
  const r = revisions.find((x) => x.revision === n);
  if (!r) throw new CliError(`${id} has no revision ${n} (kept: ${revisions.map((x) => x.revision).join(', ') || 'none'}).`);
  return r;
}

async function showHistory(key: ServiceKey, opts: HistoryOptions): Promise<void> {
  const table = SpecTable.open(tableOf(opts), opts.target);
  try {
    await table.assertTarget();
    const id = entryId(opts.target, key);
    const [revisions, entry] = await Promise.all([historyOf(table).list(key), table.get(key)]);
    if (revisions.length === 0 && !entry) throw new CliError(`There is no spec ${id} in table ${table.name}, and no history of one.`);
    if (opts.diff) {
      const from = revisionOrFail(revisions, opts.diff.from, id);
      const to = revisionOrFail(revisions, opts.diff.to, id);
      if (opts.output === 'table') process.stdout.write(diffText(id, from, to));
      else {
        const doc = { cluster: key.cluster, service: key.service, from: from.revision, to: to.revision, changes: structuredSpecChanges(normalizedSpec(from), normalizedSpec(to) ?? {}) };
        process.stdout.write(opts.output === 'json' ? toJson(doc) : toYaml(doc));
      }
      return;
    }
    const shown = showRevisions(revisions, entry);
    if (opts.output !== 'table') {
      const doc = { cluster: key.cluster, service: key.service, ...(opts.target !== 'default' ? { target: opts.target } : {}), revisions: shown };
      process.stdout.write(opts.output === 'json' ? toJson(doc) : toYaml(doc));
      return;
    }
    if (revisions.length === 0) {
      process.stdout.write(`${id} has no recorded revision yet (its spec was written before the history, or outside ecsr with no stream path to record it).\n`);
      return;
    }
    process.stdout.write(`${renderHistoryTable(shown, terminalWidth())}\n`);
    if (entry && !shown.some((r) => r.current)) {
      process.stdout.write(`The table's spec of ${id} is none of these revisions: it was written outside ecsr and not recorded yet.\n`);
    }
  } finally {
    table.close();
  }
}

export function historyCommand(): Command {
  const cmd = new Command('history')
    .description('List the revisions of a spec: when, by whom, what changed, and what the reconciler saw (converged, rolled back, refused)')
    .argument('<cluster/service>', 'the spec', parseServiceRef)
    .addOption(new Option('--diff <A..B>', 'show the attributes that differ between revisions A and B').argParser(parseRevisionRange))
    .addOption(new Option('-o, --output <format>', 'output format').choices(['table', 'json', 'yaml']).default('table'));
  return withAwsOptions(withTargetOption(cmd)).action(runAction(async (key: ServiceKey, opts: HistoryOptions) => showHistory(key, opts)));
}

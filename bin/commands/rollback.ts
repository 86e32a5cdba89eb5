/**
 * `ecsr rollback CLUSTER/SERVICE [--to REVISION] [--if-current REVISION] [--wait]`: writes an
 * earlier revision's spec back as an ordinary edit (the spec write of `ecsr apply`, then its
 * revision in the history); the loop does the rest, as for any edit, and `--wait` waits as
 * `apply --wait` does. The write is conditioned on the spec item still holding the spec this
 * command read (`unchangedSpecCondition`), so an edit made meanwhile is never overwritten; with
 * `--if-current`, it is refused unless that spec is the revision the person saw as current in
 * `ecsr history`. Without `--to`: the newest revision before the current one with another spec.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { Command, InvalidArgumentError, Option } from 'commander';
import type { Revision } from '../../lambda/adapters/spec-history';
import { parseSpecItem } from '../../lambda/core/spec';
import { partitionKeyOf } from '../../lambda/core/targets';
import type { ServiceKey } from '../../lambda/core/types';
import { waitAndReport, withWaitOptions, type WaitFlags } from './apply';
import { normalizedSpec } from './history';
import { specChanges } from './diff';
import { CliError } from './support/errors';
import { parseServiceRef, runAction, tableOf, withAwsOptions, withTargetOption, type AwsOptions, type TargetOption } from './support/options';
import { historyOf, recordEdit } from './support/spec-history';
import { entryId, SpecTable } from './support/spec-table';

interface RollbackOptions extends AwsOptions, WaitFlags, TargetOption {
  to?: number;
  ifCurrent?: number;
  wait?: boolean;
}

/** A revision number (1 or more). @throws InvalidArgumentError */
function parseRevision(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`"${text}" is not a revision number (1, 2, ...; see ecsr history).`);
  return n;
}

/** The spec item as stored (the document client's values, sets kept as sets), without `status`. */
async function readStoredSpec(table: SpecTable, key: ServiceKey): Promise<Record<string, unknown> | undefined> {
  const out = await table.doc.send(
    new GetCommand({ TableName: table.name, Key: { cluster: partitionKeyOf(table.target, key.cluster), service: key.service }, ConsistentRead: true }),
  );
  if (!out.Item) return undefined;
  const { status: _status, ...spec } = out.Item;
  return spec;
}

/**
 * The revision to write back: `--to`, or the newest one older than the current revision whose
 * spec differs from it.
 * @throws CliError when there is none, or it holds no valid spec.
 */
export function chooseRevision(revisions: readonly Revision[], currentHash: string | undefined, to: number | undefined, id: string): Revision {
  const currentIndex = revisions.findIndex((r) => r.specHash === currentHash);
  const chosen =
    to !== undefined
      ? revisions.find((r) => r.revision === to)
      : revisions.slice(currentIndex < 0 ? 0 : currentIndex + 1).find((r) => r.spec !== undefined && r.specHash !== undefined && r.specHash !== currentHash);
  if (!chosen) {
    throw new CliError(
      to !== undefined
        ? `${id} has no revision ${to} (kept: ${revisions.map((r) => r.revision).join(', ') || 'none'}; ecsr history ${id}).`
        : `${id} has no earlier revision with another spec to roll back to (ecsr history ${id}).`,
    );
  }
  if (chosen.removed || !chosen.spec) throw new CliError(`Revision ${chosen.revision} of ${id} removed the item: there is no spec to write back.`);
  if (chosen.specHash === undefined) throw new CliError(`Revision ${chosen.revision} of ${id} is not a valid spec (${chosen.invalid?.[0] ?? 'invalid'}): the reconciler would not roll it out.`);
  return chosen;
}

async function rollback(key: ServiceKey, opts: RollbackOptions): Promise<void> {
  const table = SpecTable.open(tableOf(opts), opts.target);
  try {
    await table.assertTarget();
    const id = entryId(opts.target, key);
    const stored = await readStoredSpec(table, key);
    if (!stored) throw new CliError(`There is no spec ${id} in table ${table.name}: rollback writes an earlier spec over the current one (ecsr apply -f creates one).`);
    const current = await table.get(key);
    const currentHash = current?.result.ok ? current.result.hash : undefined;
    const revisions = await historyOf(table).list(key);
    const currentRevision = revisions.find((r) => r.specHash !== undefined && r.specHash === currentHash);
    if (opts.ifCurrent !== undefined && currentRevision?.revision !== opts.ifCurrent) {
      throw new CliError(
        `The spec ${id} is no longer revision ${opts.ifCurrent}: it is ${currentRevision ? `revision ${currentRevision.revision}` : 'an edit not in the history'} now, so nothing was written. Look again (ecsr history ${id}).`,
      );
    }
    const target = chooseRevision(revisions, currentHash, opts.to, id);
    if (target.specHash === currentHash) {
      process.stdout.write(`${id} already holds the spec of revision ${target.revision}; nothing written.\n`);
      return;
    }
    const parsed = parseSpecItem({ ...target.spec, cluster: key.cluster, service: key.service });
    if (!parsed.ok) throw new CliError(`Revision ${target.revision} of ${id} no longer validates (${parsed.errors[0]?.message ?? 'invalid'}); nothing written.`);
    const changes = specChanges(current?.result.ok ? normalizedSpec({ ...target, spec: current.item }) : current?.item, normalizedSpec(target) ?? {});
    await table.writeSpec(parsed.spec, { unchangedSince: stored });
    await recordEdit(table, key, `ecsr rollback --to ${target.revision}`);
    process.stdout.write(`${id} rolled back to revision ${target.revision} (spec ${parsed.hash}); the next pass rolls it out.\n`);
    for (const c of changes) process.stdout.write(`  ${c}\n`);
    if (opts.wait) await waitAndReport(table, [{ key, hash: parsed.hash, state: parsed.spec.state }], opts);
  } finally {
    table.close();
  }
}

export function rollbackCommand(): Command {
  const cmd = withWaitOptions(
    new Command('rollback')
      .description("Write an earlier revision's spec back as an ordinary edit (refused when the spec changed since it was read)")
      .argument('<cluster/service>', 'the spec to roll back', parseServiceRef)
      .addOption(new Option('--to <revision>', 'the revision to write back (default: the one before the current spec)').argParser(parseRevision))
      .addOption(new Option('--if-current <revision>', 'refuse unless the table still holds this revision (the one ecsr history showed as current)').argParser(parseRevision)),
    'wait until the service runs the spec written back (rollout COMPLETED, running = desired)',
  );
  return withAwsOptions(withTargetOption(cmd)).action(runAction(async (key: ServiceKey, opts: RollbackOptions) => rollback(key, opts)));
}

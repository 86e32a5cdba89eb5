/**
 * `ecsr apply -f FILE [--wait] [--timeout DURATION]`: validates YAML specs and writes them to the
 * specs table; with `--wait`, waits until the reconciler has rolled them out. Before writing it
 * runs the checks of `ecsr verify` and warns (`--no-verify`: only the ECS ones; see
 * `applyWarnings` in `verify.ts`).
 */
import { Command, Option } from 'commander';
import { serviceId } from '../../lambda/core/types';
import { CliError, EXIT } from './support/errors';
import { loadSpecFiles } from './support/spec-file';
import { entryId, SpecTable } from './support/spec-table';
import { recordEdit } from './support/spec-history';
import { DEFAULT_TARGET } from '../../lambda/core/targets';
import { collect, formatDuration, parseDuration, runAction, tableOf, withAwsOptions, withTargetOption, type AwsOptions, type TargetOption } from './support/options';
import { DEFAULT_STABLE_SECONDS, explain, failureSentence, waitForTargets, waitSummary, type WaitTarget } from './support/wait';

interface ApplyOptions extends AwsOptions, WaitFlags, TargetOption {
  file: string[];
  wait?: boolean;
  /** false with `--no-verify`. */
  verify: boolean;
  verifyTimeout: number;
}

/** `--timeout`, `--interval` and `--stable-for` (seconds). */
export interface WaitFlags {
  timeout: number;
  interval: number;
  stableFor: number;
}

/** Default of `--verify-timeout` (seconds): how long apply waits for the checks' answers before it writes all the same. */
export const APPLY_VERIFY_TIMEOUT_SECONDS = 15;

/** Default of `--timeout` (seconds). */
export const DEFAULT_WAIT_TIMEOUT_SECONDS = 600;
/** Default of `--interval` (seconds): how often `--wait` reads the statuses. */
export const DEFAULT_WAIT_INTERVAL_SECONDS = 5;

/** `--timeout`, `--interval` and `--stable-for` of the commands that wait. */
export function withWaitTimings(cmd: Command, what = '--wait'): Command {
  return cmd
    .addOption(new Option('--timeout <duration>', `how long ${what} waits, e.g. 90s, 10m`).argParser(parseDuration).default(DEFAULT_WAIT_TIMEOUT_SECONDS, '10m'))
    .addOption(new Option('--interval <duration>', `how often ${what} reads the statuses`).argParser(parseDuration).default(DEFAULT_WAIT_INTERVAL_SECONDS, '5s'))
    .addOption(
      new Option('--stable-for <duration>', 'how long (by ECS\'s clock) a converged service must stay at desired, with no task of its deployment failing, before it counts as converged')
        .argParser(parseDuration)
        .default(DEFAULT_STABLE_SECONDS, '30s'),
    );
}

/** `--wait` and its timings, for `apply` and `delete`. */
export function withWaitOptions(cmd: Command, what: string): Command {
  return withWaitTimings(cmd.option('--wait', what));
}

/**
 * Waits for `targets` and reports; throws a CliError (exit 1 when a service cannot converge
 * without a person, 2 for a timeout) whose first sentence says what is wrong and what to do
 * ({@link failureSentence}), carrying the conditions, latest ECS events and stop reasons of each
 * service that did not converge.
 */
export async function waitAndReport(table: SpecTable, targets: WaitTarget[], opts: WaitFlags): Promise<void> {
  const started = Date.now();
  const deleting = targets.every((t) => t.state === 'absent');
  const goal = deleting ? 'be deleted' : 'converge';
  const verb = deleting ? 'deleted' : 'converged';
  process.stdout.write(`Waiting up to ${formatDuration(opts.timeout)} for ${targets.length} service${targets.length === 1 ? '' : 's'} to ${goal}...\n`);
  const result = await waitForTargets(table, targets, {
    timeoutSeconds: opts.timeout,
    intervalSeconds: opts.interval,
    stableSeconds: opts.stableFor,
    write: (line) => process.stdout.write(`  ${line}\n`),
    // Another target's ECS is in its own account: its status alone says when it converged.
    ecsReads: table.target === DEFAULT_TARGET,
  });
  const elapsed = (Date.now() - started) / 1000;
  if (result.failed.length === 0 && !result.timedOut) {
    // Two clocks: the wait is timed here, the stable window by ECS (they differ in ecsr local, whose ECS runs --speed times faster).
    process.stdout.write(
      deleting
        ? `${waitSummary(result, targets.length, elapsed, verb)}.\n`
        : `${waitSummary(result, targets.length, elapsed, verb)} (this computer's clock), each stable for ${formatDuration(opts.stableFor)} (ECS's clock).\n`,
    );
    return;
  }
  const details: string[] = [];
  const sentences = result.failed.map((f) => failureSentence(f.target, f.status));
  if (result.failed.length > 1) details.push(...sentences);
  const ecs = table.target === DEFAULT_TARGET ? undefined : false;
  for (const f of result.failed) details.push(...(await explain(f.target, f.status, ecs)));
  for (const p of result.pending) {
    const lines = await explain(p.target, p.status, ecs);
    if (p.live) lines.splice(1, 0, `  ECS: ${p.live}`);
    details.push(...lines);
  }
  if (result.failed.length === 1) throw new CliError(sentences[0], EXIT.failed, details);
  if (result.failed.length > 1) {
    const ids = result.failed.map((f) => serviceId(f.target.key)).join(', ');
    throw new CliError(`${result.failed.length} services cannot converge without you: ${ids}; what to do for each follows.`, EXIT.failed, details);
  }
  const ids = result.pending.map((f) => serviceId(f.target.key)).join(', ');
  throw new CliError(`Timed out after ${Math.round(elapsed)}s waiting for ${ids} (${waitSummary(result, targets.length, elapsed, verb)}).`, EXIT.timeoutOrChanges, details);
}

export function applyCommand(): Command {
  const cmd = withWaitOptions(
    new Command('apply')
      .description('Validate YAML specs and write them to the specs table (the spec attributes; the status is kept)')
      .requiredOption('-f, --file <path>', 'YAML file or directory of *.yaml, or - for stdin (repeatable)', collect)
      .option('--no-verify', 'skip the checks outside ECS before writing (images, roles, secrets, network, target groups, allow-lists); the cluster and the service are always checked')
      .addOption(
        new Option('--verify-timeout <duration>', 'how long the checks may take before the specs are written all the same')
          .argParser(parseDuration)
          .default(APPLY_VERIFY_TIMEOUT_SECONDS, `${APPLY_VERIFY_TIMEOUT_SECONDS}s`),
      ),
    'wait until every service runs its new spec and stays there (rollout COMPLETED, running = desired for --stable-for)',
  );
  return withAwsOptions(withTargetOption(cmd)).action(
    runAction(async (opts: ApplyOptions) => {
      const specs = loadSpecFiles(opts.file, 'nothing was written');
      const tableName = tableOf(opts);
      const table = SpecTable.open(tableName, opts.target);
      try {
        // An unknown target is refused before anything else is said about its specs.
        await table.assertTarget();
        // The checks of ecsr verify, as warnings: the specs are written all the same.
        // ECS and IAM are checked with this shell's credentials: those of the reconciler's own account,
        // not another target's (its role is the reconciler's to assume), so only `default` is checked.
        const { applyWarnings } = await import('./verify');
        const warnings =
          opts.target === DEFAULT_TARGET
            ? await applyWarnings(
                specs.map((s) => s.spec),
                tableName,
                { scope: opts.verify ? 'all' : 'ecs', timeoutMs: opts.verifyTimeout * 1000 },
              )
            : [`the ECS and IAM checks of ecsr verify run in this shell's account; target ${opts.target}'s specs are written unchecked (its pass reports what ECS refuses)`];
        for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
        for (const s of specs) {
          const outcome = await table.writeSpec(s.spec);
          if (outcome !== 'unchanged') await recordEdit(table, s.key, 'ecsr apply');
          process.stdout.write(`${entryId(opts.target, s.key)} ${outcome}${s.spec.state === 'absent' ? ' (state: absent)' : ''}\n`);
        }
        if (!opts.wait) return;
        const targets: WaitTarget[] = specs.map((s) => ({ key: s.key, hash: s.hash, state: s.spec.state }));
        await waitAndReport(table, targets, opts);
      } finally {
        table.close();
      }
    }),
  );
}

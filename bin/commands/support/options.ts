/**
 * Options every `ecsr` command shares (`--table`, `--region`, `--profile`, `--endpoint-url`, `--debug`), parsers of
 * durations and service references, and the wrapper that turns a command's failure into one
 * sentence and an exit code.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { ENV } from '../../../lambda/config';
import type { ServiceKey } from '../../../lambda/core/types';
import { CliError, describeError, exitCodeOf } from './errors';
import { own } from '../../../lambda/core/dict';
import { DEFAULT_TARGET, TARGET_NAME_RE } from '../../../lambda/core/targets';

/** Options added by {@link withAwsOptions}. */
export interface AwsOptions {
  /** DynamoDB table of specs; default `SPECS_TABLE`. */
  table?: string;
  region?: string;
  profile?: string;
  /** `--endpoint-url`: every AWS service's endpoint, as the AWS CLI's option. */
  endpointUrl?: string;
  debug?: boolean;
}

/**
 * Adds the shared options to a command: `--table NAME` (default: the `SPECS_TABLE` environment
 * variable), `--region`, `--profile`, `--endpoint-url` (the AWS SDK's standard configuration
 * otherwise: `AWS_REGION`, `AWS_PROFILE`, `AWS_ENDPOINT_URL*`, shared config files) and `--debug`
 * (stack traces).
 */
export function withAwsOptions(cmd: Command, opts: { table?: boolean } = {}): Command {
  if (opts.table !== false) {
    cmd.addOption(new Option('--table <name>', 'DynamoDB table of specs').env(ENV.specsTable));
  }
  return cmd
    .option('--region <region>', 'AWS Region (default: AWS_REGION or your profile)')
    .option('--profile <name>', 'AWS profile of the shared config files (default: AWS_PROFILE)')
    .option('--endpoint-url <url>', 'endpoint of every AWS service the command calls, as the AWS CLI spells it (default: AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_<SERVICE>)')
    .option('--debug', 'print stack traces of errors');
}

/**
 * Makes `--region`, `--profile` and `--endpoint-url` the SDK's standard configuration for this
 * process, so that every client (the runtime's included) uses them. `--endpoint-url` wins over
 * every endpoint variable, as the AWS CLI's does: it becomes `AWS_ENDPOINT_URL`, and the
 * per-service `AWS_ENDPOINT_URL_<SERVICE>` variables are dropped for this process. `--profile`
 * wins over credentials in the environment (`AWS_ACCESS_KEY_ID`...), as the AWS CLI's does.
 */
export function applyAwsOptions(opts: AwsOptions): void {
  if (opts.endpointUrl) {
    for (const k of Object.keys(process.env)) if (k.startsWith('AWS_ENDPOINT_URL_')) delete process.env[k];
    process.env.AWS_ENDPOINT_URL = opts.endpointUrl;
  }
  if (opts.profile) {
    // As the AWS CLI's: a --profile given on the command line wins over credentials in the
    // environment (the SDK would use the profile too, but warn on stderr about both being set).
    process.env.AWS_PROFILE = opts.profile;
    for (const k of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN']) delete process.env[k];
  }
  if (opts.region) {
    process.env.AWS_REGION = opts.region;
    process.env.AWS_DEFAULT_REGION = opts.region;
  }
}

/**
 * The specs table to use.
 * @throws CliError when neither `--table` nor `SPECS_TABLE` names one.
 */
export function tableOf(opts: AwsOptions): string {
  const table = opts.table?.trim();
  if (!table) throw new CliError(`No specs table given: pass --table NAME or set ${ENV.specsTable}.`);
  return table;
}

const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86_400 };

/**
 * Parses a duration such as `90s`, `10m`, `1h30m`, `500ms` or a bare number of seconds.
 * @returns seconds (may be fractional for `ms`).
 * @throws InvalidArgumentError (commander prints it as a usage error) for anything else.
 */
export function parseDuration(text: string): number {
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t);
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/gy;
  let total = 0;
  let matched = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(t)) !== null) {
    total += Number(m[1]) * (own(UNIT_SECONDS, m[2]) ?? Number.NaN);
    matched = re.lastIndex;
  }
  if (t.length === 0 || matched !== t.length) {
    throw new InvalidArgumentError(`"${text}" is not a duration; use e.g. 90s, 10m, 1h30m.`);
  }
  return total;
}

/** `90s`, `10m`, `1h30m`: seconds as a short duration for messages. */
export function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = s % 60;
  return `${h > 0 ? `${h}h` : ''}${m > 0 ? `${m}m` : ''}${rest > 0 ? `${rest}s` : ''}`;
}

/** A TCP port: a whole number from 0 (any free port) to 65535. @throws InvalidArgumentError */
export function parsePort(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('a port is a whole number from 0 to 65535.');
  return n;
}

/** A finite number above 0 (e.g. `--speed`). @throws InvalidArgumentError */
export function parsePositive(v: string): number {
  const n = Number(v);
  if (!(n > 0) || !Number.isFinite(n)) throw new InvalidArgumentError('must be a number above 0.');
  return n;
}

/** A whole number (e.g. `--seed`). @throws InvalidArgumentError */
export function parseInteger(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n)) throw new InvalidArgumentError('must be a whole number.');
  return n;
}

/** Collects a repeatable option's values (no default needed, so `requiredOption` still requires one). */
export function collect(v: string, acc: string[] | undefined): string[] {
  return [...(acc ?? []), v];
}

const NAME_RE = /^[A-Za-z0-9_-]{1,255}$/;

/**
 * Parses `CLUSTER/SERVICE` (ECS names: letters, digits, hyphens, underscores).
 * @throws InvalidArgumentError for anything else.
 */
export function parseServiceRef(text: string): ServiceKey {
  const parts = text.split('/');
  if (parts.length !== 2 || !NAME_RE.test(parts[0]) || !NAME_RE.test(parts[1])) {
    throw new InvalidArgumentError(`"${text}" is not CLUSTER/SERVICE (ECS names: letters, digits, - and _).`);
  }
  return { cluster: parts[0], service: parts[1] };
}

/**
 * Wraps a command's action: applies `--region` / `--profile`, and turns any error into one
 * sentence on stderr (plus its detail lines) and the process exit code; with `--debug` the stack
 * trace follows. The action's arguments are commander's: positional arguments, options, command.
 */
export function runAction<A extends unknown[]>(fn: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    const cmd = args[args.length - 1] as Command;
    const opts = (typeof cmd?.optsWithGlobals === 'function' ? cmd.optsWithGlobals() : {}) as AwsOptions;
    try {
      applyAwsOptions(opts);
      await fn(...args);
    } catch (err) {
      // `ecsr set image: ...` for a subcommand: every name below the program's.
      const names: string[] = [];
      for (let c: Command | null = cmd ?? null; c?.parent; c = c.parent) names.unshift(c.name());
      process.stderr.write(`ecsr ${names.join(' ')}: ${describeError(err)}\n`.replace('ecsr : ', 'ecsr: '));
      if (err instanceof CliError) for (const line of err.details) process.stderr.write(`  ${line}\n`);
      if (opts.debug) process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = exitCodeOf(err);
    }
  };
}

/** `--target` (see {@link withTargetOption}). */
export interface TargetOption {
  /** The target whose specs the command reads or writes (default `default`). */
  target: string;
}

/** Parses a target's name. @throws InvalidArgumentError for a name no target can have. */
export function parseTargetName(text: string): string {
  if (!TARGET_NAME_RE.test(text)) throw new InvalidArgumentError(`"${text}" is not a target name (1-32 lowercase letters, digits or hyphens, as declared in docs/multi-account.md).`);
  return text;
}

/**
 * Adds `--target NAME` (default `default`, the reconciler's own account and Region): the command's
 * keys are that target's, stored as `<target>/<cluster>` (docs/multi-account.md). Whether the
 * target exists is checked against the table (`SpecTable.assertTarget`).
 */
export function withTargetOption(cmd: Command): Command {
  return cmd.addOption(
    new Option('--target <name>', "the target (account and Region) whose specs to use; its keys are <target>/<cluster> in the table").argParser(parseTargetName).default(DEFAULT_TARGET),
  );
}

/**
 * `ecsr local` (what `npm start` runs): the reconciler on a simulated Fargate cluster, no AWS
 * account needed. See `local/run.ts` for what it does and docs/cli.md (`ecsr local`) for what it shows.
 */
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, Option } from 'commander';
import { DEFAULT_SPEED, runLocal } from '../../local/run';
import { runLocalFanOut } from '../../local/fan-out-run';
import { ListenError, listenMessage, SimulatorListenError } from '../../local/sim/server';
import { localRunReport, writeReportFile, type LocalReportInfo } from '../../local/report';
import { LAST_PASS_MINUTE } from '../../local/scenario';
import type { RunTimeline } from '../../local/timeline';
import type { LocalStack } from '../../local/stack';
import { LiveView, PlainView, terminalWidth } from '../../local/view';
import { CliError } from './support/errors';
import { collect, parseInteger, parsePort, parsePositive, runAction } from './support/options';
import { loadSpecFiles } from './support/spec-file';

interface LocalOptions {
  speed: number;
  forever?: boolean;
  specs: string;
  seed: number;
  plain?: boolean;
  ecsPort: number;
  dynamodbPort: number;
  sqsPort: number;
  /** false with --no-events. */
  events: boolean;
  table: string;
  debug?: boolean;
  report?: string;
  targets: number;
  subnet: string[];
  securityGroup: string[];
}

/** The specs `ecsr local` loads by default: the example shop (only; the scenario is about it). */
export const SHOP_EXAMPLE = fileURLToPath(new URL('../../examples/shop.yaml', import.meta.url));
/** The single web service of the deploy docs; `--forever` creates its (empty) cluster so it can be applied. */
export const WEB_EXAMPLE = fileURLToPath(new URL('../../examples/web.yaml', import.meta.url));

/** A path as a person would type it from the current directory (`examples/shop.yaml`). */
function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel !== '' && !rel.startsWith('..') ? rel : path;
}

/**
 * What `--forever` prints once the servers run: endpoints, the environment to use them, and
 * commands to try from another terminal (a test runs each of them as printed). `web` is the
 * cluster and service of examples/web.yaml, whose cluster the run creates empty; `shop` is the
 * cluster whose `web` service's tasks the curl line stops.
 */
export function foreverBanner(
  stack: LocalStack,
  reconcilerEnv: Readonly<Record<string, string>> = {},
  web: { file: string; cluster: string; service: string } = { file: 'examples/web.yaml', cluster: 'prod', service: 'web' },
  speed = DEFAULT_SPEED,
): string {
  const every = Math.round((60 / speed) * 10) / 10;
  const clock =
    speed === 1
      ? ['The simulated clock runs at real time: a pass every minute. Stop with Ctrl+C.']
      : [
          `The simulated clock runs ${speed}x real time (--speed ${speed}): a pass every simulated minute, every ${every} s here.`,
          `Times in ECS and in the statuses run ${speed > 1 ? 'ahead of' : 'behind'} this computer's clock, further each minute; ecsr get`,
          'shows the last pass. --speed 1 keeps the clocks together. Stop with Ctrl+C.',
        ];
  const env = Object.entries({ ...reconcilerEnv, ...stack.env }).map(([k, v]) => `${k}=${v}`).join(' ');
  const shop = stack.clusters.includes('shop') ? 'shop' : (stack.clusters.find((c) => c !== web.cluster) ?? web.cluster);
  return [
    `DynamoDB (dynalite): ${stack.db.endpoint}   table ${stack.table}`,
    `ECS (simulator):     ${stack.sim.endpoint}   clusters ${stack.clusters.join(', ')}`,
    ...(stack.events ? [`SQS (events queue):  ${stack.events.queueUrl}   fed by the construct's rules from the simulator's events`] : []),
    '',
    'Point ecsr, the AWS CLI and the SDK at them (another terminal; the reconciler variables make',
    'ecsr plan / diff / reconcile plan as the local passes do):',
    `  export ${env}`,
    '  npm run ecsr -- get',
    '  npm run ecsr -- plan',
    `  npm run ecsr -- apply -f ${web.file} --wait    # creates ${web.cluster}/${web.service} in the empty cluster ${web.cluster}`,
    `  aws ecs list-services --cluster ${shop}`,
    `  curl -s -X POST ${stack.sim.endpoint}/_sim/stop-service-tasks -d '{"cluster": "${shop}", "service": "web"}'`,
    '',
    ...clock,
    '',
  ].join('\n');
}

/**
 * Runs `start`, turning a server that cannot listen into the one sentence `ecsr sim` gives, naming
 * this command's option (`--ecs-port`, `--dynamodb-port`).
 */
async function listening<T>(ecsPort: number, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (err) {
    if (err instanceof SimulatorListenError && err.cause) throw new CliError(listenMessage(err.cause as NodeJS.ErrnoException, '127.0.0.1', ecsPort, '--ecs-port'));
    if (err instanceof ListenError) throw new CliError(err.message);
    throw err;
  }
}

/** Ctrl+C pressed twice this long apart (real ms) or more stops at once, even in the middle of shutting down. */
const SECOND_INTERRUPT_MS = 2000;

/**
 * Turns Ctrl+C into `stop()` for the whole run: SIGINT and SIGTERM stay handled until the action
 * ends, so a copy of the same Ctrl+C relayed by npm or tsx, or a log-update cursor hook (which
 * re-raises a signal nobody else handles), cannot kill the process half-way through shutting down.
 * A second interrupt at least {@link SECOND_INTERRUPT_MS} after the first exits at once with 130.
 *
 * With `asKey` and a terminal on stdin, Ctrl+C is also read as a key (raw mode) rather than raised
 * as a signal: the terminal would send SIGINT to the whole foreground process group, and under
 * `npm start` the script shell (dash) dies of it, so npm would end with 130 however cleanly ecsr
 * stopped. Raw mode leaves output as it is (libuv keeps newline translation) and is undone when
 * the action ends or the process exits.
 * @returns a function that removes the handlers and restores the terminal.
 */
function interruptHandling(stop: () => void, asKey: boolean): () => void {
  let firstAt: number | undefined;
  const onSignal = () => {
    const now = Date.now();
    if (firstAt !== undefined && now - firstAt >= SECOND_INTERRUPT_MS) process.exit(130);
    firstAt ??= now;
    stop();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const stdin = process.stdin;
  const raw = asKey && stdin.isTTY === true && typeof stdin.setRawMode === 'function';
  const onKey = (data: Buffer) => {
    if (data.includes(0x03)) onSignal();
  };
  const restoreTerminal = () => {
    if (!raw) return;
    stdin.off('data', onKey);
    stdin.setRawMode(false);
    stdin.pause();
  };
  if (raw) {
    stdin.setRawMode(true);
    stdin.on('data', onKey);
    stdin.resume();
    process.once('exit', restoreTerminal);
  }
  return () => {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    process.removeListener('exit', restoreTerminal);
    restoreTerminal();
  };
}

/** Options of the scripted run that the fan-out (`--targets N`) does not use; given with it, they are refused. */
const FAN_OUT_IGNORES = [
  { key: 'speed', flag: '--speed' },
  { key: 'forever', flag: '--forever' },
  { key: 'plain', flag: '--plain' },
  { key: 'report', flag: '--report' },
  { key: 'ecsPort', flag: '--ecs-port' },
  { key: 'dynamodbPort', flag: '--dynamodb-port' },
  { key: 'sqsPort', flag: '--sqs-port' },
  { key: 'table', flag: '--table' },
] as const;

/**
 * Refuses `--targets` outside 1..20 and, with the fan-out, the options it would ignore.
 * @throws CliError naming them.
 */
function checkFanOutOptions(opts: LocalOptions, cmd: Command): void {
  if (opts.targets === 1) return;
  if (opts.targets < 2 || opts.targets > 20) throw new CliError(`--targets must be from 1 to 20, got ${opts.targets}.`, 2);
  // The fan-out has its own clock, servers and table and no live view or report: refuse what it would ignore.
  const ignored = FAN_OUT_IGNORES.filter((o) => cmd.getOptionValueSource(o.key) === 'cli').map((o) => o.flag);
  if (ignored.length > 0) {
    throw new CliError(
      `${ignored.join(', ')} cannot be used with --targets: the fan-out runs its own simulated clock, free ports, table and plain output, without a report (it takes --specs, --seed and --no-events).`,
    );
  }
}

/**
 * Writes the page `html()` to `--report` (nothing without it).
 * @throws CliError saying why the file could not be written.
 */
function writePage(file: string | undefined, html: () => string): void {
  if (file === undefined) return;
  try {
    writeReportFile(file, html());
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'its directory does not exist' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : code === 'EISDIR' ? 'it is a directory' : err instanceof Error ? err.message : String(err);
    throw new CliError(`The report could not be written to ${file}: ${why}.`, 1, [], { cause: err });
  }
}

/** What the run prints once its servers listen: the `--forever` banner, or the scenario's one line. */
function readyLine(opts: LocalOptions, loaded: number, web: { cluster: string; service: string } | undefined, stack: LocalStack, reconcilerEnv: Readonly<Record<string, string>>): string {
  if (web) return foreverBanner(stack, reconcilerEnv, { file: shown(WEB_EXAMPLE), ...web }, opts.speed);
  const seconds = Math.round(((LAST_PASS_MINUTE * 60) / opts.speed) * 10) / 10;
  return (
    `ecsr local: ${loaded} specs from ${shown(opts.specs)} in table ${stack.table} (dynalite ${stack.db.endpoint}), ` +
    `ECS simulator ${stack.sim.endpoint}; ${stack.events ? `events mode (queue ${stack.events.queueUrl})` : 'polling (--no-events)'}; ` +
    `${LAST_PASS_MINUTE + 1} passes, one per simulated minute, at ${opts.speed}x (about ${seconds} s).\n`
  );
}

/**
 * The scripted run (or `--forever`): the live or plain view, the report, Ctrl+C, and the verdict.
 * @throws CliError with exit code 130 when interrupted, 1 when an expectation did not hold.
 */
async function runScripted(opts: LocalOptions, loaded: ReturnType<typeof loadSpecFiles>): Promise<void> {
  // --forever also creates the cluster of examples/web.yaml, so the banner's apply works as printed.
  const web = opts.forever ? loadSpecFiles([WEB_EXAMPLE], 'the local run did not start')[0] : undefined;
  // A terminal that reports no size (some pseudo-terminals) cannot be redrawn in place.
  const live = Boolean(process.stdout.isTTY) && (process.stdout.rows ?? 0) > 0 && !opts.plain;
  const view = live ? new LiveView(process.stdout) : new PlainView((t) => process.stdout.write(t));
  const reportInfo: LocalReportInfo = { forever: opts.forever === true, seed: opts.seed, speed: opts.speed, specs: shown(opts.specs) };
  const report = (timeline: RunTimeline, more: Partial<LocalReportInfo>) => writePage(opts.report, () => localRunReport(timeline, { ...reportInfo, ...more }));
  // A page that cannot be written fails now, not after the run.
  writePage(opts.report, () => '<!doctype html><html lang="en"><meta charset="utf-8"><title>ecsr local</title><p>The run has not made its first pass yet.</p></html>\n');
  const controller = new AbortController();
  const release = interruptHandling(() => controller.abort(), opts.forever === true);
  try {
    const result = await listening(opts.ecsPort, () =>
      runLocal({
        specs: loaded.map((s) => ({ spec: s.spec, hash: s.hash })),
        speed: opts.speed,
        forever: opts.forever,
        width: terminalWidth(),
        view,
        write: (t) => process.stdout.write(t),
        seed: opts.seed,
        ecsPort: opts.ecsPort,
        dynamodbPort: opts.dynamodbPort,
        sqsPort: opts.sqsPort,
        events: opts.events,
        specsTable: opts.table,
        vpc: { subnets: opts.subnet, securityGroups: opts.securityGroup },
        ...(web ? { extraClusters: [web.key.cluster] } : {}),
        signal: controller.signal,
        ...(opts.forever && opts.report !== undefined ? { onPass: (timeline: RunTimeline) => report(timeline, { running: true }) } : {}),
        onReady: (stack, reconcilerEnv) => process.stdout.write(readyLine(opts, loaded.length, web?.key, stack, reconcilerEnv)),
      }),
    );
    process.stdout.write(`\n${result.summary}`);
    report(result.timeline, { expectations: result.expectations, aborted: result.aborted });
    if (opts.report !== undefined) process.stdout.write(`Report written to ${opts.report}\n`);
    if (result.aborted) throw new CliError('Interrupted before the scenario ended; no verdict.', 130);
    if (!result.ok) {
      const failed = result.expectations.filter((e) => !e.ok);
      throw new CliError(`The scenario failed: ${failed.length} expectation${failed.length === 1 ? '' : 's'} did not hold.`, 1, failed.map((e) => `${e.description}: ${e.detail}`));
    }
  } finally {
    release();
  }
}

export function localCommand(): Command {
  return new Command('local')
    .description('Run the reconciler against a simulated Fargate cluster and embedded DynamoDB, with a scripted scenario (npm start)')
    .addOption(
      new Option('-s, --speed <factor>', 'simulated seconds per real second').argParser(parsePositive).default(DEFAULT_SPEED, `${DEFAULT_SPEED}: the scenario in about a minute`),
    )
    .option('--forever', 'no scenario: keep the servers and the loop running until Ctrl+C, and print their endpoints')
    .addOption(new Option('--specs <path>', 'YAML file or directory of specs to load').default(SHOP_EXAMPLE, 'examples/shop.yaml of this checkout'))
    .option('--seed <n>', 'seed of the simulator (task timings, ids): the same seed tells the same story', parseInteger, 1)
    .option('--plain', 'plain timestamped lines even on a terminal')
    .option('--ecs-port <port>', 'port of the ECS simulator (0 picks a free one)', parsePort, 0)
    .option('--dynamodb-port <port>', 'port of dynalite (0 picks a free one)', parsePort, 0)
    .option('--sqs-port <port>', 'port of the local SQS server of the events queue (0 picks a free one)', parsePort, 0)
    .option('--no-events', "no events mode: every pass polls the whole fleet (the floor events mode falls back to), instead of reading the simulator's events through the construct's rules and the events queue")
    .option('--table <name>', 'name of the embedded specs table (point ecsr --table at it with --forever)', 'ecsr-specs')
    .option('--report <file>', 'write a picture of the run to this HTML page (self-contained): per service, tasks over time with actions, drift, failures and alarms marked; with --forever rewritten after each pass')
    .option('--targets <n>', 'the fan-out (docs/multi-account.md): reconcile the specs in n simulated accounts, each its own target, one invocation per target per minute (no scenario)', parseInteger, 1)
    .option('--subnet <id>', "a subnet that exists in the simulated account besides the examples' (repeatable): ECS refuses a spec naming any other", collect, [])
    .option('--security-group <id>', "a security group that exists besides the examples' (repeatable)", collect, [])
    .option('--debug', 'print stack traces of errors')
    .action(
      runAction(async (opts: LocalOptions, cmd: Command) => {
        checkFanOutOptions(opts, cmd);
        const loaded = loadSpecFiles([opts.specs], 'the local run did not start');
        if (opts.targets === 1) return runScripted(opts, loaded);
        const result = await runLocalFanOut({ specs: loaded, targets: opts.targets, seed: opts.seed, events: opts.events, write: (t) => process.stdout.write(t) });
        if (!result.ok) throw new CliError(`The fan-out did not converge every account in ${result.minutes} simulated minutes.`, 1);
      }),
    );
}

#!/usr/bin/env node
/**
 * `ecsr`, the command line of ecs-reconciler. Each command lives in `bin/commands/<name>.ts` and
 * exports a function returning a commander `Command`; add it to {@link COMMANDS} below.
 *
 * From a checkout: `npm run ecsr -- <command> ...` (e.g. `npm run ecsr -- get`), or `npm start`
 * for `ecsr local`. Every command that talks to AWS uses the SDK's standard configuration
 * (profile, region, `AWS_ENDPOINT_URL*`). Every error, commander's usage errors included, is
 * `ecsr <command>: <one sentence>` on stderr and a non-zero exit code (`--debug` adds the stack
 * trace). When the reader of stdout or stderr goes away (`ecsr export | head -2`), the process ends
 * quietly.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { applyCommand } from './commands/apply';
import { deleteCommand } from './commands/delete';
import { diffCommand } from './commands/diff';
import { exportCommand } from './commands/export';
import { getCommand } from './commands/get';
import { localCommand } from './commands/local';
import { planCommand } from './commands/plan';
import { reconcileCommand } from './commands/reconcile';
import { setCommand } from './commands/set';
import { simCommand } from './commands/sim';
import { describeError, EXIT } from './commands/support/errors';
import { configureUsageErrors } from './commands/support/usage-errors';
import { validateCommand } from './commands/validate';
import { waitCommand } from './commands/wait';

/** Every command of the CLI, in help order. */
const COMMANDS: (() => Command)[] = [
  applyCommand,
  validateCommand,
  getCommand,
  setCommand,
  diffCommand,
  planCommand,
  deleteCommand,
  waitCommand,
  exportCommand,
  reconcileCommand,
  localCommand,
  simCommand,
];

/** The `version` of package.json (what `ecsr --version` prints). */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : 'unknown';
}

/** The program with every command; usage errors throw a `CommanderError` (see `configureUsageErrors`). */
export function buildProgram(): Command {
  const program = new Command('ecsr')
    .description('ecs-reconciler: a level-triggered reconciler for Amazon ECS on Fargate')
    .version(packageVersion(), '-V, --version', 'print the version of ecsr');
  for (const make of COMMANDS) program.addCommand(make());
  return configureUsageErrors(program);
}

/**
 * Ends the process quietly when the reader of `stream` goes away (EPIPE: `ecsr export | head -2`,
 * `ecsr local | head`), as command line tools do: exit code 0, or the failure code the command had
 * already set. Other stream errors are thrown as before.
 */
function exitQuietlyOnBrokenPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    process.exit(typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok);
  });
}

// The SDK's notice about future Node.js versions is not about anything a CLI user did; the
// variable is left alone when set.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

exitQuietlyOnBrokenPipe(process.stdout);
exitQuietlyOnBrokenPipe(process.stderr);

const program = buildProgram();
let running = 'ecsr';
program.hook('preAction', (_program, action) => {
  running = `ecsr ${action.name()}`;
});
try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    // A usage error, already printed by configureUsageErrors; or --help / --version (exit code 0).
    process.exitCode = err.exitCode;
  } else {
    // Commands report their own errors; this catches what escapes them (a bug).
    process.stderr.write(`${running}: ${describeError(err)}\n`);
    if (process.argv.includes('--debug')) process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exitCode = EXIT.failed;
  }
}

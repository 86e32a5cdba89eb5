#!/usr/bin/env node
/**
 * `ecsr`, the command line of ecs-reconciler. Each command lives in `bin/commands/<name>.ts` and
 * exports a function returning a commander `Command`; add it to {@link COMMANDS} below.
 *
 * From a checkout: `npm run ecsr -- <command> ...` (e.g. `npm run ecsr -- get`), or `npm start`
 * for `ecsr local`. Every command that talks to AWS uses the SDK's standard configuration
 * (profile, region, `AWS_ENDPOINT_URL*`); errors are one sentence and a non-zero exit code
 * (`--debug` adds the stack trace).
 */
import { Command } from 'commander';
import { applyCommand } from './commands/apply';
import { deleteCommand } from './commands/delete';
import { diffCommand } from './commands/diff';
import { exportCommand } from './commands/export';
import { getCommand } from './commands/get';
import { localCommand } from './commands/local';
import { planCommand } from './commands/plan';
import { reconcileCommand } from './commands/reconcile';
import { simCommand } from './commands/sim';
import { describeError } from './commands/support/errors';

/** Every command of the CLI, in help order. */
const COMMANDS: (() => Command)[] = [
  applyCommand,
  getCommand,
  diffCommand,
  planCommand,
  deleteCommand,
  exportCommand,
  reconcileCommand,
  localCommand,
  simCommand,
];

export function buildProgram(): Command {
  const program = new Command('ecsr')
    .description('ecs-reconciler: a level-triggered reconciler for Amazon ECS on Fargate')
    .showHelpAfterError();
  for (const make of COMMANDS) program.addCommand(make());
  return program;
}

// The SDK's notice about future Node.js versions is not about anything a CLI user did; the
// variable is left alone when set.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

try {
  await buildProgram().parseAsync(process.argv);
} catch (err) {
  // Commands report their own errors; this catches what escapes them (a bug).
  process.stderr.write(`ecsr: ${describeError(err)}\n`);
  if (process.argv.includes('--debug')) process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exitCode = 1;
}

/**
 * The program of `ecsr`: its commands (each in `bin/commands/<name>.ts`, exporting a function that
 * returns a commander `Command`; add it to {@link COMMANDS} below) and {@link main}, which runs one
 * command line. bin/ecsr.ts is the process around it (the executable's entry); the tests call
 * {@link main} in their own process as well.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { addExamples } from './commands/support/examples';
import { EXIT } from './commands/support/exit-codes';
import { configureUsageErrors } from './commands/support/usage-errors';

/**
 * Every command of the CLI, in help order, by name: how to load it. A command's module (and what
 * it imports: the SDK, zod, the simulator...) is loaded only when that command runs, or for the
 * whole program's help and "did you mean": `ecsr --version` loads none (see {@link commandsFor}).
 */
const COMMANDS = new Map<string, () => Promise<() => Command>>([
  ['apply', async () => (await import('./commands/apply')).applyCommand],
  ['validate', async () => (await import('./commands/validate')).validateCommand],
  ['verify', async () => (await import('./commands/verify')).verifyCommand],
  ['get', async () => (await import('./commands/get')).getCommand],
  ['describe', async () => (await import('./commands/describe')).describeCommand],
  ['set', async () => (await import('./commands/set')).setCommand],
  ['scale', async () => (await import('./commands/scale')).scaleCommand],
  ['restart', async () => (await import('./commands/restart')).restartCommand],
  ['diff', async () => (await import('./commands/diff')).diffCommand],
  ['plan', async () => (await import('./commands/plan')).planCommand],
  ['delete', async () => (await import('./commands/delete')).deleteCommand],
  ['purge', async () => (await import('./commands/purge')).purgeCommand],
  ['history', async () => (await import('./commands/history')).historyCommand],
  ['rollback', async () => (await import('./commands/rollback')).rollbackCommand],
  ['logs', async () => (await import('./commands/logs')).logsCommand],
  ['wait', async () => (await import('./commands/wait')).waitCommand],
  ['ui', async () => (await import('./commands/ui')).uiCommand],
  ['continue', async () => (await import('./commands/continue')).continueCommand],
  ['abort', async () => (await import('./commands/abort')).abortCommand],
  ['export', async () => (await import('./commands/export')).exportCommand],
  ['import', async () => (await import('./commands/import')).importCommand],
  ['reconcile', async () => (await import('./commands/reconcile')).reconcileCommand],
  ['prune', async () => (await import('./commands/prune')).pruneCommand],
  ['local', async () => (await import('./commands/local')).localCommand],
  ['sim', async () => (await import('./commands/sim')).simCommand],
]);

/**
 * The commands `args` (the arguments after `ecsr`) needs: the one it names; none for
 * `--version` alone; every one otherwise (no command, `help`, an unknown name to suggest from).
 */
export function commandsFor(args: readonly string[]): string[] {
  const named = args.find((a) => !a.startsWith('-'));
  if (named !== undefined && COMMANDS.has(named)) return [named];
  // `completion` and `complete` (see addCompletion) need every command: the default below.
  if (named === undefined && args.length > 0 && args.every((a) => a === '-V' || a === '--version')) return [];
  return [...COMMANDS.keys()];
}

/** The subcommands of the commands that have some: the shared options go after them. */
const SUBCOMMANDS = new Map<string, readonly string[]>([['set', ['image']]]);

/** Options every command that talks to AWS takes, with a value; `--debug` takes none. */
const SHARED_OPTIONS_WITH_VALUE = new Set(['--endpoint-url', '--region', '--profile', '--table', '--target']);

/**
 * `args` (after `ecsr`) with the shared options written before the command name moved after it:
 * `ecsr --endpoint-url URL get` as `ecsr get --endpoint-url URL`, since AWS CLI users write
 * `aws --endpoint-url URL ecs ...` (`--opt=value` too). Anything else is left as it is.
 */
export function hoistSharedOptions(args: readonly string[]): string[] {
  const moved: string[] = [];
  let i = 0;
  while (i < args.length) {
    const a = args[i];
    const name = a.split('=')[0];
    if (SHARED_OPTIONS_WITH_VALUE.has(name) && a.includes('=')) {
      moved.push(a);
      i += 1;
    } else if (SHARED_OPTIONS_WITH_VALUE.has(a) && i + 1 < args.length) {
      moved.push(a, args[i + 1]);
      i += 2;
    } else if (a === '--debug') {
      moved.push(a);
      i += 1;
    } else {
      break;
    }
  }
  const command = args[i];
  if (moved.length === 0 || command === undefined || !COMMANDS.has(command)) return [...args];
  // A command with subcommands takes the options after the subcommand (`set image`).
  const sub = args[i + 1];
  if (sub !== undefined && (SUBCOMMANDS.get(command) ?? []).includes(sub)) return [command, sub, ...moved, ...args.slice(i + 2)];
  return [command, ...moved, ...args.slice(i + 1)];
}

/** The `version` of package.json (what `ecsr --version` prints). */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : 'unknown';
}

/**
 * Adds `completion <shell>` (a bash, zsh, fish or PowerShell script that completes commands,
 * options and option choices) and the hidden `complete -- <words>` the script calls, from the
 * commander tree by @bomb.sh/tab's commander adapter.
 */
async function addCompletion(program: Command): Promise<void> {
  const { default: tab } = await import('@bomb.sh/tab/commander');
  tab(program, { completionCommandName: 'completion' });
  const completion = program.commands.find((c) => c.name() === 'completion');
  completion?.description('Print a shell completion script (bash, zsh, fish, powershell)');
}

/**
 * The program with the commands `names` (default: every one); usage errors throw a
 * `CommanderError` (see `configureUsageErrors`).
 */
export async function buildProgram(names: readonly string[] = [...COMMANDS.keys()]): Promise<Command> {
  const program = new Command('ecsr')
    .description('ecs-reconciler: a level-triggered reconciler for Amazon ECS on Fargate')
    .version(packageVersion(), '-V, --version', 'print the version of ecsr');
  const makers = await Promise.all(
    names.map((name) => {
      const load = COMMANDS.get(name);
      if (load === undefined) throw new Error(`no command ${name}`);
      return load();
    }),
  );
  for (const make of makers) program.addCommand(make());
  // Completion walks the whole tree, so it exists only where every command is loaded.
  if (names.length === COMMANDS.size) await addCompletion(program);
  addExamples(program);
  return configureUsageErrors(program);
}

/**
 * Runs one command line, `args` being the arguments after `ecsr` (`['get', '--table', 'specs']`),
 * and resolves with its exit code (see bin/commands/support/exit-codes.ts): 0, a command's own
 * failure code, commander's for a usage error (already printed as one sentence), or 1 for an error
 * that escaped a command (a bug), printed as `ecsr <command>: <sentence>` (`--debug` adds the stack).
 * Commands write to `process.stdout` / `process.stderr` and read the SDK's configuration from
 * `process.env`, as a CLI does; `process.exitCode` is left as it was.
 */
export async function main(args: readonly string[]): Promise<number> {
  const hoisted = hoistSharedOptions(args);
  const program = await buildProgram(commandsFor(hoisted));
  let running = 'ecsr';
  program.hook('preAction', (_program, action) => {
    running = `ecsr ${action.name()}`;
  });
  const before = process.exitCode;
  process.exitCode = undefined;
  try {
    await program.parseAsync(hoisted, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (err) {
    // A usage error, already printed by configureUsageErrors; or --help / --version (exit code 0).
    if (err instanceof CommanderError) return err.exitCode;
    // Commands report their own errors; this catches what escapes them (a bug).
    const { describeError } = await import('./commands/support/errors');
    process.stderr.write(`${running}: ${describeError(err)}\n`);
    if (hoisted.includes('--debug')) process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    return EXIT.failed;
  } finally {
    process.exitCode = before;
  }
}

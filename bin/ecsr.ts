#!/usr/bin/env node
/**
 * `ecsr`, the command line of ecs-reconciler. Each command lives in `bin/commands/<name>.ts` and
 * exports a function returning a commander `Command`; add it to {@link COMMANDS} below.
 *
 * Built with esbuild into `dist/` (scripts/build-cli.mjs; `npm ci` builds it, and `bin/ecsr.js`
 * rebuilds it when a source changed). From a checkout: `npx ecsr <command> ...`,
 * `npm run ecsr -- <command> ...`, or `npm start` for `ecsr local`. Every command that talks to AWS uses the SDK's standard configuration
 * (profile, region, `AWS_ENDPOINT_URL*`). Every error, commander's usage errors included, is
 * `ecsr <command>: <one sentence>` on stderr and a non-zero exit code (`--debug` adds the stack
 * trace). When the reader of stdout or stderr goes away (`ecsr export | head -2`), the process ends
 * quietly.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
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
  ['diff', async () => (await import('./commands/diff')).diffCommand],
  ['plan', async () => (await import('./commands/plan')).planCommand],
  ['delete', async () => (await import('./commands/delete')).deleteCommand],
  ['wait', async () => (await import('./commands/wait')).waitCommand],
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

const args = hoistSharedOptions(process.argv.slice(2));
const program = await buildProgram(commandsFor(args));
let running = 'ecsr';
program.hook('preAction', (_program, action) => {
  running = `ecsr ${action.name()}`;
});
try {
  await program.parseAsync([...process.argv.slice(0, 2), ...args]);
} catch (err) {
  if (err instanceof CommanderError) {
    // A usage error, already printed by configureUsageErrors; or --help / --version (exit code 0).
    process.exitCode = err.exitCode;
  } else {
    // Commands report their own errors; this catches what escapes them (a bug).
    const { describeError } = await import('./commands/support/errors');
    process.stderr.write(`${running}: ${describeError(err)}\n`);
    if (process.argv.includes('--debug')) process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exitCode = EXIT.failed;
  }
}

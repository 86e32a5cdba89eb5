/**
 * Commander's own usage errors (unknown command or option, missing or invalid argument) in the
 * form of every other `ecsr` error: `ecsr <command>: <one sentence>` on stderr, then a hint to
 * the command's help, exit code 1. Commander is told to throw instead of exiting
 * (`exitOverride`), so `bin/ecsr.ts` sets the exit code and the process ends normally.
 */
import { Command } from 'commander';

function upperFirst(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

function withoutPeriod(text: string): string {
  return text.trim().replace(/\.$/, '');
}

/** `-o, --output <format>` -> `--output`; `--timeout <duration>` -> `--timeout`. */
function flagOf(usage: string): string {
  return /--[\w-]+/.exec(usage)?.[0] ?? usage.split(/[ ,]/)[0];
}

/** The reason of an invalid value, naming the value when the reason does not already. */
function invalid(what: string, value: string, reason: string): string {
  const why = withoutPeriod(reason);
  if (why === '') return `Invalid ${what} '${value}'`;
  const named = why.includes(`"${value}"`) || why.includes(`'${value}'`);
  return named ? `Invalid ${what}: ${why}` : `Invalid ${what} '${value}': ${lowerFirst(why)}`;
}

/**
 * One sentence for a commander error message, e.g.
 * - `error: unknown option '--tabel'\n(Did you mean --table?)` -> `Unknown option '--tabel' (did you mean --table?).`
 * - `error: option '--timeout <duration>' argument '10x' is invalid. "10x" is not a duration; use e.g. 90s.`
 *   -> `Invalid --timeout: "10x" is not a duration; use e.g. 90s.`
 * - `error: command-argument value 'api' is invalid for argument 'cluster/service'. "api" is not CLUSTER/SERVICE.`
 *   -> `Invalid cluster/service: "api" is not CLUSTER/SERVICE.`
 * - `error: too many arguments for 'get'. Expected 1 argument but got 2.` -> `Too many arguments for 'get'; expected 1 argument but got 2.`
 */
export function usageSentence(message: string): string {
  let text = message.trim().replace(/^error:\s*/i, '');
  let suggestion = '';
  const hint = /\n\s*\(([^)]*)\)\s*$/.exec(text);
  if (hint) {
    suggestion = ` (${lowerFirst(hint[1])})`;
    text = text.slice(0, hint.index).trim();
  }
  const option = /^option '([^']+)' argument '([\s\S]*)' is invalid\.\s*([\s\S]*)$/.exec(text);
  const argument = /^command-argument value '([\s\S]*)' is invalid for argument '([^']+)'\.\s*([\s\S]*)$/.exec(text);
  if (option) text = invalid(flagOf(option[1]), option[2], option[3]);
  else if (argument) text = invalid(argument[2], argument[1], argument[3]);
  // Commander's second sentences ("... for 'get'. Expected 1 argument") join the first.
  text = withoutPeriod(text.replace(/\s*\n\s*/g, ' ')).replace(/\.\s+([A-Z])(?=[a-z])/g, (_, c: string) => `; ${c.toLowerCase()}`);
  return `${upperFirst(text)}${suggestion}.`;
}

/** `ecsr` for the program, `ecsr apply` for a command (`ecsr sim` ...). */
export function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/**
 * Makes `cmd` and its subcommands print commander's usage errors as `<command path>: <sentence>`
 * followed by `(see <command path> --help)`, and throw a `CommanderError` (exit code 1; 0 for
 * `--help` and `--version`) instead of calling `process.exit`.
 */
export function configureUsageErrors(cmd: Command): Command {
  const path = commandPath(cmd);
  cmd
    .configureOutput({ outputError: (text, write) => write(`${path}: ${usageSentence(text)}\n`) })
    .showHelpAfterError(`(see ${path} --help)`)
    .exitOverride();
  for (const sub of cmd.commands) configureUsageErrors(sub);
  return cmd;
}

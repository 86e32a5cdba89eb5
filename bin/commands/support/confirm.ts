/**
 * Asking before a destructive write (`ecsr delete`, `ecsr purge`): on a terminal the question and
 * a `y/N` answer; without one, a refusal that names `--yes`, since a script that meant to delete
 * says so and one that did not must not delete by accident.
 */
import { createInterface } from 'node:readline/promises';
import { CliError } from './errors';

/** Where the question is asked: the process's stdin and stderr unless a test gives its own. */
export interface Prompt {
  readonly input: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly output: NodeJS.WritableStream;
}

/**
 * Whether the person answered yes (`y` or `yes`, any case) to `question` (printed followed by
 * ` [y/N] `); an empty answer, anything else or the end of input is no.
 */
export async function askYes(question: string, prompt: Prompt): Promise<boolean> {
  const rl = createInterface({ input: prompt.input, output: prompt.output, terminal: false });
  try {
    prompt.output.write(`${question} [y/N] `);
    const answer = await new Promise<string>((resolve) => {
      rl.once('line', resolve);
      rl.once('close', () => resolve(''));
    });
    return /^\s*y(es)?\s*$/i.test(answer);
  } finally {
    rl.close();
  }
}

/**
 * Asks `question` unless `yes`, and resolves when the write may go ahead.
 * @param what what `--yes` would do, for the refusal (`mark shop/api absent`).
 * @throws CliError when stdin is not a terminal and `yes` is not given, or the answer is not yes;
 *   nothing was written either way.
 */
export async function confirmOrRefuse(question: string, what: string, opts: { yes?: boolean; prompt?: Prompt }): Promise<void> {
  if (opts.yes) return;
  const prompt = opts.prompt ?? { input: process.stdin, output: process.stderr };
  if (prompt.input.isTTY !== true) {
    throw new CliError(`stdin is not a terminal, so nothing was asked and nothing was written: pass --yes to ${what} (--dry-run shows what it would do).`);
  }
  if (!(await askYes(question, prompt))) throw new CliError('Not confirmed; nothing was written.');
}

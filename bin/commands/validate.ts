/**
 * `ecsr validate -f FILE`: checks YAML specs offline, with the rules `ecsr apply` and the
 * reconciler use (`parseSpecItem`), and writes nothing. No table, no AWS configuration and no
 * network are needed, so it fits an editor, a pre-commit hook or a CI step before `apply`.
 */
import { Command } from 'commander';
import { CliError } from './support/errors';
import { collect, runAction } from './support/options';
import { readSpecFiles } from './support/spec-file';

interface ValidateOptions {
  file: string[];
  debug?: boolean;
}

/**
 * What `ecsr validate` prints on stdout for what {@link readSpecFiles} found: one line per problem
 * (`file:line: cluster/service: path: message`), or `N specs valid` when there is none.
 */
export function validationReport(found: { specs: readonly unknown[]; problems: readonly string[] }): string {
  if (found.problems.length > 0) return found.problems.map((p) => `${p}\n`).join('');
  const n = found.specs.length;
  return `${n} spec${n === 1 ? '' : 's'} valid\n`;
}

export function validateCommand(): Command {
  return new Command('validate')
    .description('Check YAML specs offline with the rules of apply and the reconciler (no table, no AWS calls)')
    .requiredOption('-f, --file <path>', 'YAML file or directory of *.yaml, or - for stdin (repeatable)', collect)
    .option('--debug', 'print stack traces of errors')
    .action(
      runAction(async (opts: ValidateOptions) => {
        const found = readSpecFiles(opts.file);
        if (found.problems.length === 0 && found.specs.length === 0) throw new CliError(`${opts.file.join(', ')} holds no spec.`);
        process.stdout.write(validationReport(found));
        const n = found.problems.length;
        if (n > 0) throw new CliError(`${n} problem${n === 1 ? '' : 's'} in the spec file${found.files === 1 ? '' : 's'}.`);
      }),
    );
}

/**
 * `ecsr completion` and the Examples of `--help`: every command (and subcommand) of the program
 * has examples, every option an example uses is one its command has, the examples are printed at
 * the end of `--help`, and the completion script and the completions it asks the CLI for come from
 * the same commander tree (commands, options, option choices).
 */
import { describe, expect, it } from 'vitest';
import type { Command } from 'commander';
import { buildProgram } from '../../bin/main';
import { commandPath, EXAMPLES } from '../../bin/commands/support/examples';
import { ecsr } from './run-cli';

/** Every command below the program, depth first. */
function commandsOf(cmd: Command): Command[] {
  return cmd.commands.flatMap((c) => [c, ...commandsOf(c)]);
}

/** The option words (`--wait`, `-o`) of one example line: not a redirection's file, nothing after a pipe. */
function optionWords(line: string): string[] {
  const words = line.split('|')[0].split(/\s+/);
  return words.filter((w, i) => /^--?[a-zA-Z]/.test(w) && words[i - 1] !== '>' && words[i - 1] !== '<').map((w) => w.split('=')[0]);
}

describe('Examples in --help', () => {
  it('every command and subcommand has examples, and no example names a command that does not exist', async () => {
    // Arrange
    const program = await buildProgram();
    const paths = commandsOf(program).filter((c) => c.name() !== 'complete').map(commandPath);

    // Assess
    expect(paths.length).toBeGreaterThan(20);
    expect(paths.filter((p) => (EXAMPLES.get(p) ?? []).length === 0)).toEqual([]);
    expect([...EXAMPLES.keys()].filter((k) => !paths.includes(k))).toEqual([]);
  });

  it('each option an example uses is an option of its command (or a global one)', async () => {
    // Arrange
    const program = await buildProgram();
    const byPath = new Map(commandsOf(program).map((c) => [commandPath(c), c]));
    const unknown: string[] = [];

    // Act
    for (const [path, examples] of EXAMPLES) {
      const cmd = byPath.get(path);
      for (const e of examples) {
        const leaf = byPath.get(e.line.split(' ').slice(0, 2).join(' ')) ?? cmd;
        const flags = new Set([...(leaf?.options ?? []), ...program.options].flatMap((o) => [o.short, o.long]).filter((f): f is string => f !== undefined));
        for (const w of optionWords(e.line)) if (!flags.has(w)) unknown.push(`${e.line}: ${w}`);
      }
    }

    // Assess
    expect(unknown).toEqual([]);
  });

  it('ecsr get --help ends with its examples', async () => {
    // Act
    const r = await ecsr(['get', '--help']);

    // Assess
    expect(r.code).toBe(0);
    const at = r.stdout.indexOf('\nExamples:\n');
    expect(at).toBeGreaterThan(0);
    expect(r.stdout.slice(at)).toContain('  # the specs whose tags include team=payments\n  ecsr get -l team=payments\n');
    expect(r.stdout.slice(0, at)).toContain('-l, --selector <requirements>');
  });

  it('a subcommand has its own examples: ecsr set image --help', async () => {
    // Act
    const r = await ecsr(['set', 'image', '--help']);

    // Assess
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\nExamples:\n[\s\S]*ecsr set image shop\/web sidecar=/);
  });
});

describe('ecsr completion', () => {
  it.each(['bash', 'zsh'])('prints a %s script that asks ecsr complete for the words', async (shell) => {
    // Act
    const r = await ecsr(['completion', shell]);

    // Assess
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain(shell === 'bash' ? 'complete -F' : '#compdef ecsr');
    expect(r.stdout).toMatch(/ecsr[^\n]* complete --/);
  });

  it.each([
    { case: 'commands', words: [''], has: ['apply', 'get', 'delete', 'completion'], hasNot: ['complete'] },
    { case: 'options of a command', words: ['get', '--s'], has: ['--selector'], hasNot: ['--watch'] },
    { case: 'the choices of an option', words: ['get', '-o', ''], has: ['table', 'wide', 'json', 'yaml'], hasNot: [] },
    { case: 'subcommands', words: ['set', ''], has: ['image'], hasNot: ['get'] },
  ])('completes $case', async ({ words, has, hasNot }) => {
    // Act
    const r = await ecsr(['complete', '--', ...words]);

    // Assess
    expect(r.code).toBe(0);
    const offered = r.stdout.split('\n').filter((l) => l !== '' && !l.startsWith(':')).map((l) => l.split('\t')[0]);
    for (const w of has) expect(offered).toContain(w);
    for (const w of hasNot) expect(offered).not.toContain(w);
  });
});

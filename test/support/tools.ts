/**
 * Suites that need a tool outside Node.js (moto, the AWS CLI, cfn-lint, chromium) declare it:
 *
 *     import { needs, toolCommand } from '../support/tools';
 *     describe('ECS adapters against moto', needs('moto'), () => { ... });
 *     it('lints the template', needs('cfn-lint'), () => { ... });
 *     const browser = toolCommand('chromium'); // 'chromium', 'chromium-browser' or 'google-chrome'
 *
 * Where the tool is missing, those tests are skipped and the run ends with one line naming the
 * tools and their install command; with `CI=true` the test file fails instead (CI's machines have
 * every tool, so nothing CI checks may silently stop being checked). The tools are found once per
 * run in vitest.config.ts (`detectTools`, ./tools-setup.ts); a new tool is one entry in `TOOLS`
 * there, and its install step in .ci/run. See docs/DECISIONS.md, "Tests".
 */
import { existsSync, mkdtempSync, realpathSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { inject, type TestOptions } from 'vitest';
import { installCommand, isCi, TOOLS, type ToolName, type ToolsFound } from './tools-setup';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Set by vitest.config.ts: per tool, its command here or null. */
    tools: ToolsFound;
  }
}

/**
 * The command that runs `tool` here (argv[0] to spawn), or null when it is missing.
 * @throws Error when the run was not started through vitest.config.ts (no detection provided).
 */
export function toolCommand(tool: ToolName): string | null {
  const found = inject('tools');
  if (found === undefined) throw new Error('no tool detection in this run: start vitest with vitest.config.ts');
  return found[tool];
}

/**
 * The absolute path of the program that runs `tool` here (for a library that takes an executable
 * path, such as playwright-core's `executablePath`), or null when it is missing.
 */
export function toolPath(tool: ToolName): string | null {
  const command = toolCommand(tool);
  if (command === null) return null;
  const found = (process.env.PATH ?? '').split(delimiter).filter(Boolean).map((d) => join(d, command)).find((p) => existsSync(p));
  return found ?? null;
}

/**
 * Test options for a `describe` or `it` whose tests need `tools`: tagged with each tool's name,
 * and skipped when one is missing.
 * @throws Error with `CI=true` when one is missing: the file fails to load, naming the tool and
 *   its install command.
 */
export function needs(...tools: ToolName[]): TestOptions {
  const missing = tools.filter((t) => toolCommand(t) === null);
  if (missing.length > 0 && isCi()) {
    throw new Error(
      `CI is set and ${missing.map((t) => TOOLS[t].what).join(', ')} ${missing.length === 1 ? 'is' : 'are'} not on PATH: install with ${installCommand(missing)}`,
    );
  }
  return { skip: missing.length > 0, tags: tools };
}

/**
 * Whether `tool` is here, for a test that uses it for one optional step (a test that needs it
 * throughout uses {@link needs}, whose skips are reported).
 * @throws Error with `CI=true` when it is missing.
 */
export function has(tool: ToolName): boolean {
  return needs(tool).skip !== true;
}

/**
 * A `PATH` holding only `programs` (default: `node`), as on a machine with Node.js and nothing
 * else: a fresh directory of symbolic links to where they are on this `PATH`.
 * @throws Error when one of `programs` is not on this `PATH`.
 */
export function pathWithOnly(programs: readonly string[] = ['node']): string {
  const dir = mkdtempSync(join(tmpdir(), 'ecsr-path-'));
  for (const program of programs) {
    const from = (process.env.PATH ?? '').split(delimiter).map((d) => join(d, program)).find((p) => existsSync(p));
    if (from === undefined) throw new Error(`${program} is not on PATH`);
    symlinkSync(realpathSync(from), join(dir, program));
  }
  return dir;
}

/**
 * The outside tools some suites need (moto, the AWS CLI, cfn-lint, a browser), found once per
 * `vitest` run in the main process (vitest.config.ts), before any test file loads. Test files do
 * not import this module: they use `needs()` from ./tools.ts. Adding a tool is one entry in
 * {@link TOOLS}; .ci/run installs what is missing from here too:
 * `npx tsx test/support/tools-setup.ts --missing` prints one line per missing tool,
 * `name<TAB>pip argument<TAB>Debian package` (either may be empty).
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Reporter, TestModule } from 'vitest/node';

/** A tool a suite may need; also the vitest tag of the tests that need it. */
export type ToolName = 'moto' | 'aws' | 'cfn-lint' | 'chromium';

export interface ToolSpec {
  /** What it is, for the tag's description and the messages. */
  readonly what: string;
  /**
   * How it is found, cheaply (every vitest run pays for this): programs looked up on `PATH` in
   * order, the first found being what tests run; with `check`, a command that must also exit 0.
   */
  readonly programs: readonly string[];
  readonly check?: readonly string[];
  /** The argument of `pip install` that installs it, or... */
  readonly pip?: string;
  /** ...the Debian package that does. */
  readonly apt?: string;
}

/** Python modules `moto[server]` brings (found, not imported: importing moto takes seconds). */
const MOTO_SERVER_MODULES = ['moto', 'flask', 'flask_cors'];

export const TOOLS: Readonly<Record<ToolName, ToolSpec>> = {
  moto: {
    what: 'moto, an independent AWS emulator (python3 -m moto.server)',
    programs: ['python3'],
    check: ['python3', '-c', `import importlib.util as u, sys; sys.exit(0 if all(u.find_spec(m) for m in ${JSON.stringify(MOTO_SERVER_MODULES)}) else 1)`],
    pip: 'moto[server]',
  },
  aws: { what: 'the AWS CLI (aws)', programs: ['aws'], pip: 'awscli' },
  'cfn-lint': { what: 'the CloudFormation linter (cfn-lint)', programs: ['cfn-lint'], pip: 'cfn-lint' },
  chromium: { what: 'a headless browser (chromium)', programs: ['chromium', 'chromium-browser', 'google-chrome'], apt: 'chromium' },
};

export const TOOL_NAMES = Object.keys(TOOLS) as ToolName[];

/** Per tool, the command that runs it here (e.g. `chromium-browser`), or null when it is missing. */
export type ToolsFound = Record<ToolName, string | null>;

/** The first executable file named `program` in the directories of `path`. */
function onPath(program: string, path: string): string | null {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const file = join(dir, program);
    try {
      accessSync(file, constants.X_OK);
      if (statSync(file).isFile()) return file;
    } catch {
      // not here
    }
  }
  return null;
}

/** Whether a command exits 0 within `timeoutMs` (a missing program is `false`, never a throw). */
function runs(argv: readonly string[], timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: 'ignore' });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', () => resolve(false));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(code === 0);
    });
  });
}

/**
 * Finds every tool, in parallel, on this process's `PATH` (a few hundred milliseconds: programs are
 * looked up, not started, except moto's Python check).
 * @param timeoutMs per check.
 */
export async function detectTools(timeoutMs = 60_000): Promise<ToolsFound> {
  const path = process.env.PATH ?? '';
  const entries = await Promise.all(
    TOOL_NAMES.map(async (name): Promise<[ToolName, string | null]> => {
      const { programs, check } = TOOLS[name];
      const program = programs.find((p) => onPath(p, path) !== null) ?? null;
      if (program === null || (check !== undefined && !(await runs(check, timeoutMs)))) return [name, null];
      return [name, program];
    }),
  );
  return Object.fromEntries(entries) as ToolsFound;
}

/** Whether a missing tool is an error rather than a skip: `CI` set to anything but `false`/`0`. */
export function isCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const ci = env.CI?.trim().toLowerCase();
  return ci !== undefined && ci !== '' && ci !== 'false' && ci !== '0';
}

/** The commands that install `tools`: `pip install "moto[server]" awscli` and/or `apt-get install chromium`. */
export function installCommand(tools: readonly ToolName[]): string {
  const pip = tools.flatMap((t) => TOOLS[t].pip ?? []).map((p) => (/[[\]]/.test(p) ? `"${p}"` : p));
  const apt = tools.flatMap((t) => TOOLS[t].apt ?? []);
  return [pip.length > 0 ? `pip install ${pip.join(' ')}` : '', apt.length > 0 ? `apt-get install ${apt.join(' ')}` : ''].filter(Boolean).join(' and ');
}

/** Vitest tag definitions, one per tool (`npx vitest --tags-filter='!moto'` leaves those out). */
export const TOOL_TAGS = TOOL_NAMES.map((name) => ({ name, description: `needs ${TOOLS[name].what}` }));

/**
 * Prints one line after vitest's summary when tests were skipped for a missing tool: how many,
 * which tools, and the command that installs them. Prints nothing when nothing was skipped.
 */
export class MissingToolsReporter implements Reporter {
  constructor(private readonly found: ToolsFound) {}

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const missing = new Set(TOOL_NAMES.filter((t) => this.found[t] === null));
    const skippedFor = new Set<ToolName>();
    let skipped = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests('skipped')) {
        const why = test.tags.filter((t): t is ToolName => missing.has(t as ToolName));
        if (why.length === 0) continue;
        skipped += 1;
        for (const t of why) skippedFor.add(t);
      }
    }
    if (skipped === 0) return;
    const tools = TOOL_NAMES.filter((t) => skippedFor.has(t));
    process.stdout.write(
      `\nSkipped ${skipped} test${skipped === 1 ? '' : 's'} that need ${tools.map((t) => TOOLS[t].what).join(', ')}, not found on PATH; install with: ${installCommand(tools)}\n`,
    );
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href && process.argv[2] === '--missing') {
  const found = await detectTools();
  for (const name of TOOL_NAMES) if (found[name] === null) process.stdout.write(`${name}\t${TOOLS[name].pip ?? ''}\t${TOOLS[name].apt ?? ''}\n`);
}

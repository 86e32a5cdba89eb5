/**
 * The built CLI (scripts/build-cli.mjs): `npx ecsr` runs it after `npm ci` (whose `prepare` builds
 * it), `ecsr --version` loads commander and nothing else (no command, no SDK), and a changed or
 * deleted source makes `bin/ecsr.js` rebuild. Start-up time itself is measured in `npm run bench`
 * (bench/cli-startup.ts), never here.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isStale, METAFILE } from '../../scripts/build-cli.mjs';
import { baseEnv, collect, REPO } from './run-cli';

const NPX = process.platform === 'win32' ? 'npx.cmd' : 'npx';
const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string>; scripts: Record<string, string> };

interface Metafile {
  outputs: Record<string, { inputs: Record<string, unknown>; imports: { path: string; kind: string; external?: boolean }[] }>;
}

/** The inputs of `output` and of every output it imports statically (what loads before it runs). */
function staticInputs(meta: Metafile, output: string): string[] {
  const seen = new Set<string>();
  const inputs = new Set<string>();
  const visit = (out: string) => {
    if (seen.has(out)) return;
    seen.add(out);
    for (const input of Object.keys(meta.outputs[out].inputs)) inputs.add(input);
    for (const imp of meta.outputs[out].imports) if (!imp.external && imp.kind === 'import-statement') visit(imp.path);
  };
  visit(output);
  return [...inputs].sort();
}

describe('the built ecsr', () => {
  it('is what the package bin runs: npx ecsr --version prints the version of package.json', async () => {
    // Act
    const r = await collect(spawn(NPX, ['--no-install', 'ecsr', '--version'], { cwd: REPO, env: baseEnv() }), { timeoutMs: 120_000 });

    // Assess
    expect(pkg.bin.ecsr).toBe('bin/ecsr.js');
    expect(pkg.scripts.prepare).toContain('scripts/build-cli.mjs');
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(`${pkg.version}\n`);
    expect(r.code).toBe(0);
  });

  it('loads only commander, its own entry and the examples table before a command is chosen (each command is a chunk of its own)', () => {
    // Prepare: vitest.config.ts built dist/ for this run.
    const meta = JSON.parse(readFileSync(METAFILE, 'utf8')) as Metafile;

    // Act
    const inputs = staticInputs(meta, 'dist/ecsr.js');
    const dynamic = meta.outputs['dist/ecsr.js'].imports.filter((i) => i.kind === 'dynamic-import').length;

    // Assess
    expect(inputs.filter((i) => !/(^|\/)node_modules\/commander\//.test(i))).toEqual([
      'bin/commands/support/examples.ts',
      'bin/commands/support/exit-codes.ts',
      'bin/commands/support/usage-errors.ts',
      'bin/ecsr.ts',
      'bin/main.ts',
    ]);
    expect(dynamic).toBeGreaterThanOrEqual(10);
  });

  it('is rebuilt when a source it was built from changed or is gone', () => {
    // Prepare: a build's record of two sources, as scripts/build-cli.mjs writes it.
    const root = mkdtempSync(join(tmpdir(), 'ecsr-build-'));
    const dist = join(root, 'dist');
    mkdirSync(join(root, 'bin'));
    mkdirSync(dist);
    try {
      writeFileSync(join(root, 'bin/a.ts'), 'a');
      writeFileSync(join(root, 'bin/b.ts'), 'b');
      utimesSync(join(root, 'bin/a.ts'), 1_700_000_000, 1_700_000_000);
      utimesSync(join(root, 'bin/b.ts'), 1_700_000_000, 1_700_000_000);
      writeFileSync(join(dist, 'ecsr.js'), '');
      writeFileSync(join(dist, 'sources.json'), JSON.stringify({ sources: { 'bin/a.ts': 1_700_000_000_000, 'bin/b.ts': 1_700_000_000_000 } }));

      // Act
      const fresh = isStale(dist, root);
      utimesSync(join(root, 'bin/a.ts'), 1_700_000_100, 1_700_000_100);
      const changed = isStale(dist, root);
      utimesSync(join(root, 'bin/a.ts'), 1_700_000_000, 1_700_000_000);
      rmSync(join(root, 'bin/b.ts'));
      const deleted = isStale(dist, root);

      // Assess
      expect({ fresh, changed, deleted }).toEqual({ fresh: false, changed: true, deleted: true });
      expect(isStale(join(root, 'nothing-built'), root)).toBe(true);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

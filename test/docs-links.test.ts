/**
 * The documentation works in a clone: every `[text](path#anchor)` of every markdown file of the
 * repository (README.md, docs/*.md, bench/RESULTS.md, the fixtures' READMEs...) names a file inside
 * the repository and, with an anchor, a heading of that file (GitHub's slug rule: lower case,
 * punctuation other than `-` and `_` dropped, spaces become `-`); and no page sends the reader to
 * the team's workspace notes (ECS-FACTS, ARCHITECTURE.md, STACK.md...), which a clone does not have.
 * The same holds for source comments: they cite `docs/ecs-facts.md §N`, and that section exists.
 * Neither pages nor source comments nor test names tell history (issue numbers, citations of the
 * team's style notes): they say why, and git keeps when.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Directories that hold no documentation of the repository (dependencies, builds, synth output). */
const SKIPPED = new Set(['node_modules', 'dist', 'cdk.out', 'coverage', '.git']);

/** Every markdown file of the repository, relative to its root. */
function markdownFiles(dir = ''): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = dir === '' ? e.name : `${dir}/${e.name}`;
    if (e.isDirectory()) return SKIPPED.has(e.name) ? [] : markdownFiles(path);
    return e.name.endsWith('.md') ? [path] : [];
  });
}

const PAGES = markdownFiles().sort();

/** Directories of source code whose comments may cite documentation. */
const SOURCE_DIRS = ['lambda', 'lib', 'local', 'bin', 'bench', 'scripts', 'test'];

/** Every TypeScript or JavaScript source file under `dir`, relative to the root. */
function sourceFiles(dir: string): string[] {
  if (!existsSync(join(ROOT, dir))) return [];
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) return SKIPPED.has(e.name) ? [] : sourceFiles(path);
    return /\.(ts|mts|js|mjs)$/.test(e.name) ? [path] : [];
  });
}

const SOURCES = SOURCE_DIRS.flatMap((d) => sourceFiles(d)).filter((f) => f !== 'test/docs-links.test.ts').sort();

/** `docs/ecs-facts.md §N` and the `§N`, `§N-§M`, `§N, §M` that follow it in a citation. */
function citedFactSections(text: string): number[] {
  return [...text.matchAll(/docs\/ecs-facts\.md`?((?:[ ,;-]*§\d+)+)/g)].flatMap((m) => [...m[1].matchAll(/§(\d+)/g)].map((n) => Number(n[1])));
}

/**
 * Names of the workspace's notes outside the repository: a reference to one is a dead end in a
 * clone (say what the fact is, or link the AWS document it comes from).
 */
const OUTSIDE = /ECS-FACTS|\bARCHITECTURE\.md|\bSTACK\.md|\bSTYLE\.md|DESIGN-ROUND\d|shared\/docs|\/work\//;

/**
 * History in a comment or a test name: an issue number or a citation of the team's style notes
 * says when a line was written, not why it is so (git keeps history; a comment says why).
 */
const HISTORY = /\b[Ii]ssues? \d+\b|\bSTYLE §\d|\bARCHITECTURE: /;

/** GitHub's anchor of a heading text. */
function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');
}

/** The anchors of a markdown file's headings (outside code fences). */
function anchors(file: string): Set<string> {
  const out = new Set<string>();
  let fenced = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const m = !fenced && /^#{1,6} (.*)$/.exec(line);
    if (m) out.add(slug(m[1]));
  }
  return out;
}

/** Relative links of a markdown text, outside code fences. */
function links(text: string): string[] {
  const body = text.replace(/```[\s\S]*?```/g, '');
  return [...body.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]).filter((l) => !/^[a-z]+:/i.test(l));
}

describe('documentation links', () => {
  it('finds the pages and their links', () => {
    expect(PAGES).toEqual(expect.arrayContaining(['README.md', 'bench/RESULTS.md', 'docs/spec.md', 'docs/cli.md', 'docs/status.md', 'docs/operations.md', 'docs/deploy.md', 'docs/simulator.md', 'docs/benchmarks.md']));
    expect(links(readFileSync(join(ROOT, 'README.md'), 'utf8')).length).toBeGreaterThan(5);
  });

  it.each(PAGES)('%s: every relative link resolves in a clone', (page) => {
    const broken: string[] = [];
    for (const link of links(readFileSync(join(ROOT, page), 'utf8'))) {
      const [path, anchor] = link.split('#');
      const target = path === '' ? join(ROOT, page) : join(dirname(join(ROOT, page)), path);
      if (!existsSync(target) || relative(ROOT, target).startsWith('..')) broken.push(`${link}: no file ${relative(ROOT, target)}`);
      else if (anchor !== undefined && target.endsWith('.md') && !anchors(target).has(anchor)) broken.push(`${link}: no heading #${anchor}`);
    }
    expect(broken).toEqual([]);
  });

  it.each(PAGES)('%s: tells no history (issue numbers)', (page) => {
    const history = readFileSync(join(ROOT, page), 'utf8')
      .split('\n')
      .map((line, i) => `${page}:${i + 1}: ${line.trim()}`)
      .filter((line) => HISTORY.test(line.slice(line.indexOf(': ') + 2)));
    expect(history).toEqual([]);
  });

  it.each(PAGES)('%s: names no file outside the repository', (page) => {
    const outside = readFileSync(join(ROOT, page), 'utf8')
      .split('\n')
      .map((line, i) => `${page}:${i + 1}: ${line.trim()}`)
      .filter((line) => OUTSIDE.test(line.slice(line.indexOf(': ') + 2)));
    expect(outside).toEqual([]);
  });

  it('source comments name no file outside the repository', () => {
    expect(SOURCES.length).toBeGreaterThan(100);
    const outside = SOURCES.flatMap((file) =>
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (OUTSIDE.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(outside).toEqual([]);
  });

  it('source comments and test names tell no history (issue numbers, style-note citations)', () => {
    const history = SOURCES.flatMap((file) =>
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (HISTORY.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(history).toEqual([]);
  });

  it('every docs/ecs-facts.md §N a source comment cites is a section of that page', () => {
    const sections = new Set([...readFileSync(join(ROOT, 'docs/ecs-facts.md'), 'utf8').matchAll(/^## §(\d+)\./gm)].map((m) => Number(m[1])));
    expect(sections.size).toBeGreaterThan(5);
    const cited = SOURCES.flatMap((file) => citedFactSections(readFileSync(join(ROOT, file), 'utf8')).map((n) => ({ file, n })));
    expect(cited.length).toBeGreaterThan(30);
    expect(cited.filter((c) => !sections.has(c.n))).toEqual([]);
  });

  it('the check for outside names can fail', () => {
    expect(citedFactSections('see docs/ecs-facts.md §1-§2 and (`docs/ecs-facts.md` §6), docs/ecs-facts.md §1, §5')).toEqual([1, 2, 6, 1, 5]);
    expect(OUTSIDE.test('see ECS-FACTS §10')).toBe(true);
    expect(OUTSIDE.test('[arch](../shared/docs/ARCHITECTURE.md)')).toBe(true);
    expect(OUTSIDE.test('the architecture test (test/architecture.test.ts)')).toBe(false);
    expect(HISTORY.test(' * The fast path (issue 13 part 1): a pass restricted to')).toBe(true);
    expect(HISTORY.test("it('Issue 9, part 2: names of built-ins')")).toBe(true);
    expect(HISTORY.test('// the thin shell (STYLE §7)')).toBe(true);
    expect(HISTORY.test('the same stripping broke aws-actions/amazon-ecs-deploy-task-definition #163')).toBe(false);
    expect(HISTORY.test('issues the reconciler finds in a spec')).toBe(false);
  });
});

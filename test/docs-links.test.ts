/**
 * The documentation works in a clone: every `[text](path#anchor)` of every markdown file of the
 * repository (README.md, docs/*.md, bench/RESULTS.md, the fixtures' READMEs...) names a file inside
 * the repository and, with an anchor, a heading of that file (GitHub's slug rule: lower case,
 * punctuation other than `-` and `_` dropped, spaces become `-`); and no page sends the reader to
 * the team's workspace notes (ECS-FACTS, ARCHITECTURE.md, STACK.md...), which a clone does not have.
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

/**
 * Names of the workspace's notes outside the repository: a reference to one is a dead end in a
 * clone (say what the fact is, or link the AWS document it comes from).
 */
const OUTSIDE = /ECS-FACTS|\bARCHITECTURE\.md|\bSTACK\.md|\bSTYLE\.md|DESIGN-ROUND\d|shared\/docs|\/work\//;

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

  it.each(PAGES)('%s: names no file outside the repository', (page) => {
    const outside = readFileSync(join(ROOT, page), 'utf8')
      .split('\n')
      .map((line, i) => `${page}:${i + 1}: ${line.trim()}`)
      .filter((line) => OUTSIDE.test(line.slice(line.indexOf(': ') + 2)));
    expect(outside).toEqual([]);
  });

  it('the check for outside names can fail', () => {
    expect(OUTSIDE.test('see ECS-FACTS §10')).toBe(true);
    expect(OUTSIDE.test('[arch](../shared/docs/ARCHITECTURE.md)')).toBe(true);
    expect(OUTSIDE.test('the architecture test (test/architecture.test.ts)')).toBe(false);
  });
});

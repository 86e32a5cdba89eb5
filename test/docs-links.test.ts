/**
 * The documentation's relative links work in a clone: every `[text](path#anchor)` in README.md and
 * docs/*.md names a file of the repository and, with an anchor, a heading of that file (GitHub's
 * slug rule: lower case, punctuation other than `-` and `_` dropped, spaces become `-`).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

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
    expect(PAGES).toEqual(expect.arrayContaining(['README.md', 'docs/spec.md', 'docs/cli.md', 'docs/status.md', 'docs/operations.md', 'docs/deploy.md', 'docs/simulator.md', 'docs/benchmarks.md']));
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
});

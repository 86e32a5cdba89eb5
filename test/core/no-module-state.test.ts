/**
 * No module-level mutable state in `lambda/core`: what the planner may keep between passes is an
 * object the runtime owns and hands in (`lambda/core/compare-cache.ts`, docs/architecture.md),
 * so that a plan depends on its input alone, whichever passes ran before it in the process.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { moduleStateOffences } from '../support/module-state-lint';

const ROOT = resolve(import.meta.dirname, '../..');

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

describe('no module-level mutable state in lambda/core', () => {
  it('no file of lambda/core holds a module-level let, var, object made with new or empty collection', () => {
    const files = filesUnder(join(ROOT, 'lambda/core'));
    expect(files.length).toBeGreaterThan(30);
    const offences = files.flatMap((f) => moduleStateOffences(relative(ROOT, f), readFileSync(f, 'utf8')));
    expect(offences).toEqual([]);
  });

  it.each([
    ['let cached = 0;', 'cached (a module-level let)'],
    ['var seen;', 'seen (a module-level var)'],
    ['const memo = new Map<string, number>();', 'memo (a module-level object made with new)'],
    ['const stamps = new WeakMap<object, string>();', 'stamps (a module-level object made with new)'],
    ['const walk = new PrintWalk();', 'walk (a module-level object made with new)'],
    ['const names: Set<string> = new Set(["a"]);', 'names (a module-level object made with new)'],
    ['const queue: string[] = [];', 'queue (a module-level collection that starts empty)'],
    ['const byId = {} as Record<string, number>;', 'byId (a module-level collection that starts empty)'],
    ['const byKey = dict();', 'byKey (a module-level collection that starts empty)'],
    ['const WORDS = new RegExp("a+", "g");', 'WORDS (a module-level object made with new)'],
  ])('refuses %s', (text, why) => {
    expect(moduleStateOffences('x.ts', text)).toEqual([`x.ts:1 ${why}`]);
  });

  it.each([
    'const NAMES: ReadonlySet<string> = new Set(["a", "b"]);',
    'const LIMITS = { max: 10 } as const;',
    'const KINDS = ["a", "b"] as const;',
    'export function f() { let n = 0; const m = new Map(); n += m.size; return n; }',
    'class C { private readonly cache = new Map<string, number>(); }',
    'const EMPTY: readonly string[] = [];',
    'const NONE: Readonly<Record<string, string>> = dict();',
    'const ARN_RE = new RegExp(`^arn:${"x"}$`);',
    'const NAME_RE = new RegExp("^[a-z]+$", "i");',
  ])('allows %s', (text) => {
    expect(moduleStateOffences('x.ts', text)).toEqual([]);
  });
});

/**
 * Adversarial review of the YAML spec reader (lambda/core/spec-yaml.ts): JavaScript's special
 * keys, tags (!!binary, !!omap), anchors and alias bombs, BOM and CRLF, empty and complex keys,
 * huge numbers and a huge file. Cases marked "held up" passed before any fix and stay as guards.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseSpecsYaml } from '../../lambda/core/spec';
import type { SpecError } from '../../lambda/core/types';

/** Lines joined with newlines, so that line numbers in a test can be read off the array. */
const lines = (...ls: string[]) => `${ls.join('\n')}\n`;

/** A valid spec's lines, then `more`. */
const spec = (...more: string[]) => lines('cluster: prod', 'service: web', 'image: nginx:1.27', 'desiredCount: 2', ...more);

/** The errors of the only spec in `text` (none when it is valid). */
function specErrors(text: string): SpecError[] {
  const { docs, errors } = parseSpecsYaml(text, 'specs.yaml');
  expect(errors).toEqual([]);
  expect(docs).toHaveLength(1);
  const r = docs[0].result;
  return r.ok ? [] : r.errors;
}

describe('YAML specs under attack', () => {
  afterEach(() => vi.restoreAllMocks());

  describe('fixed', () => {
    it('reports a __proto__ key as an unknown attribute, and takes nothing from it', () => {
      // Prepare
      const text = lines('cluster: prod', 'service: web', 'image: nginx:1.27', '__proto__:', '  desiredCount: 3');

      // Act
      const errors = specErrors(text);

      // Assess
      expect(errors.map((e) => e.path).sort()).toEqual(['__proto__', 'desiredCount']);
      expect(errors.find((e) => e.path === 'desiredCount')?.message).toMatch(/^is required/);
    });

    it.each([
      { case: 'environment', more: ['environment:', '  __proto__: "x"'], path: 'environment.__proto__' },
      { case: 'tags', more: ['tags:', '  __proto__: "x"'], path: 'tags.__proto__' },
    ])('reports a __proto__ name in $case', ({ more, path }) => {
      expect(specErrors(spec(...more)).map((e) => e.path)).toEqual([path]);
    });

    it.each([
      { case: 'a 20-digit number', value: '99999999999999999999' },
      { case: 'one above 2^31 - 1', value: '2147483648' },
    ])('refuses desiredCount of $case (ECS: 32-bit integer)', ({ value }) => {
      const errors = specErrors(lines('cluster: prod', 'service: web', 'image: nginx:1.27', `desiredCount: ${value}`));
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ path: 'desiredCount' });
      expect(errors[0].message).toContain('2147483647');
    });

    it.each([
      { case: 'a null key', key: '~' },
      { case: 'an empty quoted key', key: '""' },
    ])('names an attribute written as $case "" rather than the whole item', ({ key }) => {
      const errors = specErrors(spec(`${key}: x`));
      expect(errors.map((e) => e.path)).toEqual(['""']);
    });

    it('says what an !!omap is instead of "must be a map, got map"', () => {
      const errors = specErrors(spec('environment: !!omap', '  - A: b'));
      expect(errors).toHaveLength(1);
      expect(errors[0].path).toBe('environment');
      expect(errors[0].message).toContain('ordered map (YAML !!omap or !!pairs) {"A":"b"}');
    });

    it('refuses a complex key at its line without printing a warning to the console', () => {
      // Prepare
      const warned = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
      const logged = vi.spyOn(console, 'warn').mockImplementation(() => undefined);

      // Act
      const { docs, errors } = parseSpecsYaml(spec('? [a, b]', ': c'), 'specs.yaml');

      // Assess
      expect(docs).toEqual([]);
      expect(errors).toEqual([{ file: 'specs.yaml', line: 5, message: expect.stringContaining('a key is a list or mapping') }]);
      expect(warned).not.toHaveBeenCalled();
      expect(logged).not.toHaveBeenCalled();
    });
  });

  describe('held up', () => {
    it('reads a file with a byte order mark and CRLF line ends, with the same lines and values', () => {
      // Prepare
      const text = lines(
        'cluster: prod', // 1
        'service: web', // 2
        'image: nginx:1.27', // 3
        'desiredCount: 2', // 4
        'environment:', // 5
        '  GREETING: "hello', // 6
        '    world"', // 7
        '  SCRIPT: |', // 8
        '    line 1', // 9
        '    line 2', // 10
        '---', // 11
        'cluster: prod', // 12
        'service: api', // 13
        'image: [', // 14
      );
      const lf = parseSpecsYaml(text);

      // Act
      const crlf = parseSpecsYaml(`\uFEFF${text.replace(/\n/g, '\r\n')}`);

      // Assess
      expect(crlf.docs.map((d) => d.line)).toEqual(lf.docs.map((d) => d.line));
      expect(crlf.errors.map((e) => e.line)).toEqual(lf.errors.map((e) => e.line));
      expect(crlf.errors).toHaveLength(1);
      const env = crlf.docs[0].result.ok ? crlf.docs[0].result.spec.environment : undefined;
      expect(env).toEqual({ GREETING: 'hello world', SCRIPT: 'line 1\nline 2\n' });
    });

    it('reports a !!binary value as binary at its path', () => {
      expect(specErrors(spec('environment:', '  A: !!binary aGVsbG8='))).toEqual([
        { path: 'environment.A', value: '<5 bytes>', message: 'must be a string (DynamoDB type S), got binary (B)' },
      ]);
    });

    it('expands anchors and merge keys', () => {
      const text = lines('- &base', '  cluster: prod', '  service: web', '  image: nginx:1.27', '  desiredCount: 2', '- <<: *base', '  service: api');
      const { docs } = parseSpecsYaml(text);
      expect(docs.map((d) => (d.result.ok ? d.result.key.service : 'invalid'))).toEqual(['web', 'api']);
    });

    it('refuses an alias bomb as a document error, and reads the next document', () => {
      // Prepare
      const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
      for (const [name, prev] of [['b', 'a'], ['c', 'b'], ['d', 'c'], ['e', 'd']]) {
        bomb.push(`${name}: &${name} [${Array(10).fill(`*${prev}`).join(', ')}]`);
      }

      // Act
      const { docs, errors } = parseSpecsYaml(`${lines(...bomb)}---\n${spec()}`);

      // Assess
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ line: 1 });
      expect(errors[0].message).toContain('document 1 could not be read');
      expect(docs.map((d) => d.result.ok)).toEqual([true]);
    });

    it('reads 2,000 specs of one file with the line of each', () => {
      // Prepare
      const text = Array.from({ length: 2000 }, (_, i) => lines(`- cluster: prod`, `  service: s${i}`, '  image: nginx:1.27', '  desiredCount: 1')).join('');

      // Act
      const { docs, errors } = parseSpecsYaml(text);

      // Assess
      expect(errors).toEqual([]);
      expect(docs).toHaveLength(2000);
      expect(docs.every((d) => d.result.ok)).toBe(true);
      expect(docs[1999].line).toBe(1999 * 4 + 1);
    });
  });
});

/**
 * `ecsr get -l`: label selectors over a spec's tags, read as `kubectl get -l` reads them
 * (equality-based requirements, comma-separated, all of which must hold), unit by unit and end to
 * end against dynalite, where an invalid item is selected by the tags it was written with.
 */
import { InvalidArgumentError } from 'commander';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { matchesSelector, parseSelector } from '../../bin/commands/support/selector';
import { spec, useCliStack } from './harness';
import { ecsr } from '../support/cli-in-process';

describe('parseSelector and matchesSelector', () => {
  it.each([
    { text: 'team=payments', req: [{ op: 'equals', key: 'team', value: 'payments' }] },
    { text: 'team==payments', req: [{ op: 'equals', key: 'team', value: 'payments' }] },
    { text: 'tier!=batch', req: [{ op: 'notEquals', key: 'tier', value: 'batch' }] },
    { text: 'team = payments , !legacy', req: [{ op: 'equals', key: 'team', value: 'payments' }, { op: 'notExists', key: 'legacy' }] },
    { text: 'owner', req: [{ op: 'exists', key: 'owner' }] },
    { text: 'aws:app=shop:web', req: [{ op: 'equals', key: 'aws:app', value: 'shop:web' }] },
    { text: 'empty=', req: [{ op: 'equals', key: 'empty', value: '' }] },
  ])('reads $text', ({ text, req }) => {
    expect(parseSelector(text)).toEqual(req);
  });

  it.each(['', 'team=a,', ',team=a', '=payments', '!', 'team=pay$ments', 'te#am'])('refuses %j with what a requirement is', (text) => {
    expect(() => parseSelector(text)).toThrow(InvalidArgumentError);
    expect(() => parseSelector(text)).toThrow(/key=value, key!=value, key or !key/);
  });

  it.each([
    { selector: 'team=payments', tags: { team: 'payments' }, matches: true },
    { selector: 'team=payments', tags: { team: 'search' }, matches: false },
    { selector: 'team=payments', tags: undefined, matches: false },
    { selector: 'team!=payments', tags: undefined, matches: true },
    { selector: 'team!=payments', tags: { team: 'payments' }, matches: false },
    { selector: 'team', tags: { team: '' }, matches: true },
    { selector: '!team', tags: { team: '' }, matches: false },
    { selector: '!team', tags: {}, matches: true },
    { selector: 'team=payments,tier!=batch', tags: { team: 'payments', tier: 'batch' }, matches: false },
    { selector: 'team=payments,tier!=batch', tags: { team: 'payments', tier: 'web' }, matches: true },
    { selector: 'toString', tags: {}, matches: false },
  ])('$selector over $tags: $matches', ({ selector, tags, matches }) => {
    expect(matchesSelector(tags as Record<string, string> | undefined, parseSelector(selector))).toBe(matches);
  });
});

describe('ecsr get -l', () => {
  const harness = useCliStack('sel');
  let c: Awaited<ReturnType<typeof harness.aCase>>;
  beforeAll(async () => {
    c = await harness.aCase();
    const files = [
      spec(c.cluster, 'web', 'tags:\n  team: payments\n  tier: web\n'),
      spec(c.cluster, 'batch', 'tags:\n  team: payments\n  tier: batch\n'),
      spec(c.cluster, 'search', 'tags:\n  team: search\n'),
      spec(c.cluster, 'plain'),
    ].join('---\n');
    expect((await ecsr(['apply', '-f', c.file('s.yaml', files), '--no-verify'], { env: c.env })).code).toBe(0);
    await harness.stack().doc.send(new PutCommand({ TableName: c.table, Item: { cluster: c.cluster, service: 'broken', image: 'x', desiredCount: 1, cpu: 3, tags: { team: 'payments' } } }));
  });

  /** The services of `get -o json` with `args`. */
  async function selected(...args: string[]): Promise<string[]> {
    const r = await ecsr(['get', ...args, '-o', 'json'], { env: c.env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    return (JSON.parse(r.stdout) as { service: string }[]).map((e) => e.service).sort();
  }

  it.each([
    { selector: 'team=payments', services: ['batch', 'broken', 'web'] },
    { selector: 'team=payments,tier!=batch', services: ['broken', 'web'] },
    { selector: '!team', services: ['plain'] },
    { selector: 'tier', services: ['batch', 'web'] },
  ])('-l $selector selects $services', async ({ selector, services }) => {
    expect(await selected('-l', selector)).toEqual(services);
  });

  it('applies within a cluster, and says when nothing matches', async () => {
    // Act
    const inCluster = await selected(c.cluster, '--selector', 'team=search');
    const none = await ecsr(['get', '-l', 'team=nobody'], { env: c.env });

    // Assess
    expect(inCluster).toEqual(['search']);
    expect(none.code).toBe(0);
    expect(none.stdout).toBe(`No specs matching -l team=nobody in table ${c.table}.\n`);
  });

  it.each([
    { args: (cl: string) => ['-l', 'team=payments', `${cl}/web`], stderr: /-l selects among specs: give CLUSTER or nothing/ },
    { args: () => ['-l', 'team=pay$'], stderr: /"team=pay\$" is not a requirement on a tag/ },
  ])('refuses $args.name', async ({ args, stderr }) => {
    // Act
    const r = await ecsr(['get', ...args(c.cluster)], { env: c.env });

    // Assess
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(stderr);
    expect(r.stdout).toBe('');
  });
});

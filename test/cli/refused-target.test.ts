/**
 * `ecsr --target` and a `#target` item the reconciler refuses (a breaker's finding):
 * `ecsr` reads `#target` items as the dispatcher does, so an item the dispatcher refuses (here: no
 * region, no roleArn) declares no target, and `apply --target` to it is refused with the item's
 * problems, writing nothing (before the fix it wrote `qa/<cluster>` specs no pass would reconcile).
 *
 * Real servers: the CLI (in process) against dynalite and the ECS simulator (test/cli harness).
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack';
import { spec, useCliStack } from './harness';
import { ecsr } from '../support/cli-in-process';

describe('ecsr --target and a #target item the reconciler refuses', () => {
  const harness = useCliStack('bk');
  let stack: LocalStack;
  beforeAll(() => {
    stack = harness.stack();
  });

  it('apply --target NAME is refused (nothing written) when the #target item of NAME is not a valid declaration', async () => {
    // Prepare: a #target item the dispatcher refuses (account only: no region, no roleArn)
    const c = await harness.aCase();
    await stack.doc.send(new PutCommand({ TableName: c.table, Item: { cluster: '#target', service: 'qa', account: '444444444444' } }));
    const path = c.file('web.yaml', spec(c.cluster, 'web'));

    // Act
    const applied = await ecsr(['apply', '-f', path, '--target', 'qa'], { env: c.env });
    const written = (await stack.doc.send(new GetCommand({ TableName: c.table, Key: { cluster: `qa/${c.cluster}`, service: 'web' }, ConsistentRead: true }))).Item;

    // Assess
    expect({ code: applied.code, written: written !== undefined }).toEqual({ code: 1, written: false });
    expect(applied.stderr).toMatch(/Target "qa" is declared by a #target item the reconciler refuses.*region is required/s);
  }, 120_000);
});

/**
 * `ecsr get` fits the terminal, end to end through the built CLI: at 80 and 160 columns (`COLUMNS`,
 * as a terminal of that width sets it) every line of the table fits, long service names are cut
 * and the reason word is not, and under the table each service not converged has its whole
 * reason; an invalid item has each attribute and its problem. `-o wide` has every column uncut.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ServiceStatus } from '../../lambda/core/types';
import type { LocalStack } from '../../local/stack';
import { spec, useCliStack } from './harness';
import { baseEnv, ecsr } from './run-cli';

const LONG = 'payments-ledger-reconciliation-worker';

describe('ecsr get fits the terminal', () => {
  const harness = useCliStack('t');
  let stack: LocalStack;
  let c: Awaited<ReturnType<ReturnType<typeof useCliStack>['aCase']>>;
  beforeAll(async () => {
    stack = harness.stack();
    c = await harness.aCase();
    const files = [spec(c.cluster, 'web'), spec(c.cluster, LONG).replace('nginx:1.27', 'nginx:does-not-exist')].join('---\n');
    expect((await ecsr(['apply', '-f', c.file('s.yaml', files)], { env: c.env })).code).toBe(0);
    await stack.doc.send(new PutCommand({ TableName: c.table, Item: { cluster: c.cluster, service: 'broken', image: 'x', desiredCount: 1, cpu: 3 } }));
    // Passes, a simulated minute apart, until the unpullable image's rollout has failed.
    for (let i = 0; i < 40; i++) {
      await c.pass();
      const status = (await c.item(LONG))?.status as ServiceStatus | undefined;
      if (status?.failedSpecHash !== undefined && (await c.item('web'))?.status?.phase === 'Converged') break;
      stack.sim.clock.advance(60);
    }
  });

  const get = (columns: number, ...args: string[]) => ecsr(['get', ...args], { env: { ...c.env, COLUMNS: String(columns) } });

  it.each([80, 160])('at %i columns: the table fits, the reason word is whole, and each whole reason is under the table', async (columns) => {
    // Act
    const r = await get(columns);

    // Assess
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    const tableLines = lines.filter((l) => /^[┌│├└]/.test(l));
    expect(tableLines.length).toBeGreaterThan(4);
    for (const l of tableLines) expect(l.length).toBeLessThanOrEqual(columns);
    const rows = tableLines.filter((l) => l.startsWith('│')).map((l) => l.split('│').map((x) => x.trim()));
    expect(rows[0].slice(1, 6)).toEqual(['SERVICE', 'PHASE', 'TASKS', 'SYNCED', 'REASON']);
    const failed = rows.find((row) => row[1].startsWith(`${c.cluster}/pay`));
    expect(failed?.slice(2, 6)).toEqual(['Degraded', '0/2', 'yes', 'RolloutFailed']);
    expect(rows.find((row) => row[1] === `${c.cluster}/broken`)?.slice(2, 3)).toEqual(['Invalid']);
    expect(rows.find((row) => row[1] === `${c.cluster}/web`)?.slice(2, 6)).toEqual(['Converged', '2/2', 'yes', '']);
    // A name is cut only when the terminal is too narrow for it.
    if (columns === 80) expect(failed?.[1]).toMatch(/…$/);
    else expect(failed?.[1]).toBe(`${c.cluster}/${LONG}`);

    // Under the table, each line within the width; joined, the whole reason of each service not converged.
    const under = lines.slice(lines.lastIndexOf(tableLines.at(-1) ?? '') + 1).filter((l) => l !== '');
    for (const l of under) expect(l.length).toBeLessThanOrEqual(columns);
    const text = under.join('\n').replace(/\n {2}/g, ' ');
    expect(text).toMatch(new RegExp(`^${c.cluster}/${LONG}: RolloutFailed: .*CannotPullContainerError.*does-not-exist`, 'm'));
    expect(text).toMatch(new RegExp(`^${c.cluster}/broken: invalid: cpu: .+`, 'm'));
    expect(text).not.toContain(`${c.cluster}/web:`);
    expect(text).not.toContain('…');
  });

  it.each([80, 120, 200])('-o wide at %i columns: every line fits, ids whole, each reason and last action whole', async (columns) => {
    // Act
    const r = await get(columns, '-o', 'wide');

    // Assess
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(columns);
    const tableLines = lines.filter((l) => /^[┌│├└]/.test(l));
    const rows = tableLines.filter((l) => l.startsWith('│')).map((l) => l.split('│').map((x) => x.trim()));
    const ids = rows.slice(1).map((row) => row[1]).filter((id) => id !== '');
    expect(ids).toEqual(expect.arrayContaining([`${c.cluster}/${LONG}`, `${c.cluster}/web`, `${c.cluster}/broken`]));
    expect(rows[0].slice(1, 3)).toEqual(['SERVICE', 'PHASE']);
    expect(rows[0].slice(3, 6)).toEqual(columns === 80 ? ['TASKS', 'SYNCED', ''] : ['DESIRED', 'RUNNING', 'PENDING']);
    // Whatever the layout, the whole reason of the failed rollout and its last action can be read,
    // in their cells (wrapped) or under the table: joined, the text has no cut.
    const text = r.stdout.replace(/[│┌┐└┘├┤┬┴┼─]/g, ' ').replace(/\s+/g, ' ');
    expect(text).toMatch(/RolloutFailed: .*CannotPullContainerError.*does-not-exist/);
    expect(text).not.toContain('…');
    if (columns === 200) {
      expect(rows[0].slice(7, 10)).toEqual(['REASON', 'LAST ACTION', 'OBSERVED']);
      expect(lines.some((l) => l.length > 120)).toBe(true);
    } else {
      expect(rows[0]).not.toContain('REASON');
      expect(lines.filter((l) => / last action: /.test(l)).length).toBeGreaterThan(0);
    }
  });
});

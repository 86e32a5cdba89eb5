/**
 * `ecsr local --targets 2`: the fan-out against two simulators standing for two
 * accounts, through the dispatcher and `TargetRunner` (the function's code), with the example shop
 * in each account under its own key.
 */
import { describe, expect, it } from 'vitest';
import { SHOP_EXAMPLE } from '../../bin/commands/local';
import { loadSpecFiles } from '../../bin/commands/support/spec-file';
import { runLocalFanOut, simulatedAccount } from '../../local/fan-out-run';

describe('ecsr local --targets 2', () => {
  it('reconciles the shop in both accounts, each target in its own invocation, until every status settles', async () => {
    // Prepare
    const specs = loadSpecFiles([SHOP_EXAMPLE], 'test');
    const out: string[] = [];

    // Act
    const result = await runLocalFanOut({ specs, targets: 2, write: (t) => out.push(t) });

    // Assess
    expect(result.ok).toBe(true);
    expect(result.targets.map((t) => [t.name, t.account, t.settled, t.services])).toEqual([
      ['default', simulatedAccount(1), specs.length, specs.length],
      ['account-2', simulatedAccount(2), specs.length, specs.length],
    ]);
    // Each account got its own creates: the same actions in each, on its own simulator.
    expect(result.targets[0].endpoint).not.toBe(result.targets[1].endpoint);
    expect(result.targets[0].actions).toBeGreaterThanOrEqual(specs.length);
    expect(result.targets[1].actions).toBe(result.targets[0].actions);
    expect(result.targets.every((t) => t.converged === specs.length - 1)).toBe(true);
    expect(out.join('')).toMatch(/minute 0: dispatched default, account-2/);
    // ECS's events: the second account's, forwarded from its bus to the reconciler's, ran its own
    // fast path; none was for an undeclared account.
    const [home, second] = result.targets;
    expect(second.eventsPut).toBeGreaterThan(0);
    expect(second.eventServices).toBeGreaterThan(0);
    expect(second.fastPasses).toBeGreaterThan(0);
    expect(home.fastPasses).toBeGreaterThan(0);
    expect(result.eventsUnrouted).toBe(0);
    // A person's hand edit in the second account is put back by that target's events fast path,
    // no scheduled pass (no simulated time) in between.
    expect(result.handEdit).toMatchObject({ target: 'account-2', corrected: true });
    expect(out.join('')).toMatch(/Hand edit in account-2: .* put back to \d+ by account-2's events fast path/);
    expect(out.join('')).toMatch(/account-2 +\d+ events put \(forwarded to the reconciler account\), \d+ services named, \d+ fast path passes/);
  }, 180_000);

  it('with --no-events the targets are polled: no event reaches a fast path', async () => {
    const specs = loadSpecFiles([SHOP_EXAMPLE], 'test');
    const result = await runLocalFanOut({ specs, targets: 2, events: false, write: () => {} });
    expect(result.ok).toBe(true);
    expect(result.targets.map((t) => [t.eventsPut, t.fastPasses])).toEqual([
      [0, 0],
      [0, 0],
    ]);
  }, 180_000);
});

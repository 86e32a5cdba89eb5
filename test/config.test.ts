import { describe, expect, it } from 'vitest';
import { ConfigError, ENV, loadConfig } from '../lambda/config';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({ [ENV.specsTable]: 'specs' });
    expect(c.specsTable).toBe('specs');
    expect(c.dryRun).toBe(false);
    expect(c.apiBudgetFraction).toBe(0.5);
    expect(c.metricsNamespace).toBe('EcsReconciler');
    expect(c.plan.maxDeletesPerPass).toBe(5);
    expect(c.plan.prune).toBe(true);
    expect(c.plan.defaultLagGraceSeconds).toBe(300);
    expect(c.plan.allow.imageRegistries).toBeUndefined();
  });

  it('reads OBSERVE_ONLY_CLUSTERS as a list, and leaves it out when unset or empty', () => {
    expect(loadConfig({ [ENV.specsTable]: 'specs', [ENV.observeOnlyClusters]: 'legacy, old' }).plan.observeOnlyClusters).toEqual(['legacy', 'old']);
    expect(loadConfig({ [ENV.specsTable]: 'specs', [ENV.observeOnlyClusters]: ' ' }).plan.observeOnlyClusters).toBeUndefined();
    expect(loadConfig({ [ENV.specsTable]: 'specs' }).plan.observeOnlyClusters).toBeUndefined();
  });

  it('parses lists, booleans and numbers', () => {
    const c = loadConfig({
      [ENV.specsTable]: 'specs',
      [ENV.managedClusters]: 'a, b,,c',
      [ENV.dryRun]: 'true',
      [ENV.maxDeletesPerPass]: '2',
      [ENV.apiBudgetFraction]: '0.25',
      [ENV.allowedImageRegistries]: 'public.ecr.aws',
    });
    expect(c.plan.managedClusters).toEqual(['a', 'b', 'c']);
    expect(c.dryRun).toBe(true);
    expect(c.plan.maxDeletesPerPass).toBe(2);
    expect(c.apiBudgetFraction).toBe(0.25);
    expect(c.plan.allow.imageRegistries).toEqual(['public.ecr.aws']);
  });

  it('reads NONE as an empty allow-list (nothing allowed) and unset as no allow-list', () => {
    const c = loadConfig({ [ENV.specsTable]: 'specs', [ENV.allowedTaskRoleArns]: 'NONE' });
    expect(c.plan.allow.taskRoleArns).toEqual([]);
    expect(c.plan.allow.executionRoleArns).toBeUndefined();
  });

  it.each([
    { case: 'missing table', env: {}, names: [ENV.specsTable] },
    { case: 'bad fraction', env: { [ENV.specsTable]: 'specs', [ENV.apiBudgetFraction]: '2' }, names: [ENV.apiBudgetFraction] },
    { case: 'bad count', env: { [ENV.specsTable]: 'specs', [ENV.maxDeletesPerPass]: '-1' }, names: [ENV.maxDeletesPerPass] },
    { case: 'bad boolean', env: { [ENV.specsTable]: 'specs', [ENV.dryRun]: 'maybe' }, names: [ENV.dryRun] },
    { case: 'bad role', env: { [ENV.specsTable]: 'specs', [ENV.defaultExecutionRoleArn]: 'role' }, names: [ENV.defaultExecutionRoleArn] },
  ])('names the bad variable: $case', ({ env, names }) => {
    let err: unknown;
    try {
      loadConfig(env);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).variables).toEqual(names);
    for (const n of names) expect((err as Error).message).toContain(n);
  });
});

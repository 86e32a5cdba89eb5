/**
 * The local stack's simulated VPC (`LOCAL_VPC`): it holds every subnet and security group the
 * reconciler's local defaults and the examples name, so that `npm start` and the README's
 * `ecsr apply -f examples/web.yaml` run, while a spec naming any other is refused as ECS refuses it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseSpecsYaml } from '../../lambda/core/spec-yaml';
import { LOCAL_DEFAULTS, LOCAL_VPC } from '../../local/stack';

const EXAMPLES = resolve(import.meta.dirname, '../../examples');

describe('the local stack\'s VPC', () => {
  it('has the local defaults\' and every example\'s subnets and security groups', () => {
    // Prepare
    const subnets = new Set(LOCAL_DEFAULTS.subnets.split(','));
    const groups = new Set(LOCAL_DEFAULTS.securityGroups.split(','));
    for (const f of readdirSync(EXAMPLES).filter((n) => n.endsWith('.yaml'))) {
      const { docs, errors } = parseSpecsYaml(readFileSync(join(EXAMPLES, f), 'utf8'), f);
      expect(errors).toEqual([]);
      for (const d of docs) {
        if (!d.result.ok) throw new Error(`${f}: ${JSON.stringify(d.result.errors)}`);
        for (const s of d.result.spec.subnets ?? []) subnets.add(s);
        for (const g of d.result.spec.securityGroups ?? []) groups.add(g);
      }
    }

    // Assess
    expect(subnets.size).toBeGreaterThan(2);
    expect(LOCAL_VPC.subnets).toEqual(expect.arrayContaining([...subnets]));
    expect(LOCAL_VPC.securityGroups).toEqual(expect.arrayContaining([...groups]));
  });
});

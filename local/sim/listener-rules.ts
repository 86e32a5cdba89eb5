/**
 * The simulator's model of the load balancer side of native deployments: each load balancer with
 * an `advancedConfiguration` has a production listener rule (and optionally a test one) that
 * forwards to two target groups, the primary and the alternate, with weights that add up to 100.
 * ECS moves the weights during a BLUE_GREEN, LINEAR or CANARY deployment and swaps the roles of
 * the two target groups once one succeeds (Amazon ECS Developer Guide, "Amazon ECS blue/green
 * deployments"). Read with `GET /_sim/listener-rules`.
 */
import type { SimCore } from './core';
import { activeRun } from './native-deployments';

/** One listener rule and where it forwards. */
export interface ListenerRuleState {
  ruleArn: string;
  kind: 'production' | 'test';
  service: string;
  cluster: string;
  targetGroups: { targetGroupArn: string; weight: number }[];
}

/** Every listener rule of every ACTIVE service's load balancers with an advancedConfiguration, now. */
export function listenerRules(core: SimCore): ListenerRuleState[] {
  const out: ListenerRuleState[] = [];
  for (const cluster of core.state.clusters.values()) {
    for (const svc of cluster.services.values()) {
      if (svc.status !== 'ACTIVE') continue;
      const a = activeRun(svc);
      const production = a ? a.run.productionWeight : 0;
      const test = a ? a.run.testWeight : 0;
      for (const lb of svc.loadBalancers) {
        const adv = lb.advancedConfiguration;
        if (!adv?.alternateTargetGroupArn || !lb.targetGroupArn) continue;
        const [blue, green] = svc.targetGroupsSwapped ? [adv.alternateTargetGroupArn, lb.targetGroupArn] : [lb.targetGroupArn, adv.alternateTargetGroupArn];
        const rule = (ruleArn: string, kind: 'production' | 'test', weight: number): ListenerRuleState => ({
          ruleArn,
          kind,
          service: svc.name,
          cluster: cluster.name,
          targetGroups: [
            { targetGroupArn: blue, weight: 100 - weight },
            { targetGroupArn: green, weight },
          ],
        });
        if (adv.productionListenerRule) out.push(rule(adv.productionListenerRule, 'production', production));
        if (adv.testListenerRule) out.push(rule(adv.testListenerRule, 'test', test));
      }
    }
  }
  return out;
}

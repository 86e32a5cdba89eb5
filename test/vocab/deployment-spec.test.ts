/**
 * The spec's deployment strategies: each refusal of a native strategy, a lifecycle hook, an
 * advancedConfiguration or a VPC Lattice configuration names the field and what is allowed;
 * what ECS accepts is accepted.
 */
import { describe, expect, it } from 'vitest';
import { parseSpecItem } from '../../lambda/core/spec';

const TG = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/blue/0123456789abcdef';
const TG2 = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/green/0123456789abcdef';
const RULE = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener-rule/app/web/0123456789abcdef/0123456789abcdef/0123456789abcdef';
const ROLE = 'arn:aws:iam::123456789012:role/ecs-infrastructure';
const FN = 'arn:aws:lambda:us-east-1:123456789012:function:check-green';
const ADVANCED = { alternateTargetGroupArn: TG2, productionListenerRule: RULE, roleArn: ROLE };
const LATTICE_TG = 'arn:aws:vpc-lattice:us-east-1:123456789012:targetgroup/tg-0123456789abcdef0';

const base = { cluster: 'c', service: 'web', image: 'nginx:1.27', desiredCount: 2, containerPort: 80 };
const blueGreen = { ...base, loadBalancer: { targetGroupArn: TG, containerPort: 80, advancedConfiguration: ADVANCED } };

function errorsOf(item: Record<string, unknown>): string[] {
  const r = parseSpecItem(item);
  return r.ok ? [] : r.errors.map((e) => `${e.path}: ${e.message}`);
}

describe('deployment strategies the spec accepts', () => {
  it.each([
    ['BLUE_GREEN with a bake time', { ...blueGreen, deployment: { strategy: 'BLUE_GREEN', bakeTimeInMinutes: 5 } }],
    ['LINEAR with its configuration', { ...blueGreen, deployment: { strategy: 'LINEAR', linearConfiguration: { stepPercent: 12.5, stepBakeTimeInMinutes: 3 } } }],
    ['CANARY with a Lambda and a PAUSE hook', {
      ...blueGreen,
      deployment: {
        strategy: 'CANARY',
        canaryConfiguration: { canaryPercent: 0.1, canaryBakeTimeInMinutes: 0 },
        lifecycleHooks: [
          { hookTargetArn: FN, roleArn: ROLE, lifecycleStages: ['POST_TEST_TRAFFIC_SHIFT'], hookDetails: { smoke: ['/health'] } },
          { targetType: 'PAUSE', lifecycleStages: ['PRE_PRODUCTION_TRAFFIC_SHIFT'], timeoutConfiguration: { timeoutInMinutes: 60, action: 'CONTINUE' } },
        ],
      },
    }],
    ['BLUE_GREEN through Service Connect only', { ...base, containerPort: undefined, containers: undefined, deployment: { strategy: 'BLUE_GREEN' }, serviceConnectConfiguration: { enabled: true, namespace: 'ns' } }],
    ['the ECS name deploymentConfiguration', { ...base, deploymentConfiguration: { minimumHealthyPercent: 50, deploymentCircuitBreaker: { enable: true, rollback: true, thresholdConfiguration: { type: 'COUNT', value: 3 }, resetOnHealthyTask: false } } }],
    ['a rolling deployment with early success criteria', { ...base, deployment: { minimumHealthyPercent: 50, earlySuccessCriteria: { enable: true, healthyPercent: 80, sourceServiceRevisionCleanup: 'DEFERRED' } } }],
  ])('%s', (_name, item) => {
    expect(errorsOf(item as Record<string, unknown>)).toEqual([]);
  });
});

describe('refusals, each naming the field and what is allowed', () => {
  it.each([
    ['an unknown strategy', { ...base, deployment: { strategy: 'RECREATE' } }, ['deployment.strategy: must be one of "ROLLING", "BLUE_GREEN", "LINEAR", "CANARY", got string "RECREATE"']],
    ['a bake time beyond a day', { ...blueGreen, deployment: { strategy: 'BLUE_GREEN', bakeTimeInMinutes: 1441 } }, ['deployment.bakeTimeInMinutes: must be a whole number from 0 to 1440 (minutes), got 1441']],
    ['a step off the 0.1 grid', { ...blueGreen, deployment: { strategy: 'LINEAR', linearConfiguration: { stepPercent: 12.55 } } }, ['deployment.linearConfiguration.stepPercent: must be a number from 3 to 100 in steps of 0.1 (percent), got 12.55']],
    ['a canary below 0.1 percent', { ...blueGreen, deployment: { strategy: 'CANARY', canaryConfiguration: { canaryPercent: 0.05 } } }, ['deployment.canaryConfiguration.canaryPercent: must be a number from 0.1 to 100 in steps of 0.1 (percent), got 0.05']],
    ['linearConfiguration under CANARY', { ...blueGreen, deployment: { strategy: 'CANARY', linearConfiguration: { stepPercent: 10 } } }, ['deployment.linearConfiguration: is only for strategy LINEAR, got strategy CANARY']],
    ['canaryConfiguration under ROLLING', { ...base, deployment: { canaryConfiguration: { canaryPercent: 10 } } }, ['deployment.canaryConfiguration: is only for strategy CANARY, got strategy ROLLING']],
    ['early success criteria under BLUE_GREEN', { ...blueGreen, deployment: { strategy: 'BLUE_GREEN', earlySuccessCriteria: { enable: true } } }, ['deployment.earlySuccessCriteria: is only for strategy ROLLING, got strategy BLUE_GREEN']],
    ['a healthy percent below the minimum', { ...base, deployment: { minimumHealthyPercent: 50, earlySuccessCriteria: { enable: true, healthyPercent: 40 } } }, ['deployment.earlySuccessCriteria.healthyPercent: must be at least minimumHealthyPercent (50), got 40']],
    ['hooks under ROLLING', { ...base, deployment: { lifecycleHooks: [{ targetType: 'PAUSE', lifecycleStages: ['POST_SCALE_UP'] }] } }, ['deployment.lifecycleHooks: need strategy BLUE_GREEN, LINEAR or CANARY (ECS runs lifecycle hooks at the stages of those deployments), got strategy ROLLING']],
    ['a Lambda hook without its function and role', { ...blueGreen, deployment: { strategy: 'BLUE_GREEN', lifecycleHooks: [{ lifecycleStages: ['POST_SCALE_UP'] }] } }, [
      'deployment.lifecycleHooks[0].hookTargetArn: is required for an AWS_LAMBDA hook (the Lambda function ECS invokes)',
      'deployment.lifecycleHooks[0].roleArn: is required for an AWS_LAMBDA hook (the IAM role ECS assumes to invoke the function)',
    ]],
    ['a hook target that is no Lambda function', { ...blueGreen, deployment: { strategy: 'BLUE_GREEN', lifecycleHooks: [{ hookTargetArn: 'check-green', roleArn: ROLE, lifecycleStages: ['POST_SCALE_UP'] }] } }, ['deployment.lifecycleHooks[0].hookTargetArn: must be a Lambda function ARN (arn:aws:lambda:REGION:ACCOUNT:function:NAME[:QUALIFIER]), got string "check-green"']],
    ['a PAUSE hook at a traffic shift, with a target', { ...blueGreen, deployment: { strategy: 'BLUE_GREEN', lifecycleHooks: [{ targetType: 'PAUSE', hookTargetArn: FN, lifecycleStages: ['PRODUCTION_TRAFFIC_SHIFT'] }] } }, [
      'deployment.lifecycleHooks[0].hookTargetArn: must not be given for a PAUSE hook (it invokes nothing; ecsr continue answers it)',
      'deployment.lifecycleHooks[0].lifecycleStages[0]: must not be PRODUCTION_TRAFFIC_SHIFT for a PAUSE hook (ECS pauses between stages, not during a traffic shift), got "PRODUCTION_TRAFFIC_SHIFT"',
    ]],
    ['an unknown stage and no stage', { ...blueGreen, deployment: { strategy: 'BLUE_GREEN', lifecycleHooks: [{ targetType: 'PAUSE', lifecycleStages: [] }, { targetType: 'PAUSE', lifecycleStages: ['BAKE_TIME'] }] } }, [
      'deployment.lifecycleHooks[0].lifecycleStages: must hold at least 1 item(s), got list []',
      'deployment.lifecycleHooks[1].lifecycleStages[0]: must be one of "RECONCILE_SERVICE", "PRE_SCALE_UP", "POST_SCALE_UP", "TEST_TRAFFIC_SHIFT", "POST_TEST_TRAFFIC_SHIFT", "PRE_PRODUCTION_TRAFFIC_SHIFT", "PRODUCTION_TRAFFIC_SHIFT", "POST_PRODUCTION_TRAFFIC_SHIFT", got string "BAKE_TIME"',
    ]],
    ['a hook timeout beyond two weeks', { ...blueGreen, deployment: { strategy: 'BLUE_GREEN', lifecycleHooks: [{ targetType: 'PAUSE', lifecycleStages: ['POST_SCALE_UP'], timeoutConfiguration: { timeoutInMinutes: 20161 } }] } }, ['deployment.lifecycleHooks[0].timeoutConfiguration.timeoutInMinutes: must be a whole number from 1 to 20160 (minutes), got 20161']],
    ['BLUE_GREEN without advancedConfiguration', { ...base, deployment: { strategy: 'BLUE_GREEN' }, loadBalancer: { targetGroupArn: TG, containerPort: 80 } }, ['loadBalancer.advancedConfiguration: is required with deployment.strategy BLUE_GREEN (ECS shifts traffic between the target group and its alternate): give alternateTargetGroupArn, productionListenerRule and roleArn']],
    ['LINEAR on loadBalancers without one', { ...base, deployment: { strategy: 'LINEAR' }, loadBalancers: [{ targetGroupArn: TG, containerName: 'web', containerPort: 80 }] }, ['loadBalancers[0].advancedConfiguration: is required with deployment.strategy LINEAR (ECS shifts traffic between the target group and its alternate): give alternateTargetGroupArn, productionListenerRule and roleArn']],
    ['CANARY with nothing to shift', { ...base, deployment: { strategy: 'CANARY' } }, ['deployment.strategy: needs a load balancer with an advancedConfiguration, Service Connect, or a VPC Lattice configuration with an advancedConfiguration (ECS shifts traffic through one of them), got strategy CANARY with none']],
    ['an alternate that is the target group', { ...base, loadBalancer: { targetGroupArn: TG, containerPort: 80, advancedConfiguration: { ...ADVANCED, alternateTargetGroupArn: TG } } }, [`loadBalancer.advancedConfiguration.alternateTargetGroupArn: must differ from targetGroupArn (ECS shifts traffic between the two), got "${TG}"`]],
    ['advancedConfiguration without its rule', { ...base, loadBalancer: { targetGroupArn: TG, containerPort: 80, advancedConfiguration: { alternateTargetGroupArn: TG2, roleArn: ROLE } } }, ['loadBalancer.advancedConfiguration.productionListenerRule: is required']],
    ['a listener rule that is a target group', { ...base, loadBalancer: { targetGroupArn: TG, containerPort: 80, advancedConfiguration: { ...ADVANCED, testListenerRule: TG2 } } }, [expect.stringMatching(/^loadBalancer\.advancedConfiguration\.testListenerRule: must be a listener rule ARN/)]],
    ['both spellings', { ...base, deployment: { minimumHealthyPercent: 50 }, deploymentConfiguration: { minimumHealthyPercent: 50 } }, ['deploymentConfiguration: must not be given with deployment: use one or the other (deploymentConfiguration is the ECS name of deployment)']],
    ['rollback without the breaker, ECS spelling', { ...base, deploymentConfiguration: { deploymentCircuitBreaker: { enable: false, rollback: true } } }, ['deploymentConfiguration.deploymentCircuitBreaker.rollback: needs enable: true (ECS rolls back only when the circuit breaker trips), got true']],
    ['a threshold of an unknown type', { ...base, deployment: { circuitBreaker: { enable: true, rollback: true, thresholdConfiguration: { type: 'PERCENT', value: 10 } } } }, [expect.stringMatching(/^deployment\.circuitBreaker\.thresholdConfiguration\.type: must be one of "COUNT", "BOUNDED_PERCENT", "UNBOUNDED_PERCENT"/)]],
    ['a Lattice port that is no named port', { ...base, vpcLatticeConfigurations: [{ roleArn: ROLE, targetGroupArn: LATTICE_TG, portName: 'http' }] }, ['vpcLatticeConfigurations[0].portName: must be the name of a port mapping of the task (none named), got "http"']],
    ['a Lattice target group of ELB', { ...base, vpcLatticeConfigurations: [{ roleArn: ROLE, targetGroupArn: TG, portName: 'http' }] }, [
      expect.stringMatching(/^vpcLatticeConfigurations\[0\]\.targetGroupArn: must be a VPC Lattice target group ARN/),
      'vpcLatticeConfigurations[0].portName: must be the name of a port mapping of the task (none named), got "http"',
    ]],
    ['a test traffic rule without its header', { ...base, serviceConnectConfiguration: { enabled: true, services: [] , namespace: 'ns' }, containers: undefined }, []],
  ])('%s', (_name, item, expected) => {
    expect(errorsOf(item as Record<string, unknown>)).toEqual(expected);
  });
});

/**
 * Services under ECS's native deployment strategies (BLUE_GREEN, LINEAR, CANARY) for the
 * reconciler's tests: a spec with a load balancer converged by the reconciler, then given a
 * native strategy and the load balancer's advancedConfiguration by hand (the spec does not speak
 * them), as a person moving a service from rolling to blue/green would.
 */
import {
  DescribeServiceDeploymentsCommand,
  DescribeServicesCommand,
  ListServiceDeploymentsCommand,
  UpdateServiceCommand,
  type DeploymentConfiguration,
  type ECSClient,
  type ServiceDeployment,
} from '@aws-sdk/client-ecs';
import { aSpecItem, personEcs, type SimHarness } from '../break/support';

export const TG_BLUE = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/web-blue/1111111111111111';
export const TG_GREEN = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/web-green/2222222222222222';
export const PROD_RULE = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener-rule/app/lb/1/2/prod';
export const TEST_RULE = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener-rule/app/lb/1/2/test';
export const ROLE = 'arn:aws:iam::123456789012:role/ecs-infrastructure';
export const HOOK_FN = 'arn:aws:lambda:us-east-1:123456789012:function:check-green';
export const WEB = { cluster: 'apps', service: 'web' };

/** The spec item of the native service: `web` behind the blue target group. */
export function nativeSpecItem(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return aSpecItem({ containerPort: 80, loadBalancer: { targetGroupArn: TG_BLUE, containerPort: 80 }, ...overrides });
}

/**
 * `apps/web` converged by the reconciler, then moved by hand to `cfg`'s strategy
 * ({@link moveToNative}); the reconciler's passes meanwhile write nothing (the strategy is not the
 * spec's).
 */
export async function nativeService(h: SimHarness, cfg: DeploymentConfiguration): Promise<void> {
  await h.putSpec(nativeSpecItem());
  await h.converge();
  const ecs = personEcs(h);
  try {
    await moveToNative(ecs, 'apps', cfg, (s) => h.sim.advance(s));
  } finally {
    ecs.destroy();
  }
  await h.converge();
}

/**
 * Moves `cluster/web` to `cfg`'s strategy by hand: a first UpdateService sets the strategy (no
 * hooks, no bake) with the load balancer's advancedConfiguration, which runs one native deployment
 * of the same revision to its end (`advance` moves the simulator's clock by seconds); a second
 * sets `cfg` whole (a deploymentConfiguration change starts no deployment).
 */
export async function moveToNative(ecs: ECSClient, cluster: string, cfg: DeploymentConfiguration, advance: (seconds: number) => void): Promise<void> {
  const live = (await ecs.send(new DescribeServicesCommand({ cluster, services: ['web'] }))).services?.[0];
  const base = live?.deploymentConfiguration ?? {};
  const lb = { ...live?.loadBalancers?.[0], advancedConfiguration: { alternateTargetGroupArn: TG_GREEN, productionListenerRule: PROD_RULE, testListenerRule: TEST_RULE, roleArn: ROLE } };
  await ecs.send(new UpdateServiceCommand({ cluster, service: 'web', deploymentConfiguration: { ...base, strategy: cfg.strategy, bakeTimeInMinutes: 0 }, loadBalancers: [lb] }));
  await untilNewest(ecs, cluster, (sd) => sd.status === 'SUCCESSFUL', 'the move to a native strategy', advance);
  await ecs.send(new UpdateServiceCommand({ cluster, service: 'web', deploymentConfiguration: { ...base, ...cfg } }));
}

/** `cluster/web`'s newest service deployment as DescribeServiceDeployments answers it. */
export async function newestOf(ecs: ECSClient, cluster = 'apps'): Promise<ServiceDeployment> {
  const listed = await ecs.send(new ListServiceDeploymentsCommand({ cluster, service: 'web' }));
  const arn = listed.serviceDeployments?.[0]?.serviceDeploymentArn;
  if (!arn) throw new Error(`${cluster}/web has no service deployment`);
  return (await ecs.send(new DescribeServiceDeploymentsCommand({ serviceDeploymentArns: [arn] }))).serviceDeployments?.[0] as ServiceDeployment;
}

/** `apps/web`'s newest service deployment, read with a person's client. */
export async function newestDeployment(h: SimHarness): Promise<ServiceDeployment> {
  const ecs = personEcs(h);
  try {
    return await newestOf(ecs);
  } finally {
    ecs.destroy();
  }
}

/** Advances 5 s at a time (at most 30 min) until `cluster/web`'s newest service deployment satisfies `done`. */
export async function untilNewest(ecs: ECSClient, cluster: string, done: (sd: ServiceDeployment) => boolean, what: string, advance: (seconds: number) => void): Promise<ServiceDeployment> {
  for (let t = 0; t <= 1800; t += 5) {
    const sd = await newestOf(ecs, cluster);
    if (done(sd)) return sd;
    advance(5);
  }
  throw new Error(`not reached within 1800 virtual seconds: ${what}`);
}

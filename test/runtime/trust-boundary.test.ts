/**
 * The trust boundary against the ECS simulator and dynalite: what a person who can write the spec
 * table cannot make the reconciler do. Each case checks the item's status and that the simulator
 * saw no ECS write for it.
 */
import { CreateServiceCommand, ECSClient, RegisterTaskDefinitionCommand } from '@aws-sdk/client-ecs';
import { describe, expect, it } from 'vitest';
import { ENV } from '../../lambda/config';
import { OWNER_TAG_KEY } from '../../lambda/core/ports';
import { Reason } from '../../lambda/core/status';
import type { ServiceStatus } from '../../lambda/core/types';
import { aSpecItem, isEcsWrite, LOCAL, type SimHarness, useSimHarness } from './support';

const WEB = { cluster: 'apps', service: 'web' };

/** Creates a service by hand (as a person or another tool would), with these tags. */
async function aServiceMadeByHand(h: SimHarness, service: string, tags: Record<string, string>): Promise<void> {
  const ecs = new ECSClient({ ...LOCAL, endpoint: h.sim.endpoint });
  try {
    const td = await ecs.send(
      new RegisterTaskDefinitionCommand({
        family: `hand-${service}`,
        networkMode: 'awsvpc',
        requiresCompatibilities: ['FARGATE'],
        cpu: '256',
        memory: '512',
        containerDefinitions: [{ name: service, image: 'public.ecr.aws/nginx/nginx:1.25', essential: true }],
      }),
    );
    await ecs.send(
      new CreateServiceCommand({
        cluster: 'apps',
        serviceName: service,
        taskDefinition: td.taskDefinition?.taskDefinitionArn,
        desiredCount: 1,
        launchType: 'FARGATE',
        networkConfiguration: { awsvpcConfiguration: { subnets: ['subnet-0123456789abcdef0'] } },
        ...(Object.keys(tags).length > 0 ? { tags: Object.entries(tags).map(([key, value]) => ({ key, value })) } : {}),
      }),
    );
  } finally {
    ecs.destroy();
  }
}

function blockedReason(status: ServiceStatus | undefined): string | undefined {
  return status?.conditions.find((c) => c.type === 'Blocked')?.reason;
}

describe('adoption', () => {
  const h = useSimHarness();

  it('adopt: true never takes a service another reconciler owns: OwnedByAnother, no ECS write', async () => {
    // Prepare
    await aServiceMadeByHand(h, 'web', { [OWNER_TAG_KEY]: 'team-b' });
    await h.putSpec(aSpecItem({ adopt: true, desiredCount: 3 }));
    h.sim.clearCalls();
    // Act
    await h.pass('p1');
    // Assess
    const status = await h.status(WEB);
    expect(status?.phase).toBe('Blocked');
    expect(blockedReason(status)).toBe(Reason.OwnedByAnother);
    expect(h.writes()).toEqual([]);
    expect((await h.describe('apps', 'web'))?.tags).toEqual([{ key: OWNER_TAG_KEY, value: 'team-b' }]);
  });

  it('with ALLOW_ADOPTION=false, adopt: true on an untagged service is NotAllowed, no ECS write', async () => {
    // Prepare
    await h.reset({ env: { [ENV.allowAdoption]: 'false' } });
    await aServiceMadeByHand(h, 'web', {});
    await h.putSpec(aSpecItem({ adopt: true, desiredCount: 3 }));
    h.sim.clearCalls();
    // Act
    await h.pass('p1');
    // Assess
    const status = await h.status(WEB);
    expect(blockedReason(status)).toBe(Reason.NotAllowed);
    expect(status?.conditions.find((c) => c.type === 'Blocked')?.message).toContain('ALLOW_ADOPTION');
    expect(h.writes()).toEqual([]);
  });

  it('with adoption allowed (the CLI default), adopt: true tags the untagged service with our owner id', async () => {
    // Prepare
    await aServiceMadeByHand(h, 'web', {});
    await h.putSpec(aSpecItem({ adopt: true, desiredCount: 1 }));
    h.sim.clearCalls();
    // Act
    await h.pass('p1');
    // Assess
    expect(h.writes()[0]).toBe('TagResource');
    expect((await h.describe('apps', 'web'))?.tags).toContainEqual({ key: OWNER_TAG_KEY, value: 'sim-test' });
  });
});

describe('allow-lists (ALLOWED_*): a spec outside them is NotAllowed with no ECS write; the others converge', () => {
  const h = useSimHarness();
  const ACCOUNT = '123456789012';
  const TG = (n: string) => `arn:aws:elasticloadbalancing:us-east-1:${ACCOUNT}:targetgroup/${n}/0123456789abcdef`;
  const SSM = (p: string) => `arn:aws:ssm:us-east-1:${ACCOUNT}:parameter/${p}`;
  const ROLE = (n: string) => `arn:aws:iam::${ACCOUNT}:role/${n}`;
  const ALLOWED = {
    [ENV.allowedSubnets]: 'subnet-0123456789abcdef0',
    [ENV.allowedSecurityGroups]: 'sg-0123456789abcdef0',
    [ENV.allowedAssignPublicIp]: 'DISABLED',
    [ENV.allowedTargetGroupArns]: `arn:aws:elasticloadbalancing:us-east-1:${ACCOUNT}:targetgroup/apps-*`,
    [ENV.allowedSecrets]: `${SSM('apps/')}*`,
    [ENV.allowedImageRegistries]: 'public.ecr.aws',
    [ENV.allowedEfsFileSystems]: 'fs-0123456789abcdef0',
    [ENV.allowedTaskRoleArns]: ROLE('apps-task'),
    [ENV.allowedExecutionRoleArns]: ROLE('apps-exec'),
  };
  const sidecar = (overrides: Record<string, unknown>) => ({ name: 'agent', image: 'public.ecr.aws/datadog/agent:7', essential: false, ...overrides });

  it.each([
    { case: 'subnet', spec: { subnets: ['subnet-0fffffffffffffff0'] }, says: 'subnets[0] subnet-0fffffffffffffff0 is not in the allow-list ALLOWED_SUBNETS' },
    { case: 'security group', spec: { securityGroups: ['sg-0fffffffffffffff0'] }, says: 'securityGroups[0] sg-0fffffffffffffff0 is not in the allow-list ALLOWED_SECURITY_GROUPS' },
    { case: 'assignPublicIp', spec: { assignPublicIp: true }, says: 'assignPublicIp ENABLED is not in the allow-list ALLOWED_ASSIGN_PUBLIC_IP [DISABLED]' },
    {
      case: 'target group',
      spec: { containerPort: 80, loadBalancers: [{ targetGroupArn: TG('other-web'), containerName: 'web', containerPort: 80 }] },
      says: `loadBalancers[0].targetGroupArn ${TG('other-web')} is not in the allow-list ALLOWED_TARGET_GROUP_ARNS`,
    },
    { case: 'shorthand secret', spec: { secrets: { DB: SSM('payments/db') } }, says: `secrets.DB ${SSM('payments/db')} is not in the allow-list ALLOWED_SECRETS` },
    {
      case: 'sidecar secret',
      spec: { containers: [sidecar({ secrets: [{ name: 'KEY', valueFrom: SSM('payments/key') }] })] },
      says: `containers[0].secrets[0].valueFrom ${SSM('payments/key')} is not in the allow-list ALLOWED_SECRETS`,
    },
    {
      case: 'log driver secretOptions',
      spec: {
        containers: [
          sidecar({
            logConfiguration: { logDriver: 'splunk', options: { 'splunk-url': 'https://splunk.example.com' }, secretOptions: [{ name: 'splunk-token', valueFrom: SSM('payments/splunk') }] },
          }),
        ],
      },
      says: `containers[0].logConfiguration.secretOptions[0].valueFrom ${SSM('payments/splunk')} is not in the allow-list ALLOWED_SECRETS`,
    },
    {
      case: 'repository credentials',
      spec: { containers: [sidecar({ image: 'public.ecr.aws/acme/agent:1', repositoryCredentials: { credentialsParameter: `arn:aws:secretsmanager:us-east-1:${ACCOUNT}:secret:pull-AbCdEf` } })] },
      says: 'containers[0].repositoryCredentials.credentialsParameter arn:aws:secretsmanager:us-east-1:123456789012:secret:pull-AbCdEf is not in the allow-list ALLOWED_SECRETS',
    },
    { case: 'task role', spec: { taskRoleArn: ROLE('admin') }, says: `taskRoleArn ${ROLE('admin')} is not in the allow-list ALLOWED_TASK_ROLE_ARNS [${ROLE('apps-task')}]` },
    {
      case: 'execution role',
      spec: { executionRoleArn: ROLE('admin') },
      says: `executionRoleArn ${ROLE('admin')} is not in the allow-list ALLOWED_EXECUTION_ROLE_ARNS [${ROLE('apps-exec')}]`,
    },
    { case: 'image registry', spec: { image: 'ghcr.io/acme/web:1' }, says: 'image ghcr.io/acme/web:1 (registry ghcr.io) is not in the allow-list ALLOWED_IMAGE_REGISTRIES [public.ecr.aws]' },
    {
      case: 'EFS file system',
      spec: {
        volumes: [{ name: 'data', efsVolumeConfiguration: { fileSystemId: 'fs-0fffffffffffffff0' } }],
        containers: [sidecar({ mountPoints: [{ sourceVolume: 'data', containerPath: '/data' }] })],
      },
      says: 'volumes[0].efsVolumeConfiguration.fileSystemId fs-0fffffffffffffff0 is not in the allow-list ALLOWED_EFS_FILE_SYSTEMS [fs-0123456789abcdef0]',
    },
  ])('$case outside its list: NotAllowed naming path, value and list; the allowed service beside it is created', async ({ spec, says }) => {
    // Prepare
    await h.reset({ env: ALLOWED });
    await h.putSpec(aSpecItem({ service: 'ok', desiredCount: 1 }));
    await h.putSpec(aSpecItem({ desiredCount: 1, ...spec }));
    // Act
    await h.pass('p1');
    // Assess: only the allowed service reached ECS.
    const status = await h.status(WEB);
    expect(status?.phase).toBe('Blocked');
    expect(blockedReason(status)).toBe(Reason.NotAllowed);
    expect(status?.conditions.find((c) => c.type === 'Blocked')?.message).toContain(says);
    expect(await h.describe('apps', 'web')).toBeUndefined();
    const written = h.sim.calls().filter((c) => isEcsWrite(c.action));
    expect(written.map((c) => `${c.action} ${String(c.request.serviceName ?? c.request.family)}`)).toEqual([
      'RegisterTaskDefinition apps-ok',
      'CreateService ok',
    ]);
    expect((await h.describe('apps', 'ok'))?.status).toBe('ACTIVE');
  });

  it('an owned service whose spec moves outside a list is not updated (not even its desiredCount); it resumes once the spec is allowed again', async () => {
    // Prepare: converged inside the lists.
    await h.reset({ env: ALLOWED });
    await h.putSpec(aSpecItem({ desiredCount: 1 }));
    await h.putSpec(aSpecItem({ service: 'ok', desiredCount: 1 }));
    await h.converge();
    await h.editSpec(WEB, { desiredCount: 3, secrets: { DB: SSM('payments/db') } });
    await h.editSpec({ cluster: 'apps', service: 'ok' }, { desiredCount: 2 });
    h.sim.clearCalls();
    // Act
    const refused = await h.pass('refused');
    await h.editSpec(WEB, { secrets: { DB: SSM('apps/db') } });
    h.sim.advance(60);
    const allowed = await h.pass('allowed');
    // Assess
    expect(refused.actions.map((a) => `${a.service} ${a.type}`)).toEqual(['ok UpdateService']);
    expect(blockedReason(refused.statuses['apps/web'])).toBe(Reason.NotAllowed);
    expect((await h.describe('apps', 'ok'))?.desiredCount).toBe(2);
    expect(allowed.actions.map((a) => `${a.service} ${a.type}`)).toEqual(['web RegisterTaskDefinition', 'web UpdateService']);
    expect((await h.describe('apps', 'web'))?.desiredCount).toBe(3);
  });
});

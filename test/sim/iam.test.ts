/**
 * The simulator's IAM: a caller given a policy (`Caller.policy`) is authorized as ECS asks IAM
 * (resource ARNs, `ecs:cluster`, resource and request tags, tag-on-create, `ecs:task-definition`,
 * `ecs:subnet`, `ecs:auto-assign-public-ip`) and refused with AccessDeniedException in AWS's
 * words; a caller without a policy is not restricted.
 */
import { CreateClusterCommand, CreateServiceCommand, ECSClient, ListServicesCommand, RegisterTaskDefinitionCommand, TagResourceCommand, UpdateServiceCommand } from '@aws-sdk/client-ecs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../local/sim';
import { assumedRoleIdentity } from '../../local/sim/events';
import type { IamPolicyStatement } from '../../local/sim/iam';
import { aService, aTaskDefinition, ecsClient } from './helpers';

const ARN = 'arn:aws:ecs:us-east-1:123456789012';
const KEY = 'ASIAPOLICYTEST000001';
const ROLE_ARN = 'arn:aws:sts::123456789012:assumed-role/deployer/ci';

describe('IAM in the simulator', () => {
  let sim: Simulator;
  let admin: ECSClient;
  let ci: ECSClient;
  const withPolicy = (policy: IamPolicyStatement[]) =>
    sim.setCaller(KEY, { identity: assumedRoleIdentity('123456789012', 'deployer', 'ci', KEY), userAgent: 'test', sourceIPAddress: '127.0.0.1', policy });
  const denied = async (p: Promise<unknown>) => {
    const e = (await p.then(() => undefined, (x: unknown) => x)) as { name?: string; message?: string } | undefined;
    return e ? `${e.name}: ${e.message}` : 'allowed';
  };

  beforeAll(async () => {
    sim = await startSimulator({ throttling: false });
    admin = ecsClient(sim, { maxAttempts: 1 });
    ci = new ECSClient({ region: 'us-east-1', endpoint: sim.endpoint, credentials: { accessKeyId: KEY, secretAccessKey: 'x' }, maxAttempts: 1 });
  });
  afterAll(async () => {
    admin.destroy();
    ci.destroy();
    await sim.close();
  });
  beforeEach(async () => {
    sim.reset();
    await admin.send(new CreateClusterCommand({ clusterName: 'c1', capacityProviders: ['FARGATE', 'FARGATE_SPOT'] }));
    await admin.send(new RegisterTaskDefinitionCommand(aTaskDefinition()));
  });

  it('ListServices: on "*" with ecs:cluster; another cluster is refused in AWS\'s words', async () => {
    withPolicy([{ Effect: 'Allow', Action: ['ecs:ListServices'], Resource: ['*'], Condition: { ArnEquals: { 'ecs:cluster': [`${ARN}:cluster/c1`] } } }]);
    expect(await denied(ci.send(new ListServicesCommand({ cluster: 'c1' })))).toBe('allowed');
    expect(await denied(ci.send(new ListServicesCommand({ cluster: 'c2' })))).toBe(
      `AccessDeniedException: User: ${ROLE_ARN} is not authorized to perform: ecs:ListServices on resource: * because no identity-based policy allows the ecs:ListServices action`,
    );
    // A caller without a policy (the admin client) is not restricted.
    expect(await denied(admin.send(new ListServicesCommand({ cluster: 'c2' })))).not.toMatch(/AccessDenied/);
  });

  it('CreateService with tags also needs ecs:TagResource with ecs:CreateAction', async () => {
    const create: IamPolicyStatement = { Effect: 'Allow', Action: ['ecs:CreateService'], Resource: [`${ARN}:service/c1/*`], Condition: { StringEquals: { 'aws:RequestTag/owner': 'me' } } };
    withPolicy([create]);
    const req = aService({ taskDefinition: 'web', tags: [{ key: 'owner', value: 'me' }] });
    expect(await denied(ci.send(new CreateServiceCommand(req)))).toBe(
      `AccessDeniedException: User: ${ROLE_ARN} is not authorized to perform: ecs:TagResource on resource: ${ARN}:service/c1/web because no identity-based policy allows the ecs:TagResource action`,
    );
    withPolicy([create, { Effect: 'Allow', Action: ['ecs:TagResource'], Resource: ['*'], Condition: { StringEquals: { 'ecs:CreateAction': 'CreateService' } } }]);
    expect(await denied(ci.send(new CreateServiceCommand(req)))).toBe('allowed');
    // Without the tag the request carries no aws:RequestTag: the CreateService statement does not apply.
    expect(await denied(ci.send(new CreateServiceCommand(aService({ serviceName: 'api', taskDefinition: 'web' }))))).toMatch(/not authorized to perform: ecs:CreateService on resource: .*:service\/c1\/api/);
  });

  it('UpdateService: the service\'s own tags, the task definition ARN and the subnets are in the request', async () => {
    await admin.send(new CreateServiceCommand(aService({ taskDefinition: 'web', tags: [{ key: 'owner', value: 'me' }] })));
    await admin.send(new CreateServiceCommand(aService({ serviceName: 'theirs', taskDefinition: 'web' })));
    withPolicy([
      {
        Effect: 'Allow',
        Action: ['ecs:UpdateService'],
        Resource: [`${ARN}:service/c1/*`],
        Condition: {
          StringEquals: { 'aws:ResourceTag/owner': 'me' },
          ArnLikeIfExists: { 'ecs:task-definition': [`${ARN}:task-definition/web:*`] },
          'ForAllValues:StringLike': { 'ecs:subnet': ['subnet-0a1b*'] },
          StringEqualsIfExists: { 'ecs:auto-assign-public-ip': 'false' },
        },
      },
    ]);
    const update = (over: Record<string, unknown>) => denied(ci.send(new UpdateServiceCommand({ cluster: 'c1', service: 'web', ...over })));
    expect(await update({ desiredCount: 3 })).toBe('allowed');
    // `web` (the family alone) is authorized as the revision's full ARN.
    expect(await update({ taskDefinition: 'web' })).toBe('allowed');
    expect(await update({ networkConfiguration: { awsvpcConfiguration: { subnets: ['subnet-0a1b2c3d'] } } })).toBe('allowed');
    expect(await update({ networkConfiguration: { awsvpcConfiguration: { subnets: ['subnet-0a1b2c3d', 'subnet-9999'] } } })).toMatch(/AccessDeniedException/);
    expect(await update({ networkConfiguration: { awsvpcConfiguration: { subnets: ['subnet-0a1b2c3d'], assignPublicIp: 'ENABLED' } } })).toMatch(/AccessDeniedException/);
    expect(await denied(ci.send(new UpdateServiceCommand({ cluster: 'c1', service: 'theirs', desiredCount: 3 })))).toMatch(
      /not authorized to perform: ecs:UpdateService on resource: arn:aws:ecs:us-east-1:123456789012:service\/c1\/theirs/,
    );
    await admin.send(new RegisterTaskDefinitionCommand(aTaskDefinition({ family: 'other' })));
    expect(await update({ taskDefinition: 'other:1' })).toMatch(/AccessDeniedException/);
  });

  it('an explicit Deny wins, and says so', async () => {
    await admin.send(new CreateServiceCommand(aService({ taskDefinition: 'web' })));
    withPolicy([
      { Effect: 'Allow', Action: ['ecs:*'], Resource: ['*'] },
      { Effect: 'Deny', Action: ['ecs:TagResource'], Resource: ['*'], Condition: { 'ForAnyValue:StringEquals': { 'aws:TagKeys': ['owner'] } } },
    ]);
    expect(await denied(ci.send(new TagResourceCommand({ resourceArn: `${ARN}:service/c1/web`, tags: [{ key: 'team', value: 'a' }] })))).toBe('allowed');
    expect(await denied(ci.send(new TagResourceCommand({ resourceArn: `${ARN}:service/c1/web`, tags: [{ key: 'owner', value: 'x' }] })))).toBe(
      `AccessDeniedException: User: ${ROLE_ARN} is not authorized to perform: ecs:TagResource on resource: ${ARN}:service/c1/web with an explicit deny in an identity-based policy`,
    );
    expect(sim.calls({ action: 'TagResource' }).map((c) => c.outcome)).toEqual(['ok', 'AccessDeniedException']);
  });
});

/**
 * `ecsr verify -f FILE` and the checks `ecsr apply` runs, end to end through the CLI (in process): ECS
 * is the simulator (clusters, capacity providers), and ECR, IAM, Secrets Manager, SSM, EC2 and
 * Elastic Load Balancing are moto, with one resource of each kind created here. A spec naming
 * only what exists passes every check; a spec naming what does not exist gets one problem per
 * resource, exit code 1, and nothing written; apply runs the same checks and warns (with
 * --no-verify only the ECS ones), within --verify-timeout, and writes all the same.
 */
import { CreateSecurityGroupCommand, DescribeSubnetsCommand, EC2Client } from '@aws-sdk/client-ec2';
import { CreateRepositoryCommand, ECRClient, PutImageCommand } from '@aws-sdk/client-ecr';
import { CreateTargetGroupCommand, ElasticLoadBalancingV2Client } from '@aws-sdk/client-elastic-load-balancing-v2';
import { CreateRoleCommand, IAMClient } from '@aws-sdk/client-iam';
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_CLIENT_CONFIG, startMoto, type MotoServer } from '../support/moto';
import { needs } from '../support/tools';
import { createHandMadeService, useCliStack } from './harness';
import { ecsr } from '../support/cli-in-process';

const ACCOUNT = '123456789012';
const REGISTRY = `${ACCOUNT}.dkr.ecr.us-east-1.amazonaws.com`;
/** A Docker image manifest (schema 2), the smallest that ECR's PutImage takes; moto keeps it as given. */
const MANIFEST = JSON.stringify({
  schemaVersion: 2,
  mediaType: 'application/vnd.docker.distribution.manifest.v2+json',
  config: { mediaType: 'application/vnd.docker.container.image.v1+json', size: 2, digest: `sha256:${'a'.repeat(64)}` },
  layers: [],
});

describe('ecsr verify against the simulator and moto', needs('moto'), () => {
  const harness = useCliStack('v');
  let moto: MotoServer;
  const made = { subnet: '', securityGroup: '', targetGroupArn: '', secretArn: '', parameterArn: `arn:aws:ssm:us-east-1:${ACCOUNT}:parameter/web/api-key` };

  beforeAll(async () => {
    moto = await startMoto();
    const config = { ...LOCAL_CLIENT_CONFIG, endpoint: moto.endpoint };
    const ecr = new ECRClient(config);
    await ecr.send(new CreateRepositoryCommand({ repositoryName: 'web' }));
    await ecr.send(new PutImageCommand({ repositoryName: 'web', imageTag: '1.0', imageManifest: MANIFEST }));
    const iam = new IAMClient(config);
    // The trust policy ECS documents for task and execution roles; `lambda-only` trusts another service.
    const trust = (Service: string) =>
      JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: { Service }, Action: 'sts:AssumeRole' }] });
    for (const RoleName of ['web-task', 'web-execution']) {
      await iam.send(new CreateRoleCommand({ RoleName, AssumeRolePolicyDocument: trust('ecs-tasks.amazonaws.com') }));
    }
    await iam.send(new CreateRoleCommand({ RoleName: 'lambda-only', AssumeRolePolicyDocument: trust('lambda.amazonaws.com') }));
    const ec2 = new EC2Client(config);
    const subnet = (await ec2.send(new DescribeSubnetsCommand({}))).Subnets?.[0];
    made.subnet = subnet?.SubnetId ?? '';
    made.securityGroup = (await ec2.send(new CreateSecurityGroupCommand({ GroupName: 'web', Description: 'web', VpcId: subnet?.VpcId }))).GroupId ?? '';
    const elb = new ElasticLoadBalancingV2Client(config);
    made.targetGroupArn =
      (await elb.send(new CreateTargetGroupCommand({ Name: 'web', Protocol: 'HTTP', Port: 80, VpcId: subnet?.VpcId, TargetType: 'ip' }))).TargetGroups?.[0].TargetGroupArn ?? '';
    made.secretArn = (await new SecretsManagerClient(config).send(new CreateSecretCommand({ Name: 'web/db', SecretString: 'x' }))).ARN ?? '';
    await new SSMClient(config).send(new PutParameterCommand({ Name: '/web/api-key', Value: 'x', Type: 'SecureString' }));
    for (const c of [ecr, iam, ec2, elb]) c.destroy();
  });
  afterAll(async () => {
    await moto?.stop();
  });

  /** A spec naming one resource of each kind; `missing` names ones that do not exist instead. */
  const specText = (cluster: string, missing = false, service = 'web') =>
    [
      `cluster: ${cluster}`,
      `service: ${service}`,
      `image: ${REGISTRY}/web:${missing ? '9.9' : '1.0'}`,
      'desiredCount: 1',
      'containerPort: 80',
      `taskRoleArn: arn:aws:iam::${ACCOUNT}:role/${missing ? 'nope-task' : 'web-task'}`,
      `executionRoleArn: arn:aws:iam::${ACCOUNT}:role/${missing ? 'lambda-only' : 'web-execution'}`,
      'secrets:',
      `  DB_PASSWORD: "${missing ? made.secretArn.replace('web/db', 'web/nope') : `${made.secretArn}:password::`}"`,
      `  API_KEY: ${missing ? made.parameterArn.replace('api-key', 'nope') : made.parameterArn}`,
      `subnets: [${missing ? 'subnet-0000000000000dead' : made.subnet}]`,
      `securityGroups: [${missing ? 'sg-0000000000000dead' : made.securityGroup}]`,
      `loadBalancer: { targetGroupArn: "${missing ? made.targetGroupArn.replace('/web/', '/nope/') : made.targetGroupArn}", containerPort: 80 }`,
      '',
    ].join('\n');

  it('passes every check of a spec that names what exists, and writes nothing', async () => {
    // Prepare
    const c = await harness.aCase();
    const env = { ...c.env, AWS_ENDPOINT_URL: moto.endpoint };

    // Act
    const r = await ecsr(['verify', '-f', c.file('good.yaml', specText(c.cluster))], { env });

    // Assess
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    for (const check of ['cluster', 'capacity provider', 'service', 'image', 'task role', 'execution role', 'secret', 'subnet', 'security group', 'target group']) {
      expect(r.stdout).toMatch(new RegExp(`^ {2}ok {10}${check} `, 'm'));
    }
    expect(r.stdout).toMatch(/ok {10}service web: service web does not exist yet; the first pass creates it/);
    expect(r.stdout).toMatch(/ok {10}task role \S+: IAM role web-task exists and trusts ecs-tasks\.amazonaws\.com/);
    expect(r.stdout).not.toMatch(/PROBLEM|not checked/);
    expect(r.stdout).toMatch(/^All 11 checks of 1 spec passed\.$/m);
    expect(await c.items()).toEqual([]);
  });

  it('names each missing resource in its own words, exit code 1, nothing written', async () => {
    // Prepare
    const c = await harness.aCase();
    const env = { ...c.env, AWS_ENDPOINT_URL: moto.endpoint };

    // Act
    const r = await ecsr(['verify', '-f', c.file('bad.yaml', specText('v-missing', true))], { env });

    // Assess
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^ecsr verify: 9 problems in 1 of 1 spec: what they name do not exist or cannot be used as the spec says; nothing was written\.\n/);
    for (const problem of [
      /cluster v-missing: cluster v-missing does not exist; the reconciler never creates clusters/,
      /image \S+\/web:9\.9: ECR repository web has no image with tag 9\.9: push it first/,
      /task role \S+: IAM has no role nope-task/,
      /execution role \S+: IAM role lambda-only does not let ECS tasks assume it: its trust policy needs an Allow of sts:AssumeRole for the service principal ecs-tasks\.amazonaws\.com/,
      /secret \S+web\/nope-\S+: Secrets Manager has no secret /,
      /secret \S+parameter\/web\/nope: SSM Parameter Store has no parameter \/web\/nope/,
      /subnet subnet-0000000000000dead: EC2 has no subnet subnet-0000000000000dead/,
      /security group sg-0000000000000dead: EC2 has no security group sg-0000000000000dead/,
      /target group \S+\/nope\/\S+: Elastic Load Balancing has no target group/,
    ]) {
      expect(r.stderr).toMatch(problem);
    }
    expect(r.stdout).not.toMatch(/^ {2}ok /m);
    expect(await c.items()).toEqual([]);
  });

  it('says whether the reconciler may manage a service that already exists: NotOwned without adopt, fine with it', async () => {
    // Prepare: a service made by hand (no owner tag) in the case's cluster
    const c = await harness.aCase();
    const env = { ...c.env, AWS_ENDPOINT_URL: moto.endpoint };
    await createHandMadeService(harness.stack().ecsClientConfig, c.cluster, 'web');

    // Act
    const plain = await ecsr(['verify', '-f', c.file('plain.yaml', specText(c.cluster))], { env });
    const adopting = await ecsr(['verify', '-f', c.file('adopt.yaml', `${specText(c.cluster)}adopt: true\n`)], { env });

    // Assess
    expect(plain.code).toBe(1);
    expect(plain.stderr).toMatch(/^ecsr verify: 1 problem in 1 of 1 spec: what it names does not exist or cannot be used as the spec says; nothing was written\.\n/);
    expect(plain.stderr).toContain(
      `${c.cluster}/web: service web: service web exists without the owner tag ecs-reconciler:owner=ecs-reconciler, so the reconciler leaves it alone (NotOwned): set adopt: true, or run ecsr import ${c.cluster}/web --apply`,
    );
    expect(adopting.stderr).toBe('');
    expect(adopting.code).toBe(0);
    expect(adopting.stdout).toMatch(/ok {10}service web: service web exists without the owner tag; adopt: true, so the next pass takes it over/);
  });

  it('apply runs the same checks and warns, --no-verify keeps only the ECS ones, and the spec is written either way', async () => {
    // Prepare
    const c = await harness.aCase();
    const env = { ...c.env, AWS_ENDPOINT_URL: moto.endpoint };
    const file = c.file('bad.yaml', specText('v-missing', true));

    // Act
    const checked = await ecsr(['apply', '-f', file], { env });
    const ecsOnly = await ecsr(['apply', '-f', file, '--no-verify'], { env });

    // Assess
    expect(checked.code).toBe(0);
    const warnings = checked.stderr.split('\n').filter((l) => l !== '');
    expect(warnings).toHaveLength(9);
    expect(warnings.every((l) => l.startsWith('warning: v-missing/web: '))).toBe(true);
    expect(checked.stderr).toMatch(/^warning: v-missing\/web: cluster v-missing: cluster v-missing does not exist; the reconciler never creates clusters \(aws ecs create-cluster --cluster-name v-missing\)$/m);
    expect(checked.stderr).toMatch(/^warning: v-missing\/web: image \S+: ECR repository web has no image with tag 9\.9/m);
    expect(checked.stdout).toBe('v-missing/web created\n');
    expect(ecsOnly.code).toBe(0);
    expect(ecsOnly.stderr).toBe('warning: v-missing/web: cluster v-missing: cluster v-missing does not exist; the reconciler never creates clusters (aws ecs create-cluster --cluster-name v-missing)\n');
    expect(ecsOnly.stdout).toBe('v-missing/web unchanged\n');
  });

  it('apply gives up on checks that get no answer within --verify-timeout and writes the spec', async () => {
    // Prepare: every service but ECS (the simulator) is a server that accepts connections and never answers
    const c = await harness.aCase();
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => void sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const env = { ...c.env, AWS_ENDPOINT_URL: `http://127.0.0.1:${(silent.address() as AddressInfo).port}` };

    // Act
    const r = await ecsr(['apply', '-f', c.file('good.yaml', specText(c.cluster)), '--verify-timeout', '4s'], { env, timeoutMs: 40_000 }).finally(() => {
      for (const s of sockets) s.destroy();
      silent.close();
    });

    // Assess
    expect(r.stderr).toBe(
      'warning: 8 checks got no answer within 4 s (image, task role, execution role, secret, subnet, security group, target group); ' +
        'the specs are written all the same (ecsr verify -f FILE waits for every answer)\n',
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${c.cluster}/web created\n`);
    expect(await c.items()).toHaveLength(1);
  });
});


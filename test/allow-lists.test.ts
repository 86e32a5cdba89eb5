/**
 * Allow-lists: which values of a spec each list governs (with the spec path),
 * the matching rules (exact, trailing `*` prefix, registry host / repository prefix), and the
 * planner's NotAllowed status naming the path, the value and the list, with no action.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig, ENV } from '../lambda/config';
import { ALLOW_LIST, allowListedValues, allowListViolations, entryMatches, imageAllowed, type AllowLists } from '../lambda/core/allow-lists';
import { plan } from '../lambda/core/planner';
import { parseSpecItem } from '../lambda/core/spec';
import { Reason } from '../lambda/core/status';
import type { ServiceSpec } from '../lambda/core/types';
import { aPlanInput, planOptions } from './support/builders';

const ACCOUNT = '123456789012';
const TG = (n: string) => `arn:aws:elasticloadbalancing:eu-west-1:${ACCOUNT}:targetgroup/${n}/0123456789abcdef`;
const SSM = (p: string) => `arn:aws:ssm:eu-west-1:${ACCOUNT}:parameter/${p}`;
const SECRET = (n: string) => `arn:aws:secretsmanager:eu-west-1:${ACCOUNT}:secret:${n}`;
const ROLE = (n: string) => `arn:aws:iam::${ACCOUNT}:role/${n}`;
const ECR = `${ACCOUNT}.dkr.ecr.eu-west-1.amazonaws.com`;

/** A spec using every governed field: shorthand container, two sidecars, EFS, two target groups. */
function everyField(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    cluster: 'apps',
    service: 'shop',
    image: `${ECR}/shop:1.2.3`,
    desiredCount: 2,
    cpu: 1024,
    memory: 2048,
    subnets: ['subnet-0aaa1111', 'subnet-0bbb2222'],
    securityGroups: ['sg-0aaa1111'],
    assignPublicIp: false,
    taskRoleArn: ROLE('shop-task'),
    executionRoleArn: ROLE('shop-exec'),
    secrets: { DB_PASSWORD: SSM('shop/db') },
    containers: [
      {
        name: 'log-router',
        image: 'public.ecr.aws/aws-observability/aws-for-fluent-bit:stable',
        firelensConfiguration: { type: 'fluentbit' },
        memoryReservation: 50,
        logConfiguration: {
          logDriver: 'awslogs',
          options: { 'awslogs-group': '/shop', 'awslogs-region': 'eu-west-1', 'awslogs-stream-prefix': 'fb' },
          secretOptions: [{ name: 'api-key', valueFrom: SECRET('shop/log-key-AbCdEf') }],
        },
      },
      {
        name: 'agent',
        image: 'ghcr.io/acme/agent:7',
        essential: false,
        repositoryCredentials: { credentialsParameter: SECRET('ghcr-pull-AbCdEf') },
        secrets: [{ name: 'AGENT_KEY', valueFrom: SECRET('shop/agent-AbCdEf:key::') }],
        mountPoints: [{ sourceVolume: 'media', containerPath: '/srv/media' }],
      },
    ],
    volumes: [{ name: 'media', efsVolumeConfiguration: { fileSystemId: 'fs-0123456789abcdef0' } }],
    loadBalancers: [
      { targetGroupArn: TG('shop-http'), containerName: 'shop', containerPort: 8080 },
      { targetGroupArn: TG('shop-admin'), containerName: 'shop', containerPort: 8080 },
    ],
    containerPort: 8080,
    ...overrides,
  };
}

function parsed(item: Record<string, unknown>) {
  const r = parseSpecItem(item);
  if (!r.ok) throw new Error(JSON.stringify(r.errors, null, 1));
  return r;
}
const spec = (item: Record<string, unknown>): ServiceSpec => parsed(item).spec;

describe('values each allow-list governs', () => {
  it('finds every governed value of a spec, with its path', () => {
    // Act
    const values = allowListedValues(spec(everyField())).map((v) => `${v.list} ${v.path} ${v.value}`);
    // Assess
    expect(values).toEqual([
      'subnets subnets[0] subnet-0aaa1111',
      'subnets subnets[1] subnet-0bbb2222',
      'securityGroups securityGroups[0] sg-0aaa1111',
      'assignPublicIp assignPublicIp DISABLED',
      `targetGroupArns loadBalancers[0].targetGroupArn ${TG('shop-http')}`,
      `targetGroupArns loadBalancers[1].targetGroupArn ${TG('shop-admin')}`,
      `taskRoleArns taskRoleArn ${ROLE('shop-task')}`,
      `executionRoleArns executionRoleArn ${ROLE('shop-exec')}`,
      `imageRegistries image ${ECR}/shop:1.2.3`,
      `secrets secrets.DB_PASSWORD ${SSM('shop/db')}`,
      'imageRegistries containers[0].image public.ecr.aws/aws-observability/aws-for-fluent-bit:stable',
      `secrets containers[0].logConfiguration.secretOptions[0].valueFrom ${SECRET('shop/log-key-AbCdEf')}`,
      'imageRegistries containers[1].image ghcr.io/acme/agent:7',
      `secrets containers[1].secrets[0].valueFrom ${SECRET('shop/agent-AbCdEf:key::')}`,
      `secrets containers[1].repositoryCredentials.credentialsParameter ${SECRET('ghcr-pull-AbCdEf')}`,
      'efsFileSystems volumes[0].efsVolumeConfiguration.fileSystemId fs-0123456789abcdef0',
    ]);
  });

  it('a spec that leaves network and roles to the reconciler has nothing there to check (defaults are the operator\'s)', () => {
    const minimal = spec({ cluster: 'prod', service: 'web', image: 'nginx', desiredCount: 1, cpu: 256, memory: 512 });
    expect(allowListedValues(minimal).map((v) => v.list)).toEqual(['imageRegistries']);
  });
});

describe('matching', () => {
  it.each([
    { entry: 'subnet-0aaa1111', value: 'subnet-0aaa1111', match: true },
    { entry: 'subnet-0aaa1111', value: 'subnet-0aaa11112', match: false },
    { entry: 'Subnet-0aaa', value: 'subnet-0aaa1111', match: false },
    { entry: '*', value: 'anything', match: true },
    { entry: `${SSM('prod/')}*`, value: SSM('prod/db'), match: true },
    { entry: `${SSM('prod/')}*`, value: SSM('production/db'), match: false },
    { entry: `${SECRET('prod/')}*`, value: SECRET('prod/db-AbCdEf:password::'), match: true },
    { entry: '/prod/*', value: '/prod/db', match: true },
    { entry: '/prod/*', value: SSM('prod/db'), match: false },
  ])('entry $entry admits $value: $match', ({ entry, value, match }) => {
    expect(entryMatches(entry, value)).toBe(match);
  });

  it.each([
    { entry: 'public.ecr.aws', image: 'public.ecr.aws/nginx/nginx:1.27', match: true },
    { entry: 'PUBLIC.ECR.AWS', image: 'public.ecr.aws/nginx/nginx:1.27', match: true },
    { entry: 'docker.io', image: 'nginx', match: true },
    { entry: 'docker.io', image: 'index.docker.io/library/nginx', match: true },
    { entry: 'ghcr.io/acme', image: 'ghcr.io/acme/app:1', match: true },
    { entry: 'ghcr.io/acme', image: 'ghcr.io/acme-evil/app:1', match: false },
    { entry: 'ghcr.io/acme/app', image: 'ghcr.io/acme/app:1', match: true },
    { entry: 'ghcr.io/acme/app', image: 'ghcr.io/acme/app@sha256:abc', match: true },
    { entry: 'docker.io/library', image: 'nginx:1.27', match: true },
    { entry: 'docker.io/library', image: 'evil/nginx', match: false },
    { entry: 'ghcr.io/acme*', image: 'ghcr.io/acme-evil/app', match: true },
    { entry: 'public.ecr.aws', image: 'public.ecr.aws.evil.com/app', match: false },
  ])('registry entry $entry admits image $image: $match', ({ entry, image, match }) => {
    expect(imageAllowed(entry, image)).toBe(match);
  });
});

describe('NotAllowed from the planner', () => {
  const ID = 'apps/shop';
  it.each<{ case: string; allow: AllowLists; blocked: string[] }>([
    { case: 'every list admits its values', allow: {
      subnets: ['subnet-0aaa1111', 'subnet-0bbb2222'],
      securityGroups: ['sg-0*'],
      assignPublicIp: ['DISABLED'],
      targetGroupArns: [`arn:aws:elasticloadbalancing:eu-west-1:${ACCOUNT}:targetgroup/shop-*`],
      secrets: [`${SSM('shop/')}*`, `${SECRET('shop/')}*`, `${SECRET('ghcr-pull-')}*`],
      taskRoleArns: [ROLE('shop-task')],
      executionRoleArns: [ROLE('shop-exec')],
      imageRegistries: [ECR, 'public.ecr.aws', 'ghcr.io/acme'],
      efsFileSystems: ['fs-0123456789abcdef0'],
    }, blocked: [] },
    { case: 'subnet', allow: { subnets: ['subnet-0aaa1111'] }, blocked: ['subnets[1] subnet-0bbb2222 is not in the allow-list ALLOWED_SUBNETS [subnet-0aaa1111]'] },
    { case: 'security group', allow: { securityGroups: ['sg-0bbb2222'] }, blocked: ['securityGroups[0] sg-0aaa1111 is not in the allow-list ALLOWED_SECURITY_GROUPS [sg-0bbb2222]'] },
    { case: 'assignPublicIp', allow: { assignPublicIp: ['ENABLED'] }, blocked: ['assignPublicIp DISABLED is not in the allow-list ALLOWED_ASSIGN_PUBLIC_IP [ENABLED]'] },
    { case: 'target group', allow: { targetGroupArns: [TG('shop-http')] }, blocked: [`loadBalancers[1].targetGroupArn ${TG('shop-admin')} is not in the allow-list ALLOWED_TARGET_GROUP_ARNS [${TG('shop-http')}]`] },
    {
      case: 'secrets: shorthand map, container secrets, log secretOptions, repositoryCredentials',
      allow: { secrets: ['/nothing/*'] },
      blocked: [
        `secrets.DB_PASSWORD ${SSM('shop/db')} is not in the allow-list ALLOWED_SECRETS [/nothing/*]`,
        `containers[0].logConfiguration.secretOptions[0].valueFrom ${SECRET('shop/log-key-AbCdEf')} is not in the allow-list ALLOWED_SECRETS [/nothing/*]`,
        `containers[1].secrets[0].valueFrom ${SECRET('shop/agent-AbCdEf:key::')} is not in the allow-list ALLOWED_SECRETS [/nothing/*]`,
        `containers[1].repositoryCredentials.credentialsParameter ${SECRET('ghcr-pull-AbCdEf')} is not in the allow-list ALLOWED_SECRETS [/nothing/*]`,
      ],
    },
    { case: 'task role, empty list (NONE)', allow: { taskRoleArns: [] }, blocked: [`taskRoleArn ${ROLE('shop-task')} is not allowed: the allow-list ALLOWED_TASK_ROLE_ARNS is empty (NONE)`] },
    { case: 'execution role', allow: { executionRoleArns: [ROLE('other')] }, blocked: [`executionRoleArn ${ROLE('shop-exec')} is not in the allow-list ALLOWED_EXECUTION_ROLE_ARNS [${ROLE('other')}]`] },
    {
      case: 'image registries: shorthand and sidecar images',
      allow: { imageRegistries: ['public.ecr.aws'] },
      blocked: [
        `image ${ECR}/shop:1.2.3 (registry ${ECR}) is not in the allow-list ALLOWED_IMAGE_REGISTRIES [public.ecr.aws]`,
        'containers[1].image ghcr.io/acme/agent:7 (registry ghcr.io) is not in the allow-list ALLOWED_IMAGE_REGISTRIES [public.ecr.aws]',
      ],
    },
    { case: 'EFS file system', allow: { efsFileSystems: ['fs-0fff1111'] }, blocked: ['volumes[0].efsVolumeConfiguration.fileSystemId fs-0123456789abcdef0 is not in the allow-list ALLOWED_EFS_FILE_SYSTEMS [fs-0fff1111]'] },
  ])('$case', ({ allow, blocked }) => {
    // Prepare
    const input = aPlanInput({ specs: [parsed(everyField())], options: planOptions({ allow }) });
    // Act
    const p = plan(input);
    // Assess
    expect(allowListViolations(spec(everyField()), allow)).toHaveLength(blocked.length);
    if (blocked.length === 0) {
      expect(p.actions.map((a) => a.type)).toEqual(['RegisterTaskDefinition', 'CreateService']);
      return;
    }
    expect(p.actions).toEqual([]);
    const c = p.statuses[ID].conditions.find((x) => x.type === 'Blocked');
    expect(p.statuses[ID].phase).toBe('Blocked');
    expect(c?.reason).toBe(Reason.NotAllowed);
    expect(c?.message.split('; ')).toEqual(blocked);
  });
});

describe('configuration', () => {
  it('reads every list from its variable: unset anything, NONE nothing, comma-separated entries', () => {
    // Act
    const config = loadConfig({
      [ENV.specsTable]: 'specs',
      [ENV.allowedSubnets]: 'subnet-0aaa1111, subnet-0bbb2222',
      [ENV.allowedAssignPublicIp]: 'DISABLED',
      [ENV.allowedSecrets]: 'arn:aws:ssm:eu-west-1:123456789012:parameter/prod/*',
      [ENV.allowedEfsFileSystems]: 'NONE',
    });
    // Assess
    expect(config.plan.allow).toEqual({
      subnets: ['subnet-0aaa1111', 'subnet-0bbb2222'],
      securityGroups: undefined,
      assignPublicIp: ['DISABLED'],
      targetGroupArns: undefined,
      secrets: ['arn:aws:ssm:eu-west-1:123456789012:parameter/prod/*'],
      taskRoleArns: undefined,
      executionRoleArns: undefined,
      imageRegistries: undefined,
      efsFileSystems: [],
    });
    expect(Object.keys(config.plan.allow)).toEqual(Object.keys(ALLOW_LIST));
  });

  it('refuses an assignPublicIp list other than ENABLED / DISABLED, naming the variable', () => {
    expect(() => loadConfig({ [ENV.specsTable]: 'specs', [ENV.allowedAssignPublicIp]: 'yes' })).toThrow(
      /ALLOWED_ASSIGN_PUBLIC_IP must list ENABLED and\/or DISABLED/,
    );
  });
});

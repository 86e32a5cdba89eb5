import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OWNER_TAG_KEY } from '../lambda/core/ports';
import {
  FARGATE_CPU_MEMORY,
  FARGATE_CPU_VALUES,
  SPEC_ATTRIBUTES,
  canonicalJson,
  formatSpecError,
  parseSpecItem,
  specHash,
  specToItem,
  suggestAttribute,
} from '../lambda/core/spec';
import type { SpecError, SpecParseResult } from '../lambda/core/types';

// ---------------------------------------------------------------------------------------------
// Builders
// ---------------------------------------------------------------------------------------------

const IMAGE = 'public.ecr.aws/nginx/nginx:1.27';
const ACCOUNT = '123456789012';
const ROLE = `arn:aws:iam::${ACCOUNT}:role/web-task`;
const TARGET_GROUP = `arn:aws:elasticloadbalancing:eu-west-1:${ACCOUNT}:targetgroup/web/0123456789abcdef`;
const SUBNET_A = 'subnet-0a1b2c3d';
const SUBNET_B = 'subnet-0123456789abcdef0';
const SG = 'sg-0123456789abcdef0';

/** The smallest valid item, plus overrides. */
function anItem(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { cluster: 'prod', service: 'web', image: IMAGE, desiredCount: 2, ...overrides };
}

/** An item without the named attributes. */
function without(item: Record<string, unknown>, ...names: string[]): Record<string, unknown> {
  const out = { ...item };
  for (const n of names) delete out[n];
  return out;
}

function parsed(item: Record<string, unknown>): Extract<SpecParseResult, { ok: true }> {
  const result = parseSpecItem(item);
  if (!result.ok) throw new Error(`expected a valid spec, got:\n${result.errors.map(formatSpecError).join('\n')}`);
  return result;
}

function errorsOf(item: Record<string, unknown>): SpecError[] {
  const result = parseSpecItem(item);
  if (result.ok) throw new Error(`expected errors, got a valid spec ${JSON.stringify(result.spec)}`);
  return result.errors;
}

const range = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));
const subnets = (n: number) => range(n, (i) => `subnet-${i.toString(16).padStart(8, '0')}`);
const sgs = (n: number) => range(n, (i) => `sg-${i.toString(16).padStart(8, '0')}`);
const tags = (n: number) => Object.fromEntries(range(n, (i): [string, string] => [`k${i}`, 'v']));

// ---------------------------------------------------------------------------------------------
// Defaults and normalization
// ---------------------------------------------------------------------------------------------

describe('parseSpecItem: defaults and normalization', () => {
  it('applies the documented defaults and leaves optional attributes undefined', () => {
    // Act
    const { spec, key } = parsed(anItem());
    // Assess
    expect(key).toEqual({ cluster: 'prod', service: 'web' });
    expect(spec).toStrictEqual({
      cluster: 'prod',
      service: 'web',
      image: IMAGE,
      desiredCount: 2,
      cpu: 256,
      memory: 512,
      environment: {},
      secrets: {},
      capacityProvider: 'FARGATE',
      cpuArchitecture: 'X86_64',
      state: 'present',
      adopt: false,
      autoscaled: false,
      tags: {},
    });
  });

  it('ignores the status attribute written by the reconciler', () => {
    const plain = parsed(anItem());
    const withStatus = parsed(anItem({ status: { phase: 'Converged', anything: ['goes'] } }));
    expect(withStatus.spec).toStrictEqual(plain.spec);
    expect(withStatus.hash).toBe(plain.hash);
  });

  it.each([
    { case: 'subnets', attribute: 'subnets', given: new Set(['subnet-0000000b', 'subnet-0000000a']), want: ['subnet-0000000a', 'subnet-0000000b'] },
    { case: 'securityGroups', attribute: 'securityGroups', given: new Set(['sg-0000000b', 'sg-0000000a']), want: ['sg-0000000a', 'sg-0000000b'] },
  ])('accepts a DynamoDB String Set for $case and sorts it', ({ attribute, given, want }) => {
    const { spec } = parsed(anItem({ [attribute]: given }));
    expect((spec as unknown as Record<string, unknown>)[attribute]).toEqual(want);
  });

  it('sorts subnets and security groups given as lists (their order means nothing to ECS)', () => {
    const { spec } = parsed(anItem({ subnets: [SUBNET_B, SUBNET_A], securityGroups: ['sg-0000000b', 'sg-0000000a'] }));
    expect(spec.subnets).toEqual([SUBNET_A, SUBNET_B].sort());
    expect(spec.securityGroups).toEqual(['sg-0000000a', 'sg-0000000b']);
  });

  it('keeps the order of command, where order is meaning', () => {
    const { spec } = parsed(anItem({ command: ['npm', 'run', 'start'] }));
    expect(spec.command).toEqual(['npm', 'run', 'start']);
  });

  it.each([
    { case: 'state only', item: { cluster: 'prod', service: 'web', state: 'absent' } },
    { case: 'with its old attributes', item: anItem({ state: 'absent', cpu: 1024, memory: 2048 }) },
  ])('accepts an absent spec: $case', ({ item }) => {
    const { spec } = parsed(item);
    expect(spec.state).toBe('absent');
    expect(typeof spec.image).toBe('string');
  });

  it('gives an absent spec without image an empty image and no desiredCount', () => {
    const { spec } = parsed({ cluster: 'prod', service: 'web', state: 'absent' });
    expect(spec.image).toBe('');
    expect(spec.desiredCount).toBeUndefined();
  });

  it('still validates the attributes an absent spec gives', () => {
    const errors = errorsOf({ cluster: 'prod', service: 'web', state: 'absent', cpu: 300 });
    expect(errors.map((e) => e.path)).toEqual(['cpu']);
  });

  it.each([
    { case: 'without desiredCount', item: without(anItem({ autoscaled: true }), 'desiredCount'), want: undefined },
    { case: 'with an initial desiredCount', item: anItem({ autoscaled: true, desiredCount: 4 }), want: 4 },
  ])('accepts an autoscaled spec $case', ({ item, want }) => {
    const { spec } = parsed(item);
    expect(spec.autoscaled).toBe(true);
    expect(spec.desiredCount).toBe(want);
  });

  it.each([
    { case: 'only the load balancer names a port', over: { loadBalancer: { targetGroupArn: TARGET_GROUP, containerPort: 8080 } }, want: 8080 },
    { case: 'both name the same port', over: { containerPort: 8080, loadBalancer: { targetGroupArn: TARGET_GROUP, containerPort: 8080 } }, want: 8080 },
    { case: 'no load balancer', over: { containerPort: 9000 }, want: 9000 },
  ])('sets containerPort to the port the target group sends to: $case', ({ over, want }) => {
    expect(parsed(anItem(over)).spec.containerPort).toBe(want);
  });

  it('hashes a load balancer port alone like the same port written twice', () => {
    const lb = { targetGroupArn: TARGET_GROUP, containerPort: 8080 };
    expect(parsed(anItem({ loadBalancer: lb })).hash).toBe(parsed(anItem({ loadBalancer: lb, containerPort: 8080 })).hash);
  });

  it('keeps assignPublicIp and lagGraceSeconds when given, including false and 0', () => {
    const { spec } = parsed(anItem({ assignPublicIp: false, lagGraceSeconds: 0 }));
    expect(spec.assignPublicIp).toBe(false);
    expect(spec.lagGraceSeconds).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------
// Valid values at the edges of every rule
// ---------------------------------------------------------------------------------------------

describe('parseSpecItem: accepts valid values', () => {
  it.each([
    { case: 'image with a digest', over: { image: `nginx@sha256:${'a'.repeat(64)}` } },
    { case: 'ECR image', over: { image: `${ACCOUNT}.dkr.ecr.eu-west-1.amazonaws.com/web:2025-06-01_1` } },
    { case: 'image of 255 characters', over: { image: `r/${'a'.repeat(253)}` } },
    { case: 'image of 255 characters before a digest', over: { image: `r/${'a'.repeat(253)}@sha256:${'0'.repeat(64)}` } },
    { case: 'desiredCount 0', over: { desiredCount: 0 } },
    { case: 'containerPort 1', over: { containerPort: 1 } },
    { case: 'containerPort 65535', over: { containerPort: 65535 } },
    { case: 'environment names and empty value', over: { environment: { _X1: '', PORT: '8080', lower_case: 'x' } } },
    { case: 'secret from an SSM parameter name', over: { secrets: { DB: 'db-password' } } },
    { case: 'secret from an SSM parameter path', over: { secrets: { DB: '/app/prod/db.password' } } },
    { case: 'secret from an SSM parameter ARN', over: { secrets: { DB: `arn:aws:ssm:eu-west-1:${ACCOUNT}:parameter/app/db` } } },
    {
      case: 'secret from a Secrets Manager ARN',
      over: { secrets: { DB: `arn:aws:secretsmanager:eu-west-1:${ACCOUNT}:secret:prod/db-AbCdEf` } },
    },
    {
      case: 'secret from a JSON key of a Secrets Manager secret',
      over: { secrets: { DB: `arn:aws:secretsmanager:eu-west-1:${ACCOUNT}:secret:prod/db-AbCdEf:password::` } },
    },
    { case: 'command', over: { command: ['npm', 'start'] } },
    { case: '16 subnets', over: { subnets: subnets(16) } },
    { case: 'a 17-digit subnet id', over: { subnets: [SUBNET_B] } },
    { case: '5 security groups', over: { securityGroups: sgs(5) } },
    { case: 'role with a path', over: { taskRoleArn: `arn:aws:iam::${ACCOUNT}:role/service-role/web` } },
    { case: 'role in aws-cn', over: { executionRoleArn: `arn:aws-cn:iam::${ACCOUNT}:role/exec` } },
    { case: 'FARGATE_SPOT on X86_64', over: { capacityProvider: 'FARGATE_SPOT', cpuArchitecture: 'X86_64' } },
    // The ECS API reference (CapacityProviderStrategyItem): Spot runs ARM64 on platform 1.4.0+.
    { case: 'FARGATE_SPOT on ARM64', over: { capacityProvider: 'FARGATE_SPOT', cpuArchitecture: 'ARM64' } },
    { case: 'ARM64 on FARGATE', over: { capacityProvider: 'FARGATE', cpuArchitecture: 'ARM64' } },
    {
      case: 'health check at the lower limits',
      over: { healthCheck: { command: ['CMD', 'true'], intervalSeconds: 5, timeoutSeconds: 2, retries: 1, startPeriodSeconds: 0 } },
    },
    {
      case: 'health check at the upper limits',
      over: {
        healthCheck: { command: ['CMD-SHELL', 'curl -f localhost'], intervalSeconds: 300, timeoutSeconds: 120, retries: 10, startPeriodSeconds: 300 },
      },
    },
    { case: 'load balancer port equal to containerPort', over: { containerPort: 8080, loadBalancer: { targetGroupArn: TARGET_GROUP, containerPort: 8080 } } },
    { case: 'load balancer without containerPort', over: { loadBalancer: { targetGroupArn: TARGET_GROUP, containerPort: 80 } } },
    { case: 'target group in aws-us-gov', over: { loadBalancer: { targetGroupArn: `arn:aws-us-gov:elasticloadbalancing:us-gov-west-1:${ACCOUNT}:targetgroup/a-b/0123456789abcdef`, containerPort: 80 } } },
    { case: 'deployment 0 / 200', over: { deployment: { minimumHealthyPercent: 0, maximumPercent: 200 } } },
    { case: 'deployment 100 / 101', over: { deployment: { minimumHealthyPercent: 100, maximumPercent: 101 } } },
    { case: 'circuit breaker with rollback', over: { deployment: { circuitBreaker: { enable: true, rollback: true } } } },
    { case: 'circuit breaker off', over: { deployment: { circuitBreaker: { enable: false, rollback: false } } } },
    { case: '49 tags', over: { tags: tags(49) } },
    { case: 'tag key of 128 characters', over: { tags: { ['k'.repeat(128)]: 'v' } } },
    { case: 'tag value of 256 characters', over: { tags: { k: 'v'.repeat(256) } } },
    { case: 'empty tag value', over: { tags: { k: '' } } },
    { case: 'tag with letters of any script, spaces and + - = . _ : / @', over: { tags: { 'équipe données': 'a+b-c=d.e_f:g/h@i 2' } } },
    { case: 'tag key containing aws: later', over: { tags: { 'team:aws:x': 'v' } } },
    { case: 'lagGraceSeconds 86400', over: { lagGraceSeconds: 86_400 } },
    { case: 'names of 255 characters with a family of 255', over: { cluster: 'c'.repeat(127), service: 's'.repeat(127) } },
    { case: 'names with hyphens and underscores', over: { cluster: 'prod_eu-1', service: 'web-API_2' } },
  ])('$case', ({ over }) => {
    expect(parseSpecItem(anItem(over))).toMatchObject({ ok: true });
  });

  it.each([
    { cpu: 256, memory: 512 },
    { cpu: 256, memory: 2048 },
    { cpu: 512, memory: 1024 },
    { cpu: 512, memory: 4096 },
    { cpu: 1024, memory: 2048 },
    { cpu: 1024, memory: 8192 },
    { cpu: 2048, memory: 4096 },
    { cpu: 2048, memory: 16384 },
    { cpu: 4096, memory: 8192 },
    { cpu: 4096, memory: 30720 },
    { cpu: 8192, memory: 16384 },
    { cpu: 8192, memory: 20480 },
    { cpu: 8192, memory: 61440 },
    { cpu: 16384, memory: 32768 },
    { cpu: 16384, memory: 40960 },
    { cpu: 16384, memory: 122880 },
  ])('Fargate task size cpu $cpu, memory $memory', ({ cpu, memory }) => {
    const { spec } = parsed(anItem({ cpu, memory }));
    expect([spec.cpu, spec.memory]).toEqual([cpu, memory]);
  });

  it('FARGATE_CPU_MEMORY has as many sizes per cpu as the AWS "Task size" table', () => {
    // 256: 3 sizes; 512: 1-4 GB; 1024: 2-8 GB; 2048: 4-16 GB; 4096: 8-30 GB (1 GB steps);
    // 8192: 16-60 GB (4 GB steps); 16384: 32-120 GB (8 GB steps).
    const counts = Object.fromEntries(FARGATE_CPU_VALUES.map((c) => [c, FARGATE_CPU_MEMORY[c].length]));
    expect(counts).toEqual({ 256: 3, 512: 4, 1024: 7, 2048: 13, 4096: 23, 8192: 12, 16384: 12 });
  });
});

// ---------------------------------------------------------------------------------------------
// Invalid values: every rule names the path, the value and what is allowed
// ---------------------------------------------------------------------------------------------

interface Rejection {
  case: string;
  item: Record<string, unknown>;
  path: string;
  message: string | RegExp;
}

const rejections: Rejection[] = [
  // Required attributes and DynamoDB types.
  { case: 'missing image', item: without(anItem(), 'image'), path: 'image', message: 'is required (unless state is absent, or containers lists every container of the task)' },
  { case: 'missing desiredCount', item: without(anItem(), 'desiredCount'), path: 'desiredCount', message: /^is required unless autoscaled is true/ },
  { case: 'missing cluster', item: without(anItem(), 'cluster'), path: 'cluster', message: 'is required' },
  { case: 'desiredCount as a string', item: anItem({ desiredCount: '3' }), path: 'desiredCount', message: 'must be a number (DynamoDB type N), got string "3"' },
  { case: 'image as a number', item: anItem({ image: 42 }), path: 'image', message: 'must be a string (DynamoDB type S), got 42' },
  { case: 'adopt as a string', item: anItem({ adopt: 'true' }), path: 'adopt', message: 'must be a boolean (DynamoDB type BOOL), got string "true"' },
  { case: 'environment as a list', item: anItem({ environment: ['A=1'] }), path: 'environment', message: 'must be a map (DynamoDB type M), got list ["A=1"]' },
  { case: 'tags as a String Set', item: anItem({ tags: new Set(['a']) }), path: 'tags', message: /^must be a map \(DynamoDB type M\), got string set \(SS\)/ },
  { case: 'subnets as a string', item: anItem({ subnets: SUBNET_A }), path: 'subnets', message: /^must be a list \(DynamoDB type L\), got string/ },
  { case: 'command as a String Set', item: anItem({ command: new Set(['npm', 'start']) }), path: 'command', message: /a set does not keep the order of its members$/ },
  { case: 'NULL attribute', item: anItem({ assignPublicIp: null }), path: 'assignPublicIp', message: /got null \(remove the attribute to leave it unset\)$/ },
  // Names.
  { case: 'cluster with a space', item: anItem({ cluster: 'my cluster' }), path: 'cluster', message: /^must be 1-255 letters, numbers, hyphens or underscores \(ECS cluster name\)/ },
  { case: 'empty service', item: anItem({ service: '' }), path: 'service', message: /\(ECS service name\), got string ""$/ },
  { case: 'cluster of 256 characters', item: anItem({ cluster: 'c'.repeat(256) }), path: 'cluster', message: /ECS cluster name/ },
  { case: 'family over 255 characters', item: anItem({ cluster: 'c'.repeat(128), service: 's'.repeat(127) }), path: 'service', message: /family "<cluster>-<service>" 256 characters long; ECS allows at most 255/ },
  // Image.
  { case: 'image with a space', item: anItem({ image: 'nginx latest' }), path: 'image', message: /^must be an image reference/ },
  { case: 'empty image', item: anItem({ image: '' }), path: 'image', message: /^must be an image reference/ },
  { case: 'image of 256 characters', item: anItem({ image: `r/${'a'.repeat(254)}` }), path: 'image', message: /at most 255 characters/ },
  { case: 'short digest', item: anItem({ image: 'nginx@sha256:abc' }), path: 'image', message: /REPOSITORY@sha256:DIGEST/ },
  // Counts.
  { case: 'negative desiredCount', item: anItem({ desiredCount: -1 }), path: 'desiredCount', message: 'must be a whole number >= 0 (tasks), got -1' },
  { case: 'fractional desiredCount', item: anItem({ desiredCount: 1.5 }), path: 'desiredCount', message: 'must be a whole number >= 0 (tasks), got 1.5' },
  // Task size.
  { case: 'cpu not a Fargate size', item: anItem({ cpu: 300 }), path: 'cpu', message: 'must be one of 256, 512, 1024, 2048, 4096, 8192, 16384 (Fargate task CPU units, 1024 = 1 vCPU), got 300' },
  { case: 'cpu as a string', item: anItem({ cpu: '256' }), path: 'cpu', message: 'must be a number (DynamoDB type N), got string "256"' },
  { case: 'memory too large for 256', item: anItem({ memory: 3072 }), path: 'memory', message: 'must be 512, 1024 or 2048 MiB with cpu 256 on Fargate (AWS "Task size" table), got 3072' },
  { case: 'memory too small for 512', item: anItem({ cpu: 512, memory: 512 }), path: 'memory', message: /^must be from 1024 to 4096 in steps of 1024 MiB with cpu 512 on Fargate .*got 512/ },
  { case: 'memory too large for 2048', item: anItem({ cpu: 2048, memory: 17408 }), path: 'memory', message: /from 4096 to 16384 in steps of 1024 MiB with cpu 2048/ },
  { case: 'memory between steps for 8192', item: anItem({ cpu: 8192, memory: 17408 }), path: 'memory', message: /from 16384 to 61440 in steps of 4096 MiB with cpu 8192/ },
  { case: 'memory between steps for 16384', item: anItem({ cpu: 16384, memory: 36864 }), path: 'memory', message: /from 32768 to 122880 in steps of 8192 MiB with cpu 16384/ },
  { case: 'default memory with a large cpu', item: anItem({ cpu: 4096 }), path: 'memory', message: /got 512 \(512 is the default when memory is omitted\)$/ },
  { case: 'fractional memory', item: anItem({ memory: 1024.5 }), path: 'memory', message: 'must be a whole number of MiB, got 1024.5' },
  // Ports.
  { case: 'containerPort 0', item: anItem({ containerPort: 0 }), path: 'containerPort', message: 'must be a whole number from 1 to 65535 (TCP port), got 0' },
  { case: 'containerPort 65536', item: anItem({ containerPort: 65536 }), path: 'containerPort', message: /from 1 to 65535 \(TCP port\), got 65536$/ },
  // Environment and secrets.
  { case: 'environment name starting with a digit', item: anItem({ environment: { '1X': 'a' } }), path: 'environment.1X', message: /^name must start with a letter or underscore/ },
  { case: 'environment name with a space', item: anItem({ environment: { 'MY VAR': 'a' } }), path: 'environment.MY VAR', message: /got string "MY VAR"$/ },
  { case: 'environment name with a hyphen', item: anItem({ environment: { 'MY-VAR': 'a' } }), path: 'environment.MY-VAR', message: /^name must start/ },
  { case: 'environment value as a number', item: anItem({ environment: { PORT: 8080 } }), path: 'environment.PORT', message: 'must be a string (DynamoDB type S), got 8080' },
  { case: 'secret from an S3 ARN', item: anItem({ secrets: { DB: 'arn:aws:s3:::bucket/key' } }), path: 'secrets.DB', message: /^must be an SSM parameter name .* or a Secrets Manager secret ARN/ },
  { case: 'secret from an SSM ARN without account', item: anItem({ secrets: { DB: 'arn:aws:ssm:eu-west-1::parameter/db' } }), path: 'secrets.DB', message: /SSM parameter/ },
  { case: 'secret name invalid', item: anItem({ secrets: { 'db.password': '/db' } }), path: 'secrets.db.password', message: /^name must start/ },
  { case: 'variable in environment and secrets', item: anItem({ environment: { DB: 'x' }, secrets: { DB: '/db' } }), path: 'secrets.DB', message: /must not also be set in environment/ },
  // Command.
  { case: 'empty command', item: anItem({ command: [] }), path: 'command', message: /must hold at least one string/ },
  { case: 'command with a number', item: anItem({ command: ['sleep', 5] }), path: 'command[1]', message: 'must be a string (DynamoDB type S), got 5' },
  // Network.
  { case: 'no subnets', item: anItem({ subnets: [] }), path: 'subnets', message: /^must name 1-16 subnets \(omit it to use the reconciler's default subnets\), got list \[\]$/ },
  { case: '17 subnets', item: anItem({ subnets: subnets(17) }), path: 'subnets', message: /ECS awsvpcConfiguration allows at most 16/ },
  { case: 'subnet id too short', item: anItem({ subnets: ['subnet-123'] }), path: 'subnets[0]', message: /^must be a subnet id \(subnet-0123456789abcdef0\), got string "subnet-123"$/ },
  { case: 'subnet name instead of id', item: anItem({ subnets: [SUBNET_A, 'private-a'] }), path: 'subnets[1]', message: /^must be a subnet id/ },
  { case: 'repeated subnet', item: anItem({ subnets: [SUBNET_A, SUBNET_A] }), path: 'subnets', message: /^must not repeat a subnet/ },
  { case: '6 security groups', item: anItem({ securityGroups: sgs(6) }), path: 'securityGroups', message: /allows at most 5/ },
  { case: 'no security groups', item: anItem({ securityGroups: [] }), path: 'securityGroups', message: /^must name 1-5 security groups/ },
  { case: 'security group name', item: anItem({ securityGroups: ['default'] }), path: 'securityGroups[0]', message: /^must be a security group id \(sg-0123456789abcdef0\)/ },
  { case: 'assignPublicIp as ENABLED', item: anItem({ assignPublicIp: 'ENABLED' }), path: 'assignPublicIp', message: /^must be a boolean/ },
  // Enums.
  { case: 'capacityProvider in lower case', item: anItem({ capacityProvider: 'fargate' }), path: 'capacityProvider', message: 'must be one of "FARGATE", "FARGATE_SPOT", got string "fargate"' },
  { case: 'cpuArchitecture unknown', item: anItem({ cpuArchitecture: 'AMD64' }), path: 'cpuArchitecture', message: 'must be one of "X86_64", "ARM64", got string "AMD64"' },
  { case: 'state unknown', item: anItem({ state: 'deleted' }), path: 'state', message: 'must be one of "present", "absent", got string "deleted"' },
  // Roles.
  { case: 'task role as a user ARN', item: anItem({ taskRoleArn: `arn:aws:iam::${ACCOUNT}:user/web` }), path: 'taskRoleArn', message: /^must be an IAM role ARN \(arn:aws:iam::123456789012:role\/NAME\)/ },
  { case: 'execution role by name', item: anItem({ executionRoleArn: 'ecsTaskExecutionRole' }), path: 'executionRoleArn', message: /^must be an IAM role ARN/ },
  // Health check.
  { case: 'health check without CMD', item: anItem({ healthCheck: { command: ['curl', 'localhost'] } }), path: 'healthCheck.command', message: /^must start with "CMD" or "CMD-SHELL"/ },
  { case: 'health check CMD-SHELL alone', item: anItem({ healthCheck: { command: ['CMD-SHELL'] } }), path: 'healthCheck.command', message: /followed by the command/ },
  { case: 'health check without command', item: anItem({ healthCheck: { retries: 3 } }), path: 'healthCheck.command', message: 'is required' },
  { case: 'interval 4', item: anItem({ healthCheck: { command: ['CMD', 'true'], intervalSeconds: 4 } }), path: 'healthCheck.intervalSeconds', message: 'must be a whole number from 5 to 300 (seconds, ECS healthCheck.interval), got 4' },
  { case: 'interval 301', item: anItem({ healthCheck: { command: ['CMD', 'true'], intervalSeconds: 301 } }), path: 'healthCheck.intervalSeconds', message: /got 301$/ },
  { case: 'timeout 1', item: anItem({ healthCheck: { command: ['CMD', 'true'], timeoutSeconds: 1 } }), path: 'healthCheck.timeoutSeconds', message: /from 2 to 120 \(seconds, ECS healthCheck.timeout\), got 1$/ },
  { case: 'timeout 121', item: anItem({ healthCheck: { command: ['CMD', 'true'], timeoutSeconds: 121 } }), path: 'healthCheck.timeoutSeconds', message: /got 121$/ },
  { case: 'retries 0', item: anItem({ healthCheck: { command: ['CMD', 'true'], retries: 0 } }), path: 'healthCheck.retries', message: /from 1 to 10 \(ECS healthCheck.retries\), got 0$/ },
  { case: 'retries 11', item: anItem({ healthCheck: { command: ['CMD', 'true'], retries: 11 } }), path: 'healthCheck.retries', message: /got 11$/ },
  { case: 'startPeriod -1', item: anItem({ healthCheck: { command: ['CMD', 'true'], startPeriodSeconds: -1 } }), path: 'healthCheck.startPeriodSeconds', message: /from 0 to 300 \(seconds, ECS healthCheck.startPeriod\), got -1$/ },
  { case: 'startPeriod 301', item: anItem({ healthCheck: { command: ['CMD', 'true'], startPeriodSeconds: 301 } }), path: 'healthCheck.startPeriodSeconds', message: /got 301$/ },
  { case: 'health check key in ECS spelling', item: anItem({ healthCheck: { command: ['CMD', 'true'], interval: 10 } }), path: 'healthCheck.interval', message: 'is not a spec key of healthCheck; did you mean "intervalSeconds"?' },
  // Load balancer.
  { case: 'target group ARN of a load balancer', item: anItem({ loadBalancer: { targetGroupArn: `arn:aws:elasticloadbalancing:eu-west-1:${ACCOUNT}:loadbalancer/app/web/0123456789abcdef`, containerPort: 80 } }), path: 'loadBalancer.targetGroupArn', message: /^must be a target group ARN/ },
  { case: 'load balancer port differs', item: anItem({ containerPort: 8080, loadBalancer: { targetGroupArn: TARGET_GROUP, containerPort: 80 } }), path: 'loadBalancer.containerPort', message: 'must equal containerPort (8080) when both are given, got 80' },
  { case: 'load balancer without target group', item: anItem({ loadBalancer: { containerPort: 80 } }), path: 'loadBalancer.targetGroupArn', message: 'is required' },
  // Deployment.
  { case: 'minimumHealthyPercent 101', item: anItem({ deployment: { minimumHealthyPercent: 101 } }), path: 'deployment.minimumHealthyPercent', message: 'must be a whole number from 0 to 100 (percent of desiredCount), got 101' },
  { case: 'maximumPercent 99', item: anItem({ deployment: { maximumPercent: 99 } }), path: 'deployment.maximumPercent', message: /from 100 to 200 \(percent of desiredCount\), got 99$/ },
  { case: 'maximumPercent 201', item: anItem({ deployment: { maximumPercent: 201 } }), path: 'deployment.maximumPercent', message: /got 201$/ },
  { case: 'deployment that cannot progress', item: anItem({ deployment: { maximumPercent: 100 } }), path: 'deployment.maximumPercent', message: /^must be above 100 when minimumHealthyPercent is 100/ },
  { case: 'rollback without enable', item: anItem({ deployment: { circuitBreaker: { enable: false, rollback: true } } }), path: 'deployment.circuitBreaker.rollback', message: /^needs enable: true/ },
  { case: 'circuit breaker without rollback', item: anItem({ deployment: { circuitBreaker: { enable: true } } }), path: 'deployment.circuitBreaker.rollback', message: 'is required' },
  // Flags and lag.
  { case: 'autoscaled as a number', item: anItem({ autoscaled: 1 }), path: 'autoscaled', message: 'must be a boolean (DynamoDB type BOOL), got 1' },
  { case: 'lagGraceSeconds -1', item: anItem({ lagGraceSeconds: -1 }), path: 'lagGraceSeconds', message: 'must be a whole number from 0 to 86400 (seconds), got -1' },
  { case: 'lagGraceSeconds 86401', item: anItem({ lagGraceSeconds: 86_401 }), path: 'lagGraceSeconds', message: /got 86401$/ },
  // Tags.
  { case: 'tag key aws:', item: anItem({ tags: { 'aws:team': 'a' } }), path: 'tags.aws:team', message: /^name must not start with "aws:" \(reserved by AWS\)/ },
  { case: 'tag key AWS: in capitals', item: anItem({ tags: { 'AWS:team': 'a' } }), path: 'tags.AWS:team', message: /reserved by AWS/ },
  { case: 'owner tag key', item: anItem({ tags: { [OWNER_TAG_KEY]: 'me' } }), path: `tags.${OWNER_TAG_KEY}`, message: /reserved: the reconciler's owner tag/ },
  { case: 'tag key of 129 characters', item: anItem({ tags: { ['k'.repeat(129)]: 'v' } }), path: `tags.${'k'.repeat(129)}`, message: /^name must be 1-128 characters \(ECS tag key\)/ },
  { case: 'empty tag key', item: anItem({ tags: { '': 'v' } }), path: 'tags.', message: /^name must be 1-128 characters/ },
  { case: 'tag key with !', item: anItem({ tags: { 'team!': 'v' } }), path: 'tags.team!', message: /^name must hold only letters, numbers, spaces and \+ - = \. _ : \/ @ \(ECS tag key\)/ },
  { case: 'tag value of 257 characters', item: anItem({ tags: { k: 'v'.repeat(257) } }), path: 'tags.k', message: /^must be at most 256 characters \(ECS tag value\)/ },
  { case: 'tag value with #', item: anItem({ tags: { k: 'a#b' } }), path: 'tags.k', message: /\(ECS tag value\), got string "a#b"$/ },
  { case: 'tag value as a number', item: anItem({ tags: { k: 1 } }), path: 'tags.k', message: 'must be a string (DynamoDB type S), got 1' },
  { case: '50 tags', item: anItem({ tags: tags(50) }), path: 'tags', message: /^must hold at most 49 tags \(ECS allows 50 per resource; the reconciler adds its owner tag\), got 50$/ },
  // Unknown attributes.
  { case: 'attribute in the wrong case', item: anItem({ desiredcount: 3 }), path: 'desiredcount', message: 'is not a spec attribute; did you mean "desiredCount"?' },
  { case: 'attribute in snake case', item: anItem({ desired_count: 3 }), path: 'desired_count', message: /did you mean "desiredCount"\?$/ },
  { case: 'attribute with a typo', item: anItem({ imgae: 'x' }), path: 'imgae', message: /did you mean "image"\?$/ },
  { case: 'ECS name of the service', item: anItem({ serviceName: 'web' }), path: 'serviceName', message: /did you mean "service"\?$/ },
  { case: 'short for environment', item: anItem({ env: {} }), path: 'env', message: /did you mean "environment"\?$/ },
  { case: 'port alone', item: anItem({ port: 80 }), path: 'port', message: /did you mean "containerPort"\?$/ },
  { case: 'unrelated attribute', item: anItem({ replicas: 3 }), path: 'replicas', message: /^is not a spec attribute \(allowed: cluster, service, image, desiredCount, .*tags, family, containers, .*volumeConfigurations, vpcLatticeConfigurations\)$/ },
  { case: 'unknown nested key', item: anItem({ deployment: { maxPercent: 150 } }), path: 'deployment.maxPercent', message: /did you mean "maximumPercent"\?$/ },
];

describe('parseSpecItem: rejects invalid values', () => {
  it.each(rejections)('$case', ({ item, path, message }) => {
    // Act
    const errors = errorsOf(item);
    // Assess: exactly one error, at the path, saying what is allowed
    expect(errors.map((e) => e.path)).toEqual([path]);
    if (typeof message === 'string') expect(errors[0].message).toBe(message);
    else expect(errors[0].message).toMatch(message);
  });

  it.each([
    { case: 'a string', attribute: 'desiredCount', given: '3', value: '"3"' },
    { case: 'a number', attribute: 'cpu', given: 300, value: '300' },
    { case: 'a list', attribute: 'subnets', given: ['x'], value: '"x"' },
    { case: 'a Set', attribute: 'command', given: new Set(['a', 'b']), value: '["a","b"]' },
    { case: 'an unknown attribute', attribute: 'replicas', given: { n: 1 }, value: '{"n":1}' },
  ])('shows the offending value of $case', ({ attribute, given, value }) => {
    expect(errorsOf(anItem({ [attribute]: given }))[0].value).toBe(value);
  });

  it('shortens long values to at most 80 characters', () => {
    const [error] = errorsOf(anItem({ image: `bad image ${'x'.repeat(300)}` }));
    expect(error.value.length).toBeLessThanOrEqual(80);
    expect(error.value.endsWith('...')).toBe(true);
    expect(error.message.length).toBeLessThan(400);
  });

  it('collects every error of an item, not just the first', () => {
    // Prepare: seven independent problems
    const item = anItem({
      desiredCount: '3',
      cpu: 300,
      replicas: 2,
      tags: { 'aws:x': 'y' },
      capacityProvider: 'SPOT',
      containerPort: 8080,
      loadBalancer: { targetGroupArn: 'tg', containerPort: 80 },
    });
    // Act
    const paths = errorsOf(item).map((e) => e.path);
    // Assess
    expect(paths.sort()).toEqual(
      [
        'capacityProvider',
        'cpu',
        'desiredCount',
        'loadBalancer.containerPort',
        'loadBalancer.targetGroupArn',
        'replicas',
        'tags.aws:x',
      ].sort(),
    );
  });

  it.each([
    { case: 'no cluster', item: without(anItem(), 'cluster'), key: null },
    { case: 'cluster not a string', item: anItem({ cluster: 1 }), key: null },
    { case: 'empty service', item: anItem({ service: '' }), key: null },
    { case: 'invalid but usable names', item: anItem({ cluster: 'my cluster', desiredCount: -1 }), key: { cluster: 'my cluster', service: 'web' } },
  ])('gives the key of an invalid item when it has one: $case', ({ item, key }) => {
    const result = parseSpecItem(item);
    expect(result.ok).toBe(false);
    expect(result.key).toEqual(key);
  });

  it.each([
    { case: 'null', item: null },
    { case: 'a list', item: [anItem()] },
    { case: 'a string', item: 'prod/web' },
  ])('rejects an item that is not a map: $case', ({ item }) => {
    const result = parseSpecItem(item as never);
    expect(result).toMatchObject({ ok: false, key: null, errors: [{ path: '(item)' }] });
  });

  it('never throws, and every error has a path, a short value and a message (property)', () => {
    const known = SPEC_ATTRIBUTES.map((a) => fc.constant(a));
    const attribute = fc.oneof(...known, fc.string());
    fc.assert(
      fc.property(fc.dictionary(attribute, fc.anything({ withSet: true, withNullPrototype: true }), { maxKeys: 12 }), (item) => {
        const result = parseSpecItem(item);
        if (!result.ok) {
          expect(result.errors.length).toBeGreaterThan(0);
          for (const e of result.errors) {
            expect(e.path.length).toBeGreaterThan(0);
            expect(e.value.length).toBeLessThanOrEqual(80);
            expect(e.message.length).toBeGreaterThan(0);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("parseSpecItem: ECS's own quotas", () => {
  /** `n` variables of `width`-character values, VAR_00000 ... */
  const variables = (n: number, width: number) =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [`VAR_${String(i).padStart(5, '0')}`, 'x'.repeat(width)]));
  const errorsOf = (r: SpecParseResult) => (r.ok ? [] : r.errors);

  it.each([
    { case: '10,000 environment variables (about 330 KB)', environment: variables(10_000, 12), path: 'environment' },
    { case: '4,000 environment variables of 20 characters (about 144 KB)', environment: variables(4_000, 12), path: 'environment' },
    { case: 'one variable with a name of 70,000 characters', environment: { [`A${'B'.repeat(69_999)}`]: 'x' }, path: `environment.A${'B'.repeat(38)}…` },
    { case: 'one value of 70,000 characters', environment: { BIG: 'x'.repeat(70_000) }, path: 'environment.BIG' },
  ])('refuses a rendered task definition over 64 KiB: $case', ({ environment, path }) => {
    // Act
    const errors = errorsOf(parseSpecItem(anItem({ environment })));

    // Assess: the field, the size and ECS's figure
    expect(errors).toHaveLength(1);
    expect(errors[0].path).toBe(path);
    expect(errors[0].message).toMatch(/^makes the rendered task definition \d+ bytes \(its RegisterTaskDefinition JSON, tags aside\)/);
    expect(errors[0].message).toContain('ECS refuses a task definition over 65536 bytes (64 KiB, Amazon ECS service quotas)');
  });

  it('names the container that takes most of an oversized task definition', () => {
    const big = { name: 'agent', image: IMAGE, environment: Array.from({ length: 3000 }, (_, i) => ({ name: `V${i}`, value: 'y'.repeat(10) })) };
    const errors = errorsOf(parseSpecItem(anItem({ containers: [{ name: 'small', image: IMAGE }, big] })));
    expect(errors.map((e) => e.path)).toEqual(['containers[1]']);
  });

  it('accepts a task definition under the limit (environment of about 55 KB)', () => {
    const r = parseSpecItem(anItem({ environment: variables(1_000, 25) }));
    expect(errorsOf(r)).toEqual([]);
  });
});

describe('suggestAttribute', () => {
  it.each([
    { unknown: 'Image', want: 'image' },
    { unknown: 'desired-count', want: 'desiredCount' },
    { unknown: 'secret', want: 'secrets' },
    { unknown: 'taskRole', want: 'taskRoleArn' },
    { unknown: 'clusterName', want: 'cluster' },
    { unknown: 'replicas', want: undefined },
    { unknown: 'x', want: undefined },
  ])('$unknown -> $want', ({ unknown, want }) => {
    expect(suggestAttribute(unknown, SPEC_ATTRIBUTES)).toBe(want);
  });
});

describe('SPEC_ATTRIBUTES', () => {
  it('lists the attributes of the documented item format, then status', () => {
    expect(SPEC_ATTRIBUTES).toEqual([
      'cluster',
      'service',
      'image',
      'desiredCount',
      'cpu',
      'memory',
      'containerPort',
      'environment',
      'secrets',
      'command',
      'subnets',
      'securityGroups',
      'assignPublicIp',
      'capacityProvider',
      'cpuArchitecture',
      'operatingSystemFamily',
      'taskRoleArn',
      'executionRoleArn',
      'healthCheck',
      'loadBalancer',
      'deployment',
      'state',
      'adopt',
      'autoscaled',
      'observeOnly',
      'ignore',
      'lagGraceSeconds',
      'tags',
      'family',
      'containers',
      'volumes',
      'ephemeralStorage',
      'pidMode',
      'proxyConfiguration',
      'enableFaultInjection',
      'launchType',
      'capacityProviderStrategy',
      'deploymentConfiguration',
      'loadBalancers',
      'platformVersion',
      'healthCheckGracePeriodSeconds',
      'enableExecuteCommand',
      'propagateTags',
      'enableECSManagedTags',
      'availabilityZoneRebalancing',
      'serviceRegistries',
      'serviceConnectConfiguration',
      'volumeConfigurations',
      'vpcLatticeConfigurations',
      'status',
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// Hash
// ---------------------------------------------------------------------------------------------

/** A spec item using every attribute. */
function aFullItem(): Record<string, unknown> {
  return anItem({
    desiredCount: 3,
    cpu: 512,
    memory: 1024,
    containerPort: 8080,
    environment: { LOG_LEVEL: 'info', PORT: '8080' },
    secrets: { DB_PASSWORD: '/web/db-password' },
    command: ['node', 'server.js'],
    subnets: [SUBNET_A, SUBNET_B],
    securityGroups: [SG],
    assignPublicIp: false,
    capacityProvider: 'FARGATE',
    cpuArchitecture: 'X86_64',
    taskRoleArn: ROLE,
    executionRoleArn: `arn:aws:iam::${ACCOUNT}:role/exec`,
    healthCheck: { command: ['CMD-SHELL', 'curl -f http://localhost:8080/health || exit 1'], intervalSeconds: 30, retries: 3 },
    loadBalancer: { targetGroupArn: TARGET_GROUP, containerPort: 8080 },
    deployment: { minimumHealthyPercent: 100, maximumPercent: 200, circuitBreaker: { enable: true, rollback: true } },
    lagGraceSeconds: 600,
    tags: { team: 'web' },
  });
}

/** Rebuilds plain objects with their keys in reverse order, at every depth. */
function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (value && typeof value === 'object' && !(value instanceof Set)) {
    return Object.fromEntries(Object.entries(value).reverse().map(([k, v]) => [k, reverseKeys(v)]));
  }
  return value;
}

describe('specHash', () => {
  it('is 16 lowercase hex characters of the SHA-256 of the canonical JSON', () => {
    const { spec, hash } = parsed(anItem());
    const expected = createHash('sha256').update(canonicalJson(spec)).digest('hex').slice(0, 16);
    expect(hash).toMatch(/^[0-9a-f]{16}$/);
    expect(hash).toBe(expected);
    expect(specHash(spec)).toBe(hash);
  });

  it('hashes the documented canonical form (a change here changes every stored hash)', () => {
    // The canonical text is written out by hand: sorted keys, defaults included, no undefined.
    const { spec } = parsed(anItem());
    const canonical =
      '{"adopt":false,"autoscaled":false,"capacityProvider":"FARGATE","cluster":"prod","cpu":256,' +
      '"cpuArchitecture":"X86_64","desiredCount":2,"environment":{},"image":"public.ecr.aws/nginx/nginx:1.27",' +
      '"memory":512,"secrets":{},"service":"web","state":"present","tags":{}}';
    expect(canonicalJson(spec)).toBe(canonical);
    expect(specHash(spec)).toBe(createHash('sha256').update(canonical).digest('hex').slice(0, 16));
  });

  it.each([
    { case: 'keys in reverse order at every depth', other: () => reverseKeys(aFullItem()) as Record<string, unknown> },
    { case: 'subnets in another order', other: () => ({ ...aFullItem(), subnets: [SUBNET_B, SUBNET_A] }) },
    { case: 'subnets as a String Set', other: () => ({ ...aFullItem(), subnets: new Set([SUBNET_B, SUBNET_A]) }) },
    { case: 'environment in another order', other: () => ({ ...aFullItem(), environment: { PORT: '8080', LOG_LEVEL: 'info' } }) },
    { case: 'a status attribute', other: () => ({ ...aFullItem(), status: { phase: 'Pending' } }) },
  ])('is the same for $case', ({ other }) => {
    expect(parsed(other()).hash).toBe(parsed(aFullItem()).hash);
  });

  it('is the same whether a default is omitted or written out', () => {
    const explicit = anItem({
      cpu: 256,
      memory: 512,
      environment: {},
      secrets: {},
      capacityProvider: 'FARGATE',
      cpuArchitecture: 'X86_64',
      state: 'present',
      adopt: false,
      autoscaled: false,
      tags: {},
    });
    expect(parsed(explicit).hash).toBe(parsed(anItem()).hash);
  });

  const changes: { case: string; change: Record<string, unknown> }[] = [
    { case: 'cluster', change: { cluster: 'staging' } },
    { case: 'service', change: { service: 'api' } },
    { case: 'image tag', change: { image: 'public.ecr.aws/nginx/nginx:1.28' } },
    { case: 'desiredCount', change: { desiredCount: 4 } },
    { case: 'cpu and memory', change: { cpu: 1024, memory: 2048 } },
    { case: 'memory', change: { memory: 2048 } },
    { case: 'containerPort', change: { containerPort: 9090, loadBalancer: { targetGroupArn: TARGET_GROUP, containerPort: 9090 } } },
    { case: 'environment value', change: { environment: { LOG_LEVEL: 'debug', PORT: '8080' } } },
    { case: 'environment variable added', change: { environment: { LOG_LEVEL: 'info', PORT: '8080', X: '' } } },
    { case: 'secret source', change: { secrets: { DB_PASSWORD: '/web/db-password-2' } } },
    { case: 'command', change: { command: ['server.js', 'node'] } },
    { case: 'subnets', change: { subnets: [SUBNET_A] } },
    { case: 'security groups', change: { securityGroups: ['sg-0000000a'] } },
    { case: 'assignPublicIp given', change: { assignPublicIp: true } },
    { case: 'capacityProvider', change: { capacityProvider: 'FARGATE_SPOT' } },
    { case: 'cpuArchitecture', change: { cpuArchitecture: 'ARM64' } },
    { case: 'task role', change: { taskRoleArn: `arn:aws:iam::${ACCOUNT}:role/other` } },
    { case: 'execution role', change: { executionRoleArn: `arn:aws:iam::${ACCOUNT}:role/other` } },
    { case: 'health check retries', change: { healthCheck: { command: ['CMD-SHELL', 'curl -f http://localhost:8080/health || exit 1'], intervalSeconds: 30, retries: 4 } } },
    { case: 'target group', change: { loadBalancer: { targetGroupArn: TARGET_GROUP.replace('0123456789abcdef', 'fedcba9876543210'), containerPort: 8080 } } },
    { case: 'deployment', change: { deployment: { minimumHealthyPercent: 50, maximumPercent: 200, circuitBreaker: { enable: true, rollback: true } } } },
    { case: 'circuit breaker rollback', change: { deployment: { minimumHealthyPercent: 100, maximumPercent: 200, circuitBreaker: { enable: true, rollback: false } } } },
    { case: 'state', change: { state: 'absent' } },
    { case: 'adopt', change: { adopt: true } },
    { case: 'autoscaled', change: { autoscaled: true } },
    { case: 'ignore', change: { ignore: ['desiredCount'] } },
    { case: 'lagGraceSeconds', change: { lagGraceSeconds: 601 } },
    { case: 'tag value', change: { tags: { team: 'api' } } },
    { case: 'tag added', change: { tags: { team: 'web', tier: 'front' } } },
  ];

  it.each(changes)('changes when $case changes', ({ change }) => {
    expect(parsed({ ...aFullItem(), ...change }).hash).not.toBe(parsed(aFullItem()).hash);
  });

  it.each([true, false])('stays the same when observeOnly is set to %s (the mode is not a new spec)', (observeOnly) => {
    const r = parsed({ ...aFullItem(), observeOnly });
    expect(r.spec.observeOnly).toBe(observeOnly);
    expect(r.hash).toBe(parsed(aFullItem()).hash);
  });

  it('gives every changed spec its own hash', () => {
    const hashes = new Set(changes.map(({ change }) => parsed({ ...aFullItem(), ...change }).hash));
    expect(hashes.size).toBe(changes.length);
  });

  it.each(['command', 'subnets', 'assignPublicIp', 'taskRoleArn', 'healthCheck', 'deployment', 'lagGraceSeconds'])(
    'changes when %s is removed',
    (name) => {
      expect(parsed(without(aFullItem(), name)).hash).not.toBe(parsed(aFullItem()).hash);
    },
  );
});

// ---------------------------------------------------------------------------------------------
// specToItem and generated specs
// ---------------------------------------------------------------------------------------------

describe('specToItem', () => {
  it('writes what a person would write: no undefined, no empty maps, no default flags', () => {
    const item = specToItem(parsed(anItem()).spec);
    expect(item).toStrictEqual({ cluster: 'prod', service: 'web', image: IMAGE, desiredCount: 2, cpu: 256, memory: 512, capacityProvider: 'FARGATE', cpuArchitecture: 'X86_64' });
  });

  it('writes attributes in SPEC_ATTRIBUTES order and copies lists and maps', () => {
    const { spec } = parsed(aFullItem());
    const item = specToItem(spec);
    const order = Object.keys(item).map((k) => SPEC_ATTRIBUTES.indexOf(k));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(item.subnets).not.toBe(spec.subnets);
    expect(item.environment).not.toBe(spec.environment);
    expect(item.healthCheck).not.toBe(spec.healthCheck);
  });

  it('leaves out the empty image of an absent spec', () => {
    const item = specToItem(parsed({ cluster: 'prod', service: 'web', state: 'absent' }).spec);
    expect(item).toStrictEqual({ cluster: 'prod', service: 'web', cpu: 256, memory: 512, capacityProvider: 'FARGATE', cpuArchitecture: 'X86_64', state: 'absent' });
  });
});

const hex = (n: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${n}}$`));
const nameArb = fc.stringMatching(/^[A-Za-z0-9_-]{1,24}$/);
const cpuMemoryArb = fc
  .constantFrom(...FARGATE_CPU_VALUES)
  .chain((cpu) => fc.constantFrom(...FARGATE_CPU_MEMORY[cpu]).map((memory) => ({ cpu, memory })));

/** Valid spec items using any subset of the optional attributes. */
const validItemArb = fc
  .tuple(
    fc.record(
      {
        cluster: nameArb,
        service: nameArb,
        image: fc.constantFrom(IMAGE, 'nginx', `${ACCOUNT}.dkr.ecr.eu-west-1.amazonaws.com/web@sha256:${'ab'.repeat(32)}`),
        desiredCount: fc.nat({ max: 50 }),
        containerPort: fc.integer({ min: 1, max: 65535 }),
        environment: fc.dictionary(fc.stringMatching(/^E_[A-Z0-9_]{0,6}$/), fc.string({ maxLength: 12 }), { maxKeys: 4 }),
        secrets: fc.dictionary(
          fc.stringMatching(/^S_[A-Z0-9_]{0,6}$/),
          fc.constantFrom('/app/db', `arn:aws:ssm:eu-west-1:${ACCOUNT}:parameter/x`, `arn:aws:secretsmanager:eu-west-1:${ACCOUNT}:secret:db-AbCdEf`),
          { maxKeys: 3 },
        ),
        command: fc.array(fc.string({ maxLength: 8 }), { minLength: 1, maxLength: 4 }),
        subnets: fc.uniqueArray(hex(8).map((h) => `subnet-${h}`), { minLength: 1, maxLength: 16 }),
        securityGroups: fc.uniqueArray(hex(17).map((h) => `sg-${h}`), { minLength: 1, maxLength: 5 }),
        assignPublicIp: fc.boolean(),
        capacityProvider: fc.constantFrom('FARGATE', 'FARGATE_SPOT'),
        cpuArchitecture: fc.constantFrom('X86_64', 'ARM64'),
        taskRoleArn: nameArb.map((n) => `arn:aws:iam::${ACCOUNT}:role/${n}`),
        healthCheck: fc.record(
          {
            command: fc.constantFrom(['CMD', 'true'], ['CMD-SHELL', 'curl -f localhost || exit 1']),
            intervalSeconds: fc.integer({ min: 5, max: 300 }),
            timeoutSeconds: fc.integer({ min: 2, max: 120 }),
            retries: fc.integer({ min: 1, max: 10 }),
            startPeriodSeconds: fc.integer({ min: 0, max: 300 }),
          },
          { requiredKeys: ['command'] },
        ),
        loadBalancer: fc.constant({ targetGroupArn: TARGET_GROUP }),
        deployment: fc.record(
          {
            minimumHealthyPercent: fc.integer({ min: 0, max: 100 }),
            maximumPercent: fc.integer({ min: 101, max: 200 }),
            circuitBreaker: fc.constantFrom({ enable: true, rollback: true }, { enable: true, rollback: false }, { enable: false, rollback: false }),
          },
          { requiredKeys: [] },
        ),
        state: fc.constantFrom('present', 'absent'),
        adopt: fc.boolean(),
        autoscaled: fc.boolean(),
        lagGraceSeconds: fc.integer({ min: 0, max: 86_400 }),
        tags: fc.dictionary(fc.stringMatching(/^t[a-z0-9:_-]{0,10}$/), fc.stringMatching(/^[a-z0-9 .]{0,12}$/), { maxKeys: 5 }),
      },
      { requiredKeys: ['cluster', 'service', 'image', 'desiredCount'] },
    ),
    fc.option(cpuMemoryArb, { nil: undefined }),
    fc.integer({ min: 1, max: 65535 }),
  )
  .map(([record, size, lbPort]) => {
    const item: Record<string, unknown> = { ...record, ...size };
    // Keep the cross-attribute rule: one port for the container and the target group.
    if (item.loadBalancer) item.loadBalancer = { ...(item.loadBalancer as object), containerPort: (item.containerPort as number | undefined) ?? lbPort };
    return item;
  });

function hasUndefined(value: unknown): boolean {
  if (value === undefined) return true;
  if (Array.isArray(value)) return value.some(hasUndefined);
  if (value && typeof value === 'object') return Object.values(value).some(hasUndefined);
  return false;
}

describe('generated specs (properties)', () => {
  it('accepts every generated valid item', () => {
    fc.assert(
      fc.property(validItemArb, (item) => {
        const result = parseSpecItem(item);
        expect(result.ok ? [] : result.errors.map(formatSpecError)).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });

  it('round-trips through specToItem: same spec, same hash, nothing undefined', () => {
    fc.assert(
      fc.property(validItemArb, (item) => {
        const first = parsed(item);
        const written = specToItem(first.spec);
        expect(hasUndefined(written)).toBe(false);
        const again = parsed(written);
        expect(again.spec).toStrictEqual(first.spec);
        expect(again.hash).toBe(first.hash);
      }),
      { numRuns: 200 },
    );
  });

  it('hashes the same whatever the key order', () => {
    fc.assert(
      fc.property(validItemArb, (item) => {
        expect(parsed(reverseKeys(item) as Record<string, unknown>).hash).toBe(parsed(item).hash);
      }),
      { numRuns: 100 },
    );
  });

  it('hashes differently when desiredCount or the image changes', () => {
    fc.assert(
      fc.property(validItemArb, (item) => {
        const base = parsed(item).hash;
        expect(parsed({ ...item, desiredCount: (item.desiredCount as number) + 1 }).hash).not.toBe(base);
        expect(parsed({ ...item, image: `${String(item.image).split('@')[0]}-next` }).hash).not.toBe(base);
      }),
      { numRuns: 100 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// canonicalJson
// ---------------------------------------------------------------------------------------------

describe('canonicalJson', () => {
  it.each([
    { case: 'sorted keys at every depth', value: { b: 1, a: { d: [2, 1], c: null } }, want: '{"a":{"c":null,"d":[2,1]},"b":1}' },
    { case: 'undefined properties left out', value: { a: undefined, b: 1 }, want: '{"b":1}' },
    { case: 'undefined in arrays as null', value: [undefined, 1], want: '[null,1]' },
    { case: 'negative zero as zero', value: { n: -0 }, want: '{"n":0}' },
    { case: 'strings escaped as JSON', value: { 'k"': 'line\nnext' }, want: '{"k\\"":"line\\nnext"}' },
    { case: 'dates as ISO strings', value: { at: new Date('2025-06-01T12:00:00Z') }, want: '{"at":"2025-06-01T12:00:00.000Z"}' },
    { case: 'sets as sorted arrays', value: new Set(['b', 'a']), want: '["a","b"]' },
    { case: 'a repeated (not cyclic) object', value: ((o) => ({ x: o, y: o }))({ a: 1 }), want: '{"x":{"a":1},"y":{"a":1}}' },
  ])('$case', ({ value, want }) => {
    expect(canonicalJson(value)).toBe(want);
  });

  it.each([
    { case: 'undefined', value: undefined },
    { case: 'NaN', value: { n: Number.NaN } },
    { case: 'Infinity', value: [Number.POSITIVE_INFINITY] },
    { case: 'bigint', value: { n: 1n } },
    { case: 'function', value: { f: () => 1 } },
    { case: 'Map', value: new Map([['a', 1]]) },
    { case: 'cycle', value: ((o: Record<string, unknown>) => ((o.self = o), o))({}) },
  ])('throws a TypeError for $case', ({ value }) => {
    expect(() => canonicalJson(value)).toThrow(TypeError);
  });

  it('is the same for any key order and equals JSON.parse-able JSON (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        expect(canonicalJson(reverseKeys(value))).toBe(text);
        expect(canonicalJson(JSON.parse(text))).toBe(text);
      }),
      { numRuns: 200 },
    );
  });
});

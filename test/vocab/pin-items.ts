/**
 * Spec items whose rendering is pinned by `test/fixtures/render-pin.json` (generated before the
 * vocabulary moved onto `lambda/core/vocab/`): every shorthand attribute appears at least once.
 */
import type { ReconcilerDefaults } from '../../lambda/core/options';

const ACCOUNT = '123456789012';

export const PIN_DEFAULTS: Record<string, ReconcilerDefaults> = {
  bare: { subnets: ['subnet-0a1b2c3d'], securityGroups: ['sg-0123abcd'] },
  full: {
    subnets: ['subnet-0a1b2c3d', 'subnet-0f1e2d3c'],
    securityGroups: ['sg-0123abcd'],
    assignPublicIp: true,
    executionRoleArn: `arn:aws:iam::${ACCOUNT}:role/ecs-reconciler-execution`,
    logGroupPrefix: '/ecs/',
    region: 'eu-west-1',
  },
};

export const PIN_ITEMS: { name: string; item: Record<string, unknown> }[] = [
  { name: 'minimal', item: { cluster: 'prod', service: 'web', image: 'nginx:1.27', desiredCount: 1 } },
  {
    name: 'every shorthand attribute',
    item: {
      cluster: 'prod',
      service: 'api',
      image: `${ACCOUNT}.dkr.ecr.eu-west-1.amazonaws.com/api@sha256:${'a'.repeat(64)}`,
      desiredCount: 3,
      cpu: 1024,
      memory: 4096,
      containerPort: 8080,
      environment: { Z_LAST: 'z', A_FIRST: 'a', EMPTY: '' },
      secrets: {
        DB: `arn:aws:secretsmanager:eu-west-1:${ACCOUNT}:secret:prod/db-AbCdEf:password::`,
        KEY: '/prod/api/key',
      },
      command: ['node', 'server.js', '--port', '8080'],
      subnets: ['subnet-0f1e2d3c', 'subnet-0a1b2c3d'],
      securityGroups: ['sg-0123abcd'],
      assignPublicIp: false,
      capacityProvider: 'FARGATE_SPOT',
      cpuArchitecture: 'ARM64',
      taskRoleArn: `arn:aws:iam::${ACCOUNT}:role/api-task`,
      executionRoleArn: `arn:aws:iam::${ACCOUNT}:role/api-exec`,
      healthCheck: {
        command: ['CMD-SHELL', 'curl -f http://localhost:8080/ || exit 1'],
        intervalSeconds: 10,
        timeoutSeconds: 3,
        retries: 5,
        startPeriodSeconds: 60,
      },
      loadBalancer: {
        targetGroupArn: `arn:aws:elasticloadbalancing:eu-west-1:${ACCOUNT}:targetgroup/api/0123456789abcdef`,
        containerPort: 8080,
      },
      deployment: { minimumHealthyPercent: 50, maximumPercent: 150, circuitBreaker: { enable: true, rollback: false } },
      lagGraceSeconds: 120,
      tags: { team: 'core', env: 'prod' },
    },
  },
  {
    name: 'autoscaled, port from load balancer, health check command only',
    item: {
      cluster: 'prod',
      service: 'worker',
      image: 'public.ecr.aws/docker/library/node:22-alpine',
      autoscaled: true,
      healthCheck: { command: ['CMD', 'true'] },
      loadBalancer: {
        targetGroupArn: `arn:aws:elasticloadbalancing:eu-west-1:${ACCOUNT}:targetgroup/w/0123456789abcdef`,
        containerPort: 9000,
      },
      adopt: true,
    },
  },
];

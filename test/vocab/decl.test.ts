/**
 * The declaration walkers (`lambda/core/vocab/decl.ts`) on the task definition vocabulary: one
 * declaration gives the canonical form (defaults dropped, order semantics), the import (inverse),
 * the zod parser's messages and the known keys.
 */
import { describe, expect, it } from 'vitest';
import { canonicalOf, defaultAt, importOf, knownKeysOf, zodOf, type Unexpressible } from '../../lambda/core/vocab/decl';
import { CONTAINER, HEALTH_CHECK, TASK_DEFINITION } from '../../lambda/core/vocab/task';

const ctx = { networkMode: 'awsvpc' };

describe('canonicalOf', () => {
  it.each([
    { case: 'health check defaults dropped', node: HEALTH_CHECK, a: { command: ['CMD', 'x'], interval: 30, timeout: 5, retries: 3, startPeriod: 0 }, b: { command: ['CMD', 'x'] } },
    { case: 'essential true is the default', node: CONTAINER, a: { name: 'a', image: 'x', essential: true, cpu: 0 }, b: { name: 'a', image: 'x' } },
    { case: 'environment is a set keyed by name', node: CONTAINER, a: { name: 'a', image: 'x', environment: [{ name: 'B', value: '2' }, { name: 'A', value: '1' }] }, b: { name: 'a', image: 'x', environment: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }] } },
    { case: 'port protocol tcp and awsvpc hostPort', node: CONTAINER, a: { name: 'a', image: 'x', portMappings: [{ containerPort: 80, hostPort: 80, protocol: 'tcp' }] }, b: { name: 'a', image: 'x', portMappings: [{ containerPort: 80 }] } },
    { case: 'empty lists are absent', node: CONTAINER, a: { name: 'a', image: 'x', mountPoints: [], volumesFrom: [], systemControls: [] }, b: { name: 'a', image: 'x' } },
    { case: 'task cpu in vCPU', node: TASK_DEFINITION, a: { cpu: '0.25 vCPU', memory: '1 GB' }, b: { cpu: '256', memory: '1024' } },
  ])('$case: equal', ({ node, a, b }) => {
    expect(canonicalOf(node, a, ctx)).toEqual(canonicalOf(node, b, ctx));
  });

  it.each([
    { case: 'essential false is kept', node: CONTAINER, a: { name: 'a', image: 'x', essential: false }, b: { name: 'a', image: 'x' } },
    { case: 'command order is meaning', node: CONTAINER, a: { name: 'a', image: 'x', command: ['a', 'b'] }, b: { name: 'a', image: 'x', command: ['b', 'a'] } },
    { case: 'a non-default interval', node: HEALTH_CHECK, a: { command: ['CMD', 'x'], interval: 31 }, b: { command: ['CMD', 'x'] } },
    { case: 'an undeclared field is kept', node: CONTAINER, a: { name: 'a', image: 'x', somethingNew: 1 }, b: { name: 'a', image: 'x' } },
    { case: 'dependsOn condition', node: CONTAINER, a: { name: 'a', image: 'x', dependsOn: [{ containerName: 'b', condition: 'START' }] }, b: { name: 'a', image: 'x', dependsOn: [{ containerName: 'b', condition: 'HEALTHY' }] } },
  ])('$case: different', ({ node, a, b }) => {
    expect(canonicalOf(node, a, ctx)).not.toEqual(canonicalOf(node, b, ctx));
  });
});

describe('importOf', () => {
  it('leaves out what ECS filled in and keeps ECS shapes', () => {
    const out: Unexpressible[] = [];
    const described = {
      name: 'app',
      image: 'nginx:1',
      cpu: 0,
      essential: true,
      portMappings: [{ containerPort: 80, hostPort: 80, protocol: 'tcp' }],
      environment: [],
      mountPoints: [],
      volumesFrom: [],
      systemControls: [],
      healthCheck: { command: ['CMD', 'x'], interval: 30, timeout: 5, retries: 3 },
    };
    expect(importOf(CONTAINER, described, 'containers[0]', out, ctx)).toEqual({
      name: 'app',
      image: 'nginx:1',
      portMappings: [{ containerPort: 80 }],
      healthCheck: { command: ['CMD', 'x'] },
    });
    expect(out).toEqual([]);
  });

  it('names what the vocabulary cannot express', () => {
    const out: Unexpressible[] = [];
    importOf(CONTAINER, { name: 'a', image: 'x', links: ['b'], newField: { x: 1 }, linuxParameters: { devices: [{ hostPath: '/dev/x' }] } }, 'containers[1]', out, ctx);
    expect(out.map((u) => u.path).sort()).toEqual(['containers[1].links', 'containers[1].linuxParameters.devices', 'containers[1].newField']);
  });
});

describe('zodOf', () => {
  it('says what is allowed and what was given', () => {
    const r = zodOf(HEALTH_CHECK).safeParse({ command: ['CMD', 'x'], interval: 3 });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0].message).toBe('must be a whole number from 5 to 300 (seconds), got 3');
  });
  it('refuses a field Fargate refuses, with the reason', () => {
    const r = zodOf(CONTAINER).safeParse({ name: 'a', image: 'x', privileged: true });
    expect(r.error?.issues[0].message).toMatch(/^is not supported on Fargate \(privileged\); remove it, got true$/);
  });
});

describe('knownKeysOf and defaultAt', () => {
  it('lists keys of nested objects by path', () => {
    const keys = knownKeysOf(CONTAINER, 'containers');
    expect(keys['containers.healthCheck']).toEqual(['command', 'interval', 'timeout', 'retries', 'startPeriod']);
    expect(keys['containers.logConfiguration']).toContain('secretOptions');
  });
  it('gives the declared default', () => {
    expect(defaultAt(CONTAINER, ['healthCheck', 'interval'])).toBe(30);
    expect(defaultAt(CONTAINER, ['essential'])).toBe(true);
    expect(defaultAt(CONTAINER, ['readonlyRootFilesystem'])).toBe(false);
  });
});

/**
 * The real payloads in test/fixtures/real/ are what the simulator, the comparison and import are
 * tried on: this checks that each is listed with its source, parses, and has the shape of the ECS
 * answer or request its source row names, so that a truncated copy or a wrongly unwrapped file
 * fails here rather than silently testing less.
 */
import { describe, expect, it } from 'vitest';
import {
  realFixtureFiles,
  realFixtureSources,
  realServices,
  realTaskDefinitions,
} from './support/real-fixtures';

type Json = Record<string, unknown>;

const taskDefinitions = realTaskDefinitions();
const services = realServices();

describe('the real fixtures directory', () => {
  it.each(['task-definitions', 'services'] as const)('lists every %s file in sources.json, and only those', (kind) => {
    const listed = realFixtureSources()
      .filter((s) => s.kind === kind)
      .map((s) => s.file)
      .sort();
    expect(listed).toEqual(realFixtureFiles(kind));
  });

  it('keeps the issue-10 minimum: at least 14 task definitions and 10 services', () => {
    expect(taskDefinitions.length).toBeGreaterThanOrEqual(14);
    expect(services.length).toBeGreaterThanOrEqual(10);
  });

  it('names a public source pinned to a commit for each file', () => {
    for (const s of realFixtureSources()) {
      expect(s.url).toBe(`https://github.com/${s.repo}/blob/${s.commit}/${s.path}${s.line ? `#L${s.line}` : ''}`);
      expect(s.commit).toMatch(/^[0-9a-f]{40}$/);
    }
  });
});

describe.each(taskDefinitions.map((f) => [f.name, f] as const))('task definition %s', (_name, fixture) => {
  const [td] = fixture.payloads as [Json];
  const containers = td.containerDefinitions as Json[];

  it('has containers, each with a unique name and an image', () => {
    expect(Array.isArray(containers) && containers.length).toBeGreaterThan(0);
    for (const c of containers) {
      expect(typeof c.name).toBe('string');
      expect(typeof c.image).toBe('string');
    }
    const names = containers.map((c) => c.name);
    expect(new Set(names).size).toBe(names.length);
  });

  it('has the fields ECS adds exactly when it is an ECS answer', () => {
    const isAnswer = /response/.test(fixture.source.shape);
    expect('taskDefinition' in (fixture.raw as Json) || !isAnswer).toBe(true);
    if (isAnswer && /DescribeTaskDefinition response|RegisterTaskDefinition response/.test(fixture.source.shape)) {
      expect(td.taskDefinitionArn).toMatch(/^arn:aws:ec[s2]:[a-z0-9-]+:[^:]+:task-definition\/[^:]+:\d+$/);
      expect(td.revision).toBe(Number(String(td.taskDefinitionArn).split(':').pop()));
      if (td.status !== undefined) expect(td.status).toBe('ACTIVE'); // older answers (2019 guide) have none
    }
    if (fixture.source.shape === 'RegisterTaskDefinition input') {
      expect(td.taskDefinitionArn).toBeUndefined();
      expect(td.revision).toBeUndefined();
    }
  });

  it('has a family, and dependsOn/volumes that name what exists in the task', () => {
    expect(typeof td.family).toBe('string');
    const names = new Set(containers.map((c) => c.name));
    const volumes = new Set(((td.volumes as Json[] | undefined) ?? []).map((v) => v.name));
    for (const c of containers) {
      for (const d of (c.dependsOn as Json[] | undefined) ?? []) expect(names).toContain(d.containerName);
      for (const m of (c.mountPoints as Json[] | undefined) ?? []) expect(volumes).toContain(m.sourceVolume);
    }
  });
});

describe.each(services.map((f) => [f.name, f] as const))('service %s', (_name, fixture) => {
  it('holds Service objects with a name, a status and a cluster', () => {
    expect(fixture.payloads.length).toBeGreaterThan(0);
    for (const s of fixture.payloads) {
      expect(typeof s.serviceName).toBe('string');
      expect(s.serviceArn).toMatch(/^arn:aws:ecs:[a-z0-9-]+:[^:]+:service\//);
      expect(s.clusterArn).toMatch(/:cluster\//);
      expect(s.status).toBe('ACTIVE');
      expect(typeof s.desiredCount).toBe('number');
    }
  });

  it('is a DescribeServices answer (with failures) or a single-service answer, as its source says', () => {
    const raw = fixture.raw as Json;
    if (fixture.source.shape.startsWith('DescribeServices')) expect(raw.failures).toEqual([]);
    else expect(Object.keys(raw)).toEqual(['service']);
  });
});

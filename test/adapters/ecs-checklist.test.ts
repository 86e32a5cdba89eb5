/**
 * The SDK checklist (lambda/adapters/ecs-checklist.ts): the compiler makes it name every SDK
 * member; this test makes every `managed` entry one the vocabulary declares (and Fargate does not
 * refuse), or a spec attribute the planner renders it from.
 */
import { describe, expect, it } from 'vitest';
import {
  CONTAINER_DEFINITION_CHECKLIST,
  CREATE_SERVICE_CHECKLIST,
  REGISTER_TASK_DEFINITION_CHECKLIST,
  RUNTIME_PLATFORM_CHECKLIST,
  S3FILES_VOLUME_CONFIGURATION_CHECKLIST,
  SERVICE_CHECKLIST,
  TASK_DEFINITION_CHECKLIST,
  UPDATE_SERVICE_CHECKLIST,
  VOLUME_CHECKLIST,
} from '../../lambda/adapters/ecs-checklist';
import { CORE_SERVICE_FIELD_CONTROLLERS, SERVICE_FIELD_NAMES } from '../../lambda/core/vocab/service';
import { CONTAINER, S3FILES_VOLUME_CONFIGURATION, TASK_DEFINITION, VOLUME } from '../../lambda/core/vocab/task';
import { SPEC_ATTRIBUTES } from '../../lambda/core/spec';
import type { Field, ObjectNode } from '../../lambda/core/vocab/decl';

const managed = (table: Record<string, string>) => Object.entries(table).filter(([, c]) => c === 'managed').map(([k]) => k);
const declaredFields = (fields: Readonly<Record<string, Field>>) => Object.keys(fields).filter((k) => fields[k].refused === undefined);

/** Service members the spec holds under another name: its key, and the task definition it renders. */
const SPEC_KEYS_AND_RENDERED = ['serviceName', 'service', 'cluster', 'taskDefinition', 'tags', 'launchType'];

describe('the SDK checklist', () => {
  const serviceDeclared = new Set<string>([...SERVICE_FIELD_NAMES, ...Object.keys(CORE_SERVICE_FIELD_CONTROLLERS), ...SPEC_KEYS_AND_RENDERED]);

  it.each([
    ['Service', SERVICE_CHECKLIST],
    ['CreateServiceCommandInput', CREATE_SERVICE_CHECKLIST],
    ['UpdateServiceCommandInput', UPDATE_SERVICE_CHECKLIST],
  ])('every managed member of %s is declared in the service vocabulary', (_name, table) => {
    expect(managed(table).filter((k) => !serviceDeclared.has(k))).toEqual([]);
  });

  it.each([
    ['TaskDefinition', TASK_DEFINITION_CHECKLIST],
    ['RegisterTaskDefinitionCommandInput', REGISTER_TASK_DEFINITION_CHECKLIST],
  ])('every managed member of %s is declared in TASK_DEFINITION (or is the rendered tags)', (_name, table) => {
    const declared = new Set([...declaredFields(TASK_DEFINITION.fields), 'tags']);
    expect(managed(table).filter((k) => !declared.has(k))).toEqual([]);
  });

  it('every managed member of ContainerDefinition is declared in CONTAINER, and every refused one is unmanaged', () => {
    const declared = new Set(declaredFields(CONTAINER.fields));
    expect(managed(CONTAINER_DEFINITION_CHECKLIST).filter((k) => !declared.has(k))).toEqual([]);
    const refused = Object.keys(CONTAINER.fields).filter((k) => !declared.has(k));
    expect(refused.filter((k) => CONTAINER_DEFINITION_CHECKLIST[k as keyof typeof CONTAINER_DEFINITION_CHECKLIST] === 'managed')).toEqual([]);
  });

  it.each([
    ['Volume', VOLUME_CHECKLIST, VOLUME.fields],
    ['S3FilesVolumeConfiguration', S3FILES_VOLUME_CONFIGURATION_CHECKLIST, S3FILES_VOLUME_CONFIGURATION.fields],
    ['RuntimePlatform', RUNTIME_PLATFORM_CHECKLIST, (TASK_DEFINITION.fields.runtimePlatform.type as ObjectNode).fields],
  ] as [string, Record<string, string>, Readonly<Record<string, Field>>][])('every managed member of %s is declared, and every refused one unmanaged', (_name, table, fields) => {
    const declared = new Set(declaredFields(fields));
    expect(managed(table).filter((k) => !declared.has(k))).toEqual([]);
    expect(Object.keys(fields).filter((k) => !declared.has(k) && table[k] === 'managed')).toEqual([]);
  });

  it('every declared service field and every spec attribute the tables name is on the SDK side too', () => {
    const sdk = new Set([...Object.keys(SERVICE_CHECKLIST), ...Object.keys(CREATE_SERVICE_CHECKLIST)]);
    expect(SERVICE_FIELD_NAMES.filter((k) => !sdk.has(k))).toEqual([]);
    expect(SPEC_ATTRIBUTES.length).toBeGreaterThan(0);
  });
});

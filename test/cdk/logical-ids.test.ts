/**
 * A deployed stack keeps its resources: the logical ids (and types) of the quick-start stack and
 * of a fully configured one are those in fixtures/logical-ids.json. A construct id renamed or
 * moved under another scope changes a logical id, and CloudFormation would replace that resource
 * (a new table, new queues, a new role) on the next deploy. Change the fixture only for a
 * replacement that is meant, and say so in the change.
 */
import { readFileSync } from 'node:fs';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { fullyConfiguredStack, quickStartStack } from './stacks';

const FIXTURE = JSON.parse(readFileSync(new URL('./fixtures/logical-ids.json', import.meta.url), 'utf8')) as Record<string, Record<string, string>>;

function idsAndTypes(template: Template): Record<string, string> {
  const resources = template.toJSON().Resources as Record<string, { Type: string }>;
  return Object.fromEntries(Object.entries(resources).map(([id, r]) => [id, r.Type]).sort(([a], [b]) => a.localeCompare(b)));
}

describe('logical ids of deployed stacks', () => {
  it.each([
    { case: 'the quick-start stack', key: 'quickStart', build: () => quickStartStack() },
    { case: 'a fully configured reconciler', key: 'fullyConfigured', build: () => fullyConfiguredStack().stack },
  ])('$case keeps every logical id and type', ({ key, build }) => {
    expect(idsAndTypes(Template.fromStack(build()))).toEqual(FIXTURE[key]);
  });
});

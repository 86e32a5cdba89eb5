/**
 * Task definitions: RegisterTaskDefinition, DescribeTaskDefinition, DeregisterTaskDefinition,
 * ListTaskDefinitions and ListTaskDefinitionFamilies (Amazon ECS API reference for each action;
 * the definition's own rules are in ../task-definitions and ../task-definition-rules).
 */
import type { RegisterTaskDefinitionRequest } from '@aws-sdk/client-ecs';
import type { SimCore } from '../core';
import { clientException } from '../errors';
import { page } from '../paging';
import { listMember } from '../protocol';
import { buildTaskDefinition } from '../task-definitions';
import { pageReq, str, tagsInput } from './inputs';

/** RegisterTaskDefinition: the next revision of the family, built and validated by buildTaskDefinition. */
export function registerTaskDefinition(core: SimCore, req: RegisterTaskDefinitionRequest): unknown {
  const familyName = req.family ?? '';
  const existing = core.state.families.get(familyName);
  const revision = (existing?.revisions.length ?? 0) + 1;
  const td = buildTaskDefinition(req, {
    arn: core.arns.taskDefinition(familyName, revision),
    revision,
    registeredAt: core.clock.now(),
    registeredBy: core.arns.principal(),
  });
  const tags = tagsInput(req.tags);
  const family = existing ?? { name: familyName, revisions: [] };
  family.revisions.push({ taskDefinition: td, tags });
  core.state.families.set(familyName, family);
  return { taskDefinition: structuredClone(td), ...(tags.length > 0 ? { tags: tags.map((t) => ({ ...t })) } : {}) };
}

/** DescribeTaskDefinition: `family`, `family:revision` or an ARN; tags with `include` TAGS. */
export function describeTaskDefinition(core: SimCore, i: Record<string, unknown>): unknown {
  const ref = str(i, 'taskDefinition', true);
  const found = core.lookupTaskDefinition(ref);
  if (!found) throw clientException('Unable to describe task definition.');
  const rev = found.family.revisions[found.index];
  const include = (listMember(i, 'include', 'string') as string[] | undefined) ?? [];
  return {
    taskDefinition: structuredClone(rev.taskDefinition),
    ...(include.includes('TAGS') ? { tags: rev.tags.map((t) => ({ ...t })) } : {}),
  };
}

/** DeregisterTaskDefinition: the revision becomes INACTIVE (a revision must be named). */
export function deregisterTaskDefinition(core: SimCore, i: Record<string, unknown>): unknown {
  const ref = str(i, 'taskDefinition', true);
  if (!ref.startsWith('arn:') && !ref.includes(':')) {
    throw clientException('Invalid revision number. Number: undefined');
  }
  const found = core.lookupTaskDefinition(ref);
  if (!found) throw clientException('The specified task definition does not exist.');
  const td = found.family.revisions[found.index].taskDefinition;
  if (td.status === 'ACTIVE') {
    td.status = 'INACTIVE';
    td.deregisteredAt = core.clock.now();
  }
  return { taskDefinition: structuredClone(td) };
}

/** ListTaskDefinitions: ARNs by family then revision, ASC or DESC, filtered by status and family. */
export function listTaskDefinitions(core: SimCore, i: Record<string, unknown>): unknown {
  const prefix = i.familyPrefix as string | undefined;
  const status = (i.status as string | undefined) ?? 'ACTIVE';
  const sort = (i.sort as string | undefined) ?? 'ASC';
  // API reference (ListTaskDefinitions `sort`): family names lexicographically, then revisions
  // in ascending numerical order; DESC reverses both. The key separates family and revision with
  // a character below every family character, so that "web" sorts before "web-2".
  const byKey = new Map<string, string>();
  for (const f of core.state.families.values()) {
    if (prefix !== undefined && f.name !== prefix) continue; // ECS: familyPrefix matches the full family
    for (const r of f.revisions) {
      if (status !== 'ALL' && r.taskDefinition.status !== status) continue;
      const rev = r.taskDefinition.revision as number;
      byKey.set(`${f.name}\u0000${String(rev).padStart(10, '0')}`, r.taskDefinition.taskDefinitionArn as string);
    }
  }
  const p = page('taskDefinitions', [...byKey.keys()], pageReq(i), { defaultMax: 100, max: 100, descending: sort === 'DESC' });
  return { taskDefinitionArns: p.items.map((k) => byKey.get(k) as string), ...(p.nextToken ? { nextToken: p.nextToken } : {}) };
}

/** ListTaskDefinitionFamilies: family names by prefix and status (ACTIVE: one revision ACTIVE). */
export function listTaskDefinitionFamilies(core: SimCore, i: Record<string, unknown>): unknown {
  const prefix = (i.familyPrefix as string | undefined) ?? '';
  const status = (i.status as string | undefined) ?? 'ACTIVE';
  const names = [...core.state.families.values()]
    .filter((f) => f.name.startsWith(prefix))
    .filter((f) => {
      const anyActive = f.revisions.some((r) => r.taskDefinition.status === 'ACTIVE');
      return status === 'ALL' || (status === 'ACTIVE' ? anyActive : !anyActive);
    })
    .map((f) => f.name);
  const p = page('families', names, pageReq(i), { defaultMax: 100, max: 100 });
  return { families: p.items, ...(p.nextToken ? { nextToken: p.nextToken } : {}) };
}

// Services ----------------------------------------------------------------------------------

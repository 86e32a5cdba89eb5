/**
 * Tags: TagResource, UntagResource and ListTagsForResource on clusters, services, tasks and task
 * definition revisions (Amazon ECS API reference for each action).
 */
import type { SimCore } from '../core';
import { EcsApiError, clientException, clusterNotFound, invalidParameter, serviceNotFound } from '../errors';
import { listMember } from '../protocol';
import type { Tag } from '../state';
import { str, tagsInput } from './inputs';

/** The live tag list of the resource an ARN names. */
export function tagsOf(core: SimCore, arn: string): Tag[] {
  const p = core.arns.parse(arn);
  if (!p) throw invalidParameter(`Invalid resource ARN: ${arn}`);
  switch (p.kind) {
    case 'cluster': {
      const c = core.state.clusters.get(p.cluster);
      if (!c || c.status !== 'ACTIVE') throw clusterNotFound();
      return c.tags;
    }
    case 'service': {
      const c = core.state.clusters.get(p.cluster);
      if (!c || c.status !== 'ACTIVE') throw clusterNotFound();
      const s = c.services.get(p.service);
      if (!s || s.status === 'INACTIVE') throw serviceNotFound();
      return s.tags;
    }
    case 'task': {
      const c = core.state.clusters.get(p.cluster);
      if (!c) throw clusterNotFound();
      const t = c.tasks.get(p.taskId);
      if (!t) throw new EcsApiError('ResourceNotFoundException', 'The specified task was not found.');
      return t.tags;
    }
    case 'task-definition': {
      const rev = core.state.families.get(p.family)?.revisions[p.revision - 1];
      if (!rev) throw clientException('The specified task definition does not exist.');
      return rev.tags;
    }
    default:
      throw invalidParameter(`Resource ${arn} cannot be tagged.`);
  }
}

/** TagResource: merges the tags in (at most 50 on the resource; a refused call changes none). */
export function tagResource(core: SimCore, i: Record<string, unknown>): unknown {
  const tags = tagsOf(core, str(i, 'resourceArn', true));
  const add = tagsInput(i.tags);
  if (add.length === 0) throw invalidParameter('Tags cannot be empty.');
  // Merge into a copy and check the limit before changing the resource: a refused TagResource
  // changes no tag.
  const merged = tags.map((t) => ({ ...t }));
  for (const t of add) {
    const existing = merged.find((x) => x.key === t.key);
    if (existing) existing.value = t.value;
    else merged.push(t);
  }
  if (merged.length > 50) throw invalidParameter('The resource can have at most 50 tags.');
  tags.splice(0, tags.length, ...merged);
  return {};
}

/** UntagResource: removes the named keys. */
export function untagResource(core: SimCore, i: Record<string, unknown>): unknown {
  const tags = tagsOf(core, str(i, 'resourceArn', true));
  const keys = listMember(i, 'tagKeys', 'string');
  if (!keys || keys.length === 0) throw invalidParameter('TagKeys cannot be empty.');
  for (const k of keys) {
    const idx = tags.findIndex((t) => t.key === k);
    if (idx >= 0) tags.splice(idx, 1);
  }
  return {};
}

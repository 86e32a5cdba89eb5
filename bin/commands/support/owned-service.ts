/**
 * What the verbs that act on a running service (`ecsr restart`, `run`, `exec`) check first: the
 * spec in the table is valid and present, and the ECS service exists and carries this
 * reconciler's owner tag, so that they act only on what the reconciler manages (the rule the
 * reconciler itself follows: a service without the tag is left alone).
 *
 * Calls: DynamoDB GetItem; ECS DescribeServices with `include: ['TAGS']` (Amazon ECS API
 * Reference, DescribeServices).
 */
import { DescribeServicesCommand, type ECSClient, type Service } from '@aws-sdk/client-ecs';
import { ENV } from '../../../lambda/config';
import { DEFAULT_PLAN_OPTIONS } from '../../../lambda/core/options';
import { OWNER_TAG_KEY } from '../../../lambda/core/ports';
import type { ServiceKey, ServiceSpec } from '../../../lambda/core/types';
import { CliError } from './errors';
import { entryId, type SpecTable } from './spec-table';

/** The owner id this shell's reconciler uses: `OWNER_ID`, else the reconciler's default. */
export function ownerIdOf(env: NodeJS.ProcessEnv = process.env): string {
  const v = env[ENV.ownerId]?.trim();
  return v ? v : DEFAULT_PLAN_OPTIONS.ownerId;
}

/** A managed service: its spec as the reconciler reads it, the spec's hash, and ECS's service. */
export interface OwnedService {
  readonly spec: ServiceSpec;
  readonly hash: string;
  readonly service: Service;
}

/**
 * The spec of `key` and its ECS service, checked as the module comment says.
 * @param verb the command, for the sentences (`restart`).
 * @throws CliError when there is no spec, it is invalid or absent, ECS has no ACTIVE service of
 *   that name, or the service is not owned by this reconciler (`OWNER_ID`).
 */
export async function ownedService(table: SpecTable, ecs: ECSClient, key: ServiceKey, verb: string): Promise<OwnedService> {
  const id = entryId(table.target, key);
  const entry = await table.get(key);
  if (!entry) throw new CliError(`There is no spec ${id} in table ${table.name}: ecsr ${verb} acts only on services the reconciler manages.`);
  if (!entry.result.ok) throw new CliError(`${id} is not a valid spec, so the reconciler does not manage its service: fix it first (ecsr get ${id}).`);
  if (entry.result.spec.state === 'absent') throw new CliError(`${id} is marked absent: the reconciler is deleting its service, so ecsr ${verb} leaves it alone.`);
  const service = (await ecs.send(new DescribeServicesCommand({ cluster: key.cluster, services: [key.service], include: ['TAGS'] }))).services?.[0];
  if (!service || service.status !== 'ACTIVE') {
    throw new CliError(`ECS has no active service ${id}${service?.status ? ` (it is ${service.status})` : ''}: the next pass creates it (ecsr get ${id}).`);
  }
  const ownerId = ownerIdOf();
  const owner = service.tags?.find((t) => t.key === OWNER_TAG_KEY)?.value;
  if (owner !== ownerId) {
    throw new CliError(
      owner === undefined
        ? `${id} has no owner tag ${OWNER_TAG_KEY}=${ownerId}, so the reconciler leaves it alone and so does ecsr ${verb} (set adopt: true in its spec, or run ecsr import ${id} --apply).`
        : `${id} is owned by another reconciler (${OWNER_TAG_KEY}=${owner}, this one is ${ownerId}; set OWNER_ID for that one): ecsr ${verb} leaves it alone.`,
    );
  }
  return { spec: entry.result.spec, hash: entry.result.hash, service };
}

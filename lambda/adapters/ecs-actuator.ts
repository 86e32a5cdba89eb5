/**
 * The ECS actuator: executes a plan's actions in order with the ECS API (Amazon ECS API reference,
 * RegisterTaskDefinition, CreateService, UpdateService, DeleteService, TagResource). The plan's
 * requests are typed from the vocabulary's declarations and `satisfies` the SDK's input types:
 * nothing is cast, so a declared field whose shape the SDK does not take fails to compile here.
 */
import {
  CreateServiceCommand,
  DeleteServiceCommand,
  DescribeClustersCommand,
  RegisterTaskDefinitionCommand,
  TagResourceCommand,
  UpdateServiceCommand,
  type CreateServiceCommandInput,
  type ECSClient,
  type RegisterTaskDefinitionCommandInput,
  type UpdateServiceCommandInput,
} from '@aws-sdk/client-ecs';
import { OWNER_TAG_KEY, type ActionResult, type EcsReader, type EcsWriter } from '../core/ports';
import { Reason } from '../core/status';
import { taskDefinitionsEqual } from '../core/taskdef';
import type {
  Action,
  CreateServiceAction,
  DeleteServiceAction,
  RegisterTaskDefinitionAction,
  UpdateServiceAction,
} from '../core/types';
import { rememberTaskDefinition, taskDefinitionOf } from './ecs-observer';
import { classifyError, errorMessage, isNotFound, isProgrammingError } from './errors';

/** Message of actions not started because the invocation ran short of time. */
export const OUT_OF_TIME_MESSAGE = 'not started: the pass ran short of time; left for the next pass';

/** Which family a Create/UpdateService action refers to by name (not by ARN), if any. */
function familyReference(action: CreateServiceAction | UpdateServiceAction): string | undefined {
  const td = action.input.taskDefinition;
  return td !== undefined && !td.startsWith('arn:') && !td.includes(':') ? td : undefined;
}

/**
 * {@link EcsWriter} on an ECSClient (rate limited, standard retries).
 *
 * - RegisterTaskDefinition first reuses the family's latest ACTIVE revision when it is canonically
 *   equal to the input (DescribeTaskDefinition with the family name), so a pass that crashed
 *   between register and update does not pile up revisions; the ARN registered or reused replaces
 *   the family name in the following CreateService / UpdateService of that family. The revision
 *   registered (RegisterTaskDefinition answers its full description) enters the observer's
 *   task definition cache, so the next passes of this container do not describe it.
 * - A Create/UpdateService whose family failed to register is skipped (`errorClass: 'skipped'`).
 * - TagResource tags a service being adopted (the owner tag and the spec's tags). When it fails,
 *   the service's later actions (RegisterTaskDefinition, UpdateService, DeleteService) are skipped:
 *   the service is still not owned, and the reconciler writes only to services it owns.
 * - DeleteService with `scaleToZero` sends UpdateService `desiredCount: 0` first (DeleteService
 *   fails while the service keeps tasks; docs/ecs-facts.md §3); a service already gone counts as deleted.
 * - `shouldContinue()` is asked before each action; once false, the rest are skipped and left for
 *   the next pass. One failed action never stops the others.
 * Errors are classified with `errors.ts`; the result keeps ECS's own message.
 */
export class EcsActuator implements EcsWriter {
  constructor(
    private readonly ecs: ECSClient,
    private readonly reader: Pick<EcsReader, 'latestActiveTaskDefinition'>,
  ) {}

  /**
   * @returns one result per action, in plan order.
   * @throws only programming errors (TypeError and the like), never an AWS failure.
   */
  async apply(actions: Action[], shouldContinue: () => boolean): Promise<ActionResult[]> {
    const registered = new Map<string, string>();
    const failedFamilies = new Map<string, string>();
    const failedAdoptions = new Map<string, string>();
    const results: ActionResult[] = [];
    let outOfTime = false;
    for (const action of actions) {
      if (!outOfTime && !shouldContinue()) outOfTime = true;
      if (outOfTime) {
        results.push({ ok: false, action, errorClass: 'skipped', message: OUT_OF_TIME_MESSAGE });
        continue;
      }
      const service = `${action.cluster}/${action.service}`;
      const adoption = failedAdoptions.get(service);
      if (adoption !== undefined) {
        results.push({
          ok: false,
          action,
          errorClass: 'skipped',
          message: `not started: TagResource of ${service} failed (${adoption}); the service is not owned`,
        });
        continue;
      }
      const result = await this.applyOne(action, registered, failedFamilies);
      // Only a refused adoption (the tag that carries the owner tag) stops the service's other
      // actions: a refused tag update of an owned service must not block its rollouts.
      const adopts = action.type === 'TagResource' && action.tags.some((t) => t.key === OWNER_TAG_KEY);
      if (adopts && !result.ok) failedAdoptions.set(service, result.message);
      results.push(result);
    }
    return results;
  }

  private async applyOne(
    action: Action,
    registered: Map<string, string>,
    failedFamilies: Map<string, string>,
  ): Promise<ActionResult> {
    if (action.type === 'CreateService' || action.type === 'UpdateService') {
      const family = familyReference(action);
      if (family !== undefined && failedFamilies.has(family)) {
        return {
          ok: false,
          action,
          errorClass: 'skipped',
          message: `not started: RegisterTaskDefinition of ${family} failed (${failedFamilies.get(family)})`,
        };
      }
    }
    try {
      switch (action.type) {
        case 'RegisterTaskDefinition': {
          const r = await this.register(action);
          registered.set(action.input.family, r.arn);
          return { ok: true, action, detail: r.detail, taskDefinitionArn: r.arn };
        }
        case 'CreateService':
          return { ok: true, action, detail: await this.create(action, registered) };
        case 'UpdateService':
          return { ok: true, action, detail: await this.update(action, registered) };
        case 'DeleteService':
          return { ok: true, action, detail: await this.delete(action) };
        case 'TagResource':
          await this.ecs.send(new TagResourceCommand({ resourceArn: action.resourceArn, tags: action.tags }));
          return { ok: true, action, detail: `tagged ${action.resourceArn} (${action.tags.map((t) => t.key).join(', ')})` };
        default:
          return unknownAction(action);
      }
    } catch (err) {
      if (isProgrammingError(err)) throw err;
      const message = errorMessage(err);
      if (action.type === 'RegisterTaskDefinition') failedFamilies.set(action.input.family, message);
      if ((action.type === 'CreateService' || action.type === 'UpdateService') && MISSING_PROVIDER_TEXT.test(message)) {
        const strategy = action.input.capacityProviderStrategy ?? [];
        const named = [...new Set(strategy.map((s) => s.capacityProvider).filter((p): p is string => typeof p === 'string'))];
        return {
          ok: false,
          action,
          errorClass: 'invalid',
          reason: Reason.CapacityProviderMissing,
          message: await this.missingProviderMessage(action.cluster, named),
        };
      }
      return { ok: false, action, errorClass: classifyError(err), message };
    }
  }

  /**
   * The status sentence for ECS's "capacity provider that is not associated with the cluster":
   * which of `named` the cluster lacks (one DescribeClusters, only on this failure; when it fails
   * too, the sentence names the strategy's providers) and the fix.
   */
  private async missingProviderMessage(cluster: string, named: string[]): Promise<string> {
    let missing = named;
    try {
      const out = await this.ecs.send(new DescribeClustersCommand({ clusters: [cluster] }));
      const has = new Set(out.clusters?.[0]?.capacityProviders ?? []);
      const lacking = named.filter((p) => !has.has(p));
      if (lacking.length > 0) missing = lacking;
    } catch {
      // Best effort: the strategy's providers still say where to look.
    }
    const list = missing.join(' and ');
    return (
      `cluster ${cluster} has no ${list} capacity provider${missing.length === 1 ? '' : 's'}, which the spec's capacity provider strategy uses. ` +
      `Fix: associate ${missing.length === 1 ? 'it' : 'them'} with the cluster (aws ecs put-cluster-capacity-providers --cluster ${cluster} ` +
      '--capacity-providers FARGATE FARGATE_SPOT --default-capacity-provider-strategy capacityProvider=FARGATE,weight=1, keeping any ' +
      'provider the cluster already has), or use another one in the spec (capacityProvider, or launchType: FARGATE); the next pass retries'
    );
  }

  private async register(action: RegisterTaskDefinitionAction): Promise<{ arn: string; detail: string }> {
    const latest = await this.reader.latestActiveTaskDefinition(action.input.family);
    if (latest?.taskDefinitionArn && taskDefinitionsEqual(latest, action.input)) {
      return { arn: latest.taskDefinitionArn, detail: `reused ${latest.taskDefinitionArn}` };
    }
    const input = withoutEmptyTags(action.input) satisfies RegisterTaskDefinitionCommandInput;
    const out = await this.ecs.send(new RegisterTaskDefinitionCommand(input));
    const td = taskDefinitionOf(out);
    const arn = td?.taskDefinitionArn;
    if (!td || !arn) throw Object.assign(new Error('RegisterTaskDefinition returned no taskDefinitionArn'), { $fault: 'server' });
    rememberTaskDefinition(td);
    return { arn, detail: `registered ${arn}` };
  }

  private async create(action: CreateServiceAction, registered: Map<string, string>): Promise<string> {
    const input = {
      ...action.input,
      taskDefinition: resolveFamily(action.input.taskDefinition, registered),
    } satisfies CreateServiceCommandInput;
    const out = await this.ecs.send(new CreateServiceCommand(input));
    return `created ${out.service?.serviceArn ?? action.input.serviceName} (${input.taskDefinition})`;
  }

  private async update(action: UpdateServiceAction, registered: Map<string, string>): Promise<string> {
    const input = {
      ...action.input,
      ...(action.input.taskDefinition !== undefined ? { taskDefinition: resolveFamily(action.input.taskDefinition, registered) } : {}),
    } satisfies UpdateServiceCommandInput;
    const out = await this.ecs.send(new UpdateServiceCommand(input));
    const primary = out.service?.deployments?.find((d) => d.status === 'PRIMARY');
    return `updated ${action.cluster}/${action.service}${primary?.id ? ` (deployment ${primary.id})` : ''}`;
  }

  private async delete(action: DeleteServiceAction): Promise<string> {
    const target = { cluster: action.cluster, service: action.service };
    try {
      if (action.scaleToZero) await this.ecs.send(new UpdateServiceCommand({ ...target, desiredCount: 0 }));
      await this.ecs.send(new DeleteServiceCommand(target));
      return `deleted ${action.cluster}/${action.service}`;
    } catch (err) {
      // Already DRAINING, INACTIVE or gone: the goal of the action holds.
      if (isNotFound(err)) return `already gone: ${errorMessage(err)}`;
      throw err;
    }
  }
}

/** ECS's InvalidParameterException text for a strategy naming a provider the cluster lacks. */
const MISSING_PROVIDER_TEXT = /capacity provider that is not associated with the cluster/i;

/** A plan action type this actuator does not know: a programming error (types out of step). */
function unknownAction(action: never): never {
  throw new TypeError(`unknown action type: ${(action as { type?: string }).type}`);
}

/** The registered ARN for a family name used in this apply; anything else unchanged. */
function resolveFamily(taskDefinition: string, registered: Map<string, string>): string {
  return registered.get(taskDefinition) ?? taskDefinition;
}

function withoutEmptyTags<T extends { tags?: unknown[] }>(td: T): T {
  if (Array.isArray(td.tags) && td.tags.length === 0) {
    const { tags: _none, ...rest } = td;
    return rest as T;
  }
  return td;
}

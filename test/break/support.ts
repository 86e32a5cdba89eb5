/**
 * Helpers of the adversarial scenarios (test/break): the simulator + dynalite harness of the
 * runtime tests, plus what breaking the reconciler needs: a runtime with other overrides on the
 * same servers, DynamoDB page faults, owned services made by hand, revisions of a family.
 */
import { CreateServiceCommand, ECSClient, RegisterTaskDefinitionCommand, paginateListTaskDefinitions } from '@aws-sdk/client-ecs';
import { createRuntime, type Runtime, type RuntimeOverrides } from '../../lambda/adapters/runtime';
import { OWNER_TAG_KEY } from '../../lambda/core/ports';
import type { RetryStrategyV2, RetryToken } from '@smithy/types';
import { LOCAL, localDoc, type SimHarness } from '../runtime/support';

export { aSpecItem, aValidSpec, SimHarness, useSimHarness } from '../runtime/support';

/**
 * A second runtime on the harness's servers, table, clock, metrics and log, with `overrides`
 * (e.g. a small Scan page, a document client that fails a page).
 */
export function runtimeWith(h: SimHarness, overrides: RuntimeOverrides): Runtime {
  const sim = h.sim;
  return createRuntime(h.runtime.config, {
    ecsClientConfig: { ...LOCAL, endpoint: sim.endpoint },
    doc: h.doc,
    metrics: h.metrics,
    log: h.log,
    clock: { now: () => sim.clock.now() },
    limiterTime: {
      nowMs: () => sim.clock.now().getTime(),
      sleep: async (ms) => {
        sim.advance(ms / 1000);
      },
    },
    ...overrides,
  });
}

/** An ECS client on the simulator, as a person's CLI would use it (no limiter). */
export function personEcs(h: SimHarness): ECSClient {
  return new ECSClient({ ...LOCAL, endpoint: h.sim.endpoint, maxAttempts: 1 });
}

/** Task definition ARNs of a family, oldest first (every status). */
export async function revisions(h: SimHarness, family: string): Promise<string[]> {
  const ecs = personEcs(h);
  try {
    const arns: string[] = [];
    for await (const page of paginateListTaskDefinitions({ client: ecs }, { familyPrefix: family, status: 'ACTIVE', sort: 'ASC' })) {
      arns.push(...(page.taskDefinitionArns ?? []));
    }
    return arns;
  } finally {
    ecs.destroy();
  }
}

/**
 * Creates a service by hand (as the console would), optionally with the owner tag of the harness
 * (`sim-test`). Returns the task definition ARN it runs.
 */
export async function handMadeService(
  h: SimHarness,
  opts: { cluster?: string; service: string; image?: string; desiredCount?: number; owned?: boolean },
): Promise<string> {
  const ecs = personEcs(h);
  try {
    const td = await ecs.send(
      new RegisterTaskDefinitionCommand({
        family: `hand-${opts.service}`,
        networkMode: 'awsvpc',
        requiresCompatibilities: ['FARGATE'],
        cpu: '256',
        memory: '512',
        containerDefinitions: [{ name: opts.service, image: opts.image ?? 'public.ecr.aws/nginx/nginx:1.25', essential: true }],
      }),
    );
    await ecs.send(
      new CreateServiceCommand({
        cluster: opts.cluster ?? 'apps',
        serviceName: opts.service,
        taskDefinition: td.taskDefinition?.taskDefinitionArn,
        desiredCount: opts.desiredCount ?? 1,
        launchType: 'FARGATE',
        networkConfiguration: { awsvpcConfiguration: { subnets: ['subnet-0123456789abcdef0'] } },
        ...(opts.owned ? { tags: [{ key: OWNER_TAG_KEY, value: 'sim-test' }] } : {}),
      }),
    );
    return td.taskDefinition?.taskDefinitionArn ?? '';
  } finally {
    ecs.destroy();
  }
}

/**
 * The SDK's standard retry decision (3 attempts; throttling, transient and server errors are
 * retried, client errors are not) without the real-time backoff: the simulator's clock is
 * virtual, so waiting in real time would only slow the tests.
 */
export const instantRetries: RetryStrategyV2 = {
  async acquireInitialRetryToken(): Promise<RetryToken> {
    return { getRetryCount: () => 0, getRetryDelay: () => 0 };
  },
  async refreshRetryTokenForRetry(token, info): Promise<RetryToken> {
    const count = token.getRetryCount() + 1;
    if (info.errorType === 'CLIENT_ERROR' || count >= 3) throw info.error ?? new Error('no retry');
    return { getRetryCount: () => count, getRetryDelay: () => 0 };
  },
  recordSuccess(): void {},
};

/**
 * A status write: an UpdateItem (lib-dynamodb's UpdateCommand reaches the client's middleware as
 * UpdateItemCommand) of a spec item, not of the reconciler's own items (fences: `#` keys).
 */
export function isStatusWrite(command: string | undefined, input: unknown): boolean {
  if (command !== 'UpdateItemCommand' && command !== 'UpdateCommand') return false;
  const pk = (input as { Key?: { cluster?: unknown } } | undefined)?.Key?.cluster;
  const value = typeof pk === 'string' ? pk : (pk as { S?: string } | undefined)?.S;
  return !(typeof value === 'string' && value.startsWith('#'));
}

/**
 * A document client on the harness's table whose status writes (UpdateItem) answer 500, as
 * DynamoDB does for an internal error, while `failing` (default true); `refused()` counts them.
 * Destroy it after use.
 */
export function statusWritesFailing(h: SimHarness, failing = true) {
  const doc = localDoc(h.db.endpoint);
  let refused = 0;
  doc.middlewareStack.add(
    (next, context) => async (args) => {
      if (failing && isStatusWrite(context.commandName, args.input)) {
        refused += 1;
        throw Object.assign(new Error('We encountered an internal error'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } });
      }
      return next(args);
    },
    { step: 'initialize', name: 'statusWritesFail' },
  );
  return { doc, refused: () => refused };
}

/**
 * The trust boundary against the ECS simulator and dynalite: what a person who can write the spec
 * table cannot make the reconciler do. Each case checks the item's status and that the simulator
 * saw no ECS write for it.
 */
import { CreateServiceCommand, ECSClient, RegisterTaskDefinitionCommand } from '@aws-sdk/client-ecs';
import { describe, expect, it } from 'vitest';
import { ENV } from '../../lambda/config';
import { OWNER_TAG_KEY } from '../../lambda/core/ports';
import { Reason } from '../../lambda/core/status';
import type { ServiceStatus } from '../../lambda/core/types';
import { aSpecItem, LOCAL, type SimHarness, useSimHarness } from './support';

const WEB = { cluster: 'apps', service: 'web' };

/** Creates a service by hand (as a person or another tool would), with these tags. */
async function aServiceMadeByHand(h: SimHarness, service: string, tags: Record<string, string>): Promise<void> {
  const ecs = new ECSClient({ ...LOCAL, endpoint: h.sim.endpoint });
  try {
    const td = await ecs.send(
      new RegisterTaskDefinitionCommand({
        family: `hand-${service}`,
        networkMode: 'awsvpc',
        requiresCompatibilities: ['FARGATE'],
        cpu: '256',
        memory: '512',
        containerDefinitions: [{ name: service, image: 'public.ecr.aws/nginx/nginx:1.25', essential: true }],
      }),
    );
    await ecs.send(
      new CreateServiceCommand({
        cluster: 'apps',
        serviceName: service,
        taskDefinition: td.taskDefinition?.taskDefinitionArn,
        desiredCount: 1,
        launchType: 'FARGATE',
        networkConfiguration: { awsvpcConfiguration: { subnets: ['subnet-0123456789abcdef0'] } },
        ...(Object.keys(tags).length > 0 ? { tags: Object.entries(tags).map(([key, value]) => ({ key, value })) } : {}),
      }),
    );
  } finally {
    ecs.destroy();
  }
}

function blockedReason(status: ServiceStatus | undefined): string | undefined {
  return status?.conditions.find((c) => c.type === 'Blocked')?.reason;
}

describe('adoption', () => {
  const h = useSimHarness();

  it('adopt: true never takes a service another reconciler owns: OwnedByAnother, no ECS write', async () => {
    // Prepare
    await aServiceMadeByHand(h, 'web', { [OWNER_TAG_KEY]: 'team-b' });
    await h.putSpec(aSpecItem({ adopt: true, desiredCount: 3 }));
    h.sim.clearCalls();
    // Act
    await h.pass('p1');
    // Assess
    const status = await h.status(WEB);
    expect(status?.phase).toBe('Blocked');
    expect(blockedReason(status)).toBe(Reason.OwnedByAnother);
    expect(h.writes()).toEqual([]);
    expect((await h.describe('apps', 'web'))?.tags).toEqual([{ key: OWNER_TAG_KEY, value: 'team-b' }]);
  });

  it('with ALLOW_ADOPTION=false, adopt: true on an untagged service is NotAllowed, no ECS write', async () => {
    // Prepare
    await h.reset({ env: { [ENV.allowAdoption]: 'false' } });
    await aServiceMadeByHand(h, 'web', {});
    await h.putSpec(aSpecItem({ adopt: true, desiredCount: 3 }));
    h.sim.clearCalls();
    // Act
    await h.pass('p1');
    // Assess
    const status = await h.status(WEB);
    expect(blockedReason(status)).toBe(Reason.NotAllowed);
    expect(status?.conditions.find((c) => c.type === 'Blocked')?.message).toContain('ALLOW_ADOPTION');
    expect(h.writes()).toEqual([]);
  });

  it('with adoption allowed (the CLI default), adopt: true tags the untagged service with our owner id', async () => {
    // Prepare
    await aServiceMadeByHand(h, 'web', {});
    await h.putSpec(aSpecItem({ adopt: true, desiredCount: 1 }));
    h.sim.clearCalls();
    // Act
    await h.pass('p1');
    // Assess
    expect(h.writes()[0]).toBe('TagResource');
    expect((await h.describe('apps', 'web'))?.tags).toContainEqual({ key: OWNER_TAG_KEY, value: 'sim-test' });
  });
});

/**
 * The simulator's service deployment history (Amazon ECS API reference: ListServiceDeployments,
 * DescribeServiceDeployments, DescribeServiceRevisions), over HTTP with the AWS SDK: a create and
 * a successful rollout are SUCCESSFUL, a circuit-breaker rollback is ROLLBACK_SUCCESSFUL with the
 * failed revision as target and the rolled-back-to revision in `rollback`.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  DescribeServiceDeploymentsCommand,
  DescribeServiceRevisionsCommand,
  ListServiceDeploymentsCommand,
  RegisterTaskDefinitionCommand,
  UpdateServiceCommand,
  type ECSClient,
} from '@aws-sdk/client-ecs';
import { startSimulator, type Simulator } from '../../local/sim';
import { aTaskDefinition, advanceUntil, deploy, describeService, ecsClient } from './helpers';

describe('simulator: service deployments', () => {
  let sim: Simulator;
  let ecs: ECSClient;
  beforeAll(async () => {
    sim = await startSimulator({ startTime: new Date('2025-01-01T00:00:00Z') });
    ecs = ecsClient(sim);
  });
  afterAll(async () => {
    ecs.destroy();
    await sim.close();
  });
  beforeEach(() => sim.reset());

  const steady = async (td: string) =>
    advanceUntil(sim, async () => {
      const s = await describeService(ecs, 'c1', 'web');
      return s.taskDefinition === td && s.deployments?.length === 1 && s.deployments[0].rolloutState === 'COMPLETED';
    });

  it('records each rollout; a rollback names the failed revision as target and the one it returned to', async () => {
    // Prepare: a service steady on a good image, then a rollout of an image that cannot be pulled.
    const good = await deploy(ecs, { svc: { deploymentConfiguration: { deploymentCircuitBreaker: { enable: true, rollback: true } } } });
    await steady(good);
    const bad = (await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition({ image: 'public.ecr.aws/x/does-not-exist:1' })))).taskDefinition
      ?.taskDefinitionArn as string;

    // Act
    await ecs.send(new UpdateServiceCommand({ cluster: 'c1', service: 'web', taskDefinition: bad }));
    await steady(good);
    const listed = await ecs.send(new ListServiceDeploymentsCommand({ cluster: 'c1', service: 'web' }));
    const rolledBack = await ecs.send(new ListServiceDeploymentsCommand({ cluster: 'c1', service: 'web', status: ['ROLLBACK_SUCCESSFUL'] }));
    const arns = (listed.serviceDeployments ?? []).map((d) => d.serviceDeploymentArn as string);
    const described = await ecs.send(new DescribeServiceDeploymentsCommand({ serviceDeploymentArns: [...arns, `${arns[0]}x`] }));
    const revisions = await ecs.send(
      new DescribeServiceRevisionsCommand({ serviceRevisionArns: (listed.serviceDeployments ?? []).map((d) => d.targetServiceRevisionArn as string) }),
    );

    // Assess: newest first; the failed rollout was rolled back to the first revision.
    expect(listed.serviceDeployments?.map((d) => d.status)).toEqual(['ROLLBACK_SUCCESSFUL', 'SUCCESSFUL']);
    expect(rolledBack.serviceDeployments).toHaveLength(1);
    expect(revisions.serviceRevisions?.map((r) => r.taskDefinition)).toEqual([bad, good]);
    const [failed, first] = described.serviceDeployments ?? [];
    expect(failed).toMatchObject({
      status: 'ROLLBACK_SUCCESSFUL',
      targetServiceRevision: { arn: listed.serviceDeployments?.[0].targetServiceRevisionArn },
      sourceServiceRevisions: [{ arn: listed.serviceDeployments?.[1].targetServiceRevisionArn }],
      rollback: { serviceRevisionArn: listed.serviceDeployments?.[1].targetServiceRevisionArn },
    });
    expect(failed.finishedAt).toBeInstanceOf(Date);
    expect(first).toMatchObject({ status: 'SUCCESSFUL', sourceServiceRevisions: [] });
    expect(described.failures).toEqual([{ arn: `${arns[0]}x`, reason: 'MISSING' }]);
  });

  it('a rollout superseded by another is STOPPED; pages are newest first with a nextToken', async () => {
    const v1 = await deploy(ecs, { td: { image: 'public.ecr.aws/nginx/slow-start:1' } });
    const v2 = (await ecs.send(new RegisterTaskDefinitionCommand(aTaskDefinition({ image: 'app:2' })))).taskDefinition?.taskDefinitionArn as string;
    await ecs.send(new UpdateServiceCommand({ cluster: 'c1', service: 'web', taskDefinition: v2 }));
    sim.advance(1);
    await ecs.send(new UpdateServiceCommand({ cluster: 'c1', service: 'web', forceNewDeployment: true }));
    await steady(v2);

    const first = await ecs.send(new ListServiceDeploymentsCommand({ cluster: 'c1', service: 'web', maxResults: 2 }));
    const rest = await ecs.send(new ListServiceDeploymentsCommand({ cluster: 'c1', service: 'web', maxResults: 2, nextToken: first.nextToken }));

    expect(first.serviceDeployments?.map((d) => d.status)).toEqual(['SUCCESSFUL', 'STOPPED']);
    expect(rest.serviceDeployments?.map((d) => d.status)).toEqual(['STOPPED']);
    expect(rest.nextToken).toBeUndefined();
    expect(v1).toMatch(/web:1$/);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ECSClient, CreateClusterCommand, ListClustersCommand } from '@aws-sdk/client-ecs';
import { LOCAL_CLIENT_CONFIG, startMoto, type MotoServer } from './support/moto';
import { needs } from './support/tools';

describe('moto support', needs('moto'), () => {
  let moto: MotoServer;
  beforeAll(async () => {
    moto = await startMoto();
  });
  afterAll(async () => {
    await moto?.stop();
  });

  it('answers the real ECS client and resets', async () => {
    const ecs = new ECSClient({ ...LOCAL_CLIENT_CONFIG, endpoint: moto.endpoint });
    await ecs.send(new CreateClusterCommand({ clusterName: 'c1' }));
    expect((await ecs.send(new ListClustersCommand({}))).clusterArns).toHaveLength(1);
    await moto.reset();
    expect((await ecs.send(new ListClustersCommand({}))).clusterArns ?? []).toHaveLength(0);
  });
});

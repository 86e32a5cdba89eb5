/**
 * The harness of the end-to-end CLI suites: dynalite and the ECS simulator (manual clock) started
 * once per file, and per case a fresh specs table and cluster, the environment that points the
 * CLI at them, and a runtime (`createLocalRuntime`: the Lambda's runtime on the local stack) that
 * runs passes while a CLI command waits.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateServiceCommand, ECSClient, RegisterTaskDefinitionCommand, type ECSClientConfig } from '@aws-sdk/client-ecs';
import { GetCommand, paginateScan } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll } from 'vitest';
import { RecordingLog } from '../../lambda/adapters/logger';
import { InMemoryMetricsSink } from '../../lambda/adapters/metrics';
import type { PassSummary } from '../../lambda/core/pass';
import { createCluster, createLocalRuntime, createSpecsTable, localReconcilerEnv, startLocalStack, type LocalStack } from '../../local/stack';
import { baseEnv } from './run-cli';

const WRITES = new Set(['RegisterTaskDefinition', 'CreateService', 'UpdateService', 'DeleteService', 'TagResource']);

/** A spec as YAML text: `image` nginx 1.27 and 2 tasks unless `extra` says otherwise. */
export const spec = (cluster: string, service: string, extra = '') =>
  `cluster: ${cluster}\nservice: ${service}\nimage: public.ecr.aws/nginx/nginx:1.27\ndesiredCount: 2\n${extra}`;

/** Starts the local stack for the file (beforeAll/afterAll) and returns the case factory. */
export function useCliStack(prefix: string) {
  let stack: LocalStack;
  let dir: string;
  let cases = 0;

  beforeAll(async () => {
    stack = await startLocalStack({ specsTable: `${prefix}-unused`, clusters: [] });
    dir = mkdtempSync(join(tmpdir(), `ecsr-${prefix}-`));
  });
  afterAll(async () => {
    await stack?.close();
  });

  /**
   * A fresh table and cluster, the environment that points the CLI at them, and helpers.
   * @param opts.reconcilerEnv extra reconciler variables of the case's passes (e.g. allow-lists).
   * @param opts.alsoManaged clusters the reconciler's role may use beside the case's own, given that
   *   cluster's name (the local run evaluates the construct's ECS policy, as AWS would).
   */
  async function aCase(opts: { reconcilerEnv?: Record<string, string>; alsoManaged?: (cluster: string) => string[] } = {}) {
    const n = ++cases;
    const table = `${prefix}-specs-${n}`;
    const cluster = `${prefix}${n}`;
    await createSpecsTable(stack, table);
    await createCluster(stack, cluster);
    const reconciler = localReconcilerEnv({ table, region: stack.region, clusters: [cluster, ...(opts.alsoManaged?.(cluster) ?? [])] }, opts.reconcilerEnv);
    const env = baseEnv({ ...stack.env, ...reconciler });
    const runtime = createLocalRuntime(stack, { env: reconciler, table, metrics: new InMemoryMetricsSink(), log: new RecordingLog() });
    const file = (name: string, text: string) => {
      const path = join(dir, `${n}-${name}`);
      writeFileSync(path, text);
      return path;
    };
    const items = async () => {
      const out: Record<string, unknown>[] = [];
      for await (const page of paginateScan({ client: stack.doc }, { TableName: table, ConsistentRead: true })) out.push(...(page.Items ?? []));
      // The spec history's items are ecsr's own record of the writes (test/cli/history*.test.ts).
      return out.filter((i) => i.cluster !== '#lease' && i.cluster !== '#history');
    };
    const item = async (service: string) =>
      (await stack.doc.send(new GetCommand({ TableName: table, Key: { cluster, service }, ConsistentRead: true }))).Item;
    const pass = async (): Promise<PassSummary> => runtime.run({ holder: `test-${n}` });
    /** Runs a pass per simulated minute until stopped (while a CLI command waits). */
    const passLoop = () => {
      let stop = false;
      const loop = (async () => {
        while (!stop) {
          await pass();
          stack.sim.clock.advance(60);
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      return async () => {
        stop = true;
        await loop;
      };
    };
    const writeCalls = () =>
      stack.sim.calls().filter((c) => WRITES.has(c.action) && (c.request.cluster === cluster || String(c.request.family ?? '').startsWith(`${cluster}-`)));
    return { n, table, cluster, env, runtime, file, items, item, pass, passLoop, writeCalls };
  }

  return { stack: () => stack, aCase };
}

/** A service made outside the reconciler (no owner tag), as the console or Terraform would. */
export async function createHandMadeService(config: ECSClientConfig, cluster: string, serviceName: string): Promise<void> {
  const ecs = new ECSClient(config);
  try {
    const td = await ecs.send(
      new RegisterTaskDefinitionCommand({
        family: `${cluster}-hand-made`,
        requiresCompatibilities: ['FARGATE'],
        networkMode: 'awsvpc',
        cpu: '256',
        memory: '512',
        containerDefinitions: [{ name: 'web', image: 'public.ecr.aws/nginx/nginx:1.27', essential: true }],
      }),
    );
    await ecs.send(
      new CreateServiceCommand({
        cluster,
        serviceName,
        taskDefinition: td.taskDefinition?.taskDefinitionArn,
        desiredCount: 1,
        launchType: 'FARGATE',
        networkConfiguration: { awsvpcConfiguration: { subnets: ['subnet-0a1b2c3d4e5f60001'] } },
      }),
    );
  } finally {
    ecs.destroy();
  }
}

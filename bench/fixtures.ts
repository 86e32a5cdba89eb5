/**
 * The fleet every benchmark reconciles: N service specs spread over a few clusters, written as a
 * person writes them (the same attributes `ecsr apply` stores), and the names of the benchmark's
 * table, owner and region.
 *
 * Shared by the planner benchmark (pure `plan()`), the pass benchmark (DynamoDB items) and their
 * worker processes, so both measure the same fleet. Worker code imports this module, so it imports
 * nothing that starts servers: the reconciler's environment (`localReconcilerEnv` of
 * `local/stack.ts`, which pulls in dynalite) is built by the parent (`./run`, `./pass-bench`) and
 * sent to the workers.
 */

/** Clusters of the fleet: `bench-0` .. `bench-19` (services are dealt round-robin over 20 clusters). */
export const BENCH_CLUSTER_COUNT = 20;

/** The largest fleet the bench builds (service names have five digits). */
export const BENCH_MAX_SERVICES = 20_000;

/** Specs table of the pass benchmark (dynalite). */
export const BENCH_TABLE = 'ecsr-bench-specs';

/** Owner id of the benchmark's reconciler (`OWNER_ID`). */
export const BENCH_OWNER_ID = 'ecsr-bench';

/** Region of the local servers (the simulator's default). */
export const BENCH_REGION = 'us-east-1';

/** Virtual start time of every simulated run: a run is reproducible (seed 1, same calls). */
export const BENCH_START_TIME = new Date('2025-01-06T00:00:30.000Z');

/** Cluster names of the fleet. */
export function benchClusters(): string[] {
  return Array.from({ length: BENCH_CLUSTER_COUNT }, (_, i) => `bench-${i}`);
}

/**
 * The DynamoDB item of the i-th service of the fleet (0-based): cluster `bench-{i mod 20}`, service
 * `svc-00000`..., an nginx image, 1 to 3 tasks (desiredCount), 256 vCPU units and 512 MiB, a
 * container port, three environment variables, one secret and two tags. Subnets, security groups
 * and the execution role come from the reconciler's defaults, as most real specs leave them.
 * @param i index, 0 <= i < {@link BENCH_MAX_SERVICES}.
 */
export function benchSpecItem(i: number): Record<string, unknown> {
  const n = String(i).padStart(5, '0');
  return {
    cluster: `bench-${i % BENCH_CLUSTER_COUNT}`,
    service: `svc-${n}`,
    image: `public.ecr.aws/nginx/nginx:1.27.${i % 5}`,
    desiredCount: 1 + (i % 3),
    cpu: 256,
    memory: 512,
    containerPort: 8080,
    environment: { APP_NAME: `svc-${n}`, LOG_LEVEL: 'info', FEATURE_FLAGS: 'a,b,c' },
    secrets: { DB_PASSWORD: `arn:aws:ssm:${BENCH_REGION}:123456789012:parameter/bench/svc-${n}/db` },
    tags: { team: `team-${i % 7}`, tier: 'bench' },
  };
}

/** The first `n` items of the fleet. */
export function benchSpecItems(n: number): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) => benchSpecItem(i));
}

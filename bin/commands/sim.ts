/**
 * `ecsr sim`: runs the ECS simulator (Local Fargate) alone on loopback until SIGINT/SIGTERM, and
 * prints the endpoint and the environment that points the AWS CLI and SDK at it.
 */
import { Command, InvalidArgumentError } from 'commander';
import { SimulatorListenError, startSimulator } from '../../local/sim';
import { collect, parseInteger, parsePort, parsePositive } from './support/options';

/** Default port of `ecsr sim` (0 picks a free one). */
export const DEFAULT_SIM_PORT = 4100;

interface SimCliOptions {
  port: number;
  host: string;
  speed: number;
  manual?: boolean;
  seed: number;
  cluster: string[];
  subnet: string[];
  securityGroup: string[];
  throttling: boolean;
  latency: number;
  region: string;
  accountId: string;
  startTime?: Date;
}

function parseNonNegative(v: string): number {
  const n = Number(v);
  if (!(n >= 0) || !Number.isFinite(n)) throw new InvalidArgumentError('must be a number of 0 or more.');
  return n;
}

function parseDate(v: string): Date {
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) throw new InvalidArgumentError('must be an ISO 8601 time, e.g. 2025-01-01T00:00:00Z.');
  return d;
}

/** The lines printed once the simulator listens (also used by the docs). */
export function startupBanner(info: { endpoint: string; region: string; speed?: number; seed: number; throttling: boolean }): string {
  const clock = info.speed === undefined ? 'manual clock (POST /_sim/advance)' : `clock at ${info.speed}x real time`;
  const e = info.endpoint;
  return [
    `ECS simulator listening on ${e} (${clock}, seed ${info.seed}, throttling ${info.throttling ? 'on' : 'off'})`,
    '',
    'Point the AWS CLI and SDK at it:',
    `  export AWS_ENDPOINT_URL_ECS=${e} AWS_REGION=${info.region} AWS_DEFAULT_REGION=${info.region} AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test`,
    `  aws ecs list-clusters                 # or: aws ecs list-clusters --endpoint-url ${e}`,
    '',
    'Control (outside the ECS API):',
    `  curl -s ${e}/_sim/state`,
    `  curl -s -X POST ${e}/_sim/advance -d '{"seconds": 60}'`,
    '',
    'Stop with Ctrl+C.',
    '',
  ].join('\n');
}

export function simCommand(): Command {
  return new Command('sim')
    .description('Run the ECS API simulator (Local Fargate) on loopback until interrupted')
    .option('-p, --port <port>', 'port to listen on (0 picks a free one)', parsePort, DEFAULT_SIM_PORT)
    .option('--host <address>', 'address to bind', '127.0.0.1')
    .option('-s, --speed <factor>', 'virtual seconds per real second (60 = a simulated minute per second)', parsePositive, 1)
    .option('--manual', 'manual clock: virtual time moves only with POST /_sim/advance')
    .option('--seed <n>', 'seed of every random choice (task durations, ids)', parseInteger, 1)
    .option('-c, --cluster <name>', 'create this cluster at start, with the FARGATE and FARGATE_SPOT capacity providers (repeatable)', collect, [])
    .option('--subnet <id>', 'a subnet that exists (repeatable): once one is given, CreateService, UpdateService and RunTask refuse any other subnet or security group as ECS does', collect, [])
    .option('--security-group <id>', 'a security group that exists (repeatable; see --subnet)', collect, [])
    .option('--no-throttling', 'never answer ThrottlingException')
    .option('--latency <ms>', 'real milliseconds added to each ECS call', parseNonNegative, 0)
    .option('--region <region>', 'region in ARNs', 'us-east-1')
    .option('--account-id <id>', 'account id in ARNs', '123456789012')
    .option('--start-time <iso>', 'virtual time at start (default: now)', parseDate)
    .action(async (opts: SimCliOptions) => {
      const speed = opts.manual ? undefined : opts.speed;
      let sim;
      try {
        sim = await startSimulator({
          port: opts.port,
          host: opts.host,
          speed,
          seed: opts.seed,
          clusters: opts.cluster,
          ...(opts.subnet.length > 0 || opts.securityGroup.length > 0 ? { vpc: { subnets: opts.subnet, securityGroups: opts.securityGroup } } : {}),
          throttling: opts.throttling,
          latencyMs: opts.latency,
          region: opts.region,
          accountId: opts.accountId,
          startTime: opts.startTime,
        });
      } catch (e) {
        if (e instanceof SimulatorListenError) {
          process.stderr.write(`ecsr sim: ${e.message}\n`);
          process.exitCode = 1;
          return;
        }
        throw e;
      }
      process.stdout.write(
        startupBanner({ endpoint: sim.endpoint, region: sim.region, speed, seed: opts.seed, throttling: opts.throttling }),
      );
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      await sim.close();
      process.stdout.write('ECS simulator stopped.\n');
    });
}

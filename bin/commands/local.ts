/**
 * `ecsr local` (what `npm start` runs): the reconciler on a simulated Fargate cluster, no AWS
 * account needed. See `local/run.ts` for what it does and notes/readme-cli.md for what it shows.
 */
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError, Option } from 'commander';
import { DEFAULT_SPEED, runLocal } from '../../local/run';
import { LAST_PASS_MINUTE } from '../../local/scenario';
import type { LocalStack } from '../../local/stack';
import { LiveView, PlainView } from '../../local/view';
import { CliError } from './support/errors';
import { runAction } from './support/options';
import { loadSpecFiles } from './support/spec-file';

interface LocalOptions {
  speed: number;
  forever?: boolean;
  specs: string;
  seed: number;
  plain?: boolean;
  ecsPort: number;
  dynamodbPort: number;
  debug?: boolean;
}

/** The examples directory of this checkout. */
export const EXAMPLES_DIR = fileURLToPath(new URL('../../examples/', import.meta.url));

function positive(v: string): number {
  const n = Number(v);
  if (!(n > 0) || !Number.isFinite(n)) throw new InvalidArgumentError('must be a number above 0.');
  return n;
}

function port(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('a port is a whole number from 0 to 65535.');
  return n;
}

function integer(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n)) throw new InvalidArgumentError('must be a whole number.');
  return n;
}

/** What `--forever` prints once the servers run: endpoints and the environment to use them. */
export function foreverBanner(stack: LocalStack, reconcilerEnv: Readonly<Record<string, string>> = {}): string {
  const env = Object.entries({ ...reconcilerEnv, ...stack.env }).map(([k, v]) => `${k}=${v}`).join(' ');
  return [
    `DynamoDB (dynalite): ${stack.db.endpoint}   table ${stack.table}`,
    `ECS (simulator):     ${stack.sim.endpoint}   clusters ${stack.clusters.join(', ')}`,
    '',
    'Point ecsr, the AWS CLI and the SDK at them (another terminal; the reconciler variables make',
    'ecsr plan / diff / reconcile plan as the local passes do):',
    `  export ${env}`,
    '  npm run ecsr -- get',
    '  npm run ecsr -- apply -f examples/shop.yaml --wait',
    `  aws ecs list-services --cluster ${stack.clusters[0] ?? 'shop'}`,
    `  curl -s -X POST ${stack.sim.endpoint}/_sim/stop-service-tasks -d '{"cluster": "shop", "service": "web"}'`,
    '',
    'A pass runs every simulated minute. Stop with Ctrl+C.',
    '',
  ].join('\n');
}

export function localCommand(): Command {
  return new Command('local')
    .description('Run the reconciler against a simulated Fargate cluster and embedded DynamoDB, with a scripted scenario (npm start)')
    .addOption(
      new Option('-s, --speed <factor>', 'simulated seconds per real second').argParser(positive).default(DEFAULT_SPEED, `${DEFAULT_SPEED}: the scenario in about a minute`),
    )
    .option('--forever', 'no scenario: keep the servers and the loop running until Ctrl+C, and print their endpoints')
    .addOption(new Option('--specs <path>', 'YAML file or directory of specs to load').default(EXAMPLES_DIR, 'examples/ of this checkout'))
    .option('--seed <n>', 'seed of the simulator (task timings, ids): the same seed tells the same story', integer, 1)
    .option('--plain', 'plain timestamped lines even on a terminal')
    .option('--ecs-port <port>', 'port of the ECS simulator (0 picks a free one)', port, 0)
    .option('--dynamodb-port <port>', 'port of dynalite (0 picks a free one)', port, 0)
    .option('--debug', 'print stack traces of errors')
    .action(
      runAction(async (opts: LocalOptions) => {
        const loaded = loadSpecFiles([opts.specs], 'the local run did not start');
        // A terminal that reports no size (some pseudo-terminals) cannot be redrawn in place.
        const live = Boolean(process.stdout.isTTY) && (process.stdout.rows ?? 0) > 0 && !opts.plain;
        const view = live ? new LiveView(process.stdout) : new PlainView((t) => process.stdout.write(t));
        const controller = new AbortController();
        const stop = () => controller.abort();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
        try {
          const result = await runLocal({
            specs: loaded.map((s) => ({ spec: s.spec, hash: s.hash })),
            speed: opts.speed,
            forever: opts.forever,
            view,
            write: (t) => process.stdout.write(t),
            seed: opts.seed,
            ecsPort: opts.ecsPort,
            dynamodbPort: opts.dynamodbPort,
            signal: controller.signal,
            onReady: (stack, reconcilerEnv) => {
              if (opts.forever) process.stdout.write(foreverBanner(stack, reconcilerEnv));
              else {
                const seconds = Math.round(((LAST_PASS_MINUTE * 60) / opts.speed) * 10) / 10;
                process.stdout.write(
                  `ecsr local: ${loaded.length} specs from ${opts.specs} in table ${stack.table} (dynalite ${stack.db.endpoint}), ` +
                    `ECS simulator ${stack.sim.endpoint}; ${LAST_PASS_MINUTE + 1} passes, one per simulated minute, at ${opts.speed}x (about ${seconds} s).\n`,
                );
              }
            },
          });
          process.stdout.write(`\n${result.summary}`);
          if (result.aborted) throw new CliError('Interrupted before the scenario ended; no verdict.', 130);
          if (!result.ok) {
            const failed = result.expectations.filter((e) => !e.ok);
            throw new CliError(
              `The scenario failed: ${failed.length} expectation${failed.length === 1 ? '' : 's'} did not hold.`,
              1,
              failed.map((e) => `${e.description}: ${e.detail}`),
            );
          }
        } finally {
          process.removeListener('SIGINT', stop);
          process.removeListener('SIGTERM', stop);
        }
      }),
    );
}

/**
 * `ecsr verify -f FILE [-o text|json]`: online preflight of specs before anything is written, as
 * ecspresso's `verify`: the cluster exists, is ACTIVE and managed; its capacity providers; the
 * service is absent, owned or adoptable; the allow-lists; the images in Amazon ECR; the task and
 * execution roles (and that ECS tasks may assume them); the secrets; the subnets and security
 * groups; the target groups (see `support/preflight.ts` for each call). What the reconciler would
 * send is checked: the spec with the reconciler's defaults from the environment
 * (`DEFAULT_SUBNETS`, `DEFAULT_SECURITY_GROUPS`, `DEFAULT_EXECUTION_ROLE_ARN`, `MANAGED_CLUSTERS`).
 * Writes nothing; needs no table. Exit code 1 when AWS says something does not exist or cannot be used; a check
 * AWS could not answer (no permission, no network) is reported as not checked, exit code 0.
 */
import { Command, Option } from 'commander';
import { createEcsClient } from '../../lambda/adapters/clients';
import { CliError } from './support/errors';
import { toJson } from './support/format';
import { collect, runAction, withAwsOptions, type AwsOptions } from './support/options';
import { cliConfig } from './support/pass';
import { findingLine, NO_ANSWER, preflight, sdkPreflightClients, type Finding } from './support/preflight';
import { loadSpecFiles } from './support/spec-file';

interface VerifyOptions extends AwsOptions {
  file: string[];
  output: 'text' | 'json';
}

const LABEL: Record<Finding['level'], string> = { ok: 'ok', problem: 'PROBLEM', unchecked: 'not checked' };

/** The text report: per service, one line per check. */
export function verifyReport(findings: readonly Finding[]): string {
  const out: string[] = [];
  let current = '';
  for (const f of findings) {
    if (f.service !== current) out.push(f.service);
    current = f.service;
    out.push(`  ${LABEL[f.level].padEnd(11)} ${f.check} ${f.subject}: ${f.message}`);
  }
  return out.length > 0 ? `${out.join('\n')}\n` : '';
}

export function verifyCommand(): Command {
  const cmd = new Command('verify')
    .description('Check online that what the specs name exists: cluster, capacity providers, ECR images, roles, secrets, subnets, security groups, target groups')
    .requiredOption('-f, --file <path>', 'YAML file or directory of *.yaml, or - for stdin (repeatable)', collect)
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text'));
  return withAwsOptions(cmd).action(
    runAction(async (opts: VerifyOptions) => {
      const specs = loadSpecFiles(opts.file, 'nothing was checked');
      // The table is not read; the reconciler's other settings are.
      const config = cliConfig(opts.table?.trim() || 'unused');
      const { ecs } = createEcsClient();
      const clients = sdkPreflightClients(ecs);
      let findings: Finding[];
      try {
        findings = await preflight(specs.map((s) => s.spec), config, clients);
      } finally {
        clients.close();
        ecs.destroy();
      }
      const problems = findings.filter((f) => f.level === 'problem');
      if (opts.output === 'json') process.stdout.write(toJson({ ok: problems.length === 0, findings }));
      else process.stdout.write(verifyReport(findings));
      const services = new Set(problems.map((f) => f.service));
      if (problems.length > 0) {
        throw new CliError(
          `${problems.length} problem${problems.length === 1 ? '' : 's'} in ${services.size} of ${specs.length} spec${specs.length === 1 ? '' : 's'}: what ${problems.length === 1 ? 'it names does' : 'they name do'} not exist or cannot be used as the spec says; nothing was written.`,
          1,
          problems.map(findingLine),
        );
      }
      const unchecked = findings.filter((f) => f.level === 'unchecked').length;
      const checked = findings.length - unchecked;
      if (opts.output !== 'json') {
        const of = `${specs.length} spec${specs.length === 1 ? '' : 's'}`;
        process.stdout.write(
          unchecked === 0
            ? `All ${checked} check${checked === 1 ? '' : 's'} of ${of} passed.\n`
            : `No problem found in ${of}: ${checked} check${checked === 1 ? '' : 's'} passed, ${unchecked} not made (marked "not checked" above).\n`,
        );
      }
    }),
  );
}

/**
 * The warnings `ecsr apply` prints on stderr before it writes: every problem (AWS says it does
 * not exist, or it cannot be used), and a cluster or service ECS could not be asked about; with
 * `scope: 'ecs'` (`--no-verify`) only the cluster, capacity provider and service checks run.
 * Checks outside ECS that AWS could not answer (no permission, no endpoint) are left to
 * `ecsr verify`, which lists them; answers not in after `timeoutMs` are one warning. The specs
 * are written all the same (the reconciler reports the same problem in the status).
 */
export async function applyWarnings(
  specs: readonly import('../../lambda/core/types').ServiceSpec[],
  table: string,
  opts: { scope: 'all' | 'ecs'; timeoutMs: number },
): Promise<string[]> {
  let config;
  try {
    config = cliConfig(table);
  } catch (err) {
    return [`could not check the specs before writing: ${err instanceof Error ? err.message : String(err)}`];
  }
  const { ecs } = createEcsClient();
  const clients = sdkPreflightClients(ecs);
  try {
    const findings = await preflight(specs, config, clients, opts);
    const late = findings.filter((f) => f.level === 'unchecked' && f.message.startsWith(NO_ANSWER) && !ECS_CHECKS.has(f.check));
    const lines = findings
      .filter((f) => f.level === 'problem' || (f.level === 'unchecked' && ECS_CHECKS.has(f.check)))
      .map(findingLine);
    if (late.length > 0) {
      lines.push(
        `${late.length} check${late.length === 1 ? '' : 's'} got no answer within ${Math.round(opts.timeoutMs / 1000)} s (${[...new Set(late.map((f) => f.check))].join(', ')}); ` +
          'the specs are written all the same (ecsr verify -f FILE waits for every answer)',
      );
    }
    return lines;
  } finally {
    clients.close();
    ecs.destroy();
  }
}

/** The checks that ask ECS, which apply reports even when they could not be made. */
const ECS_CHECKS = new Set(['cluster', 'capacity provider', 'service']);

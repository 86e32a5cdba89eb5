/**
 * `ecsr import CLUSTER/SERVICE [CLUSTER/SERVICE ...] [--all CLUSTER] [-o yaml|json] [--apply]`:
 * reads each live service (DescribeServices with its tags) and its task definition
 * (DescribeTaskDefinition) and prints the spec that reproduces them exactly, with `adopt: true`
 * and the live family (`lambda/core/import-spec.ts`); `--apply` also writes it to the specs
 * table. The pass that follows makes one write per imported service, the owner tag
 * (TagResource): no new task definition revision, no UpdateService, no task restarted. This is
 * how services made with Terraform, Copilot, CDK or the console come under the reconciler.
 *
 * A service the spec cannot reproduce (a field it cannot express, a difference the planner would
 * still see), or whose owner tag names another reconciler, is not imported: its problems are
 * printed, each naming the live field (the other owner's name for an owned one), the others are
 * imported, and the exit code is 1.
 */
import { Command, Option } from 'commander';
import { DescribeServicesCommand, DescribeTaskDefinitionCommand, paginateListServices, type ECSClient, type Service } from '@aws-sdk/client-ecs';
import { Document } from 'yaml';
import { createEcsClient } from '../../lambda/adapters/clients';
import { nameFromArn, toObservedService } from '../../lambda/adapters/ecs-observer';
import { loadConfig, ENV } from '../../lambda/config';
import { canonicalJson } from '../../lambda/core/canonical-json';
import { importService, type ImportResult } from '../../lambda/core/import-spec';
import { OWNER_TAG_KEY } from '../../lambda/core/ports';
import { specToItem, STATUS_ATTRIBUTE } from '../../lambda/core/spec';
import { serviceId, type ServiceKey } from '../../lambda/core/types';
import { CliError } from './support/errors';
import { parseServiceRef, runAction, tableOf, withAwsOptions, type AwsOptions } from './support/options';
import { SpecTable } from './support/spec-table';

interface ImportOptions extends AwsOptions {
  all?: string[];
  output: 'yaml' | 'json';
  apply?: boolean;
}

/** DescribeServices takes at most 10 services per call. */
const DESCRIBE_BATCH = 10;

/** The services to import: those named, then every service of each `--all` cluster. */
async function targets(ecs: ECSClient, named: readonly ServiceKey[], clusters: readonly string[]): Promise<ServiceKey[]> {
  const out = [...named];
  for (const cluster of clusters) {
    const found: ServiceKey[] = [];
    try {
      for await (const page of paginateListServices({ client: ecs }, { cluster })) {
        for (const arn of page.serviceArns ?? []) found.push({ cluster, service: nameFromArn(arn) });
      }
    } catch (err) {
      if (isClusterNotFound(err)) throw new CliError(clusterMissing(cluster));
      throw err;
    }
    out.push(...found.sort((a, b) => (a.service < b.service ? -1 : a.service > b.service ? 1 : 0)));
  }
  const seen = new Set<string>();
  return out.filter((k) => !seen.has(serviceId(k)) && seen.add(serviceId(k)));
}

/** ECS's answer for a cluster it does not have (DescribeServices, ListServices). */
function isClusterNotFound(err: unknown): boolean {
  return (err as { name?: string } | null)?.name === 'ClusterNotFoundException';
}

/** The sentence for a cluster ECS does not have. */
function clusterMissing(cluster: string): string {
  return `Cluster ${cluster} does not exist in ECS (in this region and account): check the name (aws ecs list-clusters lists them).`;
}

/** Reads each service and its task definition and imports it. */
async function importAll(ecs: ECSClient, keys: readonly ServiceKey[], opts: { defaults: Parameters<typeof importService>[0]['defaults']; ownerId: string }): Promise<ImportResult[]> {
  const results: ImportResult[] = [];
  const byCluster = new Map<string, string[]>();
  for (const k of keys) byCluster.set(k.cluster, [...(byCluster.get(k.cluster) ?? []), k.service]);
  const live = new Map<string, Service>();
  const missingClusters = new Set<string>();
  for (const [cluster, services] of byCluster) {
    for (let i = 0; i < services.length; i += DESCRIBE_BATCH) {
      let out;
      try {
        out = await ecs.send(new DescribeServicesCommand({ cluster, services: services.slice(i, i + DESCRIBE_BATCH), include: ['TAGS'] }));
      } catch (err) {
        if (!isClusterNotFound(err)) throw err;
        missingClusters.add(cluster);
        break;
      }
      for (const s of out.services ?? []) if (s.serviceName) live.set(serviceId({ cluster, service: s.serviceName }), s);
    }
  }
  for (const key of keys) {
    if (missingClusters.has(key.cluster)) {
      results.push({ ok: false, key, problems: [{ path: 'cluster', message: `${key.cluster} does not exist in ECS (in this region and account): check the name (aws ecs list-clusters lists them)` }] });
      continue;
    }
    const svc = live.get(serviceId(key));
    if (!svc || svc.status !== 'ACTIVE') {
      results.push({ ok: false, key, problems: [{ path: 'service', message: svc ? `is ${svc.status}, not ACTIVE: there is nothing running to import` : 'does not exist in ECS' }] });
      continue;
    }
    const observed = toObservedService(svc);
    let taskDefinition: Record<string, unknown> | undefined;
    if (observed.taskDefinition !== '') {
      const td = await ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: observed.taskDefinition }));
      taskDefinition = td.taskDefinition as Record<string, unknown> | undefined;
    }
    results.push(
      importService({
        key,
        service: plain(svc),
        observed,
        taskDefinition: taskDefinition ? plain(taskDefinition) : {},
        defaults: opts.defaults,
        ownerId: opts.ownerId,
      }),
    );
  }
  return results;
}

/** The SDK's answer as plain JSON data (Dates as ISO strings, no `$metadata`). */
function plain(x: object): Record<string, unknown> {
  return JSON.parse(JSON.stringify(x)) as Record<string, unknown>;
}

/** The imported specs as multi-document YAML, each document headed by its service. */
export function importYaml(results: readonly Extract<ImportResult, { ok: true }>[]): string {
  return results
    .map((r) => {
      const doc = new Document(r.item);
      doc.commentBefore = ` ${serviceId(r.key)}: imported from ECS (adopt: the next pass only adds the owner tag)`;
      return `---\n${doc.toString({ lineWidth: 0 })}`;
    })
    .join('');
}

export function importCommand(): Command {
  const cmd = new Command('import')
    .description('Print (and with --apply, write) the spec that reproduces live ECS services exactly, with adopt: true')
    .argument('[cluster/service...]', 'the services to import', (v: string, acc: ServiceKey[] | undefined) => [...(acc ?? []), parseServiceRef(v)])
    .option('--all <cluster>', 'import every service of the cluster (repeatable)', (v: string, acc: string[] | undefined) => [...(acc ?? []), v])
    .addOption(new Option('-o, --output <format>', 'output format').choices(['yaml', 'json']).default('yaml'))
    .option('--apply', 'also write each imported spec to the specs table (an existing, different spec is never overwritten)');
  return withAwsOptions(cmd).action(
    runAction(async (named: ServiceKey[] | undefined, opts: ImportOptions) => {
      const keysNamed = named ?? [];
      if (keysNamed.length === 0 && (opts.all ?? []).length === 0) {
        throw new CliError('Name the services to import (CLUSTER/SERVICE ...) or a cluster (--all CLUSTER).');
      }
      const table = opts.apply ? tableOf(opts) : opts.table?.trim();
      // The reconciler's defaults decide what a spec that leaves a field out gets (the execution
      // role, above all): import checks its spec against them, as the next pass will.
      const config = loadConfig({ ...process.env, [ENV.specsTable]: table && table.length >= 3 ? table : 'ecsr-import' });
      const { ecs } = createEcsClient();
      let results: ImportResult[];
      try {
        results = await importAll(ecs, await targets(ecs, keysNamed, opts.all ?? []), { defaults: config.plan.defaults, ownerId: config.plan.ownerId });
      } finally {
        ecs.destroy();
      }
      const imported = results.filter((r): r is Extract<ImportResult, { ok: true }> => r.ok);
      const failed = results.filter((r): r is Extract<ImportResult, { ok: false }> => !r.ok);
      process.stdout.write(opts.output === 'json' ? `${JSON.stringify(imported.map((r) => r.item), null, 2)}\n` : importYaml(imported));
      for (const r of imported) {
        if (r.unmanaged.length > 0) {
          process.stderr.write(`${serviceId(r.key)}: left unmanaged: ${r.unmanaged.join(', ')} (the spec does not express them; the reconciler never sends them, so ECS keeps them as they are)\n`);
        }
      }
      for (const r of failed) {
        process.stderr.write(
          r.ownedBy !== undefined
            ? `ecsr import: ${serviceId(r.key)} is owned by another reconciler (${OWNER_TAG_KEY}=${r.ownedBy}); nothing was written for it:\n`
            : `ecsr import: ${serviceId(r.key)} cannot be imported exactly; nothing was written for it:\n`,
        );
        for (const p of r.problems) process.stderr.write(`  ${p.path}: ${p.message}\n`);
      }
      if (opts.apply && table) {
        const specs = SpecTable.open(table);
        try {
          for (const r of imported) {
            const existing = await specs.get(r.key);
            if (existing) {
              const { [STATUS_ATTRIBUTE]: _status, ...before } = existing.item;
              if (canonicalJson(before) !== canonicalJson(specToItem(r.spec))) {
                throw new CliError(`${serviceId(r.key)} already has a different spec in table ${table}; ecsr import never overwrites one (ecsr diff shows it; delete the item to import again).`);
              }
              process.stderr.write(`${serviceId(r.key)} unchanged in table ${table}\n`);
              continue;
            }
            await specs.writeSpec(r.spec);
            process.stderr.write(`${serviceId(r.key)} written to table ${table}\n`);
          }
        } finally {
          specs.close();
        }
      }
      if (failed.length > 0) {
        throw new CliError(`${failed.length} of ${results.length} service${results.length === 1 ? '' : 's'} could not be imported (see above).`);
      }
    }),
  );
}

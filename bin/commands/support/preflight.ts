/**
 * Online preflight of specs, as ecspresso's `verify` does: before anything is written, asks AWS
 * whether what each spec names exists and may be used. `ecsr verify -f FILE` runs every check;
 * `ecsr apply` runs the same checks (bounded in time; `--no-verify`: the ECS checks only) and
 * warns.
 *
 * Checks, per spec with `state: present` (each resource asked once per run, whatever the number
 * of specs naming it), on what the reconciler would send (the spec with the reconciler's
 * defaults: `DEFAULT_SUBNETS`, `DEFAULT_SECURITY_GROUPS`, `DEFAULT_EXECUTION_ROLE_ARN`):
 * - cluster: ECS DescribeClusters: ACTIVE (the reconciler never creates clusters);
 * - service: ECS DescribeServices with tags: absent (the first pass creates it), owned by this
 *   reconciler (`ecs-reconciler:owner` = `OWNER_ID`), or untagged with `adopt: true`; an
 *   untagged one without `adopt` is blocked as NotOwned, another owner's as OwnedByAnother;
 * - allow-lists (offline): each value an `ALLOWED_*` list governs is on it, else the reconciler
 *   blocks the service as NotAllowed;
 * - capacity providers: each provider of the strategy is associated with the cluster
 *   (DescribeClusters `capacityProviders`; ECS rejects CreateService otherwise);
 * - images in Amazon ECR (`ACCOUNT.dkr.ecr.REGION.amazonaws.com/REPO:TAG` or `@DIGEST`): ECR
 *   DescribeImages in that account and Region; other registries are not asked;
 * - task and execution roles: IAM GetRole, and its trust policy lets `ecs-tasks.amazonaws.com`
 *   assume the role (see {@link trustsEcsTasks});
 * - secrets (`valueFrom` of container secrets, log `secretOptions`, `repositoryCredentials`):
 *   Secrets Manager DescribeSecret for a `secretsmanager` ARN (the JSON key, version stage and
 *   version id suffix dropped), SSM GetParameter for a `parameter` ARN or a parameter name;
 * - subnets and security groups: EC2 DescribeSubnets, DescribeSecurityGroups;
 * - target groups: Elastic Load Balancing DescribeTargetGroups.
 *
 * An answer that the resource does not exist is a problem; any other failure (no permission, no
 * network) is "not checked", with the error, never a problem and never silence.
 * Sources: Amazon ECS API reference (DescribeClusters, CreateService); Amazon ECR API reference
 * (DescribeImages: ImageNotFoundException, RepositoryNotFoundException); IAM API reference (GetRole:
 * NoSuchEntity); AWS Secrets Manager API reference (DescribeSecret: ResourceNotFoundException);
 * AWS Systems Manager API reference (GetParameter: ParameterNotFound); Amazon EC2 API reference
 * (error codes InvalidSubnetID.NotFound, InvalidGroup.NotFound); Elastic Load Balancing API
 * reference (DescribeTargetGroups: TargetGroupNotFound); Amazon ECS Developer Guide, "Pass
 * sensitive data to an Amazon ECS container" (valueFrom forms).
 */
import { DescribeClustersCommand, DescribeServicesCommand, type ECSClient, type Service } from '@aws-sdk/client-ecs';
import { chunk, mapSettledLimit } from '../../../lambda/adapters/concurrency';
import type { ReconcilerConfig } from '../../../lambda/config';
import { allowListViolations, describeViolation } from '../../../lambda/core/allow-lists';
import { desiredServiceConfig } from '../../../lambda/core/plan-service';
import { OWNER_TAG_KEY } from '../../../lambda/core/ports';
import { renderTaskDefinition } from '../../../lambda/core/taskdef';
import { serviceId, type ServiceSpec } from '../../../lambda/core/types';

/** One check's outcome. `problem`: AWS says it does not exist; `unchecked`: AWS could not be asked. */
export interface Finding {
  readonly service: string;
  /** `cluster`, `capacity provider`, `image`, `task role`, `execution role`, `secret`, `subnet`, `security group`, `target group`. */
  readonly check: string;
  /** What was checked, e.g. the ARN or id. */
  readonly subject: string;
  readonly level: 'ok' | 'problem' | 'unchecked';
  readonly message: string;
}

/** The clients the checks use; each is created only when a spec needs it. */
export interface PreflightClients {
  ecs(): ECSClient;
  ecr(region: string | undefined): Promise<import('@aws-sdk/client-ecr').ECRClient>;
  iam(): Promise<import('@aws-sdk/client-iam').IAMClient>;
  ec2(): Promise<import('@aws-sdk/client-ec2').EC2Client>;
  elbv2(): Promise<import('@aws-sdk/client-elastic-load-balancing-v2').ElasticLoadBalancingV2Client>;
  secrets(region: string | undefined): Promise<import('@aws-sdk/client-secrets-manager').SecretsManagerClient>;
  ssm(region: string | undefined): Promise<import('@aws-sdk/client-ssm').SSMClient>;
  /** Releases the sockets of every client created. */
  close(): void;
}

/**
 * Clients from the SDK's standard configuration (region, profile, `AWS_ENDPOINT_URL_<SERVICE>`),
 * one per service and Region, loaded only when a check needs it (the CLI stays fast to start).
 */
export function sdkPreflightClients(ecs: ECSClient): PreflightClients {
  // Promises, so that checks asking at the same time share one client (each is destroyed at close).
  const made = new Map<string, Promise<{ destroy(): void }>>();
  function once<T extends { destroy(): void }>(key: string, make: () => Promise<T>): Promise<T> {
    let p = made.get(key);
    if (!p) {
      p = make();
      made.set(key, p);
    }
    return p as Promise<T>;
  }
  // Two attempts, and a socket that does not answer is given up on (ms): a check must not hang a command.
  const retry = { maxAttempts: 2, requestHandler: { connectionTimeout: 3000, requestTimeout: 5000, throwOnRequestTimeout: true } } as const;
  return {
    ecs: () => ecs,
    ecr: (region) => once(`ecr:${region ?? ''}`, async () => new (await import('@aws-sdk/client-ecr')).ECRClient({ ...retry, ...(region ? { region } : {}) })),
    iam: () => once('iam', async () => new (await import('@aws-sdk/client-iam')).IAMClient(retry)),
    ec2: () => once('ec2', async () => new (await import('@aws-sdk/client-ec2')).EC2Client(retry)),
    elbv2: () => once('elbv2', async () => new (await import('@aws-sdk/client-elastic-load-balancing-v2')).ElasticLoadBalancingV2Client(retry)),
    secrets: (region) =>
      once(`sm:${region ?? ''}`, async () => new (await import('@aws-sdk/client-secrets-manager')).SecretsManagerClient({ ...retry, ...(region ? { region } : {}) })),
    ssm: (region) => once(`ssm:${region ?? ''}`, async () => new (await import('@aws-sdk/client-ssm')).SSMClient({ ...retry, ...(region ? { region } : {}) })),
    close: () => {
      for (const c of made.values()) void c.then((client) => client.destroy(), () => undefined);
    },
  };
}

/** The error's name or code (`NoSuchEntity`, `InvalidSubnetID.NotFound`), and its message. */
function errorOf(err: unknown): { name: string; message: string } {
  const e = err as { name?: string; Code?: string; code?: string; message?: string };
  return { name: e?.Code ?? e?.name ?? e?.code ?? 'Error', message: e?.message ?? String(err) };
}

/**
 * Runs `ask`, which resolves to an `ok` message or throws; errors named in `missing` are a
 * problem ("does not exist"), any other is `unchecked`.
 */
async function probe(
  ask: () => Promise<string>,
  missing: readonly string[],
  notFound: (e: { name: string; message: string }) => string,
): Promise<Pick<Finding, 'level' | 'message'>> {
  try {
    return { level: 'ok', message: await ask() };
  } catch (err) {
    const e = errorOf(err);
    if (missing.some((m) => e.name === m || e.name.endsWith(m))) return { level: 'problem', message: notFound(e) };
    if (err instanceof ProblemFound) return { level: 'problem', message: err.message };
    return { level: 'unchecked', message: `could not check: ${e.name}: ${e.message}` };
  }
}

/** Thrown by an `ask` that got an answer showing a problem (e.g. a cluster INACTIVE). */
class ProblemFound extends Error {}

const ECR_IMAGE = /^(\d{12})\.dkr\.ecr(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?\/([^:@]+)(?::([^@]+))?(?:@(sha256:[0-9a-f]{64}))?$/;

/** An Amazon ECR image reference, or undefined for another registry. `tag` is `latest` when neither tag nor digest is given. */
export function ecrImage(image: string): { registryId: string; region: string; repositoryName: string; imageTag?: string; imageDigest?: string } | undefined {
  const m = ECR_IMAGE.exec(image);
  if (!m) return undefined;
  const [, registryId, region, repositoryName, tag, digest] = m;
  return { registryId, region, repositoryName, ...(digest ? { imageDigest: digest } : { imageTag: tag ?? 'latest' }) };
}

/** Where a secret's `valueFrom` points: Secrets Manager (the secret's ARN) or an SSM parameter (name or ARN). */
export function secretSource(valueFrom: string): { service: 'secretsmanager' | 'ssm'; id: string; region?: string } {
  const parts = valueFrom.split(':');
  if (parts[0] === 'arn' && parts[2] === 'secretsmanager') {
    // arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME[:json-key:version-stage:version-id]
    return { service: 'secretsmanager', id: parts.slice(0, 7).join(':'), region: parts[3] };
  }
  if (parts[0] === 'arn' && parts[2] === 'ssm') return { service: 'ssm', id: valueFrom, region: parts[3] };
  return { service: 'ssm', id: valueFrom };
}

/** What one spec asks AWS for: the rendered task definition and service, as the reconciler would send them. */
function resourcesOf(spec: ServiceSpec, config: ReconcilerConfig) {
  const td = renderTaskDefinition(spec, { defaults: config.plan.defaults, ownerId: config.plan.ownerId });
  const desired = desiredServiceConfig(spec, config.plan.defaults);
  const containers = td.containerDefinitions ?? [];
  const secrets = new Set<string>();
  for (const c of containers) {
    for (const s of c.secrets ?? []) if (s.valueFrom) secrets.add(s.valueFrom);
    // Fields the reconciler passes through as ECS has them (typed loosely in ContainerDefinition).
    const loose = c as { logConfiguration?: { secretOptions?: { valueFrom?: unknown }[] }; repositoryCredentials?: { credentialsParameter?: unknown } };
    for (const s of loose.logConfiguration?.secretOptions ?? []) if (typeof s.valueFrom === 'string') secrets.add(s.valueFrom);
    const credentials = loose.repositoryCredentials?.credentialsParameter;
    if (typeof credentials === 'string') secrets.add(credentials);
  }
  const vpc = desired.networkConfiguration?.awsvpcConfiguration;
  return {
    images: [...new Set(containers.map((c) => c.image).filter((i): i is string => typeof i === 'string' && i !== ''))],
    roles: [
      ...(td.taskRoleArn ? [['task role', td.taskRoleArn] as const] : []),
      ...(td.executionRoleArn ? [['execution role', td.executionRoleArn] as const] : []),
    ],
    secrets: [...secrets],
    subnets: [...(vpc?.subnets ?? [])],
    securityGroups: [...(vpc?.securityGroups ?? [])],
    targetGroups: [...new Set(desired.loadBalancers.map((l) => l.targetGroupArn).filter((a): a is string => typeof a === 'string'))],
    capacityProviders: desired.launchType ? [] : (desired.capacityProviderStrategy ?? []).map((s) => s.capacityProvider).filter((p): p is string => typeof p === 'string'),
  };
}

/** `role/path/name` -> `name`: the RoleName GetRole takes. */
function roleName(arn: string): string {
  return arn.split('/').pop() ?? arn;
}

/** The service principal ECS tasks assume their task and execution roles as. */
export const ECS_TASKS_PRINCIPAL = 'ecs-tasks.amazonaws.com';

/**
 * Whether a role's trust policy (GetRole's `AssumeRolePolicyDocument`, URL-encoded JSON as IAM
 * returns it, or plain JSON) lets ECS tasks assume it: an `Allow` statement whose `Principal.Service`
 * names `ecs-tasks.amazonaws.com` (or `*`) for `sts:AssumeRole` (or `sts:*`, `*`), and no `Deny`
 * statement naming it. Conditions (e.g. `aws:SourceAccount`) are not evaluated.
 * @returns undefined when the document cannot be read.
 * Source: Amazon ECS Developer Guide, "Amazon ECS task IAM role" and "Amazon ECS task execution
 * IAM role" (the trust relationship).
 */
export function trustsEcsTasks(document: string | undefined): boolean | undefined {
  if (!document) return undefined;
  let policy: { Statement?: unknown };
  try {
    policy = JSON.parse(document.trimStart().startsWith('{') ? document : decodeURIComponent(document)) as { Statement?: unknown };
  } catch {
    return undefined;
  }
  const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]);
  const statements = list(policy.Statement) as { Effect?: unknown; Principal?: unknown; Action?: unknown }[];
  const names = (s: { Principal?: unknown; Action?: unknown }) => {
    const p = s.Principal;
    const services = p === '*' ? ['*'] : typeof p === 'object' && p !== null ? list((p as { Service?: unknown }).Service) : [];
    const actions = list(s.Action);
    return services.some((x) => x === ECS_TASKS_PRINCIPAL || x === '*') && actions.some((a) => a === 'sts:AssumeRole' || a === 'sts:*' || a === '*');
  };
  if (statements.some((s) => s.Effect === 'Deny' && names(s))) return false;
  return statements.some((s) => s.Effect === 'Allow' && names(s));
}

/** Options of {@link preflight}. */
export interface PreflightOptions {
  /** `all` (default) every check; `ecs` only the cluster, its capacity providers and the service (ECS calls only). */
  readonly scope?: 'all' | 'ecs';
  /** Answers not in by then (ms after the start) are `unchecked` ("no answer within ..."); none by default. */
  readonly timeoutMs?: number;
  /** AWS calls in flight at once (default 8). */
  readonly concurrency?: number;
}

type Outcome = Pick<Finding, 'level' | 'message'>;

/** One check of one spec: the resource's key (asked once per run), and how to ask. */
interface Planned {
  readonly service: string;
  readonly check: string;
  readonly subject: string;
  readonly key: string;
  readonly run: () => Promise<Outcome>;
}

/** The message of a check that got no answer before the deadline. */
export const NO_ANSWER = 'could not check: no answer within';

/**
 * Runs the checks for `specs` (those with `state: absent` are skipped): first ECS (each cluster
 * described once, each cluster's services once, in batches of 10), then every other resource once
 * per run whatever the number of specs naming it, at most `concurrency` calls at a time.
 * @returns one finding per check and spec, in spec order. Never throws for an AWS error.
 */
export async function preflight(specs: readonly ServiceSpec[], config: ReconcilerConfig, clients: PreflightClients, options: PreflightOptions = {}): Promise<Finding[]> {
  const scope = options.scope ?? 'all';
  const present = specs.filter((s) => s.state !== 'absent');
  let timer: NodeJS.Timeout | undefined;
  const deadline =
    options.timeoutMs === undefined
      ? undefined
      : new Promise<Outcome>((resolve) => {
          timer = setTimeout(() => resolve({ level: 'unchecked', message: `${NO_ANSWER} ${Math.round(options.timeoutMs! / 100) / 10} s` }), options.timeoutMs);
          timer.unref();
        });
  const bounded = (p: Promise<Outcome>): Promise<Outcome> => (deadline ? Promise.race([p, deadline]) : p);
  try {
    const ecs = await ecsFacts(present, clients, bounded);
    const planned: Planned[] = [];
    const direct = new Map<Planned, Outcome>();
    for (const spec of present) {
      const id = serviceId(spec);
      for (const [check, subject, outcome] of ecsFindings(spec, config, ecs)) {
        const p: Planned = { service: id, check, subject, key: `${check}:${id}:${subject}`, run: async () => outcome };
        planned.push(p);
        direct.set(p, outcome);
      }
      if (scope === 'ecs') continue;
      // What the reconciler's allow-lists refuse (it would block the service as NotAllowed).
      for (const v of allowListViolations(spec, config.plan.allow)) {
        const p: Planned = { service: id, check: 'allow-list', subject: v.path, key: `allow:${id}:${v.path}`, run: async () => ({ level: 'problem', message: `the reconciler refuses it: ${describeViolation(v, config.plan.allow)}` }) };
        planned.push(p);
      }
      planned.push(...resourceChecks(id, resourcesOf(spec, config), clients));
    }
    // Each resource asked once, at most `concurrency` at a time; findings in spec order.
    const keys = [...new Map(planned.filter((p) => !direct.has(p)).map((p) => [p.key, p.run] as const)).entries()];
    const settled = await mapSettledLimit(keys, options.concurrency ?? 8, ([, run]) => bounded(run()));
    const answers = new Map<string, Outcome>();
    keys.forEach(([key], i) => {
      const r = settled[i];
      answers.set(key, r.status === 'fulfilled' ? r.value : { level: 'unchecked', message: `could not check: ${errorOf(r.reason).name}: ${errorOf(r.reason).message}` });
    });
    return planned.map((p) => ({ service: p.service, check: p.check, subject: p.subject, ...(direct.get(p) ?? answers.get(p.key)!) }));
  } finally {
    if (timer) clearTimeout(timer);
  }
}

interface ClusterFacts {
  readonly status?: string;
  readonly capacityProviders: string[];
  readonly error?: string;
  /** The cluster's services the specs name, by name; absent when not described (error in `servicesError`). */
  readonly services: Map<string, Service>;
  readonly servicesError?: string;
}

/** ECS's answers for the specs' clusters: DescribeClusters once per cluster, DescribeServices (with tags) in batches of 10. */
async function ecsFacts(specs: readonly ServiceSpec[], clients: PreflightClients, bounded: (p: Promise<Outcome>) => Promise<Outcome>): Promise<Map<string, ClusterFacts>> {
  const byCluster = new Map<string, string[]>();
  for (const s of specs) byCluster.set(s.cluster, [...(byCluster.get(s.cluster) ?? []), s.service]);
  const out = new Map<string, ClusterFacts>();
  const names = [...byCluster.keys()];
  // bounded() takes an Outcome promise; the facts are carried beside it.
  await mapSettledLimit(names, 4, async (name) => {
    let facts: ClusterFacts = { capacityProviders: [], services: new Map(), error: 'no answer' };
    const ask = (async (): Promise<Outcome> => {
      try {
        const described = await clients.ecs().send(new DescribeClustersCommand({ clusters: [name] }));
        const c = described.clusters?.find((x) => x.clusterName === name);
        facts = { status: c?.status ?? 'MISSING', capacityProviders: c?.capacityProviders ?? [], services: new Map() };
      } catch (err) {
        facts = { capacityProviders: [], services: new Map(), error: `${errorOf(err).name}: ${errorOf(err).message}` };
        return { level: 'ok', message: '' };
      }
      if (facts.status !== 'ACTIVE') return { level: 'ok', message: '' };
      const services = new Map<string, Service>();
      try {
        for (const batch of chunk([...new Set(byCluster.get(name))], 10)) {
          const d = await clients.ecs().send(new DescribeServicesCommand({ cluster: name, services: batch, include: ['TAGS'] }));
          for (const svc of d.services ?? []) if (svc.serviceName) services.set(svc.serviceName, svc);
        }
        facts = { ...facts, services };
      } catch (err) {
        facts = { ...facts, services, servicesError: `${errorOf(err).name}: ${errorOf(err).message}` };
      }
      return { level: 'ok', message: '' };
    })();
    const r = await bounded(ask);
    if (r.level === 'unchecked') facts = { capacityProviders: [], services: new Map(), error: r.message.replace(/^could not check: /, '') };
    out.set(name, facts);
  });
  return out;
}

/** The cluster, capacity provider and service checks of one spec, from ECS's answers. */
function ecsFindings(spec: ServiceSpec, config: ReconcilerConfig, ecs: Map<string, ClusterFacts>): [string, string, Outcome][] {
  const cluster = ecs.get(spec.cluster)!;
  const name = spec.cluster;
  if (cluster.error) return [['cluster', name, { level: 'unchecked', message: `could not check: ${cluster.error}` }]];
  if (cluster.status !== 'ACTIVE') {
    return [
      [
        'cluster',
        name,
        {
          level: 'problem',
          message:
            cluster.status === 'MISSING'
              ? `cluster ${name} does not exist; the reconciler never creates clusters (aws ecs create-cluster --cluster-name ${name})`
              : `cluster ${name} is ${cluster.status}, not ACTIVE`,
        },
      ],
    ];
  }
  const out: [string, string, Outcome][] = [];
  // A cluster a spec names is managed; MANAGED_CLUSTERS adds clusters pruned with no spec.
  const managed = config.plan.managedClusters;
  const also = managed.length > 0 && !managed.includes(name) ? ' (managed while a spec names it; not in MANAGED_CLUSTERS, so not pruned once none does)' : '';
  out.push(['cluster', name, { level: 'ok', message: `cluster ${name} is ACTIVE${also}` }]);
  for (const p of resourcesOf(spec, config).capacityProviders) {
    out.push([
      'capacity provider',
      p,
      cluster.capacityProviders.includes(p)
        ? { level: 'ok', message: `${p} is associated with cluster ${name}` }
        : {
            level: 'problem',
            message: `cluster ${name} has no capacity provider ${p} (it has ${cluster.capacityProviders.join(', ') || 'none'}): aws ecs put-cluster-capacity-providers --cluster ${name} --capacity-providers FARGATE FARGATE_SPOT --default-capacity-provider-strategy capacityProvider=FARGATE,weight=1`,
          },
    ]);
  }
  out.push(['service', spec.service, serviceOutcome(spec, config.plan.ownerId, cluster)]);
  return out;
}

/** Whether the reconciler may manage the spec's service: absent (it creates it), owned, or adoptable. */
function serviceOutcome(spec: ServiceSpec, ownerId: string, cluster: ClusterFacts): Outcome {
  if (cluster.servicesError) return { level: 'unchecked', message: `could not check: ${cluster.servicesError}` };
  const svc = cluster.services.get(spec.service);
  if (!svc || svc.status === 'INACTIVE') return { level: 'ok', message: `service ${spec.service} does not exist yet; the first pass creates it` };
  if (svc.status === 'DRAINING') return { level: 'ok', message: `service ${spec.service} is DRAINING; the reconciler creates it again once ECS has removed it` };
  const owner = (svc.tags ?? []).find((t) => t.key === OWNER_TAG_KEY)?.value;
  if (owner === ownerId) return { level: 'ok', message: `service ${spec.service} exists and is owned by this reconciler (${OWNER_TAG_KEY}=${ownerId})` };
  if (owner !== undefined) {
    return { level: 'problem', message: `service ${spec.service} is owned by another reconciler (${OWNER_TAG_KEY}=${owner}, this one is ${ownerId}); the reconciler will not touch it (OwnedByAnother)` };
  }
  if (spec.adopt) return { level: 'ok', message: `service ${spec.service} exists without the owner tag; adopt: true, so the next pass takes it over` };
  return {
    level: 'problem',
    message: `service ${spec.service} exists without the owner tag ${OWNER_TAG_KEY}=${ownerId}, so the reconciler leaves it alone (NotOwned): set adopt: true, or run ecsr import ${spec.cluster}/${spec.service} --apply`,
  };
}

/** The image, role, secret, network and target group checks of one spec (each a call, made later). */
function resourceChecks(id: string, r: ReturnType<typeof resourcesOf>, clients: PreflightClients): Planned[] {
  const out: Planned[] = [];
  for (const image of r.images) {
    const ecr = ecrImage(image);
    if (!ecr) {
      out.push({ service: id, check: 'image', subject: image, key: `image:${image}`, run: async () => ({ level: 'unchecked', message: 'not in Amazon ECR: the registry is not asked' }) });
      continue;
    }
    const { region, ...ref } = ecr;
    const which = ref.imageDigest ? `digest ${ref.imageDigest}` : `tag ${ref.imageTag}`;
    out.push({
      service: id,
      check: 'image',
      subject: image,
      key: `image:${image}`,
      run: async () => {
        const { DescribeImagesCommand } = await import('@aws-sdk/client-ecr');
        const client = await clients.ecr(region);
        return probe(
          async () => {
            await client.send(
              new DescribeImagesCommand({
                registryId: ref.registryId,
                repositoryName: ref.repositoryName,
                imageIds: [ref.imageDigest ? { imageDigest: ref.imageDigest } : { imageTag: ref.imageTag }],
              }),
            );
            return `ECR has ${which} in repository ${ref.repositoryName}`;
          },
          ['ImageNotFoundException', 'RepositoryNotFoundException'],
          (e) =>
            e.name === 'RepositoryNotFoundException'
              ? `ECR has no repository ${ref.repositoryName} in account ${ref.registryId} (${region})`
              : `ECR repository ${ref.repositoryName} has no image with ${which}: push it first`,
        );
      },
    });
  }

  for (const [check, arn] of r.roles) {
    out.push({
      service: id,
      check,
      subject: arn,
      key: `role:${arn}`,
      run: async () => {
        const { GetRoleCommand } = await import('@aws-sdk/client-iam');
        const client = await clients.iam();
        const name = roleName(arn);
        return probe(
          async () => {
            const role = (await client.send(new GetRoleCommand({ RoleName: name }))).Role;
            const trusted = trustsEcsTasks(role?.AssumeRolePolicyDocument);
            if (trusted === false) {
              throw new ProblemFound(
                `IAM role ${name} does not let ECS tasks assume it: its trust policy needs an Allow of sts:AssumeRole for the service principal ${ECS_TASKS_PRINCIPAL}`,
              );
            }
            return `IAM role ${name} exists${trusted ? ` and trusts ${ECS_TASKS_PRINCIPAL}` : ' (its trust policy could not be read)'}`;
          },
          ['NoSuchEntity', 'NoSuchEntityException'],
          () => `IAM has no role ${name}`,
        );
      },
    });
  }

  for (const valueFrom of r.secrets) {
    const src = secretSource(valueFrom);
    out.push({
      service: id,
      check: 'secret',
      subject: valueFrom,
      key: `secret:${src.id}`,
      run: async () => {
        if (src.service === 'secretsmanager') {
          const { DescribeSecretCommand } = await import('@aws-sdk/client-secrets-manager');
          const client = await clients.secrets(src.region);
          return probe(
            async () => {
              await client.send(new DescribeSecretCommand({ SecretId: src.id }));
              return 'Secrets Manager has this secret';
            },
            ['ResourceNotFoundException'],
            () => `Secrets Manager has no secret ${src.id}`,
          );
        }
        const { GetParameterCommand } = await import('@aws-sdk/client-ssm');
        const client = await clients.ssm(src.region);
        // GetParameter takes the name, or the ARN for a parameter shared from another account.
        const name = src.id.startsWith('arn:') && src.id.includes(':parameter/') ? src.id.slice(src.id.indexOf(':parameter') + ':parameter'.length) : src.id;
        return probe(
          async () => {
            await client.send(new GetParameterCommand({ Name: name }));
            return `SSM has parameter ${name}`;
          },
          ['ParameterNotFound'],
          () => `SSM Parameter Store has no parameter ${name}`,
        );
      },
    });
  }

  for (const subnet of r.subnets) {
    out.push({
      service: id,
      check: 'subnet',
      subject: subnet,
      key: `subnet:${subnet}`,
      run: async () => {
        const { DescribeSubnetsCommand } = await import('@aws-sdk/client-ec2');
        const client = await clients.ec2();
        return probe(
          async () => {
            const s = (await client.send(new DescribeSubnetsCommand({ SubnetIds: [subnet] }))).Subnets?.[0];
            if (!s) throw new ProblemFound(`EC2 has no subnet ${subnet}`);
            return `subnet ${subnet} exists (${s.AvailabilityZone ?? '?'}, ${s.VpcId ?? '?'})`;
          },
          ['InvalidSubnetID.NotFound', 'InvalidSubnetID.Malformed'],
          (e) => `EC2 has no subnet ${subnet} (${e.name})`,
        );
      },
    });
  }
  for (const group of r.securityGroups) {
    out.push({
      service: id,
      check: 'security group',
      subject: group,
      key: `sg:${group}`,
      run: async () => {
        const { DescribeSecurityGroupsCommand } = await import('@aws-sdk/client-ec2');
        const client = await clients.ec2();
        return probe(
          async () => {
            const g = (await client.send(new DescribeSecurityGroupsCommand({ GroupIds: [group] }))).SecurityGroups?.[0];
            if (!g) throw new ProblemFound(`EC2 has no security group ${group}`);
            return `security group ${group} exists (${g.GroupName ?? '?'}, ${g.VpcId ?? '?'})`;
          },
          ['InvalidGroup.NotFound', 'InvalidGroupId.Malformed'],
          (e) => `EC2 has no security group ${group} (${e.name})`,
        );
      },
    });
  }
  for (const arn of r.targetGroups) {
    out.push({
      service: id,
      check: 'target group',
      subject: arn,
      key: `tg:${arn}`,
      run: async () => {
        const { DescribeTargetGroupsCommand } = await import('@aws-sdk/client-elastic-load-balancing-v2');
        const client = await clients.elbv2();
        return probe(
          async () => {
            const tg = (await client.send(new DescribeTargetGroupsCommand({ TargetGroupArns: [arn] }))).TargetGroups?.[0];
            if (!tg) throw new ProblemFound(`Elastic Load Balancing has no target group ${arn}`);
            return `target group ${tg.TargetGroupName ?? arn} exists (target type ${tg.TargetType ?? '?'})`;
          },
          ['TargetGroupNotFound', 'TargetGroupNotFoundException'],
          () => `Elastic Load Balancing has no target group ${arn}`,
        );
      },
    });
  }
  return out;
}

/** `shop/web: image ...: ECR repository web has no image with tag 1.4.3: push it first`. */
export function findingLine(f: Finding): string {
  return `${f.service}: ${f.check} ${f.subject}: ${f.message}`;
}

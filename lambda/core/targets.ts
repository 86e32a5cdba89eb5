/**
 * Targets: the accounts and Regions one reconciler serves from one spec table.
 *
 * A target is declared by a construct prop (`targets`, passed to the function as the `TARGETS`
 * variable) or by an item of the spec table (partition key {@link TARGET_PARTITION}, sort key =
 * the target's name). It names an account, a Region, the clusters it manages (empty: every
 * cluster its specs name) and the IAM role the reconciler assumes there.
 *
 * Key scheme of spec items (docs/multi-account.md):
 * - the default target ({@link DEFAULT_TARGET}: the reconciler's own account and Region, its own
 *   role) keeps today's keys: partition key `cluster` = the ECS cluster name. Items written before
 *   targets existed belong to it with no edit.
 * - another target's spec has partition key `<target>/<cluster>` (e.g. `staging/web`); the sort
 *   key stays the service name. `/` never occurs in an ECS cluster name (letters, digits, hyphens,
 *   underscores), so the two forms never collide.
 * Reserved items per target: lease `#lease` / `#lease` (default) or `#lease` / `<target>`;
 * rotation cursor `#cursor` / `#cursor` or `#cursor` / `<target>`; the last completed pass
 * `#heartbeat` / `<target>`.
 *
 * No SDK here: plain data, parsing and key arithmetic.
 */
import { z } from 'zod';
import type { ServiceKey } from './types';

/** Name of the reconciler's own account and Region: today's items, today's keys. */
export const DEFAULT_TARGET = 'default';

/** Partition key of target items in the spec table (the sort key is the target's name). */
export const TARGET_PARTITION = '#target';

/** Partition key of the per-target heartbeat items (sort key: the target's name). */
export const HEARTBEAT_PARTITION = '#heartbeat';

/** Separates the target's name from the cluster name in a spec item's partition key. */
export const TARGET_SEPARATOR = '/';

/** A target's name: lowercase letters, digits and hyphens, 1-32 characters, starting with a letter or digit. */
export const TARGET_NAME_RE = /^[a-z0-9][a-z0-9-]{0,31}$/;

const CLUSTER_NAME_RE = /^[A-Za-z0-9_-]{1,255}$/;
const ROLE_ARN_RE = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@\/-]{1,512}$/;

/** Defaults the target's specs get when they set none (its own subnets, security groups...). */
export interface TargetDefaults {
  readonly subnets?: readonly string[];
  readonly securityGroups?: readonly string[];
  readonly assignPublicIp?: boolean;
  readonly executionRoleArn?: string;
}

/** One declared target. */
export interface Target {
  /** `default`, or a name matching {@link TARGET_NAME_RE}. */
  readonly name: string;
  /** 12-digit AWS account id; undefined: the reconciler's own account (the default target only). */
  readonly account?: string;
  /** AWS Region, e.g. `eu-west-1`; undefined: the reconciler's own Region. */
  readonly region?: string;
  /** ECS cluster names managed there; empty: every cluster the target's specs name. */
  readonly clusters: readonly string[];
  /** The role assumed in the target account (`ReconcilerTargetRole`); undefined: the function's own role. */
  readonly roleArn?: string;
  readonly defaults?: TargetDefaults;
  /** Where the declaration came from. */
  readonly source: 'prop' | 'table' | 'implicit';
}

const targetSchema = z
  .object({
    name: z
      .string()
      .regex(TARGET_NAME_RE, 'must be 1-32 lowercase letters, digits or hyphens, starting with a letter or digit'),
    account: z.string().regex(/^\d{12}$/, 'must be a 12-digit AWS account id').optional(),
    region: z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'must be an AWS Region such as eu-west-1').optional(),
    clusters: z.array(z.string().regex(CLUSTER_NAME_RE, 'must be ECS cluster names (letters, digits, hyphens, underscores)')).optional(),
    roleArn: z.string().regex(ROLE_ARN_RE, 'must be an IAM role ARN (arn:aws:iam::123456789012:role/NAME)').optional(),
    defaults: z
      .object({
        subnets: z.array(z.string().regex(/^subnet-[0-9a-f]+$/, 'must be subnet ids')).optional(),
        securityGroups: z.array(z.string().regex(/^sg-[0-9a-f]+$/, 'must be security group ids')).optional(),
        assignPublicIp: z.boolean().optional(),
        executionRoleArn: z.string().regex(ROLE_ARN_RE, 'must be an IAM role ARN').optional(),
      })
      .strict()
      .optional(),
  })
  .strict()
  .superRefine((t, ctx) => {
    if (t.name === DEFAULT_TARGET) {
      // The default target is the reconciler's own account, Region and role, and owns today's
      // plain-keyed specs: a declaration may give it clusters and defaults, never another place.
      for (const field of ['account', 'region', 'roleArn'] as const) {
        if (t[field] !== undefined) {
          ctx.addIssue({ code: 'custom', path: [field], message: `cannot be set: "default" is the reconciler's own account, Region and role (declare another account or Region under another name)` });
        }
      }
      return;
    }
    if (!t.account) ctx.addIssue({ code: 'custom', path: ['account'], message: 'is required for a target other than "default"' });
    if (!t.region) ctx.addIssue({ code: 'custom', path: ['region'], message: 'is required for a target other than "default"' });
    if (!t.roleArn) ctx.addIssue({ code: 'custom', path: ['roleArn'], message: 'is required for a target other than "default" (the ReconcilerTargetRole of its account)' });
    if (t.roleArn && t.account && !t.roleArn.includes(`::${t.account}:role/`)) {
      ctx.addIssue({ code: 'custom', path: ['roleArn'], message: `must be a role of the target's account ${t.account}` });
    }
  });

/** The result of reading one declaration: the target, or one sentence per problem. */
export type TargetParseResult = { readonly ok: true; readonly target: Target } | { readonly ok: false; readonly name: string; readonly errors: string[] };

/**
 * Reads one target declaration (a prop entry or a table item without its keys). Never throws.
 * Unknown attributes are refused, so a misspelt `roleArn` is an error and not a silent default.
 */
export function parseTarget(raw: unknown, source: Target['source']): TargetParseResult {
  const parsed = targetSchema.safeParse(raw);
  const name = raw && typeof raw === 'object' && typeof (raw as { name?: unknown }).name === 'string' ? (raw as { name: string }).name : '?';
  if (!parsed.success) {
    return { ok: false, name, errors: parsed.error.issues.map((i) => `target ${name}: ${i.path.join('.') || 'declaration'} ${i.message}`) };
  }
  const t = parsed.data;
  return {
    ok: true,
    target: {
      name: t.name,
      ...(t.account ? { account: t.account } : {}),
      ...(t.region ? { region: t.region } : {}),
      clusters: t.clusters ?? [],
      ...(t.roleArn ? { roleArn: t.roleArn } : {}),
      ...(t.defaults ? { defaults: t.defaults } : {}),
      source,
    },
  };
}

/**
 * The declaration a `#target` item makes (its attributes without the keys, and its sort key as
 * the name), for {@link parseTarget}: `clusters` may be a DynamoDB list (L of S, an array here) or a
 * string set (SS, a `Set` once decoded: the console makes sets easily), read in name order.
 */
export function targetItemDeclaration(attributes: Readonly<Record<string, unknown>>, name: unknown): Record<string, unknown> {
  const { clusters, ...rest } = attributes;
  const list = clusters instanceof Set ? [...(clusters as Set<unknown>)].sort() : clusters;
  return { ...rest, name, ...(list !== undefined ? { clusters: list } : {}) };
}

/** The targets of one dispatch: declared ones first by name, and what could not be used. */
export interface TargetSet {
  readonly targets: readonly Target[];
  /** One sentence per refused declaration (invalid, or a table item naming a prop target). */
  readonly problems: readonly string[];
}

/**
 * Merges the prop's targets with the table's: a prop target wins over a table item of the same
 * name (the item is reported), and the default target is always there (with `MANAGED_CLUSTERS`
 * when no declaration names it). Sorted by name, `default` first.
 */
export function mergeTargets(
  fromProp: readonly TargetParseResult[],
  fromTable: readonly TargetParseResult[],
  defaultClusters: readonly string[],
  home?: { readonly account?: string; readonly region?: string },
): TargetSet {
  const problems: string[] = [];
  const byName = new Map<string, Target>();
  for (const r of fromProp) {
    if (!r.ok) problems.push(...r.errors);
    else byName.set(r.target.name, r.target);
  }
  for (const r of fromTable) {
    if (!r.ok) {
      problems.push(...r.errors);
      continue;
    }
    if (byName.has(r.target.name)) {
      problems.push(`target ${r.target.name}: the table item is ignored, the construct's targets prop declares this name`);
      continue;
    }
    byName.set(r.target.name, r.target);
  }
  if (!byName.has(DEFAULT_TARGET)) byName.set(DEFAULT_TARGET, { name: DEFAULT_TARGET, clusters: defaultClusters, source: 'implicit' });
  const sorted = [...byName.values()].sort((a, b) => (a.name === DEFAULT_TARGET ? -1 : b.name === DEFAULT_TARGET ? 1 : a.name.localeCompare(b.name)));
  // One target per account and Region: two would each see the other's services as owned services
  // without a spec and prune them (one owner tag per reconciler), and would each spend the whole
  // API budget of the same ECS buckets. The default target, then prop targets, then items win.
  const rank = (t: Target) => (t.name === DEFAULT_TARGET ? 0 : t.source === 'prop' ? 1 : 2);
  const byPlace = new Map<string, Target>();
  const refused = new Set<Target>();
  for (const t of [...sorted].sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name))) {
    const account = t.account ?? home?.account;
    const region = t.region ?? home?.region;
    const place = account !== undefined && region !== undefined ? `${account}/${region}` : undefined;
    const holder = place !== undefined ? byPlace.get(place) : undefined;
    if (holder) {
      problems.push(
        `target ${t.name}: account ${account} Region ${region} is already target ${holder.name}'s; one target per account and Region (two would prune each other's services and share ECS's buckets): add the clusters to ${holder.name} instead`,
      );
      refused.add(t);
    } else if (place !== undefined) byPlace.set(place, t);
  }
  return { targets: sorted.filter((t) => !refused.has(t)), problems };
}

/**
 * The target and ECS cluster a spec item's partition key names: `web` -> (default, web);
 * `staging/web` -> (staging, web).
 */
export function splitPartitionKey(pk: string): { readonly target: string; readonly cluster: string } {
  const i = pk.indexOf(TARGET_SEPARATOR);
  if (i < 0) return { target: DEFAULT_TARGET, cluster: pk };
  return { target: pk.slice(0, i), cluster: pk.slice(i + 1) };
}

/** The partition key of `cluster`'s specs in `target` (inverse of {@link splitPartitionKey}). */
export function partitionKeyOf(target: string, cluster: string): string {
  return target === DEFAULT_TARGET ? cluster : `${target}${TARGET_SEPARATOR}${cluster}`;
}

/** A service key as stored (partition key with the target) from the target's ECS names. */
export function storedKey(target: string, key: ServiceKey): ServiceKey {
  return { cluster: partitionKeyOf(target, key.cluster), service: key.service };
}

/** Groups stored keys (as the stream names them) by target, with ECS cluster names. */
export function keysByTarget(keys: readonly ServiceKey[]): Map<string, ServiceKey[]> {
  const out = new Map<string, ServiceKey[]>();
  for (const k of keys) {
    const { target, cluster } = splitPartitionKey(k.cluster);
    const list = out.get(target) ?? [];
    list.push({ cluster, service: k.service });
    out.set(target, list);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The fan-out message: one per target per schedule tick (SQS, docs/multi-account.md)
// ---------------------------------------------------------------------------------------------

/** `kind` of a fan-out message body; tells it from any other SQS message. */
export const FAN_OUT_MESSAGE_KIND = 'ecsr.target-pass';

/** What the dispatcher sends for one target. */
export interface FanOutMessage {
  readonly kind: typeof FAN_OUT_MESSAGE_KIND;
  /** The target declaration as dispatched (table items may change between ticks). */
  readonly target: Target;
  /** ISO time the dispatcher sent it (the reconciler's clock). */
  readonly sentAt: string;
  /** The fast path: reconcile only these services (ECS names). Absent: the scheduled pass. */
  readonly keys?: readonly ServiceKey[];
  /**
   * The keys come from ECS's events (the events fast path), not from spec edits: only the named
   * services that have a spec are read (events name every service of the account).
   */
  readonly fromEvents?: boolean;
  /**
   * Every target declared at this tick: the default target skips the others' items and reports
   * an item of an undeclared target as invalid.
   */
  readonly declared: readonly string[];
  /**
   * A fast-path message only: how many earlier deliveries of it found its target's lease held and
   * sent it back to the queue (absent: none). Bounds the re-sends (`requeueAfterLeaseHeld`,
   * `./fan-out.ts`).
   */
  readonly leaseTries?: number;
}

const messageSchema = z.object({
  kind: z.literal(FAN_OUT_MESSAGE_KIND),
  target: z.unknown(),
  sentAt: z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'must be an ISO time'),
  keys: z.array(z.object({ cluster: z.string().min(1), service: z.string().min(1) })).max(1000).optional(),
  fromEvents: z.boolean().optional(),
  declared: z.array(z.string()).max(10_000),
  leaseTries: z.number().int().min(0).max(1000).optional(),
});

/** True when `body` looks like a fan-out message (JSON with the fan-out `kind`), valid or not. */
export function isFanOutBody(body: string): boolean {
  return body.includes(FAN_OUT_MESSAGE_KIND);
}

/**
 * Reads a fan-out message body. Never throws.
 * @returns the message, or the reason it cannot be used.
 */
export function parseFanOutMessage(body: string): { ok: true; message: FanOutMessage } | { ok: false; error: string } {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { ok: false, error: 'the body is not JSON' };
  }
  const parsed = messageSchema.safeParse(json);
  if (!parsed.success) return { ok: false, error: parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ') };
  // `source` is not part of a declaration: parse without it, then keep the dispatcher's.
  const raw = (parsed.data.target && typeof parsed.data.target === 'object' ? parsed.data.target : {}) as Record<string, unknown>;
  const { source, ...declaration } = raw;
  const t = parseTarget(declaration, source === 'table' || source === 'implicit' ? source : 'prop');
  if (!t.ok) return { ok: false, error: t.errors.join('; ') };
  return {
    ok: true,
    message: {
      kind: FAN_OUT_MESSAGE_KIND,
      target: t.target,
      sentAt: parsed.data.sentAt,
      ...(parsed.data.keys ? { keys: parsed.data.keys } : {}),
      ...(parsed.data.fromEvents ? { fromEvents: true } : {}),
      declared: parsed.data.declared,
      ...(parsed.data.leaseTries ? { leaseTries: parsed.data.leaseTries } : {}),
    },
  };
}

/**
 * Whether a scheduled message is too old to run: the next tick has already sent a fresh one for
 * the same target, so running this one would only queue a pass behind it. Fast-path messages
 * (with keys) live as long as stream records do (5 minutes).
 * @param maxAgeSeconds the schedule's interval, in seconds.
 */
export function isStale(message: FanOutMessage, now: Date, maxAgeSeconds: number): boolean {
  const age = (now.getTime() - Date.parse(message.sentAt)) / 1000;
  return age > (message.keys ? 300 : maxAgeSeconds);
}

/** The value of `TargetPassAge` for a target that never completed a pass (seconds, ~11.6 days). */
export const NEVER_PASSED_AGE_SECONDS = 1_000_000;

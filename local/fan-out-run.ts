/**
 * `ecsr local --targets N`: the fan-out against N simulators standing for N
 * accounts. One spec table on dynalite holds the specs of every target: the default target's under
 * their plain cluster names, target `account-2`'s (and so on) under `account-2/<cluster>`, declared
 * as a `#target` item as a platform team would. Every simulated minute the dispatcher
 * (`dispatchTargets`, the function's code) sends one message per target into an in-process queue
 * standing for SQS, and `deliver` hands them to `TargetRunner.run` (the function's code for a
 * message) at most `maximumConcurrency` at once, as the event source mapping does. Only STS is
 * left out: the simulators accept any credentials, so each target's role is not assumed.
 *
 * ECS's events (on unless `events: false`): each simulator's events go onto its account's bus; the
 * reconciler account's bus has the construct's rules (`EVENT_RULES`) into the events fast path
 * queue, and every other account's bus has the forwarding rules of `ReconcilerTargetStack` (the
 * same patterns) whose target is the reconciler account's bus. Every 10 simulated seconds the queue
 * is drained as its event source mapping would: `dispatchEvents` (the function's code) routes the
 * events to their targets by `account` and `region`, and `TargetRunner` runs each target's fast
 * path restricted to the services named, under that target's lease, with its limiter.
 *
 * Time: every simulator runs on its own manual clock, all started at the same instant and moved
 * together one simulated minute per tick (10 seconds at a time); the passes use the first
 * simulator's clock.
 */
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DescribeServicesCommand, ECSClient, UpdateServiceCommand } from '@aws-sdk/client-ecs';
import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../lambda/adapters/clients';
import { specsTableDefinition } from '../lambda/adapters/dynamo-spec-store';
import { DynamoTargetDirectory, TargetRunner, type TargetPassResult } from '../lambda/adapters/fan-out';
import { RecordingLog } from '../lambda/adapters/logger';
import { InMemoryMetricsSink } from '../lambda/adapters/metrics';
import { loadConfig } from '../lambda/config';
import { EVENT_RULES } from '../lambda/core/events';
import { dispatchEvents, dispatchTargets } from '../lambda/core/fan-out';
import { specToItem } from '../lambda/core/spec';
import { DEFAULT_TARGET, partitionKeyOf, TARGET_PARTITION } from '../lambda/core/targets';
import type { ServiceSpec } from '../lambda/core/types';
import { deliver, InMemoryFanOutQueue } from './fan-out';
import { startEmbeddedDynamoDb } from './embedded-dynamodb';
import { LocalEventBridge } from './eventbridge';
import { startSimulator, type Simulator } from './sim';
import { assumedRoleIdentity } from './sim/events';
import { LOCAL_CREDENTIALS, LOCAL_DEFAULTS, LOCAL_VPC, LOCAL_RECONCILER_CREDENTIALS, LOCAL_RECONCILER_ROLE_NAME, localReconcilerEnv } from './stack';

/** The account id of simulated account `i` (1-based): 123456789012 is the reconciler's own. */
export function simulatedAccount(i: number): string {
  return i === 1 ? '123456789012' : String(100000000000 + i * 11111).padStart(12, '0');
}

/** The name of target `i` (1-based): `default`, then `account-2`, `account-3`... */
export function targetName(i: number): string {
  return i === 1 ? DEFAULT_TARGET : `account-${i}`;
}

export interface LocalFanOutOptions {
  readonly specs: readonly { readonly spec: ServiceSpec }[];
  /** Accounts (targets) including the reconciler's own; at least 2. */
  readonly targets: number;
  /** Simulated minutes (ticks) at most; the run ends earlier once every target converged. */
  readonly minutes?: number;
  /** The event source mapping's maximumConcurrency (default: every target at once). */
  readonly maximumConcurrency?: number;
  readonly seed?: number;
  readonly write: (text: string) => void;
  readonly env?: Record<string, string | undefined>;
  /** ECS's events of every account through the buses to each target's fast path (default true). */
  readonly events?: boolean;
}

export interface LocalFanOutTarget {
  readonly name: string;
  readonly account: string;
  readonly endpoint: string;
  /** Services of the target's specs running as desired at the end. */
  readonly converged: number;
  /**
   * Services whose status has settled: Converged or Deleted, or a failed rollout the reconciler
   * does not re-apply (`failedSpecHash`: the example shop's ledger, by design).
   */
  readonly settled: number;
  readonly services: number;
  readonly passes: number;
  readonly actions: number;
  /** Events of this account's simulator put on its bus (forwarded to the reconciler's bus for targets other than default). */
  readonly eventsPut: number;
  /** Services the events fast path named for this target (summed over batches). */
  readonly eventServices: number;
  /** Fast path passes this target ran for events. */
  readonly fastPasses: number;
}

export interface LocalFanOutResult {
  readonly ok: boolean;
  readonly minutes: number;
  readonly targets: readonly LocalFanOutTarget[];
  /** Events no declared target serves (dropped by the routing). */
  readonly eventsUnrouted: number;
  /**
   * With events, once every account settled: a person's hand edit in the second account
   * (desiredCount changed with an IAM user's credentials) and whether that target's events fast
   * path put it back before any scheduled pass (no simulated time passing).
   */
  readonly handEdit?: { readonly target: string; readonly service: string; readonly from: number; readonly to: number; readonly corrected: boolean };
  readonly summary: string;
}

/**
 * Runs the fan-out locally until every target's services run as desired or `minutes` pass.
 * @throws when a server cannot start, or a spec cannot be written.
 */
export async function runLocalFanOut(opts: LocalFanOutOptions): Promise<LocalFanOutResult> {
  if (!(Number.isInteger(opts.targets) && opts.targets >= 2)) throw new RangeError(`--targets must be a whole number of at least 2, got ${opts.targets}`);
  const start = new Date(Math.floor(Date.now() / 60_000) * 60_000);
  const clusters = [...new Set(opts.specs.map((s) => s.spec.cluster))];
  const db = await startEmbeddedDynamoDb(0);
  const sims: Simulator[] = [];
  const doc = createDocumentClient({ endpoint: db.endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
  try {
    for (let i = 1; i <= opts.targets; i++) {
      sims.push(
        await startSimulator({ port: 0, seed: (opts.seed ?? 1) + i - 1, startTime: start, clusters, vpc: LOCAL_VPC, accountId: simulatedAccount(i), region: sims[0]?.region ?? 'us-east-1' }),
      );
    }
    const table = 'ecsr-specs';
    const ddb = new DynamoDBClient({ endpoint: db.endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
    await ddb.send(new CreateTableCommand(specsTableDefinition(table)));
    ddb.destroy();
    const env = localReconcilerEnv({ table, region: sims[0].region, clusters }, opts.env);
    const config = loadConfig({ ...env, FANOUT_QUEUE_URL: 'http://local/fan-out' });
    for (let i = 1; i <= opts.targets; i++) {
      const name = targetName(i);
      if (i > 1) await declareSimulatedTarget(doc, table, i, sims[i - 1].region, clusters);
      for (const { spec } of opts.specs) {
        const item = specToItem(spec) as Record<string, unknown>;
        await doc.send(new PutCommand({ TableName: table, Item: { ...item, cluster: partitionKeyOf(name, spec.cluster) } }));
      }
    }
    const log = new RecordingLog();
    const metrics = new InMemoryMetricsSink();
    const clock = { now: () => sims[0].clock.now() };
    const endpointOf = new Map(sims.map((s, i) => [targetName(i + 1), s.endpoint]));
    // The reconciler's calls: its own role in its account, the target role elsewhere (as
    // CloudTrail records them), so its own writes are not hints.
    sims.forEach((sim, i) =>
      sim.setCaller(LOCAL_RECONCILER_CREDENTIALS.accessKeyId, {
        identity: assumedRoleIdentity(sim.accountId, i === 0 ? LOCAL_RECONCILER_ROLE_NAME : 'ecs-reconciler-target', 'ecsr-local', LOCAL_RECONCILER_CREDENTIALS.accessKeyId, sim.clock.now()),
        userAgent: 'ecs-reconciler (aws-sdk-js)',
        sourceIPAddress: '127.0.0.1',
      }),
    );
    // The fan-out queue on the simulated clock (a re-sent message's delay is simulated seconds).
    const queue = new InMemoryFanOutQueue(() => clock.now().getTime());
    const runner = new TargetRunner(config, {
      doc,
      metrics,
      log,
      clock,
      ecsClientConfigFor: (t) => ({ endpoint: endpointOf.get(t.name), credentials: LOCAL_RECONCILER_CREDENTIALS }),
      credentialsFor: () => async () => LOCAL_RECONCILER_CREDENTIALS,
      requeue: queue,
    });
    const directory = new DynamoTargetDirectory(doc, table);
    const passes = new Map<string, TargetPassResult[]>();
    const events = opts.events ?? true;
    const home = { account: simulatedAccount(1), region: sims[0].region };
    const fastPathQueue: string[] = [];
    const eventsPut = new Map<string, number>();
    const eventServices = new Map<string, number>();
    const fastPasses = new Map<string, TargetPassResult[]>();
    let eventsUnrouted = 0;
    const unsubscribe: (() => void)[] = [];
    if (events) {
      // The reconciler account's bus: the construct's rules into the events fast path queue.
      const homeBus = new LocalEventBridge(home);
      for (const [name, rule] of Object.entries(EVENT_RULES)) homeBus.addRule({ name, pattern: rule.pattern, target: (body) => void fastPathQueue.push(body) });
      sims.forEach((sim, i) => {
        const name = targetName(i + 1);
        let bus = homeBus;
        if (i > 0) {
          // A target account's bus: ReconcilerTargetStack's forwarding rules, whose target is the
          // reconciler account's bus (the event keeps its account and region).
          bus = new LocalEventBridge({ account: sim.accountId, region: sim.region });
          for (const [id, rule] of Object.entries(EVENT_RULES)) bus.addRule({ name: `Forward${id}`, pattern: rule.pattern, target: (body) => void homeBus.put(JSON.parse(body) as Record<string, unknown>) });
        }
        unsubscribe.push(
          sim.events.subscribe((e) => {
            eventsPut.set(name, (eventsPut.get(name) ?? 0) + 1);
            bus.put(e as unknown as Record<string, unknown>);
          }),
        );
      });
    }
    /** The events fast path queue's event source mapping: route the waiting events, run each target's fast path. */
    const drainEvents = async () => {
      for (let round = 0; round < 3 && fastPathQueue.length > 0; round++) {
        const sent = await dispatchEvents(
          { directory, queue, metrics, log, clock },
          { propTargets: [], defaultClusters: config.plan.managedClusters, home, ignorePrincipals: [`arn:aws:iam::${home.account}:role/${LOCAL_RECONCILER_ROLE_NAME}`] },
          fastPathQueue.splice(0),
        );
        eventsUnrouted += sent.unrouted;
        for (const [name, n] of Object.entries(sent.targets)) eventServices.set(name, (eventServices.get(name) ?? 0) + n);
        for (const d of await deliver(queue.take(), opts.maximumConcurrency ?? opts.targets, (m) => runner.run(m, { holder: `local-events:${m.target.name}`, home }))) {
          const list = fastPasses.get(d.message.target.name) ?? [];
          list.push('result' in d ? d.result : { outcome: 'invalid-message', error: String(d.error) });
          fastPasses.set(d.message.target.name, list);
        }
      }
    };
    const maxMinutes = opts.minutes ?? 15;
    let minute = 0;
    let converged = false;
    let status: LocalFanOutTarget[] = [];
    opts.write(`ecsr local --targets ${opts.targets}: ${opts.specs.length} specs per account, ${opts.targets} simulators (${sims.map((s, i) => `${targetName(i + 1)} ${s.endpoint}`).join(', ')}), dynalite ${db.endpoint}\n`);
    for (; minute < maxMinutes && !converged; minute++) {
      const tick = await dispatchTargets({ directory, queue, metrics, log, clock }, { propTargets: [], defaultClusters: config.plan.managedClusters, home });
      const deliveries = await deliver(queue.take(), opts.maximumConcurrency ?? opts.targets, (m) => runner.run(m, { holder: `local:${m.target.name}`, home }));
      for (const d of deliveries) {
        const list = passes.get(d.message.target.name) ?? [];
        list.push('result' in d ? d.result : { outcome: 'invalid-message', error: String(d.error) });
        passes.set(d.message.target.name, list);
      }
      status = await Promise.all(
        sims.map(async (sim, i) => {
          const name = targetName(i + 1);
          const live = await liveCounts(sim, opts.specs.map((s) => s.spec));
          const mine = passes.get(name) ?? [];
          return {
            name,
            account: simulatedAccount(i + 1),
            endpoint: sim.endpoint,
            converged: live,
            settled: await settledCount(doc, table, name, opts.specs.map((s) => s.spec)),
            services: opts.specs.length,
            passes: mine.length,
            actions: mine.reduce((n, r) => n + (r.outcome === 'pass' ? r.summary.actions.length : 0), 0),
            eventsPut: eventsPut.get(name) ?? 0,
            eventServices: eventServices.get(name) ?? 0,
            fastPasses: (fastPasses.get(name) ?? []).filter((r) => r.outcome === 'pass').length,
          };
        }),
      );
      opts.write(
        `minute ${minute}: dispatched ${tick.targets.join(', ')}; ${status.map((t) => `${t.name} ${t.converged}/${t.services} running as desired, ${t.settled} settled`).join('; ')}\n`,
      );
      converged = status.every((t) => t.settled === t.services);
      if (converged) continue;
      for (let step = 0; step < 6; step++) {
        await drainEvents();
        for (const sim of sims) sim.advance(10);
      }
      await drainEvents();
    }
    // The second account's events reach its status within seconds: a hand edit there, seen only
    // through its forwarded CloudTrail event, is put back by its fast path before any next tick.
    let handEdit: LocalFanOutResult['handEdit'];
    const edited = opts.specs.map((x) => x.spec).find((x) => x.state !== 'absent' && (x.desiredCount ?? 1) > 0);
    if (events && converged && edited) {
      const person = new ECSClient({ endpoint: sims[1].endpoint, region: sims[1].region, credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
      const to = (edited.desiredCount ?? 1) + 2;
      try {
        await person.send(new UpdateServiceCommand({ cluster: edited.cluster, service: edited.service, desiredCount: to }));
        await drainEvents();
        const after = (await person.send(new DescribeServicesCommand({ cluster: edited.cluster, services: [edited.service] }))).services?.[0]?.desiredCount;
        handEdit = { target: targetName(2), service: `${edited.cluster}/${edited.service}`, from: edited.desiredCount ?? 1, to, corrected: after === (edited.desiredCount ?? 1) };
      } finally {
        person.destroy();
      }
    }
    for (const u of unsubscribe) u();
    runner.destroy();
    const summary =
      `\nFan-out over ${opts.targets} accounts after ${minute} simulated minute(s):\n` +
      status.map((t) => `  ${t.name.padEnd(12)} account ${t.account}  ${t.converged}/${t.services} running as desired, ${t.settled}/${t.services} settled  ${t.passes} passes  ${t.actions} actions\n`).join('') +
      (events
        ? `ECS events, each account's routed to its own target's fast path by account and Region:\n` +
          status.map((t) => `  ${t.name.padEnd(12)} ${t.eventsPut} events put${t.name === DEFAULT_TARGET ? '' : ' (forwarded to the reconciler account)'}, ${t.eventServices} services named, ${t.fastPasses} fast path passes\n`).join('') +
          `  ${eventsUnrouted} events for no declared target (dropped)\n` +
          (handEdit
            ? `Hand edit in ${handEdit.target}: ${handEdit.service} desiredCount ${handEdit.from} -> ${handEdit.to} by a person; ${handEdit.corrected ? `put back to ${handEdit.from} by ${handEdit.target}'s events fast path, no scheduled pass in between` : 'NOT put back by the events fast path'}.\n`
            : '')
        : 'ECS events off (--no-events): every target is polled.\n') +
      (converged
        ? 'Every account settled, each in its own invocation (a service not running as desired is a failed rollout its status reports, as in `npm start`).\n'
        : 'Not every account settled in time.\n');
    opts.write(summary);
    return { ok: converged && (handEdit?.corrected ?? true), minutes: minute, targets: status, eventsUnrouted, ...(handEdit ? { handEdit } : {}), summary };
  } finally {
    doc.destroy();
    await Promise.all(sims.map((s) => s.close()));
    await db.stop();
  }
}

/** Services of `specs` in `target` whose item status settled (see {@link LocalFanOutTarget.settled}). */
async function settledCount(doc: DynamoDBDocumentClient, table: string, target: string, specs: readonly ServiceSpec[]): Promise<number> {
  let n = 0;
  for (const spec of specs) {
    const item = (await doc.send(new GetCommand({ TableName: table, Key: { cluster: partitionKeyOf(target, spec.cluster), service: spec.service }, ConsistentRead: true }))).Item;
    const status = item?.status as { phase?: string; failedSpecHash?: string } | undefined;
    if (status && (status.phase === 'Converged' || status.phase === 'Deleted' || status.failedSpecHash)) n += 1;
  }
  return n;
}

/** Services of `specs` that run as desired in `sim` (ACTIVE, running = desired, one deployment). */
async function liveCounts(sim: Simulator, specs: readonly ServiceSpec[]): Promise<number> {
  const ecs = new ECSClient({ endpoint: sim.endpoint, region: sim.region, credentials: LOCAL_CREDENTIALS });
  try {
    let n = 0;
    for (const cluster of new Set(specs.map((s) => s.cluster))) {
      const wanted = specs.filter((s) => s.cluster === cluster);
      for (let i = 0; i < wanted.length; i += 10) {
        const batch = wanted.slice(i, i + 10);
        const out = await ecs.send(new DescribeServicesCommand({ cluster, services: batch.map((s) => s.service) }));
        for (const spec of batch) {
          const svc = out.services?.find((s) => s.serviceName === spec.service);
          const absent = spec.state === 'absent';
          if (absent ? !svc || svc.status !== 'ACTIVE' : svc?.status === 'ACTIVE' && svc.runningCount === svc.desiredCount && (svc.deployments?.length ?? 0) === 1) n += 1;
        }
      }
    }
    return n;
  } finally {
    ecs.destroy();
  }
}

/**
 * Declares simulated account `i` (2 and up; 1 is `default`) as a target: a `#target` item naming
 * its account (`simulatedAccount(i)`), Region, clusters, the role the reconciler would assume there,
 * and the local defaults with the execution role moved into that account. Throws what PutItem throws.
 */
export async function declareSimulatedTarget(doc: DynamoDBDocumentClient, table: string, i: number, region: string, clusters: string[]): Promise<void> {
  await doc.send(
    new PutCommand({
      TableName: table,
      Item: {
        cluster: TARGET_PARTITION,
        service: targetName(i),
        account: simulatedAccount(i),
        region,
        clusters,
        roleArn: `arn:aws:iam::${simulatedAccount(i)}:role/ecs-reconciler-target`,
        defaults: {
          subnets: LOCAL_DEFAULTS.subnets.split(','),
          securityGroups: LOCAL_DEFAULTS.securityGroups.split(','),
          executionRoleArn: LOCAL_DEFAULTS.executionRoleArn.replace('123456789012', simulatedAccount(i)),
        },
      },
    }),
  );
}

/**
 * The pass over in-memory ports (fakes for the core). The real planner runs; ECS and
 * DynamoDB are fakes that record what the pass asked of them.
 */
import { describe, expect, it, vi } from 'vitest';
import { Logger } from '@aws-lambda-powertools/logger';
import fc from 'fast-check';
import { foldResults, runPass, ACTION_REJECTED_CONDITION, ECS_REJECTED_REASON, type PassOptions, type PassPorts } from '../lambda/core/pass';
import { DEFAULT_PLAN_OPTIONS } from '../lambda/core/options';
import type { ActionResult, EcsReader, EcsWriter, LeaseResult, SpecRead, SpecStore } from '../lambda/core/ports';
import { parseSpecItem } from '../lambda/core/spec';
import { METRIC } from '../lambda/core/metric-names';
import type { Action, ObservedCluster, ServiceKey, ServiceStatus, TaskDefinition } from '../lambda/core/types';
import { InMemoryMetricsSink } from '../lambda/adapters/metrics';
import { PowertoolsLog, RecordingLog } from '../lambda/adapters/logger';
import { aSpecItem, aValidSpec } from './runtime/support';

const NOW = new Date('2025-03-01T12:00:00Z');

class FakeSpecStore implements SpecStore {
  statuses: Record<string, ServiceStatus> = {};
  writes: { key: ServiceKey; status: ServiceStatus }[] = [];
  leaseCalls: string[] = [];
  leaseHolder?: { holder: string; expiresAt: Date };
  failRead = false;
  failWrite = false;
  failLease = false;

  constructor(public items: Record<string, unknown>[]) {}

  async readAll(): Promise<SpecRead> {
    const specs = this.items.map(parseSpecItem);
    if (this.failRead) return { specs: specs.slice(0, 1), statuses: {}, complete: false, error: 'Scan page 2 failed' };
    return { specs, statuses: { ...this.statuses }, complete: true };
  }
  async writeStatus(key: ServiceKey, status: ServiceStatus): Promise<boolean> {
    if (this.failWrite) throw new Error('DynamoDB is down');
    this.writes.push({ key, status });
    this.statuses[`${key.cluster}/${key.service}`] = status;
    return true;
  }
  async acquireLease(holder: string, ttlSeconds: number, now: Date): Promise<LeaseResult> {
    this.leaseCalls.push(`acquire ${holder} ${ttlSeconds}`);
    if (this.failLease) throw new Error('DynamoDB is down');
    if (this.leaseHolder && this.leaseHolder.holder !== holder && this.leaseHolder.expiresAt > now) {
      return { acquired: false, ...this.leaseHolder };
    }
    this.leaseHolder = { holder, expiresAt: new Date(now.getTime() + ttlSeconds * 1000) };
    return { acquired: true };
  }
  async releaseLease(holder: string): Promise<void> {
    this.leaseCalls.push(`release ${holder}`);
    if (this.leaseHolder?.holder === holder) this.leaseHolder = undefined;
  }
}

class FakeReader implements EcsReader {
  observed: string[] = [];
  constructor(private readonly clusters: Record<string, Partial<ObservedCluster>> = {}) {}
  async observeCluster(cluster: string, extra: string[]): Promise<ObservedCluster> {
    this.observed.push(`${cluster}:${extra.join(',')}`);
    return { cluster, complete: true, exists: true, services: {}, ...this.clusters[cluster] };
  }
  async describeTaskDefinitions(): Promise<Record<string, TaskDefinition>> {
    return {};
  }
  async latestActiveTaskDefinition(): Promise<TaskDefinition | undefined> {
    return undefined;
  }
}

/** Applies every action successfully unless `fail` says otherwise. */
class FakeWriter implements EcsWriter {
  applied: Action[] = [];
  constructor(private readonly fail: (a: Action) => Omit<Extract<ActionResult, { ok: false }>, 'action'> | undefined = () => undefined) {}
  async apply(actions: Action[], shouldContinue: () => boolean): Promise<ActionResult[]> {
    const out: ActionResult[] = [];
    for (const action of actions) {
      if (!shouldContinue()) {
        out.push({ ok: false, action, errorClass: 'skipped', message: 'out of time' });
        continue;
      }
      const f = this.fail(action);
      if (f) out.push({ ...f, action });
      else {
        this.applied.push(action);
        out.push({ ok: true, action, detail: 'ok' });
      }
    }
    return out;
  }
}

function setup(
  items: Record<string, unknown>[],
  opts: { writer?: FakeWriter; reader?: FakeReader; store?: FakeSpecStore } = {},
) {
  const store = opts.store ?? new FakeSpecStore(items);
  const reader = opts.reader ?? new FakeReader();
  const writer = opts.writer ?? new FakeWriter();
  const metrics = new InMemoryMetricsSink();
  const log = new RecordingLog();
  const ports: PassPorts = { specs: store, reader, writer, metrics, log, clock: { now: () => NOW }, monotonicMs: () => 0 };
  const options: PassOptions = {
    plan: { ...DEFAULT_PLAN_OPTIONS, ownerId: 'owner-1' },
    dryRun: false,
    holder: 'pass-1',
    leaseTtlSeconds: 60,
  };
  return { store, reader, writer, metrics, log, ports, options };
}

describe('runPass over fakes', () => {
  it('creates a new service: register, create, status written, lag metric, lease released', async () => {
    // Prepare
    const { store, writer, metrics, log, ports, options } = setup([aSpecItem()]);

    // Act
    const summary = await runPass(ports, options);

    // Assess
    expect(summary.outcome).toBe('completed');
    expect(writer.applied.map((a) => a.type)).toEqual(['RegisterTaskDefinition', 'CreateService']);
    expect(summary.counts).toMatchObject({ specs: 1, invalid: 0, actionsPlanned: 2, actionsApplied: 2, actionsFailed: 0, statusesWritten: 1 });
    const status = store.statuses['apps/web'];
    expect(status.lastAction).toMatchObject({ type: 'CreateService', at: NOW.toISOString(), summary: 'CreateService: service web does not exist; create it' });
    expect(status.lastAction?.error).toBeUndefined();
    expect(status.lastAppliedSpecHash).toBe(aValidSpec().hash);
    expect(metrics.latest(METRIC.taskLag, { cluster: 'apps', service: 'web' })).toBe(2);
    expect(metrics.latest(METRIC.passSucceeded)).toBe(1);
    expect(metrics.latest(METRIC.actionsApplied)).toBe(2);
    expect(store.leaseCalls).toEqual(['acquire pass-1 60', 'release pass-1']);
    expect(store.leaseHolder).toBeUndefined();
    expect(log.lines.filter((l) => l.message.endsWith('applied')).map((l) => l.fields.action)).toEqual(['RegisterTaskDefinition', 'CreateService']);
    expect(log.lines.at(-1)?.message).toBe('pass completed');
  });

  it('does nothing but say so when another pass holds the lease', async () => {
    // Prepare
    const { store, reader, writer, metrics, ports, options } = setup([aSpecItem()]);
    store.leaseHolder = { holder: 'pass-0', expiresAt: new Date(NOW.getTime() + 30_000) };

    // Act
    const summary = await runPass(ports, options);

    // Assess
    expect(summary.outcome).toBe('lease-held');
    expect(summary.lease).toEqual({ holder: 'pass-0', expiresAt: new Date(NOW.getTime() + 30_000).toISOString() });
    expect(reader.observed).toEqual([]);
    expect(writer.applied).toEqual([]);
    expect(store.writes).toEqual([]);
    expect(metrics.data).toEqual([]);
    expect(store.leaseHolder?.holder).toBe('pass-0');
  });

  it('reports a lease it cannot take (DynamoDB down) without throwing', async () => {
    const { store, reader, ports, options } = setup([aSpecItem()]);
    store.failLease = true;
    const summary = await runPass(ports, options);
    expect(summary.outcome).toBe('failed');
    expect(summary.errors[0]).toContain('DynamoDB is down');
    expect(reader.observed).toEqual([]);
  });

  it('dry run: plans, writes nothing to ECS or DynamoDB, lists the plan', async () => {
    // Prepare
    const { store, writer, ports, options } = setup([aSpecItem()]);

    // Act
    const summary = await runPass(ports, { ...options, dryRun: true });

    // Assess
    expect(summary.plan?.map((a) => a.type)).toEqual(['RegisterTaskDefinition', 'CreateService']);
    expect(summary.actions.map((a) => a.outcome)).toEqual(['planned', 'planned']);
    expect(writer.applied).toEqual([]);
    expect(store.writes).toEqual([]);
    expect(store.leaseCalls).toEqual([]);
    expect(summary.statuses['apps/web']).toBeDefined();
    expect(JSON.parse(JSON.stringify(summary))).toEqual(summary);
  });

  it('a create ECS rejects as invalid: Degraded, condition with ECS message, no applied hash', async () => {
    // Prepare
    const message = 'The specified capacity provider strategy cannot contain a capacity provider that is not associated with the cluster.';
    const writer = new FakeWriter((a) => (a.type === 'CreateService' ? { ok: false, errorClass: 'invalid', message } : undefined));
    const { store, metrics, ports, options } = setup([aSpecItem()], { writer });

    // Act
    const summary = await runPass(ports, options);

    // Assess
    const status = store.statuses['apps/web'];
    expect(summary.counts).toMatchObject({ actionsApplied: 1, actionsFailed: 1 });
    expect(status.phase).toBe('Degraded');
    expect(status.lastAppliedSpecHash).toBeUndefined();
    expect(status.lastAction).toMatchObject({ type: 'CreateService', error: `invalid: ${message}` });
    expect(status.conditions.find((c) => c.type === ACTION_REJECTED_CONDITION)).toMatchObject({
      status: 'True',
      reason: ECS_REJECTED_REASON,
      message: `CreateService: ${message}`,
    });
    expect(status.conditions.find((c) => c.type === 'Ready')?.status).toBe('False');
    expect(metrics.latest(METRIC.actionsFailed)).toBe(1);
  });

  it.each([
    { case: 'throttled register, dependent create skipped', errorClass: 'throttled' as const },
    { case: 'transient register, dependent create skipped', errorClass: 'transient' as const },
  ])('$case: left for the next pass, hash not claimed', async ({ errorClass }) => {
    // Prepare
    const writer = new FakeWriter((a) =>
      a.type === 'RegisterTaskDefinition'
        ? { ok: false, errorClass, message: 'Rate exceeded' }
        : a.type === 'CreateService'
          ? { ok: false, errorClass: 'skipped', message: 'register failed' }
          : undefined,
    );
    const { store, ports, options } = setup([aSpecItem()], { writer });

    // Act
    const summary = await runPass(ports, options);

    // Assess
    expect(summary.counts).toMatchObject({ actionsApplied: 0, actionsFailed: 1, actionsSkipped: 1 });
    const status = store.statuses['apps/web'];
    expect(status.lastAppliedSpecHash).toBeUndefined();
    expect(status.phase).not.toBe('Degraded');
    expect(status.lastAction?.error).toBe(`${errorClass}: Rate exceeded`);
  });

  it('stops starting actions when shouldContinue() turns false', async () => {
    const { writer, ports, options } = setup([aSpecItem({ service: 'a' }), aSpecItem({ service: 'b' })]);
    let left = 2;
    const summary = await runPass(ports, { ...options, shouldContinue: () => left-- > 0 });
    expect(writer.applied).toHaveLength(2);
    expect(summary.counts.actionsSkipped).toBe(summary.counts.actionsPlanned - 2);
    expect(summary.actions.filter((a) => a.outcome === 'skipped')).toHaveLength(2);
  });

  it('starts no action in the last seconds of its lease', async () => {
    // Prepare: each applied action takes 20 s of pass time; the lease lasts 60 s.
    let nowMs = NOW.getTime();
    const writer = new FakeWriter();
    const slow: EcsWriter = {
      apply: (actions, shouldContinue) =>
        writer.apply(actions, () => {
          const go = shouldContinue();
          if (go) nowMs += 20_000;
          return go;
        }),
    };
    const { ports, options } = setup([aSpecItem({ service: 'a' }), aSpecItem({ service: 'b' })]);

    // Act
    const summary = await runPass({ ...ports, writer: slow, clock: { now: () => new Date(nowMs) } }, { ...options, leaseTtlSeconds: 60 });

    // Assess: started at 0, 20 and 40 s; at 60 s the lease (minus 5 s) is over.
    expect(summary.counts).toMatchObject({ actionsPlanned: 4, actionsApplied: 3, actionsSkipped: 1 });
  });

  it('writes a status only when it changed', async () => {
    // Prepare: an invalid spec gets a status on the first pass; nothing changes after.
    const { store, ports, options } = setup([aSpecItem({ cpu: 3 })]);
    const first = await runPass(ports, options);
    store.writes = [];

    // Act
    const second = await runPass(ports, options);

    // Assess
    expect(first.counts.statusesWritten).toBe(1);
    expect(first.counts.invalid).toBe(1);
    expect(store.statuses['apps/web'].phase).toBe('Invalid');
    expect(second.counts.statusesWritten).toBe(0);
    expect(store.writes).toEqual([]);
  });

  it('an incomplete spec read is reported, and no heartbeat is emitted', async () => {
    const { store, metrics, ports, options } = setup([aSpecItem({ service: 'a' }), aSpecItem({ service: 'b' })]);
    store.failRead = true;
    const summary = await runPass(ports, options);
    expect(summary.outcome).toBe('completed');
    expect(summary.specsComplete).toBe(false);
    expect(summary.readsComplete).toBe(false);
    expect(summary.errors).toContain('specs: Scan page 2 failed');
    expect(metrics.latest(METRIC.passSucceeded)).toBeUndefined();
    expect(metrics.latest(METRIC.passDuration)).toBe(0);
  });

  it('a failed status write is reported; the pass completes', async () => {
    const { store, ports, options } = setup([aSpecItem()]);
    store.failWrite = true;
    const summary = await runPass(ports, options);
    expect(summary.outcome).toBe('completed');
    expect(summary.errors.some((e) => e.startsWith('status apps/web: DynamoDB is down'))).toBe(true);
    expect(summary.counts.statusesWritten).toBe(0);
  });

  it('observes the clusters of specs and configured clusters, naming spec services', async () => {
    const { reader, ports, options } = setup([aSpecItem({ service: 'b' }), aSpecItem({ service: 'a' }), aSpecItem({ cluster: 'jobs', service: 'x', cpu: 3 })]);
    await runPass(ports, { ...options, plan: { ...options.plan, managedClusters: ['extra'] } });
    expect(reader.observed).toEqual(['apps:a,b', 'extra:', 'jobs:x']);
  });

  it('lets a programming error escape, and still releases the lease', async () => {
    const { store, ports, options } = setup([aSpecItem()]);
    const broken: EcsWriter = {
      apply: async () => {
        throw new TypeError('cannot read properties of undefined');
      },
    };
    await expect(runPass({ ...ports, writer: broken }, options)).rejects.toThrow(TypeError);
    expect(store.leaseCalls).toEqual(['acquire pass-1 60', 'release pass-1']);
  });
});

describe('foldResults', () => {
  const base: ServiceStatus = {
    phase: 'Progressing',
    conditions: [],
    desiredCount: 2,
    runningCount: 0,
    pendingCount: 0,
    lagBeyondGrace: false,
    observedAt: NOW.toISOString(),
  };

  it('property: a failed or skipped create/rollout never leaves the planned hash claimed; a success keeps it', () => {
    fc.assert(
      fc.property(
        fc.option(fc.stringMatching(/^[0-9a-f]{16}$/), { nil: undefined }),
        fc.stringMatching(/^[0-9a-f]{16}$/),
        fc.constantFrom('RegisterTaskDefinition', 'CreateService', 'UpdateService', 'TagResource'),
        fc.option(fc.constantFrom('throttled', 'transient', 'invalid', 'not-found', 'skipped'), { nil: undefined }),
        (rememberedHash, plannedHash, type, failure) => {
          // Prepare
          const remembered = { 'apps/web': { ...base, ...(rememberedHash ? { lastAppliedSpecHash: rememberedHash } : {}) } };
          const earlier = { type: 'UpdateService' as const, at: '2025-03-01T11:00:00.000Z', summary: 'UpdateService: earlier' };
          const planned = { 'apps/web': { ...base, lastAppliedSpecHash: plannedHash, appliedDeploymentId: 'new', lastAction: earlier } };
          const action = { type, cluster: 'apps', service: 'web', reason: 'r', specHash: plannedHash, changes: [] } as unknown as Action;
          const result: ActionResult = failure ? { ok: false, action, errorClass: failure, message: 'm' } : { ok: true, action };

          // Act
          const folded = foldResults(planned, [result], remembered, NOW)['apps/web'];

          // Assess
          expect(folded.lastAppliedSpecHash).toBe(failure ? rememberedHash : plannedHash);
          if (failure === 'skipped') {
            // Not started is not an action: the remembered lastAction stays, the status does not change.
            expect(folded.lastAction).toEqual(earlier);
          } else {
            expect(folded.lastAction).toMatchObject({ type, at: NOW.toISOString() });
            expect(folded.lastAction?.error !== undefined).toBe(failure !== undefined);
          }
          expect(folded.phase).toBe(failure === 'invalid' ? 'Degraded' : 'Progressing');
        },
      ),
    );
  });

  it('sums up an UpdateService by its field changes, else by its reason', () => {
    // Prepare
    const planned = { 'apps/web': base, 'apps/api': base };
    const update = (service: string, changes: { field: string; from: string; to: string }[]) =>
      ({ type: 'UpdateService', cluster: 'apps', service, reason: 'correct drift', kind: 'drift', input: {}, changes }) as unknown as Action;
    const results: ActionResult[] = [
      { ok: true, action: update('web', [{ field: 'desiredCount', from: '5', to: '2' }, { field: 'image', from: 'a:1', to: 'a:2' }]) },
      { ok: true, action: update('api', []) },
    ];

    // Act
    const folded = foldResults(planned, results, {}, NOW);

    // Assess
    expect(folded['apps/web'].lastAction?.summary).toBe('UpdateService: desiredCount 5 -> 2, image a:1 -> a:2');
    expect(folded['apps/api'].lastAction?.summary).toBe('UpdateService: correct drift');
  });
});

describe('the pass through the real Powertools Logger (what CloudWatch Logs gets)', () => {
  it("each action's line and an invalid spec's line name the ECS service (Powertools drops a `service` key)", async () => {
    // Prepare: the lines Powertools writes to stdout (info) and stderr (warn, error), parsed.
    const { ports, options } = setup([aSpecItem(), aSpecItem({ service: 'broken', desiredCount: -1 })]);
    const written: string[] = [];
    const capture = (chunk: string | Uint8Array): boolean => {
      written.push(String(chunk));
      return true;
    };
    const spies = [vi.spyOn(process.stdout, 'write').mockImplementation(capture), vi.spyOn(process.stderr, 'write').mockImplementation(capture)];
    try {
      // Act
      await runPass({ ...ports, log: new PowertoolsLog(new Logger({ serviceName: 'ecs-reconciler', logLevel: 'INFO' })) }, options);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }

    // Assess
    const lines = written.join('').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const applied = lines.filter((l) => String(l.message).endsWith(' applied'));
    expect(applied.map((l) => [l.action, l.cluster, l.serviceName, l.service])).toEqual([
      ['RegisterTaskDefinition', 'apps', 'web', 'ecs-reconciler'],
      ['CreateService', 'apps', 'web', 'ecs-reconciler'],
    ]);
    const invalid = lines.find((l) => String(l.message).startsWith('spec item invalid'));
    expect(invalid?.serviceName).toBe('apps/broken');
  });
});

/**
 * Which services count in `TaskLag` and `ServicesLaggingBeyondGrace` (over in-memory ports): only
 * services the reconciler owns, adopts or is creating. A person's service that a spec names
 * without `adopt` (Blocked / NotOwned) is not ours: its lag must not page anyone through our alarm,
 * nor cost a metric series.
 */
import { describe, expect, it } from 'vitest';
import { runPass } from '../../lambda/core/pass';
import { METRIC } from '../../lambda/core/metric-names';
import type { ObservedService, ServiceStatus, SpecParseResult } from '../../lambda/core/types';
import { aConvergedService, anInvalidSpec, aSpec, aStatus, at, NOW } from '../support/builders';
import { FakeEcs, ManualClock, MemorySpecStore, memoryPorts, passOptions } from './support';

const KEY = { cluster: 'apps', service: 'web' };
const DESIRED = 3;

/** The service `apps/web` with 0 of 3 tasks running; owned by the default owner unless `owned` is false. */
function aLaggingService(owned: boolean): { service: ObservedService; ecs: FakeEcs } {
  const { service, taskDefinitions } = aConvergedService(aSpec({ desiredCount: DESIRED }).spec, { runningCount: 0 });
  const ecs = new FakeEcs().putService('apps', owned ? service : { ...service, tags: { team: 'payments' } });
  for (const td of Object.values(taskDefinitions)) ecs.putTaskDefinition(td);
  return { service, ecs };
}

/** Remembered: lagging for an hour, beyond any grace. */
const LAGGING: ServiceStatus = aStatus({
  phase: 'Degraded',
  desiredCount: DESIRED,
  runningCount: 0,
  laggingSince: at(-3600).toISOString(),
  lagBeyondGrace: true,
});

describe('lag metrics count only the services the reconciler is responsible for', () => {
  it.each<{ case: string; live: 'owned' | 'unowned' | 'none'; spec: SpecParseResult; phase: string; lag: number | undefined }>([
    { case: 'owned service, valid spec', live: 'owned', spec: aSpec({ desiredCount: DESIRED }), phase: 'Degraded', lag: DESIRED },
    { case: 'service being created', live: 'none', spec: aSpec({ desiredCount: DESIRED }), phase: 'Progressing', lag: DESIRED },
    { case: 'unowned service adopted by its spec', live: 'unowned', spec: aSpec({ desiredCount: DESIRED, adopt: true }), phase: 'Progressing', lag: DESIRED },
    { case: 'owned service, invalid spec', live: 'owned', spec: anInvalidSpec(KEY), phase: 'Invalid', lag: DESIRED },
    { case: 'unowned service named by a spec (NotOwned)', live: 'unowned', spec: aSpec({ desiredCount: DESIRED }), phase: 'Blocked', lag: undefined },
    { case: 'unowned service, invalid spec', live: 'unowned', spec: anInvalidSpec(KEY), phase: 'Invalid', lag: undefined },
  ])('$case', async ({ live, spec, phase, lag }) => {
    // Prepare
    const ecs = live === 'none' ? new FakeEcs().addCluster('apps') : aLaggingService(live === 'owned').ecs;
    const clock = new ManualClock(NOW.getTime());
    const store = new MemorySpecStore([spec], clock);
    store.statuses['apps/web'] = LAGGING;
    const ports = memoryPorts(store, ecs, clock);

    // Act
    const s = await runPass(ports, passOptions({ dryRun: true }));

    // Assess
    expect(s.statuses['apps/web'].phase).toBe(phase);
    expect(s.statuses['apps/web'].lagBeyondGrace).toBe(true);
    expect(ports.metrics.latest(METRIC.taskLag, KEY)).toBe(lag);
    const counted = lag === undefined ? 0 : 1;
    expect(ports.metrics.latest(METRIC.servicesLaggingBeyondGrace)).toBe(counted);
    expect(s.counts.servicesLaggingBeyondGrace).toBe(counted);
  });
});

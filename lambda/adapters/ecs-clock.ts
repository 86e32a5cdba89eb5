/**
 * ECS's clock as the reconciler sees it: every ECS response carries an HTTP `Date` header, ECS's
 * own time (RFC 9110 §6.6.1), and the offset between that and the reconciler's clock is what
 * lets the core read ECS's timestamps (a deployment's `createdAt`, a task's `stoppedAt`) in the
 * reconciler's time, so that a reconciler clock minutes off neither starts nor hides a lag
 *.
 */
import type { ECSClient } from '@aws-sdk/client-ecs';
import type { Clock } from '../core/ports';

/**
 * Offsets below this are taken as none (ms): the `Date` header has a resolution of one second,
 * and a request's latency adds to it.
 */
export const ECS_CLOCK_DEAD_BAND_MS = 5_000;

type Listener = (serverMs: number) => void;
const listeners = new WeakMap<ECSClient, Set<Listener>>();

/** Records ECS's clock from the responses of one client, against one reconciler clock. */
export class EcsClockRecorder {
  private offset: number | undefined;

  constructor(ecs: ECSClient, private readonly clock: Clock) {
    let set = listeners.get(ecs);
    if (!set) {
      const added = new Set<Listener>();
      set = added;
      listeners.set(ecs, added);
      ecs.middlewareStack.add(
        (next) => async (args) => {
          const out = await next(args);
          const date = (out.response as { headers?: Record<string, string | undefined> } | undefined)?.headers?.date;
          const serverMs = date ? Date.parse(date) : NaN;
          if (Number.isFinite(serverMs)) for (const l of added) l(serverMs);
          return out;
        },
        { step: 'deserialize', name: 'ecsrServerClock', override: true },
      );
    }
    set.add((serverMs) => {
      this.offset = serverMs - this.clock.now().getTime();
    });
  }

  /**
   * ECS's clock minus the reconciler's, in ms, from the latest ECS response; 0 within
   * {@link ECS_CLOCK_DEAD_BAND_MS}; undefined before any response with a `Date` header.
   */
  offsetMs(): number | undefined {
    if (this.offset === undefined) return undefined;
    return Math.abs(this.offset) < ECS_CLOCK_DEAD_BAND_MS ? 0 : this.offset;
  }
}

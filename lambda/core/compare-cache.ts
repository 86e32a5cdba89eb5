/**
 * What the planner may keep between passes of one container, owned by whoever builds the pass
 * (`lambda/adapters/runtime.ts` makes one per runtime) and handed in (`PlanInput.cache`), never a
 * module's: the digest of each live service, stamped by the ECS observer as it maps the service,
 * and the canonical digest of each described task definition. Both are keyed weakly by the
 * object they describe, which is never changed once observed (docs/DECISIONS.md), so an entry
 * lives exactly as long as the observation or the description that holds it.
 *
 * Without a cache the planner computes the same digests again (a walk and a hash per service):
 * a lookup only saves work, never changes a plan. What a judgement depended on is recorded in
 * the status itself (`ServiceStatus.judged`), so that a new container skips the same comparisons.
 */
import { createHash } from 'node:crypto';
import { serviceDigest } from './observed-print';
import type { ReconcilerDefaults } from './options';
import { eventReason } from './status';
import { CANONICAL_FORM_VERSION, canonicalTaskDefinitionHash } from './taskdef';
import type { ObservedService, TaskDefinition } from './types';
import { SERVICE_FIELD_NAMES } from './vocab/service';

/**
 * The form of a steady judgement: raise it when the comparison would find otherwise for the same
 * spec, rendering options and live values, so that a judgement an older reconciler recorded is
 * made again rather than taken. (A field added to the vocabulary changes the rendering key by
 * itself.)
 */
export const JUDGEMENT_FORM = 1;

/** Digest of no task definition: `canonicalTaskDefinitionHash` could not hash it. */
export const NO_DIGEST = '';

/** What the observer stamps on a live service: its digest, and its newest event that explains something. */
interface Stamp {
  readonly digest: string | undefined;
  readonly eventReason: string | undefined;
}

/** The in-process digests of one runtime (see the module doc). */
export class CompareCache {
  private readonly stamps = new WeakMap<ObservedService, Stamp>();
  private readonly taskDefinitionDigests = new WeakMap<TaskDefinition, string>();
  private computed = 0;
  private taken = 0;

  /**
   * Stamps a live service with its digest ({@link serviceDigest}) and its event reason
   * (`eventReason` of `./status`), made once by the observer while the values are at hand. A
   * copy of a service (`{ ...svc, serviceDeployments }`) has no stamp and is walked again.
   * @returns whether `svc` was stamped now (false when it already was).
   */
  stamp(svc: ObservedService): boolean {
    if (this.stamps.has(svc)) return false;
    this.stamps.set(svc, { digest: serviceDigest(svc), eventReason: eventReason(svc) });
    return true;
  }

  /** Whether `svc` carries a stamp (tests, the bench). */
  stamped(svc: ObservedService): boolean {
    return this.stamps.has(svc);
  }

  /** The digest of `svc`: its stamp's, else walked now (and not kept: `svc` may be a test's to change). */
  serviceDigestOf(svc: ObservedService): string | undefined {
    const s = this.stamps.get(svc);
    return s !== undefined ? s.digest : serviceDigest(svc);
  }

  /** `eventReason(svc)`: found when the service was stamped, else computed now. */
  eventReasonOf(svc: ObservedService): string | undefined {
    const s = this.stamps.get(svc);
    return s !== undefined ? s.eventReason : eventReason(svc);
  }

  /** The canonical digest of a described (live) task definition, computed once per description object; '' when it has none. */
  taskDefinitionDigest(td: TaskDefinition): string {
    let d = this.taskDefinitionDigests.get(td);
    if (d === undefined) {
      d = this.digestOf(td);
      this.taskDefinitionDigests.set(td, d);
    }
    return d;
  }

  /** Counts a steady judgement the planner took from a status instead of comparing (tests, the bench). */
  tookJudgement(): void {
    this.taken += 1;
  }

  /** Steady judgements taken so far ({@link tookJudgement}). */
  judgementsTaken(): number {
    return this.taken;
  }

  /** Canonical task definition digests computed so far (cache misses), for tests and the bench. */
  digestsComputed(): number {
    return this.computed;
  }

  private digestOf(td: TaskDefinition): string {
    this.computed += 1;
    return taskDefinitionDigest(td);
  }
}

/** The canonical digest of a task definition (`canonicalTaskDefinitionHash`); '' when it has none. */
export function taskDefinitionDigest(td: TaskDefinition): string {
  return canonicalTaskDefinitionHash(td) ?? NO_DIGEST;
}

/**
 * A text that tells apart what a judgement depends on besides the spec and the live values: the
 * reconciler's defaults and owner id, the judgement's form ({@link JUDGEMENT_FORM}), the canonical
 * task definition form and the declared service fields. 16 base64url characters of a SHA-256,
 * made once per plan.
 */
export function renderingKey(options: { defaults: ReconcilerDefaults; ownerId: string }): string {
  const text = JSON.stringify([options.ownerId, options.defaults, JUDGEMENT_FORM, CANONICAL_FORM_VERSION, SERVICE_FIELD_NAMES]);
  return createHash('sha256').update(text).digest('base64url').slice(0, 16);
}

/** The digests of a plan: the runtime's cache, or computed afresh when the caller has none. */
export interface Digests {
  serviceDigestOf(svc: ObservedService): string | undefined;
  eventReasonOf(svc: ObservedService): string | undefined;
  taskDefinitionDigest(td: TaskDefinition): string;
  tookJudgement(): void;
}

/** Digests without a cache: every one computed when asked. */
export const UNCACHED: Digests = Object.freeze({
  serviceDigestOf: serviceDigest,
  eventReasonOf: eventReason,
  taskDefinitionDigest,
  tookJudgement: () => undefined,
});

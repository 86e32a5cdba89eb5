/**
 * Hash-first comparison (issue 12 part 5): canonical digests remembered across passes, so that a
 * service whose spec hash and live task definition did not change since its last comparison is
 * compared by two lookups and one string comparison, without rendering or canonicalizing anything.
 *
 * The planner stays a pure function: an entry is what the digest of the same input always is, so a
 * lookup can only save work, never change a plan. Both memos are bounded (least recently used
 * entries go first), so a long-lived container's memory does not grow with every revision it saw.
 */
import { createHash } from 'node:crypto';
import type { ReconcilerDefaults } from './options';
import type { DesiredServiceConfig } from './plan-service';
import { canonicalTaskDefinitionHash } from './taskdef';
import type { TaskDefinition } from './types';

/** A `Map` that keeps at most `max` entries, dropping the least recently used. */
export class BoundedMemo<V> {
  private readonly entries = new Map<string, V>();

  /** @param max entries kept at most (at least 1). */
  constructor(readonly max: number) {}

  get size(): number {
    return this.entries.size;
  }

  /** The value under `key` (then the most recently used), or undefined. */
  get(key: string): V | undefined {
    const v = this.entries.get(key);
    if (v !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, v);
    }
    return v;
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    while (this.entries.size > Math.max(1, this.max)) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
  }

  clear(): void {
    this.entries.clear();
  }
}

/**
 * Rendered task definitions remembered, by spec hash and rendering options: twice the largest
 * fleet the reconciler is sized for (20,000 services), so that a fleet's old and new spec hashes
 * both fit during a wide spec edit. About 150 bytes an entry.
 */
export const RENDERED_DIGESTS_MAX = 40_000;

/** Digest of no task definition: `canonicalTaskDefinitionHash` could not hash it. */
const NO_DIGEST = '';

const renderedDigests = new BoundedMemo<string>(RENDERED_DIGESTS_MAX);

/**
 * Digests of live task definitions, by the described object itself. A revision is immutable and
 * the reader keeps one object per ARN for the life of the container, so the object stands for
 * its ARN; unlike a key by ARN, an object the memo never saw (a test's reused ARN, a description
 * read again) is always hashed afresh. Weak: it lives exactly as long as the reader keeps the
 * description.
 */
const liveDigests = new WeakMap<TaskDefinition, string>();

let hashesComputed = 0;

/** Canonical digests computed so far (cache misses), for tests and the bench. */
export function digestsComputed(): number {
  return hashesComputed;
}

function digestOf(td: TaskDefinition): string {
  hashesComputed += 1;
  return canonicalTaskDefinitionHash(td) ?? NO_DIGEST;
}

/** The canonical digest of a described (live) task definition; '' when it has none. */
export function liveTaskDefinitionDigest(td: TaskDefinition): string {
  let d = liveDigests.get(td);
  if (d === undefined) {
    d = digestOf(td);
    liveDigests.set(td, d);
  }
  return d;
}

/**
 * A text that tells apart the rendering options a rendered task definition depends on besides the
 * spec (the reconciler's defaults and owner id), to key {@link renderedTaskDefinitionDigest}.
 */
export function renderingKey(options: { defaults: ReconcilerDefaults; ownerId: string }): string {
  return createHash('sha256').update(JSON.stringify([options.ownerId, options.defaults])).digest('base64url').slice(0, 16);
}

/**
 * The canonical digest of the task definition rendered for the spec of `specHash` under the
 * rendering options of `renderKey` ({@link renderingKey}); `render` is called only when the memo
 * does not have it. '' when it has none.
 */
export function renderedTaskDefinitionDigest(specHash: string, renderKey: string, render: () => TaskDefinition): string {
  const key = `${specHash}\n${renderKey}`;
  let d = renderedDigests.get(key);
  if (d === undefined) {
    d = digestOf(render());
    renderedDigests.set(key, d);
  }
  return d;
}

/**
 * True when the rendered and the live task definition are known equal by their digests: both
 * have one and they are the same. False means "compare in full" (a difference, or no digest).
 */
export function sameByDigest(specHash: string, renderKey: string, render: () => TaskDefinition, live: TaskDefinition): boolean {
  const want = renderedTaskDefinitionDigest(specHash, renderKey, render);
  return want !== NO_DIGEST && want === liveTaskDefinitionDigest(live);
}

const desiredConfigs = new BoundedMemo<DesiredServiceConfig>(RENDERED_DIGESTS_MAX);

/**
 * The desired service configuration of the spec of `specHash` under the rendering options of
 * `renderKey`, built by `build` only when not remembered. The object is shared between passes
 * (and its canonical field values with it, `./plan-service`): callers never change it.
 */
export function desiredConfigOf(specHash: string, renderKey: string, build: () => DesiredServiceConfig): DesiredServiceConfig {
  const key = `${specHash}\n${renderKey}`;
  let c = desiredConfigs.get(key);
  if (c === undefined) {
    c = build();
    desiredConfigs.set(key, c);
  }
  return c;
}

/** Forgets every rendered digest and desired configuration (tests; live digests go with their descriptions). */
export function clearCompareMemo(): void {
  renderedDigests.clear();
  desiredConfigs.clear();
}

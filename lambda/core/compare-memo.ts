/**
 * Hash-first comparison: canonical digests remembered across passes, so that a
 * service whose spec hash and live task definition did not change since its last comparison is
 * compared by two lookups and one string comparison, without rendering or canonicalizing anything.
 * Beyond the task definition, the whole comparison of a steady service is remembered
 * ({@link steadyComparisonOf}): with the same spec hash, rendering options, live revision and live
 * service print (`./observed-print`), the planner takes what the last comparison found (no action,
 * the status's phase, conditions and memory fields) and only assembles the status with this
 * pass's remembered status.
 *
 * The planner stays a pure function: an entry is what the comparison of the same input always
 * gives, so a lookup can only save work, never change a plan. Every memo is bounded (least
 * recently used entries go first), so a long-lived container's memory does not grow with every
 * revision or service it saw.
 */
import { createHash } from 'node:crypto';
import type { ReconcilerDefaults } from './options';
import type { DesiredServiceConfig } from './plan-service';
import { canonicalTaskDefinitionHash } from './taskdef';
import { type LivePrint, livePrintOf, sameLivePrint } from './observed-print';
import type { ObservedService, TaskDefinition } from './types';

/**
 * A `Map` that keeps at most `max` entries, dropping one not used lately: the oldest entry not
 * read since it was last given a second chance (the CLOCK approximation of least recently used).
 * A read only marks its entry, so a read costs one lookup and never reorders the map.
 */
export class BoundedMemo<V> {
  private readonly entries = new Map<string, { value: V; used: boolean }>();

  /** @param max entries kept at most (at least 1). */
  constructor(readonly max: number) {}

  get size(): number {
    return this.entries.size;
  }

  /** The value under `key` (then marked used), or undefined. */
  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    e.used = true;
    return e.value;
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, { value, used: false });
    const max = Math.max(1, this.max);
    // Each used entry met at the old end gets a second chance (moved to the new end, unmarked),
    // so this loop ends after at most `size` moves.
    while (this.entries.size > max) {
      const oldest = this.entries.entries().next();
      if (oldest.done) break;
      const [k, e] = oldest.value;
      this.entries.delete(k);
      if (e.used && k !== key) {
        e.used = false;
        this.entries.set(k, e);
      }
    }
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  /** Deletes every entry whose value `drop` accepts; returns how many went. */
  deleteWhere(drop: (value: V) => boolean): number {
    let n = 0;
    for (const [k, e] of this.entries) {
      if (drop(e.value)) {
        this.entries.delete(k);
        n += 1;
      }
    }
    return n;
  }

  clear(): void {
    this.entries.clear();
  }
}

/**
 * Specs remembered, by spec hash and rendering options: twice the largest fleet the reconciler is
 * sized for (20,000 services), so that a fleet's old and new spec hashes both fit during a wide
 * spec edit. An entry holds the rendered task definition's digest (about 150 bytes) and the
 * desired service configuration (about 2 KB), each filled on first use.
 */
export const RENDERED_DIGESTS_MAX = 40_000;

/** Rendering options (`renderingKey`) remembered at most: one in practice, more only in tests. */
const RENDER_KEYS_MAX = 4;

/** Digest of no task definition: `canonicalTaskDefinitionHash` could not hash it. */
const NO_DIGEST = '';

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
  if (!memoEnabled) return digestOf(td);
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

/** What is remembered of one spec under one set of rendering options. */
interface SpecEntry {
  digest?: string;
  desired?: DesiredServiceConfig;
}

/** Per rendering key, the entries by spec hash: one lookup by a string the spec already holds. */
const specEntries = new Map<string, BoundedMemo<SpecEntry>>();

/** When false, nothing is remembered: every digest and configuration is computed afresh (the slow path). */
let memoEnabled = true;

/**
 * Turns the memo on or off (default on). Off, the planner computes every digest and desired
 * configuration again on every call: the reference the equivalence tests compare the fast path with.
 */
export function setCompareMemoEnabled(on: boolean): void {
  memoEnabled = on;
}

/**
 * The entry asked last: the planner asks for the digest and then for the configuration of one
 * spec in a row, so the second lookup is one comparison. Cleared with the memo.
 */
let lastEntry: { specHash: string; renderKey: string; entry: SpecEntry } | undefined;

function specEntry(specHash: string, renderKey: string): SpecEntry {
  if (!memoEnabled) return {};
  if (lastEntry !== undefined && lastEntry.specHash === specHash && lastEntry.renderKey === renderKey) return lastEntry.entry;
  const entry = specEntryOf(specHash, renderKey);
  if (lastEntry === undefined) lastEntry = { specHash, renderKey, entry };
  else {
    lastEntry.specHash = specHash;
    lastEntry.renderKey = renderKey;
    lastEntry.entry = entry;
  }
  return entry;
}

function specEntryOf(specHash: string, renderKey: string): SpecEntry {
  let memo = specEntries.get(renderKey);
  if (memo === undefined) {
    while (specEntries.size >= RENDER_KEYS_MAX) specEntries.delete(specEntries.keys().next().value as string);
    memo = new BoundedMemo<SpecEntry>(RENDERED_DIGESTS_MAX);
    specEntries.set(renderKey, memo);
  }
  let e = memo.get(specHash);
  if (e === undefined) {
    e = {};
    memo.set(specHash, e);
  }
  return e;
}

/**
 * The canonical digest of the task definition rendered for the spec of `specHash` under the
 * rendering options of `renderKey` ({@link renderingKey}); `render` is called only when the memo
 * does not have it. '' when it has none.
 */
export function renderedTaskDefinitionDigest(specHash: string, renderKey: string, render: () => TaskDefinition): string {
  const e = specEntry(specHash, renderKey);
  return (e.digest ??= digestOf(render()));
}

/**
 * True when the rendered and the live task definition are known equal by their digests: both
 * have one and they are the same. False means "compare in full" (a difference, or no digest).
 */
export function sameByDigest(specHash: string, renderKey: string, render: () => TaskDefinition, live: TaskDefinition): boolean {
  const want = renderedTaskDefinitionDigest(specHash, renderKey, render);
  return want !== NO_DIGEST && want === liveTaskDefinitionDigest(live);
}

/**
 * The desired service configuration of the spec of `specHash` under the rendering options of
 * `renderKey`, built by `build(arg)` only when not remembered (a builder and its argument rather
 * than a closure: the planner asks for every service every pass). The object is shared between
 * passes (and its canonical field values with it, `./plan-service`): callers never change it.
 */
export function desiredConfigOf<A>(specHash: string, renderKey: string, build: (arg: A) => DesiredServiceConfig, arg: A): DesiredServiceConfig {
  const e = specEntry(specHash, renderKey);
  return (e.desired ??= build(arg));
}

/**
 * What the comparison of a steady service found (`reconcileExisting` in `./reconcile/existing.ts`: nothing to register,
 * update or tag, no failed rollout, no lag), with everything it depended on besides the
 * remembered status: the spec hash, the rendering options, the live task definition (one object
 * per revision for the life of the container, as for {@link liveTaskDefinitionDigest}) and the
 * print of the live service (`./observed-print`). The planner gives it back only when all of these
 * are the same again; the status is then assembled from it and the remembered status as the full
 * comparison would (the remembered status is never part of what is kept).
 */
export interface SteadyComparison<T> {
  readonly specHash: string;
  readonly renderKey: string;
  readonly liveTaskDefinition: TaskDefinition;
  /** The live service's print: its stamp when the observer stamped it, else its walked values (`LivePrint`). */
  readonly print: LivePrint;
  /** The planner's result of that comparison (its phase, conditions, memory fields). */
  readonly found: T;
  /** Clock milliseconds (the plan's `now`) of the last plan that remembered or took this entry. */
  usedAtMs: number;
}

/** When false, no steady comparison is remembered or given back (the other memos stay as they are). */
let steadyEnabled = true;

/**
 * Turns the steady comparison memo alone on or off (default on), the digest and configuration
 * memos staying as they are: what it saves is measured against this (tests, the bench).
 */
export function setSteadyMemoEnabled(on: boolean): void {
  steadyEnabled = on;
}

/** Steady comparisons remembered, by service id: as many as spec entries ({@link RENDERED_DIGESTS_MAX}). */
const steadyComparisons = new BoundedMemo<SteadyComparison<unknown>>(RENDERED_DIGESTS_MAX);

/**
 * The steady comparison remembered for service `id` when it was made for the same spec hash,
 * rendering options, live task definition object and live service print; else undefined (also
 * when the memo is off).
 */
export function steadyComparisonOf<T>(
  id: string,
  specHash: string,
  renderKey: string,
  liveTaskDefinition: TaskDefinition,
  live: ObservedService,
  nowMs: number,
): SteadyComparison<T> | undefined {
  if (!memoEnabled || !steadyEnabled) return undefined;
  const e = steadyComparisons.get(id);
  if (e === undefined || e.specHash !== specHash || e.renderKey !== renderKey || e.liveTaskDefinition !== liveTaskDefinition) return undefined;
  if (!sameLivePrint(live, e.print)) return undefined;
  steadyReused += 1;
  e.usedAtMs = nowMs;
  return e as SteadyComparison<T>;
}

/**
 * Milliseconds (of the plans' clock) after which a steady comparison nobody took is dropped: 30
 * minutes, three times the default `RESYNC_MINUTES`, so a service every rotation re-reads keeps its
 * entry while a deleted or renamed service's entry (and the task definition description it holds)
 * goes within the hour instead of waiting for the bound. A dropped entry only costs one full
 * comparison. Not swept by the specs of one pass: in fan-out mode one container plans several
 * targets, and one target's specs would drop the others' entries.
 */
export const STEADY_IDLE_MS = 30 * 60_000;

/** Milliseconds between two sweeps of the steady comparisons (a sweep walks every entry). */
export const STEADY_SWEEP_EVERY_MS = 5 * 60_000;

let lastSweepMs: number | undefined;

/**
 * Drops the steady comparisons not taken or remembered in the last {@link STEADY_IDLE_MS}, at most
 * once every {@link STEADY_SWEEP_EVERY_MS} (the planner calls it at the start of every plan).
 * A clock that went back (tests, a virtual clock) starts the sweeps again from there.
 * @param nowMs the plan's clock in milliseconds.
 * @returns how many entries were dropped.
 */
export function sweepSteadyComparisons(nowMs: number): number {
  if (lastSweepMs !== undefined && nowMs >= lastSweepMs && nowMs - lastSweepMs < STEADY_SWEEP_EVERY_MS) return 0;
  lastSweepMs = nowMs;
  return steadyComparisons.deleteWhere((e) => nowMs - e.usedAtMs > STEADY_IDLE_MS);
}

let steadyReused = 0;

/** Steady comparisons given back so far (tests: a service compared again is not counted). */
export function steadyComparisonsReused(): number {
  return steadyReused;
}

/**
 * Remembers what the comparison of a steady service found (see {@link SteadyComparison}); nothing
 * when the memo is off or the live service holds a value its print cannot tell apart.
 * @param tagKeys the tag keys the comparison read (the owner tag and the spec's tags).
 */
export function rememberSteadyComparison<T>(
  id: string,
  specHash: string,
  renderKey: string,
  liveTaskDefinition: TaskDefinition,
  live: ObservedService,
  tagKeys: readonly string[],
  found: T,
  nowMs: number,
): void {
  if (!memoEnabled || !steadyEnabled) return;
  const print = livePrintOf(live, tagKeys);
  if (print === undefined) {
    steadyComparisons.delete(id);
    return;
  }
  steadyComparisons.set(id, { specHash, renderKey, liveTaskDefinition, print, found, usedAtMs: nowMs });
}

/** Steady comparisons remembered (tests). */
export function steadyComparisonsRemembered(): number {
  return steadyComparisons.size;
}

/** Forgets every rendered digest, desired configuration and steady comparison (tests; live digests go with their descriptions). */
export function clearCompareMemo(): void {
  specEntries.clear();
  steadyComparisons.clear();
  lastEntry = undefined;
  lastSweepMs = undefined;
}

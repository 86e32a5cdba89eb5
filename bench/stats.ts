/**
 * Small statistics and formatting helpers of the benchmarks. Percentiles use the nearest-rank
 * method on the sorted samples (no interpolation), so a reported value is always one that was
 * measured.
 */

/**
 * The p-th percentile (0 < p <= 100) of `samples` by nearest rank.
 * @throws RangeError for an empty sample or p outside (0, 100].
 */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) throw new RangeError('percentile of an empty sample');
  if (!(p > 0 && p <= 100)) throw new RangeError(`percentile must be in (0, 100], got ${p}`);
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** The median (50th percentile by nearest rank). */
export function median(samples: readonly number[]): number {
  return percentile(samples, 50);
}

/** Bytes -> MiB with one decimal, e.g. `87.3`. */
export function mib(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(1);
}

/** Milliseconds with a precision that suits the size: `0.042`, `3.21`, `45.6`, `1234`. */
export function ms(value: number): string {
  if (value < 1) return value.toFixed(3);
  if (value < 10) return value.toFixed(2);
  if (value < 100) return value.toFixed(1);
  return value.toFixed(0);
}

/** Seconds with one decimal (two below 10 s), e.g. `0.42`, `12.5`. */
export function seconds(value: number): string {
  return value < 10 ? value.toFixed(2) : value.toFixed(1);
}

/**
 * The function's memory by fleet size, and the V8 heap limit the construct gives it: at the largest
 * fleet of each row, a pass's peak RSS stays under 80% of the function's memory (at least 20% free
 * for a larger-than-measured spec, a burst of events or a newer runtime). No CDK import: the
 * benchmark runs its Lambda stand-in with the same flag (`bench/pass-bench.ts`).
 *
 * Measured by `npm run bench` (docs/benchmarks.md): the live heap of a pass is small (about 45 MiB
 * at 5,000 services), but a pass allocates several times that in short-lived objects, and V8 sizes
 * its heap from the machine's memory, not from the function's: left alone it lets garbage pile up
 * to 260 MiB of heap at 5,000 services before collecting. With `--max-old-space-size` at half the
 * function's memory, it collects in time and the rest (code, buffers, the young generation: about
 * 60-90 MiB) fits in the other half. Measured peaks (`npm run bench`, bench/RESULTS.md): 173 MiB at
 * 2,000 services (0.68x of 256), 236 MiB at 5,000 (0.61x of 384), 452 MiB at 20,000 (0.59x of
 * 768); 256 MiB at 5,000 peaked at 222 MiB (0.87x), too little headroom.
 */

/** Fleet sizes (services) and the memory (MiB) the function gets for them, smallest first. */
export const MEMORY_BY_FLEET: readonly { readonly upToServices: number; readonly memorySize: number }[] = [
  { upToServices: 2_000, memorySize: 256 },
  { upToServices: 5_000, memorySize: 384 },
  { upToServices: 20_000, memorySize: 768 },
  { upToServices: Number.POSITIVE_INFINITY, memorySize: 1536 },
];

/** The fleet size the construct sizes the function for when none is given (services). */
export const DEFAULT_FLEET_SIZE = 5_000;

/** Memory (MiB) of the function for a fleet of `services` ({@link MEMORY_BY_FLEET}). */
export function memoryForFleet(services: number): number {
  return (MEMORY_BY_FLEET.find((m) => services <= m.upToServices) ?? MEMORY_BY_FLEET[MEMORY_BY_FLEET.length - 1]).memorySize;
}

/** Share of the function's memory V8's old generation may use (`--max-old-space-size`). */
export const HEAP_SHARE = 0.5;

/** `--max-old-space-size` (MiB) for a function of `memorySize` MiB. */
export function heapLimitMiB(memorySize: number): number {
  return Math.floor(memorySize * HEAP_SHARE);
}

/** The node flag the construct adds to `NODE_OPTIONS` for a function of `memorySize` MiB. */
export function heapFlag(memorySize: number): string {
  return `--max-old-space-size=${heapLimitMiB(memorySize)}`;
}

/**
 * Bounded concurrency for the pass's calls and the adapters' batches.
 */

/**
 * Maps `items` with `fn`, at most `limit` calls in flight (at least one), results in input order.
 * @throws the first rejection of `fn`; calls already started run to their end.
 */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return out;
}

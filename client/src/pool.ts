// Async work on many items a few at a time, each result handed on in the items' order: the waits (a server's
// answer, Web Crypto's thread pool) overlap, and what is written out stays in order.

/**
 * Runs `work` on every item, at most `limit` at once, and calls `emit` with each result in the items' order (one
 * call at a time, even when `emit` is async). The first error thrown by `work` or `emit` stops the taking of new
 * items and is thrown once the work in flight has settled.
 */
export async function mapInOrder<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
  emit?: (result: R, index: number) => void | Promise<void>,
): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  const done: boolean[] = new Array<boolean>(items.length).fill(false);
  let next = 0;
  let emitted = 0;
  let failed = false;
  let emitting: Promise<void> = Promise.resolve();
  const drain = (): Promise<void> => {
    while (emitted < items.length && done[emitted]) {
      const k = emitted++;
      emitting = emitting.then(() => emit?.(results[k]!, k));
    }
    return emitting;
  };
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        results[i] = await work(items[i]!, i);
        done[i] = true;
        await drain();
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  const settled = await Promise.allSettled(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  const rejected = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (rejected !== undefined) throw rejected.reason;
  await emitting;
  return results;
}

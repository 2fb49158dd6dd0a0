// Work over many items with a bounded number under way: the publication's creates and pulls
// (pipeline/storage/publish.ts) and the parts of an S3 multipart upload (pipeline/storage/s3.ts).

/** Runs `work` on every item, `concurrency` at a time. After the first failure no item is started, and every
 * one under way ends before that failure is thrown: nothing goes on behind the caller's back. */
export async function inParallel<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      try {
        await work(items[next++]!);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  const ended = await Promise.allSettled(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  const failure = ended.find((e): e is PromiseRejectedResult => e.status === 'rejected');
  if (failure !== undefined) throw failure.reason;
}

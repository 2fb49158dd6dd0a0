// Engine-neutral disk faults: what the callers of the store (ingest/) classify. An engine's own failures leave
// the store already as StorageUnavailableError (each engine's errors.ts makes them so), and the server's own
// file writes (caches, the outbox) fail with Node's codes; this module knows both and no engine's codes.
import { StorageUnavailableError, type StorageKind } from './store.ts';

export type StorageFault = StorageKind;

/**
 * StorageUnavailableError's `kind` (the engine's classification: 'full', 'io' or 'unreachable'); for the
 * server's own file calls 'full' on ENOSPC or EDQUOT and 'io' on EIO from a write or sync; else undefined (a
 * failed read of a file is not the storage refusing writes).
 */
export function storageFault(err: unknown): StorageFault | undefined {
  if (err instanceof StorageUnavailableError) return err.kind;
  const code = (err as { code?: unknown } | null | undefined)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT') return 'full';
  const syscall = (err as { syscall?: unknown } | null | undefined)?.syscall;
  if (code === 'EIO' && (syscall === 'write' || syscall === 'fsync' || syscall === 'fdatasync')) return 'io';
  return undefined;
}

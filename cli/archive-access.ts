// The ArchiveAccess that the web service declares (ingest/services.ts), made from the archive writer's own
// readers in pipeline/: the one place where ingest/ meets pipeline/ (docs/ARCHITECTURE.md). Used by `timeseal serve`
// and by the tests that build the app.
import type { ArchiveAccess } from '../ingest/services.ts';
import { readState } from '../pipeline/archive-state.ts';
import { buildProof, findHash } from '../pipeline/proof.ts';
import { indexJsonFromSegments, readIndexHead } from '../pipeline/segment-files.ts';

/** The archive folder `archive` of the log `origin`, read on every call. */
export function archiveAccess(archive: string, origin: string): ArchiveAccess {
  return {
    days: () => readState(archive, origin).days,
    find: (hash) => findHash(archive, origin, hash),
    proof: (hash, keys) => buildProof(archive, origin, hash, keys),
    indexHead: () => readIndexHead(archive),
    indexJson: (head) => indexJsonFromSegments(archive, head),
  };
}

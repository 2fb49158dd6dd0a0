// Shapes of the status answers (docs/API.md "Status") and the 30-second refresh constant.
import { OTS_STATUS_PATH } from '../../../core/archive-paths.ts';
import { getJson } from './api.ts';
import { archiveUrl } from './archive-url.ts';

export const REFRESH_MS = 30_000;
export const PULSE_MS = 1000;

export interface QueueStats {
  status: string;
  lastUpdate: string;
  latestAnchoredDay: string;
  queueSize: number;
  /** Beyond the spec: false while the server refuses submissions (its clock is not after the last published
   * ledger); `problem` then says why. Absent from older servers. */
  submissionsOpen?: boolean;
  problem?: string;
  /** Beyond the spec: the date of the last published ledger, '' before the first. Absent from older servers. */
  lastPublishedDay?: string;
}

export interface OtsStatusFile {
  latest_ots_ok: string;
  last_update: string;
  queue_size: number;
}

export const fetchQueueStats = (): Promise<QueueStats> => getJson<QueueStats>('/api/queue-stats.php');

/** The archive's ots_status.json, or null when the archive has none yet. */
export async function fetchOtsStatus(): Promise<OtsStatusFile | null> {
  const res = await fetch(archiveUrl(OTS_STATUS_PATH), { credentials: 'include' });
  if (res.status === 404) return null;
  if (!res.ok) throw new Error(`${res.status}: ${res.statusText}`);
  return (await res.json()) as OtsStatusFile;
}

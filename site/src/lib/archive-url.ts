// Where the site reads an archive file: the archive's root as served (docs/API.md, "Static files") joined to a
// file's name from core/archive-paths.ts. Every URL of an archive file on the site is archiveUrl(<a name from
// core>): no page writes a /ledgers/ path by hand (test/layout.test.ts holds it).

/** The archive's root on this site, the `ledgers/` folder as `timeseal serve` serves it. */
export const ARCHIVE_BASE = '/ledgers/';

/** The URL of an archive file, given its path relative to the archive root (e.g. `ledgerPath(date)`). */
export const archiveUrl = (path: string): string => `${ARCHIVE_BASE}${path}`;

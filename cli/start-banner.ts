// The few human lines `timeseal serve` prints on stderr once it listens, when stderr is a terminal:
// the one address to open (the links origin, also used in e-mails — open the site there so a login carries
// over from an e-mail link), where e-mail goes, what the archive holds (the demonstration ledger on a first
// `make start`), and how to get JSON logs. Where the server listens is said once, by stdout's "Timeseal
// listening on" line just above (scripts and tests read it); the banner names that address only to say where
// its page visits go.
import path from 'node:path';

export interface BannerInput {
  /** The public base URL (TIMESEAL_ORIGIN, or the development default that follows PORT). */
  origin: string;
  /** Where the server listens (`Timeseal listening on …`). */
  listening: string;
  smtpUrl: string | undefined;
  outbox: string;
  /** Days of the demonstration ledger published by this start, if any. */
  demoDays: string[];
  /** The last published day, if any. */
  lastDay: string | undefined;
  publishedDays: number;
}

export function startBanner(b: BannerInput): string[] {
  const site = b.origin.replace(/\/+$/, '');
  const mail =
    b.smtpUrl !== undefined
      ? `sent through ${new URL(b.smtpUrl).host} (SMTP_URL)`
      : `written as .eml files to ${path.relative(process.cwd(), path.resolve(b.outbox)) || '.'}${path.sep} (no SMTP_URL set)`;
  const archive =
    b.demoDays.length > 0
      ? `demonstration ledger of ${b.demoDays.join(', ')} published; search it at ${site}/verify`
      : b.lastDay !== undefined
        ? `${b.publishedDays} published day${b.publishedDays === 1 ? '' : 's'}, the last ${b.lastDay}`
        : 'nothing published yet (the first ledger is built at 00:01 UTC after the first submission)';
  const lines = [
    '',
    `  Timeseal is running: open ${site}`,
    `    links in e-mails use this address too; open the site there so a login carries over`,
    ...(new URL(site).host !== new URL(b.listening).host
      ? [`    (page visits to ${b.listening} are sent on to it; set TIMESEAL_ORIGIN for another address)`]
      : []),
    `  E-mail:  ${mail}`,
    `  Archive: ${archive}`,
    `  Logs:    one line per event below; LOG_FORMAT=json for JSON lines`,
    '',
  ];
  return lines;
}

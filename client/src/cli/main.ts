// `timeseal-client`: stamp files, upgrade their proofs, verify them offline, show what a proof holds. This file
// holds the options and the help; each command's code is its own module (stamp.ts, upgrade.ts, verify.ts,
// info.ts), loaded only when that command runs, so that `--help` starts quickly. Each command returns its
// outcome, and main() alone turns it (or the error a command threw) into the exit code, with the table of
// core/exit-codes.ts that `timeseal` uses too.
import { Command, CommanderError, Option } from 'commander';
import { exitCodeOf, worstOutcome, type ExitCode, type Outcome } from '../../../core/exit-codes.ts';
import { TimesealClientError } from '../errors.ts';
import { outcomeOfError } from './exit.ts';

declare const CLIENT_VERSION: string;
const VERSION = typeof CLIENT_VERSION === 'string' ? CLIENT_VERSION : '0.0.0-dev';

const collect = (value: string, previous: string[]) => [...previous, value];

function common(cmd: Command, { server = true, walkOpts = true } = {}): Command {
  if (server) cmd.option('--server <url>', 'the Timeseal server (default: TIMESEAL_SERVER)');
  cmd
    .option(
      '--trust <file>',
      'the trust store: keys pinned per server, checkpoints seen (default: TIMESEAL_TRUST, else ~/.config/timeseal-client/trust.json)',
    )
    .option(
      '--out-dir <dir>',
      "proof files under this folder (at each file's path relative to the working folder) instead of beside each file",
    )
    .option('--json', 'one JSON object per file, one a line, and nothing else on stdout');
  if (walkOpts)
    cmd
      .option('--all', 'include dot-files and dot-folders')
      .option(
        '--exclude <glob>',
        'leave out paths matching the glob (repeatable; matched against the path under the folder given and the name)',
        collect,
        [],
      );
  return cmd.option('--timeout <ms>', 'deadline of each HTTP request and its whole answer, milliseconds', '30000');
}

export async function main(argv: string[]): Promise<ExitCode> {
  const program = new Command('timeseal-client')
    .version(VERSION)
    .description(
      'Timestamp files with a Timeseal server and verify the proofs offline. Exit codes: 0 complete, 1 invalid or failed, 2 pending (valid so far), 3 not found, 64 bad usage, 75 temporary (stamp, upgrade: the server could not be reached or failed; run the same command again to continue).',
    )
    .exitOverride()
    .showHelpAfterError();
  let outcome: Outcome = 'ok';
  common(
    program
      .command('stamp')
      .description(
        'hash files locally (streamed) and timestamp the hashes; writes <file>.timeseal.json with the receipt at once; a re-run skips complete proofs and upgrades pending ones',
      )
      .argument('[paths...]', 'files, folders (recursive; symbolic links are not followed) or - for stdin')
      .option(
        '--digest <hex>',
        'a SHA-256 to stamp as it is (repeatable); its proof is <hex>.timeseal.json',
        collect,
        [],
      )
      .option(
        '--digests-from <file>',
        'sha256sum output (- for stdin): each hash is stamped, its proof beside the file named',
      )
      .option(
        '--pdf <file>',
        'timestamp a PDF inside it: writes <name>.timestamped.pdf (a document time-stamp; only its digest is sent) (repeatable)',
        collect,
        [],
      )
      .option('--force', 'with --pdf: replace an existing <name>.timestamped.pdf')
      .option('--no-progress', 'no progress line (it shows only on a terminal anyway)')
      .option('--batch-size <n>', 'hashes per request to the batch route (1 to 1000)', '1000')
      .option('--concurrency <n>', 'requests in flight when the server has no batch route', '8')
      .option(
        '--headers-from <url>',
        'Esplora API for Bitcoin block headers, when upgrading pending proofs (default: TIMESEAL_HEADERS_FROM, else https://blockstream.info/api)',
      )
      .addOption(
        new Option(
          '--network <name>',
          'Bitcoin network of the block headers (default: TIMESEAL_BITCOIN_NETWORK, else mainnet)',
        ).choices(['mainnet', 'regtest']),
      ),
  ).action(async (paths: string[], opts) => {
    if (opts.pdf.length > 0) {
      if (paths.length > 0 || opts.digest.length > 0 || opts.digestsFrom !== undefined)
        throw new TimesealClientError('usage', '--pdf stamps PDFs alone: give the other files in another run');
      outcome = await (await import('./pdf.ts')).runStampPdf(opts.pdf, opts);
      return;
    }
    if (paths.length === 0 && opts.digest.length === 0 && opts.digestsFrom === undefined)
      throw new TimesealClientError(
        'usage',
        'nothing to stamp: give files, folders, -, --digest HEX or --digests-from FILE',
      );
    outcome = await (await import('./stamp.ts')).runStamp(paths, opts);
  });
  common(
    program
      .command('upgrade')
      .description(
        'complete proof files once the day is published: the proof bundle, a consistency proof to the latest checkpoint, and once anchored the Bitcoin block headers (exit 0 all complete, 2 some pending)',
      )
      .argument(
        '[paths...]',
        'proof files, documents (their proofs) or folders (every proof under them); default: the working folder',
      )
      .option(
        '--wait',
        "keep asking until every proof is complete, politely (--poll, the server's Retry-After, the publication time)",
      )
      .option('--poll <seconds>', 'with --wait: the least time between two rounds', '300')
      .option('--max-wait <seconds>', 'with --wait: give up after this long', String(48 * 3600))
      .option(
        '--headers-from <url>',
        'Esplora API for Bitcoin block headers (default: TIMESEAL_HEADERS_FROM, else https://blockstream.info/api)',
      )
      .addOption(
        new Option(
          '--network <name>',
          'Bitcoin network of the block headers (default: TIMESEAL_BITCOIN_NETWORK, else mainnet)',
        ).choices(['mainnet', 'regtest']),
      ),
  ).action(async (paths: string[], opts) => {
    outcome = await (await import('./upgrade.ts')).runUpgrade(paths, opts);
  });
  common(
    program
      .command('verify')
      .description(
        'verify offline: every layer the proof holds, with the pinned keys; exit 0 complete, 2 pending (valid so far), 1 invalid, 3 not found',
      )
      .argument(
        '[paths...]',
        'a file and optionally its proof, files, folders, or proof files (their documents beside them)',
      )
      .option('--digest <hex>', 'verify a SHA-256 instead of a file (repeatable)', collect, [])
      .option('--proof <file>', 'the proof file of the one file (or digest) given')
      .option(
        '--pdf <file>',
        "check a timestamped PDF's document time-stamps (repeatable; a PDF without a proof file beside it is checked so too)",
        collect,
        [],
      )
      .option(
        '--keys <dir>',
        "a folder of the server's public keys (public.pem, dilithium_public.key, timeseal-tsa-root.pem, …) to use instead of the pinned ones",
      )
      .addOption(
        new Option(
          '--network <name>',
          'Bitcoin network whose proof-of-work limit applies (default: TIMESEAL_BITCOIN_NETWORK, else mainnet)',
        ).choices(['mainnet', 'regtest']),
      ),
    { server: false },
  ).action(async (paths: string[], opts) => {
    const pdf = await import('./pdf.ts');
    const found =
      opts.digest.length > 0 || opts.proof !== undefined
        ? { pdfs: [], rest: paths }
        : pdf.pdfsAmong(paths, opts.outDir);
    const pdfs = [...opts.pdf, ...found.pdfs];
    const outcomes: Outcome[] = [];
    if (pdfs.length > 0) outcomes.push(await pdf.runVerifyPdf(pdfs, opts));
    if (found.rest.length > 0 || opts.digest.length > 0 || pdfs.length === 0)
      outcomes.push(await (await import('./verify.ts')).runVerify(found.rest, opts));
    outcome = worstOutcome(outcomes);
  });
  common(
    program
      .command('info')
      .description('what a proof file holds, without checking it')
      .argument('<proofs...>', 'proof files, or documents (their proofs)'),
    { server: false, walkOpts: false },
  ).action(async (paths: string[], opts) => {
    outcome = await (await import('./info.ts')).runInfo(paths, { ...opts, exclude: [] });
  });
  try {
    await program.parseAsync(argv);
  } catch (err) {
    // Commander has said what was wrong (or shown the help, or the version) on its own.
    if (err instanceof CommanderError) return exitCodeOf(err.exitCode === 0 ? 'ok' : 'usage');
    const e = err as TimesealClientError;
    process.stderr.write(`timeseal-client: ${e.code === undefined ? '' : `${e.code}: `}${e.message}\n`);
    return exitCodeOf(outcomeOfError(err));
  }
  return exitCodeOf(outcome);
}

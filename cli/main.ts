// The `timeseal` operator CLI, run by cli.ts. Each command's action returns its outcome (cli/command.ts), and
// only main() turns an outcome, or the error a command threw, into the exit code, with the table of
// core/exit-codes.ts: 0 ok, 1 failed or invalid, 2 pending, 3 not found, 64 usage, 75 temporary. Errors print
// one line (plus details for bad input) on stderr, never a stack trace.
import { ed25519 } from '@noble/curves/ed25519.js';
import { p256 } from '@noble/curves/nist.js';
import { CommanderError, type Command } from 'commander';
import { TimesealError } from '../core/errors.ts';
import { exitCodeOf, type ExitCode, type Outcome } from '../core/exit-codes.ts';
import { useNativeVerify } from '../core/sig.ts';
import { nodeVerify } from '../runtime/node-verify.ts';
import { setting } from '../runtime/settings.ts';
import { TimesealCommand } from './command.ts';
import { createContext, type Context } from './context.ts';
import { InputError } from './output.ts';
import { NetworkError } from '../pipeline/http.ts';

type Register = (program: TimesealCommand, ctx: () => Context) => void;

/** Each top-level command's module, loaded only when that command runs (or for help, which lists them all):
 * a command does not pay for loading what the others use (the web server, the pipeline, pkijs), and every
 * spawn of the CLI starts faster. In the order `--help` lists them. */
const COMMANDS: ReadonlyArray<readonly [string, () => Promise<Register>]> = [
  ['keys', async () => (await import('./commands/keys.ts')).registerKeys],
  ['import', async () => (await import('./commands/import.ts')).registerImport],
  ['ledger', async () => (await import('./commands/ledger.ts')).registerLedger],
  ['verify', async () => (await import('./commands/verify.ts')).registerVerify],
  ['mirror', async () => (await import('./commands/mirror.ts')).registerMirror],
  ['index-json', async () => (await import('./commands/index-json.ts')).registerIndexJson],
  ['proof', async () => (await import('./commands/proof.ts')).registerProof],
  ['status', async () => (await import('./commands/status.ts')).registerStatus],
  ['serve', async () => (await import('./commands/serve.ts')).registerServe],
  ['witness', async () => (await import('./commands/witness.ts')).registerWitness],
  ['tsa', async () => (await import('./commands/tsa-client.ts')).registerTsa],
  ['receipt', async () => (await import('./commands/receipt.ts')).registerReceipt],
  ['anchor', async () => (await import('./commands/anchor.ts')).registerAnchor],
  ['upgrade', async () => (await import('./commands/upgrade.ts')).registerUpgrade],
  ['ots', async () => (await import('./commands/ots.ts')).registerOts],
  ['db', async () => (await import('./commands/db.ts')).registerDb],
  ['clock', async () => (await import('./commands/clock.ts')).registerClock],
];

export async function main(argv: string[]): Promise<ExitCode> {
  return exitCodeOf(await outcomeOf(argv));
}

/** Runs the command of `argv` and says how it ended: the outcome its action returned, or that of its error. */
async function outcomeOf(argv: string[]): Promise<Outcome> {
  // Every signature check of the command (and of the servers and builds it runs) asks OpenSSL first.
  useNativeVerify(nodeVerify);
  // A command signs a few times at most (a build: a day's ledger and checkpoint), and noble builds its table of
  // the base point on the first signature or key derivation: 4-bit windows instead of its default 6 make that
  // table ~2× cheaper to build (~40 ms less per curve) for ~0.3 ms more per signature. The server signs its
  // receipts and tokens through OpenSSL, not noble.
  p256.Point.BASE.precompute(4);
  ed25519.Point.BASE.precompute(4);
  let context: Context | undefined;
  const ctx = (): Context => (context ??= createContext());
  const program = new TimesealCommand('timeseal')
    .description('Timeseal operator CLI: build, sign, verify and prove the public ledger archive')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  // The first word that is not an option names the command; without one that is known (help, a typo) every
  // command is registered, so commander lists them all or says the word is unknown.
  const named = COMMANDS.find(([name]) => name === argv.find((a) => !a.startsWith('-')));
  for (const [, load] of named ? [named] : COMMANDS) (await load())(program, ctx);
  program.commands.forEach(function exitOverride(c: Command) {
    c.exitOverride();
    c.commands.forEach(exitOverride);
  });
  try {
    return await program.run(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help')
        return 'ok';
      return 'usage';
    }
    // A usage mistake (runtime/usage-error.ts UsageError, or a setting's error that rose with its code kept).
    if (err instanceof TimesealError && err.code === 'usage') {
      process.stderr.write(`timeseal: ${err.message}\n`);
      return 'usage';
    }
    if (err instanceof InputError) {
      process.stderr.write(`timeseal: ${err.message}\n${err.problems.map((p) => `  ${p}\n`).join('')}`);
      return 'failed';
    }
    const message = err instanceof TimesealError || err instanceof Error ? err.message : String(err);
    process.stderr.write(`timeseal: ${message}\n`);
    if (setting(process.env, 'TIMESEAL_DEBUG') && err instanceof Error) process.stderr.write(`${err.stack}\n`);
    if (err instanceof TimesealError && err.code === 'not-found') return 'not-found';
    if (err instanceof TimesealError && err.code === 'busy') return 'temporary';
    return unreachable(err) ? 'temporary' : 'failed';
  } finally {
    await context
      ?.close()
      .catch((err: unknown) =>
        process.stderr.write(`timeseal: closing the database: ${err instanceof Error ? err.message : String(err)}\n`),
      );
  }
}

/** A server that could not be reached or did not answer in time, anywhere in the error's causes: running the
 * same command again may succeed (75). A server that answered wrongly (too large, redirected, encoded) is not. */
function unreachable(err: unknown): boolean {
  for (let e = err; e instanceof Error; e = e.cause)
    if (e instanceof NetworkError) return e.reason === 'unreachable' || e.reason === 'timeout';
  return false;
}

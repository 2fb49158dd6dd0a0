// The `timeseal` operator CLI, run by cli.ts. Only main() chooses exit codes:
// 0 success, 1 failure or failed verification, 2 bad usage. Errors print one line (plus details for bad
// input) on stderr, never a stack trace.
import { Command, CommanderError } from 'commander';
import { TimesealError } from '../core/errors.ts';
import { UsageError } from '../runtime/config.ts';
import { createContext, type Context } from './context.ts';
import { registerAnchor } from './commands/anchor.ts';
import { registerDb } from './commands/db.ts';
import { registerImport, InputError } from './commands/import.ts';
import { registerIndexJson } from './commands/index-json.ts';
import { registerKeys } from './commands/keys.ts';
import { registerLedger } from './commands/ledger.ts';
import { registerOts } from './commands/ots.ts';
import { registerProof } from './commands/proof.ts';
import { registerReceipt } from './commands/receipt.ts';
import { registerServe } from './commands/serve.ts';
import { registerStatus } from './commands/status.ts';
import { registerUpgrade } from './commands/upgrade.ts';
import { registerVerify } from './commands/verify.ts';
import { registerWitness } from './commands/witness.ts';
import { registerTsa } from './commands/tsa.ts';

export async function main(argv: string[]): Promise<number> {
  let context: Context | undefined;
  const ctx = (): Context => (context ??= createContext());
  const program = new Command('timeseal')
    .description('Timeseal operator CLI: build, sign, verify and prove the public ledger archive')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  registerKeys(program, ctx);
  registerImport(program, ctx);
  registerLedger(program, ctx);
  registerVerify(program, ctx);
  registerIndexJson(program, ctx);
  registerProof(program, ctx);
  registerStatus(program, ctx);
  registerServe(program, ctx);
  registerWitness(program, ctx);
  registerTsa(program, ctx);
  registerReceipt(program, ctx);
  registerAnchor(program, ctx);
  registerUpgrade(program, ctx);
  registerOts(program, ctx);
  registerDb(program, ctx);
  program.commands.forEach(function exitOverride(c: Command) {
    c.exitOverride();
    c.commands.forEach(exitOverride);
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return process.exitCode === undefined ? 0 : Number(process.exitCode);
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return 0;
      return 2;
    }
    if (err instanceof UsageError) {
      process.stderr.write(`timeseal: ${err.message}\n`);
      return 2;
    }
    if (err instanceof InputError) {
      process.stderr.write(`timeseal: ${err.message}\n${err.problems.map((p) => `  ${p}\n`).join('')}`);
      return 1;
    }
    const message = err instanceof TimesealError || err instanceof Error ? err.message : String(err);
    process.stderr.write(`timeseal: ${message}\n`);
    if (process.env.TIMESEAL_DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`);
    return 1;
  } finally {
    await context?.close().catch((err: unknown) => process.stderr.write(`timeseal: closing the database: ${err instanceof Error ? err.message : String(err)}\n`));
  }
}


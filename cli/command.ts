// The commander Command every `timeseal` command is made with: its action, registered with `act()` instead of
// commander's `action()`, returns how it ended, an outcome of core/exit-codes.ts, and `run()` answers the
// outcome of the action that ran. main() alone turns it into the exit code; no command sets process.exitCode.
import { Command } from 'commander';
import type { Outcome } from '../core/exit-codes.ts';

/** An action: commander's arguments (the command's arguments, its options, the command), and the outcome. */
export type Action = (...args: Parameters<Parameters<Command['action']>[0]>) => Promise<Outcome>;

export class TimesealCommand extends Command {
  #outcome: Outcome = 'ok';

  override createCommand(name?: string): TimesealCommand {
    return new TimesealCommand(name);
  }

  /** Registers `fn` as the command's action; what it returns is the run's outcome (kept on the top-level
   * command). */
  act(fn: Action): this {
    return this.action(async (...args: Parameters<Action>) => {
      const outcome = await fn(...args);
      let root: Command = this;
      while (root.parent) root = root.parent;
      if (root instanceof TimesealCommand) root.#outcome = outcome;
    });
  }

  /** Parses `argv` (the words after the program's name), runs the command named and answers its outcome. Throws
   * what the action throws, and commander's errors (help shown, bad usage). */
  async run(argv: string[]): Promise<Outcome> {
    this.#outcome = 'ok';
    await this.parseAsync(argv, { from: 'user' });
    return this.#outcome;
  }
}

// A setting or an argument that cannot be used as given: the command stops before doing anything, with a
// sentence naming what was wrong (`timeseal` exits 64 for it, bad usage: core/exit-codes.ts).
import { TimesealError } from '../core/errors.ts';

export class UsageError extends TimesealError {
  constructor(message: string) {
    super('usage', message);
    this.name = 'UsageError';
  }
}

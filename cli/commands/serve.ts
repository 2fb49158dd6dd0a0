// `timeseal serve [--demo]`: registered here; the server itself (cli/serve.ts) is imported only when the
// command runs, so the other commands start without loading Fastify, Stripe and nodemailer.
import type { TimesealCommand } from '../command.ts';
import type { Context } from '../context.ts';

export function registerServe(program: TimesealCommand, ctx: () => Context): void {
  program
    .command('serve')
    .description('the web server: site, archive, API, and the built-in daily schedule')
    .option('--demo', 'on an archive with no published day, first publish a demonstration ledger for yesterday')
    .act(async (opts: { demo?: boolean }) => {
      const { serve } = await import('../serve.ts');
      await serve(ctx(), { demo: !!opts.demo });
      return 'ok';
    });
}

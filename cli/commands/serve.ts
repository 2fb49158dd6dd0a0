// `timeseal serve [--demo]`: registered here; the server itself (cli/serve.ts) is imported only when the
// command runs, so the other commands start without loading Fastify, Stripe and nodemailer.
import type { Command } from 'commander';
import type { Context } from '../context.ts';

export function registerServe(program: Command, ctx: () => Context): void {
  program
    .command('serve')
    .description('the web server: site, archive, API, and the built-in daily schedule')
    .option('--demo', 'on an archive with no published day, first publish a demonstration ledger for yesterday')
    .action(async (opts: { demo?: boolean }) => {
      const { serve } = await import('../serve.ts');
      await serve(ctx(), { demo: !!opts.demo });
    });
}

// The `timeseal` executable's entry point. It turns on Node's compile cache before the command graph is
// loaded (every operator command, the schedule's child builds and the tests spawn this file; without the
// cache each start strips and compiles the TypeScript of every module again, ~0.5-1 s), then runs main.ts.
// The cache lives in the system's temporary folder (node-compile-cache/); NODE_DISABLE_COMPILE_CACHE=1 turns
// it off, NODE_COMPILE_CACHE=DIR moves it. Static imports would be loaded before this line runs, hence the
// dynamic import. A reader of its output that goes away (`… | head -1`) ends it quietly
// (core/exit-codes.ts endWhenOutputCloses).
import module from 'node:module';
import { endWhenOutputCloses } from '../core/exit-codes.ts';

const cache = module.enableCompileCache();
// The commands this one starts (the schedule's builds) use the cache from their first module on.
if (cache.directory !== undefined) process.env.NODE_COMPILE_CACHE ??= cache.directory;
endWhenOutputCloses([process.stdout, process.stderr], (status) => process.exit(status));
const { main } = await import('./main.ts');
process.exitCode = await main(process.argv.slice(2));

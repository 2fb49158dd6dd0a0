// The executable's entry: runs the command line and exits with its code; a reader of its output that goes away
// (`… | head -1`) ends it quietly (core/exit-codes.ts endWhenOutputCloses).
import { endWhenOutputCloses } from '../../../core/exit-codes.ts';
import { main } from './main.ts';

endWhenOutputCloses([process.stdout, process.stderr], (status) => process.exit(status));
process.exitCode = await main(process.argv);

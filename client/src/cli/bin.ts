// The executable's entry: runs the command line and exits with its code.
import { main } from './main.ts';

process.exitCode = await main(process.argv);

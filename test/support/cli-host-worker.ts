// The worker thread of cli-host.ts: keeps the `timeseal` CLI's modules loaded and runs one command at a time with
// main() of cli/main.ts, as cli/cli.ts does in a process of its own, and answers with its exit code and output.
// Per command: the caller's environment replaces this thread's (Node gives a worker its own copy of
// process.env); the working folder is the caller's, which changes it before asking (a worker cannot); the exit
// code and the build's folder listings (pipeline/files.ts, valid only within one process's writes) start afresh.
import module from 'node:module';
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';

module.enableCompileCache();
// A thread that cannot load the CLI answers every command with why (the caller waits for an answer, not an event).
let loaded: { main: (args: string[]) => Promise<number>; forgetListings: () => void } | Error;
try {
  loaded = {
    main: (await import('../../cli/main.ts')).main,
    forgetListings: (await import('../../pipeline/files.ts')).forgetListings,
  };
} catch (err) {
  loaded = err instanceof Error ? err : new Error(String(err));
}

export interface HostRequest {
  args: string[];
  env: Record<string, string>;
  /** Set to 1, and notified, once the answer has been posted. */
  done: Int32Array;
}

export interface HostAnswer {
  code: number;
  stdout: string;
  stderr: string;
}

const answers = (workerData as { answers: MessagePort }).answers;
let stdout = '';
let stderr = '';
const capture =
  (append: (s: string) => void) =>
  (chunk: string | Uint8Array, encoding?: unknown, callback?: unknown): boolean => {
    append(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    const done = typeof encoding === 'function' ? encoding : callback;
    if (typeof done === 'function') queueMicrotask(() => (done as () => void)());
    return true;
  };
process.stdout.write = capture((s) => (stdout += s)) as typeof process.stdout.write;
process.stderr.write = capture((s) => (stderr += s)) as typeof process.stderr.write;

/** The command under way: answered once, by main() or by an error nothing caught (which ends a process). */
let current: HostRequest | undefined;

function answer(request: HostRequest, code: number): void {
  if (current !== request) return;
  current = undefined;
  process.exitCode = undefined;
  answers.postMessage({ code, stdout, stderr } satisfies HostAnswer);
  Atomics.store(request.done, 0, 1);
  Atomics.notify(request.done, 0);
}

// What would end a `timeseal` process with a stack trace on stderr and exit code 1 ends the command so here.
for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
  process.on(event, (err: unknown) => {
    stderr += `${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`;
    if (current !== undefined) answer(current, 1);
  });
}

parentPort!.on('message', (request: HostRequest) => {
  stdout = '';
  stderr = '';
  for (const key of Object.keys(process.env)) delete process.env[key];
  Object.assign(process.env, request.env);
  process.exitCode = undefined;
  current = request;
  if (loaded instanceof Error) {
    stderr = `cli-host: the CLI could not be loaded: ${loaded.stack ?? loaded.message}\n`;
    return answer(request, 70);
  }
  loaded.forgetListings();
  loaded.main(request.args).then(
    (code) => answer(request, code),
    (err: unknown) => {
      stderr += `${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`;
      answer(request, 1);
    },
  );
});

// `timeseal <args>` run synchronously inside the test's process: one worker thread (cli-host-worker.ts) keeps the
// CLI's modules loaded and runs main() of cli/main.ts for each command, with the command's own environment and
// working folder, and the caller blocks until it answers (Atomics.wait, then receiveMessageOnPort).
//
// Why: a `timeseal` process costs ~0.3 s of CPU before it does anything (Node's start, then loading and
// evaluating the command graph: noble, commander, SQLite), and the suite ran ~770 of them, a third of its CPU on
// a machine whose two cores it keeps busy. In this thread a command costs what its own work costs.
//
// What stays a real process (the caller spawns cli/bin/timeseal as before; see canRunInHost): a command with
// stdin, one that is killed or paused on purpose (TIMESEAL_TEST_KILL_AT, TIMESEAL_TEST_PAUSE_AT), `serve`, and
// every run when TIMESEAL_TEST_SPAWN=1 (the whole suite then runs as before, the executable every time).
// test/cli/cli-host.test.ts checks that both ways give the same exit codes and output.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import type { HostAnswer, HostRequest } from './cli-host-worker.ts';

/** How long one command may take before the caller gives up on the thread. */
const COMMAND_TIMEOUT_MS = 600_000;

let host: { worker: Worker; answers: MessagePort } | undefined;

function startHost(): { worker: Worker; answers: MessagePort } {
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(path.join(import.meta.dirname, 'cli-host-worker.ts'), {
    workerData: { answers: port2 },
    transferList: [port2],
    // The CLI's own flags, not the test runner's (its --conditions would pick other package entries).
    execArgv: ['--disable-warning=ExperimentalWarning'],
    stdout: false,
    stderr: false,
  });
  worker.unref();
  port1.unref();
  worker.once('exit', () => (host = undefined));
  return { worker, answers: port1 };
}

/** Whether `timeseal args` with this environment and stdin may run in the host instead of a process. */
export function canRunInHost(args: string[], env: NodeJS.ProcessEnv, input: string | Buffer | undefined): boolean {
  if (process.env.TIMESEAL_TEST_SPAWN === '1') return false;
  if (input !== undefined && input.length > 0) return false;
  if (env.TIMESEAL_TEST_KILL_AT || env.TIMESEAL_TEST_PAUSE_AT) return false;
  return args[0] !== 'serve' && !args.includes('-');
}

/** Runs `timeseal args` in `cwd` with exactly `env` in the host thread and waits for it. */
export function runInHost(cwd: string, args: string[], env: NodeJS.ProcessEnv): HostAnswer {
  host ??= startHost();
  const done = new Int32Array(new SharedArrayBuffer(4));
  const request: HostRequest = {
    args,
    env: Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)),
    done,
  };
  const before = process.cwd();
  process.chdir(cwd);
  try {
    host.worker.postMessage(request);
    if (Atomics.wait(done, 0, 0, COMMAND_TIMEOUT_MS) === 'timed-out') {
      // The next command gets a new thread.
      void host.worker.terminate();
      host = undefined;
      throw new Error(`timeseal ${args.join(' ')}: no answer from the CLI host within ${COMMAND_TIMEOUT_MS / 1000} s`);
    }
    const answer = receiveMessageOnPort(host.answers);
    if (answer === undefined) throw new Error(`timeseal ${args.join(' ')}: the CLI host answered nothing`);
    return answer.message as HostAnswer;
  } finally {
    process.chdir(before);
  }
}

/** The executable the host stands in for. */
const BIN = path.resolve(import.meta.dirname, '../../cli/bin/timeseal');

export interface TimesealResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  error?: Error;
}

/** As spawnSync(cli/bin/timeseal, args, { ...options, encoding: 'utf8' }), run in the host when it may (a run with a
 *  timeout is a real process: what is timed is the process). */
export function timesealSync(
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; input?: string | Buffer; timeout?: number; maxBuffer?: number },
): TimesealResult {
  if (options.timeout === undefined && canRunInHost(args, options.env, options.input)) {
    const answer = runInHost(options.cwd, args, options.env);
    return { status: answer.code, signal: null, stdout: answer.stdout, stderr: answer.stderr };
  }
  const r = spawnSync(BIN, args, { maxBuffer: 256 * 1024 * 1024, ...options, encoding: 'utf8' });
  return {
    status: r.status,
    signal: r.signal,
    stdout: r.stdout,
    stderr: r.stderr,
    ...(r.error ? { error: r.error } : {}),
  };
}

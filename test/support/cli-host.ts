// `timeseal <args>` run inside the test's process: one worker thread (cli-host-worker.ts) keeps the CLI's modules
// loaded and runs main() of cli/main.ts for each command, with the command's own environment and working folder.
// timesealSync blocks the caller until the thread answers (Atomics.wait, then receiveMessageOnPort), as spawnSync
// would; timesealAsync does not (Atomics.waitAsync), for commands that talk to servers in the test's process.
//
// Why: a `timeseal` process costs ~0.3 s of CPU before it does anything (Node's start, then loading and
// evaluating the command graph: noble, commander, SQLite), and the suite ran ~770 of them, a third of its CPU on
// a machine whose two cores it keeps busy. In this thread a command costs what its own work costs.
//
// What stays a real process (cli/bin/timeseal, as before; see canRunInHost): a command with stdin, one that is
// killed or paused on purpose (TIMESEAL_TEST_KILL_AT, TIMESEAL_TEST_PAUSE_AT), `serve`, a command started while
// the thread runs another (two at once stay two processes), a run with a timeout, and every run when
// TIMESEAL_TEST_SPAWN=1 (the whole suite then runs the executable every time, as before).
// test/cli/cli-host.test.ts checks that both ways give the same exit codes and output.
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import type { HostAnswer, HostRequest } from './cli-host-worker.ts';

/** How long one command may take before the caller gives up on the thread. */
const COMMAND_TIMEOUT_MS = 600_000;

let host: { worker: Worker; answers: MessagePort } | undefined;
/** A command is under way in the host (an asynchronous one: a synchronous one blocks this thread). */
let busy = false;

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
  // A thread that ended (its start failed, or it was ended after a timeout) is replaced at the next command.
  worker.once('exit', () => {
    if (host?.worker === worker) host = undefined;
  });
  return { worker, answers: port1 };
}

/** Whether `timeseal args` with this environment and stdin may run in the host instead of a process. While the host
 *  runs a command, another runs as a process: two commands at once stay two processes at once. */
export function canRunInHost(args: string[], env: NodeJS.ProcessEnv, input: string | Buffer | undefined): boolean {
  if (process.env.TIMESEAL_TEST_SPAWN === '1' || busy) return false;
  if (input !== undefined && input.length > 0) return false;
  if (env.TIMESEAL_TEST_KILL_AT || env.TIMESEAL_TEST_PAUSE_AT) return false;
  return args[0] !== 'serve' && !args.includes('-');
}

function request(args: string[], env: NodeJS.ProcessEnv): HostRequest {
  return {
    args,
    env: Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)),
    done: new Int32Array(new SharedArrayBuffer(4)),
  };
}

/** The host's answer once `done` was notified, or the error of a command that did not answer in time. */
function answerOf(args: string[], waited: 'ok' | 'not-equal' | 'timed-out'): HostAnswer {
  if (waited === 'timed-out') {
    // The next command gets a new thread.
    void host?.worker.terminate();
    host = undefined;
    throw new Error(`timeseal ${args.join(' ')}: no answer from the CLI host within ${COMMAND_TIMEOUT_MS / 1000} s`);
  }
  const answer = host === undefined ? undefined : receiveMessageOnPort(host.answers);
  if (answer === undefined) throw new Error(`timeseal ${args.join(' ')}: the CLI host answered nothing`);
  return answer.message as HostAnswer;
}

/** Runs `timeseal args` in `cwd` with exactly `env` in the host thread and waits for it, blocking this thread. */
export function runInHost(cwd: string, args: string[], env: NodeJS.ProcessEnv): HostAnswer {
  host ??= startHost();
  const r = request(args, env);
  const before = process.cwd();
  process.chdir(cwd);
  try {
    host.worker.postMessage(r);
    return answerOf(args, Atomics.wait(r.done, 0, 0, COMMAND_TIMEOUT_MS));
  } finally {
    process.chdir(before);
  }
}

/** As runInHost, without blocking this thread (servers of this process answer the command). The working folder is
 *  the command's until it ends. */
export async function runInHostAsync(cwd: string, args: string[], env: NodeJS.ProcessEnv): Promise<HostAnswer> {
  host ??= startHost();
  const r = request(args, env);
  busy = true;
  const before = process.cwd();
  process.chdir(cwd);
  try {
    host.worker.postMessage(r);
    const waited = Atomics.waitAsync(r.done, 0, 0, COMMAND_TIMEOUT_MS);
    return answerOf(args, waited.async ? await waited.value : waited.value);
  } finally {
    process.chdir(before);
    busy = false;
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

/** As timesealSync without blocking this thread: the host when it may, else the executable. */
export async function timesealAsync(
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; input?: string },
): Promise<TimesealResult> {
  if (canRunInHost(args, options.env, options.input)) {
    const answer = await runInHostAsync(options.cwd, args, options.env);
    return { status: answer.code, signal: null, stdout: answer.stdout, stderr: answer.stderr };
  }
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, args, { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.on('error', reject);
    child.on('close', (status, signal) => resolve({ status, signal, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

import { spawn, type ChildProcess } from 'node:child_process';
import { availableParallelism, setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { isHeartbeat } from './worker-heartbeat.js';

/** Options of {@link startWorkerProcesses}. */
export interface WorkerProcessesOptions {
  /** How many `mnemo worker` processes to keep running. */
  readonly count: number;
  /** Arguments after `mnemo worker` (the store, the config file). */
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Where the workers' log lines go. */
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly logger: Logger;
  /** How long a worker may go without a heartbeat before it is killed and started again, in ms; default {@link defaultHeartbeatTimeoutMs}. */
  readonly heartbeatTimeoutMs?: number;
}

/**
 * Default of {@link WorkerProcessesOptions.heartbeatTimeoutMs}: 15 s of silence (15 missed beats). Long
 * enough for a worker's longest synchronous stretch (opening and migrating the store, loading a user's
 * keyword copy), short enough that stopped background work is noticed within seconds, not never.
 */
export const defaultHeartbeatTimeoutMs = 15_000;

// How long a new worker may take to send its first heartbeat.
const startupAllowanceMs = 60_000;

/** The worker processes of one `mnemo serve`. */
export interface WorkerProcesses {
  /** Process ids of the workers running now. */
  pids(): number[];
  /** SIGTERM to every worker, SIGKILL to those still running after `timeoutMs`; resolves once all have exited. */
  stop(timeoutMs: number): Promise<void>;
}

/** Worker processes `mnemo serve` starts by default: one per core beyond the one that serves HTTP, at least one, at most four. */
export function defaultWorkerCount(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

// Background work yields the CPU to serving: on a machine with few cores the embedding model would
// otherwise take the core a request waits for. Niceness 10 (of 19): still runs whenever a core is idle.
const workerNiceness = 10;
// A worker that keeps crashing (a broken config, a missing model) is restarted at most this often.
const restartDelayMs = 1000;
const cliPath = fileURLToPath(new URL('../main.js', import.meta.url));

/**
 * Starts `count` `mnemo worker` processes of the same CLI beside `mnemo serve`, at a lower CPU priority
 * (niceness 10) so that requests win a busy core, and restarts one that fails (exits other than 0) or
 * stops sending heartbeats (killed first). Each leases jobs from the store like any other worker, so a worker that dies
 * loses nothing: its lease lapses and the job runs again. Each has an IPC channel to this process and
 * stops when it closes, so no worker outlives a `serve` that was killed.
 */
export function startWorkerProcesses(options: WorkerProcessesOptions): WorkerProcesses {
  const children = new Set<ChildProcess>();
  const lastBeat = new Map<ChildProcess, number>();
  const heartbeatTimeoutMs = options.heartbeatTimeoutMs ?? defaultHeartbeatTimeoutMs;
  let stopping = false;
  // A worker that stops beating (stopped, or stuck in code that never yields) is killed; its exit starts
  // another, as for a crash. Before its first beat it has the start-up allowance (opening and migrating
  // the store on a loaded machine takes seconds), so one that hangs while starting goes too, later.
  const beaten = new Set<ChildProcess>();
  const watchdog = setInterval(() => {
    const now = Date.now();
    for (const child of children) {
      const silentMs = now - (lastBeat.get(child) ?? now);
      const allowedMs = beaten.has(child) ? heartbeatTimeoutMs : Math.max(heartbeatTimeoutMs, startupAllowanceMs);
      if (silentMs <= allowedMs || child.signalCode !== null || child.exitCode !== null) continue;
      lastBeat.delete(child);
      options.logger.warn(
        { pid: child.pid, silentMs, heartbeatTimeoutMs: allowedMs },
        'worker process stopped answering (no heartbeat); killing it and starting another',
      );
      child.kill('SIGKILL');
    }
  }, 1_000);
  watchdog.unref();

  const startOne = (): void => {
    const child = spawn(process.execPath, [...process.execArgv, cliPath, 'worker', ...options.args], {
      cwd: options.cwd,
      env: { ...options.env },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    children.add(child);
    lastBeat.set(child, Date.now());
    child.on('message', (message) => {
      if (!isHeartbeat(message) || !lastBeat.has(child)) return;
      lastBeat.set(child, Date.now());
      beaten.add(child);
    });
    try {
      if (child.pid !== undefined) setPriority(child.pid, workerNiceness);
    } catch (error) {
      options.logger.warn({ err: error, pid: child.pid }, 'cannot lower the priority of a worker process');
    }
    child.stdout?.pipe(options.stdout, { end: false });
    child.stderr?.pipe(options.stderr, { end: false });
    child.once('exit', (code, signal) => {
      children.delete(child);
      lastBeat.delete(child);
      beaten.delete(child);
      if (stopping) return;
      // Exit code 0: the worker was told to stop (a Ctrl-C reaches the whole process group first).
      if (code === 0) return void options.logger.info({ pid: child.pid }, 'worker process stopped');
      options.logger.warn(
        { pid: child.pid, code, signal },
        'worker process exited; starting another (its running jobs are leased again when their leases lapse)',
      );
      setTimeout(() => {
        if (!stopping) startOne();
      }, restartDelayMs).unref();
    });
  };
  for (let index = 0; index < options.count; index += 1) startOne();

  return {
    pids: () => [...children].flatMap((child) => (child.pid === undefined ? [] : [child.pid])),
    async stop(timeoutMs) {
      stopping = true;
      clearInterval(watchdog);
      await Promise.all(
        [...children].map(
          (child) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null || child.signalCode !== null) return resolve();
              const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
              child.once('exit', () => {
                clearTimeout(timer);
                resolve();
              });
              child.kill('SIGTERM');
            }),
        ),
      );
    },
  };
}

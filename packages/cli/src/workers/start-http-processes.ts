import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { MemoryError } from '@mnemo/core';
import type { WorkerProcessesOptions } from './start-worker-processes.js';

/** Environment variable that makes a `mnemo serve` started by {@link startHttpProcesses} one of its HTTP processes. */
export const httpProcessRoleVariable = 'MNEMO_SERVE_ROLE';
const httpProcessRole = 'http';

/** What an HTTP process tells its primary over IPC once it listens. */
interface ListeningMessage {
  readonly type: 'mnemo-listening';
  readonly url: string;
}

/** What the primary tells an HTTP process to shut down gracefully (a signal might hit one that already stops). */
const stopMessage = Object.freeze({ type: 'mnemo-stop' });

/** Options of {@link startHttpProcesses}: as the workers', with `count` HTTP processes and `args` after `mnemo serve` (host, port, store, config). */
export type HttpProcessesOptions = WorkerProcessesOptions;

/** The HTTP processes of one `mnemo serve --http-processes N`. */
export interface HttpProcesses {
  /** Base URL they all answer on. */
  readonly url: string;
  /** Process ids of the HTTP processes running now. */
  pids(): number[];
  /** Starts passing the processes' output on (held until then, so that the caller's "listening" line comes first). */
  releaseOutput(): void;
  /** Asks each to shut down gracefully (finishing in-flight requests), SIGKILL to those still running after `timeoutMs`; resolves once all have exited. */
  stop(timeoutMs: number): Promise<void>;
}

/**
 * HTTP processes `mnemo serve` runs by default: 1 (this process serves) on up to 2 cores, where the
 * worker process already takes the second core and a second HTTP process measured no faster; else one per
 * core left after the worker processes, at most 8.
 */
export function defaultHttpProcessCount(workerCount: number): number {
  const cores = availableParallelism();
  if (cores <= 2) return 1;
  return Math.max(1, Math.min(8, cores - workerCount));
}

/** True in a process that {@link startHttpProcesses} started: it serves HTTP and leaves workers to its primary. */
export function isHttpProcess(env: Readonly<Record<string, string | undefined>>): boolean {
  return cluster.isWorker && env[httpProcessRoleVariable] === httpProcessRole;
}

/** In an HTTP process: tells the primary that it listens on `url`. */
export function announceListening(url: string): void {
  const message: ListeningMessage = { type: 'mnemo-listening', url };
  process.send?.(message);
}

/** In an HTTP process: resolves when the primary asks it to stop. */
export function nextStopMessage(): Promise<void> {
  return new Promise((resolve) => {
    const onMessage = (message: unknown) => {
      if (typeof message !== 'object' || message === null || (message as { type?: unknown }).type !== stopMessage.type)
        return;
      process.off('message', onMessage);
      resolve();
    };
    process.on('message', onMessage);
  });
}

// An HTTP process that keeps crashing (a broken config, a port taken by then) is restarted at most this often.
const restartDelayMs = 1000;
const cliPath = fileURLToPath(new URL('../main.js', import.meta.url));

/**
 * Starts `count` HTTP processes of the same CLI (`mnemo serve` in the HTTP role) with node:cluster, so
 * they share one listening port: this process accepts connections and hands them round-robin to them.
 * Resolves once all listen; rejects (`unavailable`) when one exits before it does. Each opens its own
 * store, so they share state through it exactly as replicas do; one that exits later is restarted.
 */
export async function startHttpProcesses(options: HttpProcessesOptions): Promise<HttpProcesses> {
  // Round-robin in the primary: with the operating system's default, one process took most connections.
  cluster.schedulingPolicy = cluster.SCHED_RR;
  cluster.setupPrimary({
    exec: cliPath,
    args: ['serve', ...options.args],
    cwd: options.cwd,
    silent: true,
    execArgv: process.execArgv,
  });
  const children = new Set<Worker>();
  let stopping = false;
  let listening = false;
  // Until the primary printed its "listening" line (the first line scripts wait for), the processes'
  // log lines wait in their pipes.
  let outputReleased = false;
  const pipeOutput = (child: Worker) => {
    child.process.stdout?.pipe(options.stdout, { end: false });
    child.process.stderr?.pipe(options.stderr, { end: false });
  };

  const startOne = (onListening?: (url: string) => void, onEarlyExit?: (error: MemoryError) => void): void => {
    // cluster.fork adds these to its own environment: the role, and the caller's environment over it.
    const child = cluster.fork({ ...options.env, [httpProcessRoleVariable]: httpProcessRole });
    children.add(child);
    if (outputReleased) pipeOutput(child);
    child.on('message', (message: unknown) => {
      if (typeof message === 'object' && message !== null && (message as ListeningMessage).type === 'mnemo-listening')
        onListening?.((message as ListeningMessage).url);
    });
    child.once('exit', (code, signal) => {
      children.delete(child);
      if (stopping) return;
      if (!listening)
        return onEarlyExit?.(
          new MemoryError(
            'unavailable',
            `an HTTP process of mnemo serve exited before it listened (exit code ${code ?? signal})`,
          ),
        );
      options.logger.warn({ pid: child.process.pid, code, signal }, 'HTTP process exited; starting another');
      setTimeout(() => {
        if (!stopping) startOne();
      }, restartDelayMs).unref();
    });
  };

  const stop = async (timeoutMs: number): Promise<void> => {
    stopping = true;
    const exits = [...children].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.isDead()) return resolve();
          child.once('exit', () => resolve());
          const kill = setTimeout(() => child.process.kill('SIGKILL'), timeoutMs);
          child.once('exit', () => clearTimeout(kill));
          // A channel closing under the message (the process is exiting already) falls back to the signal.
          if (child.isConnected())
            child.send(stopMessage, (error: Error | null) => void (error === null || child.process.kill('SIGTERM')));
          else child.process.kill('SIGTERM');
        }),
    );
    await Promise.all(exits);
  };

  const url = await new Promise<string>((resolve, reject) => {
    const urls: string[] = [];
    const onEarlyExit = (error: MemoryError) => {
      // What the process printed says why it failed.
      outputReleased = true;
      children.forEach(pipeOutput);
      void stop(0).then(() => reject(error));
    };
    for (let index = 0; index < options.count; index += 1) {
      startOne((childUrl) => {
        urls.push(childUrl);
        if (urls.length === options.count) resolve(childUrl);
      }, onEarlyExit);
    }
  });
  listening = true;
  return {
    url,
    pids: () => [...children].flatMap((child) => (child.process.pid === undefined ? [] : [child.process.pid])),
    releaseOutput() {
      if (outputReleased) return;
      outputReleased = true;
      children.forEach(pipeOutput);
    },
    stop,
  };
}

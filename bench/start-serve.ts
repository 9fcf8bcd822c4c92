// Starting the real `mnemo serve` as a separate process for a benchmark.
import { spawn, type ChildProcess } from 'node:child_process';

/** A running `mnemo serve`: where it listens, its pid, and how to end it. */
export interface ServeProcess {
  readonly url: string;
  /** The `serve` process (its HTTP processes and workers are its children). */
  readonly pid: number;
  /** SIGTERM, then its exit: resolves with the ms the graceful stop took. */
  stop(): Promise<number>;
  /** SIGKILL, when it has not exited yet. */
  kill(): void;
}

/**
 * Starts `node ...nodeArgs <cli> serve --port 0 --db <db> ...args` in `directory` (also its HOME, so no user config is
 * read) with only PATH and `env` set, and resolves once it prints the address it listens on; rejects if
 * it exits before.
 */
export function startServe(options: {
  readonly cli: string;
  readonly directory: string;
  readonly db: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly args?: readonly string[];
  readonly nodeArgs?: readonly string[];
}): Promise<ServeProcess> {
  const { cli, directory, db } = options;
  const child: ChildProcess = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), cli, 'serve', '--port', '0', '--db', db, ...(options.args ?? [])],
    {
      cwd: directory,
      env: { PATH: process.env.PATH ?? '', HOME: directory, ...options.env },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let stdout = '';
  const exited = new Promise<void>((resolvePromise) => child.once('exit', () => resolvePromise()));
  return new Promise<ServeProcess>((resolvePromise, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      // Keep only the first line: the request log lines would fill memory over a long run.
      if (stdout.includes('\n')) return;
      stdout += chunk;
      const first = /^mnemo listening on (http:\/\/\S+)\n/.exec(stdout);
      if (first === null) return;
      resolvePromise({
        url: first[1]!,
        pid: child.pid!,
        async stop() {
          const started = performance.now();
          child.kill('SIGTERM');
          await exited;
          return Math.round(performance.now() - started);
        },
        kill: () => void (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')),
      });
    });
    void exited.then(() => reject(new Error(`mnemo serve exited before listening: ${stdout}`)));
  });
}

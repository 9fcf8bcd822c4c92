import { readFile } from 'node:fs/promises';
import { isRunning, startMnemo, type StartedMnemo } from '../run-mnemo.js';

// The reliability suite's handle on real `mnemo serve` / `mnemo worker` processes of the built CLI,
// started as a user starts them (a clean environment, loopback, a free port).

/** A running `mnemo serve` (or `mnemo worker`) process. */
export interface ServedMnemo extends StartedMnemo {
  /** Base URL, e.g. `http://127.0.0.1:41234`; empty for a worker. */
  readonly url: string;
  readonly pid: number;
  /** Process ids of the worker processes this serve started. */
  readonly workers: readonly number[];
  /** `kill -9` this process (and, as a machine crash would, its workers) and waits until all are gone. */
  crash(): Promise<void>;
  /** SIGTERM, waits for the exit code. */
  stop(): Promise<number | null>;
}

/** How to start a served process: the arguments after `mnemo`, in `cwd`, with `env` beside `PATH` and `HOME`. */
export interface ServeOptions {
  readonly cwd: string;
  readonly env?: Readonly<Record<string, string>>;
}

/** Starts `mnemo serve --port 0 ...args` (hashed embedder unless `env` says otherwise) and resolves once it listens. */
export async function startServe(args: readonly string[], options: ServeOptions): Promise<ServedMnemo> {
  const started = await startMnemo(['serve', '--port', '0', ...args], {
    cwd: options.cwd,
    env: { MNEMO_EMBEDDER: 'hashed', ...options.env },
    ready: /"msg":"listening"/,
  });
  const listening = JSON.parse(started.ready.input) as { url: string; workers: number[] };
  return served(started, listening.url, listening.workers);
}

/** Starts `mnemo worker ...args` (hashed embedder unless `env` says otherwise) and resolves once its job loops run. */
export async function startWorker(args: readonly string[], options: ServeOptions): Promise<ServedMnemo> {
  const started = await startMnemo(['worker', ...args], {
    cwd: options.cwd,
    env: { MNEMO_EMBEDDER: 'hashed', ...options.env },
    ready: /"msg":"worker started"/,
  });
  return served(started, '', []);
}

function served(started: StartedMnemo, url: string, workers: readonly number[]): ServedMnemo {
  const pid = started.child.pid!;
  return {
    ...started,
    url,
    pid,
    workers,
    async crash() {
      for (const target of [pid, ...workers]) signal(target, 'SIGKILL');
      await started.exited;
      await waitFor(async () => workers.every((worker) => !isRunning(worker)), 10_000);
    },
    async stop() {
      if (started.child.exitCode === null && started.child.signalCode === null) started.child.kill('SIGTERM');
      return started.exited;
    },
  };
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

/** Ends what a test file started, each part only if it was started: the server (kill -9), the upstream, the work directory. */
export async function tearDown(parts: {
  served?: ServedMnemo | undefined;
  upstream?: { close(): Promise<void> } | undefined;
  work?: { remove(): Promise<void> } | undefined;
}): Promise<void> {
  await parts.served?.crash();
  await parts.upstream?.close();
  await parts.work?.remove();
}

/** Polls `done` every 50 ms until it holds; throws `what` past `timeoutMs`. */
export async function waitFor(done: () => Promise<boolean>, timeoutMs: number, what = 'a condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Resident memory of a process in kB, from /proc/PID/status (Linux); undefined elsewhere. */
export async function residentKilobytes(pid: number): Promise<number | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
    return match === null ? undefined : Number(match[1]);
  } catch {
    return undefined;
  }
}

/** The suite's seed: `MNEMO_RELIABILITY_SEED` to replay a run, else a fresh one; always printed by the caller. */
export function suiteSeed(): number {
  const given = process.env['MNEMO_RELIABILITY_SEED'];
  return given !== undefined && given.trim() !== '' ? Number(given) >>> 0 : Math.floor(Math.random() * 2 ** 31);
}

/** JSON POST on loopback; resolves with status and parsed body, or status 0 when the connection failed. */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown; headers: Headers | undefined }> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? undefined : safeJson(text), headers: response.headers };
  } catch {
    return { status: 0, body: undefined, headers: undefined };
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

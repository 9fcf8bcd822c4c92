import { readFileSync } from 'node:fs';

/** Options of {@link watchNpxStarter}; the defaults are the real process's. */
export interface NpxStarterOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Called once, when the starter was interrupted or went away. */
  readonly onStop: (reason: 'starter-interrupted' | 'starter-gone') => void;
  readonly intervalMs?: number;
  /** Reads `/proc/<pid>/<file>`; `undefined` when it cannot (not Linux, or the process is gone). */
  readonly readProc?: (pid: number, file: string) => string | undefined;
  readonly parentPid?: () => number;
}

/**
 * Makes a process started through `npx` stop when npx is interrupted. `npx mnemo serve` runs
 * npm → `sh -c mnemo …` → node; npm forwards SIGINT and SIGTERM to the shell only, and Debian's dash
 * (the usual `/bin/sh`) catches SIGINT and waits for its child to end before dying of it, so a script's
 * `kill -INT $!` reached no mnemo process (bash and macOS's sh exec the command instead, so the signal
 * arrives). dash, asleep waiting for its child, wakes only for the signals it catches (SIGINT, SIGCHLD),
 * and every wake counts in its `voluntary_ctxt_switches`: a change while mnemo runs is the forwarded
 * SIGINT. A changed parent pid means the shell itself died (SIGTERM, SIGKILL). Linux only; elsewhere,
 * and when not started by npx through a catching sh, it does nothing. Returns the function that stops watching.
 */
export function watchNpxStarter(options: NpxStarterOptions): () => void {
  const readProc = options.readProc ?? readProcFile;
  const parentPid = options.parentPid ?? (() => process.ppid);
  if (options.env.npm_lifecycle_event !== 'npx') return () => {};
  const parent = parentPid();
  const command = readProc(parent, 'comm')?.trim();
  const status = readProc(parent, 'status');
  if ((command !== 'sh' && command !== 'dash') || status === undefined || !catchesSigint(status)) return () => {};
  const baseline = wakeCount(status);
  const timer = setInterval(() => {
    if (parentPid() !== parent) return stop('starter-gone');
    const now = readProc(parent, 'status');
    if (now === undefined) return stop('starter-gone');
    if (wakeCount(now) !== baseline) stop('starter-interrupted');
  }, options.intervalMs ?? 100);
  // Never what keeps the process alive.
  timer.unref();
  let stopped = false;
  function stop(reason: 'starter-interrupted' | 'starter-gone'): void {
    clearInterval(timer);
    if (stopped) return;
    stopped = true;
    options.onStop(reason);
  }
  return () => clearInterval(timer);
}

function readProcFile(pid: number, file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined;
  }
}

function catchesSigint(status: string): boolean {
  const caught = /^SigCgt:\s*([0-9a-f]+)$/m.exec(status)?.[1];
  // Bit n-1 stands for signal n; SIGINT is 2.
  return caught !== undefined && (BigInt(`0x${caught}`) & 2n) !== 0n;
}

function wakeCount(status: string): string | undefined {
  return /^voluntary_ctxt_switches:\s*(\d+)$/m.exec(status)?.[1];
}

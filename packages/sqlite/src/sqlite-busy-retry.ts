import { isMemoryError } from '@mnemo/core';
import type { Awaitable } from '@mnemo/core/store-kit';
import { sqliteErrorCode } from './sqlite-error.js';

/** True for the driver's "another connection holds the lock" errors (`SQLITE_BUSY*`, `SQLITE_LOCKED*`). */
export function isSqliteBusy(error: unknown): boolean {
  const code = sqliteErrorCode(isMemoryError(error) ? error.cause : error);
  return code?.startsWith('SQLITE_BUSY') === true || code?.startsWith('SQLITE_LOCKED') === true;
}

// Calls whose attempt cannot simply run again: an import consumes its records as it goes.
const notRetried = new Set(['importing records']);
// Waits between attempts: 1, 2, 4, … ms, at most this, each with ±50 % jitter so that writers of one
// process do not retry in lockstep. SQLite's own busy handler sleeps 1 … 100 ms the same way, but
// synchronously, on the thread that serves every request.
const maxRetryDelayMs = 25;

/**
 * Runs a call's attempt until it does not find the database locked, waiting between attempts with a
 * timer, so a lock held by another connection (another process's transaction, `sqlite3` in a shell)
 * never blocks the event loop: requests that need no write, `/health` first, go on being answered.
 * The connection's own `busy_timeout` is 0 for this, so an attempt fails at once instead of sleeping
 * in the driver. Past `busyTimeoutMs` the last busy error is thrown (the store maps it to `unavailable`).
 * Every write of the SQLite parts is one transaction or one statement, so an attempt that found the
 * lock taken changed nothing and can run again.
 */
export function createBusyRetry(
  busyTimeoutMs: number,
  now: () => number = Date.now,
): <T>(action: string, attempt: () => Awaitable<T>) => Promise<T> {
  return async <T>(action: string, attempt: () => Awaitable<T>): Promise<T> => {
    const startedAt = now();
    let delayMs = 1;
    for (;;) {
      try {
        return await attempt();
      } catch (error) {
        const waitedMs = now() - startedAt;
        if (!isSqliteBusy(error) || notRetried.has(action) || waitedMs >= busyTimeoutMs) throw error;
        const pauseMs = Math.max(1, Math.min(busyTimeoutMs - waitedMs, Math.round(delayMs * (0.5 + Math.random()))));
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
        delayMs = Math.min(maxRetryDelayMs, delayMs * 2);
      }
    }
  };
}

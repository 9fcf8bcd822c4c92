/**
 * Resolves on a later turn of the event loop. A synchronous store (better-sqlite3) and a handler without
 * I/O settle in microtasks only: run back to back, a backlog of such jobs would hold off every timer (the
 * attempt deadline), signal (SIGTERM to `mnemo worker`) and socket until the last of them; measured on a
 * 22,000-message backlog, `mnemo worker` with the in-process USE-lite embedder ignored SIGTERM for minutes.
 * The job loop waits for it after each job, and the embed job after each batch.
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
